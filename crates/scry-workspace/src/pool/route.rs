//! Choosing a server: where a file goes ([`Workspace::route`]: the
//! configured servers for its file type, the first installed one, its
//! root by the server's recipe, [`crate::roots::choose`]), the servers for workspace-wide questions
//! ([`Workspace::workspace_routes`]), where a command is installed
//! ([`Workspace::installed`]: cached per `PATH`, the project-local bin
//! dirs only when trusted), the environment of a child
//! ([`Workspace::child_env`]) and what an untrusted workspace passed over
//! ([`Workspace::trust_notice`]).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use scry_model::TrustNotice;

use super::{COMMANDS_KEPT, Route, Workspace, WorkspaceError};
use crate::catalog::{ProviderKind, ServerSpec};
use crate::command::{resolve_command, resolve_command_untrusted};
use crate::roots;
use crate::trust;

impl Workspace {
    /// Where `command` is installed, on the current call's `PATH` (cached
    /// per `PATH` until `reload`). Untrusted workspaces: `PATH` only, never
    /// the project-local bin dirs.
    pub fn installed(&self, command: &str) -> Option<PathBuf> {
        let trusted = self.config().trust.trust.is_trusted();
        let mut cache = self.commands.lock().unwrap_or_else(|e| e.into_inner());
        // One entry per (command, PATH): bounded however many clients'
        // PATHs the daemon sees.
        if cache.len() >= COMMANDS_KEPT {
            cache.clear();
        }
        cache
            .entry((command.to_string(), crate::env::var_os("PATH")))
            .or_insert_with(|| {
                if trusted {
                    return resolve_command(command, &self.root);
                }
                let (found, skipped) = resolve_command_untrusted(command, &self.root);
                if let Some(s) = skipped {
                    tracing::debug!(path = %s.display(), "untrusted workspace: project-local command not used");
                    self.skipped_bins
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(s);
                }
                found
            })
            .clone()
    }

    /// Where a server of `spec` started now finds each of its
    /// `pathPrograms` (pyright's `python`): on the `PATH` it would get (its
    /// configured one, else the call's, cleaned as every child's is:
    /// [`crate::env::search_path_for_child`]). Cached per (program, `PATH`
    /// given) until the configuration is read again.
    pub fn path_programs(&self, spec: &ServerSpec) -> Vec<(String, PathBuf)> {
        if spec.path_programs.is_empty() {
            return Vec::new();
        }
        let given = spec
            .env
            .get("PATH")
            .map(std::ffi::OsString::from)
            .or_else(|| crate::env::var_os("PATH"))
            .unwrap_or_default();
        let trusted = self.config().trust.trust.is_trusted();
        // Cleaned once per `PATH` given, not per call (the cache starts
        // afresh with every configuration read: trust included).
        let mut cleaned = None;
        let mut cache = self.programs.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= COMMANDS_KEPT {
            cache.clear();
        }
        spec.path_programs
            .iter()
            .filter_map(|name| {
                let found = cache
                    .entry((name.clone(), Some(given.clone())))
                    .or_insert_with(|| {
                        let path = cleaned.get_or_insert_with(|| {
                            crate::env::search_path_for_child(&given, &self.root, trusted).0
                        });
                        crate::command::on_path(name, path)
                    })
                    .clone()?;
                Some((name.clone(), found))
            })
            .collect()
    }

    /// The whole environment of a child started for this workspace (a
    /// server, a linter, an indexer) with its configured `env`: the one
    /// rule of [`crate::env::for_child`] with this workspace's trust.
    pub fn child_env(
        &self,
        configured: &std::collections::BTreeMap<String, String>,
    ) -> crate::env::ChildEnv {
        let trusted = self.config().trust.trust.is_trusted();
        crate::env::for_child(&self.root, trusted, configured)
    }

    /// What the untrusted workspace's configuration and bin dirs asked for
    /// and was ignored, with how to trust; `None` when trusted or nothing
    /// was ignored.
    pub fn trust_notice(&self) -> Option<TrustNotice> {
        let bins: Vec<PathBuf> = self
            .skipped_bins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect();
        trust::notice(&self.config().trust, &bins)
    }

    /// Log a warning once per workspace (missing servers and the like).
    pub fn warn_once(&self, msg: &str) -> bool {
        let fresh = self.first_warning(msg);
        if fresh {
            tracing::warn!("{msg}");
        }
        fresh
    }

