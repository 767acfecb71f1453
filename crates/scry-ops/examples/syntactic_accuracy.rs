//! Syntactic answers against a real language server's (not a test): on a
//! copy of DIR, sample identifier uses whose name the syntactic index
//! defines, ask the server `definition` at that exact spot, and compare with
//! the syntactic ranking; then references of some definitions, precision
//! and recall. `cargo run -p scry-ops --example syntactic_accuracy -- DIR [N]`
//! (the server for DIR's language must be on PATH).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use scry_model::{Action, Body, Query};
use scry_ops::Engine;
use scry_syntax::{SyntaxIndex, query};
use scry_workspace::Workspace;

fn locs(root: &Path, b: &Body) -> BTreeSet<(PathBuf, u32, u32)> {
    match b {
        Body::Locations { locations } => locations
            .iter()
            .filter_map(|l| {
                let rel = l.path.strip_prefix(root).ok()?.to_path_buf();
                Some((rel, l.line, l.col))
            })
            .collect(),
        _ => BTreeSet::new(),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir: PathBuf = std::env::args().nth(1).expect("DIR").into();
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let root = scry_base::paths::canonical(&dir).unwrap();
    let snap = SyntaxIndex::new(&root, None).refresh();
    let ws = Arc::new(Workspace::open(&root).unwrap());
    let engine = Engine::with_syntax_cache(ws, None);

    // Uses (not definitions) of names the index defines, every k-th.
    let mut uses = Vec::new();
    for (path, f) in &snap.files {
        for r in &f.refs {
            let name = f.name(*r);
            if f.defs
                .iter()
                .any(|d| d.line == r.line() && d.col == r.col())
            {
                continue;
            }
            if name.len() < 3 || query::definitions(&snap, name, &[], Some(path)).is_empty() {
                continue;
            }
            uses.push((path.clone(), *r, name.to_string()));
        }
    }
    let stride = (uses.len() / n).max(1);
    let sample: Vec<_> = uses.into_iter().step_by(stride).take(n).collect();

    let (mut asked, mut outside, mut top1, mut any) = (0, 0, 0, 0);
    let (mut item_targets, mut item_top1) = (0, 0);
    for (path, r, name) in &sample {
        let mut q = Query::new(Action::Definition);
        q.path = Some(root.join(path));
        q.line = Some(r.line() + 1);
        q.column = Some(r.col() + 1);
        q.timeout = Some(Duration::from_secs(60));
        let Ok(a) = engine.run_query(&q).await else {
            continue;
        };
        let truth: BTreeSet<(PathBuf, u32)> = locs(&root, &a.body)
            .into_iter()
            .map(|(p, l, _)| (p, l))
            .collect();
        if truth.is_empty() {
            outside += 1;
            continue;
        }
        asked += 1;
        // Is the server's target something the index records as a
        // definition (not a local variable or parameter)?
        let indexed = truth.iter().any(|(p, l)| {
            snap.files
                .get(p)
                .is_some_and(|f| f.defs.iter().any(|d| d.line + 1 == *l && &d.name == name))
        });
        if indexed {
            item_targets += 1;
        }
        let hits = query::definitions(&snap, name, &[], Some(path));
        let local = snap
            .files
            .get(path)
            .and_then(|f| query::local_binding(f, name, r.line(), r.col()));
        let ours: Vec<(PathBuf, u32)> = match local {
            Some((l, _)) => vec![(path.clone(), l + 1)],
            None => hits
                .iter()
                .map(|h| (h.path.to_path_buf(), h.def.line + 1))
                .collect(),
        };
        if ours.first().is_some_and(|o| truth.contains(o)) {
            top1 += 1;
            if indexed {
                item_top1 += 1;
            }
        }
        if ours.iter().any(|o| truth.contains(o)) {
            any += 1;
        } else if std::env::var_os("SHOW_MISSES").is_some() {
            eprintln!(
                "miss {}:{}:{} `{name}`: server {truth:?}, ours {ours:?}",
                path.display(),
                r.line() + 1,
                r.col() + 1
            );
        }
    }
    println!(
        "definition: {asked} uses with an in-workspace server answer ({outside} outside or none): \
         top-1 {top1}/{asked} = {:.0}%, among candidates {any}/{asked} = {:.0}%",
        100.0 * top1 as f64 / asked.max(1) as f64,
        100.0 * any as f64 / asked.max(1) as f64
    );
    println!(
        "  of which {item_targets} target an item the index records (not a local or parameter): \
         top-1 {item_top1}/{item_targets} = {:.0}%",
        100.0 * item_top1 as f64 / item_targets.max(1) as f64
    );

    // References of definitions (every k-th top-level one).
    let defs: Vec<_> = snap
        .files
        .iter()
        .flat_map(|(p, f)| f.defs.iter().map(move |d| (p.clone(), d.clone())))
        .filter(|(_, d)| d.parent.is_none() && d.name.len() >= 3)
        .collect();
    let stride = (defs.len() / 15).max(1);
    let (mut tp, mut sp, mut tt) = (0usize, 0usize, 0usize);
    let mut counted = 0;
    for (path, d) in defs.iter().step_by(stride).take(15) {
        let mut q = Query::new(Action::References);
        q.path = Some(root.join(path));
        q.line = Some(d.line + 1);
        q.column = Some(d.col + 1);
        q.timeout = Some(Duration::from_secs(60));
        let Ok(a) = engine.run_query(&q).await else {
            continue;
        };
        let truth = locs(&root, &a.body);
        if truth.is_empty() {
            continue;
        }
        counted += 1;
        let ours: BTreeSet<(PathBuf, u32, u32)> = query::references(&snap, &d.name)
            .into_iter()
            .map(|o| (o.path.to_path_buf(), o.line + 1, o.col + 1))
            .collect();
        tp += ours.intersection(&truth).count();
        sp += ours.len();
        tt += truth.len();
    }
    println!(
        "references of {counted} definitions: precision {tp}/{sp} = {:.0}%, recall {tp}/{tt} = {:.0}%",
        100.0 * tp as f64 / sp.max(1) as f64,
        100.0 * tp as f64 / tt.max(1) as f64
    );
    engine.shutdown().await;
}
