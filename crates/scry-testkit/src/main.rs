//! `scry-fake-lsp`: a scriptable fake language server for fault-injection tests.
//!
//! It speaks LSP (JSON-RPC 2.0 with `Content-Length` framing) over stdio and is
//! used to produce faults that real servers will not produce on demand. All
//! behaviour is chosen through environment variables.
//!
//! # Modes (`FAKE_LSP_MODE`)
//!
//! "The method" below is `FAKE_LSP_METHOD` (default `textDocument/definition`).
//!
//! * `normal` (default): a well-behaved server (see "Normal behaviour").
//! * `crash-on-request`: `exit(3)` upon receiving a request for the method,
//!   without answering it.
//! * `hang`: never answers requests for the method (cancellation is ignored
//!   too); keeps reading and answers everything else.
//! * `garbage`: before answering a request for the method, writes the plain
//!   text line `garbage line\r\n`, then a well-framed message whose body is not
//!   JSON (`Content-Length: 9\r\n\r\nnot json!`), then the proper response.
//! * `huge`: answers the method with a valid response whose result is an array
//!   of locations (each with a long `padding` string field) totalling about
//!   `FAKE_LSP_HUGE_BYTES` bytes (default 80 MiB).
//! * `unknown-id`: for the method, first sends
//!   `{"jsonrpc":"2.0","id":999999,"result":null}`, then the proper response.
//! * `exit-during-init`: `exit(4)` immediately upon receiving `initialize`.
//! * `slow`: answers the method after `FAKE_LSP_DELAY_MS` ms (default 2000),
//!   unless a `$/cancelRequest` for that id arrives first, in which case it
//!   answers at once with error `-32800` "cancelled". Other requests are
//!   answered immediately meanwhile.
//! * `indexing`: after `initialized`, sends the request
//!   `window/workDoneProgress/create` (token `"idx"`) to the client and waits
//!   for its response; then sends `$/progress` `begin` (title "Indexing",
//!   percentage 0), a `report` at 50% halfway through, and `end` after
//!   `FAKE_LSP_INDEX_MS` ms (default 1500). Until the end has been sent
//!   (including while waiting for the create response), `textDocument/definition`
//!   answers `[]`, like rust-analyzer; afterwards the normal answer. If the
//!   client answers the create request with an error, no `$/progress` is sent
//!   but indexing still ends after `FAKE_LSP_INDEX_MS`.
//! * `no-shutdown`: never answers `shutdown` and ignores `exit`; the client
//!   must kill it. Stdin EOF is ignored as well (the process lingers for 30 s
//!   as a safety net against leaked processes, then exits 0).
//!
//! # Other environment variables
//!
//! * `FAKE_LSP_METHOD`: the method the fault modes apply to.
//! * `FAKE_LSP_LOG`: file to which one line per received message is appended,
//!   as compact JSON (a body that is not JSON is logged as a JSON string),
//!   flushed after each line. Logged as soon as the message is read, before it
//!   is acted on.
//! * `FAKE_LSP_ENCODING`: `utf-8` / `utf-16` / `utf-32`: the `positionEncoding`
//!   announced in the initialize result and used to interpret and produce
//!   positions. Unset: omitted from the capabilities, positions are UTF-16. An
//!   unknown value is announced verbatim, positions are then UTF-16.
//! * `FAKE_LSP_PID_FILE`: the process id is written there at start.
//! * `FAKE_LSP_ARGS_FILE`: the arguments this process was started with
//!   (not the program) are written there at start as a JSON array of
//!   strings: what a `.cmd` shim, or a linter's `{files}`, passed on.
//! * `FAKE_LSP_HUGE_BYTES`, `FAKE_LSP_DELAY_MS`, `FAKE_LSP_INDEX_MS`: see above.
//! * `FAKE_LSP_CODE_ACTIONS=1`: advertise `codeActionProvider` and
//!   `executeCommandProvider` (command `fake.upper`).
//!   `textDocument/codeAction` answers two actions: 1. "Uppercase first
//!   line" (a CodeAction carrying only the command `fake.upper` with the
//!   document URI as argument) and 2. "Insert header" (a CodeAction with an
//!   `edit` inserting `// header\n` at the start). `workspace/executeCommand`
//!   of `fake.upper` sends the client a `workspace/applyEdit` that uppercases
//!   the first line of that document (as the server has it, version
//!   included), waits for the reply, and answers the command with that reply.
//!
//! * `FAKE_LSP_RENAME=1`: advertise `renameProvider` (no prepare step).
//!   `textDocument/rename` answers a WorkspaceEdit (`changes`) replacing
//!   every whole-word occurrence of the identifier under the position, in
//!   every open document, with `newName` (`null` when there is no
//!   identifier there).
//!
//! * `FAKE_LSP_FOLDERS=1`: advertise workspace folders, changes included
//!   (`workspace.workspaceFolders`: `supported`, `changeNotifications`);
//!   `workspace/didChangeWorkspaceFolders` is only logged.
//!
//! * `FAKE_LSP_WATCH=1`: after `initialized`, send the client
//!   `client/registerCapability` (id `fake-lsp-watch`) registering
//!   `workspace/didChangeWatchedFiles` for `**/*.fake`; the reply is
//!   accepted silently, the notifications only logged.
//!
//! * `FAKE_LSP_GROW_MIB=N`: every request for the method first allocates N
//!   MiB and writes every byte of it (so the resident memory grows), kept
//!   for the process's life; then the request is handled as the mode says.
//! * `FAKE_LSP_CHILD_MIB=N`: at start, spawn a child process (this same
//!   program, stdout closed, stdin a pipe from this process, in the
//!   server's process group or job) that allocates and writes N MiB, holds
//!   it, and exits when its parent is gone (the pipe's end of file; at most
//!   10 minutes). Its pid is written
//!   to `FAKE_LSP_CHILD_PID_FILE` when that is set. (The child is this
//!   program with `FAKE_LSP_HOLD_MIB=N`.)
//!
//! At start, the line `fake-lsp: started mode=<mode>` is written to stderr. An
//! unknown mode makes the process exit with status 2.
//!
//! # Normal behaviour
//!
//! * `initialize` → capabilities (`textDocumentSync: 1`, definition,
//!   references, hover, documentSymbol and workspaceSymbol providers, and
//!   `positionEncoding` when `FAKE_LSP_ENCODING` is set), `serverInfo`
//!   `{"name":"scry-fake-lsp","version":"0"}`.
//! * `shutdown` → `null`; `exit` → `exit(0)`; stdin EOF → `exit(0)`.
//! * `didOpen` / `didChange` (full sync) / `didClose` keep document texts.
//! * `textDocument/definition` → the Location of the first whole-word
//!   occurrence, in the same document, of the identifier under the position
//!   (`null` if there is none).
//! * `textDocument/references` → all whole-word occurrences of that identifier
//!   in that document.
//! * `textDocument/hover` → `{"contents":{"kind":"markdown","value":"```\nfake WORD\n```"}}`.
//! * `textDocument/documentSymbol`, `workspace/symbol` → `[]`.
//! * Other requests → error `-32601`. Other notifications are ignored (but
//!   logged). Responses from the client are accepted silently.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{self, BufRead, BufReader, Write};
use std::process;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

