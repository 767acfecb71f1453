//! Panic isolation for the front ends that serve many calls from one
//! process (the daemon, the MCP server): [`isolated`] runs one call on its
//! own task, so a panic inside it (a bug) ends that call alone and is
//! answered as an error (`INTERNAL`), while every other call goes on.
//!
//! Invariants: dropping the returned future aborts the task (cancellation
//! still reaches the language server); a panic never unwinds into the
//! caller; the error names the call and carries the panic's message; the
//! task runs in the caller's call environment (`scry_workspace::env::carry`).

use std::future::Future;

use scry_model::error::OpError;

/// Aborts the task when dropped: the caller's cancellation reaches it.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Run `f` on its own task: its output, or the panic's message when it
/// panicked. Must be called inside a tokio runtime.
pub async fn isolated<T, F>(f: F) -> Result<T, String>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    // The call's environment (`scry_workspace::env`) goes with it.
    let task = tokio::spawn(scry_workspace::env::carry(f));
    let _guard = AbortOnDrop(task.abort_handle());
    match task.await {
        Ok(v) => Ok(v),
        Err(e) if e.is_panic() => {
            let p = e.into_panic();
            let text = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            Err(text)
        }
        Err(_) => Err("the call's task was cancelled".to_string()),
    }
}

/// The error a call that panicked is answered with.
pub fn internal_error(action: &str, panic: &str) -> OpError {
    OpError::Internal(scry_model::msgf!(
        "scry failed inside this {action} call (a bug; please report it): {panic}; other calls are unaffected"
    ))
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
    async fn dropping_the_future_aborts_the_task() {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let fut = isolated(async move {
            let _tx = tx;
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        });
        // Poll once so the task starts, then drop it.
        let _ = tokio::time::timeout(std::time::Duration::from_millis(20), fut).await;
        // The task is aborted: its sender is dropped, the receiver errors.
        assert!(
            tokio::time::timeout(std::time::Duration::from_secs(5), rx)
                .await
                .unwrap()
                .is_err()
        );
    }
}
