//! Errors of operations, each with a stable code a model (or a script) can
//! route on, and the [`Message`] they carry.
//!
//! Invariants:
//! - An error names a path as a [`Part::Path`] (absolute, as scry resolved
//!   it), never as text already made relative: how a path is shown is the
//!   reader's choice (scry-render shows it relative to the workspace root,
//!   with control characters escaped). The one exception is the workspace
//!   root itself where a message names it: that is text, shown absolute
//!   (relative it would read `.`).
//! - Text scry did not write (a server's or a tool's message, which may
//!   name absolute paths of its own) is a [`Part::Foreign`]; only such text
//!   is ever rewritten by a reader.
//! - An error that tells the caller to give an argument names it as a
//!   [`Part::Arg`] (the [`Arg`] itself), never as text: each front end
//!   spells it its own way (`--timeout-ms` on the command line,
//!   `timeout_ms` in MCP; scry-render's `Dialect`); an action it names is
//!   a [`Part::Action`] (`workspace-symbols` on the command line), and an
//!   example of a question a [`Part::Example`] (`path=src/lib.rs
//!   symbol=Config` in MCP, `scry definition src/lib.rs Config` on the
//!   command line).
//! - A fact that scry-render words as a note too (the trust notice in a
//!   routing error) is a [`Part::Note`], worded by the reader.
//! - Below the renderer a message is a fact ([`Message::fact`]: a
//!   [`Fact`](crate::Fact)); scry-render writes sentences (its `msg!` and
//!   `msgf!` macros), and a foreign error's text passes through as is.
//! - `Display` (library users, logs, `anyhow`) prints paths absolute and
//!   everything else as written (an argument and an action by their MCP
//!   names, [`Arg::name`], [`Action::name`], an example as MCP arguments, a
//!   note or a fact as its data); a typed [`OpError`] variant displays as
//!   its code and fields. Neither is a reader's sentence: scry-render
//!   words errors (`error_text`), typed variants and facts included.
//! - [`OpError::code`] is stable: one code per variant.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::action::{Action, Arg};

/// One piece of a [`Message`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// scry's own words.
    Text(String),
    /// A path as scry resolved it (absolute; a server's program as found).
    Path(#[serde(with = "crate::os_path")] PathBuf),
    /// Text scry did not write: a server's or a linter's message, a
    /// configuration error. It may name absolute paths of its own.
    Foreign(String),
    /// An argument the caller may give (`raise timeout_ms`), spelled by
    /// the reader in its front end's syntax.
    Arg(Arg),
    /// An action the caller may ask (`use workspace_symbols`), spelled by
    /// the reader in its front end's syntax.
    Action(Action),
    /// An example question: the action and its arguments with their
    /// values, written by the reader in its front end's syntax.
    Example(Example),
    /// A fact worded by the reader, as it words the same note in an
    /// answer.
    Note(Box<crate::Reason>),
    /// An error sentence's facts, worded by the reader.
    Fact(Box<crate::fact::Fact>),
}

/// A question as an example: `action` asked with `args` (each argument
/// and its value, in order).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Example {
    pub action: Action,
    pub args: Vec<(Arg, String)>,
}

impl Example {
    /// The question that asks `action` with no arguments (`scry status`,
    /// `action=status`).
    pub fn bare(action: Action) -> Example {
        Example {
            action,
            args: Vec::new(),
        }
    }
}

impl fmt::Display for Example {
    /// As MCP arguments: `path=src/lib.rs symbol=Config`; a question with
    /// no arguments by its action (`action=status`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.args.is_empty() {
            return write!(f, "{}={}", crate::action::ACTION, self.action.name());
        }
        for (i, (arg, value)) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}={value}", arg.name())?;
        }
        Ok(())
    }
}

/// The message of an error: scry's text, paths and foreign text, in order.
///
/// Build one from a fact ([`Fact::message`](crate::Fact::message)),
/// scry-render's `msg!`, the builder methods ([`Message::text`],
/// [`Message::path`], [`Message::foreign`], [`Message::append`]), or from
/// plain text (`"…".into()`, `format!(…).into()`). Adjacent text parts are
/// merged, so equal messages compare equal however they were built.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Message(Vec<Part>);

