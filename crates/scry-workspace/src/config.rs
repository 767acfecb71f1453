//! Layered JSON configuration.
//!
//! # Layers
//!
//! Later layers win:
//!
//! 1. the built-in catalogue ([`crate::catalog::builtins`]);
//! 2. the user file: `$SCRY_CONFIG` if set, else
//!    `$XDG_CONFIG_HOME/scry/config.json`, else `$HOME/.config/scry/config.json`
//!    (see [`user_config_path`]);
//! 3. project files in the workspace root, in this order:
//!    `.scry.json`, `scry.json`, `.scry/config.json`
//!    ([`PROJECT_CONFIG_FILES`]).
//!
//! Between 2 and 3, at the project level: other agents' `lsp.json` files
//! ([`crate::seed_config::SEED_CONFIG_FILES`]), translated by
//! [`crate::seed_config`].
//!
//! Missing files are skipped (except an explicit `$SCRY_CONFIG`, which must
//! exist).
//!
//! Every layer but the user file is a *project* layer: unless the workspace
//! is trusted, what it says about what runs (`command`, `args`, `env`, new
//! servers) and the index it names (`index.path`) are ignored, and
//! `trustedRoots` is read from the user file only (see [`crate::trust`]).
//!
//! # Format
//!
//! ```jsonc
//! {
//!   // "lspServers" and "linters" are accepted too, with the same shape.
//!   "servers": {
//!     // Override: merged onto the server with that id (built-in or from an
//!     // earlier layer). Objects are merged deeply; scalars and arrays replace.
//!     "pyright": { "settings": { "python": { "analysis": { "typeCheckingMode": "strict" } } } },
//!     // New server: needs a "command".
//!     "my-lsp": { "command": "my-lsp", "args": ["--stdio"], "fileTypes": ["foo"] },
//!     // Disable: kept in the list (status shows it) but never used.
//!     "gopls": { "disabled": true },
//!     // Memory cap of one server (its process tree, MiB): over it, it is
//!     // restarted between requests.
//!     "rust-analyzer": { "memoryMiB": 12288 }
//!   },
//!   // false: only servers named in some config file are kept (built-ins
//!   // mentioned by id count as named). The last layer that sets it wins.
//!   "autoDetect": false,
//!   "limits": { "maxLocations": 50, "maxChars": 8000, "timeoutMs": 20000, "maxOpenDocuments": 100,
//!               "maxDiagnostics": 50, "diagnosticsDeltaMs": 2000,
//!               "serverIdleMs": 600000, "maxServers": 8, "maxFileBytes": 4194304,
//!               // memory: a server's cap when it sets no "memoryMiB", the
//!               // budget of all servers together, how often it is sampled
//!               "serverMemoryMiB": 4096, "memoryBudgetMiB": 16384, "memoryCheckMs": 2000,
//!               // the daemon's background SCIP index refresh: after this
//!               // long with no call (default 2 min)
//!               "indexRefreshIdleMs": 120000 },
//!   // SCIP index (see [`IndexConfig`]): a CI-built index.scip read as is
//!   // (a path inside the workspace, relative to its root; from a project
//!   // file only when the workspace is trusted), and whether the daemon
//!   // rebuilds the `scry index` one in the background (default true; it
//!   // only ever runs where an indexer is installed)
//!   "index": { "path": "build/index.scip", "refresh": true }
//! }
//! ```
//!
//! Server entries use the fields of [`ServerSpec`] (camelCase). Being
//! liberal in what is accepted:
//!
//! * `//` and `/* */` comments and trailing commas are allowed;
//! * key spelling is loose: `file_types`, `file-types` and `fileTypes` are the
//!   same key; aliases: `extensions` (fileTypes), `roots` (rootMarkers),
//!   `cmd` (command), `initOptions` (initializationOptions);
//! * `"enabled": false` means `"disabled": true`; an entry may be just
//!   `true`/`false` (enabled/disabled) or `null` (disabled);
//! * `"command": ["my-lsp", "--stdio"]` splits into command and args;
//! * list fields may be a single string: `"args": "--stdio --verbose"`
//!   (split on whitespace), `"fileTypes": "ts, tsx"` (split on commas or
//!   whitespace);
//! * `fileTypes` entries may start with `.` or `*.` (`".ts"`, `"*.ts"`);
//! * `servers` may also be an array of objects with an `"id"`.
//!
//! New servers are placed before everything defined by earlier layers (so
//! they win ties), in the order they are written. New servers under
//! `"linters"` default to `"isLinter": true`; a new server with a `parser` or
//! `mode` and no `kind` is a `"cli"` one.
//!
//! Unknown keys are reported in [`Config::warnings`], not rejected. Invalid
//! JSON is a [`ConfigError::Parse`] with file, line and column; a new server
//! without a command, a value of the wrong type or a non-positive limit is a
//! [`ConfigError::Invalid`].
//!
//! Alternatives (`alternativeTo`) apply even to servers named in a config
//! file; set `"alternativeTo": null` to use such a server unconditionally.

use std::borrow::Cow;
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

use scry_model::limits;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::catalog::{self, ServerSpec};
use crate::trust::{self, TrustPolicy, TrustState};

// Routing, roots and command lookup used to live here; their names stay
// reachable from this module.
pub use crate::command::{resolve_command, resolve_command_untrusted, resolve_command_with_path};
pub use crate::roots::{find_root, marker_root};

/// Project configuration files, relative to the workspace root, in the order
/// they are layered (later wins).
pub const PROJECT_CONFIG_FILES: [&str; 3] = [".scry.json", "scry.json", ".scry/config.json"];

/// Output and time limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Most locations listed in one answer (default
    /// [`limits::MAX_LOCATIONS`]).
    pub max_locations: usize,
    /// Most characters in one answer (default [`limits::MAX_CHARS`]).
    pub max_chars: usize,
    /// An action's time budget in milliseconds (default
    /// [`limits::TIMEOUT_MS`], at most [`limits::MAX_TIMEOUT_MS`]).
    pub timeout_ms: u64,
    /// Most documents kept open per server (default 200).
    pub max_open_documents: usize,
    /// Most diagnostics listed in one `diagnostics` answer (default 50).
    #[serde(default = "default_max_diagnostics")]
    pub max_diagnostics: usize,
    /// Budget of the after-edit diagnostics delta in milliseconds
    /// (default 2000).
    #[serde(default = "default_delta_ms")]
    pub diagnostics_delta_ms: u64,
    /// A server with no question for this long is stopped (milliseconds,
    /// default 10 min; enforced where servers outlive a call: the daemon).
    #[serde(default = "default_server_idle_ms")]
    pub server_idle_ms: u64,
    /// Most servers running at once; starting one more stops the least
    /// recently used (default 8).
    #[serde(default = "default_max_servers")]
    pub max_servers: usize,
    /// Largest workspace file scry reads, in bytes (default 4 MiB): larger
    /// ones are not sent to servers, indexed or scanned for names, and the
    /// answer says so (`FILE_TOO_LARGE`).
    #[serde(default = "default_max_file_bytes")]
    pub max_file_bytes: u64,
    /// A server's memory cap (its whole process tree's resident memory,
    /// MiB) when its catalogue entry or configuration sets no `memoryMiB`
    /// (default 4096). Over it, the server is restarted between requests.
    #[serde(default = "default_server_memory_mib", rename = "serverMemoryMiB")]
    pub server_memory_mib: u64,
    /// The memory budget of all running servers together (MiB, default
    /// 16384; all workspaces of a daemon together): over it, the least
    /// recently used idle server is stopped.
    #[serde(default = "default_memory_budget_mib", rename = "memoryBudgetMiB")]
    pub memory_budget_mib: u64,
    /// How often a long-lived host (the daemon) samples the servers'
    /// memory (milliseconds, default 2000); calls also check before they
    /// ask.
    #[serde(default = "default_memory_check_ms")]
    pub memory_check_ms: u64,
    /// How long a workspace has no call before the daemon rebuilds its
    /// stale SCIP index in the background (milliseconds, default 2 min;
    /// see [`IndexConfig::refresh`]).
    #[serde(default = "default_index_refresh_idle_ms")]
    pub index_refresh_idle_ms: u64,
}

