//! Shared helpers for scry's tests and benchmarks (like rust-analyzer's
//! `test-utils`): where the repository's `fixtures/` are, copying them into
//! temporary directories, replaying a fuzz target's committed corpus
//! (`fuzz/corpus/<target>/`, [`replay_corpus`]), whether a missing tool skips a test or fails it
//! (`SCRY_REQUIRE_SERVERS=1`), where the fake language server
//! (`scry-fake-lsp`, this package's binary) was built, JSON clean-ups, an
//! MCP client over a child's stdio ([`mcp_stdio`]), readers of what
//! `scry mcp --http` says ([`mcp_http`]), workspaces for the edit
//! layer's tests ([`edits`]), a loopback HTTP server ([`http`]), a
//! process's memory figures ([`proc`]) and git run in a test repository
//! ([`git`]).
//!
//! Invariants: nothing here writes under the repository (fixtures are only
//! read and copied), and the library depends on no scry crate but
//! scry-base (the bottom one) and scry-model (the vocabulary, on scry-base
//! alone), so any crate above them can take this as a dev-dependency
//! without a cycle.

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

pub mod edits;
pub mod http;
pub mod mcp_http;
pub mod mcp_stdio;
pub mod proc;

/// `git ARGS` in `root` (a test's repository: a fixed author, no signing),
/// its trimmed output; panics, with git's stderr, when it fails.
pub fn git(root: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(root)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The repository's root (canonical): the directory holding `crates/`,
/// `fixtures/` and `fuzz/`, found from this package's place in it.
pub fn repo_root() -> PathBuf {
    scry_base::paths::canonical(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .expect("crates/scry-testkit sits two levels below the repository root")
}

/// The repository's `fixtures/` directory (canonical).
pub fn fixtures_dir() -> PathBuf {
    scry_base::paths::canonical(&repo_root().join("fixtures"))
        .expect("fixtures/ exists next to crates/")
}

/// Runs `check` on every input of the committed corpus of the fuzz target
/// `target` (`fuzz/corpus/<target>/`, in name order): a fuzz target's
/// replay on stable, in the unit tests of the crate whose `fuzzing` module
/// holds the check. Panics when the directory is missing or holds no input
/// (a replay that checks nothing must not pass), and names the input whose
/// check panicked.
pub fn replay_corpus(target: &str, check: impl Fn(&[u8])) {
    let dir = repo_root().join("fuzz/corpus").join(target);
    let mut inputs: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .map(|e| e.expect("a corpus directory entry").path())
            .collect(),
        Err(e) => panic!(
            "the corpus of fuzz target `{target}` is missing: {} ({e})",
            dir.display()
        ),
    };
    assert!(
        !inputs.is_empty(),
        "the corpus of fuzz target `{target}` is empty: {}",
        dir.display()
    );
    inputs.sort();
    for p in inputs {
        let bytes = std::fs::read(&p).expect("a corpus input reads");
        if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&bytes)))
        {
            eprintln!("fuzz corpus input {} fails its check", p.display());
            std::panic::resume_unwind(panic);
        }
    }
}

/// `fixtures/<rel>`.
pub fn fixture_path(rel: &str) -> PathBuf {
    fixtures_dir().join(rel)
}

/// True when CI demands every server (`SCRY_REQUIRE_SERVERS=1`).
pub fn servers_required() -> bool {
    std::env::var("SCRY_REQUIRE_SERVERS").is_ok_and(|v| v == "1")
}

/// A tool a test needs is missing: fail under `SCRY_REQUIRE_SERVERS=1`,
/// else print that the test is skipped. The caller then returns.
pub fn skip_or_fail(why: impl Display) {
    if servers_required() {
        panic!("{why} (SCRY_REQUIRE_SERVERS=1)");
    }
    eprintln!("skipped: {why} (set SCRY_REQUIRE_SERVERS=1 to fail instead)");
}

/// Whether an executable named `command` is in a directory of `PATH`.
pub fn on_path(command: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(command).is_file()))
}

/// Whether `command` is on `PATH`; when not, [`skip_or_fail`] for `test`.
pub fn require_on_path(command: &str, test: &str) -> bool {
    if on_path(command) {
        return true;
    }
    skip_or_fail(format_args!("{test}: `{command}` is not installed"));
    false
}

