//! Frames out: one writer shared by the tasks of a connection (the
//! daemon's side of a client, a client's side of the daemon, `scry mcp`'s
//! stdout), written from the task that has the frame, at once, with no
//! task in between ([`Out::send`] is synchronous: it can be called from
//! `Drop`, and costs no wake-up of another task or thread).
//!
//! What the stream does not take at once (its buffer is full, or it only
//! accepts bytes to write them later, as tokio's stdout does) is handed,
//! with every frame sent after it, to one task that writes it out in
//! order; the stream goes back to the senders when that task has written
//! everything.
//!
//! Invariants: frames go out whole and in the order they were sent, never
//! interleaved, and never cut by a sender that is cancelled (a sender
//! never awaits the stream); a write error closes the writer (every later
//! [`Out::send`] says `false`); what is owed is bounded by what the
//! connection's calls send (answers are bounded by the render limits),
//! and the connection's reader waits for [`Out::room`] before it takes
//! another request, so a peer that stops reading stops being read: what
//! is owed stays under [`MAX_OWED`] plus what the calls already running
//! send.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncWrite, AsyncWriteExt};

/// The stream a writer writes to.
pub type Sink = Box<dyn AsyncWrite + Send + Unpin>;

/// How many bytes a connection may owe its peer before its reader stops
/// taking requests ([`Out::room`]): a peer that does not read its answers
/// gets no more of them.
pub const MAX_OWED: usize = 8 * 1024 * 1024;

struct State {
    /// The stream, while no task is writing what is owed.
    sink: Option<Sink>,
    /// Frames owed to the stream, in order; the first may be partly
    /// written (`written` bytes of it).
    owed: VecDeque<Vec<u8>>,
    written: usize,
    /// A flush is owed (after the last frame).
    flush_owed: bool,
    /// A task holds the stream and writes what is owed.
    draining: bool,
    /// A write failed or the writer was closed.
    closed: bool,
    /// Bytes owed (the frames in `owed`, less what is written of the
    /// first).
    owed_bytes: usize,
}

struct Inner {
    state: Mutex<State>,
    /// Flush after each frame (a buffered stream: stdout).
    flush: bool,
    /// Told when the draining task gives the stream back.
    idle: tokio::sync::Notify,
    /// Told (every waiter) when a frame owed was written, or the writer
    /// closed.
    room: tokio::sync::Notify,
}

/// A connection's writer of whole frames (see the module header). Cheap
/// to clone.
#[derive(Clone)]
pub struct Out {
    inner: Arc<Inner>,
}

impl Out {
    /// A writer to `sink`; `flush`: flush after each frame.
    pub fn new(sink: Sink, flush: bool) -> Out {
        Out {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    sink: Some(sink),
                    owed: VecDeque::new(),
                    written: 0,
                    flush_owed: false,
                    draining: false,
                    closed: false,
                    owed_bytes: 0,
                }),
                flush,
                idle: tokio::sync::Notify::new(),
                room: tokio::sync::Notify::new(),
            }),
        }
    }

    /// Send one whole frame: written now as far as the stream takes it,
    /// the rest by the writer's task. `false`: the writer is closed (a
    /// write failed, or [`Out::close`]), the frame is dropped.
    pub fn send(&self, frame: Vec<u8>) -> bool {
        let mut st = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.closed {
            return false;
        }
        if st.draining {
            st.owed_bytes += frame.len();
            st.owed.push_back(frame);
            st.flush_owed |= self.inner.flush;
            return true;
        }
        let Some(sink) = st.sink.as_mut() else {
            return false;
        };
        let mut cx = Context::from_waker(Waker::noop());
        let mut at = 0;
        while at < frame.len() {
            match Pin::new(&mut **sink).poll_write(&mut cx, &frame[at..]) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => {
                    close(&mut st);
                    return false;
                }
                Poll::Ready(Ok(n)) => at += n,
                Poll::Pending => {
                    st.owed_bytes += frame.len() - at;
                    st.owed.push_back(frame);
                    st.written = at;
                    st.flush_owed |= self.inner.flush;
                    return self.drain(st);
                }
            }
        }
        if self.inner.flush {
            match Pin::new(&mut **sink).poll_flush(&mut cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(_)) => {
                    close(&mut st);
                    return false;
                }
                Poll::Pending => {
                    st.flush_owed = true;
                    return self.drain(st);
                }
            }
        }
        true
    }

    /// Hand the stream and what is owed to a task (on the current
    /// runtime; with none, the writer closes).
    fn drain(&self, mut st: std::sync::MutexGuard<'_, State>) -> bool {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            close(&mut st);
            return false;
        };
        let Some(mut sink) = st.sink.take() else {
            return false;
        };
        st.draining = true;
        drop(st);
        let inner = self.inner.clone();
        rt.spawn(async move {
            loop {
                let (frame, from, flush) = {
                    let mut st = inner.state.lock().unwrap_or_else(|e| e.into_inner());
                    match st.owed.pop_front() {
                        Some(f) => (Some(f), std::mem::take(&mut st.written), false),
                        None if st.flush_owed => {
                            st.flush_owed = false;
                            (None, 0, true)
                        }
                        None => {
                            // Everything is out: the senders write again.
                            st.draining = false;
                            st.sink = Some(sink);
                            drop(st);
                            inner.idle.notify_one();
                            return;
                        }
                    }
                };
                let ok = match frame {
                    Some(f) => {
                        let ok = sink.write_all(&f[from..]).await.is_ok();
                        let mut st = inner.state.lock().unwrap_or_else(|e| e.into_inner());
                        st.owed_bytes = st.owed_bytes.saturating_sub(f.len() - from);
                        drop(st);
                        inner.room.notify_waiters();
                        ok
                    }
                    None => !flush || sink.flush().await.is_ok(),
                };
                if !ok {
                    let mut st = inner.state.lock().unwrap_or_else(|e| e.into_inner());
                    st.draining = false;
                    close(&mut st);
                    drop(st);
                    inner.idle.notify_one();
                    inner.room.notify_waiters();
                    tracing::debug!("a connection's output closed");
                    return;
                }
            }
        });
        true
    }

    /// Bytes owed to the stream now.
    pub fn owed(&self) -> usize {
        self.inner
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .owed_bytes
    }

    /// Wait until the writer owes its stream less than `bound` bytes (or
    /// is closed): a reader awaits it before taking another request, so a
    /// peer that does not read is not read either.
    pub async fn room(&self, bound: usize) {
        loop {
            let notified = self.inner.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let st = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
                if st.closed || st.owed_bytes < bound {
                    return;
                }
            }
            notified.await;
        }
    }

    /// Write what is owed, then flush and shut the stream down; later
    /// frames are dropped.
    pub async fn close(&self) {
        let sink = loop {
            let notified = self.inner.idle.notified();
            {
                let mut st = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
                if !st.draining {
                    st.closed = true;
                    st.owed.clear();
                    st.owed_bytes = 0;
                    self.inner.room.notify_waiters();
                    break st.sink.take();
                }
            }
            notified.await;
        };
        if let Some(mut s) = sink {
            let _ = s.flush().await;
            let _ = s.shutdown().await;
        }
    }
}

