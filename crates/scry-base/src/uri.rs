//! `file://` URIs <-> paths, percent-encoded as RFC 3986 wants: how a path
//! is spelled on the wire of a language server (sessions, the watcher, the
//! navigation answers) and in a server's `WorkspaceEdit` (scry-edit's plan).
//! Std only; a URI that is not a well-formed `file://` one is `None`, never
//! a guess.

use std::path::{Path, PathBuf};

/// An absolute path as a `file://` URI. Bytes outside the unreserved set
/// (and `/`) are percent-encoded, so spaces, `#`, `?` and non-ASCII survive.
pub fn path_to_uri(path: &Path) -> String {
    let s = path.to_string_lossy();
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str("file://");
    if !s.starts_with('/') {
        out.push('/');
    }
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The path of a `file://` URI, percent-decoded. `None` for other schemes
/// (e.g. `jdt://`, `untitled:`) or malformed escapes.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // Drop an authority ("localhost") if present.
    let rest = if rest.starts_with('/') {
        rest
    } else {
        &rest[rest.find('/')?..]
    };
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let bytes = rest.as_bytes();
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
    let s = String::from_utf8(out).ok()?;
    // Windows-style "/C:/x" is not ours to handle on unix; keep as is.
    Some(PathBuf::from(s))
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
}
