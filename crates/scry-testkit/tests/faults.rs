//! Fault-injection tests: the real engine (`scry-ops`) against the scriptable
//! fake server `scry-fake-lsp`, one fault per test. Every test asserts a clear
//! error (or the right answer), that nothing hangs, that the next request
//! works, and that no server process is left behind.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use scry_model::{Action, Answer, Body, OpError, Query, RunState};
use scry_ops::Engine;
use scry_render::{RenderOptions, render_text};
use scry_workspace::Workspace;
use scry_workspace::config::Config;
use serde_json::{Value, json};
use tempfile::TempDir;

const SERVER: &str = "fakels";
/// Upper bound of every test body: a hang fails the test instead of blocking
/// the suite.
const GUARD: Duration = Duration::from_secs(60);

const SOURCE: &str = "fn target() {}\nfn caller() { target(); }\nlet other = target;\n";

/// One workspace with one fake server configured.
struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    log: PathBuf,
    pid_file: PathBuf,
    engine: Engine,
}

impl Fixture {
    /// `mode` goes to `FAKE_LSP_MODE`; `env` adds more variables; `files` are
    /// written into the workspace root.
    fn new(mode: &str, env: &[(&str, &str)], files: &[(&str, &str)]) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = scry_base::paths::canonical(dir.path()).expect("canonical tempdir");
        let root = base.join("ws");
        std::fs::create_dir(&root).expect("workspace dir");
        let log = base.join("fake.log");
        let pid_file = base.join("fake.pid");
        for (name, text) in files {
            std::fs::write(root.join(name), text).expect("write workspace file");
        }
        let mut vars = serde_json::Map::new();
        vars.insert("FAKE_LSP_MODE".into(), mode.into());
        vars.insert("FAKE_LSP_LOG".into(), log.to_string_lossy().into());
        vars.insert(
            "FAKE_LSP_PID_FILE".into(),
            pid_file.to_string_lossy().into(),
        );
        for (k, v) in env {
            vars.insert((*k).into(), (*v).into());
        }
        let layer = json!({
            "autoDetect": false,
            "servers": {
                SERVER: {
                    "command": scry_testkit::built_binary(env!("CARGO_BIN_EXE_scry-fake-lsp")),
                    "fileTypes": ["fake"],
                    "env": vars,
                }
            }
        });
        let config = Config::from_layers(&[(PathBuf::from("test.json"), layer.to_string())])
            .expect("test configuration");
        let ws = Arc::new(Workspace::with_config(root.clone(), config));
        Fixture {
            _dir: dir,
            root,
            log,
            pid_file,
            engine: Engine::new(ws),
        }
    }

    fn query(&self, action: Action, file: &str, symbol: &str, timeout_ms: u64) -> Query {
        let mut q = Query::new(action);
        q.path = Some(PathBuf::from(file));
        q.symbol = Some(symbol.to_string());
        q.timeout = Some(Duration::from_millis(timeout_ms));
        q
    }

    async fn run(&self, q: &Query) -> Result<Answer, OpError> {
        self.engine.run_query(q).await
    }

    /// The pid the running session reports (the only one: one server, one root).
    fn session_pid(&self) -> u32 {
        let running = self.engine.workspace().running();
        assert_eq!(running.len(), 1, "exactly one session expected");
        running[0].pid().expect("session pid")
    }

    /// The pid the fake last wrote, cross-checked with the session's.
    fn pid(&self) -> u32 {
        let from_file: u32 = std::fs::read_to_string(&self.pid_file)
            .expect("pid file")
            .trim()
            .parse()
            .expect("pid");
        assert_eq!(from_file, self.session_pid(), "pid file and session pid");
        from_file
    }

    fn log(&self) -> Vec<Value> {
        read_log(&self.log)
    }

    fn render(&self, a: &Answer) -> String {
        let text = render_text(a, &self.root, &RenderOptions::default());
        assert!(
            !text.contains("fake-lsp:"),
            "server stderr leaked into the answer:\n{text}"
        );
        text
    }

    /// Stop every server and check each pid in `pids` is gone within 3 s.
    async fn finish(&self, pids: &[u32]) {
        self.engine.shutdown().await;
        for &pid in pids {
            wait_gone(pid).await;
        }
        assert!(self.engine.workspace().running().is_empty());
    }
}

