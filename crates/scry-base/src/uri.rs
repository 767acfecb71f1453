//! `file://` URIs <-> paths, percent-encoded as RFC 3986 wants: how a path
//! is spelled on the wire of a language server (sessions, the watcher, the
//! navigation answers) and in a server's `WorkspaceEdit` (scry-edit's plan).
//! A URI that is not a well-formed `file://` one is `None`, never a guess.
//!
//! The OS's path syntax (`crate::platform::OS`) decides the
//! form; both forms are plain functions over text ([`to_uri`],
//! [`from_uri`]), tested on every platform:
//! - Unix: `/a/b` is `file:///a/b`; an authority (`localhost`) is dropped.
//! - Windows: `C:\a\b` is `file:///C:/a/b` (the `\\?\` prefix that
//!   `canonicalize` adds never reaches a server: `paths::windows::
//!   strip_verbatim`), `\\server\share\x` is `file://server/share/x`.
//!   Read back: `file:///c%3A/a/b` and `file:///C:/a/b` (as servers send
//!   them) are both `C:\a\b`, the drive letter upper-cased as
//!   `canonicalize` spells it, and an authority other than `localhost` is
//!   a UNC share.

use std::path::{Path, PathBuf};

use crate::paths::windows;
use crate::platform::{OS, Os};

/// An absolute path as a `file://` URI. Bytes outside the unreserved set
/// (and `/`) are percent-encoded, so spaces, `#`, `?` and non-ASCII survive.
pub fn path_to_uri(path: &Path) -> String {
    to_uri(OS, &path.to_string_lossy())
}

/// The path of a `file://` URI, percent-decoded. `None` for other schemes
/// (e.g. `jdt://`, `untitled:`) or malformed escapes.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    from_uri(OS, uri).map(PathBuf::from)
}

/// `path` (in `syntax`) as a `file://` URI.
pub fn to_uri(syntax: Os, path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    out.push_str("file://");
    match syntax {
        Os::Unix => {
            if !path.starts_with('/') {
                out.push('/');
            }
            encode(&mut out, path);
        }
        Os::Windows => {
            let plain = windows::strip_verbatim(path);
            let slashed = plain.replace('\\', "/");
            if let Some(unc) = slashed.strip_prefix("//") {
                // `//server/share/x`: the server is the authority.
                let (server, rest) = unc.split_at(unc.find('/').unwrap_or(unc.len()));
                encode(&mut out, server);
                encode(&mut out, rest);
            } else if let [l, b':', ..] = slashed.as_bytes()
                && l.is_ascii_alphabetic()
            {
                out.push('/');
                out.push(*l as char);
                out.push(':');
                encode(&mut out, &slashed[2..]);
            } else {
                if !slashed.starts_with('/') {
                    out.push('/');
                }
                encode(&mut out, &slashed);
            }
        }
    }
    out
}

/// Percent-encode `s` onto `out`, keeping the unreserved set and `/`.
fn encode(out: &mut String, s: &str) {
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
}

/// The path (in `syntax`) of a `file://` URI.
pub fn from_uri(syntax: Os, uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    // An authority ("localhost", or a Windows share's server) if present.
    let (authority, rest) = if rest.starts_with('/') {
        ("", rest)
    } else {
        rest.split_at(rest.find('/')?)
    };
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let path = decode(rest)?;
    match syntax {
        Os::Unix => Some(path),
        Os::Windows => {
            let authority = decode(authority)?;
            if !authority.is_empty() && !authority.eq_ignore_ascii_case("localhost") {
                return Some(format!(r"\\{authority}{}", path.replace('/', r"\")));
            }
            let path = match path.as_bytes() {
                [b'/', l, b':', ..] if l.is_ascii_alphabetic() => {
                    format!("{}{}", l.to_ascii_uppercase() as char, &path[2..])
                }
                _ => path,
            };
            Some(path.replace('/', r"\"))
        }
    }
}

/// `s` percent-decoded; `None` for a malformed escape or bytes that are
/// not UTF-8.
fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_special_characters() {
        for p in [
            "/a/b.rs",
            "/with space/ü/😀.py",
            "/x/#hash?.c",
            "/a/%25.txt",
        ] {
            let uri = path_to_uri(Path::new(p));
            assert!(uri.starts_with("file:///"), "{uri}");
            assert!(!uri.contains(' '));
            assert_eq!(uri_to_path(&uri).unwrap(), PathBuf::from(p), "{uri}");
        }
    }

    #[test]
    fn decodes_server_forms() {
        assert_eq!(
            uri_to_path("file:///home/u/caf%C3%A9.rs").unwrap(),
            PathBuf::from("/home/u/café.rs")
        );
        assert_eq!(
            uri_to_path("file://localhost/etc/x").unwrap(),
            PathBuf::from("/etc/x")
        );
        // Unencoded characters some servers send.
        assert_eq!(
            uri_to_path("file:///a b/c.go").unwrap(),
            PathBuf::from("/a b/c.go")
        );
        assert!(uri_to_path("jdt://contents/x").is_none());
        assert!(uri_to_path("file:///bad%zz").is_none());
    }

    #[test]
    fn windows_paths_as_servers_send_and_take_them() {
        let w = Os::Windows;
        assert_eq!(
            to_uri(w, r"C:\Repo\src\a b.rs"),
            "file:///C:/Repo/src/a%20b.rs"
        );
        assert_eq!(to_uri(w, r"\\?\C:\Repo\a.rs"), "file:///C:/Repo/a.rs");
        assert_eq!(
            to_uri(w, r"\\server\share\x\a.rs"),
            "file://server/share/x/a.rs"
        );
        assert_eq!(
            to_uri(w, r"\\?\UNC\server\share\a.rs"),
            "file://server/share/a.rs"
        );
        // Both spellings of the drive, either case: one path.
        for uri in [
            "file:///c%3A/Repo/a.rs",
            "file:///C:/Repo/a.rs",
            "file:///c:/Repo/a.rs",
        ] {
            assert_eq!(from_uri(w, uri).as_deref(), Some(r"C:\Repo\a.rs"), "{uri}");
        }
        assert_eq!(
            from_uri(w, "file://server/share/x/caf%C3%A9.rs").as_deref(),
            Some(r"\\server\share\x\café.rs")
        );
        assert_eq!(
            from_uri(w, "file://localhost/C:/x").as_deref(),
            Some(r"C:\x")
        );
        for p in [r"C:\Repo\with space\ü#?.py", r"\\srv\share\a%b.c"] {
            assert_eq!(from_uri(w, &to_uri(w, p)).as_deref(), Some(p), "{p}");
        }
        // The Unix form is unchanged by the Windows rules' existence.
        assert_eq!(
            from_uri(Os::Unix, "file:///c%3A/x").as_deref(),
            Some("/c:/x")
        );
    }
}
