//! Routing: which servers serve a file. The configuration's providers in
//! priority order, with alternatives resolved; [`crate::Workspace::route`] turns
//! the chosen one into a running server for the file's root.
//!
//! Invariants: disabled servers are never chosen; a linter is chosen only
//! when linters are asked for; an alternative stands in for its primary at
//! the primary's place (see [`Config::providers_for`]).

use std::path::Path;

use crate::catalog::{ProviderKind, ServerSpec};
use crate::config::Config;

impl Config {
    /// Enabled LSP servers (not linters) whose file types match `path`, in
    /// priority order, with alternatives resolved (see
    /// [`Config::providers_for`]).
    pub fn servers_for(
        &self,
        path: &Path,
        is_installed: &dyn Fn(&ServerSpec) -> bool,
    ) -> Vec<&ServerSpec> {
        self.providers_for(path, false, is_installed)
    }

    /// Enabled providers whose file types match `path`, in priority order:
    /// LSP servers that are not linters, plus every linter (LSP or CLI) when
    /// `include_linters`.
    ///
    /// Alternatives: a server with `alternative_to: Some(p)` stands in for
    /// `p` and is returned (at `p`'s place) only when `p` is not installed or
    /// is disabled, and only the first installed alternative is. A primary
    /// that is not installed and has no installed alternative is still
    /// returned, so that the caller can report it missing; a disabled primary
    /// with no installed alternative yields nothing. When `p` is not
    /// configured at all (or does not serve this file), the first installed
    /// alternative, else the first alternative, is returned.
    pub fn providers_for(
        &self,
        path: &Path,
        include_linters: bool,
        is_installed: &dyn Fn(&ServerSpec) -> bool,
    ) -> Vec<&ServerSpec> {
        let candidates: Vec<&ServerSpec> = self
            .servers
            .iter()
            .filter(|s| {
                !s.disabled
                    && (include_linters || (s.kind == ProviderKind::Lsp && !s.is_linter))
                    && s.serves(path)
            })
            .collect();
        let alternatives = |primary: &str| -> Vec<&ServerSpec> {
            candidates
                .iter()
                .copied()
                .filter(|a| a.alternative_to.as_deref() == Some(primary))
                .collect()
        };
        let mut out: Vec<&ServerSpec> = Vec::new();
        for &s in &candidates {
            let chosen = match &s.alternative_to {
                None => {
                    if is_installed(s) {
                        Some(s)
                    } else {
                        Some(
                            alternatives(&s.id)
                                .into_iter()
                                .find(|a| is_installed(a))
                                .unwrap_or(s),
                        )
                    }
                }
                Some(p) => {
                    if candidates.iter().any(|c| &c.id == p) {
                        None // resolved at the primary's place
                    } else if self.server(p).is_some_and(|pr| pr.disabled) {
                        alternatives(p).into_iter().find(|a| is_installed(a))
                    } else {
                        let alts = alternatives(p);
                        alts.iter()
                            .copied()
                            .find(|a| is_installed(a))
                            .or_else(|| alts.first().copied())
                    }
                }
            };
            if let Some(c) = chosen
                && !out.iter().any(|o| std::ptr::eq(*o, c))
            {
                out.push(c);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::{ids, layers};

    #[test]
    fn alternatives() {
        let c = Config::default();
        let py = Path::new("/ws/pkg/mod.py");
        let all = |_: &ServerSpec| true;
        assert_eq!(ids(&c.servers_for(py, &all)), ["pyright"]);
        let no_pyright = |s: &ServerSpec| s.id != "pyright";
        assert_eq!(ids(&c.servers_for(py, &no_pyright)), ["basedpyright"]);
        let only_jedi = |s: &ServerSpec| s.id == "jedi-language-server";
        assert_eq!(
            ids(&c.servers_for(py, &only_jedi)),
            ["jedi-language-server"]
        );
        let none = |_: &ServerSpec| false;
        assert_eq!(ids(&c.servers_for(py, &none)), ["pyright"]);
        assert_eq!(
            ids(&c.providers_for(py, true, &no_pyright)),
            ["basedpyright", "ruff"]
        );
        assert_eq!(
            ids(&c.servers_for(Path::new("lib.rs"), &all)),
            ["rust-analyzer"]
        );
        assert!(c.servers_for(Path::new("notes.txt"), &all).is_empty());

        let disabled = Config::from_layers(&layers(&[(
            "/p.json",
            r#"{"servers": {"pyright": {"disabled": true}}}"#,
        )]))
        .unwrap();
        assert_eq!(ids(&disabled.servers_for(py, &all)), ["basedpyright"]);
        let only_pylsp = |s: &ServerSpec| s.id == "pylsp";
        assert_eq!(ids(&disabled.servers_for(py, &only_pylsp)), ["pylsp"]);
        assert!(disabled.servers_for(py, &none).is_empty());

        // primary not configured at all: first installed alternative, else first
        let named = Config::from_layers(&layers(&[(
            "/p.json",
            r#"{"autoDetect": false, "servers": {"pylsp": {}, "jedi-language-server": {}}}"#,
        )]))
        .unwrap();
        let only_jls = |s: &ServerSpec| s.id == "jedi-language-server";
        assert_eq!(
            ids(&named.servers_for(py, &only_jls)),
            ["jedi-language-server"]
        );
        assert_eq!(ids(&named.servers_for(py, &none)), ["pylsp"]);
        assert!(named.warnings.is_empty(), "{:?}", named.warnings);
    }
}
