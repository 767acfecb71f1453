//! scry's added latency per request over driving the same language server
//! directly, side by side, as ratios, on each route a question takes.
//!
//! Per case (a server on a workspace; see [`CASES`]), four routes ask the
//! same questions (references and definition, by name and by line +
//! column), each against its own copy of the workspace where it runs a
//! server:
//!
//! * **raw**: the server spawned here with `tokio::process`, spoken to through
//!   `scry_rpc::Connection` only: `initialize`, `initialized`, `didOpen` of the
//!   two files, then `textDocument/references` / `textDocument/definition` at
//!   the known positions.
//! * **engine**: one `scry_ops::Engine` over `Workspace::open(copy)`; each
//!   timed call is `engine.run_query(&query)` plus `scry_render::render_text`.
//! * **mcp**: the same engine behind `scry_mcp::serve` (its `Local`
//!   answerer) over an in-process pipe: an `lsp` tools/call, one JSON line
//!   each way (the MCP front end's cost over the engine).
//! * **daemon**: the built `scry mcp` as a child process over stdio, which
//!   answers through its daemon (started in private directories on the
//!   first call): MCP stdio front end → daemon socket → engine → server, as
//!   a model's client runs it (the daemon's hop over the in-process MCP).
//!
//! Cases: `clangd` and `pyright` on `fixtures/c` and `fixtures/python`
//! (positions from `fixtures/expected.json`), `pyright-large` (a generated
//! 5,000-line module), and, opt-in, `pyright-click` (the installed
//! `click`) and `rust-analyzer-clap` (`clap_builder` from the cargo
//! registry, `command.rs` of 5,296 lines): see `latency/large.rs`.
//!
//! Only warm servers are timed: each route first repeats `references` until
//! its server returns the full answer (or, where it is not known, the same
//! answer three times): raw and engine at once, then the daemon route
//! alone, whose daemon and server start only then. Right after the daemon
//! route's first full answer, its next 30 questions by name and by
//! position are timed as the **first session** on a fresh daemon (what
//! runs beside the first calls shows there, not the other routes' servers
//! warming up), and a fresh raw server's first 30 references the same way
//! (what the server itself still does then). Then the bench waits until
//! the servers are quiet ([`daemon::quiet`]), every route runs untimed
//! warm-up iterations, and the timed requests are interleaved in rounds
//! (the routes' order rotating) so that noise from the rest of the machine
//! hits every route alike. The daemon route's two processes are also
//! measured per call from `/proc` ([`daemon::Spent`]: CPU, waiting for a
//! core, context switches).
//!
//! Per case it also prints where scry's added time goes, each part alone
//! (medians of 200): the watched-files drain, a raw `documentSymbol`, the
//! session's cached one, the disk sync, the occurrence scan of the named
//! file, and the MCP hop's parts (the bench's pipe, a `ping`, a refused
//! call, a timer's first tick, the reply's JSON).
//!
//! **Instruction counts** (`SCRY_BENCH_CALLGRIND=DIR`): the bench runs
//! itself under Callgrind and, instead of timing, counts the instructions
//! of 20 calls per route and question (`scry mcp` and its daemon run under
//! Callgrind too, dumped from outside, an idle block taken off),
//! printed per call: scry's own work, free of the machine's noise (see
//! `latency/callgrind.rs`).
//!
//! * **hostile** (only when `SCRY_BENCH_SERVERS` names it): the hostile
//!   workspace cases of issue 19 (a FIFO, 70,000 uses on one long line in
//!   Ruby and Python, a 5 MB bundle) through the built `scry` and its daemon,
//!   wall time and the daemon's peak RSS, before/after ratios against
//!   `SCRY_BENCH_BEFORE` (an older `scry` binary) — see `latency/hostile.rs`.
//!
//! Run: `cargo bench -p scry-lsp --bench latency`
//! Environment: `SCRY_BENCH_ITERS` (default 30), `SCRY_BENCH_SERVERS`
//! (comma list of cases, default `clangd,pyright,pyright-large`; add
//! `pyright-click`, `rust-analyzer-clap`, `hostile`), `SCRY_BENCH_SCRY`
//! (the `scry` the daemon route runs, default this build's),
//! `SCRY_BENCH_CALLGRIND`, `SCRY_BENCH_BEFORE`.

#[path = "latency/callgrind.rs"]
mod callgrind;
#[path = "latency/daemon.rs"]
mod daemon;
#[path = "latency/hostile.rs"]
mod hostile;
#[path = "latency/large.rs"]
mod large;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use scry_model::{Action, Answer, Body, Query};
use scry_ops::Engine;
use scry_render::{RenderOptions, render_text};
use scry_rpc::{Connection, ConnectionOptions, Handler, ResponseError};
use scry_testkit::{Stats, stats};
use scry_workspace::Workspace;
use serde_json::{Value, json};

const ROUNDS: usize = 5;
/// LSP's `ContentModified` error code.
const CONTENT_MODIFIED: i64 = -32801;
const WARMUP_ITERS: usize = 5;
/// How many questions of each kind the first session times.
const FIRST_SESSION: usize = 30;
/// How many calls per route and question Callgrind counts.
const COUNTED_CALLS: usize = 20;

// ------------------------------------------------------------------ fixtures

struct ServerDef {
    /// Display name and the command on PATH.
    name: &'static str,
    command: &'static str,
    args: &'static [&'static str],
    /// Key in `fixtures/expected.json` and folder under `fixtures/`.
    lang: &'static str,
    language_id: &'static str,
    /// What `workspace/configuration` is answered with (same as scry's catalog).
    settings: fn() -> Value,
}

const SERVERS: &[ServerDef] = &[
    ServerDef {
        name: "clangd",
        command: "clangd",
        args: &[],
        lang: "c",
        language_id: "c",
        settings: || Value::Null,
    },
    ServerDef {
        name: "rust-analyzer",
        command: "rust-analyzer",
        args: &[],
        lang: "rust",
        language_id: "rust",
        settings: || Value::Null,
    },
    ServerDef {
        name: "pyright",
        command: "pyright-langserver",
        args: &["--stdio"],
        lang: "python",
        language_id: "python",
        settings: || {
            json!({"python": {"analysis": {
                "autoSearchPaths": true,
                "useLibraryCodeForTypes": true,
                "diagnosticMode": "openFilesOnly"
            }}})
        },
    },
];

