//! Resident memory of a process tree, read from `/proc` (Linux).
//!
//! A language server is often several processes: tsserver runs under
//! typescript-language-server, rust-analyzer starts its proc-macro server
//! and cargo. scry-lsp starts each server as the leader of its own process
//! group, so a server's tree is every process that descends from its pid
//! (by parent pid) or sits in its process group (descendants whose parent
//! exited are re-parented away but keep the group). Its memory is the sum
//! of their `VmRSS`.
//!
//! Invariants: one snapshot ([`ProcTable::read`]) reads every
//! `/proc/PID/stat` once, and serves any number of trees; processes that
//! vanish while it is read are skipped, never an error; where `/proc` is
//! absent (not Linux) the snapshot is `None` and callers treat memory as
//! unknown — nothing is ever decided on a guess. The parsers are pure
//! functions (unit-tested on text).

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

/// `VmRSS` of one process in KiB, `None` when it is gone or unreadable.
pub fn rss_kib(pid: u32) -> Option<u64> {
    parse_vm_rss(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
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
    /// A snapshot of `/proc`; `None` where there is no `/proc` (not Linux).
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
    /// `VmRSS` read now; `None` when `root` itself is not running.
    pub fn tree_memory(&self, root: u32) -> Option<TreeMemory> {
        let root_rss = rss_kib(root)?;
        let mut m = TreeMemory {
            rss_kib: root_rss,
            processes: 1,
        };
        for pid in tree_pids(root, &self.entries) {
            if pid == root {
                continue;
            }
            if let Some(k) = rss_kib(pid) {
                m.rss_kib += k;
                m.processes += 1;
            }
        }
        Some(m)
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
}
