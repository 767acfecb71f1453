//! Resident memory of a contained child's whole process tree
//! ([`super::Tree`]), one signature on every OS: a [`ProcessTable`] taken once
//! per check serves any number of trees ([`ProcessTable::tree_memory`]), and
//! [`rss_kib`] reads one process. Both sides side by side:
//!
//! - Linux: from `/proc`. A language server is often several processes:
//!   tsserver runs under typescript-language-server, rust-analyzer starts
//!   its proc-macro server and cargo. scry-lsp starts each server as the
//!   leader of its own process group, so a server's tree is every process
//!   that descends from its pid (by parent pid) or sits in its process
//!   group (descendants whose parent exited are re-parented away but keep
//!   the group). Its memory is the sum of their `VmRSS`. The snapshot
//!   ([`ProcTable::read`]) reads every `/proc/PID/stat` once.
//! - Windows: from the tree's measuring job (see [`super`]): the pids the
//!   job holds (`JobObjectBasicProcessIdList`, nested jobs included) and
//!   the sum of their working sets (`K32GetProcessMemoryInfo`,
//!   `WorkingSetSize`), the counterpart of `VmRSS`; the snapshot holds
//!   nothing. The job's own accounting was not taken: its figures
//!   (`PeakProcessMemoryUsed`, `PeakJobMemoryUsed`) are peaks, which never
//!   come down when a server frees memory, and commit charge, which counts
//!   what is paged out; the caps and the budget are resident memory, as on
//!   Linux, and a restart decided on a peak would repeat forever.
//! - Other Unixes (macOS, the BSDs): no `/proc`, no snapshot, memory
//!   unknown.
//!
//! Invariants: processes that vanish while they are read are skipped,
//! never an error; where the OS gives no figure the snapshot is `None` and
//! callers treat memory as unknown — nothing is ever decided on a guess.
//! The `/proc` parsers are pure functions, compiled and unit-tested on
//! every OS.

use std::collections::{HashMap, HashSet};
use std::path::Path;

/// One process as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcEntry {
    pub pid: u32,
    pub ppid: u32,
    pub pgrp: u32,
}

/// The memory of one process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TreeMemory {
    /// Sum of the processes' resident set sizes, KiB.
    pub rss_kib: u64,
    /// How many processes were counted (the root included).
    pub processes: usize,
}

/// Every process's pid, parent and process group at one moment.
#[derive(Debug, Clone, Default)]
pub struct ProcTable {
    entries: Vec<ProcEntry>,
}

/// `pid`, `ppid` and `pgrp` from the text of `/proc/PID/stat`. The command
/// name (field 2, in parentheses) may hold spaces and parentheses: the
/// fields after it start after its *last* `)`.
pub fn parse_stat(text: &str) -> Option<ProcEntry> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let mut rest = text.get(close + 1..)?.split_ascii_whitespace();
    let _state = rest.next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgrp = rest.next()?.parse().ok()?;
    Some(ProcEntry { pid, ppid, pgrp })
}

