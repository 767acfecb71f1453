//! Processes in the daemon and MCP tests: signalling, liveness and
//! parentage read from `/proc`, waiting with a bound, and the fake server
//! built beside the `scry` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Send `sig` (`TERM`, `KILL`, …) to `pid`; a gone process is no error.
pub fn kill(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// Whether `pid` runs (a zombie does not).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| !s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
}

/// The parent of process `pid`.
pub fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.split(' ').nth(1)?.parse().ok()
}

/// Poll `f` every 50 ms until it holds; panics naming `what` after `within`.
pub fn wait_until(what: &str, within: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < within, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The fake server next to the scry binary (built with the workspace);
/// `None` (the test skips) when it is not built and servers are not
/// required.
pub fn fake_server() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_BIN_EXE_scry")).with_file_name("scry-fake-lsp");
    if p.exists() {
        return Some(p);
    }
    assert!(
        !super::servers_required(),
        "{} is missing: build it (cargo build -p scry-testkit --bin scry-fake-lsp)",
        p.display()
    );
    eprintln!("skipping: {} is not built", p.display());
    None
}
