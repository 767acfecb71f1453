//! Layered JSON configuration.
//!
//! # Layers
//!
//! Later layers win:
//!
//! 1. the built-in catalogue ([`crate::catalog::builtins`]);
//! 2. the user file: `$SCRY_CONFIG` if set, else
//!    `$XDG_CONFIG_HOME/scry/config.json`, else `$HOME/.config/scry/config.json`
//!    (see [`scry_base::dirs::user_config`]);
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
//! servers) and the index it names (`index.path`, `index.remote`) are ignored, and
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
//!     "rust-analyzer": { "memoryMiB": 12288 },
//!     // How a server's root is chosen (`catalog::ProjectRoot`):
//!     // "workspace" (the default: the project's own workspace files, the
//!     // catalogue's `workspaces`), "package" (the nearest root marker) or
//!     // "root" (the scry workspace root for every file); more workspace
//!     // files: "workspaces": [{"file": "x.work", "members": ["use"]}].
//!     "typescript-language-server": { "projectRoot": { "strategy": "root" } }
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
//!               "indexRefreshIdleMs": 120000,
//!               // the file watcher: directories watched; the others are
//!               // polled before each request
//!               "maxWatchedDirs": 10000,
//!               // while the server loads, a labelled lower answer after
//!               // this long (only with the default budget)
//!               "earlyAnswerMs": 2000 },
//!   // SCIP index (see [`IndexConfig`]): a CI-built index.scip read as is
//!   // (a path inside the workspace, relative to its root; from a project
//!   // file only when the workspace is trusted), and whether the daemon
//!   // rebuilds the `scry index` one in the background (default true; it
//!   // only ever runs where an indexer is installed)
//!   "index": { "path": "build/index.scip", "refresh": true,
//!              // an index CI publishes per commit: HEAD's, else the
//!              // nearest ancestor's (`ancestors` back), its `.sha256`
//!              // checked when there is one; the header's value is read
//!              // from the environment variable named, never from a file
//!              "remote": { "url": "https://ci.example/scip/{commit}.scip",
//!                          "header": { "name": "Authorization", "env": "SCRY_INDEX_TOKEN" },
//!                          "stallMs": 15000, "ancestors": 50, "maxBytes": 2147483648 } }
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

use std::io;
use std::path::{Path, PathBuf};

use scry_model::limits;
use serde::{Deserialize, Serialize};

use crate::catalog::{self, ServerSpec};
use crate::trust::{TrustPolicy, TrustState};

mod layers;
mod merge;
#[cfg(test)]
pub(crate) mod tests;

pub(crate) use layers::load_with;
#[cfg(test)]
pub(crate) use layers::load_with_env;
pub use layers::{ConfigStamp, project_layers};
use merge::Builder;

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
    /// How many directories the file watcher watches (default 10,000);
    /// the others are polled before each request ([`crate::watch`]).
    #[serde(default = "default_max_watched_dirs")]
    pub max_watched_dirs: usize,
    /// After this long (milliseconds, default 2000), a question asked with
    /// the default budget is given a lower source's answer (the SCIP
    /// index's, the syntactic one), labelled, while the server that would
    /// answer is still starting, loading or indexing.
    #[serde(default = "default_early_answer_ms")]
    pub early_answer_ms: u64,
}

impl ServerSpec {
    /// The memory cap in KiB: the server's `memoryMiB`, else the default
    /// of `limits`. (Here, beside [`Limits`], so that the catalogue needs
    /// nothing from the configuration.)
    pub fn memory_cap_kib(&self, limits: &Limits) -> u64 {
        self.memory_mib
            .unwrap_or(limits.server_memory_mib)
            .saturating_mul(1024)
    }
}

fn default_index_refresh_idle_ms() -> u64 {
    120_000
}

fn default_early_answer_ms() -> u64 {
    2000
}

fn default_max_watched_dirs() -> usize {
    crate::watch::MAX_DIRS
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
    /// A CI-built index fetched by commit (`"remote"`), and the file that
    /// set it. A project file's is honoured only in a trusted workspace,
    /// as `path` is.
    pub remote: Option<(RemoteIndex, PathBuf)>,
}

/// `"index": {"remote": {…}}`: where CI publishes an index per commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteIndex {
    /// The URL template: `{commit}` is a full commit hash; its scheme is
    /// `https`, `http` or `file`.
    pub url: String,
    /// A request header (`name`) whose value is read from the environment
    /// variable `env` at each fetch: never a secret in a file.
    pub header: Option<RemoteHeader>,
    /// How long the server may send nothing before the fetch is given up
    /// (default [`limits::REMOTE_INDEX_STALL_MS`]).
    pub stall_ms: u64,
    /// How many commits back from HEAD an index is looked for (default
    /// [`limits::MAX_REMOTE_INDEX_ANCESTORS`], at most that).
    pub ancestors: u32,
    /// The largest index fetched (default and at most
    /// [`limits::MAX_REMOTE_INDEX_BYTES`]).
    pub max_bytes: u64,
}

/// A request header of a remote index: its name and the environment
/// variable holding its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteHeader {
    pub name: String,
    pub env: String,
}

impl RemoteIndex {
    /// The template's URL for `commit`.
    pub fn url_for(&self, commit: &str) -> String {
        self.url.replace("{commit}", commit)
    }

    /// The template as shown in notes: without its query (which may hold
    /// a token) and credentials.
    pub fn shown(&self) -> String {
        let no_query = self.url.split(['?', '#']).next().unwrap_or("");
        match no_query.split_once("://") {
            Some((scheme, rest)) => match rest.split_once('/') {
                Some((auth, path)) => {
                    let host = auth.rsplit('@').next().unwrap_or(auth);
                    format!("{scheme}://{host}/{path}")
                }
                None => format!("{scheme}://{}", rest.rsplit('@').next().unwrap_or(rest)),
            },
            None => no_query.to_string(),
        }
    }

    /// The host (and port, when given) the template names; empty for
    /// `file:`.
    pub fn host(&self) -> String {
        let rest = self.url.split_once("://").map_or("", |(_, r)| r);
        let auth = rest.split(['/', '?', '#']).next().unwrap_or("");
        auth.rsplit('@').next().unwrap_or(auth).to_string()
    }
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            path: None,
            refresh: true,
            remote: None,
        }
    }
}

fn default_max_file_bytes() -> u64 {
    scry_base::disk::DEFAULT_MAX_FILE_BYTES
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
            max_watched_dirs: default_max_watched_dirs(),
            early_answer_ms: default_early_answer_ms(),
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
    /// (symlinks resolved: [`scry_base::paths::confine`]), else why it is not
    /// read. `Ok(None)` when none is configured.
    pub fn index_path(&self, root: &Path) -> Result<Option<PathBuf>, String> {
        let Some((path, file)) = &self.index.path else {
            return Ok(None);
        };
        scry_base::paths::confine(root, path)
            .map(Some)
            .map_err(|_| {
                format!(
                    "index.path \"{}\" ({}) is outside the workspace: not read",
                    path.display(),
                    scry_base::paths::display(file, root)
                )
            })
    }
}
