//! The scry daemon end to end, through the `scry` binary: servers shared by
//! CLI calls, cancellation, a killed daemon, stale files, other versions,
//! idle shutdown, serialized edits, `scry daemon stop`.
//!
//! Every test runs its own daemon in its own directory (`SCRY_DAEMON_DIR`
//! in a temporary directory) and stops it at the end; a daemon whose
//! socket is removed exits by itself, so none outlives the test run.
//! Real servers (pyright) where the behaviour involves them; the fake
//! server (`scry-fake-lsp`, built with the workspace) where a fault is
//! needed on demand.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::process::{alive, fake_server, kill, scry_in, wait_until};
use scry_testkit::mcp_stdio::StdioClient;
use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
    daemon_dir: PathBuf,
}

impl Env {
    fn new(fixture: Option<&str>) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        let ws = base.join("ws");
        match fixture {
            Some(f) => common::copy_tree(&common::fixtures_dir().join(f), &ws),
            None => std::fs::create_dir_all(&ws).unwrap(),
        }
        Env {
            daemon_dir: base.join("d"), // where scry_in puts it
            ws,
            base,
            _tmp: tmp,
        }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let c = scry_in(&self.base, &self.ws, args);
        if !self.base.join("config.json").exists() {
            std::fs::write(self.base.join("config.json"), "{}").unwrap();
        }
        c
    }

    fn scry(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn config(&self, v: Value) {
        std::fs::write(self.base.join("config.json"), v.to_string()).unwrap();
    }

    fn status(&self) -> Value {
        let out = self.scry(&["daemon", "status", "--json"]);
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// [`Env::status`] until `done` holds of it, at most 5 s: the last one.
    fn status_until(&self, done: impl Fn(&Value) -> bool) -> Value {
        let until = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let s = self.status();
            if done(&s) || std::time::Instant::now() > until {
                return s;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn daemon_pid(&self) -> Option<u32> {
        let s = self.status();
        s["pid"].as_u64().map(|p| p as u32)
    }

    /// (server id, pid) of the running servers.
    fn servers(&self) -> Vec<(String, u32)> {
        let s = self.status();
        let mut out = Vec::new();
        for w in s["workspaces"].as_array().into_iter().flatten() {
            for v in w["servers"].as_array().into_iter().flatten() {
                out.push((
                    v["id"].as_str().unwrap().to_string(),
                    v["pid"].as_u64().unwrap() as u32,
                ));
            }
        }
        out
    }

    /// A workspace for the fake server, configured with `env`.
    fn fake(&self, env: Value, limits: Value) -> Option<PathBuf> {
        let fake = fake_server()?;
        std::fs::write(self.ws.join("a.fake"), "alpha beta alpha\ngamma alpha\n").unwrap();
        let mut vars = json!({
            "FAKE_LSP_LOG": self.base.join("fake.log"),
            "FAKE_LSP_PID_FILE": self.base.join("fake.pid"),
        });
        for (k, v) in env.as_object().unwrap() {
            vars[k] = v.clone();
        }
        self.config(json!({
            "autoDetect": false,
            "limits": limits,
            "servers": {"fake": {"command": fake, "fileTypes": ["fake"], "env": vars}},
        }));
        Some(fake)
    }

    /// A workspace served by the fake server answering after a minute (a
    /// call stays in flight); `None` when the fake server is not built.
    fn with_slow_fake() -> Option<Env> {
        let env = Env::new(None);
        env.fake(
            json!({"FAKE_LSP_MODE": "slow", "FAKE_LSP_DELAY_MS": "60000"}),
            json!({}),
        )?;
        Some(env)
    }

    /// The daemon's own log (what it started, stopped and why), for
    /// failure messages.
    fn daemon_log(&self) -> String {
        common::process::daemon_log(&self.base)
    }

    fn fake_log(&self) -> String {
        std::fs::read_to_string(self.base.join("fake.log")).unwrap_or_default()
    }

    fn fake_pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.base.join("fake.pid"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let pid = self
            .scry(&["daemon", "status", "--json"])
            .stdout
            .as_slice()
            .to_vec();
        let pid = serde_json::from_slice::<Value>(&pid)
            .ok()
            .and_then(|v| v["pid"].as_u64());
        let _ = self.scry(&["daemon", "stop"]);
        if let Some(p) = pid {
            kill(p as u32, "KILL");
        }
    }
}

fn pyright(test: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("pyright-langserver").exists()));
    if !found {
        assert!(
            !common::servers_required(),
            "{test}: pyright-langserver is not installed but SCRY_REQUIRE_SERVERS=1"
        );
        eprintln!("skipping {test}: pyright-langserver is not installed");
    }
    found
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn two_cli_calls_share_one_server_and_print_what_in_process_prints() {
    if !pyright("share") {
        return;
    }
    let env = Env::new(Some("python"));
    let args = [
        "refs",
        "inventory.py",
        "total_weight",
        "--timeout-ms",
        "90000",
    ];
    let first = env.scry(&args);
    assert!(first.status.success(), "{first:?}");
    let servers = env.servers();
    assert_eq!(servers.len(), 1, "{servers:?}");
    assert_eq!(servers[0].0, "pyright");
    let second = env.scry(&args);
    assert!(second.status.success(), "{second:?}");
    assert_eq!(
        env.servers(),
        servers,
        "the second call reused the first one's server"
    );
    assert_eq!(text(&first), text(&second));
    let mut local = args.to_vec();
    local.push("--no-daemon");
    let in_process = env.scry(&local);
    assert_eq!(
        text(&in_process),
        text(&first),
        "the same text with and without the daemon"
    );
    let json_daemon = env.scry(&[
        "refs",
        "inventory.py",
        "total_weight",
        "--json",
        "--timeout-ms",
        "90000",
    ]);
    let json_local = env.scry(&[
        "refs",
        "inventory.py",
        "total_weight",
        "--json",
        "--no-daemon",
        "--timeout-ms",
        "90000",
    ]);
    assert_eq!(text(&json_daemon), text(&json_local));

    let status = env.scry(&["daemon", "status"]);
    let s = text(&status);
    assert!(s.contains("pyright pid "), "{s}\n{}", env.daemon_log());
    assert!(s.contains(&env.ws.display().to_string()), "{s}");
    // The directory is the user's alone (on Windows the pipe's ACL is the
    // gate: scry-daemon's platform::transport).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&env.daemon_dir)
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700);
    }

    // `scry daemon stop` leaves no process behind.
    let daemon = env.daemon_pid().unwrap();
    let stop = env.scry(&["daemon", "stop"]);
    assert!(stop.status.success(), "{stop:?}");
    assert!(!alive(daemon), "the daemon is gone");
    wait_until("pyright to exit", Duration::from_secs(10), || {
        !alive(servers[0].1)
    });
    assert!(text(&env.scry(&["daemon", "status"])).contains("no scry daemon is running"));
}

