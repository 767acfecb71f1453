//! How a SCIP indexer runs ([`crate::indexing`]): started ([`start`]) so
//! that its whole process tree — build scripts, cargo, rustc — ends with
//! it, and in the background at the lowest priority. Both sides side by
//! side:
//!
//! - Unix: before `exec` the indexer enters a process group of its own,
//!   dies with the thread that started it (Linux `PR_SET_PDEATHSIG`) and,
//!   in the background, takes nice 19 and the idle I/O class (Linux
//!   `ioprio_set`); a [`GroupReaper`] (Linux) kills its group when the run
//!   ends or the process that started it dies, SIGKILL included; [`IndexerRun::stop`]
//!   signals the group.
//! - Windows: the indexer starts suspended, is put in a kill-on-close Job
//!   Object of scry's own and resumed (process-wrap's `JobObject` does the
//!   suspend and resume; its own job nests in scry's), so everything it
//!   starts is in the job; the job is terminated by [`IndexerRun::stop`], and
//!   its last handle closing — the run ending, scry exiting however it
//!   exits — ends them all. In the background its
//!   priority class is `IDLE_PRIORITY_CLASS`, set while it is still
//!   suspended; the processes it starts inherit it (Windows passes the idle
//!   and below-normal classes on). Its disk priority stays normal: Windows
//!   lets a process lower only its own I/O priority (background mode), so
//!   that is a gap [`GAPS`] says (`scry doctor`).
//!
//! Invariant: an indexer started here never outlives the run that started
//! it, nor the process that did.

use std::io;
use std::process::{ChildStderr, Command, ExitStatus};

/// What this OS cannot give an indexer that others do (`scry doctor`).
pub const GAPS: &[scry_model::PlatformGap] = imp::GAPS;

/// A running indexer (see the module header).
pub struct IndexerRun {
    running: imp::Running,
}

/// Start `cmd` as an indexer: its tree ended whole, at the lowest CPU and
/// I/O priority when `background`.
pub fn start(cmd: Command, background: bool) -> io::Result<IndexerRun> {
    Ok(IndexerRun {
        running: imp::start(cmd, background)?,
    })
}

impl IndexerRun {
    /// Its pid.
    #[cfg_attr(not(all(test, windows)), allow(dead_code))] // the Windows test reads it
    pub fn id(&self) -> u32 {
        self.running.id()
    }

    /// Its stderr (when piped), once.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.running.take_stderr()
    }

    /// Its exit status, when it has exited.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.running.try_wait()
    }

    /// End it and everything it started, and reap it.
    pub fn stop(&mut self) {
        self.running.stop();
    }
}

#[cfg(unix)]
mod imp {
    use std::io;
    use std::process::{Child, ChildStderr, Command, ExitStatus};

    pub const GAPS: &[scry_model::PlatformGap] = &[];

    pub struct Running {
        child: Child,
        // Dropped with the run: kills what is left of the group.
        #[cfg(target_os = "linux")]
        _reaper: Option<GroupReaper>,
    }

    pub fn start(mut cmd: Command, background: bool) -> io::Result<Running> {
        lower(&mut cmd, background);
        let child = cmd.spawn()?;
        Ok(Running {
            // Its group (build scripts, cargo, …) dies with this process,
            // even killed by SIGKILL, or when this indexer run ends.
            #[cfg(target_os = "linux")]
            _reaper: GroupReaper::start(child.id() as libc::pid_t),
            child,
        })
    }

    impl Running {
        #[cfg_attr(not(all(test, windows)), allow(dead_code))] // the Windows test reads it
        pub fn id(&self) -> u32 {
            self.child.id()
        }

        pub fn take_stderr(&mut self) -> Option<ChildStderr> {
            self.child.stderr.take()
        }

        pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
            self.child.try_wait()
        }

