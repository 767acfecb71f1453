//! SCIP index benchmark (issue 21): time to the first precise answer on a
//! cold engine with and without an index, and the index answers' agreement
//! with the warm server on the name-accuracy questions. Not a test: a
//! program that prints figures (`scripts/index-bench.sh` prepares the
//! projects, builds their indexes and runs it).
//!
//! For one project (its index already built by `scry index` into
//! `SCRY_CACHE_DIR`):
//!
//! 1. **With the index, cold**: a fresh engine (no server running) asks the
//!    first question — references by name and line, as a model asks, of the
//!    first drawn identifier the index has a definition for — once; the time
//!    to its answer and its precision.
//! 2. **Without**: a fresh engine with no index asks the same question until
//!    the live server answers it precisely (not partial, not syntactic, not
//!    empty), every 250 ms; the time to that answer (and to the first,
//!    syntactic, one).
//! 3. **Agreement**: N questions drawn as `name_accuracy` draws them (the
//!    shared `common/questions.rs`), each asked at the exact position (line +
//!    column) of the warm server (the engine of step 2) and of an engine
//!    that answers from the index only (every server disabled). Only
//!    positions the server has a definition for count. Each answer the
//!    index gives is compared on the files it covers (locations under the
//!    root; the server also lists uses inside dependencies and the standard
//!    library, which no project index holds — such questions are counted):
//!    definition, the same location set; references, recall and precision
//!    against the server's truth, asked twice when the two differ (locations
//!    the two truths disagree on are not held against the index), as in
//!    `name_accuracy`. A question the index has no answer for (a keyword, a
//!    symbol defined outside the project) is answered by the other sources,
//!    labelled: it is counted as not covered, not as a disagreement.
//!
//! ```sh
//! cargo run -p scry-lsp --example index_bench -- LANG ROOT N [SEED] [OUT.jsonl]
//! ```
//! The last line printed is one JSON object of the figures.

#[path = "common/questions.rs"]
mod questions;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use questions::{Picker, Set, locs, query, score};
use scry_model::{Action, Answer, Precision, Query};
use scry_ops::Engine;
use scry_workspace::Workspace;
use serde_json::json;

fn engine(root: &Path, cache: &Path) -> Engine {
    let ws = Workspace::open(root).expect("open workspace");
    Engine::with_syntax_cache(Arc::new(ws), Some(cache))
}

/// An engine that answers from the index only: every server disabled.
fn index_only(root: &Path, cache: &Path) -> Engine {
    let ws = Workspace::open(root).expect("open workspace");
    let mut config = (*ws.config()).clone();
    for s in &mut config.servers {
        s.disabled = true;
    }
    let ws = Workspace::with_config(ws.root().to_path_buf(), config);
    Engine::with_syntax_cache(Arc::new(ws), Some(cache))
}

/// Whether the index answered `q`, and its locations (none when another
/// source did).
async fn from_index(e: &Engine, q: &Query) -> (bool, Set) {
    match e.run_query(q).await {
        Ok(a) if a.precision == Some(Precision::Index) => (true, locs(&a)),
        _ => (false, Set::new()),
    }
}

fn precise(a: &Answer) -> bool {
    a.precision.is_none() && a.partial.is_none() && !a.body.is_empty()
}

