//! Rendering cost of large answers under the default caps.
//!
//! Builds a `references` answer with many locations spread over many files
//! (each with its source line), then times `render_text` and `render_json`
//! with `RenderOptions::default()` (100 locations, 16,000 characters). The
//! caps bound the *output*; this bench shows what the *input size* costs
//! (sorting, de-duplication, grouping and counting the omitted ones).
//!
//! Run: `cargo bench -p scry-lsp --bench render`

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use scry_model::{Action, Answer, AskedAt, Body, Loc, Question};
use scry_render::{RenderOptions, render_json, render_text};
use scry_testkit::{Stats, stats};

const RUNS: usize = 20;
const WARMUP: usize = 3;

/// Runs `f` WARMUP times untimed, then RUNS times timed.
fn bench<T>(mut f: impl FnMut() -> T) -> Stats {
    for _ in 0..WARMUP {
        black_box(f());
    }
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        black_box(f());
        times.push(t.elapsed());
    }
    stats(&times)
}

/// An answer with `n` reference locations spread round-robin over `files`
/// files under `root` (so every file gets n/files lines), in a scrambled order
/// (as servers return them), each with a realistic source line.
fn answer(root: &Path, n: usize, files: usize) -> Answer {
    let paths: Vec<PathBuf> = (0..files)
        .map(|f| root.join(format!("src/module_{:02}/file_{f:04}.rs", f % 37)))
        .collect();
    let mut locations = Vec::with_capacity(n);
    // A cheap LCG so the order is scrambled but deterministic.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..n {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let f = i % files;
        let line = (i / files) as u32 * 3 + 1 + (x >> 60) as u32;
        let col = 9 + (x >> 58 & 7) as u32;
        locations.push(Loc {
            path: paths[f].clone(),
            line,
            col,
            end_line: line,
            end_col: col + 12,
            text: Some(format!(
                "        let w{i} = total_weight(&inventory_{f}) + item_weight(&items[{}]); // line {line}",
                x % 1000
            )),
        });
    }
    // Scramble the order deterministically (Fisher-Yates with the LCG).
    for i in (1..locations.len()).rev() {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let j = (x >> 33) as usize % (i + 1);
        locations.swap(i, j);
    }
    let def = root.join("src/inventory.rs");
    let mut a = Answer::new(
        Action::References,
        Question {
            path: Some(def.clone()),
            symbol: Some("total_weight".into()),
            ..Question::default()
        },
        Body::Locations { locations },
    );
    a.server = Some("rust-analyzer".into());
    a.asked_at = Some(AskedAt {
        loc: Loc {
            path: def,
            line: 17,
            col: 8,
            end_line: 17,
            end_col: 20,
            text: Some("pub fn total_weight(inv: &Inventory) -> u32 {".into()),
        },
        via: scry_model::Via::Declaration {
            kind: "function".into(),
            name: "total_weight".into(),
        },
    });
    a
}

fn main() {
    let root = PathBuf::from("/home/user/projects/big-workspace");
    let opts = RenderOptions::default();
    println!(
        "render bench: {RUNS} timed runs after {WARMUP} warm-up runs each; caps = RenderOptions::default() \
         (max_locations {}, max_chars {})",
        opts.max_locations, opts.max_chars
    );
    println!();
    println!(
        "{:<12} {:>6} {:<12} {:>10} {:>10} {:>10} {:>12} {:>8}",
        "locations", "files", "renderer", "min ms", "median ms", "max ms", "out chars", "marker"
    );
    let mut failures = Vec::new();
    for &(n, files) in &[(1_000usize, 2_000usize), (1_000, 20), (100_000, 2_000)] {
        let a = answer(&root, n, files);
        let files_used = files.min(n);

        let text = render_text(&a, &root, &opts);
        let text_chars = text.chars().count();
        let text_marker = text
            .lines()
            .any(|l| l.starts_with("… ") && l.contains(" more "));
        if text_chars > opts.max_chars {
            failures.push(format!(
                "render_text of {n} locations is {text_chars} chars (> {})",
                opts.max_chars
            ));
        }
        if !text_marker {
            failures.push(format!(
                "render_text of {n} locations has no \"… N more\" line"
            ));
        }

        let json = render_json(&a, &root, &opts);
        let json_str = serde_json::to_string(&json).expect("serialise");
        let json_chars = json_str.chars().count();
        let omitted = &json["omitted"];
        let json_marker = omitted["count"].as_u64().is_some();
        if !json_marker {
            failures.push(format!(
                "render_json of {n} locations has no \"omitted\" count"
            ));
        }

        let t = bench(|| render_text(&a, &root, &opts));
        println!(
            "{:<12} {:>6} {:<12} {:>10.3} {:>10.3} {:>10.3} {:>12} {:>8}",
            n,
            files_used,
            "render_text",
            t.min,
            t.median,
            t.max,
            text_chars,
            if text_marker { "yes" } else { "NO" }
        );
        let t = bench(|| serde_json::to_string(&render_json(&a, &root, &opts)).unwrap());
        println!(
            "{:<12} {:>6} {:<12} {:>10.3} {:>10.3} {:>10.3} {:>12} {:>8}",
            n,
            files_used,
            "render_json",
            t.min,
            t.median,
            t.max,
            json_chars,
            if json_marker { "yes" } else { "NO" }
        );
        if n == 100_000 {
            let last = text
                .lines()
                .rev()
                .find(|l| l.starts_with("… "))
                .unwrap_or("");
            println!("    text marker: {last}");
            println!(
                "    json total (after de-duplication): {}, omitted: {omitted}",
                json["total"]
            );
        }
    }
    println!();
    println!(
        "render_json is timed including serde_json::to_string of the value; \"out chars\" is the \
         text length / serialised JSON length in characters."
    );
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("FAILED: {f}");
        }
        std::process::exit(1);
    }
    println!(
        "checks: render_text <= {} chars with a \"… N more\" line; render_json has \"omitted\": ok",
        opts.max_chars
    );
}
