//! The daemon's wire protocol: newline-delimited JSON frames over the Unix
//! socket, one JSON object a line.
//!
//! The client speaks first with [`ClientFrame::Hello`] (protocol and scry
//! version, and its session id); the daemon answers
//! [`DaemonFrame::Hello`] or [`DaemonFrame::Refused`] and closes — a
//! mismatch is a clear error, never a hang. Then the client sends calls
//! (the validated question, `scry_model::Valid`, with its time budget, cwd
//! and root, each with an id of its choosing; a question that does not
//! hold what validation guarantees is a malformed frame),
//! cancels, status or stop requests; the daemon sends progress lines and
//! one [`DaemonFrame::Answer`] per call: the engine's `Answer` or `OpError`,
//! never rendered text (rendering stays in the client, so the CLI's and
//! MCP's text are the same as in-process). A closed connection cancels the
//! client's calls.

use std::path::PathBuf;
use std::time::Duration;

use scry_model::{Answer, DaemonStatus, DiagnosticsDelta, OpError, Valid};
use scry_workspace::env::CallEnv;
use serde::{Deserialize, Serialize};

/// The longest frame read (an answer is bounded by the render limits; a
/// raw `request` result may be large): a longer line is an error and the
/// connection is closed ([`Frames`]).
pub const MAX_FRAME: usize = 256 * 1024 * 1024;

/// Frames read as lines of at most [`MAX_FRAME`] bytes.
pub struct Frames<R> {
    inner: tokio::io::BufReader<R>,
    buf: Vec<u8>,
    max: usize,
}

impl<R: tokio::io::AsyncRead + Unpin> Frames<R> {
    pub fn new(r: R) -> Frames<R> {
        Frames::bounded(r, MAX_FRAME)
    }

    /// Frames of at most `max` bytes (tests).
    pub fn bounded(r: R, max: usize) -> Frames<R> {
        Frames {
            inner: tokio::io::BufReader::new(r),
            buf: Vec::new(),
            max,
        }
    }

    /// The next frame without its newline; `None` at the end. A frame
    /// over the bound or not UTF-8 is an `InvalidData` error.
    pub async fn next_line(&mut self) -> std::io::Result<Option<String>> {
        use tokio::io::{AsyncBufReadExt, AsyncReadExt};
        self.buf.clear();
        let limit = self.max as u64 + 1;
        let n = (&mut self.inner)
            .take(limit)
            .read_until(b'\n', &mut self.buf)
            .await?;
        if n == 0 {
            return Ok(None);
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if n as u64 == limit {
            let max = self.max;
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a frame longer than {max} bytes"),
            ));
        }
        let line = std::mem::take(&mut self.buf);
        String::from_utf8(line)
            .map(Some)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }
}

/// What a client says.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientFrame {
    Hello {
        protocol: u32,
        version: String,
        /// The client's session (CLI call, MCP session): idempotency keys
        /// and once-per-session notices are kept per session.
        session: String,
    },
    Call(Box<Call>),
    /// Drop the call with this id (its upstream requests are cancelled).
    Cancel {
        id: u64,
    },
    Status,
    Stop,
}

/// One question: what a front end hands its answerer
/// (`crate::answer::Answerer`) and, with the id the client numbers it by,
/// the wire frame. A struct, so that what shapes a call travels with it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Call {
    /// Set by the daemon client (per connection); 0 before.
    pub id: u64,
    #[serde(with = "scry_model::os_path")]
    pub cwd: PathBuf,
    #[serde(with = "scry_model::os_path")]
    pub root: PathBuf,
    /// Validated once, by the front end.
    pub question: Valid,
    /// The call's budget (default from the workspace's configuration).
    #[serde(with = "scry_model::query::millis", rename = "timeout_ms")]
    pub timeout: Option<Duration>,
    /// The environment that shapes the call (the client's, captured when
    /// it asked); `None`: the daemon's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<CallEnv>,
}

impl Call {
    pub fn new(cwd: PathBuf, root: PathBuf, question: Valid, timeout: Option<Duration>) -> Call {
        Call {
            id: 0,
            cwd,
            root,
            question,
            timeout,
            env: None,
        }
    }
}

/// What the daemon says.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DaemonFrame {
    Hello {
        protocol: u32,
        version: String,
        pid: u32,
    },
    /// The hello was refused (version or protocol mismatch, …); the
    /// connection closes after it.
    Refused {
        message: String,
    },
    /// What a call waits for ("rust-analyzer: Indexing 45%…"), or `None`
    /// when it no longer waits.
    Progress {
        id: u64,
        line: Option<String>,
    },
    Answer(Box<Reply>),
    Status(Box<DaemonStatus>),
    /// The daemon is stopping (after `Stop`).
    Stopping {
        pid: u32,
    },
}

