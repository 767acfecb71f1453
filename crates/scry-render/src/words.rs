//! The words for scry-ops' typed facts: why an answer is empty or partial
//! and its notes ([`Reason`]), how the asked position was found ([`Via`]),
//! how precise a non-server answer is ([`Precision`]), the arguments
//! that select a place ([`Selector`]) in the asking front end's syntax
//! ([`Dialect`]), a server's memory ([`describe_usage`]), what the memory
//! policy did ([`memory_action`]) and a workspace's trust ([`trust`], the
//! notice of what an untrusted one ignored).
//!
//! Invariants: each fact is worded here once ("still indexing", "does not
//! support", …), text and JSON forms alike; every path goes through
//! [`display_path`]; an error inside a reason is worded by
//! [`crate::error_text`], like every other error.

use std::path::Path;

use scry_base::units::describe_kib;
use scry_model::action::Arg;
use scry_model::{
    Action, Example, MemoryAction, Precision, Reason, Recovered, SameName, Selector, Trust,
    TrustNotice, Via,
};

use crate::display_path;

/// The front end an answer is rendered for: it decides how an argument
/// that selects a place is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// MCP tool arguments: `column=35`, `symbol=hir::Literal`.
    #[default]
    Mcp,
    /// The command line's own flags: `--column 35`, `--symbol hir::Literal`
    /// (a positional symbol is written as a flag so that it is unambiguous).
    Cli,
}

impl Dialect {
    /// One argument with `value`: `column=35`, `--column 35`.
    fn arg(self, arg: Arg, value: &str) -> String {
        match self {
            Dialect::Mcp => format!("{}={value}", arg.name()),
            Dialect::Cli => format!("{} {}", self.flag(arg), cli_value(value)),
        }
    }

    /// What a selector is written as.
    pub fn selector(self, s: &Selector) -> String {
        match s {
            Selector::Line(l) => self.arg(Arg::Line, &l.to_string()),
            Selector::Column(c) => self.arg(Arg::Column, &c.to_string()),
            Selector::Symbol(form) => self.arg(Arg::Symbol, form),
        }
    }

    /// An argument as this front end spells it: `timeout_ms` in MCP, the
    /// flag `--timeout-ms` on the command line, or the positional it
    /// takes there (`PATH`, `METHOD`, `TARGET`), `--apply N` for a code
    /// action's number and `--dry-run` for `apply` (the CLI applies unless
    /// told not to).
    pub fn flag(self, arg: Arg) -> String {
        match self {
            Dialect::Mcp => arg.name().to_string(),
            Dialect::Cli => match arg {
                Arg::Path => "PATH".into(),
                Arg::Method => "METHOD".into(),
                Arg::Targets => "TARGET".into(),
                Arg::ActionIndex => "--apply N".into(),
                Arg::ActionTitle => "--apply TITLE".into(),
                Arg::Apply => "--dry-run".into(),
                Arg::FocusSymbols => "--symbol".into(),
                // No flag: only MCP callers give one.
                Arg::IdempotencyKey => arg.name().into(),
                _ => format!("--{}", arg.name().replace('_', "-")),
            },
        }
    }

    /// An action as this front end names it: `workspace_symbols` in MCP,
    /// `workspace-symbols` on the command line.
    pub fn action(self, action: Action) -> String {
        match self {
            Dialect::Mcp => action.name().to_string(),
            Dialect::Cli => action.name().replace('_', "-"),
        }
    }

    /// An example question: MCP's arguments (`path=src/lib.rs
    /// symbol=Config`), or the command line that asks it (`scry definition
    /// src/lib.rs Config`: the path, symbol and new name positional, the
    /// rest as flags).
    pub fn example(self, e: &Example) -> String {
        match self {
            Dialect::Mcp => e.to_string(),
            Dialect::Cli => {
                let mut words = vec!["scry".to_string(), self.action(e.action)];
                for positional in [Arg::Path, Arg::Symbol, Arg::NewName] {
                    let given = e.args.iter().find(|(a, _)| *a == positional);
                    words.extend(given.map(|(_, v)| cli_value(v)));
                }
                for (a, v) in &e.args {
                    if ![Arg::Path, Arg::Symbol, Arg::NewName].contains(a) {
                        words.push(self.arg(*a, v));
                    }
                }
                words.join(" ")
            }
        }
    }
}

/// A shell word for a CLI value: as is when it is plain, else single-quoted.
fn cli_value(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '-' | '/' | '$'));
    if plain {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', r"'\''"))
    }
}

/// `server is still indexing (progress)`: the one wording.
fn indexing(server: &str, progress: &str) -> String {
    format!("{server} is still indexing ({progress})")
}

/// `server does not support what`: the one wording.
/// Why the syntactic index left a file out.
pub(crate) fn unindexed(why: &scry_model::Unindexed) -> String {
    use scry_model::Unindexed as U;
    match why {
        U::NotRegular { kind } => format!("not a regular file ({kind})"),
        U::TooLarge { kib, limit_kib } => format!("{kib} KiB, over the {limit_kib} KiB limit"),
        U::Unreadable => "unreadable".into(),
        U::Binary => "binary (contains NUL bytes)".into(),
        U::NotUtf8 => "not UTF-8 text".into(),
        U::NoGrammar => "no grammar".into(),
        U::GrammarMissing {
            grammar,
            built_in: true,
        } => format!("grammar {grammar} unavailable"),
        U::GrammarMissing {
            grammar,
            built_in: false,
        } => format!("grammar {grammar} not built into this binary"),
        U::OverFileLimit { more, limit } => {
            format!("{more} more source files not indexed: over the {limit}-file limit")
        }
    }
}

