//! What `status`, `doctor` and `daemon status` report, as data (re-exported
//! at the crate root, their one name: `scry_model::StatusReport`, …): the
//! configured servers and their processes, the syntactic and SCIP indexes,
//! the index's background refresh and indexers, what the memory policy did,
//! the set-up check (`doctor`) and the shared daemon's servers.
//!
//! Invariants: no sentence is made here (scry-render's `reports` words
//! every one of these, text and JSON alike); every path is absolute (as
//! resolved or as found), shown relative by the reader; times are seconds
//! since the Unix epoch (`*_secs`, `at_secs`) or spans in seconds or
//! milliseconds, never worded ages; amounts of memory are KiB, one name
//! per fact: `memory_kib` (a process tree's resident memory),
//! `memory_cap_kib` (its cap), `memory_budget_kib` (all servers').

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{MemoryAction, Reason, Trust, TrustNotice};

// ------------------------------------------------------------------ status

/// The answer to `status`: starts nothing, says what is configured, what
/// runs and what the indexes hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusReport {
    #[serde(with = "crate::os_path")]
    pub workspace_root: PathBuf,
    pub servers: Vec<ProviderStatus>,
    /// Configuration problems and warnings (missing servers, bad config).
    pub warnings: Vec<String>,
    /// What the untrusted workspace ignored, with how to trust (said
    /// after the warnings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_ignored: Option<TrustNotice>,
    /// The syntactic index: files indexed in this process, cache size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syntactic: Option<SyntacticStatus>,
    /// The SCIP index: source, age, files covered, changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexStatus>,
    /// Why the SCIP index is not read or not usable (in place of
    /// `index`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_problem: Option<Reason>,
    /// The daemon's background refresh of the SCIP index: running, or its
    /// last outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_refresh: Option<RefreshStatus>,
    /// The SCIP indexers of the workspace's languages: installed (where)
    /// or missing (how to install).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexers: Vec<IndexerStatus>,
    /// What the memory policy did lately (restarts over a cap, stops over
    /// the budget), oldest first, each with its time and figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_events: Vec<MemoryNote>,
    /// The memory budget of all servers together, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_budget_kib: Option<u64>,
    /// The file watcher, when it cannot watch every directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watcher: Option<Box<WatcherStatus>>,
}

/// What the file watcher watches, and what it polls instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatcherStatus {
    /// Directories watched.
    pub watched: usize,
    /// Directories polled before each request instead.
    pub polled: usize,
    /// Directories past the polling bound: changes there are not seen.
    pub dropped: usize,
    /// Why directories are polled (the first reason: the bound, the
    /// system's refusal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// A configured provider as `status` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderStatus {
    pub id: String,
    /// `lsp` (a language server, kept running) or `cli` (a linter run per
    /// diagnostics call).
    pub kind: String,
    /// The command (argv[0]) as configured.
    pub command: String,
    /// Where the command was found, `None` when it is not installed.
    #[serde(
        with = "crate::os_path::opt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub installed: Option<PathBuf>,
    pub file_types: Vec<String>,
    pub disabled: bool,
    /// What it is used for when that is not plainly a language server's
    /// answers (said as its `note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ProviderRole>,
    pub running: Vec<RunningServer>,
}

/// How a configured provider is used, when not as the language's server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderRole {
    /// Stands in for `primary`: used only when that is not installed.
    AlternativeTo { primary: String },
    /// A command-line linter run per diagnostics call.
    CliLinter,
    /// A language server that only lints.
    Linter,
}

/// One running (or starting) server process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningServer {
    /// Its first folder (the `rootUri` it was started with).
    #[serde(with = "crate::os_path")]
    pub root: PathBuf,
    /// Every folder it serves (the root first), each with what chose it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folders: Vec<Folder>,
    /// Where it finds the programs it runs from its `PATH`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<PathProgram>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub state: RunState,
    /// Negotiated position encoding ("utf-16", ...), once initialized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    pub open_documents: usize,
    /// Resident memory of its whole process tree, KiB (`None`: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_kib: Option<u64>,
    /// How many processes that tree has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<usize>,
    /// Its memory cap, KiB: over it, it is restarted between requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_cap_kib: Option<u64>,
}

