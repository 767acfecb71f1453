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
//! oversized ones answered with JSON-RPC errors, which go out here); writing
//! is one task that owns the writer, fed through a channel, so that one
//! answer can go out several times (rmcp's `Transport::send` borrows the
//! transport for each send).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, ClientRequest, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::wire::{Incoming, LineReader, MAX_MESSAGE_BYTES};

/// `tools/call` ids in flight → how many extra copies arrived.
#[derive(Default)]
struct InFlight {
    ids: HashMap<RequestId, usize>,
}

/// Bytes for the writer task. Unbounded: what goes out is bounded by the
/// calls in flight and the caps on answers.
type Out = mpsc::UnboundedSender<Vec<u8>>;

/// Newline-delimited JSON-RPC over a reader and a writer, collapsing
/// duplicate in-flight `tools/call` ids (see the module documentation).
pub struct Dedupe<R: AsyncRead, W> {
    read: LineReader<R>,
    out: Option<Out>,
    writer: Option<tokio::task::JoinHandle<W>>,
    state: Arc<Mutex<InFlight>>,
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
    pub fn with_max_message(reader: R, mut writer: W, max: usize) -> Dedupe<R, W> {
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let task = tokio::spawn(async move {
            while let Some(bytes) = rx.recv().await {
                let ok = writer.write_all(&bytes).await.is_ok();
                // Flush when nothing else is queued.
                if !ok || (rx.is_empty() && writer.flush().await.is_err()) {
                    tracing::debug!("MCP client output closed");
                    break;
                }
            }
            let _ = writer.flush().await;
            writer
        });
        Dedupe {
            read: LineReader::new(reader, max),
            out: Some(tx),
            writer: Some(task),
            state: Arc::default(),
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
                (0..=extra)
                    .try_for_each(|_| out.send(line.clone()))
                    .map_err(|_| closed())
            }
        };
        std::future::ready(result)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let msg = match self.read.next().await {
                Incoming::Eof => return None,
                Incoming::Message(m) => *m,
                Incoming::Reply(v) => {
                    if let Some(out) = &self.out {
                        let mut line = v.to_string().into_bytes();
                        line.push(b'\n');
                        let _ = out.send(line);
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
        // Let the writer drain what is queued, then shut the output down.
        self.out = None;
        if let Some(task) = self.writer.take()
            && let Ok(mut w) = task.await
        {
            let _ = w.shutdown().await;
        }
        Ok(())
    }
}