const DEFAULT_METHOD: &str = "textDocument/definition";
const DEFAULT_HUGE_BYTES: usize = 80 * 1024 * 1024;
const DEFAULT_DELAY_MS: u64 = 2000;
const DEFAULT_INDEX_MS: u64 = 1500;
const PROGRESS_TOKEN: &str = "idx";
const CREATE_REQUEST_ID: &str = "fake-lsp-progress-create";
const APPLY_EDIT_ID: &str = "fake-lsp-apply-edit";
const WATCH_REQUEST_ID: &str = "fake-lsp-watch";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Normal,
    CrashOnRequest,
    Hang,
    Garbage,
    Huge,
    UnknownId,
    ExitDuringInit,
    Slow,
    Indexing,
    NoShutdown,
}

impl Mode {
    fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "normal" => Mode::Normal,
            "crash-on-request" => Mode::CrashOnRequest,
            "hang" => Mode::Hang,
            "garbage" => Mode::Garbage,
            "huge" => Mode::Huge,
            "unknown-id" => Mode::UnknownId,
            "exit-during-init" => Mode::ExitDuringInit,
            "slow" => Mode::Slow,
            "indexing" => Mode::Indexing,
            "no-shutdown" => Mode::NoShutdown,
            _ => return None,
        })
    }
}

/// How `character` offsets in positions are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoding {
    Utf8,
    Utf16,
    Utf32,
}