fn default_index_refresh_idle_ms() -> u64 {
    120_000
}

/// `"index"`: where the workspace's SCIP index comes from besides `scry
/// index`, and whether the daemon keeps that one fresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexConfig {
    /// A CI-built `index.scip`, as written (relative to the workspace
    /// root), and the file that set it. Read as is, never run; confined to
    /// the workspace ([`Config::index_path`]). A project file's is honoured
    /// only in a trusted workspace: the index decides what precise answers
    /// say, so a cloned repository cannot hand its own until trusted.
    pub path: Option<(PathBuf, PathBuf)>,
    /// Whether the daemon rebuilds the index `scry index` built when the
    /// workspace has been idle for `limits.indexRefreshIdleMs` and an
    /// indexed file changed since (default true: it only runs an indexer
    /// that is installed, under the same rules as servers).
    pub refresh: bool,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            path: None,
            refresh: true,
        }
    }
}

fn default_max_file_bytes() -> u64 {
    scry_lsp::disk::DEFAULT_MAX_FILE_BYTES
}

fn default_server_memory_mib() -> u64 {
    4096
}

fn default_memory_budget_mib() -> u64 {
    16384
}

fn default_memory_check_ms() -> u64 {
    2000
}

fn default_server_idle_ms() -> u64 {
    600_000
}

fn default_max_servers() -> usize {
    8
}

fn default_max_diagnostics() -> usize {
    50
}

fn default_delta_ms() -> u64 {
    2000
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_locations: limits::MAX_LOCATIONS,
            max_chars: limits::MAX_CHARS,
            timeout_ms: limits::TIMEOUT_MS,
            max_open_documents: 200,
            max_diagnostics: default_max_diagnostics(),
            diagnostics_delta_ms: default_delta_ms(),
            server_idle_ms: default_server_idle_ms(),
            max_servers: default_max_servers(),
            max_file_bytes: default_max_file_bytes(),
            server_memory_mib: default_server_memory_mib(),
            memory_budget_mib: default_memory_budget_mib(),
            memory_check_ms: default_memory_check_ms(),
            index_refresh_idle_ms: default_index_refresh_idle_ms(),
        }
    }
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Resolved servers in priority order; disabled ones are kept but flagged.
    pub servers: Vec<ServerSpec>,
    pub limits: Limits,
    /// Config files that were read, in order.
    pub sources: Vec<PathBuf>,
    /// Non-fatal problems (unknown keys, servers that can never be used, ...).
    pub warnings: Vec<String>,
    /// Whether the project layers were trusted, and what was ignored.
    pub trust: TrustState,
    /// `"index"`: a CI-built index, background refresh.
    pub index: IndexConfig,
}

/// A configuration file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("invalid JSON in config file {}:{line}:{column}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("invalid config file {}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

impl Default for Config {
    /// The built-ins with default limits and no files.
    fn default() -> Self {
        Config {
            servers: catalog::builtins(),
            limits: Limits::default(),
            sources: Vec::new(),
            warnings: Vec::new(),
            trust: TrustState::default(),
            index: IndexConfig::default(),
        }
    }
}

impl Config {
    /// Layers, later wins: built-ins; the user file ($SCRY_CONFIG if set,
    /// else $XDG_CONFIG_HOME/scry/config.json, else
    /// $HOME/.config/scry/config.json); then project files in the workspace
    /// root: `.scry.json`, `scry.json`, `.scry/config.json`.
    /// Project layers are trusted or not as [`TrustPolicy::FromEnvironment`]
    /// decides.
    pub fn load(workspace_root: &Path) -> Result<Config, ConfigError> {
        Config::load_with_policy(workspace_root, TrustPolicy::FromEnvironment)
    }

    /// [`Config::load`] with the trust of the project layers decided by
    /// `policy`.
    pub fn load_with_policy(
        workspace_root: &Path,
        policy: TrustPolicy,
    ) -> Result<Config, ConfigError> {
        load_with(workspace_root, &|k| crate::env::var_os(k), policy)
    }

    /// Same as [`Config::load`] with explicit layers: each (path, json text).
    pub fn from_layers(layers: &[(PathBuf, String)]) -> Result<Config, ConfigError> {
        let mut b = Builder::new();
        for (path, text) in layers {
            b.apply(path, text)?;
        }
        Ok(b.finish())
    }
    /// The server with this id, enabled or not.
    pub fn server(&self, id: &str) -> Option<&ServerSpec> {
        self.servers.iter().find(|s| s.id == id)
    }

    /// The configured CI-built index of the workspace at `root`
    /// (canonical): its real path when it lies inside the workspace
    /// (symlinks resolved: [`crate::paths::confine`]), else why it is not
    /// read. `Ok(None)` when none is configured.
    pub fn index_path(&self, root: &Path) -> Result<Option<PathBuf>, String> {
        let Some((path, file)) = &self.index.path else {
            return Ok(None);
        };
        crate::paths::confine(root, path).map(Some).map_err(|_| {
            format!(
                "index.path \"{}\" ({}) is outside the workspace: not read",
                path.display(),
                crate::paths::display(file, root)
            )
        })
    }
}

/// The user configuration file (`$SCRY_CONFIG`, else
/// `$XDG_CONFIG_HOME/scry/config.json`, else `~/.config/scry/config.json`:
/// see [`crate::dirs`]). `None` when none of these is set.
pub use crate::dirs::user_config as user_config_path;

pub(crate) use crate::dirs::EnvFn;

/// What the configuration of a workspace was read from, as the file system
/// says now: for the user file, every project file scry and other agents'
/// seed files may be, and the `scry trust` store, whether it exists and
/// (device, inode, size, mtime, ctime). Taken in a few `stat`s, so a
/// long-lived host compares it before every call ([`Stamp::now`]) and
/// rereads the configuration (trust included) only when it moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp(Vec<(PathBuf, Option<FileStamp>)>);

