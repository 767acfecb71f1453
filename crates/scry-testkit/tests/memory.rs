//! Language servers under a memory budget: the real engine and pool
//! against `scry-fake-lsp` scripted to allocate (and write) memory, itself
//! (`FAKE_LSP_GROW_MIB`, per request) or in a child process
//! (`FAKE_LSP_CHILD_MIB`). Each test checks what was done (restart over a
//! cap, stop over the budget), that the next answer and `status` say so
//! with the figures, that the next question is answered, and that a server
//! in use is never restarted under a call.
//!
//! Caps are tens of MiB and allocations well above them (a fake server
//! alone is a few MiB), so the figures hold with a wide margin on a loaded
//! machine; waits are generous. Linux and Windows: where
//! `scry_lsp_session::process::memory` has figures (`/proc`; the server's job).
#![cfg(any(target_os = "linux", windows))]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use scry_model::{Action, Answer, Body, Query};
use scry_ops::Engine;
use scry_render::reason_text;
use scry_workspace::Workspace;
use scry_workspace::config::Config;
use serde_json::{Value, json};
use tempfile::TempDir;

/// Upper bound of every test body.
const GUARD: Duration = Duration::from_secs(90);
const SOURCE: &str = "fn target() {}\nfn caller() { target(); }\n";

/// A fake server: id, file extension, `memoryMiB`, extra environment.
type ServerDef<'a> = (&'a str, &'a str, u64, &'a [(&'a str, &'a str)]);

struct Fixture {
    _dir: TempDir,
    base: PathBuf,
    engine: Engine,
}

