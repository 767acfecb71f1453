//! What a cloned repository puts on the agent's `PATH` never runs
//! untrusted (issue 26, item 1), and trust changes count on the next call
//! (item 3), end to end through the `scry` binary, through the daemon and
//! in-process: a relative `PATH` entry (`node_modules/.bin`, `tools`) is
//! never given to a server, linter or version probe; an absolute entry
//! inside an untrusted workspace is neither searched for the server's
//! command nor given to it; `scry trust .` makes the workspace's own
//! commands run on the next call and `scry trust --revoke .` stops them on
//! the next call, with the same daemon; `doctor` says what it left out.
//!
//! Each project-local program is a script that touches a marker file beside
//! the workspace, then runs the real program: the marker existing means
//! scry (or a server scry started) ran it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::process::scry_in;
use serde_json::Value;

/// Where `cmd` is on this process's `PATH`, canonical; `None` (the test
/// skips, unless servers are required) when it is not installed.
fn installed(cmd: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(cmd))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            !common::servers_required(),
            "{cmd} is not installed but SCRY_REQUIRE_SERVERS=1"
        );
        eprintln!("skipping: {cmd} is not installed");
    }
    found
}

struct T {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
    daemon: bool,
}

impl T {
    /// A workspace `base/ws` (with `files`), scry's places under `base`.
    fn new(daemon: bool, files: &[(&str, &str)]) -> T {
        let tmp = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        for (rel, text) in files {
            let p = ws.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        std::fs::write(base.join("config.json"), "{}").unwrap();
        T {
            _tmp: tmp,
            base,
            ws,
            daemon,
        }
    }

    /// A copy of `fixtures/<name>` as the workspace.
    fn fixture(daemon: bool, name: &str) -> T {
        let t = T::new(daemon, &[]);
        common::copy_tree(&common::fixtures_dir().join(name), &t.ws);
        t
    }

    /// `ws/rel`: a script that touches `base/<marker>` and runs `then`.
    fn marker_script(&self, rel: &str, marker: &str, then: &Path) {
        let p = self.ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\ntouch '{}'\nexec '{}' \"$@\"\n",
                self.marker(marker).display(),
                then.display()
            ),
        )
        .unwrap();
        common::process::make_executable(&p);
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.base.join(name)
    }

    fn ran(&self, marker: &str) -> bool {
        self.marker(marker).exists()
    }

    /// `entries` (relative to nothing: as written) before this process's
    /// `PATH`.
    fn path(&self, entries: &[&str]) -> std::ffi::OsString {
        let mut dirs: Vec<PathBuf> = entries.iter().map(PathBuf::from).collect();
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(dirs).unwrap()
    }

    fn scry(&self, path: &std::ffi::OsString, args: &[&str]) -> Output {
        let mut c = scry_in(&self.base, &self.ws, args);
        c.env("PATH", path);
        if !self.daemon {
            c.env("SCRY_NO_DAEMON", "1");
        }
        c.output().unwrap()
    }

    fn ok(&self, path: &std::ffi::OsString, args: &[&str]) -> String {
        let o = self.scry(path, args);
        assert!(o.status.success(), "scry {args:?}: {o:?}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The running servers the daemon lists for this workspace: (id, pid,
    /// program).
    fn servers(&self, path: &std::ffi::OsString) -> Vec<(String, u32, PathBuf)> {
        let s: Value =
            serde_json::from_str(&self.ok(path, &["daemon", "status", "--json"])).unwrap();
        let mut out = Vec::new();
        for w in s["workspaces"].as_array().into_iter().flatten() {
            for v in w["servers"].as_array().into_iter().flatten() {
                out.push((
                    v["id"].as_str().unwrap_or_default().to_string(),
                    v["pid"].as_u64().unwrap_or_default() as u32,
                    PathBuf::from(v["program"].as_str().unwrap_or_default()),
                ));
            }
        }
        out
    }

    fn stop(&self, path: &std::ffi::OsString) {
        if self.daemon {
            self.ok(path, &["daemon", "stop"]);
        }
    }
}

/// The `PATH` process `pid` was started with.
fn path_of(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    raw.split(|b| *b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .find_map(|kv| kv.strip_prefix("PATH=").map(str::to_string))
}

const PY: &str = "def foo(a):\n    return a\n\n\nfoo(1)\n";

/// The issue's reproduction: pyright-langserver is `#!/usr/bin/env node`,
/// and `node_modules/.bin` on the client's `PATH` would resolve against the
/// server's directory, the workspace.
#[test]
fn a_relative_path_entry_never_reaches_a_server() {
    let (Some(_), Some(node)) = (installed("pyright-langserver"), installed("node")) else {
        return;
    };
    for daemon in [true, false] {
        let t = T::new(daemon, &[("a.py", PY)]);
        t.marker_script("node_modules/.bin/node", "ran-node", &node);
        let path = t.path(&["node_modules/.bin"]);
        let out = t.ok(&path, &["refs", "a.py", "foo", "--timeout-ms", "90000"]);
        assert!(out.contains("a.py") && out.contains("5:1"), "{out}");
        assert!(!out.contains("syntactic"), "pyright answered: {out}");
        assert!(
            !t.ran("ran-node"),
            "the workspace's node_modules/.bin/node ran (daemon: {daemon})"
        );
        if daemon {
            let servers = t.servers(&path);
            let (_, pid, _) = servers
                .iter()
                .find(|s| s.0 == "pyright")
                .expect("pyright runs");
            let p = path_of(*pid).unwrap();
            assert!(!p.split(':').any(|e| e == "node_modules/.bin"), "{p}");
        }
        t.stop(&path);
    }
}

/// An absolute `PATH` entry inside an untrusted workspace: its
/// `pyright-langserver` and `ruff` are not run, the ones further on `PATH`
/// answer; `scry trust .` makes them run on the next call, `scry trust
/// --revoke .` stops them on the next call (the same daemon throughout).
#[test]
fn an_absolute_path_entry_inside_an_untrusted_workspace_runs_only_once_trusted() {
    let (Some(pyright), Some(ruff)) = (installed("pyright-langserver"), installed("ruff")) else {
        return;
    };
    for daemon in [true, false] {
        let t = T::new(
            daemon,
            &[
                ("a.py", PY),
                ("ruff.toml", ""),
                (".scry.json", r#"{"limits": {"maxLocations": 90}}"#),
            ],
        );
        t.marker_script("bin/pyright-langserver", "ran-pyright", &pyright);
        t.marker_script("bin/ruff", "ran-ruff", &ruff);
        let local = t.ws.join("bin");
        let path = t.path(&[local.to_str().unwrap()]);
        let refs = ["refs", "a.py", "foo", "--timeout-ms", "90000"];
        let diag = ["diag", "a.py", "--timeout-ms", "90000"];

        // Untrusted: the real ones answer; what was passed over is said.
        let o = t.scry(&path, &refs);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success() && out.contains("5:1"), "{o:?}");
        assert!(
            out.contains("project-local bin/pyright-langserver") && out.contains("scry trust"),
            "{out}"
        );
        let d = t.ok(&path, &diag);
        assert!(d.contains("ruff"), "{d}");
        assert!(
            !t.ran("ran-pyright"),
            "untrusted bin/pyright-langserver ran"
        );
        assert!(!t.ran("ran-ruff"), "untrusted bin/ruff ran");
        if daemon {
            let s = t.ok(&path, &["status"]);
            assert!(s.contains("workspace not trusted"), "{s}");
            for (id, pid, program) in t.servers(&path) {
                assert!(!program.starts_with(&t.ws), "{id} runs {program:?}");
                let p = path_of(pid).unwrap();
                assert!(!p.split(':').any(|e| Path::new(e) == local), "{id}: {p}");
            }
        }

        // Trusted: the next call runs the workspace's own.
        t.ok(&path, &["trust"]);
        let out = t.ok(&path, &refs);
        assert!(out.contains("5:1"), "{out}");
        t.ok(&path, &diag);
        assert!(
            t.ran("ran-pyright"),
            "trusted bin/pyright-langserver not run"
        );
        assert!(t.ran("ran-ruff"), "trusted bin/ruff not run");
        if daemon {
            let s = t.ok(&path, &["status"]);
            assert!(s.contains("workspace trusted"), "{s}");
            let servers = t.servers(&path);
            assert!(
                servers
                    .iter()
                    .any(|(id, _, p)| id == "pyright" && p.starts_with(&t.ws)),
                "{servers:?}"
            );
        }

        // Revoked: the next call no longer uses them.
        t.ok(&path, &["trust", "--revoke"]);
        std::fs::remove_file(t.marker("ran-pyright")).unwrap();
        std::fs::remove_file(t.marker("ran-ruff")).unwrap();
        if daemon {
            // With no call: the daemon's own tick stops them (its status
            // asks no question).
            let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                let servers = t.servers(&path);
                if servers.iter().all(|(_, _, p)| !p.starts_with(&t.ws)) {
                    break;
                }
                assert!(
                    std::time::Instant::now() < until,
                    "a project-local server still runs 10 s after the revoke: {servers:?}"
                );
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            let s = t.ok(&path, &["status"]);
            assert!(s.contains("workspace not trusted"), "{s}");
        }
        let out = t.ok(&path, &refs);
        assert!(out.contains("5:1"), "{out}");
        t.ok(&path, &diag);
        assert!(
            !t.ran("ran-pyright") && !t.ran("ran-ruff"),
            "ran after a revoke"
        );
        if daemon {
            let servers = t.servers(&path);
            assert!(
                servers.iter().all(|(_, _, p)| !p.starts_with(&t.ws)),
                "a project-local server still runs after the revoke: {servers:?}"
            );
        }
        t.stop(&path);
    }
}

/// rust-analyzer and the cargo it runs never see the workspace's
/// `tools/cargo`, reached through a relative or an absolute entry.
#[test]
fn rust_analyzer_does_not_see_the_workspace_tools() {
    let (Some(_), Some(cargo)) = (installed("rust-analyzer"), installed("cargo")) else {
        return;
    };
    for daemon in [true, false] {
        let t = T::fixture(daemon, "rust");
        t.marker_script("tools/cargo", "ran-cargo", &cargo);
        let tools = t.ws.join("tools");
        let path = t.path(&["tools", tools.to_str().unwrap()]);
        let out = t.ok(
            &path,
            &[
                "refs",
                "src/inventory.rs",
                "total_weight",
                "--timeout-ms",
                "90000",
            ],
        );
        assert!(out.contains("inventory.rs"), "{out}");
        if daemon {
            let servers = t.servers(&path);
            let (_, pid, _) = servers
                .iter()
                .find(|s| s.0 == "rust-analyzer")
                .expect("rust-analyzer runs");
            let p = path_of(*pid).unwrap();
            assert!(
                !p.split(':').any(|e| e == "tools" || Path::new(e) == tools),
                "{p}"
            );
        }
        assert!(!t.ran("ran-cargo"), "the workspace's tools/cargo ran");
        t.stop(&path);
    }
}

/// `doctor`'s `--version` probes get the same environment, and it says
/// what it left out of their `PATH`.
#[test]
fn doctor_probes_run_without_the_workspace_path_entries_and_say_so() {
    let (Some(_), Some(node)) = (installed("typescript-language-server"), installed("node")) else {
        return;
    };
    let t = T::new(false, &[("a.ts", "export const x = 1;\n")]);
    t.marker_script("node_modules/.bin/node", "ran-rel-node", &node);
    t.marker_script("bin/node", "ran-abs-node", &node);
    let bin = t.ws.join("bin");
    let path = t.path(&["node_modules/.bin", bin.to_str().unwrap()]);
    let text = t.ok(&path, &["doctor"]);
    assert!(
        text.contains(&format!(
            "PATH entries left out for servers, linters, indexers and version probes: \
             node_modules/.bin (relative), {} (inside the untrusted workspace)",
            bin.display()
        )),
        "{text}"
    );
    // Its probe found node on the PATH left (a probe that could not start
    // node fails: "failed (exit status: 127)"). A probe slower than its
    // 3 s under a loaded machine is not this test's concern.
    let tsls = text
        .lines()
        .find(|l| l.contains("— typescript-language-server: "))
        .unwrap_or_else(|| panic!("no typescript-language-server line: {text}"));
    assert!(
        tsls.contains("installed, ") && !tsls.contains("failed (") && !tsls.contains("cannot run"),
        "{text}"
    );
    let json: Value = serde_json::from_str(&t.ok(&path, &["doctor", "--json"])).unwrap();
    assert_eq!(
        json["pathLeftOut"],
        serde_json::json!([
            {"entry": "node_modules/.bin", "why": "relative"},
            {"entry": bin, "why": "inUntrustedWorkspace"},
        ]),
        "{json}"
    );
    assert!(!t.ran("ran-rel-node"), "a probe ran node_modules/.bin/node");
    assert!(!t.ran("ran-abs-node"), "a probe ran bin/node");
}

/// Issue 26, item 3, through one daemon: `scry trust .` makes the
/// project's configured CI index answer and `status` say "trusted" on the
/// next call; `scry trust --revoke .` stops both on the next call. (The
/// user's configuration disables rust-analyzer, so the index or the
/// syntactic index answers.)
#[test]
fn trust_grants_and_revokes_count_on_the_next_daemon_call() {
    let Some(_) = installed("rust-analyzer") else {
        return;
    };
    let t = T::fixture(true, "rust");
    // The CI index, built as a CI job would (its own places).
    let ci = tempfile::tempdir().unwrap();
    std::fs::write(ci.path().join("config.json"), "{}").unwrap();
    let mut index = scry_in(ci.path(), &t.ws, &["index"]);
    index.env("SCRY_NO_DAEMON", "1");
    let o = index.output().unwrap();
    assert!(o.status.success(), "scry index: {o:?}");
    let built = scry_index::cache::dir_for(&ci.path().join("cache"), &t.ws).join("index.scip");
    std::fs::create_dir_all(t.ws.join("build")).unwrap();
    std::fs::copy(built, t.ws.join("build/index.scip")).unwrap();
    std::fs::write(
        t.ws.join(".scry.json"),
        r#"{"index": {"path": "build/index.scip"}}"#,
    )
    .unwrap();
    std::fs::write(
        t.base.join("config.json"),
        r#"{"servers": {"rust-analyzer": {"disabled": true}}}"#,
    )
    .unwrap();
    let path = t.path(&[]);
    let refs = [
        "refs",
        "src/inventory.rs",
        "total_weight",
        "--timeout-ms",
        "30000",
    ];
    let pid = |t: &T| -> u64 {
        let s: Value = serde_json::from_str(&t.ok(&path, &["daemon", "status", "--json"])).unwrap();
        s["pid"].as_u64().unwrap()
    };

    let out = t.ok(&path, &refs);
    assert!(!out.contains("SCIP index"), "untrusted: {out}");
    assert!(t.ok(&path, &["status"]).contains("workspace not trusted"));
    let daemon = pid(&t);

    t.ok(&path, &["trust"]);
    let out = t.ok(&path, &refs);
    assert!(
        out.contains("SCIP index") && out.contains("CI index build/index.scip"),
        "trusted: {out}"
    );
    let s = t.ok(&path, &["status"]);
    assert!(s.contains("workspace trusted"), "{s}");

    t.ok(&path, &["trust", "--revoke"]);
    let s = t.ok(&path, &["status"]);
    assert!(s.contains("workspace not trusted"), "{s}");
    let out = t.ok(&path, &refs);
    assert!(!out.contains("SCIP index"), "revoked: {out}");
    assert_eq!(pid(&t), daemon, "one daemon throughout");
    t.stop(&path);
}