fn precision_name(a: &Answer) -> &'static str {
    match a.precision {
        None if a.partial.is_some() => "server (partial)",
        None => "server",
        Some(Precision::Index) => "index",
        Some(_) => "syntactic",
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: index_bench LANG ROOT N [SEED] [OUT.jsonl]");
        std::process::exit(2);
    }
    let lang = args[1].as_str();
    let root = scry_base::paths::canonical(Path::new(&args[2])).expect("root exists");
    let want: usize = args[3].parse().expect("N");
    let seed: u64 = args.get(4).map_or(0x5c27, |s| s.parse().expect("seed"));
    let mut out = args
        .get(5)
        .map(|p| std::fs::File::create(p).expect("create out"));
    let cache = scry_base::dirs::cache().expect("SCRY_CACHE_DIR or HOME");
    let Ok(Some((ix, _))) = scry_index::cache::load(&cache, &root, None) else {
        eprintln!(
            "no usable index for {} under {}: run `scry index` first",
            root.display(),
            cache.display()
        );
        std::process::exit(2);
    };
    let meta = ix.meta().clone();
    drop(ix);
    let empty = tempfile::tempdir().expect("temp dir");
    let e3 = index_only(&root, &cache);

    // The first question: references by name and line at the first draw
    // (of its own sequence) the index has a definition for.
    let mut first_picker = Picker::new(&root, lang, seed.wrapping_add(1));
    let first = loop {
        let Some(p) = first_picker.draw() else {
            continue;
        };
        let at = query(Action::Definition, &p.file, None, p.line, Some(p.col + 1));
        if e3
            .run_query(&at)
            .await
            .is_ok_and(|a| a.precision == Some(Precision::Index) && !locs(&a).is_empty())
        {
            break p;
        }
    };
    let mut picker = Picker::new(&root, lang, seed);
    let rel = |p: &Path| p.strip_prefix(&root).unwrap_or(p).display().to_string();
    let q = query(
        Action::References,
        &first.file,
        Some(&first.symbol),
        first.line,
        None,
    );
    eprintln!(
        "{lang}: first question: references of `{}` at {}:{}",
        first.symbol,
        rel(&first.file),
        first.line
    );

    // 1. With the index, cold.
    let e1 = engine(&root, &cache);
    let t = Instant::now();
    let a1 = e1.run_query(&q).await.expect("index answer");
    let with_index = t.elapsed();
    let with_index_precision = precision_name(&a1);
    let with_index_locs = locs(&a1);
    e1.shutdown().await;

    // 2. Without an index, cold: until the live server answers precisely.
    let e2 = engine(&root, empty.path());
    let t = Instant::now();
    let mut first_any = None;
    let mut without = None;
    let mut live_locs = Set::new();
    while t.elapsed() < Duration::from_secs(600) {
        if let Ok(a) = e2.run_query(&q).await {
            first_any.get_or_insert(t.elapsed());
            if precise(&a) {
                without = Some(t.elapsed());
                live_locs = locs(&a);
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let first_any = first_any.unwrap_or_default();
    eprintln!(
        "{lang}: with index {:.2}s ({with_index_precision}, {} locations); without: first answer {:.2}s, precise {}",
        with_index.as_secs_f64(),
        with_index_locs.len(),
        first_any.as_secs_f64(),
        without.map_or("never (600 s)".into(), |d| format!(
            "{:.1}s ({} locations)",
            d.as_secs_f64(),
            live_locs.len()
        ))
    );

    // 3. Agreement at the name-accuracy questions.
    let (mut n, mut tries, mut def_same, mut def_from_index) = (0usize, 0usize, 0usize, 0usize);
    let (mut refs_same, mut refs_from_index, mut outside) = (0usize, 0usize, 0usize);
    // References of symbols the project defines (the index has their
    // definition): the agreement that matters; of the others (defined in a
    // dependency or std) the index lists the project's uses and says so.
    let (mut own_n, mut own_same) = (0usize, 0usize);
    let inside = |s: Set| -> Set {
        s.into_iter()
            .filter(|(p, _, _)| p.starts_with(&root))
            .collect()
    };
    let (mut recall_sum, mut precision_sum) = (0f64, 0f64);
    let mut misses = Vec::new();
    let t0 = Instant::now();
    while n < want && tries < want * 20 {
        tries += 1;
        let Some(p) = picker.draw() else {
            continue;
        };
        let (f, line, col) = (&p.file, p.line, Some(p.col + 1));
        let Ok(truth) = e2
            .run_query(&query(Action::Definition, f, None, line, col))
            .await
        else {
            continue;
        };
        let truth_all = locs(&truth);
        if truth_all.is_empty() || !precise(&truth) {
            continue;
        }
        let truth_def = inside(truth_all);
        n += 1;
        let (ix_def_from, got_def) =
            from_index(&e3, &query(Action::Definition, f, None, line, col)).await;
        def_from_index += usize::from(ix_def_from);
        let def_ok = ix_def_from && got_def == truth_def;
        def_same += usize::from(def_ok);

        let t1_all = e2
            .run_query(&query(Action::References, f, None, line, col))
            .await
            .map(|a| locs(&a))
            .unwrap_or_default();
        let t1 = inside(t1_all.clone());
        outside += usize::from(t1.len() < t1_all.len());
        let (refs_from, got) =
            from_index(&e3, &query(Action::References, f, None, line, col)).await;
        refs_from_index += usize::from(refs_from);
        let (stable, unstable) = if t1 == got {
            (t1.clone(), Set::new())
        } else {
            let t2 = inside(
                e2.run_query(&query(Action::References, f, None, line, col))
                    .await
                    .map(|a| locs(&a))
                    .unwrap_or_default(),
            );
            (
                t1.intersection(&t2).cloned().collect::<Set>(),
                t1.symmetric_difference(&t2).cloned().collect::<Set>(),
            )
        };
        let (r, pr) = score(&stable, &unstable, &got);
        if refs_from {
            recall_sum += r;
            precision_sum += pr;
            refs_same += usize::from(r == 1.0 && pr == 1.0);
            if ix_def_from {
                own_n += 1;
                own_same += usize::from(r == 1.0 && pr == 1.0);
            }
        }
        let def_differs = ix_def_from && !def_ok;
        let refs_differ = refs_from && (r < 1.0 || pr < 1.0);
        if def_differs || refs_differ || !ix_def_from || !refs_from {
            let missing: Vec<String> = stable
                .difference(&got)
                .take(3)
                .map(|(p, l, c)| format!("{}:{l}:{c}", rel(p)))
                .collect();
            let extra: Vec<String> = got
                .difference(&stable)
                .filter(|x| !unstable.contains(*x))
                .take(3)
                .map(|(p, l, c)| format!("{}:{l}:{c}", rel(p)))
                .collect();
            let word = |from: bool, differs: bool| match (from, differs) {
                (false, _) => "not from the index",
                (true, true) => "DIFFERENT",
                (true, false) => "same",
            };
            misses.push(format!(
                "{}:{line}:{} `{}` def {} refs {} r={r:.2} p={pr:.2} (server {}, index {}) missing {missing:?} extra {extra:?}",
                rel(f),
                p.col + 1,
                p.symbol,
                word(ix_def_from, def_differs),
                word(refs_from, refs_differ),
                stable.len(),
                got.len(),
            ));
        }
        if let Some(o) = out.as_mut() {
            use std::io::Write;
            let _ = writeln!(
                o,
                "{}",
                json!({"path": rel(f), "line": line, "col": p.col + 1, "symbol": p.symbol,
                    "definition_from_index": ix_def_from, "definition_same": def_ok,
                    "references_from_index": refs_from, "recall": r, "precision": pr,
                    "server_refs": stable.len(), "index_refs": got.len()})
            );
        }
        if n.is_multiple_of(10) {
            eprintln!("{lang}: {n}/{want} ({:.0}s)", t0.elapsed().as_secs_f64());
        }
    }
    e2.shutdown().await;
    e3.shutdown().await;
    for m in &misses {
        println!("miss {lang} {m}");
    }
    let pct = |a: usize, of: usize| 100.0 * a as f64 / of.max(1) as f64;
    let figures = json!({
        "lang": lang,
        "root": root.display().to_string(),
        "indexer": format!("{} {}", meta.tool, meta.tool_version),
        "files_indexed": meta.documents,
        "first_question": format!("references of `{}` at {}:{}", first.symbol, rel(&first.file), first.line),
        "with_index_s": with_index.as_secs_f64(),
        "with_index_precision": with_index_precision,
        "without_index_first_answer_s": first_any.as_secs_f64(),
        "without_index_precise_s": without.map(|d| d.as_secs_f64()),
        "same_locations_first_question": with_index_locs == live_locs,
        "questions": n,
        "definition_from_index": def_from_index,
        "definition_same_pct": pct(def_same, def_from_index),
        "references_from_index": refs_from_index,
        "references_of_project_symbols": own_n,
        "references_of_project_symbols_same_pct": pct(own_same, own_n),
        "references_same_pct": pct(refs_same, refs_from_index),
        "references_recall_pct": 100.0 * recall_sum / refs_from_index.max(1) as f64,
        "references_precision_pct": 100.0 * precision_sum / refs_from_index.max(1) as f64,
        "questions_with_uses_outside_the_project": outside,
    });
    println!(
        "{lang}: first precise answer {:.2} s with the index ({with_index_precision}) vs {} without; {n} questions: the index answered {def_from_index} definitions ({:.1}% the server's) and {refs_from_index} references ({:.1}% the server's on the project's files; recall {:.1}%, precision {:.1}%; of symbols the project defines: {own_n}, {:.1}% the server's); {outside} had uses outside the project",
        with_index.as_secs_f64(),
        without.map_or("none in 600 s".into(), |d| format!(
            "{:.1} s",
            d.as_secs_f64()
        )),
        pct(def_same, def_from_index),
        pct(refs_same, refs_from_index),
        100.0 * recall_sum / refs_from_index.max(1) as f64,
        100.0 * precision_sum / refs_from_index.max(1) as f64,
        pct(own_same, own_n),
    );
    println!("{figures}");
}
