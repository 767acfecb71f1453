//! Workspace trust, as editors do it: what a cloned repository's own
//! configuration asks to *run* needs the user's consent.
//!
//! # What needs trust
//!
//! Every project-level configuration layer (every layer but the user file,
//! whatever its file name; see [`crate::config`]) may tune limits, file
//! types, root markers and `disabled` freely, but when the workspace is not
//! trusted:
//!
//! * `command`, `args` and `env` of a server or linter are ignored (the
//!   built-in or user-level values stay);
//! * so are its `settings` and `initializationOptions`: servers run what
//!   some of them name (pyright the `python.pythonPath` interpreter,
//!   rust-analyzer `check.overrideCommand` and
//!   `cargo.buildScripts.overrideCommand`, gopls the tools its `env`
//!   points to, typescript-language-server a `tsserver.path`), and no list
//!   of such keys can be complete;
//! * new servers and linters (ids that neither the built-in catalogue nor
//!   the user file defines) are ignored;
//! * project-local binaries (`node_modules/.bin`, `.venv/bin`, ...) are not
//!   looked up: commands come from `PATH` only;
//! * a CI-built SCIP index it names (`index.path`) is not read: nothing
//!   runs from it, but it decides what precise answers say, so a cloned
//!   repository cannot hand scry its own answers until trusted.
//!
//! What was ignored is recorded ([`TrustState::ignored`]) so that answers
//! can say so, once, with how to trust.
//!
//! # Who trusts
//!
//! In order ([`decide`]):
//!
//! 1. `SCRY_TRUST=all` trusts every workspace (CI), `SCRY_TRUST=none` none;
//! 2. `trustedRoots` in the user configuration: a workspace at or below one
//!    of those directories is trusted;
//! 3. a record made by `scry trust` ([`record`]): (canonical root, SHA-256 of
//!    the project configuration layers). Any later change to those files
//!    (edited, added, removed) no longer matches: the trust is revoked until
//!    `scry trust` is run again.
//!
//! Records live in `<state dir>/trust.json` ([`store_path`]; the state
//! directory is [`scry_base::dirs::state`]), written atomically.
//!
//! Invariant: without one of the three, nothing that a project file names
//! is executed.

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use scry_model::{Trust, TrustNotice};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Server keys that choose what runs, directly (`command`, `args`, `env`)
/// or through the server (`settings`, `initializationOptions`): ignored
/// from untrusted layers.
pub const RUN_KEYS: [&str; 5] = [
    "command",
    "args",
    "env",
    "settings",
    "initializationOptions",
];

/// How the trust of a workspace is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrustPolicy {
    /// `SCRY_TRUST`, then the user's `trustedRoots`, then `scry trust`
    /// records.
    #[default]
    FromEnvironment,
    /// The caller trusts the workspace (library users, tests).
    Trusted,
    /// Never trusted.
    Untrusted,
}

/// The trust decision of a loaded configuration and what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustState {
    pub trust: Trust,
    /// The project configuration files (layers) the decision covers.
    pub project_files: Vec<PathBuf>,
    /// What untrusted layers asked for and was ignored: (file, what), e.g.
    /// (`/ws/.scry.json`, `server "pyright": command, args`).
    pub ignored: Vec<(PathBuf, String)>,
}

impl Default for TrustState {
    fn default() -> Self {
        TrustState {
            trust: Trust::Explicit,
            project_files: Vec::new(),
            ignored: Vec::new(),
        }
    }
}

use scry_base::dirs::EnvFn;
use scry_base::paths;

/// Strip what chooses what runs from one server entry of an untrusted
/// layer (keys already canonical: [`RUN_KEYS`]). `is_new`: the
/// id is not defined by the built-ins or a trusted layer — the whole entry
/// is dropped (`false` returned). Records what was ignored.
pub fn restrict_server(
    file: &Path,
    id: &str,
    obj: &mut Map<String, Value>,
    is_new: bool,
    ignored: &mut Vec<(PathBuf, String)>,
) -> bool {
    if is_new {
        ignored.push((file.to_path_buf(), format!("new server \"{id}\"")));
        return false;
    }
    let dropped: Vec<&str> = RUN_KEYS
        .iter()
        .copied()
        .filter(|k| obj.remove(*k).is_some())
        .collect();
    if !dropped.is_empty() {
        ignored.push((
            file.to_path_buf(),
            format!("server \"{id}\": {}", dropped.join(", ")),
        ));
    }
    true
}

