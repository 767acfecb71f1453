//! Name lookup cost inside scry (no server): finding and ordering the
//! occurrences of a name in a file, as a question by (path, symbol, line)
//! does before it asks anything (the engine then turns the at most 32 kept
//! ones into candidates).
//!
//! Two shapes:
//! * one 1 MB line holding ~77k occurrences of the name (minified code; the
//!   reported case had 87k), with a string literal between each two;
//! * a 100k-line file with the name on every line: twice in code and once in
//!   a comment on one line, in a string on the next (200k occurrences).
//!
//! Prints min / median / max of a few iterations. Measured in release on a
//! busy 2-core machine, with the same bench body compiled against the scan
//! before it was made linear (per-occurrence rescans of the line for string
//! state and columns, and a duplicate check of every occurrence against
//! every candidate so far): 1 MB line with a line given 437 s before, 38 ms
//! after; 100k-line file 54 s before, 125 ms after.
//!
//! Run: `cargo bench -p scry-ops --bench name_lookup` (`SCRY_BENCH_ITERS`,
//! default 5).

use std::time::{Duration, Instant};

use scry_lsp_session::LineIndex;
use scry_model::name::SymbolName;
use scry_ops::resolve;

fn time(label: &str, iters: usize, mut f: impl FnMut() -> usize) {
    let mut v: Vec<Duration> = Vec::new();
    let mut n = 0;
    for _ in 0..iters {
        let t = Instant::now();
        n = f();
        v.push(t.elapsed());
    }
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{label}: {n} occurrences; min {:.1} ms, median {:.1} ms, max {:.1} ms",
        ms(v[0]),
        ms(v[v.len() / 2]),
        ms(v[v.len() - 1])
    );
}

fn main() {
    let iters: usize = std::env::var("SCRY_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let want = SymbolName::parse("total");

    // ~87k occurrences in one 1 MB line, with strings in between.
    let unit = "total+f(\"x\"),";
    let long = unit.repeat(1_000_000 / unit.len());
    let idx = LineIndex::new(&long);
    println!("1 MB line: {} bytes", long.len());
    time("1 MB line, line given", iters, || {
        let o = resolve::occurrences(&idx, &want, Some(0), true, 32, None);
        o.total
    });
    time("1 MB line, no line", iters, || {
        resolve::occurrences(&idx, &want, None, true, 32, None).total
    });

    // 100k lines.
    let mut text = String::new();
    for i in 0..50_000 {
        text.push_str(&format!(
            "    let v{i} = total(x) + self.total; // total\n    s = \"total\";\n"
        ));
    }
    let idx = LineIndex::new(&text);
    println!("{} lines: {} bytes", idx.line_count(), text.len());
    time("100k-line file, line given", iters, || {
        resolve::occurrences(&idx, &want, Some(75_000), true, 32, None).total
    });
    time("100k-line file, no line", iters, || {
        resolve::occurrences(&idx, &want, None, true, 32, None).total
    });
}
