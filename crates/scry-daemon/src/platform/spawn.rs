//! The daemon started detached from the client that starts it: on Unix in
//! its own session (`setsid` before `exec`, so a terminal's hang-up or the
//! client's process group never reaches it); on Windows as a detached
//! process in its own process group, without a console window
//! (`DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW`, so
//! the client's Ctrl-C or console close never reaches it).
//!
//! Invariant: the daemon holds none of the client's standard handles. On
//! Unix the spawn's own stdio replaces them (and every other descriptor
//! std opens is close-on-exec). On Windows a child inherits every
//! inheritable handle of its parent, and a client's stdio is inheritable
//! (it was handed down to the client): a daemon holding the write end of
//! the pipe its caller reads (an agent capturing `scry refs`, the stdout
//! of `scry mcp`) would keep that caller waiting for the end of the
//! output as long as the daemon lives. So before the spawn the client's
//! three standard handles stop being inheritable (a later child given
//! `Stdio::inherit` still gets them: std hands down a duplicate).

use std::process::Command;

/// Make `cmd` start detached (see the file header).
pub fn detach(cmd: &mut Command) {
    imp::detach(cmd)
}

#[cfg(unix)]
mod imp {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    pub fn detach(cmd: &mut Command) {
        // SAFETY: setsid is async-signal-safe; nothing is allocated.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::os::windows::process::CommandExt;
    use std::process::Command;

    use windows_sys::Win32::Foundation::{
        HANDLE_FLAG_INHERIT, INVALID_HANDLE_VALUE, SetHandleInformation,
    };
    use windows_sys::Win32::System::Console::{
        GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
    };
    use windows_sys::Win32::System::Threading::{
        CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, DETACHED_PROCESS,
    };

    pub fn detach(cmd: &mut Command) {
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
        for id in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
            // SAFETY: GetStdHandle takes a constant and returns this
            // process's handle (or null / invalid when there is none);
            // SetHandleInformation only changes that handle's flags.
            unsafe {
                let h = GetStdHandle(id);
                if !h.is_null() && h != INVALID_HANDLE_VALUE {
                    SetHandleInformation(h, HANDLE_FLAG_INHERIT, 0);
                }
            }
        }
    }
}
