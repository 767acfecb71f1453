//! What an error says, as data: each [`Fact`] is one sentence's facts (who,
//! which file, which figure), carried in a [`Message`](crate::Message) as a
//! [`Part::Fact`](crate::Part::Fact) and worded only by scry-render
//! (`scry_render::fact`), per front end.
//!
//! Invariants: a fact holds no sentence of scry's, only what the sentence
//! needs; text scry did not write (a server's or the OS's error) is a
//! field named for it and shown as foreign text; paths are absolute, as
//! resolved. `Display` (logs, library users) prints the data, not words.

use std::path::PathBuf;

use crate::query::Invalid;

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
}

impl std::fmt::Display for Fact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fact::Refused(i) => write!(f, "{i}"),
            other => write!(f, "{other:?}"),
        }
    }
}
