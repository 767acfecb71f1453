//! The words of the reports: `status` (text and JSON), an answer's SCIP
//! index label, `doctor` (text and JSON) and `daemon status` (text and
//! JSON), from scry-model's data ([`StatusReport`], [`IndexAbout`],
//! [`DoctorReport`], [`DaemonStatus`], …).
//!
//! Invariants: each fact is worded here once, text and JSON alike (the
//! JSON forms carry the same sentences as strings where the text has
//! them); every path an answer shows goes through [`display_path`]; a
//! server's memory is [`crate::describe_usage`], a time or an age
//! [`crate::clock`]'s; a tool's text (a failed refresh's error) is the only
//! text whose root is string-replaced.

use std::fmt::Write as _;
use std::path::Path;

use scry_base::units::describe_kib;
use scry_model::{
    DaemonStatus, Doctor, DoctorIndex, DoctorReport, GrammarLeftOut, IndexAbout, IndexOrigin,
    IndexStatus, IndexerStatus, LanguageRow, LeftOutWhy, MemoryNote, NoVersion, NotChecked,
    PathLeftOut, PlatformGap, ProviderRole, ProviderRow, ProviderStatus, Reason, RefreshStatus,
    RunState, RunningServer, StatusReport, SyntacticStatus, Version,
};
use serde_json::{Value, json};

use crate::clock;
use crate::common::Rendered;
use crate::display_path;
use crate::words;

// ------------------------------------------------------------------ status

/// `status` as text: a line per configured provider, then the indexes,
/// memory and warnings.
pub(crate) fn status_text(report: &StatusReport, root: &Path) -> Rendered {
    let width = report
        .servers
        .iter()
        .map(|s| s.id.chars().count())
        .max()
        .unwrap_or(0);
    let mut body: Vec<String> = report
        .servers
        .iter()
        .map(|s| server_line(s, width, root))
        .collect();
    if report.servers.is_empty() {
        body.push("No language servers configured.".to_string());
    }
    body.extend(
        report
            .syntactic
            .iter()
            .map(|s| format!("Syntactic index: {}", syntactic(s))),
    );
    body.extend(
        index_line(report, root)
            .iter()
            .map(|s| format!("SCIP index: {s}")),
    );
    body.extend(
        report
            .index_refresh
            .iter()
            .map(|s| format!("SCIP index refresh: {}", refresh(s, root))),
    );
    body.extend((report.indexers.iter()).map(|s| format!("SCIP indexer: {}", indexer(s, root))));
    let used: u64 = report
        .servers
        .iter()
        .flat_map(|s| &s.running)
        .filter_map(|r| r.memory_kib)
        .sum();
    if let Some(budget) = report.memory_budget_kib
        && report
            .servers
            .iter()
            .any(|s| s.running.iter().any(|r| r.memory_kib.is_some()))
    {
        body.push(format!(
            "Memory: servers use {} of the {} budget (limits.memoryBudgetMiB)",
            describe_kib(used),
            describe_kib(budget)
        ));
    }
    body.extend(
        memory_events(&report.memory_events)
            .iter()
            .map(|e| format!("Memory: {e}")),
    );
    body.extend(
        report
            .watcher
            .iter()
            .map(|w| format!("File watcher: {}", watcher(w))),
    );
    body.extend(
        status_warnings(report, root)
            .iter()
            .map(|w| format!("Warning: {w}")),
    );
    Rendered {
        header: format!("Workspace: {}", report.workspace_root.display()),
        body,
        marker: None,
    }
}

/// `status`'s fields in the JSON form, in their order.
pub(crate) fn status_json(report: &StatusReport, root: &Path) -> Vec<(&'static str, Value)> {
    let mut out = vec![
        (
            "workspace_root",
            report.workspace_root.display().to_string().into(),
        ),
        (
            "servers",
            report
                .servers
                .iter()
                .map(|s| server_json(s, root))
                .collect(),
        ),
        ("warnings", status_warnings(report, root).into()),
        ("memory_events", memory_events(&report.memory_events).into()),
        ("memory_budget_kib", report.memory_budget_kib.into()),
    ];
    if let Some(s) = &report.syntactic {
        out.push(("syntactic", syntactic(s).into()));
    }
    if let Some(line) = index_line(report, root) {
        out.push(("index", line.into()));
    }
    if let Some(r) = &report.index_refresh {
        out.push(("index_refresh", refresh(r, root).into()));
    }
    if !report.indexers.is_empty() {
        let lines: Vec<String> = (report.indexers.iter()).map(|s| indexer(s, root)).collect();
        out.push(("indexers", lines.into()));
    }
    if let Some(w) = &report.watcher {
        out.push((
            "watcher",
            json!({
                "watched": w.watched,
                "polled": w.polled,
                "dropped": w.dropped,
                "why": w.why,
                "said": watcher(w),
            }),
        ));
    }
    out
}

/// The file watcher's line: what it watches, polls, and cannot see.
fn watcher(w: &scry_model::WatcherStatus) -> String {
    let mut out = format!(
        "{} directories watched; {} more polled before each request",
        w.watched, w.polled
    );
    if let Some(why) = &w.why {
        out.push_str(&format!(" ({why})"));
    }
    if w.dropped > 0 {
        out.push_str(&format!(
            "; {} past the polling bound: changes made there outside scry are not seen",
            w.dropped
        ));
    }
    out
}

