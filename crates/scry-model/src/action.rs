//! The facts about each action, in one table ([`ACTIONS`]): its name and
//! aliases, what its answer is called, the LSP requests it sends and the
//! server capability they need, which parser reads the reply, which
//! arguments it takes, whether it writes, which sources below the live
//! server answer it ([`Lower`]) and how its answer tells same-name
//! occurrences apart ([`Occurrences`]). The engine's dispatch and answer
//! order, the capability check, `Action::parse`, the MCP tools' action and
//! argument lists and [`crate::Query::validate`] all read this table;
//! nothing else lists actions.
//!
//! Invariants: the variants are listed once (`actions!` makes the enum and
//! [`Action::ALL`]); every [`Action`] has exactly one row, at its
//! declaration index, checked when the crate compiles (a new action
//! without its row does not build); rows are in the order the MCP tools
//! list actions (the `lsp` tool's enum, then the actions only `lsp_edit`
//! offers; the CLI's help groups them its own way,
//! `crates/scry-lsp/src/first_words.rs`); every argument an action reads from a
//! [`crate::Query`] is in its `takes`.

/// Declares [`Action`] and [`Action::ALL`] from one list of variants, so
/// the list is written once; the table's rows are checked against it when
/// the crate compiles ([`ACTIONS`]).
macro_rules! actions {
    ($($(#[$doc:meta])* $variant:ident,)*) => {
        /// What was asked. One enum for CLI, MCP and library callers. The
        /// facts about each action (names, LSP method, arguments, …) are in
        /// [`ACTIONS`], whose rows follow this order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Action {
            $($(#[$doc])* $variant,)*
        }

        impl Action {
            /// Every action, in declaration order.
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];
        }
    };
}

actions! {
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
    Diagnostics,
    Rename,
    CodeActions,
    /// A ranked repository map (syntactic; no server needed).
    Map,
    Status,
    Capabilities,
    Undo,
    Request,
    Reload,
}

impl Action {
    /// Its row of the action table.
    pub fn facts(self) -> &'static Facts {
        facts(self)
    }

    /// The canonical snake_case name (`type_definition`).
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// What the answer is called in prose ("references", "type definition").
    pub fn noun(self) -> &'static str {
        self.facts().noun
    }

    /// Whether its answer is gathered from all the server sees
    /// ([`Facts::searches_workspace`]).
    pub fn searches_workspace(self) -> bool {
        self.facts().searches_workspace
    }

    /// Parse a name or alias: `def`, `refs`, `impl`, `type-definition`,
    /// `type_definition`, `incoming-calls`, ... Case-insensitive.
    pub fn parse(s: &str) -> Option<Action> {
        parse(s)
    }

    /// Whether the action needs a position in a file (resolved from a symbol).
    pub fn needs_position(self) -> bool {
        self.facts().positional
    }
}

/// The name of the argument that names the action (MCP tools).
pub const ACTION: &str = "action";

/// One argument of a [`crate::Query`], as front ends name it. The
/// declaration order is the order front ends list arguments in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arg {
    Path,
    Symbol,
    Line,
    Column,
    Query,
    Severity,
    Changes,
    NewName,
    ActionIndex,
    ActionTitle,
    Apply,
    Method,
    Params,
    /// Diagnostics and map targets (front ends fill them from paths).
    Targets,
    /// Map: more symbols to focus on.
    FocusSymbols,
    /// Map: the character budget.
    Budget,
    /// Edits: the caller's idempotency key.
    IdempotencyKey,
    Timeout,
}

impl Arg {
    pub const ALL: &'static [Arg] = &[
        Arg::Path,
        Arg::Symbol,
        Arg::Line,
        Arg::Column,
        Arg::Query,
        Arg::Severity,
        Arg::Changes,
        Arg::NewName,
        Arg::ActionIndex,
        Arg::ActionTitle,
        Arg::Apply,
        Arg::Method,
        Arg::Params,
        Arg::Targets,
        Arg::FocusSymbols,
        Arg::Budget,
        Arg::IdempotencyKey,
        Arg::Timeout,
    ];

    /// The argument's name in messages and in the MCP schema.
    pub fn name(self) -> &'static str {
        match self {
            Arg::Path => "path",
            Arg::Symbol => "symbol",
            Arg::Line => "line",
            Arg::Column => "column",
            Arg::Query => "query",
            Arg::Severity => "severity",
            Arg::Changes => "changes",
            Arg::NewName => "new_name",
            Arg::ActionIndex => "action_index",
            Arg::ActionTitle => "action_title",
            Arg::Apply => "apply",
            Arg::Method => "method",
            Arg::Params => "params",
            Arg::Targets => "targets",
            Arg::FocusSymbols => "focus_symbols",
            Arg::Budget => "budget",
            Arg::IdempotencyKey => "idempotency_key",
            Arg::Timeout => "timeout_ms",
        }
    }

    /// Whether a caller names it directly in an MCP tool call (targets come
    /// from `path`, the idempotency key from the request id; focus symbols
    /// and the budget are the CLI's).
    pub fn in_mcp(self) -> bool {
        !matches!(
            self,
            Arg::Targets | Arg::FocusSymbols | Arg::Budget | Arg::IdempotencyKey
        )
    }

    /// Whether giving it to an action that does not take it is refused.
    /// The others (path, symbol, line, …) are shared by many actions, and
    /// one that does not use them ignores them.
    pub fn refused_elsewhere(self) -> bool {
        matches!(
            self,
            Arg::Severity | Arg::Changes | Arg::NewName | Arg::ActionIndex | Arg::ActionTitle
        )
    }
}

