//! What a session learns from the server's own messages: progress,
//! readiness, registrations, published diagnostics, stderr. Shared between
//! the transport's reader task (which writes it) and requests (which read it).
//!
//! Readiness comes from indexing progress, rust-analyzer's `quiescent`
//! status, and, for servers that say it only in a log line (pyright: `Found
//! 4 source files`), a [`StartupSignal`]: until that line arrives, or its
//! time is up, the server counts as indexing. Before it, pyright answers
//! references from the open files alone.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::watch;

/// Why a progress token exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressKind {
    /// Background work that makes answers incomplete: indexing, loading the
    /// workspace, `cargo check` start-up, ...
    Indexing,
    /// Progress reported around one of our own requests (pyright wraps every
    /// references call in begin/end). Never makes a server "not ready".
    Request,
}

#[derive(Debug, Clone)]
pub struct ProgressEntry {
    pub title: String,
    pub message: Option<String>,
    pub percentage: Option<u32>,
    pub kind: ProgressKind,
    pub since: Instant,
}

impl ProgressEntry {
    /// "Indexing 45% (crates/foo)".
    pub fn describe(&self) -> String {
        let mut s = self.title.clone();
        if let Some(p) = self.percentage {
            s.push_str(&format!(" {p}%"));
        }
        if let Some(m) = self.message.as_deref().filter(|m| !m.is_empty()) {
            let m: String = m.chars().take(60).collect();
            s.push_str(&format!(" ({m})"));
        }
        s
    }
}

/// A dynamic capability registration (`client/registerCapability`).
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    pub id: String,
    pub method: String,
    pub options: Value,
}

/// Diagnostics as last published for one document.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    pub version: Option<i64>,
    pub diagnostics: Vec<Value>,
    pub at: Instant,
}

/// Bounded ring of the server's stderr lines (never shown in answers; for
/// logs and crash reports to people).
#[derive(Debug, Default)]
pub struct StderrRing {
    lines: VecDeque<String>,
    bytes: usize,
}

impl StderrRing {
    const MAX_BYTES: usize = 64 * 1024;

    pub fn push(&mut self, line: String) {
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.bytes > Self::MAX_BYTES {
            match self.lines.pop_front() {
                Some(l) => self.bytes -= l.len(),
                None => break,
            }
        }
    }

    pub fn tail(&self, n: usize) -> Vec<String> {
        let skip = self.lines.len().saturating_sub(n);
        self.lines.iter().skip(skip).cloned().collect()
    }
}

/// A log line (`window/logMessage` or `window/showMessage`) that ends a
/// server's start-up work: until one matches `pattern`, or `within` has
/// passed since the session began, the server is "starting up" (indexing).
#[derive(Debug, Clone)]
pub struct StartupSignal {
    pub pattern: regex::Regex,
    pub within: Duration,
}

/// The start-up work a [`StartupSignal`] waits on, described like progress.
const STARTING_UP: &str = "starting up (finding the project's files)";

/// A server told of a new folder that reports no work within this long is
/// taken to have loaded it.
pub const RELOAD_QUIET: Duration = Duration::from_secs(2);

/// A server loading a new folder counts as indexing at most this long.
pub const RELOAD_WITHIN: Duration = Duration::from_secs(120);

/// The wait for a new folder's loading ([`ServerState::reloading`]).
#[derive(Debug, Clone)]
struct Reload {
    what: String,
    since: Instant,
    until: Instant,
    /// Work (indexing progress, `quiescent: false`) began since.
    saw_work: bool,
}

