//! A synthetic SCIP index of any size and shape, and its conversion, for
//! measuring the conversion's peak memory beside what it counts:
//!
//! ```text
//! cargo run --release -p scry-index --example synthetic_index -- gen DIR SHAPE N
//! target/release/examples/synthetic_index convert DIR [CAP_MIB]
//! ```
//!
//! `gen` writes a shape of `tests/shapes/mod.rs` (`defs`, `locals`, `symbols`,
//! `documents`) at scale `N` under `DIR` (sources in `DIR/ws`, the index
//! in `DIR/index.scip`). `convert` converts it into `DIR/index.db` under
//! a memory cap (default: the default cap) and prints the figures and the
//! process's peak resident memory (Linux) beside its size before.

use std::path::PathBuf;

use scry_index::store::convert::{self, ConvertOptions};

#[path = "../tests/shapes/mod.rs"]
mod shapes;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen") if args.len() == 4 => {
            let dir = PathBuf::from(&args[1]);
            let n: u32 = args[3].parse().expect("N");
            let size = shapes::generate(&dir, &args[2], n);
            println!("{}: {size} bytes", dir.join("index.scip").display());
        }
        Some("convert") if (2..=3).contains(&args.len()) => {
            let dir = PathBuf::from(&args[1]);
            let root = scry_base::paths::canonical(&dir.join("ws")).expect("DIR/ws");
            let mut opts = ConvertOptions::new(&root);
            if let Some(cap) = args.get(2) {
                opts.max_memory = cap.parse::<u64>().expect("CAP_MIB") << 20;
            }
            let before = peak_kib();
            let t = std::time::Instant::now();
            let built = convert::convert(&dir.join("index.scip"), &dir.join("index.db"), opts);
            let peak = format!("peak {} MiB (from {} MiB)", peak_kib() >> 10, before >> 10);
            match built {
                Ok(b) => println!("{b:?} in {:.1} s, {peak}", t.elapsed().as_secs_f64()),
                Err(e) => {
                    eprintln!("error[{}]: {e}; {peak}", e.code());
                    std::process::exit(1);
                }
            }
        }
        _ => {
            eprintln!("usage: synthetic_index gen DIR SHAPE N | convert DIR [CAP_MIB]");
            std::process::exit(2);
        }
    }
}

/// The process's peak resident memory in KiB (`VmHWM`), 0 where unknown.
fn peak_kib() -> u64 {
    scry_testkit::proc::status_kib("self", "VmHWM").unwrap_or(0)
}
