//! The server catalogue: what a provider (a language server or a
//! command-line linter) is, and the built-in ones.
//!
//! Per-language knowledge is data: the built-ins live in `catalog.json`
//! (compiled in) and use exactly the same shape as the `servers` entries of
//! a configuration file, so anything a built-in can say a user can say too.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// How a provider is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// A language server speaking LSP over stdio (the default).
    #[default]
    Lsp,
    /// A command-line tool run once per request, its output parsed by
    /// [`ServerSpec::parser`].
    Cli,
}

/// One provider: a language server or a command-line linter.
///
/// JSON field names are camelCase (`fileTypes`, `rootMarkers`, ...); every
/// field except `id` and `command` has a default.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerSpec {
    /// Unique name, used in configuration files to override or disable it.
    pub id: String,
    /// `"lsp"` (default) or `"cli"`.
    pub kind: ProviderKind,
    /// The program (argv\[0\]); never run through a shell. A bare name is
    /// looked up with [`crate::command::resolve_command`].
    pub command: String,
    /// Arguments. For `cli` providers the placeholder `{files}` stands for
    /// the files to check (one argument each).
    pub args: Vec<String>,
    /// Extensions without the dot (`"rs"`, `"tsx"`, also compound ones like
    /// `"d.ts"`) or exact basenames (`"Makefile"`, `"CMakeLists.txt"`).
    pub file_types: Vec<String>,
    /// File or directory names that mark a project root
    /// (`"Cargo.toml"`, `"package.json"`, `".git"`); `"*.ext"` matches any
    /// entry with that extension.
    pub root_markers: Vec<String>,
    /// Default `languageId` for `textDocument/didOpen`.
    pub language_id: Option<String>,
    /// Per-extension `languageId` overrides, e.g. `{"tsx": "typescriptreact"}`.
    pub language_ids: BTreeMap<String, String>,
    /// Returned for `workspace/configuration` requests (`Null` if none).
    pub settings: serde_json::Value,
    /// Sent as `initializationOptions` in `initialize`.
    pub initialization_options: Option<serde_json::Value>,
    /// Extra environment variables for the child process.
    pub env: BTreeMap<String, String>,
    /// The environment variables the server reads (of those a client
    /// sends: `env.json`'s lists): two clients whose values of these are
    /// the same share one process ([`crate::pool`]). Absent: every variable
    /// servers read (`env.json`'s `servers`), so a server nobody described
    /// is shared only by clients alike in all of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads_env: Option<Vec<String>>,
    /// Programs the server itself runs from its `PATH` (pyright's
    /// `python`, rust-analyzer's `cargo`, gopls's `go`): two clients whose
    /// `PATH`s find one of them at another place get a server each
    /// ([`crate::pool`]), as two whose `readsEnv` variables differ do.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub path_programs: Vec<String>,
    /// Kept in the list (so status can show it) but never started.
    pub disabled: bool,
    /// Diagnostics only, never used for navigation.
    pub is_linter: bool,
    /// In this server's languages `'` opens a character literal or a
    /// lifetime (Rust), not a string: when scry looks for a name's
    /// occurrences outside string literals, `'` is then not a string quote.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub single_quote_is_char: bool,
    /// Only used when the server with this id is not installed or disabled.
    pub alternative_to: Option<String>,
    /// `cli` only: how to read the output: `eslint-json`, `ruff-json`,
    /// `golangci-lint-json`, `sarif`, `shellcheck-json`, `generic`.
    pub parser: Option<String>,
    /// `cli` only: `"files"` (run on the given files) or `"workspace"`
    /// (run once on the root).
    pub mode: Option<String>,
    /// Human language names for documentation and tool descriptions.
    pub languages: Vec<String>,
    /// How to install it, by method (`npm`, `pipx`, `pip`, `rustup`, `apt`,
    /// `go`, `brew`): the exact command, in order of preference. Shown by
    /// `scry doctor`; never run by scry.
    #[serde(skip_serializing_if = "InstallCommands::is_empty")]
    pub install: InstallCommands,
    /// Arguments that make the command print its version (`scry doctor`);
    /// absent: `["--version"]`; empty: the command has no such flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_args: Option<Vec<String>>,
    /// Known set-up problems `scry doctor` looks for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<Hint>,
    /// Memory cap of the server's process tree in MiB (absent:
    /// `limits.serverMemoryMiB`); over it the server is restarted between
    /// requests ([`crate::memory`]).
    #[serde(rename = "memoryMiB", skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
    /// The SCIP indexer for this server's languages (`scry index`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexer: Option<Indexer>,
    /// A regular expression over the server's log messages that says its
    /// start-up work is done, for a server that says so no other way
    /// (pyright: `Found 4 source files`). Until a line matches (or
    /// [`STARTUP_LOG_WITHIN`] has passed) the server counts as indexing, so
    /// a question waits rather than get an answer from the open files alone.
    /// Checked when the configuration is read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_log: Option<String>,
    /// How a file's root is chosen beyond the nearest root marker: the
    /// project's own workspace files ([`crate::roots`]).
    #[serde(skip_serializing_if = "ProjectRoot::is_default")]
    pub project_root: ProjectRoot,
}

