//! The environment that shapes a call: which variables, as data
//! (`env.json`: what config discovery and scry's places read, where
//! commands are searched, what language servers read), captured by a
//! client ([`CallEnv::capture`]) and sent with each call to the shared
//! daemon, and the one way this crate reads a variable ([`var_os`]).
//!
//! Invariants:
//! - Inside [`scope`] (the daemon answering one call), a captured variable
//!   is read from the call's environment only — one the client did not
//!   have is unset, whatever the daemon's own environment says; outside
//!   (in-process use) the process's environment is read. Variables that
//!   are not captured always come from the process.
//! - The scope is a task-local: work a call spawns onto another task must
//!   be wrapped in [`carry`] (else it reads the process's environment and,
//!   in the daemon, would start servers keyed apart from the call's).
//! - Values that are not UTF-8 are not captured (they are never sent
//!   altered).
//! - Names compare as the OS compares them ([`crate::platform::env`]):
//!   on Windows every name is kept, compared and passed on in upper case,
//!   so the system's `Path` is the `PATH` that is captured and cleaned.
//! - [`CallEnv::config_hash`] covers what configuration discovery reads;
//!   [`CallEnv::server_hash`] what a server is started with, except the
//!   search path (its effect is the resolved binary, keyed separately);
//!   [`CallEnv::reads_hash`] only the variables one server reads (its
//!   catalogue entry's `readsEnv`), so clients that differ elsewhere share it.
//! - Every child process scry starts (servers, linters, indexers, `doctor`'s
//!   version probes) gets its whole environment from [`for_child`], the one
//!   rule: the process's variables, the call's captured ones in place of
//!   the captured names (one the client lacks is unset), the configured
//!   `env` on top, and a `PATH` with no relative entry (they would resolve
//!   against the child's directory, the workspace) and, for an untrusted
//!   workspace, no entry inside it (symlinks resolved): what a cloned
//!   repository puts there (`node_modules/.bin/node`, `tools/cargo`) never
//!   runs through a server's own lookups. What was left out is said
//!   ([`ChildEnv::left_out`]).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Arc, OnceLock};

use scry_model::{LeftOutWhy, PathLeftOut};
use serde::{Deserialize, Serialize};

/// The variable lists of `env.json`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Lists {
    config: Vec<String>,
    config_prefixes: Vec<String>,
    not_captured: Vec<String>,
    search: Vec<String>,
    servers: Vec<String>,
}

/// The lists as a table: each listed name's group (`None`: listed as not
/// captured), and the prefixes of the config group. Looked up for every
/// variable of every call (capture, hashes), so one hash lookup each.
struct Groups {
    named: std::collections::HashMap<String, Option<Group>>,
    config_prefixes: Vec<String>,
}

fn groups() -> &'static Groups {
    static GROUPS: OnceLock<Groups> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let l: Lists = serde_json::from_str(include_str!("env.json"))
            .expect("env.json is valid (checked by a unit test)");
        let mut named = std::collections::HashMap::new();
        // Lowest precedence first: a name in two lists keeps the group
        // `group_of` gave it when it read the lists in order.
        for (names, g) in [
            (&l.servers, Some(Group::Server)),
            (&l.search, Some(Group::Search)),
            (&l.config, Some(Group::Config)),
            (&l.not_captured, None),
        ] {
            for n in names {
                named.insert(crate::platform::env::name(n).into_owned(), g);
            }
        }
        Groups {
            named,
            config_prefixes: l
                .config_prefixes
                .iter()
                .map(|p| crate::platform::env::name(p).into_owned())
                .collect(),
        }
    })
}

/// What a captured variable shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Configuration discovery, trust, scry's per-user places.
    Config,
    /// Where commands are looked up (`PATH`).
    Search,
    /// What language servers and their tools read.
    Server,
}

/// The group of `name`, or `None` when it is not captured (names compare
/// as the OS compares them: [`crate::platform::env`]).
pub fn group_of(name: &str) -> Option<Group> {
    let name = crate::platform::env::name(name);
    let name = name.as_ref();
    let g = groups();
    match g.named.get(name) {
        // Not captured wins; then config (a listed name or a prefix),
        // search, servers.
        Some(None) => None,
        Some(Some(Group::Config)) => Some(Group::Config),
        _ if g
            .config_prefixes
            .iter()
            .any(|p| name.starts_with(p.as_str())) =>
        {
            Some(Group::Config)
        }
        Some(group) => *group,
        None => None,
    }
}

