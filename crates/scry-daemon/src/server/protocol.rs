//! One connection to the daemon, from hello to close: the hello checked
//! (protocol and scry version), then newline-delimited [`crate::proto`]
//! frames read and dispatched (a call, its cancellation, status, stop),
//! each answer written back by the call's own task ([`crate::out::Out`]:
//! whole frames, no writer task in between).
//!
//! Invariants:
//! - A client that does not say hello first (within 10 s), or says it with
//!   another protocol or version, is refused in clear words and the
//!   connection closed, never left hanging; a malformed frame or a second
//!   hello ends the connection.
//! - A call lives in a task of its connection: a `Cancel` frame or a closed
//!   connection drops it, which drops the engine's future, which sends
//!   `$/cancelRequest` upstream; the daemon carries on. A call answered is
//!   written whole whatever happens to it after (the task writes it once
//!   the call is done, never while it can be cancelled). Its progress
//!   lines are sent by the same task (no second task; one timer, which
//!   fires only when the call runs past 100 ms). A panic inside a call (a bug) is caught on
//!   the call's task ([`scry_ops::isolate::isolated`]) and answered
//!   `INTERNAL` for that call alone.
//! - Each call is answered inside its client's environment
//!   ([`scry_workspace::env::scope`]): configuration discovery, command
//!   lookup and server start read the call's variables, not the daemon's.
//! - Writes (see `Query::writes`) are serialized per workspace (here, by
//!   the workspace's [`Local`]; across processes the edit service holds the
//!   workspace's writer lock, scry_edit::lock); the edit journal is
//!   the workspace's (on disk), so `undo` works from any client;
//!   idempotency keys are prefixed with the client's session.
//! - A client is counted (daemon-wide and per workspace it asked about)
//!   from its hello until its connection closes.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;

use super::{ClientSession, State, WsKey};
use crate::answer::{self, Answerer, Caller, Local};
use crate::out::Out;
use crate::paths::{PROTOCOL, VERSION};
use crate::proto::{self, Call, CallResult, ClientFrame, DaemonFrame, Reply};
use scry_model::{DaemonServer, DaemonStatus, DaemonWorkspace};

/// How long a client has to say hello.
const HELLO_WITHIN: Duration = Duration::from_secs(10);

impl State {
    fn status(&self) -> DaemonStatus {
        let workspaces = self
            .entries()
            .into_iter()
            .map(|(root, e)| DaemonWorkspace {
                root,
                clients: e.clients.load(Ordering::SeqCst),
                memory_events: e
                    .local
                    .engine()
                    .workspace()
                    .memory_events()
                    .iter()
                    .map(|e| e.note())
                    .collect(),
                servers: e
                    .local
                    .engine()
                    .workspace()
                    .usage_measured()
                    .into_iter()
                    .map(|u| DaemonServer {
                        memory_kib: u.memory.map(|m| m.rss_kib),
                        processes: u.memory.map(|m| m.processes),
                        memory_cap_kib: u.cap_kib,
                        id: u.id,
                        root: u.root,
                        folders: u.folders,
                        programs: u.programs,
                        pid: u.pid,
                        uptime_ms: u.uptime.as_millis() as u64,
                        idle_ms: u.idle.as_millis() as u64,
                        program: u.program,
                        clients: u.clients,
                    })
                    .collect(),
            })
            .collect();
        DaemonStatus {
            pid: std::process::id(),
            version: VERSION.to_string(),
            protocol: PROTOCOL,
            uptime_ms: self.started.elapsed().as_millis() as u64,
            // The asking connection is not counted.
            clients: self.clients.load(Ordering::SeqCst).saturating_sub(1),
            socket: self.files.socket.clone(),
            workspaces,
        }
    }

