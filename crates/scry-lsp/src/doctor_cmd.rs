//! `scry doctor [--root DIR] [--json]`: gathers the set-up report
//! (`scry_workspace::doctor::diagnose`: each language server, its version,
//! where it was found, its memory cap, the SCIP indexers), each SCIP index
//! of the workspace (`scry_ops::engine::indexed::doctor_indexes`: source,
//! age, files covered, changed since), the running daemon's status (its
//! servers for this workspace, with their memory) and the grammars this
//! binary leaves out (`scry_syntax::lang::not_built_in`), and prints them
//! as scry-render words them (`doctor_text`, `doctor_json`). Starts no
//! language server, no daemon and no indexer, converts no index; runs only
//! `--version` of catalogue/user-configured commands on `PATH`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use scry_model::{DaemonStatus, Doctor, GrammarLeftOut};

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
    let Some(root) = crate::argv::workspace_dir(&root) else {
        return crate::argv::not_a_directory("doctor", &root);
    };
    let config = match scry_workspace::config::Config::load(&root) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("scry: error[CONFIG]: {e}");
            return ExitCode::from(1);
        }
    };
    let report = scry_workspace::doctor::diagnose(&config, &root);
    let indexes = scry_ops::engine::indexed::doctor_indexes(
        scry_base::dirs::cache().as_deref(),
        &config,
        &root,
    );
    let doctor = Doctor {
        report,
        indexes,
        daemon: running_daemon(),
        grammars_left_out: grammars_left_out(),
    };
    let text = if cli.json {
        serde_json::to_string_pretty(&scry_render::doctor_json(&doctor)).unwrap_or_default()
    } else {
        scry_render::doctor_text(&doctor)
    };
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|_| out.flush());
    ExitCode::SUCCESS
}

/// The running daemon's status, if one answers (none is started; none is
/// asked under `SCRY_NO_DAEMON`).
fn running_daemon() -> Option<DaemonStatus> {
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

/// The grammars this binary leaves out (`scry_syntax::lang::LEFT_OUT`):
/// none in a default build.
fn grammars_left_out() -> Vec<GrammarLeftOut> {
    (scry_syntax::lang::not_built_in().iter())
        .map(|s| GrammarLeftOut {
            language: (s.names.as_ref()).map_or(s.id.clone(), |n| n.language.clone()),
            id: s.id.clone(),
            grammar: s.grammar.clone(),
            file_types: s.file_types.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This build's list is the features' (none in a default build).
    #[test]
    fn default_build_leaves_out_nothing() {
        let left_out = grammars_left_out();
        assert_eq!(left_out.is_empty(), !cfg!(feature = "without-c-sharp"));
    }
}
