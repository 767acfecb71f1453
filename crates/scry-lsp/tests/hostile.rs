//! A hostile workspace against the real daemon and real servers: a FIFO, a
//! unix socket and a symlink to `/dev/zero` with source extensions; a 1 MB
//! single line with 70,000 uses of a name in Python (pyright answers) and
//! in Ruby (no server: the syntactic index answers); a 5 MB minified
//! JavaScript bundle; a binary file with a source extension; a tree of many
//! small files. Every call ends within its deadline + 1 s (a call that must
//! start a server gets its own wide deadline, and the same bound), the
//! daemon's peak RSS (VmHWM) stays under [`DAEMON_HWM_BOUND_KIB`], and after
//! all of it `scry daemon status` answers at once and a question on another
//! workspace is answered by the same daemon.
//!
//! Before the fixes these calls hung forever (the FIFO), ran for minutes or
//! were OOM-killed (the long lines): see issue 19. Timings are bounds with a
//! wide margin, never measurements (the latency bench measures).
//!
//! Unix only: FIFOs, Unix sockets and `/dev/zero` are its special files,
//! and the daemon's peak RSS is read from `/proc` (the Windows special
//! files are issue 29's item 6).
#![cfg(unix)]

mod common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::process::{alive, kill, scry_in};
use serde_json::Value;

/// The daemon's peak resident memory stays under this (KiB): 1.5 GiB. The
/// daemon itself (without servers: they are separate processes) holds the
/// syntactic index and one call's answers; before the fixes one call on the
/// Ruby file grew it past 3.7 GB and the Python one to 23.5 GB.
const DAEMON_HWM_BOUND_KIB: u64 = 1536 * 1024;

/// How many small files the tree holds (empty `.txt`/`.rb` files in 100
/// directories): the issue's 100,000 (the whole suite took ~30 s with them
/// on the 2-core machine; `SCRY_HOSTILE_TREE_FILES` to change).
fn tree_files() -> usize {
    std::env::var("SCRY_HOSTILE_TREE_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

struct Env {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
    extra_env: Vec<(String, String)>,
    /// Keeps the socket file bound.
    _listener: Option<std::os::unix::net::UnixListener>,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(base.join("config.json"), "{}").unwrap();
        Env {
            _tmp: tmp,
            base,
            ws,
            extra_env: Vec::new(),
            _listener: None,
        }
    }

    fn cmd_in(&self, dir: &Path, args: &[&str]) -> Command {
        let mut c = scry_in(&self.base, dir, args);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        for (k, v) in &self.extra_env {
            c.env(k, v);
        }
        c
    }

    /// Run `scry args` in `dir`, killed after `limit`: (output, how long it
    /// took). A call still running at `limit` fails the test (it hung).
    fn run_in(&self, dir: &Path, args: &[&str], limit: Duration) -> (Output, Duration) {
        let t = Instant::now();
        let mut child = self.cmd_in(dir, args).spawn().unwrap();
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if t.elapsed() > limit {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                panic!(
                    "scry {args:?} still running after {limit:?} (it hangs): {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let took = t.elapsed();
        (child.wait_with_output().unwrap(), took)
    }

    fn run(&self, args: &[&str], limit: Duration) -> (Output, Duration) {
        self.run_in(&self.ws, args, limit)
    }

    /// `scry daemon status --json`, bounded.
    fn status(&self) -> (Value, Duration) {
        let (out, took) = self.run(&["daemon", "status", "--json"], Duration::from_secs(30));
        assert!(out.status.success(), "{out:?}");
        (serde_json::from_slice(&out.stdout).unwrap(), took)
    }

    fn daemon_pid(&self) -> Option<u32> {
        self.status().0["pid"].as_u64().map(|p| p as u32)
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let pid = self.daemon_pid();
        let _ = self.cmd_in(&self.ws, &["daemon", "stop"]).output();
        if let Some(p) = pid {
            kill(p, "KILL");
        }
    }
}

/// The peak resident memory of `pid` in KiB (`VmHWM`).
fn hwm_kib(pid: u32) -> u64 {
    scry_testkit::proc::status_kib(&pid.to_string(), "VmHWM").unwrap()
}

fn pyright_installed() -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("pyright-langserver").exists()))
}