/// (device, inode, size, mtime ns, ctime ns) of one file.
type FileStamp = (u64, u64, u64, i128, i128);

impl Stamp {
    /// The stamp of the configuration of `workspace_root` in the
    /// environment in force (the call's, in the daemon).
    pub fn now(workspace_root: &Path) -> Stamp {
        let env = |k: &str| crate::env::var_os(k);
        let mut files: Vec<PathBuf> = Vec::new();
        files.extend(crate::dirs::user_config_with(&env).map(|(p, _)| p));
        files.extend(
            crate::seed_config::SEED_CONFIG_FILES
                .iter()
                .chain(PROJECT_CONFIG_FILES.iter())
                .map(|f| workspace_root.join(f)),
        );
        files.extend(crate::dirs::trust_store_with(&env));
        Stamp(
            files
                .into_iter()
                .map(|p| {
                    let meta = std::fs::metadata(&p).ok().map(|m| file_stamp(&m));
                    (p, meta)
                })
                .collect(),
        )
    }
}

#[cfg(unix)]
fn file_stamp(m: &std::fs::Metadata) -> FileStamp {
    use std::os::unix::fs::MetadataExt;
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    (
        m.dev(),
        m.ino(),
        m.size(),
        ns(m.mtime(), m.mtime_nsec()),
        ns(m.ctime(), m.ctime_nsec()),
    )
}

#[cfg(not(unix))]
fn file_stamp(m: &std::fs::Metadata) -> FileStamp {
    let mtime = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    (0, 0, m.len(), mtime, 0)
}

/// The project configuration layers of `workspace_root` as they are now:
/// (path, text) of each project file present, in layer order. What `scry
/// trust` hashes.
pub fn project_layers(workspace_root: &Path) -> Result<Vec<(PathBuf, String)>, ConfigError> {
    let env = |k: &str| crate::env::var_os(k);
    Ok(read_layers(workspace_root, &env)?.project)
}

#[cfg(test)]
pub(crate) fn load_with_env(workspace_root: &Path, env: EnvFn<'_>) -> Result<Config, ConfigError> {
    load_with(workspace_root, env, TrustPolicy::FromEnvironment)
}

pub(crate) fn load_with(
    workspace_root: &Path,
    env: EnvFn<'_>,
    policy: TrustPolicy,
) -> Result<Config, ConfigError> {
    let Layers {
        user,
        project,
        warnings: seed_warnings,
    } = read_layers(workspace_root, env)?;
    let mut b = Builder::new();
    if let Some((path, text)) = &user {
        b.apply(path, text)?;
    }
    let mut warnings = Vec::new();
    let decision = trust::decide(
        workspace_root,
        &project,
        &b.trusted_roots,
        policy,
        env,
        &mut warnings,
    );
    b.warnings.extend(warnings);
    b.project = true;
    b.untrusted = !decision.is_trusted();
    for (path, text) in &project {
        b.apply(path, text)?;
    }
    let ignored = std::mem::take(&mut b.ignored);
    let mut config = b.finish();
    config.warnings.extend(seed_warnings);
    config.trust = TrustState {
        trust: decision,
        project_files: project.into_iter().map(|(p, _)| p).collect(),
        ignored,
    };
    for w in &config.warnings {
        tracing::warn!("{w}");
    }
    Ok(config)
}

/// The configuration files of a workspace as read from disk.
struct Layers {
    /// The user layer, if any.
    user: Option<(PathBuf, String)>,
    /// The project layers in precedence order: other agents' files
    /// ([`crate::seed_config`]) below scry's own.
    project: Vec<(PathBuf, String)>,
    /// Why another agent's file was skipped.
    warnings: Vec<String>,
}

/// The user layer (if any) and the project layers, read from disk.
fn read_layers(workspace_root: &Path, env: EnvFn<'_>) -> Result<Layers, ConfigError> {
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    let user = crate::dirs::user_config_with(env);
    let user_path = user.as_ref().map(|(p, _)| p.clone());
    if let Some(user) = user {
        files.push(user);
    }
    let user_files = files.len();
    files.extend(
        PROJECT_CONFIG_FILES
            .iter()
            .map(|f| (workspace_root.join(f), false)),
    );
    let mut layers = Vec::new();
    let mut seed_warnings = Vec::new();
    for (i, (path, required)) in files.into_iter().enumerate() {
        if i == user_files {
            // Project level too: other agents' lsp.json files, below scry's own.
            let (seeds, warnings) = crate::seed_config::read_layers(workspace_root);
            seed_warnings = warnings;
            for seed in seeds {
                // Another agent's file never stops scry: one scry would
                // refuse is skipped with a warning.
                let mut trial = layers.clone();
                trial.push(seed.clone());
                match Config::from_layers(&trial) {
                    Ok(_) => layers.push(seed),
                    Err(e) => seed_warnings.push(format!("not used: {e}")),
                }
            }
        }
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                tracing::debug!(path = %path.display(), "reading config file");
                layers.push((path, text));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound && !required => {}
            Err(source) => return Err(ConfigError::Read { path, source }),
        }
    }
    let mut user = None;
    if let Some(up) = &user_path
        && let Some(i) = layers.iter().position(|(p, _)| p == up)
    {
        user = Some(layers.remove(i));
    }
    Ok(Layers {
        user,
        project: layers,
        warnings: seed_warnings,
    })
}

// ---------------------------------------------------------------------------
// Layering

struct Entry {
    id: String,
    value: Value,
    spec: ServerSpec,
}

struct Builder {
    entries: Vec<Entry>,
    /// Every id ever defined (for alternativeTo checks).
    known: HashSet<String>,
    named: HashSet<String>,
    auto_detect: bool,
    limits: Limits,
    sources: Vec<PathBuf>,
    warnings: Vec<String>,
    /// The layers being applied are project layers.
    project: bool,
    /// ... and not trusted: what chooses what runs is ignored.
    untrusted: bool,
    /// `trustedRoots` of the user layer.
    trusted_roots: Vec<String>,
    /// What untrusted layers asked for and was ignored.
    ignored: Vec<(PathBuf, String)>,
    /// `"index"` so far.
    index: IndexConfig,
}

