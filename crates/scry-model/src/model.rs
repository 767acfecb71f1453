//! The answers the engine returns: plain data, no formatting (re-exported at
//! the crate root, their one name: `scry_model::Answer`, …).
//!
//! Invariants: every line and column here is 1-based, columns count Unicode
//! scalar values (characters), and every path is absolute. Relativising paths
//! and shaping text is the renderer's job (`scry-render`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::action::Action;
use crate::status::{IndexAbout, StatusReport};

/// A range in a file. `line`/`col` is the start, `end_line`/`end_col` the
/// exclusive end; all 1-based, columns in characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Loc {
    #[serde(with = "crate::os_path")]
    pub path: PathBuf,
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
    pub end_col: u32,
    /// The full source line at `line` (without its terminator) when the file
    /// could be read; the renderer trims it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// Where scry asked the server, and how it found that place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskedAt {
    pub loc: Loc,
    /// How the position was found (worded by scry-render: "declaration of
    /// struct `Distance`", "occurrence 2 of 5 of `total`", …).
    pub via: Via,
}

/// How scry found the position it asked at. Data: scry-render words it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum Via {
    /// Not said (a caller that built the position itself).
    Unsaid,
    /// The line and column the question gave.
    GivenPosition,
    /// A bare line: its first identifier.
    FirstIdentifier,
    /// A declaration from the file's document symbols.
    Declaration { kind: String, name: String },
    /// Occurrence `n` of `of` of `name` in the file (no line given).
    Occurrence {
        n: usize,
        of: usize,
        name: String,
        #[serde(default)]
        prose: bool,
    },
    /// Occurrence `n` of `of` of `name` on the asked line (`of` 1: the
    /// only one).
    OnLine {
        n: usize,
        of: usize,
        name: String,
        #[serde(default)]
        prose: bool,
    },
    /// `name` is not on line `asked`; this occurrence is on line `line`
    /// (`first`: the nearest one, asked first).
    NotOnLine {
        name: String,
        asked: u32,
        line: u32,
        first: bool,
        #[serde(default)]
        prose: bool,
    },
    /// A workspace symbol (`kind` when the server said it).
    WorkspaceSymbol {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
        name: String,
    },
    /// The occurrence written `form`, one of `targets` different targets
    /// of `name`: on the asked line `line` (at column `col`), or (no line
    /// given) in a file that only uses the name (at `at_line`:`col`).
    OneOfTargets {
        form: String,
        name: String,
        targets: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<u32>,
        at_line: u32,
        col: u32,
    },
}

impl Via {
    /// True for an occurrence in a comment or string.
    pub fn in_prose(&self) -> bool {
        matches!(
            self,
            Via::Occurrence { prose: true, .. }
                | Via::OnLine { prose: true, .. }
                | Via::NotOnLine { prose: true, .. }
        )
    }
}

/// Why the syntactic index left a file out (scry-render words it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "why")]
pub enum Unindexed {
    /// Not a regular file (`kind`: what it is, "a FIFO").
    NotRegular { kind: String },
    /// `kib` KiB, over the `limit_kib` KiB file limit.
    TooLarge { kib: u64, limit_kib: u64 },
    /// Could not be read.
    Unreadable,
    /// Holds NUL bytes.
    Binary,
    /// Not UTF-8 text.
    NotUtf8,
    /// No grammar serves its kind of file.
    NoGrammar,
    /// `grammar` serves it but cannot be loaded (`built_in`: it is built
    /// into this binary).
    GrammarMissing { grammar: String, built_in: bool },
    /// `more` further source files, over the index's `limit` of files
    /// (said of the workspace root).
    OverFileLimit { more: usize, limit: usize },
}

/// A file the syntactic index left out: where (relative to the root) and
/// why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    #[serde(with = "crate::os_path")]
    pub path: PathBuf,
    pub why: Unindexed,
}

