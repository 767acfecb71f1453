//! The daemon started detached from the client that starts it: on Unix in
//! its own session (`setsid` before `exec`, so a terminal's hang-up or the
//! client's process group never reaches it); on Windows as a detached
//! process in its own process group, without a console window
//! (`DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW`, so
//! the client's Ctrl-C or console close never reaches it).

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

    use windows_sys::Win32::System::Threading::{
        CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, DETACHED_PROCESS,
    };

    pub fn detach(cmd: &mut Command) {
        cmd.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
    }
}
