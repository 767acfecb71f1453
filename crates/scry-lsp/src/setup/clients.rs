//! The agents `scry setup` can wire scry into, as data: one [`Client`] a
//! row, naming where the client keeps its MCP servers at each scope, the
//! file's format, the key path of its table of servers and the shape of
//! scry's entry there (a JSON template whose `"$SCRY"` strings become the
//! installed binary's absolute path). Where the client has hooks, a
//! [`HookSpec`] says where they go and what the events and the edit tools
//! are called. Nothing else in `setup` knows a client by name.
//!
//! Invariants: every client has at least one scope, and its default scope
//! is one it has; names and aliases are unique and lower-case. Paths
//! below the home directory come from `scry_base::dirs::home` (`$HOME`,
//! on Windows `%USERPROFILE%`), so tests point them at a temporary one.

use std::path::{Path, PathBuf};

/// Which copy of a client's configuration: the user's (every project) or
/// the project's (only there, usually committed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    pub fn word(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// How a configuration file is read and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Strict JSON (the client rejects comments): read strictly, edited in
    /// place keeping the rest of the text as it was.
    Json,
    /// JSON with comments and trailing commas; comments are kept.
    Jsonc,
    /// TOML; comments and layout are kept.
    Toml,
}

/// The directory a [`Place`] starts from.
#[derive(Debug, Clone, Copy)]
pub enum Base {
    /// The home directory.
    Home,
    /// `$XDG_CONFIG_HOME` when absolute, else `~/.config`, on every OS
    /// (the tools that follow XDG even on macOS: OpenCode, Zed).
    XdgConfig,
    /// The OS's application-data directory: `$XDG_CONFIG_HOME` or
    /// `~/.config` on Linux, `~/Library/Application Support` on macOS,
    /// `%APPDATA%` on Windows (Electron's `appData`: VS Code).
    AppData,
    /// The project's root (`--root`, default: the current directory).
    Project,
}

/// Where a file is: below a base, in `dirs`, named the first of `names`
/// that exists (else the first).
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub base: Base,
    pub dirs: &'static [&'static str],
    pub names: &'static [&'static str],
}

impl Place {
    /// The file's path, or `None` when there is no home directory to put
    /// it under.
    pub fn path(&self, root: &Path) -> Option<PathBuf> {
        let mut dir = match self.base {
            Base::Project => root.to_path_buf(),
            Base::Home => scry_base::dirs::home()?,
            Base::XdgConfig => xdg_config()?,
            Base::AppData => app_data()?,
        };
        dir.extend(self.dirs);
        let first = dir.join(self.names[0]);
        Some(
            self.names
                .iter()
                .map(|n| dir.join(n))
                .find(|p| p.symlink_metadata().is_ok())
                .unwrap_or(first),
        )
    }
}

