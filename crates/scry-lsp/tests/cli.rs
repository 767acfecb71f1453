//! The `scry` binary on a copy of the python fixture (pyright starts fast):
//! exit codes, stdout carrying only the answer, errors as one line on
//! stderr.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A fixture copy plus a neutral working directory, config and log dir, so
/// nothing from the user's environment or the repository leaks in.
struct Env {
    ws: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Env {
    fn python() -> Env {
        Env::fixture("python")
    }

    fn fixture(name: &str) -> Env {
        Env {
            ws: common::copy_fixture(name),
            home: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn root(&self) -> &Path {
        self.ws.path()
    }

    fn scry(&self, args: &[&str]) -> Run {
        self.scry_env(args, &[])
    }

    fn scry_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scry"));
        cmd.args(args)
            .env("SCRY_NO_DAEMON", "1")
            .current_dir(self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("SCRY_LOG_DIR", self.home.path().join("logs"))
            .env("XDG_STATE_HOME", self.home.path().join("state"))
            .env_remove("SCRY_JOURNAL_DIR")
            .env_remove("SCRY_LOG");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let Output {
            status,
            stdout,
            stderr,
        } = cmd.output().expect("run scry");
        Run {
            code: status.code().expect("scry exited normally"),
            stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(stderr).expect("stderr is UTF-8"),
        }
    }

    fn root_str(&self) -> String {
        self.root().to_string_lossy().into_owned()
    }

    /// The edit journal of this environment (`$XDG_STATE_HOME/scry/journal`).
    fn journal(&self) -> std::path::PathBuf {
        self.home.path().join("state/scry/journal")
    }

    fn bytes(&self, files: &[&str]) -> Vec<Vec<u8>> {
        files
            .iter()
            .map(|f| std::fs::read(self.root().join(f)).expect("fixture file"))
            .collect()
    }
}

/// pyright must be there for the commands that start it.
fn have_pyright(env: &Env, test: &str) -> bool {
    let ws = scry_workspace::Workspace::open(env.root()).expect("workspace");
    common::server_available(&ws, "pyright-langserver", test)
}

fn one_line(r: &Run) -> &str {
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr is one line: {:?}", r.stderr);
    lines[0]
}

const REFS_TEXT: &str = "\
5 references to `total_weight` (at inventory.py:18:5, declaration of function `total_weight`) — pyright
inventory.py
  18:5  def total_weight(inv: Inventory) -> int:
main.py
  3:34  from inventory import Inventory, total_weight
  11:26  label, w = \"📦 café\", total_weight(inv)
report.py
  3:34  from inventory import Inventory, total_weight
  9:9  w = total_weight(inv)
";

#[test]
fn refs_prints_grouped_text_and_only_the_answer() {
    let env = Env::python();
    if !have_pyright(&env, "refs_prints_grouped_text_and_only_the_answer") {
        return;
    }
    let root = env.root_str();
    // Debug logging on: logs must all go to stderr, stdout is the answer.
    let r = env.scry_env(
        // A budget given: pyright's own answer, even while it loads.
        &[
            "refs",
            "inventory.py",
            "total_weight",
            "--root",
            &root,
            "--timeout-ms",
            "90000",
        ],
        &[("SCRY_LOG", "debug")],
    );
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert_eq!(r.stdout, REFS_TEXT, "stdout is exactly the rendered answer");
    // The comment and string occurrences are not references.
    assert!(!r.stdout.contains("report.py:8") && !r.stdout.contains("\n  8:"));
    assert!(!r.stdout.contains("\n  12:"));
}

#[test]
fn refs_json_is_valid_with_locations() {
    let env = Env::python();
    if !have_pyright(&env, "refs_json_is_valid_with_locations") {
        return;
    }
    let root = env.root_str();
    let r = env.scry(&[
        "refs",
        "inventory.py",
        "total_weight",
        "--root",
        &root,
        "--json",
        "--timeout-ms",
        "90000",
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).expect("stdout is one JSON document");
    assert_eq!(v["action"], "references");
    assert_eq!(v["kind"], "locations");
    assert_eq!(v["server"], "pyright");
    assert_eq!(v["empty"], false);
    assert_eq!(v["asked_at"]["path"], "inventory.py");
    assert_eq!(v["asked_at"]["line"], 18);
    assert_eq!(v["asked_at"]["col"], 5);
    let got: Vec<(String, u64, u64)> = v["locations"]
        .as_array()
        .expect("locations array")
        .iter()
        .map(|l| {
            (
                l["path"].as_str().unwrap().to_string(),
                l["line"].as_u64().unwrap(),
                l["col"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64, u64)> = [
        ("inventory.py", 18, 5),
        ("main.py", 3, 34),
        ("main.py", 11, 26),
        ("report.py", 3, 34),
        ("report.py", 9, 9),
    ]
    .iter()
    .map(|(p, l, c)| (p.to_string(), *l, *c))
    .collect();
    assert_eq!(got, want);
    let emoji = &v["locations"][2];
    assert_eq!(emoji["end_col"], 38);
    assert_eq!(emoji["text"], "label, w = \"📦 café\", total_weight(inv)");
}

#[test]
fn unknown_action_is_usage_error() {
    let env = Env::python();
    let root = env.root_str();
    let r = env.scry(&["frobnicate", "inventory.py", "--root", &root]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty(), "stdout: {:?}", r.stdout);
    let line = one_line(&r);
    assert!(line.contains("unknown action `frobnicate`"), "{line}");
}

#[test]
fn a_subcommands_missing_root_is_one_usage_line() {
    let env = Env::python();
    let gone = env.root().join("gone");
    let gone = gone.to_string_lossy();
    for (command, args) in [
        ("doctor", vec!["doctor", "--root", &gone]),
        ("index", vec!["index", &gone]),
        ("daemon", vec!["daemon", "status", "--root", &gone]),
        ("trust", vec!["trust", &gone]),
        ("setup", vec!["setup", "claude", "--root", &gone]),
    ] {
        let r = env.scry(&args);
        assert_eq!(r.code, 2, "{command}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{command}: stdout {:?}", r.stdout);
        assert_eq!(
            one_line(&r),
            format!(
                "scry {command}: workspace root {gone} is not a directory (see scry {command} --help)"
            )
        );
    }
}

#[test]
fn line_zero_is_usage_error() {
    let env = Env::python();
    let root = env.root_str();
    let r = env.scry(&[
        "refs",
        "inventory.py",
        "total_weight",
        "--line",
        "0",
        "--root",
        &root,
    ]);
    assert_eq!(r.code, 2, "stderr: {}", r.stderr);
    assert!(r.stdout.is_empty());
    let line = one_line(&r);
    assert!(line.contains("--line"), "{line}");
}

#[test]
fn missing_file_is_file_not_found() {
    let env = Env::python();
    let root = env.root_str();
    let r = env.scry(&["refs", "nope.py", "total_weight", "--root", &root]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty());
    let line = one_line(&r);
    assert!(line.contains("FILE_NOT_FOUND"), "{line}");
    assert!(line.contains("nope.py"), "{line}");

    // With --json the error is also a JSON document on stdout.
    let r = env.scry(&["refs", "nope.py", "total_weight", "--root", &root, "--json"]);
    assert_eq!(r.code, 1);
    let v: Value = serde_json::from_str(&r.stdout).expect("JSON error on stdout");
    assert_eq!(v["error"]["code"], "FILE_NOT_FOUND");
    assert_eq!(v["error"]["message"], "file not found: nope.py");
    one_line(&r);
}

#[test]
fn path_outside_workspace_is_refused() {
    let env = Env::python();
    let root = env.root_str();
    let r = env.scry(&["refs", "/etc/passwd", "root", "--root", &root]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty());
    let line = one_line(&r);
    assert!(line.contains("OUTSIDE_WORKSPACE"), "{line}");
    assert!(line.contains("/etc/passwd"), "{line}");
}

#[test]
fn status_lists_servers_and_starts_nothing() {
    let env = Env::python();
    let root = env.root_str();
    let r = env.scry(&["status", "--root", &root]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let pyright = r
        .stdout
        .lines()
        .find(|l| l.starts_with("pyright "))
        .unwrap_or_else(|| panic!("status lists pyright:\n{}", r.stdout));
    if common::servers_required() {
        assert!(pyright.contains("installed /"), "{pyright}");
    }
    // Every server line says "not running": status starts nothing.
    for l in r.stdout.lines() {
        for word in ["ready", "starting", "indexing", "pid"] {
            assert!(!l.contains(word), "status started something: {l}");
        }
        if l.contains("running") {
            assert!(l.contains("not running"), "status started something: {l}");
        }
    }
    assert!(pyright.ends_with("not running"), "{pyright}");
    let canon = scry_base::paths::canonical(env.root()).unwrap();
    assert!(
        r.stdout
            .starts_with(&format!("Workspace: {}\n", canon.display())),
        "{}",
        r.stdout
    );
}

#[test]
fn diag_prints_the_summary_line_and_exits_0() {
    let env = Env::fixture("diagnostics/python");
    if !have_pyright(&env, "diag_prints_the_summary_line_and_exits_0") {
        return;
    }
    let root = env.root_str();
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(env.root())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    // The whole workspace (no target), problems found: still exit 0.
    let r = env.scry(&["diag", "--root", &root]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let first = r.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("2 errors, 1 warning in 1 file — checked by pyright"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("app.py:12:20  error[reportArgumentType] (Pyright): Argument of type"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("\n    count: int = total([\"a\", \"b\"])\n"),
        "{}",
        r.stdout
    );
    // Errors only, for one file (relative to --root: not in the cwd).
    let r = env.scry(&[
        "diagnostics",
        "app.py",
        "--severity",
        "error",
        "--root",
        &root,
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(r.stdout.starts_with("2 errors in 1 file"), "{}", r.stdout);
    assert!(!r.stdout.contains("warning["), "{}", r.stdout);
    // A clean file says who checked it.
    let r = env.scry(&["diag", "clean.py", "--root", &root]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout.starts_with("No problems in clean.py (pyright"),
        "{}",
        r.stdout
    );
    // A bad severity is a usage error.
    let r = env.scry(&["diag", "--severity", "loud", "--root", &root]);
    assert_eq!(r.code, 2);
    assert!(one_line(&r).contains("--severity"), "{}", r.stderr);
    // Diagnostics never write into the workspace (no linter cache either).
    assert_eq!(listing(), before);
    assert!(!env.root().join(".ruff_cache").exists());
}

#[test]
fn rename_dry_run_writes_nothing_then_apply_and_undo() {
    let env = Env::python();
    if !have_pyright(&env, "rename_dry_run_writes_nothing_then_apply_and_undo") {
        return;
    }
    let root = env.root_str();
    let files = ["inventory.py", "main.py", "report.py"];
    let original = env.bytes(&files);
    let r = env.scry(&[
        "rename",
        "inventory.py",
        "total_weight",
        "weight_sum",
        "--dry-run",
        "--root",
        &root,
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout.starts_with(
            "Preview of renaming `total_weight` → `weight_sum` (nothing written): 5 edits in 3 files — pyright\n"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("\n--- a/main.py\n+++ b/main.py\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("\n-    label, w = \"📦 café\", total_weight(inv)\n+    label, w = \"📦 café\", weight_sum(inv)\n"),
        "{}",
        r.stdout
    );
    assert_eq!(env.bytes(&files), original, "--dry-run wrote to disk");
    assert!(!env.journal().exists(), "--dry-run journaled an edit");

    // Applied, then undone by another process (the journal persists).
    let r = env.scry(&[
        "rename",
        "inventory.py",
        "total_weight",
        "weight_sum",
        "--root",
        &root,
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout
            .starts_with("Renamed `total_weight` → `weight_sum`: 5 edits in 3 files — pyright\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("main.py:11:26  label, w = \"📦 café\", weight_sum(inv)")
    );
    assert_ne!(env.bytes(&files), original);
    assert!(env.journal().is_dir());
    let r = env.scry(&["undo", "--root", &root]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout
            .starts_with("Undid rename `total_weight` → `weight_sum`: restored 3 files"),
        "{}",
        r.stdout
    );
    assert_eq!(
        env.bytes(&files),
        original,
        "undo did not restore the bytes"
    );
}

/// Issue 11: a file whose name starts with `-` is named with `--` or
/// `./`; written bare it is a usage error, never the help text.
#[test]
fn file_names_starting_with_a_dash() {
    let env = Env::python();
    std::fs::write(env.root().join("-h.py"), "def dash_helper():\n    pass\n").unwrap();
    let root = env.root_str();
    let r = env.scry(&["symbols", "-h.py", "--root", &root]);
    assert_eq!(r.code, 2, "stdout: {}", r.stdout);
    assert!(r.stdout.is_empty(), "the help was printed: {}", r.stdout);
    let line = one_line(&r);
    assert!(
        line.contains("./-h.py") && line.contains("-- -h.py"),
        "{line}"
    );
    let r = env.scry(&["diag", "-V.sh", "--root", &root]);
    assert_eq!(r.code, 2, "the version was printed: {}", r.stdout);
    if !have_pyright(&env, "file_names_starting_with_a_dash") {
        return;
    }
    for args in [
        &["symbols", "--root", &root, "--", "-h.py"][..],
        &["symbols", "./-h.py", "--root", &root],
    ] {
        let r = env.scry(args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(r.stdout.contains("dash_helper"), "{args:?}: {}", r.stdout);
    }
}

/// Issue 11: a `diag` target outside the workspace is refused as such,
/// globs included (not "no server configured"). Issue 12: a missing file
/// whose path climbs out with `..` is outside too, as for `refs` (diag
/// called it not found).
#[test]
fn diag_target_outside_the_workspace_is_refused() {
    let env = Env::python();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("b.py"), "import os\n").unwrap();
    let root = env.root_str();
    let abs_glob = format!("{}/*.py", other.path().display());
    let abs_file = format!("{}/b.py", other.path().display());
    for target in [
        abs_glob.as_str(),
        abs_file.as_str(),
        "../*.py",
        "sub/../../*.py",
        "../missing.py",
        "sub/../../missing.py",
    ] {
        let r = env.scry(&["diag", target, "--root", &root]);
        assert_eq!(r.code, 1, "{target}: {}", r.stdout);
        assert!(r.stdout.is_empty(), "{target}: {}", r.stdout);
        let line = one_line(&r);
        assert!(line.contains("OUTSIDE_WORKSPACE"), "{target}: {line}");
    }
}

/// Issue 11: a `new_name` with a line break is a clear error before any
/// server is asked; nothing changes.
#[test]
fn rename_refuses_a_new_name_with_a_line_break() {
    let env = Env::python();
    let root = env.root_str();
    let files = ["inventory.py", "main.py", "report.py"];
    let before = env.bytes(&files);
    for bad in ["weight\nsum", "weight_sum\t", &"w".repeat(300)] {
        let r = env.scry(&[
            "rename",
            "inventory.py",
            "total_weight",
            bad,
            "--root",
            &root,
        ]);
        assert_eq!(r.code, 1, "{bad:?}: {}", r.stdout);
        let line = one_line(&r);
        // The argument as the command line spells it.
        assert!(
            line.contains("INVALID_ARGUMENT") && line.contains("--new-name"),
            "{line}"
        );
        assert_eq!(env.bytes(&files), before);
    }
}

/// Issue 20: `new_name` must be a Python name — the injection of the
/// issue, a leading digit, a keyword, a dotted name, the bidi override and
/// the zero-width space are refused (INVALID_ARGUMENT, saying which rule)
/// against the real pyright with nothing written and nothing journaled; a
/// valid (non-ASCII) name is still renamed.
#[test]
fn rename_refuses_a_new_name_that_is_no_python_name() {
    let env = Env::python();
    if !have_pyright(&env, "rename_refuses_a_new_name_that_is_no_python_name") {
        return;
    }
    let root = env.root_str();
    let files = ["inventory.py", "main.py", "report.py"];
    let before = env.bytes(&files);
    let injection = r#"x = __import__("os").system("echo INJECTED")"#;
    for (bad, rule) in [
        (injection, "cannot be a Python name: it contains a space"),
        (
            "1abc",
            "`1abc` cannot be a Python name: it starts with a digit",
        ),
        ("class", "`class` is a Python keyword"),
        ("a.b", "`a.b` cannot be a Python name: it contains `.`"),
        (
            "weight\u{202e}sum",
            "contains U+202E RIGHT-TO-LEFT OVERRIDE, a Unicode format character",
        ),
        (
            "weight\u{200b}sum",
            "contains U+200B ZERO WIDTH SPACE, a Unicode format character",
        ),
    ] {
        for dry in [false, true] {
            let mut args = vec![
                "rename",
                "inventory.py",
                "total_weight",
                bad,
                "--root",
                &root,
            ];
            if dry {
                args.push("--dry-run");
            }
            let r = env.scry(&args);
            assert_eq!(r.code, 1, "{bad:?}: {}", r.stdout);
            assert!(r.stdout.is_empty(), "{bad:?}: {}", r.stdout);
            let line = one_line(&r);
            assert!(
                line.contains("INVALID_ARGUMENT") && line.contains(rule),
                "{bad:?}: {line}"
            );
            assert!(line.contains("nothing was changed"), "{line}");
            assert!(
                !line.contains('\u{202e}') && !line.contains('\u{200b}'),
                "the invisible character is shown raw: {line:?}"
            );
            assert_eq!(env.bytes(&files), before, "{bad:?} wrote to disk");
            assert!(!env.journal().exists(), "{bad:?} journaled an edit");
        }
    }
    // A valid name, not ASCII: renamed by pyright in every file.
    let r = env.scry(&[
        "rename",
        "inventory.py",
        "total_weight",
        "gesamt_größe",
        "--root",
        &root,
    ]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    assert!(
        r.stdout
            .starts_with("Renamed `total_weight` → `gesamt_größe`: 5 edits in 3 files — pyright\n"),
        "{}",
        r.stdout
    );
    let main = std::fs::read_to_string(env.root().join("main.py")).unwrap();
    assert!(main.contains("gesamt_größe(inv)"), "{main}");
    assert!(!main.contains("INJECTED"));
}

/// Issue 11: when the journal cannot be written (here SCRY_JOURNAL_DIR is
/// under a regular file, which fails even for root) the edit is refused
/// with WRITE_FAILED and nothing changes; no 0-byte entry is left.
#[test]
fn rename_is_refused_when_the_journal_cannot_be_written() {
    let env = Env::python();
    if !have_pyright(&env, "rename_is_refused_when_the_journal_cannot_be_written") {
        return;
    }
    let root = env.root_str();
    let files = ["inventory.py", "main.py", "report.py"];
    let before = env.bytes(&files);
    let blocker = env.home.path().join("blocker");
    std::fs::write(&blocker, "x").unwrap();
    let jdir = blocker.join("journal");
    let jdir = jdir.to_str().unwrap();
    let args = [
        "rename",
        "inventory.py",
        "total_weight",
        "weight_sum",
        "--root",
        &root,
    ];
    let r = env.scry_env(&args, &[("SCRY_JOURNAL_DIR", jdir)]);
    assert_eq!(r.code, 1, "stdout: {}", r.stdout);
    // (a server's own warning may be logged before the error line)
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with("scry: error"))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    assert!(
        line.contains("WRITE_FAILED") && line.contains("nothing was changed"),
        "{line}"
    );
    assert_eq!(env.bytes(&files), before);
    assert_eq!(std::fs::read(&blocker).unwrap(), b"x");
    // undo is a writer too: without a journal directory it cannot take the
    // workspace's writer lock, says so, and changes nothing.
    let r = env.scry_env(&["undo", "--root", &root], &[("SCRY_JOURNAL_DIR", jdir)]);
    assert_eq!(r.code, 1);
    let line = one_line(&r);
    assert!(
        line.contains("WRITE_FAILED") && line.contains("nothing was changed"),
        "{line}"
    );
    assert_eq!(env.bytes(&files), before);
}