/// Lower-case alphanumerics only: `file_types`, `file-types`, `fileTypes`
/// all become `filetypes`.
pub(crate) fn canon(key: &str) -> String {
    key.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

pub(crate) fn server_key(key: &str) -> Option<&'static str> {
    Some(match canon(key).as_str() {
        "id" => "id",
        "kind" => "kind",
        "command" | "cmd" => "command",
        "args" | "arguments" => "args",
        "filetypes" | "filetype" | "extensions" => "fileTypes",
        "rootmarkers" | "roots" | "rootpatterns" => "rootMarkers",
        "languageid" => "languageId",
        "languageids" => "languageIds",
        "settings" => "settings",
        "initializationoptions" | "initoptions" => "initializationOptions",
        "env" | "environment" => "env",
        "disabled" => "disabled",
        "enabled" => "enabled",
        "islinter" | "linter" => "isLinter",
        "singlequoteischar" => "singleQuoteIsChar",
        "alternativeto" => "alternativeTo",
        "parser" => "parser",
        "mode" => "mode",
        "languages" => "languages",
        "install" => "install",
        "versionargs" => "versionArgs",
        "hints" => "hints",
        "memorymib" | "memory" => "memoryMiB",
        "readsenv" => "readsEnv",
        _ => return None,
    })
}