/// SHA-256 (hex) of the project configuration layers: each file's path
/// relative to `root` and its contents, in layer order. No layers hash to
/// a fixed value, so that adding a file changes it.
pub fn config_hash(root: &Path, layers: &[(PathBuf, String)]) -> String {
    let mut h = Sha256::new();
    h.update(b"scry-trust-v1\0");
    for (path, text) in layers {
        let rel = path.strip_prefix(root).unwrap_or(path);
        let rel = rel.to_string_lossy();
        h.update((rel.len() as u64).to_le_bytes());
        h.update(rel.as_bytes());
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    }
    let mut out = String::with_capacity(64);
    for b in h.finalize() {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Where `scry trust` records live (`<state dir>/trust.json`; see
/// [`scry_base::dirs`]).
pub fn store_path() -> Option<PathBuf> {
    scry_base::dirs::trust_store()
}

/// One `scry trust` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The canonical workspace root.
    pub root: PathBuf,
    /// [`config_hash`] of the project configuration when trusted.
    pub config_hash: String,
    /// The configuration files it covered, relative to the root.
    #[serde(default)]
    pub files: Vec<String>,
    /// Seconds since the Unix epoch.
    #[serde(default)]
    pub trusted_at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    #[serde(default)]
    trusted: Vec<Record>,
}

/// The records in `store` (none when the file is missing or unreadable:
/// an unreadable store trusts nothing).
pub fn records_in(store: &Path) -> Vec<Record> {
    match std::fs::read_to_string(store) {
        Ok(text) => match serde_json::from_str::<Store>(&text) {
            Ok(s) => s.trusted,
            Err(e) => {
                tracing::warn!("ignoring unreadable trust store {}: {e}", store.display());
                Vec::new()
            }
        },
        Err(_) => Vec::new(),
    }
}

fn write_store(store: &Path, records: Vec<Record>) -> io::Result<()> {
    if let Some(dir) = store.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text =
        serde_json::to_string_pretty(&Store { trusted: records }).map_err(io::Error::other)?;
    let tmp = store.with_extension(format!("json.tmp{}", std::process::id()));
    // The user's alone from its creation (a stale one of this pid first
    // removed, so that it is created anew).
    let _ = std::fs::remove_file(&tmp);
    let mut file =
        scry_base::platform::fs::private(std::fs::OpenOptions::new().write(true).create_new(true))
            .open(&tmp)?;
    let written = file
        .write_all((text + "\n").as_bytes())
        .and_then(|()| file.sync_all());
    drop(file);
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, store).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Record trust for `root` (canonical) with the hash of its current
/// project configuration `layers`, replacing an earlier record.
pub fn record(store: &Path, root: &Path, layers: &[(PathBuf, String)]) -> io::Result<Record> {
    let rec = Record {
        root: root.to_path_buf(),
        config_hash: config_hash(root, layers),
        files: layers
            .iter()
            .map(|(p, _)| scry_base::paths::display(p, root))
            .collect(),
        trusted_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let mut records = records_in(store);
    records.retain(|r| !paths::same(&r.root, root));
    records.push(rec.clone());
    write_store(store, records)?;
    Ok(rec)
}

/// Forget the record for `root`; `false` when there was none.
pub fn revoke(store: &Path, root: &Path) -> io::Result<bool> {
    let mut records = records_in(store);
    let before = records.len();
    records.retain(|r| !paths::same(&r.root, root));
    if records.len() == before {
        return Ok(false);
    }
    write_store(store, records)?;
    Ok(true)
}

/// Decide whether `root` (canonical) is trusted, given its project
/// configuration `layers` and the user's `trusted_roots`. Problems (an
/// unknown `SCRY_TRUST` value, a relative trusted root) go to `warnings`.
pub fn decide(
    root: &Path,
    layers: &[(PathBuf, String)],
    trusted_roots: &[String],
    policy: TrustPolicy,
    env: EnvFn<'_>,
    warnings: &mut Vec<String>,
) -> Trust {
    match policy {
        TrustPolicy::Trusted => return Trust::Explicit,
        TrustPolicy::Untrusted => return Trust::Untrusted { revoked: false },
        TrustPolicy::FromEnvironment => {}
    }
    if let Some(v) = env(Trust::ENV).filter(|v| !v.is_empty()) {
        match v.to_string_lossy().trim().to_ascii_lowercase().as_str() {
            "all" => return Trust::Env,
            "none" => return Trust::Untrusted { revoked: false },
            other => warnings.push(format!(
                "{}={other} is not understood (use `all` or `none`); ignored",
                Trust::ENV
            )),
        }
    }
    for entry in trusted_roots {
        let Some(p) = scry_base::dirs::expand_home_with(entry, env) else {
            continue;
        };
        if !p.is_absolute() {
            warnings.push(format!(
                "trustedRoots entry \"{entry}\" is not an absolute path; ignored"
            ));
            continue;
        }
        let p = paths::canonical(&p).unwrap_or(p);
        if paths::is_under(root, &p) {
            return Trust::UserRoot(p);
        }
    }
    let store = scry_base::dirs::trust_store_with(env);
    let Some(store) = store else {
        return Trust::Untrusted { revoked: false };
    };
    match records_in(&store)
        .into_iter()
        .find(|r| paths::same(&r.root, root))
    {
        Some(r) if r.config_hash == config_hash(root, layers) => Trust::Recorded,
        Some(_) => Trust::Untrusted { revoked: true },
        None => Trust::Untrusted { revoked: false },
    }
}

/// What an untrusted workspace ignored (worded by scry-render, the
/// [`scry_model::Reason::TrustIgnored`] note), or `None` when trusted or
/// nothing was.
pub fn notice(state: &TrustState, local_bins: &[PathBuf]) -> Option<TrustNotice> {
    if state.trust.is_trusted() || (state.ignored.is_empty() && local_bins.is_empty()) {
        return None;
    }
    Some(TrustNotice {
        revoked: state.trust == (Trust::Untrusted { revoked: true }),
        ignored: state.ignored.clone(),
        local_bins: local_bins.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::ffi::OsString;

    fn env_of<'a>(
        vars: &'a HashMap<&'static str, OsString>,
    ) -> impl Fn(&str) -> Option<OsString> + 'a {
        |k| vars.get(k).cloned()
    }

    #[test]
    fn hash_changes_with_content_and_files() {
        let root = Path::new("/ws");
        let a = vec![(PathBuf::from("/ws/.scry.json"), "{}".to_string())];
        let b = vec![(PathBuf::from("/ws/.scry.json"), "{ }".to_string())];
        let c = vec![(PathBuf::from("/ws/scry.json"), "{}".to_string())];
        let ab = vec![a[0].clone(), c[0].clone()];
        let hs = [
            config_hash(root, &[]),
            config_hash(root, &a),
            config_hash(root, &b),
            config_hash(root, &c),
            config_hash(root, &ab),
        ];
        for i in 0..hs.len() {
            assert_eq!(hs[i].len(), 64);
            for j in 0..i {
                assert_ne!(hs[i], hs[j], "{i} vs {j}");
            }
        }
        // relative to the root: moving the checkout keeps the hash
        let moved = vec![(PathBuf::from("/x/.scry.json"), "{}".to_string())];
        assert_eq!(config_hash(Path::new("/x"), &moved), hs[1]);
    }

    #[test]
    fn decide_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        let root = scry_base::paths::canonical(&root).unwrap();
        let state = tmp.path().join("state");
        let layers = vec![(root.join(".scry.json"), "{\"x\":1}".to_string())];
        let mut vars: HashMap<&'static str, OsString> = HashMap::from([(
            scry_base::dirs::STATE_DIR_ENV,
            state.clone().into_os_string(),
        )]);
        let mut w = Vec::new();
        let d = |vars: &HashMap<&'static str, OsString>, roots: &[String], w: &mut Vec<String>| {
            decide(
                &root,
                &layers,
                roots,
                TrustPolicy::FromEnvironment,
                &env_of(vars),
                w,
            )
        };
        assert_eq!(d(&vars, &[], &mut w), Trust::Untrusted { revoked: false });
        // a record for the current files trusts; a change revokes
        let store = state.join("trust.json");
        record(&store, &root, &layers).unwrap();
        assert_eq!(d(&vars, &[], &mut w), Trust::Recorded);
        let changed = vec![(root.join(".scry.json"), "{\"x\":2}".to_string())];
        assert_eq!(
            decide(
                &root,
                &changed,
                &[],
                TrustPolicy::FromEnvironment,
                &env_of(&vars),
                &mut w
            ),
            Trust::Untrusted { revoked: true }
        );
        assert!(revoke(&store, &root).unwrap());
        assert!(!revoke(&store, &root).unwrap());
        assert_eq!(d(&vars, &[], &mut w), Trust::Untrusted { revoked: false });
        // trustedRoots: the root or a parent; relative entries warned about
        let parent = scry_base::paths::canonical(tmp.path()).unwrap();
        let roots = vec!["rel/dir".to_string(), parent.display().to_string()];
        assert_eq!(d(&vars, &roots, &mut w), Trust::UserRoot(parent));
        assert!(w.iter().any(|m| m.contains("rel/dir")), "{w:?}");
        let other = vec![tmp.path().join("elsewhere").display().to_string()];
        assert_eq!(
            d(&vars, &other, &mut w),
            Trust::Untrusted { revoked: false }
        );
        // SCRY_TRUST
        vars.insert(Trust::ENV, "all".into());
        assert_eq!(d(&vars, &[], &mut w), Trust::Env);
        record(&store, &root, &layers).unwrap();
        vars.insert(Trust::ENV, "none".into());
        assert_eq!(d(&vars, &[], &mut w), Trust::Untrusted { revoked: false });
        vars.insert(Trust::ENV, "yes".into());
        w.clear();
        assert_eq!(d(&vars, &[], &mut w), Trust::Recorded);
        assert!(w[0].contains("SCRY_TRUST=yes"), "{w:?}");
        // explicit policies ignore the environment
        let t = decide(
            &root,
            &layers,
            &[],
            TrustPolicy::Untrusted,
            &env_of(&vars),
            &mut w,
        );
        assert!(!t.is_trusted());
        let t = decide(&root, &layers, &[], TrustPolicy::Trusted, &|_| None, &mut w);
        assert_eq!(t, Trust::Explicit);
    }

    #[test]
    fn store_survives_garbage_and_keeps_other_roots() {
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("s/trust.json");
        std::fs::create_dir_all(store.parent().unwrap()).unwrap();
        std::fs::write(&store, "not json").unwrap();
        assert!(records_in(&store).is_empty());
        record(&store, Path::new("/a"), &[]).unwrap();
        record(&store, Path::new("/b"), &[]).unwrap();
        record(&store, Path::new("/a"), &[]).unwrap();
        let roots: Vec<_> = records_in(&store).into_iter().map(|r| r.root).collect();
        assert_eq!(roots, [PathBuf::from("/b"), PathBuf::from("/a")]);
    }

    #[test]
    fn restrict_and_notice() {
        let f = Path::new("/ws/.scry.json");
        let mut ignored = Vec::new();
        let mut obj: Map<String, Value> = serde_json::from_str(
            r#"{"command": "evil", "args": ["-x"], "env": {"A": "1"},
                "settings": {"python": {"pythonPath": "./evil"}},
                "initializationOptions": {"tsserver": {"path": "./evil.js"}},
                "fileTypes": ["py"], "disabled": false}"#,
        )
        .unwrap();
        assert!(restrict_server(f, "pyright", &mut obj, false, &mut ignored));
        assert_eq!(obj.keys().collect::<Vec<_>>(), ["disabled", "fileTypes"]);
        let mut other = Map::new();
        assert!(!restrict_server(f, "mine", &mut other, true, &mut ignored));
        let mut plain: Map<String, Value> = serde_json::from_str(r#"{"disabled": true}"#).unwrap();
        assert!(restrict_server(f, "gopls", &mut plain, false, &mut ignored));
        assert_eq!(ignored.len(), 2);
        let st = TrustState {
            trust: Trust::Untrusted { revoked: false },
            project_files: vec![f.to_path_buf()],
            ignored,
        };
        let n = notice(&st, &[PathBuf::from("/ws/node_modules/.bin/x")]).unwrap();
        assert!(!n.revoked);
        assert_eq!(n.ignored.len(), 2);
        assert_eq!(n.ignored[0].0, f);
        assert_eq!(n.local_bins, [PathBuf::from("/ws/node_modules/.bin/x")]);
        let trusted = TrustState {
            trust: Trust::Recorded,
            ..st.clone()
        };
        assert_eq!(notice(&trusted, &[]), None);
        let nothing = TrustState {
            ignored: Vec::new(),
            ..st
        };
        assert_eq!(notice(&nothing, &[]), None);
    }
}