/// A program a server runs from its `PATH` (pyright's `python`), and
/// where it finds it: what tells apart two servers of one kind started for
/// clients with other `PATH`s.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PathProgram {
    pub name: String,
    #[serde(with = "crate::os_path")]
    pub path: PathBuf,
}

/// One folder of a server (a `workspaceFolders` entry) and what chose it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Folder {
    #[serde(with = "crate::os_path")]
    pub path: PathBuf,
    pub chosen_by: RootChoice,
}

/// What made a directory a server's root for a file (the catalogue's
/// `projectRoot` recipe, `scry_workspace::roots`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum RootChoice {
    /// A workspace file that claims the file's package: `file` (absolute),
    /// with the key that made it one (`workspace` in a `Cargo.toml`,
    /// `tool.uv.workspace` in a `pyproject.toml`), when one did.
    Workspace {
        #[serde(with = "crate::os_path")]
        file: PathBuf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
    },
    /// The nearest of the server's root markers (`marker`, absolute).
    Package {
        #[serde(with = "crate::os_path")]
        marker: PathBuf,
    },
    /// No workspace file claims the package, and the workspace root holds
    /// `packages` packages of this language: the workspace root.
    SeveralPackages { packages: usize },
    /// No root marker between the file and the workspace root.
    NoMarker,
    /// The configuration says so (`projectRoot.strategy`: `root`).
    Configured,
}

/// Where a server process is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Being started (not yet initialized).
    Starting,
    Ready,
    /// Busy indexing; `progress` as the server reports it.
    Indexing {
        progress: String,
    },
    /// Exited; why, when known.
    Exited {
        reason: Option<String>,
    },
}

/// The syntactic index of this process (tree-sitter).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyntacticStatus {
    /// Built in this process: files and lines indexed, files skipped.
    Built {
        files: usize,
        lines: u64,
        skipped: usize,
        cache_bytes: u64,
    },
    /// Not built in this process, but cached on disk.
    OnDisk {
        files: usize,
        lines: u64,
        cache_bytes: u64,
    },
    /// Not built in this process (built on first need).
    NotBuilt { cache_bytes: u64 },
}

/// A workspace's SCIP index as `status` and `doctor` report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStatus {
    pub about: IndexAbout,
    /// Documents the index covers.
    pub documents: u64,
    /// Indexed files changed since the index was built.
    pub changed: u32,
    /// Documents refused because their path leaves the workspace, and the
    /// first as the index wrote it.
    #[serde(default)]
    pub refused: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_first: Option<String>,
    /// Stale (files changed) and nothing here rebuilds it by itself (no
    /// daemon, or `index.refresh` off).
    #[serde(default)]
    pub stale_unrefreshed: bool,
}

/// Where an index came from and what built it, when: the label of an
/// answer from it, and the start of its status line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexAbout {
    /// The indexer's name and version (either may be empty).
    pub tool: String,
    pub tool_version: String,
    /// The commit the tree was at, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// When the `index.scip` was written, seconds since the Unix epoch.
    pub built_at_secs: u64,
    /// Its age when the answer or report was made, seconds.
    pub age_secs: u64,
    pub origin: IndexOrigin,
}

/// Who made an index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexOrigin {
    /// `scry index`.
    Built,
    /// The daemon's background refresh.
    RebuiltByDaemon,
    /// A configured (CI-built) `index.scip`, read as is.
    Configured {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// Fetched from `index.remote`.
    Remote(Box<RemoteOrigin>),
}

/// Where a fetched index came from: `host` (the server, or empty for a
/// `file:` URL), for the commit `behind` commits before HEAD (0: HEAD's
/// own), fetched `fetched_secs` ago.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteOrigin {
    pub host: String,
    pub behind: u32,
    pub fetched_secs: u64,
}