/// A file the syntactic index left out, as a map lists it: `path (why)`.
pub(crate) fn skipped(s: &scry_model::Skipped) -> String {
    format!(
        "{} ({})",
        scry_base::paths::display(&s.path, Path::new("")),
        unindexed(&s.why)
    )
}

fn unsupported(server: &str, what: &str) -> String {
    format!("{server} does not support {what}")
}

/// A reason or note as one sentence (no final period), for the MCP front
/// end.
pub(crate) fn reason(r: &Reason, root: &Path) -> String {
    reason_in(r, root, Dialect::Mcp)
}

/// A reason or note as one sentence (no final period), the arguments
/// its errors name spelled in `d`.
pub(crate) fn reason_in(r: &Reason, root: &Path, d: Dialect) -> String {
    match r {
        Reason::Indexing { server, progress } => indexing(server, progress),
        Reason::ServerStarting { server } => format!("{server} is starting"),
        Reason::ServerNotRunning { server } => format!("{server} is not running"),
        Reason::Unsupported { server, method } => unsupported(server, method),
        Reason::ActionUnsupported { server, action } => unsupported(server, action.noun()),
        Reason::NothingThere { server, places } if *places > 1 => {
            format!("{server} returned nothing at the {places} places tried")
        }
        Reason::NothingThere { server, .. } => format!("{server} returned nothing there"),
        Reason::Failed { provider, error } => {
            format!("{provider}: {}", crate::error_text_in(error, root, d))
        }
        Reason::Error { error } => crate::error_text_in(error, root, d),
        Reason::ServerCapped { server, kept } => {
            format!(
                "{server} listed at least {kept} locations; the first {kept} (in its order) kept"
            )
        }
        Reason::NameMatchesCapped { name, found, kept } => {
            format!(
                "{found} references of `{name}` found; the first {kept} (the asked file's first, then in path order) considered"
            )
        }
        Reason::OutsideWorkspace { symbol } => {
            format!("`{symbol}` was found outside the workspace")
        }
        Reason::SyntaxErrors { path } => format!(
            "{} has syntax errors; the parser recovered around them",
            display_path(path, root)
        ),
        Reason::NotIndexed { path, why } => format!(
            "{} is not in the syntactic index: {}",
            display_path(path, root),
            unindexed(why)
        ),
        Reason::NoGrammarFiles { languages } => format!(
            "no source file a grammar serves was found (scry-syntax: {})",
            languages.join(", ")
        ),
        Reason::Registered { methods } => {
            format!("registered dynamically: {}", methods.join(", "))
        }
        Reason::ServerLogs { dir } => format!("server logs: {}", display_path(dir, root)),
        Reason::Configuration { files } => format!(
            "configuration: {}",
            files
                .iter()
                .map(|p| display_path(p, root))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Reason::Syntactic { because: Some(b) } => format!(
            "syntactic answer (tree-sitter, names matched as written, not resolved): {}",
            reason_in(b, root, d)
        ),
        Reason::Syntactic { because: None } => {
            "syntactic answer: names matched as written, not resolved".to_string()
        }
        Reason::LocalBinding { name } => format!("`{name}` is a local binding there"),
        Reason::FromIndex { because } => format!(
            "answered from the SCIP index because {}; ask again for the live server's answer",
            reason_in(because, root, d)
        ),
        Reason::IndexLeftOut { locations, files } => format!(
            "{locations} location(s) in {files} file(s) changed since the index were left out"
        ),
        Reason::IndexExternal { name } => format!(
            "`{name}` is defined outside the indexed project: only the project's uses are listed (the live server also lists those in dependencies and the standard library)"
        ),
        Reason::IndexSeveralDefinitions { name, files } => format!(
            "the index gives `{name}` definitions in {files} files (one symbol for several things): these references may mix them; ask again for the live server's"
        ),
        Reason::IndexChanged {
            changed,
            total,
            refreshed: true,
        } => format!(
            "{changed} of {total} indexed files changed since the index was built; the daemon rebuilds it when the workspace is idle"
        ),
        Reason::IndexChanged { changed, total, .. } => format!(
            "{changed} of {total} indexed files changed since the index was built: the index is stale and nothing rebuilds it by itself here (no daemon, or `index.refresh` off); rebuild it with `scry index`"
        ),
        Reason::NoServerApplies => "no language server applies to this workspace (no root markers found); pass a path to pick one".to_string(),
        Reason::NoCodeAction { server } => format!("{server} offers no code action there"),
        Reason::CommandNotPreviewed { command, server } => format!(
            "applying this action also runs the command `{command}` at {server}; its edits are known only when it runs, so they are not part of this preview"
        ),
        Reason::CommandFailed { error } => {
            format!(
                "the command failed: {}",
                crate::error_text_in(error, root, d)
            )
        }
        Reason::FilesCapped { checked, files } => format!(
            "checked the first {checked} of {files} files (maxOpenDocuments); name a smaller target to see the rest"
        ),
        Reason::All(rs) => rs
            .iter()
            .map(|r| reason_in(r, root, d))
            .collect::<Vec<_>>()
            .join("; "),
        Reason::DaemonNotUsed { why } => {
            format!("scry daemon: not used ({why}); this call ran in-process")
        }
        Reason::ServedByDaemon { pid } => format!(
            "served by the scry daemon (pid {pid}; `scry daemon status`, `scry daemon stop`)"
        ),
        Reason::Recovered(r) => recovered(r, root),
        Reason::TrustIgnored(n) => trust_notice(n, root),
        Reason::WorkspaceTrust { trust: t } => format!("workspace {}", trust(t)),
        Reason::Memory(m) => memory_action(m),
        Reason::IndexPathRefused { why } => why.clone(),
        Reason::ConfigWarning { warning } => format!("warning: {warning}"),
        Reason::OutsideServerView {
            server,
            name,
            folders,
            shown,
            files,
            complete,
            ..
        } => format!(
            "{server} answered for the project at {} only, and `{name}` is also written in {} outside {}: {}{}{}",
            paths_list(folders, root),
            crate::common::plural(*files, "file", "files"),
            if folders.len() == 1 { "it" } else { "them" },
            paths_list(shown, root),
            if *files > shown.len() { ", …" } else { "" },
            if *complete {
                ""
            } else {
                " (not every file there was read)"
            },
        ),
        Reason::NotUtf8Names {
            server,
            name,
            shown,
            files,
        } => format!(
            "{server} cannot open files whose names are not UTF-8 (a language server names a file as text){}: {}{}",
            if name.is_empty() {
                format!(
                    ", and {files} of the files asked about {}",
                    if *files == 1 { "is one" } else { "are" }
                )
            } else {
                format!(", and `{name}` is written in {}", crate::common::plural(*files, "such file", "such files"))
            },
            paths_list(shown, root),
            if *files > shown.len() { ", …" } else { "" },
        ),
        Reason::NotAllSeen {
            polled,
            unreached,
            dropped,
            overflowed,
        } => {
            let mut parts = Vec::new();
            if *unreached > 0 {
                parts.push(format!(
                    "{unreached} of the {polled} directories scry polls (it does not watch them) were not checked in time"
                ));
            }
            if *dropped > 0 {
                parts.push(format!(
                    "{dropped} directories are past what scry watches or polls"
                ));
            }
            if *overflowed {
                parts.push("the system's queue of file changes overflowed".to_string());
            }
            format!(
                "changes made outside scry may not have reached the server before this answer: {}",
                parts.join("; ")
            )
        }
        Reason::ProjectsNotLoaded {
            server,
            name,
            projects,
            count,
        } => format!(
            "{server} searches only the projects it has loaded, and {count} more {} `{name}`: {}{}",
            if *count == 1 {
                "project writes"
            } else {
                "projects write"
            },
            paths_list(projects, root),
            if *count > projects.len() { ", …" } else { "" },
        ),
        Reason::IndexRemote { url, problem } => {
            format!("the remote SCIP index ({url}) {}", remote_problem(problem, root))
        }
        Reason::IndexTranslated {
            locations,
            files,
            refound,
            dropped,
        } => {
            let mut words = format!(
                "the index was built at an earlier commit: {locations} location(s) in {files} file(s) changed since were moved to their lines now across the git diff"
            );
            if *refound > 0 {
                words.push_str(&format!(
                    "; {refound} on lines changed since were found again by name on the line they became"
                ));
            }
            if *dropped > 0 {
                words.push_str(&format!(
                    "; {dropped} on lines changed since were left out (ask again when the live server is ready for them)"
                ));
            }
            words
        }
        Reason::IndexUnusable { error } => format!(
            "the SCIP index is not usable ({}); answered from the other sources — rebuild it with `scry index`",
            scry_base::paths::relativise_text(error, root)
        ),
    }
}

/// What happened to the remote index, after "the remote SCIP index (URL)".
fn remote_problem(p: &scry_model::RemoteProblem, root: &Path) -> String {
    use scry_model::RemoteProblem as P;
    let other = "; answered from the other sources";
    match p {
        P::Fetching => {
            "is being fetched in the background; answered from the other sources meanwhile (ask again shortly)".into()
        }
        P::NoCommit => format!("is not used: the workspace is not a git checkout with a commit{other}"),
        P::NoIndex {
            tried,
            timed_out: false,
        } => format!(
            "has no index for HEAD or the {} commit(s) before it{other}",
            tried.saturating_sub(1)
        ),
        P::NoIndex {
            tried,
            timed_out: true,
        } => format!(
            "was not found in time ({tried} commit(s) from HEAD back tried){other}"
        ),
        P::Status { status } => format!("answered HTTP {status}{other}"),
        P::Redirected { to } if to.is_empty() => {
            format!("redirected to another place; not followed{other}")
        }
        P::Redirected { to } => format!("redirected to another host ({to}); not followed{other}"),
        P::Stalled { secs } => {
            format!("sent nothing for {secs} s; the fetch was given up{other}")
        }
        P::TooLarge { limit } => format!(
            "is over the size limit ({} MiB); not fetched{other}",
            limit / (1024 * 1024)
        ),
        P::DigestMismatch => {
            format!("does not match the SHA-256 its .sha256 file gives: refused{other}")
        }
        P::DigestUnreadable => {
            format!("has a .sha256 file not in sha256sum's format: refused{other}")
        }
        P::Unreachable { error } => format!("could not be fetched ({error}){other}"),
        P::Unusable { error } => format!(
            "was refused ({}){other}",
            scry_base::paths::relativise_text(error, root)
        ),
        P::BadUrl { why } => format!("is not usable ({why}){other}"),
        P::HeaderUnset { env } => format!(
            "is not asked: its header's value comes from the environment variable {env}, which is not set (in the daemon: set it where the daemon starts){other}"
        ),
    }
}

/// Whether a workspace is trusted, and why: the one wording of `status`
/// and `doctor`.
pub(crate) fn trust(t: &Trust) -> String {
    match t {
        Trust::Env => format!("trusted ({}=all)", Trust::ENV),
        Trust::UserRoot(p) => format!("trusted (trustedRoots: {})", p.display()),
        Trust::Recorded => "trusted (`scry trust`)".into(),
        Trust::Explicit => "trusted (configuration given by the caller)".into(),
        Trust::Untrusted { revoked: false } => "not trusted".into(),
        Trust::Untrusted { revoked: true } => {
            "not trusted: the project configuration changed since `scry trust`".into()
        }
    }
}

/// What an untrusted workspace ignored, in one line: `workspace not
/// trusted: ignored .scry.json: new server "x"; project-local
/// node_modules/.bin/ruff — run `scry trust` in the workspace to allow
/// them`.
fn trust_notice(n: &TrustNotice, root: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < n.ignored.len() {
        let file = &n.ignored[i].0;
        let items: Vec<&str> = n.ignored[i..]
            .iter()
            .take_while(|(f, _)| f == file)
            .map(|(_, w)| w.as_str())
            .collect();
        i += items.len();
        parts.push(format!(
            "{}: {}",
            display_path(file, root),
            items.join(", ")
        ));
    }
    for b in &n.local_bins {
        parts.push(format!("project-local {}", display_path(b, root)));
    }
    let why = if n.revoked {
        "workspace trust revoked (project configuration changed since `scry trust`)"
    } else {
        "workspace not trusted"
    };
    format!(
        "{why}: ignored {} — run `scry trust` in the workspace to allow them",
        parts.join("; ")
    )
}

/// What the memory policy did, with the figures and how to change them:
/// the one wording of the next answer's note, `status` and `daemon
/// status`.
pub fn memory_action(m: &MemoryAction) -> String {
    let processes = |n: usize| {
        if n > 1 {
            format!(" in {n} processes")
        } else {
            String::new()
        }
    };
    match m {
        MemoryAction::Restarted {
            server,
            memory_kib,
            processes: n,
            memory_cap_kib,
            now,
        } => {
            let cap = memory_cap_kib.map(describe_kib).unwrap_or_default();
            let (when, then) = if *now {
                ("before this question", "")
            } else {
                (
                    "between requests",
                    "; the new process starts with the next question",
                )
            };
            format!(
                "{server} was restarted {when}: it used {}{}, over its {cap} memory cap (`memoryMiB` of the server, default `limits.serverMemoryMiB`){then}",
                describe_kib(*memory_kib),
                processes(*n),
            )
        }
        MemoryAction::Stopped {
            server,
            memory_kib,
            processes: n,
            total_kib,
            memory_budget_kib,
            idle_secs,
        } => format!(
            "{server} was stopped: the language servers used {} together, over the {} budget (`limits.memoryBudgetMiB`), and it was the least recently used idle one ({}{}, idle {idle_secs} s); the next question starts it again",
            describe_kib(*total_kib),
            describe_kib(*memory_budget_kib),
            describe_kib(*memory_kib),
            processes(*n),
        ),
    }
}

/// What recovery did with a dead writer's edit, in one line.
fn recovered(r: &Recovered, root: &Path) -> String {
    let list = |ps: &[std::path::PathBuf]| {
        let mut names: Vec<String> = ps.iter().take(5).map(|p| display_path(p, root)).collect();
        if ps.len() > 5 {
            names.push(format!("… {} more", ps.len() - 5));
        }
        names.join(", ")
    };
    let what = if r.undo {
        format!("an undo of {}", r.title)
    } else {
        format!("the edit {}", r.title)
    };
    let mut out = if r.completed {
        let kept = if r.undo {
            "it is kept, the edit stays undone"
        } else {
            "it is kept as applied (`undo` reverts it)"
        };
        format!(
            "recovered: {what} (journal entry {}) was interrupted after it had written every file; {kept}",
            r.id
        )
    } else {
        let mut parts = vec![format!("{} file(s) restored", r.restored.len())];
        if !r.removed.is_empty() {
            parts.push(format!("{} created file(s) removed", r.removed.len()));
        }
        parts.push(format!(
            "{} staged temporary file(s) removed",
            r.temps_removed
        ));
        format!(
            "recovered: {what} (journal entry {}) was interrupted by the death of its writer and rolled back: {}; nothing of it remains",
            r.id,
            parts.join(", ")
        )
    };
    if !r.restored.is_empty() && !r.completed {
        out.push_str(&format!(" (restored: {})", list(&r.restored)));
    }
    if !r.left_alone.is_empty() {
        out.push_str(&format!(
            "; changed since by someone else, left as they are: {}",
            list(&r.left_alone)
        ));
    }
    if !r.failed.is_empty() {
        let f: Vec<String> = r
            .failed
            .iter()
            .take(5)
            .map(|(p, e)| format!("{}: {e}", display_path(p, root)))
            .collect();
        out.push_str(&format!("; NOT restored: {}", f.join("; ")));
    }
    out
}

/// What chose a server's folder: `Cargo.toml [workspace]`, `nearest
/// marker crates/a/Cargo.toml`, …
pub(crate) fn root_choice(c: &scry_model::RootChoice, root: &Path) -> String {
    use scry_model::RootChoice as C;
    match c {
        C::Workspace { file, key: Some(k) } => format!("{} [{k}]", display_path(file, root)),
        C::Workspace { file, key: None } => display_path(file, root),
        C::Package { marker } => format!("nearest marker {}", display_path(marker, root)),
        C::SeveralPackages { packages } => {
            format!("{packages} packages and no workspace file: the workspace root")
        }
        C::NoMarker => "no root marker: the workspace root".to_string(),
        C::Configured => "projectRoot.strategy \"root\"".to_string(),
    }
}

/// A server's folders, each with what chose it: `. (Cargo.toml
/// [workspace]), scratch (scratch/Cargo.toml [workspace])`.
pub(crate) fn folders(f: &[scry_model::Folder], root: &Path) -> String {
    f.iter()
        .map(|f| {
            format!(
                "{} ({})",
                display_path(&f.path, root),
                root_choice(&f.chosen_by, root)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a server finds the programs it runs from its `PATH`:
/// `python3 at /venv/b/bin/python3, python at /venv/b/bin/python`.
pub(crate) fn programs(p: &[scry_model::PathProgram]) -> String {
    p.iter()
        .map(|p| format!("{} at {}", p.name, p.path.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Paths shown relative to the root, joined by commas.
fn paths_list(paths: &[std::path::PathBuf], root: &Path) -> String {
    paths
        .iter()
        .map(|p| display_path(p, root))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why an answer is empty, as the text's `Reason:` says it: an indexing
/// server is asked again shortly.
pub(crate) fn empty_reason(r: &Reason, root: &Path, d: Dialect) -> String {
    match r {
        Reason::Indexing { .. } => format!("{}; ask again shortly", reason_in(r, root, d)),
        _ => reason_in(r, root, d),
    }
}

/// The `Partial:` line: why the result may be incomplete, and what to do.
pub(crate) fn partial(r: &Reason, precision: Option<Precision>, root: &Path, d: Dialect) -> String {
    // What the server cannot see: asking again changes nothing.
    if let Reason::OutsideServerView { .. } | Reason::ProjectsNotLoaded { .. } = r {
        return format!(
            "Partial: {} — those uses are not in this answer; ask from one of those files for its project's.",
            reason_in(r, root, d)
        );
    }
    if let Reason::NotUtf8Names { name, .. } = r {
        return format!(
            "Partial: {} — {} not in this answer; give them UTF-8 names for the server to see them.",
            reason_in(r, root, d),
            if name.is_empty() {
                "their problems are"
            } else {
                "those uses are"
            }
        );
    }
    match precision {
        Some(p) => format!(
            "Partial: {}; {} — ask again for the exact one.",
            reason_in(r, root, d),
            precision_answer(p)
        ),
        None => format!(
            "Partial: {} — results may be incomplete; ask again shortly.",
            reason_in(r, root, d)
        ),
    }
}

/// What kind of answer a precision gives, in a few words.
fn precision_answer(p: Precision) -> &'static str {
    match p {
        Precision::Syntactic => "syntactic answer",
        Precision::Index => "answer from the SCIP index",
    }
}

/// How the position was found, in a few words; `None` when not said.
pub(crate) fn via(v: &Via) -> Option<String> {
    let prose = |p: bool| if p { " (in a comment or string)" } else { "" };
    Some(match v {
        Via::Unsaid => return None,
        Via::GivenPosition => "the given line and column".to_string(),
        Via::FirstIdentifier => "the first identifier on the given line".to_string(),
        Via::Declaration { kind, name } => format!("declaration of {kind} `{name}`"),
        Via::Occurrence {
            n,
            of,
            name,
            prose: p,
        } => format!("occurrence {n} of {of} of `{name}`{}", prose(*p)),
        Via::OnLine {
            of: 1,
            name,
            prose: p,
            ..
        } => format!("occurrence of `{name}` on the given line{}", prose(*p)),
        Via::OnLine {
            n,
            of,
            name,
            prose: p,
        } => format!(
            "occurrence {n} of {of} of `{name}` on the given line{}",
            prose(*p)
        ),
        Via::NotOnLine {
            name,
            asked,
            line,
            first,
            prose: p,
        } => {
            let what = if *first { "asked at" } else { "occurrence at" };
            format!(
                "`{name}` is not on line {asked}; {what} line {line}{}",
                prose(*p)
            )
        }
        Via::WorkspaceSymbol {
            kind: Some(kind),
            name,
        } => format!("workspace symbol {kind} `{name}`"),
        Via::WorkspaceSymbol { kind: None, name } => format!("workspace symbol `{name}`"),
        Via::OneOfTargets {
            form,
            name,
            targets,
            line: Some(l),
            col,
            ..
        } => {
            format!("col {col} `{form}`, 1 of {targets} different targets of `{name}` on line {l}")
        }
        Via::OneOfTargets {
            form,
            name,
            targets,
            line: None,
            at_line,
            col,
        } => format!(
            "{at_line}:{col} `{form}`, 1 of {targets} different targets of `{name}`, which this file only uses"
        ),
    })
}

/// Where the other targets of a name are: "on line 12", "in this file".
pub(crate) fn same_name_scope(same: &SameName) -> String {
    match same.line {
        Some(l) => format!("on line {l}"),
        None => "in this file".to_string(),
    }
}

/// The arguments that select an occurrence, in the front end's syntax,
/// joined with " or ".
pub(crate) fn selectors(select: &[Selector], dialect: Dialect) -> Vec<String> {
    select.iter().map(|s| dialect.selector(s)).collect()
}

/// A server's memory in words, the one wording of status, `daemon status`
/// and `doctor`: `212.4 MiB in 2 processes (cap 4.0 GiB)`; the process
/// count only when there is more than one, the cap when known.
pub(crate) fn describe_usage(
    memory_kib: u64,
    processes: Option<usize>,
    memory_cap_kib: Option<u64>,
) -> String {
    let procs = match processes {
        Some(n) if n > 1 => format!(" in {n} processes"),
        _ => String::new(),
    };
    let cap = memory_cap_kib
        .map(|c| format!(" (cap {})", describe_kib(c)))
        .unwrap_or_default();
    format!("{}{procs}{cap}", describe_kib(memory_kib))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn recovery_and_daemon_notes() {
        let root = Path::new("/w");
        let mut r = Recovered {
            id: "e1".into(),
            title: "rename `a` to `b`".into(),
            undo: false,
            completed: false,
            restored: vec![root.join("src/a.rs")],
            removed: Vec::new(),
            temps_removed: 2,
            left_alone: vec![root.join("x.rs")],
            failed: vec![(root.join("y.rs"), "permission denied".into())],
        };
        let said = |r: &Recovered| reason(&Reason::Recovered(Box::new(r.clone())), root);
        assert_eq!(
            said(&r),
            "recovered: the edit rename `a` to `b` (journal entry e1) was interrupted by the death of its writer and rolled back: 1 file(s) restored, 2 staged temporary file(s) removed; nothing of it remains (restored: src/a.rs); changed since by someone else, left as they are: x.rs; NOT restored: y.rs: permission denied"
        );
        (r.undo, r.completed) = (true, true);
        (r.left_alone, r.failed) = (Vec::new(), Vec::new());
        assert_eq!(
            said(&r),
            "recovered: an undo of rename `a` to `b` (journal entry e1) was interrupted after it had written every file; it is kept, the edit stays undone"
        );
        assert_eq!(
            reason(
                &Reason::DaemonNotUsed {
                    why: "no socket".into()
                },
                root
            ),
            "scry daemon: not used (no socket); this call ran in-process"
        );
        assert_eq!(
            reason(&Reason::ServedByDaemon { pid: 7 }, root),
            "served by the scry daemon (pid 7; `scry daemon status`, `scry daemon stop`)"
        );
    }

    #[test]
    fn selectors_in_each_dialect() {
        let s = [
            Selector::Line(12),
            Selector::Column(35),
            Selector::Symbol("hir::Literal".into()),
        ];
        assert_eq!(
            selectors(&s, Dialect::Mcp),
            ["line=12", "column=35", "symbol=hir::Literal"]
        );
        assert_eq!(
            selectors(&s, Dialect::Cli),
            ["--line 12", "--column 35", "--symbol hir::Literal"]
        );
        assert_eq!(
            Dialect::Cli.selector(&Selector::Symbol("self.span()".into())),
            "--symbol 'self.span()'"
        );
        assert_eq!(
            Dialect::Cli.selector(&Selector::Symbol("it's".into())),
            r"--symbol 'it'\''s'"
        );
    }

    #[test]
    fn indexing_and_unsupported_are_worded_once() {
        let root = Path::new("/ws");
        let ix = Reason::Indexing {
            server: "rust-analyzer".into(),
            progress: "Indexing 45%".into(),
        };
        assert_eq!(
            reason(&ix, root),
            "rust-analyzer is still indexing (Indexing 45%)"
        );
        assert_eq!(
            empty_reason(&ix, root, Dialect::Mcp),
            "rust-analyzer is still indexing (Indexing 45%); ask again shortly"
        );
        assert_eq!(
            partial(&ix, Some(Precision::Syntactic), root, Dialect::Mcp),
            "Partial: rust-analyzer is still indexing (Indexing 45%); syntactic answer — ask again for the exact one."
        );
        let un = Reason::Unsupported {
            server: "gopls".into(),
            method: "textDocument/declaration".into(),
        };
        assert_eq!(
            reason(&Reason::All(vec![un, ix]), root),
            "gopls does not support textDocument/declaration; rust-analyzer is still indexing (Indexing 45%)"
        );
    }

    /// What a server's folder leaves out is said as a partial view, with
    /// no promise that asking again helps.
    #[test]
    fn a_partial_view_names_what_lies_outside_it() {
        let root = Path::new("/w");
        let out = Reason::OutsideServerView {
            server: "rust-analyzer".into(),
            name: "shared_helper".into(),
            folders: vec![root.to_path_buf()],
            parts: vec![root.join("scratch")],
            shown: vec![root.join("scratch/src/main.rs")],
            files: 1,
            complete: true,
        };
        assert_eq!(
            partial(&out, None, root, Dialect::Cli),
            "Partial: rust-analyzer answered for the project at . only, and `shared_helper` is also written in 1 file outside it: scratch/src/main.rs — those uses are not in this answer; ask from one of those files for its project's."
        );
        let out = Reason::OutsideServerView {
            server: "rust-analyzer".into(),
            name: "shared_helper".into(),
            folders: vec![root.join("a"), root.join("b")],
            parts: vec![root.join("scratch")],
            shown: vec![root.join("scratch/src/main.rs")],
            files: 5,
            complete: false,
        };
        assert_eq!(
            reason(&out, root),
            "rust-analyzer answered for the project at a, b only, and `shared_helper` is also written in 5 files outside them: scratch/src/main.rs, … (not every file there was read)"
        );
        let left = Reason::ProjectsNotLoaded {
            server: "typescript-language-server".into(),
            name: "run".into(),
            projects: vec![root.join("packages/a"), root.join("packages/b")],
            count: 3,
        };
        assert_eq!(
            partial(&left, None, root, Dialect::Mcp),
            "Partial: typescript-language-server searches only the projects it has loaded, and 3 more projects write `run`: packages/a, packages/b, … — those uses are not in this answer; ask from one of those files for its project's."
        );
    }

    /// What the watcher could not see before an answer is said in it.
    #[test]
    fn changes_not_all_seen() {
        let r = Reason::NotAllSeen {
            polled: 2003,
            unreached: 800,
            dropped: 0,
            overflowed: true,
        };
        assert_eq!(
            reason(&r, Path::new("/w")),
            "changes made outside scry may not have reached the server before this answer: 800 of the 2003 directories scry polls (it does not watch them) were not checked in time; the system's queue of file changes overflowed"
        );
    }

    #[test]
    fn why_an_index_answered_is_worded_from_the_server_state() {
        let root = Path::new("/ws");
        let from = |because| Reason::FromIndex {
            because: Box::new(because),
        };
        assert_eq!(
            reason(
                &from(Reason::ServerStarting {
                    server: "rust-analyzer".into()
                }),
                root
            ),
            "answered from the SCIP index because rust-analyzer is starting; ask again for the live server's answer"
        );
        assert_eq!(
            reason(
                &from(Reason::ServerNotRunning {
                    server: "pyright".into()
                }),
                root
            ),
            "answered from the SCIP index because pyright is not running; ask again for the live server's answer"
        );
    }

    #[test]
    fn paths_in_reasons_are_relative_and_escaped() {
        let root = Path::new("/ws");
        let r = Reason::SyntaxErrors {
            path: "/ws/src/a\nb.rs".into(),
        };
        assert_eq!(
            reason(&r, root),
            "src/a\\nb.rs has syntax errors; the parser recovered around them"
        );
        let r = Reason::Failed {
            provider: "pyright".into(),
            error: scry_model::OpError::FileNotFound("/ws/x.py".into()),
        };
        assert_eq!(reason(&r, root), "pyright: file not found: x.py");
    }

    #[test]
    fn trust_and_what_an_untrusted_workspace_ignored() {
        let root = Path::new("/ws");
        let f = PathBuf::from("/ws/.scry.json");
        let n = TrustNotice {
            revoked: false,
            ignored: vec![
                (
                    f.clone(),
                    "server \"pyright\": command, args, env, settings, initializationOptions"
                        .into(),
                ),
                (f, "new server \"mine\"".into()),
            ],
            local_bins: vec![PathBuf::from("/ws/node_modules/.bin/x")],
        };
        assert_eq!(
            reason(&Reason::TrustIgnored(Box::new(n.clone())), root),
            "workspace not trusted: ignored .scry.json: server \"pyright\": command, args, env, \
             settings, initializationOptions, new server \"mine\"; project-local node_modules/.bin/x — run `scry trust` in the \
             workspace to allow them"
        );
        let revoked = TrustNotice {
            revoked: true,
            ignored: Vec::new(),
            ..n
        };
        assert_eq!(
            reason(&Reason::TrustIgnored(Box::new(revoked)), root),
            "workspace trust revoked (project configuration changed since `scry trust`): ignored project-local node_modules/.bin/x — run `scry trust` in the workspace to allow them"
        );
        assert_eq!(
            reason(&Reason::WorkspaceTrust { trust: Trust::Env }, root),
            "workspace trusted (SCRY_TRUST=all)"
        );
    }

    #[test]
    fn memory_actions_carry_the_figures_and_how_to_change_them() {
        const MIB: u64 = 1024;
        let restarted = |now| MemoryAction::Restarted {
            server: "pyright".into(),
            memory_kib: 2355 * MIB,
            processes: 2,
            memory_cap_kib: Some(2048 * MIB),
            now,
        };
        assert_eq!(
            memory_action(&restarted(true)),
            "pyright was restarted before this question: it used 2.3 GiB in 2 processes, over its 2.0 GiB memory cap (`memoryMiB` of the server, default `limits.serverMemoryMiB`)"
        );
        let t = memory_action(&restarted(false));
        assert!(
            t.starts_with("pyright was restarted between requests: it used 2.3 GiB")
                && t.ends_with("starts with the next question"),
            "{t}"
        );
        let stopped = MemoryAction::Stopped {
            server: "pyright".into(),
            memory_kib: 2355 * MIB,
            processes: 2,
            total_kib: 5 * 1024 * MIB,
            memory_budget_kib: 4 * 1024 * MIB,
            idle_secs: 42,
        };
        assert_eq!(
            reason(&Reason::Memory(Box::new(stopped)), Path::new("/ws")),
            "pyright was stopped: the language servers used 5.0 GiB together, over the 4.0 GiB budget (`limits.memoryBudgetMiB`), and it was the least recently used idle one (2.3 GiB in 2 processes, idle 42 s); the next question starts it again"
        );
    }

    #[test]
    fn an_unusable_index_is_said_with_its_paths_relative() {
        let r = Reason::IndexUnusable {
            error: "/ws/.scry/index.scip: truncated".into(),
        };
        assert_eq!(
            reason(&r, Path::new("/ws")),
            "the SCIP index is not usable (.scry/index.scip: truncated); answered from the other sources — rebuild it with `scry index`"
        );
    }

    #[test]
    fn a_remote_index_problem_and_a_translation_are_worded() {
        use scry_model::RemoteProblem as P;
        let root = Path::new("/ws");
        let remote = |problem| Reason::IndexRemote {
            url: "https://ci.example/{commit}.scip".into(),
            problem,
        };
        for (p, says) in [
            (
                P::DigestMismatch,
                "the remote SCIP index (https://ci.example/{commit}.scip) does not match the SHA-256 its .sha256 file gives: refused; answered from the other sources",
            ),
            (
                P::NoIndex {
                    tried: 3,
                    timed_out: false,
                },
                "the remote SCIP index (https://ci.example/{commit}.scip) has no index for HEAD or the 2 commit(s) before it; answered from the other sources",
            ),
            (
                P::Redirected {
                    to: "evil.example".into(),
                },
                "the remote SCIP index (https://ci.example/{commit}.scip) redirected to another host (evil.example); not followed; answered from the other sources",
            ),
            (
                P::HeaderUnset {
                    env: "SCRY_INDEX_TOKEN".into(),
                },
                "the remote SCIP index (https://ci.example/{commit}.scip) is not asked: its header's value comes from the environment variable SCRY_INDEX_TOKEN, which is not set (in the daemon: set it where the daemon starts); answered from the other sources",
            ),
            (
                P::Stalled { secs: 15 },
                "the remote SCIP index (https://ci.example/{commit}.scip) sent nothing for 15 s; the fetch was given up; answered from the other sources",
            ),
            (
                P::TooLarge { limit: 2 << 30 },
                "the remote SCIP index (https://ci.example/{commit}.scip) is over the size limit (2048 MiB); not fetched; answered from the other sources",
            ),
            (
                P::Unusable {
                    error: "/ws/x.scip is not a usable SCIP index: cut".into(),
                },
                "the remote SCIP index (https://ci.example/{commit}.scip) was refused (x.scip is not a usable SCIP index: cut); answered from the other sources",
            ),
        ] {
            assert_eq!(reason(&remote(p), root), says);
        }
        let t = Reason::IndexTranslated {
            locations: 4,
            files: 2,
            refound: 0,
            dropped: 1,
        };
        assert_eq!(
            reason(&t, root),
            "the index was built at an earlier commit: 4 location(s) in 2 file(s) changed since were moved to their lines now across the git diff; 1 on lines changed since were left out (ask again when the live server is ready for them)"
        );
        let t = Reason::IndexTranslated {
            locations: 4,
            files: 2,
            refound: 2,
            dropped: 0,
        };
        assert_eq!(
            reason(&t, root),
            "the index was built at an earlier commit: 4 location(s) in 2 file(s) changed since were moved to their lines now across the git diff; 2 on lines changed since were found again by name on the line they became"
        );
    }

    #[test]
    fn usage_in_words() {
        assert_eq!(describe_usage(512, Some(1), None), "512 KiB");
        assert_eq!(
            describe_usage(3 * 1024, Some(2), Some(4 * 1024 * 1024)),
            "3.0 MiB in 2 processes (cap 4.0 GiB)"
        );
    }

    /// Why the syntactic index left a file out, each reason's words, and a
    /// map's `path (why)`.
    #[test]
    fn unindexed_files_are_worded() {
        use scry_model::{Skipped, Unindexed as U};
        let cases = [
            (
                U::NotRegular {
                    kind: "a FIFO".into(),
                },
                "not a regular file (a FIFO)",
            ),
            (
                U::TooLarge {
                    kib: 1025,
                    limit_kib: 1024,
                },
                "1025 KiB, over the 1024 KiB limit",
            ),
            (U::Unreadable, "unreadable"),
            (U::Binary, "binary (contains NUL bytes)"),
            (U::NotUtf8, "not UTF-8 text"),
            (U::NoGrammar, "no grammar"),
            (
                U::GrammarMissing {
                    grammar: "tree-sitter-ruby".into(),
                    built_in: true,
                },
                "grammar tree-sitter-ruby unavailable",
            ),
            (
                U::GrammarMissing {
                    grammar: "tree-sitter-ruby".into(),
                    built_in: false,
                },
                "grammar tree-sitter-ruby not built into this binary",
            ),
            (
                U::OverFileLimit {
                    more: 7,
                    limit: 50000,
                },
                "7 more source files not indexed: over the 50000-file limit",
            ),
        ];
        for (why, said) in cases {
            assert_eq!(unindexed(&why), said);
        }
        let s = Skipped {
            path: "src/a.bin".into(),
            why: U::Binary,
        };
        assert_eq!(skipped(&s), "src/a.bin (binary (contains NUL bytes))");
    }
}
