//! What a process's measurements say in tests and benchmarks: a figure of
//! `/proc/<pid>/status` (Linux: `VmHWM`, the peak resident memory;
//! `VmRSS`), whether a writer that scry should stop reading has
//! stalled, and a command run with its input fed as a hook's is.
//!
//! Invariant: reading only; `None` where the figure cannot be read (no
//! `/proc`, the process gone).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The figure `key` (`"VmHWM"`, `"VmRSS"`) of process `pid` (`"self"` for
/// this one) in KiB.
pub fn status_kib(pid: &str, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Whether `written` (bytes a writer thread has written so far) stops
/// growing for `quiet` before `within` has passed and before `finished`
/// (the writer wrote everything: it was never stopped).
pub fn stalls(
    written: &AtomicU64,
    quiet: Duration,
    within: Duration,
    finished: impl Fn() -> bool,
) -> bool {
    let t = Instant::now();
    let (mut last, mut since) = (0, Instant::now());
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = written.load(Ordering::SeqCst);
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() > quiet {
            return true;
        }
        if t.elapsed() > within || finished() {
            return false;
        }
    }
}

/// Run `c` (its stdout and stderr piped) with `input` on its stdin, as an
/// agent runs a hook command: its output once it exits.
pub fn run_fed(c: &mut std::process::Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}