/// Why a remote SCIP index (`index.remote`) is not what answered: each is
/// a note on the answer, and the next source answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "problem")]
pub enum RemoteProblem {
    /// The fetch is under way (in the background); the next question may
    /// get it.
    Fetching,
    /// The workspace is not a git checkout with a HEAD commit.
    NoCommit,
    /// No index was found for HEAD or any of the `tried` commits before it
    /// (each answered 404, or the search's time ran out: `timed_out`).
    NoIndex { tried: u32, timed_out: bool },
    /// The server answered `status` (not 200 or 404).
    Status { status: u16 },
    /// The server redirected to another host (`to`): not followed.
    Redirected { to: String },
    /// Nothing came from the server for `secs` seconds.
    Stalled { secs: u64 },
    /// The index is over `limit` bytes.
    TooLarge { limit: u64 },
    /// The index's bytes do not have the SHA-256 its `.sha256` file gives.
    DigestMismatch,
    /// The `.sha256` file is not in sha256sum's format.
    DigestUnreadable,
    /// The server could not be reached or the transfer failed (`error`:
    /// the HTTP client's words).
    Unreachable { error: String },
    /// The fetched index was refused by the conversion (`error`: its
    /// message, as the local import words it).
    Unusable { error: String },
    /// The configured header's environment variable (`env`) is not set:
    /// nothing was asked without it.
    HeaderUnset { env: String },
    /// The URL template is not usable (`why`: what is wrong with it).
    BadUrl { why: String },
}

/// The daemon's background refresh of the SCIP index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefreshStatus {
    /// Running now (at the lowest priority).
    Running,
    /// The last run, `ago_secs` ago, rebuilt it in `millis`.
    Rebuilt {
        ago_secs: u64,
        millis: u64,
        files: u64,
    },
    /// The last run, `ago_secs` ago, failed after `millis` with `error`
    /// (the indexer's or the build's text).
    Failed {
        ago_secs: u64,
        millis: u64,
        error: String,
    },
}

/// One SCIP indexer of the workspace's languages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexerStatus {
    /// Its command (argv[0]).
    pub command: String,
    /// The server it indexes for.
    pub server: String,
    /// Where it was found; `None`: not installed.
    #[serde(
        with = "crate::os_path::opt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub program: Option<PathBuf>,
    /// The catalogue's first install command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
}

/// One thing the memory policy did, and when (`status`, `daemon status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryNote {
    /// Seconds since the Unix epoch.
    pub at_secs: u64,
    pub what: MemoryAction,
}

// ------------------------------------------------------------------ doctor

/// Everything `scry doctor` shows: the set-up check, the workspace's SCIP
/// indexes, the running daemon (`None`: none answered) and the grammars
/// this binary leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doctor {
    pub report: DoctorReport,
    pub indexes: Vec<DoctorIndex>,
    pub daemon: Option<DaemonStatus>,
    pub grammars_left_out: Vec<GrammarLeftOut>,
}

/// The set-up check (`scry doctor`): what would serve each language here,
/// installed or not, its version, how to install what is missing, the
/// SCIP indexers, known problems.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoctorReport {
    pub workspace_root: PathBuf,
    /// Configuration files read, in order.
    pub config_files: Vec<PathBuf>,
    /// Whether the project's own configuration may choose what runs.
    pub trust: Trust,
    /// What the project configuration asked to run and was ignored
    /// because the workspace is not trusted: (file, what).
    pub trust_ignored: Vec<(PathBuf, String)>,
    pub warnings: Vec<String>,
    /// `PATH` entries that servers, linters, indexers and the version
    /// probes do not get (relative ones; inside an untrusted workspace).
    pub path_left_out: Vec<PathLeftOut>,
    /// One row per built-in language group (a primary server).
    pub languages: Vec<LanguageRow>,
    /// Linters (diagnostics only).
    pub linters: Vec<LanguageRow>,
    /// SCIP indexers (`scry index`, the daemon's refresh), one per
    /// indexer command; `files`: the files its languages' server serves.
    pub indexers: Vec<LanguageRow>,
    pub problems: Vec<SetupProblem>,
    /// Install methods usable here (`npm`, `pip`, …).
    pub install_methods: Vec<String>,
    /// Whether the file count stopped at its cap.
    pub files_capped: bool,
    /// What scry does on other systems and cannot do on this one (none on
    /// Linux).
    pub platform_gaps: Vec<PlatformGap>,
}

