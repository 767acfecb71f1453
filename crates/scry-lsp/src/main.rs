//! `scry`: the command-line front end. Parses arguments into one `Query`,
//! validates it once (a refusal is a usage error or the engine's error
//! text) and hands the valid question to its one answerer
//! (`scry_daemon::answer`): the per-user
//! daemon (started on first use) or, with `--no-daemon`/`SCRY_NO_DAEMON=1`
//! or when the daemon cannot start, a `Local` engine in this process;
//! prints the reply rendered with the reply's root and limits on stdout
//! (so the text is the same either way), errors as one line on stderr.
//! Exit status: 0 answer (including "none found"), 1 error, 2 bad usage.

mod argv;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use scry_daemon::answer::{self, Baseline, Choice};
use scry_daemon::proto::{Call, Reply};
use scry_model::action::Arg;
use scry_model::{Action, ArgProblem, Invalid, OpError, Query, SeverityFilter, UsageFact};
use scry_ops::{Engine, TargetKind};
use scry_render::{Dialect, error_json_in, render_error_in, render_json, render_text};
use scry_workspace::Workspace;

mod completions;
mod daemon_cmd;
mod doctor_cmd;
mod first_words;
mod index_cmd;
mod progress;
mod setup;
mod trust_cmd;

/// The help's text after the options: the actions (from the action table,
/// see `first_words`), then [`EXAMPLES`].
fn after_help() -> String {
    format!("Actions:\n{}\n\n{EXAMPLES}", first_words::help_list())
}

const EXAMPLES: &str = "\
Name the symbol instead of counting columns; lines and columns are 1-based,
columns count characters.

Examples:
  scry refs src/inventory.rs total_weight
  scry def src/main.rs Inventory::restock
  scry hover src/main.rs total_weight --line 12
  scry def --symbol Distance                 (no path: searched in the workspace)
  scry workspace-symbols --query restock
  scry symbols src/inventory.rs
  scry request textDocument/foldingRange src/main.rs --params '{\"textDocument\":{\"uri\":\"$uri\"}}'
  scry diag src/                             (files, directories, globs; none or `*`: everything)
  scry diag src/app.py src/util.py --severity error
  scry diag --changes src/app.py             (only what is new since the last --changes check)
  scry rename src/inventory.rs total_weight weight_sum          (--dry-run: diff only)
  scry code-actions src/main.py --line 3                       (list; --apply N|TITLE)
  scry undo                                  (revert scry's last edit)
  scry map src/ --symbol Engine --budget 6000  (ranked repository map; no server needed)
  scry status
  scry doctor                                (set-up check: servers, versions, install commands)
  scry completions bash                      (also zsh, fish: shell completions)
  scry trust [DIR]                           (let DIR's .scry.json choose commands; --list, --revoke)
  scry mcp --root .                          (MCP server on stdio for agents: the lsp tool)
  scry setup claude                          (register `scry mcp` with an agent: also codex, cursor,
                                              vscode, gemini, opencode, zed, windsurf; alone: list)
  scry daemon status                         (the shared servers; also `stop`, `--foreground`;
                                              --no-daemon or SCRY_NO_DAEMON=1: run in-process)";

#[derive(Parser, Debug)]
#[command(
    name = "scry",
    version,
    about = "Code intelligence from real language servers: definitions, references, hover, outlines.",
    after_help = after_help()
)]
struct Cli {
    /// The action (see below).
    action: String,
    /// PATH [SYMBOL]; for `request`: METHOD [PATH]; for `workspace-symbols`: [QUERY];
    /// for `diagnostics`: TARGET ... (files, directories, globs, `*`).
    #[arg(num_args = 0..)]
    args: Vec<String>,
    /// The file (instead of the positional PATH).
    #[arg(long)]
    path: Option<PathBuf>,
    /// The symbol's name, possibly qualified (`Type::method`, `Class.method`).
    /// For `map`: repeatable, the symbols to focus on.
    #[arg(long)]
    symbol: Vec<String>,
    #[arg(long, help = budget_help())]
    budget: Option<i64>,
    /// 1-based line: a hint for which occurrence of the symbol is meant.
    #[arg(long)]
    line: Option<i64>,
    /// 1-based column in characters (with --line: asks exactly there).
    #[arg(long)]
    column: Option<i64>,
    /// Query for workspace-symbols.
    #[arg(long)]
    query: Option<String>,
    /// LSP method for `request`.
    #[arg(long)]
    method: Option<String>,
    /// JSON params for `request` ("$uri" is replaced by the file's URI).
    #[arg(long)]
    params: Option<String>,
    /// Workspace root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Print structured JSON instead of text.
    #[arg(long)]
    json: bool,
    /// For `diagnostics`: error, warning (errors and warnings; the default) or all.
    #[arg(long)]
    severity: Option<String>,
    /// For `diagnostics`: only what is new since the previous `--changes`
    /// check of these files (kept per workspace in the state directory), and
    /// how many were resolved.
    #[arg(long)]
    changes: bool,
    /// For `rename`: the new name (instead of the third positional).
    #[arg(long = "new-name")]
    new_name: Option<String>,
    /// For `code-actions`: apply the action with this number or title.
    #[arg(long)]
    apply: Option<String>,
    /// For `rename`, `code-actions --apply`, `undo`: show the diff, write nothing.
    #[arg(long = "dry-run")]
    dry_run: bool,
    /// No progress line on stderr while servers start or index.
    #[arg(long, short = 'q')]
    quiet: bool,
    #[arg(long = "timeout-ms", help = timeout_help())]
    timeout_ms: Option<i64>,
    /// Run in this process instead of through the shared scry daemon (also
    /// `SCRY_NO_DAEMON=1`): servers start and stop with the call.
    #[arg(long = "no-daemon")]
    no_daemon: bool,
}

