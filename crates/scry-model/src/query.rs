//! The question: [`Query`] is what a front end parsed (plain optional
//! fields), [`Query::validate`] checks it once and gives the [`Valid`]
//! question, carrying exactly the arguments its action takes: what goes
//! over the wire to a daemon and what the engine answers. Nothing after a
//! front end reads a `Query`.
//!
//! Invariants: every check of the arguments' combination lives here (front
//! ends only parse their syntax into a `Query` and map [`Invalid`] to their
//! words); validation touches no file and starts nothing; a blank string
//! counts as not given; lines and columns in a `Valid` are 1-based; a
//! `Valid` read from its serialized form holds what validation guarantees.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::action::Action;
use crate::action::{Arg, Writes};
use crate::error::{Message, OpError};
use crate::fact::{ArgProblem, Invalid};
use crate::limits::{DEFAULT_MAP_BUDGET, MAX_MAP_BUDGET};
use crate::model::{Question, SeverityFilter};

/// A question, as any front end puts it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Query {
    pub action: Action,
    /// Absolute, or relative to the workspace root.
    #[serde(with = "crate::os_path::opt", default)]
    pub path: Option<PathBuf>,
    pub symbol: Option<String>,
    /// 1-based.
    pub line: Option<u32>,
    /// 1-based, in characters.
    pub column: Option<u32>,
    pub query: Option<String>,
    /// For `request`: the LSP method and its JSON params.
    pub method: Option<String>,
    pub params: Option<Value>,
    /// The action's budget (default from the configuration, at most
    /// [`crate::limits::MAX_TIMEOUT`]).
    #[serde(with = "millis", rename = "timeout_ms")]
    pub timeout: Option<Duration>,
    /// For `diagnostics`: files, directories, globs (`src/**/*.py`) or `*`
    /// for the whole workspace; absolute or relative to the workspace root.
    /// Empty: `path`, else the whole workspace.
    #[serde(with = "crate::os_path::vec")]
    pub targets: Vec<PathBuf>,
    /// For `diagnostics`: which severities to show (default: errors and
    /// warnings).
    pub severity: Option<SeverityFilter>,
    /// For `rename`: the new name.
    pub new_name: Option<String>,
    /// For `rename`, `code_actions` (with an action chosen) and `undo`:
    /// apply the edit (default) or only preview it (`false`: a unified diff
    /// of every file, nothing written).
    pub apply: bool,
    /// For `code_actions`: apply the action with this 1-based number …
    pub action_index: Option<usize>,
    /// … or with this title (exact, else a unique case-insensitive part).
    pub action_title: Option<String>,
    /// For edits: the caller's idempotency key (the MCP request id). An
    /// edit already applied under it is not applied again: its answer is
    /// replayed.
    pub idempotency_key: Option<String>,
    /// For `map`: symbols to bias the map towards (paths go in `targets`).
    pub focus_symbols: Vec<String>,
    /// For `map`: the character budget (default [`DEFAULT_MAP_BUDGET`]).
    pub budget: Option<usize>,
    /// `diagnostics`: only what is new since the session's previous
    /// `changes` check of the files, plus how many were resolved.
    pub changes: bool,
}

/// `Option<Duration>` as whole milliseconds (`#[serde(with = …)]`).
pub mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&(d.as_millis().min(u64::MAX as u128) as u64)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}

/// Where a positional question (and a rename) points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Spot {
    /// A symbol looked up across the workspace (no file given).
    Named { symbol: String },
    /// In one file: a symbol, a line, or both; a column only with a line.
    InFile {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        symbol: Option<String>,
        line: Option<u32>,
        column: Option<u32>,
    },
}

impl Spot {
    /// The symbol asked about, if named.
    pub fn symbol(&self) -> Option<&str> {
        match self {
            Spot::Named { symbol } => Some(symbol),
            Spot::InFile { symbol, .. } => symbol.as_deref(),
        }
    }

