//! scry's per-user places, each named once: which variable overrides it,
//! which XDG base it sits under, and its fallback below `$HOME`.
//!
//! | place | override | else |
//! | --- | --- | --- |
//! | user configuration file | `$SCRY_CONFIG` | `$XDG_CONFIG_HOME/scry/config.json`, `~/.config/scry/config.json` |
//! | state directory | `$SCRY_STATE_DIR` | `$XDG_STATE_HOME/scry`, `~/.local/state/scry` |
//! | trust records | — | `<state>/trust.json` |
//! | edit journal | `$SCRY_JOURNAL_DIR` | `<state>/journal` |
//! | `diag --changes` baselines | — | `<state>/changes` |
//! | server logs | `$SCRY_LOG_DIR` | `<state>/logs` |
//! | MCP HTTP token (scry-mcp) | `--token-file` | `<state>/mcp-http-token` |
//! | daemon directory | `$SCRY_DAEMON_DIR` | `$XDG_RUNTIME_DIR/scry`, `<state>/daemon` |
//! | caches (syntactic index) | `$SCRY_CACHE_DIR` | `$XDG_CACHE_HOME/scry`, `~/.cache/scry` |
//!
//! Plus [`scratch`]: a per-process directory in the system's temp
//! directory for test and fuzz harnesses, swept when its process is gone.
//!
//! Invariants: an empty variable counts as unset; an XDG base is used only
//! when absolute (the XDG spec says to ignore a relative one); an override
//! is taken as given. `None` only when neither the variables nor `$HOME`
//! say where. Nothing here creates a directory.

use std::ffi::OsString;
use std::path::PathBuf;

/// Overrides the state directory.
pub const STATE_DIR_ENV: &str = "SCRY_STATE_DIR";
/// Overrides the daemon directory.
pub const DAEMON_DIR_ENV: &str = "SCRY_DAEMON_DIR";

/// How a place reads the environment (tests pass their own).
pub type EnvFn<'a> = &'a dyn Fn(&str) -> Option<OsString>;

/// Where the places read a variable when no [`EnvFn`] is passed: the
/// process's environment, unless a layer above installed its own reader
/// ([`set_var_source`]: scry-workspace's per-call environment, so that a
/// daemon answering a client finds that client's places).
static VAR_SOURCE: std::sync::OnceLock<fn(&str) -> Option<OsString>> = std::sync::OnceLock::new();

/// Install the reader of variables (once; later calls are ignored). It
/// must fall back to the process's environment outside its own scope.
pub fn set_var_source(f: fn(&str) -> Option<OsString>) {
    let _ = VAR_SOURCE.set(f);
}

/// Variable `k` as the current call sees it (see [`set_var_source`]): for
/// what reads the environment below the layer that scopes it (the edit
/// leaf's crash test hook).
pub fn var_os(k: &str) -> Option<OsString> {
    process_env(k)
}

/// The environment as the current call sees it (see [`set_var_source`]).
fn process_env(k: &str) -> Option<OsString> {
    match VAR_SOURCE.get() {
        Some(f) => f(k),
        None => std::env::var_os(k),
    }
}