    /// One connection, from hello to close, over any stream (the
    /// transport is [`crate::platform::transport`]'s).
    pub(super) async fn serve<S>(self: Arc<Self>, stream: S)
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (rd, wr) = tokio::io::split(stream);
        let mut lines = proto::Frames::new(rd);
        let tx = Out::new(Box::new(wr), false);
        let send = |tx: &Out, f: &DaemonFrame| {
            tx.send(proto::encode(f));
        };
        let refuse = |tx: &Out, message: String| {
            send(tx, &DaemonFrame::Refused { message });
        };
        let hello = match tokio::time::timeout(HELLO_WITHIN, lines.next_line()).await {
            Ok(Ok(Some(line))) => serde_json::from_str::<ClientFrame>(&line).ok(),
            _ => None,
        };
        let session_id = match hello {
            Some(ClientFrame::Hello {
                protocol,
                version,
                session,
            }) => {
                if protocol != PROTOCOL || version != VERSION {
                    refuse(
                        &tx,
                        format!(
                            "this daemon is scry {VERSION} (protocol {PROTOCOL}); the client is scry {version} (protocol {protocol})"
                        ),
                    );
                    tx.close().await;
                    return;
                }
                session
            }
            _ => {
                refuse(&tx, "expected a hello frame first".into());
                tx.close().await;
                return;
            }
        };
        send(
            &tx,
            &DaemonFrame::Hello {
                protocol: PROTOCOL,
                version: VERSION.to_string(),
                pid: std::process::id(),
            },
        );
        self.clients.fetch_add(1, Ordering::SeqCst);
        let session = Arc::new(ClientSession {
            session: Caller::new(session_id),
            roots: Mutex::new(HashSet::new()),
        });
        // Each call's cancel switch: dropping it drops the call.
        let mut calls: HashMap<u64, oneshot::Sender<()>> = HashMap::new();
        loop {
            // A client that does not read its answers is not read either:
            // what this connection owes it stays bounded.
            tx.room(crate::out::MAX_OWED).await;
            let line = match lines.next_line().await {
                Ok(Some(l)) => l,
                _ => break,
            };
            let frame = match serde_json::from_str::<ClientFrame>(&line) {
                Ok(f) => f,
                Err(e) => {
                    refuse(&tx, format!("malformed frame: {e}"));
                    break;
                }
            };
            match frame {
                ClientFrame::Call(call) => {
                    calls.retain(|_, h| !h.is_closed());
                    let id = call.id;
                    let st = self.clone();
                    let (tx2, sess) = (tx.clone(), session.clone());
                    let (cancel, cancelled) = oneshot::channel::<()>();
                    tokio::spawn(async move {
                        let reply = tokio::select! {
                            biased;
                            _ = cancelled => return,
                            reply = st.call(&sess, *call, &tx2) => reply,
                        };
                        // Out of the select: the answer is written whole.
                        tx2.send(proto::encode_answer(reply));
                    });
                    calls.insert(id, cancel);
                }
                ClientFrame::Cancel { id } => {
                    if calls.remove(&id).is_some() {
                        tracing::debug!(id, "call cancelled by the client");
                    }
                }
                ClientFrame::Status => send(&tx, &DaemonFrame::Status(Box::new(self.status()))),
                ClientFrame::Stop => {
                    send(
                        &tx,
                        &DaemonFrame::Stopping {
                            pid: std::process::id(),
                        },
                    );
                    let _ = self.stop.send(true);
                }
                ClientFrame::Hello { .. } => {
                    refuse(&tx, "hello was already said".into());
                    break;
                }
            }
        }
        // The client is gone: drop its calls (cancelled upstream).
        for (id, h) in calls {
            if !h.is_closed() {
                tracing::debug!(id, "client gone: cancelling its call");
            }
        }
        for root in session
            .roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            if let Some(e) = self
                .workspaces
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(root)
            {
                e.clients.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.clients.fetch_sub(1, Ordering::SeqCst);
        *self.last_client.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        tx.close().await;
    }

    /// Answer one call, in its client's environment (the daemon's own
    /// when the call brings none): the workspace's [`Local`] for this
    /// client's session, on the call's task ([`answer::isolated`]: a panic
    /// inside it answers this call `INTERNAL`; the daemon and its other
    /// calls go on).
    async fn call(&self, client: &ClientSession, mut call: Call, tx: &Out) -> Reply {
        let env = call
            .env
            .take()
            .unwrap_or_else(scry_workspace::env::CallEnv::capture);
        let ctx = scry_workspace::env::CallContext {
            env: Arc::new(env),
            client: client.session.id().to_string(),
        };
        scry_workspace::env::scope(ctx, self.call_in_scope(client, call, tx)).await
    }

    async fn call_in_scope(&self, client: &ClientSession, call: Call, tx: &Out) -> Reply {
        let root = scry_base::paths::canonical(&call.root).unwrap_or(call.root.clone());
        let key: WsKey = (
            root.clone(),
            scry_workspace::env::current().map_or(0, |c| c.env.config_hash()),
        );
        let entry = match self.workspace(&key) {
            Ok(e) => e,
            Err(m) => return Reply::new(call.id, root, CallResult::Config(m)),
        };
        *entry.last_env.lock().unwrap_or_else(|e| e.into_inner()) = scry_workspace::env::current();
        if client
            .roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone())
        {
            entry.clients.fetch_add(1, Ordering::SeqCst);
        }
        let local = entry.local.for_session(client.session.clone());
        let progress = progress(call.id, local.clone(), tx);
        // The progress lines on the call's own task: polled beside it,
        // dropped with it.
        tokio::select! {
            biased;
            reply = answer::isolated(Arc::new(local), call) => reply,
            never = progress => match never {},
        }
    }
}

/// How often a running call's progress line is looked at.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Send a call's progress line each time it changes, looked at every
/// [`PROGRESS_EVERY`]; never ends (dropped with the call).
async fn progress(id: u64, local: Local, tx: &Out) -> std::convert::Infallible {
    let mut last: Option<String> = None;
    loop {
        tokio::time::sleep(PROGRESS_EVERY).await;
        let line = local.waiting_on();
        if line != last {
            let f = DaemonFrame::Progress {
                id,
                line: line.clone(),
            };
            if !tx.send(proto::encode(&f)) {
                // The client is gone: the call is dropped with it.
                return std::future::pending().await;
            }
            last = line;
        }
    }
}