impl Message {
    /// An empty message.
    pub fn new() -> Message {
        Message(Vec::new())
    }

    /// Appends scry's own text.
    pub fn text(mut self, text: impl Into<String>) -> Message {
        let text = text.into();
        if text.is_empty() {
            return self;
        }
        match self.0.last_mut() {
            Some(Part::Text(t)) => t.push_str(&text),
            _ => self.0.push(Part::Text(text)),
        }
        self
    }

    /// Appends a path (absolute, as resolved).
    pub fn path(mut self, path: impl AsRef<Path>) -> Message {
        self.0.push(Part::Path(path.as_ref().to_path_buf()));
        self
    }

    /// Appends text scry did not write (a server's, a tool's, a
    /// configuration error's message).
    pub fn foreign(mut self, text: impl fmt::Display) -> Message {
        let text = text.to_string();
        if !text.is_empty() {
            self.0.push(Part::Foreign(text));
        }
        self
    }

    /// Appends the name of an argument the caller may give.
    pub fn arg(mut self, arg: Arg) -> Message {
        self.0.push(Part::Arg(arg));
        self
    }

    /// Appends the name of an action the caller may ask.
    pub fn action(mut self, action: Action) -> Message {
        self.0.push(Part::Action(action));
        self
    }

    /// Appends an example question.
    pub fn example(mut self, example: Example) -> Message {
        self.0.push(Part::Example(example));
        self
    }

    /// Appends a fact the reader words.
    pub fn note(mut self, note: crate::Reason) -> Message {
        self.0.push(Part::Note(Box::new(note)));
        self
    }

    /// Appends a sentence's facts the reader words.
    pub fn fact(mut self, fact: crate::fact::Fact) -> Message {
        self.0.push(Part::Fact(Box::new(fact)));
        self
    }

    /// Appends another message, its parts kept as they are.
    pub fn append(mut self, other: impl Into<Message>) -> Message {
        for part in other.into().0 {
            self = match part {
                Part::Text(t) => self.text(t),
                Part::Path(p) => self.path(p),
                Part::Foreign(f) => self.foreign(f),
                Part::Arg(a) => self.arg(a),
                Part::Action(a) => self.action(a),
                Part::Example(e) => self.example(e),
                Part::Note(n) => self.note(*n),
                Part::Fact(r) => self.fact(*r),
            };
        }
        self
    }

    /// The parts, in order.
    pub fn parts(&self) -> &[Part] {
        &self.0
    }
}

impl fmt::Display for Message {
    /// Paths absolute (as carried), everything else as written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in &self.0 {
            match part {
                Part::Text(t) | Part::Foreign(t) => f.write_str(t)?,
                Part::Path(p) => write!(f, "{}", p.display())?,
                Part::Arg(a) => f.write_str(a.name())?,
                Part::Action(a) => f.write_str(a.name())?,
                Part::Example(e) => write!(f, "{e}")?,
                Part::Note(n) => write!(f, "{n:?}")?,
                Part::Fact(r) => write!(f, "{r}")?,
            }
        }
        Ok(())
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Message {
        Message::new().text(text)
    }
}

impl From<String> for Message {
    fn from(text: String) -> Message {
        Message::new().text(text)
    }
}

impl From<&String> for Message {
    fn from(text: &String) -> Message {
        Message::new().text(text.as_str())
    }
}

impl From<&Message> for Message {
    fn from(m: &Message) -> Message {
        m.clone()
    }
}

