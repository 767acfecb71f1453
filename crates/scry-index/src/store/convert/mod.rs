//! The one-time conversion of an `index.scip` into the stored form
//! ([`convert`]), in steps: open the input ([`open_regular`]), stream it one
//! top-level field at a time (`read_scip`; a document: confined, its file
//! read, its occurrences fitted and keyed, `Collected::document`), order
//! what was kept into tables (`tables::order`), write them
//! (`write::tables`). Parts: `fit` (positions against the file),
//! `selves` (Rust's `Self` in impl blocks and traits), `intern` (each
//! symbol string once, the symbols' information as JSON).
//!
//! Invariants kept here: an index is untrusted input — a document whose
//! path leaves the root (`..`, absolute, or through a symlink, resolved as
//! edits are by `paths::confine`) is refused and counted
//! ([`crate::store::Meta::refused`]); the input and the documents' files
//! are read only when regular files; each document records its file's
//! [`Stamp`] and content hash, and one whose file was missing, unreadable
//! or did not fit its occurrences is recorded `verified: false`; one whose
//! file changed while the indexer ran ([`ConvertOptions::before`]) keeps
//! its stamp from before and no hash, so it is stale. Memory:
//! one document in memory at a time, read through a bounded buffered
//! reader; kept: each symbol string once, 24 bytes per occurrence plus 12
//! for the by-symbol order, symbol information as its JSON — about 2× the
//! input, counted as it grows and refused above
//! [`ConvertOptions::max_memory`] (`INDEX_TOO_LARGE`); the output is
//! written beside its place and renamed, so a reader never sees half a
//! file.

use std::fs::File;
use std::io::BufReader;
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use self::fit::Fitted;
use self::intern::{Infos, Interner};
use self::selves::{ImplBlocks, impl_blocks, trait_selves};
use self::tables::{DocBuild, ExtentRow, Row};
use super::format::FORMAT_VERSION;
use super::stamp::{Before, content_hash};
use super::{IndexError, Meta};
use crate::proto::{self, DocumentView, Stream, StreamError};
use scry_base::disk::{Stamp, mtime_ns, stamp};

mod fit;
mod intern;
mod selves;
mod tables;
mod write;

/// Largest file read to hash and check positions while converting.
pub const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

/// Figures of a conversion.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Built {
    pub documents: u64,
    pub unverified: u64,
    pub symbols: u64,
    pub occurrences: u64,
    /// Documents refused for leaving the root.
    pub refused: u64,
}

/// The default cap on the memory one conversion's tables take while they
/// are built; an index that would need more is refused
/// ([`IndexError::TooLarge`], `INDEX_TOO_LARGE`).
pub const MAX_CONVERT_MEMORY: u64 = 2 * 1024 * 1024 * 1024;

/// Options of one conversion.
pub struct ConvertOptions<'a> {
    /// The tree the documents' paths are relative to (canonical): a
    /// document whose real location is not under it is refused.
    pub root: &'a Path,
    pub commit: Option<String>,
    /// Called with the number of documents read so far.
    pub progress: &'a mut dyn FnMut(u64),
    /// The most memory the tables being built may take
    /// ([`MAX_CONVERT_MEMORY`]).
    pub max_memory: u64,
    /// Who built the `index.scip` when not the user's `scry index`
    /// ([`Meta::built_by`]).
    pub built_by: Option<String>,
    /// The path recorded as the source (default: the file converted), for
    /// a temporary file converted before it is put there.
    pub source: Option<&'a Path>,
    /// The files as the indexer started (when scry ran it): a document
    /// whose file differs now was written while it ran, so its
    /// occurrences may be of the text before; it is recorded with the
    /// stamp it had then and no content hash — stale until the next build.
    pub before: Option<&'a Before>,
    /// For an index built at another commit than the working tree's (a
    /// fetched one): each document's file as it was at that commit
    /// ([`AtCommit`]). A file that differs is fitted to its text then and
    /// records that text's hash and no stamp, so it is stale until the
    /// file is that text again, while its positions stay right for that
    /// commit (what translation across the diff starts from).
    pub at_commit: Option<&'a dyn Fn(&str) -> AtCommit>,
}

/// A document's file at the index's commit, compared with the working
/// tree's.
pub enum AtCommit {
    /// The same bytes as the working tree's file.
    Same,
    /// Different: its bytes then.
    Text(Vec<u8>),
    /// Not known: recorded stale, never answered from.
    Unknown,
}

