//! How the crash test hook ([`crate::crash`]) dies: at once, as an OOM kill
//! or a power cut would stop the writer (no unwinding, no destructor, no
//! buffer flushed, no lock released but by the OS).
//!
//! - Unix: `SIGKILL` sent to itself (through `libc`).
//! - Windows: `TerminateProcess` of itself with exit code [`KILLED_CODE`].

/// The exit code of a process the hook killed on Windows (the Unix
/// `128 + SIGKILL` that shells show).
pub const KILLED_CODE: u32 = 137;

/// End this process now, as a kill would.
pub fn die() -> ! {
    imp::die();
    std::process::abort()
}

/// Whether a child that exited with `status` was killed the way [`die`]
/// kills.
pub fn killed(status: &std::process::ExitStatus) -> bool {
    imp::killed(status)
}

#[cfg(unix)]
mod imp {
    pub fn die() {
        // SAFETY: sending a signal to ourselves.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }

    pub fn killed(status: &std::process::ExitStatus) -> bool {
        use std::os::unix::process::ExitStatusExt;
        status.signal() == Some(libc::SIGKILL)
    }
}

#[cfg(windows)]
mod imp {
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, TerminateProcess};

    pub fn die() {
        // SAFETY: terminating ourselves (the pseudo-handle needs no close).
        unsafe {
            TerminateProcess(GetCurrentProcess(), super::KILLED_CODE);
        }
    }

    pub fn killed(status: &std::process::ExitStatus) -> bool {
        status.code().and_then(|c| u32::try_from(c).ok()) == Some(super::KILLED_CODE)
    }
}