/// Why an answer is empty or may be incomplete, or a remark on it (notes).
/// Data: scry-render words each kind in one place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// `server` was still indexing (`progress`: its own words, "Indexing 45%").
    Indexing { server: String, progress: String },
    /// `server` was started for this question and is not ready yet.
    ServerStarting { server: String },
    /// `server` is not running (it exited or was stopped).
    ServerNotRunning { server: String },
    /// `server` does not support `method` (an LSP method).
    Unsupported { server: String, method: String },
    /// `server` does not support what `action` asks (said by its noun:
    /// "workspace symbols").
    ActionUnsupported {
        server: String,
        action: crate::Action,
    },
    /// `server` returned nothing at the `places` positions tried.
    NothingThere { server: String, places: usize },
    /// `provider` could not be used: its error.
    Failed {
        provider: String,
        error: crate::OpError,
    },
    /// An error that made the answer come from elsewhere (the syntactic
    /// index): its message.
    Error { error: crate::OpError },
    /// `server` listed at least `kept` locations; the first `kept` kept.
    ServerCapped { server: String, kept: usize },
    /// `found` matches of `name` by name; the first `kept` considered.
    NameMatchesCapped {
        name: String,
        found: usize,
        kept: usize,
    },
    /// `symbol` was found outside the workspace.
    OutsideWorkspace { symbol: String },
    /// The file has syntax errors; the parser recovered around them.
    SyntaxErrors {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// A file the syntactic index left out, and why.
    NotIndexed {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        why: Unindexed,
    },
    /// No source file a grammar serves was found (`languages`: the
    /// grammars scry-syntax has).
    NoGrammarFiles { languages: Vec<String> },
    /// Methods the server registered dynamically.
    Registered { methods: Vec<String> },
    /// Where the server logs are.
    ServerLogs {
        #[serde(with = "crate::os_path")]
        dir: PathBuf,
    },
    /// Configuration files read.
    Configuration {
        #[serde(with = "crate::os_path::vec")]
        files: Vec<PathBuf>,
    },
    /// The answer is syntactic (tree-sitter, names matched as written, not
    /// resolved), `because` of the server's error (none: it was still
    /// indexing, said in `partial`).
    Syntactic {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        because: Option<Box<Reason>>,
    },
    /// `name` is a local binding at the place asked (a syntactic answer).
    LocalBinding { name: String },
    /// Answered from the SCIP index `because` the live server could not
    /// answer yet (asking again gets the live server's answer).
    FromIndex { because: Box<Reason> },
    /// `locations` locations in `files` files changed since the index was
    /// built were left out of an index answer.
    IndexLeftOut { locations: usize, files: usize },
    /// `changed` of the index's `total` files changed since it was built.
    IndexChanged {
        changed: u32,
        total: u32,
        /// Something rebuilds the index by itself (the daemon's refresh);
        /// `false`: it stays stale until `scry index`.
        refreshed: bool,
    },
    /// `name` is defined outside what the index covers (a dependency, the
    /// standard library): an index answer lists the project's uses only.
    IndexExternal { name: String },
    /// The index gives `name` definitions in `files` files (one symbol for
    /// several things, e.g. same-named items of two Rust test crates): an
    /// index answer may mix their references.
    IndexSeveralDefinitions { name: String, files: usize },
    /// No language server applies to the workspace as a whole (none
    /// running, no root markers of one in the root): a workspace-wide
    /// question needs a path to pick one.
    NoServerApplies,
    /// `server` offers no code action at the place asked.
    NoCodeAction { server: String },
    /// A code action's preview leaves out what its `command` (run by
    /// `server` when applied) will edit.
    CommandNotPreviewed { command: String, server: String },
    /// A code action's command failed (its other edits were applied).
    CommandFailed { error: crate::OpError },
    /// Diagnostics checked the first `checked` of `files` files (the
    /// `maxOpenDocuments` limit).
    FilesCapped { checked: usize, files: usize },
    /// Several reasons together (servers of one workspace-wide question).
    All(Vec<Reason>),
    /// The scry daemon was wanted but could not be used (`why`); the call
    /// ran in the front end's process.
    DaemonNotUsed { why: String },
    /// The scry daemon with this pid answered.
    ServedByDaemon { pid: u32 },
    /// What recovery did with a dead writer's half-applied edit.
    Recovered(Box<Recovered>),
    /// What an untrusted workspace's configuration asked to run and was
    /// ignored, with how to trust (once per session, and in `status`).
    TrustIgnored(Box<TrustNotice>),
    /// Whether the workspace is trusted, and why (`status`).
    WorkspaceTrust { trust: Trust },
    /// What the memory policy did to one of the workspace's servers.
    Memory(Box<MemoryAction>),
    /// The configured CI-built index (`index.path`) is not read, `why`
    /// (worded where the configuration is read, as `status`'s
    /// configuration warnings are: `doctor`'s index lines show it too).
    IndexPathRefused { why: String },
    /// A configuration warning (worded where the configuration is read,
    /// as `status`'s warnings are), told beside an MCP answer.
    ConfigWarning { warning: String },
    /// The remote SCIP index (`index.remote`, `url`: the template, its
    /// query left out) is not used, or not yet: `problem`.
    IndexRemote {
        url: String,
        #[serde(flatten)]
        problem: crate::RemoteProblem,
    },
    /// An answer from an index built at an earlier commit: `locations` in
    /// `files` files changed since were moved to the working tree's lines
    /// across the git diff; of those on changed lines, `refound` were found
    /// again by name on the line they became and `dropped` were left out.
    IndexTranslated {
        locations: usize,
        files: usize,
        #[serde(default)]
        refound: usize,
        dropped: usize,
    },
    /// The SCIP index could not be loaded (`error`, the loader's message,
    /// which may name absolute paths): the other sources answered.
    IndexUnusable { error: String },
    /// `server` sees the workspace through its folders (`folders`) only,
    /// and `name` is written (as a whole word) in `files` files of its
    /// languages outside them: in the projects `parts` (each a directory
    /// scry would give that server as another root), the first of those
    /// files in `shown`. `complete`: every such file was read (false when
    /// the scan stopped at its bounds).
    OutsideServerView {
        server: String,
        name: String,
        #[serde(with = "crate::os_path::vec")]
        folders: Vec<PathBuf>,
        #[serde(with = "crate::os_path::vec")]
        parts: Vec<PathBuf>,
        #[serde(with = "crate::os_path::vec")]
        shown: Vec<PathBuf>,
        files: usize,
        complete: bool,
    },
    /// Changes made outside scry may not have reached the servers before
    /// this answer: of the `polled` directories scry does not watch (past
    /// its bound, or refused by the system), `unreached` were not polled
    /// in time; `dropped` are past the polling bound; the system's queue
    /// of changes `overflowed`.
    NotAllSeen {
        polled: usize,
        unreached: usize,
        dropped: usize,
        overflowed: bool,
    },
    /// `server` names files as text (LSP URIs) and cannot open the
    /// workspace's files of its languages whose names are not UTF-8:
    /// `files` of them write `name` (or, with `name` empty, `files` of the
    /// files a check asked about are such), the first in `shown`.
    NotUtf8Names {
        server: String,
        name: String,
        #[serde(with = "crate::os_path::vec")]
        shown: Vec<PathBuf>,
        files: usize,
    },
    /// `server` searches only the projects it has loaded (a file of each
    /// open): `count` more projects under its folders write `name`, beyond
    /// the ones scry opened for this question; the first of them in
    /// `projects`.
    ProjectsNotLoaded {
        server: String,
        name: String,
        #[serde(with = "crate::os_path::vec")]
        projects: Vec<PathBuf>,
        count: usize,
    },
}