/// The answer to one call.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reply {
    pub id: u64,
    /// The workspace's canonical root (what paths are rendered against).
    #[serde(with = "scry_model::os_path")]
    pub root: PathBuf,
    pub max_locations: usize,
    pub max_chars: usize,
    pub result: CallResult,
    /// The diagnostics delta of an applied edit (the report does not carry
    /// it through serde: its journal copy must not replay a stale one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit_diagnostics: Option<DiagnosticsDelta>,
    /// Warnings for the user (a `--changes` baseline not saved, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Notes that came with an error (what recovery of a dead writer's
    /// edit did); an answer carries its notes itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<scry_model::Reason>,
}

/// How a call ended.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallResult {
    Answer(Box<Answer>),
    Error(OpError),
    /// The workspace's configuration could not be loaded.
    Config(String),
}

impl Reply {
    /// A reply about `root` with the default limits (the answerer sets the
    /// workspace's once it has it).
    pub fn new(id: u64, root: PathBuf, result: CallResult) -> Reply {
        Reply {
            id,
            root,
            max_locations: scry_model::limits::MAX_LOCATIONS,
            max_chars: scry_model::limits::MAX_CHARS,
            result,
            edit_diagnostics: None,
            warnings: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The answer with its edit diagnostics put back.
    pub fn into_result(self) -> Result<Result<Answer, OpError>, String> {
        match self.result {
            CallResult::Answer(mut a) => {
                if let scry_model::Body::Edit(r) = &mut a.body {
                    r.diagnostics = self.edit_diagnostics;
                }
                Ok(Ok(*a))
            }
            CallResult::Error(e) => Ok(Err(e)),
            CallResult::Config(m) => Err(m),
        }
    }
}

/// One frame as a line, or why it cannot be one.
pub fn try_encode<T: Serialize>(frame: &T) -> Result<Vec<u8>, String> {
    let mut v = serde_json::to_vec(frame).map_err(|e| e.to_string())?;
    v.push(b'\n');
    Ok(v)
}

/// One frame as a line. Frames are plain data (paths in the byte-exact
/// form of `scry_model::os_path`); one that still cannot be encoded is
/// replaced by a `Refused` frame saying why, so the peer hears of it.
/// A call's answer goes through [`encode_answer`] instead.
pub fn encode<T: Serialize>(frame: &T) -> Vec<u8> {
    try_encode(frame).unwrap_or_else(|e| {
        let mut v = serde_json::to_vec(&DaemonFrame::Refused {
            message: format!("cannot encode a frame: {e}"),
        })
        .unwrap_or_default();
        v.push(b'\n');
        v
    })
}

/// The answer frame of a call as a line. A reply that cannot be encoded
/// becomes an `INTERNAL` error reply to the same call (its id kept): a
/// call never ends without its answer frame, and the daemon serves on.
pub fn encode_answer(reply: Reply) -> Vec<u8> {
    encode_answer_with(reply, try_encode)
}

fn encode_answer_with(
    reply: Reply,
    enc: impl Fn(&DaemonFrame) -> Result<Vec<u8>, String>,
) -> Vec<u8> {
    let (id, root) = (reply.id, reply.root.clone());
    let frame = DaemonFrame::Answer(Box::new(reply));
    match enc(&frame) {
        Ok(line) => line,
        Err(e) => {
            tracing::error!(id, "cannot encode the answer: {e}");
            let error = OpError::Internal(
                scry_model::Message::new().fact(scry_model::Fact::AnswerNotEncoded { why: e }),
            );
            let frame = DaemonFrame::Answer(Box::new(Reply::new(
                id,
                root,
                CallResult::Error(error.clone()),
            )));
            enc(&frame).unwrap_or_else(|_| {
                encode(&DaemonFrame::Answer(Box::new(Reply::new(
                    id,
                    PathBuf::new(),
                    CallResult::Error(error),
                ))))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scry_model::{Action, Query};

    #[test]
    fn an_answer_that_cannot_be_encoded_is_an_internal_error_reply_to_its_call() {
        // An encoder that refuses answers (what serde's own PathBuf did
        // with a name that is not UTF-8) but not errors.
        let enc = |f: &DaemonFrame| match f {
            DaemonFrame::Answer(r) if matches!(r.result, CallResult::Answer(_)) => {
                Err("path contains invalid UTF-8 characters".to_string())
            }
            f => try_encode(f),
        };
        let answer = scry_model::Answer::new(
            Action::Request,
            Default::default(),
            scry_model::Body::Raw {
                method: "x".into(),
                result: serde_json::Value::Null,
            },
        );
        let reply = Reply::new(42, "/w".into(), CallResult::Answer(Box::new(answer)));
        let line = encode_answer_with(reply, enc);
        assert_eq!(line.last(), Some(&b'\n'));
        let DaemonFrame::Answer(r) = serde_json::from_slice(&line).unwrap() else {
            panic!("not an answer")
        };
        assert_eq!(r.id, 42);
        let e = r.into_result().unwrap().unwrap_err();
        assert_eq!(e.code(), "INTERNAL");
        assert!(e.to_string().contains("invalid UTF-8"), "{e}");
    }

    #[test]
    fn a_name_that_is_not_utf8_travels_in_an_answer_and_a_question() {
        // Not UTF-8 on every platform: raw bytes on Unix, a lone surrogate
        // (WTF-8) on Windows.
        let bad = PathBuf::from(
            scry_base::platform::os_str::from_bytes(b"/w/\xed\xa0\x80_x.rb".to_vec()).unwrap(),
        );
        let e = Reply::new(
            3,
            "/w".into(),
            CallResult::Error(OpError::FileNotFound(bad.clone())),
        );
        let back: DaemonFrame = serde_json::from_slice(&encode_answer(e)).unwrap();
        let DaemonFrame::Answer(r) = back else {
            panic!("not an answer")
        };
        assert_eq!(
            r.into_result().unwrap().unwrap_err(),
            OpError::FileNotFound(bad.clone())
        );
        let mut q = Query::new(Action::References);
        q.path = Some(bad.clone());
        q.symbol = Some("qux".into());
        let call = ClientFrame::Call(Box::new(Call::new(
            "/w".into(),
            "/w".into(),
            q.validate().unwrap(),
            None,
        )));
        let line = try_encode(&call).unwrap();
        let ClientFrame::Call(c) = serde_json::from_slice(&line).unwrap() else {
            panic!("not a call")
        };
        assert_eq!(c.question, q.validate().unwrap());
    }

    #[tokio::test]
    async fn a_frame_over_the_bound_is_an_error_not_a_read_without_end() {
        let input: &[u8] = b"{\"a\":1}\n0123456789abcdef\nlast";
        let mut f = Frames::bounded(input, 10);
        assert_eq!(f.next_line().await.unwrap().as_deref(), Some("{\"a\":1}"));
        let e = f.next_line().await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("10 bytes"), "{e}");
        let mut f = Frames::bounded(&b"exactly10!\nend"[..], 10);
        assert_eq!(f.next_line().await.unwrap().as_deref(), Some("exactly10!"));
        assert_eq!(f.next_line().await.unwrap().as_deref(), Some("end"));
        assert_eq!(f.next_line().await.unwrap(), None);
    }

    #[test]
    fn frames_round_trip() {
        let mut q = Query::new(Action::References);
        q.path = Some(PathBuf::from("/w/a.py"));
        q.symbol = Some("f".into());
        let f = ClientFrame::Call(Box::new(Call {
            id: 7,
            cwd: "/w".into(),
            root: "/w".into(),
            question: q.validate().unwrap(),
            timeout: Some(Duration::from_millis(1500)),
            env: Some(CallEnv::from_vars([("PATH".into(), "/a:/b".into())])),
        }));
        let line = encode(&f);
        assert_eq!(line.last(), Some(&b'\n'));
        let back: ClientFrame = serde_json::from_slice(&line).unwrap();
        let ClientFrame::Call(c) = back else {
            panic!("not a call")
        };
        assert_eq!(c.question, q.validate().unwrap());
        assert_eq!(c.timeout, Some(Duration::from_millis(1500)));
        assert_eq!(c.env.unwrap().get("PATH"), Some("/a:/b"));

        // A question no front end could send is a malformed frame.
        let mut v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        v["call"]["question"]["spot"]["in_file"]["line"] = 0.into();
        assert!(
            serde_json::from_value::<ClientFrame>(v.clone()).is_err(),
            "{v}"
        );
        v["call"]["question"]["spot"]["in_file"]["line"] = 3.into();
        v["call"]["question"]["action"] = "rename".into();
        assert!(
            serde_json::from_value::<ClientFrame>(v.clone()).is_err(),
            "{v}"
        );
        v["call"]["question"]["action"] = "hover".into();
        assert!(serde_json::from_value::<ClientFrame>(v).is_ok());

        let e = DaemonFrame::Answer(Box::new(Reply::new(
            7,
            "/w".into(),
            CallResult::Error(OpError::OutsideWorkspace {
                path: "/x".into(),
                root: "/w".into(),
            }),
        )));
        let back: DaemonFrame = serde_json::from_slice(&encode(&e)).unwrap();
        let DaemonFrame::Answer(r) = back else {
            panic!("not an answer")
        };
        assert_eq!(
            r.into_result().unwrap().unwrap_err().code(),
            "OUTSIDE_WORKSPACE"
        );
    }
}
