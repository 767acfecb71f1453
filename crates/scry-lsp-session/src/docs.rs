//! The documents a session has open, and what to tell the server so that
//! its view equals the disk: `didOpen` on first use, a full-text `didChange`
//! (version + 1) when the content changed (the disk's text compared with
//! the text the server has, byte for byte: cheaper than hashing it, and
//! exact), `didClose` when the file is gone
//! or when the least recently used document must make room.
//!
//! Each open document also keeps the server's `textDocument/documentSymbol`
//! reply for its current version, stamped with the session's change epoch
//! (see `Session::document_symbols`): a cached reply is used only while the
//! version and the epoch are the ones it was asked under, so it never
//! outlives the text it describes. A reply asked while the server was
//! indexing is kept only provisionally ([`Readiness`]): used while the
//! server is still indexing and has not been ready since it was asked (so
//! a fresh server's first minutes do not ask it per question), and
//! replaced by the first reply asked while it is ready. Beside the reply it may keep one value
//! a caller derived from it (`Session::document_symbols_as`: scry-ops'
//! declarations, converted once), under the same stamp and only for the
//! text (`LineIndex`) it was derived with.

use std::any::Any;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use scry_text::LineIndex;
use serde_json::Value;

use scry_base::disk::Stamp;
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
    /// The file's stamp as it was read, and when the read began.
    pub stamp: Stamp,
    pub read_at: SystemTime,
}

#[derive(Debug)]
struct OpenDoc {
    uri: String,
    version: i32,
    /// The stamp of the last read that found the disk equal to `index`,
    /// and when that read began ([`DocStore::unchanged`]).
    stamp: Stamp,
    read_at: SystemTime,
    last_used: u64,
    index: Arc<LineIndex>,
    /// When `version` was sent to the server.
    since: Instant,
    /// The `documentSymbol` reply for `version`, asked under this epoch.
    symbols: Option<Symbols>,
}

/// A kept `documentSymbol` reply and what a caller derived from it.
#[derive(Debug)]
struct Symbols {
    epoch: u64,
    reply: Value,
    derived: Option<Derived>,
    /// When it was asked, if the server was indexing then: usable only
    /// while [`Readiness::allows`] it.
    provisional: Option<Instant>,
}

/// Where the server stands now, for a kept reply: a reply asked while it
/// was ready is used whatever it does since; one asked while it was
/// indexing (at `asked`) only while it is still not ready and no indexing
/// ended after it was asked.
#[derive(Debug, Clone, Copy)]
pub struct Readiness {
    pub ready: bool,
    /// When an indexing progress last ended (or quiescence was reached).
    pub last_indexing_end: Option<Instant>,
}

impl Readiness {
    fn allows(&self, provisional: Option<Instant>) -> bool {
        match provisional {
            None => true,
            Some(asked) => !self.ready && self.last_indexing_end.is_none_or(|e| e < asked),
        }
    }
}

/// A value derived from a kept reply (one per document).
struct Derived(Arc<dyn Any + Send + Sync>);

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Derived(..)")
    }
}

/// Open documents of one session, bounded in number.
#[derive(Debug)]
pub struct DocStore {
    docs: HashMap<PathBuf, OpenDoc>,
    max_open: usize,
    clock: u64,
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

    /// Open paths with the stamp of their last sync.
    pub fn open_files(&self) -> Vec<(PathBuf, Stamp)> {
        self.docs
            .iter()
            .map(|(p, d)| (p.clone(), d.stamp))
            .collect()
    }

