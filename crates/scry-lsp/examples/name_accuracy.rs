//! Name-accuracy benchmark: does asking by (path, symbol, line) answer for
//! the occurrence a model means? Not a test: a program that prints a table.
//!
//! For one project of real third-party code (prepared by
//! `scripts/name-accuracy-setup.sh`), it picks identifier positions at random
//! (seeded xorshift, deterministic for a given tree), takes the truth from the
//! server at the exact position (scry with line + column, which asks there and
//! nowhere else), then asks scry with path, symbol and line only, and compares:
//!
//! * definition: right when the set of locations equals the truth; "labelled"
//!   when the answer is for another occurrence but names the truth among the
//!   other targets of the name on that line (`same_name`);
//! * references: recall and precision against the truth. Servers are not
//!   always stable between two asks (gopls, rust-analyzer in macros): on a
//!   mismatch the truth is asked again, and only locations both truths agree
//!   on count for recall; ones they disagree on are not held against precision.
//!
//! Questions whose truth definition is empty (keywords, literals, unresolved
//! names) are skipped and replaced by others.
//!
//! ```sh
//! scripts/name-accuracy-setup.sh /tmp/scry-name-bench
//! cargo run -p scry-lsp --example name_accuracy -- rust /tmp/scry-name-bench/rust 100 [seed] [out.jsonl]
//! ```
//! Languages: rust, python, typescript, go, c (decides the file extensions).

#[path = "common/questions.rs"]
mod questions;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use questions::{Picker, Set, body_locs, code_tokens, locs, query, score};
use scry_model::{Action, Answer, Query};
use scry_ops::Engine;
use scry_workspace::Workspace;
use serde_json::json;