/// Unix: a socket file left by a dead daemon (a named pipe leaves none).
#[cfg(unix)]
#[test]
fn a_stale_socket_and_lock_are_recovered_and_other_versions_never_used() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new(None);
    let before = env.status();
    assert_eq!(before["running"], false);
    let socket = PathBuf::from(before["socket"].as_str().unwrap());
    std::fs::create_dir_all(&env.daemon_dir).unwrap();
    std::fs::set_permissions(&env.daemon_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // A dead daemon's socket (bound, then the listener gone) and lock.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    std::fs::write(socket.with_extension("lock"), "12345\n").unwrap();
    // A live daemon of another version, in the same directory.
    let name = socket.file_name().unwrap().to_string_lossy().into_owned();
    let other = env
        .daemon_dir
        .join(name.replacen("scry-", "scry-0.0.0-old-", 1));
    let old = std::os::unix::net::UnixListener::bind(&other).unwrap();
    old.set_nonblocking(true).unwrap();

    let out = env.scry(&["status"]);
    assert!(out.status.success(), "{out:?}");
    assert!(!text(&out).contains("not used"), "{}", text(&out));
    assert!(
        text(&out).contains("served by the scry daemon (pid "),
        "{}",
        text(&out)
    );
    assert!(
        env.daemon_pid().is_some(),
        "a daemon took the stale socket's place"
    );
    assert!(
        old.accept().is_err(),
        "the other version's socket was never connected to"
    );
}