/// `VmRSS` in KiB from the text of `/proc/PID/status` (absent for kernel
/// threads and zombies: `None`).
pub fn parse_vm_rss(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The resident memory of one process in KiB (`VmRSS` on Linux, the
/// working set on Windows), `None` when it is gone or unreadable.
pub fn rss_kib(pid: u32) -> Option<u64> {
    imp::rss_kib(pid)
}

/// What one check reads once for every tree (the `/proc` table on Linux,
/// nothing on Windows).
#[derive(Debug)]
pub struct ProcessTable(imp::ProcessTable);

impl ProcessTable {
    /// Take one now; `None` where this OS gives no figures (memory
    /// unknown).
    pub fn take() -> Option<ProcessTable> {
        imp::ProcessTable::take().map(ProcessTable)
    }

    /// The memory of `tree` now; `None` when its leader is not running.
    pub fn tree_memory(&self, tree: &super::Tree) -> Option<TreeMemory> {
        self.0.tree_memory(tree)
    }
}

/// The pids of `root`'s tree in `entries`: `root`, its descendants by
/// parent pid, and every process in the process group `root` leads
/// (with their descendants). Sorted, each once.
pub fn tree_pids(root: u32, entries: &[ProcEntry]) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for e in entries {
        children.entry(e.ppid).or_default().push(e.pid);
    }
    let mut seen: HashSet<u32> = HashSet::new();
    let mut todo: Vec<u32> = vec![root];
    todo.extend(entries.iter().filter(|e| e.pgrp == root).map(|e| e.pid));
    while let Some(p) = todo.pop() {
        if p == 0 || !seen.insert(p) {
            continue;
        }
        if let Some(kids) = children.get(&p) {
            todo.extend(kids.iter().copied());
        }
    }
    let mut out: Vec<u32> = seen.into_iter().collect();
    out.sort_unstable();
    out
}

impl ProcTable {
    /// A table of `/proc`; `None` where there is no `/proc` (not Linux).
    pub fn read() -> Option<ProcTable> {
        ProcTable::read_from(Path::new("/proc"))
    }

    fn read_from(proc_dir: &Path) -> Option<ProcTable> {
        let dir = std::fs::read_dir(proc_dir).ok()?;
        let mut entries = Vec::new();
        for d in dir.flatten() {
            let name = d.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            // Gone since the listing: skipped.
            if let Ok(text) = std::fs::read_to_string(d.path().join("stat"))
                && let Some(e) = parse_stat(&text)
                && e.pid == pid
            {
                entries.push(e);
            }
        }
        (!entries.is_empty()).then_some(ProcTable { entries })
    }

    /// A table of given entries (tests, other sources).
    pub fn from_entries(entries: Vec<ProcEntry>) -> ProcTable {
        ProcTable { entries }
    }

    pub fn entries(&self) -> &[ProcEntry] {
        &self.entries
    }

    /// The memory of `root`'s tree (see [`tree_pids`]), its processes'
    /// resident memory read now ([`rss_kib`]); `None` when `root` itself
    /// is not running.
    pub fn tree_memory(&self, root: u32) -> Option<TreeMemory> {
        sum(root, tree_pids(root, &self.entries))
    }
}

/// The memory of the tree led by `root` whose processes are `pids` (the
/// root among them or not): `None` when the root is gone; a process gone
/// meanwhile is skipped.
fn sum(root: u32, pids: impl IntoIterator<Item = u32>) -> Option<TreeMemory> {
    let mut m = TreeMemory {
        rss_kib: rss_kib(root)?,
        processes: 1,
    };
    for k in pids.into_iter().filter(|&p| p != root).filter_map(rss_kib) {
        m.rss_kib += k;
        m.processes += 1;
    }
    Some(m)
}

#[cfg(unix)]
mod imp {
    use super::{ProcTable, TreeMemory, parse_vm_rss};

    pub fn rss_kib(pid: u32) -> Option<u64> {
        parse_vm_rss(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
    }

    #[derive(Debug)]
    pub struct ProcessTable(ProcTable);

    impl ProcessTable {
        pub fn take() -> Option<ProcessTable> {
            ProcTable::read().map(ProcessTable)
        }

        pub fn tree_memory(&self, tree: &crate::process::Tree) -> Option<TreeMemory> {
            self.0.tree_memory(tree.pid())
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

    use windows_sys::Win32::Foundation::{ERROR_MORE_DATA, GetLastError};
    use windows_sys::Win32::System::JobObjects::{
        JOBOBJECT_BASIC_PROCESS_ID_LIST, JobObjectBasicProcessIdList, QueryInformationJobObject,
    };
    use windows_sys::Win32::System::ProcessStatus::{
        K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS,
    };
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_VM_READ,
    };

    use super::TreeMemory;

    /// `GetExitCodeProcess`'s answer for a process still running.
    const STILL_ACTIVE: u32 = 259;

    pub fn rss_kib(pid: u32) -> Option<u64> {
        // SAFETY: a plain open; the handle returned is ours.
        let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_VM_READ, 0, pid) };
        if h.is_null() {
            return None;
        }
        // SAFETY: a valid handle that nothing else owns.
        let process = unsafe { OwnedHandle::from_raw_handle(h) };
        let mut code = 0u32;
        let mut counters = PROCESS_MEMORY_COUNTERS {
            cb: std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32,
            ..Default::default()
        };
        // SAFETY: the handle is open; both out-parameters are ours and
        // sized as the calls expect.
        let ok = unsafe {
            GetExitCodeProcess(process.as_raw_handle(), &mut code) != 0
                && code == STILL_ACTIVE
                && K32GetProcessMemoryInfo(process.as_raw_handle(), &mut counters, counters.cb) != 0
        };
        ok.then_some(counters.WorkingSetSize as u64 / 1024)
    }

    /// The pids in `job` (its nested jobs' included), `None` when it
    /// cannot be asked.
    fn job_pids(job: &OwnedHandle) -> Option<Vec<u32>> {
        // The list's header is two u32 (one usize), then one usize a pid.
        let mut room = 64usize;
        loop {
            let mut buf = vec![0usize; 1 + room];
            let bytes = (buf.len() * std::mem::size_of::<usize>()) as u32;
            // SAFETY: `buf` is `bytes` long and aligned for the struct,
            // whose header it starts with; the job handle is open.
            let ok = unsafe {
                QueryInformationJobObject(
                    job.as_raw_handle(),
                    JobObjectBasicProcessIdList,
                    buf.as_mut_ptr().cast(),
                    bytes,
                    std::ptr::null_mut(),
                )
            } != 0;
            // SAFETY: the buffer starts with the struct's header.
            let list = unsafe { &*buf.as_ptr().cast::<JOBOBJECT_BASIC_PROCESS_ID_LIST>() };
            if !ok {
                // SAFETY: reads this thread's last error.
                if unsafe { GetLastError() } != ERROR_MORE_DATA || room >= 1 << 16 {
                    return None;
                }
                room = (list.NumberOfAssignedProcesses as usize).max(room * 2);
                continue;
            }
            let n = (list.NumberOfProcessIdsInList as usize).min(room);
            return Some(buf[1..1 + n].iter().map(|&p| p as u32).collect());
        }
    }

    #[derive(Debug)]
    pub struct ProcessTable;

    impl ProcessTable {
        pub fn take() -> Option<ProcessTable> {
            Some(ProcessTable)
        }

        pub fn tree_memory(&self, tree: &crate::process::Tree) -> Option<TreeMemory> {
            super::sum(tree.pid(), job_pids(&tree.job)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(pid: u32, ppid: u32, pgrp: u32) -> ProcEntry {
        ProcEntry { pid, ppid, pgrp }
    }

    #[test]
    fn stat_lines_parse_even_with_odd_command_names() {
        let line =
            "4242 (node) S 4200 4242 4242 0 -1 4194560 2095 0 0 0 12 3 0 0 20 0 11 0 9 1 2 3";
        assert_eq!(parse_stat(line), Some(e(4242, 4200, 4242)));
        // A name with spaces and parentheses: the fields start after the
        // last `)`.
        let odd = "77 (a) b (c)) R 1 70 70 0 -1";
        assert_eq!(parse_stat(odd), Some(e(77, 1, 70)));
        assert_eq!(parse_stat(""), None);
        assert_eq!(parse_stat("12 (x) S"), None);
        assert_eq!(parse_stat("x (y) S 1 2"), None);
    }

    #[test]
    fn vm_rss_is_read_in_kib_and_absent_for_kernel_threads() {
        let status = "Name:\tnode\nVmPeak:\t  900000 kB\nVmRSS:\t  123456 kB\nThreads:\t11\n";
        assert_eq!(parse_vm_rss(status), Some(123_456));
        assert_eq!(parse_vm_rss("Name:\tkthreadd\nThreads:\t1\n"), None);
        assert_eq!(parse_vm_rss("VmRSS:\tlots kB\n"), None);
    }

    #[test]
    fn a_tree_is_the_descendants_and_the_process_group() {
        let table = [
            e(1, 0, 1),
            e(100, 1, 100),   // the server, a group leader
            e(101, 100, 100), // its child (tsserver)
            e(102, 101, 100), // a grandchild
            e(103, 1, 100),   // re-parented to init, still in the group
            e(104, 103, 104), // its child in a group of its own
            e(200, 1, 200),   // another server
            e(201, 200, 200),
            e(300, 100, 300), // a child that left the group: still a descendant
        ];
        assert_eq!(tree_pids(100, &table), [100, 101, 102, 103, 104, 300]);
        assert_eq!(tree_pids(200, &table), [200, 201]);
        // A pid unknown to the table is its own tree.
        assert_eq!(tree_pids(999, &table), [999]);
        // Cycles (pid reuse between reads) end.
        assert_eq!(tree_pids(5, &[e(5, 6, 5), e(6, 5, 6)]), [5, 6]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_and_its_child_are_summed() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let me = std::process::id();
        let table = ProcTable::read().expect("a /proc table on Linux");
        assert!(
            table
                .entries()
                .iter()
                .any(|x| x.pid == child.id() && x.ppid == me),
            "the child is listed with its parent"
        );
        assert!(tree_pids(me, table.entries()).contains(&child.id()));
        let own = rss_kib(me).expect("own VmRSS");
        let tree = table.tree_memory(me).expect("own tree");
        assert!(tree.processes >= 2, "{tree:?}");
        assert!(tree.rss_kib > own / 2, "{tree:?} vs own {own}");
        let _ = child.kill();
        let _ = child.wait();
        // A process that is gone has no tree.
        assert_eq!(ProcTable::read().unwrap().tree_memory(child.id()), None);
    }

    /// This test binary running the ignored test `name` alone, with `env`.
    fn this_test(c: &mut tokio::process::Command, name: &str, env: &[(&str, &std::ffi::OsStr)]) {
        c.args(["--ignored", "--exact", name, "--nocapture"])
            .envs(env.iter().map(|(k, v)| (*k, *v)))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null());
    }

    const TESTS: &str = "process::memory::tests::";

    /// The grandchild: holds 64 MiB (written, so resident), writes its
    /// pid, sleeps until killed.
    #[test]
    #[ignore = "run by a_contained_childs_whole_tree_is_measured"]
    fn holder_child() {
        let Some(out) = std::env::var_os("SCRY_TEST_HOLDER_PIDFILE") else {
            return;
        };
        let held = vec![7u8; 64 << 20];
        let out = std::path::PathBuf::from(out);
        let tmp = out.with_extension("tmp");
        std::fs::write(&tmp, std::process::id().to_string()).unwrap();
        std::fs::rename(&tmp, &out).unwrap();
        std::thread::sleep(std::time::Duration::from_secs(300));
        assert_eq!(held[held.len() - 1], 7);
    }

    /// The server: small itself, starts the holder (an ordinary child) and
    /// waits for it.
    #[test]
    #[ignore = "run by a_contained_childs_whole_tree_is_measured"]
    fn server_child() {
        let Some(out) = std::env::var_os("SCRY_TEST_SERVER_PIDFILE") else {
            return;
        };
        let mut c = std::process::Command::new(std::env::current_exe().unwrap());
        c.args(["--ignored", "--exact", &format!("{TESTS}holder_child")])
            .env("SCRY_TEST_HOLDER_PIDFILE", out)
            .stdout(std::process::Stdio::null());
        let _ = c.spawn().unwrap().wait();
    }

    #[tokio::test]
    async fn a_contained_childs_whole_tree_is_measured() {
        if ProcessTable::take().is_none() {
            eprintln!("skipped: this OS gives no memory figures (memory is unknown here)");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let pidfile = t.path().join("holder.pid");
        let mut cmd = crate::process::contained(std::env::current_exe().unwrap(), |c| {
            this_test(
                c,
                &format!("{TESTS}server_child"),
                &[("SCRY_TEST_SERVER_PIDFILE", pidfile.as_os_str())],
            );
        });
        let mut child = cmd.spawn().unwrap();
        let tree = crate::process::tree_of(child.as_ref()).expect("a measurable tree");
        let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let holder: u32 = loop {
            if let Some(p) = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                break p;
            }
            assert!(
                std::time::Instant::now() < until,
                "the holder never started"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        let own = rss_kib(tree.pid()).expect("the server's own memory");
        let held = rss_kib(holder).expect("the holder's memory");
        assert!(
            held > 60 * 1024,
            "the holder's 64 MiB are resident: {held} KiB"
        );
        let m = ProcessTable::take()
            .unwrap()
            .tree_memory(&tree)
            .expect("the tree's memory");
        assert!(m.processes >= 2, "the holder is counted: {m:?}");
        assert!(
            m.rss_kib >= own + held * 9 / 10,
            "the tree is summed: {m:?}, server {own} KiB, holder {held} KiB"
        );
        let _ = child.start_kill();
        let _ = child.wait().await;
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while rss_kib(holder).is_some() {
            assert!(
                std::time::Instant::now() < until,
                "the holder outlived the kill"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(
            ProcessTable::take().unwrap().tree_memory(&tree),
            None,
            "gone: no tree"
        );
    }
}