fn mkfifo(p: &Path) {
    let st = Command::new("mkfifo").arg(p).status().unwrap();
    assert!(st.success());
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A call with deadline `ms` ends within it + 1 s (+ the CLI's own start
/// and the connection, a few hundred ms on a loaded machine: 1.5 s in all).
fn within(ms: u64) -> Duration {
    Duration::from_millis(ms) + Duration::from_millis(1500)
}

/// The workspace: special files, long lines, a bundle, a binary file.
fn hostile_workspace(env: &mut Env) {
    let ws = env.ws.clone();
    mkfifo(&ws.join("fifo.py"));
    mkfifo(&ws.join("fifo.rb"));
    env._listener = Some(std::os::unix::net::UnixListener::bind(ws.join("sock.py")).unwrap());
    symlink("/dev/zero", ws.join("zero.py")).unwrap();
    symlink("/dev/zero", ws.join("zero.rb")).unwrap();
    symlink("fifo.py", ws.join("to_fifo.py")).unwrap();
    // Ruby: no server, the syntactic index answers. One ~1 MB line with
    // 70,000 uses of `target`.
    std::fs::write(ws.join("a.rb"), "def target\n  1\nend\n").unwrap();
    std::fs::write(
        ws.join("b.rb"),
        format!("{}\n", "target;       ".repeat(70_000)),
    )
    .unwrap();
    // Python: pyright answers. One ~1 MB line with 70,000 calls.
    std::fs::write(ws.join("lib.py"), "def short_fn():\n    return 1\n").unwrap();
    std::fs::write(
        ws.join("longline.py"),
        format!(
            "from lib import short_fn\n{}\n",
            "short_fn();   ".repeat(70_000)
        ),
    )
    .unwrap();
    // A 5 MB minified bundle, one line.
    let mut js = String::with_capacity(5_300_000);
    let mut i = 0;
    while js.len() < 5_200_000 {
        js.push_str(&format!("var f{i}=function(a){{return a+{i}}};"));
        i += 1;
    }
    std::fs::write(ws.join("bundle.js"), js).unwrap();
    // A binary file with a source extension.
    let mut bin = b"\x7fELF\x02\x01\x01\0".to_vec();
    bin.extend((0..200_000u32).map(|i| (i % 251) as u8));
    std::fs::write(ws.join("blob.py"), bin).unwrap();
}

#[test]
fn a_hostile_workspace_never_hangs_exhausts_or_kills_the_daemon() {
    let mut env = Env::new();
    hostile_workspace(&mut env);
    let started = Instant::now();

    // Special files: refused by name, at once, for every action, without a
    // server ever opening them.
    for f in ["fifo.py", "fifo.rb", "sock.py", "zero.py", "zero.rb"] {
        for args in [
            vec!["symbols", f],
            vec!["hover", f, "x"],
            vec!["refs", f, "x"],
            vec!["diag", f],
        ] {
            let mut a = args.clone();
            a.extend(["--timeout-ms", "3000"]);
            let (out, took) = env.run(&a, Duration::from_secs(60));
            assert!(took < within(3000), "{a:?} took {took:?}");
            let e = stderr(&out);
            assert!(!out.status.success(), "{a:?}: {}", stdout(&out));
            assert!(e.contains("NOT_A_REGULAR_FILE"), "{a:?}: {e}");
            assert!(e.contains(f), "names the file: {e}");
        }
    }
    let daemon = env.daemon_pid().expect("the daemon runs");

    // Ruby, syntactic: the long line's 70,000 uses, found in time, listed
    // capped, each source line clipped around its column. The first call
    // builds the index (seconds in a debug build on a loaded machine): it
    // answers or says TIMEOUT by its deadline; the build goes on in the
    // daemon and the next call answers.
    let (out, took) = env.run(
        &["refs", "a.rb", "target", "--timeout-ms", "5000"],
        Duration::from_secs(60),
    );
    assert!(took < within(5000), "ruby refs took {took:?}");
    assert!(
        out.status.success() || stderr(&out).contains("TIMEOUT"),
        "{}",
        stderr(&out)
    );
    let (out, took) = env.run(
        &["refs", "a.rb", "target", "--timeout-ms", "30000", "--json"],
        Duration::from_secs(90),
    );
    assert!(took < within(30_000), "ruby refs took {took:?}");
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v.to_string();
    assert!(text.contains("syntactic"), "{text:.2000}");
    let locs = v["locations"]
        .as_array()
        .or_else(|| v["result"]["locations"].as_array())
        .cloned()
        .unwrap_or_default();
    assert!(!locs.is_empty(), "{text:.2000}");
    for l in &locs {
        let t = l["text"].as_str().unwrap_or_default();
        assert!(
            t.chars().count() <= 202,
            "a clipped line: {} chars",
            t.len()
        );
    }
    assert!(
        text.contains('…'),
        "long lines are clipped with a marker: {text:.2000}"
    );
    let (out, took) = env.run(
        &["refs", "a.rb", "target", "--timeout-ms", "5000"],
        Duration::from_secs(60),
    );
    assert!(took < within(5000), "ruby refs took {took:?}");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("more"), "capped: {}", stdout(&out));

    // Python, pyright: the long line's 70,000 calls. pyright starts within
    // this call, so the deadline is wide; the call ends by it either way
    // (an answer, or a TIMEOUT said), never later and never killing the
    // daemon.
    if pyright_installed() {
        let (out, took) = env.run(
            &["refs", "lib.py", "short_fn", "--timeout-ms", "60000"],
            Duration::from_secs(180),
        );
        assert!(took < within(60_000), "python refs took {took:?}");
        let (o, e) = (stdout(&out), stderr(&out));
        assert!(
            out.status.success() || e.contains("TIMEOUT"),
            "python refs: {o} {e}"
        );
        if out.status.success() {
            assert!(o.contains("longline.py"), "{o:.3000}");
            assert!(
                o.lines().all(|l| l.chars().count() < 260),
                "clipped: {o:.3000}"
            );
        }
        // Asked in the long file itself, with a deadline a server start no
        // longer needs.
        let (out, took) = env.run(
            &[
                "refs",
                "longline.py",
                "short_fn",
                "--line",
                "2",
                "--timeout-ms",
                "10000",
            ],
            Duration::from_secs(120),
        );
        assert!(
            took < within(10_000),
            "python refs in the long file took {took:?}"
        );
        assert!(
            out.status.success() || stderr(&out).contains("TIMEOUT"),
            "{}",
            stderr(&out)
        );
    } else {
        assert!(
            !common::servers_required(),
            "pyright-langserver is not installed but SCRY_REQUIRE_SERVERS=1"
        );
        eprintln!("skipping the pyright part: pyright-langserver is not installed");
    }

    // The 5 MB bundle: over the file limit, said with its own code; a
    // question by name over the workspace skips it.
    let (out, took) = env.run(
        &["symbols", "bundle.js", "--timeout-ms", "5000"],
        Duration::from_secs(60),
    );
    assert!(took < within(5000), "bundle took {took:?}");
    assert!(stderr(&out).contains("FILE_TOO_LARGE"), "{}", stderr(&out));
    assert!(stderr(&out).contains("bundle.js"), "{}", stderr(&out));

    // The binary file: refused as not text.
    let (out, took) = env.run(
        &["symbols", "blob.py", "--timeout-ms", "5000"],
        Duration::from_secs(60),
    );
    assert!(took < within(5000), "binary took {took:?}");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("BINARY_FILE"), "{}", stderr(&out));

    // The map over all of it: special, oversize and binary files skipped.
    let (out, took) = env.run(&["map", "--timeout-ms", "10000"], Duration::from_secs(60));
    assert!(took < within(10_000), "map took {took:?}");
    assert!(out.status.success(), "{}", stderr(&out));

    // Diagnostics over the whole workspace: the special files are never
    // opened (the walk skips them), and the call ends by its deadline.
    let (_out, took) = env.run(
        &["diag", ".", "--timeout-ms", "10000"],
        Duration::from_secs(60),
    );
    assert!(took < within(10_000), "diag . took {took:?}");

    // A tree of many small files, in a workspace of its own.
    let tree = env.base.join("tree");
    for d in 0..100 {
        let dir = tree.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..tree_files() / 100 {
            let ext = if f % 10 == 0 { "rb" } else { "txt" };
            std::fs::write(dir.join(format!("f{f}.{ext}")), "").unwrap();
        }
    }
    std::fs::write(tree.join("main.rb"), "def hello\n  1\nend\nhello\n").unwrap();
    let (out, took) = env.run_in(
        &tree,
        &["refs", "main.rb", "hello", "--timeout-ms", "20000"],
        Duration::from_secs(120),
    );
    assert!(took < within(20_000), "tree refs took {took:?}");
    assert!(
        out.status.success() || stderr(&out).contains("TIMEOUT"),
        "{}",
        stderr(&out)
    );

    // After all of it: the same daemon, answering at once, within its
    // memory bound, and a normal question on another workspace.
    assert!(alive(daemon), "the daemon survived");
    let (s, took) = env.status();
    assert!(took < Duration::from_secs(3), "daemon status took {took:?}");
    assert_eq!(s["pid"].as_u64(), Some(daemon as u64), "the same daemon");
    let other = env.base.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("x.rb"), "def greet\n  1\nend\ngreet\n").unwrap();
    let (out, took) = env.run_in(
        &other,
        &["refs", "x.rb", "greet", "--timeout-ms", "5000"],
        Duration::from_secs(60),
    );
    assert!(took < within(5000), "other workspace took {took:?}");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("x.rb"), "{}", stdout(&out));
    assert_eq!(
        env.daemon_pid(),
        Some(daemon),
        "answered by the same daemon"
    );
    let hwm = hwm_kib(daemon);
    eprintln!(
        "hostile suite: daemon peak RSS {} MiB, {:?} in all",
        hwm / 1024,
        started.elapsed()
    );
    assert!(
        hwm < DAEMON_HWM_BOUND_KIB,
        "daemon peak RSS {hwm} KiB over the {DAEMON_HWM_BOUND_KIB} KiB bound"
    );
}