/// An operation that could not answer: a stable code and its facts, a
/// typed variant's fields or a [`Message`] of parts. scry-render words it
/// (`error_text`), the one place each sentence is written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum OpError {
    InvalidArgument(Message),
    FileNotFound(#[serde(with = "crate::os_path")] PathBuf),
    OutsideWorkspace {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        #[serde(with = "crate::os_path")]
        root: PathBuf,
    },
    BinaryFile(#[serde(with = "crate::os_path")] PathBuf),
    /// A FIFO, socket, device (or a symlink to one): never opened.
    NotARegularFile {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        kind: String,
    },
    /// Over `limits.maxFileBytes`: not sent to servers, indexed or scanned.
    FileTooLarge {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        len: u64,
        limit: u64,
    },
    /// No server answers for the file and it is over the syntactic index's
    /// fixed limit (`scry_syntax::index::MAX_FILE_BYTES`), so tree-sitter
    /// could not answer either; `server` says why no server did. Code
    /// `FILE_TOO_LARGE`, like the file limit.
    TooLargeForIndex {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        len: u64,
        limit: u64,
        server: Message,
    },
    /// A call that failed inside scry itself (a bug): the call is answered
    /// with this, and everything else goes on.
    Internal(Message),
    NoServer(Message),
    SymbolNotFound(Message),
    ServerCrashed(Message),
    Timeout(Message),
    MalformedResponse(Message),
    ServerError(Message),
    /// An edit refused before anything was written (invalid, overlapping,
    /// cannot be renamed, …).
    EditRejected(Message),
    /// A file changed since the server (or scry's last edit) saw it; nothing
    /// was written.
    FileChanged(Message),
    /// Writing failed midway; every file was restored to its before-image.
    WriteFailed(Message),
    /// The scry daemon stopped while it held the call (killed, crashed):
    /// its outcome is unknown; the next call starts a new daemon.
    DaemonRestarted(Message),
    /// Another writer (another scry process) held the workspace's writer
    /// lock past the call's deadline; nothing was changed.
    Busy(Message),
}

impl fmt::Display for OpError {
    /// For logs and library users: the message as data (paths absolute,
    /// facts and notes as their data), or a typed variant's code and
    /// fields. A reader's words are scry-render's (`error_text`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.message() {
            Some(m) => write!(f, "{m}"),
            None => write!(f, "{}: {self:?}", self.code()),
        }
    }
}

impl std::error::Error for OpError {}

impl From<scry_base::disk::ReadError> for OpError {
    fn from(e: scry_base::disk::ReadError) -> OpError {
        use scry_base::disk::ReadError as R;
        match e {
            R::NotRegular { path, kind } => OpError::NotARegularFile {
                path,
                kind: kind.to_string(),
            },
            R::TooLarge { path, len, limit } => OpError::FileTooLarge { path, len, limit },
            R::TimedOut { path } => {
                OpError::Timeout(Message::new().fact(crate::fact::Fact::ReadTimedOut { path }))
            }
            R::Io { path, .. } => OpError::FileNotFound(path),
        }
    }
}