impl<'a> ConvertOptions<'a> {
    /// Defaults for `root`: no commit, no progress, the default cap.
    pub fn new(root: &'a Path) -> ConvertOptions<'a> {
        ConvertOptions {
            root,
            commit: None,
            // A zero-sized closure: leaking it allocates nothing.
            progress: Box::leak(Box::new(|_| {})),
            max_memory: MAX_CONVERT_MEMORY,
            built_by: None,
            source: None,
            before: None,
            at_commit: None,
        }
    }
}

/// Open `path` for reading only when it is a regular file (itself or what
/// its symlinks lead to), never blocking on a FIFO swapped in.
pub fn open_regular(path: &Path) -> Result<File, IndexError> {
    use scry_base::disk::{self, ReadError};
    let refuse = |e: ReadError| match e {
        ReadError::NotRegular { kind, .. } => IndexError::NotRegular {
            path: path.to_path_buf(),
            kind,
        },
        ReadError::Io { source, .. } => IndexError::Io {
            path: path.to_path_buf(),
            err: source,
        },
        other => IndexError::Io {
            path: path.to_path_buf(),
            err: std::io::Error::other(other.to_string()),
        },
    };
    disk::check(path, u64::MAX).map_err(refuse)?;
    let file = scry_base::platform::fs::open_read(path).map_err(|err| IndexError::Io {
        path: path.to_path_buf(),
        err,
    })?;
    let m = file.metadata().map_err(|err| IndexError::Io {
        path: path.to_path_buf(),
        err,
    })?;
    let special = scry_base::platform::fs::opened_kind(&file, &m);
    if !m.is_file() || special.is_some() {
        return Err(IndexError::NotRegular {
            path: path.to_path_buf(),
            kind: special.unwrap_or("not a regular file"),
        });
    }
    Ok(file)
}

/// Convert `scip` (an `index.scip`) into `out` (written to a temporary file
/// beside it, then renamed: a reader never sees half a file).
///
/// Memory: the input is read one document at a time through a buffered
/// reader; what is kept is each symbol string once, each occurrence as 24
/// bytes (plus 12 for the by-symbol order), the symbols' information as
/// its JSON; the tables are then written straight to the file, section by
/// section. Held memory is counted as it grows and an index that would
/// take over [`ConvertOptions::max_memory`] is refused.
pub fn convert(scip: &Path, out: &Path, mut opts: ConvertOptions<'_>) -> Result<Built, IndexError> {
    let file = open_regular(scip)?;
    let (source_size, source_mtime_ns) = file
        .metadata()
        .ok()
        .and_then(|m| Some((m.len(), mtime_ns(&m)?)))
        .unwrap_or_default();
    let (meta, kept) = read_scip(scip, file, &mut opts)?;
    let tool = meta.tool_info.unwrap_or_default();
    let docs_held = kept.held() - kept.keys.held() - kept.infos.held();
    let Collected {
        keys,
        infos,
        docs,
        langs,
        mut refused,
        ..
    } = kept;
    let t = tables::order(docs, keys, infos, docs_held, opts.max_memory)
        .map_err(|need| too_large(scip, need, opts.max_memory))?;
    let nsyms = t.keys.len();
    let occ_total: u64 = t.docs.iter().map(|d| d.occs.len() as u64).sum();
    let unverified = t.docs.iter().filter(|d| !d.verified).count() as u64;
    let built_at = source_size_time(scip);
    let (first_refused, refused_n) = (refused.first.take(), refused.count);
    let meta = Meta {
        format: FORMAT_VERSION,
        tool: tool.name,
        tool_version: tool.version,
        source: opts.source.unwrap_or(scip).to_path_buf(),
        source_size,
        source_mtime_ns,
        built_at,
        commit: opts.commit,
        root: opts.root.to_path_buf(),
        documents: t.docs.len() as u64,
        verified: t.docs.len() as u64 - unverified,
        symbols: nsyms as u64,
        occurrences: occ_total,
        languages: langs,
        refused: refused_n,
        refused_first: first_refused,
        built_by: opts.built_by,
    };
    let meta_json = serde_json::to_vec(&meta).map_err(|e| IndexError::Io {
        path: scip.to_path_buf(),
        err: std::io::Error::other(e),
    })?;
    write::tables(out, &t, &meta_json).map_err(|err| IndexError::Io {
        path: out.to_path_buf(),
        err,
    })?;
    Ok(Built {
        documents: t.docs.len() as u64,
        unverified,
        symbols: nsyms as u64,
        occurrences: occ_total,
        refused: refused_n,
    })
}

fn too_large(scip: &Path, need: u64, limit: u64) -> IndexError {
    IndexError::TooLarge {
        path: scip.to_path_buf(),
        need,
        limit,
    }
}

/// What reading an `index.scip` keeps: each symbol string once, the
/// symbols' information, each document's rows.
#[derive(Default)]
struct Collected {
    keys: Interner,
    infos: Infos,
    docs: Vec<DocBuild>,
    langs: Vec<String>,
    refused: Refused,
    /// What the rows and paths of `docs` hold.
    docs_held: u64,
}

/// Stream `file` (the `index.scip` at `scip`) one top-level field at a
/// time: its metadata (which must say SCIP version 0), external symbols'
/// information and documents, each checked against the memory cap before
/// it is read and before what it adds is allocated.
fn read_scip(
    scip: &Path,
    file: File,
    opts: &mut ConvertOptions<'_>,
) -> Result<(proto::Metadata, Collected), IndexError> {
    use prost::Message;
    let mut stream = Stream::new(BufReader::with_capacity(1 << 20, file));
    let scip_err = |why: String| IndexError::Scip {
        path: scip.to_path_buf(),
        why,
    };
    let cap = opts.max_memory;
    let mut meta: Option<proto::Metadata> = None;
    let mut kept = Collected::default();
    let mut read = 0u64;
    loop {
        // A field is read whole: it must fit what is left, and a symbol's
        // information decoded and written as JSON takes up to 8 times its
        // size (a control character escaped takes six bytes).
        let room = cap.saturating_sub(kept.held()) / 8;
        let (tag, buf) = match stream.next_raw(room) {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(StreamError::Io(err)) => {
                return Err(IndexError::Io {
                    path: scip.to_path_buf(),
                    err,
                });
            }
            Err(StreamError::NoRoom(n)) => {
                return Err(too_large(scip, kept.held() + 8 * n, cap));
            }
            Err(e) => return Err(scip_err(format!("{e} (at byte {})", stream.offset))),
        };
        let bad = |e: String| {
            scip_err(format!(
                "field {tag} does not decode: {e} (at byte {})",
                stream.offset
            ))
        };
        match tag {
            1 => {
                let m = proto::Metadata::decode(&buf[..]).map_err(|e| bad(e.to_string()))?;
                if m.version != 0 {
                    return Err(IndexError::WrongVersion {
                        path: scip.to_path_buf(),
                        version: m.version,
                    });
                }
                meta = Some(m);
            }
            3 => {
                let si =
                    proto::SymbolInformation::decode(&buf[..]).map_err(|e| bad(e.to_string()))?;
                drop(buf);
                let more = kept.keys.growth(1, si.symbol.len()) + kept.infos.growth(&si);
                if kept.held() + more > cap {
                    return Err(too_large(scip, kept.held() + more, cap));
                }
                kept.keys.reserve(1, si.symbol.len());
                let k = kept.keys.intern(si.symbol.as_bytes());
                kept.infos.put(k, &si, false);
            }
            _ => {
                read += 1;
                (opts.progress)(read);
                let d = DocumentView::parse(&buf).map_err(|e| bad(e.to_string()))?;
                let held = kept.held();
                kept.document(&d, buf.len() as u64, opts, cap)
                    .map_err(|step| match step {
                        Step::TooLarge(need) => too_large(scip, held + need, cap),
                        Step::Corrupt(e) => bad(e.to_string()),
                    })?;
            }
        }
    }
    let Some(meta) = meta else {
        return Err(scip_err("no metadata (not a SCIP index?)".into()));
    };
    Ok((meta, kept))
}

/// Why a document was not kept (but for leaving the root, which is
/// counted, not an error).
enum Step {
    /// The step would take this much more than is held.
    TooLarge(u64),
    Corrupt(StreamError),
}

/// The bytes fixed for a conversion whatever its input: the reader's and
/// the writer's buffers, with room for what is small and not counted.
const FIXED: u64 = 4 << 20;

/// What an allocation of `n` bytes takes from the allocator: rounded up to
/// 16 bytes with an 8-byte header, at least 32 (glibc's `malloc`; the
/// others take no more).
pub(super) fn heap(n: usize) -> u64 {
    if n == 0 {
        0
    } else {
        ((n + 8 + 15) & !15).max(32) as u64
    }
}

impl Collected {
    /// What is held so far, as counted against the memory cap.
    fn held(&self) -> u64 {
        FIXED
            + self.docs_held
            + (self.docs.capacity() * std::mem::size_of::<DocBuild>()) as u64
            + self.keys.held()
            + self.infos.held()
    }

