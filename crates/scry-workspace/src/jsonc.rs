//! JSON with comments, as configuration files are written: `//` and
//! `/* */` comments, trailing commas and a BOM blanked out so that
//! `serde_json` reads the rest. Shared by scry's own configuration layers
//! ([`crate::config`]) and other agents' files ([`crate::seed_config`]).
//!
//! Invariant: every byte not blanked stays where it was (a comment becomes
//! spaces, its line breaks kept), so a parse error's line and column are
//! the file's.

use std::borrow::Cow;

/// Blank out `//` and `/* */` comments and trailing commas (and a BOM),
/// keeping every other byte where it was so that error positions still
/// match the file.
pub(crate) fn strip_jsonc(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    if !b.iter().any(|&c| c == b'/' || c == b',') && !text.starts_with('\u{feff}') {
        return Cow::Borrowed(text);
    }
    let mut out = b.to_vec();
    let mut i = 0;
    if text.starts_with('\u{feff}') {
        out[..3].fill(b' ');
        i = 3;
    }
    let mut in_str = false;
    let mut last_comma: Option<usize> = None;
    while i < b.len() {
        let c = b[i];
        if in_str {
            match c {
                b'\\' => i += 2,
                b'"' => {
                    in_str = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match (c, b.get(i + 1)) {
            (b'"', _) => {
                in_str = true;
                last_comma = None;
            }
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                out[i] = b' ';
                out[i + 1] = b' ';
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    if b[i] != b'\n' && b[i] != b'\r' {
                        out[i] = b' ';
                    }
                    i += 1;
                }
                if i < b.len() {
                    out[i] = b' ';
                    out[i + 1] = b' ';
                    i += 2;
                }
                continue;
            }
            (b',', _) => last_comma = Some(i),
            (b'}' | b']', _) => {
                if let Some(k) = last_comma.take() {
                    out[k] = b' ';
                }
            }
            (c, _) if c.is_ascii_whitespace() => {}
            _ => last_comma = None,
        }
        i += 1;
    }
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(text),
    }
}