/// What recovery did with one dead writer's entry: the next answer's note
/// ([`Reason::Recovered`], worded by scry-render; the journal,
/// `scry_edit::journal`, does the recovery).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovered {
    pub id: String,
    pub title: String,
    /// An `undo`'s entry.
    pub undo: bool,
    /// Every file held its after-image: the entry was kept (`applied`, or
    /// for an undo the reverted entry marked `undone`), nothing written.
    pub completed: bool,
    /// Files given their before-image back.
    pub restored: Vec<PathBuf>,
    /// Files the edit had created, removed.
    pub removed: Vec<PathBuf>,
    /// Staged temporary files removed.
    pub temps_removed: usize,
    /// Files holding neither image (changed since by someone else): left
    /// as they are.
    pub left_alone: Vec<PathBuf>,
    /// Files that could not be restored, and why.
    pub failed: Vec<(PathBuf, String)>,
}

/// Why a workspace is trusted or not (scry-workspace's `trust` decides it,
/// scry-render words it).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// `SCRY_TRUST=all` ([`Trust::ENV`]).
    Env,
    /// Under a `trustedRoots` entry of the user configuration.
    UserRoot(#[serde(with = "crate::os_path")] PathBuf),
    /// A `scry trust` record matches the current configuration files.
    Recorded,
    /// The caller decided (configuration given explicitly).
    Explicit,
    /// Not trusted. `revoked`: a `scry trust` record exists but the
    /// configuration files changed since.
    Untrusted { revoked: bool },
}

