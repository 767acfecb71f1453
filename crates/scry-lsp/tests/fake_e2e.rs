//! End to end on every OS with the fake server only (scry-testkit's
//! `scry-fake-lsp`), through the built `scry`: the set the Windows harness
//! (`scripts/test-windows`) runs under wine, where no real server is
//! installed; on Linux it runs with the rest.
//!
//! - a CLI question, through the daemon and in-process, the same answer;
//! - an MCP stdio round trip (initialize, tools/list, tools/call, stdin
//!   closed: scry exits), through the daemon and without it;
//! - a rename whose writer is killed by the crash hook
//!   (`SCRY_TEST_CRASH_AT`: SIGKILL on Unix, `TerminateProcess` on
//!   Windows) before and after its replace, recovered by the next call;
//!   and a daemon killed mid-rename, rolled back by the next daemon;
//! - the daemon over its transport (a Unix socket; a named pipe on
//!   Windows) serving two clients at once with one server;
//! - a server started through a shim script found on `PATH` by its bare
//!   name (npm's `.cmd` on Windows, found through `PATHEXT`; a `sh` script
//!   on Unix), answering through the daemon, with arguments `cmd.exe`
//!   would reinterpret (`&`, `|`, `%VAR%`, `"`, `^`, `<`, `!`) passed
//!   literally (`%VAR%` not under wine 8, whose `cmd.exe` expands it
//!   through std's guard); an argument that cannot be passed safely (a
//!   NUL byte; on Windows a line break to a `.cmd`) refused as
//!   `NO_SERVER` saying what to change, nothing started;
//! - file names that look like options stay file names: to scry's own CLI
//!   (a usage error, or the file after `--` / as `./`), and to a linter
//!   started through the shim (`./-h.fake` after `--`).
//!
//! Each test has its own directory for every per-user place (a daemon of
//! its own, `scry_in`) and stops its daemon when done.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::process::{fake_server, scry_in, wait_until};
use scry_testkit::mcp_stdio::StdioClient;
use serde_json::{Value, json};

/// The fake workspace's one file: `alpha` three times.
const TEXT: &str = "alpha beta alpha\ngamma alpha\n";

/// Arguments `cmd.exe` would reinterpret if they reached it unquoted: a
/// command separator, a pipe, a quote, its escape character, a
/// redirection, delayed expansion, a space and a backslash that would
/// escape std's closing quote (a variable: [`a_variable_reaches_a_shim_literally`]).
const HOSTILE_ARGS: [&str; 8] = [
    "a&b",
    "x|y",
    "q\"uote",
    "^caret",
    "<in>",
    "!bang!",
    "two words",
    "trailing\\",
];

struct Env {
    _tmp: tempfile::TempDir,
    /// Every per-user place of `scry_in`, the fake server's files, `bin/`.
    base: PathBuf,
    ws: PathBuf,
    fake: PathBuf,
    /// Put first on the `PATH` scry is run with (the shim goes here).
    bin: PathBuf,
}

