//! What an error says, as data: each [`Fact`] is one sentence's facts (who,
//! which file, which figure), carried in a [`Message`](crate::Message) as a
//! [`Part::Fact`](crate::Part::Fact) and worded only by scry-render
//! (`scry_render::fact`), per front end. A refused question is one
//! ([`Invalid`]: which argument of which action, and how).
//!
//! Invariants: a fact holds no sentence of scry's, only what the sentence
//! needs; text scry did not write (a server's or the OS's error) is a
//! field named for it and shown as foreign text; paths are absolute, as
//! resolved. `Display` (logs, library users) prints the data, not words.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::action::{Action, Arg};
use crate::edit_fact::EditFact;

/// One error sentence's facts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "fact")]
pub enum Fact {
    /// A question refused before anything ran.
    Refused(Invalid),
    /// Reading a workspace file did not finish within the call's budget.
    ReadTimedOut {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// The daemon could not be reached (`why`: the OS's or the daemon's
    /// words).
    DaemonUnreachable { why: String },
    /// The daemon `pid` stopped while it held the call; `writes`: the call
    /// was an edit.
    DaemonLost { pid: u32, why: String, writes: bool },
    /// The daemon could not encode its answer.
    AnswerNotEncoded { why: String },
    /// The client could not encode the question for the daemon.
    QuestionNotSent { why: String },
    /// A server cannot open a file whose name is not UTF-8 (`shown`: the
    /// name as scry shows it).
    NameNotUtf8 { server: String, shown: String },
    /// No language server is configured for a kind of file (`file`: how
    /// the file is described, `*.py files`).
    NoServerConfigured { file: String },
    /// The servers configured for a kind of file are not installed: each
    /// server's id and its command.
    NoServerInstalled {
        file: String,
        missing: Vec<(String, String)>,
    },
    /// A 1-based `line` past the end of a file of `lines` lines.
    LinePastEnd {
        line: u32,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        lines: u32,
    },
    /// A positional question in a file with neither a symbol nor a line
    /// and column to ask at.
    NothingToAskAt {
        action: crate::Action,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// The scan of a file for `name` ran past the call's budget after
    /// `seen` occurrences.
    ScanTimedOut {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        name: String,
        seen: usize,
    },
    /// `symbol` does not occur in the file.
    NotInFile {
        symbol: String,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// No workspace symbol is named `symbol` on these servers.
    NoWorkspaceSymbol {
        symbol: String,
        servers: Vec<String>,
    },
    /// `request` without a path, and no server running to take it.
    NoServerRunning,
    /// No source answered `action` within its budget (`ms`).
    CallTimedOut { action: crate::Action, ms: u128 },
    /// The configuration could not be read again (`why`: its error).
    ConfigUnreadable { why: String },
    /// The repository map failed (`why`: the task's error).
    MapFailed { why: String },
    /// `server` did not finish starting after `waited_ms` of the call's
    /// `budget_ms`.
    StartTimedOut {
        server: String,
        waited_ms: u128,
        budget_ms: u128,
    },
    /// `server` did not answer `method` after `waited_ms` of the call's
    /// `budget_ms`; `indexing`: its progress while it still indexes.
    NotAnswered {
        server: String,
        method: String,
        waited_ms: u128,
        budget_ms: u128,
        indexing: Option<String>,
    },
    /// A directory where a file is asked for (`asked`: as given; shown as
    /// a path when absolute, as typed when relative).
    IsDirectory {
        #[serde(with = "crate::os_path")]
        asked: PathBuf,
    },
    /// The server stopped answering `method` (`detail`: why).
    ServerStopped {
        server: String,
        method: String,
        detail: String,
    },
    /// The server answered `method` with an error (`error`: its message).
    ServerFailed {
        server: String,
        method: String,
        error: String,
    },
    /// The server broke the protocol (`detail`).
    ProtocolBroken { server: String, detail: String },
    /// A request could not be encoded (`detail`).
    NotEncoded { detail: String },
    /// The server failed to start (`detail`: its error).
    StartFailed { server: String, detail: String },
    /// The server's program could not be started (`why`: the OS's error;
    /// `hint`: what to change, when the OS refused an argument).
    SpawnFailed {
        server: String,
        #[serde(with = "crate::os_path")]
        program: PathBuf,
        why: String,
        hint: String,
    },
    /// The server's reply to `method` could not be read (`detail`).
    MalformedReply {
        server: String,
        method: String,
        detail: String,
    },
    /// A diagnostics glob that does not parse (`why`).
    BadGlob { glob: String, why: String },
    /// A call panicked inside scry (`panic`: its message).
    Panicked { action: String, panic: String },
    /// `new_name` breaks the file language's rules (`rule`: which one, as
    /// scry-syntax's name check says).
    BadNewName { rule: String },
    /// The server does not offer `action` (rename, code actions).
    NotOffered {
        server: String,
        action: crate::Action,
    },
    /// No occurrence of `what` could be renamed: the server refused at
    /// each (`refusals`, its words).
    CannotRename {
        what: String,
        server: String,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        refusals: String,
    },
    /// The server refused the rename (`why`: its words).
    RenameRefused {
        server: String,
        old_name: String,
        new_name: String,
        why: String,
    },
    /// The server returned no edit for the rename at a 1-based position.
    NoRenameEdit {
        server: String,
        old_name: String,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        line: u32,
        col: u32,
    },
    /// No code action number `n`; the server offers `offered` there.
    NoCodeActionNumber {
        n: usize,
        server: String,
        offered: usize,
    },
    /// The chosen code action is disabled (`reason`: the server's).
    CodeActionDisabled { title: String, reason: String },
    /// The server asked to apply an edit for a code action, which scry
    /// refused (`why`).
    CodeActionEditRefused {
        server: String,
        title: String,
        why: String,
    },
    /// No code action's title holds `title`; `available`: each as
    /// `N. title`.
    NoCodeActionTitled {
        title: String,
        available: Vec<String>,
    },
    /// Several code actions' titles hold `title` (each as `N. title`).
    CodeActionTitleAmbiguous { title: String, matches: Vec<String> },
    /// Planning, writing or undoing a workspace edit ([`EditFact`]).
    Edit(EditFact),
    /// A refused MCP tool call ([`ToolFact`](crate::ToolFact)).
    Tool(crate::tool_fact::ToolFact),
    /// A refused command line ([`UsageFact`](crate::UsageFact)).
    Usage(crate::usage_fact::UsageFact),
    /// What an untrusted workspace's configuration asked for and scry
    /// ignored, said after the sentence it explains.
    Untrusted(Box<crate::TrustNotice>),
}

/// A message of one fact.
impl Fact {
    /// An error message holding this fact alone.
    pub fn message(self) -> crate::Message {
        crate::Message::new().fact(self)
    }
}

impl crate::tool_fact::ToolFact {
    /// An error message holding this fact alone.
    pub fn message(self) -> crate::Message {
        Fact::Tool(self).message()
    }
}

impl EditFact {
    /// An error message holding this fact alone.
    pub fn message(self) -> crate::Message {
        Fact::Edit(self).message()
    }
}

impl std::fmt::Display for Fact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fact::Refused(i) => write!(f, "{i}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// What is wrong with a question: which argument of which action, and how.
/// scry-render words it (`scry_render::fact`) in each front end's own
/// syntax (its `Dialect`), unless the front end has words of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invalid {
    pub action: Action,
    pub arg: Arg,
    pub problem: ArgProblem,
}

/// What is wrong with one argument of a question ([`Invalid::problem`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ArgProblem {
    /// 0 for a 1-based line or column.
    Zero,
    /// A column without a line.
    WithoutLine,
    /// A line (and column) without the file they are in.
    WithoutPath,
    /// Given to an action that does not take it.
    NotTaken,
    /// Needed, and missing or blank. For a positional action's symbol: with
    /// no path either.
    Missing,
    /// In a file, neither a symbol nor a line.
    NoSymbolOrLine,
    /// Both `action_index` and `action_title`.
    Both,
    /// Out of its range (`budget`).
    OutOfRange,
    /// A control character (or a line/paragraph separator) in `new_name`.
    ControlChar(char),
    /// `new_name` longer than [`MAX_NEW_NAME_CHARS`](crate::query::MAX_NEW_NAME_CHARS) (its length).
    TooLong(usize),
    /// `new_name` is the name the symbol already has: nothing to rename.
    Unchanged,
}

impl std::fmt::Display for Invalid {
    /// The refusal as data, for logs and library users (scry-render words
    /// it for a reader: `scry_render::fact`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} refused {}: {:?}",
            self.action.name(),
            self.arg.name(),
            self.problem
        )
    }
}

impl std::error::Error for Invalid {}
