//! The checks of the `framing` and `messages` fuzz targets (`fuzz/`),
//! shared with the unit tests that replay the committed corpus on stable.
//! Not an API: only compiled for tests and with the `fuzzing` feature.
//!
//! * [`check_framing`]: any bytes as a server's output. The reader always
//!   makes progress and ends; every message it returns writes and reads back
//!   unchanged. The same bytes cut into bodies and framed (header case, line
//!   ends and `Content-Type` chosen by the input) read back exactly as
//!   `serde_json` parses each body, an invalid one skipped without losing
//!   sync.
//! * [`check_messages`]: any bytes as a server's output into a
//!   [`Connection`] with two requests pending. Nothing panics, the
//!   connection closes, both requests end, and everything the client wrote
//!   back is well-formed JSON-RPC.

use std::io::Cursor;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::io::AsyncWrite;

use crate::connection::{Connection, ConnectionOptions, DeferredReply, Handler, ResponseError};
use crate::framing::{read_message, write_message};

const MAX: usize = 1 << 20;

/// Run `f` on this thread's current-thread runtime (made once: a runtime
/// per input would cost more than the checks).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    thread_local! {
        static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime");
    }
    RT.with(|rt| rt.block_on(f))
}

/// Every message in `input`, as the reader sees it (`Err` = the error text).
async fn read_all(mut input: &[u8]) -> Vec<Result<Value, String>> {
    let mut out = Vec::new();
    loop {
        let before = input.len();
        let r = read_message(&mut input, MAX).await;
        match r {
            Ok(None) => return out,
            Ok(Some(v)) => out.push(Ok(v)),
            Err(e) => {
                let fatal = !e.is_recoverable();
                out.push(Err(e.to_string()));
                if fatal {
                    return out;
                }
            }
        }
        assert!(input.len() < before, "the reader made no progress");
    }
}

fn frame(body: &[u8], style: u8) -> Vec<u8> {
    let nl: &[u8] = if style & 1 == 0 { b"\r\n" } else { b"\n" };
    let name = match (style >> 1) & 3 {
        0 => "Content-Length",
        1 => "content-length",
        2 => "CONTENT-LENGTH",
        _ => "Content-length",
    };
    let mut f = Vec::new();
    if style & 8 != 0 {
        f.extend_from_slice(b"Content-Type: application/vscode-jsonrpc; charset=utf-8");
        f.extend_from_slice(nl);
    }
    f.extend_from_slice(format!("{name}: {}", body.len()).as_bytes());
    f.extend_from_slice(nl);
    if style & 16 != 0 {
        f.extend_from_slice(b"Content-Type: application/json");
        f.extend_from_slice(nl);
    }
    f.extend_from_slice(nl);
    f.extend_from_slice(body);
    f
}

/// Framing checks on one input; panics on a violated property.
pub fn check_framing(data: &[u8]) {
    block_on(async {
        // 1. Raw bytes: progress, termination, round trip. (What a written
        // message reads back as is what serde_json parses from its body:
        // serde_json's float parsing is not exact without its
        // `float_roundtrip` feature, so `v` itself may differ in the last
        // bit of a float — not a framing matter.)
        for v in read_all(data).await.into_iter().flatten() {
            let mut out = Vec::new();
            write_message(&mut out, &v).await.expect("writing to a Vec");
            let body = serde_json::to_vec(&v).expect("a value serialises");
            let expected: Value = serde_json::from_slice(&body).expect("its own output parses");
            let back = read_all(&out).await;
            assert_eq!(back, vec![Ok(expected)], "a message reads back as written");
        }
        // 2. Bodies cut at 0xFF bytes, framed: exactly serde_json's verdicts.
        let Some((&style, rest)) = data.split_first() else {
            return;
        };
        let bodies: Vec<&[u8]> = rest.split(|&b| b == 0xff).collect();
        let mut framed = Vec::new();
        for (i, b) in bodies.iter().enumerate() {
            framed.extend(frame(b, style.rotate_left(i as u32)));
        }
        let got = read_all(&framed).await;
        assert_eq!(got.len(), bodies.len(), "one result per framed body");
        for (g, b) in got.iter().zip(&bodies) {
            match serde_json::from_slice::<Value>(b) {
                Ok(v) => assert_eq!(g, &Ok(v)),
                Err(_) => assert!(
                    matches!(g, Err(e) if e.starts_with("message body is not valid JSON")),
                    "{g:?}"
                ),
            }
        }
    });
}

/// A writer that keeps what the client sent.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl AsyncWrite for Capture {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

struct Echo;

impl Handler for Echo {
    fn on_request(&self, method: &str, params: Value) -> Result<Value, ResponseError> {
        match method {
            "workspace/configuration" => Ok(Value::Array(vec![params])),
            _ => Err(ResponseError::method_not_found(method)),
        }
    }
    fn on_request_deferred(&self, method: &str, _params: &Value) -> Option<DeferredReply> {
        (method == "later").then(|| -> DeferredReply { Box::pin(async { Ok(Value::Null) }) })
    }
    fn on_notification(&self, _method: &str, _params: Value) {}
}

/// Message-decoding checks on one input; panics on a violated property.
pub fn check_messages(data: &[u8]) {
    // (A panicking handler is not part of the input space: libFuzzer's panic
    // hook aborts even on a caught panic. The unit tests cover it.)
    let out = Capture::default();
    block_on(async {
        let conn = Connection::start(
            "fuzz",
            Cursor::new(data.to_vec()),
            out.clone(),
            Arc::new(Echo),
            ConnectionOptions {
                max_message_len: MAX,
            },
        );
        let (a, b, reason) = tokio::join!(
            conn.request("textDocument/hover", None),
            conn.request("textDocument/definition", Some(Value::Null)),
            conn.closed()
        );
        assert!(conn.is_closed());
        assert!(!reason.is_empty());
        // Each request ended: with the server's answer or an error naming it.
        for r in [a, b] {
            if let Err(e) = r {
                let text = e.to_string();
                assert!(text.contains("fuzz"), "the error names the server: {text}");
            }
        }
        assert!(
            conn.request("x", None).await.is_err(),
            "closed stays closed"
        );
        assert_eq!(conn.pending_count(), 0);
        drop(conn);
        // Let the writer and deferred replies finish.
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
    });
    let written = out.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let sent = block_on(read_all(&written));
    for m in sent {
        let m = m.expect("the client writes valid frames");
        let obj = m.as_object().expect("the client writes objects");
        assert_eq!(obj.get("jsonrpc"), Some(&Value::from("2.0")));
        let is_request = obj.get("method").is_some_and(Value::is_string);
        let is_reply =
            obj.contains_key("id") && (obj.contains_key("result") ^ obj.contains_key("error"));
        assert!(is_request || is_reply, "neither request nor reply: {m}");
    }
}

#[cfg(test)]
mod tests {
    /// Replays the committed fuzz corpus (`fuzz/corpus/framing`).
    #[test]
    fn framing_corpus_replays() {
        scry_testkit::replay_corpus("framing", super::check_framing);
    }

    /// Replays the committed fuzz corpus (`fuzz/corpus/messages`).
    #[test]
    fn messages_corpus_replays() {
        scry_testkit::replay_corpus("messages", super::check_messages);
    }
}