#[test]
fn a_panic_inside_one_call_is_an_internal_error_and_the_daemon_goes_on() {
    // The debug-build hook (`scry_ops::isolate::test_panic_hook`) makes the
    // engine panic for this symbol; release builds have no hook.
    if !cfg!(debug_assertions) {
        eprintln!("skipping: the panic hook exists in debug builds only");
        return;
    }
    let mut env = Env::new();
    env.extra_env
        .push(("SCRY_TEST_PANIC_SYMBOL".into(), "boom_panic".into()));
    std::fs::write(env.ws.join("a.rb"), "def target\n  1\nend\ntarget\n").unwrap();
    let (out, took) = env.run(
        &["refs", "a.rb", "boom_panic", "--timeout-ms", "5000"],
        Duration::from_secs(60),
    );
    assert!(took < within(5000), "the panicking call took {took:?}");
    let e = stderr(&out);
    assert!(!out.status.success());
    assert!(e.contains("INTERNAL"), "{e}");
    assert!(e.contains("boom_panic"), "the panic's message: {e}");
    let daemon = env.daemon_pid().expect("the daemon lives");
    let (out, _) = env.run(
        &["refs", "a.rb", "target", "--timeout-ms", "5000"],
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("a.rb"), "{}", stdout(&out));
    assert_eq!(env.daemon_pid(), Some(daemon), "the same daemon served on");
}

