//! `scry setup [CLIENT] [--scope user|project] [--root DIR] [--print]
//! [--remove] [--hooks]`: write scry's MCP server entry into an agent's own
//! configuration file (the clients, their files and formats are data:
//! [`clients::CLIENTS`]); alone, list the clients, where each one's file is
//! and whether scry is configured there.
//!
//! The entry names the running binary by its absolute path (canonical
//! `current_exe`) with the arguments `["mcp"]`. Invariants:
//! - Every file is planned first (read, parsed, edited in memory) and
//!   written only when all of them could be: a file that cannot be read or
//!   parsed is refused with an error naming it, and nothing is written.
//! - Only scry's entry (and, with hooks, scry's hook groups) change; the
//!   rest of the file keeps its keys, order and comments (`doc`).
//! - Idempotent: an entry already as it would be written leaves the file
//!   untouched, byte for byte, and says so.
//! - A changed file is backed up first and replaced atomically (`files`).
//! - `--print` reads but writes nothing.
//!
//! The sentences people read are worded here, not in scry-render: this is
//! a command of the CLI alone, about files outside any workspace; every
//! sentence of it is in this module. Exit status: 0 done (also "already
//! configured"), 1 a file refused or not written, 2 bad usage.

mod clients;
mod doc;
mod files;
mod hooks;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use serde_json::Value;

use clients::{CLIENTS, Client, Format, Scope};
use doc::Doc;

#[derive(Parser, Debug)]
#[command(
    name = "scry setup",
    about = "Register scry's MCP server (`scry mcp`) with an AI coding agent: writes the entry into \
             the agent's own configuration file, keeping everything else in it. Without CLIENT: \
             list the agents, their files, and whether scry is configured there.",
    after_help = "Clients: claude, codex, cursor, vscode, gemini, opencode, zed, windsurf.\n\
                  The default scope is user (every project): the entry names this machine's \
                  binary by its absolute path, which a committed project file would share.\n\
                  A changed file is first copied to <file>.scry-backup."
)]
struct SetupCli {
    /// The agent: claude, codex, cursor, vscode, gemini, opencode, zed, windsurf.
    client: Option<String>,
    /// Which configuration file: the user's (default) or the project's.
    #[arg(long, value_enum)]
    scope: Option<Scope>,
    /// The project's root for --scope project (default: the current directory).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Show what would be written, write nothing.
    #[arg(long)]
    print: bool,
    /// Take scry's entry (and scry's hooks) out, leaving everything else.
    #[arg(long)]
    remove: bool,
    /// Also add hooks that check each file the agent edits with
    /// `scry diag --changes` (Claude Code, Gemini CLI).
    #[arg(long)]
    hooks: bool,
}

/// A refusal: its stable code, the sentence, the exit status.
struct Refusal {
    code: &'static str,
    msg: String,
    status: u8,
}

fn refuse(code: &'static str, msg: String) -> Refusal {
    Refusal {
        code,
        msg,
        status: 1,
    }
}

fn usage(code: &'static str, msg: String) -> Refusal {
    Refusal {
        code,
        msg,
        status: 2,
    }
}