/// How a server's root is chosen for a file ([`crate::roots::choose`]):
/// the project's workspace, as the project's own files say, not the
/// nearest package.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProjectRoot {
    /// `workspace` (the default): the outermost directory whose workspace
    /// file claims the file, else (with [`ProjectRoot::several_packages`])
    /// the workspace root when it holds several packages, else the nearest
    /// root marker. `package`: the nearest root marker only. `root`: the
    /// scry workspace root for every file.
    pub strategy: RootStrategy,
    /// Where the practice comes from (the server's or the field's
    /// documentation); read by people, never by code.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub from: String,
    /// Workspace files, any of which may claim the files below it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workspaces: Vec<WorkspaceFile>,
    /// With no workspace file claiming a file: the scry workspace root
    /// when it holds two or more packages, a package being a directory
    /// holding one of these files (none: this rule is off).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub several_packages: Vec<String>,
    /// The members of the workspace that chose a root (or the packages of
    /// [`ProjectRoot::several_packages`]) are put on this setting, for a
    /// server that would otherwise take them for installed libraries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member_paths: Option<MemberPaths>,
    /// The server searches a workspace-wide question (references, rename,
    /// implementations, incoming calls) only in the projects it has loaded,
    /// and loads a project — a directory holding one of these files — when
    /// one of its files is open (tsserver). Before such a question scry
    /// opens, in each other project under the server's folders that writes
    /// the name, one file that does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub projects: Vec<String>,
}

impl ProjectRoot {
    pub fn is_default(&self) -> bool {
        *self == ProjectRoot::default()
    }
}

/// See [`ProjectRoot::strategy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootStrategy {
    #[default]
    Workspace,
    Package,
    Root,
}

/// A workspace file: in a directory above a file (or the file's own
/// package), it makes that directory the root of the files it claims.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkspaceFile {
    /// Its path relative to the directory (`Cargo.toml`,
    /// `build/compile_commands.json`). Read as TOML (`.toml`), YAML
    /// (`.yaml`/`.yml`, the subset of a list of strings under a key),
    /// `go.work`'s own format, or JSON with comments (the rest).
    pub file: String,
    /// A dotted key that must be there (`workspace`, `tool.uv.workspace`);
    /// none: the file's presence is enough.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Where its members are listed: dotted keys, `[]` after a name for
    /// each element of a list (`references[].path`); each value a string or
    /// a list of strings, globs relative to the directory; `!` before one
    /// excludes. None given: it claims every file below it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// Members when none of `members` is written (lerna: `packages/*`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub default_members: Vec<String>,
    /// Keys listing directories excluded (globs, as `members`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// A compilation database: it claims the files it lists, and the
    /// others of a package (the nearest root marker) where it lists one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lists: bool,
}