impl Trust {
    /// `SCRY_TRUST`: `all` trusts every workspace, `none` none.
    pub const ENV: &'static str = "SCRY_TRUST";

    pub fn is_trusted(&self) -> bool {
        !matches!(self, Trust::Untrusted { .. })
    }
}

/// What an untrusted workspace asked for and was ignored
/// ([`Reason::TrustIgnored`]; never empty).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TrustNotice {
    /// A `scry trust` record exists but the configuration changed since.
    pub revoked: bool,
    /// What the project's configuration files asked for, in file order:
    /// (file, what), e.g. (`/ws/.scry.json`, `server "pyright": command`).
    pub ignored: Vec<(PathBuf, String)>,
    /// Project-local binaries not used.
    pub local_bins: Vec<PathBuf>,
}

/// What the memory policy did to a server ([`Reason::Memory`], `status`,
/// `daemon status`), with the figures; amounts in KiB.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "did", rename_all = "snake_case")]
pub enum MemoryAction {
    /// Restarted over its cap: `now`, before the question about to be
    /// asked; else between requests (it starts with the next question).
    Restarted {
        server: String,
        memory_kib: u64,
        processes: usize,
        memory_cap_kib: Option<u64>,
        now: bool,
    },
    /// Stopped, the least recently used idle server, because the servers
    /// together (`total_kib`) were over the budget.
    Stopped {
        server: String,
        memory_kib: u64,
        processes: usize,
        total_kib: u64,
        memory_budget_kib: u64,
        idle_secs: u64,
    },
}

/// How an answer was found when it is not a language server's: the
/// renderer labels it (JSON `"precision"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// The syntactic index (tree-sitter): names matched as written, not
    /// resolved.
    Syntactic,
    /// A SCIP index built earlier: resolved by the indexer, at the
    /// positions the files had then (never used for a changed file, but
    /// for a fetched index of an earlier commit, whose positions move
    /// across the git diff: `Reason::IndexTranslated`).
    Index,
}

impl Precision {
    /// The JSON value (`"syntactic"`).
    pub fn name(self) -> &'static str {
        match self {
            Precision::Syntactic => "syntactic",
            Precision::Index => "index",
        }
    }
}

/// One argument of a question that selects a place; each front end words
/// it in its own syntax (MCP `column=35`, the CLI `--column 35`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Selector {
    Line(u32),
    Column(u32),
    Symbol(String),
}

