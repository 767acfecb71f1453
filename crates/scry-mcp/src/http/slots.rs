//! The HTTP server's connection slots, so that no client without the token
//! can starve one with it: connections that have not authenticated yet and
//! those that have are counted in two pools, and a request body must arrive
//! by a deadline.
//!
//! Invariants:
//! - A new connection takes a place in the *unauthenticated* pool
//!   ([`Slots::admit`]); when that pool is full, its oldest member is closed
//!   to make room, so the newest connections (a real client's among them)
//!   get their turn to send a request; a slow-header client can hold a place
//!   only until the header read timeout (hyper's, set by the server) or
//!   until newer connections push it out, whichever comes first.
//! - A member younger than [`GRACE`] is never pushed out: while the pool is
//!   full of such young connections the server accepts nothing
//!   ([`Slots::room_at`]), and connections wait in the kernel's accept
//!   queue, first come first served. Attackers that reconnect as fast as
//!   they are closed therefore cannot close a real client's connection
//!   before it had the time to send its request; it waits its turn behind
//!   at most one connection per attacker.
//! - A connection moves to the *authenticated* pool on its first request
//!   that passes the token check ([`Conn::promote`]), never earlier; from
//!   then on nothing another connection does closes it. The authenticated
//!   pool is bounded on its own (a request past it gets 503), so
//!   unauthenticated connections never take its places.
//! - A request body not complete within its deadline ends with an error
//!   ([`Deadlined`]); the server answers 408.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::body::{Body, Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// The two pools.
pub(super) struct Slots {
    authenticated: Arc<Semaphore>,
    max_unauthenticated: usize,
    waiting: std::sync::Mutex<Waiting>,
}

/// How long a new connection keeps its place in a full unauthenticated
/// pool: time enough for a real client's request head to arrive.
pub(super) const GRACE: Duration = Duration::from_millis(100);

/// The unauthenticated connections, oldest first, with when they came.
#[derive(Default)]
struct Waiting {
    next: u64,
    conns: VecDeque<(u64, Instant, CancellationToken)>,
}

impl Slots {
    pub(super) fn new(max_authenticated: usize, max_unauthenticated: usize) -> Arc<Slots> {
        Arc::new(Slots {
            authenticated: Arc::new(Semaphore::new(max_authenticated.max(1))),
            max_unauthenticated: max_unauthenticated.max(1),
            waiting: std::sync::Mutex::default(),
        })
    }

    /// When the next connection may be accepted: `None` now (the pool has
    /// room, or its oldest member is past its [`GRACE`]), else the moment
    /// its oldest member's grace ends.
    pub(super) fn room_at(&self) -> Option<Instant> {
        let w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if w.conns.len() < self.max_unauthenticated {
            return None;
        }
        let until = w.conns.front()?.1 + GRACE;
        (until > Instant::now()).then_some(until)
    }

    /// A new connection, in the unauthenticated pool; the oldest there is
    /// told to close ([`Conn::evicted`]) when the pool is full (the
    /// accept loop waits for [`Slots::room_at`] first).
    pub(super) fn admit(self: &Arc<Self>) -> Conn {
        let evicted = CancellationToken::new();
        let mut w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        while w.conns.len() >= self.max_unauthenticated {
            if let Some((_, _, oldest)) = w.conns.pop_front() {
                oldest.cancel();
            }
        }
        let id = w.next;
        w.next += 1;
        w.conns.push_back((id, Instant::now(), evicted.clone()));
        Conn {
            id,
            slots: self.clone(),
            evicted,
            authenticated: std::sync::Mutex::new(None),
        }
    }

    fn leave(&self, id: u64) {
        let mut w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        w.conns.retain(|(i, _, _)| *i != id);
    }

    /// Connections not authenticated yet (for tests and logs).
    #[cfg(test)]
    fn unauthenticated(&self) -> usize {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .conns
            .len()
    }
}

/// One connection's place: in the unauthenticated pool until
/// [`Conn::promote`], then a permit of the authenticated one. Dropping it
/// gives the place back.
pub(super) struct Conn {
    id: u64,
    slots: Arc<Slots>,
    evicted: CancellationToken,
    authenticated: std::sync::Mutex<Option<OwnedSemaphorePermit>>,
}

impl Conn {
    /// Cancelled when newer connections pushed this one, still
    /// unauthenticated, out of its pool: the connection is to be closed.
    pub(super) fn evicted(&self) -> &CancellationToken {
        &self.evicted
    }

