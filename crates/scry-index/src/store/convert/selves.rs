//! Additions to what the indexer wrote, as the live server counts them: a
//! Rust `Self` inside an impl block is also a reference of the block's
//! self type, and the block is defined where its header names that type
//! ([`impl_blocks`]); a `Self` in a trait is defined at the trait's name
//! ([`trait_selves`]).
//!
//! Invariant: what is added goes to the by-symbol table (and the blocks
//! to the extents) only, never to a document's own occurrences: asked at
//! a position, the indexer's occurrence answers. Reads only the document
//! in hand (its fitted occurrences and lines), scanning at most 64 lines
//! past a position.

use super::fit::{Fitted, Pos, Range};
use crate::proto;

/// What [`impl_blocks`] found in a document.
#[derive(Default)]
pub(super) struct ImplBlocks<'a> {
    /// Occurrences for the by-symbol table only: (symbol, range, roles).
    pub(super) extra: Vec<(&'a str, Range, u32)>,
    /// Each block: its symbol, where its header names the self type (or the
    /// block's start), its range.
    pub(super) blocks: Vec<(&'a str, Pos, Range)>,
}

/// An impl block found from its `Self` occurrences.
struct SelfBlock<'a> {
    symbol: &'a str,
    at: Pos,
    range: Range,
    /// The self type's symbol, when the header names it.
    self_type: Option<&'a str>,
}