        pub fn stop(&mut self) {
            // Its whole process group (build scripts, cargo, …).
            // SAFETY: a plain syscall on the group the child leads.
            unsafe {
                libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Kills a process group when dropped or when this process dies,
    /// however it dies (SIGKILL included): a forked sentinel blocks on a
    /// pipe whose only write end this process holds; at end of file it
    /// kills the group and exits. The parent-death signal reaches only the
    /// indexer itself; its children (cargo, build scripts) are reached
    /// through their group. Linux only (elsewhere the group is killed when
    /// the run is stopped).
    #[cfg(target_os = "linux")]
    struct GroupReaper {
        sentinel: libc::pid_t,
        write: libc::c_int,
    }

    #[cfg(target_os = "linux")]
    impl GroupReaper {
        /// A sentinel for process group `pgid`; `None` when it cannot start
        /// (the group is then still killed when the run is stopped).
        fn start(pgid: libc::pid_t) -> Option<GroupReaper> {
            if pgid <= 1 {
                return None;
            }
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: plain syscalls; after fork the child calls only
            // async-signal-safe functions (dup2, close_range, read, kill,
            // _exit) and touches no memory the parent's threads may hold.
            unsafe {
                if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                    return None;
                }
                match libc::fork() {
                    -1 => {
                        libc::close(fds[0]);
                        libc::close(fds[1]);
                        None
                    }
                    0 => {
                        // Keep only the read end (as stdin): no other file
                        // of this process stays open in the sentinel.
                        libc::dup2(fds[0], 0);
                        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
                        let mut b = [0u8; 1];
                        loop {
                            let n = libc::read(0, b.as_mut_ptr().cast(), 1);
                            if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                                break;
                            }
                        }
                        libc::kill(-pgid, libc::SIGKILL);
                        libc::_exit(0);
                    }
                    pid => {
                        libc::close(fds[0]);
                        Some(GroupReaper {
                            sentinel: pid,
                            write: fds[1],
                        })
                    }
                }
            }
        }
    }

    #[cfg(target_os = "linux")]
    impl Drop for GroupReaper {
        fn drop(&mut self) {
            // SAFETY: our own descriptor and child.
            unsafe {
                libc::close(self.write);
                libc::waitpid(self.sentinel, std::ptr::null_mut(), 0);
            }
        }
    }

    /// Before exec: die with the starting thread, in a process group of its
    /// own (so that its children can be killed with it: [`GroupReaper`]);
    /// in the background, the lowest CPU and I/O priority.
    pub fn lower(cmd: &mut Command, background: bool) {
        use std::os::unix::process::CommandExt;
        // SAFETY: only async-signal-safe calls (prctl, setpriority,
        // setpgid, syscall), nothing allocated.
        unsafe {
            cmd.pre_exec(move || {
                #[cfg(target_os = "linux")]
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                libc::setpgid(0, 0);
                if background {
                    libc::setpriority(libc::PRIO_PROCESS, 0, 19);
                    // ioprio_set(IOPRIO_WHO_PROCESS, self, IOPRIO_CLASS_IDLE).
                    #[cfg(target_os = "linux")]
                    libc::syscall(libc::SYS_ioprio_set, 1, 0, 3 << 13);
                }
                Ok(())
            });
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::io;
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
    use std::process::{ChildStderr, Command, ExitStatus};

    use process_wrap::std::{ChildWrapper, CommandWrap, CommandWrapper, JobObject};
    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
        SetInformationJobObject, TerminateJobObject,
    };
    use windows_sys::Win32::System::Threading::{IDLE_PRIORITY_CLASS, SetPriorityClass};

    pub const GAPS: &[scry_model::PlatformGap] = &[scry_model::PlatformGap::IndexerDiskPriority];

    pub struct Running {
        child: Box<dyn ChildWrapper>,
        /// scry's kill-on-close job around process-wrap's: terminated by
        /// `stop`, and its last handle closing (the run ending, this
        /// process dying) ends everything in it.
        job: OwnedHandle,
    }

    pub fn start(cmd: Command, background: bool) -> io::Result<Running> {
        let mut cmd = CommandWrap::from(cmd);
        // process-wrap starts the child suspended, puts it in a job of its
        // own (not kill-on-close in its std API, and its handle is
        // private) and resumes it; `Enclose`, between the spawn and the
        // resume, puts it in scry's kill-on-close job first, which
        // process-wrap's then nests in.
        cmd.wrap(JobObject);
        cmd.wrap(Enclose {
            background,
            job: None,
        });
        let child = cmd.spawn()?;
        let job = cmd
            .get_wrap::<Enclose>()
            .and_then(|e| e.job.as_ref())
            .ok_or_else(|| io::Error::other("the indexer's job was not made"))?
            .try_clone()?;
        Ok(Running { child, job })
    }

    impl Running {
        #[cfg_attr(not(all(test, windows)), allow(dead_code))] // the Windows test reads it
        pub fn id(&self) -> u32 {
            self.child.id()
        }

        pub fn take_stderr(&mut self) -> Option<ChildStderr> {
            self.child.stderr().take()
        }

        pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
            self.child.try_wait()
        }

        pub fn stop(&mut self) {
            // SAFETY: the job handle is open.
            unsafe {
                TerminateJobObject(self.job.as_raw_handle(), 1);
            }
            let _ = self.child.start_kill();
            let _ = self.child.wait();
        }
    }