    /// Keep one document (`d`, read from `read` bytes, held now): refused
    /// (and counted) when its path leaves `root`; else its file read, its
    /// occurrences fitted to it (none kept when one does not fit:
    /// unverified) and keyed. Each step is checked against `cap` before it
    /// allocates.
    fn document(
        &mut self,
        d: &DocumentView<'_>,
        read: u64,
        opts: &ConvertOptions<'_>,
        cap: u64,
    ) -> Result<(), Step> {
        let (root, before) = (opts.root, opts.before);
        let c = d.named_occurrences;
        // Confined as an edit is: `..`, absolute paths and paths
        // through a symlink that leaves the root are refused.
        let Some(rel) = confined(root, d.relative_path) else {
            self.refused.add(d.relative_path);
            return Ok(());
        };
        let abs = root.join(&rel);
        let size = std::fs::metadata(&abs).map_or(0, |m| m.len().min(MAX_SOURCE_BYTES));
        let check = |held: u64, more: u64| match held + more > cap {
            true => Err(Step::TooLarge(more)),
            false => Ok(()),
        };
        check(self.held(), read + heap(size as usize))?;
        let mut source = Source::read(&abs);
        // Written while the indexer ran: recorded as it was before, with
        // no content hash, so only that stamp could make it fresh again.
        if let Some(was) = rel
            .to_str()
            .and_then(|r| before?.get(r))
            .filter(|was| **was != source.stamp)
        {
            source.stamp = *was;
            source.hash = 0;
        }
        // Built at another commit: the file as it was then.
        match rel.to_str().and_then(|r| Some(opts.at_commit?(r))) {
            None | Some(AtCommit::Same) => {}
            Some(AtCommit::Text(t)) => {
                check(self.held(), heap(t.len()))?;
                source = Source {
                    stamp: Stamp {
                        size: t.len() as u64,
                        ..Stamp::default()
                    },
                    hash: content_hash(&t),
                    text: Some(t),
                };
            }
            Some(AtCommit::Unknown) => {
                source.stamp = Stamp::default();
                source.hash = 0;
            }
        }
        let path = d.relative_path.as_bytes();
        // What this document takes while it is worked on: its bytes, its
        // file and lines, its fitted occurrences (and their order while
        // impl blocks are found), its rows built twice over at most; and
        // what its symbols add to the keys, grown now so that nothing grows
        // half way.
        let text = source.text.as_ref().map_or(0, |t| t.capacity());
        let nlines = source
            .text
            .as_ref()
            .map_or(1, |t| t.iter().filter(|&&b| b == b'\n').count() + 1);
        let work = read
            + heap(text)
            + heap(nlines * 16)
            + heap(c * (std::mem::size_of::<Fitted<'_>>() + 8))
            + 2 * heap(c * 24)
            + heap(c * 28);
        let new_keys = c + d.symbols;
        let new_bytes = d.symbol_bytes + c * (path.len() + 1) + d.symbol_info_bytes;
        check(self.held(), work + self.keys.growth(new_keys, new_bytes))?;
        self.keys.reserve(new_keys, new_bytes);
        // Symbols' information first, one decoded at a time: each one's
        // JSON is checked before it is kept; a local `Self` in a trait is
        // noted for `trait_selves`.
        let mut selves: Vec<(String, String)> = Vec::new();
        for si in d.symbols() {
            let si = si.map_err(Step::Corrupt)?;
            let k = self.keys.symbol(&si.symbol, path);
            check(self.held(), work + self.infos.growth(&si))?;
            self.infos.put(k, &si, true);
            if si.display_name == "Self"
                && crate::symbol::is_local(&si.symbol)
                && !si.enclosing_symbol.is_empty()
            {
                selves.push((si.symbol, si.enclosing_symbol));
            }
        }
        let lines = source.lines();
        // Each occurrence fitted to the file: range, symbol, roles,
        // enclosing range (when given and it fits).
        let fitted = source
            .text
            .is_some()
            .then(|| fit::occurrences(d, &lines))
            .flatten();
        let verified = fitted.is_some();
        let fitted = fitted.unwrap_or_default();
        let mut found = impl_blocks(&fitted, &lines);
        found.extra.extend(trait_selves(&fitted, &selves));
        // Locals are per document: keyed with the path.
        let (mut occs, extra, mut extents) = keyed(&mut self.keys, path, &fitted, found);
        drop(fitted);
        if !verified {
            occs.clear();
        }
        let lang = self.language(d.language);
        occs.sort_unstable();
        extents.sort_unstable();
        occs.shrink_to_fit();
        extents.shrink_to_fit();
        let path = rel.to_string_lossy().into_owned();
        self.docs_held += heap(occs.len() * 24)
            + heap(extra.len() * 24)
            + heap(extents.len() * 28)
            + heap(path.len());
        if self.docs.len() == self.docs.capacity() {
            check(
                self.held(),
                (self.docs.capacity().max(4) * std::mem::size_of::<DocBuild>()) as u64,
            )?;
        }
        self.docs.push(DocBuild {
            path,
            hash: source.hash,
            size: source.stamp.size,
            mtime_ns: source.stamp.mtime_ns,
            ctime_ns: source.stamp.ctime_ns,
            ino: source.stamp.ino,
            verified,
            lang,
            seq: self.docs.len() as u32,
            occs,
            extra,
            extents,
        });
        Ok(())
    }

    /// The number of language `name`, given in first-seen order.
    fn language(&mut self, name: &str) -> u32 {
        match self.langs.iter().position(|l| *l == name) {
            Some(i) => i as u32,
            None => {
                self.langs.push(name.to_string());
                (self.langs.len() - 1) as u32
            }
        }
    }
}

/// A document's rows, its symbols keyed in `keys` (`path`: the document's,
/// for locals): its occurrences, those for the by-symbol table only
/// ([`ImplBlocks::extra`]) and its extents (definitions with an enclosing
/// range, and impl blocks).
fn keyed(
    keys: &mut Interner,
    path: &[u8],
    fitted: &[Fitted<'_>],
    found: ImplBlocks<'_>,
) -> (Vec<Row>, Vec<Row>, Vec<ExtentRow>) {
    let mut occs = Vec::with_capacity(fitted.len());
    let mut extents = Vec::new();
    for f in fitted {
        let k = keys.symbol(f.symbol, path);
        let (l, c, el, ec) = f.range;
        occs.push((l, c, el, ec, k, f.roles));
        if f.roles & proto::ROLE_DEFINITION as u32 != 0
            && let Some(e) = f.enclosing
        {
            extents.push((l, c, k, e));
        }
    }
    for (symbol, (l, c), e) in found.blocks {
        extents.push((l, c, keys.symbol(symbol, path), e));
    }
    let extra: Vec<Row> = found
        .extra
        .into_iter()
        .map(|(symbol, (l, c, el, ec), roles)| (l, c, el, ec, keys.symbol(symbol, path), roles))
        .collect();
    (occs, extra, extents)
}

/// A document's path relative to `root`, `None` when it could leave it:
/// `..`, absolute, or through a symlink out of the root.
fn confined(root: &Path, relative_path: &str) -> Option<PathBuf> {
    let rel = safe_relative(relative_path)?;
    let abs = root.join(&rel);
    scry_base::paths::confine(root, &abs).ok()?;
    Some(rel)
}

/// A document's relative path, refused when it could leave the root.
fn safe_relative(p: &str) -> Option<PathBuf> {
    let path = Path::new(p);
    if p.is_empty() || path.is_absolute() {
        return None;
    }
    path.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| path.to_path_buf())
}

/// A document's file as read when converting.
struct Source {
    stamp: Stamp,
    /// [`content_hash`] of the text, 0 when unread.
    hash: u64,
    /// `None`: missing, unreadable, not a regular file or over
    /// [`MAX_SOURCE_BYTES`].
    text: Option<Vec<u8>>,
}

impl Source {
    fn read(abs: &Path) -> Source {
        let read_file = scry_base::disk::read_with_meta(abs, MAX_SOURCE_BYTES).ok();
        let st = read_file
            .as_ref()
            .map(|(_, m)| Stamp::of(abs, m))
            .or_else(|| stamp(abs))
            .unwrap_or_default();
        let text = read_file.map(|(b, _)| b);
        let hash = text.as_deref().map(content_hash).unwrap_or(0);
        Source {
            stamp: st,
            hash,
            text,
        }
    }

    /// The text's lines (without `\r`); one empty line when unread or not
    /// UTF-8.
    fn lines(&self) -> Vec<&str> {
        let s = self
            .text
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("");
        s.split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect()
    }
}

/// When an `index.scip` was written (seconds since the epoch; now when
/// unknown).
fn source_size_time(scip: &Path) -> u64 {
    std::fs::metadata(scip)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| SystemTime::now())
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Documents refused for where they point: how many, and the first.
#[derive(Default)]
struct Refused {
    count: u64,
    first: Option<String>,
}

impl Refused {
    fn add(&mut self, path: &str) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(path.chars().take(200).collect());
        }
    }
}