/// Which parser reads an action's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyShape {
    /// Location-shaped: `Location`, `Location[]`, `LocationLink[]` or null,
    /// read as a definition response (`convert::locations`). References
    /// answer `Location[]`, one of its shapes.
    Locations,
    /// `Hover` (`convert::hover_text`).
    Hover,
    /// `CallHierarchyItem[]`, then the incoming/outgoing calls of the first
    /// (`convert::calls`).
    Calls,
    /// `DocumentSymbol[]` or `SymbolInformation[]` (`convert::document_symbols`).
    DocumentSymbols,
    /// `SymbolInformation[]` or `WorkspaceSymbol[]` (`convert::workspace_symbols`).
    WorkspaceSymbols,
    /// Not one request's reply: answered by scry itself, by several
    /// requests (edits, diagnostics) or passed through raw (`request`).
    Other,
}

/// Whether an action changes state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// Reads only.
    Never,
    /// Edits files, and can instead only preview the edit (`apply` off):
    /// read-only front ends offer the preview.
    Previewable,
    /// Changes state (files, servers, the edit journal): offered only where
    /// writing is allowed.
    Always,
}

/// The facts about one action.
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    pub action: Action,
    /// The canonical snake_case name (`type_definition`).
    pub name: &'static str,
    /// Other names `Action::parse` accepts (after lower-casing and `-` → `_`).
    pub aliases: &'static [&'static str],
    /// What the answer is called in prose ("references", "type definition").
    pub noun: &'static str,
    /// The LSP request that asks the action's question.
    pub method: Option<&'static str>,
    /// Further requests it sends, needing the same capability.
    pub follow_up: &'static [&'static str],
    /// The `ServerCapabilities` key its requests need (they may also be
    /// registered dynamically).
    pub capability: Option<&'static str>,
    pub reply: ReplyShape,
    /// Whether it asks at a position in a file (resolved from a symbol).
    pub positional: bool,
    /// Every argument it reads.
    pub takes: &'static [Arg],
    pub writes: Writes,
    /// Whether its answer is gathered from the whole of what the server
    /// sees (references, implementations, callers, a rename's edits), so
    /// what the server does not see of the workspace is missing from it.
    pub searches_workspace: bool,
    /// Which sources below the live server may answer it.
    pub lower: Lower,
    /// How same-name occurrences on the asked line are told apart.
    pub occurrences: Occurrences,
}

/// Which sources below the live server answer an action when the server
/// cannot (the answer order: `scry-ops`' `engine/order.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lower {
    /// None: the live server's answer or an error.
    None,
    /// The SCIP index only.
    Index,
    /// The SCIP index, then the syntactic index (tree-sitter).
    IndexAndSyntax,
}

impl Lower {
    /// Whether the SCIP index answers it.
    pub fn index(self) -> bool {
        self != Lower::None
    }

    /// Whether the syntactic index answers it.
    pub fn syntax(self) -> bool {
        self == Lower::IndexAndSyntax
    }
}

/// How a positional answer tells apart the occurrences of the asked name
/// on one line (or in a file, without a line) that resolve differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occurrences {
    /// By the action's own answer, which each occurrence shows (a
    /// definition, declaration, type definition, implementation).
    OwnAnswer,
    /// By the definition (asked only with a line), each occurrence showing
    /// its own answer (hover).
    DefinitionShown,
    /// By the definition (asked only with a line), the occurrences not
    /// shown (references, calls: one answer each is too long), and for
    /// actions not asked at a position.
    Definition,
}

impl Occurrences {
    /// Whether each occurrence shows its own answer.
    pub fn shown(self) -> bool {
        self != Occurrences::Definition
    }