    pub(super) fn is_authenticated(&self) -> bool {
        self.authenticated
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Move to the authenticated pool (a request passed the token check).
    /// False: that pool is full (or this connection is being closed).
    pub(super) fn promote(&self) -> bool {
        let mut a = self.authenticated.lock().unwrap_or_else(|e| e.into_inner());
        if a.is_some() {
            return true;
        }
        if self.evicted.is_cancelled() {
            return false;
        }
        let Ok(permit) = self.slots.authenticated.clone().try_acquire_owned() else {
            return false;
        };
        *a = Some(permit);
        self.slots.leave(self.id);
        true
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.slots.leave(self.id);
    }
}

/// A request body that must be complete by a deadline: past it, the next
/// poll ends the body with [`BodyTimedOut`] and `timed_out` is set (the
/// server then answers 408 whatever rmcp made of the error).
pub(super) struct Deadlined<B> {
    inner: B,
    sleep: Pin<Box<tokio::time::Sleep>>,
    limit: Duration,
    timed_out: Arc<AtomicBool>,
    done: bool,
}

impl<B> Deadlined<B> {
    pub(super) fn new(inner: B, limit: Duration) -> (Deadlined<B>, Arc<AtomicBool>) {
        let timed_out = Arc::new(AtomicBool::new(false));
        let body = Deadlined {
            inner,
            sleep: Box::pin(tokio::time::sleep(limit)),
            limit,
            timed_out: timed_out.clone(),
            done: false,
        };
        (body, timed_out)
    }
}

/// The error of a body that did not arrive in time.
#[derive(Debug)]
pub(super) enum BodyError<E> {
    TimedOut(Duration),
    Inner(E),
}

impl<E: std::fmt::Display> std::fmt::Display for BodyError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::TimedOut(d) => write!(
                f,
                "the request body did not arrive within {} s",
                d.as_secs_f64()
            ),
            BodyError::Inner(e) => e.fmt(f),
        }
    }
}

impl<B: Body + Unpin> Body for Deadlined<B> {
    type Data = B::Data;
    type Error = BodyError<B::Error>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if let Poll::Ready(f) = Pin::new(&mut this.inner).poll_frame(cx) {
            if f.is_none() {
                this.done = true;
            }
            return Poll::Ready(f.map(|r| r.map_err(BodyError::Inner)));
        }
        if this.sleep.as_mut().poll(cx).is_ready() {
            this.done = true;
            this.timed_out.store(true, Ordering::SeqCst);
            return Poll::Ready(Some(Err(BodyError::TimedOut(this.limit))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_unauthenticated_connection_makes_room() {
        let slots = Slots::new(2, 3);
        let a = slots.admit();
        let b = slots.admit();
        let c = slots.admit();
        assert_eq!(slots.unauthenticated(), 3);
        let d = slots.admit();
        assert!(a.evicted().is_cancelled(), "the oldest makes room");
        assert!(!b.evicted().is_cancelled() && !d.evicted().is_cancelled());
        assert_eq!(slots.unauthenticated(), 3);
        // An authenticated connection leaves the pool: nothing pushes it out.
        assert!(b.promote());
        assert!(b.is_authenticated());
        assert_eq!(slots.unauthenticated(), 2);
        let e = slots.admit();
        let f = slots.admit();
        assert!(!b.evicted().is_cancelled());
        assert!(c.evicted().is_cancelled());
        // The authenticated pool has its own cap, untouched by the others.
        assert!(d.promote());
        assert!(!e.promote(), "two authenticated at most");
        drop(b);
        assert!(e.promote(), "a place freed by a closed connection");
        // An evicted connection is not promoted.
        assert!(!a.promote());
        drop((d, e, f));
        assert_eq!(slots.unauthenticated(), 0);
    }

    #[test]
    fn a_full_pool_of_young_connections_accepts_nothing_until_a_grace_ends() {
        let slots = Slots::new(2, 2);
        assert_eq!(slots.room_at(), None, "room");
        let a = slots.admit();
        let _b = slots.admit();
        let until = slots.room_at().expect("full of young connections");
        assert!(until > Instant::now() && until <= Instant::now() + GRACE);
        std::thread::sleep(GRACE);
        assert_eq!(slots.room_at(), None, "the oldest is past its grace");
        let _c = slots.admit();
        assert!(a.evicted().is_cancelled());
    }

    #[tokio::test]
    async fn a_body_late_past_its_deadline_is_an_error() {
        use http_body_util::BodyExt;
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<bytes::Bytes>, String>>(1);
        let stream = http_body_util::StreamBody::new(tokio_stream_like(rx));
        let (body, timed_out) = Deadlined::new(stream, Duration::from_millis(100));
        tx.send(Ok(Frame::data(bytes::Bytes::from_static(b"{"))))
            .await
            .unwrap();
        let err = body.collect().await.expect_err("timed out");
        assert!(
            err.to_string().contains("did not arrive within 0.1 s"),
            "{err}"
        );
        assert!(timed_out.load(Ordering::SeqCst));
        drop(tx);
    }

    /// An mpsc receiver as a stream (tokio-stream is not a dependency).
    fn tokio_stream_like<T>(
        rx: tokio::sync::mpsc::Receiver<T>,
    ) -> impl futures_core::Stream<Item = T> + Unpin {
        struct S<T>(tokio::sync::mpsc::Receiver<T>);
        impl<T> futures_core::Stream for S<T> {
            type Item = T;
            fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
                self.0.poll_recv(cx)
            }
        }
        S(rx)
    }
}