/// A position from expected.json: file relative to the fixture root,
/// 1-based line and character column.
#[derive(Clone, Debug)]
struct Pos {
    file: String,
    line: u32,
    col: u32,
}

fn pos(v: &Value) -> Pos {
    Pos {
        file: v["path"].as_str().unwrap().to_string(),
        line: v["line"].as_u64().unwrap() as u32,
        col: v["col"].as_u64().unwrap() as u32,
    }
}

/// A copy of `fixtures/<lang>` and its canonical path (`scry_testkit`: no
/// caches; for C a `compile_commands.json` with the copy's absolute
/// directory, so clangd's background index runs).
fn copy_fixture(lang: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = scry_testkit::copy_fixture(lang);
    let dir = scry_base::paths::canonical(tmp.path()).expect("canonical tempdir");
    (tmp, dir)
}

/// 0-based LSP character of a 1-based character column. The benchmark only
/// uses ASCII lines, where every encoding agrees; anything else is refused.
fn lsp_character(dir: &Path, p: &Pos) -> u32 {
    let text = std::fs::read_to_string(dir.join(&p.file)).unwrap();
    let line = text.lines().nth(p.line as usize - 1).unwrap();
    assert!(line.is_ascii(), "{}:{} is not ASCII", p.file, p.line);
    p.col - 1
}

fn uri(path: &Path) -> String {
    scry_base::uri::path_to_uri(path)
}

// ------------------------------------------------------------------ raw client

/// Answers what servers ask the client, minimally.
struct RawHandler {
    settings: Value,
}

