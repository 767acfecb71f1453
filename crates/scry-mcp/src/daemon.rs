//! The daemon as the MCP session's [`Backend`]: each validated question
//! goes to the scry daemon over one shared connection (calls run
//! concurrently; a cancelled call sends `Cancel`, so the daemon cancels it
//! upstream); the reply's answer comes back for rendering here.

use std::path::PathBuf;
use std::pin::Pin;

use scry_daemon::client::Shared;
use scry_ops::{Answer, OpError, Query};

use crate::server::Backend;

/// Questions about `root` answered by the daemon.
pub struct DaemonBackend {
    shared: Shared,
    root: PathBuf,
}

impl DaemonBackend {
    /// Connect to the daemon (starting it if needed); `Err`: why it cannot
    /// be used (the caller then serves in-process).
    pub async fn connect(root: PathBuf) -> Result<DaemonBackend, String> {
        let files = scry_daemon::paths::Files::locate()?;
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find the scry executable: {e}"))?;
        let session = scry_daemon::client::session_id("mcp");
        let shared = Shared::connect(files, exe, session).await?;
        Ok(DaemonBackend { shared, root })
    }

    pub async fn daemon_pid(&self) -> Option<u32> {
        self.shared.pid().await
    }
}

impl Backend for DaemonBackend {
    fn run<'a>(
        &'a self,
        q: &'a Query,
    ) -> Pin<Box<dyn Future<Output = Result<Answer, OpError>> + Send + 'a>> {
        Box::pin(async move {
            let reply = self.shared.run(&self.root, &self.root, q).await?;
            match reply.into_result() {
                Ok(r) => r,
                Err(config) => Err(OpError::InvalidArgument(scry_ops::msg!(
                    "configuration: ",
                    foreign(config)
                ))),
            }
        })
    }

    fn waiting_on(&self) -> Option<String> {
        self.shared.waiting_on()
    }
}
