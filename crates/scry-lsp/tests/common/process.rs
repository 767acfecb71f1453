//! Processes in the daemon and MCP tests: the `scry` binary run with
//! every per-user place inside a test's directory, signalling, liveness
//! and parentage read from `/proc`, waiting with a bound, and the fake
//! server built beside the `scry` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The built `scry` with `args`, run in `ws` with its daemon directory,
/// state, logs, cache and user config under `base` (`base/d`, `base/state`,
/// …, `base/config.json`), the daemon allowed (20 s to start) and no
/// inherited logging or trust; stdin closed.
pub fn scry_in(base: &Path, ws: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scry"));
    c.args(args)
        .current_dir(ws)
        .env("SCRY_DAEMON_DIR", base.join("d"))
        .env("SCRY_STATE_DIR", base.join("state"))
        .env("SCRY_LOG_DIR", base.join("logs"))
        .env("SCRY_CACHE_DIR", base.join("cache"))
        .env("SCRY_CONFIG", base.join("config.json"))
        .env("SCRY_DAEMON_START_MS", "20000")
        .env_remove("SCRY_NO_DAEMON")
        .env_remove("SCRY_LOG")
        .env_remove("SCRY_TRUST")
        .stdin(Stdio::null());
    c
}

/// The logs of the daemons started by [`scry_in`] with `base` (what a
/// failing assertion shows to name what the daemon did).
pub fn daemon_log(base: &Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(base.join("d"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if e.path().extension().is_some_and(|x| x == "log") {
            out.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    out
}

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

/// Make the script at `path` executable (mode 0755 on Unix; on Windows
/// being executable is a matter of the name, so nothing to do).
pub fn make_executable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    #[cfg(not(unix))]
    let _ = path;
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
    let p = Path::new(env!("CARGO_BIN_EXE_scry"))
        .with_file_name(format!("scry-fake-lsp{}", std::env::consts::EXE_SUFFIX));
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