    /// The file asked in, if given.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Spot::Named { .. } => None,
            Spot::InFile { path, .. } => Some(path),
        }
    }

    /// The 1-based line asked at, if given.
    pub fn line(&self) -> Option<u32> {
        match self {
            Spot::Named { .. } => None,
            Spot::InFile { line, .. } => *line,
        }
    }

    /// The 1-based column asked at, if given.
    pub fn column(&self) -> Option<u32> {
        match self {
            Spot::Named { .. } => None,
            Spot::InFile { column, .. } => *column,
        }
    }

    /// What [`Query::check`] guarantees of a spot: a non-blank symbol, or
    /// in a file a line; lines and columns 1-based; a column with a line.
    fn holds(&self) -> bool {
        match self {
            Spot::Named { symbol } => !blank(symbol),
            Spot::InFile {
                symbol,
                line,
                column,
                ..
            } => {
                symbol.as_deref().is_none_or(|s| !blank(s))
                    && (symbol.is_some() || line.is_some())
                    && positions_hold(*line, *column)
            }
        }
    }
}

/// Which code action to apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionChoice {
    /// 1-based, in the order the list shows.
    Index(usize),
    /// Exact, else a unique case-insensitive part.
    Title(String),
}

/// A validated question: what the engine answers (`scry_ops::Engine::run`,
/// with the time budget beside it) and what a front end sends the daemon.
/// The positional actions (the action table's `positional` flag) share one
/// variant; every other action has its own, carrying exactly the
/// arguments it takes.
///
/// Made only by [`Query::check`], or read back from its serialized form,
/// which checks the same invariants ([`Valid::holds`]): a daemon cannot be
/// sent what a front end could not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "snake_case", tag = "kind")]
pub enum Valid {
    /// A question at a spot: definition, hover, references, calls, ….
    Positional {
        action: Action,
        spot: Spot,
    },
    Symbols {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    WorkspaceSymbols {
        /// The query, else the symbol.
        query: String,
        /// Ask the server of this file (else every running one).
        #[serde(with = "crate::os_path::opt", default)]
        path: Option<PathBuf>,
    },
    Diagnostics {
        /// In the engine's form (`scry_ops::diagnostics_target`); empty:
        /// `path`, else the whole workspace.
        #[serde(with = "crate::os_path::vec")]
        targets: Vec<PathBuf>,
        #[serde(with = "crate::os_path::opt", default)]
        path: Option<PathBuf>,
        severity: Option<SeverityFilter>,
        changes: bool,
    },
    Rename {
        spot: Spot,
        /// Without surrounding spaces, its shape checked (see
        /// [`MAX_NEW_NAME_CHARS`]); that it is a name of the file's language
        /// is checked by the rename op, which knows the file.
        new_name: String,
        apply: bool,
        idempotency_key: Option<String>,
    },
    CodeActions {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        symbol: Option<String>,
        line: Option<u32>,
        column: Option<u32>,
        /// None: list the actions.
        choice: Option<ActionChoice>,
        apply: bool,
        idempotency_key: Option<String>,
    },
    Map {
        /// `path` and the targets.
        #[serde(with = "crate::os_path::vec")]
        paths: Vec<PathBuf>,
        /// The symbol and the focus symbols.
        symbols: Vec<String>,
        budget: usize,
    },
    Status,
    Capabilities {
        #[serde(with = "crate::os_path::opt", default)]
        path: Option<PathBuf>,
    },
    Undo {
        apply: bool,
        idempotency_key: Option<String>,
    },
    Request {
        method: String,
        params: Option<Value>,
        #[serde(with = "crate::os_path::opt", default)]
        path: Option<PathBuf>,
    },
    Reload,
}

impl Serialize for Valid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Valid::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for Valid {
    /// The serialized form, read back only when it holds what
    /// [`Query::check`] guarantees.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Valid, D::Error> {
        let v = Valid::deserialize(d)?;
        if v.holds() {
            Ok(v)
        } else {
            Err(serde::de::Error::custom(format!(
                "not a valid {} question",
                v.action().name()
            )))
        }
    }
}

fn blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// 1-based, and a column only with a line.
fn positions_hold(line: Option<u32>, column: Option<u32>) -> bool {
    line != Some(0) && column != Some(0) && (column.is_none() || line.is_some())
}