/// Issue 26's smaller points, through the daemon, each said as what it is:
/// `map` on a FIFO is refused like every other action; a configured index
/// that is a FIFO is "not a regular file", not "not found"; a Ruby file
/// only too large for the syntactic index is FILE_TOO_LARGE naming that
/// limit, not NO_SERVER; a 100,000-character symbol is echoed cut; a line
/// past the largest is out of range, not "must be positive"; renaming to
/// the same name is refused before any server is asked.
#[test]
fn special_and_oversized_inputs_are_said_as_what_they_are() {
    let mut env = Env::new();
    let ws = env.ws.clone();
    mkfifo(&ws.join("fifo.rb"));
    std::fs::write(ws.join("a.rb"), "def qux(a)\n  a\nend\nqux(1)\n").unwrap();
    std::fs::write(ws.join("a.py"), "def foo(a):\n    return a\n\nfoo(1)\n").unwrap();
    let mut big = String::from("def zap(a)\n  a\nend\n");
    while big.len() <= 1024 * 1024 + 10 {
        big.push_str("zap(1)\n");
    }
    std::fs::write(ws.join("big_one.rb"), &big).unwrap();
    let t = Duration::from_secs(60);
    let refused = |args: &[&str], code: &str| -> String {
        let (out, _) = env.run(args, t);
        let e = stderr(&out);
        let shown: Vec<String> = args.iter().map(|a| a.chars().take(40).collect()).collect();
        assert!(!out.status.success(), "{shown:?}: {:.2000}", stdout(&out));
        assert!(
            e.contains(&format!("error[{code}]")),
            "{shown:?}: {e:.2000}"
        );
        e
    };

    let e = refused(&["map", "fifo.rb"], "NOT_A_REGULAR_FILE");
    assert!(
        e.contains("fifo.rb is not a regular file (a named pipe)"),
        "{e}"
    );

    // (Were `zap` used in another file, those uses would be the answer,
    // with a note that big_one.rb is not in the index.)
    let e = refused(&["refs", "big_one.rb", "zap"], "FILE_TOO_LARGE");
    assert!(
        e.contains("over the 1024 KiB the syntactic index reads (a fixed limit)")
            && e.contains("no language server is configured for *.rb files"),
        "{e}"
    );

    let long = "x".repeat(100_000);
    let e = refused(&["refs", "a.py", &long], "SYMBOL_NOT_FOUND");
    assert!(e.chars().count() < 1000, "{} characters", e.chars().count());
    assert!(e.contains("…` (100000 characters)"), "{e:.1000}");

    let (out, _) = env.run(&["refs", "a.rb", "qux", "--line", "4294967296"], t);
    let e = stderr(&out);
    assert!(!out.status.success());
    assert!(
        e.contains("--line 4294967296 is out of range: at most 4294967295"),
        "{e}"
    );

    let e = refused(&["rename", "a.py", "foo", "foo"], "INVALID_ARGUMENT");
    assert!(e.contains("the name the symbol already has"), "{e}");

    // A configured CI index that is a FIFO (trusted, so it is read).
    mkfifo(&ws.join("idx.scip"));
    std::fs::write(ws.join(".scry.json"), r#"{"index": {"path": "idx.scip"}}"#).unwrap();
    env.extra_env.push(("SCRY_TRUST".into(), "all".into()));
    let (out, _) = env.run(&["status"], t);
    let s = stdout(&out);
    assert!(
        s.contains("idx.scip: not a regular file (a named pipe); scry reads only regular files"),
        "{s}"
    );
    assert!(!s.contains("idx.scip: not found"), "{s}");
}

/// Capped references asked in `big.rb`: the engine keeps the asked file's
/// uses among the 10,000 it considers and the list shows them first; the
/// header says how many were found (95,002) and how many are shown.
#[test]
fn capped_references_list_the_asked_file_first_and_say_the_true_total() {
    let env = Env::new();
    std::fs::write(env.ws.join("big.rb"), "def qux(a)\n  a\nend\nqux(1)\n").unwrap();
    std::fs::write(env.ws.join("big.py"), "qux()\n".repeat(95_000)).unwrap();
    let t = Duration::from_secs(120);
    let args = ["refs", "big.rb", "qux", "--timeout-ms", "60000"];
    let (out, _) = env.run(&args, t);
    let o = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut lines = o.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("95002 references to `qux` (at big.rb")
            && header.contains(", 100 shown — tree-sitter (syntactic)"),
        "{header}"
    );
    assert_eq!(lines.next(), Some("big.rb"), "{o:.600}");
    assert!(
        o.contains("… 94902 more references: 9900 in 1 file, 85002 past those considered"),
        "{o}"
    );
    let (out, _) = env.run(
        &["refs", "big.rb", "qux", "--timeout-ms", "60000", "--json"],
        t,
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["total"], 95_002, "{:.400}", v.to_string());
    assert_eq!(v["locations"][0]["path"], "big.rb");
    assert_eq!(v["omitted"]["count"], 95_002 - 100);
    assert_eq!(v["omitted"]["not_considered"], 95_002 - 10_000);
}