pub fn main() -> ExitCode {
    let args =
        std::iter::once(std::ffi::OsString::from("scry setup")).chain(std::env::args_os().skip(2));
    let cli: SetupCli = match crate::argv::parse(args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let given = cli.root.as_ref().map(|r| cwd.join(r)).unwrap_or(cwd);
    // The project's root is used (and must be a directory) at project
    // scope and when named; a user-scope setup works from anywhere.
    let needs_root = cli.root.is_some() || cli.scope == Some(Scope::Project);
    let root = match crate::argv::workspace_dir(&given) {
        Some(r) => r,
        None if needs_root => return crate::argv::not_a_directory("setup", &given),
        None => given,
    };
    let result = scry_binary().and_then(|scry| match &cli.client {
        None if cli.print || cli.remove || cli.hooks || cli.scope.is_some() => Err(usage(
            "SETUP_NO_CLIENT",
            "name the client to set up (see `scry setup` for the list)".into(),
        )),
        None => {
            list(&root, &scry);
            Ok(())
        }
        Some(name) => setup(&cli, name, &root, &scry),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(r) => {
            eprintln!("scry: error[{}]: {}", r.code, r.msg);
            ExitCode::from(r.status)
        }
    }
}

/// This binary's absolute path, as the clients will run it.
fn scry_binary() -> Result<String, Refusal> {
    let exe = std::env::current_exe()
        .and_then(|p| scry_base::paths::canonical(&p))
        .map_err(|e| {
            refuse(
                "SETUP_NO_BINARY",
                format!("cannot tell where this scry binary is: {e}"),
            )
        })?;
    exe.to_str().map(str::to_string).ok_or_else(|| {
        refuse(
            "SETUP_NO_BINARY",
            format!(
                "the path of this scry binary is not UTF-8 ({}); install it under a UTF-8 path",
                exe.display()
            ),
        )
    })
}

/// What one edit of a file does.
struct Outcome {
    /// What it did, worded; `None` when it changes nothing.
    done: Option<String>,
    /// Why nothing changes, when nothing does.
    unchanged: &'static str,
    /// What it would write (for `--print`): the new part alone, in the
    /// file's format.
    fragment: Option<String>,
}

/// An edit to make: scry's server entry, or scry's hooks.
#[derive(Clone, Copy)]
enum Edit {
    Server,
    Hooks(&'static clients::HookSpec),
}

/// One file to change: where, its old and new text, the edits' outcomes.
struct Plan {
    shown: PathBuf,
    real: PathBuf,
    old: Option<String>,
    new: String,
    outcomes: Vec<Outcome>,
}

fn setup(cli: &SetupCli, name: &str, root: &Path, scry: &str) -> Result<(), Refusal> {
    let client = Client::find(name).ok_or_else(|| {
        let known: Vec<_> = CLIENTS.iter().map(|c| c.name).collect();
        usage(
            "SETUP_UNKNOWN_CLIENT",
            format!(
                "no client called `{name}`; scry can set up {}",
                known.join(", ")
            ),
        )
    })?;
    let scope = cli.scope.unwrap_or(client.default_scope);
    let place = client.place(scope).ok_or_else(|| {
        usage(
            "SETUP_NO_SUCH_SCOPE",
            format!(
                "{} has no {} configuration scry knows; use --scope {}",
                client.title,
                scope.word(),
                client.default_scope.word()
            ),
        )
    })?;
    if cli.hooks && client.hooks.is_none() {
        let with: Vec<_> = CLIENTS
            .iter()
            .filter(|c| c.hooks.is_some())
            .map(|c| c.name)
            .collect();
        return Err(usage(
            "SETUP_NO_HOOKS",
            format!(
                "scry cannot add hooks for {} (it can for {})",
                client.title,
                with.join(", ")
            ),
        ));
    }
    let path = place.path(root).ok_or_else(no_home)?;
    let mut files: Vec<(PathBuf, Format, Vec<Edit>)> =
        vec![(path, client.format, vec![Edit::Server])];
    if let Some(spec) = client.hooks.filter(|_| cli.hooks || cli.remove) {
        let hooks_path = spec.place(scope).path(root).ok_or_else(no_home)?;
        // `--remove` alone touches a hooks file only when there is one.
        if cli.hooks || hooks_path.symlink_metadata().is_ok() {
            match files.iter_mut().find(|(p, _, _)| *p == hooks_path) {
                Some((_, _, edits)) => edits.push(Edit::Hooks(spec)),
                None => files.push((hooks_path, spec.format, vec![Edit::Hooks(spec)])),
            }
        }
    }
    // Every file is planned before any is written.
    let plans = files
        .iter()
        .map(|(path, format, edits)| plan(client, path, *format, edits, scry, cli.remove))
        .collect::<Result<Vec<_>, _>>()?;
    let head = format!("{} ({} scope)", client.title, scope.word());
    for p in &plans {
        report(&head, p, cli.print)?;
    }
    if let Some(note) = client
        .note
        .filter(|_| !cli.remove && scope == Scope::Project)
    {
        println!("Note: {note}");
    }
    Ok(())
}

fn no_home() -> Refusal {
    refuse(
        "SETUP_NO_HOME",
        "no home directory (set HOME; on Windows USERPROFILE)".into(),
    )
}

/// Read and parse the file at `shown` (behind its link), refusing what
/// cannot be read or parsed.
fn open(shown: &Path, format: Format) -> Result<(PathBuf, Option<String>, Doc), Refusal> {
    let real = files::real_path(shown).map_err(|m| refuse("SETUP_UNREADABLE", m))?;
    let old = files::read(&real).map_err(|m| refuse("SETUP_UNREADABLE", m))?;
    let doc = Doc::parse(old.as_deref().unwrap_or(""), format).map_err(|e| {
        refuse(
            "SETUP_UNPARSABLE",
            format!(
                "cannot parse {} ({e}); fix it and run again — nothing was changed",
                real.display()
            ),
        )
    })?;
    Ok((real, old, doc))
}

/// Open the file at `shown` and make `edits` on it, in memory.
fn plan(
    client: &Client,
    shown: &Path,
    format: Format,
    edits: &[Edit],
    scry: &str,
    remove: bool,
) -> Result<Plan, Refusal> {
    let (real, old, mut doc) = open(shown, format)?;
    let outcomes = edits
        .iter()
        .map(|e| {
            match *e {
                Edit::Server => edit_server(client, &mut doc, format, scry, remove),
                Edit::Hooks(spec) => edit_hooks(spec, &mut doc, format, scry, remove),
            }
            .map_err(|e| {
                refuse(
                    "SETUP_UNEXPECTED_SHAPE",
                    format!(
                        "cannot edit {}: {e}; fix it and run again — nothing was changed",
                        real.display()
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Plan {
        shown: shown.to_path_buf(),
        real,
        new: doc.text(),
        old,
        outcomes,
    })
}

/// Set (or with `remove`, take out) scry's server entry in `doc`.
fn edit_server(
    client: &Client,
    doc: &mut Doc,
    format: Format,
    scry: &str,
    remove: bool,
) -> Result<Outcome, String> {
    let mut key: Vec<&str> = client.servers.to_vec();
    key.push("scry");
    let entry = client.entry_for(scry);
    if remove {
        let removed = doc.remove(&key)?;
        if removed {
            doc.prune(client.servers)?;
        }
        return Ok(Outcome {
            done: removed.then(|| "removed scry's MCP server entry from".to_string()),
            unchanged: "scry is not configured in",
            fragment: None,
        });
    }
    let mut fragment = Doc::parse("", format).expect("an empty file parses");
    fragment
        .set(&key, &entry)
        .expect("an empty file takes any path");
    let fragment = Some(fragment.text());
    let present = doc.get(&key);
    if present.as_ref() == Some(&entry) {
        return Ok(Outcome {
            done: None,
            unchanged: "scry is already configured in",
            fragment,
        });
    }
    doc.set(&key, &entry)?;
    let done = match present {
        Some(_) => "replaced scry's MCP server entry (it ran another command) in",
        None => "added scry's MCP server entry to",
    };
    Ok(Outcome {
        done: Some(done.to_string()),
        unchanged: "",
        fragment,
    })
}

/// Set (or with `remove`, take out) scry's hook groups in `doc`.
fn edit_hooks(
    spec: &clients::HookSpec,
    doc: &mut Doc,
    format: Format,
    scry: &str,
    remove: bool,
) -> Result<Outcome, String> {
    let groups = hooks::groups(spec, scry);
    let mut fragment = Doc::parse("", format).expect("an empty file parses");
    let mut changed = false;
    let mut events: Vec<&str> = groups.iter().map(|(e, _)| *e).collect();
    events.dedup();
    for event in events {
        let path = ["hooks", event];
        let wanted: Vec<&Value> = groups
            .iter()
            .filter(|(e, _)| *e == event)
            .map(|(_, g)| g)
            .collect();
        for group in &wanted {
            fragment
                .splice_array(&path, &|_| false, Some(group))
                .expect("an empty file takes any path");
        }
        let current = doc.get(&path);
        let ours: Vec<&Value> = current
            .as_ref()
            .and_then(Value::as_array)
            .map(|a| a.iter().filter(|g| hooks::is_scry_group(g)).collect())
            .unwrap_or_default();
        let as_wanted = if remove {
            ours.is_empty()
        } else {
            ours == wanted
        };
        if !as_wanted {
            doc.splice_array(&path, &hooks::is_scry_group, None)?;
            if remove {
                doc.prune(&path)?;
            } else {
                for group in &wanted {
                    doc.splice_array(&path, &|_| false, Some(group))?;
                }
            }
            changed = true;
        }
    }
    let (before, after) = (groups[0].0, groups[1].0);
    Ok(Outcome {
        done: changed.then(|| {
            if remove {
                "removed scry's edit-check hooks from".to_string()
            } else {
                let reminder = spec
                    .search_tools
                    .map(|t| format!(", and a reminder after {t}"))
                    .unwrap_or_default();
                format!(
                    "added scry's edit-check hooks ({before} and {after} of edits{reminder}) to"
                )
            }
        }),
        unchanged: if remove {
            "there are no scry hooks in"
        } else {
            "scry's edit-check hooks are already in"
        },
        fragment: (!remove).then(|| fragment.text()),
    })
}

fn report(head: &str, p: &Plan, print: bool) -> Result<(), Refusal> {
    let shown = shown_path(p);
    let changed = p.old.as_deref() != Some(p.new.as_str());
    for o in &p.outcomes {
        match &o.done {
            None => println!("{head}: {} {shown}; nothing changed.", o.unchanged),
            Some(done) if print => {
                println!("{head}: would have {done} {shown} (--print: nothing written):");
                if let Some(f) = &o.fragment {
                    println!("{}", f.trim_end());
                }
            }
            Some(_) => {}
        }
    }
    if print || !changed || p.outcomes.iter().all(|o| o.done.is_none()) {
        return Ok(());
    }
    let backup = files::replace(&p.real, p.old.as_deref(), &p.new)
        .map_err(|m| refuse("SETUP_WRITE_FAILED", m))?;
    let kept = match backup {
        Some(b) => format!("backup: {}", b.display()),
        None => "a new file".to_string(),
    };
    for done in p.outcomes.iter().filter_map(|o| o.done.as_ref()) {
        println!("{head}: {done} {shown} ({kept}).");
    }
    Ok(())
}

/// The file's path, and where its link leads when it is one.
fn shown_path(p: &Plan) -> String {
    if p.real == p.shown {
        p.shown.display().to_string()
    } else {
        format!("{} (the link to {})", p.shown.display(), p.real.display())
    }
}

/// `scry setup`: every client, each scope's file and scry's state there.
fn list(root: &Path, scry: &str) {
    println!("scry setup CLIENT [--scope user|project] configures scry ({scry}) in:");
    for c in CLIENTS {
        println!("\n{} ({})", c.name, c.title);
        for scope in c.scopes() {
            let default = if scope == c.default_scope {
                " (default)"
            } else {
                ""
            };
            let state = match c.place(scope).and_then(|p| p.path(root)) {
                None => "no home directory".to_string(),
                Some(path) => format!("{}: {}", state(c, &path, scry), path.display()),
            };
            println!("  {:<18}{state}", format!("{}{default}", scope.word()));
        }
    }
}

/// Whether scry is configured in the file at `path`, worded.
fn state(c: &Client, path: &Path, scry: &str) -> String {
    if path.symlink_metadata().is_err() {
        return "not configured (no file yet)".into();
    }
    let doc = match open(path, c.format) {
        Ok((_, _, doc)) => doc,
        Err(r) => return format!("unreadable ({})", r.msg),
    };
    let mut key: Vec<&str> = c.servers.to_vec();
    key.push("scry");
    match doc.get(&key) {
        None => "not configured".into(),
        Some(v) if v == c.entry_for(scry) => "configured".into(),
        Some(v) => format!("configured with another command ({v})"),
    }
}