impl Handler for RawHandler {
    fn on_request(&self, method: &str, params: Value) -> Result<Value, ResponseError> {
        match method {
            "workspace/configuration" => Ok(Value::Array(
                params["items"]
                    .as_array()
                    .map(|items| {
                        items
                            .iter()
                            .map(|it| {
                                scry_lsp_session::handler::lookup_section(
                                    &self.settings,
                                    it["section"].as_str(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            )),
            "workspace/workspaceFolders" => Ok(Value::Null),
            _ => Ok(Value::Null),
        }
    }
    fn on_notification(&self, _method: &str, _params: Value) {}
}

struct Raw {
    conn: Connection,
    child: tokio::process::Child,
}

impl Raw {
    async fn start(def: &ServerDef, dir: &Path, open: &[&str]) -> Raw {
        let mut child = tokio::process::Command::new(def.command)
            .args(def.args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn server");
        let conn = Connection::start(
            format!("{}(raw)", def.name),
            child.stdout.take().unwrap(),
            child.stdin.take().unwrap(),
            Arc::new(RawHandler {
                settings: (def.settings)(),
            }),
            ConnectionOptions::default(),
        );
        let root = uri(dir);
        // The same capabilities scry advertises, so both sides negotiate the
        // same position encoding and features.
        conn.request(
            "initialize",
            Some(json!({
                "processId": std::process::id(),
                "rootUri": root,
                "rootPath": dir.to_string_lossy(),
                "workspaceFolders": [{"uri": root, "name": "bench"}],
                "capabilities": scry_lsp_session::client_capabilities(),
            })),
        )
        .await
        .expect("initialize");
        conn.notify("initialized", Some(json!({}))).unwrap();
        let settings = (def.settings)();
        if !settings.is_null() {
            conn.notify(
                "workspace/didChangeConfiguration",
                Some(json!({ "settings": settings })),
            )
            .unwrap();
        }
        for f in open {
            let path = dir.join(f);
            conn.notify(
                "textDocument/didOpen",
                Some(json!({"textDocument": {
                    "uri": uri(&path),
                    "languageId": def.language_id,
                    "version": 1,
                    "text": std::fs::read_to_string(&path).unwrap(),
                }})),
            )
            .unwrap();
        }
        Raw { conn, child }
    }

    /// One request; returns the number of locations in the result. A
    /// "content modified" error (rust-analyzer while it loads the
    /// workspace) is asked again, as a client would.
    async fn ask(&self, method: &str, params: &Value) -> usize {
        let mut tries = 0;
        let v = loop {
            match self.conn.request(method, Some(params.clone())).await {
                Err(scry_rpc::RpcError::Server { error, .. })
                    if error.code == CONTENT_MODIFIED && tries < 50 =>
                {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                r => break r.expect("raw request"),
            }
        };
        match v {
            Value::Array(a) => a.len(),
            Value::Null => 0,
            _ => 1,
        }
    }

    async fn stop(mut self) {
        let _ =
            tokio::time::timeout(Duration::from_secs(2), self.conn.request("shutdown", None)).await;
        let _ = self.conn.notify("exit", None);
        let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        let _ = self.child.kill().await;
    }
}

fn position_params(dir: &Path, p: &Pos, refs: bool) -> Value {
    let mut v = json!({
        "textDocument": {"uri": uri(&dir.join(&p.file))},
        "position": {"line": p.line - 1, "character": lsp_character(dir, p)},
    });
    if refs {
        v["context"] = json!({"includeDeclaration": true});
    }
    v
}

// ------------------------------------------------------------------ scry side

fn count(a: &Answer) -> usize {
    match &a.body {
        Body::Locations { locations } => locations.len(),
        _ => 0,
    }
}

/// One scry call as a front end makes it: run + render_text. Returns the
/// location count and the rendered length.
async fn scry_call(engine: &Engine, q: &Query, opts: &RenderOptions) -> (usize, Answer) {
    let a = engine.run_query(q).await.expect("scry run");
    let text = render_text(&a, engine.workspace().root(), opts);
    std::hint::black_box(&text);
    (count(&a), a)
}

fn query(action: Action, p: &Pos, by_name: Option<&str>) -> Query {
    let mut q = Query::new(action);
    q.path = Some(PathBuf::from(&p.file));
    match by_name {
        Some(sym) => q.symbol = Some(sym.to_string()),
        None => {
            q.line = Some(p.line);
            q.column = Some(p.col);
        }
    }
    q
}

// ------------------------------------------------------------------ cases

/// Where a case's workspace comes from.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// `fixtures/<lang>`, positions from `fixtures/expected.json`.
    Fixture,
    /// `fixtures/python` with the generated 5,000-line `ledger.py`.
    Ledger,
    /// The installed `click` package.
    Click,
    /// `clap_builder` from the cargo registry.
    Clap,
}

/// A server on a workspace, and the questions asked of it.
struct Case {
    /// Its name in the table and in `SCRY_BENCH_SERVERS`.
    name: &'static str,
    /// Its [`ServerDef`].
    server: &'static str,
    kind: Kind,
}

const CASES: &[Case] = &[
    Case {
        name: "clangd",
        server: "clangd",
        kind: Kind::Fixture,
    },
    Case {
        name: "pyright",
        server: "pyright",
        kind: Kind::Fixture,
    },
    Case {
        name: "pyright-large",
        server: "pyright",
        kind: Kind::Ledger,
    },
    Case {
        name: "pyright-click",
        server: "pyright",
        kind: Kind::Click,
    },
    Case {
        name: "rust-analyzer-clap",
        server: "rust-analyzer",
        kind: Kind::Clap,
    },
];

/// The cases run when `SCRY_BENCH_SERVERS` is not set.
const DEFAULT_CASES: &str = "clangd,pyright,pyright-large";

/// What a case asks, found in its copy.
struct Asked {
    symbol: String,
    /// The definition: references are asked here (by name: in its file).
    def_pos: Pos,
    /// A use: definition is asked here.
    call_pos: Pos,
    /// The references count of a warm server, where it is known.
    full_refs: Option<usize>,
    /// How long a route may take to warm up.
    warm_within: Duration,
}

impl Case {
    fn def(&self) -> &'static ServerDef {
        SERVERS.iter().find(|d| d.name == self.server).unwrap()
    }

    /// A fresh copy of the workspace and its canonical path; `None` when
    /// its source is not on this machine.
    fn copy(&self) -> Option<(tempfile::TempDir, PathBuf)> {
        match self.kind {
            Kind::Fixture => Some(copy_fixture(self.def().lang)),
            Kind::Ledger => {
                let (tmp, dir) = copy_fixture("python");
                large::write_ledger(&dir);
                Some((tmp, dir))
            }
            Kind::Click => {
                let src = large::click()?;
                let (tmp, dir) = scry_testkit::canonical_tempdir();
                scry_testkit::copy_tree(&src, &dir.join("click"));
                Some((tmp, dir))
            }
            Kind::Clap => {
                let src = large::clap_builder()?;
                let (tmp, dir) = scry_testkit::canonical_tempdir();
                scry_testkit::copy_tree(&src, &dir);
                Some((tmp, dir))
            }
        }
    }

    fn asked(&self, dir: &Path, expected: &Value) -> Asked {
        let quick = Duration::from_secs(60);
        match self.kind {
            Kind::Fixture => {
                let e = &expected[self.def().lang]["total_weight"];
                Asked {
                    symbol: e["symbol"].as_str().unwrap().to_string(),
                    def_pos: pos(&e["definition"]), // file A
                    call_pos: pos(&e["calls"][0]),  // file B (ASCII line)
                    // Definition + declarations + imports + calls.
                    full_refs: Some(
                        1 + e["declarations"].as_array().unwrap().len()
                            + e["imports"].as_array().unwrap().len()
                            + e["calls"].as_array().unwrap().len(),
                    ),
                    warm_within: quick,
                }
            }
            Kind::Ledger => {
                let (def_pos, call_pos, full) = large::ledger_positions(dir);
                Asked {
                    symbol: large::SYMBOL.to_string(),
                    def_pos,
                    call_pos,
                    full_refs: Some(full),
                    warm_within: quick,
                }
            }
            Kind::Click => Asked {
                symbol: "make_context".into(),
                def_pos: large::find(dir, "click/core.py", "def make_context(", "make_context", 0)
                    .unwrap(),
                call_pos: large::find(
                    dir,
                    "click/core.py",
                    "cmd.make_context(cmd_name, args, parent=ctx)",
                    "make_context",
                    0,
                )
                .unwrap(),
                full_refs: None,
                warm_within: Duration::from_secs(120),
            },
            Kind::Clap => Asked {
                symbol: "get_bin_name".into(),
                def_pos: large::find(
                    dir,
                    "src/builder/command.rs",
                    "pub fn get_bin_name(&self)",
                    "get_bin_name",
                    0,
                )
                .unwrap(),
                call_pos: large::find(
                    dir,
                    "src/output/help_template.rs",
                    "self.cmd.get_bin_name()",
                    "get_bin_name",
                    0,
                )
                .unwrap(),
                full_refs: None,
                warm_within: Duration::from_secs(600),
            },
        }
    }
}

/// Whether a route is warm, from the references counts it got so far: at
/// least the full count, or (not known) the same nonzero count three times
/// running.
fn is_warm(counts: &[usize], full: Option<usize>) -> bool {
    match full {
        Some(f) => counts.last().is_some_and(|&n| n >= f),
        None => {
            counts.len() >= 3 && {
                let last = &counts[counts.len() - 3..];
                last[0] > 0 && last.iter().all(|&n| n == last[0])
            }
        }
    }
}

/// Repeat `ask` (a references count) until warm or `within` ran out;
/// returns the last count.
async fn warm_up<F, Fut>(within: Duration, full: Option<usize>, mut ask: F) -> usize
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    let deadline = Instant::now() + within;
    let mut counts = Vec::new();
    while Instant::now() < deadline {
        counts.push(ask().await);
        if is_warm(&counts, full) {
            break;
        }
        tokio::time::sleep(warm_pause(full)).await;
    }
    counts.last().copied().unwrap_or(0)
}

/// The pause between two warm-up questions: short when the full answer
/// is known, else long enough for "the same three times" to mean done.
fn warm_pause(full: Option<usize>) -> Duration {
    Duration::from_millis(if full.is_some() { 100 } else { 1000 })
}

// ------------------------------------------------------------------ routes

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Route {
    Raw,
    Engine,
    Mcp,
    Daemon,
}

const ROUTES: [Route; 4] = [Route::Raw, Route::Engine, Route::Mcp, Route::Daemon];

impl Route {
    fn name(self) -> &'static str {
        match self {
            Route::Raw => "raw",
            Route::Engine => "engine",
            Route::Mcp => "mcp",
            Route::Daemon => "daemon",
        }
    }
}

/// One question on every route.
struct Op {
    name: &'static str,
    /// The raw request: method and params (positions in the raw copy).
    raw: (&'static str, Value),
    /// The engine's query (paths relative to its copy's root).
    query: Query,
    /// The `lsp` tool's arguments (the same question).
    args: Value,
}

/// The `lsp` tool arguments of a query.
fn tool_args(q: &Query) -> Value {
    let mut a = json!({
        "action": q.action.name(),
        "path": q.path.as_ref().unwrap().to_string_lossy(),
    });
    if let Some(s) = &q.symbol {
        a["symbol"] = json!(s);
    }
    if let (Some(l), Some(c)) = (q.line, q.column) {
        a["line"] = json!(l);
        a["column"] = json!(c);
    }
    a
}

/// The locations a tool result lists (its `structuredContent`'s `total`,
/// else its `locations`), 0 for an error.
fn tool_count(result: &Value) -> usize {
    if result["isError"] == json!(true) {
        return 0;
    }
    let s = &result["structuredContent"];
    s["total"]
        .as_u64()
        .map(|n| n as usize)
        .or_else(|| s["locations"].as_array().map(Vec::len))
        .unwrap_or(0)
}

/// Everything a case runs: a server per route.
struct Routes {
    raw: Raw,
    engine: Engine,
    mcp: McpClient,
    daemon: daemon::Route,
    opts: RenderOptions,
}

impl Routes {
    /// One call of `op` on `route`; the location count it got.
    async fn ask(&mut self, route: Route, op: &Op) -> usize {
        match route {
            Route::Raw => self.raw.ask(op.raw.0, &op.raw.1).await,
            Route::Engine => scry_call(&self.engine, &op.query, &self.opts).await.0,
            Route::Mcp => {
                let r = self
                    .mcp
                    .call("tools/call", json!({"name": "lsp", "arguments": op.args}))
                    .await;
                tool_count(&r["result"])
            }
            Route::Daemon => tool_count(&self.daemon.ask(&op.args).await),
        }
    }
}

// ------------------------------------------------------------------ one case

struct Row {
    op: &'static str,
    /// Per route (in [`ROUTES`] order): its timings.
    times: Vec<Stats>,
    results: String,
    /// The daemon route's processes, per call: `scry mcp`'s and the
    /// daemon's (see [`daemon::Spent`]).
    spent: (daemon::Spent, daemon::Spent),
}

/// What one case measured.
struct CaseResult {
    rows: Vec<Row>,
    /// The daemon route's first session: (op, median ms) by name and by
    /// position.
    first: Vec<(&'static str, Stats)>,
    /// What the daemon route's two processes spent per call in the first
    /// session (both questions): `scry mcp`'s, the daemon's.
    first_spent: (daemon::Spent, daemon::Spent),
    /// Instructions per call (Callgrind): (op, route, instructions).
    counts: Vec<(&'static str, Route, f64)>,
}

async fn bench_case(case: &Case, iters: usize, expected: &Value) -> Option<CaseResult> {
    let def = case.def();
    if !scry_testkit::on_path(def.command) {
        println!("{}: `{}` not on PATH; skipped", case.name, def.command);
        return None;
    }
    let Some((_raw_tmp, raw_dir)) = case.copy() else {
        println!(
            "{}: its workspace is not on this machine; skipped",
            case.name
        );
        return None;
    };
    let (_scry_tmp, scry_dir) = case.copy()?;
    let (_daemon_tmp, daemon_dir) = case.copy()?;
    let asked = case.asked(&raw_dir, expected);
    let Asked {
        symbol,
        def_pos,
        call_pos,
        full_refs,
        warm_within,
    } = &asked;
    let open = [def_pos.file.as_str(), call_pos.file.as_str()];
    let counting = callgrind::dir();

    let t0 = Instant::now();
    let raw = Raw::start(def, &raw_dir, &open).await;
    let ws = Workspace::open(&scry_dir).expect("workspace");
    let engine = Engine::new(Arc::new(ws));
    let opts = RenderOptions::default();
    let mcp = McpClient::start(&engine).await;
    let daemon = daemon::Route::start(&daemon_dir, case.name).await;
    let mut routes = Routes {
        raw,
        engine,
        mcp,
        daemon,
        opts,
    };

    let raw_refs = position_params(&raw_dir, def_pos, true);
    let raw_def = position_params(&raw_dir, call_pos, false);
    let q_refs_name = query(Action::References, def_pos, Some(symbol));
    let q_refs_pos = query(Action::References, def_pos, None);
    let q_def_name = query(Action::Definition, call_pos, Some(symbol));
    let q_def_pos = query(Action::Definition, call_pos, None);
    let op = |name, raw: (&'static str, &Value), q: &Query| Op {
        name,
        raw: (raw.0, raw.1.clone()),
        query: q.clone(),
        args: tool_args(q),
    };
    let ops = vec![
        op(
            "references, by name",
            ("textDocument/references", &raw_refs),
            &q_refs_name,
        ),
        op(
            "references, line+col",
            ("textDocument/references", &raw_refs),
            &q_refs_pos,
        ),
        op(
            "definition, by name",
            ("textDocument/definition", &raw_def),
            &q_def_name,
        ),
        op(
            "definition, line+col",
            ("textDocument/definition", &raw_def),
            &q_def_pos,
        ),
    ];

    // Warm the raw and engine routes until references is complete (or the
    // wait runs out), both at once; then the daemon route, alone, and its
    // first session right after its own first full answer: what runs
    // beside a fresh daemon's first calls shows there, not the other
    // routes' servers warming up.
    let Routes {
        raw,
        engine,
        daemon,
        opts,
        ..
    } = &mut routes;
    let (raw_n, scry_n) = tokio::join!(
        warm_up(*warm_within, *full_refs, || raw
            .ask(ops[0].raw.0, &ops[0].raw.1)),
        warm_up(*warm_within, *full_refs, || async {
            scry_call(engine, &ops[0].query, opts).await.0
        }),
    );
    let (daemon_n, mut first, first_spent) = {
        // (`warm_up`'s loop: the daemon route is asked mutably.)
        let deadline = Instant::now() + *warm_within;
        let mut counts = Vec::new();
        while Instant::now() < deadline {
            counts.push(tool_count(&daemon.ask(&ops[0].args).await));
            if is_warm(&counts, *full_refs) {
                break;
            }
            tokio::time::sleep(warm_pause(*full_refs)).await;
        }
        let n = counts.last().copied().unwrap_or(0);
        let mut first = Vec::new();
        let mut first_spent = Default::default();
        if counting.is_none() {
            let mut by_name = Vec::new();
            let mut by_pos = Vec::new();
            daemon.find_daemon();
            let before = daemon.processes();
            for _ in 0..FIRST_SESSION {
                let t = Instant::now();
                daemon.ask(&ops[0].args).await;
                by_name.push(t.elapsed());
                let t = Instant::now();
                daemon.ask(&ops[1].args).await;
                by_pos.push(t.elapsed());
            }
            first.push((ops[0].name, stats(&by_name)));
            first.push((ops[1].name, stats(&by_pos)));
            first_spent = per_call(before, daemon.processes(), 2 * FIRST_SESSION);
        }
        (n, first, first_spent)
    };
    // The raw server's own first session, for comparison: a fresh server on
    // a fourth copy, warmed the same way, its next references at the
    // position timed right after its first full answer (what a fresh
    // server is still doing then shows on both sides).
    if counting.is_none() {
        let (_first_tmp, first_dir) = case.copy()?;
        let fresh = Raw::start(def, &first_dir, &open).await;
        let params = position_params(&first_dir, def_pos, true);
        warm_up(*warm_within, *full_refs, || {
            fresh.ask("textDocument/references", &params)
        })
        .await;
        let mut times = Vec::new();
        for _ in 0..FIRST_SESSION {
            let t = Instant::now();
            fresh.ask("textDocument/references", &params).await;
            times.push(t.elapsed());
        }
        first.push(("raw: references", stats(&times)));
        fresh.stop().await;
    }
    println!(
        "{}: warm after {:.1} s (references: raw {raw_n}, engine {scry_n}, daemon {daemon_n}; full answer is {})",
        case.name,
        t0.elapsed().as_secs_f64(),
        full_refs.map_or("not known: the same count three times".into(), |n| n
            .to_string()),
    );

    // The servers finish what they do after their first answers (a
    // rust-analyzer primes its caches for minutes) before anything else is
    // measured: each route's server then answers as a warm one does.
    let quiet_after = Instant::now();
    let daemon_pid = routes.daemon.find_daemon();
    let quiet = daemon::quiet(&[std::process::id(), daemon_pid], *warm_within).await;
    println!(
        "{}: servers quiet after {:.1} s more{}",
        case.name,
        quiet_after.elapsed().as_secs_f64(),
        if quiet {
            ""
        } else {
            " (not quiet: the wait ran out)"
        }
    );

    // Untimed passes per op, also to report what each route answered.
    let mut results = Vec::new();
    for o in &ops {
        let mut got = [0; 4];
        for _ in 0..WARMUP_ITERS {
            for (i, r) in ROUTES.iter().enumerate() {
                got[i] = routes.ask(*r, o).await;
            }
        }
        let (_, a) = scry_call(&routes.engine, &o.query, &routes.opts).await;
        let via = a
            .asked_at
            .as_ref()
            .map(|x| {
                format!(
                    "{}:{}:{} via {}",
                    scry_render::display_path(&x.loc.path, routes.engine.workspace().root()),
                    x.loc.line,
                    x.loc.col,
                    scry_render::via_text(&x.via)
                )
            })
            .unwrap_or_default();
        results.push(format!(
            "raw {} / engine {} / mcp {} / daemon {} (scry asked at {via})",
            got[0], got[1], got[2], got[3]
        ));
    }

    if let Some(dir) = &counting {
        let counts = count_instructions(&mut routes, &ops, dir).await;
        stop(routes).await;
        return Some(CaseResult {
            rows: Vec::new(),
            first,
            first_spent,
            counts,
        });
    }

    // Timed, interleaved: per round, per op, a block of each route (the
    // routes' order rotating every round).
    let per_round = iters.div_ceil(ROUNDS);
    let mut times: Vec<Vec<Vec<Duration>>> = vec![vec![Vec::new(); ROUTES.len()]; ops.len()];
    // The daemon route's processes: (scry mcp, daemon, calls) per op.
    let mut spent = vec![(daemon::Spent::default(), daemon::Spent::default(), 0); ops.len()];
    routes.daemon.find_daemon();
    for round in 0..ROUNDS {
        for (i, o) in ops.iter().enumerate() {
            for k in 0..ROUTES.len() {
                let r = (k + round) % ROUTES.len();
                let before = routes.daemon.processes();
                let mut calls = 0;
                for _ in 0..per_round {
                    if times[i][r].len() >= iters {
                        break;
                    }
                    let t = Instant::now();
                    std::hint::black_box(routes.ask(ROUTES[r], o).await);
                    times[i][r].push(t.elapsed());
                    calls += 1;
                }
                if ROUTES[r] == Route::Daemon {
                    let (m, d) = routes.daemon.processes();
                    spent[i].0.add(m.since(before.0));
                    spent[i].1.add(d.since(before.1));
                    spent[i].2 += calls;
                }
            }
        }
    }

    parts_alone(case, &mut routes, &raw_dir, &scry_dir, &asked, &q_refs_pos).await;
    stop(routes).await;

    Some(CaseResult {
        rows: ops
            .iter()
            .zip(results)
            .enumerate()
            .map(|(i, (o, results))| Row {
                op: o.name,
                times: times[i].iter().map(|t| stats(t)).collect(),
                results,
                spent: per_call(
                    Default::default(),
                    (spent[i].0, spent[i].1),
                    spent[i].2.max(1),
                ),
            })
            .collect(),
        first,
        first_spent,
        counts: Vec::new(),
    })
}

/// What the daemon route's processes spent per call between two samples
/// (`scry mcp`, the daemon) over `calls` calls.
fn per_call(
    before: (daemon::Spent, daemon::Spent),
    after: (daemon::Spent, daemon::Spent),
    calls: usize,
) -> (daemon::Spent, daemon::Spent) {
    let each = |a: daemon::Spent, b: daemon::Spent| {
        let d = a.since(b);
        daemon::Spent {
            cpu: d.cpu / calls as u32,
            waiting: d.waiting / calls as u32,
            switches: d.switches / calls as u64,
        }
    };
    (each(after.0, before.0), each(after.1, before.1))
}

async fn stop(routes: Routes) {
    routes.mcp.stop();
    routes.daemon.stop().await;
    routes.engine.shutdown().await;
    routes.raw.stop().await;
}

/// Instructions per call of each op on each route (under Callgrind): the
/// in-process routes between a zero and a dump of this process's
/// counters, the daemon route between two `daemon status` dumps of the
/// daemon's.
async fn count_instructions(
    routes: &mut Routes,
    ops: &[Op],
    dir: &Path,
) -> Vec<(&'static str, Route, f64)> {
    let mut blocks = Vec::new();
    for o in ops {
        for r in [Route::Raw, Route::Engine, Route::Mcp] {
            callgrind::zero();
            for _ in 0..COUNTED_CALLS {
                std::hint::black_box(routes.ask(r, o).await);
            }
            callgrind::dump(&format!(
                "{}|{}|{}|{COUNTED_CALLS}",
                routes.daemon.tag,
                o.name,
                r.name()
            ));
        }
        // The daemon route's two processes, dumped from outside: before,
        // after the calls, and after as long again without any (what runs
        // beside the calls, taken off in the report).
        routes.daemon.dump(o.name, "before");
        let t = Instant::now();
        for _ in 0..COUNTED_CALLS {
            std::hint::black_box(routes.ask(Route::Daemon, o).await);
        }
        let took = t.elapsed();
        routes.daemon.dump(o.name, "calls");
        tokio::time::sleep(took).await;
        routes.daemon.dump(o.name, "idle");
        blocks.push(o.name);
    }
    // The in-process blocks' dumps; the daemon route's are read by
    // `report_counts`.
    let mut out = Vec::new();
    for (desc, per_call) in callgrind::bench_per_call(dir) {
        let mut f = desc.split('|');
        let (Some(tag), Some(op), Some(route)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if tag != routes.daemon.tag {
            continue;
        }
        let Some(o) = ops.iter().find(|o| o.name == op) else {
            continue;
        };
        let Some(r) = ROUTES.iter().find(|r| r.name() == route) else {
            continue;
        };
        out.push((o.name, *r, per_call));
    }
    for name in blocks {
        // The daemon route's row, its counts read from the dumps.
        out.push((name, Route::Daemon, 0.0));
    }
    out
}

/// Where scry's added time goes, each part alone (medians of 200).
async fn parts_alone(
    case: &Case,
    routes: &mut Routes,
    raw_dir: &Path,
    scry_dir: &Path,
    asked: &Asked,
    q_refs_pos: &Query,
) {
    let name = case.name;
    let engine = routes.engine.clone();
    let opts = routes.opts.clone();
    let (_, a) = scry_call(&engine, q_refs_pos, &opts).await;
    let r = median_of(200, || async {
        render_text(&a, engine.workspace().root(), &opts)
    })
    .await;
    println!(
        "{name}: render_text alone of the {}-location references answer: median {r:.4} ms",
        count(&a),
    );
    // The watched-files drain run before every request, a raw
    // documentSymbol round trip (what naming by symbol costs when it is
    // asked), the session's documentSymbol (cached per document version),
    // the disk sync of the asked file, and the occurrence scan of the name
    // in it.
    let ws = engine.workspace();
    let drain = median_of(200, || ws.announce_changes(&[])).await;
    let def_pos = &asked.def_pos;
    let sym_params = json!({ "textDocument": { "uri": uri(&raw_dir.join(&def_pos.file)) } });
    let raw = &routes.raw;
    let raw_sym = median_of(200, || raw.ask("textDocument/documentSymbol", &sym_params)).await;
    let file = scry_dir.join(&def_pos.file);
    let (session, route) = ws.session_for_file(&file).await.expect("session");
    let cached_sym = median_of(200, || session.document_symbols(&file)).await;
    let sync = median_of(200, || async {
        session.sync_open_documents().await.unwrap();
        session.sync_file(&file, &route.language_id).await.unwrap()
    })
    .await;
    let index = session.sync_file(&file, &route.language_id).await.unwrap();
    let want = scry_model::name::SymbolName::parse(&asked.symbol);
    let scan = median_of(200, || async {
        scry_ops::resolve::occurrences(&index, &want, None, true, 32, None).total
    })
    .await;
    println!(
        "{name}: parts alone (median ms): watched-files drain {drain:.4}; documentSymbol raw round trip {raw_sym:.4}, \
         through the session's cache {cached_sym:.4}; disk sync of the open documents {sync:.4}; \
         occurrence scan of `{}` in {} ({} lines) {scan:.4}; \
         server registered file watchers (drain waits for the watcher): {}",
        asked.symbol,
        def_pos.file,
        index.line_count(),
        ws.running().iter().any(scry_workspace::watch::listens)
    );
    let parts = mcp_parts(&mut routes.mcp, &engine, q_refs_pos, &opts).await;
    println!(
        "{name}: MCP hop parts alone (median ms): the pipe (a line to an echo task and back) {:.4}; \
         ping through scry_mcp::serve {:.4}; a tools/call refused by validation {:.4}; \
         a tokio interval's first tick {:.4}; the reply's JSON (render_text + render_json, \
         serialized and parsed) {:.4}",
        parts.pipe, parts.ping, parts.refused, parts.timer, parts.json
    );
}

/// Median milliseconds of 200 runs of an expression (which may borrow
/// mutably, unlike [`median_of`]'s closure).
macro_rules! timed_200 {
    ($e:expr) => {{
        let mut times = Vec::with_capacity(200);
        for _ in 0..200 {
            let t = Instant::now();
            std::hint::black_box($e);
            times.push(t.elapsed());
        }
        stats(&times).median
    }};
}

/// The MCP hop's parts alone, for `q` (a position question) as an `lsp`
/// tools/call (see [`McpParts`]).
async fn mcp_parts(
    client: &mut McpClient,
    engine: &Engine,
    q: &Query,
    opts: &RenderOptions,
) -> McpParts {
    let args = tool_args(q);
    let line = format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "lsp", "arguments": args}})
    );
    let pipe = {
        let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
        let echo = tokio::spawn(async move {
            use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
            let (r, mut w) = tokio::io::split(theirs);
            let mut lines = BufReader::new(r).lines();
            while let Ok(Some(mut l)) = lines.next_line().await {
                l.push('\n');
                w.write_all(l.as_bytes()).await.unwrap();
                w.flush().await.unwrap();
            }
        });
        let (r, w) = tokio::io::split(ours);
        let mut c = LineClient::new(Box::new(r), Box::new(w));
        let t = timed_200!(c.round_trip(&line).await);
        echo.abort();
        t
    };
    let ping = timed_200!(client.call("ping", json!({})).await);
    let mut refused_args = args.clone();
    refused_args["line"] = json!(0);
    let refused = timed_200!({
        let r = client
            .call(
                "tools/call",
                json!({"name": "lsp", "arguments": refused_args}),
            )
            .await;
        assert!(r["result"]["isError"] == json!(true), "{r}");
    });
    let timer = median_of(200, || async {
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        tick.tick().await;
    })
    .await;
    let (_, answer) = scry_call(engine, q, opts).await;
    let root = engine.workspace().root();
    let json_part = median_of(200, || async {
        let text = render_text(&answer, root, opts);
        let reply = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": text}],
            "structuredContent": scry_render::render_json(&answer, root, opts),
            "isError": false}});
        let line = serde_json::to_string(&reply).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    })
    .await;
    McpParts {
        pipe,
        ping,
        refused,
        timer,
        json: json_part,
    }
}

/// The MCP hop's parts alone, medians in ms of 200 each.
struct McpParts {
    /// The bench's pipe: one line out to an echo task and back.
    pipe: f64,
    /// A `ping` through `scry_mcp::serve` (rmcp's loop and our transport,
    /// no tool).
    ping: f64,
    /// A tools/call refused by validation (`line: 0`): the tool handler
    /// without the engine.
    refused: f64,
    /// A tokio `interval` created and its first tick awaited.
    timer: f64,
    /// The reply's JSON: render_text + render_json, serialized and parsed.
    json: f64,
}

/// The duplex pipe's buffer, each way.
const PIPE_BYTES: usize = 1 << 20;

type Reader = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
type Writer = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// The client end of a newline-delimited JSON pipe (in process, or a
/// child's stdio).
struct LineClient {
    lines: tokio::io::Lines<tokio::io::BufReader<Reader>>,
    write: Writer,
}

impl LineClient {
    fn new(read: Reader, write: Writer) -> LineClient {
        use tokio::io::AsyncBufReadExt;
        LineClient {
            lines: tokio::io::BufReader::new(read).lines(),
            write,
        }
    }

