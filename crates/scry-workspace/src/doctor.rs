//! `scry doctor`: what would serve each language in this workspace, whether
//! it is installed, its version and where it was found, its memory cap, the
//! install command that fits this machine for what is missing, the SCIP
//! indexers (`indexer` of the catalogue) likewise, and known set-up
//! problems.
//!
//! Everything per language comes from the catalogue (`install`,
//! `versionArgs`, `hints` of each [`ServerSpec`]); nothing here names a
//! language. Invariants: no language server is started; the only programs
//! run are `<command> <versionArgs>` for commands found on `PATH` whose
//! command comes from the catalogue or the user's own configuration file
//! (an indexer's always comes from the catalogue: no configuration sets
//! it), never a project-local binary nor a command a project file chose,
//! with stdin closed and a short timeout, in the environment every child
//! gets ([`crate::env::for_child`]: no relative `PATH` entry, none inside
//! an untrusted workspace), what was left out of its `PATH` reported
//! ([`Report::path_left_out`]), and what this OS build cannot do that
//! others do ([`Report::platform_gaps`], from `crate::platform::gaps`).

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::catalog::{self, ProviderKind, ServerSpec};
use crate::config::{self, Config};
use scry_base::walk::Walker;

/// How long a `--version` may take.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(3);
/// At most this many files are looked at to see which languages are here.
pub const MAX_FILES: usize = 20_000;

/// Install methods and the program that must be on `PATH` for each.
const METHOD_PROGRAMS: &[(&str, &[&str])] = &[
    ("npm", &["npm"]),
    ("pipx", &["pipx"]),
    ("pip", &["pip3", "pip"]),
    ("rustup", &["rustup"]),
    ("apt", &["apt-get"]),
    ("go", &["go"]),
    ("brew", &["brew"]),
];

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub workspace_root: PathBuf,
    /// Configuration files read, in order.
    pub config_files: Vec<PathBuf>,
    /// Whether the project's own configuration may choose what runs
    /// ([`crate::trust`]; worded by scry-render, `scry_render::trust`).
    pub trust: scry_model::Trust,
    /// What the project configuration asked to run and was ignored
    /// because the workspace is not trusted.
    pub trust_ignored: Vec<String>,
    pub warnings: Vec<String>,
    /// `PATH` entries that servers, linters, indexers and the version
    /// probes do not get (relative ones; inside an untrusted workspace).
    pub path_left_out: Vec<crate::env::LeftOut>,
    /// One row per built-in language group (a primary server).
    pub languages: Vec<LanguageRow>,
    /// Linters (diagnostics only).
    pub linters: Vec<LanguageRow>,
    /// SCIP indexers (`scry index`, the daemon's refresh), one per
    /// indexer command; `files`: the files its languages' server serves.
    pub indexers: Vec<LanguageRow>,
    pub problems: Vec<Problem>,
    /// Install methods usable here (`npm`, `pip`, …).
    pub install_methods: Vec<String>,
    /// Whether the file count stopped at [`MAX_FILES`].
    pub files_capped: bool,
    /// What scry does on other systems and cannot do on this one, each a
    /// sentence saying what and why (none on Linux).
    pub platform_gaps: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LanguageRow {
    /// `"Rust"`, `"C, C++"`.
    pub languages: String,
    /// Files in the workspace this row's server serves.
    pub files: usize,
    /// The provider that would serve them; `None` when every candidate is disabled.
    pub provider: Option<ProviderRow>,
}

#[derive(Debug, Clone, Serialize)]
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
    /// A language server's memory cap (its process tree, MiB): its
    /// `memoryMiB`, else `limits.serverMemoryMiB`. `None` for linters run
    /// per call.
    pub memory_cap_mib: Option<u64>,
}