    /// The text the server has for `path` when the file's stamp is still
    /// `now`, the one of the last read that found them equal, and that read
    /// was settled ([`Stamp::settled`]): the disk holds that text, nothing
    /// needs reading. Counts as a use.
    pub fn unchanged(&mut self, path: &Path, now: &Stamp) -> Option<Arc<LineIndex>> {
        self.clock += 1;
        let clock = self.clock;
        let d = self.docs.get_mut(path)?;
        if d.stamp != *now || !d.stamp.settled(d.read_at) {
            return None;
        }
        d.last_used = clock;
        Some(d.index.clone())
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
        let mut actions = Vec::new();
        if let Some(doc) = self.docs.get_mut(path) {
            doc.last_used = now;
            doc.stamp = disk.stamp;
            doc.read_at = disk.read_at;
            if doc.index.text() != disk.text {
                doc.version += 1;
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
                stamp: disk.stamp,
                read_at: disk.read_at,
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
    pub fn symbols(&self, path: &Path, version: i32, epoch: u64, now: Readiness) -> Option<Value> {
        let d = self.docs.get(path)?;
        match &d.symbols {
            Some(s) if d.version == version && s.epoch == epoch && now.allows(s.provisional) => {
                Some(s.reply.clone())
            }
            _ => None,
        }
    }

    /// What was derived from the kept reply of `path` (see
    /// [`DocStore::set_derived`]), when the document still holds the text
    /// `index` (the same `Arc`) and the reply was asked under `epoch`.
    pub fn derived<T: Any + Send + Sync>(
        &self,
        path: &Path,
        index: &Arc<LineIndex>,
        epoch: u64,
        now: Readiness,
    ) -> Option<Arc<T>> {
        let d = self.docs.get(path)?;
        let s = d.symbols.as_ref()?;
        if !Arc::ptr_eq(&d.index, index) || s.epoch != epoch || !now.allows(s.provisional) {
            return None;
        }
        s.derived.as_ref()?.0.clone().downcast::<T>().ok()
    }

    /// Keep `value`, derived from the reply kept for `version` under
    /// `epoch` and from the text `index`, beside that reply (replacing what
    /// was derived before); refused (`false`) when the document moved on.
    pub fn set_derived(
        &mut self,
        path: &Path,
        version: i32,
        epoch: u64,
        index: &Arc<LineIndex>,
        value: Arc<dyn Any + Send + Sync>,
    ) -> bool {
        match self.docs.get_mut(path) {
            Some(d) if d.version == version && Arc::ptr_eq(&d.index, index) => match &mut d.symbols
            {
                Some(s) if s.epoch == epoch => {
                    s.derived = Some(Derived(value));
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// Keep `reply` as the `documentSymbol` reply of `path`, when the
    /// document is still at the `version` it was asked for; `provisional`:
    /// when it was asked, if the server was indexing (see [`Readiness`]).
    pub fn set_symbols(
        &mut self,
        path: &Path,
        version: i32,
        epoch: u64,
        reply: Value,
        provisional: Option<Instant>,
    ) -> bool {
        match self.docs.get_mut(path) {
            Some(d) if d.version == version => {
                d.symbols = Some(Symbols {
                    epoch,
                    reply,
                    derived: None,
                    provisional,
                });
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
    use std::time::Duration;

    fn disk(t: &str) -> DiskFile {
        DiskFile {
            text: t.to_string(),
            stamp: Stamp::default(),
            read_at: SystemTime::now(),
        }
    }

    #[test]
    fn unchanged_only_under_the_same_settled_stamp() {
        let mut s = DocStore::new(10);
        let p = Path::new("/w/a.rs");
        let now = SystemTime::now();
        let secs =
            |t: SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
        let old = Stamp {
            size: 9,
            mtime_ns: secs(now - Duration::from_secs(60)),
            ctime_ns: 1,
            ino: 7,
        };
        let fresh = Stamp {
            mtime_ns: secs(now),
            ..old
        };
        assert!(s.unchanged(p, &old).is_none(), "not open");
        let mut d = disk("fn a() {}");
        d.stamp = fresh;
        s.sync(p, d, "rust");
        assert!(
            s.unchanged(p, &fresh).is_none(),
            "read within the settle time"
        );
        let mut d = disk("fn a() {}");
        d.stamp = old;
        let (_, index) = s.sync(p, d, "rust");
        let same = s.unchanged(p, &old).expect("settled and the same stamp");
        assert!(Arc::ptr_eq(&same, &index));
        let moved = Stamp { ctime_ns: 2, ..old };
        assert!(s.unchanged(p, &moved).is_none(), "another stamp");
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
        assert!(s.symbols(p, 1, 0, READY).is_none());
        assert!(s.set_symbols(p, 1, 0, serde_json::json!(["a"]), None));
        assert_eq!(s.symbols(p, 1, 0, READY), Some(serde_json::json!(["a"])));
        // another epoch (something else changed): not used
        assert!(s.symbols(p, 1, 1, READY).is_none());
        // the same text again: still cached
        s.sync(p, disk("fn a() {}"), "rust");
        assert_eq!(s.symbols(p, 1, 0, READY), Some(serde_json::json!(["a"])));
        // new text: a new version, the old reply is gone
        s.sync(p, disk("fn b() {}"), "rust");
        assert!(s.symbols(p, 2, 0, READY).is_none());
        assert!(s.symbols(p, 1, 0, READY).is_none());
        // a reply asked for version 1 arriving after the change is not kept
        assert!(!s.set_symbols(p, 1, 0, serde_json::json!(["a"]), None));
        assert!(s.symbols(p, 2, 0, READY).is_none());
        // closed: nothing
        s.remove(p);
        assert!(!s.set_symbols(p, 2, 0, serde_json::json!(["b"]), None));
    }

    const READY: Readiness = Readiness {
        ready: true,
        last_indexing_end: None,
    };

    #[test]
    fn a_reply_asked_while_indexing_is_kept_until_the_server_is_ready() {
        let mut s = DocStore::new(10);
        let p = Path::new("/w/a.rs");
        let (_, idx) = s.sync(p, disk("fn a() {}"), "rust");
        let asked = Instant::now();
        let busy = Readiness {
            ready: false,
            last_indexing_end: None,
        };
        assert!(s.set_symbols(p, 1, 0, serde_json::json!(["a"]), Some(asked)));
        assert!(s.set_derived(p, 1, 0, &idx, Arc::new(1u32)));
        // Still indexing: used, and what was derived from it.
        assert_eq!(s.symbols(p, 1, 0, busy), Some(serde_json::json!(["a"])));
        assert_eq!(s.derived::<u32>(p, &idx, 0, busy).as_deref(), Some(&1));
        // An indexing that ended before it was asked does not matter.
        let before = Readiness {
            ready: false,
            last_indexing_end: asked.checked_sub(Duration::from_millis(1)),
        };
        assert!(s.symbols(p, 1, 0, before).is_some());
        // Ready now, or ready for a while since: asked again.
        assert!(s.symbols(p, 1, 0, READY).is_none());
        assert!(s.derived::<u32>(p, &idx, 0, READY).is_none());
        let since = Readiness {
            ready: false,
            last_indexing_end: Some(asked + Duration::from_millis(1)),
        };
        assert!(s.symbols(p, 1, 0, since).is_none());
        // A reply asked while ready replaces it, for good.
        assert!(s.set_symbols(p, 1, 0, serde_json::json!(["b"]), None));
        assert_eq!(s.symbols(p, 1, 0, since), Some(serde_json::json!(["b"])));
    }

    #[test]
    fn a_derived_value_lives_with_its_reply_and_text() {
        let mut s = DocStore::new(10);
        let p = Path::new("/w/a.rs");
        let (_, idx) = s.sync(p, disk("fn a() {}"), "rust");
        // No reply kept: nothing to derive beside.
        assert!(!s.set_derived(p, 1, 0, &idx, Arc::new(1u32)));
        assert!(s.set_symbols(p, 1, 0, serde_json::json!(["a"]), None));
        assert!(s.set_derived(p, 1, 0, &idx, Arc::new(1u32)));
        assert_eq!(s.derived::<u32>(p, &idx, 0, READY).as_deref(), Some(&1));
        // Another type, another epoch, another text: not it.
        assert!(s.derived::<u64>(p, &idx, 0, READY).is_none());
        assert!(s.derived::<u32>(p, &idx, 1, READY).is_none());
        let other = Arc::new(LineIndex::new("fn a() {}".to_string()));
        assert!(s.derived::<u32>(p, &other, 0, READY).is_none());
        assert!(!s.set_derived(p, 1, 0, &other, Arc::new(2u32)));
        // The same text again keeps it; a new reply drops it.
        let (_, same) = s.sync(p, disk("fn a() {}"), "rust");
        assert_eq!(s.derived::<u32>(p, &same, 0, READY).as_deref(), Some(&1));
        assert!(s.set_symbols(p, 1, 1, serde_json::json!(["a"]), None));
        assert!(s.derived::<u32>(p, &same, 1, READY).is_none());
        // New text: gone with the reply.
        assert!(s.set_derived(p, 1, 1, &same, Arc::new(3u32)));
        let (_, idx2) = s.sync(p, disk("fn b() {}"), "rust");
        assert!(s.derived::<u32>(p, &idx2, 1, READY).is_none());
        assert!(!s.set_derived(p, 1, 1, &same, Arc::new(4u32)));
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