/// Another declaration with the same name in the same file, so the next call
/// can pick it with `line`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alternative {
    pub name: String,
    pub kind: String,
    pub line: u32,
    pub col: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

/// A node of a document outline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolNode {
    pub name: String,
    /// Lower-case LSP symbol kind name: "function", "struct", "method", ...
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Position of the symbol's name (selection range start).
    pub line: u32,
    pub col: u32,
    /// Last line of the whole symbol (its full range).
    pub end_line: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<SymbolNode>,
}

/// A workspace-symbol hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolItem {
    pub name: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    pub loc: Loc,
}

/// One item of a call hierarchy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallItem {
    pub name: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The item's name (selection range).
    pub loc: Loc,
}

/// A caller (incoming) or callee (outgoing) with the call sites.
/// For incoming calls the sites are in the caller's file; for outgoing calls
/// they are in the file of the item asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallEdge {
    pub item: CallItem,
    pub sites: Vec<Loc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallDirection {
    Incoming,
    Outgoing,
}

/// One definition in a repository map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapEntry {
    /// 1-based.
    pub line: u32,
    pub kind: String,
    pub name: String,
    /// The source line holding the name, trimmed and clipped.
    pub signature: String,
}

/// One file in a repository map, with its chosen definitions in line order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapFileEntry {
    #[serde(with = "crate::os_path")]
    pub path: PathBuf,
    pub definitions: Vec<MapEntry>,
}

/// The answer to `map`: files ranked by the reference graph (personalised
/// PageRank), cut to a character budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoMapReport {
    /// What the map was biased towards (paths and symbols as given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub focus: Vec<String>,
    pub files: Vec<MapFileEntry>,
    /// Files indexed.
    pub total_files: usize,
    /// Files with definitions that did not fit.
    pub omitted_files: usize,
    /// Definitions that did not fit.
    pub omitted_definitions: usize,
    /// The character budget of the listing.
    pub budget: usize,
    /// Files not indexed (binary, over the size limit), relative to the
    /// root, with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
}

/// The payload of an answer. Adjacently tagged: an internal `kind` tag
/// would collide with `EditReport::kind` (the daemon's wire needs the round
/// trip; the JSON output is built by scry-render, not by serde).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "body", rename_all = "snake_case")]
pub enum Body {
    Locations {
        locations: Vec<Loc>,
    },
    Hover {
        /// The server's hover text as sent (markdown or plain text); the
        /// renderer normalises it. Empty when none.
        text: String,
    },
    Outline {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        symbols: Vec<SymbolNode>,
    },
    WorkspaceSymbols {
        query: String,
        symbols: Vec<SymbolItem>,
    },
    Calls {
        direction: CallDirection,
        item: Option<CallItem>,
        calls: Vec<CallEdge>,
    },
    Status(StatusReport),
    Capabilities {
        server: String,
        #[serde(with = "crate::os_path")]
        root: PathBuf,
        encoding: String,
        capabilities: Value,
    },
    Raw {
        method: String,
        result: Value,
    },
    Reloaded {
        stopped: usize,
    },
    Diagnostics(DiagnosticsReport),
    /// An edit applied, previewed or undone.
    Edit(EditReport),
    /// The code actions available at a place.
    CodeActions(CodeActionList),
    /// A repository map.
    Map(RepoMapReport),
}

impl Body {
    /// True when the body carries no result items (the renderer then says
    /// what was asked and why nothing came back).
    pub fn is_empty(&self) -> bool {
        match self {
            Body::Locations { locations } => locations.is_empty(),
            Body::Hover { text } => text.trim().is_empty(),
            Body::Outline { symbols, .. } => symbols.is_empty(),
            Body::WorkspaceSymbols { symbols, .. } => symbols.is_empty(),
            Body::Calls { calls, .. } => calls.is_empty(),
            Body::Status(_)
            | Body::Capabilities { .. }
            | Body::Raw { .. }
            | Body::Reloaded { .. }
            | Body::Diagnostics(_)
            | Body::Edit(_) => false,
            Body::CodeActions(l) => l.actions.is_empty(),
            Body::Map(m) => m.files.is_empty(),
        }
    }
}