impl Valid {
    /// The action asked.
    pub fn action(&self) -> Action {
        match self {
            Valid::Positional { action, .. } => *action,
            Valid::Symbols { .. } => Action::Symbols,
            Valid::WorkspaceSymbols { .. } => Action::WorkspaceSymbols,
            Valid::Diagnostics { .. } => Action::Diagnostics,
            Valid::Rename { .. } => Action::Rename,
            Valid::CodeActions { .. } => Action::CodeActions,
            Valid::Map { .. } => Action::Map,
            Valid::Status => Action::Status,
            Valid::Capabilities { .. } => Action::Capabilities,
            Valid::Undo { .. } => Action::Undo,
            Valid::Request { .. } => Action::Request,
            Valid::Reload => Action::Reload,
        }
    }

    /// What [`Query::check`] guarantees (checked again when a `Valid` is
    /// read from its serialized form).
    fn holds(&self) -> bool {
        match self {
            Valid::Positional { action, spot } => action.facts().positional && spot.holds(),
            Valid::WorkspaceSymbols { query, .. } => !blank(query),
            Valid::Rename { spot, new_name, .. } => {
                spot.holds()
                    && !blank(new_name)
                    && new_name_checked(new_name).as_ref() == Ok(new_name)
                    && !same_name(spot, new_name)
            }
            Valid::CodeActions {
                symbol,
                line,
                column,
                choice,
                ..
            } => {
                symbol.as_deref().is_none_or(|s| !blank(s))
                    && positions_hold(*line, *column)
                    && !matches!(choice, Some(ActionChoice::Title(t)) if blank(t))
            }
            Valid::Map {
                symbols, budget, ..
            } => (1..=MAX_MAP_BUDGET).contains(budget) && !symbols.iter().any(|s| blank(s)),
            Valid::Request { method, .. } => !blank(method),
            Valid::Symbols { .. }
            | Valid::Diagnostics { .. }
            | Valid::Status
            | Valid::Capabilities { .. }
            | Valid::Undo { .. }
            | Valid::Reload => true,
        }
    }

    /// The spot of a positional question or a rename.
    pub fn spot(&self) -> Option<&Spot> {
        match self {
            Valid::Positional { spot, .. } | Valid::Rename { spot, .. } => Some(spot),
            _ => None,
        }
    }

    /// The file the question names, if any (a map's are its focus).
    pub fn path(&self) -> Option<&Path> {
        match self {
            Valid::Positional { spot, .. } | Valid::Rename { spot, .. } => spot.path(),
            Valid::Symbols { path } | Valid::CodeActions { path, .. } => Some(path),
            Valid::WorkspaceSymbols { path, .. }
            | Valid::Diagnostics { path, .. }
            | Valid::Capabilities { path }
            | Valid::Request { path, .. } => path.as_deref(),
            Valid::Map { .. } | Valid::Status | Valid::Undo { .. } | Valid::Reload => None,
        }
    }

    /// The symbol the question names, if any (a map's first focus symbol).
    pub fn symbol(&self) -> Option<&str> {
        match self {
            Valid::CodeActions { symbol, .. } => symbol.as_deref(),
            Valid::Map { symbols, .. } => symbols.first().map(String::as_str),
            v => v.spot().and_then(Spot::symbol),
        }
    }

    /// The 1-based line asked at, if given.
    pub fn line(&self) -> Option<u32> {
        match self {
            Valid::CodeActions { line, .. } => *line,
            v => v.spot().and_then(Spot::line),
        }
    }

    /// The 1-based column asked at, if given.
    pub fn column(&self) -> Option<u32> {
        match self {
            Valid::CodeActions { column, .. } => *column,
            v => v.spot().and_then(Spot::column),
        }
    }

    /// A workspace-symbols query.
    pub fn query(&self) -> Option<&str> {
        match self {
            Valid::WorkspaceSymbols { query, .. } => Some(query),
            _ => None,
        }
    }

    /// The edit's idempotency key, for a front end or a session to set or
    /// qualify; `None` for an action that takes none.
    pub fn idempotency_key_mut(&mut self) -> Option<&mut Option<String>> {
        match self {
            Valid::Rename {
                idempotency_key, ..
            }
            | Valid::CodeActions {
                idempotency_key, ..
            }
            | Valid::Undo {
                idempotency_key, ..
            } => Some(idempotency_key),
            _ => None,
        }
    }

    /// Whether answering changes state (files, the edit journal, the
    /// servers): the action table's `writes`, where a preview (`apply`
    /// off) and a list of code actions (none chosen) write nothing. Front
    /// ends serialize such calls and never retry them.
    pub fn writes(&self) -> bool {
        let applies = match self {
            Valid::Rename { apply, .. } | Valid::Undo { apply, .. } => *apply,
            Valid::CodeActions { apply, choice, .. } => *apply && choice.is_some(),
            _ => true,
        };
        applies && self.action().facts().writes != Writes::Never
    }

