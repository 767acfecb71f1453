//! Rereading the configuration: [`Workspace::refresh_config`] when a file
//! it was read from moved ([`crate::config::ConfigStamp`]), stopping only the
//! servers whose effective configuration changed (all of them when trust
//! changed); [`Workspace::reload`] stops everything and rereads.

use std::collections::HashSet;
use std::sync::Arc;

use super::{Key, Slot, Workspace, config_hash};
use crate::config::{Config, ConfigError};

impl Workspace {
    /// Reread the configuration when a file it was read from (the user
    /// file, the project files, the `scry trust` store) changed since
    /// ([`crate::config::ConfigStamp`]: a few `stat`s, so it is checked before
    /// every call): trust and everything it gates (project commands and
    /// settings, the configured index, project-local binaries) follow at
    /// once. The servers whose effective configuration is no longer the
    /// configured one stop (the next question starts them anew), and every
    /// server when the workspace's trust changed (what they run and find on
    /// their `PATH` was decided under the other); the others keep running.
    /// A configuration given by the caller ([`Workspace::with_config`]) is
    /// never reread. Returns whether anything was reread.
    pub async fn refresh_config(&self) -> Result<bool, ConfigError> {
        let Some(old) = self.stamp.lock().unwrap_or_else(|e| e.into_inner()).clone() else {
            return Ok(false);
        };
        let now = crate::config::ConfigStamp::now(&self.root);
        if now == old {
            return Ok(false);
        }
        let fresh = Config::load_with_policy(&self.root, self.policy)?;
        *self.stamp.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
        let current = self.config();
        let trust_changed = fresh.trust.trust.is_trusted() != current.trust.trust.is_trusted();
        self.install_config(fresh);
        let live: HashSet<(String, u64)> = self
            .configured_routes()
            .iter()
            .map(|r| (r.spec.id.clone(), config_hash(r)))
            .collect();
        let stale: Vec<(Key, Slot)> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(k, _)| trust_changed || !live.contains(&(k.0.clone(), k.4)))
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect();
        for (key, slot) in stale {
            let taken = slot.session.lock().await.take();
            if let Some(s) = taken {
                tracing::info!(server = %s.name(), trust_changed, "configuration changed: stopping the old server");
                s.shutdown().await;
            }
            self.forget_if_empty(&key, &slot);
        }
        Ok(true)
    }

    /// Whether the configuration in use is the one its files hold now (a
    /// few `stat`s, [`crate::config::ConfigStamp`]): what it decided —
    /// trust first — still stands. Always true for a configuration given
    /// by the caller.
    pub fn config_is_current(&self) -> bool {
        match self
            .stamp
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            Some(old) => *old == crate::config::ConfigStamp::now(&self.root),
            None => true,
        }
    }

    /// Stop everything and reread the configuration.
    pub async fn reload(&self) -> Result<usize, ConfigError> {
        let stamp = crate::config::ConfigStamp::now(&self.root);
        let config = Config::load_with_policy(&self.root, self.policy)?;
        {
            let mut s = self.stamp.lock().unwrap_or_else(|e| e.into_inner());
            if s.is_some() {
                *s = Some(stamp);
            }
        }
        let stopped = self.shutdown().await;
        self.install_config(config);
        self.warned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        Ok(stopped)
    }

    /// Make `config` the workspace's: the commands resolved and the `PATH`
    /// entries skipped under the old one are decided anew.
    fn install_config(&self, config: Config) {
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(config);
        self.commands
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.programs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.skipped_bins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}