#[test]
fn a_daemon_that_cannot_start_leaves_the_call_in_process_and_status_says_so() {
    let env = Env::new(None);
    // The daemon directory is a file: no daemon can live there.
    std::fs::write(&env.daemon_dir, "").unwrap();
    let out = env.scry(&["status"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        text(&out).contains("scry daemon: not used"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("ran in-process"), "{}", text(&out));
}

#[test]
fn a_client_killed_mid_call_cancels_upstream_and_the_daemon_carries_on() {
    let Some(env) = Env::with_slow_fake() else {
        return;
    };
    let mut client = env.spawn(&[
        "def",
        "a.fake",
        "alpha",
        "--line",
        "2",
        "--timeout-ms",
        "90000",
    ]);
    wait_until("the definition request", Duration::from_secs(30), || {
        env.fake_log().contains("\"textDocument/definition\"")
    });
    let server = env.fake_pid().unwrap();
    client.kill().unwrap();
    let _ = client.wait();
    wait_until("$/cancelRequest upstream", Duration::from_secs(10), || {
        env.fake_log().contains("$/cancelRequest")
    });
    // The daemon and its server carry on.
    let out = env.scry(&["symbols", "a.fake"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(env.fake_pid(), Some(server));
    assert!(alive(server));
}

#[test]
fn a_killed_daemon_fails_the_call_in_flight_clearly_and_the_next_call_works() {
    let Some(env) = Env::with_slow_fake() else {
        return;
    };
    // A raw request may change state: it is never retried.
    let params = r#"{"textDocument":{"uri":"$uri"},"position":{"line":0,"character":1}}"#;
    let client = env.spawn(&[
        "request",
        "textDocument/definition",
        "a.fake",
        "--params",
        params,
        "--timeout-ms",
        "90000",
    ]);
    wait_until("the request upstream", Duration::from_secs(30), || {
        env.fake_log().contains("\"textDocument/definition\"")
    });
    let daemon = env.daemon_pid().unwrap();
    let server = env.fake_pid().unwrap();
    kill(daemon, "KILL");
    let out = client.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("error[DAEMON_RESTARTED]"), "{err}");
    assert_eq!(err.matches("error[").count(), 1, "one error: {err}");
    wait_until(
        "the server to die with the daemon",
        Duration::from_secs(10),
        || !alive(server),
    );
    let next = env.scry(&["symbols", "a.fake"]);
    assert!(next.status.success(), "{next:?}");
    assert_ne!(env.daemon_pid(), Some(daemon), "a new daemon answered");
}

#[test]
fn servers_never_outlive_a_killed_daemon_even_when_they_ignore_eof() {
    let env = Env::new(None);
    if env
        .fake(json!({"FAKE_LSP_MODE": "no-shutdown"}), json!({}))
        .is_none()
    {
        return;
    }
    let out = env.scry(&["symbols", "a.fake"]);
    assert!(out.status.success(), "{out:?}");
    let server = env.fake_pid().unwrap();
    let daemon = env.daemon_pid().unwrap();
    kill(daemon, "KILL");
    wait_until(
        "the server to die with the daemon",
        Duration::from_secs(5),
        || !alive(server),
    );
}

#[test]
fn idle_servers_stop_then_the_idle_daemon_exits() {
    let env = Env::new(None);
    if env.fake(json!({}), json!({"serverIdleMs": 300})).is_none() {
        return;
    }
    let mut cmd = env.cmd(&["symbols", "a.fake"]);
    cmd.env("SCRY_DAEMON_IDLE_MS", "1500");
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let daemon = env.daemon_pid().unwrap();
    let server = env.fake_pid().unwrap();
    wait_until("the idle server to stop", Duration::from_secs(10), || {
        !alive(server)
    });
    wait_until("the idle daemon to exit", Duration::from_secs(15), || {
        !alive(daemon)
    });
}

/// A client shorter than the reaper's half-second tick is activity too:
/// the daemon measured its idle time from the ticks that saw no client,
/// so a stream of brief calls (`status`, `daemon status`: no server) let it
/// exit in their midst and the next call paid a cold start.
#[test]
fn brief_clients_keep_the_daemon_past_its_idle_time_then_it_exits() {
    let env = Env::new(None);
    let mut cmd = env.cmd(&["status"]);
    cmd.env("SCRY_DAEMON_IDLE_MS", "2000");
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let daemon = env.daemon_pid().unwrap();
    // Three idle times of brief clients, a pause shorter than the idle
    // time between them.
    let until = std::time::Instant::now() + Duration::from_secs(6);
    while std::time::Instant::now() < until {
        assert_eq!(
            env.daemon_pid(),
            Some(daemon),
            "the daemon exited among its clients:\n{}",
            env.daemon_log()
        );
        std::thread::sleep(Duration::from_millis(700));
    }
    wait_until("the idle daemon to exit", Duration::from_secs(15), || {
        !alive(daemon)
    });
}

#[test]
fn an_idle_workspace_is_forgotten_while_the_daemon_lives_and_reopened_on_the_next_call() {
    let env = Env::new(None);
    if env.fake(json!({}), json!({"serverIdleMs": 300})).is_none() {
        return;
    }
    let roots = || -> Vec<String> {
        env.status()["workspaces"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| w["root"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let mut cmd = env.cmd(&["symbols", "a.fake"]);
    cmd.env("SCRY_DAEMON_IDLE_MS", "60000");
    assert!(cmd.output().unwrap().status.success());
    let daemon = env.daemon_pid().unwrap();
    assert_eq!(roots().len(), 1);
    let server = env.fake_pid().unwrap();
    wait_until("the idle server to stop", Duration::from_secs(10), || {
        !alive(server)
    });
    wait_until(
        "the idle workspace to be forgotten",
        Duration::from_secs(10),
        || roots().is_empty(),
    );
    assert!(alive(daemon), "the daemon lives on (its idle time is 60 s)");
    // The next call opens it again, in the same daemon.
    let out = env.scry(&["symbols", "a.fake"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(env.daemon_pid(), Some(daemon));
    assert_eq!(roots().len(), 1);
}

#[test]
fn a_changed_server_configuration_starts_a_new_server() {
    let env = Env::new(None);
    if env.fake(json!({"X": "1"}), json!({})).is_none() {
        return;
    }
    assert!(env.scry(&["symbols", "a.fake"]).status.success());
    let first = env.fake_pid().unwrap();
    assert!(env.scry(&["symbols", "a.fake"]).status.success());
    assert_eq!(env.fake_pid(), Some(first), "unchanged: reused");
    env.fake(json!({"X": "2"}), json!({}));
    assert!(env.scry(&["symbols", "a.fake"]).status.success());
    let second = env.fake_pid().unwrap();
    assert_ne!(second, first, "changed: a new server");
    wait_until("the old server to stop", Duration::from_secs(10), || {
        !alive(first)
    });
}

#[test]
fn edits_from_two_clients_are_serialized_and_undo_works_from_another() {
    if !pyright("edits") {
        return;
    }
    let env = Env::new(Some("python"));
    let original = std::fs::read_to_string(env.ws.join("inventory.py")).unwrap();
    // Warm up (the rename's first answer needs the index).
    assert!(
        env.scry(&[
            "refs",
            "inventory.py",
            "total_weight",
            "--timeout-ms",
            "90000"
        ])
        .status
        .success()
    );
    let a = env.spawn(&[
        "rename",
        "inventory.py",
        "total_weight",
        "weight_sum",
        "--timeout-ms",
        "90000",
    ]);
    let b = env.spawn(&[
        "rename",
        "inventory.py",
        "Inventory",
        "Stock",
        "--timeout-ms",
        "90000",
    ]);
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{a:?}");
    assert!(b.status.success(), "{b:?}");
    let now = std::fs::read_to_string(env.ws.join("inventory.py")).unwrap();
    assert!(now.contains("def weight_sum"), "{now}");
    assert!(now.contains("class Stock"), "{now}");
    assert_eq!(env.servers().len(), 1, "both clients used one server");
    // Undo, twice, each from another client process.
    for _ in 0..2 {
        let u = env.scry(&["undo"]);
        assert!(u.status.success(), "{u:?}");
    }
    assert_eq!(
        std::fs::read_to_string(env.ws.join("inventory.py")).unwrap(),
        original
    );
}

/// A `scry mcp` process spoken to over stdio.
struct Mcp {
    child: Child,
    client: StdioClient,
}

impl Mcp {
    fn start(env: &Env) -> Mcp {
        Mcp::start_with(env, &["mcp"], "daemon-test")
    }

    /// `scry ARGS` as an MCP server on stdio, initialized as `client_name`.
    fn start_with(env: &Env, args: &[&str], client_name: &str) -> Mcp {
        let (child, mut client) = StdioClient::spawn(env.cmd(args).env("SCRY_LOG", "off"));
        client.initialize(client_name);
        Mcp { child, client }
    }

    fn send(&mut self, v: Value) {
        self.client.send(v);
    }

    fn response(&self, id: i64) -> Value {
        self.client.response(id)
    }

    fn refs(&mut self, id: i64) -> String {
        self.lsp(
            id,
            json!({"action": "references", "path": "inventory.py",
            "symbol": "total_weight", "timeout_ms": 90000}),
        )
    }

    /// An `lsp` call that must succeed: the answer's text.
    fn lsp(&mut self, id: i64, arguments: Value) -> String {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "lsp", "arguments": arguments}}));
        let r = self.response(id);
        assert_eq!(r["result"]["isError"], json!(false), "{r}");
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        self.client.close();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_daemon_that_cannot_start_leaves_stdio_mcp_in_process_and_status_says_so() {
    let env = Env::new(None);
    // The daemon directory is a file: no daemon can live there.
    std::fs::write(&env.daemon_dir, "").unwrap();
    let mut mcp = Mcp::start(&env);
    mcp.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "lsp", "arguments": {"action": "status"}}}),
    );
    let r = mcp.response(2);
    assert_eq!(r["result"]["isError"], json!(false), "{r}");
    let t = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(t.contains("scry daemon: not used"), "{t}");
    assert!(t.contains("ran in-process"), "{t}");
}

#[test]
fn two_concurrent_mcp_sessions_share_one_server_process() {
    if !pyright("mcp") {
        return;
    }
    let env = Env::new(Some("python"));
    let mut a = Mcp::start(&env);
    let mut b = Mcp::start(&env);
    let ta = a.refs(2);
    let tb = b.refs(2);
    assert_eq!(ta, tb);
    assert!(ta.contains("references to `total_weight`"), "{ta}");
    let servers = env.servers();
    assert_eq!(
        servers.len(),
        1,
        "one pyright for both sessions: {servers:?}"
    );
    // The `daemon status` connections just made (`servers`) are counted
    // until the daemon has read their end: asked again until they are not.
    let s = env.status_until(|s| s["clients"] == 2);
    assert_eq!(s["clients"], 2, "{s}");
    drop(a);
    b.refs(3);
    assert_eq!(env.servers(), servers, "the server outlives a session");
}

impl Mcp {
    /// `diagnostics` with `changes: true` on `path`: the answer's text.
    fn changes(&mut self, id: i64, path: &str) -> String {
        self.lsp(
            id,
            json!({"action": "diagnostics", "path": path, "changes": true, "timeout_ms": 90000}),
        )
    }
}

/// Through the daemon, each MCP session keeps its own `changes` baseline
/// (one session's check never hides a problem from another's), and the
/// CLI's (the workspace's file) is apart from both.
#[test]
fn each_mcp_session_keeps_its_own_changes_baseline_through_the_daemon() {
    if !pyright("each_mcp_session_keeps_its_own_changes_baseline") {
        return;
    }
    let env = Env::new(Some("python"));
    std::fs::write(env.ws.join("fresh.py"), "count: int = \"none\"\n").unwrap();
    let mut a = Mcp::start(&env);
    let mut b = Mcp::start(&env);
    let first = a.changes(2, "fresh.py");
    assert!(
        first.starts_with("1 error in 1 file, all new: first check of fresh.py"),
        "{first}"
    );
    assert!(
        a.changes(3, "fresh.py").starts_with("No new problems"),
        "a's second check is a delta"
    );
    // b has never checked the file: everything is new to it too.
    let other = b.changes(2, "fresh.py");
    assert!(
        other.starts_with("1 error in 1 file, all new: first check of fresh.py"),
        "{other}"
    );
    // The CLI's baseline is the workspace's file, kept apart.
    let out = env.scry(&["diag", "--changes", "fresh.py"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("1 error in 1 file, all new: first check of fresh.py"),
        "{text}"
    );
    assert_eq!(env.servers().len(), 1, "one pyright for all of them");
}

#[test]
fn beyond_max_servers_the_least_recently_used_server_stops() {
    let env = Env::new(None);
    let Some(fake) = fake_server() else {
        return;
    };
    for (f, t) in [
        ("a.one", "alpha beta\n"),
        ("b.two", "gamma\n"),
        ("c.three", "delta\n"),
    ] {
        std::fs::write(env.ws.join(f), t).unwrap();
    }
    let server = |ext: &str| json!({"command": fake, "fileTypes": [ext], "env": {}});
    env.config(json!({
        "autoDetect": false,
        "limits": {"maxServers": 2},
        "servers": {"one": server("one"), "two": server("two"), "three": server("three")},
    }));
    let ids = || {
        let mut v: Vec<String> = env.servers().into_iter().map(|(id, _)| id).collect();
        v.sort();
        v
    };
    assert!(env.scry(&["symbols", "a.one"]).status.success());
    assert!(env.scry(&["symbols", "b.two"]).status.success());
    assert_eq!(ids(), ["one", "two"]);
    assert!(
        env.scry(&["symbols", "a.one"]).status.success(),
        "one is used again"
    );
    assert!(env.scry(&["symbols", "c.three"]).status.success());
    wait_until(
        "two (least recently used) to stop",
        Duration::from_secs(10),
        || ids() == ["one", "three"],
    );
}

#[test]
fn an_mcp_cancel_reaches_the_server_through_the_daemon() {
    let Some(env) = Env::with_slow_fake() else {
        return;
    };
    let mut m = Mcp::start(&env);
    m.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "lsp", "arguments": {"action": "definition", "path": "a.fake",
        "symbol": "alpha", "line": 2, "timeout_ms": 90000}}}),
    );
    wait_until("the definition request", Duration::from_secs(30), || {
        env.fake_log().contains("\"textDocument/definition\"")
    });
    m.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "test"}}),
    );
    wait_until("$/cancelRequest upstream", Duration::from_secs(10), || {
        env.fake_log().contains("$/cancelRequest")
    });
    let server = env.fake_pid().unwrap();
    m.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "lsp", "arguments": {"action": "symbols", "path": "a.fake"}}}),
    );
    let r = m.response(3);
    assert_eq!(r["result"]["isError"], json!(false), "{r}");
    assert_eq!(
        env.fake_pid(),
        Some(server),
        "the session and its server carry on"
    );
}