impl Encoding {
    fn units(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }
}

/// What the reader thread hands to the main loop.
enum Incoming {
    Message(Value),
    /// A well-framed body that is not JSON.
    Invalid,
    Eof,
}

/// Scheduled work.
enum Timer {
    /// A delayed answer (mode `slow`).
    Respond {
        id: Value,
        response: Value,
    },
    ProgressReport,
    ProgressEnd,
}

struct Config {
    mode: Mode,
    method: String,
    encoding_name: Option<String>,
    encoding: Encoding,
    huge_bytes: usize,
    delay: Duration,
    index_time: Duration,
    grow_mib: usize,
}

fn env_parse<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => match v.trim().parse() {
            Ok(x) => x,
            Err(_) => {
                eprintln!("fake-lsp: ignoring unparsable {name}={v:?}");
                default
            }
        },
        Err(_) => default,
    }
}

impl Config {
    fn from_env() -> Config {
        let mode_name = std::env::var("FAKE_LSP_MODE").unwrap_or_else(|_| "normal".to_string());
        let mode = match Mode::parse(mode_name.trim()) {
            Some(m) => m,
            None => {
                eprintln!("fake-lsp: unknown FAKE_LSP_MODE {mode_name:?}");
                process::exit(2);
            }
        };
        let method = std::env::var("FAKE_LSP_METHOD").unwrap_or_else(|_| DEFAULT_METHOD.into());
        let encoding_name = std::env::var("FAKE_LSP_ENCODING").ok();
        let encoding = match encoding_name.as_deref() {
            Some("utf-8") => Encoding::Utf8,
            Some("utf-32") => Encoding::Utf32,
            _ => Encoding::Utf16,
        };
        Config {
            mode,
            method,
            encoding_name,
            encoding,
            huge_bytes: env_parse("FAKE_LSP_HUGE_BYTES", DEFAULT_HUGE_BYTES),
            delay: Duration::from_millis(env_parse("FAKE_LSP_DELAY_MS", DEFAULT_DELAY_MS)),
            index_time: Duration::from_millis(env_parse("FAKE_LSP_INDEX_MS", DEFAULT_INDEX_MS)),
            grow_mib: env_parse("FAKE_LSP_GROW_MIB", 0),
        }
    }

    fn mode_name(&self) -> &'static str {
        match self.mode {
            Mode::Normal => "normal",
            Mode::CrashOnRequest => "crash-on-request",
            Mode::Hang => "hang",
            Mode::Garbage => "garbage",
            Mode::Huge => "huge",
            Mode::UnknownId => "unknown-id",
            Mode::ExitDuringInit => "exit-during-init",
            Mode::Slow => "slow",
            Mode::Indexing => "indexing",
            Mode::NoShutdown => "no-shutdown",
        }
    }
}

// ---------------------------------------------------------------------------
// Framing
// ---------------------------------------------------------------------------

/// Reads one framed body. `Ok(None)` on a clean or unclean EOF.
fn read_frame(reader: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut content_length: Option<usize> = None;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        let n = reader.read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !saw_header {
                // Stray blank line between messages: tolerate it.
                continue;
            }
            match content_length {
                Some(len) => break read_body(reader, len),
                None => {
                    eprintln!("fake-lsp: header block without Content-Length; skipped");
                    saw_header = false;
                    continue;
                }
            }
        }
        saw_header = true;
        if let Some((name, value)) = text.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                match value.trim().parse::<usize>() {
                    Ok(len) => content_length = Some(len),
                    Err(_) => eprintln!("fake-lsp: bad Content-Length {value:?}"),
                }
            }
        } else {
            eprintln!("fake-lsp: bad header line {text:?}");
        }
    }
}

