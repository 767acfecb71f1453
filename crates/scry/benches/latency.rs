//! scry's added latency per request over driving the same language server
//! directly, side by side, as a ratio.
//!
//! For each server (clangd on a copy of `fixtures/c`, pyright on a copy of
//! `fixtures/python`, each skipped when not installed):
//!
//! * **raw**: the server spawned here with `tokio::process`, spoken to through
//!   `scry_rpc::Connection` only: `initialize`, `initialized`, `didOpen` of the
//!   two files, then `textDocument/references` / `textDocument/definition` at
//!   the known positions from `fixtures/expected.json`.
//! * **scry**: one `scry_ops::Engine` over `Workspace::open(copy)`; each timed
//!   call is `engine.run_query(&query)` plus `scry_render::render_text` of the answer,
//!   once by symbol name and once by explicit line + column.
//!
//! * **MCP hop**: the line+col references question straight against the
//!   same as an `lsp` tools/call through `scry_mcp::serve` over an in-process
//!   pipe, then the hop's parts alone (pipe, ping, a refused call, a timer's
//!   first tick, the reply's JSON).
//!
//! Both servers run at the same time, each on its own copy of the fixture, and
//! the measurements are interleaved in rounds (raw block, scry block, ...) so
//! that noise from the rest of the machine hits both sides alike. Only warm
//! servers are timed: each side first repeats `references` until the server
//! returns the full answer (clangd: after its background index ran), then runs
//! a few untimed warm-up iterations of every operation.
//!
//! * **hostile** (only when `SCRY_BENCH_SERVERS` names it): the hostile
//!   workspace cases of issue 19 (a FIFO, 70,000 uses on one long line in
//!   Ruby and Python, a 5 MB bundle) through the built `scry` and its daemon,
//!   wall time and the daemon's peak RSS, before/after ratios against
//!   `SCRY_BENCH_BEFORE` (an older `scry` binary) — see `latency/hostile.rs`.
//!
//! Run: `cargo bench -p scry-lsp --bench latency`
//! Environment: `SCRY_BENCH_ITERS` (default 50), `SCRY_BENCH_SERVERS`
//! (comma list, default `clangd,pyright`; add `hostile` for the hostile
//! cases), `SCRY_BENCH_BEFORE`.

