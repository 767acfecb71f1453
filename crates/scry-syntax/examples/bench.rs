//! Timing of the syntactic index on a directory (not a test):
//! `cargo run --release -p scry-syntax --example bench -- DIR [NAME]`.
//! Prints cold build, warm from the disk cache, warm in memory, and `map`
//! times, with the lines indexed and the index's approximate size; with
//! NAME, first the cold build a question about NAME needs (the files
//! holding it: `Scope`), as a syntactic answer's first call does.

use std::path::PathBuf;
use std::time::Instant;

use scry_syntax::{Focus, Scope, SyntaxIndex, map};

fn rss_kib() -> u64 {
    scry_testkit::proc::status_kib("self", "VmRSS").unwrap_or(0)
}

fn main() {
    let dir: PathBuf = std::env::args().nth(1).expect("DIR").into();
    let root = scry_base::paths::canonical(&dir).expect("dir exists");
    let cache = std::env::temp_dir().join(format!("scry-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);

    if let Some(name) = std::env::args().nth(2) {
        let t = Instant::now();
        let ix = SyntaxIndex::new(&root, None);
        let scope = Scope {
            file: None,
            name: Some(name.clone()),
        };
        let snap = ix.refresh_scoped(&scope);
        println!(
            "cold, scoped to `{name}`: {:?} ({} files in the snapshot, {} parsed)",
            t.elapsed(),
            snap.files.len(),
            snap.parsed
        );
    }

    // Compile the queries outside the timing (once per process).
    let rss0 = rss_kib();
    let t = Instant::now();
    let ix = SyntaxIndex::new(&root, Some(&cache));
    let snap = ix.refresh();
    let cold = t.elapsed();
    let rss1 = rss_kib();
    println!(
        "cold: {:?} for {} files, {} lines ({} parsed); index ≈ {} KiB heap, RSS +{} KiB; cache {} KiB",
        cold,
        snap.files.len(),
        snap.lines(),
        snap.parsed,
        snap.heap_bytes() / 1024,
        rss1.saturating_sub(rss0),
        ix.cache_bytes() / 1024
    );
    let t = Instant::now();
    let again = ix.refresh();
    println!(
        "warm (memory, walk + stat): {:?} ({} parsed)",
        t.elapsed(),
        again.parsed
    );

    let ix2 = SyntaxIndex::new(&root, Some(&cache));
    let t = Instant::now();
    let warm = ix2.refresh();
    println!(
        "warm (new process, disk cache): {:?} ({} parsed)",
        t.elapsed(),
        warm.parsed
    );

    for budget in [4000, 16000] {
        let t = Instant::now();
        let m = map::map(&warm, &Focus::default(), budget);
        println!(
            "map budget {budget}: {:?}; {} files shown, {} files / {} defs left out",
            t.elapsed(),
            m.files.len(),
            m.omitted_files,
            m.omitted_defs
        );
    }
    let _ = std::fs::remove_dir_all(&cache);
}