impl Fixture {
    /// Servers `(id, extension, memoryMiB, env)`; `limits` merged into the
    /// configuration's limits. Each server's pid goes to `<id>.pid`, its
    /// child's (if any) to `<id>.child.pid` in the base directory.
    fn new(servers: &[ServerDef<'_>], limits: Value) -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = scry_base::paths::canonical(dir.path()).expect("canonical tempdir");
        let root = base.join("ws");
        std::fs::create_dir(&root).expect("workspace dir");
        let mut entries = serde_json::Map::new();
        for (id, ext, cap, env) in servers {
            std::fs::write(root.join(format!("a.{ext}")), SOURCE).expect("source");
            let mut vars = serde_json::Map::new();
            vars.insert("FAKE_LSP_METHOD".into(), "textDocument/hover".into());
            vars.insert(
                "FAKE_LSP_PID_FILE".into(),
                base.join(format!("{id}.pid")).to_string_lossy().into(),
            );
            vars.insert(
                "FAKE_LSP_CHILD_PID_FILE".into(),
                base.join(format!("{id}.child.pid"))
                    .to_string_lossy()
                    .into(),
            );
            for (k, v) in *env {
                vars.insert((*k).into(), (*v).into());
            }
            entries.insert(
                (*id).into(),
                json!({
                    "command": scry_testkit::built_binary(env!("CARGO_BIN_EXE_scry-fake-lsp")),
                    "fileTypes": [ext],
                    "env": vars,
                    "memoryMiB": cap,
                }),
            );
        }
        let layer = json!({ "autoDetect": false, "servers": entries, "limits": limits });
        let config = Config::from_layers(&[(PathBuf::from("test.json"), layer.to_string())])
            .expect("test configuration");
        let ws = Arc::new(Workspace::with_config(root, config).with_log_dir(None));
        Fixture {
            _dir: dir,
            base,
            engine: Engine::new(ws),
        }
    }

    fn ws(&self) -> &Arc<Workspace> {
        self.engine.workspace()
    }

    async fn hover(&self, ext: &str) -> Answer {
        let mut q = Query::new(Action::Hover);
        q.path = Some(PathBuf::from(format!("a.{ext}")));
        q.symbol = Some("target".into());
        q.timeout = Some(Duration::from_secs(20));
        let a = self.engine.run_query(&q).await.expect("hover answered");
        match &a.body {
            Body::Hover { text } => assert!(text.contains("fake target"), "{text}"),
            other => panic!("expected hover, got {other:?}"),
        }
        a
    }

    async fn status(&self) -> scry_model::StatusReport {
        let a = self
            .engine
            .run_query(&Query::new(Action::Status))
            .await
            .expect("status");
        match a.body {
            Body::Status(r) => r,
            other => panic!("expected status, got {other:?}"),
        }
    }

    fn pid_file(&self, name: &str) -> Option<u32> {
        std::fs::read_to_string(self.base.join(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The running pid of server `id`.
    fn pid(&self, id: &str) -> u32 {
        let u = self
            .ws()
            .usage()
            .into_iter()
            .find(|u| u.id == id)
            .unwrap_or_else(|| panic!("{id} is not running"));
        let pid = u.pid.expect("pid");
        assert_eq!(self.pid_file(&format!("{id}.pid")), Some(pid));
        pid
    }

    /// `id`'s process tree memory as sampled now, KiB and processes.
    fn memory(&self, id: &str) -> (u64, usize) {
        let u = self
            .ws()
            .usage_measured()
            .into_iter()
            .find(|u| u.id == id)
            .unwrap_or_else(|| panic!("{id} is not running"));
        let m = u.memory.expect("memory sampled");
        (m.rss_kib, m.processes)
    }
}

/// Whether `pid` has ended (a zombie, holding no memory, has).
fn gone(pid: u32) -> bool {
    scry_lsp_session::process::memory::rss_kib(pid).is_none()
}

async fn wait_gone(pid: u32) {
    let until = Instant::now() + Duration::from_secs(15);
    while !gone(pid) {
        assert!(
            Instant::now() < until,
            "process {pid} still there after 15 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits (up to 30 s) until `f` holds.
async fn wait_until(what: &str, f: impl Fn() -> bool) {
    let until = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < until, "timed out waiting: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn guarded<F: std::future::Future<Output = ()>>(f: F) {
    tokio::time::timeout(GUARD, f)
        .await
        .expect("test exceeded its time guard (hang)");
}

const MIB: u64 = 1024;

/// The figure in MiB that `text` gives after `prefix` ("it used 68.2 MiB").
fn mib_after(text: &str, prefix: &str) -> f64 {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix:?} not in {text:?}"));
    let rest = &text[at + prefix.len()..];
    let num: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let n: f64 = num
        .parse()
        .unwrap_or_else(|_| panic!("no figure in {rest:?}"));
    if rest[num.len()..].trim_start().starts_with("GiB") {
        n * 1024.0
    } else {
        assert!(rest[num.len()..].trim_start().starts_with("MiB"), "{rest}");
        n
    }
}

/// An answer's notes as worded.
fn said(a: &Answer) -> Vec<String> {
    a.notes
        .iter()
        .map(|n| reason_text(n, Path::new("/")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_grows_over_its_cap_is_restarted_before_the_next_call() {
    guarded(async {
        // Every hover makes the server allocate 64 MiB; its cap is 40 MiB.
        let fx = Fixture::new(
            &[("fakels", "fake", 40, &[("FAKE_LSP_GROW_MIB", "64")])],
            json!({ "memoryCheckMs": 1 }),
        );
        let first = fx.hover("fake").await;
        assert!(
            !said(&first).iter().any(|n| n.contains("restarted")),
            "{:?}",
            first.notes
        );
        let old = fx.pid("fakels");
        let (kib, _) = fx.memory("fakels");
        assert!(kib > 60 * MIB, "the server holds its 64 MiB: {kib} KiB");

        // The next call finds it over its cap, unused: restarted before
        // anything is sent, said with the figures, and answered.
        let second = fx.hover("fake").await;
        let notes = said(&second);
        let note = notes
            .iter()
            .find(|n| n.contains("was restarted"))
            .unwrap_or_else(|| panic!("no restart note in {:?}", second.notes));
        assert!(
            note.starts_with("fakels was restarted before this question: it used ")
                && note.contains("over its 40.0 MiB memory cap")
                && note.contains("memoryMiB"),
            "{note}"
        );
        eprintln!("note: {note}");
        let used = mib_after(note, "it used ");
        assert!(used > 60.0, "the figure is the server's memory: {note}");
        wait_gone(old).await;
        let new = fx.pid("fakels");
        assert_ne!(new, old, "a new process answered");

        // Told once: the answer after does not repeat it; status keeps it
        // and shows each server's memory against its cap.
        let status = fx.status().await;
        let ours = status
            .servers
            .iter()
            .find(|s| s.id == "fakels")
            .expect("fakels in status");
        let r = &ours.running[0];
        assert_eq!(r.memory_cap_kib, Some(40 * MIB));
        assert!(r.memory_kib.is_some_and(|k| k > 0), "{r:?}");
        assert!(
            status
                .memory_events
                .iter()
                .any(|e| scry_render::memory_action(&e.what)
                    .starts_with("fakels was restarted before this question")),
            "{:?}",
            status.memory_events
        );
        let text = scry_render::render_text(
            &fx.engine
                .run_query(&Query::new(Action::Status))
                .await
                .expect("status"),
            fx.ws().root(),
            &scry_render::RenderOptions::default(),
        );
        assert!(
            text.contains("(cap 40.0 MiB)") && text.contains("Memory: "),
            "{text}"
        );
        fx.engine.shutdown().await;
        wait_gone(new).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_process_tree_is_counted_and_restarted_together() {
    guarded(async {
        // The server itself stays small; its child holds 64 MiB.
        let fx = Fixture::new(
            &[("fakels", "fake", 40, &[("FAKE_LSP_CHILD_MIB", "64")])],
            json!({ "memoryCheckMs": 60000 }),
        );
        fx.hover("fake").await;
        let leader = fx.pid("fakels");
        wait_until("the child started", || {
            fx.pid_file("fakels.child.pid").is_some()
        })
        .await;
        let child = fx.pid_file("fakels.child.pid").expect("child pid");
        wait_until("the child holds its memory", || {
            scry_lsp_session::process::memory::rss_kib(child).is_some_and(|k| k > 60 * MIB)
        })
        .await;
        let own = scry_lsp_session::process::memory::rss_kib(leader).expect("leader rss");
        assert!(
            own < 40 * MIB,
            "the leader alone is under the cap: {own} KiB"
        );
        let (kib, processes) = fx.memory("fakels");
        assert!(processes >= 2, "the child is counted: {processes}");
        assert!(kib > 60 * MIB, "the tree is summed: {kib} KiB");

        // The periodic check (here called directly): unused, over its cap:
        // restarted between requests, its child with it.
        let events = fx.ws().check_memory();
        assert_eq!(events.len(), 1, "{events:?}");
        let e = &events[0];
        assert_eq!(e.server, "fakels");
        let text = scry_render::memory_action(&e.what);
        eprintln!("event: {text}");
        assert!(
            text.starts_with("fakels was restarted between requests: it used ")
                && text.contains(" in 2 processes, over its 40.0 MiB memory cap"),
            "{}",
            text
        );
        assert!(mib_after(&text, "it used ") > 60.0, "{}", text);
        wait_gone(leader).await;
        wait_gone(child).await;

        // The next question is answered by a new process and says why.
        let next = fx.hover("fake").await;
        assert!(
            said(&next).contains(&text),
            "the restart is told in the next answer: {:?}",
            next.notes
        );
        let new = fx.pid("fakels");
        assert_ne!(new, leader);
        fx.engine.shutdown().await;
        wait_gone(new).await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_in_use_is_never_restarted_under_its_call() {
    guarded(async {
        // Over its cap from the start (its child), and each hover takes 3 s.
        let fx = Fixture::new(
            &[(
                "fakels",
                "fake",
                40,
                &[
                    ("FAKE_LSP_CHILD_MIB", "64"),
                    ("FAKE_LSP_MODE", "slow"),
                    ("FAKE_LSP_DELAY_MS", "3000"),
                ],
            )],
            json!({ "memoryCheckMs": 60000 }),
        );
        let engine = fx.engine.clone();
        let call = tokio::spawn(async move {
            let mut q = Query::new(Action::Hover);
            q.path = Some(PathBuf::from("a.fake"));
            q.symbol = Some("target".into());
            q.timeout = Some(Duration::from_secs(30));
            engine.run_query(&q).await
        });
        // Wait for the call to be in flight with the child holding memory.
        wait_until("the child holds its memory", || {
            fx.pid_file("fakels.child.pid")
                .and_then(scry_lsp_session::process::memory::rss_kib)
                .is_some_and(|k| k > 60 * MIB)
        })
        .await;
        wait_until("the server is running", || !fx.ws().usage().is_empty()).await;
        let pid = fx.pid("fakels");
        // Checks while the call is in flight leave the server alone. (The
        // call may end its use of the server a moment before its task
        // ends: a restart then is between requests, and allowed.)
        let mut quiet = 0;
        let mut events = Vec::new();
        while !call.is_finished() {
            events = fx.ws().check_memory();
            if !events.is_empty() {
                break;
            }
            assert!(!gone(pid), "the server went away under the call");
            quiet += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let a = call.await.expect("call task").expect("answered");
        assert!(matches!(a.body, Body::Hover { .. }), "{a:?}");
        assert!(
            quiet >= 3,
            "checks during the 3 s request: {quiet} (restarted: {events:?})"
        );
        // Now unused: restarted.
        if events.is_empty() {
            events = fx.ws().check_memory();
        }
        assert_eq!(events.len(), 1, "{events:?}");
        wait_gone(pid).await;
        fx.engine.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_budget_the_least_recently_used_idle_server_is_stopped() {
    guarded(async {
        // Two servers of ~36 MiB each (caps out of the way), a 50 MiB
        // budget for both together.
        let grow: &[(&str, &str)] = &[("FAKE_LSP_GROW_MIB", "32")];
        let fx = Fixture::new(
            &[("fakea", "fa", 1000, grow), ("fakeb", "fb", 1000, grow)],
            json!({ "memoryCheckMs": 60000, "memoryBudgetMiB": 50 }),
        );
        fx.hover("fa").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        fx.hover("fb").await;
        let (a_pid, b_pid) = (fx.pid("fakea"), fx.pid("fakeb"));
        let (a_kib, _) = fx.memory("fakea");
        let (b_kib, _) = fx.memory("fakeb");
        assert!(a_kib > 30 * MIB && b_kib > 30 * MIB, "{a_kib} {b_kib}");

        let events = fx.ws().check_memory();
        assert_eq!(events.len(), 1, "one stop brings them under: {events:?}");
        let e = &events[0];
        let text = scry_render::memory_action(&e.what);
        eprintln!("event: {text}");
        assert_eq!(e.server, "fakea", "the least recently used: {}", text);
        assert!(
            text.starts_with("fakea was stopped: the language servers used ")
                && text.contains("together, over the 50.0 MiB budget (`limits.memoryBudgetMiB`)")
                && text.contains("least recently used idle one"),
            "{}",
            text
        );
        assert!(mib_after(&text, "servers used ") > 60.0, "{}", text);
        wait_gone(a_pid).await;
        assert!(!gone(b_pid), "the other server keeps running");
        assert_eq!(fx.pid("fakeb"), b_pid);

        // The next question about it starts it again and says why.
        let next = fx.hover("fa").await;
        assert!(said(&next).contains(&text), "{:?}", next.notes);
        assert_ne!(fx.pid("fakea"), a_pid);
        let status = fx.status().await;
        assert!(
            status
                .memory_events
                .iter()
                .any(|x| scry_render::memory_action(&x.what) == text),
            "{:?}",
            status.memory_events
        );
        fx.engine.shutdown().await;
    })
    .await;
}