fn server_line(s: &ProviderStatus, width: usize, root: &Path) -> String {
    let mut parts = vec![format!("{:<width$}", s.id)];
    if s.disabled {
        parts.push("disabled".to_string());
    } else {
        match &s.installed {
            Some(p) => parts.push(format!("installed {}", p.display())),
            None => parts.push(format!(
                "NOT INSTALLED (command {} not found on PATH)",
                s.command
            )),
        }
    }
    if !s.file_types.is_empty() {
        parts.push(s.file_types.join(","));
    }
    if !s.running.is_empty() {
        let instances: Vec<String> = s
            .running
            .iter()
            .map(|r| {
                let mut words = vec![if r.folders.is_empty() {
                    display_path(&r.root, root)
                } else {
                    format!("folders {}", words::folders(&r.folders, root))
                }];
                if let Some(pid) = r.pid {
                    words.push(format!("pid {pid}"));
                }
                words.push(run_state(&r.state));
                if let Some(enc) = &r.encoding {
                    words.push(enc.clone());
                }
                // What tells apart two processes of one server.
                if s.running.len() > 1 && !r.programs.is_empty() {
                    words.push(words::programs(&r.programs));
                }
                let mut line = format!("{}, {} open", words.join(" "), r.open_documents);
                if let Some(m) = memory_words(r) {
                    line.push_str(&format!(", {m}"));
                }
                line
            })
            .collect();
        parts.push(format!(
            "running: {} ({})",
            s.running.len(),
            instances.join("; ")
        ));
    } else if s.installed.is_some() && !s.disabled && s.kind != "cli" {
        parts.push("not running".to_string());
    }
    let mut line = parts.join("  ");
    if let Some(role) = &s.role {
        line.push_str(&format!(" — {}", provider_role(role)));
    }
    line
}

fn server_json(s: &ProviderStatus, root: &Path) -> Value {
    json!({
        "id": s.id,
        "kind": s.kind,
        "command": s.command,
        "installed": s.installed.as_ref().map(|p| p.display().to_string()),
        "file_types": s.file_types,
        "disabled": s.disabled,
        "note": s.role.as_ref().map(provider_role),
        "running": s.running.iter().map(|r| json!({
            "root": display_path(&r.root, root),
            "folders": r.folders.iter().map(|f| json!({
                "path": display_path(&f.path, root),
                "chosen_by": words::root_choice(&f.chosen_by, root),
            })).collect::<Vec<_>>(),
            "programs": r.programs,
            "pid": r.pid,
            "state": run_state(&r.state),
            "encoding": r.encoding,
            "open_documents": r.open_documents,
            "memory_kib": r.memory_kib,
            "processes": r.processes,
            "memory_cap_kib": r.memory_cap_kib,
        })).collect::<Vec<_>>(),
    })
}

/// A running server's memory: `212.4 MiB in 2 processes (cap 4.0 GiB)`.
fn memory_words(r: &RunningServer) -> Option<String> {
    let used = r.memory_kib?;
    Some(words::describe_usage(used, r.processes, r.memory_cap_kib))
}

/// `starting`, `ready`, `indexing: Indexing 45%`, `exited: <reason>`.
fn run_state(s: &RunState) -> String {
    match s {
        RunState::Starting => "starting".into(),
        RunState::Ready => "ready".into(),
        RunState::Indexing { progress } => format!("indexing: {progress}"),
        RunState::Exited { reason } => {
            format!("exited: {}", reason.as_deref().unwrap_or("unknown"))
        }
    }
}

/// Why a configured provider is not plainly the language's server.
fn provider_role(r: &ProviderRole) -> String {
    match r {
        ProviderRole::AlternativeTo { primary } => {
            format!("alternative to {primary}: used only when {primary} is not installed")
        }
        ProviderRole::CliLinter => "command-line linter (diagnostics only)".into(),
        ProviderRole::Linter => "linter (diagnostics only)".into(),
    }
}

/// The syntactic index: `120 files indexed (9000 lines), disk cache 12 KiB`.
fn syntactic(s: &SyntacticStatus) -> String {
    let cache = |b: u64| match b {
        0 => "no disk cache yet".to_string(),
        b => format!("disk cache {}", human_bytes(b)),
    };
    match s {
        SyntacticStatus::Built {
            files,
            lines,
            skipped,
            cache_bytes,
        } => format!(
            "{files} files indexed ({lines} lines{}), {}",
            if *skipped == 0 {
                String::new()
            } else {
                format!(", {skipped} skipped")
            },
            cache(*cache_bytes)
        ),
        SyntacticStatus::OnDisk {
            files,
            lines,
            cache_bytes,
        } => format!(
            "{files} files ({lines} lines) cached on disk ({}), loaded on first need",
            human_bytes(*cache_bytes)
        ),
        SyntacticStatus::NotBuilt { cache_bytes } => format!(
            "not built in this process (built on first need), {}",
            cache(*cache_bytes)
        ),
    }
}

/// A file's size: `12 KiB`, `3.4 MiB`.
fn human_bytes(b: u64) -> String {
    if b < 1024 * 1024 {
        format!("{} KiB", b.div_ceil(1024))
    } else {
        format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
    }
}