/// The captured variables of one client, sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallEnv {
    vars: BTreeMap<String, String>,
}

impl CallEnv {
    /// This process's environment, captured (see the module header).
    pub fn capture() -> CallEnv {
        CallEnv::from_vars(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// The captured subset of `vars`.
    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> CallEnv {
        CallEnv {
            vars: vars
                .into_iter()
                .map(|(k, v)| (crate::platform::env::name(&k).into_owned(), v))
                .filter(|(k, _)| group_of(k).is_some())
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(crate::platform::env::name(name).as_ref())
            .map(String::as_str)
    }

    /// Every captured variable.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    fn hash_of(&self, keep: impl Fn(Group) -> bool) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (k, v) in &self.vars {
            if group_of(k).is_some_and(&keep) {
                (k, v).hash(&mut h);
            }
        }
        h.finish()
    }

    /// A hash of what configuration discovery reads (the daemon opens one
    /// workspace per root and value of this).
    pub fn config_hash(&self) -> u64 {
        self.hash_of(|g| g == Group::Config)
    }

    /// A hash of the environment a server is started with, less the
    /// search path (two clients whose `PATH`s differ but resolve the same
    /// binary share the server).
    pub fn server_hash(&self) -> u64 {
        self.hash_of(|g| g != Group::Search)
    }

    /// A hash of the variables in `names` only (what one server reads:
    /// its catalogue entry's `readsEnv`), each with its value or its
    /// absence.
    pub fn reads_hash(&self, names: &[String]) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let mut names: Vec<&String> = names.iter().collect();
        names.sort();
        names.dedup();
        for n in names {
            (n, self.vars.get(n.as_str())).hash(&mut h);
        }
        h.finish()
    }

    /// The search path's hash as 8 hex digits (how `daemon status` tells
    /// clients apart without printing their `PATH`).
    pub fn path_tag(&self) -> String {
        format!("{:08x}", self.hash_of(|g| g == Group::Search) as u32)
    }
}

/// The call a task is answering: its client's environment and who the
/// client is (a session id, for `daemon status`).
#[derive(Debug, Clone)]
pub struct CallContext {
    pub env: Arc<CallEnv>,
    pub client: String,
}

impl CallContext {
    /// How `daemon status` names this call's client: its session and the
    /// hash of its `PATH`.
    pub fn label(&self) -> String {
        format!("{} (PATH {})", self.client, self.env.path_tag())
    }
}

tokio::task_local! {
    static CALL: CallContext;
}

/// Run `f` as the answer to the call `ctx` (see the module header).
pub async fn scope<F: std::future::Future>(ctx: CallContext, f: F) -> F::Output {
    install();
    CALL.scope(ctx, f).await
}

/// [`scope`] for synchronous work.
pub fn sync_scope<R>(ctx: CallContext, f: impl FnOnce() -> R) -> R {
    install();
    CALL.sync_scope(ctx, f)
}

/// `f` in the scope of the call in scope now, if any: wrap what a call
/// spawns onto another task (`tokio::spawn`, a `JoinSet`) in it.
pub fn carry<F: std::future::Future>(f: F) -> impl std::future::Future<Output = F::Output> {
    let ctx = current();
    async move {
        match ctx {
            Some(c) => CALL.scope(c, f).await,
            None => f.await,
        }
    }
}

/// The call in scope, if any.
pub fn current() -> Option<CallContext> {
    CALL.try_with(|c| c.clone()).ok()
}

/// The whole environment of a child process ([`for_child`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildEnv {
    vars: Vec<(OsString, OsString)>,
    left_out: Vec<PathLeftOut>,
}

impl ChildEnv {
    /// Every variable the child gets (nothing else is inherited).
    pub fn vars(&self) -> &[(OsString, OsString)] {
        &self.vars
    }