#[derive(Debug, Default)]
struct Inner {
    /// The start-up signal not yet seen, and when waiting for it ends.
    startup: Option<(regex::Regex, Instant)>,
    /// The start-up signal's pattern, kept to wait for it again when a
    /// folder is added ([`ServerState::reloading`]).
    startup_pattern: Option<(regex::Regex, Duration)>,
    /// A folder was added: the server counts as loading it (`what`) until
    /// it has reported work and finished it, or said nothing for
    /// [`RELOAD_QUIET`], and at most until `until`.
    reload: Option<Reload>,
    progress: HashMap<String, ProgressEntry>,
    /// Tokens the server created with `window/workDoneProgress/create`.
    created: HashMap<String, Instant>,
    /// Tokens we put in our own requests' `workDoneToken`.
    ours: Vec<String>,
    /// rust-analyzer's `experimental/serverStatus` `quiescent` flag.
    quiescent: Option<bool>,
    status_message: Option<String>,
    registrations: Vec<Registration>,
    diagnostics: HashMap<String, Published>,
    /// When an indexing progress last ended (or quiescence was reached).
    last_indexing_end: Option<Instant>,
    /// Whether any indexing progress was ever seen.
    saw_indexing: bool,
    stderr: StderrRing,
    last_message: Option<String>,
    /// When the server last published diagnostics or began or ended a
    /// progress: "quiet for a window" is measured from here.
    last_activity: Option<Instant>,
}

/// Shared server state. Every change bumps a generation counter that
/// waiters can watch.
#[derive(Debug)]
pub struct ServerState {
    inner: Mutex<Inner>,
    changed: watch::Sender<u64>,
    started: Instant,
}

impl Default for ServerState {
    fn default() -> Self {
        ServerState::new(None)
    }
}

/// Titles that mean "answers are not complete yet".
fn indexing_title(title: &str) -> bool {
    let t = title.to_ascii_lowercase();
    [
        "index",
        "load",
        "scan",
        "fetch",
        "build",
        "analyz",
        "analys",
        "initializ",
        "cargo",
        "roots",
        "metadata",
        "crawl",
        "parsing",
        "workspace",
        "packages",
        "finding",
        "starting",
        "background",
    ]
    .iter()
    .any(|k| t.contains(k))
}

impl ServerState {
    /// The state of a session starting now; with a start-up signal it is
    /// not ready until the signal's line arrives or its time is up.
    pub fn new(startup: Option<StartupSignal>) -> ServerState {
        let started = Instant::now();
        let inner = Inner {
            saw_indexing: startup.is_some(),
            startup_pattern: startup.as_ref().map(|s| (s.pattern.clone(), s.within)),
            startup: startup.map(|s| (s.pattern, started + s.within)),
            ..Inner::default()
        };
        ServerState {
            inner: Mutex::new(inner),
            changed: watch::Sender::new(0),
            started,
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let r = f(&mut g);
        drop(g);
        self.changed.send_modify(|g| *g += 1);
        r
    }

    fn read<R>(&self, f: impl FnOnce(&Inner) -> R) -> R {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&g)
    }