/// The status's warnings: the configuration's, then what an untrusted
/// workspace ignored.
fn status_warnings(report: &StatusReport, root: &Path) -> Vec<String> {
    let mut out = report.warnings.clone();
    out.extend(
        (report.trust_ignored.iter())
            .map(|n| words::reason(&Reason::TrustIgnored(Box::new(n.clone())), root)),
    );
    out
}

/// The status's line about the SCIP index: the index, or its problem.
fn index_line(report: &StatusReport, root: &Path) -> Option<String> {
    match (&report.index, &report.index_problem) {
        (Some(ix), _) => Some(index_status(ix, root)),
        (None, Some(r)) => Some(words::reason(r, root)),
        (None, None) => None,
    }
}

/// What the memory policy did lately, each with its time.
fn memory_events(events: &[MemoryNote]) -> Vec<String> {
    (events.iter())
        .map(|e| {
            format!(
                "{} {}",
                clock::clock(e.at_secs),
                words::memory_action(&e.what)
            )
        })
        .collect()
}

// -------------------------------------------------------------- SCIP index

/// `rust-analyzer 1.95.0, built 3 min ago at 1a2b3c4d5e6f` (the commit,
/// else the build's time).
fn provenance(a: &IndexAbout) -> String {
    let at: String = match &a.commit {
        Some(c) => c.chars().take(12).collect(),
        None => clock::utc_date(a.built_at_secs),
    };
    format!("{} at {at}", tool_and_age(a))
}

/// `rust-analyzer 1.95.0, built 3 min ago`.
fn tool_and_age(a: &IndexAbout) -> String {
    let tool = [a.tool.as_str(), a.tool_version.as_str()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "{}, built {} ago",
        if tool.is_empty() {
            "unknown indexer"
        } else {
            &tool
        },
        clock::age(a.age_secs)
    )
}

/// Who made the index, as its status says: `scry index`, `the daemon's
/// background refresh`, `CI index build/index.scip`.
fn origin(o: &IndexOrigin, root: &Path) -> String {
    match o {
        IndexOrigin::Built => "scry index".into(),
        IndexOrigin::RebuiltByDaemon => "the daemon's background refresh".into(),
        IndexOrigin::Configured { path } => format!("CI index {}", display_path(path, root)),
        IndexOrigin::Remote(r) => format!(
            "the remote index ({}), fetched {} ago, {}",
            fetched_from(r),
            clock::age(r.fetched_secs),
            behind(r.behind)
        ),
    }
}

/// Where a fetched index came from: `ci.example`, or `a file` (a `file:`
/// URL).
fn fetched_from(r: &scry_model::RemoteOrigin) -> String {
    if r.host.is_empty() {
        "a file".into()
    } else {
        r.host.clone()
    }
}

/// How far the index's commit is from HEAD: `at HEAD`, `1 commit behind`,
/// `3 commits behind`.
fn behind(n: u32) -> String {
    match n {
        0 => "at HEAD".into(),
        1 => "1 commit behind".into(),
        n => format!("{n} commits behind"),
    }
}

/// Who answered, as the answer names it: the server, or the SCIP index
/// with what built it and when ([`index_label`]).
pub(crate) fn server(a: &scry_model::Answer, root: &Path) -> Option<String> {
    match &a.from_index {
        Some(ix) => Some(index_label(ix, root)),
        None => a.server.clone(),
    }
}

/// The server an index answer names: `SCIP index (rust-analyzer 1.95.0,
/// built 3 min ago at 1a2b3c4d5e6f)`; a CI-built one says so (`…, CI index
/// build/index.scip`), one the daemon rebuilt too.
pub fn index_label(a: &IndexAbout, root: &Path) -> String {
    match &a.origin {
        IndexOrigin::Built => format!("SCIP index ({})", provenance(a)),
        IndexOrigin::RebuiltByDaemon => {
            format!("SCIP index ({}, rebuilt by the daemon)", provenance(a))
        }
        IndexOrigin::Configured { .. } => {
            format!(
                "SCIP index ({}, {})",
                provenance(a),
                origin(&a.origin, root)
            )
        }
        // `SCIP index @1a2b3c4d5e6f (3 commits behind; rust-analyzer 1.95.0,
        // built 2 h ago; fetched from ci.example)`.
        IndexOrigin::Remote(r) => {
            let at: String = a.commit.as_deref().unwrap_or("").chars().take(12).collect();
            format!(
                "SCIP index @{at} ({}; {}; fetched from {})",
                behind(r.behind),
                tool_and_age(a),
                fetched_from(r)
            )
        }
    }
}

/// An index's status line: source, age, files covered, changed since,
/// refused documents, where from; a stale one nothing rebuilds says how to.
fn index_status(ix: &IndexStatus, root: &Path) -> String {
    let refused = match (ix.refused, &ix.refused_first) {
        (0, _) => String::new(),
        (n, Some(first)) => {
            format!("; {n} document(s) refused, their paths leave the workspace (first: {first})")
        }
        (n, None) => format!("; {n} document(s) refused, their paths leave the workspace"),
    };
    let line = format!(
        "{}; {} files covered, {} changed since{refused}; from {}",
        provenance(&ix.about),
        ix.documents,
        ix.changed,
        origin(&ix.about.origin, root)
    );
    if ix.stale_unrefreshed {
        format!(
            "{line}; stale, and nothing rebuilds it by itself here (no daemon, or `index.refresh` off): run `scry index`"
        )
    } else {
        line
    }
}