/// A client that writes requests and never reads its answers (issue 38):
/// `scry mcp` stops reading it once `scry_daemon::out::MAX_OWED` of answers
/// wait to go out, so the client's writes block and scry's memory stays
/// bounded (before: 938 MB after 130 s, then out of memory).
#[test]
fn an_mcp_client_that_never_reads_is_not_read_either() {
    use std::io::Write;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let env = Env::new();
    let mut child = env
        .cmd_in(&env.ws, &["mcp", "--no-daemon"])
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let written = Arc::new(AtomicU64::new(0));
    let counter = written.clone();
    let writer = std::thread::spawn(move || {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"never-reads","version":"0"}}}"#;
        let _ = writeln!(stdin, "{init}");
        let _ = writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        );
        // Each answer (the tool list) is some 3 KB: 200,000 of them would
        // be 600 MB owed.
        for i in 1..=200_000u64 {
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/list\"}}\n");
            if stdin.write_all(line.as_bytes()).is_err() {
                return;
            }
            counter.fetch_add(line.len() as u64, Ordering::SeqCst);
        }
    });
    // Stalled: nothing more written for 2 s (scry stopped reading).
    let stalled = scry_testkit::proc::stalls(
        &written,
        Duration::from_secs(2),
        Duration::from_secs(60),
        || writer.is_finished(),
    );
    let peak = hwm_kib(pid);
    let _ = child.kill();
    let _ = child.wait();
    let _ = writer.join();
    assert!(
        stalled,
        "scry mcp read {} bytes of requests while its answers were never read",
        written.load(Ordering::SeqCst)
    );
    assert!(
        peak < 200 * 1024,
        "scry mcp's peak memory {peak} KiB with a client that never reads"
    );
}
