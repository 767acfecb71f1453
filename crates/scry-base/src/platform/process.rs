//! Whether a process is running, by its pid: what `scry daemon stop` waits
//! on and what sweeps the scratch directories of processes that are gone.
//!
//! - Linux: `/proc/PID/stat` exists and its state is not `Z` (a zombie has
//!   exited: it only waits to be reaped).
//! - Other Unixes: `kill(pid, 0)` succeeds or is refused for permission
//!   (the process exists, another user's).
//! - Windows: the process opens (`PROCESS_QUERY_LIMITED_INFORMATION`) and
//!   its exit code is `STILL_ACTIVE`.
//!
//! Invariant: `false` for a pid that names no process; a pid reused by a
//! new process reads as running (the OS cannot tell them apart by pid).

/// Whether the process `pid` is running (see the module header).
pub fn running(pid: u32) -> bool {
    imp::running(pid)
}

#[cfg(unix)]
mod imp {
    pub fn running(pid: u32) -> bool {
        if cfg!(target_os = "linux") {
            // The state follows the last `)` (the command name's end).
            return std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| s.rsplit_once(") ").map(|(_, r)| !r.starts_with('Z')))
                .unwrap_or(false);
        }
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return false;
        }
        // SAFETY: signal 0 only checks that the process exists.
        let sent = unsafe { libc::kill(pid, 0) } == 0;
        sent || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
}

#[cfg(windows)]
mod imp {
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };

    /// `GetExitCodeProcess`'s answer for a process still running.
    const STILL_ACTIVE: u32 = 259;

    pub fn running(pid: u32) -> bool {
        // SAFETY: a plain open; the handle returned is ours.
        let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if h.is_null() {
            return false;
        }
        // SAFETY: a valid handle that nothing else owns.
        let process = unsafe { OwnedHandle::from_raw_handle(h) };
        let mut code = 0u32;
        // SAFETY: the handle is open; the out-parameter is ours.
        unsafe {
            GetExitCodeProcess(process.as_raw_handle(), &mut code) != 0 && code == STILL_ACTIVE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_an_ended_child_does_not() {
        assert!(running(std::process::id()));
        let exe = std::env::current_exe().unwrap();
        // The test binary, asked to run no test: it exits at once.
        let mut child = std::process::Command::new(exe)
            .args(["--exact", "no test has this name"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!running(pid), "an ended and reaped child");
        assert!(!running(u32::MAX - 1), "no such pid");
    }
}
