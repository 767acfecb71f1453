//! Joining the indexes of several indexer runs — one per project root of
//! a workspace (a Cargo workspace in `rust/`, a uv workspace in `py/`) —
//! into one `index.scip` whose document paths are relative to the
//! workspace root: each run's paths get its root's place in the workspace
//! before them ([`Part::prefix`]).
//!
//! Invariants: read with the streaming reader ([`crate::proto::Stream`]:
//! one document's bytes in memory at a time, bounded, never decoded whole:
//! its joined path is appended to its bytes, and protobuf takes the last
//! of a field written twice); the first metadata is kept,
//! the others dropped; a document whose joined path was written already
//! (two runs over the same file) is dropped and counted, so no file is
//! indexed twice; a path is joined as text and left for the conversion to
//! confine (a `..` or an absolute path is refused there, counted).

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::proto::{DocumentView, Stream, StreamError};

/// One run's index and where its root is in the workspace.
#[derive(Debug, Clone)]
pub struct Part {
    pub path: PathBuf,
    /// Its root relative to the workspace root, `/`-separated; empty for
    /// the workspace root itself.
    pub prefix: String,
}

/// What a join wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Joined {
    pub documents: u64,
    /// Documents dropped because another part had their file.
    pub duplicates: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: StreamError },
    #[error("cannot write the joined index: {0}")]
    Write(#[from] io::Error),
}

/// A document's path in the workspace: `prefix/relative_path`.
fn joined_path(prefix: &str, relative: &str) -> String {
    let prefix = prefix.trim_matches('/');
    if prefix.is_empty() {
        relative.to_string()
    } else {
        format!("{prefix}/{}", relative.trim_start_matches("./"))
    }
}

/// Write one length-delimited field of `bytes`.
fn raw(out: &mut impl Write, tag: u64, bytes: &[u8]) -> io::Result<()> {
    let mut head = Vec::with_capacity(20);
    prost::encoding::encode_varint(tag << 3 | 2, &mut head);
    prost::encoding::encode_varint(bytes.len() as u64, &mut head);
    out.write_all(&head)?;
    out.write_all(bytes)
}

/// Join `parts` into `out` (see the module header).
pub fn join(parts: &[Part], out: &mut impl Write) -> Result<Joined, JoinError> {
    let mut joined = Joined::default();
    let mut seen: HashSet<String> = HashSet::new();
    let mut metadata = false;
    for part in parts {
        let file = std::fs::File::open(&part.path).map_err(|e| JoinError::Read {
            path: part.path.clone(),
            source: StreamError::Io(e),
        })?;
        let read = |source| JoinError::Read {
            path: part.path.clone(),
            source,
        };
        let mut stream = Stream::new(io::BufReader::new(file));
        while let Some((tag, mut bytes)) = stream.next_raw(u64::MAX).map_err(read)? {
            match tag {
                1 => {
                    if !metadata {
                        metadata = true;
                        raw(out, 1, &bytes)?;
                    }
                }
                2 => {
                    let d = DocumentView::parse(&bytes).map_err(read)?;
                    let path = joined_path(&part.prefix, d.relative_path);
                    if !seen.insert(path.clone()) {
                        joined.duplicates += 1;
                        continue;
                    }
                    joined.documents += 1;
                    prost::encoding::string::encode(1, &path, &mut bytes);
                    raw(out, 2, &bytes)?;
                }
                _ => raw(out, tag, &bytes)?,
            }
        }
    }
    out.flush()?;
    Ok(joined)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{Document, Metadata, ScipIndex, SymbolInformation};
    use prost::Message;

    fn write(dir: &std::path::Path, name: &str, root: &str, docs: &[&str]) -> PathBuf {
        let ix = ScipIndex {
            metadata: Some(Metadata {
                project_root: root.into(),
                ..Default::default()
            }),
            documents: docs
                .iter()
                .map(|p| Document {
                    relative_path: p.to_string(),
                    ..Default::default()
                })
                .collect(),
            external_symbols: vec![SymbolInformation {
                symbol: format!("ext {name}"),
                ..Default::default()
            }],
        };
        let p = dir.join(name);
        std::fs::write(&p, ix.encode_to_vec()).unwrap();
        p
    }

    #[test]
    fn parts_join_under_their_roots_once_each() {
        let tmp = tempfile::tempdir().unwrap();
        let a = write(
            tmp.path(),
            "a.scip",
            "file:///w",
            &["src/lib.rs", "src/x.rs"],
        );
        let b = write(
            tmp.path(),
            "b.scip",
            "file:///w/rust",
            &["./src/lib.rs", "src/y.rs"],
        );
        let c = write(tmp.path(), "c.scip", "file:///w", &["src/x.rs"]);
        let parts = [
            Part {
                path: a,
                prefix: String::new(),
            },
            Part {
                path: b,
                prefix: "rust/".into(),
            },
            Part {
                path: c,
                prefix: String::new(),
            },
        ];
        let mut out = Vec::new();
        let j = join(&parts, &mut out).unwrap();
        assert_eq!(
            j,
            Joined {
                documents: 4,
                duplicates: 1
            }
        );
        let ix = ScipIndex::decode(&out[..]).unwrap();
        let paths: Vec<&str> = ix
            .documents
            .iter()
            .map(|d| d.relative_path.as_str())
            .collect();
        assert_eq!(
            paths,
            ["src/lib.rs", "src/x.rs", "rust/src/lib.rs", "rust/src/y.rs"]
        );
        assert_eq!(ix.metadata.unwrap().project_root, "file:///w");
        assert_eq!(ix.external_symbols.len(), 3);
    }

    #[test]
    fn a_broken_part_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("bad.scip");
        std::fs::write(&p, [0x12, 0x80]).unwrap();
        let err = join(
            &[Part {
                path: p.clone(),
                prefix: String::new(),
            }],
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("bad.scip"), "{err}");
    }
}