fn read_body(reader: &mut impl BufRead, len: usize) -> io::Result<Option<Vec<u8>>> {
    let mut body = vec![0u8; len];
    match reader.read_exact(&mut body) {
        Ok(()) => Ok(Some(body)),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes raw bytes to stdout and flushes; a broken stdout ends the process.
fn write_raw(bytes: &[u8]) {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
        eprintln!("fake-lsp: stdout closed; exiting");
        process::exit(0);
    }
}

/// Writes one framed body (header length is the body's byte length).
fn write_frame(body: &[u8]) {
    let mut buf = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    buf.extend_from_slice(body);
    write_raw(&buf);
}

fn send(msg: &Value) {
    let body = serde_json::to_vec(msg).expect("serialising a JSON value cannot fail");
    write_frame(&body);
}

fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

// ---------------------------------------------------------------------------
// Reader thread
// ---------------------------------------------------------------------------

fn spawn_reader() -> Receiver<Incoming> {
    let (tx, rx) = mpsc::channel();
    let mut log = std::env::var_os("FAKE_LSP_LOG").and_then(|path| {
        match OpenOptions::new().create(true).append(true).open(&path) {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("fake-lsp: cannot open log {path:?}: {e}");
                None
            }
        }
    });
    thread::spawn(move || {
        let stdin = io::stdin();
        let mut reader = BufReader::new(stdin.lock());
        loop {
            let body = match read_frame(&mut reader) {
                Ok(Some(body)) => body,
                Ok(None) => break,
                Err(e) => {
                    eprintln!("fake-lsp: read error: {e}");
                    break;
                }
            };
            let parsed: Option<Value> = serde_json::from_slice(&body).ok();
            if let Some(f) = log.as_mut() {
                let logged = match &parsed {
                    Some(v) => v.clone(),
                    None => Value::String(String::from_utf8_lossy(&body).into_owned()),
                };
                let mut line = logged.to_string();
                line.push('\n');
                if let Err(e) = f.write_all(line.as_bytes()).and_then(|()| f.flush()) {
                    eprintln!("fake-lsp: log write failed: {e}");
                }
            }
            let item = match parsed {
                Some(v) => Incoming::Message(v),
                None => Incoming::Invalid,
            };
            if tx.send(item).is_err() {
                return;
            }
        }
        let _ = tx.send(Incoming::Eof);
    });
    rx
}

// ---------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The lines of a document, without their terminators.
fn lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// Byte index in `line` of the position `col` (counted in `enc` units),
/// clamped to the line's end.
fn col_to_byte(line: &str, col: usize, enc: Encoding) -> usize {
    let mut acc = 0;
    for (i, c) in line.char_indices() {
        if acc >= col {
            return i;
        }
        acc += enc.units(c);
    }
    line.len()
}

fn byte_to_col(line: &str, byte: usize, enc: Encoding) -> usize {
    line[..byte].chars().map(|c| enc.units(c)).sum()
}

