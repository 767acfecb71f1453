//! A child that scry starts and must be able to end whole: a language
//! server, with every process it starts (rust-analyzer's cargo and rustc),
//! or a command-line linter (scry-ops). The one place the containment
//! differs by OS, both sides side by side:
//!
//! - Unix: the child leads its own process group (`ProcessGroup::leader`),
//!   and killing it signals the whole group (SIGKILL). A server also dies
//!   with the thread that started it on Linux ([`die_with_starter`]:
//!   `PR_SET_PDEATHSIG`), so a killed host (the daemon, SIGKILL) leaves no
//!   server behind.
//! - Windows: the child runs in a Job Object (`JobObject`) created
//!   kill-on-close (`KillOnDrop`: `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`):
//!   killing it terminates the job, and the job's handle closing — scry
//!   exiting, however it exits — ends every process in it.
//!
//! Invariant: every server and linter is started through [`contained`],
//! argv only (never a shell), and ends whole when its handle is killed or
//! dropped.

use std::ffi::OsStr;

use process_wrap::tokio::CommandWrap;

/// The command for `program`, set up by `configure` (arguments,
/// environment, pipes), contained as this OS contains a child (see the
/// module header). `kill_on_drop` is set.
pub fn contained(
    program: impl AsRef<OsStr>,
    configure: impl FnOnce(&mut tokio::process::Command),
) -> CommandWrap {
    let mut cmd = CommandWrap::with_new(program, |c| {
        configure(c);
        c.kill_on_drop(true);
    });
    imp::contain(&mut cmd);
    cmd
}

/// Make the child of `c` die with the thread that starts it, where the OS
/// can be asked to (Linux); on Windows the kill-on-close job of
/// [`contained`] already ends it with scry; elsewhere the group kill
/// remains.
pub fn die_with_starter(c: &mut tokio::process::Command) {
    imp::die_with_starter(c);
}

#[cfg(unix)]
mod imp {
    use process_wrap::tokio::{CommandWrap, ProcessGroup};

    pub fn contain(cmd: &mut CommandWrap) {
        cmd.wrap(ProcessGroup::leader());
    }

    /// On Linux the child is sent SIGKILL when the thread that started it
    /// ends; other Unixes have no such request (the group kill remains).
    #[allow(unused_variables)]
    pub fn die_with_starter(c: &mut tokio::process::Command) {
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe; nothing is allocated.
        unsafe {
            c.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                Ok(())
            });
        }
    }
}

#[cfg(windows)]
mod imp {
    use process_wrap::tokio::{CommandWrap, JobObject, KillOnDrop};

    pub fn contain(cmd: &mut CommandWrap) {
        cmd.wrap(JobObject);
        cmd.wrap(KillOnDrop);
    }

    /// Nothing to do per child: the kill-on-close job ends it with scry.
    pub fn die_with_starter(_c: &mut tokio::process::Command) {}
}
