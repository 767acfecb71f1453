//! The transport: newline-delimited JSON-RPC over any reader and writer,
//! with duplicate request ids in flight handled here.
//!
//! A client that sends `tools/call` with an id that is still running (a
//! retry after a timeout on its side, a replayed line) must not make the
//! tool run twice, and each copy deserves its answer. rmcp keys its
//! per-request state by id, so a second request with a running id would
//! clobber the first one's entry and one answer would be dropped. This
//! transport therefore keeps such duplicates away from rmcp: it remembers the
//! `tools/call` ids in flight, swallows a duplicate, and writes the answer
//! once per copy when it goes out. A cancelled id is forgotten (no answer
//! follows a cancel). Finished ids are replayed by the handler (see
//! `server.rs`), which knows what the call was.
//!
//! Reading is [`crate::wire::LineReader`] (bounded lines; malformed and
//! oversized ones answered with JSON-RPC errors, which go out here), and
//! stops while more than `scry_daemon::out::MAX_OWED` bytes wait to go out
//! (a client that does not read its answers is not read: its writes
//! block, and scry's memory stays bounded);
//! writing is `scry_daemon::out::Out`: each message written whole by the
//! task that sends it (rmcp's loop), at once, and flushed, with no writer
//! task in between unless the output is full or writes later (tokio's
//! stdout on a terminal or file), so that one answer can go out several
//! times and a sender is never cancelled halfway.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, ClientRequest, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use scry_daemon::out::Out;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::wire::{Incoming, LineReader, MAX_MESSAGE_BYTES};

/// `tools/call` ids in flight → how many extra copies arrived.
#[derive(Default)]
struct InFlight {
    ids: HashMap<RequestId, usize>,
}

/// Newline-delimited JSON-RPC over a reader and a writer, collapsing
/// duplicate in-flight `tools/call` ids (see the module documentation).
pub struct Dedupe<R: AsyncRead, W> {
    read: LineReader<R>,
    /// What goes out (bounded by the calls in flight and the caps on
    /// answers); `None` once closed.
    out: Option<Out>,
    /// How much may wait to go out before no more is read
    /// ([`scry_daemon::out::MAX_OWED`]).
    max_owed: usize,
    state: Arc<Mutex<InFlight>>,
    _writer: std::marker::PhantomData<fn(W)>,
}

impl<R, W> Dedupe<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(reader: R, writer: W) -> Dedupe<R, W> {
        Dedupe::with_max_message(reader, writer, MAX_MESSAGE_BYTES)
    }

    /// [`Dedupe::new`] with another limit on one message's size in bytes.
    pub fn with_max_message(reader: R, writer: W, max: usize) -> Dedupe<R, W> {
        Dedupe::with_limits(reader, writer, max, scry_daemon::out::MAX_OWED)
    }

    /// [`Dedupe::new`] with other limits: one message's size, and what
    /// may wait to go out before the reader stops taking messages.
    pub fn with_limits(reader: R, writer: W, max: usize, max_owed: usize) -> Dedupe<R, W> {
        Dedupe {
            read: LineReader::new(reader, max),
            out: Some(Out::new(Box::new(writer), true)),
            max_owed,
            state: Arc::default(),
            _writer: std::marker::PhantomData,
        }
    }
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::NotConnected, "transport is closed")
}

impl<R, W> Transport<RoleServer> for Dedupe<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let id = match &item {
            JsonRpcMessage::Response(r) => Some(r.id.clone()),
            JsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        let extra = id
            .and_then(|id| {
                self.state
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .ids
                    .remove(&id)
            })
            .unwrap_or(0);
        let result = match (&self.out, serde_json::to_vec(&item)) {
            (None, _) => Err(closed()),
            (Some(_), Err(e)) => Err(std::io::Error::other(e)),
            (Some(out), Ok(mut line)) => {
                line.push(b'\n');
                for _ in 0..extra {
                    out.send(line.clone());
                }
                if out.send(line) {
                    Ok(())
                } else {
                    tracing::debug!("MCP client output closed");
                    Err(closed())
                }
            }
        };
        std::future::ready(result)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // A client that does not read its answers is not read either
            // (its writes block): what goes out waiting stays bounded.
            if let Some(out) = &self.out {
                out.room(self.max_owed).await;
            }
            let msg = match self.read.next().await {
                Incoming::Eof => return None,
                Incoming::Message(m) => *m,
                Incoming::Reply(v) => {
                    if let Some(out) = &self.out {
                        let mut line = v.to_string().into_bytes();
                        line.push(b'\n');
                        out.send(line);
                    }
                    continue;
                }
            };
            match &msg {
                JsonRpcMessage::Request(r)
                    if matches!(r.request, ClientRequest::CallToolRequest(_)) =>
                {
                    let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(n) = st.ids.get_mut(&r.id) {
                        *n += 1;
                        tracing::debug!(id = %r.id, "duplicate tools/call id in flight: answered once it finishes");
                        continue;
                    }
                    st.ids.insert(r.id.clone(), 0);
                }
                JsonRpcMessage::Notification(n) => {
                    if let ClientNotification::CancelledNotification(c) = &n.notification
                        && let Some(id) = &c.params.request_id
                    {
                        self.state
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .ids
                            .remove(id);
                    }
                }
                _ => {}
            }
            return Some(msg);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // What is owed goes out, then the output is shut down.
        if let Some(out) = self.out.take() {
            out.close().await;
        }
        Ok(())
    }
}
