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
//! - [`CallEnv::config_hash`] covers what configuration discovery reads;
//!   [`CallEnv::server_hash`] what a server is started with, except the
//!   search path (its effect is the resolved binary, keyed separately).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

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

fn lists() -> &'static Lists {
    static LISTS: OnceLock<Lists> = OnceLock::new();
    LISTS.get_or_init(|| {
        serde_json::from_str(include_str!("env.json"))
            .expect("env.json is valid (checked by a unit test)")
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

/// The group of `name`, or `None` when it is not captured.
pub fn group_of(name: &str) -> Option<Group> {
    let l = lists();
    if l.not_captured.iter().any(|n| n == name) {
        return None;
    }
    if l.config.iter().any(|n| n == name)
        || l.config_prefixes
            .iter()
            .any(|p| name.starts_with(p.as_str()))
    {
        Some(Group::Config)
    } else if l.search.iter().any(|n| n == name) {
        Some(Group::Search)
    } else if l.servers.iter().any(|n| n == name) {
        Some(Group::Server)
    } else {
        None
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
                .filter(|(k, _)| group_of(k).is_some())
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
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

/// The captured variables of the call in scope (none outside a call):
/// what a child process a call starts is given besides its own.
pub fn current_vars() -> Vec<(String, String)> {
    current()
        .map(|c| {
            c.env
                .vars()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Make scry-base's per-user places ([`crate::dirs`]) read variables
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
}
