//! A child that scry starts and must be able to end whole, and measure
//! whole: a language server, with every process it starts (rust-analyzer's
//! cargo and rustc), or a command-line linter (scry-ops). The one place the
//! containment differs by OS, both sides side by side:
//!
//! - Unix: the child leads its own process group (`ProcessGroup::leader`),
//!   and killing it signals the whole group (SIGKILL). A server also dies
//!   with the thread that started it on Linux ([`die_with_starter`]:
//!   `PR_SET_PDEATHSIG`), so a killed host (the daemon, SIGKILL) leaves no
//!   server behind. Its [`Tree`] is its pid: the tree is read from `/proc`
//!   ([`memory`]: descendants and the process group).
//! - Windows: the child runs in a Job Object (`JobObject`) created
//!   kill-on-close (`KillOnDrop`: `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`):
//!   killing it terminates the job, and the job's handle closing — scry
//!   exiting, however it exits — ends every process in it. process-wrap
//!   keeps that job's handle to itself, so a second job, scry's own, is
//!   what measures the tree ([`Tree`]): the child, still suspended after
//!   its spawn, is put in it first, and process-wrap's job then nests inside
//!   it (Windows 8 and later nest jobs), so every process the server ever
//!   starts is in both. The measuring job has no limits and kills nothing.
//!
//! Invariant: every server and linter is started through [`contained`],
//! argv only (never a shell), and ends whole when its handle is killed or
//! dropped; [`tree_of`] the started child is what [`memory`] measures.

pub mod memory;

use std::ffi::OsStr;

use process_wrap::tokio::{ChildWrapper, CommandWrap};

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

/// What to change when the OS refused to start a child for one of its
/// arguments (`InvalidInput`: a NUL byte anywhere; for a `.cmd`/`.bat`
/// program, which std runs through `cmd.exe` quoting each argument, also a
/// line break, which `cmd.exe` would act on and std refuses to pass): the
/// words to add after the OS's error. Nothing is ever retried through a
/// shell.
pub fn refused_argument_hint(e: &std::io::Error) -> &'static str {
    if e.kind() == std::io::ErrorKind::InvalidInput {
        "; an argument cannot be passed to it safely (a NUL byte, or for a .cmd/.bat program a line break cmd.exe would act on): change the configured args"
    } else {
        ""
    }
}

/// Make the child of `c` die with the thread that starts it, where the OS
/// can be asked to (Linux); on Windows the kill-on-close job of
/// [`contained`] already ends it with scry; elsewhere the group kill
/// remains.
pub fn die_with_starter(c: &mut tokio::process::Command) {
    imp::die_with_starter(c);
}

/// A started child's whole process tree, as this OS lets scry measure it
/// ([`memory::ProcessTable::tree_memory`]): its pid on Unix; on Windows its
/// pid and the job that holds it and all it starts. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Tree {
    pid: u32,
    #[allow(dead_code)] // read on Windows only
    job: imp::Job,
}

impl Tree {
    /// The pid of the process that leads the tree (the one started).
    pub fn pid(&self) -> u32 {
        self.pid
    }
}

/// The tree of `child`, a child of [`contained`]: `None` when it has no
/// pid (it has exited) or, on Windows, was not put in a measuring job (the
/// job could not be made: its memory is then unknown, never guessed).
pub fn tree_of(child: &dyn ChildWrapper) -> Option<Tree> {
    let pid = child.id()?;
    let job = imp::job_of(child)?;
    Some(Tree { pid, job })
}

#[cfg(unix)]
mod imp {
    use process_wrap::tokio::{ChildWrapper, CommandWrap, ProcessGroup};

    /// Nothing beyond the pid: `/proc` says what the tree is.
    #[derive(Debug, Clone)]
    pub struct Job;

    pub fn contain(cmd: &mut CommandWrap) {
        cmd.wrap(ProcessGroup::leader());
    }

    pub fn job_of(_child: &dyn ChildWrapper) -> Option<Job> {
        Some(Job)
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
    use std::any::Any;
    use std::io;
    use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
    use std::sync::Arc;

    use process_wrap::tokio::{ChildWrapper, CommandWrap, CommandWrapper, JobObject, KillOnDrop};
    use windows_sys::Win32::System::JobObjects::{AssignProcessToJobObject, CreateJobObjectW};

    /// The measuring job of a child (see the module header).
    pub type Job = Arc<OwnedHandle>;

    pub fn contain(cmd: &mut CommandWrap) {
        cmd.wrap(JobObject);
        cmd.wrap(KillOnDrop);
        // Last: its `post_spawn` runs while the child is still suspended
        // (JobObject spawns it so and resumes it in its `wrap_child`), and
        // its child wrapper is the outermost one, which `job_of` finds.
        cmd.wrap(Meter::default());
    }

    pub fn die_with_starter(_c: &mut tokio::process::Command) {}

    pub fn job_of(child: &dyn ChildWrapper) -> Option<Job> {
        let any: &dyn Any = child;
        any.downcast_ref::<Metered>()?.job.clone()
    }

    /// A new job with no limits: it only gathers the processes.
    fn new_job() -> io::Result<OwnedHandle> {
        // SAFETY: no attributes, no name; the handle returned is ours.
        let h = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if h.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a valid handle that nothing else owns.
        Ok(unsafe { OwnedHandle::from_raw_handle(h) })
    }

    /// Puts the spawned child in a measuring job of its own.
    #[derive(Debug, Default)]
    struct Meter {
        job: Option<Job>,
    }

    impl CommandWrapper for Meter {
        fn post_spawn(
            &mut self,
            _command: &mut tokio::process::Command,
            child: &mut tokio::process::Child,
            _core: &CommandWrap,
        ) -> io::Result<()> {
            let Some(process) = child.raw_handle() else {
                return Ok(());
            };
            // A job that cannot be made or joined leaves the memory
            // unknown; the server still runs, contained by process-wrap.
            match new_job().and_then(|job| {
                // SAFETY: both handles are open for the call.
                let ok = unsafe { AssignProcessToJobObject(job.as_raw_handle(), process) } != 0;
                if ok {
                    Ok(job)
                } else {
                    Err(io::Error::last_os_error())
                }
            }) {
                Ok(job) => self.job = Some(Arc::new(job)),
                Err(e) => {
                    tracing::warn!(error = %e, "no measuring job: the server's memory is unknown")
                }
            }
            Ok(())
        }

        fn wrap_child(
            &mut self,
            inner: Box<dyn ChildWrapper>,
            _core: &CommandWrap,
        ) -> io::Result<Box<dyn ChildWrapper>> {
            Ok(Box::new(Metered {
                inner,
                job: self.job.take(),
            }))
        }
    }

    /// The child with its measuring job; everything else passes through.
    #[derive(Debug)]
    struct Metered {
        inner: Box<dyn ChildWrapper>,
        job: Option<Job>,
    }

    impl ChildWrapper for Metered {
        fn inner(&self) -> &dyn ChildWrapper {
            self.inner.as_ref()
        }
        fn inner_mut(&mut self) -> &mut dyn ChildWrapper {
            self.inner.as_mut()
        }
        fn into_inner(self: Box<Self>) -> Box<dyn ChildWrapper> {
            self.inner
        }
        fn process_handle(&self) -> Option<BorrowedHandle<'_>> {
            self.inner.process_handle()
        }
    }
}