    /// A new job that kills its processes when its last handle closes.
    fn kill_on_close_job() -> io::Result<OwnedHandle> {
        // SAFETY: no attributes, no name; the handle returned is ours.
        let h = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if h.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a valid handle that nothing else owns.
        let job = unsafe { OwnedHandle::from_raw_handle(h) };
        let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the struct is the one the class names, sized as it is.
        let ok = unsafe {
            SetInformationJobObject(
                job.as_raw_handle(),
                JobObjectExtendedLimitInformation,
                (&raw const info).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        } != 0;
        if ok {
            Ok(job)
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Puts the spawned, still suspended child in a kill-on-close job and,
    /// in the background, gives it the idle priority class; a child that
    /// cannot be enclosed is killed before it ever runs.
    #[derive(Debug)]
    struct Enclose {
        background: bool,
        job: Option<OwnedHandle>,
    }

    impl CommandWrapper for Enclose {
        fn post_spawn(
            &mut self,
            _command: &mut Command,
            child: &mut std::process::Child,
            _core: &CommandWrap,
        ) -> io::Result<()> {
            let process = child.as_raw_handle();
            let enclosed = kill_on_close_job().and_then(|job| {
                // SAFETY: both handles are open for the call.
                if unsafe { AssignProcessToJobObject(job.as_raw_handle(), process) } != 0 {
                    Ok(job)
                } else {
                    Err(io::Error::last_os_error())
                }
            });
            match enclosed {
                Ok(job) => self.job = Some(job),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(e);
                }
            }
            // SAFETY: the child's handle is open for the call.
            if self.background && unsafe { SetPriorityClass(process, IDLE_PRIORITY_CLASS) } == 0 {
                // Runs at the normal priority: said, not fatal.
                tracing::warn!(error = %io::Error::last_os_error(), "the indexer keeps its normal priority");
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    /// Whether `pid` is running (a zombie counts as gone: it has no
    /// resident memory).
    fn alive(pid: u32) -> bool {
        scry_lsp_session::process::memory::rss_kib(pid).is_some()
    }

    /// This test binary running the ignored test `name` alone, with `env`.
    fn this_test(name: &str, env: &[(&str, &std::ffi::OsStr)]) -> Command {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--ignored", "--exact", name, "--nocapture"])
            .envs(env.iter().map(|(k, v)| (*k, *v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        cmd
    }

    const TESTS: &str = "platform::indexer::tests::";

    /// The grandchild: sleeps until killed.
    #[test]
    #[ignore = "run by a_killed_starter_leaves_no_indexer_children"]
    fn sleeper_child() {
        if std::env::var_os("SCRY_TEST_SLEEPER").is_some() {
            std::thread::sleep(Duration::from_secs(300));
        }
    }

    /// The "indexer": starts a sleeper (an ordinary child, as cargo is
    /// one), writes its pid, waits for it.
    #[test]
    #[ignore = "run by a_killed_starter_leaves_no_indexer_children"]
    fn indexer_child() {
        let Some(out) = std::env::var_os("SCRY_TEST_INDEXER_PIDFILE") else {
            return;
        };
        let out = std::path::PathBuf::from(out);
        let one = std::ffi::OsStr::new("1");
        let mut sleeper = this_test(
            &format!("{TESTS}sleeper_child"),
            &[("SCRY_TEST_SLEEPER", one)],
        )
        .spawn()
        .unwrap();
        let tmp = out.with_extension("tmp");
        std::fs::write(&tmp, sleeper.id().to_string()).unwrap();
        std::fs::rename(&tmp, &out).unwrap();
        let _ = sleeper.wait();
    }

    /// The starter: starts the indexer as `indexing` does, then waits to
    /// be killed.
    #[test]
    #[ignore = "run by a_killed_starter_leaves_no_indexer_children"]
    fn starter_child() {
        let Some(out) = std::env::var_os("SCRY_TEST_PIDFILE") else {
            return;
        };
        let cmd = this_test(
            &format!("{TESTS}indexer_child"),
            &[("SCRY_TEST_INDEXER_PIDFILE", &out)],
        );
        let mut indexer = start(cmd, true).unwrap();
        std::thread::sleep(Duration::from_secs(300));
        indexer.stop();
    }

    fn wait_pid(pidfile: &std::path::Path) -> u32 {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(p) = std::fs::read_to_string(pidfile)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                return p;
            }
            assert!(Instant::now() < until, "the indexer never started");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_gone(pid: u32, what: &str) {
        let until = Instant::now() + Duration::from_secs(30);
        while alive(pid) {
            assert!(Instant::now() < until, "{what} {pid} is still running");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn a_killed_starter_leaves_no_indexer_children() {
        let t = tempfile::tempdir().unwrap();
        let pidfile = t.path().join("pid");
        let mut starter = this_test(
            &format!("{TESTS}starter_child"),
            &[("SCRY_TEST_PIDFILE", pidfile.as_os_str())],
        )
        .spawn()
        .unwrap();
        let sleeper = wait_pid(&pidfile);
        assert!(alive(sleeper));
        // SIGKILL / TerminateProcess: no destructor runs in the starter.
        starter.kill().unwrap();
        starter.wait().unwrap();
        wait_gone(sleeper, "the indexer's child outlived its killed starter:");
    }

    #[test]
    fn a_stopped_indexer_takes_its_children_with_it() {
        let t = tempfile::tempdir().unwrap();
        let pidfile = t.path().join("pid");
        let cmd = this_test(
            &format!("{TESTS}indexer_child"),
            &[("SCRY_TEST_INDEXER_PIDFILE", pidfile.as_os_str())],
        );
        let mut indexer = start(cmd, false).unwrap();
        let sleeper = wait_pid(&pidfile);
        assert!(alive(sleeper));
        assert!(indexer.try_wait().unwrap().is_none());
        indexer.stop();
        assert!(indexer.try_wait().unwrap().is_some(), "reaped");
        wait_gone(sleeper, "the stopped indexer's child");
    }

    #[cfg(target_os = "linux")]
    mod linux {
        use super::super::start;
        use std::process::{Command, Stdio};

        /// (nice, process group, own pid) of a child started as an
        /// indexer, read from its `/proc/self/stat`.
        fn started(background: bool) -> (i64, u32, u32) {
            let mut cmd = Command::new("cat");
            cmd.arg("/proc/self/stat").stdout(Stdio::piped());
            super::super::imp::lower(&mut cmd, background);
            let out = cmd.output().unwrap();
            parse(&String::from_utf8(out.stdout).unwrap())
        }

        fn parse(stat: &str) -> (i64, u32, u32) {
            let (pid, rest) = stat.split_once(" (").unwrap();
            let f: Vec<&str> = rest.rsplit_once(") ").unwrap().1.split(' ').collect();
            // After the name: state ppid pgrp session tty tpgid flags
            // minflt cminflt majflt cmajflt utime stime cutime cstime
            // priority nice.
            (
                f[16].parse().unwrap(),
                f[2].parse().unwrap(),
                pid.parse().unwrap(),
            )
        }

        #[test]
        fn in_the_background_an_indexer_runs_at_the_lowest_priority_in_its_own_group() {
            let (nice, pgrp, pid) = started(true);
            assert_eq!(nice, 19);
            assert_eq!(pgrp, pid);
            // In the foreground: the caller's priority, a group of its own.
            let (own_nice, _, _) = parse(&std::fs::read_to_string("/proc/self/stat").unwrap());
            let (nice, pgrp, pid) = started(false);
            assert_eq!(pgrp, pid);
            assert_eq!(nice, own_nice);
            // `start` is what sets it up.
            let mut cmd = Command::new("true");
            cmd.stdout(Stdio::null());
            let mut i = start(cmd, true).unwrap();
            i.stop();
        }
    }

    #[cfg(windows)]
    mod windows {
        use super::super::start;
        use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
        use std::process::Command;
        use windows_sys::Win32::System::Threading::{
            GetPriorityClass, IDLE_PRIORITY_CLASS, NORMAL_PRIORITY_CLASS, OpenProcess,
            PROCESS_QUERY_LIMITED_INFORMATION,
        };

        fn priority_class(pid: u32) -> u32 {
            // SAFETY: a plain open; the handle is ours.
            let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
            assert!(!h.is_null(), "open {pid}");
            // SAFETY: a valid handle nothing else owns.
            let h = unsafe { OwnedHandle::from_raw_handle(h) };
            // SAFETY: the handle is open.
            unsafe { GetPriorityClass(h.as_raw_handle()) }
        }

        #[test]
        fn in_the_background_an_indexer_runs_at_the_idle_priority_class() {
            let t = tempfile::tempdir().unwrap();
            for (background, class) in [(true, IDLE_PRIORITY_CLASS), (false, NORMAL_PRIORITY_CLASS)]
            {
                let pidfile = t.path().join(format!("pid{background}"));
                let cmd: Command = super::this_test(
                    &format!("{}indexer_child", super::TESTS),
                    &[("SCRY_TEST_INDEXER_PIDFILE", pidfile.as_os_str())],
                );
                let mut indexer = start(cmd, background).unwrap();
                super::wait_pid(&pidfile);
                // The indexer's own class. Its children inherit the idle
                // class by CreateProcess's rule, which wine 8 does not
                // follow (they run at the normal class there), so that
                // part is Windows' and not checked here.
                assert_eq!(
                    priority_class(indexer.id()),
                    class,
                    "background: {background}"
                );
                indexer.stop();
            }
        }
    }
}
