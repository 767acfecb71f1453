//! The documents a session has open, and what to tell the server so that
//! its view equals the disk: `didOpen` on first use, a full-text `didChange`
//! (version + 1) when the content changed, `didClose` when the file is gone
//! or when the least recently used document must make room.
//!
//! Each open document also keeps the server's `textDocument/documentSymbol`
//! reply for its current version, stamped with the session's change epoch
//! (see `Session::document_symbols`): a cached reply is used only while the
//! version and the epoch are the ones it was asked under, so it never
//! outlives the text it describes.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use scry_text::LineIndex;
use serde_json::Value;

use scry_base::uri::path_to_uri;

/// A notification the session must send, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncAction {
    Open {
        uri: String,
        language_id: String,
        version: i32,
        text: String,
    },
    Change {
        uri: String,
        version: i32,
        text: String,
    },
    Close {
        uri: String,
    },
}

/// What the disk holds for one file, read once.
#[derive(Debug, Clone)]
pub struct DiskFile {
    pub text: String,
    pub mtime: Option<SystemTime>,
    pub len: u64,
}

#[derive(Debug)]
struct OpenDoc {
    uri: String,
    version: i32,
    hash: u64,
    mtime: Option<SystemTime>,
    len: u64,
    last_used: u64,
    index: Arc<LineIndex>,
    /// When `version` was sent to the server.
    since: Instant,
    /// The `documentSymbol` reply for `version`, asked under this epoch.
    symbols: Option<(u64, Value)>,
}

/// Open documents of one session, bounded in number.
#[derive(Debug)]
pub struct DocStore {
    docs: HashMap<PathBuf, OpenDoc>,
    max_open: usize,
    clock: u64,
}