/// `--timeout-ms`'s help, from the configuration's default and the
/// engine's maximum.
fn timeout_help() -> String {
    use scry_model::limits::{MAX_TIMEOUT_MS, TIMEOUT_MS};
    format!("Time budget in milliseconds (default {TIMEOUT_MS}, at most {MAX_TIMEOUT_MS})")
}

/// `--budget`'s help, from the engine's default and maximum.
fn budget_help() -> String {
    use scry_model::limits::{DEFAULT_MAP_BUDGET, MAX_MAP_BUDGET};
    format!(
        "For `map`: the character budget (default {DEFAULT_MAP_BUDGET}, at most {MAX_MAP_BUDGET})"
    )
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("scry: {msg} (see scry --help)");
    ExitCode::from(2)
}

/// The first words handled before the action parser, by [`subcommand`].
pub(crate) const SUBCOMMANDS: &[&str] = &[
    "doctor",
    "completions",
    "mcp",
    "trust",
    "daemon",
    "index",
    "setup",
];

/// Run the subcommand `word` (one of [`SUBCOMMANDS`]); `None` for any
/// other word.
fn subcommand(word: &str) -> Option<ExitCode> {
    let rest = || std::env::args_os().skip(2);
    Some(match word {
        "doctor" => doctor_cmd::main(rest()),
        "completions" => completions::main(Cli::command(), rest()),
        "mcp" => mcp_main(),
        "trust" => trust_cmd::main(),
        "daemon" => daemon_cmd::main(),
        "index" => index_cmd::main(),
        "setup" => setup::main(),
        _ => return None,
    })
}