/// The identifier touching the byte index `at` of `line`: the one containing
/// it or, failing that, the one ending right before it.
fn word_at(line: &str, at: usize) -> Option<&str> {
    let after = line[at..].chars().next().filter(|c| is_ident(*c));
    let before = line[..at].chars().next_back().filter(|c| is_ident(*c));
    if after.is_none() && before.is_none() {
        return None;
    }
    let start = line[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = line[at..]
        .char_indices()
        .find(|(_, c)| !is_ident(*c))
        .map_or(line.len(), |(i, _)| at + i);
    Some(&line[start..end])
}

/// All whole-word occurrences of `word`: (line, start byte, end byte).
fn occurrences(text: &str, word: &str) -> Vec<(usize, usize, usize)> {
    let mut found = Vec::new();
    for (ln, line) in lines(text).into_iter().enumerate() {
        let mut from = 0;
        while let Some(rel) = line[from..].find(word) {
            let start = from + rel;
            let end = start + word.len();
            let left_ok = !line[..start].chars().next_back().is_some_and(is_ident);
            let right_ok = !line[end..].chars().next().is_some_and(is_ident);
            if left_ok && right_ok {
                found.push((ln, start, end));
            }
            from = start + word.chars().next().map_or(1, char::len_utf8);
        }
    }
    found
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

struct Server {
    cfg: Config,
    docs: HashMap<String, String>,
    timers: Vec<(Instant, Timer)>,
    /// Mode `indexing`: true from `initialized` until the end was sent.
    indexing: bool,
    /// Mode `indexing`: waiting for the answer to `window/workDoneProgress/create`.
    awaiting_create: bool,
    /// `fake.upper`: the executeCommand request waiting for the client's
    /// applyEdit reply.
    awaiting_apply: Option<Value>,
    versions: HashMap<String, i64>,
    /// `FAKE_LSP_GROW_MIB`: what the requests allocated, kept.
    hoard: Vec<Vec<u8>>,
}

/// `mib` MiB, every byte written (resident, not just reserved).
fn touched(mib: usize) -> Vec<u8> {
    std::hint::black_box(vec![0xA5u8; mib << 20])
}

impl Server {
    fn new(cfg: Config) -> Server {
        Server {
            cfg,
            docs: HashMap::new(),
            timers: Vec::new(),
            indexing: false,
            awaiting_create: false,
            awaiting_apply: None,
            versions: HashMap::new(),
            hoard: Vec::new(),
        }
    }

    fn run(&mut self, rx: Receiver<Incoming>) {
        loop {
            self.fire_due_timers();
            let next = self.timers.iter().map(|(at, _)| *at).min();
            let incoming = match next {
                Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => Incoming::Eof,
                },
                None => rx.recv().unwrap_or(Incoming::Eof),
            };
            match incoming {
                Incoming::Message(msg) => self.handle(msg),
                Incoming::Invalid => {
                    send(&error_response(&Value::Null, -32700, "parse error"));
                }
                Incoming::Eof => self.on_eof(),
            }
        }
    }

    fn on_eof(&self) -> ! {
        if self.cfg.mode == Mode::NoShutdown {
            eprintln!("fake-lsp: stdin closed; no-shutdown mode lingers");
            thread::sleep(Duration::from_secs(30));
        }
        process::exit(0);
    }

    fn fire_due_timers(&mut self) {
        loop {
            let now = Instant::now();
            let Some(pos) = self.timers.iter().position(|(at, _)| *at <= now) else {
                return;
            };
            let (_, timer) = self.timers.remove(pos);
            match timer {
                Timer::Respond { response, .. } => send(&response),
                Timer::ProgressReport => send(&notification(
                    "$/progress",
                    json!({"token": PROGRESS_TOKEN,
                           "value": {"kind": "report", "message": "halfway", "percentage": 50}}),
                )),
                Timer::ProgressEnd => {
                    if !self.awaiting_create {
                        send(&notification(
                            "$/progress",
                            json!({"token": PROGRESS_TOKEN,
                                   "value": {"kind": "end", "message": "done"}}),
                        ));
                    }
                    self.indexing = false;
                }
            }
        }
    }

    fn handle(&mut self, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = msg.get("id").cloned();
        match (method, id) {
            (Some(method), Some(id)) => self.handle_request(&method, id, &msg),
            (Some(method), None) => self.handle_notification(&method, &msg),
            (None, Some(id)) => self.handle_client_response(&id, &msg),
            (None, None) => eprintln!("fake-lsp: ignoring message without method or id"),
        }
    }

    fn handle_client_response(&mut self, id: &Value, msg: &Value) {
        if id.as_str() == Some(APPLY_EDIT_ID)
            && let Some(exec_id) = self.awaiting_apply.take()
        {
            let result = msg.get("result").cloned().unwrap_or(Value::Null);
            send(&response(&exec_id, result));
            return;
        }
        if self.awaiting_create && id.as_str() == Some(CREATE_REQUEST_ID) {
            self.awaiting_create = false;
            let ok = msg.get("error").is_none();
            if ok {
                send(&notification(
                    "$/progress",
                    json!({"token": PROGRESS_TOKEN,
                           "value": {"kind": "begin", "title": "Indexing",
                                     "cancellable": false, "percentage": 0}}),
                ));
            }
            let now = Instant::now();
            if ok {
                self.timers
                    .push((now + self.cfg.index_time / 2, Timer::ProgressReport));
            }
            self.timers
                .push((now + self.cfg.index_time, Timer::ProgressEnd));
        }
    }

    fn handle_notification(&mut self, method: &str, msg: &Value) {
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        if method == "initialized" && std::env::var("FAKE_LSP_WATCH").is_ok_and(|v| v == "1") {
            send(&json!({
                "jsonrpc": "2.0",
                "id": WATCH_REQUEST_ID,
                "method": "client/registerCapability",
                "params": {"registrations": [{
                    "id": "fake-watch",
                    "method": "workspace/didChangeWatchedFiles",
                    "registerOptions": {"watchers": [{"globPattern": "**/*.fake"}]},
                }]},
            }));
        }
        match method {
            "exit" if self.cfg.mode != Mode::NoShutdown => process::exit(0),
            "initialized" if self.cfg.mode == Mode::Indexing => {
                self.indexing = true;
                self.awaiting_create = true;
                send(&json!({
                    "jsonrpc": "2.0",
                    "id": CREATE_REQUEST_ID,
                    "method": "window/workDoneProgress/create",
                    "params": {"token": PROGRESS_TOKEN},
                }));
            }
            "textDocument/didOpen" => {
                let doc = &params["textDocument"];
                if let (Some(uri), Some(text)) = (doc["uri"].as_str(), doc["text"].as_str()) {
                    self.docs.insert(uri.to_owned(), text.to_owned());
                    self.versions
                        .insert(uri.to_owned(), doc["version"].as_i64().unwrap_or(0));
                }
            }
            "textDocument/didChange" => {
                let uri = params["textDocument"]["uri"].as_str();
                let last = params["contentChanges"]
                    .as_array()
                    .and_then(|c| c.last())
                    .and_then(|c| c["text"].as_str());
                if let (Some(uri), Some(text)) = (uri, last) {
                    self.docs.insert(uri.to_owned(), text.to_owned());
                    if let Some(v) = params["textDocument"]["version"].as_i64() {
                        self.versions.insert(uri.to_owned(), v);
                    }
                }
            }
            "textDocument/didClose" => {
                if let Some(uri) = params["textDocument"]["uri"].as_str() {
                    self.docs.remove(uri);
                }
            }
            "$/cancelRequest" => {
                let target = &params["id"];
                if let Some(pos) = self
                    .timers
                    .iter()
                    .position(|(_, t)| matches!(t, Timer::Respond { id, .. } if id == target))
                {
                    self.timers.remove(pos);
                    send(&error_response(target, -32800, "cancelled"));
                }
            }
            _ => {}
        }
    }

    fn handle_request(&mut self, method: &str, id: Value, msg: &Value) {
        let mode = self.cfg.mode;
        if method == "initialize" && mode == Mode::ExitDuringInit {
            process::exit(4);
        }
        if method == "shutdown" && mode == Mode::NoShutdown {
            return;
        }
        let targeted = method == self.cfg.method;
        if targeted && self.cfg.grow_mib > 0 {
            self.hoard.push(touched(self.cfg.grow_mib));
            eprintln!(
                "fake-lsp: holding {} MiB",
                self.hoard.iter().map(Vec::len).sum::<usize>() >> 20
            );
        }
        if targeted {
            match mode {
                Mode::CrashOnRequest => process::exit(3),
                Mode::Hang => return,
                Mode::Huge => {
                    self.send_huge(&id);
                    return;
                }
                Mode::Garbage => {
                    write_raw(b"garbage line\r\n");
                    write_frame(b"not json!");
                }
                Mode::UnknownId => {
                    send(&json!({"jsonrpc": "2.0", "id": 999_999, "result": null}));
                }
                _ => {}
            }
        }
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        if method == "workspace/executeCommand" && code_actions_enabled() {
            let uri = params["arguments"][0]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let Some(text) = self.docs.get(&uri) else {
                send(&error_response(&id, -32602, "document not open"));
                return;
            };
            let first = lines(text).first().copied().unwrap_or_default();
            let end = byte_to_col(first, first.len(), self.cfg.encoding);
            let version = self.versions.get(&uri).copied();
            self.awaiting_apply = Some(id);
            send(&json!({
                "jsonrpc": "2.0",
                "id": APPLY_EDIT_ID,
                "method": "workspace/applyEdit",
                "params": {
                    "label": "Uppercase first line",
                    "edit": {"documentChanges": [{
                        "textDocument": {"uri": uri, "version": version},
                        "edits": [{"range": {"start": {"line": 0, "character": 0},
                                             "end": {"line": 0, "character": end}},
                                   "newText": first.to_uppercase()}],
                    }]},
                },
            }));
            return;
        }
        let answer = self.answer(method, &id, &params);
        if targeted && mode == Mode::Slow {
            self.timers.push((
                Instant::now() + self.cfg.delay,
                Timer::Respond {
                    id,
                    response: answer,
                },
            ));
        } else {
            send(&answer);
        }
    }

    fn answer(&self, method: &str, id: &Value, params: &Value) -> Value {
        match method {
            "initialize" => response(id, self.initialize_result()),
            "shutdown" => response(id, Value::Null),
            "textDocument/definition" => {
                if self.indexing {
                    return response(id, json!([]));
                }
                let result = self
                    .word_and_doc(params)
                    .and_then(|(uri, text, word)| {
                        occurrences(text, &word)
                            .first()
                            .map(|occ| self.location(uri, text, *occ))
                    })
                    .unwrap_or(Value::Null);
                response(id, result)
            }
            "textDocument/references" => {
                let result: Vec<Value> = self
                    .word_and_doc(params)
                    .map(|(uri, text, word)| {
                        occurrences(text, &word)
                            .into_iter()
                            .map(|occ| self.location(uri, text, occ))
                            .collect()
                    })
                    .unwrap_or_default();
                response(id, Value::Array(result))
            }
            "textDocument/hover" => {
                let result = self
                    .word_and_doc(params)
                    .map(|(_, _, word)| {
                        json!({"contents": {"kind": "markdown",
                                            "value": format!("```\nfake {word}\n```")}})
                    })
                    .unwrap_or(Value::Null);
                response(id, result)
            }
            "textDocument/documentSymbol" | "workspace/symbol" => response(id, json!([])),
            "textDocument/rename" if rename_enabled() => {
                let new_name = params["newName"].as_str().unwrap_or_default();
                let result = self.word_and_doc(params).map(|(_, _, word)| {
                    let mut changes = serde_json::Map::new();
                    for (uri, text) in &self.docs {
                        let edits: Vec<Value> = occurrences(text, &word)
                            .into_iter()
                            .map(|occ| {
                                let mut edit = self.location(uri, text, occ);
                                edit["newText"] = json!(new_name);
                                edit.as_object_mut().map(|o| o.remove("uri"));
                                edit
                            })
                            .collect();
                        if !edits.is_empty() {
                            changes.insert(uri.clone(), Value::Array(edits));
                        }
                    }
                    json!({"changes": changes})
                });
                response(id, result.unwrap_or(Value::Null))
            }
            "textDocument/codeAction" if code_actions_enabled() => {
                let uri = params["textDocument"]["uri"].clone();
                response(
                    id,
                    json!([
                        {"title": "Uppercase first line", "kind": "quickfix", "isPreferred": true,
                         "command": {"title": "Uppercase first line", "command": "fake.upper", "arguments": [uri]}},
                        {"title": "Insert header", "kind": "source",
                         "edit": {"changes": {uri.as_str().unwrap_or_default(): [
                             {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                              "newText": "// header\n"}]}}},
                    ]),
                )
            }
            _ => error_response(id, -32601, &format!("method not found: {method}")),
        }
    }

    fn initialize_result(&self) -> Value {
        let mut caps = json!({
            "textDocumentSync": 1,
            "definitionProvider": true,
            "referencesProvider": true,
            "hoverProvider": true,
            "documentSymbolProvider": true,
            "workspaceSymbolProvider": true,
        });
        if let Some(enc) = &self.cfg.encoding_name {
            caps["positionEncoding"] = Value::String(enc.clone());
        }
        if rename_enabled() {
            caps["renameProvider"] = json!(true);
        }
        if code_actions_enabled() {
            caps["codeActionProvider"] = json!(true);
            caps["executeCommandProvider"] = json!({"commands": ["fake.upper"]});
        }
        if std::env::var("FAKE_LSP_FOLDERS").is_ok_and(|v| v == "1") {
            caps["workspace"] =
                json!({"workspaceFolders": {"supported": true, "changeNotifications": true}});
        }
        json!({
            "capabilities": caps,
            "serverInfo": {"name": "scry-fake-lsp", "version": "0"},
        })
    }

    /// The document and the identifier at `params.position`.
    fn word_and_doc<'a>(&'a self, params: &Value) -> Option<(&'a str, &'a str, String)> {
        let uri = params["textDocument"]["uri"].as_str()?;
        let (uri, text) = self.docs.get_key_value(uri)?;
        let line_no = usize::try_from(params["position"]["line"].as_u64()?).ok()?;
        let col = usize::try_from(params["position"]["character"].as_u64()?).ok()?;
        let all = lines(text);
        let line = all.get(line_no)?;
        let at = col_to_byte(line, col, self.cfg.encoding);
        let word = word_at(line, at)?.to_owned();
        Some((uri.as_str(), text.as_str(), word))
    }

    fn location(&self, uri: &str, text: &str, (ln, start, end): (usize, usize, usize)) -> Value {
        let all = lines(text);
        let line = all[ln];
        let enc = self.cfg.encoding;
        json!({
            "uri": uri,
            "range": {
                "start": {"line": ln, "character": byte_to_col(line, start, enc)},
                "end": {"line": ln, "character": byte_to_col(line, end, enc)},
            }
        })
    }

    /// Mode `huge`: a valid response of about `huge_bytes` bytes, built as text
    /// directly to keep memory use down.
    fn send_huge(&self, id: &Value) {
        let padding = "x".repeat(4096);
        let entry = format!(
            "{{\"uri\":\"file:///x.rs\",\"range\":{{\"start\":{{\"line\":0,\"character\":0}},\
             \"end\":{{\"line\":0,\"character\":1}}}},\"padding\":\"{padding}\"}}"
        );
        let count = (self.cfg.huge_bytes / (entry.len() + 1)).max(1);
        let mut body = Vec::with_capacity(count * (entry.len() + 1) + 64);
        body.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        body.extend_from_slice(id.to_string().as_bytes());
        body.extend_from_slice(b",\"result\":[");
        for i in 0..count {
            if i > 0 {
                body.push(b',');
            }
            body.extend_from_slice(entry.as_bytes());
        }
        body.extend_from_slice(b"]}");
        write_frame(&body);
    }
}