/// A seeded pseudo-random generator (xorshift64): the same seed gives the
/// same numbers, so a test's generated inputs repeat when it fails. `seed`
/// must not be 0 (the generator would only give zeros).
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    assert_ne!(seed, 0, "xorshift needs a seed other than 0");
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// The directories a fixture copy leaves out: build outputs and server
/// caches (none is in the repository; a local run may have made them).
const SKIPPED: &[&str] = &["target", ".cache", "node_modules", "__pycache__"];

/// The messages the fake server logged (`FAKE_LSP_LOG`), one JSON value
/// per line; a line that is not JSON (cut short as the server dies) left
/// out.
pub fn fake_log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Copy a directory tree (files and folders, recursively), leaving out
/// build outputs and server caches.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("dir entry");
        let name = entry.file_name();
        if SKIPPED.iter().any(|s| name == *s) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let ft = entry.file_type().expect("file type");
        if ft.is_dir() {
            copy_tree(&src, &dst);
        } else if ft.is_file() {
            std::fs::copy(&src, &dst).expect("copy fixture file");
        }
    }
}

/// Copy `fixtures/<rel>` into `to` (created).
pub fn copy_fixture_to(rel: &str, to: &Path) {
    copy_tree(&fixture_path(rel), to);
}

/// A plain copy of `fixtures/<rel>` in a fresh temporary directory (named
/// `scry-test-<rel>-…`, `/` as `-`).
pub fn temp_copy(rel: &str) -> tempfile::TempDir {
    let tmp = tempfile::Builder::new()
        .prefix(&format!("scry-test-{}-", rel.replace('/', "-")))
        .tempdir()
        .expect("tempdir");
    copy_fixture_to(rel, tmp.path());
    tmp
}

/// [`temp_copy`] made ready for a language server: for C,
/// `compile_commands.json` is rewritten with the copy's absolute directory
/// so clangd's background index runs (cross-file answers; see
/// fixtures/README.md).
pub fn copy_fixture(lang: &str) -> tempfile::TempDir {
    let tmp = temp_copy(lang);
    if lang == "c" {
        write_compile_commands(tmp.path());
    }
    tmp
}

/// A temporary directory and its canonical path (what answers' paths start
/// with: on some systems the temporary directory is behind a link).
pub fn canonical_tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = scry_base::paths::canonical(dir.path()).expect("canonical tempdir");
    (dir, path)
}

/// `compile_commands.json` for the C fixture's three sources, with `dir`'s
/// canonical path as their directory.
pub fn write_compile_commands(dir: &Path) {
    let dir = scry_base::paths::canonical(dir).expect("canonical fixture copy");
    let entries: Vec<Value> = ["inventory.c", "report.c", "main.c"]
        .iter()
        .map(|f| {
            serde_json::json!({
                "directory": dir.to_string_lossy(),
                "file": f,
                "arguments": ["cc", "-std=c11", "-Wall", "-I.", "-c", f],
            })
        })
        .collect();
    std::fs::write(
        dir.join("compile_commands.json"),
        serde_json::to_string_pretty(&entries).expect("JSON"),
    )
    .expect("write compile_commands.json");
}

/// A binary cargo built for this run (`env!("CARGO_BIN_EXE_<name>")`) as
/// the OS spells its place. Cargo's path is the host's: cross-built for
/// Windows and run under wine it is `/work/…`, a path without a drive,
/// which scry would take relative to a workspace on another drive;
/// resolved from the current directory (cargo runs a test in its
/// package's directory) it is `Z:\work\…`.
pub fn built_binary(path: &str) -> PathBuf {
    scry_base::paths::canonical(Path::new(path))
        .unwrap_or_else(|e| panic!("the built binary {path}: {e}"))
}

/// The fake server binary, `target/<profile>/scry-fake-lsp`, next to the
/// running test's `deps/` directory. Missing: `None` after
/// [`skip_or_fail`] (`cargo test --workspace` builds it; so does
/// `cargo build -p scry-testkit`). This package's own tests use
/// `env!("CARGO_BIN_EXE_scry-fake-lsp")` instead.
pub fn fake_lsp(test: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = dir.join(format!("scry-fake-lsp{}", std::env::consts::EXE_SUFFIX));
    if bin.is_file() {
        return Some(bin);
    }
    skip_or_fail(format_args!(
        "{test}: {} is missing; build it with `cargo build -p scry-testkit` (cargo test --workspace does)",
        bin.display()
    ));
    None
}

