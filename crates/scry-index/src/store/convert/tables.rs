//! What a conversion builds once the input is read, in the order the
//! tables are written: documents in path order (the same path twice: the
//! last one wins), symbol ids in symbol-string order, implementors, the
//! by-symbol order of every occurrence and the names of symbols defined in
//! the index ([`order`], in steps).
//!
//! Invariant: the memory this adds (8 bytes a symbol, 12 an occurrence,
//! the names as they grow) is counted with what reading kept before it is
//! allocated, and refused above the cap; the keys' hash index and the
//! implementation targets are dropped first.

use super::fit::Range;
use super::intern::{Infos, Interner};
use crate::proto;

/// An occurrence while converting: six numbers (see its users).
pub(super) type Row = (u32, u32, u32, u32, u32, u32);

/// An extent while converting: (line, col, symbol key, enclosing range),
/// see [`crate::store::Extent`].
pub(super) type ExtentRow = (u32, u32, u32, Range);

/// One document while converting.
pub(super) struct DocBuild {
    pub(super) path: String,
    pub(super) hash: u64,
    pub(super) size: u64,
    pub(super) mtime_ns: u64,
    pub(super) ctime_ns: u64,
    pub(super) ino: u64,
    pub(super) verified: bool,
    pub(super) lang: u32,
    /// Its place in the input (the last of one path wins).
    pub(super) seq: u32,
    /// (line, col, end_line, end_col, symbol key, roles).
    pub(super) occs: Vec<Row>,
    /// Occurrences in the by-symbol table only (see [`super::selves::impl_blocks`]).
    pub(super) extra: Vec<Row>,
    pub(super) extents: Vec<ExtentRow>,
}

/// An entry of the by-symbol order: (symbol id, document, row in the
/// document's occurrences then extra ones).
pub(super) type BySym = (u32, u32, u32);

/// The tables as they are written ([`super::write`]).
pub(super) struct Tables {
    /// In path order.
    pub(super) docs: Vec<DocBuild>,
    /// Frozen: no more lookups.
    pub(super) keys: Interner,
    pub(super) infos: Infos,
    /// Keys in id order (symbol-string order).
    pub(super) order: Vec<u32>,
    /// Each key's id.
    pub(super) id_of: Vec<u32>,
    /// (symbol id, implementor id), sorted, each once.
    pub(super) implementors: Vec<(u32, u32)>,
    /// Sorted by symbol, document, position; each once.
    pub(super) bysym: Vec<BySym>,
    pub(super) names: Names,
}

/// The lower-cased source names of symbols defined in the index.
pub(super) struct Names {
    pub(super) bytes: Vec<u8>,
    /// (offset in `bytes`, length, symbol id), in name order.
    pub(super) rows: Vec<(u64, u32, u32)>,
}

impl Names {
    pub(super) fn of(&self, r: &(u64, u32, u32)) -> &[u8] {
        &self.bytes[r.0 as usize..r.0 as usize + r.1 as usize]
    }
}

impl Tables {
    /// The row an entry of the by-symbol order stands for.
    pub(super) fn row(&self, o: &BySym) -> Row {
        row(&self.docs, o)
    }
}

fn row(docs: &[DocBuild], &(_, d, i): &BySym) -> Row {
    let d = &docs[d as usize];
    let i = i as usize;
    if i < d.occs.len() {
        d.occs[i]
    } else {
        d.extra[i - d.occs.len()]
    }
}

/// Order what reading kept (`docs_held`: what `docs` holds) into the
/// tables; `Err(need)` when they would take over `max_memory`.
pub(super) fn order(
    mut docs: Vec<DocBuild>,
    mut keys: Interner,
    mut infos: Infos,
    docs_held: u64,
    max_memory: u64,
) -> Result<Tables, u64> {
    last_of_each_path(&mut docs);
    let rels = implementations(&mut infos, &keys);
    keys.freeze();
    let nsyms = keys.len();
    let rows: usize = docs.iter().map(|d| d.occs.len() + d.extra.len()).sum();
    let held = docs_held
        + keys.held()
        + infos.held()
        + rels.capacity() as u64 * 8
        + super::heap(nsyms * 4) * 2
        + super::heap(rows * 12);
    if held > max_memory {
        return Err(held);
    }
    let (order, id_of) = ids(&keys);
    let mut implementors: Vec<(u32, u32)> = rels
        .into_iter()
        .map(|(t, k)| (id_of[t as usize], id_of[k as usize]))
        .collect();
    implementors.sort_unstable();
    implementors.dedup();
    let bysym = by_symbol(&docs, &id_of, rows);
    let names = names(&docs, &keys, &order, &bysym, max_memory - held).map_err(|g| held + g)?;
    Ok(Tables {
        docs,
        keys,
        infos,
        order,
        id_of,
        implementors,
        bysym,
        names,
    })
}