impl Env {
    /// A workspace holding `a.fake`; `None` when the fake server is not
    /// built (and servers are not required).
    fn new() -> Option<Env> {
        let fake = scry_base::paths::canonical(&fake_server()?).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        let (ws, bin) = (base.join("ws"), base.join("bin"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(ws.join("a.fake"), TEXT).unwrap();
        std::fs::write(base.join("config.json"), "{}").unwrap();
        Some(Env {
            _tmp: tmp,
            base,
            ws,
            fake,
            bin,
        })
    }

    /// The user configuration: these servers and linters, nothing detected.
    fn config(&self, servers: Value, linters: Value) {
        let c = json!({"autoDetect": false, "servers": servers, "linters": linters});
        std::fs::write(self.base.join("config.json"), c.to_string()).unwrap();
    }

    /// The fake server for `.fake` files, started as `command` with
    /// `args`; renames, its pid, its arguments and what it reads land in
    /// `base`.
    fn fake_entry(&self, command: &Path, args: &[&str]) -> Value {
        json!({
            "command": command,
            "args": args,
            "fileTypes": ["fake"],
            "env": {
                "FAKE_LSP_RENAME": "1",
                "FAKE_LSP_PID_FILE": self.base.join("fake.pid"),
                "FAKE_LSP_ARGS_FILE": self.base.join("args.json"),
            },
        })
    }

    /// Served by the fake server, named by its absolute path.
    fn with_fake(self) -> Env {
        self.config(json!({"fake": self.fake_entry(&self.fake, &[])}), json!({}));
        self
    }

    /// `bin/fakeshim` (Unix: a `sh` script; Windows: `fakeshim.cmd`, as
    /// npm writes them) that runs the fake server with its arguments.
    fn write_shim(&self) {
        write_shim(&self.bin, "fakeshim", &self.fake);
    }

    /// `scry ARGS` in the workspace, `bin/` first on `PATH`.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = scry_in(&self.base, &self.ws, args);
        let path = std::env::var_os("PATH").unwrap_or_default();
        let dirs = std::iter::once(self.bin.clone()).chain(std::env::split_paths(&path));
        c.env("PATH", std::env::join_paths(dirs).unwrap());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// What the (last started) fake server was given as arguments.
    fn server_args(&self) -> Value {
        read_json(&self.base.join("args.json"))
    }

    fn status(&self) -> Value {
        let o = self.run(&["daemon", "status", "--json"]);
        assert!(o.status.success(), "{}", all(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// The daemon's log, for failure messages.
    fn log(&self) -> String {
        common::process::daemon_log(&self.base)
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = self.run(&["daemon", "stop"]);
    }
}

/// `dir/name` as a shim that runs `target` with every argument it got:
/// on Windows `name.cmd` (npm's form: `@"target" %*`), found through
/// `PATHEXT`; on Unix an executable `sh` script.
fn write_shim(dir: &Path, name: &str, target: &Path) {
    #[cfg(windows)]
    std::fs::write(
        dir.join(format!("{name}.cmd")),
        format!("@ECHO off\r\n\"{}\" %*\r\n", target.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!("#!/bin/sh\nexec '{}' \"$@\"\n", target.display()),
        )
        .unwrap();
        common::process::make_executable(&p);
    }
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

fn all(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The answer to `refs a.fake alpha` as text.
fn assert_refs(o: &Output, what: &str) {
    assert!(o.status.success(), "{what}: {}", all(o));
    let t = stdout(o);
    assert!(t.contains("3 references to `alpha`"), "{what}: {t}");
    for at in ["1:1", "1:12", "2:7"] {
        assert!(t.contains(at), "{what}: {at} missing: {t}");
    }
}

#[test]
fn a_question_is_answered_through_the_daemon_and_in_process_alike() {
    let Some(env) = Env::new().map(Env::with_fake) else {
        return;
    };
    let daemon = env.run(&["refs", "a.fake", "alpha"]);
    assert_refs(&daemon, "through the daemon");
    let local = env.run(&["refs", "a.fake", "alpha", "--no-daemon"]);
    assert_refs(&local, "in-process");
    assert_eq!(stdout(&daemon), stdout(&local));
    // JSON: every location relative to the workspace root, as on Unix
    // (on Windows the server's `file:///c%3A/...` URI turned back into the
    // root's own spelling), never a `\\?\` path.
    let j = env.run(&["refs", "a.fake", "alpha", "--json"]);
    assert!(j.status.success(), "{}", all(&j));
    let v: Value = serde_json::from_slice(&j.stdout).unwrap();
    let paths: Vec<&Value> = v["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["path"])
        .collect();
    assert_eq!(paths, [&json!("a.fake"); 3], "{v}");
    assert!(!v.to_string().contains(r"?\\"), "{v}");
}

#[test]
fn an_mcp_stdio_round_trip_through_the_daemon_and_without_it() {
    let Some(env) = Env::new().map(Env::with_fake) else {
        return;
    };
    for no_daemon in [false, true] {
        let mut cmd = env.cmd(&["mcp"]);
        if no_daemon {
            cmd.env("SCRY_NO_DAEMON", "1");
        }
        let (mut child, mut c) = StdioClient::spawn(cmd.env("SCRY_LOG", "off"));
        let init = c.initialize("fake-e2e");
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        let tools = c.response(2);
        let names: Vec<&str> = tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["lsp", "lsp_edit"], "{tools}");
        c.send(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "lsp", "arguments": {"action": "definition", "path": "a.fake",
            "symbol": "alpha", "line": 2}}}),
        );
        let r = c.response(3);
        assert_eq!(r["result"]["isError"], json!(false), "{r}");
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            text.contains("definition of `alpha`") && text.contains("a.fake\n  1:1  alpha"),
            "no_daemon={no_daemon}: {text}"
        );
        let read = c.finish();
        assert!(read.not_protocol.is_empty(), "{:?}", read.not_protocol);
        let status = wait_exit(&mut child, Duration::from_secs(30));
        assert!(
            status.success(),
            "scry mcp exits when stdin closes: {status}"
        );
    }
}

/// Wait at most `within` for `child`; kill it and panic when it overruns.
fn wait_exit(child: &mut std::process::Child, within: Duration) -> std::process::ExitStatus {
    let mut status = None;
    wait_until("the child to exit", within, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    status.unwrap()
}

/// The crash hook exists in debug builds only (`scry_edit::crash`).
fn crash_hook() -> bool {
    if !cfg!(debug_assertions) {
        eprintln!("skipped: the crash hook exists in debug builds only");
    }
    cfg!(debug_assertions)
}

#[test]
fn a_rename_killed_before_or_after_its_replace_is_recovered_by_the_next_call() {
    if !crash_hook() {
        return;
    }
    let renamed = TEXT.replace("alpha", "omega");
    for (point, whole) in [("after-stage-1", false), ("after-replace-1", true)] {
        let Some(env) = Env::new().map(Env::with_fake) else {
            return;
        };
        let file = env.ws.join("a.fake");
        let o = env
            .cmd(&["--no-daemon", "rename", "a.fake", "alpha", "omega"])
            .env("SCRY_TEST_CRASH_AT", point)
            .output()
            .unwrap();
        assert!(
            scry_edit::platform::process::killed(&o.status),
            "{point}: the writer was killed there ({}): {}",
            o.status,
            all(&o)
        );
        let u = env.run(&["--no-daemon", "undo", "--dry-run"]);
        let said = all(&u);
        if whole {
            assert!(u.status.success(), "{point}: {said}");
            assert!(said.contains("kept as applied"), "{point}: {said}");
            assert_eq!(std::fs::read_to_string(&file).unwrap(), renamed, "{point}");
            let u = env.run(&["--no-daemon", "undo"]);
            assert!(u.status.success(), "{point}: {}", all(&u));
            assert_eq!(std::fs::read_to_string(&file).unwrap(), TEXT, "undone");
        } else {
            assert!(!u.status.success(), "{point}: {said}");
            assert!(
                said.contains("rolled back") && said.contains("nothing to undo"),
                "{point}: {said}"
            );
            assert_eq!(std::fs::read_to_string(&file).unwrap(), TEXT, "{point}");
        }
        let names: Vec<String> = std::fs::read_dir(&env.ws)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.fake"], "{point}: no staged file left");
    }
}

#[test]
fn a_daemon_killed_mid_rename_is_rolled_back_by_the_next_daemon() {
    if !crash_hook() {
        return;
    }
    let Some(env) = Env::new().map(Env::with_fake) else {
        return;
    };
    let o = env
        .cmd(&["rename", "a.fake", "alpha", "omega"])
        .env("SCRY_TEST_CRASH_AT", "after-stage-1")
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", all(&o));
    assert!(all(&o).contains("DAEMON_RESTARTED"), "{}", all(&o));
    let s = env.run(&["status"]);
    assert!(s.status.success(), "{}", all(&s));
    assert!(
        all(&s).contains("rolled back"),
        "{}\n{}",
        all(&s),
        env.log()
    );
    assert_eq!(
        std::fs::read_to_string(env.ws.join("a.fake")).unwrap(),
        TEXT
    );
    // And the new daemon answers.
    assert_refs(&env.run(&["refs", "a.fake", "alpha"]), "after the restart");
}

#[test]
fn two_clients_at_once_share_one_daemon_and_one_server() {
    let Some(env) = Env::new().map(Env::with_fake) else {
        return;
    };
    let first = env.run(&["refs", "a.fake", "alpha"]);
    assert_refs(&first, "first");
    let daemon = env.status()["pid"].as_u64();
    assert!(daemon.is_some(), "{}", env.status());
    let spawn = || {
        env.cmd(&["refs", "a.fake", "alpha"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_refs(&a, "client a");
    assert_refs(&b, "client b");
    assert_eq!(stdout(&a), stdout(&first));
    assert_eq!(stdout(&b), stdout(&first));
    let status = env.status();
    assert_eq!(status["pid"].as_u64(), daemon, "one daemon: {status}");
    let servers: Vec<&Value> = status["workspaces"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|w| w["servers"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(servers.len(), 1, "one server for both: {status}");
    let stop = env.run(&["daemon", "stop"]);
    assert!(stop.status.success(), "{}", all(&stop));
    let after = env.run(&["daemon", "status"]);
    assert!(
        stdout(&after).contains("no scry daemon is running"),
        "{}",
        all(&after)
    );
}

#[test]
fn a_shim_on_path_serves_through_the_daemon_with_its_arguments_intact() {
    let Some(env) = Env::new() else {
        return;
    };
    env.write_shim();
    env.config(
        json!({"fake": env.fake_entry(Path::new("fakeshim"), &HOSTILE_ARGS)}),
        json!({}),
    );
    assert_refs(&env.run(&["refs", "a.fake", "alpha"]), "through the shim");
    assert_eq!(
        env.server_args(),
        json!(HOSTILE_ARGS),
        "every argument arrived as configured"
    );
    let status = env.status().to_string();
    assert!(status.contains("\"fake\""), "{status}");
    // doctor finds it by the same rule.
    let d = env.run(&["doctor", "--json"]);
    let found = stdout(&d);
    assert!(found.contains("fakeshim"), "{}", all(&d));
}

/// `%VAR%` reaches a `.cmd` server as written: std guards each `%` of a
/// batch file's argument from `cmd.exe`'s expansion.
#[test]
#[cfg_attr(
    windows,
    ignore = "wine 8's cmd.exe expands %VAR% through std's guard (%%cd:~,%), Windows' does not; run on Windows with --include-ignored"
)]
fn a_variable_reaches_a_shim_literally() {
    let Some(env) = Env::new() else {
        return;
    };
    env.write_shim();
    let args = ["%PATH%", "%SCRY_NO_SUCH%", "100%"];
    env.config(
        json!({"fake": env.fake_entry(Path::new("fakeshim"), &args)}),
        json!({}),
    );
    assert_refs(&env.run(&["refs", "a.fake", "alpha"]), "through the shim");
    assert_eq!(env.server_args(), json!(args));
}

/// An argument that cannot be passed safely is refused, never mangled:
/// a NUL byte on every OS; on Windows also a line break to a `.cmd` (it
/// would end `cmd.exe`'s command line: std refuses to start a batch file
/// with one). scry reports NO_SERVER naming the server, the program and
/// what to change, and nothing runs. On Unix the `sh` shim is an ordinary
/// program and gets the line break as is.
#[test]
fn an_argument_that_cannot_be_passed_safely_is_refused() {
    let refused = |arg: &str| {
        let env = Env::new()?;
        env.write_shim();
        env.config(
            json!({"fake": env.fake_entry(Path::new("fakeshim"), &[arg])}),
            json!({}),
        );
        let o = env.run(&["refs", "a.fake", "alpha", "--timeout-ms", "20000"]);
        let said = all(&o);
        Some((env, o, said))
    };
    let Some((env, o, said)) = refused("nul\u{0}byte") else {
        return;
    };
    let check = |env: &Env, o: &Output, said: &str| {
        assert!(!o.status.success(), "{said}");
        assert!(said.contains("NO_SERVER"), "{said}");
        assert!(said.contains("could not start fake"), "{said}");
        assert!(said.contains("fakeshim"), "{said}");
        assert!(said.contains("change the configured args"), "{said}");
        assert!(
            !env.base.join("args.json").exists(),
            "nothing was started: {said}"
        );
    };
    check(&env, &o, &said);
    let Some((env, o, said)) = refused("line\nbreak") else {
        return;
    };
    if cfg!(windows) {
        check(&env, &o, &said);
    } else {
        assert_refs(&o, "a sh shim");
        assert_eq!(env.server_args(), json!(["line\nbreak"]));
    }
}

#[test]
fn file_names_that_look_like_options_stay_file_names() {
    let Some(env) = Env::new() else {
        return;
    };
    env.write_shim();
    for name in ["-h.fake", "--version.fake"] {
        std::fs::write(env.ws.join(name), TEXT).unwrap();
    }
    let lint_args = env.base.join("lint-args.json");
    let linters = json!({"fakelint": {
        "command": "fakeshim",
        "args": ["--", "{files}"],
        "fileTypes": ["fake"],
        "parser": "generic",
        "mode": "files",
        "env": {"FAKE_LSP_ARGS_FILE": lint_args},
    }});
    env.config(json!({"fake": env.fake_entry(&env.fake, &[])}), json!({}));
    // Bare, scry's own CLI refuses it as a usage error, never its help.
    let bare = env.run(&["refs", "-h.fake", "alpha"]);
    assert_eq!(bare.status.code(), Some(2), "{}", all(&bare));
    assert!(
        stdout(&bare).is_empty(),
        "the help was printed: {}",
        all(&bare)
    );
    assert!(all(&bare).contains("./-h.fake"), "{}", all(&bare));
    // After `--`, or as `./`, it is the file.
    let after = env.run(&["refs", "--", "-h.fake", "alpha"]);
    assert_refs(&after, "after --");
    assert!(stdout(&after).contains("-h.fake"), "{}", all(&after));
    let dotted = env.run(&["refs", "./--version.fake", "alpha"]);
    assert_refs(&dotted, "./--version.fake");
    // A linter gets it as a path, after `--` (the linter alone: the fake
    // server publishes no diagnostics, diag would wait out its budget).
    env.config(json!({}), linters);
    let d = env.run(&["diag", "./-h.fake", "--timeout-ms", "60000"]);
    assert!(d.status.success(), "{}\n{}", all(&d), env.log());
    assert_eq!(
        read_json(&lint_args),
        json!(["--", "./-h.fake"]),
        "{}",
        all(&d)
    );
}