/// Something scry does on other systems that this one cannot give it
/// (`scry doctor`, worded by scry-render).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PlatformGap {
    /// Background indexing runs at the idle CPU priority but the normal
    /// disk priority: Windows lets a process lower only its own I/O
    /// priority, not its child's.
    IndexerDiskPriority,
}

/// One language group (or linter, or indexer) in the set-up check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LanguageRow {
    /// `"Rust"`, `"C, C++"`.
    pub languages: String,
    /// Files in the workspace this row's server serves.
    pub files: usize,
    /// The provider that would serve them; `None` when every candidate is disabled.
    pub provider: Option<ProviderRow>,
    /// The roots its server would be given for them (each a folder of its
    /// own), and what chooses each; languages servers only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<Folder>,
}

/// The provider of a [`LanguageRow`]: found or not, its version, how to
/// install it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderRow {
    pub id: String,
    pub command: String,
    /// Where the command was found (`None`: not installed).
    pub found: Option<PathBuf>,
    pub version: Version,
    /// Stands in for this server (an alternative), when it is not the primary.
    pub alternative_to: Option<String>,
    /// The install command that fits this machine (first method whose
    /// program is on `PATH`, else the catalogue's first).
    pub install: Option<String>,
    /// Method of `install`.
    pub install_method: Option<String>,
    /// The program `install` needs when it is not on `PATH` (`apt-get`).
    pub install_needs: Option<String>,
    /// The other install commands.
    pub install_alternatives: Vec<String>,
    /// A language server's memory cap (its process tree, KiB): its
    /// `memoryMiB`, else `limits.serverMemoryMiB`. `None` for linters run
    /// per call.
    pub memory_cap_kib: Option<u64>,
}

/// What a provider's version probe found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Version {
    /// The first line it printed.
    Known(String),
    /// Not asked; why.
    NotChecked(NotChecked),
    /// Asked, no usable answer; why.
    Unknown(NoVersion),
    /// It ran and failed (e.g. a rustup proxy without its component): the
    /// install command is shown as for a missing one.
    Failed {
        /// The command line run (`yaml-language-server --version`).
        command: String,
        /// How it ended (`exit status: 1`).
        status: String,
        /// The first line it printed, if any.
        output: Option<String>,
    },
}

/// Why a version was not asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum NotChecked {
    NotInstalled,
    /// A binary inside the workspace: never run.
    ProjectLocal,
    /// A command a project configuration file chose: never run.
    ProjectCommand,
    /// The catalogue says it has no version flag.
    NoVersionFlag,
}

/// Why asking for a version gave nothing usable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum NoVersion {
    /// Not asked yet (replaced by the probe's outcome).
    Pending,
    /// It could not be started.
    CannotRun { error: String },
    /// `command` did not answer within `secs`.
    NoAnswer { command: String, secs: u64 },
    /// It exited successfully and printed nothing.
    PrintedNothing,
}

/// A known set-up problem of one provider (the catalogue's `hints`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetupProblem {
    pub provider: String,
    /// The root it applies to.
    pub root: PathBuf,
    pub problem: String,
    pub fix: String,
}

/// A `PATH` entry left out of a child's environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PathLeftOut {
    /// The entry as the `PATH` held it.
    pub entry: PathBuf,
    pub why: LeftOutWhy,
}

/// Why a `PATH` entry is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum LeftOutWhy {
    /// Relative (or empty): it would resolve against the child's working
    /// directory, the workspace.
    Relative,
    /// Inside the workspace, which is not trusted.
    InUntrustedWorkspace,
}

