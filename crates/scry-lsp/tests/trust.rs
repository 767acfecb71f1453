//! Workspace trust end to end, through the built `scry`: a cloned
//! repository's `.scry.json` commands and its project-local tools
//! (`node_modules/.bin`, `.venv/bin`) never run until `scry trust`; a change
//! to the configuration revokes the trust; `--list` and `--revoke`.
//!
//! Each "command" of the hostile repository is a script that touches a
//! marker file: the marker existing means scry ran it.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

const MARKERS: [&str; 5] = [
    "ran-config",
    "ran-override",
    "ran-node-bin",
    "ran-venv-bin",
    "ran-python-path",
];

impl Repo {
    /// A hostile repository: `.scry.json` naming commands (a new server for
    /// `*.foo`, a new linter, pyright's command overridden and, through its
    /// settings, the interpreter pyright runs), and project-local
    /// `pyright-langserver` and `ruff` scripts.
    fn hostile() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(dir.path()).unwrap();
        let root = base.join("repo");
        let home = base.join("home");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(home.join("config")).unwrap();
        std::fs::write(root.join("a.foo"), "alpha beta\n").unwrap();
        std::fs::write(
            root.join("app.py"),
            "def greet(name):\n    return name\n\ngreet('x')\n",
        )
        .unwrap();
        std::fs::write(root.join("ruff.toml"), "").unwrap();
        let script = |rel: &str, marker: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(
                &p,
                format!(
                    "#!/bin/sh\ntouch '{}'\nexit 1\n",
                    base.join(marker).display()
                ),
            )
            .unwrap();
            common::process::make_executable(&p);
        };
        script("tools/evil.sh", "ran-config");
        script("tools/override.sh", "ran-override");
        script("node_modules/.bin/pyright-langserver", "ran-node-bin");
        script(".venv/bin/ruff", "ran-venv-bin");
        script("tools/python.sh", "ran-python-path");
        std::fs::write(
            root.join(".scry.json"),
            r#"{
              "servers": {
                "evil": { "command": "./tools/evil.sh", "fileTypes": ["foo"] },
                "pyright": { "command": "./tools/override.sh",
                             "settings": { "python": { "pythonPath": "./tools/python.sh" } } }
              },
              "linters": {
                "evil-lint": { "command": "./tools/evil.sh", "fileTypes": ["foo", "py"], "parser": "generic" }
              }
            }"#,
        )
        .unwrap();
        Repo {
            _dir: dir,
            root,
            home,
        }
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.root.parent().unwrap().join(name)
    }

    fn ran(&self) -> Vec<&'static str> {
        MARKERS
            .into_iter()
            .filter(|m| self.marker(m).exists())
            .collect()
    }

    fn clear_markers(&self) {
        for m in MARKERS {
            let _ = std::fs::remove_file(self.marker(m));
        }
    }

    fn cmd(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scry"));
        cmd.current_dir(&self.root)
            .env("SCRY_NO_DAEMON", "1")
            .env("XDG_CONFIG_HOME", self.home.join("config"))
            .env("XDG_STATE_HOME", self.home.join("state"))
            .env("SCRY_LOG_DIR", self.home.join("logs"))
            .env_remove("SCRY_STATE_DIR")
            .env_remove("SCRY_CONFIG")
            .env_remove("SCRY_TRUST")
            .env_remove("SCRY_JOURNAL_DIR")
            .env_remove("SCRY_LOG");
        cmd
    }

    fn scry(&self, args: &[&str]) -> (i32, String) {
        let Output {
            status,
            stdout,
            stderr,
        } = self.cmd().args(args).output().expect("run scry");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        );
        (status.code().expect("exited"), text)
    }
}

fn on_path(cmd: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(cmd).is_file()))
}

/// One MCP session under `--read-only`: initialize, then each `lsp` call;
/// returns each answer's text.
fn mcp_calls(repo: &Repo, calls: &[Value]) -> Vec<String> {
    let mut child = repo
        .cmd()
        .args(["mcp", "--read-only", "--root"])
        .arg(&repo.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn scry mcp");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let send = |stdin: &mut std::process::ChildStdin, v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    let mut response = |id: u64| -> Value {
        loop {
            let line = lines.next().expect("a response").unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    };
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "trust-test", "version": "0"}}}),
    );
    response(1);
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let mut out = Vec::new();
    for (i, args) in calls.iter().enumerate() {
        let id = i as u64 + 2;
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "lsp", "arguments": args}}),
        );
        let r = response(id);
        out.push(
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        );
    }
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "scry mcp did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
    out
}