fn main() -> ExitCode {
    let first = std::env::args_os().nth(1);
    if let Some(code) = first.as_ref().and_then(|w| w.to_str()).and_then(subcommand) {
        return code;
    }
    if let Some(msg) = argv::option_like_file(&std::env::args_os().collect::<Vec<_>>()) {
        return usage(&msg);
    }
    let cli: Cli = match argv::parse(std::env::args_os()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    init_tracing();
    let Some(action) = Action::parse(&cli.action) else {
        return usage(&format!("unknown action `{}`", cli.action));
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = match &cli.root {
        Some(r) => cwd.join(r),
        None => cwd.clone(),
    };
    if !root.is_dir() {
        return usage(&format!(
            "workspace root {} is not a directory",
            root.display()
        ));
    }
    let query = match build_query(&cli, action, &cwd, &root) {
        Ok(q) => q,
        Err(msg) => return usage(&msg),
    };
    let question = match query.validate() {
        Ok(v) => v,
        Err(e) => return report(&e, &root, cli.json),
    };
    let runtime = match runtime(2) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let opted_out = cli.no_daemon || scry_daemon::paths::opted_out();
    let call = Call::new(cwd, root, question, query.timeout);
    let code = runtime.block_on(answer(&cli, opted_out, call));
    // The answer is out: blocking work a call left behind at its deadline
    // (an index build, a stuck read) does not hold the exit.
    runtime.shutdown_background();
    code
}

/// Answer `call` through the one answerer: the daemon, else this process
/// (which keeps the `--changes` baseline in the workspace's file and stops
/// its servers before printing).
async fn answer(cli: &Cli, opted_out: bool, call: Call) -> ExitCode {
    let open = || {
        Workspace::open(&call.root)
            .map(|ws| Engine::new(Arc::new(ws)))
            .map_err(|e| e.to_string())
    };
    let answerer = match Choice::make("cli", opted_out)
        .await
        .answerer(open, Baseline::File)
    {
        Ok(a) => a,
        Err(config) => return config_error(&config),
    };
    let shown = answerer.clone();
    let progress = progress::Progress::start(move || shown.waiting_on(), cli.quiet);
    let reply = answerer.answer(&call).await;
    if let Some(p) = progress {
        p.finish();
    }
    answerer.shutdown().await;
    print_reply(cli.json, reply)
}

fn config_error(config: &str) -> ExitCode {
    eprintln!("scry: error[CONFIG]: {config}");
    ExitCode::from(1)
}

/// Print a reply: warnings on stderr, the answer rendered with the reply's
/// root and limits on stdout, an error as one line on stderr.
fn print_reply(json: bool, reply: Reply) -> ExitCode {
    let root = reply.root.clone();
    let opts = answer::render_options(&reply, scry_render::Dialect::Cli);
    for w in &reply.warnings {
        eprintln!("scry: warning: {w}");
    }
    for n in &reply.notes {
        eprintln!(
            "scry: note: {}",
            scry_render::reason_text_in(n, &root, Dialect::Cli)
        );
    }
    match reply.into_result() {
        Ok(Ok(answer)) => {
            let out = if json {
                serde_json::to_string_pretty(&render_json(&answer, &root, &opts))
                    .unwrap_or_default()
            } else {
                render_text(&answer, &root, &opts)
            };
            print_out(&out);
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => report(&e, &root, json),
        Err(config) => config_error(&config),
    }
}

fn report(e: &OpError, root: &Path, json: bool) -> ExitCode {
    if json {
        let shown = error_json_in(e, root, Dialect::Cli);
        print_out(&serde_json::to_string_pretty(&shown).unwrap_or_default());
    }
    eprintln!("scry: {}", render_error_in(e, root, Dialect::Cli));
    ExitCode::from(1)
}

/// Print to stdout; a closed pipe (`scry … | head`) is not an error.
fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|_| out.flush());
}

/// A path as the user typed it: relative to the current directory when
/// that exists, else relative to the workspace root; a name written as
/// scry shows one that is not UTF-8 (`\xff_x.rb`) names that file
/// (`paths::unescaped`).
fn user_path(p: &Path, cwd: &Path, root: &Path) -> PathBuf {
    use scry_base::paths::unescaped;
    if p.is_absolute() {
        return unescaped(root, p);
    }
    let from_cwd = cwd.join(unescaped(cwd, p));
    if from_cwd.exists() {
        from_cwd
    } else {
        root.join(unescaped(root, p))
    }
}

/// A usage error's sentence (scry-render words it, the command line's way).
fn usage_error(fact: UsageFact) -> String {
    scry_render::fact_text(
        &scry_model::Fact::Usage(fact),
        Path::new(""),
        scry_render::Dialect::Cli,
    )
}

fn positive(name: &str, v: Option<i64>) -> Result<Option<u32>, String> {
    let flag = name.to_string();
    match v {
        None => Ok(None),
        Some(n) if n >= 1 && n <= u32::MAX as i64 => Ok(Some(n as u32)),
        Some(n) if n >= 1 => Err(usage_error(UsageFact::OverMax {
            flag,
            n,
            max: u32::MAX.into(),
        })),
        Some(n) => Err(usage_error(UsageFact::NotPositive { flag, n })),
    }
}

fn build_query(cli: &Cli, action: Action, cwd: &Path, root: &Path) -> Result<Query, String> {
    let mut q = Query::new(action);
    q.line = positive("line", cli.line)?;
    q.column = positive("column", cli.column)?;
    q.query = cli.query.clone();
    if cli.symbol.len() > 1 && action != Action::Map {
        return Err(usage_error(UsageFact::SymbolTwice));
    }
    q.symbol = cli.symbol.first().cloned();
    q.method = cli.method.clone();
    q.timeout = match cli.timeout_ms {
        None => None,
        Some(ms) if ms >= 1 => Some(Duration::from_millis(ms as u64)),
        Some(ms) => return Err(format!("--timeout-ms must be positive, got {ms}")),
    };
    if let Some(p) = &cli.params {
        q.params =
            Some(serde_json::from_str(p).map_err(|e| format!("--params is not valid JSON: {e}"))?);
    }
    let mut pos = cli.args.iter().cloned();
    let mut path = cli.path.clone();
    match action {
        Action::Request => {
            if q.method.is_none() {
                q.method = pos.next();
            }
            if path.is_none() {
                path = pos.next().map(PathBuf::from);
            }
        }
        Action::WorkspaceSymbols => {
            if q.query.is_none() && q.symbol.is_none() {
                q.query = pos.next();
            } else if path.is_none() {
                path = pos.next().map(PathBuf::from);
            }
        }
        Action::Status | Action::Reload => {}
        Action::Map => {
            q.focus_symbols = cli.symbol.iter().skip(1).cloned().collect();
            q.budget = match cli.budget {
                None => None,
                Some(b) if b >= 1 => Some(b as usize),
                Some(b) => {
                    return Err(format!(
                        "--budget must be a positive number of characters, got {b}"
                    ));
                }
            };
            let mut targets: Vec<PathBuf> = path.take().into_iter().collect();
            targets.extend(pos.by_ref().map(PathBuf::from));
            q.targets = targets.iter().map(|t| user_path(t, cwd, root)).collect();
        }
        Action::Undo => q.apply = !cli.dry_run,
        Action::Rename | Action::CodeActions => {
            q.apply = !cli.dry_run;
            if path.is_none() {
                path = pos.next().map(PathBuf::from);
            }
            if q.symbol.is_none() {
                q.symbol = pos.next();
            }
            if action == Action::Rename {
                q.new_name = cli.new_name.clone().or_else(|| pos.next());
            } else if let Some(a) = &cli.apply {
                match a.trim().parse::<usize>() {
                    Ok(n) => q.action_index = Some(n),
                    Err(_) => q.action_title = Some(a.clone()),
                }
            } else if cli.dry_run {
                return Err(usage_error(UsageFact::DryRunWithoutApply));
            }
        }
        Action::Diagnostics => {
            if let Some(s) = &cli.severity {
                q.severity = Some(SeverityFilter::parse(s).ok_or_else(|| {
                    format!("--severity must be error, warning or all, got `{s}`")
                })?);
            }
            let mut targets: Vec<PathBuf> = path.take().into_iter().collect();
            targets.extend(pos.by_ref().map(PathBuf::from));
            // Read from the current directory: a glob when that is in the
            // workspace, a path when it exists there (else the root).
            q.targets = targets
                .iter()
                .map(|t| {
                    let base = match TargetKind::of(t) {
                        TargetKind::Glob if !scry_base::paths::is_under(cwd, root) => root,
                        TargetKind::Path
                            if !cwd.join(scry_base::paths::unescaped(cwd, t)).exists() =>
                        {
                            root
                        }
                        _ => cwd,
                    };
                    scry_ops::diagnostics_target(t, base, root)
                })
                .collect();
        }
        _ => {
            if path.is_none() {
                path = pos.next().map(PathBuf::from);
            }
            if q.symbol.is_none() {
                q.symbol = pos.next();
            }
        }
    }
    q.changes = cli.changes;
    q.path = path.map(|p| user_path(&p, cwd, root));
    // Refusals worded for the command line are usage errors; `main`
    // reports the others as the engine words them.
    match q.check() {
        Err(Invalid {
            arg: Arg::Changes,
            problem: ArgProblem::NotTaken,
            ..
        }) => return Err(usage_error(UsageFact::ChangesNotDiagnostics)),
        Err(Invalid {
            arg: Arg::NewName,
            problem: ArgProblem::Missing,
            ..
        }) => return Err(usage_error(UsageFact::RenameArguments)),
        _ => {}
    }
    if let Some(extra) = pos.next() {
        return Err(usage_error(UsageFact::Unexpected { arg: extra }));
    }
    Ok(q)
}

/// The async runtime with `workers` threads, or the exit code after
/// saying why it could not start.
pub(crate) fn runtime(workers: usize) -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("scry: cannot start the async runtime: {e}");
            ExitCode::from(1)
        })
}

