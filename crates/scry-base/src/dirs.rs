//! scry's per-user places, each named once: which variable overrides it,
//! which XDG base it sits under, and where it is by the OS's convention
//! ([`Os`]: below the home directory on Unix, below the known
//! folders `%APPDATA%` and `%LOCALAPPDATA%` on Windows, as ruff and uv put
//! theirs).
//!
//! | place | override | else | Unix default | Windows default |
//! | --- | --- | --- | --- | --- |
//! | user configuration file | `$SCRY_CONFIG` | `$XDG_CONFIG_HOME/scry/config.json` | `~/.config/scry/config.json` | `%APPDATA%\scry\config.json` |
//! | state directory | `$SCRY_STATE_DIR` | `$XDG_STATE_HOME/scry` | `~/.local/state/scry` | `%LOCALAPPDATA%\scry\state` |
//! | trust records | — | | `<state>/trust.json` | |
//! | edit journal | `$SCRY_JOURNAL_DIR` | | `<state>/journal` | |
//! | `diag --changes` baselines | — | | `<state>/changes` | |
//! | server logs | `$SCRY_LOG_DIR` | | `<state>/logs` | |
//! | MCP HTTP token (scry-mcp) | `--token-file` | | `<state>/mcp-http-token` | |
//! | daemon directory | `$SCRY_DAEMON_DIR` | `$XDG_RUNTIME_DIR/scry` | `<state>/daemon` | |
//! | caches (syntactic index) | `$SCRY_CACHE_DIR` | `$XDG_CACHE_HOME/scry` | `~/.cache/scry` | `%LOCALAPPDATA%\scry\cache` |
//!
//! The home directory ([`home`]: `~/` in configuration) is `$HOME`, and on
//! Windows, where there is usually none, `%USERPROFILE%`. A Windows known
//! folder whose variable is unset is taken below the home directory where
//! Windows puts it (`AppData\Roaming`, `AppData\Local`).
//!
//! Plus [`scratch`]: a per-process directory in the system's temp
//! directory for test and fuzz harnesses, swept when its process is gone.
//!
//! Invariants: an empty variable counts as unset; an XDG base is used only
//! when absolute (the XDG spec says to ignore a relative one) and wins over
//! the OS's convention on every OS; an override is taken as given. `None`
//! only when neither the variables nor a home directory say where. Nothing
//! here creates a directory. The convention is data ([`Os`],
//! [`crate::platform::OS`]) and every function has a `_with` form taking
//! the environment, so both conventions are tested on every platform.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::platform::Os;

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

/// One of the three bases the places sit under.
#[derive(Debug, Clone, Copy)]
struct Base {
    /// The XDG variable that wins when set and absolute (`<it>/scry`).
    xdg: &'static str,
    /// Unix: below the home directory, `scry` inside.
    unix_home: &'static [&'static str],
    /// Windows: the known folder's variable, where it is below the home
    /// directory when unset, and the place below `<folder>\scry`.
    windows: (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
    ),
}

const CONFIG: Base = Base {
    xdg: "XDG_CONFIG_HOME",
    unix_home: &[".config"],
    windows: ("APPDATA", &["AppData", "Roaming"], &[]),
};
const STATE: Base = Base {
    xdg: "XDG_STATE_HOME",
    unix_home: &[".local", "state"],
    windows: ("LOCALAPPDATA", &["AppData", "Local"], &["state"]),
};
const CACHE: Base = Base {
    xdg: "XDG_CACHE_HOME",
    unix_home: &[".cache"],
    windows: ("LOCALAPPDATA", &["AppData", "Local"], &["cache"]),
};

/// The home directory: `$HOME`, else (Windows) `%USERPROFILE%`.
pub fn home() -> Option<PathBuf> {
    home_with(&process_env)
}

pub fn home_with(env: EnvFn<'_>) -> Option<PathBuf> {
    home_in(env, crate::platform::OS)
}

fn home_in(env: EnvFn<'_>, os: Os) -> Option<PathBuf> {
    var(env, "HOME").or_else(|| match os {
        Os::Unix => None,
        Os::Windows => var(env, "USERPROFILE"),
    })
}

/// `path` with a leading `~/` (on Windows also `~\`) read as the home
/// directory ([`home`]); `None` when it has one and there is no home
/// directory. Any other path as it is.
pub fn expand_home(path: &str) -> Option<PathBuf> {
    expand_home_with(path, &process_env)
}

pub fn expand_home_with(path: &str, env: EnvFn<'_>) -> Option<PathBuf> {
    expand_home_in(path, env, crate::platform::OS)
}