    /// The answer's header: the question as the engine read it, paths
    /// absolute (relative ones from `root`).
    pub fn question(&self, root: &Path) -> Question {
        Question {
            path: self.path().map(|p| root.join(p)),
            symbol: self.symbol().map(str::to_string),
            line: self.line(),
            column: self.column(),
            query: self.query().map(str::to_string),
        }
    }
}

/// The most characters a new name may have.
pub const MAX_NEW_NAME_CHARS: usize = 256;

impl From<Invalid> for OpError {
    fn from(e: Invalid) -> OpError {
        OpError::InvalidArgument(Message::new().fact(crate::fact::Fact::Refused(e)))
    }
}

/// `new_name` as a rename may use it, checked before any server is asked:
/// surrounding spaces dropped, no control characters (line breaks, tabs,
/// escapes) or line/paragraph separators, at most [`MAX_NEW_NAME_CHARS`]
/// characters.
/// Whether `new_name` is the name `spot` asks about already (its last
/// segment: `Shape.area` is `area`), which a rename would leave as it is.
fn same_name(spot: &Spot, new_name: &str) -> bool {
    spot.symbol()
        .is_some_and(|s| crate::name::SymbolName::parse(s).name == new_name)
}

fn new_name_checked(raw: &str) -> Result<String, ArgProblem> {
    let name = raw.trim_matches(' ');
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        return Err(ArgProblem::ControlChar(c));
    }
    let n = name.chars().count();
    if n > MAX_NEW_NAME_CHARS {
        return Err(ArgProblem::TooLong(n));
    }
    Ok(name.to_string())
}

/// A string argument, unless blank.
fn given(s: &Option<String>) -> Option<String> {
    s.as_ref().filter(|s| !s.trim().is_empty()).cloned()
}

impl Query {
    pub fn new(action: Action) -> Query {
        Query {
            action,
            path: None,
            symbol: None,
            line: None,
            column: None,
            query: None,
            method: None,
            params: None,
            timeout: None,
            targets: Vec::new(),
            severity: None,
            new_name: None,
            apply: true,
            action_index: None,
            action_title: None,
            idempotency_key: None,
            focus_symbols: Vec::new(),
            budget: None,
            changes: false,
        }
    }

    /// Check the question once and give its validated form.
    pub fn validate(&self) -> Result<Valid, OpError> {
        self.check().map_err(OpError::from)
    }