    async fn send(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt;
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.flush().await.unwrap();
    }

    async fn recv(&mut self) -> String {
        self.lines.next_line().await.unwrap().expect("a reply line")
    }

    async fn round_trip(&mut self, line: &str) -> String {
        self.send(line).await;
        self.recv().await
    }
}

/// An MCP client over a line pipe, initialized.
struct McpClient {
    pipe: LineClient,
    serving: Option<tokio::task::JoinHandle<Result<(), scry_mcp::ServeError>>>,
    next_id: u64,
}

impl McpClient {
    /// `scry_mcp::serve` over an in-process pipe, answering with `engine`.
    async fn start(engine: &Engine) -> McpClient {
        let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
        let (sr, sw) = tokio::io::split(theirs);
        let server = scry_mcp::ScryMcp::new(engine.clone(), scry_mcp::Options::default());
        let serving = tokio::spawn(scry_mcp::serve(server, sr, sw));
        let (r, w) = tokio::io::split(ours);
        let mut c = McpClient::over(LineClient::new(Box::new(r), Box::new(w))).await;
        c.serving = Some(serving);
        c
    }

    /// Initialize an MCP session over `pipe`.
    async fn over(pipe: LineClient) -> McpClient {
        let mut c = McpClient {
            pipe,
            serving: None,
            next_id: 0,
        };
        c.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}),
        )
        .await;
        c.pipe
            .send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await;
        c
    }

    /// One request and its response (notifications before it are skipped).
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        let mut line =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        line.push('\n');
        self.pipe.send(&line).await;
        loop {
            let m: Value = serde_json::from_str(&self.pipe.recv().await).unwrap();
            if m.get("id") == Some(&id) && m.get("method").is_none() {
                return m;
            }
        }
    }

    fn stop(self) {
        if let Some(s) = self.serving {
            s.abort();
        }
    }
}