fn close(st: &mut State) {
    st.closed = true;
    st.sink = None;
    st.owed.clear();
    st.owed_bytes = 0;
    st.flush_owed = false;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn frames_go_out_whole_and_in_order_when_the_stream_is_full() {
        // A pipe of 64 bytes: most frames do not fit at once.
        let (w, mut r) = tokio::io::duplex(64);
        let out = Out::new(Box::new(w), false);
        let frames: Vec<Vec<u8>> = (0..200)
            .map(|i| format!("{}\n", format!("frame {i} ").repeat(i % 7 + 1)).into_bytes())
            .collect();
        for f in &frames {
            assert!(out.send(f.clone()));
        }
        let want: Vec<u8> = frames.concat();
        let mut got = vec![0; want.len()];
        r.read_exact(&mut got).await.unwrap();
        assert_eq!(got, want);
        out.close().await;
        assert!(!out.send(b"late\n".to_vec()), "closed");
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "nothing after close: {rest:?}");
    }

    #[tokio::test]
    async fn a_sender_dropped_after_sending_still_has_its_frame_written() {
        let (w, mut r) = tokio::io::duplex(8);
        let out = Out::new(Box::new(w), true);
        let sender = {
            let out = out.clone();
            tokio::spawn(async move {
                out.send(b"a long frame, longer than the pipe\n".to_vec());
                std::future::pending::<()>().await;
            })
        };
        tokio::task::yield_now().await;
        sender.abort();
        let mut line = vec![0; 35];
        r.read_exact(&mut line).await.unwrap();
        assert_eq!(line, b"a long frame, longer than the pipe\n");
    }

    /// A peer that does not read: what is owed grows, and `room` waits
    /// until the peer reads it down.
    #[tokio::test]
    async fn room_waits_while_the_peer_does_not_read() {
        let (w, mut r) = tokio::io::duplex(16);
        let out = Out::new(Box::new(w), false);
        for _ in 0..100 {
            assert!(out.send(vec![b'x'; 100]));
        }
        assert!(out.owed() > 9_000, "{}", out.owed());
        let waited =
            tokio::time::timeout(std::time::Duration::from_millis(200), out.room(1_000)).await;
        assert!(waited.is_err(), "room while nothing is read");
        let reader = tokio::spawn(async move {
            let mut all = vec![0; 10_000];
            r.read_exact(&mut all).await.unwrap();
        });
        tokio::time::timeout(std::time::Duration::from_secs(5), out.room(1_000))
            .await
            .expect("room once the peer reads");
        reader.await.unwrap();
        assert_eq!(out.owed(), 0);
    }

    #[tokio::test]
    async fn a_closed_peer_closes_the_writer() {
        let (w, r) = tokio::io::duplex(64);
        drop(r);
        let out = Out::new(Box::new(w), false);
        assert!(!out.send(b"x\n".to_vec()));
        assert!(!out.send(b"y\n".to_vec()));
    }
}