    /// [`Query::validate`], with the reason as data, for a front end that
    /// words some refusals its own way.
    pub fn check(&self) -> Result<Valid, Invalid> {
        let action = self.action;
        let facts = action.facts();
        let bad = |arg, problem| Invalid {
            action,
            arg,
            problem,
        };
        if self.line == Some(0) {
            return Err(bad(Arg::Line, ArgProblem::Zero));
        }
        if self.column == Some(0) {
            return Err(bad(Arg::Column, ArgProblem::Zero));
        }
        let symbol = given(&self.symbol);
        let new_name = given(&self.new_name);
        let title = given(&self.action_title);
        // Arguments only their own action takes; given elsewhere, refused
        // (in this order: the first one named is the one reported).
        let present = [
            (Arg::Changes, self.changes),
            (Arg::NewName, new_name.is_some()),
            (Arg::ActionIndex, self.action_index.is_some()),
            (Arg::ActionTitle, title.is_some()),
            (Arg::Severity, self.severity.is_some()),
        ];
        let refused = |arg: Arg, given: bool| given && !facts.takes(arg);
        if let Some(&(arg, _)) = present.iter().take(1).find(|(a, g)| refused(*a, *g)) {
            return Err(bad(arg, ArgProblem::NotTaken));
        }
        if self.column.is_some() && self.line.is_none() {
            return Err(bad(Arg::Column, ArgProblem::WithoutLine));
        }
        if let Some(&(arg, _)) = present.iter().skip(1).find(|(a, g)| refused(*a, *g)) {
            return Err(bad(arg, ArgProblem::NotTaken));
        }
        let spot = || -> Result<Spot, Invalid> {
            match (&self.path, &symbol) {
                (Some(path), _) if symbol.is_some() || self.line.is_some() => Ok(Spot::InFile {
                    path: path.clone(),
                    symbol: symbol.clone(),
                    line: self.line,
                    column: self.column,
                }),
                (Some(_), _) => Err(bad(Arg::Symbol, ArgProblem::NoSymbolOrLine)),
                (None, None) => Err(bad(Arg::Symbol, ArgProblem::Missing)),
                (None, Some(_)) if self.line.is_some() => {
                    Err(bad(Arg::Line, ArgProblem::WithoutPath))
                }
                (None, Some(s)) => Ok(Spot::Named { symbol: s.clone() }),
            }
        };
        Ok(match action {
            Action::Symbols => Valid::Symbols {
                path: self
                    .path
                    .clone()
                    .ok_or(bad(Arg::Path, ArgProblem::Missing))?,
            },
            Action::WorkspaceSymbols => Valid::WorkspaceSymbols {
                query: given(&self.query)
                    .or(symbol)
                    .ok_or(bad(Arg::Query, ArgProblem::Missing))?,
                path: self.path.clone(),
            },
            Action::Diagnostics => Valid::Diagnostics {
                targets: self.targets.clone(),
                path: self.path.clone(),
                severity: self.severity,
                changes: self.changes,
            },
            Action::Rename => {
                let new_name = new_name.ok_or(bad(Arg::NewName, ArgProblem::Missing))?;
                let spot = match spot() {
                    // Without a file: a line needs one; else rename asks
                    // for what it asks with one.
                    Err(Invalid {
                        problem: ArgProblem::Missing,
                        ..
                    }) if self.line.is_some() => {
                        return Err(bad(Arg::Line, ArgProblem::WithoutPath));
                    }
                    Err(Invalid {
                        problem: ArgProblem::Missing,
                        ..
                    }) => return Err(bad(Arg::Symbol, ArgProblem::NoSymbolOrLine)),
                    s => s?,
                };
                let new_name = new_name_checked(&new_name).map_err(|p| bad(Arg::NewName, p))?;
                if same_name(&spot, &new_name) {
                    return Err(bad(Arg::NewName, ArgProblem::Unchanged));
                }
                Valid::Rename {
                    spot,
                    new_name,
                    apply: self.apply,
                    idempotency_key: self.idempotency_key.clone(),
                }
            }
            Action::CodeActions => {
                let path = self
                    .path
                    .clone()
                    .ok_or(bad(Arg::Path, ArgProblem::Missing))?;
                let choice = match (self.action_index, title) {
                    (Some(_), Some(_)) => return Err(bad(Arg::ActionIndex, ArgProblem::Both)),
                    (Some(n), None) => Some(ActionChoice::Index(n)),
                    (None, Some(t)) => Some(ActionChoice::Title(t)),
                    (None, None) => None,
                };
                Valid::CodeActions {
                    path,
                    symbol,
                    line: self.line,
                    column: self.column,
                    choice,
                    apply: self.apply,
                    idempotency_key: self.idempotency_key.clone(),
                }
            }
            Action::Map => {
                let budget = self.budget.unwrap_or(DEFAULT_MAP_BUDGET);
                if budget == 0 || budget > MAX_MAP_BUDGET {
                    return Err(bad(Arg::Budget, ArgProblem::OutOfRange));
                }
                Valid::Map {
                    paths: self.path.iter().chain(&self.targets).cloned().collect(),
                    symbols: symbol
                        .iter()
                        .chain(&self.focus_symbols)
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                    budget,
                }
            }
            Action::Status => Valid::Status,
            Action::Capabilities => Valid::Capabilities {
                path: self.path.clone(),
            },
            Action::Undo => Valid::Undo {
                apply: self.apply,
                idempotency_key: self.idempotency_key.clone(),
            },
            Action::Request => Valid::Request {
                method: given(&self.method).ok_or(bad(Arg::Method, ArgProblem::Missing))?,
                params: self.params.clone(),
                path: self.path.clone(),
            },
            Action::Reload => Valid::Reload,
            // The rest: the table's positional actions (tested), one variant.
            _ => Valid::Positional {
                action,
                spot: spot()?,
            },
        })
    }
}

#[cfg(test)]
mod tests;
