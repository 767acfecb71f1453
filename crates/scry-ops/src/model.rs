//! The answers operations return: plain data, no formatting.
//!
//! Invariants: every line and column here is 1-based, columns count Unicode
//! scalar values (characters), and every path is absolute. Relativising paths
//! and shaping text is the renderer's job (`scry-render`).

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

/// What was asked. One enum for CLI, MCP and library callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Definition,
    Declaration,
    TypeDefinition,
    Implementation,
    References,
    Hover,
    Symbols,
    WorkspaceSymbols,
    IncomingCalls,
    OutgoingCalls,
    Status,
    Capabilities,
    Reload,
    Request,
}

impl Action {
    pub const ALL: [Action; 14] = [
        Action::Definition,
        Action::Declaration,
        Action::TypeDefinition,
        Action::Implementation,
        Action::References,
        Action::Hover,
        Action::Symbols,
        Action::WorkspaceSymbols,
        Action::IncomingCalls,
        Action::OutgoingCalls,
        Action::Status,
        Action::Capabilities,
        Action::Reload,
        Action::Request,
    ];

    /// The canonical snake_case name (`type_definition`).
    pub fn name(self) -> &'static str {
        match self {
            Action::Definition => "definition",
            Action::Declaration => "declaration",
            Action::TypeDefinition => "type_definition",
            Action::Implementation => "implementation",
            Action::References => "references",
            Action::Hover => "hover",
            Action::Symbols => "symbols",
            Action::WorkspaceSymbols => "workspace_symbols",
            Action::IncomingCalls => "incoming_calls",
            Action::OutgoingCalls => "outgoing_calls",
            Action::Status => "status",
            Action::Capabilities => "capabilities",
            Action::Reload => "reload",
            Action::Request => "request",
        }
    }

    /// What the answer is called in prose ("references", "type definition").
    pub fn noun(self) -> &'static str {
        match self {
            Action::Definition => "definition",
            Action::Declaration => "declaration",
            Action::TypeDefinition => "type definition",
            Action::Implementation => "implementations",
            Action::References => "references",
            Action::Hover => "hover information",
            Action::Symbols => "symbols",
            Action::WorkspaceSymbols => "workspace symbols",
            Action::IncomingCalls => "incoming calls",
            Action::OutgoingCalls => "outgoing calls",
            Action::Status => "status",
            Action::Capabilities => "capabilities",
            Action::Reload => "reload",
            Action::Request => "result",
        }
    }

    /// Parse a name or alias: `def`, `refs`, `impl`, `type-definition`,
    /// `type_definition`, `incoming-calls`, ... Case-insensitive.
    pub fn parse(s: &str) -> Option<Action> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        let a = match norm.as_str() {
            "definition" | "def" | "goto_definition" => Action::Definition,
            "declaration" | "decl" => Action::Declaration,
            "type_definition" | "typedef" | "type_def" => Action::TypeDefinition,
            "implementation" | "impl" | "implementations" => Action::Implementation,
            "references" | "refs" | "ref" | "reference" => Action::References,
            "hover" => Action::Hover,
            "symbols" | "document_symbols" | "outline" => Action::Symbols,
            "workspace_symbols" | "wsymbols" => Action::WorkspaceSymbols,
            "incoming_calls" | "callers" => Action::IncomingCalls,
            "outgoing_calls" | "callees" => Action::OutgoingCalls,
            "status" => Action::Status,
            "capabilities" | "caps" => Action::Capabilities,
            "reload" => Action::Reload,
            "request" | "raw" => Action::Request,
            _ => return None,
        };
        Some(a)
    }

    /// Whether the action needs a position in a file (resolved from a symbol).
    pub fn needs_position(self) -> bool {
        matches!(
            self,
            Action::Definition
                | Action::Declaration
                | Action::TypeDefinition
                | Action::Implementation
                | Action::References
                | Action::Hover
                | Action::IncomingCalls
                | Action::OutgoingCalls
        )
    }
}

/// A range in a file. `line`/`col` is the start, `end_line`/`end_col` the
/// exclusive end; all 1-based, columns in characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Loc {
    pub path: PathBuf,
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
    pub end_col: u32,
    /// The full source line at `line` (without its terminator) when the file
    /// could be read; the renderer trims it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// Where scry asked the server, and how it found that place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AskedAt {
    pub loc: Loc,
    /// How the position was found, in a few words:
    /// "declaration of struct `Distance`", "occurrence 2 of 5 of `total`",
    /// "the given line and column", "workspace symbol `Item::restock`".
    pub via: String,
}