async fn ask(engine: &Engine, q: Query) -> Option<Answer> {
    engine.run_query(&q).await.ok()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: name_accuracy LANG ROOT N [SEED] [OUT.jsonl]");
        std::process::exit(2);
    }
    let lang = args[1].as_str();
    let root = scry_base::paths::canonical(Path::new(&args[2])).expect("root exists");
    let want: usize = args[3].parse().expect("N");
    let seed: u64 = args.get(4).map_or(0x5c27, |s| s.parse().expect("seed"));
    let out_path = args.get(5).cloned();
    let mut picker = Picker::new(&root, lang, seed);
    let quote_single = picker.quote_single;
    let files = picker.files.clone();
    let ws = Workspace::open(&root).expect("open workspace");
    let engine = Engine::new(Arc::new(ws));

    // Warm up: references at some identifier until the answer is stable.
    let warm_start = Instant::now();
    {
        let f = &files[0];
        let text = std::fs::read_to_string(f).unwrap_or_default();
        if let Some((l, (c, _))) = text.lines().enumerate().find_map(|(i, l)| {
            code_tokens(l, quote_single)
                .into_iter()
                .next()
                .map(|t| (i, t))
        }) {
            let mut last = None;
            for _ in 0..30 {
                let a = ask(
                    &engine,
                    query(Action::References, f, None, l as u32 + 1, Some(c + 1)),
                )
                .await;
                let n = a.as_ref().map(|a| locs(a).len());
                if n.is_some() && n == last && a.is_some_and(|a| a.partial.is_none()) {
                    break;
                }
                last = n;
                tokio::time::sleep(Duration::from_secs(3)).await;
            }
        }
    }
    eprintln!(
        "{lang}: warm after {:.0}s",
        warm_start.elapsed().as_secs_f64()
    );

    let mut out = out_path.map(|p| std::fs::File::create(p).expect("create out"));
    let (mut n, mut def_ok, mut def_labelled, mut tries) = (0usize, 0usize, 0usize, 0usize);
    let (mut recall_sum, mut precision_sum, mut refs_n, mut refs_named) =
        (0f64, 0f64, 0usize, 0usize);
    let mut misses: Vec<String> = Vec::new();
    let t0 = Instant::now();
    while n < want && tries < want * 20 {
        tries += 1;
        let Some(pick) = picker.draw() else {
            continue;
        };
        let (f, line, col, sym) = (&pick.file, pick.line, pick.col, pick.symbol.clone());
        let Some(truth) = ask(
            &engine,
            query(Action::Definition, f, None, line, Some(col + 1)),
        )
        .await
        else {
            continue;
        };
        let truth_def = locs(&truth);
        if truth_def.is_empty() {
            continue;
        }
        n += 1;
        let got = ask(
            &engine,
            query(Action::Definition, f, Some(&sym), line, None),
        )
        .await;
        let got_def = got.as_ref().map(locs).unwrap_or_default();
        let ok = got_def == truth_def;
        let labelled = !ok
            && got
                .as_ref()
                .and_then(|a| a.same_name.as_ref())
                .is_some_and(|s| {
                    s.others
                        .iter()
                        .any(|o| o.body.as_ref().is_some_and(|b| body_locs(b) == truth_def))
                });
        def_ok += usize::from(ok);
        def_labelled += usize::from(labelled);

        // References.
        let t1 = ask(
            &engine,
            query(Action::References, f, None, line, Some(col + 1)),
        )
        .await;
        let g = ask(
            &engine,
            query(Action::References, f, Some(&sym), line, None),
        )
        .await;
        // Questions the server cannot answer references for at the exact
        // position (an error) have no truth and are left out of the figures.
        let Some(t1) = t1 else {
            continue;
        };
        let named = g
            .as_ref()
            .and_then(|a| a.same_name.as_ref())
            .is_some_and(|s| s.others.iter().any(|o| o.line == line && o.col == col + 1));
        let (recall, precision, truth_refs, got_refs) = match g {
            Some(g) => {
                let (t1, g) = (locs(&t1), locs(&g));
                let (stable, unstable) = if t1 == g {
                    (t1.clone(), Set::new())
                } else {
                    let t2 = ask(
                        &engine,
                        query(Action::References, f, None, line, Some(col + 1)),
                    )
                    .await
                    .map(|a| locs(&a))
                    .unwrap_or_default();
                    let stable: Set = t1.intersection(&t2).cloned().collect();
                    let unstable: Set = t1.symmetric_difference(&t2).cloned().collect();
                    (stable, unstable)
                };
                let (r, p) = score(&stable, &unstable, &g);
                (r, p, stable, g)
            }
            None => (0.0, 0.0, locs(&t1), Set::new()),
        };
        refs_named += usize::from(named && (recall < 1.0 || precision < 1.0));
        refs_n += 1;
        recall_sum += recall;
        precision_sum += precision;

        let rel = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        let via = got
            .as_ref()
            .and_then(|a| a.asked_at.as_ref())
            .map(|a| {
                let via = scry_render::via_text(&a.via);
                format!("{}:{} {via}", a.loc.line, a.loc.col)
            })
            .unwrap_or_else(|| "error".into());
        if !ok || recall < 1.0 || precision < 1.0 {
            misses.push(format!(
                "{rel}:{line}:{} `{sym}` def {} refs r={recall:.2} p={precision:.2} — asked at {via}",
                col + 1,
                if ok { "ok" } else if labelled { "LABELLED" } else { "WRONG" },
            ));
        }
        if let Some(o) = out.as_mut() {
            use std::io::Write;
            let rels = |s: &Set| -> Vec<serde_json::Value> {
                s.iter()
                    .map(|(p, l, c)| {
                        json!([
                            p.strip_prefix(&root).unwrap_or(p).display().to_string(),
                            l,
                            c
                        ])
                    })
                    .collect()
            };
            let rec = json!({
                "lang": lang, "path": rel, "line": line, "col": col + 1, "symbol": sym,
                "truth_definition": rels(&truth_def), "truth_references": rels(&truth_refs),
                "got_definition": rels(&got_def), "got_references": rels(&got_refs),
                "definition_ok": ok, "labelled": labelled,
                "recall": recall, "precision": precision, "via": via,
            });
            let _ = writeln!(o, "{rec}");
        }
        if n.is_multiple_of(10) {
            eprintln!("{lang}: {n}/{want} ({:.0}s)", t0.elapsed().as_secs_f64());
        }
    }
    engine.shutdown().await;
    for m in &misses {
        println!("miss {lang} {m}");
    }
    let pct = |a: f64| 100.0 * a;
    println!(
        "{lang}: {n} questions; definition {:.1}% right ({def_ok}/{n}), +{def_labelled} labelled among other targets; references ({refs_n} questions) recall {:.1}%, precision {:.1}%, {refs_named} answered for another target named in the answer ({:.0}s)",
        pct(def_ok as f64 / n.max(1) as f64),
        pct(recall_sum / refs_n.max(1) as f64),
        pct(precision_sum / refs_n.max(1) as f64),
        t0.elapsed().as_secs_f64()
    );
}