    /// The value of `name` the child gets.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .iter()
            .find(|(k, _)| crate::platform::env::same(k, OsStr::new(name)))
            .map(|(_, v)| v.as_os_str())
    }

    /// The `PATH` entries left out, in order.
    pub fn left_out(&self) -> &[PathLeftOut] {
        &self.left_out
    }

    /// Give `cmd` exactly this environment.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        cmd.env_clear().envs(self.vars.iter().map(|(k, v)| (k, v)));
    }

    /// [`ChildEnv::apply`] for a tokio command.
    pub fn apply_async(&self, cmd: &mut tokio::process::Command) {
        cmd.env_clear().envs(self.vars.iter().map(|(k, v)| (k, v)));
    }
}

/// The environment a child started for the workspace at `root` gets (see
/// the module header): `trusted` is the workspace's trust, `configured` the
/// server's or tool's own `env` (from the catalogue or a trusted layer).
pub fn for_child(root: &Path, trusted: bool, configured: &BTreeMap<String, String>) -> ChildEnv {
    for_child_with_path(root, trusted, configured, None)
}

/// [`for_child`] with the search path `path_var` in place of the call's
/// (`Some(None)`: none), for a caller that was given one (`doctor`).
pub fn for_child_with_path(
    root: &Path,
    trusted: bool,
    configured: &BTreeMap<String, String>,
    path_var: Option<Option<&OsStr>>,
) -> ChildEnv {
    let call = current();
    // Each name in the one spelling (Windows' `Path` is `PATH`).
    let fold = crate::platform::env::name_os;
    let mut vars: BTreeMap<OsString, OsString> = std::env::vars_os()
        .map(|(k, v)| (fold(k), v))
        .filter(|(k, _)| {
            // Inside a call, a captured variable is the call's or unset.
            call.is_none() || k.to_str().is_none_or(|k| group_of(k).is_none())
        })
        .collect();
    if let Some(c) = &call {
        vars.extend(c.env.vars().map(|(k, v)| (k.into(), v.into())));
    }
    if let Some(p) = path_var {
        match p {
            Some(p) => vars.insert("PATH".into(), p.to_os_string()),
            None => vars.remove(OsStr::new("PATH")),
        };
    }
    vars.extend(configured.iter().map(|(k, v)| (fold(k.into()), v.into())));
    let mut left_out = Vec::new();
    if let Some(path) = vars.get_mut(OsStr::new("PATH")) {
        let (kept, out) = search_path_for_child(path, root, trusted);
        *path = kept;
        left_out = out;
    }
    ChildEnv {
        vars: vars.into_iter().collect(),
        left_out,
    }
}

/// `path` (a `PATH` value) without its relative entries and, when the
/// workspace at `root` is not `trusted`, without those inside it; and what
/// was left out.
pub fn search_path_for_child(
    path: &OsStr,
    root: &Path,
    trusted: bool,
) -> (OsString, Vec<PathLeftOut>) {
    let mut kept = Vec::new();
    let mut out = Vec::new();
    for entry in std::env::split_paths(path) {
        let why = if entry.as_os_str().is_empty() || !entry.is_absolute() {
            Some(LeftOutWhy::Relative)
        } else if !trusted && scry_base::paths::project_local(&entry, root) {
            Some(LeftOutWhy::InUntrustedWorkspace)
        } else {
            None
        };
        match why {
            Some(why) => out.push(PathLeftOut { entry, why }),
            None => kept.push(entry),
        }
    }
    // Entries came from a PATH, so they join again (no separator inside).
    let kept = std::env::join_paths(kept).unwrap_or_default();
    (kept, out)
}

/// Make scry-base's per-user places ([`scry_base::dirs`]) read variables
/// through [`var_os`]; done on entering any scope, so a call's
/// environment is never in force without it.
fn install() {
    scry_base::dirs::set_var_source(var_os);
}

