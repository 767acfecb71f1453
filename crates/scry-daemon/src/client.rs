//! The client side: connect to the user's daemon of this scry version
//! (starting it, detached, when there is none), say hello, send calls —
//! each with the environment that shapes it, the process's, captured once
//! ([`call_env`]) — and read progress and answers. A daemon of another scry
//! version is never used: its socket has another name, and a hello
//! mismatch is refused in clear words.
//!
//! Starting: `scry daemon --foreground` (the given executable), detached
//! ([`crate::platform::spawn`]: its own session on Unix, its own process
//! group without a console on Windows), stdin from the null device, stdout
//! and stderr appended to the daemon's log file, and without the variables
//! only servers read (each call brings its own: a server never inherits
//! the first client's virtualenv or toolchain); then the socket is polled
//! within a bound (`SCRY_DAEMON_START_MS`, default 5 s). Two clients
//! starting at once are fine: the second daemon finds the lock taken and
//! exits.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scry_model::OpError;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::out::Out;
use crate::paths::{self, Files, PROTOCOL, VERSION};
use crate::platform;
use crate::proto::{self, Call, CallResult, ClientFrame, DaemonFrame, Frames, Reply};
use scry_model::DaemonStatus;

/// How long a started daemon has to open its socket, by default.
pub const START_WITHIN: Duration = Duration::from_secs(5);

/// Why no connection was made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No daemon listens there (no socket, or a dead one's).
    #[error("no daemon at {}", .0.display())]
    Absent(PathBuf),
    /// A daemon answered but refused us (version or protocol mismatch).
    #[error("the scry daemon refused the connection: {0}")]
    Refused(String),
    #[error("{0}")]
    Io(String),
}

/// The connection broke before the call's answer came.
#[derive(Debug, thiserror::Error)]
#[error("the connection to the scry daemon was lost: {0}")]
pub struct Lost(pub String);

/// The two halves of a connection, whatever the transport.
type ReadSide = Box<dyn AsyncRead + Send + Unpin>;
type WriteSide = Box<dyn AsyncWrite + Send + Unpin>;

/// One connection to the daemon.
pub struct Connection {
    lines: Frames<ReadSide>,
    writer: WriteSide,
    /// The daemon's process id.
    pub pid: u32,
}

impl Connection {
    /// Connect and say hello, as client session `session`.
    pub async fn connect(files: &Files, session: &str) -> Result<Connection, ConnectError> {
        let stream = match platform::transport::connect(&files.socket).await {
            Ok(s) => s,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                ) =>
            {
                return Err(ConnectError::Absent(files.socket.clone()));
            }
            Err(e) => {
                return Err(ConnectError::Io(format!(
                    "cannot connect to {}: {e}",
                    files.socket.display()
                )));
            }
        };
        Connection::handshake(stream, session).await
    }

    /// Say hello on an open stream (of any transport).
    pub async fn handshake<S>(stream: S, session: &str) -> Result<Connection, ConnectError>
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (rd, writer) = tokio::io::split(stream);
        let mut c = Connection {
            lines: Frames::new(Box::new(rd)),
            writer: Box::new(writer),
            pid: 0,
        };
        c.send(&ClientFrame::Hello {
            protocol: PROTOCOL,
            version: VERSION.to_string(),
            session: session.to_string(),
        })
        .await
        .map_err(|e| ConnectError::Io(e.0))?;
        let frame = tokio::time::timeout(Duration::from_secs(10), c.read())
            .await
            .map_err(|_| ConnectError::Io("the scry daemon did not answer the hello".into()))?
            .map_err(|e| ConnectError::Io(e.0))?;
        match frame {
            DaemonFrame::Hello {
                protocol,
                version,
                pid,
            } if protocol == PROTOCOL && version == VERSION => {
                c.pid = pid;
                Ok(c)
            }
            DaemonFrame::Hello {
                protocol, version, ..
            } => Err(ConnectError::Refused(format!(
                "it is scry {version} (protocol {protocol}), this is scry {VERSION} (protocol {PROTOCOL})"
            ))),
            DaemonFrame::Refused { message } => Err(ConnectError::Refused(message)),
            other => Err(ConnectError::Refused(format!(
                "unexpected first frame {other:?}"
            ))),
        }
    }

    async fn send(&mut self, frame: &ClientFrame) -> Result<(), Lost> {
        self.writer
            .write_all(&proto::encode(frame))
            .await
            .map_err(|e| Lost(e.to_string()))
    }

    async fn read(&mut self) -> Result<DaemonFrame, Lost> {
        match self.lines.next_line().await {
            Ok(Some(line)) => serde_json::from_str(&line)
                .map_err(|e| Lost(format!("malformed frame from the daemon: {e}"))),
            Ok(None) => Err(Lost("the daemon closed the connection".into())),
            Err(e) => Err(Lost(e.to_string())),
        }
    }

    pub async fn status(&mut self) -> Result<DaemonStatus, Lost> {
        self.send(&ClientFrame::Status).await?;
        loop {
            if let DaemonFrame::Status(s) = self.read().await? {
                return Ok(*s);
            }
        }
    }

    /// Ask the daemon to stop; its pid.
    pub async fn stop(&mut self) -> Result<u32, Lost> {
        self.send(&ClientFrame::Stop).await?;
        loop {
            if let DaemonFrame::Stopping { pid } = self.read().await? {
                return Ok(pid);
            }
        }
    }
}

