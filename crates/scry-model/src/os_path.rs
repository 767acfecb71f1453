//! Paths through serde whatever bytes their names hold: the one wire form of
//! a path in an answer, an error, a question or a daemon frame.
//!
//! serde's own `PathBuf` impl refuses a path that is not UTF-8 (a file
//! named `\xff_x.rb` is legal on Unix), so an answer listing one could not
//! be sent by the daemon nor stored in the journal. Here a UTF-8 path is a
//! JSON string as before (every stored answer and frame reads the same),
//! and any other path is the array of its bytes; reading accepts both, so
//! the round trip is exact and the renderer shows the name with its
//! undecodable bytes escaped (`scry_base::paths::escape_bytes`).
//!
//! Use with `#[serde(with = "crate::os_path")]` on a `PathBuf`, and
//! [`opt`] / [`vec`] on `Option<PathBuf>` / `Vec<PathBuf>`.
//!
//! Invariant: for every path `p`, `deserialize(serialize(p)) == p`
//! (fuzzed: `reply_paths`, `scry_daemon::fuzzing`).

use std::fmt;
use std::path::{Path, PathBuf};

use scry_base::platform::os_str;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

pub fn serialize<S: Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    match p.to_str() {
        Some(text) => s.serialize_str(text),
        None => s.collect_seq(os_str::to_bytes(p.as_os_str()).iter()),
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    d.deserialize_any(PathVisitor)
}

struct PathVisitor;

impl<'de> Visitor<'de> for PathVisitor {
    type Value = PathBuf;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a path: a string, or the array of its bytes")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<PathBuf, E> {
        Ok(PathBuf::from(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<PathBuf, E> {
        Ok(PathBuf::from(v))
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<PathBuf, E> {
        from_bytes(v.to_vec())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PathBuf, A::Error> {
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        from_bytes(bytes)
    }
}

/// The path whose bytes are `bytes` (raw on Unix, WTF-8 on Windows); an
/// error for bytes that make no path on this OS.
fn from_bytes<E: de::Error>(bytes: Vec<u8>) -> Result<PathBuf, E> {
    os_str::from_bytes(bytes)
        .map(PathBuf::from)
        .ok_or_else(|| E::custom("the bytes of a path make no path on this system"))
}

/// A path in the wire form of this module, for containers.
#[derive(Serialize, Deserialize)]
#[serde(transparent)]
struct Wire(#[serde(with = "crate::os_path")] PathBuf);

/// `Option<PathBuf>`.
pub mod opt {
    use super::*;

    pub fn serialize<S: Serializer>(p: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
        match p {
            Some(p) => s.serialize_some(&WireRef(p)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
        Ok(Option::<Wire>::deserialize(d)?.map(|w| w.0))
    }
}

/// `Vec<PathBuf>`.
pub mod vec {
    use super::*;

    pub fn serialize<S: Serializer>(v: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|p| WireRef(p)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
        Ok(Vec::<Wire>::deserialize(d)?
            .into_iter()
            .map(|w| w.0)
            .collect())
    }
}

/// A borrowed path in the wire form.
struct WireRef<'a>(&'a Path);

impl Serialize for WireRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize(self.0, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct T {
        #[serde(with = "crate::os_path")]
        p: PathBuf,
        #[serde(with = "crate::os_path::opt", default)]
        o: Option<PathBuf>,
        #[serde(with = "crate::os_path::vec", default)]
        v: Vec<PathBuf>,
    }

    #[cfg(unix)]
    #[test]
    fn utf8_paths_stay_strings_and_others_round_trip_exactly() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let bad = PathBuf::from(OsStr::from_bytes(b"/w/\xff_x.rb"));
        let t = T {
            p: "/w/a.rb".into(),
            o: Some(bad.clone()),
            v: vec![bad.clone(), "/w/b.rb".into()],
        };
        let json = serde_json::to_string(&t).unwrap();
        assert!(
            json.starts_with(r#"{"p":"/w/a.rb","o":[47,119,47,255,"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<T>(&json).unwrap(), t);
        // What serde's own impl wrote reads the same.
        let old = r#"{"p":"/w/a.rb","o":null,"v":["/w/c"]}"#;
        let back: T = serde_json::from_str(old).unwrap();
        assert_eq!((back.o, back.v), (None, vec![PathBuf::from("/w/c")]));
        assert!(serde_json::from_str::<T>(r#"{"p":[256]}"#).is_err());
    }

    #[test]
    fn bytes_read_back_as_the_os_spells_names() {
        // WTF-8 (a lone surrogate, as Windows may hold) is a path on every
        // OS; a byte no WTF-8 holds is one only where names are bytes.
        let lone: T = serde_json::from_str(r#"{"p":[47,119,47,237,160,128]}"#).unwrap();
        assert_eq!(
            scry_base::platform::os_str::to_bytes(lone.p.as_os_str()).as_ref(),
            b"/w/\xed\xa0\x80"
        );
        let ff = serde_json::from_str::<T>(r#"{"p":[47,255]}"#);
        assert_eq!(ff.is_ok(), cfg!(unix), "{ff:?}");
    }
}