/// Another declaration with the same name in the same file, so the next call
/// can pick it with `line`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Alternative {
    pub name: String,
    pub kind: String,
    pub line: u32,
    pub col: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

/// A node of a document outline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SymbolNode {
    pub name: String,
    /// Lower-case LSP symbol kind name: "function", "struct", "method", ...
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Position of the symbol's name (selection range start).
    pub line: u32,
    pub col: u32,
    /// Last line of the whole symbol (its full range).
    pub end_line: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<SymbolNode>,
}

/// A workspace-symbol hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SymbolItem {
    pub name: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    pub loc: Loc,
}

/// One item of a call hierarchy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallItem {
    pub name: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The item's name (selection range).
    pub loc: Loc,
}

/// A caller (incoming) or callee (outgoing) with the call sites.
/// For incoming calls the sites are in the caller's file; for outgoing calls
/// they are in the file of the item asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Call {
    pub item: CallItem,
    pub sites: Vec<Loc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallDirection {
    Incoming,
    Outgoing,
}

/// One running server process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunningServer {
    pub root: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// "starting", "ready", "indexing: Indexing 45%", "exited: <reason>".
    pub state: String,
    /// Negotiated position encoding ("utf-16", ...), once initialized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    pub open_documents: usize,
}

/// A configured provider as `status` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerStatus {
    pub id: String,
    /// The command (argv[0]) as configured.
    pub command: String,
    /// Where the command was found, `None` when it is not installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub installed: Option<PathBuf>,
    pub file_types: Vec<String>,
    pub disabled: bool,
    /// Why this server is not used although configured (e.g. "alternative to
    /// pyright, which is installed").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub running: Vec<RunningServer>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusReport {
    pub workspace_root: PathBuf,
    pub servers: Vec<ServerStatus>,
    /// Configuration problems and warnings (missing servers, bad config).
    pub warnings: Vec<String>,
}

/// The payload of an answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Body {
    Locations {
        locations: Vec<Loc>,
    },
    Hover {
        /// The server's hover text as sent (markdown or plain text); the
        /// renderer normalises it. Empty when none.
        text: String,
    },
    Outline {
        path: PathBuf,
        symbols: Vec<SymbolNode>,
    },
    WorkspaceSymbols {
        query: String,
        symbols: Vec<SymbolItem>,
    },
    Calls {
        direction: CallDirection,
        item: Option<CallItem>,
        calls: Vec<Call>,
    },
    Status(StatusReport),
    Capabilities {
        server: String,
        root: PathBuf,
        encoding: String,
        capabilities: Value,
    },
    Raw {
        method: String,
        result: Value,
    },
    Reloaded {
        stopped: usize,
    },
}

impl Body {
    /// True when the body carries no result items (the renderer then says
    /// what was asked and why nothing came back).
    pub fn is_empty(&self) -> bool {
        match self {
            Body::Locations { locations } => locations.is_empty(),
            Body::Hover { text } => text.trim().is_empty(),
            Body::Outline { symbols, .. } => symbols.is_empty(),
            Body::WorkspaceSymbols { symbols, .. } => symbols.is_empty(),
            Body::Calls { calls, .. } => calls.is_empty(),
            Body::Status(_)
            | Body::Capabilities { .. }
            | Body::Raw { .. }
            | Body::Reloaded { .. } => false,
        }
    }
}

/// The question as the caller put it (echoed in answers and empty results).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Question {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

/// Everything an operation found out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    pub action: Action,
    pub question: Question,
    /// The server id that answered (e.g. "rust-analyzer").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asked_at: Option<AskedAt>,
    /// Other declarations of the same name in the file.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<Alternative>,
    pub body: Body,
    /// Why the result is empty, when known ("rust-analyzer is still indexing
    /// (Indexing 45%)", "gopls does not support textDocument/declaration").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_reason: Option<String>,
    /// Set when the server was still indexing when the answer was taken: the
    /// result may be incomplete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
    /// Extra one-line notes (e.g. "pylsp is not installed").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Answer {
    pub fn new(action: Action, question: Question, body: Body) -> Answer {
        Answer {
            action,
            question,
            server: None,
            asked_at: None,
            others: Vec::new(),
            body,
            empty_reason: None,
            partial: None,
            notes: Vec::new(),
        }
    }
}
