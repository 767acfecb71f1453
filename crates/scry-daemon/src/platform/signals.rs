//! What asks the daemon to stop from outside (besides a `Stop` frame):
//! SIGTERM and SIGINT (Ctrl-C) on Unix; Ctrl-C, Ctrl-Break, the console
//! closing and the system shutting down on Windows. [`Shutdown::recv`] is
//! cancel safe (it sits in the daemon's `select!` loop).

use std::io;

/// The stop signals, listened to from [`Shutdown::listen`] on.
pub struct Shutdown(imp::Shutdown);

impl Shutdown {
    /// Start listening (before the daemon serves anyone).
    pub fn listen() -> io::Result<Shutdown> {
        imp::Shutdown::listen().map(Shutdown)
    }

    /// The next stop signal, by name (`"SIGTERM"`, `"Ctrl-Break"`, …).
    pub async fn recv(&mut self) -> &'static str {
        self.0.recv().await
    }
}

#[cfg(unix)]
mod imp {
    use std::io;

    use tokio::signal::unix::{Signal, SignalKind, signal};

    pub struct Shutdown {
        term: Signal,
    }

    impl Shutdown {
        pub fn listen() -> io::Result<Shutdown> {
            Ok(Shutdown {
                term: signal(SignalKind::terminate())?,
            })
        }

        pub async fn recv(&mut self) -> &'static str {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = tokio::signal::ctrl_c() => "SIGINT",
            }
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::io;

    use tokio::signal::windows::{CtrlBreak, CtrlC, CtrlClose, CtrlShutdown};

    pub struct Shutdown {
        c: CtrlC,
        brk: CtrlBreak,
        close: CtrlClose,
        shutdown: CtrlShutdown,
    }

    impl Shutdown {
        pub fn listen() -> io::Result<Shutdown> {
            use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
            Ok(Shutdown {
                c: ctrl_c()?,
                brk: ctrl_break()?,
                close: ctrl_close()?,
                shutdown: ctrl_shutdown()?,
            })
        }

        pub async fn recv(&mut self) -> &'static str {
            tokio::select! {
                _ = self.c.recv() => "Ctrl-C",
                _ = self.brk.recv() => "Ctrl-Break",
                _ = self.close.recv() => "console close",
                _ = self.shutdown.recv() => "system shutdown",
            }
        }
    }
}