/// The environment sent with a call: this process's (the variables
/// `scry_workspace::env` lists), captured on the first call (scry never
/// changes its own environment, so every call of a session has the same).
pub fn call_env() -> scry_workspace::env::CallEnv {
    static CAPTURED: std::sync::OnceLock<scry_workspace::env::CallEnv> = std::sync::OnceLock::new();
    CAPTURED
        .get_or_init(scry_workspace::env::CallEnv::capture)
        .clone()
}

/// The start bound from `SCRY_DAEMON_START_MS`, else [`START_WITHIN`].
pub fn start_bound() -> Duration {
    std::env::var("SCRY_DAEMON_START_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(START_WITHIN)
}

/// Connect to the daemon, starting `exe daemon --foreground` when none
/// runs, within `bound`.
pub async fn connect_or_start(
    files: &Files,
    session: &str,
    exe: &Path,
    bound: Duration,
) -> Result<Connection, String> {
    paths::ensure_dir(&files.dir).map_err(|e| e.to_string())?;
    match Connection::connect(files, session).await {
        Ok(c) => return Ok(c),
        Err(ConnectError::Absent(_)) => {}
        Err(e) => return Err(e.to_string()),
    }
    spawn_daemon(files, exe)?;
    let deadline = tokio::time::Instant::now() + bound;
    let mut last = String::new();
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        match Connection::connect(files, session).await {
            Ok(c) => return Ok(c),
            Err(ConnectError::Absent(_)) => {}
            Err(ConnectError::Refused(m)) => return Err(m),
            Err(ConnectError::Io(m)) => last = m,
        }
    }
    Err(format!(
        "the daemon did not open {} within {} ms{} (see {})",
        files.socket.display(),
        bound.as_millis(),
        if last.is_empty() {
            String::new()
        } else {
            format!(": {last}")
        },
        files.log.display()
    ))
}