/// rust-analyzer gives `Self` inside an impl block the impl's own symbol
/// (`…impl#[`Either<L, R>`][Iterator]`, enclosing range: the block). The
/// live server counts such a `Self` among the references of the impl's self
/// type (`Either`), and asked at `Self` it answers for the block: its
/// definition is where the header names the self type, its references that
/// and the block's `Self`s. So each such `Self` is also a reference of the
/// self type, and the block gets a definition at its header's self type —
/// the last occurrence, before the block's first `{`, of a type named as the
/// impl's first type parameter — both in the by-symbol table only (asked at
/// a position, the document's own occurrence answers).
///
/// The blocks are also returned for outlines: from their `Self`
/// occurrences (whose enclosing range is the block), else from their
/// members' definitions (the header: the last occurrence of the self type
/// before the first member; the end: the first `}` line after the last
/// member).
pub(super) fn impl_blocks<'a>(occs: &[Fitted<'a>], lines: &[&str]) -> ImplBlocks<'a> {
    use crate::symbol::{Suffix, descriptors, impl_self_type, parent};
    let mut order: Vec<usize> = (0..occs.len()).collect();
    order.sort_by_key(|&i| (occs[i].range.0, occs[i].range.1));
    let pos = |f: &Fitted<'_>| (f.range.0, f.range.1);
    // The last occurrence before `end` (and from `start`) of a type named `head`.
    let named_before = |occs: &[Fitted<'a>], start: (u32, u32), end: (u32, u32), head: &str| {
        let from = order.partition_point(|&j| pos(&occs[j]) < start);
        let to = order.partition_point(|&j| pos(&occs[j]) < end);
        order[from..to].iter().rev().copied().find(|&j| {
            descriptors(occs[j].symbol)
                .last()
                .is_some_and(|(n, s)| n == head && *s == Suffix::Type)
        })
    };
    let mut blocks: Vec<SelfBlock<'a>> = Vec::new();
    let mut extra = Vec::new();
    for i in 0..occs.len() {
        let (Some(e), symbol) = (occs[i].enclosing, occs[i].symbol) else {
            continue;
        };
        let Some(head) = impl_self_type(symbol) else {
            continue;
        };
        let found = blocks
            .iter()
            .find(|b| b.symbol == symbol && b.range == e)
            .map(|b| b.self_type);
        let self_type = match found {
            Some(t) => t,
            None => {
                let start = (e.0, e.1);
                let end = header_end(lines, start).unwrap_or((e.2, e.3));
                let named = named_before(occs, start, end, &head);
                let at = named.map_or(start, |j| pos(&occs[j]));
                let t = named.map(|j| occs[j].symbol);
                if let Some(j) = named {
                    extra.push((symbol, occs[j].range, proto::ROLE_DEFINITION as u32));
                }
                blocks.push(SelfBlock {
                    symbol,
                    at,
                    range: e,
                    self_type: t,
                });
                t
            }
        };
        let (l, c, _, ec) = occs[i].range;
        let is_self = lines.get(l as usize).is_some_and(|t| {
            t.chars()
                .skip(c as usize)
                .take(ec.saturating_sub(c) as usize)
                .eq("Self".chars())
        });
        if let Some(t) = self_type
            && is_self
        {
            extra.push((t, occs[i].range, occs[i].roles));
        }
    }
    // Blocks with no `Self`: from their members' definitions.
    // (impl symbol, first member's start, last member's end).
    let mut members: Vec<(String, Pos, Pos)> = Vec::new();
    for f in occs
        .iter()
        .filter(|f| f.roles & proto::ROLE_DEFINITION as u32 != 0)
    {
        let Some(p) = parent(f.symbol).filter(|p| impl_self_type(p).is_some()) else {
            continue;
        };
        let (start, end) = match f.enclosing {
            Some(e) => ((e.0, e.1), (e.2, e.3)),
            None => (pos(f), (f.range.2, f.range.3)),
        };
        match members.iter_mut().find(|m| m.0 == p) {
            Some(m) => {
                m.1 = m.1.min(start);
                m.2 = m.2.max(end);
            }
            None => members.push((p, start, end)),
        }
    }
    let mut out: Vec<(&'a str, Pos, Range)> = blocks
        .into_iter()
        .map(|b| (b.symbol, b.at, b.range))
        .collect();
    for (p, start, end) in members {
        if out.iter().any(|b| b.0 == p) {
            continue;
        }
        // The impl symbol as one of this document's strings (a member's
        // symbol starts with it).
        let Some(symbol) = occs
            .iter()
            .find(|f| f.symbol.starts_with(p.as_str()))
            .map(|f| &f.symbol[..p.len()])
        else {
            continue;
        };
        let Some(head) = impl_self_type(symbol) else {
            continue;
        };
        let Some(j) = named_before(occs, (0, 0), start, &head) else {
            continue;
        };
        let at = pos(&occs[j]);
        let close = lines
            .iter()
            .enumerate()
            .skip(end.0 as usize)
            .take(64)
            .find(|(l, t)| {
                let skip = if *l == end.0 as usize {
                    end.1 as usize
                } else {
                    0
                };
                t.chars().skip(skip).any(|c| c == '}')
            })
            .map_or(end.0, |(l, _)| l as u32);
        out.push((symbol, at, (at.0, 0, close, 0)));
    }
    ImplBlocks { extra, blocks: out }
}

/// rust-analyzer gives `Self` inside a trait a local symbol (display name
/// `Self`, enclosing symbol the trait) with no definition; the live server
/// answers for the trait: defined at its name, which is among the
/// references. Each such local gets that definition, in the by-symbol
/// table only (as [`impl_blocks`] does for impl blocks). `selves`: each
/// such local and its enclosing symbol.
pub(super) fn trait_selves<'a>(
    occs: &[Fitted<'a>],
    selves: &'a [(String, String)],
) -> Vec<(&'a str, Range, u32)> {
    let def = proto::ROLE_DEFINITION as u32;
    selves
        .iter()
        .filter_map(|(local, enclosing)| {
            let at = occs
                .iter()
                .find(|f| f.symbol == enclosing && f.roles & def != 0)?;
            Some((local.as_str(), at.range, def))
        })
        .collect()
}

/// The position of the first `{` at or after `from`.
fn header_end(lines: &[&str], from: (u32, u32)) -> Option<(u32, u32)> {
    for (l, text) in lines.iter().enumerate().skip(from.0 as usize).take(64) {
        let skip = if l == from.0 as usize {
            from.1 as usize
        } else {
            0
        };
        if let Some(c) = text.chars().skip(skip).position(|ch| ch == '{') {
            return Some((l as u32, (skip + c) as u32));
        }
    }
    None
}