/// `k`'s value as a path, when set and not empty.
fn var(env: EnvFn<'_>, k: &str) -> Option<PathBuf> {
    env(k).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// `$<xdg>/scry` when `xdg` is set and absolute, else `~/<home_base>/scry`.
fn xdg_scry(env: EnvFn<'_>, xdg: &str, home_base: &str) -> Option<PathBuf> {
    if let Some(x) = var(env, xdg).filter(|x| x.is_absolute()) {
        return Some(x.join("scry"));
    }
    var(env, "HOME").map(|h| h.join(home_base).join("scry"))
}

/// The state directory: `$SCRY_STATE_DIR`, else `$XDG_STATE_HOME/scry`,
/// else `~/.local/state/scry`.
pub fn state() -> Option<PathBuf> {
    state_with(&process_env)
}

pub fn state_with(env: EnvFn<'_>) -> Option<PathBuf> {
    var(env, STATE_DIR_ENV).or_else(|| xdg_scry(env, "XDG_STATE_HOME", ".local/state"))
}

/// `$override_var`, else `<state>/sub`.
fn in_state(env: EnvFn<'_>, override_var: &str, sub: &str) -> Option<PathBuf> {
    var(env, override_var).or_else(|| state_with(env).map(|s| s.join(sub)))
}

/// The user configuration file and whether `$SCRY_CONFIG` named it.
pub fn user_config_with(env: EnvFn<'_>) -> Option<(PathBuf, bool)> {
    if let Some(p) = var(env, "SCRY_CONFIG") {
        return Some((p, true));
    }
    xdg_scry(env, "XDG_CONFIG_HOME", ".config").map(|d| (d.join("config.json"), false))
}

/// The user configuration file (see the table above).
pub fn user_config() -> Option<PathBuf> {
    user_config_with(&process_env).map(|(p, _)| p)
}

/// Where `scry trust` records live.
pub fn trust_store() -> Option<PathBuf> {
    trust_store_with(&process_env)
}

pub fn trust_store_with(env: EnvFn<'_>) -> Option<PathBuf> {
    state_with(env).map(|s| s.join("trust.json"))
}

/// The base of the edit journal (one directory per workspace below it).
pub fn journal() -> Option<PathBuf> {
    journal_with(&process_env)
}

pub fn journal_with(env: EnvFn<'_>) -> Option<PathBuf> {
    in_state(env, "SCRY_JOURNAL_DIR", "journal")
}

/// The base of the CLI's `diag --changes` baselines.
pub fn changes() -> Option<PathBuf> {
    state().map(|s| s.join("changes"))
}

/// Where server logs go.
pub fn logs() -> Option<PathBuf> {
    logs_with(&process_env)
}

pub fn logs_with(env: EnvFn<'_>) -> Option<PathBuf> {
    in_state(env, "SCRY_LOG_DIR", "logs")
}

/// The daemon's directory (created 0700 by the daemon, never a shared
/// `/tmp` path).
pub fn daemon() -> Option<PathBuf> {
    daemon_with(&process_env)
}

pub fn daemon_with(env: EnvFn<'_>) -> Option<PathBuf> {
    if let Some(d) = var(env, DAEMON_DIR_ENV) {
        return Some(d);
    }
    if let Some(x) = var(env, "XDG_RUNTIME_DIR").filter(|x| x.is_absolute()) {
        return Some(x.join("scry"));
    }
    state_with(env).map(|s| s.join("daemon"))
}

/// Where caches go (the syntactic index).
pub fn cache() -> Option<PathBuf> {
    cache_with(&process_env)
}

pub fn cache_with(env: EnvFn<'_>) -> Option<PathBuf> {
    var(env, "SCRY_CACHE_DIR").or_else(|| xdg_scry(env, "XDG_CACHE_HOME", ".cache"))
}

/// A scratch directory for this process, `<temp>/<prefix>-<pid>`, emptied;
/// the scratch directories of `prefix` whose process is gone are removed
/// first (a harness holding its fixture in a `static` never gets to remove
/// its own). Linux tells a live process by `/proc/<pid>`; elsewhere
/// nothing is swept.
pub fn scratch(prefix: &str) -> PathBuf {
    let tmp = std::env::temp_dir();
    let me = std::process::id();
    if std::path::Path::new("/proc/self").exists()
        && let Ok(rd) = std::fs::read_dir(&tmp)
    {
        for e in rd.flatten() {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(prefix)?.strip_prefix('-'))
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if pid != me && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let dir = tmp.join(format!("{prefix}-{me}"));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn state_order() {
        let e = env(&[
            ("SCRY_STATE_DIR", "/s"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ]);
        assert_eq!(state_with(&e), Some(PathBuf::from("/s")));
        let e = env(&[("XDG_STATE_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(state_with(&e), Some(PathBuf::from("/x/scry")));
        // A relative XDG base is ignored, an empty override is unset.
        let e = env(&[
            ("SCRY_STATE_DIR", ""),
            ("XDG_STATE_HOME", "rel"),
            ("HOME", "/h"),
        ]);
        assert_eq!(state_with(&e), Some(PathBuf::from("/h/.local/state/scry")));
        assert_eq!(state_with(&env(&[])), None);
    }

    #[test]
    fn places_below_the_state_directory_follow_it() {
        let e = env(&[("SCRY_STATE_DIR", "/s"), ("HOME", "/h")]);
        assert_eq!(journal_with(&e).as_deref(), Some(Path::new("/s/journal")));
        assert_eq!(logs_with(&e).as_deref(), Some(Path::new("/s/logs")));
        assert_eq!(daemon_with(&e).as_deref(), Some(Path::new("/s/daemon")));
        let e = env(&[
            ("SCRY_STATE_DIR", "/s"),
            ("SCRY_JOURNAL_DIR", "/j"),
            ("SCRY_LOG_DIR", "/l"),
            ("SCRY_DAEMON_DIR", "/d"),
            ("XDG_RUNTIME_DIR", "/run/u"),
        ]);
        assert_eq!(journal_with(&e).as_deref(), Some(Path::new("/j")));
        assert_eq!(logs_with(&e).as_deref(), Some(Path::new("/l")));
        assert_eq!(daemon_with(&e).as_deref(), Some(Path::new("/d")));
        let e = env(&[("XDG_RUNTIME_DIR", "/run/u"), ("HOME", "/h")]);
        assert_eq!(daemon_with(&e).as_deref(), Some(Path::new("/run/u/scry")));
        let e = env(&[("XDG_RUNTIME_DIR", "run"), ("HOME", "/h")]);
        assert_eq!(
            daemon_with(&e).as_deref(),
            Some(Path::new("/h/.local/state/scry/daemon"))
        );
    }

    #[test]
    fn scratch_directories_of_gone_processes_are_swept() {
        if !Path::new("/proc/self").exists() {
            return;
        }
        let prefix = format!("scry-dirs-test-{}", std::process::id());
        // A pid that is not running: past the kernel's limit.
        let stale = std::env::temp_dir().join(format!("{prefix}-4294967294"));
        std::fs::create_dir_all(stale.join("x")).unwrap();
        let mine = scratch(&prefix);
        assert!(!stale.exists(), "the dead process's scratch is gone");
        assert!(!mine.exists(), "this process's is handed out empty");
        std::fs::create_dir_all(&mine).unwrap();
        assert_eq!(scratch(&prefix), mine, "one per process");
        assert!(!mine.exists());
    }

    #[test]
    fn config_and_cache() {
        let e = env(&[("SCRY_CONFIG", "c.json"), ("HOME", "/h")]);
        assert_eq!(user_config_with(&e), Some((PathBuf::from("c.json"), true)));
        let e = env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(
            user_config_with(&e),
            Some((PathBuf::from("/x/scry/config.json"), false))
        );
        let e = env(&[("HOME", "/h")]);
        assert_eq!(
            user_config_with(&e),
            Some((PathBuf::from("/h/.config/scry/config.json"), false))
        );
        assert_eq!(cache_with(&e).as_deref(), Some(Path::new("/h/.cache/scry")));
        let e = env(&[("XDG_CACHE_HOME", "/c"), ("SCRY_CACHE_DIR", "")]);
        assert_eq!(cache_with(&e).as_deref(), Some(Path::new("/c/scry")));
    }
}
