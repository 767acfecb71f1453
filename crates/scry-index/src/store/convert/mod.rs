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
use crate::proto::{self, Field, Stream, StreamError};
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
    let Collected {
        keys,
        infos,
        docs,
        langs,
        mut refused,
        docs_held,
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
    /// What `docs` holds.
    docs_held: u64,
}

/// Stream `file` (the `index.scip` at `scip`) one top-level field at a
/// time: its metadata (which must say SCIP version 0), external symbols'
/// information and documents, each checked against the memory cap as it
/// is kept.
fn read_scip(
    scip: &Path,
    file: File,
    opts: &mut ConvertOptions<'_>,
) -> Result<(proto::Metadata, Collected), IndexError> {
    let mut stream = Stream::new(BufReader::with_capacity(1 << 20, file));
    let scip_err = |why: String| IndexError::Scip {
        path: scip.to_path_buf(),
        why,
    };
    let mut meta: Option<proto::Metadata> = None;
    let mut kept = Collected::default();
    let mut read = 0u64;
    loop {
        let field = match stream.next_field() {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(StreamError::Io(err)) => {
                return Err(IndexError::Io {
                    path: scip.to_path_buf(),
                    err,
                });
            }
            Err(e) => return Err(scip_err(format!("{e} (at byte {})", stream.offset))),
        };
        match field {
            Field::Metadata(m) => {
                if m.version != 0 {
                    return Err(IndexError::WrongVersion {
                        path: scip.to_path_buf(),
                        version: m.version,
                    });
                }
                meta = Some(m);
            }
            Field::ExternalSymbol(si) => {
                let k = kept.keys.intern(si.symbol.as_bytes());
                kept.infos.put(k, &si, false);
                let held = kept.held();
                if k % 4096 == 0 && held > opts.max_memory {
                    return Err(too_large(scip, held, opts.max_memory));
                }
            }
            Field::Document(d) => {
                read += 1;
                (opts.progress)(read);
                if !kept.document(&d, opts.root, opts.before) {
                    continue;
                }
                let held = kept.held();
                if held > opts.max_memory {
                    return Err(too_large(scip, held, opts.max_memory));
                }
            }
        }
    }
    let Some(meta) = meta else {
        return Err(scip_err("no metadata (not a SCIP index?)".into()));
    };
    Ok((meta, kept))
}

impl Collected {
    /// What is held so far, as counted against the memory cap.
    fn held(&self) -> u64 {
        self.docs_held + self.keys.held() + self.infos.held()
    }

    /// Keep one document: refused (and counted) when its path leaves
    /// `root`; else its file read, its occurrences fitted to it (none kept
    /// when one does not fit: unverified) and keyed. False when refused.
    fn document(&mut self, d: &proto::Document, root: &Path, before: Option<&Before>) -> bool {
        // Confined as an edit is: `..`, absolute paths and paths
        // through a symlink that leaves the root are refused.
        let Some(rel) = confined(root, &d.relative_path) else {
            self.refused.add(&d.relative_path);
            return false;
        };
        let mut source = Source::read(&root.join(&rel));
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
        found.extra.extend(trait_selves(&fitted, &d.symbols));
        // Locals are per document: keyed with the path.
        let path = d.relative_path.as_bytes();
        let (mut occs, extra, mut extents) = keyed(&mut self.keys, path, &fitted, found);
        if !verified {
            occs.clear();
        }
        for si in &d.symbols {
            let k = self.keys.symbol(&si.symbol, path);
            self.infos.put(k, si, true);
        }
        let lang = self.language(&d.language);
        occs.sort_unstable();
        extents.sort_unstable();
        occs.shrink_to_fit();
        extents.shrink_to_fit();
        self.docs_held += (occs.len() + extra.len()) as u64 * 24
            + extents.len() as u64 * 28
            + rel.as_os_str().len() as u64
            + std::mem::size_of::<DocBuild>() as u64;
        self.docs.push(DocBuild {
            path: rel.to_string_lossy().into_owned(),
            hash: source.hash,
            size: source.stamp.size,
            mtime_ns: source.stamp.mtime_ns,
            ctime_ns: source.stamp.ctime_ns,
            ino: source.stamp.ino,
            verified,
            lang,
            occs,
            extra,
            extents,
        });
        true
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