fn expand_home_in(path: &str, env: EnvFn<'_>, os: Os) -> Option<PathBuf> {
    let rest = path.strip_prefix("~/").or_else(|| match os {
        Os::Unix => None,
        Os::Windows => path.strip_prefix("~\\"),
    });
    match rest {
        Some(rest) => home_in(env, os).map(|h| h.join(rest)),
        None => Some(PathBuf::from(path)),
    }
}

/// `<base>/scry` for `base` by the convention `os` (see the table above).
fn base_scry(env: EnvFn<'_>, base: Base, os: Os) -> Option<PathBuf> {
    if let Some(x) = var(env, base.xdg).filter(|x| x.is_absolute()) {
        return Some(x.join("scry"));
    }
    let below = |p: PathBuf, parts: &[&str]| parts.iter().fold(p, |p, c| p.join(c));
    match os {
        Os::Unix => home_in(env, os).map(|h| below(h, base.unix_home).join("scry")),
        Os::Windows => {
            let (folder, in_home, sub) = base.windows;
            var(env, folder)
                .or_else(|| home_in(env, os).map(|h| below(h, in_home)))
                .map(|f| below(f.join("scry"), sub))
        }
    }
}

/// The state directory (see the table above).
pub fn state() -> Option<PathBuf> {
    state_with(&process_env)
}

pub fn state_with(env: EnvFn<'_>) -> Option<PathBuf> {
    state_in(env, crate::platform::OS)
}

fn state_in(env: EnvFn<'_>, os: Os) -> Option<PathBuf> {
    var(env, STATE_DIR_ENV).or_else(|| base_scry(env, STATE, os))
}

/// `$override_var`, else `<state>/sub`.
fn in_state(env: EnvFn<'_>, os: Os, override_var: &str, sub: &str) -> Option<PathBuf> {
    var(env, override_var).or_else(|| state_in(env, os).map(|s| s.join(sub)))
}

/// The user configuration file and whether `$SCRY_CONFIG` named it.
pub fn user_config_with(env: EnvFn<'_>) -> Option<(PathBuf, bool)> {
    user_config_in(env, crate::platform::OS)
}

fn user_config_in(env: EnvFn<'_>, os: Os) -> Option<(PathBuf, bool)> {
    if let Some(p) = var(env, "SCRY_CONFIG") {
        return Some((p, true));
    }
    base_scry(env, CONFIG, os).map(|d| (d.join("config.json"), false))
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
    in_state(env, crate::platform::OS, "SCRY_JOURNAL_DIR", "journal")
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
    in_state(env, crate::platform::OS, "SCRY_LOG_DIR", "logs")
}

/// The daemon's directory (made private by the daemon: 0700 on Unix, below
/// the user's own profile on Windows; never a shared `/tmp` path).
pub fn daemon() -> Option<PathBuf> {
    daemon_with(&process_env)
}

pub fn daemon_with(env: EnvFn<'_>) -> Option<PathBuf> {
    daemon_in(env, crate::platform::OS)
}

fn daemon_in(env: EnvFn<'_>, os: Os) -> Option<PathBuf> {
    if let Some(d) = var(env, DAEMON_DIR_ENV) {
        return Some(d);
    }
    if let Some(x) = var(env, "XDG_RUNTIME_DIR").filter(|x| x.is_absolute()) {
        return Some(x.join("scry"));
    }
    state_in(env, os).map(|s| s.join("daemon"))
}

/// Where caches go (the syntactic index).
pub fn cache() -> Option<PathBuf> {
    cache_with(&process_env)
}

pub fn cache_with(env: EnvFn<'_>) -> Option<PathBuf> {
    cache_in(env, crate::platform::OS)
}

fn cache_in(env: EnvFn<'_>, os: Os) -> Option<PathBuf> {
    var(env, "SCRY_CACHE_DIR").or_else(|| base_scry(env, CACHE, os))
}