    /// The action whose answer tells occurrences of `action` apart: its
    /// own, else the definition when a line was given.
    pub fn split_by(self, action: Action, line: Option<u32>) -> Option<Action> {
        match self {
            Occurrences::OwnAnswer => Some(action),
            _ if line.is_some() => Some(Action::Definition),
            _ => None,
        }
    }
}

use Arg as A;

const POSITIONAL: &[Arg] = &[A::Path, A::Symbol, A::Line, A::Column, A::Timeout];

const fn positional(
    action: Action,
    name: &'static str,
    aliases: &'static [&'static str],
    noun: &'static str,
    method: &'static str,
    capability: &'static str,
    reply: ReplyShape,
) -> Facts {
    Facts {
        action,
        name,
        aliases,
        noun,
        method: Some(method),
        follow_up: &[],
        capability: Some(capability),
        reply,
        positional: true,
        takes: POSITIONAL,
        writes: Writes::Never,
        searches_workspace: false,
        lower: Lower::None,
        occurrences: Occurrences::Definition,
    }
}

/// The table, in the order the MCP tools list actions.
pub const ACTIONS: &[Facts] = &[
    Facts {
        lower: Lower::IndexAndSyntax,
        occurrences: Occurrences::OwnAnswer,
        ..positional(
            Action::Definition,
            "definition",
            &["def", "goto_definition"],
            "definition",
            "textDocument/definition",
            "definitionProvider",
            ReplyShape::Locations,
        )
    },
    Facts {
        lower: Lower::IndexAndSyntax,
        occurrences: Occurrences::OwnAnswer,
        ..positional(
            Action::Declaration,
            "declaration",
            &["decl"],
            "declaration",
            "textDocument/declaration",
            "declarationProvider",
            ReplyShape::Locations,
        )
    },
    Facts {
        lower: Lower::Index,
        occurrences: Occurrences::OwnAnswer,
        ..positional(
            Action::TypeDefinition,
            "type_definition",
            &["typedef", "type_def"],
            "type definition",
            "textDocument/typeDefinition",
            "typeDefinitionProvider",
            ReplyShape::Locations,
        )
    },
    Facts {
        searches_workspace: true,
        lower: Lower::IndexAndSyntax,
        occurrences: Occurrences::OwnAnswer,
        ..positional(
            Action::Implementation,
            "implementation",
            &["impl", "implementations"],
            "implementations",
            "textDocument/implementation",
            "implementationProvider",
            ReplyShape::Locations,
        )
    },
    Facts {
        searches_workspace: true,
        lower: Lower::IndexAndSyntax,
        ..positional(
            Action::References,
            "references",
            &["refs", "ref", "reference"],
            "references",
            "textDocument/references",
            "referencesProvider",
            ReplyShape::Locations,
        )
    },
    Facts {
        lower: Lower::IndexAndSyntax,
        occurrences: Occurrences::DefinitionShown,
        ..positional(
            Action::Hover,
            "hover",
            &[],
            "hover information",
            "textDocument/hover",
            "hoverProvider",
            ReplyShape::Hover,
        )
    },
    Facts {
        action: Action::Symbols,
        name: "symbols",
        aliases: &["document_symbols", "outline"],
        noun: "symbols",
        method: Some("textDocument/documentSymbol"),
        follow_up: &[],
        capability: Some("documentSymbolProvider"),
        reply: ReplyShape::DocumentSymbols,
        positional: false,
        takes: &[A::Path, A::Timeout],
        writes: Writes::Never,
        searches_workspace: false,
        lower: Lower::IndexAndSyntax,
        occurrences: Occurrences::Definition,
    },
    Facts {
        action: Action::WorkspaceSymbols,
        name: "workspace_symbols",
        aliases: &["wsymbols"],
        noun: "workspace symbols",
        method: Some("workspace/symbol"),
        follow_up: &[],
        capability: Some("workspaceSymbolProvider"),
        reply: ReplyShape::WorkspaceSymbols,
        positional: false,
        // `symbol` stands in for `query`; `path` picks the server.
        takes: &[A::Path, A::Symbol, A::Query, A::Timeout],
        writes: Writes::Never,
        searches_workspace: false,
        lower: Lower::IndexAndSyntax,
        occurrences: Occurrences::Definition,
    },
    Facts {
        follow_up: &["callHierarchy/incomingCalls"],
        searches_workspace: true,
        ..positional(
            Action::IncomingCalls,
            "incoming_calls",
            &["callers"],
            "incoming calls",
            "textDocument/prepareCallHierarchy",
            "callHierarchyProvider",
            ReplyShape::Calls,
        )
    },
    Facts {
        follow_up: &["callHierarchy/outgoingCalls"],
        ..positional(
            Action::OutgoingCalls,
            "outgoing_calls",
            &["callees"],
            "outgoing calls",
            "textDocument/prepareCallHierarchy",
            "callHierarchyProvider",
            ReplyShape::Calls,
        )
    },
    Facts {
        action: Action::Diagnostics,
        name: "diagnostics",
        aliases: &["diagnostic", "diag", "diags"],
        noun: "diagnostics",
        method: Some("textDocument/diagnostic"),
        follow_up: &["workspace/diagnostic"],
        capability: Some("diagnosticProvider"),
        reply: ReplyShape::Other,
        positional: false,
        takes: &[A::Path, A::Severity, A::Changes, A::Targets, A::Timeout],
        writes: Writes::Never,
        searches_workspace: false,
        lower: Lower::None,
        occurrences: Occurrences::Definition,
    },
    Facts {
        action: Action::Rename,
        name: "rename",
        aliases: &[],
        noun: "rename",
        method: Some("textDocument/rename"),
        follow_up: &["textDocument/prepareRename"],
        capability: Some("renameProvider"),
        reply: ReplyShape::Other,
        positional: false,
        takes: &[
            A::Path,
            A::Symbol,
            A::Line,
            A::Column,
            A::NewName,
            A::Apply,
            A::IdempotencyKey,
            A::Timeout,
        ],
        writes: Writes::Previewable,
        searches_workspace: true,
        lower: Lower::None,
        occurrences: Occurrences::Definition,
    },
    Facts {
        action: Action::CodeActions,
        name: "code_actions",
        aliases: &["code_action", "codeaction", "actions", "fix"],
        noun: "code actions",
        method: Some("textDocument/codeAction"),
        follow_up: &[],
        capability: Some("codeActionProvider"),
        reply: ReplyShape::Other,
        positional: false,
        takes: &[
            A::Path,
            A::Symbol,
            A::Line,
            A::Column,
            A::ActionIndex,
            A::ActionTitle,
            A::Apply,
            A::IdempotencyKey,
            A::Timeout,
        ],
        writes: Writes::Previewable,
        searches_workspace: false,
        lower: Lower::None,
        occurrences: Occurrences::Definition,
    },
    Facts {
        action: Action::Map,
        name: "map",
        aliases: &["repo_map", "repomap"],
        noun: "repository map",
        method: None,
        follow_up: &[],
        capability: None,
        reply: ReplyShape::Other,
        positional: false,
        takes: &[
            A::Path,
            A::Symbol,
            A::Targets,
            A::FocusSymbols,
            A::Budget,
            A::Timeout,
        ],
        writes: Writes::Never,
        searches_workspace: false,
        lower: Lower::None,
        occurrences: Occurrences::Definition,
    },
    Facts {
        action: Action::Status,
        name: "status",
        aliases: &[],
        noun: "status",
        method: None,
        follow_up: &[],
        capability: None,
        reply: ReplyShape::Other,
        positional: false,
        takes: &[A::Timeout],
        writes: Writes::Never,
        searches_workspace: false,
        lower: Lower::None,
        occurrences: Occurrences::Definition,
    },
    Facts {
        action: Action::Capabilities,
        name: "capabilities",
        aliases: &["caps"],
        noun: "capabilities",
        method: None,
        follow_up: &[],
        capability: None,
        reply: ReplyShape::Other,
        positional: false,
        takes: &[A::Path, A::Timeout],
        writes: Writes::Never,
        searches_workspace: false,
        lower: Lower::None,
        occurrences: Occurrences::Definition,
    },
    Facts {
        action: Action::Undo,
        name: "undo",
        aliases: &[],
        noun: "undo",
        method: None,
        follow_up: &[],
        capability: None,
        reply: ReplyShape::Other,
        positional: false,
        takes: &[A::Apply, A::IdempotencyKey, A::Timeout],
        writes: Writes::Always,
        searches_workspace: false,
        lower: Lower::None,
        occurrences: Occurrences::Definition,
    },
    Facts {
        action: Action::Request,
        name: "request",
        aliases: &["raw"],
        noun: "result",
        method: None,
        follow_up: &[],
        capability: None,
        reply: ReplyShape::Other,
        positional: false,
        takes: &[A::Path, A::Method, A::Params, A::Timeout],
        writes: Writes::Always,
        searches_workspace: false,
        lower: Lower::None,
        occurrences: Occurrences::Definition,
    },
    Facts {
        action: Action::Reload,
        name: "reload",
        aliases: &[],
        noun: "reload",
        method: None,
        follow_up: &[],
        capability: None,
        reply: ReplyShape::Other,
        positional: false,
        takes: &[A::Timeout],
        writes: Writes::Always,
        searches_workspace: false,
        lower: Lower::None,
        occurrences: Occurrences::Definition,
    },
];