#[path = "latency/hostile.rs"]
mod hostile;

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
const WARMUP_ITERS: usize = 5;
const WARM_TIMEOUT: Duration = Duration::from_secs(30);

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
    let dir = tmp.path().canonicalize().expect("canonical tempdir");
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
                                scry_lsp::handler::lookup_section(
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
                "capabilities": scry_lsp::client_capabilities(),
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

    /// One request; returns the number of locations in the result.
    async fn ask(&self, method: &str, params: &Value) -> usize {
        let v = self
            .conn
            .request(method, Some(params.clone()))
            .await
            .expect("raw request");
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

// ------------------------------------------------------------------ one server

struct Row {
    op: String,
    raw: Stats,
    scry: Stats,
    results: String,
}

enum Side<'a> {
    Raw(&'a str, Value),
    Scry(Box<Query>),
}

async fn bench_server(def: &ServerDef, iters: usize, expected: &Value) -> Option<Vec<Row>> {
    if !scry_testkit::on_path(def.command) {
        println!("{}: `{}` not on PATH; skipped", def.name, def.command);
        return None;
    }
    let e = &expected[def.lang];
    let symbol = e["total_weight"]["symbol"].as_str().unwrap().to_string();
    let def_pos = pos(&e["total_weight"]["definition"]); // file A
    let call_pos = pos(&e["total_weight"]["calls"][0]); // file B (ASCII line)
    // A full references answer: definition + declarations + imports + calls.
    let full_refs = 1
        + e["total_weight"]["declarations"].as_array().unwrap().len()
        + e["total_weight"]["imports"].as_array().unwrap().len()
        + e["total_weight"]["calls"].as_array().unwrap().len();
    let open = [def_pos.file.as_str(), call_pos.file.as_str()];

    let (_raw_tmp, raw_dir) = copy_fixture(def.lang);
    let (_scry_tmp, scry_dir) = copy_fixture(def.lang);

    let t0 = Instant::now();
    let raw = Raw::start(def, &raw_dir, &open).await;
    let ws = Workspace::open(&scry_dir).expect("workspace");
    let engine = Engine::new(Arc::new(ws));
    let opts = RenderOptions::default();

    // Warm both until references is complete (or the wait runs out).
    let raw_refs = position_params(&raw_dir, &def_pos, true);
    let raw_def = position_params(&raw_dir, &call_pos, false);
    let q_refs_name = query(Action::References, &def_pos, Some(&symbol));
    let q_refs_pos = query(Action::References, &def_pos, None);
    let q_def_name = query(Action::Definition, &call_pos, Some(&symbol));
    let q_def_pos = query(Action::Definition, &call_pos, None);

    let warm_deadline = Instant::now() + WARM_TIMEOUT;
    let mut raw_n = 0;
    while Instant::now() < warm_deadline {
        raw_n = raw.ask("textDocument/references", &raw_refs).await;
        if raw_n >= full_refs {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut scry_n = 0;
    while Instant::now() < warm_deadline {
        scry_n = scry_call(&engine, &q_refs_name, &opts).await.0;
        if scry_n >= full_refs {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "{}: warm after {:.1} s (references: raw {raw_n}, scry {scry_n}; full answer is {full_refs})",
        def.name,
        t0.elapsed().as_secs_f64()
    );

    let ops: Vec<(String, Side, Side)> = vec![
        (
            "references, by name".into(),
            Side::Raw("textDocument/references", raw_refs.clone()),
            Side::Scry(Box::new(q_refs_name.clone())),
        ),
        (
            "references, line+col".into(),
            Side::Raw("textDocument/references", raw_refs.clone()),
            Side::Scry(Box::new(q_refs_pos.clone())),
        ),
        (
            "definition, by name".into(),
            Side::Raw("textDocument/definition", raw_def.clone()),
            Side::Scry(Box::new(q_def_name.clone())),
        ),
        (
            "definition, line+col".into(),
            Side::Raw("textDocument/definition", raw_def.clone()),
            Side::Scry(Box::new(q_def_pos.clone())),
        ),
    ];

    // One untimed pass per op, also to report what each side answered.
    let mut results = Vec::new();
    for (_, r, s) in &ops {
        let (Side::Raw(m, p), Side::Scry(q)) = (r, s) else {
            unreachable!()
        };
        let mut rn = 0;
        let mut sn = (0, None);
        for _ in 0..WARMUP_ITERS {
            rn = raw.ask(m, p).await;
            let (n, a) = scry_call(&engine, q, &opts).await;
            sn = (n, Some(a));
        }
        let a = sn.1.unwrap();
        let via = a
            .asked_at
            .as_ref()
            .map(|x| {
                format!(
                    "{}:{}:{} via {}",
                    scry_render::display_path(&x.loc.path, engine.workspace().root()),
                    x.loc.line,
                    x.loc.col,
                    scry_render::via_text(&x.via)
                )
            })
            .unwrap_or_default();
        results.push(format!("raw {rn} / scry {} (scry asked at {via})", sn.0));
    }

    // Timed, interleaved: per round, per op, a block of raw then a block of
    // scry (order flipped every other round).
    let per_round = iters.div_ceil(ROUNDS);
    let mut raw_times: Vec<Vec<Duration>> = vec![Vec::new(); ops.len()];
    let mut scry_times: Vec<Vec<Duration>> = vec![Vec::new(); ops.len()];
    for round in 0..ROUNDS {
        for (i, (_, r, s)) in ops.iter().enumerate() {
            let sides: [&Side; 2] = if round % 2 == 0 { [r, s] } else { [s, r] };
            for side in sides {
                for _ in 0..per_round {
                    match side {
                        Side::Raw(m, p) => {
                            if raw_times[i].len() >= iters {
                                break;
                            }
                            let t = Instant::now();
                            std::hint::black_box(raw.ask(m, p).await);
                            raw_times[i].push(t.elapsed());
                        }
                        Side::Scry(q) => {
                            if scry_times[i].len() >= iters {
                                break;
                            }
                            let t = Instant::now();
                            std::hint::black_box(scry_call(&engine, q, &opts).await);
                            scry_times[i].push(t.elapsed());
                        }
                    }
                }
            }
        }
    }

    // Rendering alone, for reading the by-name/line+col numbers.
    let (_, a) = scry_call(&engine, &q_refs_pos, &opts).await;
    let mut render_times = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        std::hint::black_box(render_text(&a, engine.workspace().root(), &opts));
        render_times.push(t.elapsed());
    }
    let r = stats(&render_times);
    println!(
        "{}: render_text alone of the {}-location references answer: median {:.4} ms",
        def.name,
        count(&a),
        r.median
    );

    // Where scry's added time goes, each part alone (medians of 200):
    // the watched-files drain run before every request, a raw
    // documentSymbol round trip (what naming by symbol costs when it is
    // asked), and the session's documentSymbol (cached per document
    // version), and the disk sync of the asked file.
    let ws = engine.workspace();
    let drain = median_of(200, || ws.announce_changes(&[])).await;
    let sym_params = json!({ "textDocument": { "uri": uri(&raw_dir.join(&def_pos.file)) } });
    let raw_sym = median_of(200, || raw.ask("textDocument/documentSymbol", &sym_params)).await;
    let file = scry_dir.join(&def_pos.file);
    let (session, route) = ws.session_for_file(&file).await.expect("session");
    let cached_sym = median_of(200, || session.document_symbols(&file)).await;
    let sync = median_of(200, || async {
        session.sync_open_documents().await.unwrap();
        session.sync_file(&file, &route.language_id).await.unwrap()
    })
    .await;
    println!(
        "{}: parts alone (median ms): watched-files drain {drain:.4}; documentSymbol raw round trip {raw_sym:.4}, \
         through the session's cache {cached_sym:.4}; disk sync of the open documents {sync:.4}; \
         server registered file watchers (drain waits for the watcher): {}",
        def.name,
        ws.running().iter().any(scry_workspace::watch::listens)
    );

    let (direct, mcp, parts) = mcp_hop(&engine, &q_refs_pos, &opts).await;
    println!(
        "{}: references line+col, median ms: Engine::run + render_text {direct:.4}; the same \
         through MCP (scry_mcp::serve over an in-process pipe, one JSON line each way) {mcp:.4}",
        def.name
    );
    println!(
        "{}: MCP hop parts alone (median ms): the pipe (a line to an echo task and back) {:.4}; \
         ping through scry_mcp::serve {:.4}; a tools/call refused by validation {:.4}; \
         a tokio interval's first tick {:.4}; the reply's JSON (render_text + render_json, \
         serialized and parsed) {:.4}",
        def.name, parts.pipe, parts.ping, parts.refused, parts.timer, parts.json
    );

    engine.shutdown().await;
    raw.stop().await;

    Some(
        ops.into_iter()
            .zip(results)
            .enumerate()
            .map(|(i, ((op, _, _), results))| Row {
                op,
                raw: stats(&raw_times[i]),
                scry: stats(&scry_times[i]),
                results,
            })
            .collect(),
    )
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

/// The MCP hop, medians in ms: `q` (a position question) asked straight
/// (engine + text rendering) and as an `lsp` tools/call over
/// `scry_mcp::serve` on an in-process duplex pipe, 200 times each,
/// interleaved; then the hop's parts alone (see [`McpParts`]).
async fn mcp_hop(engine: &Engine, q: &Query, opts: &RenderOptions) -> (f64, f64, McpParts) {
    let mut client = McpClient::start(engine).await;
    let args = json!({
        "action": q.action.name(),
        "path": q.path.as_ref().unwrap().to_string_lossy(),
        "line": q.line, "column": q.column,
    });
    let mut direct = Vec::new();
    let mut mcp = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        std::hint::black_box(scry_call(engine, q, opts).await);
        direct.push(t.elapsed());
        let t = Instant::now();
        let r = client
            .call("tools/call", json!({"name": "lsp", "arguments": args}))
            .await;
        mcp.push(t.elapsed());
        assert!(r["result"]["isError"] != json!(true), "{r}");
    }

    // The parts alone.
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
        let mut c = LineClient::new(ours);
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
    client.stop();
    let parts = McpParts {
        pipe,
        ping,
        refused,
        timer,
        json: json_part,
    };
    (stats(&direct).median, stats(&mcp).median, parts)
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

/// The client end of a newline-delimited JSON pipe.
struct LineClient {
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
}

impl LineClient {
    fn new(pipe: tokio::io::DuplexStream) -> LineClient {
        use tokio::io::AsyncBufReadExt;
        let (read, write) = tokio::io::split(pipe);
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

/// An MCP client over `scry_mcp::serve` on an in-process pipe, initialized.
struct McpClient {
    pipe: LineClient,
    serving: tokio::task::JoinHandle<Result<(), scry_mcp::ServeError>>,
    next_id: u64,
}

impl McpClient {
    async fn start(engine: &Engine) -> McpClient {
        let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
        let (sr, sw) = tokio::io::split(theirs);
        let server = scry_mcp::ScryMcp::new(engine.clone(), scry_mcp::Options::default());
        let serving = tokio::spawn(scry_mcp::serve(server, sr, sw));
        let mut c = McpClient {
            pipe: LineClient::new(ours),
            serving,
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
        self.serving.abort();
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
    let iters: usize = std::env::var("SCRY_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50)
        .max(1);
    let wanted: Vec<String> = std::env::var("SCRY_BENCH_SERVERS")
        .unwrap_or_else(|_| "clangd,pyright".into())
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();

    // Server logs (scry appends each server's stderr to a log file) go to a
    // scratch directory, not the user's state directory.
    let logs = tempfile::tempdir().expect("log dir");
    // SAFETY: set before the runtime (and any other thread) starts.
    unsafe { std::env::set_var("SCRY_LOG_DIR", logs.path()) };

    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(scry_testkit::fixture_path("expected.json")).unwrap(),
    )
    .unwrap();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    println!(
        "latency bench: {iters} timed requests per operation and side, warm servers, \
         interleaved in {ROUNDS} rounds; times are per request, end to end"
    );
    println!();
    let started = Instant::now();
    let mut all = Vec::new();
    for def in SERVERS
        .iter()
        .filter(|d| wanted.iter().any(|w| w == d.name))
    {
        if let Some(rows) = rt.block_on(bench_server(def, iters, &expected)) {
            all.push((def.name, rows));
        }
    }
    if wanted.iter().any(|w| w == "hostile") {
        hostile::bench();
    }
    println!("total wall time: {:.1} s", started.elapsed().as_secs_f64());
    println!();
    println!(
        "{:<8} {:<22} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9}",
        "server",
        "operation",
        "raw min",
        "raw med",
        "scry min",
        "scry med",
        "scry/raw",
        "added ms",
        "scry max"
    );
    for (server, rows) in &all {
        for r in rows {
            println!(
                "{:<8} {:<22} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.2}x {:>9.3} {:>9.3}",
                server,
                r.op,
                r.raw.min,
                r.raw.median,
                r.scry.min,
                r.scry.median,
                r.scry.median / r.raw.median,
                r.scry.median - r.raw.median,
                r.scry.max,
            );
        }
    }
    println!();
    println!("results per call (location counts):");
    for (server, rows) in &all {
        for r in rows {
            println!("  {server:<8} {:<22} {}", r.op, r.results);
        }
    }
    println!();
    println!(
        "what one call costs on each side:\n\
         \x20 raw            1 server round trip (the LSP request over scry_rpc::Connection; JSON encode/decode).\n\
         \x20 scry by name   Engine::run + render_text: resolve the path (canonicalize), route to the server,\n\
         \x20                stat every open document and re-read + compare the asked file from disk, the\n\
         \x20                file's textDocument/documentSymbol (to find the declaration; a server round trip\n\
         \x20                only when the document's version is new, else the session's cached reply), then\n\
         \x20                the request, typed parsing of the result, line texts for every location (open\n\
         \x20                documents, else a disk read per other file), and rendering the text answer.\n\
         \x20 scry line+col  the same without documentSymbol: 1 server round trip plus the same local work.\n\
         note: by name, scry asks at the first code occurrence when the file has no declaration of the\n\
         name (see \"scry asked at\" above), which may differ from the raw position."
    );
}