/// Median milliseconds of `n` runs of `f`.
async fn median_of<F, Fut>(n: usize, mut f: F) -> f64
where
    F: FnMut() -> Fut,
    Fut: std::future::Future,
{
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        std::hint::black_box(f().await);
        times.push(t.elapsed());
    }
    stats(&times).median
}

fn main() {
    callgrind::reexec_if_asked();
    let counting = callgrind::dir();
    let iters: usize = std::env::var("SCRY_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        // The peers' shape: 30 questions.
        .unwrap_or(30)
        .max(1);
    let wanted: Vec<String> = std::env::var("SCRY_BENCH_SERVERS")
        .unwrap_or_else(|_| DEFAULT_CASES.into())
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();

    // Server logs (scry appends each server's stderr to a log file) go to a
    // scratch directory, not the user's state directory; rust-analyzer's
    // build scripts are built once for every copy.
    let logs = tempfile::tempdir().expect("log dir");
    let target = tempfile::tempdir().expect("cargo target dir");
    // SAFETY: set before the runtime (and any other thread) starts.
    unsafe {
        std::env::set_var("SCRY_LOG_DIR", logs.path());
        std::env::set_var("CARGO_TARGET_DIR", target.path());
    }

    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(scry_testkit::fixture_path("expected.json")).unwrap(),
    )
    .unwrap();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    if counting.is_some() {
        println!(
            "latency bench under Callgrind: instructions per call of scry's processes \
             ({COUNTED_CALLS} calls per route and question, warm servers)"
        );
    } else {
        println!(
            "latency bench: {iters} timed requests per operation and route, warm servers, \
             interleaved in {ROUNDS} rounds; times are per request, end to end"
        );
    }
    println!();
    let started = Instant::now();
    let mut all = Vec::new();
    for case in CASES.iter().filter(|c| wanted.iter().any(|w| w == c.name)) {
        if let Some(r) = rt.block_on(bench_case(case, iters, &expected)) {
            all.push((case.name, r));
        }
    }
    if wanted.iter().any(|w| w == "hostile") {
        hostile::bench();
    }
    println!("total wall time: {:.1} s", started.elapsed().as_secs_f64());
    println!();
    if let Some(dir) = &counting {
        report_counts(dir, &all);
        return;
    }
    println!(
        "{:<19} {:<21} {:>8} {:>8} {:>7} {:>8} {:>7} {:>8} {:>7} {:>9}",
        "case",
        "operation",
        "raw med",
        "engine",
        "x raw",
        "mcp",
        "x raw",
        "daemon",
        "x raw",
        "added ms"
    );
    for (case, r) in &all {
        for row in &r.rows {
            let raw = row.times[0].median;
            let cell = |i: usize| {
                let m = row.times[i].median;
                format!("{m:>8.3} {:>6.2}x", m / raw)
            };
            println!(
                "{:<19} {:<21} {:>8.3} {} {} {} {:>9.3}",
                case,
                row.op,
                raw,
                cell(1),
                cell(2),
                cell(3),
                row.times[3].median - raw
            );
        }
    }
    println!();
    println!(
        "first session on a fresh daemon ({FIRST_SESSION} calls each, right after its first full answer; \
         `raw: references`: a fresh raw server's, the same way), median ms (min / max):"
    );
    for (case, r) in &all {
        for (op, s) in &r.first {
            // The raw server's first session compares with its warm
            // references at the position.
            let like = if *op == "raw: references" {
                "references, line+col"
            } else {
                op
            };
            let steady = r.rows.iter().find(|row| row.op == like);
            println!(
                "  {case:<19} {op:<21} {:>8.3} ({:.3} / {:.3}); warm later: daemon {:.3}, raw {:.3}",
                s.median,
                s.min,
                s.max,
                steady.map_or(f64::NAN, |row| row.times[3].median),
                steady.map_or(f64::NAN, |row| row.times[0].median),
            );
        }
    }
    println!();
    println!(
        "the daemon route's processes per call (/proc: on a CPU; runnable, waiting for a core; \
         context switches), `scry mcp` | daemon:"
    );
    let spent = |(m, d): &(daemon::Spent, daemon::Spent)| {
        let one = |s: &daemon::Spent| {
            format!(
                "cpu {:.3} ms, waiting {:.3} ms, {:>2} switches",
                s.cpu.as_secs_f64() * 1e3,
                s.waiting.as_secs_f64() * 1e3,
                s.switches
            )
        };
        format!("{} | {}", one(m), one(d))
    };
    for (case, r) in &all {
        for row in &r.rows {
            println!("  {case:<19} {:<21} {}", row.op, spent(&row.spent));
        }
        println!(
            "  {case:<19} {:<21} {}",
            "first session",
            spent(&r.first_spent)
        );
    }
    println!();
    println!("results per call (location counts):");
    for (case, r) in &all {
        for row in &r.rows {
            println!("  {case:<19} {:<21} {}", row.op, row.results);
        }
    }
    println!();
    println!(
        "what one call costs on each route:\n\
         \x20 raw     1 server round trip (the LSP request over scry_rpc::Connection; JSON encode/decode).\n\
         \x20 engine  Engine::run + render_text: resolve the path, route to the server, stat every open\n\
         \x20         document and re-read + compare the asked file from disk; by name, the file's\n\
         \x20         document symbols (a server round trip only when the document's version is new)\n\
         \x20         and the occurrence scan; then the request, typed parsing of the result, line\n\
         \x20         texts for every location, and rendering the text answer.\n\
         \x20 mcp     the engine's call as an `lsp` tools/call through scry_mcp::serve in process:\n\
         \x20         validation, the Local answerer (config stamp check), text + JSON rendering, rmcp.\n\
         \x20 daemon  `scry mcp` over stdio (a child process) → its daemon over the socket → the engine:\n\
         \x20         what a model's MCP client gets.\n\
         note: by name, scry asks at the first code occurrence when the file has no declaration of the\n\
         name (see \"scry asked at\" above), which may differ from the raw position."
    );
}