// Every action has its row, at its declaration index: checked when the
// crate compiles, so a new action without a row (or out of order) does not
// build.
const _: () = {
    assert!(ACTIONS.len() == Action::ALL.len(), "one row per action");
    let mut i = 0;
    while i < ACTIONS.len() {
        assert!(
            ACTIONS[i].action as usize == i,
            "rows follow the declaration order"
        );
        assert!(Action::ALL[i] as usize == i);
        i += 1;
    }
};

impl Facts {
    pub fn takes(&self, arg: Arg) -> bool {
        self.takes.contains(&arg)
    }
}

/// The row of `action`.
pub fn facts(action: Action) -> &'static Facts {
    // Rows follow the enum's declaration order (tested).
    &ACTIONS[action as usize]
}

/// The action with this name or alias: case-insensitive, `-` read as `_`.
pub fn parse(s: &str) -> Option<Action> {
    let norm = s.trim().to_ascii_lowercase().replace('-', "_");
    ACTIONS
        .iter()
        .find(|f| f.name == norm || f.aliases.contains(&norm.as_str()))
        .map(|f| f.action)
}

/// The capability key a request method needs, from the actions that send
/// it; `None` for a method no action names (assumed supported).
pub fn capability(method: &str) -> Option<&'static str> {
    ACTIONS
        .iter()
        .find(|f| f.method == Some(method) || f.follow_up.contains(&method))
        .and_then(|f| f.capability)
}