    /// Whether the warning keyed `key` is new to this workspace (and so
    /// is logged now).
    fn first_warning(&self, key: &str) -> bool {
        self.warned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_string())
    }

    /// The navigation server for `path` (not linters), or why there is none.
    pub fn route(&self, path: &Path) -> Result<Route, WorkspaceError> {
        let config = self.config();
        let installed = |s: &ServerSpec| self.installed(&s.command).is_some();
        let candidates: Vec<&ServerSpec> = config
            .servers_for(path, &installed)
            .into_iter()
            .filter(|s| s.kind == ProviderKind::Lsp && !s.is_linter)
            .collect();
        let describe = describe_file(path);
        if !candidates.is_empty() && !scry_base::paths::text_below(&self.root, path) {
            return Err(WorkspaceError::NoServer {
                message: scry_model::Message::new().fact(scry_model::Fact::NameNotUtf8 {
                    server: candidates[0].id.clone(),
                    shown: scry_base::paths::display(path, &self.root),
                }),
                trust: None,
            });
        }
        if candidates.is_empty() {
            return Err(WorkspaceError::NoServer {
                message: scry_model::Message::new()
                    .fact(scry_model::Fact::NoServerConfigured { file: describe }),
                trust: self.trust_notice(),
            });
        }
        let mut missing = Vec::new();
        for spec in candidates {
            if let Some(program) = self.installed(&spec.command) {
                let chosen = self.choose_root(spec, path);
                return Ok(Route {
                    root: chosen.root,
                    why: chosen.why,
                    members: chosen.members,
                    language_id: spec.language_id_for(path),
                    spec: spec.clone(),
                    program,
                });
            }
            missing.push((spec.id.clone(), spec.command.clone()));
        }
        // Logged once per kind of file (the answer says it in words).
        if self.first_warning(&format!("no server: {describe}")) {
            let commands: Vec<&str> = missing.iter().map(|(_, c)| c.as_str()).collect();
            tracing::warn!(file = %describe, missing = ?commands, "no installed language server");
        }
        let message = scry_model::Message::new().fact(scry_model::Fact::NoServerInstalled {
            file: describe,
            missing,
        });
        Err(WorkspaceError::NoServer {
            message,
            trust: self.trust_notice(),
        })
    }

    /// The root `spec` gets for `path` ([`roots::choose`], the layout
    /// counting packages when the recipe asks).
    pub fn choose_root(&self, spec: &ServerSpec, path: &Path) -> roots::Chosen {
        roots::choose(spec, path, &self.root, &self.root_files, &|names| {
            self.layout().holding(names)
        })
    }

    /// Servers that could answer workspace-wide questions (no file given):
    /// running ones first, then installed servers whose root markers are in
    /// the workspace root.
    pub fn workspace_routes(&self) -> Vec<Route> {
        let config = self.config();
        let mut out: Vec<Route> = Vec::new();
        let mut seen = HashSet::new();
        for s in self.running() {
            if let Some(spec) = config.server(s.name())
                && let Some(program) = self.installed(&spec.command)
                && seen.insert(spec.id.clone())
            {
                out.push(Route {
                    spec: spec.clone(),
                    program,
                    root: s.root().to_path_buf(),
                    language_id: spec.language_id.clone().unwrap_or_default(),
                    why: scry_model::RootChoice::NoMarker,
                    members: roots::Members::None,
                });
            }
        }
        for spec in &config.servers {
            if spec.disabled || spec.kind != ProviderKind::Lsp || spec.is_linter {
                continue;
            }
            if seen.contains(&spec.id) {
                continue;
            }
            let marked = spec
                .root_markers
                .iter()
                .filter(|m| m.as_str() != ".git")
                .any(|m| self.root.join(m).exists());
            if !marked {
                continue;
            }
            if spec
                .alternative_to
                .as_ref()
                .is_some_and(|p| seen.contains(p))
            {
                continue;
            }
            if let Some(program) = self.installed(&spec.command) {
                seen.insert(spec.id.clone());
                let chosen = self.choose_root(spec, &self.root);
                out.push(Route {
                    spec: spec.clone(),
                    program,
                    root: chosen.root,
                    language_id: spec.language_id.clone().unwrap_or_default(),
                    why: chosen.why,
                    members: chosen.members,
                });
            }
        }
        out
    }

    /// A route for every configured, installed server (root: the
    /// workspace's), for comparing configurations.
    pub(super) fn configured_routes(&self) -> Vec<Route> {
        let config = self.config();
        config
            .servers
            .iter()
            .filter(|s| !s.disabled)
            .filter_map(|spec| {
                Some(Route {
                    program: self.installed(&spec.command)?,
                    spec: spec.clone(),
                    root: self.root.clone(),
                    language_id: String::new(),
                    why: scry_model::RootChoice::NoMarker,
                    members: roots::Members::None,
                })
            })
            .collect()
    }
}

fn describe_file(path: &Path) -> String {
    match path.extension() {
        Some(e) => format!("*.{} files", e.to_string_lossy()),
        None => format!(
            "`{}`",
            path.file_name().unwrap_or_default().to_string_lossy()
        ),
    }
}
