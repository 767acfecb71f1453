//! `scry doctor [--root DIR] [--json]`: the set-up report of
//! `scry_workspace::doctor` as text (or JSON), with each language server's
//! memory cap, the SCIP indexers, each SCIP index of the workspace
//! (`scry_ops::engine::indexed::index_lines`: source, age, files covered,
//! changed since) and, when a daemon is running, the servers it runs for
//! this workspace with their memory, the grammars this binary leaves out
//! (`scry_syntax::lang::LEFT_OUT`) and what this system cannot do that
//! scry does elsewhere (`Report::platform_gaps`; `platformGaps` in JSON). Starts no language server, no daemon
//! and no indexer, converts no index; runs only `--version` of
//! catalogue/user-configured commands on `PATH`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use scry_base::paths;
use scry_workspace::doctor::{LanguageRow, ProviderRow, Report, Version};

#[derive(Parser, Debug)]
#[command(
    name = "scry doctor",
    about = "Check the set-up: the server for each language, installed or not, its version and where it was found; how to install what is missing; known problems."
)]
struct DoctorCli {
    /// Workspace root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Print structured JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// What the text says when no daemon is running.
pub const DAEMON_LINE: &str = "daemon: none running — the next `scry` call starts one, which keeps the servers warm and under their memory caps";

/// Run `scry doctor …`; `args` are the words after `doctor`.
pub fn main(args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    let cli: DoctorCli = match crate::argv::parse(
        std::iter::once(std::ffi::OsString::from("scry doctor")).chain(args),
    ) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = cli.root.map(|r| cwd.join(r)).unwrap_or(cwd);
    let root = match paths::canonical(&root) {
        Ok(r) if r.is_dir() => r,
        _ => {
            eprintln!(
                "scry: workspace root {} is not a directory (see scry doctor --help)",
                root.display()
            );
            return ExitCode::from(2);
        }
    };
    let config = match scry_workspace::config::Config::load(&root) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("scry: error[CONFIG]: {e}");
            return ExitCode::from(1);
        }
    };
    let report = scry_workspace::doctor::diagnose(&config, &root);
    let indexes = scry_ops::engine::indexed::index_lines(
        scry_index::cache::default_cache().as_deref(),
        &config,
        &root,
    );
    let daemon = running_daemon();
    let left_out = scry_syntax::lang::not_built_in();
    let text = if cli.json {
        let mut v = serde_json::to_value(&report).unwrap_or_default();
        v["trust"] = scry_render::trust(&report.trust).into();
        v["indexes"] = serde_json::to_value(&indexes).unwrap_or_default();
        v["grammarsNotBuiltIn"] = left_out_json(&left_out);
        if let Some(d) = &daemon {
            v["daemon"] = serde_json::to_value(d).unwrap_or_default();
        }
        serde_json::to_string_pretty(&v).unwrap_or_default()
    } else {
        let mut t = render(&report, &indexes);
        if let Some(d) = &daemon {
            t = t.replacen(DAEMON_LINE, &daemon_lines(d, &root), 1);
        }
        t + &left_out_lines(&left_out) + &gap_lines(&report.platform_gaps)
    };
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|_| out.flush());
    ExitCode::SUCCESS
}

/// The grammars this binary leaves out (none: nothing), each with what its
/// files lose and how to get it.
fn left_out_lines(left_out: &[&scry_syntax::lang::LanguageSpec]) -> String {
    let mut out = String::new();
    if left_out.is_empty() {
        return out;
    }
    let _ = write!(
        out,
        "\n\nGrammars not built into this binary (tree-sitter):"
    );
    for s in left_out {
        let name = s
            .names
            .as_ref()
            .map_or(s.id.as_str(), |n| n.language.as_str());
        let types = s
            .file_types
            .iter()
            .map(|t| format!(".{t}"))
            .collect::<Vec<_>>();
        let _ = write!(
            out,
            "\n  {name} ({}): no syntactic answer when its language server is missing or not ready, no repository map entry; the server's answers are unchanged",
            types.join(", ")
        );
    }
    let _ = write!(out, "\n  (`cargo install scry-lsp` builds every grammar)");
    out
}

/// What this OS cannot do that scry does elsewhere (none: nothing).
fn gap_lines(gaps: &[String]) -> String {
    let mut out = String::new();
    if gaps.is_empty() {
        return out;
    }
    let _ = write!(out, "\n\nNot done on this system (scry does it elsewhere):");
    for g in gaps {
        let _ = write!(out, "\n  {g}");
    }
    out
}

/// `grammarsNotBuiltIn` of the JSON: one object per left-out grammar.
fn left_out_json(left_out: &[&scry_syntax::lang::LanguageSpec]) -> serde_json::Value {
    left_out
        .iter()
        .map(|s| serde_json::json!({"language": s.id, "grammar": s.grammar, "fileTypes": s.file_types}))
        .collect()
}