/// The question as the caller put it (echoed in answers and empty results).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    #[serde(
        with = "crate::os_path::opt",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

/// Everything an operation found out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub action: Action,
    pub question: Question,
    /// The server id that answered (e.g. "rust-analyzer").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The SCIP index that answered (in place of `server`): what built it
    /// and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_index: Option<Box<IndexAbout>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asked_at: Option<AskedAt>,
    /// Other declarations of the same name in the file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<Alternative>,
    pub body: Body,
    /// Why the result is empty, when known (the server still indexing, a
    /// method it does not support, nothing at the places tried).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_reason: Option<Reason>,
    /// Set when the server was still indexing when the answer was taken: the
    /// result may be incomplete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Reason>,
    /// Extra one-line notes, worded by the renderer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Reason>,
    /// Set when the answer comes from elsewhere than a language server
    /// (the syntactic index: matched by name, not by meaning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    /// Other occurrences of the asked name that resolve to different
    /// targets than the one answered: on the asked line, or (no line given,
    /// the name only used in the file) elsewhere in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_name: Option<SameName>,
}

/// The asked name resolves to different targets at its occurrences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SameName {
    /// The asked line, or `None` (no line given: in this file).
    pub line: Option<u32>,
    /// How the answered occurrence is written (`HirKind::Literal`).
    pub answered_form: String,
    pub others: Vec<SameNameOccurrence>,
}

/// One more occurrence of the asked name, with a different target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SameNameOccurrence {
    /// 1-based line and column (characters).
    pub line: u32,
    pub col: u32,
    /// How it is written on its line: `hir::Literal`, `self.span`, `Literal`.
    pub form: String,
    /// The arguments that select it (line, column, symbol), worded by
    /// each front end in its own syntax.
    pub select: Vec<Selector>,
    /// Its own answer, for definition, declaration, type_definition,
    /// implementation and hover; `None` for the rest (only named).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Body>,
}

impl Answer {
    pub fn new(action: Action, question: Question, body: Body) -> Answer {
        Answer {
            action,
            question,
            server: None,
            from_index: None,
            asked_at: None,
            others: Vec::new(),
            body,
            empty_reason: None,
            partial: None,
            notes: Vec::new(),
            precision: None,
            same_name: None,
        }
    }
}

// ---------------------------------------------------------------- diagnostics

/// How serious a diagnostic is; orders most serious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }

    /// From an LSP `DiagnosticSeverity` number (missing: error).
    pub fn from_lsp(n: Option<u64>) -> Severity {
        match n {
            Some(2) => Severity::Warning,
            Some(3) => Severity::Info,
            Some(4) => Severity::Hint,
            _ => Severity::Error,
        }
    }

    /// From a tool's word (`error`, `warning`, `note`, `style`, `fatal`,
    /// ...); unknown words are warnings.
    pub fn from_word(w: &str) -> Severity {
        match w.trim().to_ascii_lowercase().as_str() {
            "error" | "err" | "fatal" | "e" | "critical" | "blocker" | "major" => Severity::Error,
            "info" | "information" | "note" | "i" | "minor" => Severity::Info,
            "hint" | "style" | "none" | "h" => Severity::Hint,
            _ => Severity::Warning,
        }
    }
}

/// Which severities a `diagnostics` answer shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeverityFilter {
    /// Errors only.
    Error,
    /// Errors and warnings (the default).
    #[default]
    Warning,
    /// Everything, infos and hints included.
    All,
}

