//! A conversion's memory, measured: for each shape of input that stresses
//! it (`shapes.rs`: many symbols and uses, many distinct locals, many
//! symbols' information, many documents), the peak resident memory a
//! conversion adds stays under its cap, whether it converts or is refused
//! (`INDEX_TOO_LARGE`); and an input of half that size converts.
//!
//! Each conversion runs in a child process (this test binary again, its
//! `child` test) so that its peak (`VmHWM`, Linux) is its own.

#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;

use scry_index::store::convert::{self, ConvertOptions};

mod shapes;

const CAP_MIB: u64 = 64;

/// Each shape at a scale whose conversion needs more than [`CAP_MIB`].
const OVER: [(&str, u32); 4] = [
    ("defs", 600),
    ("locals", 40),
    ("symbols", 240),
    ("documents", 400),
];

#[test]
fn a_conversion_stays_under_its_memory_cap_for_every_shape() {
    let t = tempfile::tempdir().unwrap();
    for (shape, n) in OVER {
        for (scale, must_convert) in [(n, false), (n / 4, true)] {
            let dir = t.path().join(format!("{shape}{scale}"));
            let size = shapes::generate(&dir, shape, scale);
            let (added, outcome) = convert_in_child(&dir, CAP_MIB);
            eprintln!("{shape} × {scale}: {size} bytes, {outcome}, peak +{added} KiB");
            assert!(
                added <= CAP_MIB << 10,
                "{shape} × {scale} ({size} bytes): the conversion took {added} KiB over a cap of {CAP_MIB} MiB ({outcome})"
            );
            if must_convert {
                assert!(
                    outcome.starts_with("converted"),
                    "{shape} × {scale}: {outcome}"
                );
            } else {
                assert!(
                    outcome.contains("INDEX_TOO_LARGE"),
                    "{shape} × {scale}: {outcome}"
                );
            }
        }
    }
}

/// Convert `dir`'s index in a child process under `cap` MiB: the memory it
/// added at its peak (KiB) and what came of it.
fn convert_in_child(dir: &Path, cap: u64) -> (u64, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env("SCRY_MEMORY_CHILD", dir)
        .env("SCRY_MEMORY_CAP_MIB", cap.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| Some(&l[l.find("MEMORY ")? + 7..]))
        .unwrap_or_else(|| {
            panic!(
                "no figures from the child: {stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let (added, outcome) = line.split_once(' ').unwrap();
    (added.parse().unwrap(), outcome.to_string())
}

/// The child's side: convert, and print the peak it added over what it
/// held before.
#[test]
fn child() {
    let Some(dir) = std::env::var_os("SCRY_MEMORY_CHILD") else {
        return;
    };
    let dir = Path::new(&dir);
    let cap: u64 = std::env::var("SCRY_MEMORY_CAP_MIB")
        .unwrap()
        .parse()
        .unwrap();
    let root = scry_base::paths::canonical(&dir.join("ws")).unwrap();
    let mut opts = ConvertOptions::new(&root);
    opts.max_memory = cap << 20;
    let before = status_kib("VmRSS");
    let r = convert::convert(&dir.join("index.scip"), &dir.join("index.db"), opts);
    let added = status_kib("VmHWM").saturating_sub(before);
    let outcome = match r {
        Ok(b) => format!("converted {b:?}"),
        Err(e) => format!("{} {e}", e.code()),
    };
    println!("MEMORY {added} {outcome}");
}

/// A figure of this process's `/proc/self/status`, in KiB.
fn status_kib(key: &str) -> u64 {
    scry_testkit::proc::status_kib("self", key).unwrap()
}