fn deep_merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(bv) => deep_merge(bv, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

fn split_list(s: &str, commas: bool) -> Value {
    Value::Array(
        s.split(|c: char| c.is_whitespace() || (commas && c == ','))
            .filter(|p| !p.is_empty())
            .map(|p| Value::String(p.to_string()))
            .collect(),
    )
}

impl Builder {
    fn new() -> Self {
        let entries: Vec<Entry> = catalog::builtins()
            .into_iter()
            .map(|spec| Entry {
                id: spec.id.clone(),
                value: serde_json::to_value(&spec).expect("ServerSpec serialises"),
                spec,
            })
            .collect();
        Builder {
            known: entries.iter().map(|e| e.id.clone()).collect(),
            entries,
            named: HashSet::new(),
            auto_detect: true,
            limits: Limits::default(),
            sources: Vec::new(),
            warnings: Vec::new(),
            project: false,
            untrusted: false,
            trusted_roots: Vec::new(),
            ignored: Vec::new(),
            index: IndexConfig::default(),
        }
    }

    fn apply(&mut self, path: &Path, text: &str) -> Result<(), ConfigError> {
        self.sources.push(path.to_path_buf());
        let cleaned = strip_jsonc(text);
        if cleaned.trim().is_empty() {
            return Ok(());
        }
        let root: Value = serde_json::from_str(&cleaned).map_err(|e| {
            let msg = e.to_string();
            let message = match msg.rfind(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            };
            ConfigError::Parse {
                path: path.to_path_buf(),
                line: e.line(),
                column: e.column(),
                message,
            }
        })?;
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let Value::Object(top) = root else {
            return Err(invalid("the top level must be a JSON object".into()));
        };
        let mut insert_at = 0;
        for (key, value) in top {
            match canon(&key).as_str() {
                "servers" | "lspservers" => {
                    self.apply_servers(path, &key, value, false, &mut insert_at)?
                }
                "linters" => self.apply_servers(path, &key, value, true, &mut insert_at)?,
                "autodetect" => match value {
                    Value::Bool(b) => self.auto_detect = b,
                    other => {
                        return Err(invalid(format!(
                            "\"{key}\" must be true or false, not {other}"
                        )));
                    }
                },
                "limits" => self.apply_limits(path, value)?,
                "index" => self.apply_index(path, value)?,
                "trustedroots" => self.apply_trusted_roots(path, &key, value)?,
                "schema" | "comment" => {}
                _ => self
                    .warnings
                    .push(format!("{}: unknown key \"{key}\" ignored", path.display())),
            }
        }
        Ok(())
    }

    /// `trustedRoots`: a list of directories, honoured in the user layer
    /// only (a project cannot trust itself).
    fn apply_trusted_roots(
        &mut self,
        path: &Path,
        key: &str,
        value: Value,
    ) -> Result<(), ConfigError> {
        if self.project {
            self.warnings.push(format!(
                "{}: \"{key}\" is only read from the user configuration; ignored",
                path.display()
            ));
            return Ok(());
        }
        let roots = match value {
            Value::String(s) => vec![s],
            Value::Array(items) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    other => Err(other),
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|other| ConfigError::Invalid {
                    path: path.to_path_buf(),
                    message: format!("\"{key}\" must list directories, not {other}"),
                })?,
            other => {
                return Err(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    message: format!(
                        "\"{key}\" must be an array of directories, not {}",
                        type_name(&other)
                    ),
                });
            }
        };
        self.trusted_roots.extend(roots);
        Ok(())
    }

    /// `"index": {"path": "build/index.scip", "refresh": true}`; a path
    /// from an untrusted project layer is ignored and recorded.
    fn apply_index(&mut self, path: &Path, value: Value) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let Value::Object(map) = value else {
            return Err(invalid(format!(
                "\"index\" must be an object, not {}",
                type_name(&value)
            )));
        };
        for (key, v) in map {
            match (canon(&key).as_str(), v) {
                ("path" | "scip" | "file", Value::String(p)) if !p.trim().is_empty() => {
                    if self.untrusted {
                        self.ignored
                            .push((path.to_path_buf(), format!("index.path \"{p}\"")));
                    } else {
                        self.index.path = Some((PathBuf::from(p), path.to_path_buf()));
                    }
                }
                ("path" | "scip" | "file", Value::Null) => self.index.path = None,
                ("refresh", Value::Bool(b)) => self.index.refresh = b,
                ("path" | "scip" | "file" | "refresh", other) => {
                    return Err(invalid(format!(
                        "\"index.{key}\" must be {}, not {other}",
                        if canon(&key) == "refresh" {
                            "true or false"
                        } else {
                            "a path to an index.scip"
                        }
                    )));
                }
                _ => self.warnings.push(format!(
                    "{}: unknown key \"index.{key}\" ignored",
                    path.display()
                )),
            }
        }
        Ok(())
    }

    fn apply_servers(
        &mut self,
        path: &Path,
        key: &str,
        value: Value,
        linters: bool,
        insert_at: &mut usize,
    ) -> Result<(), ConfigError> {
        match value {
            Value::Object(map) => {
                for (id, entry) in map {
                    self.apply_server(path, &id, entry, linters, insert_at)?;
                }
            }
            Value::Array(items) => {
                for (i, item) in items.into_iter().enumerate() {
                    let id = item.get("id").and_then(Value::as_str).map(str::to_string);
                    let Some(id) = id else {
                        return Err(ConfigError::Invalid {
                            path: path.to_path_buf(),
                            message: format!("\"{key}\"[{i}] needs a string \"id\""),
                        });
                    };
                    self.apply_server(path, &id, item, linters, insert_at)?;
                }
            }
            Value::Null => {}
            other => {
                return Err(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    message: format!(
                        "\"{key}\" must be an object of servers by id, not {}",
                        type_name(&other)
                    ),
                });
            }
        }
        Ok(())
    }

    fn apply_server(
        &mut self,
        path: &Path,
        id: &str,
        entry: Value,
        linters: bool,
        insert_at: &mut usize,
    ) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        if id.trim().is_empty() {
            return Err(invalid("a server has an empty id".into()));
        }
        let mut obj = match entry {
            Value::Object(o) => self.normalise_server(path, id, o)?,
            Value::Bool(enabled) => Map::from_iter([("disabled".into(), Value::Bool(!enabled))]),
            Value::Null => Map::from_iter([("disabled".into(), Value::Bool(true))]),
            other => {
                return Err(invalid(format!(
                    "server \"{id}\" must be an object, not {}",
                    type_name(&other)
                )));
            }
        };
        if self.untrusted {
            let is_new = !self.entries.iter().any(|e| e.id == id);
            if !trust::restrict_server(path, id, &mut obj, is_new, &mut self.ignored) {
                return Ok(());
            }
        }
        self.named.insert(id.to_string());
        let pos = self.entries.iter().position(|e| e.id == id);
        let index = match pos {
            Some(i) => {
                deep_merge(&mut self.entries[i].value, Value::Object(obj));
                i
            }
            None => {
                let has_command = obj
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| !c.trim().is_empty());
                if !has_command {
                    return Err(invalid(format!(
                        "server \"{id}\" is not a known server and has no \"command\" \
                         (to override a built-in use its id: {})",
                        catalog::builtins()
                            .iter()
                            .map(|s| s.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                if linters && !obj.contains_key("isLinter") {
                    obj.insert("isLinter".into(), Value::Bool(true));
                }
                if !obj.contains_key("kind")
                    && (obj.contains_key("parser") || obj.contains_key("mode"))
                {
                    obj.insert("kind".into(), Value::String("cli".into()));
                }
                obj.insert("id".into(), Value::String(id.to_string()));
                self.entries.insert(
                    *insert_at,
                    Entry {
                        id: id.to_string(),
                        value: Value::Object(obj),
                        spec: ServerSpec::default(),
                    },
                );
                self.known.insert(id.to_string());
                *insert_at += 1;
                *insert_at - 1
            }
        };
        let entry = &mut self.entries[index];
        let spec: ServerSpec = serde_json::from_value(entry.value.clone())
            .map_err(|e| invalid(format!("server \"{id}\": {e}")))?;
        if spec.command.trim().is_empty() {
            return Err(invalid(format!("server \"{id}\" has an empty \"command\"")));
        }
        entry.spec = spec;
        Ok(())
    }

    /// Canonical key names and the liberal value forms (see module docs).
    fn normalise_server(
        &mut self,
        path: &Path,
        id: &str,
        obj: Map<String, Value>,
    ) -> Result<Map<String, Value>, ConfigError> {
        let mut out = Map::new();
        let mut extra_args: Option<Vec<Value>> = None;
        for (key, value) in obj {
            let Some(k) = server_key(&key) else {
                self.warnings.push(format!(
                    "{}: server \"{id}\": unknown key \"{key}\" ignored",
                    path.display()
                ));
                continue;
            };
            match (k, value) {
                ("id", v) => {
                    if v.as_str() != Some(id) {
                        self.warnings.push(format!(
                            "{}: server \"{id}\": \"id\" {v} ignored (the key names the server)",
                            path.display()
                        ));
                    }
                }
                ("enabled", Value::Bool(b)) => {
                    out.insert("disabled".into(), Value::Bool(!b));
                }
                ("command", Value::Array(mut parts)) => {
                    if parts.is_empty() {
                        continue;
                    }
                    let first = parts.remove(0);
                    out.insert("command".into(), first);
                    extra_args = Some(parts);
                }
                ("args", Value::String(s)) => {
                    out.insert("args".into(), split_list(&s, false));
                }
                ("fileTypes" | "rootMarkers" | "languages", Value::String(s)) => {
                    out.insert(k.into(), split_list(&s, true));
                }
                (k, v) => {
                    out.insert(k.into(), v);
                }
            }
        }
        if let Some(mut parts) = extra_args {
            if let Some(Value::Array(args)) = out.remove("args") {
                parts.extend(args);
            }
            out.insert("args".into(), Value::Array(parts));
        }
        if let Some(Value::Array(fts)) = out.get_mut("fileTypes") {
            for ft in fts.iter_mut() {
                if let Value::String(s) = ft {
                    let t = s.trim();
                    let t = t.strip_prefix('*').unwrap_or(t);
                    let t = t.strip_prefix('.').unwrap_or(t);
                    *s = t.to_string();
                }
            }
        }
        Ok(out)
    }

    fn apply_limits(&mut self, path: &Path, value: Value) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let Value::Object(map) = value else {
            return Err(invalid(format!(
                "\"limits\" must be an object, not {}",
                type_name(&value)
            )));
        };
        for (key, v) in map {
            let slot = match canon(&key).as_str() {
                "maxlocations" => 0,
                "maxchars" => 1,
                "timeoutms" | "timeout" => 2,
                "maxopendocuments" => 3,
                "maxdiagnostics" => 4,
                "diagnosticsdeltams" => 5,
                "serveridlems" => 6,
                "maxservers" => 7,
                "maxfilebytes" => 8,
                "servermemorymib" => 9,
                "memorybudgetmib" => 10,
                "memorycheckms" => 11,
                "indexrefreshidlems" => 12,
                _ => {
                    self.warnings.push(format!(
                        "{}: unknown key \"limits.{key}\" ignored",
                        path.display()
                    ));
                    continue;
                }
            };
            let n = v
                .as_u64()
                .or_else(|| {
                    v.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                        .map(|f| f as u64)
                })
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    invalid(format!(
                        "\"limits.{key}\" must be a positive integer, not {v}"
                    ))
                })?;
            let size = usize::try_from(n).unwrap_or(usize::MAX);
            match slot {
                0 => self.limits.max_locations = size,
                1 => self.limits.max_chars = size,
                2 => self.limits.timeout_ms = n,
                3 => self.limits.max_open_documents = size,
                4 => self.limits.max_diagnostics = size,
                5 => self.limits.diagnostics_delta_ms = n,
                6 => self.limits.server_idle_ms = n,
                7 => self.limits.max_servers = size,
                8 => self.limits.max_file_bytes = n,
                9 => self.limits.server_memory_mib = n,
                10 => self.limits.memory_budget_mib = n,
                11 => self.limits.memory_check_ms = n,
                _ => self.limits.index_refresh_idle_ms = n,
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Config {
        if !self.auto_detect {
            let named = &self.named;
            self.entries.retain(|e| named.contains(&e.id));
        }
        let mut warnings = self.warnings;
        for e in &self.entries {
            let s = &e.spec;
            if s.file_types.is_empty() && !s.disabled {
                warnings.push(format!(
                    "server \"{}\" has no fileTypes and will never be used",
                    s.id
                ));
            }
            if let Some(p) = &s.alternative_to
                && !self.known.contains(p)
            {
                warnings.push(format!(
                    "server \"{}\" is an alternative to unknown server \"{p}\"",
                    s.id
                ));
            }
        }
        Config {
            servers: self.entries.into_iter().map(|e| e.spec).collect(),
            limits: self.limits,
            sources: self.sources,
            warnings,
            trust: TrustState::default(),
            index: self.index,
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Blank out `//` and `/* */` comments and trailing commas (and a BOM),
/// keeping every other byte where it was so that error positions still
/// match the file.
pub(crate) fn strip_jsonc(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    if !b.iter().any(|&c| c == b'/' || c == b',') && !text.starts_with('\u{feff}') {
        return Cow::Borrowed(text);
    }
    let mut out = b.to_vec();
    let mut i = 0;
    if text.starts_with('\u{feff}') {
        out[..3].fill(b' ');
        i = 3;
    }
    let mut in_str = false;
    let mut last_comma: Option<usize> = None;
    while i < b.len() {
        let c = b[i];
        if in_str {
            match c {
                b'\\' => i += 2,
                b'"' => {
                    in_str = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match (c, b.get(i + 1)) {
            (b'"', _) => {
                in_str = true;
                last_comma = None;
            }
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                out[i] = b' ';
                out[i + 1] = b' ';
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    if b[i] != b'\n' && b[i] != b'\r' {
                        out[i] = b' ';
                    }
                    i += 1;
                }
                if i < b.len() {
                    out[i] = b' ';
                    out[i + 1] = b' ';
                    i += 2;
                }
                continue;
            }
            (b',', _) => last_comma = Some(i),
            (b'}' | b']', _) => {
                if let Some(k) = last_comma.take() {
                    out[k] = b' ';
                }
            }
            (c, _) if c.is_ascii_whitespace() => {}
            _ => last_comma = None,
        }
        i += 1;
    }
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(text),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog::ProviderKind;
    use std::collections::HashMap;
    use std::ffi::OsString;
    use std::fs;

    /// Layers from (path, text) pairs.
    pub(crate) fn layers(items: &[(&str, &str)]) -> Vec<(PathBuf, String)> {
        items
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect()
    }

    /// The ids of the specs, in order.
    pub(crate) fn ids(specs: &[&ServerSpec]) -> Vec<String> {
        specs.iter().map(|s| s.id.clone()).collect()
    }

    #[test]
    fn no_layers_is_builtins() {
        let c = Config::from_layers(&[]).unwrap();
        assert_eq!(c.servers, catalog::builtins());
        assert_eq!(c.limits, Limits::default());
        assert!(c.sources.is_empty() && c.warnings.is_empty());
        assert_eq!(c.limits.max_chars, 16000);
    }

    #[test]
    fn layering_user_then_project() {
        let user = r#"{
            "servers": {
                "pyright": { "settings": { "python": { "analysis": { "typeCheckingMode": "strict" } } } },
                "gopls": { "disabled": true },
                "my-lsp": { "command": "my-lsp", "args": ["--stdio"], "fileTypes": [".foo", "*.bar"] }
            },
            "autoDetect": false,
            "limits": { "maxLocations": 50, "timeoutMs": 20000 }
        }"#;
        let project = r#"{
            // project overrides
            "servers": {
                "pyright": { "settings": { "python": { "analysis": { "diagnosticMode": "workspace" } } } },
                "my-lsp": { "env": { "A": "1" } },
            },
            "autoDetect": true,
            "limits": { "maxChars": 8000 },
        }"#;
        let c = Config::from_layers(&layers(&[
            ("/home/u/.config/scry/config.json", user),
            ("/ws/.scry.json", project),
        ]))
        .unwrap();
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(c.sources.len(), 2);
        let analysis = &c.server("pyright").unwrap().settings["python"]["analysis"];
        assert_eq!(analysis["typeCheckingMode"], "strict");
        assert_eq!(analysis["diagnosticMode"], "workspace");
        assert_eq!(analysis["autoSearchPaths"], true);
        // untouched fields survive the merge
        assert_eq!(c.server("pyright").unwrap().args, ["--stdio"]);
        assert!(c.server("gopls").unwrap().disabled);
        let my = c.server("my-lsp").unwrap();
        assert_eq!(my.file_types, ["foo", "bar"]);
        assert_eq!(my.env["A"], "1");
        assert_eq!(my.kind, ProviderKind::Lsp);
        // new servers go first; autoDetect true again keeps the built-ins
        assert_eq!(c.servers[0].id, "my-lsp");
        assert!(c.server("rust-analyzer").is_some());
        assert_eq!(
            c.limits,
            Limits {
                max_locations: 50,
                max_chars: 8000,
                timeout_ms: 20000,
                max_open_documents: 200,
                ..Limits::default()
            }
        );
        let all = |_: &ServerSpec| true;
        assert!(c.servers_for(Path::new("/ws/main.go"), &all).is_empty());
        assert_eq!(
            ids(&c.servers_for(Path::new("/ws/x.foo"), &all)),
            ["my-lsp"]
        );
    }

    #[test]
    fn auto_detect_false_keeps_only_named() {
        let c = Config::from_layers(&layers(&[
            ("/u.json", r#"{"servers": {"pyright": {}}}"#),
            (
                "/p.json",
                r#"{"autoDetect": false, "servers": {"x": {"command": "x", "fileTypes": ["x"]}}}"#,
            ),
        ]))
        .unwrap();
        let mut got: Vec<_> = c.servers.iter().map(|s| s.id.as_str()).collect();
        got.sort();
        assert_eq!(got, ["pyright", "x"]);
        // the last layer that sets it wins
        let c = Config::from_layers(&layers(&[
            ("/u.json", r#"{"autoDetect": false}"#),
            ("/p.json", r#"{"servers": {}}"#),
        ]))
        .unwrap();
        assert!(c.servers.is_empty());
    }

    #[test]
    fn single_quote_is_char_is_catalog_data() {
        let c = Config::default();
        assert!(c.server("rust-analyzer").unwrap().single_quote_is_char);
        assert!(!c.server("pyright").unwrap().single_quote_is_char);
        let text = r#"{"servers": {"my-rust": {"command": "ra2", "fileTypes": ["rs"],
            "single_quote_is_char": true}}}"#;
        let c = Config::from_layers(&layers(&[("/ws/scry.json", text)])).unwrap();
        assert!(c.server("my-rust").unwrap().single_quote_is_char);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn liberal_forms() {
        let text = "\u{feff}{
            \"lsp_servers\": {
                \"rust-analyzer\": false,
                \"tool\": { \"cmd\": [\"tool\", \"--stdio\"], \"args\": \"-v\", \"extensions\": \"ts, .tsx\", \"enabled\": true, \"colour\": 1 },
                /* block
                   comment */
                \"yaml-language-server\": { \"enabled\": false },
            },
            \"linters\": [ { \"id\": \"mylint\", \"command\": \"mylint\", \"parser\": \"sarif\", \"fileTypes\": [\"ts\"] } ],
            \"theme\": \"dark\", // unknown
        }";
        let c = Config::from_layers(&layers(&[("/ws/scry.json", text)])).unwrap();
        assert!(c.server("rust-analyzer").unwrap().disabled);
        assert!(c.server("yaml-language-server").unwrap().disabled);
        let tool = c.server("tool").unwrap();
        assert_eq!(tool.command, "tool");
        assert_eq!(tool.args, ["--stdio", "-v"]);
        assert_eq!(tool.file_types, ["ts", "tsx"]);
        let lint = c.server("mylint").unwrap();
        assert!(lint.is_linter);
        assert_eq!(lint.kind, ProviderKind::Cli);
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        assert!(c.warnings.iter().any(|w| w.contains("\"theme\"")));
        assert!(c.warnings.iter().any(|w| w.contains("\"colour\"")));
        // new servers, in written order, ahead of the built-ins
        assert_eq!(c.servers[0].id, "tool");
        assert_eq!(c.servers[1].id, "mylint");
        let all = |_: &ServerSpec| true;
        let ts = Path::new("a.ts");
        assert_eq!(
            ids(&c.servers_for(ts, &all)),
            ["tool", "typescript-language-server"]
        );
        assert_eq!(
            ids(&c.providers_for(ts, true, &all)),
            ["tool", "mylint", "typescript-language-server", "eslint"]
        );
        // strings keep their slashes, commas and comment look-alikes
        let c = Config::from_layers(&layers(&[(
            "/p.json",
            r#"{"servers": {"pyright": {"args": ["--x=//y,", "/*z*/]"]}}}"#,
        )]))
        .unwrap();
        assert_eq!(c.server("pyright").unwrap().args, ["--x=//y,", "/*z*/]"]);
    }

    #[test]
    fn parse_error_names_path_and_line() {
        let text = "{\n  \"servers\": {\n    \"pyright\": { \"args\": [\"a\" \"b\"] }\n  }\n}";
        let err = Config::from_layers(&layers(&[("/ws/.scry.json", text)])).unwrap_err();
        match &err {
            ConfigError::Parse { path, line, .. } => {
                assert_eq!(path, Path::new("/ws/.scry.json"));
                assert_eq!(*line, 3);
            }
            other => panic!("{other:?}"),
        }
        let msg = err.to_string();
        assert!(msg.contains("/ws/.scry.json:3:"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        // comments before the error do not shift the position
        let text = "// c\n/* x\n y */ {\n \"a\": }";
        match Config::from_layers(&layers(&[("/f", text)])).unwrap_err() {
            ConfigError::Parse { line, column, .. } => assert_eq!((line, column), (4, 7)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn memory_caps_come_from_the_catalogue_and_are_overridden_by_layers() {
        let c = Config::default();
        let limits = Limits::default();
        assert_eq!(
            (
                limits.server_memory_mib,
                limits.memory_budget_mib,
                limits.memory_check_ms
            ),
            (4096, 16384, 2000)
        );
        let ra = c.server("rust-analyzer").unwrap();
        assert_eq!(ra.memory_mib, Some(8192));
        assert_eq!(ra.memory_cap_kib(&c.limits), 8192 * 1024);
        // No catalogue cap: the global default.
        let gopls = c.server("gopls").unwrap();
        assert_eq!(gopls.memory_mib, None);
        assert_eq!(gopls.memory_cap_kib(&c.limits), 4096 * 1024);
        let c = Config::from_layers(&layers(&[
            (
                "/u.json",
                r#"{"servers": {"rust-analyzer": {"memoryMiB": 12288}},
                    "limits": {"serverMemoryMiB": 2048, "memoryBudgetMiB": 8192}}"#,
            ),
            (
                "/ws/scry.json",
                r#"{"servers": {"gopls": {"memory_mib": 1500}}, "limits": {"memoryCheckMs": 500}}"#,
            ),
        ]))
        .unwrap();
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        assert_eq!(c.server("rust-analyzer").unwrap().memory_mib, Some(12288));
        assert_eq!(
            c.server("gopls").unwrap().memory_cap_kib(&c.limits),
            1500 * 1024
        );
        assert_eq!(
            c.server("clangd").unwrap().memory_cap_kib(&c.limits),
            2048 * 1024
        );
        assert_eq!(
            (c.limits.memory_budget_mib, c.limits.memory_check_ms),
            (8192, 500)
        );
        let bad = Config::from_layers(&layers(&[(
            "/ws/scry.json",
            r#"{"limits": {"memoryBudgetMiB": 0}}"#,
        )]));
        assert!(matches!(bad, Err(ConfigError::Invalid { .. })), "{bad:?}");
    }

    #[test]
    fn invalid_configs() {
        let bad = |text: &str| match Config::from_layers(&layers(&[("/ws/scry.json", text)])) {
            Err(ConfigError::Invalid { path, message }) => {
                assert_eq!(path, Path::new("/ws/scry.json"));
                message
            }
            other => panic!("{text}: {other:?}"),
        };
        let m = bad(r#"{"servers": {"my-lsp": {"fileTypes": ["foo"]}}}"#);
        assert!(m.contains("\"my-lsp\"") && m.contains("command"), "{m}");
        let m = bad(r#"{"servers": {"pyright": {"args": 3}}}"#);
        assert!(m.contains("\"pyright\""), "{m}");
        let m = bad(r#"{"servers": {"pyright": {"kind": "grpc"}}}"#);
        assert!(m.contains("\"pyright\""), "{m}");
        let m = bad(r#"{"servers": {"pyright": {"command": ""}}}"#);
        assert!(m.contains("empty"), "{m}");
        let m = bad(r#"{"limits": {"maxChars": 0}}"#);
        assert!(m.contains("maxChars"), "{m}");
        bad(r#"{"autoDetect": "no"}"#);
        bad(r#"[1, 2]"#);
        bad(r#"{"servers": 3}"#);
        // an empty file is no configuration
        let c = Config::from_layers(&layers(&[("/e.json", "  \n")])).unwrap();
        assert_eq!(c.servers.len(), catalog::builtins().len());
    }

    #[test]
    fn load_reads_user_then_project_files() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let xdg = tmp.path().join("xdg");
        fs::create_dir_all(ws.join(".scry")).unwrap();
        fs::create_dir_all(xdg.join("scry")).unwrap();
        fs::write(
            xdg.join("scry/config.json"),
            r#"{"limits": {"maxChars": 1000, "maxLocations": 7, "maxDiagnostics": 9}}"#,
        )
        .unwrap();
        fs::write(ws.join("scry.json"), r#"{"limits": {"maxChars": 2000}}"#).unwrap();
        fs::write(
            ws.join(".scry/config.json"),
            r#"{"servers": {"gopls": {"disabled": true}}}"#,
        )
        .unwrap();
        let vars: HashMap<&str, OsString> = HashMap::from([
            ("XDG_CONFIG_HOME", xdg.clone().into_os_string()),
            ("HOME", tmp.path().join("home").into_os_string()),
        ]);
        let env = |k: &str| vars.get(k).cloned();
        let c = load_with_env(&ws, &env).unwrap();
        assert_eq!(
            c.sources,
            [
                xdg.join("scry/config.json"),
                ws.join("scry.json"),
                ws.join(".scry/config.json")
            ]
        );
        assert_eq!((c.limits.max_chars, c.limits.max_locations), (2000, 7));
        assert_eq!(c.limits.max_diagnostics, 9);
        assert_eq!(c.limits.diagnostics_delta_ms, 2000);
        assert!(c.server("gopls").unwrap().disabled);

        // explicit $SCRY_CONFIG wins and must exist
        let missing = tmp.path().join("nope.json");
        let vars2: HashMap<&str, OsString> =
            HashMap::from([("SCRY_CONFIG", missing.clone().into_os_string())]);
        let env2 = |k: &str| vars2.get(k).cloned();
        match load_with_env(&ws, &env2) {
            Err(ConfigError::Read { path, .. }) => assert_eq!(path, missing),
            other => panic!("{other:?}"),
        }
        // HOME fallback when XDG is unset or relative
        let vars3: HashMap<&str, OsString> = HashMap::from([
            ("XDG_CONFIG_HOME", OsString::from("rel")),
            ("HOME", OsString::from("/h")),
        ]);
        let env3 = |k: &str| vars3.get(k).cloned();
        assert_eq!(
            crate::dirs::user_config_with(&env3),
            Some((PathBuf::from("/h/.config/scry/config.json"), false))
        );
        assert_eq!(crate::dirs::user_config_with(&|_| None), None);
    }

    #[test]
    fn untrusted_project_layers_cannot_choose_what_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let xdg = tmp.path().join("xdg");
        fs::create_dir_all(&ws).unwrap();
        fs::create_dir_all(xdg.join("scry")).unwrap();
        fs::write(
            xdg.join("scry/config.json"),
            r#"{"servers": {"mine": {"command": "mine-lsp", "fileTypes": ["m"]}}}"#,
        )
        .unwrap();
        fs::write(
            ws.join(".scry.json"),
            r#"{"servers": {
                "pyright": {"command": "./evil", "args": ["x"], "env": {"A": "1"},
                            "settings": {"python": {"pythonPath": "./evil-python"}},
                            "initializationOptions": {"x": 1}},
                "gopls": {"disabled": true},
                "mine": {"cmd": ["./evil2", "--stdio"], "fileTypes": ["m", "mm"]},
                "evil": {"command": "./evil3", "fileTypes": ["py"]}
              },
              "linters": {"evil-lint": {"command": "./evil4", "fileTypes": ["py"], "parser": "generic"}},
              "trustedRoots": ["/"],
              "index": {"path": "build/index.scip", "refresh": false},
              "limits": {"maxChars": 1234, "indexRefreshIdleMs": 5000}}"#,
        )
        .unwrap();
        let vars: HashMap<&str, OsString> = HashMap::from([
            ("XDG_CONFIG_HOME", xdg.clone().into_os_string()),
            ("SCRY_STATE_DIR", tmp.path().join("state").into_os_string()),
        ]);
        let env = |k: &str| vars.get(k).cloned();
        let c = load_with(&ws, &env, TrustPolicy::FromEnvironment).unwrap();
        assert_eq!(c.trust.trust, trust::Trust::Untrusted { revoked: false });
        let builtin = catalog::builtins();
        let py = builtin.iter().find(|s| s.id == "pyright").unwrap();
        let pyright = c.server("pyright").unwrap();
        assert_eq!((&pyright.command, &pyright.args), (&py.command, &py.args));
        assert!(pyright.env.is_empty());
        // settings and initializationOptions name what the server runs:
        // ignored; disabled, limits and file types apply without trust
        assert_eq!(pyright.settings, py.settings);
        assert_eq!(pyright.initialization_options, py.initialization_options);
        assert!(c.server("gopls").unwrap().disabled);
        assert_eq!(c.limits.max_chars, 1234);
        let mine = c.server("mine").unwrap();
        assert_eq!(mine.command, "mine-lsp");
        assert!(mine.args.is_empty());
        assert_eq!(mine.file_types, ["m", "mm"]);
        assert!(c.server("evil").is_none() && c.server("evil-lint").is_none());
        let what: Vec<&str> = c.trust.ignored.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(
            what,
            [
                "server \"pyright\": command, args, env, settings, initializationOptions",
                "server \"mine\": command, args",
                "new server \"evil\"",
                "new server \"evil-lint\"",
                "index.path \"build/index.scip\""
            ]
        );
        // the index it names is not read; its refresh switch and idle time
        // (nothing they run is the project's) apply
        assert_eq!(c.index.path, None);
        assert!(!c.index.refresh);
        assert_eq!(c.limits.index_refresh_idle_ms, 5000);
        assert!(
            c.warnings.iter().any(|w| w.contains("trustedRoots")),
            "{:?}",
            c.warnings
        );
        assert_eq!(c.trust.project_files, [ws.join(".scry.json")]);

        // trusted: everything applies
        let t = load_with(&ws, &env, TrustPolicy::Trusted).unwrap();
        assert_eq!(t.server("pyright").unwrap().command, "./evil");
        assert_eq!(
            t.server("pyright").unwrap().settings["python"]["pythonPath"],
            "./evil-python"
        );
        assert_eq!(t.server("evil-lint").unwrap().command, "./evil4");
        assert!(t.trust.ignored.is_empty());
        assert_eq!(
            t.index.path,
            Some((PathBuf::from("build/index.scip"), ws.join(".scry.json")))
        );

        // the user's trustedRoots trusts the workspace
        fs::write(
            xdg.join("scry/config.json"),
            format!(r#"{{"trustedRoots": ["{}"]}}"#, tmp.path().display()),
        )
        .unwrap();
        let u = load_with(&ws, &env, TrustPolicy::FromEnvironment).unwrap();
        assert!(
            matches!(u.trust.trust, trust::Trust::UserRoot(_)),
            "{:?}",
            u.trust
        );
        assert_eq!(u.server("evil").unwrap().command, "./evil3");
    }

    #[test]
    fn the_configured_index_stays_inside_the_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let ws = root.join("ws");
        fs::create_dir_all(ws.join("build")).unwrap();
        fs::write(root.join("outside.scip"), b"x").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("outside.scip"), ws.join("build/link.scip")).unwrap();
        let with = |p: &str| {
            Config::from_layers(&[(
                ws.join(".scry.json"),
                format!(r#"{{"index": {{"path": "{p}"}}}}"#),
            )])
            .unwrap()
        };
        assert_eq!(Config::default().index_path(&ws), Ok(None));
        assert_eq!(
            with("build/index.scip").index_path(&ws),
            Ok(Some(ws.join("build/index.scip")))
        );
        for bad in ["../outside.scip", "/etc/passwd", "build/link.scip"] {
            let e = with(bad).index_path(&ws).unwrap_err();
            assert!(e.contains("outside the workspace"), "{bad}: {e}");
            assert!(e.contains(".scry.json"), "{e}");
        }
        let e =
            Config::from_layers(&[(ws.join(".scry.json"), r#"{"index": {"refresh": 1}}"#.into())])
                .unwrap_err();
        assert!(e.to_string().contains("index.refresh"), "{e}");
    }
}
