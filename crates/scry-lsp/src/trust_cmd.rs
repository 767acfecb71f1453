//! `scry trust [DIR | --root DIR]`, `scry trust --list`, `scry trust
//! --revoke [DIR | --root DIR]`:
//! manage the records that let a workspace's own configuration choose what
//! scry runs (see `scry_workspace::trust`). Output on stdout, errors as one
//! line on stderr; exit 0 done, 1 error, 2 bad usage.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use scry_model::Trust;
use scry_workspace::config::{self, Config};
use scry_workspace::trust;

#[derive(Parser, Debug)]
#[command(
    name = "scry trust",
    version,
    about = "Trust a workspace: let its own configuration (.scry.json, ...) choose the commands scry runs, \
             and use its project-local tools (node_modules/.bin, .venv/bin). A later change to its \
             configuration files revokes the trust.",
    after_help = "Without trust, scry uses the built-in servers and linters found on PATH, and the \
                  project's settings and limits. SCRY_TRUST=all trusts every workspace (CI); \
                  \"trustedRoots\" in the user configuration trusts directories and what is below them."
)]
struct TrustCli {
    /// The workspace root (default: the current directory), as with --root.
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR", conflicts_with = "dir")]
    root: Option<PathBuf>,
    /// List trusted workspaces and whether their trust still holds.
    #[arg(long, conflicts_with = "revoke")]
    list: bool,
    /// Forget the trust of DIR.
    #[arg(long)]
    revoke: bool,
}

pub fn main() -> ExitCode {
    let args =
        std::iter::once(std::ffi::OsString::from("scry trust")).chain(std::env::args_os().skip(2));
    let mut cli: TrustCli = match crate::argv::parse(args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    cli.dir = cli.dir.take().or(cli.root.take());
    let Some(store) = trust::store_path() else {
        eprintln!(
            "scry trust: error: no state directory (set {} or HOME)",
            scry_base::dirs::STATE_DIR_ENV
        );
        return ExitCode::from(1);
    };
    if cli.list {
        if cli.dir.is_some() {
            eprintln!("scry trust: --list takes no DIR or --root (see scry trust --help)");
            return ExitCode::from(2);
        }
        return list(&store);
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let dir = cli.dir.map(|d| cwd.join(d)).unwrap_or(cwd);
    let root = scry_base::paths::canonical(&dir).unwrap_or_else(|_| dir.clone());
    if cli.revoke {
        return match trust::revoke(&store, &root) {
            Ok(true) => {
                println!("Revoked the trust of {}.", root.display());
                ExitCode::SUCCESS
            }
            Ok(false) => {
                println!(
                    "{} was not trusted (see scry trust --list).",
                    root.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(&format!("cannot write {}: {e}", store.display())),
        };
    }
    if !root.is_dir() {
        return crate::argv::not_a_directory("trust", &root);
    }
    grant(&store, &root)
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("scry trust: error: {msg}");
    ExitCode::from(1)
}

/// Trust `root` as its configuration is now (refused while it is invalid:
/// what would be trusted must be readable).
fn grant(store: &Path, root: &Path) -> ExitCode {
    let layers = match config::project_layers(root) {
        Ok(l) => l,
        Err(e) => return fail(&e.to_string()),
    };
    if let Err(e) = Config::from_layers(&layers) {
        return fail(&format!("{e}; fix it before trusting"));
    }
    match trust::record(store, root, &layers) {
        Ok(rec) => {
            let files = if rec.files.is_empty() {
                "no configuration files yet; adding one revokes the trust".to_string()
            } else {
                format!(
                    "{}; a change to them revokes the trust",
                    rec.files.join(", ")
                )
            };
            println!("Trusted {} ({files}).", root.display());
            println!(
                "Its configuration may now choose the commands scry runs, and its project-local \
                 tools (node_modules/.bin, .venv/bin) are used. Undo with `scry trust --revoke`."
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(&format!("cannot write {}: {e}", store.display())),
    }
}

fn list(store: &Path) -> ExitCode {
    if std::env::var(Trust::ENV).is_ok_and(|v| v.trim().eq_ignore_ascii_case("all")) {
        println!("{}=all: every workspace is trusted.", Trust::ENV);
    }
    let records = trust::records_in(store);
    if records.is_empty() {
        println!("No trusted workspaces (trust one with `scry trust [DIR]`).");
        return ExitCode::SUCCESS;
    }
    for r in &records {
        let state = if !r.root.is_dir() {
            "missing".to_string()
        } else {
            match config::project_layers(&r.root) {
                Ok(layers) if trust::config_hash(&r.root, &layers) == r.config_hash => {
                    "trusted".to_string()
                }
                Ok(_) => "revoked: configuration changed (run `scry trust` again)".to_string(),
                Err(e) => format!("unreadable: {e}"),
            }
        };
        let files = if r.files.is_empty() {
            String::new()
        } else {
            format!(" ({})", r.files.join(", "))
        };
        println!("{}  {state}{files}", r.root.display());
    }
    ExitCode::SUCCESS
}