fn rename_enabled() -> bool {
    std::env::var("FAKE_LSP_RENAME").is_ok_and(|v| v == "1")
}

fn code_actions_enabled() -> bool {
    std::env::var("FAKE_LSP_CODE_ACTIONS").is_ok_and(|v| v == "1")
}

/// `FAKE_LSP_HOLD_MIB`: the child of `FAKE_LSP_CHILD_MIB`: hold the memory
/// until the parent is gone: its stdin is a pipe whose only writer is the
/// parent, so end of file (or an error) means the parent exited, on every
/// OS alike.
fn hold(mib: usize) -> ! {
    let held = touched(mib);
    let (tx, rx) = mpsc::channel::<()>();
    thread::spawn(move || {
        let mut sink = [0u8; 64];
        let mut stdin = io::stdin();
        while matches!(io::Read::read(&mut stdin, &mut sink), Ok(n) if n > 0) {}
        let _ = tx.send(());
    });
    let _ = rx.recv_timeout(Duration::from_secs(600));
    drop(held);
    process::exit(0);
}

/// `FAKE_LSP_CHILD_MIB`: start the holding child.
fn spawn_holder(mib: usize) {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("fake-lsp: cannot find own executable: {e}");
            return;
        }
    };
    let child = process::Command::new(exe)
        .env("FAKE_LSP_HOLD_MIB", mib.to_string())
        .env_remove("FAKE_LSP_CHILD_MIB")
        .env_remove("FAKE_LSP_PID_FILE")
        .env_remove("FAKE_LSP_LOG")
        .stdin(process::Stdio::piped())
        .stdout(process::Stdio::null())
        .spawn();
    match child {
        Ok(c) => {
            if let Some(path) = std::env::var_os("FAKE_LSP_CHILD_PID_FILE") {
                let _ = std::fs::write(path, c.id().to_string());
            }
            // Never waited for, and its stdin never closed: it exits when
            // this process does (the pipe's end of file).
            std::mem::forget(c);
        }
        Err(e) => eprintln!("fake-lsp: cannot start the holding child: {e}"),
    }
}

fn main() {
    let hold_mib: usize = env_parse("FAKE_LSP_HOLD_MIB", 0);
    if hold_mib > 0 {
        hold(hold_mib);
    }
    let child_mib: usize = env_parse("FAKE_LSP_CHILD_MIB", 0);
    if child_mib > 0 {
        spawn_holder(child_mib);
    }
    if let Some(path) = std::env::var_os("FAKE_LSP_ARGS_FILE") {
        let args: Vec<String> = std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        if let Err(e) = std::fs::write(&path, Value::from(args).to_string()) {
            eprintln!("fake-lsp: cannot write args file {path:?}: {e}");
        }
    }
    let cfg = Config::from_env();
    if let Some(path) = std::env::var_os("FAKE_LSP_PID_FILE")
        && let Err(e) = std::fs::write(&path, process::id().to_string())
    {
        eprintln!("fake-lsp: cannot write pid file {path:?}: {e}");
    }
    eprintln!("fake-lsp: started mode={}", cfg.mode_name());
    let rx = spawn_reader();
    Server::new(cfg).run(rx);
}
