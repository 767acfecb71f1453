//! The bytes of an OS string, and an OS string from bytes: what a name
//! that is not Unicode is made of when scry escapes it (`\xNN`,
//! `paths::escape_bytes`) or sends it as bytes (`scry_model::os_path`).
//!
//! Unix: a name is any bytes. Windows: a name is UTF-16 that may hold
//! unpaired surrogates; its bytes are its WTF-8 form (what
//! `OsStr::as_encoded_bytes` gives), and bytes that are no WTF-8 name no
//! OS string ([`from_bytes`] says `None`).
//!
//! Invariant: `from_bytes(to_bytes(s)) == Some(s)` for every `s`.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};

/// The bytes of `s`: raw on Unix, WTF-8 on Windows.
pub fn to_bytes(s: &OsStr) -> Cow<'_, [u8]> {
    Cow::Borrowed(s.as_encoded_bytes())
}

/// The OS string whose bytes are `bytes`, when there is one.
pub fn from_bytes(bytes: Vec<u8>) -> Option<OsString> {
    imp::from_bytes(bytes)
}

/// `bytes` read as WTF-8 (UTF-8 that may also encode lone surrogates,
/// `ED A0..BF 80..BF`), as UTF-16 code units; `None` for anything else.
/// Pure, so its rule is tested on every platform; Windows builds names
/// with it.
pub fn wtf8_to_wide(bytes: &[u8]) -> Option<Vec<u16>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        let valid_len = match std::str::from_utf8(rest) {
            Ok(_) => rest.len(),
            Err(e) => e.valid_up_to(),
        };
        let (valid, tail) = rest.split_at(valid_len);
        out.extend(std::str::from_utf8(valid).ok()?.encode_utf16());
        rest = tail;
        if rest.is_empty() {
            break;
        }
        match rest {
            [0xED, b1 @ 0xA0..=0xBF, b2 @ 0x80..=0xBF, ..] => {
                out.push(0xD000 | (u16::from(b1 & 0x3F) << 6) | u16::from(b2 & 0x3F));
                rest = &rest[3..];
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(unix)]
mod imp {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    pub fn from_bytes(bytes: Vec<u8>) -> Option<OsString> {
        Some(OsString::from_vec(bytes))
    }
}

#[cfg(windows)]
mod imp {
    use std::ffi::OsString;
    use std::os::windows::ffi::OsStringExt;

    pub fn from_bytes(bytes: Vec<u8>) -> Option<OsString> {
        super::wtf8_to_wide(&bytes).map(|w| OsString::from_wide(&w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wtf8_reads_utf8_and_lone_surrogates_only() {
        assert_eq!(wtf8_to_wide(b"a\xc3\xa9"), Some(vec![0x61, 0xE9]));
        // U+1F600 is a surrogate pair in UTF-16.
        assert_eq!(wtf8_to_wide("😀".as_bytes()), Some(vec![0xD83D, 0xDE00]));
        // A lone high and a lone low surrogate.
        assert_eq!(wtf8_to_wide(b"x\xed\xa0\x80"), Some(vec![0x78, 0xD800]));
        assert_eq!(wtf8_to_wide(b"\xed\xbf\xbfy"), Some(vec![0xDFFF, 0x79]));
        // Bytes that are no WTF-8: no name.
        assert_eq!(wtf8_to_wide(b"\xff_x.rb"), None);
        assert_eq!(wtf8_to_wide(b"\xed\xa0"), None);
        assert_eq!(wtf8_to_wide(b""), Some(vec![]));
    }

    #[test]
    fn bytes_round_trip() {
        for s in ["a.rb", "café", ""] {
            let os = OsStr::new(s);
            assert_eq!(from_bytes(to_bytes(os).into_owned()).as_deref(), Some(os));
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let odd = OsStr::from_bytes(b"\xff_x.rb");
            assert_eq!(from_bytes(to_bytes(odd).into_owned()).as_deref(), Some(odd));
        }
    }
}