fn read_log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad log line {l:?}: {e}")))
        .collect()
}

/// Waits (up to 3 s) until some logged message satisfies `pred`.
async fn wait_log(path: &Path, pred: impl Fn(&Value) -> bool) -> Value {
    let until = Instant::now() + Duration::from_secs(3);
    loop {
        if let Some(v) = read_log(path).into_iter().find(|m| pred(m)) {
            return v;
        }
        assert!(
            Instant::now() < until,
            "expected message not in the log:\n{}",
            std::fs::read_to_string(path).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn method_of(m: &Value) -> &str {
    m["method"].as_str().unwrap_or("")
}

/// Requests (with an id) of `method` in the log.
fn requests<'a>(log: &'a [Value], method: &str) -> Vec<&'a Value> {
    log.iter()
        .filter(|m| method_of(m) == method && m.get("id").is_some())
        .collect()
}

fn notifications<'a>(log: &'a [Value], method: &str) -> Vec<&'a Value> {
    log.iter()
        .filter(|m| method_of(m) == method && m.get("id").is_none())
        .collect()
}

/// True when the process is gone: on Linux no `/proc` entry, i.e. it
/// exited and was reaped (a zombie still counts as left behind); elsewhere
/// when it no longer runs (`scry_base::platform::process::running`).
fn process_gone(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        return !Path::new(&format!("/proc/{pid}")).exists();
    }
    !scry_base::platform::process::running(pid)
}

fn process_alive(pid: u32) -> bool {
    !process_gone(pid)
}

