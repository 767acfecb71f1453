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
        Env {
            ws: common::copy_fixture("python"),
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
            .current_dir(self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("SCRY_LOG_DIR", self.home.path().join("logs"))
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
        &["refs", "inventory.py", "total_weight", "--root", &root],
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
    let canon = env.root().canonicalize().unwrap();
    assert!(
        r.stdout
            .starts_with(&format!("Workspace: {}\n", canon.display())),
        "{}",
        r.stdout
    );
}
