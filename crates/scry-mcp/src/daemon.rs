//! The daemon as the MCP session's [`Backend`]: each validated question
//! goes to the scry daemon over the session's own connection (calls run
//! concurrently; a cancelled call sends `Cancel`, so the daemon cancels it
//! upstream); the reply's answer comes back for rendering here.
//!
//! Invariants:
//! - One daemon client session per MCP session: [`DaemonBackend::new_session`]
//!   gives an HTTP session its own connection and session id, so the
//!   daemon's idempotency keys and once-per-session notices (trust) stay
//!   per MCP session; the connection closes when the MCP session ends.
//! - When the daemon cannot be used, [`Route::InProcess`] says why, and
//!   [`InProcess`] answers with the session's engine, adding that reason to
//!   `status` (as the CLI does).

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use scry_daemon::client::Shared;
use scry_daemon::paths::Files;
use scry_ops::{Action, Answer, Engine, OpError, Query};

use crate::server::Backend;

/// Questions about `root` answered by the daemon.
pub struct DaemonBackend {
    shared: Shared,
    files: Files,
    exe: PathBuf,
    root: PathBuf,
}

impl DaemonBackend {
    /// Connect to the daemon (starting it if needed); `Err`: why it cannot
    /// be used (the caller then serves in-process).
    pub async fn connect(root: PathBuf) -> Result<DaemonBackend, String> {
        let files = Files::locate()?;
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find the scry executable: {e}"))?;
        let session = scry_daemon::client::session_id("mcp");
        let shared = Shared::connect(files.clone(), exe.clone(), session).await?;
        Ok(DaemonBackend {
            shared,
            files,
            exe,
            root,
        })
    }

    /// Another MCP session of the same server (HTTP): its own client
    /// session and connection, opened on its first call.
    pub fn new_session(&self) -> DaemonBackend {
        let session = scry_daemon::client::session_id("mcp-http");
        DaemonBackend {
            shared: Shared::lazy(self.files.clone(), self.exe.clone(), session),
            files: self.files.clone(),
            exe: self.exe.clone(),
            root: self.root.clone(),
        }
    }

    /// The daemon client session id.
    pub fn session(&self) -> &str {
        self.shared.session()
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

/// Who answers a server's questions.
pub enum Route {
    /// The daemon (the first session's backend; others get
    /// [`DaemonBackend::new_session`]).
    Daemon(Box<DaemonBackend>),
    /// This process: `Some(why)` when the daemon could not be used, `None`
    /// when opted out (`--no-daemon`, `SCRY_NO_DAEMON=1`).
    InProcess(Option<String>),
}

impl Route {
    /// The backend of one session (`None`: `engine` itself answers).
    pub fn backend(self, engine: &Engine) -> Option<Arc<dyn Backend>> {
        match self {
            Route::Daemon(b) => Some(Arc::new(*b)),
            Route::InProcess(Some(why)) => Some(Arc::new(InProcess::new(engine.clone(), why))),
            Route::InProcess(None) => None,
        }
    }

    /// The daemon unless `opted_out`; in-process (saying why) when it
    /// cannot be used.
    pub async fn choose(root: PathBuf, opted_out: bool) -> Route {
        if opted_out {
            return Route::InProcess(None);
        }
        match DaemonBackend::connect(root).await {
            Ok(b) => Route::Daemon(Box::new(b)),
            Err(why) => {
                tracing::warn!("scry daemon not used ({why}); serving in-process");
                Route::InProcess(Some(why))
            }
        }
    }
}

/// The session's engine as a backend, for when the daemon could not be
/// used: answers as in-process serving does, and `status` says why the
/// daemon was not used.
pub struct InProcess {
    engine: Engine,
    why: String,
}

impl InProcess {
    pub fn new(engine: Engine, why: String) -> InProcess {
        InProcess { engine, why }
    }
}

impl Backend for InProcess {
    fn run<'a>(
        &'a self,
        q: &'a Query,
    ) -> Pin<Box<dyn Future<Output = Result<Answer, OpError>> + Send + 'a>> {
        Box::pin(async move {
            let mut r = self.engine.run(q).await;
            if let Ok(answer) = &mut r
                && answer.action == Action::Status
            {
                answer
                    .notes
                    .push(scry_daemon::not_used_note(&self.why).into());
            }
            r
        })
    }

    fn waiting_on(&self) -> Option<String> {
        scry_daemon::waiting_line(self.engine.workspace())
    }
}

/// A backend per new session, from `route` (`None`: the engine itself).
pub(crate) fn session_backends(
    route: Route,
    engine: &Engine,
) -> Option<Arc<dyn Fn() -> Arc<dyn Backend> + Send + Sync>> {
    match route {
        Route::Daemon(first) => Some(Arc::new(move || Arc::new(first.new_session()))),
        in_process => {
            let b = in_process.backend(engine)?;
            Some(Arc::new(move || b.clone()))
        }
    }
}