/// Start the daemon detached, stdio to its log file.
fn spawn_daemon(files: &Files, exe: &Path) -> Result<(), String> {
    // Rotated when full, at each start (see `logfile`).
    let log = scry_base::logfile::open(&files.log)
        .map_err(|e| format!("cannot open the daemon log {}: {e}", files.log.display()))?;
    let log2 = log
        .try_clone()
        .map_err(|e| format!("cannot open the daemon log: {e}"))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["daemon", "--foreground"])
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(log2);
    // What only servers read comes with each call, never from the daemon.
    for (k, _) in std::env::vars_os() {
        if let Some(name) = k.to_str()
            && scry_workspace::env::group_of(name) == Some(scry_workspace::env::Group::Server)
        {
            cmd.env_remove(name);
        }
    }
    platform::spawn::detach(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {} daemon: {e}", exe.display()))?;
    // Reap it if it exits while we live (a second daemon finding the lock
    // taken exits at once); never wait for it otherwise.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

/// Whether the client session `id` keeps its own `diag --changes`
/// baseline: an agent's MCP session (kinds `mcp`, `mcp-http`), whose checks
/// are about its own edits; a CLI call shares the workspace's file.
pub fn keeps_own_baseline(id: &str) -> bool {
    id.starts_with("mcp")
}

/// A new client session id (random enough to keep sessions apart):
/// `<kind>-<pid>-<hash>`, kind `cli`, `mcp`, `mcp-http`, `doctor`, `local`.
pub fn session_id(kind: &str) -> String {
    use std::hash::BuildHasher;
    let h = std::collections::hash_map::RandomState::new()
        .hash_one((std::process::id(), std::time::SystemTime::now()));
    format!("{kind}-{}-{h:016x}", std::process::id())
}

/// One connection shared by many calls at once (an MCP session): each
/// call writes its frame itself ([`Out`]: whole, no writer task in
/// between); the frames read are routed to their call by id; a call whose
/// future is dropped sends `Cancel` (so the daemon cancels it upstream).
struct Mux {
    out: Out,
    /// Dropped with the mux: the reader stops, closing the connection.
    _gone: tokio::sync::oneshot::Sender<()>,
    pending: Mutex<HashMap<u64, mpsc::UnboundedSender<DaemonFrame>>>,
    next: AtomicU64,
    closed: AtomicBool,
    pid: u32,
}

impl Mux {
    fn open(conn: Connection) -> Arc<Mux> {
        let Connection {
            mut lines,
            writer,
            pid,
            ..
        } = conn;
        let (gone, mut mux_gone) = tokio::sync::oneshot::channel::<()>();
        let out = Out::new(writer, false);
        let mux = Arc::new(Mux {
            out: out.clone(),
            _gone: gone,
            pending: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            pid,
        });
        // The reader holds the mux weakly: when the last user drops it,
        // this task ends, shutting the writing side down and closing the
        // connection whatever the transport (no connection outlives its
        // session); the daemon sees its end.
        let reader = Arc::downgrade(&mux);
        tokio::spawn(async move {
            loop {
                let line = tokio::select! {
                    line = lines.next_line() => line,
                    _ = &mut mux_gone => {
                        out.close().await;
                        break;
                    }
                };
                let Ok(Some(line)) = line else {
                    break;
                };
                let Ok(frame) = serde_json::from_str::<DaemonFrame>(&line) else {
                    break;
                };
                let Some(reader) = reader.upgrade() else {
                    break;
                };
                let id = match &frame {
                    DaemonFrame::Progress { id, .. } => *id,
                    DaemonFrame::Answer(r) => r.id,
                    // The daemon gave up on the connection: every call
                    // on it is lost (never waited for without end).
                    DaemonFrame::Refused { message } => {
                        tracing::warn!("the daemon refused the connection: {message}");
                        break;
                    }
                    _ => continue,
                };
                let pending = reader.pending.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(p) = pending.get(&id) {
                    let _ = p.send(frame);
                }
            }
            let Some(reader) = reader.upgrade() else {
                return;
            };
            reader.closed.store(true, Ordering::SeqCst);
            // Every call waiting gets `None`: the connection was lost.
            reader
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        });
        mux
    }

    async fn call(&self, call: &Call, progress: &Mutex<Option<String>>) -> Result<Reply, Lost> {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let (ptx, mut prx) = mpsc::unbounded_channel();
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, ptx);
        if self.closed.load(Ordering::SeqCst) {
            return Err(Lost("the daemon closed the connection".into()));
        }
        let frame = ClientFrame::Call(Box::new(Call {
            id,
            env: Some(call_env()),
            ..call.clone()
        }));
        let line = match proto::try_encode(&frame) {
            Ok(line) => line,
            Err(e) => {
                self.pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                let error = OpError::Internal(
                    scry_model::Message::new().fact(scry_model::Fact::QuestionNotSent { why: e }),
                );
                return Ok(Reply::new(id, call.root.clone(), CallResult::Error(error)));
            }
        };
        if !self.out.send(line) {
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
            return Err(Lost("the connection to the daemon is closed".into()));
        }
        let mut guard = CancelOnDrop {
            mux: self,
            id,
            done: false,
        };
        loop {
            match prx.recv().await {
                Some(DaemonFrame::Progress { line, .. }) => {
                    *progress.lock().unwrap_or_else(|e| e.into_inner()) = line;
                }
                Some(DaemonFrame::Answer(r)) => {
                    guard.done = true;
                    return Ok(*r);
                }
                Some(_) => {}
                None => {
                    guard.done = true;
                    return Err(Lost("the daemon closed the connection".into()));
                }
            }
        }
    }
}