/// A scratch directory for this process, `<temp>/<prefix>-<pid>`, emptied;
/// the scratch directories of `prefix` whose process is gone are removed
/// first (a harness holding its fixture in a `static` never gets to remove
/// its own); a live process is told by [`crate::platform::process::running`].
pub fn scratch(prefix: &str) -> PathBuf {
    let tmp = std::env::temp_dir();
    let me = std::process::id();
    if let Ok(rd) = std::fs::read_dir(&tmp) {
        for e in rd.flatten() {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(prefix)?.strip_prefix('-'))
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if pid != me && !crate::platform::process::running(pid) {
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

    const U: Os = Os::Unix;
    const W: Os = Os::Windows;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + use<> {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    /// An absolute path on the OS the test runs on (`/x`, `C:\x`): what an
    /// override or an XDG base is checked for.
    fn a(name: &str) -> String {
        if cfg!(windows) {
            format!(r"C:\{name}")
        } else {
            format!("/{name}")
        }
    }

    /// `base` with `below` joined as this OS joins paths.
    fn p(base: &str, below: &[&str]) -> PathBuf {
        below.iter().fold(PathBuf::from(base), |p, c| p.join(c))
    }

    #[test]
    fn state_order() {
        let (s, x, h) = (a("s"), a("x"), a("h"));
        let e = env(&[("SCRY_STATE_DIR", &s), ("XDG_STATE_HOME", &x), ("HOME", &h)]);
        assert_eq!(state_in(&e, U), Some(p(&s, &[])));
        let e = env(&[("XDG_STATE_HOME", &x), ("HOME", &h)]);
        assert_eq!(state_in(&e, U), Some(p(&x, &["scry"])));
        // A relative XDG base is ignored, an empty override is unset.
        let e = env(&[
            ("SCRY_STATE_DIR", ""),
            ("XDG_STATE_HOME", "rel"),
            ("HOME", &h),
        ]);
        assert_eq!(state_in(&e, U), Some(p(&h, &[".local", "state", "scry"])));
        assert_eq!(state_in(&env(&[]), U), None);
    }

    #[test]
    fn places_below_the_state_directory_follow_it() {
        let (s, h, run) = (a("s"), a("h"), a("run"));
        let e = env(&[("SCRY_STATE_DIR", &s), ("HOME", &h)]);
        let journal = |e: EnvFn<'_>, os| in_state(e, os, "SCRY_JOURNAL_DIR", "journal");
        let logs = |e: EnvFn<'_>, os| in_state(e, os, "SCRY_LOG_DIR", "logs");
        assert_eq!(journal(&e, U), Some(p(&s, &["journal"])));
        assert_eq!(logs(&e, U), Some(p(&s, &["logs"])));
        assert_eq!(daemon_in(&e, U), Some(p(&s, &["daemon"])));
        let e = env(&[
            ("SCRY_STATE_DIR", &s),
            ("SCRY_JOURNAL_DIR", "/j"),
            ("SCRY_LOG_DIR", "/l"),
            ("SCRY_DAEMON_DIR", "/d"),
            ("XDG_RUNTIME_DIR", &run),
        ]);
        // Overrides are taken as given.
        assert_eq!(journal(&e, U).as_deref(), Some(Path::new("/j")));
        assert_eq!(logs(&e, W).as_deref(), Some(Path::new("/l")));
        assert_eq!(daemon_in(&e, U).as_deref(), Some(Path::new("/d")));
        let e = env(&[("XDG_RUNTIME_DIR", &run), ("HOME", &h)]);
        assert_eq!(daemon_in(&e, U), Some(p(&run, &["scry"])));
        let e = env(&[("XDG_RUNTIME_DIR", "run"), ("HOME", &h)]);
        assert_eq!(
            daemon_in(&e, U),
            Some(p(&h, &[".local", "state", "scry", "daemon"]))
        );
    }

    #[test]
    fn scratch_directories_of_gone_processes_are_swept() {
        let prefix = format!("scry-dirs-test-{}", std::process::id());
        // A pid that is not running: past any OS's limit.
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
        let (x, h, c) = (a("x"), a("h"), a("c"));
        let e = env(&[("SCRY_CONFIG", "c.json"), ("HOME", &h)]);
        assert_eq!(user_config_in(&e, U), Some((PathBuf::from("c.json"), true)));
        let e = env(&[("XDG_CONFIG_HOME", &x), ("HOME", &h)]);
        assert_eq!(
            user_config_in(&e, U),
            Some((p(&x, &["scry", "config.json"]), false))
        );
        let e = env(&[("HOME", &h)]);
        assert_eq!(
            user_config_in(&e, U),
            Some((p(&h, &[".config", "scry", "config.json"]), false))
        );
        assert_eq!(cache_in(&e, U), Some(p(&h, &[".cache", "scry"])));
        let e = env(&[("XDG_CACHE_HOME", &c), ("SCRY_CACHE_DIR", "")]);
        assert_eq!(cache_in(&e, U), Some(p(&c, &["scry"])));
    }

    #[test]
    fn on_windows_the_places_are_below_appdata_and_localappdata() {
        let roaming = r"C:\Users\u\AppData\Roaming";
        let local = r"C:\Users\u\AppData\Local";
        let e = env(&[
            ("APPDATA", roaming),
            ("LOCALAPPDATA", local),
            ("USERPROFILE", r"C:\Users\u"),
        ]);
        assert_eq!(
            user_config_in(&e, W),
            Some((p(roaming, &["scry", "config.json"]), false))
        );
        assert_eq!(state_in(&e, W), Some(p(local, &["scry", "state"])));
        assert_eq!(cache_in(&e, W), Some(p(local, &["scry", "cache"])));
        assert_eq!(
            daemon_in(&e, W),
            Some(p(local, &["scry", "state", "daemon"]))
        );
        assert_eq!(
            in_state(&e, W, "SCRY_JOURNAL_DIR", "journal"),
            Some(p(local, &["scry", "state", "journal"]))
        );
        assert_eq!(home_in(&e, W), Some(PathBuf::from(r"C:\Users\u")));
        // The Unix convention has no home without HOME, nothing below it.
        assert_eq!(home_in(&e, U), None);
        assert_eq!(state_in(&e, U), None);
    }

    #[test]
    fn on_windows_overrides_and_xdg_still_win_and_the_profile_stands_in() {
        let (x, y, run) = (a("x"), a("y"), a("run"));
        let e = env(&[
            ("SCRY_STATE_DIR", "/s"),
            ("SCRY_CONFIG", "c.json"),
            ("SCRY_CACHE_DIR", "/c"),
            ("LOCALAPPDATA", r"C:\L"),
            ("APPDATA", r"C:\R"),
        ]);
        assert_eq!(state_in(&e, W), Some(PathBuf::from("/s")));
        assert_eq!(user_config_in(&e, W), Some((PathBuf::from("c.json"), true)));
        assert_eq!(cache_in(&e, W), Some(PathBuf::from("/c")));
        // An absolute XDG base wins over the known folders.
        let e = env(&[
            ("XDG_STATE_HOME", &x),
            ("XDG_CONFIG_HOME", &y),
            ("XDG_RUNTIME_DIR", &run),
            ("LOCALAPPDATA", r"C:\L"),
            ("APPDATA", r"C:\R"),
        ]);
        assert_eq!(state_in(&e, W), Some(p(&x, &["scry"])));
        assert_eq!(
            user_config_in(&e, W),
            Some((p(&y, &["scry", "config.json"]), false))
        );
        assert_eq!(cache_in(&e, W), Some(p(r"C:\L", &["scry", "cache"])));
        assert_eq!(daemon_in(&e, W), Some(p(&run, &["scry"])));
        // No known folder set: where Windows puts it in the profile.
        let e = env(&[("USERPROFILE", r"C:\Users\u"), ("LOCALAPPDATA", "")]);
        assert_eq!(
            state_in(&e, W),
            Some(p(r"C:\Users\u", &["AppData", "Local", "scry", "state"]))
        );
        assert_eq!(
            user_config_in(&e, W),
            Some((
                p(
                    r"C:\Users\u",
                    &["AppData", "Roaming", "scry", "config.json"]
                ),
                false
            ))
        );
        // HOME, when set, is the home on Windows too.
        let e = env(&[("USERPROFILE", r"C:\Users\u"), ("HOME", "/h")]);
        assert_eq!(home_in(&e, W), Some(PathBuf::from("/h")));
        assert_eq!(state_in(&env(&[]), W), None);
    }

    #[test]
    fn a_leading_tilde_is_the_home_directory() {
        let e = env(&[("HOME", "/h"), ("USERPROFILE", r"C:\Users\u")]);
        assert_eq!(expand_home_in("~/bin/x", &e, U), Some(p("/h", &["bin/x"])));
        assert_eq!(expand_home_in("a/~/b", &e, U), Some(PathBuf::from("a/~/b")));
        // `~\` only where `\` separates.
        assert_eq!(expand_home_in(r"~\x", &e, U), Some(PathBuf::from(r"~\x")));
        let e = env(&[("USERPROFILE", r"C:\Users\u")]);
        assert_eq!(
            expand_home_in(r"~\bin\x.exe", &e, W),
            Some(p(r"C:\Users\u", &[r"bin\x.exe"]))
        );
        assert_eq!(expand_home_in("~/x", &e, U), None);
        assert_eq!(expand_home_in("/abs", &e, U), Some(PathBuf::from("/abs")));
    }
}