/// The background refresh: running, or its last outcome.
fn refresh(r: &RefreshStatus, root: &Path) -> String {
    let secs = |ms: u64| ms as f64 / 1000.0;
    match r {
        RefreshStatus::Running => "running (lowest priority)".into(),
        RefreshStatus::Rebuilt {
            ago_secs,
            millis,
            files,
        } => format!(
            "last run {} ago: rebuilt in {:.1} s ({files} files)",
            clock::age(*ago_secs),
            secs(*millis)
        ),
        RefreshStatus::Failed {
            ago_secs,
            millis,
            error,
        } => format!(
            "last run {} ago failed after {:.1} s: {}",
            clock::age(*ago_secs),
            secs(*millis),
            scry_base::paths::relativise_text(error, root)
        ),
    }
}

/// `rust-analyzer (for rust-analyzer): installed, /usr/bin/rust-analyzer`
/// or [`indexer_missing`].
fn indexer(s: &IndexerStatus, root: &Path) -> String {
    match &s.program {
        Some(p) => format!(
            "{} (for {}): installed, {}",
            s.command,
            s.server,
            display_path(p, root)
        ),
        None => indexer_missing(s),
    }
}

/// `scip-python (for pyright) is not installed; install: npm install -g …`.
pub fn indexer_missing(s: &IndexerStatus) -> String {
    let how = (s.install.as_ref())
        .map(|c| format!("; install: {c}"))
        .unwrap_or_default();
    format!("{} (for {}) is not installed{how}", s.command, s.server)
}

/// One of `doctor`'s SCIP index lines.
fn doctor_index(ix: &DoctorIndex, root: &Path) -> String {
    let read = |answers: bool| {
        if answers {
            "answers cold questions"
        } else {
            "not read: the other index is newer"
        }
    };
    match ix {
        DoctorIndex::PathRefused { why } => why.clone(),
        DoctorIndex::Unreadable { path, why } => format!(
            "{}: {why}",
            origin(&IndexOrigin::Configured { path: path.clone() }, root)
        ),
        DoctorIndex::Current { status, answers } => {
            format!("{}; {}", index_status(status, root), read(*answers))
        }
        DoctorIndex::Remote {
            url,
            cached,
            newest,
            answers,
        } => {
            let fetched = match newest {
                Some((commit, age)) => format!(
                    "{cached} commit(s) fetched, the newest {} ago (@{})",
                    clock::age(*age),
                    commit.chars().take(12).collect::<String>()
                ),
                None => "nothing fetched yet (the next question fetches it)".into(),
            };
            let read = if *answers {
                "answers cold questions"
            } else {
                "not read: a local index takes its place"
            };
            format!("remote index {url}: {fetched}; {read}")
        }
        DoctorIndex::NotConverted { origin: o, answers } => format!(
            "{}: not converted yet (the next question converts it); {}",
            origin(o, root),
            read(*answers)
        ),
    }
}

// ------------------------------------------------------------------ doctor

/// What `doctor` says when no daemon is running.
const NO_DAEMON: &str = "daemon: none running — the next `scry` call starts one, which keeps the servers warm and under their memory caps";