/// One SCIP index of a workspace as `doctor` sees it (it converts none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DoctorIndex {
    /// The configured index path was refused (the configuration's words).
    PathRefused { why: String },
    /// A configured index that cannot be read: why (the index's words).
    Unreadable { path: PathBuf, why: String },
    /// Converted and current; `answers`: it is the one read (else the
    /// other is newer).
    Current { status: IndexStatus, answers: bool },
    /// Not converted yet (the next question converts it).
    NotConverted { origin: IndexOrigin, answers: bool },
    /// A remote index is configured (`url`, shown without its query):
    /// `cached` commits' indexes fetched, the newest `newest` (its commit,
    /// fetched `age_secs` ago); `answers`: no local index takes its place.
    Remote {
        url: String,
        cached: u32,
        newest: Option<(String, u64)>,
        answers: bool,
    },
}

/// A tree-sitter grammar this binary was built without (`doctor` names
/// each: its files get no syntactic answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrammarLeftOut {
    /// The language as people name it (`C#`).
    pub language: String,
    /// Its id in the grammar table (`c_sharp`'s language, `csharp`).
    pub id: String,
    pub grammar: String,
    pub file_types: Vec<String>,
}

// ----------------------------------------------------------- daemon status

/// `scry daemon status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonStatus {
    pub pid: u32,
    pub version: String,
    pub protocol: u32,
    pub uptime_ms: u64,
    /// Clients connected now, besides the one asking.
    pub clients: usize,
    #[serde(with = "crate::os_path")]
    pub socket: PathBuf,
    pub workspaces: Vec<DaemonWorkspace>,
}

/// One workspace the daemon serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonWorkspace {
    #[serde(with = "crate::os_path")]
    pub root: PathBuf,
    /// Connected clients that asked about this workspace.
    pub clients: usize,
    pub servers: Vec<DaemonServer>,
    /// What the memory policy did lately to this workspace's servers
    /// (restarts over a cap, stops over the budget), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_events: Vec<MemoryNote>,
}

/// One server process the daemon runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonServer {
    pub id: String,
    #[serde(with = "crate::os_path")]
    pub root: PathBuf,
    /// Every folder it serves (the root first), each with what chose it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folders: Vec<Folder>,
    /// Where it finds the programs it runs from its `PATH`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<PathProgram>,
    pub pid: Option<u32>,
    /// Resident memory of the server's whole process tree (its children,
    /// e.g. tsserver, included), in KiB, when readable.
    pub memory_kib: Option<u64>,
    /// How many processes that tree has.
    #[serde(default)]
    pub processes: Option<usize>,
    /// The server's memory cap, KiB.
    #[serde(default)]
    pub memory_cap_kib: Option<u64>,
    pub uptime_ms: u64,
    pub idle_ms: u64,
    /// The executable it runs (canonical).
    #[serde(with = "crate::os_path", default)]
    pub program: PathBuf,
    /// The clients that used it ("<session> (PATH <hash>)"), most recent
    /// first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Reason;

    /// What the daemon's wire carries of a fetched index comes back equal.
    #[test]
    fn a_remote_index_note_and_origin_round_trip_as_json() {
        for problem in [
            RemoteProblem::Fetching,
            RemoteProblem::NoIndex {
                tried: 3,
                timed_out: true,
            },
            RemoteProblem::Redirected {
                to: "x.example".into(),
            },
            RemoteProblem::Unusable { error: "e".into() },
        ] {
            let r = Reason::IndexRemote {
                url: "https://ci.example/{commit}.scip".into(),
                problem,
            };
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Reason>(&json).unwrap(), r, "{json}");
        }
        let o = IndexOrigin::Remote(Box::new(RemoteOrigin {
            host: "ci.example".into(),
            behind: 2,
            fetched_secs: 9,
        }));
        let json = serde_json::to_value(&o).unwrap();
        assert_eq!(json["remote"]["behind"], 2);
        assert_eq!(serde_json::from_value::<IndexOrigin>(json).unwrap(), o);
    }
}
