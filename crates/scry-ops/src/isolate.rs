//! Panic isolation for the front ends that serve many calls from one
//! process (the daemon, the MCP server): [`isolated`] runs one call so that
//! a panic inside it (a bug) ends that call alone and is answered as an
//! error (`INTERNAL`), while every other call goes on.
//!
//! The call runs inline, on the caller's task, with each poll inside
//! `catch_unwind`: no task of its own, so no extra spawn and wake-up per
//! call (both front ends already give each call its own task: the daemon's
//! connection spawns one, rmcp spawns one per request).
//!
//! Invariants: dropping the returned future drops the call's future
//! (cancellation still reaches the language server); a panic never unwinds
//! into the caller, and a call that panicked is never polled again; the
//! error carries the panic's message; the call runs in the caller's call
//! environment (`scry_workspace::env`), since it is polled inside it.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use scry_model::error::OpError;

/// A future whose panics are caught at each poll and become its output.
struct CatchUnwind<F> {
    /// `None` once it panicked: never polled again.
    fut: Option<Pin<Box<F>>>,
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(fut) = self.fut.as_mut() else {
            return Poll::Ready(Err("the call had already panicked".to_string()));
        };
        // Unwind safety: the panicking future is dropped below and never
        // polled again; state it shared is behind locks that poison.
        match catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(p) => {
                self.fut = None;
                let text = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string());
                Poll::Ready(Err(text))
            }
        }
    }
}

/// Run `f`: its output, or the panic's message when it panicked.
pub async fn isolated<T, F>(f: F) -> Result<T, String>
where
    F: Future<Output = T>,
{
    CatchUnwind {
        fut: Some(Box::pin(f)),
    }
    .await
}

/// The error a call that panicked is answered with.
pub fn internal_error(action: &str, panic: &str) -> OpError {
    OpError::Internal(
        scry_model::Fact::Panicked {
            action: action.to_string(),
            panic: panic.to_string(),
        }
        .message(),
    )
}

/// A test hook, compiled into debug builds only: a call whose symbol equals
/// `SCRY_TEST_PANIC_SYMBOL` (the calling client's) panics, so tests can
/// show a panic is isolated.
pub fn test_panic_hook(symbol: Option<&str>) {
    #[cfg(debug_assertions)]
    if let (Some(s), Ok(want)) = (
        symbol,
        scry_workspace::env::var_os("SCRY_TEST_PANIC_SYMBOL")
            .and_then(|v| v.into_string().ok())
            .ok_or(()),
    ) && !want.is_empty()
        && s == want
    {
        panic!("test panic for symbol {s}");
    }
    #[cfg(not(debug_assertions))]
    let _ = symbol;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_is_an_error_for_that_call_only() {
        let bad = isolated(async {
            if std::hint::black_box(true) {
                panic!("boom {}", 42);
            }
            1
        })
        .await;
        assert_eq!(bad.unwrap_err(), "boom 42");
        assert_eq!(isolated(async { 7 }).await.unwrap(), 7);
        let e = internal_error("refs", "boom");
        assert_eq!(e.code(), "INTERNAL");
        assert!(e.to_string().contains("boom"), "{e}");
    }

    #[tokio::test]
    async fn dropping_the_future_drops_the_call() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let fut = isolated(async move {
            let _tx = tx;
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        });
        // Poll once so the call starts, then drop it.
        let _ = tokio::time::timeout(std::time::Duration::from_millis(20), fut).await;
        // The call is dropped: its sender with it, the receiver errors.
        assert!(
            tokio::time::timeout(std::time::Duration::from_secs(5), rx)
                .await
                .unwrap()
                .is_err()
        );
    }
}