/// See [`ProjectRoot::member_paths`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MemberPaths {
    /// A dotted key into the server's settings, a list of paths
    /// (`python.analysis.extraPaths`); scry appends to what is configured.
    pub setting: String,
    /// Per member, the first of these directories that exists (relative to
    /// the member: `src`, `.`).
    pub dirs: Vec<String>,
}

/// How long a server with a [`ServerSpec::startup_log`] is waited for at
/// most; after that it counts as ready, line or no line.
pub const STARTUP_LOG_WITHIN: std::time::Duration = std::time::Duration::from_secs(30);

impl ServerSpec {
    /// The start-up signal to wait for (`None` also for a pattern that does
    /// not compile: configuration loading refuses those first).
    pub fn startup_signal(&self) -> Option<scry_lsp_session::state::StartupSignal> {
        let pattern = regex::Regex::new(self.startup_log.as_deref()?).ok()?;
        Some(scry_lsp_session::state::StartupSignal {
            pattern,
            within: STARTUP_LOG_WITHIN,
        })
    }
}

/// A SCIP indexer: run as argv in the server's root, it writes a SCIP index
/// to the path put in place of `{output}` in `args`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Indexer {
    pub command: String,
    pub args: Vec<String>,
    /// How to install it (as [`ServerSpec::install`]); never run by scry.
    #[serde(skip_serializing_if = "InstallCommands::is_empty")]
    pub install: InstallCommands,
    /// Stub extensions and the source extension each stubs (Python:
    /// `pyi` → `py`): where the indexer gives a module and its stub one
    /// symbol, an index answer asked in a source file leaves out a stub that
    /// has its source file beside it, as the live server does.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub stubs: BTreeMap<String, String>,
    /// Run in a root that holds no project file of its server
    /// (`projectRoot.projects`: a package manager's workspace root), it is
    /// given the projects below it as arguments (`./packages/app`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub project_args: bool,
}

/// A set-up problem: reported when the workspace has files this provider
/// serves and none of `unless` exists in the workspace root or in the
/// provider's root (the nearest root marker) for those files.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Hint {
    /// Paths relative to the root; any one of them existing means no problem.
    pub unless: Vec<String>,
    /// What is wrong and what it limits.
    pub problem: String,
    /// How to fix it.
    pub fix: String,
}

/// Install commands by method, in the order written (a JSON object:
/// `{"npm": "npm install -g pyright", "pip": "pip install pyright"}`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InstallCommands(pub Vec<(String, String)>);