#[test]
fn untrusted_repository_runs_nothing_it_names_until_trusted() {
    let repo = Repo::hostile();

    // CLI: definition on the hostile server's file type, diagnostics over
    // everything (the new linter, pyright's override, node_modules/.bin,
    // .venv/bin), a Python definition.
    let (code, out) = repo.scry(&["def", "a.foo", "alpha"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("NO_SERVER"), "{out}");
    assert!(out.contains("not trusted"), "{out}");
    assert!(out.contains("new server \"evil\""), "{out}");
    assert!(out.contains("scry trust"), "{out}");
    let (_, out) = repo.scry(&["diag", "a.foo", "app.py", "--timeout-ms", "20000"]);
    assert!(out.contains("not trusted"), "{out}");
    assert!(out.contains("scry trust"), "{out}");
    let (code, out) = repo.scry(&[
        "def",
        "app.py",
        "greet",
        "--line",
        "4",
        "--timeout-ms",
        "30000",
    ]);
    assert!(out.contains("scry trust"), "{out}");
    if on_path("pyright-langserver") {
        // the built-in server from PATH still answers
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("1:5  def greet(name):"), "{out}");
    }
    assert_eq!(repo.ran(), Vec::<&str>::new(), "untrusted CLI ran: {out}");

    // status says what is ignored and how to trust
    let (code, out) = repo.scry(&["status"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("workspace not trusted"), "{out}");
    assert!(
        out.contains("server \"pyright\": command, settings"),
        "{out}"
    );
    assert!(out.contains("new server \"evil-lint\""), "{out}");
    assert!(
        out.contains("node_modules/.bin/pyright-langserver"),
        "{out}"
    );
    assert!(out.contains(".venv/bin/ruff"), "{out}");

    // MCP `lsp` under --read-only: the same, and the notice comes once.
    let texts = mcp_calls(
        &repo,
        &[
            json!({"action": "diagnostics", "path": "a.foo", "timeout_ms": 20000}),
            json!({"action": "definition", "path": "a.foo", "symbol": "alpha"}),
            json!({"action": "diagnostics", "path": "app.py", "timeout_ms": 20000}),
            json!({"action": "diagnostics", "path": "app.py", "timeout_ms": 20000}),
        ],
    );
    assert!(texts[0].contains("not trusted"), "{texts:?}");
    assert!(texts[0].contains("scry trust"), "{texts:?}");
    assert!(
        texts[1].contains("not trusted"),
        "error says why: {texts:?}"
    );
    assert!(
        !texts[3].contains("not trusted"),
        "said once per session, not in every answer: {texts:?}"
    );
    assert_eq!(
        repo.ran(),
        Vec::<&str>::new(),
        "untrusted MCP ran: {texts:?}"
    );

    // Trusted: the project's commands run.
    let (code, out) = repo.scry(&["trust"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Trusted"), "{out}");
    assert!(out.contains(".scry.json"), "{out}");
    let (_, out) = repo.scry(&["diag", "a.foo", "--timeout-ms", "20000"]);
    assert!(
        repo.marker("ran-config").exists(),
        "trusted linter ran: {out}"
    );
    let (_, out) = repo.scry(&["status"]);
    assert!(out.contains("workspace trusted (`scry trust`)"), "{out}");
    assert!(!out.contains("not trusted"), "{out}");
    let (_, out) = repo.scry(&["trust", "--list"]);
    assert!(
        out.contains(&format!("{}  trusted (.scry.json)", repo.root.display())),
        "{out}"
    );

    // Editing the configuration revokes the trust.
    repo.clear_markers();
    let cfg = repo.root.join(".scry.json");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push('\n');
    std::fs::write(&cfg, text).unwrap();
    let (_, out) = repo.scry(&["diag", "a.foo", "app.py", "--timeout-ms", "20000"]);
    assert!(out.contains("trust revoked"), "{out}");
    assert_eq!(repo.ran(), Vec::<&str>::new(), "revoked trust ran: {out}");
    let (_, out) = repo.scry(&["trust", "--list"]);
    assert!(out.contains("revoked: configuration changed"), "{out}");
    // A new configuration file revokes it too.
    repo.scry(&["trust"]);
    std::fs::create_dir_all(repo.root.join(".scry")).unwrap();
    std::fs::write(repo.root.join(".scry/config.json"), "{}").unwrap();
    let (_, out) = repo.scry(&["status"]);
    assert!(out.contains("trust revoked"), "{out}");

    // --revoke forgets it.
    let (code, out) = repo.scry(&["trust", "--revoke"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Revoked"), "{out}");
    let (_, out) = repo.scry(&["trust", "--list"]);
    assert!(out.contains("No trusted workspaces"), "{out}");
}

#[test]
fn trust_from_environment_and_user_config() {
    let repo = Repo::hostile();
    // SCRY_TRUST=all (CI)
    let out = repo
        .cmd()
        .args(["diag", "a.foo", "--timeout-ms", "20000"])
        .env("SCRY_TRUST", "all")
        .output()
        .unwrap();
    assert!(
        repo.marker("ran-config").exists(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    repo.clear_markers();
    // trustedRoots in the user configuration (a parent directory)
    std::fs::create_dir_all(repo.home.join("config/scry")).unwrap();
    std::fs::write(
        repo.home.join("config/scry/config.json"),
        json!({"trustedRoots": [repo.root.parent().unwrap()]}).to_string(),
    )
    .unwrap();
    let (_, out) = repo.scry(&["diag", "a.foo", "--timeout-ms", "20000"]);
    assert!(repo.marker("ran-config").exists(), "{out}");
    repo.clear_markers();
    // ... but not from the project's own configuration
    std::fs::remove_file(repo.home.join("config/scry/config.json")).unwrap();
    let cfg = repo.root.join(".scry.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&cfg).unwrap()).unwrap();
    v["trustedRoots"] = json!(["/"]);
    std::fs::write(&cfg, v.to_string()).unwrap();
    let (_, out) = repo.scry(&["diag", "a.foo", "--timeout-ms", "20000"]);
    assert_eq!(repo.ran(), Vec::<&str>::new(), "{out}");
    assert!(out.contains("trustedRoots"), "{out}");
}

#[test]
fn trust_usage_errors() {
    let repo = Repo::hostile();
    let (code, out) = repo.scry(&["trust", "--list", "x"]);
    assert_eq!(code, 2, "{out}");
    let (code, out) = repo.scry(&["trust", "no/such/dir"]);
    assert_eq!(code, 2, "{out}");
    // an invalid configuration is not trusted blindly
    std::fs::write(repo.root.join(".scry.json"), "{ not json").unwrap();
    let (code, out) = repo.scry(&["trust", Path::new(".").to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("fix it before trusting"), "{out}");
}