struct CancelOnDrop<'a> {
    mux: &'a Mux,
    id: u64,
    done: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        self.mux
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
        if !self.done {
            self.mux
                .out
                .send(proto::encode(&ClientFrame::Cancel { id: self.id }));
        }
    }
}

/// A client session (a CLI call, an MCP session) over one shared
/// connection, reconnecting — and restarting the daemon — after the
/// daemon died. A call lost with the daemon is retried once when it is
/// read-only, else it fails with `DAEMON_RESTARTED`.
pub struct Shared {
    files: Files,
    exe: PathBuf,
    session: String,
    bound: Duration,
    conn: tokio::sync::Mutex<Option<Arc<Mux>>>,
    progress: Mutex<Option<String>>,
}

impl Shared {
    /// Connect (starting the daemon if needed); `Err`: why the daemon
    /// cannot be used.
    pub async fn connect(files: Files, exe: PathBuf, session: String) -> Result<Shared, String> {
        let shared = Shared::lazy(files, exe, session);
        shared.mux().await?;
        Ok(shared)
    }

    /// A session that connects (starting the daemon if needed) on its
    /// first call. Dropping it closes its connection.
    pub fn lazy(files: Files, exe: PathBuf, session: String) -> Shared {
        Shared {
            files,
            exe,
            session,
            bound: start_bound(),
            conn: tokio::sync::Mutex::new(None),
            progress: Mutex::new(None),
        }
    }

    /// This client session's id (the daemon keeps idempotency keys and
    /// once-per-session notices per session).
    pub fn session(&self) -> &str {
        &self.session
    }

    async fn mux(&self) -> Result<Arc<Mux>, String> {
        let mut conn = self.conn.lock().await;
        if let Some(m) = conn.as_ref()
            && !m.closed.load(Ordering::SeqCst)
        {
            return Ok(m.clone());
        }
        let c = connect_or_start(&self.files, &self.session, &self.exe, self.bound).await?;
        let m = Mux::open(c);
        *conn = Some(m.clone());
        Ok(m)
    }

    /// The daemon's pid (of the current connection).
    pub async fn pid(&self) -> Option<u32> {
        self.conn.lock().await.as_ref().map(|m| m.pid)
    }

    /// What the latest call waits for, as the daemon last said.
    pub fn waiting_on(&self) -> Option<String> {
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Close the connection (the next call opens a new one).
    pub async fn close(&self) {
        self.conn.lock().await.take();
    }

    /// Ask one question: the reply and the pid of the daemon that gave it.
    /// A call lost with the daemon is asked once more of a new daemon when
    /// it is read-only; else, or when that fails too,
    /// `Err(OpError::DaemonRestarted)` ([`lost`]).
    pub async fn run(&self, call: &Call) -> Result<(Reply, u32), OpError> {
        let m = self.mux().await.map_err(|e| {
            OpError::DaemonRestarted(
                scry_model::Message::new()
                    .fact(scry_model::Fact::DaemonUnreachable { why: e.to_string() }),
            )
        })?;
        let r = m.call(call, &self.progress).await;
        *self.progress.lock().unwrap_or_else(|e| e.into_inner()) = None;
        match r {
            Ok(r) => Ok((r, m.pid)),
            Err(e) if call.question.writes() => Err(lost(m.pid, e.0, true)),
            Err(e) => {
                tracing::info!("{e}; asking a new daemon once");
                let again = self
                    .mux()
                    .await
                    .map_err(|x| lost(m.pid, format!("{}; {x}", e.0), false))?;
                let r = again.call(call, &self.progress).await;
                *self.progress.lock().unwrap_or_else(|e| e.into_inner()) = None;
                r.map(|r| (r, again.pid))
                    .map_err(|x| lost(again.pid, x.0, false))
            }
        }
    }
}

/// The call was lost with daemon `pid` (`why`); `writes`: it was an edit.
fn lost(pid: u32, why: String, writes: bool) -> OpError {
    OpError::DaemonRestarted(
        scry_model::Message::new().fact(scry_model::Fact::DaemonLost { pid, why, writes }),
    )
}