impl InstallCommands {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for InstallCommands {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for InstallCommands {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // serde_json is built with `preserve_order`: the map keeps the order.
        let m = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        m.into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(c) => Ok((k, c)),
                other => Err(serde::de::Error::custom(format!(
                    "install.{k} must be a command string, not {other}"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(InstallCommands)
    }
}

impl ServerSpec {
    /// The `languageId` to announce for `path`: `language_ids` by basename
    /// or extension, else `language_id`, else the lower-cased extension
    /// (`"plaintext"` when there is none).
    pub fn language_id_for(&self, path: &Path) -> String {
        let name = file_name(path);
        if let Some(id) = name.and_then(|n| self.language_ids.get(n.as_ref())) {
            return id.clone();
        }
        let ext = path.extension().and_then(|e| e.to_str());
        if let Some(ext) = ext {
            let lower = ext.to_ascii_lowercase();
            if let Some(id) = self
                .language_ids
                .get(ext)
                .or_else(|| self.language_ids.get(&lower))
            {
                return id.clone();
            }
        }
        if let Some(id) = &self.language_id {
            return id.clone();
        }
        match ext {
            Some(ext) => ext.to_ascii_lowercase(),
            None => "plaintext".to_string(),
        }
    }

    /// Whether `path` is one of this provider's file types: its extension
    /// (case-insensitive, compound extensions allowed) or its exact
    /// basename matches a `file_types` entry.
    pub fn serves(&self, path: &Path) -> bool {
        let Some(name) = file_name(path) else {
            return false;
        };
        let lower = name.to_ascii_lowercase();
        self.file_types.iter().any(|ft| {
            let ft = ft.strip_prefix('.').unwrap_or(ft);
            if ft.is_empty() {
                return false;
            }
            if name == ft {
                return true;
            }
            let ft = ft.to_ascii_lowercase();
            lower.len() > ft.len() + 1
                && lower.ends_with(&ft)
                && lower.as_bytes()[lower.len() - ft.len() - 1] == b'.'
        })
    }
}

/// A file's name as text; one that is not UTF-8 with its odd bytes
/// replaced, so that its type still chooses its providers (which say they
/// cannot open it: `Workspace::route`, diagnostics' plan).
fn file_name(path: &Path) -> Option<std::borrow::Cow<'_, str>> {
    path.file_name().map(|n| n.to_string_lossy())
}

/// The compiled-in catalogue text.
pub const CATALOG_JSON: &str = include_str!("catalog.json");

/// The built-in providers, in priority order (earlier wins).
pub fn builtins() -> Vec<ServerSpec> {
    static BUILTINS: OnceLock<Vec<ServerSpec>> = OnceLock::new();
    BUILTINS
        .get_or_init(|| {
            serde_json::from_str(CATALOG_JSON)
                .unwrap_or_else(|e| panic!("built-in catalog.json is invalid: {e}"))
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn get(id: &str) -> ServerSpec {
        builtins()
            .into_iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| panic!("no built-in {id}"))
    }

    #[test]
    fn builtins_parse_and_are_complete() {
        let all = builtins();
        assert!(all.len() >= 15);
        let mut ids = HashSet::new();
        for s in &all {
            assert!(ids.insert(s.id.clone()), "duplicate id {}", s.id);
            assert!(!s.command.is_empty(), "{} has no command", s.id);
            assert!(!s.file_types.is_empty(), "{} has no fileTypes", s.id);
            assert!(!s.languages.is_empty(), "{} has no languages", s.id);
            assert!(!s.disabled, "{} disabled", s.id);
            assert!(!s.install.is_empty(), "{} has no install command", s.id);
            for (method, cmd) in &s.install.0 {
                assert!(
                    ["npm", "pipx", "pip", "rustup", "apt", "go", "brew"]
                        .contains(&method.as_str()),
                    "{}: install method {method}",
                    s.id
                );
                assert!(!cmd.trim().is_empty(), "{}: empty install.{method}", s.id);
            }
            assert_eq!(
                s.single_quote_is_char,
                s.language_id.as_deref() == Some("rust"),
                "{}: singleQuoteIsChar is for Rust",
                s.id
            );
            for ft in &s.file_types {
                assert!(!ft.starts_with('.'), "{}: {ft}", s.id);
            }
            match s.kind {
                ProviderKind::Lsp => {
                    assert!(s.parser.is_none() && s.mode.is_none(), "{}", s.id);
                    assert!(s.language_id.is_some(), "{} has no languageId", s.id);
                }
                ProviderKind::Cli => {
                    assert!(s.is_linter, "{} cli but not linter", s.id);
                    assert!(s.parser.is_some(), "{} has no parser", s.id);
                    assert!(
                        matches!(s.mode.as_deref(), Some("files" | "workspace")),
                        "{} mode",
                        s.id
                    );
                }
            }
            if let Some(p) = &s.alternative_to {
                assert!(ids.contains(p), "{} is an alternative to later {p}", s.id);
            }
        }
        let lsp: Vec<_> = all.iter().filter(|s| s.kind == ProviderKind::Lsp).collect();
        for id in [
            "rust-analyzer",
            "pyright",
            "typescript-language-server",
            "gopls",
            "clangd",
            "bash-language-server",
            "yaml-language-server",
            "vscode-json-language-server",
        ] {
            assert!(lsp.iter().any(|s| s.id == id), "{id}");
        }
    }

    #[test]
    fn startup_logs_compile_and_match_what_the_servers_print() {
        for spec in builtins().iter().filter(|s| s.startup_log.is_some()) {
            assert!(spec.startup_signal().is_some(), "{}", spec.id);
        }
        for id in ["pyright", "basedpyright"] {
            let signal = get(id).startup_signal().unwrap();
            // pyright's analyzerService: "Found N source file(s)" or "No
            // source files found." once its files are enumerated.
            for line in [
                "Found 1 source file",
                "Found 412 source files",
                "No source files found.",
            ] {
                assert!(signal.pattern.is_match(line), "{id}: {line}");
            }
            for line in [
                "Loading pyproject.toml file at /p",
                "Assuming Python version 3.11",
            ] {
                assert!(!signal.pattern.is_match(line), "{id}: {line}");
            }
        }
        assert!(get("rust-analyzer").startup_signal().is_none());
    }

    #[test]
    fn exact_commands() {
        assert_eq!(get("pyright").command, "pyright-langserver");
        assert_eq!(get("pyright").args, ["--stdio"]);
        assert_eq!(get("bash-language-server").args, ["start"]);
        assert!(get("clangd").args.is_empty());
        assert!(get("gopls").args.is_empty());
        let alts: Vec<_> = builtins()
            .into_iter()
            .filter(|s| s.alternative_to.as_deref() == Some("pyright"))
            .map(|s| s.id)
            .collect();
        assert_eq!(alts, ["basedpyright", "pylsp", "jedi-language-server"]);
        let bp = get("basedpyright");
        assert_eq!(
            bp.settings["basedpyright"]["analysis"]["diagnosticMode"],
            "openFilesOnly"
        );
        assert_eq!(get("eslint").kind, ProviderKind::Cli);
        assert_eq!(get("golangci-lint").mode.as_deref(), Some("workspace"));
    }

    #[test]
    fn language_ids() {
        let ts = get("typescript-language-server");
        assert_eq!(ts.language_id_for(Path::new("a/b.tsx")), "typescriptreact");
        assert_eq!(ts.language_id_for(Path::new("b.jsx")), "javascriptreact");
        assert_eq!(ts.language_id_for(Path::new("b.mjs")), "javascript");
        assert_eq!(ts.language_id_for(Path::new("b.mts")), "typescript");
        assert_eq!(ts.language_id_for(Path::new("B.TS")), "typescript");
        let c = get("clangd");
        assert_eq!(c.language_id_for(Path::new("x.h")), "c");
        assert_eq!(c.language_id_for(Path::new("x.c")), "c");
        assert_eq!(c.language_id_for(Path::new("x.cpp")), "cpp");
        assert_eq!(c.language_id_for(Path::new("x.hpp")), "cpp");
        assert_eq!(
            get("rust-analyzer").language_id_for(Path::new("src/lib.rs")),
            "rust"
        );
        let bare = ServerSpec::default();
        assert_eq!(bare.language_id_for(Path::new("x.Foo")), "foo");
        assert_eq!(bare.language_id_for(Path::new("README")), "plaintext");
    }

    #[test]
    fn serves_by_extension_and_basename() {
        let ts = get("typescript-language-server");
        assert!(ts.serves(Path::new("/p/src/App.tsx")));
        assert!(ts.serves(Path::new("/p/src/App.TSX")));
        assert!(!ts.serves(Path::new("/p/src/App.rs")));
        let spec = ServerSpec {
            file_types: vec!["Makefile".into(), "CMakeLists.txt".into(), "d.ts".into()],
            ..Default::default()
        };
        assert!(spec.serves(Path::new("/p/Makefile")));
        assert!(spec.serves(Path::new("sub/CMakeLists.txt")));
        assert!(!spec.serves(Path::new("sub/other.txt")));
        assert!(!spec.serves(Path::new("GNUmakefile")));
        assert!(spec.serves(Path::new("types/index.d.ts")));
        assert!(!spec.serves(Path::new("types/indexd.ts")));
        assert!(!spec.serves(Path::new("/")));
    }
}