async fn wait_gone(pid: u32) {
    let until = Instant::now() + Duration::from_secs(3);
    while !process_gone(pid) {
        assert!(
            Instant::now() < until,
            "server process {pid} still exists (running or unreaped) after 3 s"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn locations(a: &Answer) -> &[scry_model::Loc] {
    match &a.body {
        Body::Locations { locations } => locations,
        other => panic!("expected locations, got {other:?}"),
    }
}

fn hover_text(a: &Answer) -> &str {
    match &a.body {
        Body::Hover { text } => text,
        other => panic!("expected hover, got {other:?}"),
    }
}

async fn guarded<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(GUARD, f)
        .await
        .expect("test exceeded its time guard (hang)");
}

/// Hover on `target` in a.fake succeeds and names it.
async fn assert_hover_works(fx: &Fixture) {
    let a = fx
        .run(&fx.query(Action::Hover, "a.fake", "target", 5000))
        .await
        .expect("hover after the fault");
    assert!(
        hover_text(&a).contains("fake target"),
        "hover text: {:?}",
        hover_text(&a)
    );
    fx.render(&a);
}

// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_on_request_reports_crash_and_restarts() {
    guarded(async {
        let fx = Fixture::new("crash-on-request", &[], &[("a.fake", SOURCE)]);
        let t0 = Instant::now();
        let err = fx
            .run(&fx.query(Action::Definition, "a.fake", "target", 5000))
            .await
            .expect_err("definition must fail: the server crashes");
        assert!(
            matches!(err, OpError::ServerCrashed(_)),
            "expected ServerCrashed, got {err:?}"
        );
        let msg = scry_render::error_text(&err, std::path::Path::new("/"));
        eprintln!("error: {msg}");
        assert!(msg.contains(SERVER), "message names the server: {msg}");
        assert!(msg.contains("textDocument/definition"), "{msg}");
        assert!(t0.elapsed() < Duration::from_secs(5), "no hang");
        let old_pid: u32 = std::fs::read_to_string(&fx.pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();

        // The next request restarts the server.
        assert_hover_works(&fx).await;
        let new_pid = fx.pid();
        assert_ne!(old_pid, new_pid, "a new server process answered");
        wait_gone(old_pid).await; // the crashed server was reaped
        assert_eq!(requests(&fx.log(), "initialize").len(), 2);
        fx.finish(&[old_pid, new_pid]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hang_times_out_and_cancels() {
    guarded(async {
        let fx = Fixture::new("hang", &[], &[("a.fake", SOURCE)]);
        // Warm up so the 1 s budget is all the request's.
        assert_hover_works(&fx).await;
        let pid = fx.pid();

        let t0 = Instant::now();
        let err = fx
            .run(&fx.query(Action::Definition, "a.fake", "target", 1000))
            .await
            .expect_err("definition must time out");
        let took = t0.elapsed();
        assert!(
            matches!(err, OpError::Timeout(_)),
            "expected Timeout, got {err:?}"
        );
        let msg = scry_render::error_text(&err, std::path::Path::new("/"));
        eprintln!("error: {msg}");
        assert!(msg.contains("textDocument/definition"), "{msg}");
        assert!(msg.contains(SERVER), "{msg}");
        assert!(
            took < Duration::from_secs(3),
            "bounded by the budget: {took:?}"
        );

        let log = fx.log();
        let defs = requests(&log, "textDocument/definition");
        assert_eq!(defs.len(), 1, "one definition request: {defs:?}");
        let id = defs[0]["id"].clone();
        let path = fx.log.clone();
        wait_log(&path, |m| {
            method_of(m) == "$/cancelRequest" && m["params"]["id"] == id
        })
        .await;

        // Same server still serves other requests.
        assert_hover_works(&fx).await;
        assert_eq!(fx.pid(), pid, "no restart after a timeout");
        assert_eq!(requests(&fx.log(), "initialize").len(), 1);
        fx.finish(&[pid]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_before_response_is_skipped() {
    guarded(async {
        let fx = Fixture::new("garbage", &[], &[("a.fake", SOURCE)]);
        let a = fx
            .run(&fx.query(Action::Definition, "a.fake", "target", 5000))
            .await
            .expect("definition despite junk output");
        let locs = locations(&a);
        assert_eq!(locs.len(), 1, "{locs:?}");
        assert_eq!((locs[0].line, locs[0].col), (1, 4));
        assert!(locs[0].path.ends_with("a.fake"));
        fx.render(&a);
        let pid = fx.pid();
        // Still the same, healthy connection.
        let a = fx
            .run(&fx.query(Action::Definition, "a.fake", "caller", 5000))
            .await
            .expect("second definition");
        assert_eq!((locations(&a)[0].line, locations(&a)[0].col), (2, 4));
        assert_eq!(fx.pid(), pid);
        fx.finish(&[pid]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_response_over_the_limit_is_an_error_then_restart() {
    guarded(async {
        let bytes = (70 * 1024 * 1024).to_string();
        let fx = Fixture::new(
            "huge",
            &[("FAKE_LSP_HUGE_BYTES", &bytes)],
            &[("a.fake", SOURCE)],
        );
        let t0 = Instant::now();
        let err = fx
            .run(&fx.query(Action::Definition, "a.fake", "target", 5000))
            .await
            .expect_err("a 70 MiB message is over the transport limit");
        assert!(t0.elapsed() < Duration::from_secs(6), "no hang");
        assert!(
            matches!(
                err,
                OpError::ServerCrashed(_) | OpError::MalformedResponse(_)
            ),
            "expected ServerCrashed or MalformedResponse, got {err:?}"
        );
        let msg = scry_render::error_text(&err, std::path::Path::new("/"));
        eprintln!("error: {msg}");
        assert!(msg.contains(SERVER), "names the server: {msg}");
        assert!(msg.contains("exceeds the limit"), "names the limit: {msg}");
        let old_pid: u32 = std::fs::read_to_string(&fx.pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();

        assert_hover_works(&fx).await;
        let new_pid = fx.pid();
        assert_ne!(old_pid, new_pid, "restarted after the oversized message");
        wait_gone(old_pid).await;
        fx.finish(&[new_pid]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_response_under_the_limit_renders_within_caps() {
    guarded(async {
        let bytes = (5 * 1024 * 1024).to_string();
        let fx = Fixture::new(
            "huge",
            &[("FAKE_LSP_HUGE_BYTES", &bytes)],
            &[("a.fake", SOURCE)],
        );
        let a = fx
            .run(&fx.query(Action::Definition, "a.fake", "target", 10_000))
            .await
            .expect("a 5 MiB answer is accepted");
        let n = locations(&a).len();
        assert!(n > 1000, "about 1200 locations expected, got {n}");
        let text = fx.render(&a);
        eprintln!("{text}");
        assert!(
            text.chars().count() <= 16_000,
            "rendered {} chars",
            text.chars().count()
        );
        let pid = fx.pid();
        fx.finish(&[pid]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_references_render_with_a_more_marker() {
    guarded(async {
        // ~3000 distinct references (~170 KB of text): the renderer caps them.
        let mut src = String::from("fn target() {}\n");
        for i in 0..3000 {
            src.push_str(&format!(
                "let v{i} = target(); // padding padding padding\n"
            ));
        }
        let fx = Fixture::new("normal", &[], &[("a.fake", &src)]);
        let a = fx
            .run(&fx.query(Action::References, "a.fake", "target", 10_000))
            .await
            .expect("references");
        assert_eq!(locations(&a).len(), 3001);
        let text = fx.render(&a);
        assert!(
            text.chars().count() <= 16_000,
            "rendered {} chars",
            text.chars().count()
        );
        assert!(text.contains("more"), "a `more` marker expected:\n{text}");
        let pid = fx.pid();
        fx.finish(&[pid]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_response_id_is_ignored() {
    guarded(async {
        let fx = Fixture::new("unknown-id", &[], &[("a.fake", SOURCE)]);
        let a = fx
            .run(&fx.query(Action::Definition, "a.fake", "target", 5000))
            .await
            .expect("the real answer still arrives");
        let locs = locations(&a);
        assert_eq!(locs.len(), 1);
        assert_eq!((locs[0].line, locs[0].col), (1, 4));
        let pid = fx.pid();
        assert_hover_works(&fx).await;
        assert_eq!(fx.pid(), pid);
        fx.finish(&[pid]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_during_init_is_a_start_up_crash() {
    guarded(async {
        let fx = Fixture::new("exit-during-init", &[], &[("a.fake", SOURCE)]);
        for attempt in 0..2 {
            let t0 = Instant::now();
            let err = fx
                .run(&fx.query(Action::Definition, "a.fake", "target", 5000))
                .await
                .expect_err("the server dies during initialize");
            assert!(t0.elapsed() < Duration::from_secs(5), "no hang");
            assert!(
                matches!(err, OpError::ServerCrashed(_)),
                "attempt {attempt}: expected ServerCrashed, got {err:?}"
            );
            let msg = scry_render::error_text(&err, std::path::Path::new("/"));
            eprintln!("error: {msg}");
            assert!(msg.contains(SERVER), "{msg}");
            assert!(msg.contains("failed to start"), "mentions start-up: {msg}");
            assert!(fx.engine.workspace().running().is_empty());
            let pid: u32 = std::fs::read_to_string(&fx.pid_file)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            wait_gone(pid).await;
        }
        // Each call retried the start.
        assert_eq!(requests(&fx.log(), "initialize").len(), 2);
        fx.finish(&[]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_request_times_out_and_is_cancelled() {
    guarded(async {
        let fx = Fixture::new(
            "slow",
            &[("FAKE_LSP_DELAY_MS", "3000")],
            &[("a.fake", SOURCE)],
        );
        assert_hover_works(&fx).await;
        let pid = fx.pid();
        let t0 = Instant::now();
        let err = fx
            .run(&fx.query(Action::Definition, "a.fake", "target", 300))
            .await
            .expect_err("300 ms is shorter than the 3 s delay");
        assert!(
            t0.elapsed() < Duration::from_millis(1500),
            "{:?}",
            t0.elapsed()
        );
        assert!(
            matches!(err, OpError::Timeout(_)),
            "expected Timeout, got {err:?}"
        );
        let said = scry_render::error_text(&err, std::path::Path::new("/"));
        assert!(said.contains("textDocument/definition"), "{said}");
        let log = fx.log();
        let defs = requests(&log, "textDocument/definition");
        assert_eq!(defs.len(), 1, "{defs:?}");
        let id = defs[0]["id"].clone();
        let path = fx.log.clone();
        wait_log(&path, |m| {
            method_of(m) == "$/cancelRequest" && m["params"]["id"] == id
        })
        .await;
        // The fake answers the cancelled request with -32800; that stray
        // response must not disturb the next one.
        let a = fx
            .run(&fx.query(Action::Hover, "a.fake", "caller", 5000))
            .await
            .expect("hover after the cancel");
        assert!(hover_text(&a).contains("fake caller"));
        assert_eq!(fx.pid(), pid);
        fx.finish(&[pid]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexing_is_waited_for() {
    guarded(async {
        let fx = Fixture::new(
            "indexing",
            &[("FAKE_LSP_INDEX_MS", "1500")],
            &[("a.fake", SOURCE)],
        );
        let engine = fx.engine.clone();
        let q = fx.query(Action::Definition, "a.fake", "target", 10_000);
        let t0 = Instant::now();
        let task = tokio::spawn(async move { engine.run_query(&q).await });

        // Status while the definition waits: the server reports indexing.
        let mut saw_indexing = None;
        while !task.is_finished() && t0.elapsed() < Duration::from_secs(8) {
            let st = fx
                .run(&Query::new(Action::Status))
                .await
                .expect("status never fails");
            if let Body::Status(report) = &st.body {
                let server = report
                    .servers
                    .iter()
                    .find(|s| s.id == SERVER)
                    .expect("configured server in status");
                if let Some(RunState::Indexing { progress }) = server
                    .running
                    .iter()
                    .map(|r| &r.state)
                    .find(|s| matches!(s, RunState::Indexing { .. }))
                {
                    saw_indexing = Some(progress.clone());
                    fx.render(&st);
                    break;
                }
            } else {
                panic!("status body expected");
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        let a = task
            .await
            .expect("task")
            .expect("definition after indexing");
        let took = t0.elapsed();
        let state = saw_indexing.expect("status showed indexing");
        assert!(state.contains("Indexing"), "{state}");
        let locs = locations(&a);
        assert_eq!(locs.len(), 1, "real answer, not the indexing `[]`");
        assert_eq!((locs[0].line, locs[0].col), (1, 4));
        assert!(a.partial.is_none(), "{:?}", a.partial);
        assert!(took >= Duration::from_millis(1400), "waited for the index");
        assert!(took < Duration::from_secs(9), "{took:?}");
        fx.render(&a);

        // Our answer to window/workDoneProgress/create was a success.
        let log = fx.log();
        let reply = log
            .iter()
            .find(|m| m["id"] == "fake-lsp-progress-create")
            .expect("client answered window/workDoneProgress/create");
        assert!(reply.get("method").is_none(), "{reply}");
        assert!(reply.get("error").is_none(), "create was refused: {reply}");
        assert!(reply.get("result").is_some(), "{reply}");
        // ...so the progress ran: the session saw indexing, and it ended.
        let running = fx.engine.workspace().running();
        let (saw, ended) = running[0].state().indexing_history();
        assert!(saw && ended.is_some(), "progress begin/end seen");
        assert!(running[0].state().is_ready());
        let pid = fx.pid();
        fx.finish(&[pid]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_kills_a_server_that_ignores_shutdown() {
    guarded(async {
        let fx = Fixture::new("no-shutdown", &[], &[("a.fake", SOURCE)]);
        assert_hover_works(&fx).await;
        let pid = fx.pid();
        let t0 = Instant::now();
        fx.engine.shutdown().await;
        assert!(
            t0.elapsed() < Duration::from_secs(4),
            "shutdown is bounded: {:?}",
            t0.elapsed()
        );
        wait_gone(pid).await;
        let log = fx.log();
        assert_eq!(requests(&log, "shutdown").len(), 1, "shutdown was tried");
        assert!(fx.engine.workspace().running().is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_a_normal_server() {
    guarded(async {
        let fx = Fixture::new("normal", &[], &[("a.fake", SOURCE)]);
        assert_hover_works(&fx).await;
        let pid = fx.pid();
        assert!(process_alive(pid));
        let t0 = Instant::now();
        fx.engine.shutdown().await;
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        wait_gone(pid).await;
        let log = fx.log();
        assert_eq!(requests(&log, "shutdown").len(), 1);
        assert_eq!(notifications(&log, "exit").len(), 1);
    })
    .await;
}

/// `let s = "😀é"; target();` then `let t = "é"; target();`: `target` is at
/// character 14 / 13 (0-based), UTF-16 unit 15 / 13, UTF-8 byte 18 / 14.
const UNICODE: &str = "let s = \"😀é\"; target();\nlet t = \"é\"; target();\n";

async fn check_encoding(encoding: Option<&str>) {
    let env: Vec<(&str, &str)> = encoding
        .map(|e| vec![("FAKE_LSP_ENCODING", e)])
        .unwrap_or_default();
    let fx = Fixture::new("normal", &env, &[("a.fake", UNICODE)]);
    // Offsets of `target` per line, in the units the server uses.
    let units: [u64; 2] = match encoding {
        Some("utf-8") => [18, 14],
        _ => [15, 13],
    };

    let a = fx
        .run(&fx.query(Action::Definition, "a.fake", "target", 5000))
        .await
        .expect("definition");
    let locs = locations(&a);
    assert_eq!(locs.len(), 1, "{locs:?}");
    assert_eq!((locs[0].line, locs[0].col), (1, 15), "1-based characters");
    assert_eq!(locs[0].end_col, 21);
    let asked = a.asked_at.as_ref().expect("asked_at");
    let log = fx.log();
    let req = requests(&log, "textDocument/definition")[0];
    let pos = &req["params"]["position"];
    let line = pos["line"].as_u64().unwrap();
    assert_eq!(u64::from(asked.loc.line), line + 1);
    assert_eq!(
        pos["character"].as_u64().unwrap(),
        units[line as usize],
        "position sent in {encoding:?} units: {pos}"
    );
    assert_eq!(
        asked.loc.col,
        [15, 14][line as usize],
        "asked_at in characters"
    );

    let a = fx
        .run(&fx.query(Action::References, "a.fake", "target", 5000))
        .await
        .expect("references");
    let mut got: Vec<(u32, u32, u32)> = locations(&a)
        .iter()
        .map(|l| (l.line, l.col, l.end_col))
        .collect();
    got.sort();
    assert_eq!(got, vec![(1, 15, 21), (2, 14, 20)]);
    let log = fx.log();
    let req = requests(&log, "textDocument/references")[0];
    let pos = &req["params"]["position"];
    let line = pos["line"].as_u64().unwrap() as usize;
    assert_eq!(pos["character"].as_u64().unwrap(), units[line], "{pos}");
    fx.render(&a);
    let pid = fx.pid();
    fx.finish(&[pid]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn utf8_position_encoding() {
    guarded(check_encoding(Some("utf-8"))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_utf16_position_encoding() {
    guarded(check_encoding(None)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_sync_follows_the_disk() {
    guarded(async {
        let fx = Fixture::new(
            "normal",
            &[],
            &[("a.fake", SOURCE), ("b.fake", "fn other() {}\n")],
        );
        let a_path = fx.root.join("a.fake");
        let a_uri = scry_base::uri::path_to_uri(&a_path);
        let for_a = |m: &&Value| m["params"]["textDocument"]["uri"] == a_uri.as_str();

        // 1. First request: didOpen, version 1, the disk text.
        fx.run(&fx.query(Action::Definition, "a.fake", "target", 5000))
            .await
            .expect("first definition");
        let log = fx.log();
        let opens: Vec<_> = notifications(&log, "textDocument/didOpen")
            .into_iter()
            .filter(for_a)
            .collect();
        assert_eq!(opens.len(), 1, "{opens:?}");
        assert_eq!(opens[0]["params"]["textDocument"]["version"], 1);
        assert_eq!(opens[0]["params"]["textDocument"]["text"], SOURCE);
        let seen = log.len();

        // 2. Unchanged file: no didChange, no second didOpen.
        fx.run(&fx.query(Action::Hover, "a.fake", "target", 5000))
            .await
            .expect("second request");
        let log = fx.log();
        let new = &log[seen..];
        assert!(
            new.iter()
                .all(|m| !method_of(m).starts_with("textDocument/did")),
            "no sync traffic for an unchanged file: {new:?}"
        );
        let seen = log.len();

        // 3. Modified on disk: didChange version 2 with the full new text.
        let changed = format!("{SOURCE}fn added() {{ target(); }}\n");
        std::fs::write(&a_path, &changed).unwrap();
        let a = fx
            .run(&fx.query(Action::Definition, "a.fake", "added", 5000))
            .await
            .expect("definition after the change");
        assert_eq!((locations(&a)[0].line, locations(&a)[0].col), (4, 4));
        let log = fx.log();
        let changes: Vec<_> = notifications(&log[seen..], "textDocument/didChange")
            .into_iter()
            .filter(for_a)
            .collect();
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0]["params"]["textDocument"]["version"], 2);
        let content = changes[0]["params"]["contentChanges"].as_array().unwrap();
        assert_eq!(content.len(), 1);
        assert_eq!(content[0]["text"], changed.as_str());
        assert!(content[0].get("range").is_none(), "full-text change");
        assert!(notifications(&log[seen..], "textDocument/didOpen").is_empty());
        let seen = log.len();

        // 4. Deleted, then a request on another file: didClose for a.fake.
        std::fs::remove_file(&a_path).unwrap();
        fx.run(&fx.query(Action::Hover, "b.fake", "other", 5000))
            .await
            .expect("request on b.fake");
        let log = fx.log();
        let closes: Vec<_> = notifications(&log[seen..], "textDocument/didClose")
            .into_iter()
            .filter(for_a)
            .collect();
        assert_eq!(closes.len(), 1, "{:?}", &log[seen..]);
        // The close comes before the request that triggered it.
        let close_at = log
            .iter()
            .rposition(|m| method_of(m) == "textDocument/didClose")
            .unwrap();
        let hover_at = log
            .iter()
            .rposition(|m| method_of(m) == "textDocument/hover")
            .unwrap();
        assert!(close_at < hover_at);

        // And asking about the deleted file is a clear error.
        let err = fx
            .run(&fx.query(Action::Hover, "a.fake", "target", 5000))
            .await
            .expect_err("deleted file");
        assert!(matches!(err, OpError::FileNotFound(_)), "{err:?}");
        let pid = fx.pid();
        fx.finish(&[pid]).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_stderr_never_reaches_answers() {
    guarded(async {
        let fx = Fixture::new("normal", &[], &[("a.fake", SOURCE)]);
        let mut texts = Vec::new();
        for action in [Action::Definition, Action::References, Action::Hover] {
            let a = fx
                .run(&fx.query(action, "a.fake", "target", 5000))
                .await
                .unwrap_or_else(|e| panic!("{action:?}: {e}"));
            texts.push(fx.render(&a));
        }
        let mut q = Query::new(Action::Symbols);
        q.path = Some("a.fake".into());
        texts.push(fx.render(&fx.run(&q).await.expect("symbols")));
        texts.push(fx.render(&fx.run(&Query::new(Action::Status)).await.unwrap()));
        // The fake did write to stderr, and scry kept it (for its log).
        let running = fx.engine.workspace().running();
        let tail = running[0].state().stderr_tail(5).join("\n");
        assert!(tail.contains("fake-lsp: started"), "stderr tail: {tail}");
        for t in &texts {
            assert!(!t.contains("started mode="), "{t}");
        }
        let pid = fx.pid();
        fx.finish(&[pid]).await;
    })
    .await;
}