impl SeverityFilter {
    /// `error`/`errors`, `warning`/`warnings`, `all`/`info`/`hint`.
    pub fn parse(s: &str) -> Option<SeverityFilter> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "error" | "errors" | "e" => SeverityFilter::Error,
            "warning" | "warnings" | "warn" | "w" => SeverityFilter::Warning,
            "all" | "info" | "hint" | "any" => SeverityFilter::All,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SeverityFilter::Error => "error",
            SeverityFilter::Warning => "warning",
            SeverityFilter::All => "all",
        }
    }

    pub fn admits(self, s: Severity) -> bool {
        match self {
            SeverityFilter::Error => s == Severity::Error,
            SeverityFilter::Warning => s <= Severity::Warning,
            SeverityFilter::All => true,
        }
    }
}

/// One diagnostic from a language server or a linter.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Where; 1-based, columns in characters, with the source line.
    pub loc: Loc,
    pub severity: Severity,
    /// The tool's code (`reportAttributeAccessIssue`, `E0308`, `F401`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Who says so, as shown: the diagnostic's own `source` when it names
    /// one (`rustc`, `clippy`, `typescript`), else the provider id.
    pub source: String,
    /// The provider that reported it (`pyright`, `ruff`).
    pub provider: String,
    /// Whitespace compacted, clipped.
    pub message: String,
}

/// A diagnostic as listed: possibly standing for several identical ones,
/// possibly with cascades beneath it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticEntry {
    pub diagnostic: Diagnostic,
    /// How many identical messages (same severity, code, source and
    /// message) this entry stands for, itself included.
    pub count: usize,
    /// Example locations of the others (at most 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Loc>,
    /// Follow-up errors caused by this one (an unresolved import or missing
    /// module): SECONDARY.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secondary: Vec<Diagnostic>,
}

/// What became of one provider in a `diagnostics` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderOutcome {
    /// Ran and answered for every file it was given.
    Checked,
    /// Answered for some files; `pending` lists the others.
    Partial,
    /// Configured and applicable, but its command is not installed.
    NotInstalled,
    /// Ran out of time before any result.
    TimedOut,
    /// Failed (could not start, crashed, unreadable output).
    Failed,
}

/// One provider's part in a `diagnostics` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderRun {
    pub id: String,
    /// `"lsp"` or `"cli"`.
    pub kind: String,
    pub outcome: ProviderOutcome,
    /// Files it was asked about.
    pub files: usize,
    /// Why it failed, timed out or is partial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub elapsed_ms: u64,
}

/// A file whose diagnostics from one provider did not come in time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingFile {
    #[serde(with = "crate::os_path")]
    pub path: PathBuf,
    pub provider: String,
    pub reason: String,
}

/// The answer to `diagnostics`: merged, deduplicated, ordered (severity,
/// path, position), grouped and capped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticsReport {
    /// What was checked, as asked (`src/`, `*`, `a.py, b.py`).
    pub scope: String,
    pub filter: SeverityFilter,
    pub files_checked: usize,
    /// The listed entries (at most the cap).
    pub entries: Vec<DiagnosticEntry>,
    /// Entries left out by the cap.
    pub omitted: usize,
    /// Totals after deduplication and the severity filter (grouped and
    /// secondary diagnostics counted one by one).
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub hints: usize,
    /// Diagnostics hidden by the severity filter.
    pub hidden: usize,
    /// Files with at least one shown diagnostic.
    pub files_with_problems: usize,
    pub providers: Vec<ProviderRun>,
    /// Files whose current diagnostics did not come in time (their old
    /// ones are not shown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingFile>,
    /// Set for `changes: true`: the entries are only the new diagnostics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<ChangesSummary>,
}

/// What `diagnostics` with `changes: true` compared (counts under the
/// severity filter).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangesSummary {
    /// Diagnostics new since the previous check.
    pub new: usize,
    /// Diagnostics of the previous check that are gone.
    pub resolved: usize,
    /// Diagnostics still there (not listed).
    pub unchanged: usize,
    /// Files checked for the first time (no baseline yet): all their
    /// diagnostics are reported as new and became the baseline.
    #[serde(with = "crate::os_path::vec")]
    pub first_check: Vec<PathBuf>,
}

