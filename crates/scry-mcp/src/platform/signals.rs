//! What stops `scry mcp --http`: SIGTERM or Ctrl-C (SIGINT) on Unix;
//! Ctrl-C on Windows (the console's other events end the process).

/// Wait for the stop signal.
pub async fn stopped() {
    imp::stopped().await
}

#[cfg(unix)]
mod imp {
    pub async fn stopped() {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(not(unix))]
mod imp {
    pub async fn stopped() {
        let _ = tokio::signal::ctrl_c().await;
    }
}