/// A runtime on the calling thread alone (`scry mcp` relaying to the
/// daemon).
fn relay_runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("scry: cannot start the async runtime: {e}");
            ExitCode::from(1)
        })
}

/// Logs go to stderr (never stdout: the MCP front end owns it), filtered by
/// `SCRY_LOG` (default: warnings).
pub(crate) fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SCRY_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// `scry mcp [--root DIR] [--read-only] [--http ADDR …]`: the MCP server on
/// stdio, or over Streamable HTTP.
#[derive(Parser, Debug)]
#[command(
    name = "scry mcp",
    version,
    about = "Serve scry to AI agents over the Model Context Protocol (stdio, or Streamable HTTP with --http): the `lsp` tool (read-only) and `lsp_edit`."
)]
struct McpCli {
    /// Workspace root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Refuse writes: `lsp_edit` is not offered.
    #[arg(long = "read-only")]
    read_only: bool,
    /// Serve MCP over Streamable HTTP at ADDR (`127.0.0.1:8765`, or a port)
    /// instead of stdio, at path /mcp, with a bearer token.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http: allow a non-loopback address.
    #[arg(long = "allow-remote", requires = "http")]
    allow_remote: bool,
    /// With --http: read the bearer token from FILE (mode 0600) instead of
    /// generating one in the state directory.
    #[arg(long = "token-file", value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
    /// With --http: a browser Origin allowed to call (`http://host:port`);
    /// repeatable. By default a request with an Origin is refused.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// With --http --allow-remote: a Host name clients use besides the
    /// loopback ones; repeatable.
    #[arg(long = "allow-host", value_name = "HOST", requires = "allow_remote")]
    allow_host: Vec<String>,
    /// Answer in this process instead of through the shared scry daemon
    /// (also `SCRY_NO_DAEMON=1`; stdio and `--http` alike).
    #[arg(long = "no-daemon")]
    no_daemon: bool,
    /// With --http: most MCP sessions at once.
    #[arg(
        long = "max-sessions",
        value_name = "N",
        default_value_t = 16,
        requires = "http"
    )]
    max_sessions: usize,
}