/// The instruction counts' table (Callgrind).
fn report_counts(dir: &Path, all: &[(&'static str, CaseResult)]) {
    println!(
        "{:<19} {:<21} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}   (instructions per call, thousands)",
        "case", "operation", "raw", "engine", "mcp", "scry mcp", "daemon", "idle mcp", "idle dmn"
    );
    for (case, r) in all {
        let mut ops: Vec<&'static str> = Vec::new();
        for (op, _, _) in &r.counts {
            if !ops.contains(op) {
                ops.push(op);
            }
        }
        for op in ops {
            let get = |route: Route| {
                r.counts
                    .iter()
                    .find(|(o, rt, _)| *o == op && *rt == route)
                    .map(|c| c.2)
            };
            // The daemon route's processes: the block's dump less the
            // idle one (as long, no call), per call.
            let process = |kind: &str| {
                let prefix = format!("{kind}-{case}");
                let at = |phase: &str| {
                    callgrind::process_dump(dir, &prefix, &format!("{case}|{op}|{phase}"))
                };
                let (calls, idle) = (at("calls")?, at("idle")?);
                let n = COUNTED_CALLS as f64;
                Some((calls.saturating_sub(idle) as f64 / n, idle as f64 / n))
            };
            let (mcp, daemon) = (process("mcp"), process("daemon"));
            let k = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{:.0}", v / 1e3));
            println!(
                "{:<19} {:<21} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                case,
                op,
                k(get(Route::Raw)),
                k(get(Route::Engine)),
                k(get(Route::Mcp)),
                k(mcp.map(|m| m.0)),
                k(daemon.map(|d| d.0)),
                k(mcp.map(|m| m.1)),
                k(daemon.map(|d| d.1)),
            );
        }
    }
    println!(
        "\nraw: the bench's own client (JSON encode/decode); engine: + Engine::run and render_text; \
         mcp: + the MCP front end in process; scry mcp, daemon: the daemon route's two processes \
         (`scry mcp` over stdio, its daemon), each a block of {COUNTED_CALLS} calls less as long \
         without a call, per call; idle: that idle block per call (timers, the daemon's reaping \
         tick: what runs beside the calls, and longer under Valgrind). Callgrind output \
         (callgrind_annotate): {}",
        dir.display()
    );
}