fn var(k: &str) -> Option<PathBuf> {
    scry_base::dirs::var_os(k)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn xdg_config() -> Option<PathBuf> {
    var("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| Some(scry_base::dirs::home()?.join(".config")))
}

fn app_data() -> Option<PathBuf> {
    if cfg!(windows) {
        var("APPDATA").or_else(|| Some(scry_base::dirs::home()?.join("AppData").join("Roaming")))
    } else if cfg!(target_os = "macos") {
        Some(
            scry_base::dirs::home()?
                .join("Library")
                .join("Application Support"),
        )
    } else {
        xdg_config()
    }
}

/// Where a client keeps hooks, and its names for them.
#[derive(Debug)]
pub struct HookSpec {
    pub user: Place,
    pub project: Place,
    pub format: Format,
    /// The event before a tool runs (`PreToolUse`, `BeforeTool`).
    pub before: &'static str,
    /// The event after a tool ran (`PostToolUse`, `AfterTool`).
    pub after: &'static str,
    /// The matcher (a regular expression) of the client's file-editing
    /// tools, whose input carries `file_path`.
    pub edit_tools: &'static str,
    /// The matcher of the client's text-search tool (whose input carries
    /// `pattern`) and whose hook output may add context for the model:
    /// a search for an identifier is answered with a reminder that `lsp`
    /// lists its references precisely. `None`: no reminder.
    pub search_tools: Option<&'static str>,
    /// The variable the client sets to the project's root in a hook.
    pub project_env: &'static str,
    /// The hook's time limit in the client's unit (seconds or ms).
    pub timeout: u64,
}

/// One agent.
#[derive(Debug)]
pub struct Client {
    /// The name on the command line.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// The name people know it by.
    pub title: &'static str,
    pub user: Option<Place>,
    pub project: Option<Place>,
    pub default_scope: Scope,
    pub format: Format,
    /// The keys from the top of the file to the table of MCP servers.
    pub servers: &'static [&'static str],
    /// scry's entry in that table, as JSON; `"$SCRY"` is the binary.
    pub entry: &'static str,
    /// A note shown with the result (a step the client asks for).
    pub note: Option<&'static str>,
    pub hooks: Option<&'static HookSpec>,
}

/// The placeholder for the binary's absolute path in [`Client::entry`].
pub const SCRY: &str = "$SCRY";

/// Claude Code's hooks, in `settings.json` beside its other settings
/// (timeout in seconds).
const CLAUDE_HOOKS: HookSpec = HookSpec {
    user: Place {
        base: Base::Home,
        dirs: &[".claude"],
        names: &["settings.json"],
    },
    project: Place {
        base: Base::Project,
        dirs: &[".claude"],
        names: &["settings.json"],
    },
    format: Format::Json,
    before: "PreToolUse",
    after: "PostToolUse",
    edit_tools: "Edit|MultiEdit|Write",
    search_tools: Some("Grep"),
    project_env: "CLAUDE_PROJECT_DIR",
    timeout: 60,
};

/// Gemini CLI's hooks, in its `settings.json` (timeout in milliseconds).
const GEMINI_HOOKS: HookSpec = HookSpec {
    user: Place {
        base: Base::Home,
        dirs: &[".gemini"],
        names: &["settings.json"],
    },
    project: Place {
        base: Base::Project,
        dirs: &[".gemini"],
        names: &["settings.json"],
    },
    format: Format::Jsonc,
    before: "BeforeTool",
    after: "AfterTool",
    edit_tools: "write_file|replace",
    // Gemini's hook output adds no context to a search's result that the
    // model is known to read: no reminder.
    search_tools: None,
    project_env: "GEMINI_PROJECT_DIR",
    timeout: 60_000,
};

/// Every client, in the order `scry setup` lists them.
pub const CLIENTS: &[Client] = &[
    Client {
        name: "claude",
        aliases: &["claude-code"],
        title: "Claude Code",
        user: Some(Place {
            base: Base::Home,
            dirs: &[],
            names: &[".claude.json"],
        }),
        project: Some(Place {
            base: Base::Project,
            dirs: &[],
            names: &[".mcp.json"],
        }),
        default_scope: Scope::User,
        format: Format::Json,
        servers: &["mcpServers"],
        entry: r#"{"type":"stdio","command":"$SCRY","args":["mcp"],"env":{}}"#,
        note: None,
        hooks: Some(&CLAUDE_HOOKS),
    },
    Client {
        name: "codex",
        aliases: &["codex-cli"],
        title: "Codex CLI",
        user: Some(Place {
            base: Base::Home,
            dirs: &[".codex"],
            names: &["config.toml"],
        }),
        project: Some(Place {
            base: Base::Project,
            dirs: &[".codex"],
            names: &["config.toml"],
        }),
        default_scope: Scope::User,
        format: Format::Toml,
        servers: &["mcp_servers"],
        entry: r#"{"command":"$SCRY","args":["mcp"]}"#,
        note: Some("Codex reads a project's .codex/config.toml only in a trusted project."),
        hooks: None,
    },
    Client {
        name: "cursor",
        aliases: &[],
        title: "Cursor",
        user: Some(Place {
            base: Base::Home,
            dirs: &[".cursor"],
            names: &["mcp.json"],
        }),
        project: Some(Place {
            base: Base::Project,
            dirs: &[".cursor"],
            names: &["mcp.json"],
        }),
        default_scope: Scope::User,
        format: Format::Jsonc,
        servers: &["mcpServers"],
        entry: r#"{"command":"$SCRY","args":["mcp"],"env":{}}"#,
        note: None,
        hooks: None,
    },
    Client {
        name: "vscode",
        aliases: &["code", "vs-code", "copilot"],
        title: "VS Code (agent mode)",
        user: Some(Place {
            base: Base::AppData,
            dirs: &["Code", "User"],
            names: &["mcp.json"],
        }),
        project: Some(Place {
            base: Base::Project,
            dirs: &[".vscode"],
            names: &["mcp.json"],
        }),
        default_scope: Scope::User,
        format: Format::Jsonc,
        servers: &["servers"],
        entry: r#"{"type":"stdio","command":"$SCRY","args":["mcp"]}"#,
        note: None,
        hooks: None,
    },
    Client {
        name: "gemini",
        aliases: &["gemini-cli"],
        title: "Gemini CLI",
        user: Some(Place {
            base: Base::Home,
            dirs: &[".gemini"],
            names: &["settings.json"],
        }),
        project: Some(Place {
            base: Base::Project,
            dirs: &[".gemini"],
            names: &["settings.json"],
        }),
        default_scope: Scope::User,
        format: Format::Jsonc,
        servers: &["mcpServers"],
        entry: r#"{"command":"$SCRY","args":["mcp"]}"#,
        note: None,
        hooks: Some(&GEMINI_HOOKS),
    },
    Client {
        name: "opencode",
        aliases: &[],
        title: "OpenCode",
        user: Some(Place {
            base: Base::XdgConfig,
            dirs: &["opencode"],
            names: &["opencode.json", "opencode.jsonc"],
        }),
        project: Some(Place {
            base: Base::Project,
            dirs: &[],
            names: &["opencode.json", "opencode.jsonc"],
        }),
        default_scope: Scope::User,
        format: Format::Jsonc,
        servers: &["mcp"],
        entry: r#"{"type":"local","command":["$SCRY","mcp"],"enabled":true}"#,
        note: None,
        hooks: None,
    },
    Client {
        name: "zed",
        aliases: &[],
        title: "Zed",
        user: Some(Place {
            base: Base::XdgConfig,
            dirs: &["zed"],
            names: &["settings.json"],
        }),
        project: None,
        default_scope: Scope::User,
        format: Format::Jsonc,
        servers: &["context_servers"],
        entry: r#"{"command":"$SCRY","args":["mcp"],"env":{}}"#,
        note: None,
        hooks: None,
    },
    Client {
        name: "windsurf",
        aliases: &[],
        title: "Windsurf",
        user: Some(Place {
            base: Base::Home,
            dirs: &[".codeium", "windsurf"],
            names: &["mcp_config.json"],
        }),
        project: None,
        default_scope: Scope::User,
        format: Format::Jsonc,
        servers: &["mcpServers"],
        entry: r#"{"command":"$SCRY","args":["mcp"],"env":{}}"#,
        note: None,
        hooks: None,
    },
];

impl Client {
    /// The client called `name` (or one of its aliases), case-insensitive.
    pub fn find(name: &str) -> Option<&'static Client> {
        let name = name.to_ascii_lowercase();
        CLIENTS
            .iter()
            .find(|c| c.name == name || c.aliases.contains(&name.as_str()))
    }

    /// Where its servers are at `scope`, if it has that scope.
    pub fn place(&self, scope: Scope) -> Option<Place> {
        match scope {
            Scope::User => self.user,
            Scope::Project => self.project,
        }
    }

    /// The scopes it has.
    pub fn scopes(&self) -> impl Iterator<Item = Scope> + '_ {
        [Scope::User, Scope::Project]
            .into_iter()
            .filter(|s| self.place(*s).is_some())
    }

    /// scry's entry, with `scry` as the binary.
    pub fn entry_for(&self, scry: &str) -> serde_json::Value {
        let mut v: serde_json::Value =
            serde_json::from_str(self.entry).expect("a client's entry template is JSON");
        substitute(&mut v, scry);
        v
    }
}

impl HookSpec {
    pub fn place(&self, scope: Scope) -> Place {
        match scope {
            Scope::User => self.user,
            Scope::Project => self.project,
        }
    }
}

fn substitute(v: &mut serde_json::Value, scry: &str) {
    match v {
        serde_json::Value::String(s) if s == SCRY => *s = scry.to_string(),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| substitute(x, scry)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| substitute(x, scry)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        let mut names = std::collections::HashSet::new();
        for c in CLIENTS {
            assert!(c.place(c.default_scope).is_some(), "{}", c.name);
            for n in std::iter::once(&c.name).chain(c.aliases) {
                assert_eq!(*n, n.to_ascii_lowercase());
                assert!(names.insert(*n), "{n} twice");
            }
            let e = c.entry_for("/x/scry");
            assert!(e.to_string().contains("/x/scry"), "{}", c.name);
            assert!(!e.to_string().contains(SCRY), "{}", c.name);
        }
    }
}