/// Documents in path order; the same path twice: the last one wins.
fn last_of_each_path(docs: &mut Vec<DocBuild>) {
    // Unstable, in place: a stable sort would take a buffer of half the
    // documents.
    docs.sort_unstable_by(|a, b| a.path.cmp(&b.path).then(a.seq.cmp(&b.seq)));
    docs.dedup_by(|later, earlier| {
        if later.path == earlier.path {
            std::mem::swap(later, earlier);
            true
        } else {
            false
        }
    });
}

/// Implementation relationships whose target is a symbol of the index, as
/// keys (`A is_implementation B` makes A an implementor of B): (target,
/// implementor). The targets' strings are dropped.
fn implementations(infos: &mut Infos, keys: &Interner) -> Vec<(u32, u32)> {
    let rels: Vec<(u32, u32)> = infos
        .rels
        .iter()
        .filter_map(|&(k, off, len)| {
            let t = &infos.targets[off as usize..off as usize + len as usize];
            keys.find(t).map(|t| (t, k))
        })
        .collect();
    infos.rels = Vec::new();
    infos.targets = Vec::new();
    rels
}

/// Symbol ids: keys in symbol-string order (`order`: id → key; `id_of`:
/// key → id).
fn ids(keys: &Interner) -> (Vec<u32>, Vec<u32>) {
    let nsyms = keys.len();
    let mut order: Vec<u32> = (0..nsyms as u32).collect();
    order.sort_unstable_by(|&a, &b| keys.get(a).cmp(keys.get(b)));
    let mut id_of = vec![0u32; nsyms];
    for (id, &k) in order.iter().enumerate() {
        id_of[k as usize] = id as u32;
    }
    (order, id_of)
}

/// The by-symbol order of every row (`rows` of them), sorted by symbol,
/// document, position, each once.
fn by_symbol(docs: &[DocBuild], id_of: &[u32], rows: usize) -> Vec<BySym> {
    let mut bysym: Vec<BySym> = Vec::with_capacity(rows);
    for (di, d) in docs.iter().enumerate() {
        for (i, r) in d.occs.iter().chain(&d.extra).enumerate() {
            bysym.push((id_of[r.4 as usize], di as u32, i as u32));
        }
    }
    bysym.sort_unstable_by(|a, b| {
        (a.0, a.1)
            .cmp(&(b.0, b.1))
            .then_with(|| row(docs, a).cmp(&row(docs, b)))
    });
    bysym.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1 && row(docs, a) == row(docs, b));
    bysym
}

/// Names: the lower-cased source names of symbols defined in the index
/// (not locals, not impl blocks), in name order; `Err(need)` when they
/// would take over `room` bytes.
fn names(
    docs: &[DocBuild],
    keys: &Interner,
    order: &[u32],
    bysym: &[BySym],
    room: u64,
) -> Result<Names, u64> {
    let mut name_bytes: Vec<u8> = Vec::new();
    let mut name_rows: Vec<(u64, u32, u32)> = Vec::new();
    for run in bysym.chunk_by(|a, b| a.0 == b.0) {
        let id = run[0].0;
        let s = keys.str(order[id as usize]);
        if !s.contains('\u{0}')
            && crate::symbol::impl_self_type(s).is_none()
            && run
                .iter()
                .any(|o| row(docs, o).5 & proto::ROLE_DEFINITION as u32 != 0)
            && let Some((n, _)) = crate::symbol::name_and_kind(s)
        {
            let n = n.to_lowercase();
            let held = |rows: usize, bytes: usize| (rows * 16 + bytes) as u64;
            // Each grows to at most twice what it holds.
            let grown = held((name_rows.len() + 1) * 2, (name_bytes.len() + n.len()) * 2);
            if grown > room {
                return Err(grown.max(held(name_rows.capacity(), name_bytes.capacity())));
            }
            name_rows.push((name_bytes.len() as u64, n.len() as u32, id));
            name_bytes.extend_from_slice(n.as_bytes());
        }
    }
    let name_of = |r: &(u64, u32, u32)| &name_bytes[r.0 as usize..r.0 as usize + r.1 as usize];
    name_rows.sort_unstable_by(|a, b| name_of(a).cmp(name_of(b)).then(a.2.cmp(&b.2)));
    Ok(Names {
        bytes: name_bytes,
        rows: name_rows,
    })
}