/// `path` relative to the current directory.
fn cwd_join(path: &std::path::Path) -> PathBuf {
    std::env::current_dir()
        .map(|d| d.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

fn mcp_main() -> ExitCode {
    let args =
        std::iter::once(std::ffi::OsString::from("scry mcp")).chain(std::env::args_os().skip(2));
    let cli: McpCli = match argv::parse(args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    init_tracing();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = cli.root.map(|r| cwd.join(r)).unwrap_or(cwd);
    if !root.is_dir() {
        return usage(&format!(
            "workspace root {} is not a directory",
            root.display()
        ));
    }
    let opts = scry_mcp::Options {
        read_only: cli.read_only,
        ..Default::default()
    };
    let http = match &cli.http {
        Some(addr) => match scry_mcp::http::parse_addr(addr) {
            Ok(addr) => Some(scry_mcp::HttpOptions {
                addr,
                allow_remote: cli.allow_remote,
                token_file: cli.token_file.map(|f| cwd_join(&f)),
                allowed_origins: cli.allow_origin,
                allowed_hosts: cli.allow_host,
                max_sessions: cli.max_sessions,
                ..Default::default()
            }),
            Err(e) => return usage(&e),
        },
        None => None,
    };
    // Through the daemon (stdio and HTTP alike) unless opted out; in this
    // process, saying why in `status`, when it cannot be used.
    let opted_out = cli.no_daemon || scry_daemon::paths::opted_out();
    // On stdio through the daemon, `scry mcp` relays: a line in, a frame
    // out and back. One thread runs it all (a second worker would only be
    // woken to take a step of the same call). The engine in this process,
    // or the HTTP endpoint's sessions, get two workers.
    let relay = http.is_none() && !opted_out;
    let runtime = match if relay { relay_runtime() } else { runtime(2) } {
        Ok(r) => r,
        Err(code) => return code,
    };
    let route = runtime.block_on(Choice::make("mcp", opted_out));
    let runtime = match route {
        Choice::InProcess(_) if relay => {
            runtime.shutdown_timeout(Duration::ZERO);
            match crate::runtime(2) {
                Ok(r) => r,
                Err(code) => return code,
            }
        }
        _ => runtime,
    };
    let result = match http {
        Some(http) => runtime.block_on(scry_mcp::http::serve_http_with(
            &root,
            opts,
            http,
            route,
            |s| {
                eprintln!(
                    "scry mcp: serving {} over Streamable HTTP (workspace {}); send `Authorization: Bearer <token>` with the token in {}",
                    s.url(),
                    root.display(),
                    s.token_file().display()
                );
            },
        )),
        None => runtime.block_on(scry_mcp::serve_stdio_with(&root, opts, route)),
    };
    // The stdin reader may still be blocked: do not wait for it.
    runtime.shutdown_timeout(Duration::from_secs(1));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scry mcp: {e}");
            ExitCode::from(1)
        }
    }
}