/// Remove every `elapsed_ms` member, at any depth: timings differ between
/// two runs of the same question.
pub fn untimed(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("elapsed_ms");
            m.values_mut().for_each(untimed);
        }
        Value::Array(a) => a.iter_mut().for_each(untimed),
        _ => {}
    }
}

/// Timings summed up for benchmarks, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

/// Min, median (the mean of the middle two for an even count) and max of
/// `v`, which must not be empty.
pub fn stats(v: &[Duration]) -> Stats {
    let mut ms: Vec<f64> = v.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    let n = ms.len();
    let median = if n % 2 == 1 {
        ms[n / 2]
    } else {
        (ms[n / 2 - 1] + ms[n / 2]) / 2.0
    };
    Stats {
        min: ms[0],
        median,
        max: ms[n - 1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_tree_copies_nested_files_and_skips_caches() {
        let (_src_dir, src) = canonical_tempdir();
        std::fs::create_dir_all(src.join("a/b")).unwrap();
        std::fs::create_dir_all(src.join("target/debug")).unwrap();
        std::fs::create_dir_all(src.join("x/__pycache__")).unwrap();
        std::fs::write(src.join("top.txt"), "top").unwrap();
        std::fs::write(src.join("a/b/deep.txt"), "deep").unwrap();
        std::fs::write(src.join("target/debug/out"), "built").unwrap();
        std::fs::write(src.join("x/__pycache__/m.pyc"), "cache").unwrap();
        let (_dst_dir, dst) = canonical_tempdir();
        let to = dst.join("copy");
        copy_tree(&src, &to);
        assert_eq!(std::fs::read_to_string(to.join("top.txt")).unwrap(), "top");
        assert_eq!(
            std::fs::read_to_string(to.join("a/b/deep.txt")).unwrap(),
            "deep"
        );
        assert!(!to.join("target").exists());
        assert!(to.join("x").is_dir());
        assert!(!to.join("x/__pycache__").exists());
    }

    #[test]
    fn c_fixture_copy_gets_its_own_compile_commands() {
        let tmp = copy_fixture("c");
        let text = std::fs::read_to_string(tmp.path().join("compile_commands.json")).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let dir = scry_base::paths::canonical(tmp.path()).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 3);
        assert_eq!(v[0]["directory"], dir.to_string_lossy().as_ref());
        assert!(tmp.path().join("inventory.c").is_file());
    }

    #[test]
    fn stats_of_odd_and_even_counts() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        let s = stats(&ms(&[3, 1, 2]));
        assert_eq!((s.min, s.median, s.max), (1.0, 2.0, 3.0));
        let s = stats(&ms(&[4, 1, 2, 3]));
        assert_eq!((s.min, s.median, s.max), (1.0, 2.5, 4.0));
    }

    #[test]
    fn untimed_removes_elapsed_at_every_depth() {
        let mut v = serde_json::json!({"elapsed_ms": 3, "a": [{"elapsed_ms": 1, "b": 2}]});
        untimed(&mut v);
        assert_eq!(v, serde_json::json!({"a": [{"b": 2}]}));
    }

    #[test]
    fn xorshift_is_xorshift64_with_shifts_13_7_17() {
        // Seed 1: 1 ^ 1<<13 = 8193; ^ 8193>>7 = 8257; ^ 8257<<17.
        let mut next = xorshift(1);
        assert_eq!(next(), 8257 ^ (8257 << 17));
        let (mut a, mut b) = (xorshift(7), xorshift(7));
        assert!((0..100).all(|_| a() == b()));
    }

    #[test]
    #[should_panic(expected = "the corpus of fuzz target `no-such-target` is missing")]
    fn a_missing_corpus_fails_the_replay() {
        replay_corpus("no-such-target", |_| {});
    }

    #[test]
    fn a_replay_runs_the_check_on_every_committed_input() {
        let n = std::cell::Cell::new(0);
        replay_corpus("line_index", |_| n.set(n.get() + 1));
        let committed = std::fs::read_dir(repo_root().join("fuzz/corpus/line_index"))
            .unwrap()
            .count();
        assert_eq!(n.get(), committed);
    }
}