/// The CLI words and the MCP tool call of one question per action of the
/// action table; an action missing here fails the test (a new action must
/// be added, not skipped).
fn question(action: &str) -> (Vec<&'static str>, &'static str, Value) {
    let at = json!({"path": "inventory.py", "symbol": "total_weight"});
    let (cli, tool, args): (Vec<&str>, &str, Value) = match action {
        "definition" | "declaration" | "type_definition" | "implementation" | "references"
        | "hover" | "incoming_calls" | "outgoing_calls" => {
            (vec!["inventory.py", "total_weight"], "lsp", at)
        }
        "symbols" => (vec!["inventory.py"], "lsp", json!({"path": "inventory.py"})),
        "workspace_symbols" => (
            vec!["--query", "restock", "inventory.py"],
            "lsp",
            json!({"query": "restock", "path": "inventory.py"}),
        ),
        "diagnostics" => (vec!["inventory.py"], "lsp", json!({"path": "inventory.py"})),
        "rename" => (
            vec!["inventory.py", "total_weight", "weight_sum", "--dry-run"],
            "lsp",
            json!({"path": "inventory.py", "symbol": "total_weight", "new_name": "weight_sum"}),
        ),
        "code_actions" => (
            vec!["inventory.py", "--line", "18"],
            "lsp",
            json!({"path": "inventory.py", "line": 18}),
        ),
        "map" => (vec!["--budget", "1500"], "lsp", json!({"budget": 1500})),
        "status" => (vec![], "lsp", json!({})),
        "capabilities" => (vec!["inventory.py"], "lsp", json!({"path": "inventory.py"})),
        "undo" => (vec!["--dry-run"], "lsp_edit", json!({"apply": false})),
        "request" => (
            vec![
                "textDocument/foldingRange",
                "inventory.py",
                "--params",
                r#"{"textDocument":{"uri":"$uri"}}"#,
            ],
            "lsp_edit",
            json!({"method": "textDocument/foldingRange", "path": "inventory.py",
                   "params": {"textDocument": {"uri": "$uri"}}}),
        ),
        "reload" => (vec![], "lsp_edit", json!({})),
        other => panic!("no question for action `{other}`: add one to `question`"),
    };
    let mut args = args;
    args["action"] = json!(action);
    args["timeout_ms"] = json!(90000);
    (cli, tool, args)
}