/// The running daemon's status, if one answers (none is started; none is
/// asked under `SCRY_NO_DAEMON`).
fn running_daemon() -> Option<scry_daemon::proto::DaemonStatus> {
    if std::env::var_os("SCRY_NO_DAEMON").is_some_and(|v| v != "0" && !v.is_empty()) {
        return None;
    }
    let files = scry_daemon::paths::Files::locate().ok()?;
    let runtime = crate::runtime(1).ok()?;
    let status = runtime.block_on(async {
        let ask = async {
            let mut c = scry_daemon::client::Connection::connect(
                &files,
                &scry_daemon::client::session_id("doctor"),
            )
            .await
            .ok()?;
            c.status().await.ok()
        };
        tokio::time::timeout(std::time::Duration::from_secs(3), ask)
            .await
            .ok()
            .flatten()
    });
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    status
}

/// The daemon and the servers it runs for `root`, with their memory.
fn daemon_lines(d: &scry_daemon::proto::DaemonStatus, root: &Path) -> String {
    use scry_render::describe_usage;
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
            "\n  {} (root {}, pid {}): {}",
            v.id,
            paths::display(&v.root, root),
            v.pid.map_or("?".into(), |p| p.to_string()),
            v.rss_kib
                .map_or("memory unknown".into(), |k| describe_usage(
                    k,
                    v.processes,
                    v.cap_kib
                )),
        );
    }
    for m in &w.memory_events {
        let _ = write!(out, "\n  memory: {m}");
    }
    out
}

fn files(n: usize) -> String {
    match n {
        0 => "no files here".into(),
        1 => "1 file".into(),
        n => format!("{n} files"),
    }
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
                Version::NotChecked(why) => format!("installed, version not checked ({why})"),
                Version::Unknown(why) => format!("installed, version unknown ({why})"),
                Version::Failed(why) => format!("found but BROKEN: {why}"),
            };
            let cap = p
                .memory_cap_mib
                .map(|m| {
                    format!(
                        ", memory cap {}",
                        scry_base::units::describe_kib(m.saturating_mul(1024))
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {label} — {}{alt}: {state}, {}{cap}",
                p.id,
                paths::display(path, root)
            );
            if matches!(p.version, Version::Failed(_)) {
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

/// The report as text; `indexes`: a line per SCIP index.
pub fn render(r: &Report, indexes: &[String]) -> String {
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
                .map(|p| paths::display(p, root))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(out, "workspace: {}", scry_render::trust(&r.trust));
    if !r.trust.is_trusted() && !r.config_files.is_empty() {
        let _ = writeln!(
            out,
            "  its configuration sets settings only; `scry trust` lets it choose commands"
        );
    }
    for what in &r.trust_ignored {
        let _ = writeln!(out, "  ignored until `scry trust`: {what}");
    }
    if !r.path_left_out.is_empty() {
        let _ = writeln!(
            out,
            "PATH entries left out for servers, linters, indexers and version probes: {}",
            r.path_left_out
                .iter()
                .map(|l| l.describe())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(out, "{DAEMON_LINE}");
    let _ = writeln!(out, "\nLanguage servers:");
    for l in &r.languages {
        let label = format!("{} ({}{})", l.languages, files(l.files), capped(r, l.files));
        row(&mut out, &label, l, root);
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
    if indexes.is_empty() {
        let _ = writeln!(
            out,
            "  SCIP index: none for this workspace (`scry index` builds one; a CI-built one is named by \"index\": {{\"path\": …}} in the configuration)"
        );
    }
    for i in indexes {
        let _ = writeln!(out, "  SCIP index: {i}");
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
                paths::display(&p.root, root),
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
}

fn capped(r: &Report, n: usize) -> &'static str {
    if r.files_capped && n > 0 { "+" } else { "" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csharp() -> Vec<&'static scry_syntax::lang::LanguageSpec> {
        let specs = scry_syntax::lang::specs().iter();
        specs.filter(|s| s.grammar == "c_sharp").collect()
    }

    /// A left-out grammar is named with its file types and what it costs;
    /// a build that leaves out none adds nothing.
    #[test]
    fn left_out_grammars_are_named() {
        assert_eq!(left_out_lines(&[]), "");
        let text = left_out_lines(&csharp());
        assert!(text.contains("not built into this binary"), "{text}");
        assert!(text.contains("C# (.cs): no syntactic answer"), "{text}");
        assert!(text.contains("cargo install scry-lsp"), "{text}");
        let v = left_out_json(&csharp());
        assert_eq!(v[0]["grammar"], "c_sharp");
        assert_eq!(v[0]["fileTypes"][0], "cs");
        assert_eq!(left_out_json(&[]), serde_json::json!([]));
    }

    /// Each gap of this system is a line under its heading; none, nothing.
    #[test]
    fn platform_gaps_are_said_plainly() {
        assert_eq!(gap_lines(&[]), "");
        let text = gap_lines(&["x runs slower: why".into()]);
        assert_eq!(
            text,
            "\n\nNot done on this system (scry does it elsewhere):\n  x runs slower: why"
        );
    }

    /// This build's list is the features' (none in a default build).
    #[test]
    fn default_build_leaves_out_nothing() {
        let left_out = scry_syntax::lang::not_built_in();
        assert_eq!(left_out.is_empty(), !cfg!(feature = "without-c-sharp"));
    }
}
