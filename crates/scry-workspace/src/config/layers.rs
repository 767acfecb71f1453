//! Reading the layers of a workspace's configuration from disk: the user
//! file, other agents' seed files ([`crate::seed_config`]) and the project
//! files, in layer order; deciding the project layers' trust
//! ([`crate::trust::decide`]) and applying them ([`super::merge`]); and the
//! [`ConfigStamp`] of those files, by which a long-lived host knows when to read
//! them again.

use std::io;
use std::path::{Path, PathBuf};

use scry_base::dirs::EnvFn;

use super::merge::Builder;
use super::{Config, ConfigError, PROJECT_CONFIG_FILES};
use crate::trust::{self, TrustPolicy, TrustState};

/// What the configuration of a workspace was read from, as the file system
/// says now: for the user file, every project file scry and other agents'
/// seed files may be, and the `scry trust` store, whether it exists and
/// its [`scry_base::disk::Stamp`] (size, modification time, status-change
/// time and file number). Taken in a few `stat`s, so a long-lived host compares it before every call ([`ConfigStamp::now`]) and
/// rereads the configuration (trust included) only when it moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigStamp(Vec<(PathBuf, Option<scry_base::disk::Stamp>)>);

impl ConfigStamp {
    /// The stamp of the configuration of `workspace_root` in the
    /// environment in force (the call's, in the daemon).
    pub fn now(workspace_root: &Path) -> ConfigStamp {
        let env = |k: &str| crate::env::var_os(k);
        let mut files: Vec<PathBuf> = Vec::new();
        files.extend(scry_base::dirs::user_config_with(&env).map(|(p, _)| p));
        files.extend(
            crate::seed_config::SEED_CONFIG_FILES
                .iter()
                .chain(PROJECT_CONFIG_FILES.iter())
                .map(|f| workspace_root.join(f)),
        );
        files.extend(scry_base::dirs::trust_store_with(&env));
        ConfigStamp(
            files
                .into_iter()
                .map(|p| {
                    let meta = std::fs::metadata(&p)
                        .ok()
                        .map(|m| scry_base::disk::Stamp::of(&p, &m));
                    (p, meta)
                })
                .collect(),
        )
    }
}

/// The project configuration layers of `workspace_root` as they are now:
/// (path, text) of each project file present, in layer order. What `scry
/// trust` hashes.
pub fn project_layers(workspace_root: &Path) -> Result<Vec<(PathBuf, String)>, ConfigError> {
    let env = |k: &str| crate::env::var_os(k);
    Ok(read_layers(workspace_root, &env)?.project)
}

#[cfg(test)]
pub(crate) fn load_with_env(workspace_root: &Path, env: EnvFn<'_>) -> Result<Config, ConfigError> {
    load_with(workspace_root, env, TrustPolicy::FromEnvironment)
}

pub(crate) fn load_with(
    workspace_root: &Path,
    env: EnvFn<'_>,
    policy: TrustPolicy,
) -> Result<Config, ConfigError> {
    let Layers {
        user,
        project,
        warnings: seed_warnings,
    } = read_layers(workspace_root, env)?;
    let mut b = Builder::new();
    if let Some((path, text)) = &user {
        b.apply(path, text)?;
    }
    let mut warnings = Vec::new();
    let decision = trust::decide(
        workspace_root,
        &project,
        &b.trusted_roots,
        policy,
        env,
        &mut warnings,
    );
    b.warnings.extend(warnings);
    b.project = true;
    b.untrusted = !decision.is_trusted();
    for (path, text) in &project {
        b.apply(path, text)?;
    }
    let ignored = std::mem::take(&mut b.ignored);
    let mut config = b.finish();
    config.warnings.extend(seed_warnings);
    config.trust = TrustState {
        trust: decision,
        project_files: project.into_iter().map(|(p, _)| p).collect(),
        ignored,
    };
    for w in &config.warnings {
        tracing::warn!("{w}");
    }
    Ok(config)
}

/// The configuration files of a workspace as read from disk.
struct Layers {
    /// The user layer, if any.
    user: Option<(PathBuf, String)>,
    /// The project layers in precedence order: other agents' files
    /// ([`crate::seed_config`]) below scry's own.
    project: Vec<(PathBuf, String)>,
    /// Why another agent's file was skipped.
    warnings: Vec<String>,
}

/// The user layer (if any) and the project layers, read from disk.
fn read_layers(workspace_root: &Path, env: EnvFn<'_>) -> Result<Layers, ConfigError> {
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    let user = scry_base::dirs::user_config_with(env);
    let user_path = user.as_ref().map(|(p, _)| p.clone());
    if let Some(user) = user {
        files.push(user);
    }
    let user_files = files.len();
    files.extend(
        PROJECT_CONFIG_FILES
            .iter()
            .map(|f| (workspace_root.join(f), false)),
    );
    let mut layers = Vec::new();
    let mut seed_warnings = Vec::new();
    for (i, (path, required)) in files.into_iter().enumerate() {
        if i == user_files {
            // Project level too: other agents' lsp.json files, below scry's own.
            let (seeds, warnings) = crate::seed_config::read_layers(workspace_root);
            seed_warnings = warnings;
            for seed in seeds {
                // Another agent's file never stops scry: one scry would
                // refuse is skipped with a warning.
                let mut trial = layers.clone();
                trial.push(seed.clone());
                match Config::from_layers(&trial) {
                    Ok(_) => layers.push(seed),
                    Err(e) => seed_warnings.push(format!("not used: {e}")),
                }
            }
        }
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                tracing::debug!(path = %path.display(), "reading config file");
                layers.push((path, text));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound && !required => {}
            Err(source) => return Err(ConfigError::Read { path, source }),
        }
    }
    let mut user = None;
    if let Some(up) = &user_path
        && let Some(i) = layers.iter().position(|(p, _)| p == up)
    {
        user = Some(layers.remove(i));
    }
    Ok(Layers {
        user,
        project: layers,
        warnings: seed_warnings,
    })
}
