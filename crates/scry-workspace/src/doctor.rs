//! `scry doctor`'s findings: what would serve each language in this
//! workspace, whether it is installed, its version and where it was found,
//! its memory cap, the install command that fits this machine for what is
//! missing, the SCIP indexers (`indexer` of the catalogue) likewise, and
//! known set-up problems — as data ([`DoctorReport`]; scry-render's
//! `doctor_text`/`doctor_json` word it, this file words nothing).
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
//! ([`DoctorReport::path_left_out`]), and what this OS build cannot do
//! that others do ([`DoctorReport::platform_gaps`], from
//! `crate::platform::gaps`).

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::catalog::{self, ProviderKind, ServerSpec};
use crate::config::{self, Config};
use scry_base::walk::Walker;
use scry_model::{
    DoctorReport, LanguageRow, NoVersion, NotChecked, ProviderRow, SetupProblem, Version,
};

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

/// `row` with the memory cap of a language server (`spec`'s
/// `memoryMiB`, else `limits.serverMemoryMiB`); none for a linter run per
/// call.
fn with_cap(mut row: ProviderRow, spec: &ServerSpec, limits: &config::Limits) -> ProviderRow {
    row.memory_cap_kib = (spec.kind == ProviderKind::Lsp)
        .then(|| spec.memory_mib.unwrap_or(limits.server_memory_mib) * 1024);
    row
}

/// Examine `root` under `config` with the `PATH` of this process.
pub fn diagnose(config: &Config, root: &Path) -> DoctorReport {
    diagnose_with(config, root, crate::env::var_os("PATH").as_deref())
}

/// [`diagnose`] with an explicit `PATH` value.
pub fn diagnose_with(config: &Config, root: &Path, path_var: Option<&OsStr>) -> DoctorReport {
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

    let root_files = crate::roots::RootFiles::default();
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
                        let row = provider_row(s, None, &found, &methods, &trusted, root);
                        with_cap(row, s, &config.limits)
                    }),
                    roots: Vec::new(),
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
                roots: chosen.map_or_else(Vec::new, |c| roots_of(c, &files, root, &root_files)),
                provider: chosen.map(|c| {
                    let row = provider_row(c, alt, &found, &methods, &trusted, root);
                    with_cap(row, c, &config.limits)
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
            roots: Vec::new(),
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
                && p.version == Version::Unknown(NoVersion::Pending)
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
                && p.version == Version::Unknown(NoVersion::Pending)
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
                problems.push(SetupProblem {
                    provider: spec.id.clone(),
                    root: server_root.clone(),
                    problem: hint.problem.clone(),
                    fix: hint.fix.clone(),
                });
            }
        }
    }

    DoctorReport {
        workspace_root: root.to_path_buf(),
        config_files: config.sources.clone(),
        trust: config.trust.trust.clone(),
        trust_ignored: config.trust.ignored.clone(),
        warnings: config.warnings.clone(),
        path_left_out: child_env.left_out().to_vec(),
        languages: rows.into_iter().map(|(r, _)| r).collect(),
        linters: linters.into_iter().map(|(r, _)| r).collect(),
        indexers,
        problems,
        install_methods: methods,
        files_capped,
        platform_gaps: crate::platform::gaps(),
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
        None => Version::NotChecked(NotChecked::NotInstalled),
        Some(p) if scry_base::paths::project_local(p, root) => {
            Version::NotChecked(NotChecked::ProjectLocal)
        }
        Some(_) if !trusted.contains(&(spec.id.clone(), spec.command.clone())) => {
            Version::NotChecked(NotChecked::ProjectCommand)
        }
        Some(_) if spec.version_args.as_ref().is_some_and(|a| a.is_empty()) => {
            Version::NotChecked(NotChecked::NoVersionFlag)
        }
        // Probed later, concurrently.
        Some(_) => Version::Unknown(NoVersion::Pending),
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
        memory_cap_kib: None,
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
/// The roots `spec` would get for the files it serves among `files`
/// ([`crate::roots::choose`], once per directory), each with what chose
/// it, in path order.
fn roots_of(
    spec: &ServerSpec,
    files: &[PathBuf],
    root: &Path,
    root_files: &crate::roots::RootFiles,
) -> Vec<scry_model::Folder> {
    let packages = |names: &[String]| -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = files
            .iter()
            .filter(|f| {
                f.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| names.iter().any(|x| x == n))
            })
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs
    };
    let mut dirs_seen = HashSet::new();
    let mut out: BTreeMap<PathBuf, scry_model::RootChoice> = BTreeMap::new();
    for f in files.iter().filter(|f| spec.serves(f)) {
        if !dirs_seen.insert(f.parent().map(Path::to_path_buf)) {
            continue;
        }
        let c = crate::roots::choose(spec, f, root, root_files, &packages);
        out.entry(c.root).or_insert(c.why);
    }
    out.into_iter()
        .map(|(path, chosen_by)| scry_model::Folder { path, chosen_by })
        .collect()
}

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
        Err(e) => {
            return Version::Unknown(NoVersion::CannotRun {
                error: e.to_string(),
            });
        }
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
                return Version::Unknown(NoVersion::NoAnswer {
                    command: format!("{} {}", spec.command, args.join(" ")),
                    secs: VERSION_TIMEOUT.as_secs(),
                });
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
        return Version::Failed {
            command: format!("{} {}", spec.command, args.join(" ")),
            status: status.to_string(),
            output: line,
        };
    }
    match line {
        Some(l) => Version::Known(l),
        None => Version::Unknown(NoVersion::PrintedNothing),
    }
}