/// The one action that takes `arg`, for "`arg` is for …" (the first in
/// table order when several do).
pub fn owner(arg: Arg) -> Option<Action> {
    ACTIONS.iter().find(|f| f.takes(arg)).map(|f| f.action)
}

/// The actions with these write kinds, in table order.
pub fn actions_writing(kinds: &[Writes]) -> Vec<Action> {
    ACTIONS
        .iter()
        .filter(|f| kinds.contains(&f.writes))
        .map(|f| f.action)
        .collect()
}

/// The arguments some of `actions` take, in [`Arg`] order.
pub fn args_of(actions: &[Action]) -> Vec<Arg> {
    Arg::ALL
        .iter()
        .copied()
        .filter(|a| actions.iter().any(|&act| facts(act).takes(*a)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_has_one_row() {
        for (i, a) in Action::ALL.iter().copied().enumerate() {
            assert_eq!(a as usize, i, "Action::ALL follows the declaration order");
            assert_eq!(ACTIONS[i].action, a, "row {i}");
            let rows = ACTIONS.iter().filter(|f| f.action == a).count();
            assert_eq!(rows, 1, "{a:?}");
            assert_eq!(facts(a).action, a);
        }
    }

    #[test]
    fn names_and_aliases_are_unique_and_parse_back() {
        let mut seen = Vec::new();
        for f in ACTIONS {
            for n in std::iter::once(&f.name).chain(f.aliases) {
                assert!(!seen.contains(n), "{n} twice");
                seen.push(*n);
                assert_eq!(parse(n), Some(f.action), "{n}");
                assert_eq!(parse(&n.replace('_', "-").to_uppercase()), Some(f.action));
            }
        }
        assert_eq!(parse("teleport"), None);
    }

    #[test]
    fn capabilities_by_method() {
        assert_eq!(
            capability("textDocument/references"),
            Some("referencesProvider")
        );
        assert_eq!(
            capability("callHierarchy/outgoingCalls"),
            Some("callHierarchyProvider")
        );
        assert_eq!(
            capability("textDocument/prepareRename"),
            Some("renameProvider")
        );
        assert_eq!(
            capability("workspace/diagnostic"),
            Some("diagnosticProvider")
        );
        assert_eq!(capability("textDocument/foldingRange"), None);
    }

    #[test]
    fn refused_arguments_have_one_owner() {
        for a in Arg::ALL.iter().copied().filter(|a| a.refused_elsewhere()) {
            let owners: Vec<&str> = ACTIONS
                .iter()
                .filter(|f| f.takes(a))
                .map(|f| f.name)
                .collect();
            assert_eq!(owners.len(), 1, "{a:?}: {owners:?}");
        }
    }

    #[test]
    fn positional_actions_ask_one_method() {
        for f in ACTIONS.iter().filter(|f| f.positional) {
            assert!(f.method.is_some() && f.capability.is_some(), "{}", f.name);
            assert_eq!(f.writes, Writes::Never);
        }
    }
}