impl OpError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            OpError::InvalidArgument(_) => "INVALID_ARGUMENT",
            OpError::FileNotFound(_) => "FILE_NOT_FOUND",
            OpError::OutsideWorkspace { .. } => "OUTSIDE_WORKSPACE",
            OpError::BinaryFile(_) => "BINARY_FILE",
            OpError::NotARegularFile { .. } => "NOT_A_REGULAR_FILE",
            OpError::FileTooLarge { .. } | OpError::TooLargeForIndex { .. } => "FILE_TOO_LARGE",
            OpError::Internal(_) => "INTERNAL",
            OpError::NoServer(_) => "NO_SERVER",
            OpError::SymbolNotFound(_) => "SYMBOL_NOT_FOUND",
            OpError::ServerCrashed(_) => "SERVER_CRASHED",
            OpError::Timeout(_) => "TIMEOUT",
            OpError::MalformedResponse(_) => "MALFORMED_RESPONSE",
            OpError::ServerError(_) => "SERVER_ERROR",
            OpError::EditRejected(_) => "EDIT_REJECTED",
            OpError::FileChanged(_) => "FILE_CHANGED",
            OpError::WriteFailed(_) => "WRITE_FAILED",
            OpError::DaemonRestarted(_) => "DAEMON_RESTARTED",
            OpError::Busy(_) => "BUSY",
        }
    }

    /// The message of a variant that carries one; `None` for the typed
    /// variants (a file not found, too large, outside the workspace, …),
    /// whose sentences scry-render writes from their fields.
    pub fn message(&self) -> Option<&Message> {
        match self {
            OpError::FileNotFound(_)
            | OpError::BinaryFile(_)
            | OpError::NotARegularFile { .. }
            | OpError::FileTooLarge { .. }
            | OpError::TooLargeForIndex { .. }
            | OpError::OutsideWorkspace { .. } => None,
            OpError::InvalidArgument(m)
            | OpError::NoServer(m)
            | OpError::SymbolNotFound(m)
            | OpError::ServerCrashed(m)
            | OpError::Timeout(m)
            | OpError::MalformedResponse(m)
            | OpError::ServerError(m)
            | OpError::EditRejected(m)
            | OpError::FileChanged(m)
            | OpError::WriteFailed(m)
            | OpError::DaemonRestarted(m)
            | OpError::Busy(m)
            | OpError::Internal(m) => Some(m),
        }
    }

    /// The fact of an error whose message is one fact and nothing else
    /// (most are): what a program matches on instead of a sentence.
    pub fn fact(&self) -> Option<&crate::fact::Fact> {
        match self.message()?.parts() {
            [Part::Fact(f)] => Some(f),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_prints_paths_absolute() {
        let e = OpError::FileChanged(
            Message::new()
                .path("/ws/proj/src/a.rs")
                .text(" changed since the server saw it; ")
                .foreign("pyright: /ws/proj/b.py"),
        );
        assert_eq!(
            e.to_string(),
            "/ws/proj/src/a.rs changed since the server saw it; pyright: /ws/proj/b.py"
        );
    }

    #[test]
    fn builder_merges_text_and_keeps_parts() {
        let inner = Message::from("refused: ").path("/ws/b.rs");
        let m = Message::from("a")
            .text(format!("b{}", 1))
            .append(&inner)
            .foreign("")
            .foreign(42);
        assert_eq!(
            m.parts(),
            &[
                Part::Text("ab1refused: ".into()),
                Part::Path("/ws/b.rs".into()),
                Part::Foreign("42".into()),
            ]
        );
        assert_eq!(
            m,
            Message::from("ab1refused: ").path("/ws/b.rs").foreign("42")
        );
        assert_eq!(m.to_string(), "ab1refused: /ws/b.rs42");
    }

    #[test]
    fn arguments_actions_and_examples_are_parts_each_reader_spells() {
        let m = Message::from("try again or raise ").arg(Arg::Timeout);
        assert_eq!(m.parts()[1], Part::Arg(Arg::Timeout));
        assert_eq!(m.to_string(), "try again or raise timeout_ms");
        let example = Example {
            action: Action::Definition,
            args: vec![
                (Arg::Path, "src/lib.rs".into()),
                (Arg::Symbol, "Config".into()),
            ],
        };
        let m = m
            .text("; use ")
            .action(Action::WorkspaceSymbols)
            .text(", e.g. ")
            .example(example.clone());
        assert_eq!(m.parts()[3], Part::Action(Action::WorkspaceSymbols));
        assert_eq!(m.parts()[5], Part::Example(example));
        assert_eq!(
            m.to_string(),
            "try again or raise timeout_ms; use workspace_symbols, e.g. path=src/lib.rs symbol=Config"
        );
        let json = serde_json::to_string(&OpError::Timeout(m.clone())).unwrap();
        assert_eq!(
            serde_json::from_str::<OpError>(&json).unwrap(),
            OpError::Timeout(m)
        );
    }

    #[test]
    fn serde_round_trip() {
        let e = OpError::ServerError(
            Message::from("rust-analyzer failed on ")
                .path("/ws/a.rs")
                .text(": ")
                .foreign("boom"),
        );
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"ServerError":[{"text":"rust-analyzer failed on "},{"path":"/ws/a.rs"},{"text":": "},{"foreign":"boom"}]}"#
        );
        assert_eq!(serde_json::from_str::<OpError>(&json).unwrap(), e);
    }
}