pub fn content_hash(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl DocStore {
    pub fn new(max_open: usize) -> DocStore {
        DocStore {
            docs: HashMap::new(),
            max_open: max_open.max(1),
            clock: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    pub fn is_open(&self, path: &Path) -> bool {
        self.docs.contains_key(path)
    }

    /// The text the server has for `path`, if open.
    pub fn index(&self, path: &Path) -> Option<Arc<LineIndex>> {
        self.docs.get(path).map(|d| d.index.clone())
    }

    pub fn version(&self, path: &Path) -> Option<i32> {
        self.docs.get(path).map(|d| d.version)
    }

    /// The version the server has for `path` and when it was sent.
    pub fn synced(&self, path: &Path) -> Option<(i32, Instant)> {
        self.docs.get(path).map(|d| (d.version, d.since))
    }

    /// Open paths with the metadata recorded at their last sync.
    pub fn open_files(&self) -> Vec<(PathBuf, Option<SystemTime>, u64)> {
        self.docs
            .iter()
            .map(|(p, d)| (p.clone(), d.mtime, d.len))
            .collect()
    }

    /// Bring `path` in line with `disk`. Returns the notifications to send
    /// and the text the server now has.
    pub fn sync(
        &mut self,
        path: &Path,
        disk: DiskFile,
        language_id: &str,
    ) -> (Vec<SyncAction>, Arc<LineIndex>) {
        self.clock += 1;
        let now = self.clock;
        let hash = content_hash(&disk.text);
        let mut actions = Vec::new();
        if let Some(doc) = self.docs.get_mut(path) {
            doc.last_used = now;
            doc.mtime = disk.mtime;
            doc.len = disk.len;
            if doc.hash != hash {
                doc.version += 1;
                doc.hash = hash;
                doc.index = Arc::new(LineIndex::new(disk.text.clone()));
                doc.since = Instant::now();
                doc.symbols = None;
                actions.push(SyncAction::Change {
                    uri: doc.uri.clone(),
                    version: doc.version,
                    text: disk.text,
                });
            }
            return (actions, doc.index.clone());
        }
        while self.docs.len() >= self.max_open {
            let Some(oldest) = self
                .docs
                .iter()
                .min_by_key(|(_, d)| d.last_used)
                .map(|(p, _)| p.clone())
            else {
                break;
            };
            if let Some(d) = self.docs.remove(&oldest) {
                actions.push(SyncAction::Close { uri: d.uri });
            }
        }
        let uri = path_to_uri(path);
        let index = Arc::new(LineIndex::new(disk.text.clone()));
        actions.push(SyncAction::Open {
            uri: uri.clone(),
            language_id: language_id.to_string(),
            version: 1,
            text: disk.text,
        });
        self.docs.insert(
            path.to_path_buf(),
            OpenDoc {
                uri,
                version: 1,
                hash,
                mtime: disk.mtime,
                len: disk.len,
                last_used: now,
                index: index.clone(),
                since: Instant::now(),
                symbols: None,
            },
        );
        (actions, index)
    }

    /// The cached `documentSymbol` reply of `path` at `version`, if it was
    /// asked under `epoch`.
    pub fn symbols(&self, path: &Path, version: i32, epoch: u64) -> Option<Value> {
        let d = self.docs.get(path)?;
        match &d.symbols {
            Some((e, v)) if d.version == version && *e == epoch => Some(v.clone()),
            _ => None,
        }
    }

    /// Keep `reply` as the `documentSymbol` reply of `path`, when the
    /// document is still at the `version` it was asked for.
    pub fn set_symbols(&mut self, path: &Path, version: i32, epoch: u64, reply: Value) -> bool {
        match self.docs.get_mut(path) {
            Some(d) if d.version == version => {
                d.symbols = Some((epoch, reply));
                true
            }
            _ => false,
        }
    }

    /// The file is gone from disk: close it if open.
    pub fn remove(&mut self, path: &Path) -> Option<SyncAction> {
        self.docs
            .remove(path)
            .map(|d| SyncAction::Close { uri: d.uri })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(t: &str) -> DiskFile {
        DiskFile {
            text: t.to_string(),
            mtime: None,
            len: t.len() as u64,
        }
    }

    #[test]
    fn open_then_change_only_when_content_differs() {
        let mut s = DocStore::new(10);
        let p = Path::new("/w/a.rs");
        let (a, _) = s.sync(p, disk("fn a() {}"), "rust");
        assert!(
            matches!(&a[..], [SyncAction::Open { version: 1, language_id, .. }] if language_id == "rust")
        );
        let (a, _) = s.sync(p, disk("fn a() {}"), "rust");
        assert!(a.is_empty());
        let (a, idx) = s.sync(p, disk("fn b() {}"), "rust");
        assert!(
            matches!(&a[..], [SyncAction::Change { version: 2, text, .. }] if text == "fn b() {}")
        );
        assert_eq!(idx.text(), "fn b() {}");
        assert_eq!(s.version(p), Some(2));
        assert!(matches!(s.remove(p), Some(SyncAction::Close { .. })));
        assert!(s.remove(p).is_none());
    }

    #[test]
    fn symbols_are_kept_per_version_and_epoch() {
        let mut s = DocStore::new(10);
        let p = Path::new("/w/a.rs");
        s.sync(p, disk("fn a() {}"), "rust");
        assert!(s.symbols(p, 1, 0).is_none());
        assert!(s.set_symbols(p, 1, 0, serde_json::json!(["a"])));
        assert_eq!(s.symbols(p, 1, 0), Some(serde_json::json!(["a"])));
        // another epoch (something else changed): not used
        assert!(s.symbols(p, 1, 1).is_none());
        // the same text again: still cached
        s.sync(p, disk("fn a() {}"), "rust");
        assert_eq!(s.symbols(p, 1, 0), Some(serde_json::json!(["a"])));
        // new text: a new version, the old reply is gone
        s.sync(p, disk("fn b() {}"), "rust");
        assert!(s.symbols(p, 2, 0).is_none());
        assert!(s.symbols(p, 1, 0).is_none());
        // a reply asked for version 1 arriving after the change is not kept
        assert!(!s.set_symbols(p, 1, 0, serde_json::json!(["a"])));
        assert!(s.symbols(p, 2, 0).is_none());
        // closed: nothing
        s.remove(p);
        assert!(!s.set_symbols(p, 2, 0, serde_json::json!(["b"])));
    }

    #[test]
    fn least_recently_used_is_closed_first() {
        let mut s = DocStore::new(2);
        s.sync(Path::new("/a"), disk("a"), "x");
        s.sync(Path::new("/b"), disk("b"), "x");
        s.sync(Path::new("/a"), disk("a"), "x"); // a used again
        let (acts, _) = s.sync(Path::new("/c"), disk("c"), "x");
        assert_eq!(acts.len(), 2);
        assert_eq!(
            acts[0],
            SyncAction::Close {
                uri: "file:///b".into()
            }
        );
        assert!(s.is_open(Path::new("/a")) && s.is_open(Path::new("/c")));
        assert_eq!(s.len(), 2);
    }
}