/// The actions in the table's order, `reload` first: asked while no server
/// runs on either route, it says the same on both.
fn actions_to_compare() -> Vec<&'static str> {
    let mut names: Vec<&str> = scry_model::action::ACTIONS.iter().map(|f| f.name).collect();
    names.sort_by_key(|n| *n != "reload");
    names
}

#[test]
fn every_action_answers_the_same_bytes_through_the_daemon_and_in_process_cli_and_mcp() {
    if !pyright("every_action") {
        return;
    }
    let env = Env::new(Some("python"));
    let ask = |action: &str, local: bool| {
        let (mut words, _, _) = question(action);
        words.insert(0, action);
        words.extend(["--timeout-ms", "90000"]);
        if local {
            words.push("--no-daemon");
        }
        let out = env.cmd(&words).env("SCRY_LOG", "off").output().unwrap();
        (
            out.status.code(),
            text(&out),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let mut differ = Vec::new();
    for action in actions_to_compare() {
        // What depends on how long the server has run (a just-started
        // pyright's workspace symbols, its dynamic registrations) is asked
        // of a just-started one on both routes: each in-process call
        // starts its own.
        if ["workspace_symbols", "capabilities"].contains(&action) {
            let stop = env.scry(&["daemon", "stop"]);
            assert!(stop.status.success(), "{stop:?}");
        }
        let daemon = ask(action, false);
        let local = ask(action, true);
        // `status` reports the route itself (which process, which servers
        // it runs): it says so, the same way on both front ends.
        if action == "status" {
            assert!(
                daemon.1.contains("served by the scry daemon (pid "),
                "{}",
                daemon.1
            );
            assert!(
                local.0 == Some(0) && !local.1.contains("served by"),
                "{}",
                local.1
            );
            continue;
        }
        if daemon != local {
            differ.push(format!(
                "CLI {action}:\n  daemon {daemon:?}\n  local  {local:?}"
            ));
        }
    }

    // MCP on stdio: through the daemon and in-process, the same results
    // (a fresh daemon: `reload`, asked first, finds no server on either).
    let stop = env.scry(&["daemon", "stop"]);
    assert!(stop.status.success(), "{stop:?}");
    let mut through = Mcp::start(&env);
    let mut local = Mcp::start_with(&env, &["mcp", "--no-daemon"], "every-action-local");
    let mut id = 10;
    for action in actions_to_compare() {
        let (_, tool, args) = question(action);
        let mut results = Vec::new();
        for mcp in [&mut through, &mut local] {
            id += 1;
            mcp.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}));
            results.push(mcp.response(id)["result"].clone());
        }
        if action == "status" {
            let t = |r: &Value| {
                r["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            };
            assert!(
                t(&results[0]).contains("served by the scry daemon (pid "),
                "{}",
                results[0]
            );
            assert!(!t(&results[1]).contains("served by"), "{}", results[1]);
            continue;
        }
        let (a, b) = (untimed(&results[0]), untimed(&results[1]));
        if a != b {
            differ.push(format!("MCP {action}:\n  daemon {a}\n  local  {b}"));
        }
    }
    assert!(
        differ.is_empty(),
        "answers differ by route:\n{}",
        differ.join("\n")
    );
}

/// `v` without how long each provider took (`elapsed_ms`, JSON only): a
/// measurement, not part of the answer.
fn untimed(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| *k != "elapsed_ms")
                .map(|(k, v)| (k.clone(), untimed(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(untimed).collect()),
        other => other.clone(),
    }
}

/// Runs `scry ARGS` and waits for it at most `within` (killed and failed
/// past it: a hang is a failure, never a stuck test run).
#[cfg(unix)]
fn bounded(env: &Env, args: &[&str], within: Duration) -> Output {
    let mut child = env.spawn(args);
    let t = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > within {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "scry {args:?} gave no answer within {within:?} (stderr: {})",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// A file name that is not UTF-8 (`\xff_x.rb`) hung every daemon-routed
/// answer that would list it: serde refused the path, and the call ended
/// without a frame. It is listed escaped, the same bytes as in-process,
/// on the CLI and through MCP (`map`, `references`), and the daemon
/// serves on.
/// Unix: a name of raw bytes (a Windows name is UTF-16, never `\xff`).
#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_listed_escaped_through_the_daemon_never_a_hang() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new(None);
    std::fs::write(env.ws.join("a.rb"), "def qux(a)\n  a\nend\nqux(1)\n").unwrap();
    let odd = env.ws.join(std::ffi::OsStr::from_bytes(b"\xff_x.rb"));
    std::fs::write(&odd, "qux(2)\ndef odd_one\nend\n").unwrap();
    let bound = Duration::from_secs(60);
    let args = ["refs", "a.rb", "qux", "--timeout-ms", "5000"];
    let daemon = bounded(&env, &args, bound);
    let t = text(&daemon);
    assert!(daemon.status.success(), "{daemon:?}");
    assert!(t.contains("\\xff_x.rb\n  1:1  qux(2)"), "{t}");
    assert!(!t.contains('\u{fffd}'), "{t}");
    let mut local = args.to_vec();
    local.push("--no-daemon");
    assert_eq!(
        text(&bounded(&env, &local, bound)),
        t,
        "the same bytes in-process"
    );
    let json = bounded(&env, &["refs", "a.rb", "qux", "--json"], bound);
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(
        v["locations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["path"] == "\\xff_x.rb"),
        "{v}"
    );
    // The daemon serves on: a second call, then MCP through it.
    assert!(env.daemon_pid().is_some());
    let mut mcp = Mcp::start(&env);
    let map = mcp.lsp(2, json!({"action": "map"}));
    assert!(
        map.contains("\\xff_x.rb") && map.contains("odd_one"),
        "{map}"
    );
    let refs = mcp.lsp(
        3,
        json!({"action": "references", "path": "a.rb", "symbol": "qux", "timeout_ms": 5000}),
    );
    assert!(refs.contains("\\xff_x.rb\n  1:1  qux(2)"), "{refs}");
    // The name as shown asks about that file, in MCP and on the CLI.
    let outline = mcp.lsp(4, json!({"action": "symbols", "path": "\\xff_x.rb"}));
    assert!(outline.contains("odd_one"), "{outline}");
    let cli = bounded(&env, &["symbols", "\\xff_x.rb"], bound);
    assert!(text(&cli).contains("odd_one"), "{cli:?}");
}