impl ProviderRow {
    fn with_cap(mut self, spec: &ServerSpec, limits: &config::Limits) -> ProviderRow {
        self.memory_cap_mib = (spec.kind == ProviderKind::Lsp)
            .then(|| spec.memory_mib.unwrap_or(limits.server_memory_mib));
        self
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", content = "text", rename_all = "camelCase")]
pub enum Version {
    /// The first line it printed.
    Known(String),
    /// Not asked; why.
    NotChecked(String),
    /// Asked, no usable answer; why.
    Unknown(String),
    /// It ran and failed (e.g. a rustup proxy without its component): the
    /// install command is shown as for a missing one.
    Failed(String),
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    pub provider: String,
    /// The root it applies to.
    pub root: PathBuf,
    pub problem: String,
    pub fix: String,
}

/// Examine `root` under `config` with the `PATH` of this process.
pub fn diagnose(config: &Config, root: &Path) -> Report {
    diagnose_with(config, root, crate::env::var_os("PATH").as_deref())
}

/// [`diagnose`] with an explicit `PATH` value.
pub fn diagnose_with(config: &Config, root: &Path, path_var: Option<&OsStr>) -> Report {
    let path_dirs: Vec<PathBuf> = path_var
        .map(|v| std::env::split_paths(v).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.is_absolute())
        .collect();
    let found = |spec: &ServerSpec| {
        crate::command::resolve_command_with_path(&spec.command, root, path_var)
    };
    let installed = |spec: &ServerSpec| found(spec).is_some();
    let child_env = crate::env::for_child_with_path(
        root,
        config.trust.trust.is_trusted(),
        &BTreeMap::new(),
        Some(path_var),
    );
    let child_env = &child_env;
    let methods: Vec<String> = METHOD_PROGRAMS
        .iter()
        .filter(|(_, progs)| progs.iter().any(|p| on_path(p, &path_dirs)))
        .map(|(m, _)| m.to_string())
        .collect();
    let trusted = trusted_commands();

    // Which files are here: the first one and a count per provider.
    let (files, files_capped) = workspace_files(root);
    let mut count: BTreeMap<&str, (usize, Option<&PathBuf>)> = BTreeMap::new();
    for spec in &config.servers {
        let mut n = 0;
        let mut first = None;
        for f in &files {
            if spec.serves(f) {
                n += 1;
                first.get_or_insert(f);
            }
        }
        count.insert(&spec.id, (n, first));
    }

    let mut rows: Vec<(LanguageRow, Option<&ServerSpec>)> = Vec::new();
    let mut linters: Vec<(LanguageRow, Option<&ServerSpec>)> = Vec::new();
    for spec in &config.servers {
        let is_linter = spec.is_linter || spec.kind == ProviderKind::Cli;
        if spec.alternative_to.is_some() && !is_linter {
            continue;
        }
        let (n, _) = count.get(spec.id.as_str()).copied().unwrap_or((0, None));
        if is_linter {
            let chosen = (!spec.disabled).then_some(spec);
            linters.push((
                LanguageRow {
                    languages: spec.languages.join(", "),
                    files: n,
                    provider: chosen.map(|s| {
                        provider_row(s, None, &found, &methods, &trusted, root)
                            .with_cap(s, &config.limits)
                    }),
                },
                chosen,
            ));
            continue;
        }
        let Some(ft) = spec.file_types.first() else {
            continue;
        };
        let sample = root.join(format!("x.{ft}"));
        let chosen = config.servers_for(&sample, &installed).into_iter().next();
        let languages = if spec.languages.is_empty() {
            spec.id.clone()
        } else {
            spec.languages.join(", ")
        };
        if rows.iter().any(|(r, _)| r.languages == languages) {
            continue;
        }
        let alt = chosen.filter(|c| c.id != spec.id).map(|_| spec.id.clone());
        rows.push((
            LanguageRow {
                languages,
                files: n,
                provider: chosen.map(|c| {
                    provider_row(c, alt, &found, &methods, &trusted, root)
                        .with_cap(c, &config.limits)
                }),
            },
            chosen,
        ));
    }

    // Indexers: catalogue data only, so their commands are run for their
    // version like the catalogue's servers.
    let mut indexer_specs: Vec<ServerSpec> = Vec::new();
    let mut indexers: Vec<LanguageRow> = Vec::new();
    for spec in config.servers.iter().filter(|s| !s.disabled) {
        let Some(ix) = &spec.indexer else { continue };
        if indexer_specs.iter().any(|i| i.command == ix.command) {
            continue;
        }
        let as_spec = ServerSpec {
            id: ix.command.clone(),
            command: ix.command.clone(),
            install: ix.install.clone(),
            version_args: (ix.command == spec.command)
                .then(|| spec.version_args.clone())
                .flatten(),
            ..ServerSpec::default()
        };
        let mut trusted_ix = HashSet::new();
        trusted_ix.insert((as_spec.id.clone(), as_spec.command.clone()));
        let (n, _) = count.get(spec.id.as_str()).copied().unwrap_or((0, None));
        indexers.push(LanguageRow {
            languages: if spec.languages.is_empty() {
                spec.id.clone()
            } else {
                spec.languages.join(", ")
            },
            files: n,
            provider: Some(provider_row(
                &as_spec,
                None,
                &found,
                &methods,
                &trusted_ix,
                root,
            )),
        });
        indexer_specs.push(as_spec);
    }

    // Versions, probed concurrently.
    std::thread::scope(|s| {
        for (row, _) in rows.iter_mut().chain(linters.iter_mut()) {
            if let Some(p) = row.provider.as_mut()
                && matches!(p.version, Version::Unknown(_))
            {
                let spec = config.server(&p.id).cloned();
                s.spawn(move || {
                    if let (Some(spec), Some(path)) = (spec, p.found.clone()) {
                        p.version = probe_version(&path, &spec, child_env);
                    }
                });
            }
        }
        for (row, spec) in indexers.iter_mut().zip(&indexer_specs) {
            if let Some(p) = row.provider.as_mut()
                && matches!(p.version, Version::Unknown(_))
                && let Some(path) = p.found.clone()
            {
                s.spawn(move || p.version = probe_version(&path, spec, child_env));
            }
        }
    });

    let mut problems = Vec::new();
    for (row, chosen) in rows.iter().chain(linters.iter()) {
        let Some(spec) = chosen else { continue };
        if row.files == 0 {
            continue;
        }
        let sample = count
            .get(spec.id.as_str())
            .and_then(|(_, f)| *f)
            .cloned()
            .unwrap_or_else(|| root.to_path_buf());
        let server_root = crate::roots::find_root(spec, &sample, root);
        for hint in &spec.hints {
            let fine = [root, server_root.as_path()]
                .iter()
                .any(|dir| hint.unless.iter().any(|u| dir.join(u).exists()));
            if !fine {
                problems.push(Problem {
                    provider: spec.id.clone(),
                    root: server_root.clone(),
                    problem: hint.problem.clone(),
                    fix: hint.fix.clone(),
                });
            }
        }
    }

    Report {
        workspace_root: root.to_path_buf(),
        config_files: config.sources.clone(),
        trust: config.trust.trust.clone(),
        trust_ignored: config
            .trust
            .ignored
            .iter()
            .map(|(file, what)| format!("{}: {what}", scry_base::paths::display(file, root)))
            .collect(),
        warnings: config.warnings.clone(),
        path_left_out: child_env.left_out().to_vec(),
        languages: rows.into_iter().map(|(r, _)| r).collect(),
        linters: linters.into_iter().map(|(r, _)| r).collect(),
        indexers,
        problems,
        install_methods: methods,
        files_capped,
        platform_gaps: crate::platform::gaps()
            .into_iter()
            .map(str::to_string)
            .collect(),
    }
}

fn provider_row(
    spec: &ServerSpec,
    alternative_to: Option<String>,
    found: &dyn Fn(&ServerSpec) -> Option<PathBuf>,
    methods: &[String],
    trusted: &HashSet<(String, String)>,
    root: &Path,
) -> ProviderRow {
    let path = found(spec);
    let version = match &path {
        None => Version::NotChecked("not installed".into()),
        Some(p) if scry_base::paths::project_local(p, root) => {
            Version::NotChecked("project-local binary: not run".into())
        }
        Some(_) if !trusted.contains(&(spec.id.clone(), spec.command.clone())) => {
            Version::NotChecked("command from a project configuration file: not run".into())
        }
        Some(_) if spec.version_args.as_ref().is_some_and(|a| a.is_empty()) => {
            Version::NotChecked("it has no version flag".into())
        }
        // Probed later, concurrently.
        Some(_) => Version::Unknown(String::new()),
    };
    let (mut install, mut install_method, mut install_needs) = (None, None, None);
    let mut install_alternatives = Vec::new();
    if !spec.install.is_empty() {
        let pick = spec
            .install
            .0
            .iter()
            .position(|(m, _)| methods.contains(m))
            .map(|i| (i, true))
            .unwrap_or((0, false));
        let (m, c) = &spec.install.0[pick.0];
        install = Some(c.clone());
        install_method = Some(m.clone());
        if !pick.1 {
            install_needs = Some(
                METHOD_PROGRAMS
                    .iter()
                    .find(|(name, _)| name == m)
                    .map(|(_, progs)| progs[0].to_string())
                    .unwrap_or_else(|| m.clone()),
            );
        }
        install_alternatives = spec
            .install
            .0
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != pick.0)
            .map(|(_, (_, c))| c.clone())
            .collect();
    }
    ProviderRow {
        id: spec.id.clone(),
        command: spec.command.clone(),
        found: path,
        version,
        alternative_to: alternative_to.and_then(|_| spec.alternative_to.clone()),
        install,
        install_method,
        install_needs,
        install_alternatives,
        memory_cap_mib: None,
    }
}

/// (id, command) pairs that the catalogue or the user's configuration file
/// define: only those are run for their version.
fn trusted_commands() -> HashSet<(String, String)> {
    let mut out: HashSet<(String, String)> = catalog::builtins()
        .into_iter()
        .map(|s| (s.id, s.command))
        .collect();
    if let Some(p) = scry_base::dirs::user_config()
        && let Ok(text) = std::fs::read_to_string(&p)
        && let Ok(c) = Config::from_layers(&[(p, text)])
    {
        out.extend(c.servers.into_iter().map(|s| (s.id, s.command)));
    }
    out
}

/// Whether `program` is an executable in one of `dirs` (found as a
/// server's command is: [`crate::command`]'s rule).
fn on_path(program: &str, dirs: &[PathBuf]) -> bool {
    dirs.iter()
        .any(|d| crate::command::executable_in(&d.join(program)).is_some())
}

/// The workspace's files (gitignore respected, the
/// [`scry_base::walk::SKIPPED_DIRS`] skipped), at most [`MAX_FILES`], sorted.
fn workspace_files(root: &Path) -> (Vec<PathBuf>, bool) {
    let mut files = Vec::new();
    let mut capped = false;
    for file in Walker::new().with_hidden().files(root) {
        if files.len() >= MAX_FILES {
            capped = true;
            break;
        }
        files.push(file);
    }
    files.sort();
    (files, capped)
}

/// Run `path versionArgs` (argv, stdin closed, [`VERSION_TIMEOUT`]) and take
/// the first line of stdout (else stderr) that holds a digit, else its
/// first non-empty line. `env` is the child's whole environment.
pub fn probe_version(path: &Path, spec: &ServerSpec, env: &crate::env::ChildEnv) -> Version {
    let args = spec
        .version_args
        .clone()
        .unwrap_or_else(|| vec!["--version".into()]);
    let mut cmd = Command::new(path);
    env.apply(&mut cmd);
    let child = cmd
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Version::Unknown(format!("cannot run it: {e}")),
    };
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut o = Vec::new();
        let mut e = Vec::new();
        if let Some(s) = out.as_mut() {
            let _ = s.take(64 * 1024).read_to_end(&mut o);
        }
        if let Some(s) = err.as_mut() {
            let _ = s.take(64 * 1024).read_to_end(&mut e);
        }
        (o, e)
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < VERSION_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Version::Unknown(format!(
                    "`{} {}` did not answer within {} s",
                    spec.command,
                    args.join(" "),
                    VERSION_TIMEOUT.as_secs()
                ));
            }
        }
    };
    let (o, e) = reader.join().unwrap_or_default();
    let first = |b: &[u8]| {
        let text = String::from_utf8_lossy(b);
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let any = lines.clone().next();
        lines
            .find(|l| l.chars().any(|c| c.is_ascii_digit()))
            .or(any)
            .map(|l| l.chars().take(100).collect::<String>())
    };
    let line = first(&o).or_else(|| first(&e));
    if !status.success() {
        // e.g. a rustup proxy whose component is not installed.
        return Version::Failed(format!(
            "`{} {}` failed ({status}){}",
            spec.command,
            args.join(" "),
            line.map(|l| format!(": {l}")).unwrap_or_default()
        ));
    }
    match line {
        Some(l) => Version::Known(l),
        None => Version::Unknown("it printed nothing".into()),
    }
}