    /// A receiver that sees every state change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    pub fn token_created(&self, token: String) {
        self.with(|s| {
            s.created.insert(token, Instant::now());
        });
    }

    /// Register a token scry puts in its own request (`workDoneToken`).
    pub fn our_token(&self, token: String) {
        self.with(|s| {
            s.ours.push(token);
            if s.ours.len() > 256 {
                s.ours.drain(..128);
            }
        });
    }

    /// Handle a `$/progress` notification.
    pub fn on_progress(&self, params: &Value) {
        let token = match &params["token"] {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => return,
        };
        let value = &params["value"];
        let started = self.started;
        self.with(|s| match value["kind"].as_str() {
            Some("begin") => {
                let title = value["title"].as_str().unwrap_or("").to_string();
                let ours = s.ours.contains(&token);
                // Server-created tokens early in the session, or titles that
                // say so, are indexing; progress wrapped around one request
                // (our token, or a token the server made up mid-session with
                // an unrelated title) is not.
                let early = s
                    .created
                    .get(&token)
                    .is_some_and(|t| t.duration_since(started) < Duration::from_secs(3));
                let kind = if !ours && (indexing_title(&title) || early) {
                    ProgressKind::Indexing
                } else {
                    ProgressKind::Request
                };
                if kind == ProgressKind::Indexing {
                    s.saw_indexing = true;
                    if let Some(r) = &mut s.reload {
                        r.saw_work = true;
                    }
                }
                tracing::debug!(%token, %title, ?kind, "progress begin");
                if kind == ProgressKind::Indexing {
                    s.last_activity = Some(Instant::now());
                }
                s.progress.insert(
                    token,
                    ProgressEntry {
                        title,
                        message: value["message"].as_str().map(str::to_string),
                        percentage: value["percentage"].as_u64().map(|p| p as u32),
                        kind,
                        since: Instant::now(),
                    },
                );
            }
            Some("report") => {
                if let Some(e) = s.progress.get_mut(&token) {
                    if let Some(m) = value["message"].as_str() {
                        e.message = Some(m.to_string());
                    }
                    if let Some(p) = value["percentage"].as_u64() {
                        e.percentage = Some(p as u32);
                    }
                }
            }
            Some("end") => {
                if let Some(e) = s.progress.remove(&token)
                    && e.kind == ProgressKind::Indexing
                {
                    s.last_indexing_end = Some(Instant::now());
                    s.last_activity = s.last_indexing_end;
                }
                s.created.remove(&token);
            }
            _ => {}
        });
    }

    /// Handle rust-analyzer's `experimental/serverStatus`.
    pub fn on_server_status(&self, params: &Value) {
        self.with(|s| {
            let q = params["quiescent"].as_bool();
            if q == Some(false) {
                s.saw_indexing = true;
                if let Some(r) = &mut s.reload {
                    r.saw_work = true;
                }
            }
            if q == Some(true) && s.quiescent == Some(false) {
                s.last_indexing_end = Some(Instant::now());
            }
            s.quiescent = q;
            s.status_message = params["message"].as_str().map(str::to_string);
        });
    }

    pub fn on_register(&self, regs: Vec<Registration>) {
        self.with(|s| {
            for r in regs {
                s.registrations.retain(|x| x.id != r.id);
                s.registrations.push(r);
            }
        });
    }

    pub fn on_unregister(&self, ids: &[String]) {
        self.with(|s| s.registrations.retain(|r| !ids.contains(&r.id)));
    }

    pub fn registrations(&self) -> Vec<Registration> {
        self.read(|s| s.registrations.clone())
    }

    pub fn has_registration(&self, method: &str) -> bool {
        self.read(|s| s.registrations.iter().any(|r| r.method == method))
    }

    pub fn on_diagnostics(&self, params: &Value) {
        let Some(uri) = params["uri"].as_str() else {
            return;
        };
        let diagnostics = params["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let version = params["version"].as_i64();
        self.with(|s| {
            s.last_activity = Some(Instant::now());
            s.diagnostics.insert(
                uri.to_string(),
                Published {
                    version,
                    diagnostics,
                    at: Instant::now(),
                },
            );
        });
    }

    pub fn diagnostics(&self, uri: &str) -> Option<Published> {
        self.read(|s| s.diagnostics.get(uri).cloned())
    }

    /// When the server last published diagnostics (for any document) or
    /// began or ended an indexing progress.
    pub fn last_activity(&self) -> Option<Instant> {
        self.read(|s| s.last_activity)
    }

    /// Every document with published diagnostics (uri, publication).
    pub fn all_diagnostics(&self) -> Vec<(String, Published)> {
        self.read(|s| {
            s.diagnostics
                .iter()
                .map(|(u, p)| (u.clone(), p.clone()))
                .collect()
        })
    }

    pub fn on_stderr(&self, line: String) {
        // Not a state change anyone waits for: no generation bump.
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.stderr.push(line);
    }

    pub fn stderr_tail(&self, n: usize) -> Vec<String> {
        self.read(|s| s.stderr.tail(n))
    }

    pub fn on_message(&self, text: String) {
        self.on_log(&text);
        self.with(|s| s.last_message = Some(text));
    }

    /// A log line from the server: the start-up signal, when it matches.
    pub fn on_log(&self, text: &str) {
        let matches = self.read(|s| {
            s.startup
                .as_ref()
                .is_some_and(|(pattern, _)| pattern.is_match(text))
        });
        if matches {
            tracing::debug!(line = text, "start-up signal seen");
            self.with(|s| {
                s.startup = None;
                s.last_indexing_end = Some(Instant::now());
                s.last_activity = s.last_indexing_end;
            });
        }
    }

    /// When waiting for the start-up signal ends, while it is awaited.
    fn startup_until(&self) -> Option<Instant> {
        self.read(|s| {
            let startup = s.startup.as_ref().map(|(_, until)| *until);
            // A new folder's quiet time running out wakes a wait too.
            let reload = s.reload.as_ref().map(|r| {
                if r.saw_work {
                    r.until
                } else {
                    (r.since + RELOAD_QUIET).min(r.until)
                }
            });
            let now = Instant::now();
            match (startup.filter(|u| now < *u), reload.filter(|u| now < *u)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        })
    }

    /// The indexing work in progress, if any (the longest-running first).
    pub fn indexing(&self) -> Option<String> {
        self.read(|s| {
            let mut active: Vec<&ProgressEntry> = s
                .progress
                .values()
                .filter(|e| e.kind == ProgressKind::Indexing)
                .collect();
            active.sort_by_key(|e| e.since);
            if let Some(e) = active.first() {
                return Some(e.describe());
            }
            if s.quiescent == Some(false) {
                return Some(
                    s.status_message
                        .clone()
                        .filter(|m| !m.is_empty())
                        .unwrap_or_else(|| "loading the workspace".to_string()),
                );
            }
            if s.startup
                .as_ref()
                .is_some_and(|(_, until)| Instant::now() < *until)
            {
                return Some(STARTING_UP.to_string());
            }
            if let Some(r) = &s.reload {
                let now = Instant::now();
                let quiet = !r.saw_work && now.duration_since(r.since) >= RELOAD_QUIET;
                let done = r.saw_work && s.last_indexing_end.is_some_and(|e| e > r.since);
                if now < r.until && !quiet && !done {
                    return Some(r.what.clone());
                }
            }
            None
        })
    }

    /// A folder was added to the server (`what` says which): it counts as
    /// indexing until it has reported work and finished it (or, with a
    /// start-up signal, logged it again), or reported none within
    /// [`RELOAD_QUIET`]; at most `within`.
    pub fn reloading(&self, what: String, within: Duration) {
        let now = Instant::now();
        self.with(|s| {
            if let Some((pattern, wait)) = &s.startup_pattern {
                s.startup = Some((pattern.clone(), now + (*wait).min(within)));
            }
            s.reload = Some(Reload {
                what,
                since: now,
                until: now + within,
                saw_work: false,
            });
        });
    }

    /// Ready: no indexing progress active and not reported busy.
    pub fn is_ready(&self) -> bool {
        self.indexing().is_none()
    }

    /// Whether the server ever reported indexing, and when it last finished.
    pub fn indexing_history(&self) -> (bool, Option<Instant>) {
        self.read(|s| (s.saw_indexing, s.last_indexing_end))
    }

    /// Wait until ready, or until `deadline`. Returns whether it is ready.
    /// A start-up signal's time running out wakes the wait, as a message
    /// would.
    pub async fn wait_ready(&self, deadline: tokio::time::Instant) -> bool {
        let mut rx = self.subscribe();
        loop {
            if self.is_ready() {
                return true;
            }
            let wake = match self.startup_until() {
                Some(until) => deadline.min(tokio::time::Instant::from_std(until)),
                None => deadline,
            };
            match tokio::time::timeout_at(wake, rx.changed()).await {
                Ok(Ok(())) => continue,
                Err(_) if wake < deadline => continue,
                _ => return self.is_ready(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn signal(within: Duration) -> StartupSignal {
        StartupSignal {
            pattern: regex::Regex::new(r"^Found \d+ source files?$").unwrap(),
            within,
        }
    }

    #[test]
    fn a_startup_signal_keeps_the_server_indexing_until_its_line() {
        let st = ServerState::new(Some(signal(Duration::from_secs(60))));
        assert_eq!(st.indexing().as_deref(), Some(STARTING_UP));
        assert_eq!(st.indexing_history(), (true, None));
        st.on_log("Loading pyproject.toml file at /w/pyproject.toml");
        st.on_message("Found files, maybe".into());
        assert!(!st.is_ready(), "only a matching line ends start-up");
        st.on_log("Found 4 source files");
        assert!(st.is_ready());
        assert!(st.indexing_history().1.is_some(), "start-up ended now");
        // Without a signal a server is ready from the start.
        assert!(ServerState::default().is_ready());
    }

    #[tokio::test]
    async fn waiting_for_a_startup_signal_ends_when_its_time_is_up() {
        let st = ServerState::new(Some(signal(Duration::from_millis(200))));
        let t = tokio::time::Instant::now();
        assert!(st.wait_ready(t + Duration::from_secs(30)).await);
        let waited = t.elapsed();
        assert!(waited >= Duration::from_millis(150), "{waited:?}");
        assert!(waited < Duration::from_secs(20), "{waited:?}");
        // A deadline before the time is up ends the wait not ready.
        let st = ServerState::new(Some(signal(Duration::from_secs(60))));
        let t = tokio::time::Instant::now();
        assert!(!st.wait_ready(t + Duration::from_millis(50)).await);
    }

    #[tokio::test]
    async fn the_startup_line_wakes_a_waiting_question() {
        let st = std::sync::Arc::new(ServerState::new(Some(signal(Duration::from_secs(60)))));
        let waiter = {
            let st = st.clone();
            tokio::spawn(async move {
                st.wait_ready(tokio::time::Instant::now() + Duration::from_secs(30))
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        st.on_log("Found 1 source file");
        let ready = tokio::time::timeout(Duration::from_secs(10), waiter).await;
        assert!(ready.unwrap().unwrap());
    }

    #[test]
    fn request_progress_does_not_block_readiness() {
        let st = ServerState::default();
        st.our_token("scry-1".into());
        st.on_progress(
            &json!({"token":"scry-1","value":{"kind":"begin","title":"Finding references"}}),
        );
        assert!(st.is_ready());
        st.on_progress(
            &json!({"token":"t2","value":{"kind":"begin","title":"Indexing","percentage":3}}),
        );
        assert_eq!(st.indexing().unwrap(), "Indexing 3%");
        st.on_progress(
            &json!({"token":"t2","value":{"kind":"report","percentage":50,"message":"foo"}}),
        );
        assert_eq!(st.indexing().unwrap(), "Indexing 50% (foo)");
        st.on_progress(&json!({"token":"t2","value":{"kind":"end"}}));
        assert!(st.is_ready());
        assert!(st.indexing_history().0);
    }

    #[test]
    fn server_status_quiescence() {
        let st = ServerState::default();
        st.on_server_status(&json!({"health":"ok","quiescent":false}));
        assert!(!st.is_ready());
        st.on_server_status(&json!({"health":"ok","quiescent":true}));
        assert!(st.is_ready());
    }

    #[test]
    fn stderr_ring_is_bounded() {
        let mut r = StderrRing::default();
        for i in 0..10_000 {
            r.push(format!("line {i} {}", "x".repeat(50)));
        }
        assert!(r.bytes <= StderrRing::MAX_BYTES);
        assert!(r.tail(1)[0].starts_with("line 9999"));
    }
}