/// `name` as the current call sees it (see the module header).
pub fn var_os(name: &str) -> Option<OsString> {
    if group_of(name).is_some()
        && let Ok(v) = CALL.try_with(|c| c.env.get(name).map(OsString::from))
    {
        return v;
    }
    std::env::var_os(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> CallEnv {
        CallEnv::from_vars(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn a_windows_path_is_the_captured_path() {
        // Windows' own spelling of its search path, `Path`, is `PATH` there;
        // on Unix it is another variable, not captured.
        let e = env(&[("Path", "/x")]);
        assert_eq!(e.get("PATH"), cfg!(windows).then_some("/x"));
        assert_eq!(group_of("Path"), cfg!(windows).then_some(Group::Search));
    }

    #[test]
    fn the_lists_parse_and_group_variables() {
        assert_eq!(group_of("PATH"), Some(Group::Search));
        assert_eq!(group_of("HOME"), Some(Group::Config));
        assert_eq!(group_of("SCRY_TRUST"), Some(Group::Config));
        assert_eq!(group_of("VIRTUAL_ENV"), Some(Group::Server));
        assert_eq!(group_of("SCRY_NO_DAEMON"), None, "a daemon switch");
        assert_eq!(group_of("TERM"), None);
    }

    #[test]
    fn only_captured_variables_are_kept() {
        let e = env(&[("PATH", "/bin"), ("TERM", "xterm"), ("SCRY_LOG", "debug")]);
        assert_eq!(e.vars().collect::<Vec<_>>(), vec![("PATH", "/bin")]);
    }

    #[test]
    fn hashes_separate_what_they_cover() {
        let a = env(&[("PATH", "/a"), ("HOME", "/h")]);
        let b = env(&[("PATH", "/b"), ("HOME", "/h")]);
        let c = env(&[("PATH", "/a"), ("HOME", "/h"), ("VIRTUAL_ENV", "/v")]);
        let d = env(&[("PATH", "/a"), ("HOME", "/other")]);
        assert_eq!(
            a.server_hash(),
            b.server_hash(),
            "PATH is keyed by its binary"
        );
        assert_ne!(a.path_tag(), b.path_tag());
        assert_ne!(a.server_hash(), c.server_hash(), "a virtualenv is not");
        assert_eq!(a.config_hash(), c.config_hash());
        assert_ne!(a.config_hash(), d.config_hash(), "HOME shapes the config");
    }

    #[test]
    fn in_scope_the_call_environment_is_read_and_a_missing_variable_is_unset() {
        let ctx = CallContext {
            env: Arc::new(env(&[("VIRTUAL_ENV", "/call/venv")])),
            client: "t".into(),
        };
        let (venv, path) = sync_scope(ctx.clone(), || (var_os("VIRTUAL_ENV"), var_os("PATH")));
        assert_eq!(venv, Some(OsString::from("/call/venv")));
        assert_eq!(path, None, "the client had no PATH");
        // Not captured: the process's.
        let lang = sync_scope(ctx, || var_os("CARGO_PKG_NAME"));
        assert_eq!(lang, std::env::var_os("CARGO_PKG_NAME"));
        assert_eq!(var_os("PATH"), std::env::var_os("PATH"), "out of scope");
    }

    #[tokio::test]
    async fn the_scope_holds_across_awaits() {
        let ctx = CallContext {
            env: Arc::new(env(&[("HOME", "/call/home")])),
            client: "s1".into(),
        };
        let got = scope(ctx, async {
            tokio::task::yield_now().await;
            (var_os("HOME"), current().map(|c| c.label()))
        })
        .await;
        assert_eq!(got.0, Some(OsString::from("/call/home")));
        assert!(got.1.unwrap().starts_with("s1 (PATH "));
        assert!(current().is_none());
    }

    #[tokio::test]
    async fn carried_work_on_another_task_keeps_the_call_scope() {
        let ctx = CallContext {
            env: Arc::new(env(&[("HOME", "/call/home")])),
            client: "s2".into(),
        };
        let (carried, bare) = scope(ctx, async {
            let carried = tokio::spawn(carry(async { var_os("HOME") }));
            let bare = tokio::spawn(async { current().is_some() });
            (carried.await.unwrap(), bare.await.unwrap())
        })
        .await;
        assert_eq!(carried, Some(OsString::from("/call/home")));
        assert!(!bare, "a task not carried has no scope");
    }

    #[test]
    fn the_wire_form_is_a_plain_object() {
        let e = env(&[("PATH", "/bin"), ("HOME", "/h")]);
        let s = serde_json::to_string(&e).unwrap();
        assert_eq!(s, r#"{"HOME":"/h","PATH":"/bin"}"#);
        assert_eq!(serde_json::from_str::<CallEnv>(&s).unwrap(), e);
    }

    #[test]
    fn what_the_catalogue_says_servers_read_is_captured() {
        for spec in crate::catalog::builtins() {
            if spec.kind == crate::catalog::ProviderKind::Lsp && !spec.is_linter {
                assert!(spec.reads_env.is_some(), "{}: no readsEnv", spec.id);
            }
            for n in spec.reads_env.iter().flatten() {
                assert_eq!(
                    group_of(n),
                    Some(Group::Server),
                    "{}: {n} is not sent by clients",
                    spec.id
                );
            }
        }
    }

    #[test]
    fn reads_hash_covers_only_the_names_given() {
        let names = vec!["VIRTUAL_ENV".to_string(), "PYTHONPATH".to_string()];
        let full = env(&[
            ("PATH", "/a"),
            ("HOME", "/h"),
            ("PYENV_ROOT", "/p"),
            ("CARGO_HOME", "/c"),
        ]);
        let reduced = env(&[("PATH", "/b"), ("HOME", "/h")]);
        let venv = env(&[("PATH", "/a"), ("HOME", "/h"), ("VIRTUAL_ENV", "/v")]);
        assert_eq!(full.reads_hash(&names), reduced.reads_hash(&names));
        assert_ne!(full.reads_hash(&names), venv.reads_hash(&names));
        assert_ne!(
            full.server_hash(),
            reduced.server_hash(),
            "all of them: apart"
        );
    }

    // Unix only: it makes a symbolic link, which Windows lets only an
    // administrator or developer mode make.
    #[cfg(unix)]
    #[test]
    fn a_child_path_has_no_relative_entry_and_nothing_of_an_untrusted_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join("bin")).unwrap();
        std::fs::create_dir_all(base.join("sys")).unwrap();
        std::os::unix::fs::symlink(ws.join("bin"), base.join("link")).unwrap();
        use std::path::PathBuf;
        let path = std::env::join_paths([
            PathBuf::from("node_modules/.bin"),
            PathBuf::from(""),
            PathBuf::from("."),
            ws.join("bin"),
            base.join("link"),
            base.join("sys"),
        ])
        .unwrap();
        let (kept, out) = search_path_for_child(&path, &ws, false);
        assert_eq!(kept, base.join("sys").into_os_string());
        let why: Vec<_> = out.iter().map(|l| (l.entry.clone(), l.why)).collect();
        assert_eq!(
            why,
            [
                (PathBuf::from("node_modules/.bin"), LeftOutWhy::Relative),
                (PathBuf::from(""), LeftOutWhy::Relative),
                (PathBuf::from("."), LeftOutWhy::Relative),
                (ws.join("bin"), LeftOutWhy::InUntrustedWorkspace),
                (base.join("link"), LeftOutWhy::InUntrustedWorkspace),
            ]
        );
        let (kept, out) = search_path_for_child(&path, &ws, true);
        assert_eq!(
            kept,
            std::env::join_paths([ws.join("bin"), base.join("link"), base.join("sys")]).unwrap()
        );
        assert_eq!(out.len(), 3, "relative entries go even when trusted");

        // The whole environment: the call's captured variables in place of
        // the process's (one it lacks is unset), the configured env on top.
        let ctx = CallContext {
            env: Arc::new(env(&[
                ("PATH", path.to_str().unwrap()),
                ("VIRTUAL_ENV", "/call/venv"),
            ])),
            client: "t".into(),
        };
        let configured = BTreeMap::from([("RUST_LOG".to_string(), "x".to_string())]);
        let child = sync_scope(ctx, || for_child(&ws, false, &configured));
        assert_eq!(child.get("PATH"), Some(base.join("sys").as_os_str()));
        assert_eq!(child.get("VIRTUAL_ENV"), Some(OsStr::new("/call/venv")));
        assert_eq!(child.get("HOME"), None, "the client had none");
        assert_eq!(child.get("RUST_LOG"), Some(OsStr::new("x")));
        assert_eq!(child.left_out().len(), 5);
        let mut cmd = std::process::Command::new("true");
        child.apply(&mut cmd);
        assert!(
            cmd.get_envs()
                .all(|(k, v)| v.is_some() && child.get(k.to_str().unwrap()).is_some())
        );
    }
}
