//! The repository map: files with their most important definitions, ranked
//! by personalised PageRank over the file reference graph (file A → file B
//! when A uses a name B defines), as Aider's repo map, cut to a character
//! budget.
//!
//! Invariants: deterministic (ties broken by path and line); the rendered
//! size ([`RepoMap::chars`], counted in the lines scry-render writes,
//! `scry_model::map_line`) never exceeds the budget; what was left out is
//! counted.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use scry_model::map_line::{def_line, file_line};

use crate::index::Snapshot;

/// Kinds not shown in the map (members too small to orient by).
const HIDDEN_KINDS: &[&str] = &["field", "enum_member", "property", "impl", "variable"];
/// Longest signature shown.
const MAX_SIG: usize = 120;
const DAMPING: f64 = 0.85;
const ITERATIONS: usize = 50;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapDef {
    /// 1-based.
    pub line: u32,
    pub kind: String,
    pub name: String,
    pub signature: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapFile {
    /// Relative to the root.
    pub path: PathBuf,
    /// In line order.
    pub defs: Vec<MapDef>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoMap {
    /// In rank order.
    pub files: Vec<MapFile>,
    /// Files with definitions that were left out.
    pub omitted_files: usize,
    /// Definitions left out (of shown and omitted files).
    pub omitted_defs: usize,
    /// Files indexed.
    pub total_files: usize,
    pub budget: usize,
    /// Characters of the rendered lines (each with its newline).
    pub chars: usize,
}

fn clip(s: &str) -> String {
    if s.chars().count() <= MAX_SIG {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_SIG - 1).collect();
    out.push('…');
    out
}

/// What the map is biased towards.
#[derive(Debug, Clone, Default)]
pub struct Focus {
    /// Files or directories, relative to the root.
    pub paths: Vec<PathBuf>,
    pub symbols: Vec<String>,
}

/// Build the map of `snap` within `budget` characters.
pub fn map(snap: &Snapshot, focus: &Focus, budget: usize) -> RepoMap {
    let files: Vec<&PathBuf> = snap.files.keys().collect();
    let n = files.len();
    let symbols: HashSet<&str> = focus.symbols.iter().map(String::as_str).collect();

    // Who defines each name.
    let mut definers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, p) in files.iter().enumerate() {
        let mut seen = HashSet::new();
        for d in &snap.files[*p].defs {
            if seen.insert(d.name.as_str()) {
                definers.entry(d.name.as_str()).or_default().push(i);
            }
        }
    }

    // Edges: referencer → definer, weighted per name.
    let mut edges: Vec<BTreeMap<(usize, &str), f64>> = vec![BTreeMap::new(); n];
    for (a, p) in files.iter().enumerate() {
        let f = &snap.files[*p];
        let mut counts: HashMap<u32, usize> = HashMap::new();
        for r in &f.refs {
            *counts.entry(r.name_id()).or_default() += 1;
        }
        let mut counts: Vec<(u32, usize)> = counts.into_iter().collect();
        counts.sort();
        for (id, count) in counts {
            let name = f.names[id as usize].as_str();
            let Some(defs) = definers.get(name) else {
                continue;
            };
            let w = name_weight(name, defs.len(), &symbols) * (count as f64).sqrt();
            for &b in defs {
                if b != a {
                    *edges[a].entry((b, name)).or_default() += w;
                }
            }
        }
    }

    // Personalisation: the given paths, and files defining given symbols.
    let mut pers = vec![0.0f64; n];
    for (i, p) in files.iter().enumerate() {
        if focus.paths.iter().any(|f| p.starts_with(f)) {
            pers[i] = 1.0;
        }
    }
    for s in &focus.symbols {
        for &i in definers.get(s.as_str()).into_iter().flatten() {
            pers[i] = 1.0;
        }
    }
    let total: f64 = pers.iter().sum();
    if total == 0.0 {
        pers.iter_mut().for_each(|x| *x = 1.0 / n.max(1) as f64);
    } else {
        pers.iter_mut().for_each(|x| *x /= total);
    }

    let out_w: Vec<f64> = edges.iter().map(|e| e.values().sum()).collect();
    // The walk only needs file → file weights (names summed).
    let agg: Vec<Vec<(usize, f64)>> = edges
        .iter()
        .map(|e| {
            let mut v: Vec<(usize, f64)> = Vec::new();
            for (&(b, _), w) in e {
                match v.last_mut() {
                    Some((lb, lw)) if *lb == b => *lw += w,
                    _ => v.push((b, *w)),
                }
            }
            v
        })
        .collect();
    let mut rank = pers.clone();
    for _ in 0..ITERATIONS {
        let mut next: Vec<f64> = pers.iter().map(|p| (1.0 - DAMPING) * p).collect();
        let mut dangling = 0.0;
        for a in 0..n {
            if out_w[a] == 0.0 {
                dangling += rank[a];
                continue;
            }
            for &(b, w) in &agg[a] {
                next[b] += DAMPING * rank[a] * w / out_w[a];
            }
        }
        for (x, p) in next.iter_mut().zip(&pers) {
            *x += DAMPING * dangling * p;
        }
        let delta: f64 = next.iter().zip(&rank).map(|(a, b)| (a - b).abs()).sum();
        rank = next;
        if delta < 1e-10 {
            break;
        }
    }

    // Each definition's share of the rank flowing into its file by its name.
    let mut def_rank: HashMap<(usize, &str), f64> = HashMap::new();
    for a in 0..n {
        for (&(b, name), w) in &edges[a] {
            *def_rank.entry((b, name)).or_default() += rank[a] * w / out_w[a];
        }
    }
    struct Cand<'a> {
        file: usize,
        score: f64,
        def: &'a crate::Def,
    }
    let mut cands: Vec<Cand> = Vec::new();
    for (i, p) in files.iter().enumerate() {
        for d in &snap.files[*p].defs {
            if HIDDEN_KINDS.contains(&d.kind.as_str()) {
                continue;
            }
            // Definitions other files use come first; the rest follow in
            // the order of their files' rank.
            let mut score = def_rank
                .get(&(i, d.name.as_str()))
                .copied()
                .unwrap_or(rank[i] * 1e-9);
            if symbols.contains(d.name.as_str()) {
                score *= 100.0;
                score += 1.0;
            }
            cands.push(Cand {
                file: i,
                score,
                def: d,
            });
        }
    }
    cands.sort_by(|x, y| {
        y.score
            .total_cmp(&x.score)
            .then_with(|| files[x.file].cmp(files[y.file]))
            .then(x.def.line.cmp(&y.def.line))
    });

    // Take the best definitions while the rendering fits.
    let total_defs = cands.len();
    let files_with_defs: HashSet<usize> = cands.iter().map(|c| c.file).collect();
    let mut order: Vec<usize> = Vec::new();
    let mut chosen: HashMap<usize, Vec<MapDef>> = HashMap::new();
    let mut used = 0usize;
    for c in &cands {
        let md = MapDef {
            line: c.def.line + 1,
            kind: c.def.kind.clone(),
            name: c.def.name.clone(),
            signature: clip(&c.def.signature),
        };
        let mut cost = def_line(md.line, &md.signature).chars().count() + 1;
        if !chosen.contains_key(&c.file) {
            cost += file_line(files[c.file]).chars().count() + 1;
        }
        if used + cost > budget {
            // Smaller definitions further down may still fit, but a prefix
            // keeps the map's meaning: the best-ranked ones.
            break;
        }
        used += cost;
        if !chosen.contains_key(&c.file) {
            order.push(c.file);
        }
        chosen.entry(c.file).or_default().push(md);
    }
    let shown_defs: usize = chosen.values().map(Vec::len).sum();
    let files_out: Vec<MapFile> = order
        .iter()
        .map(|&i| {
            let mut defs = chosen.remove(&i).unwrap_or_default();
            defs.sort_by_key(|d| d.line);
            MapFile {
                path: files[i].clone(),
                defs,
            }
        })
        .collect();
    RepoMap {
        omitted_files: files_with_defs.len() - files_out.len(),
        omitted_defs: total_defs - shown_defs,
        files: files_out,
        total_files: n,
        budget,
        chars: used,
    }
}

/// Aider's weighting: names the caller mentioned up, long descriptive names
/// up, `_private` names down, names many files define down.
fn name_weight(name: &str, definers: usize, symbols: &HashSet<&str>) -> f64 {
    let mut w = 1.0;
    if symbols.contains(name) {
        w *= 10.0;
    }
    let descriptive = name.contains('_')
        || (name.chars().any(|c| c.is_uppercase()) && name.chars().any(|c| c.is_lowercase()));
    if name.chars().count() >= 8 && descriptive {
        w *= 10.0;
    }
    if name.starts_with('_') {
        w *= 0.1;
    }
    if definers > 5 {
        w *= 0.1;
    }
    w
}