/// What an edit changed in the diagnostics of the files it touched (see
/// `Engine::diagnostics_after_edit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticsDelta {
    /// Diagnostics the edit introduced (at most 8, errors first).
    pub introduced: Vec<Diagnostic>,
    /// Diagnostics the edit resolved (at most 8, errors first); their
    /// locations are from before the edit.
    pub resolved: Vec<Diagnostic>,
    /// How many more were introduced / resolved than listed.
    pub more_introduced: usize,
    pub more_resolved: usize,
    /// The files whose results did not come within the budget, each with
    /// why (scry-render says "diagnostics still pending for src/a.rs
    /// (rust-analyzer was still checking); call diagnostics for them
    /// later"). Never an error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingFile>,
    /// Files with no diagnostics from before the edit: all their current
    /// ones are listed as introduced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_baseline: Vec<PathBuf>,
    /// Providers that answered.
    pub checked_by: Vec<String>,
    pub elapsed_ms: u64,
}

// ---------------------------------------------------------------- edits

/// What kind of edit an [`EditReport`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditKind {
    Rename,
    CodeAction,
    /// An edit the server sent on its own (`workspace/applyEdit`), e.g.
    /// while running a code action's command.
    ServerEdit,
    Undo,
}

/// Where one text edit landed: 1-based, columns in characters, in the new
/// text, with the new source line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditedLine {
    #[serde(with = "crate::os_path")]
    pub path: PathBuf,
    pub line: u32,
    pub col: u32,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMove {
    #[serde(with = "crate::os_path")]
    pub from: PathBuf,
    #[serde(with = "crate::os_path")]
    pub to: PathBuf,
}

/// A preview of one file: a unified diff (or `rename a → b`, `new file`,
/// `deleted file` headers with their diffs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilePreview {
    #[serde(with = "crate::os_path")]
    pub path: PathBuf,
    pub diff: String,
}

/// An edit scry applied (or previewed, or undid).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditReport {
    pub kind: EditKind,
    /// Rename: the old name; code action: its title; undo: the undone
    /// edit's title.
    pub title: String,
    /// Rename: the new name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_name: Option<String>,
    /// False for a preview (dry run): nothing was written.
    pub applied: bool,
    /// One per text edit, in the files' final paths.
    pub edits: Vec<EditedLine>,
    /// Files whose content changed, created and deleted ones included.
    pub files_changed: usize,
    #[serde(
        with = "crate::os_path::vec",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub created: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renamed: Vec<FileMove>,
    #[serde(
        with = "crate::os_path::vec",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub deleted: Vec<PathBuf>,
    /// Existing files replaced whole (a create or rename with `overwrite`).
    #[serde(
        with = "crate::os_path::vec",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub overwritten: Vec<PathBuf>,
    /// Previews: one diff per file (filled for dry runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previews: Vec<FilePreview>,
    /// What the edit introduced/resolved in the diagnostics of the changed
    /// files (after an applied edit, within a short budget).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<DiagnosticsDelta>,
    /// The journal entry (for `undo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_id: Option<String>,
    /// True when this is the stored answer of an earlier call with the same
    /// idempotency key: nothing was applied again.
    #[serde(default)]
    pub replayed: bool,
}

/// One code action as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeActionInfo {
    /// 1-based number to apply it by.
    pub index: usize,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub preferred: bool,
    /// Why the server says it cannot be applied now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled: Option<String>,
}

/// The code actions available for a range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeActionList {
    /// The range asked about (1-based).
    pub range: Loc,
    /// How many diagnostics of that range were sent with the request.
    pub diagnostics: usize,
    pub actions: Vec<CodeActionInfo>,
}