/// `scry doctor` as text: the set-up report, the SCIP indexes, the running
/// daemon's servers for this workspace (none running: how one starts) and
/// the grammars this binary leaves out.
pub fn doctor_text(d: &Doctor) -> String {
    let r = &d.report;
    let root = r.workspace_root.as_path();
    let mut out = String::new();
    let _ = writeln!(out, "scry doctor: {}", root.display());
    if r.config_files.is_empty() {
        let _ = writeln!(
            out,
            "configuration: built-in catalogue only (no configuration file found)"
        );
    } else {
        let _ = writeln!(
            out,
            "configuration files read: {}",
            r.config_files
                .iter()
                .map(|p| display_path(p, root))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(out, "workspace: {}", words::trust(&r.trust));
    if !r.trust.is_trusted() && !r.config_files.is_empty() {
        let _ = writeln!(
            out,
            "  its configuration sets settings only; `scry trust` lets it choose commands"
        );
    }
    for what in trust_ignored(r) {
        let _ = writeln!(out, "  ignored until `scry trust`: {what}");
    }
    if !r.path_left_out.is_empty() {
        let _ = writeln!(
            out,
            "PATH entries left out for servers, linters, indexers and version probes: {}",
            r.path_left_out
                .iter()
                .map(path_left_out)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    match &d.daemon {
        Some(daemon) => {
            let _ = writeln!(out, "{}", daemon_lines(daemon, root));
        }
        None => {
            let _ = writeln!(out, "{NO_DAEMON}");
        }
    }
    let _ = writeln!(out, "\nLanguage servers:");
    for l in &r.languages {
        let label = format!("{} ({}{})", l.languages, files(l.files), capped(r, l.files));
        row(&mut out, &label, l, root);
        if !l.roots.is_empty() {
            let _ = writeln!(out, "    roots: {}", words::folders(&l.roots, root));
        }
    }
    let _ = writeln!(out, "\nLinters (diagnostics only):");
    for l in &r.linters {
        let label = format!("{} ({})", l.languages, files(l.files));
        row(&mut out, &label, l, root);
    }
    let _ = writeln!(
        out,
        "\nSCIP indexers (`scry index`; precise answers before a server is ready):"
    );
    for l in &r.indexers {
        let label = format!("{} ({})", l.languages, files(l.files));
        row(&mut out, &label, l, root);
    }
    if d.indexes.is_empty() {
        let _ = writeln!(
            out,
            "  SCIP index: none for this workspace (`scry index` builds one; a CI-built one is named by \"index\": {{\"path\": …}} in the configuration)"
        );
    }
    for i in &d.indexes {
        let _ = writeln!(out, "  SCIP index: {}", doctor_index(i, root));
    }
    if r.problems.is_empty() {
        let _ = writeln!(out, "\nNo set-up problems found.");
    } else {
        let _ = writeln!(out, "\nProblems:");
        for p in &r.problems {
            let _ = writeln!(
                out,
                "  {} (root {}): {}",
                p.provider,
                display_path(&p.root, root),
                p.problem
            );
            let _ = writeln!(out, "      fix: {}", p.fix);
        }
    }
    if !r.warnings.is_empty() {
        let _ = writeln!(out, "\nConfiguration warnings:");
        for w in &r.warnings {
            let _ = writeln!(out, "  {w}");
        }
    }
    out.trim_end().to_string()
        + &left_out_lines(&d.grammars_left_out)
        + &gap_lines(&r.platform_gaps)
}

/// `scry doctor --json`: the report's fields (camelCase) with each version
/// and ignored item worded as the text words it, the trust, the indexes'
/// lines, the left-out grammars and the running daemon's status.
pub fn doctor_json(d: &Doctor) -> Value {
    let r = &d.report;
    let root = r.workspace_root.as_path();
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["trust"] = words::trust(&r.trust).into();
    v["trustIgnored"] = trust_ignored(r).into();
    for (group, rows) in [
        ("languages", &r.languages),
        ("linters", &r.linters),
        ("indexers", &r.indexers),
    ] {
        for (i, row) in rows.iter().enumerate() {
            if let Some(p) = &row.provider {
                let (kind, text) = version_json(&p.version);
                v[group][i]["provider"]["version"] = json!({"kind": kind, "text": text});
            }
        }
    }
    let lines: Vec<String> = (d.indexes.iter()).map(|i| doctor_index(i, root)).collect();
    v["indexes"] = lines.into();
    v["grammarsNotBuiltIn"] = (d.grammars_left_out.iter())
        .map(|g| json!({"language": g.id, "grammar": g.grammar, "fileTypes": g.file_types}))
        .collect();
    v["platformGaps"] = r.platform_gaps.iter().map(|g| platform_gap(*g)).collect();
    if let Some(daemon) = &d.daemon {
        v["daemon"] = daemon_status_json(daemon);
    }
    v
}

/// What the project configuration asked to run and was ignored:
/// `.scry.json: server "x": command`.
fn trust_ignored(r: &DoctorReport) -> Vec<String> {
    let root = r.workspace_root.as_path();
    (r.trust_ignored.iter())
        .map(|(file, what)| format!("{}: {what}", display_path(file, root)))
        .collect()
}

/// `node_modules/.bin (relative)`, `/ws/bin (inside the untrusted
/// workspace)`: the entry as `PATH` held it.
fn path_left_out(l: &PathLeftOut) -> String {
    let entry = if l.entry.as_os_str().is_empty() {
        "(empty entry)".to_string()
    } else {
        l.entry.display().to_string()
    };
    match l.why {
        LeftOutWhy::Relative => format!("{entry} (relative)"),
        LeftOutWhy::InUntrustedWorkspace => format!("{entry} (inside the untrusted workspace)"),
    }
}

/// The JSON `kind` of a version and its words.
fn version_json(v: &Version) -> (&'static str, String) {
    match v {
        Version::Known(line) => ("known", line.clone()),
        Version::NotChecked(why) => ("notChecked", not_checked(*why).into()),
        Version::Unknown(why) => ("unknown", no_version(why)),
        Version::Failed { .. } => ("failed", failed(v)),
    }
}

fn not_checked(why: NotChecked) -> &'static str {
    match why {
        NotChecked::NotInstalled => "not installed",
        NotChecked::ProjectLocal => "project-local binary: not run",
        NotChecked::ProjectCommand => "command from a project configuration file: not run",
        NotChecked::NoVersionFlag => "it has no version flag",
    }
}

fn no_version(why: &NoVersion) -> String {
    match why {
        NoVersion::Pending => String::new(),
        NoVersion::CannotRun { error } => format!("cannot run it: {error}"),
        NoVersion::NoAnswer { command, secs } => {
            format!("`{command}` did not answer within {secs} s")
        }
        NoVersion::PrintedNothing => "it printed nothing".into(),
    }
}

/// `` `yaml-language-server --version` failed (exit status: 1): error: … ``.
fn failed(v: &Version) -> String {
    match v {
        Version::Failed {
            command,
            status,
            output,
        } => format!(
            "`{command}` failed ({status}){}",
            output
                .as_ref()
                .map(|l| format!(": {l}"))
                .unwrap_or_default()
        ),
        _ => String::new(),
    }
}

fn files(n: usize) -> String {
    match n {
        0 => "no files here".into(),
        1 => "1 file".into(),
        n => format!("{n} files"),
    }
}

fn capped(r: &DoctorReport, n: usize) -> &'static str {
    if r.files_capped && n > 0 { "+" } else { "" }
}

fn row(out: &mut String, label: &str, r: &LanguageRow, root: &Path) {
    let Some(p) = &r.provider else {
        let _ = writeln!(out, "  {label}: disabled in the configuration");
        return;
    };
    let alt = p
        .alternative_to
        .as_ref()
        .map(|a| format!(" (alternative to {a})"))
        .unwrap_or_default();
    match &p.found {
        Some(path) => {
            let state = match &p.version {
                Version::Known(v) => format!("installed, {v}"),
                Version::NotChecked(why) => {
                    format!("installed, version not checked ({})", not_checked(*why))
                }
                Version::Unknown(why) => {
                    format!("installed, version unknown ({})", no_version(why))
                }
                Version::Failed { .. } => format!("found but BROKEN: {}", failed(&p.version)),
            };
            let cap = p
                .memory_cap_kib
                .map(|k| format!(", memory cap {}", describe_kib(k)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {label} — {}{alt}: {state}, {}{cap}",
                p.id,
                display_path(path, root)
            );
            if matches!(p.version, Version::Failed { .. }) {
                install_lines(out, p);
            }
        }
        None => {
            let _ = writeln!(
                out,
                "  {label} — {}{alt}: NOT INSTALLED (`{}` not found on PATH)",
                p.id, p.command
            );
            install_lines(out, p);
        }
    }
}

fn install_lines(out: &mut String, p: &ProviderRow) {
    let Some(cmd) = &p.install else { return };
    let missing = match &p.install_needs {
        None => String::new(),
        Some(prog) => format!("   (needs `{prog}`, not on PATH here)"),
    };
    let _ = writeln!(out, "      install: {cmd}{missing}");
    if !p.install_alternatives.is_empty() {
        let _ = writeln!(out, "      or: {}", p.install_alternatives.join("  |  "));
    }
}

/// The grammars this binary leaves out (none: nothing), each with what its
/// files lose and how to get it.
fn left_out_lines(left_out: &[GrammarLeftOut]) -> String {
    let mut out = String::new();
    if left_out.is_empty() {
        return out;
    }
    let _ = write!(
        out,
        "\n\nGrammars not built into this binary (tree-sitter):"
    );
    for g in left_out {
        let types = g
            .file_types
            .iter()
            .map(|t| format!(".{t}"))
            .collect::<Vec<_>>();
        let _ = write!(
            out,
            "\n  {} ({}): no syntactic answer when its language server is missing or not ready, no repository map entry; the server's answers are unchanged",
            g.language,
            types.join(", ")
        );
    }
    let _ = write!(out, "\n  (`cargo install scry-lsp` builds every grammar)");
    out
}

/// What this system cannot do that scry does elsewhere (none: nothing),
/// a line each under one heading.
fn gap_lines(gaps: &[PlatformGap]) -> String {
    let mut out = String::new();
    if gaps.is_empty() {
        return out;
    }
    let _ = write!(out, "\n\nNot done on this system (scry does it elsewhere):");
    for g in gaps {
        let _ = write!(out, "\n  {}", platform_gap(*g));
    }
    out
}

/// One [`PlatformGap`]: what is not done and why.
fn platform_gap(g: PlatformGap) -> &'static str {
    match g {
        PlatformGap::IndexerDiskPriority => {
            "background indexing (the daemon's index refresh) runs at the idle CPU priority but at the normal disk priority: Windows lets a process lower only its own I/O priority, not its child's"
        }
    }
}

/// The daemon and the servers it runs for `root`, with their memory.
fn daemon_lines(d: &DaemonStatus, root: &Path) -> String {
    let mut out = format!("daemon: pid {} (scry {})", d.pid, d.version);
    let Some(w) = d.workspaces.iter().find(|w| w.root == root) else {
        out.push_str(", no server for this workspace");
        return out;
    };
    if w.servers.is_empty() {
        out.push_str(", no server running for this workspace");
    }
    for v in &w.servers {
        let _ = write!(
            out,
            "\n  {} ({}, pid {}): {}",
            v.id,
            if v.folders.is_empty() {
                format!("root {}", display_path(&v.root, root))
            } else {
                format!("folders {}", words::folders(&v.folders, root))
            },
            v.pid.map_or("?".into(), |p| p.to_string()),
            v.memory_kib
                .map_or("memory unknown".into(), |k| words::describe_usage(
                    k,
                    v.processes,
                    v.memory_cap_kib
                )),
        );
    }
    for m in &w.memory_events {
        let _ = write!(out, "\n  memory: {}", words::memory_action(&m.what));
    }
    out
}

// ----------------------------------------------------------- daemon status

/// `scry daemon status` as text; `only`: the workspace asked about (`--root`),
/// when the status was cut to it.
pub fn daemon_status_text(s: &DaemonStatus, only: Option<&Path>) -> String {
    let mut out = format!(
        "scry daemon {} (protocol {}): pid {}, up {}, {} client{} connected\nsocket: {}\n",
        s.version,
        s.protocol,
        s.pid,
        clock::uptime(s.uptime_ms),
        s.clients,
        if s.clients == 1 { "" } else { "s" },
        s.socket.display()
    );
    match (s.workspaces.is_empty(), only) {
        (true, Some(root)) => out.push_str(&format!(
            "no server for {} in this daemon\n",
            root.display()
        )),
        (true, None) => out.push_str("no workspace yet\n"),
        (false, _) => {}
    }
    for w in &s.workspaces {
        out.push_str(&format!(
            "{} ({} client{})\n",
            w.root.display(),
            w.clients,
            if w.clients == 1 { "" } else { "s" }
        ));
        if w.servers.is_empty() {
            out.push_str("  no server running\n");
        }
        for v in &w.servers {
            let root = if v.root == w.root {
                String::new()
            } else {
                format!(" root {}", v.root.display())
            };
            out.push_str(&format!(
                "  {} pid {} rss {} idle {} up {}{root}\n",
                v.id,
                v.pid.map_or("?".into(), |p| p.to_string()),
                v.memory_kib.map_or("?".into(), |k| words::describe_usage(
                    k,
                    v.processes,
                    v.memory_cap_kib
                )),
                clock::uptime(v.idle_ms),
                clock::uptime(v.uptime_ms),
            ));
            if !v.program.as_os_str().is_empty() {
                out.push_str(&format!("    runs {}\n", v.program.display()));
            }
            if !v.folders.is_empty() {
                out.push_str(&format!(
                    "    folders: {}\n",
                    words::folders(&v.folders, &w.root)
                ));
            }
            if !v.programs.is_empty() {
                out.push_str(&format!("    finds {}\n", words::programs(&v.programs)));
            }
            if !v.clients.is_empty() {
                out.push_str(&format!("    clients: {}\n", v.clients.join(", ")));
            }
        }
        for m in &w.memory_events {
            out.push_str(&format!("  memory: {}\n", words::memory_action(&m.what)));
        }
    }
    out
}

/// `scry daemon status --json`: the status's fields, each memory event
/// worded as the text words it.
pub fn daemon_status_json(s: &DaemonStatus) -> Value {
    let mut v = serde_json::to_value(s).unwrap_or_default();
    for (i, w) in s.workspaces.iter().enumerate() {
        for (j, server) in w.servers.iter().enumerate() {
            for (k, f) in server.folders.iter().enumerate() {
                v["workspaces"][i]["servers"][j]["folders"][k]["chosen_by"] =
                    words::root_choice(&f.chosen_by, &w.root).into();
            }
        }
        if !w.memory_events.is_empty() {
            let said: Vec<String> = (w.memory_events.iter())
                .map(|m| words::memory_action(&m.what))
                .collect();
            v["workspaces"][i]["memory_events"] = said.into();
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn about(origin: IndexOrigin, commit: Option<&str>) -> IndexAbout {
        IndexAbout {
            tool: "rust-analyzer".into(),
            tool_version: "1.95.0".into(),
            commit: commit.map(str::to_string),
            built_at_secs: 1_796_172_000,
            age_secs: 185,
            origin,
        }
    }

    /// An index answer's label names what built it, when, and a CI-built
    /// one's file relative to the root.
    #[test]
    fn an_index_answer_is_labelled_with_its_provenance() {
        let root = Path::new("/ws");
        assert_eq!(
            index_label(&about(IndexOrigin::Built, None), root),
            "SCIP index (rust-analyzer 1.95.0, built 3 min ago at 2026-12-02 00:40 UTC)"
        );
        assert_eq!(
            index_label(
                &about(IndexOrigin::RebuiltByDaemon, Some("1a2b3c4d5e6f7a8b")),
                root
            ),
            "SCIP index (rust-analyzer 1.95.0, built 3 min ago at 1a2b3c4d5e6f, rebuilt by the daemon)"
        );
        let ci = IndexOrigin::Configured {
            path: PathBuf::from("/ws/build/index.scip"),
        };
        let mut a = about(ci, None);
        (a.tool, a.tool_version) = (String::new(), String::new());
        assert_eq!(
            index_label(&a, root),
            "SCIP index (unknown indexer, built 3 min ago at 2026-12-02 00:40 UTC, CI index build/index.scip)"
        );
        // Fetched: the commit first, how far behind HEAD, where from.
        let remote = |behind, host: &str| {
            IndexOrigin::Remote(Box::new(scry_model::RemoteOrigin {
                host: host.into(),
                behind,
                fetched_secs: 7200,
            }))
        };
        let commit = Some("1a2b3c4d5e6f7a8b");
        assert_eq!(
            index_label(&about(remote(3, "ci.example"), commit), root),
            "SCIP index @1a2b3c4d5e6f (3 commits behind; rust-analyzer 1.95.0, built 3 min ago; fetched from ci.example)"
        );
        assert_eq!(
            index_label(&about(remote(0, ""), commit), root),
            "SCIP index @1a2b3c4d5e6f (at HEAD; rust-analyzer 1.95.0, built 3 min ago; fetched from a file)"
        );
        // doctor's line.
        let d = DoctorIndex::Remote {
            url: "https://ci.example/{commit}.scip".into(),
            cached: 2,
            newest: Some(("1a2b3c4d5e6f7a8b".into(), 120)),
            answers: true,
        };
        assert_eq!(
            doctor_index(&d, root),
            "remote index https://ci.example/{commit}.scip: 2 commit(s) fetched, the newest 2 min ago (@1a2b3c4d5e6f); answers cold questions"
        );
        let d = DoctorIndex::Remote {
            url: "https://ci.example/{commit}.scip".into(),
            cached: 0,
            newest: None,
            answers: false,
        };
        assert_eq!(
            doctor_index(&d, root),
            "remote index https://ci.example/{commit}.scip: nothing fetched yet (the next question fetches it); not read: a local index takes its place"
        );
        // Its status line names the commit, the remote and the fetch's age.
        let status = IndexStatus {
            about: about(remote(1, "ci.example"), commit),
            documents: 12,
            changed: 2,
            refused: 0,
            refused_first: None,
            stale_unrefreshed: false,
        };
        assert_eq!(
            index_status(&status, root),
            "rust-analyzer 1.95.0, built 3 min ago at 1a2b3c4d5e6f; 12 files covered, 2 changed since; from the remote index (ci.example), fetched 2 h ago, 1 commit behind"
        );
    }

    #[test]
    fn the_syntactic_index_and_a_refresh_are_worded() {
        let built = SyntacticStatus::Built {
            files: 120,
            lines: 9000,
            skipped: 2,
            cache_bytes: 3 * 1024 * 1024,
        };
        assert_eq!(
            syntactic(&built),
            "120 files indexed (9000 lines, 2 skipped), disk cache 3.0 MiB"
        );
        let none = SyntacticStatus::NotBuilt { cache_bytes: 0 };
        assert_eq!(
            syntactic(&none),
            "not built in this process (built on first need), no disk cache yet"
        );
        let rebuilt = RefreshStatus::Rebuilt {
            ago_secs: 42,
            millis: 12_345,
            files: 7,
        };
        assert_eq!(
            refresh(&rebuilt, Path::new("/ws")),
            "last run 42 s ago: rebuilt in 12.3 s (7 files)"
        );
    }

    /// A left-out grammar is named with its file types and what it costs;
    /// a build that leaves out none adds nothing.
    #[test]
    fn left_out_grammars_are_named() {
        assert_eq!(left_out_lines(&[]), "");
        let cs = GrammarLeftOut {
            language: "C#".into(),
            id: "csharp".into(),
            grammar: "c_sharp".into(),
            file_types: vec!["cs".into()],
        };
        let text = left_out_lines(std::slice::from_ref(&cs));
        assert!(text.contains("not built into this binary"), "{text}");
        assert!(text.contains("C# (.cs): no syntactic answer"), "{text}");
        assert!(text.contains("cargo install scry-lsp"), "{text}");
    }

    /// Each gap of this system is a line under its heading; none, nothing.
    #[test]
    fn platform_gaps_are_said_plainly() {
        assert_eq!(gap_lines(&[]), "");
        let text = gap_lines(&[PlatformGap::IndexerDiskPriority]);
        assert!(
            text.starts_with(
                "\n\nNot done on this system (scry does it elsewhere):\n  background indexing"
            ),
            "{text}"
        );
        assert!(text.ends_with("not its child's"), "{text}");
    }

    /// `daemon status --root DIR` for a workspace the daemon does not
    /// serve says so; memory events are sentences in its JSON too.
    #[test]
    fn daemon_status_names_the_asked_workspace_and_words_memory() {
        let mut s = DaemonStatus {
            pid: 7,
            version: "0.1.0".into(),
            protocol: 4,
            uptime_ms: 185_000,
            clients: 1,
            socket: PathBuf::from("/run/scry.sock"),
            workspaces: Vec::new(),
        };
        let text = daemon_status_text(&s, Some(Path::new("/ws")));
        assert!(text.contains("up 3m05s, 1 client connected"), "{text}");
        assert!(
            text.ends_with("no server for /ws in this daemon\n"),
            "{text}"
        );
        assert!(daemon_status_text(&s, None).ends_with("no workspace yet\n"));
        s.workspaces.push(scry_model::DaemonWorkspace {
            root: PathBuf::from("/ws"),
            clients: 1,
            servers: Vec::new(),
            memory_events: vec![MemoryNote {
                at_secs: 0,
                what: scry_model::MemoryAction::Restarted {
                    server: "pyright".into(),
                    memory_kib: 3 * 1024 * 1024,
                    processes: 1,
                    memory_cap_kib: Some(2 * 1024 * 1024),
                    now: false,
                },
            }],
        });
        let v = daemon_status_json(&s);
        let said = v["workspaces"][0]["memory_events"][0].as_str().unwrap();
        assert!(
            said.starts_with("pyright was restarted between requests"),
            "{said}"
        );
        assert!(
            daemon_status_text(&s, None).contains("  memory: pyright was restarted"),
            "{}",
            daemon_status_text(&s, None)
        );
    }
}
