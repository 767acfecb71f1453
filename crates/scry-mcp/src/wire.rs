//! Reading the stdio transport: newline-delimited JSON-RPC lines, bounded,
//! and every line that cannot become a message answered as JSON-RPC says —
//! never silence, never a crash, nothing run.
//!
//! * A line over [`MAX_MESSAGE_BYTES`] is never buffered whole: its first
//!   [`HEAD_BYTES`] and last [`TAIL_BYTES`] are kept (to read its `id`), the
//!   rest is dropped as it arrives, and it gets `-32600` with its id when the
//!   id could be read, else `null`.
//! * Not JSON: `-32700` (parse error), id `null`.
//! * JSON but not a request object (a batch, a scalar, `jsonrpc` not
//!   `"2.0"`, a `method` that is not a string): `-32600`, with the id when
//!   there is one.
//! * A known MCP method that needs params without them (`tools/call` with
//!   no params or no tool `name`): `-32602`, with the id.
//! * Other lines that rmcp cannot type: requests get `-32602` (a known
//!   method) or `-32601`; notifications are ignored (JSON-RPC never answers
//!   them; rmcp ignores unknown ones too).
//!
//! Reading is cancellation safe ([`LineReader::next`] is polled inside a
//! `select!`): partial lines live in the reader, bytes are consumed only
//! after they are copied or deliberately dropped.

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::service::RxJsonRpcMessage;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// The largest message read (16 MiB, as rmcp's own stdio default).
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Bytes kept from the start of an oversized line to find its id.
pub const HEAD_BYTES: usize = 64 * 1024;
/// Bytes kept from the end of an oversized line (an id written last).
pub const TAIL_BYTES: usize = 4 * 1024;

/// MCP request methods whose params are required.
const NEEDS_PARAMS: [&str; 8] = [
    "initialize",
    "tools/call",
    "prompts/get",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
];

/// What one read produced.
pub enum Incoming {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// An error response to write back (the line was not run).
    Reply(Value),
    /// The client closed its side (or reading failed).
    Eof,
}

/// An oversized line being skipped.
struct Oversized {
    head: Vec<u8>,
    tail: Vec<u8>,
    len: usize,
}

impl Oversized {
    fn feed(&mut self, bytes: &[u8]) {
        self.len += bytes.len();
        if self.head.len() < HEAD_BYTES {
            let n = (HEAD_BYTES - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
        }
        self.tail
            .extend_from_slice(&bytes[bytes.len().saturating_sub(TAIL_BYTES)..]);
        if self.tail.len() > TAIL_BYTES {
            self.tail.drain(..self.tail.len() - TAIL_BYTES);
        }
    }
}

/// Bounded newline-delimited reader (see the module documentation).
pub struct LineReader<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    max: usize,
    oversized: Option<Oversized>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(read: R, max: usize) -> LineReader<R> {
        LineReader {
            read: BufReader::new(read),
            line: Vec::new(),
            max,
            oversized: None,
        }
    }

    /// The next message, or the error reply to a line that is none.
    pub async fn next(&mut self) -> Incoming {
        loop {
            match self.read_line().await {
                Line::Eof => return Incoming::Eof,
                Line::Oversized(o) => return Incoming::Reply(oversized_reply(&o, self.max)),
                Line::Whole => {
                    let line = std::mem::take(&mut self.line);
                    if let Some(incoming) = classify(&line) {
                        return incoming;
                    }
                }
            }
        }
    }

    async fn read_line(&mut self) -> Line {
        loop {
            let (consumed, done) = {
                let available = match self.read.fill_buf().await {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::debug!("MCP input closed: {e}");
                        return Line::Eof;
                    }
                };
                if available.is_empty() {
                    return Line::Eof;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                let chunk = &available[..take];
                if let Some(o) = &mut self.oversized {
                    o.feed(chunk);
                } else if self.line.len() + take > self.max {
                    let mut o = Oversized {
                        head: Vec::new(),
                        tail: Vec::new(),
                        len: 0,
                    };
                    o.feed(&std::mem::take(&mut self.line));
                    o.feed(chunk);
                    self.oversized = Some(o);
                } else {
                    self.line.extend_from_slice(chunk);
                }
                (take, newline.is_some())
            };
            self.read.consume(consumed);
            if done {
                return match self.oversized.take() {
                    Some(o) => Line::Oversized(o),
                    None => Line::Whole,
                };
            }
        }
    }
}

enum Line {
    Whole,
    Oversized(Oversized),
    Eof,
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn oversized_reply(o: &Oversized, max: usize) -> Value {
    let id = head_id(&o.head)
        .or_else(|| tail_id(&o.tail))
        .unwrap_or(Value::Null);
    tracing::warn!(
        bytes = o.len,
        max,
        "MCP message over the size limit: refused"
    );
    let mut v = error(
        id,
        -32600,
        format!(
            "Invalid Request: the message is {} bytes, over the limit of {max} bytes; nothing was run",
            o.len
        ),
    );
    v["error"]["data"] = json!({"bytes": o.len, "limit": max});
    v
}

/// Classify one whole line: `None` when there is nothing to do (a blank
/// line, a notification rmcp cannot type).
fn classify(line: &[u8]) -> Option<Incoming> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Some(Incoming::Reply(error(
                Value::Null,
                -32700,
                format!("Parse error: the line is not JSON ({e})"),
            )));
        }
    };
    let invalid = |id: Value, why: &str| {
        Some(Incoming::Reply(error(
            id,
            -32600,
            format!("Invalid Request: {why}"),
        )))
    };
    let Value::Object(obj) = &value else {
        return invalid(
            Value::Null,
            if value.is_array() {
                "batches are not supported; send one JSON-RPC object per line"
            } else {
                "a message must be a JSON object"
            },
        );
    };
    let id = match obj.get("id") {
        None => None,
        Some(v @ (Value::Number(_) | Value::String(_))) => Some(v.clone()),
        Some(Value::Null) => Some(Value::Null),
        Some(_) => return invalid(Value::Null, "\"id\" must be a string or a number"),
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(reply_id, "\"jsonrpc\" must be \"2.0\"");
    }
    let method = match obj.get("method") {
        None => None,
        Some(Value::String(m)) => Some(m.as_str()),
        Some(_) => return invalid(reply_id, "\"method\" must be a string"),
    };
    if let (Some(m), Some(id)) = (method, &id)
        && NEEDS_PARAMS.contains(&m)
    {
        let params = obj.get("params");
        let missing = match params {
            Some(Value::Object(p)) => {
                m == "tools/call" && !p.get("name").is_some_and(Value::is_string)
            }
            _ => true,
        };
        if missing {
            let what = if m == "tools/call" {
                "tools/call needs params {\"name\": TOOL, \"arguments\": {...}}".to_string()
            } else {
                format!("{m} needs params (an object)")
            };
            return Some(Incoming::Reply(error(
                id.clone(),
                -32602,
                format!("Invalid params: {what}"),
            )));
        }
    }
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        // rmcp types a standard method whose params do not fit as a custom
        // request, which would be answered "method not found".
        Ok(JsonRpcMessage::Request(r))
            if matches!(r.request, ClientRequest::CustomRequest(_))
                && method.is_some_and(|m| NEEDS_PARAMS.contains(&m) || is_mcp_request(m)) =>
        {
            let m = method.unwrap_or_default();
            let what = if m == "tools/call" {
                "params must be {\"name\": string, \"arguments\": object}"
            } else {
                "the params do not match the MCP schema"
            };
            Some(Incoming::Reply(error(
                reply_id,
                -32602,
                format!("Invalid params for {m}: {what}"),
            )))
        }
        Ok(msg) => Some(Incoming::Message(Box::new(msg))),
        Err(e) => match (method, id) {
            (_, None) => {
                tracing::debug!("ignoring a notification that cannot be read: {e}");
                None
            }
            (Some(m), Some(id)) if NEEDS_PARAMS.contains(&m) || is_mcp_request(m) => Some(
                Incoming::Reply(error(id, -32602, format!("Invalid params for {m}: {e}"))),
            ),
            (Some(m), Some(id)) => Some(Incoming::Reply(error(
                id,
                -32601,
                format!("Method not found: {m}"),
            ))),
            (None, Some(id)) => invalid(id, &format!("not a request or response: {e}")),
        },
    }
}

fn is_mcp_request(m: &str) -> bool {
    matches!(
        m,
        "ping" | "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list"
    )
}

/// The top-level `"id"` of a JSON object whose text starts with `bytes`
/// (possibly cut anywhere): `None` when it is not within them.
fn head_id(bytes: &[u8]) -> Option<Value> {
    let mut s = Scan { b: bytes, i: 0 };
    s.ws();
    s.eat(b'{')?;
    loop {
        s.ws();
        let is_id = s.string()? == b"\"id\"";
        s.ws();
        s.eat(b':')?;
        s.ws();
        if is_id {
            return s.scalar();
        }
        s.skip_value()?;
        s.ws();
        match s.peek()? {
            b',' => s.i += 1,
            _ => return None,
        }
    }
}

/// The `"id"` of a JSON object whose text ends with `bytes`, when the id is
/// its last member (`…, "id": 7}`).
fn tail_id(bytes: &[u8]) -> Option<Value> {
    let t = bytes.trim_ascii_end();
    let t = t.strip_suffix(b"}")?.trim_ascii_end();
    let start = if t.last() == Some(&b'"') {
        let body = &t[..t.len() - 1];
        let q = body.iter().rposition(|&c| c == b'"')?;
        if q > 0 && body[q - 1] == b'\\' {
            return None;
        }
        q
    } else {
        t.iter()
            .rposition(|c| !(c.is_ascii_digit() || *c == b'-'))
            .map_or(0, |p| p + 1)
    };
    let value: Value = serde_json::from_slice(&t[start..]).ok()?;
    if !(value.is_string() || value.is_i64() || value.is_u64()) {
        return None;
    }
    let before = t[..start]
        .trim_ascii_end()
        .strip_suffix(b":")?
        .trim_ascii_end();
    let before = before.strip_suffix(b"\"id\"")?.trim_ascii_end();
    matches!(before.last(), Some(b',' | b'{')).then_some(value)
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A whole string token, quotes included (raw bytes).
    fn string(&mut self) -> Option<&'_ [u8]> {
        let start = self.i;
        self.eat(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(&self.b[start..self.i]);
                }
                _ => self.i += 1,
            }
        }
    }

    /// A string or integer id (or `null`).
    fn scalar(&mut self) -> Option<Value> {
        let start = self.i;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'n' => {
                return (self.b.get(self.i..self.i + 4)? == b"null").then_some(Value::Null);
            }
            _ => {
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == b'-') {
                    self.i += 1;
                }
                // the number must be complete (a delimiter follows)
                if !matches!(self.peek()?, b',' | b'}') && !self.peek()?.is_ascii_whitespace() {
                    return None;
                }
            }
        }
        let v: Value = serde_json::from_slice(&self.b[start..self.i]).ok()?;
        (v.is_string() || v.is_i64() || v.is_u64()).then_some(v)
    }

    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.i += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.i += 1;
                }
                b',' if depth == 0 => return Some(()),
                _ => self.i += 1,
            }
            if depth == 0 && matches!(self.peek(), Some(b',' | b'}') | None) {
                // a complete scalar or container at the top level
                self.peek()?;
                return Some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_the_head() {
        assert_eq!(
            head_id(br#"{"jsonrpc":"2.0","id":7,"method":"x""#),
            Some(json!(7))
        );
        assert_eq!(head_id(br#" { "id" : "a\"b" , "#), Some(json!("a\"b")));
        assert_eq!(
            head_id(br#"{"params":{"id":1,"x":[1,{"id":2}]},"method":"m","id":3,"#),
            Some(json!(3))
        );
        // cut before the id, or inside it
        assert_eq!(head_id(br#"{"params":{"id":1,"x":"aaaa"#), None);
        assert_eq!(head_id(br#"{"id":12"#), None);
        assert_eq!(head_id(br#"{"id":1.5,"#), None);
        assert_eq!(head_id(br#"[{"id":1}]"#), None);
    }

    #[test]
    fn ids_from_the_tail() {
        assert_eq!(tail_id(b"aaaa\"},\"id\":42}\n"), Some(json!(42)));
        assert_eq!(
            tail_id(b"xx\"}, \"id\" : \"req-1\" }\r\n"),
            Some(json!("req-1"))
        );
        // nested ids are not the message's
        assert_eq!(tail_id(b"{\"id\":5}}"), None);
        assert_eq!(tail_id(b"x\\\"id\\\":5}\"}"), None);
        assert_eq!(tail_id(b"aaaa"), None);
    }

    fn reply(line: &str) -> Value {
        match classify(line.as_bytes()) {
            Some(Incoming::Reply(v)) => v,
            Some(Incoming::Message(m)) => panic!("{line}: parsed as {m:?}"),
            _ => panic!("{line}: nothing"),
        }
    }

    #[test]
    fn malformed_lines_get_json_rpc_errors() {
        let r = reply("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":");
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        let r = reply("not json at all");
        assert_eq!(r["error"]["code"], -32700);
        let r = reply(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (Value::Null, json!(-32600))
        );
        let r = reply("42");
        assert_eq!(r["error"]["code"], -32600);
        let r = reply(r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#);
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(9), json!(-32600))
        );
        let r = reply(r#"{"jsonrpc":"2.0","id":"s","method":5}"#);
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!("s"), json!(-32600))
        );
        let r = reply(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
        assert_eq!(r["error"]["code"], -32600);
        // tools/call without params, or without a tool name
        for line in [
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":null}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[1]}"#,
        ] {
            let r = reply(line);
            assert_eq!(
                (r["id"].clone(), r["error"]["code"].clone()),
                (json!(4), json!(-32602)),
                "{line}"
            );
        }
        // params of the wrong shape for a known method
        let r = reply(
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"lsp","arguments":7}}"#,
        );
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(5), json!(-32602))
        );
        // well-formed messages pass; blank lines and unknown notifications are nothing
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lsp","arguments":{}}}"#),
            Some(Incoming::Message(_))
        ));
        assert!(matches!(
            classify(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n"),
            Some(Incoming::Message(_))
        ));
        assert!(classify(b"  \r\n").is_none());
        // a notification is never answered, whatever it is
        for line in [
            &br#"{"jsonrpc":"2.0","method":"$/lsp/thing","params":{}}"#[..],
            br#"{"jsonrpc":"2.0","method":"tools/call"}"#,
        ] {
            assert!(!matches!(classify(line), Some(Incoming::Reply(_))));
        }
    }

    #[tokio::test]
    async fn oversized_lines_are_answered_and_skipped() {
        let big = "x".repeat(300);
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{{\"name\":\"lsp\",\"arguments\":{{\"path\":\"{big}\"}}}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{{\"name\":\"{big}\"}},\"id\":\"late\"}}\n\
             {{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{{\"name\":\"{big}\"\n\
             {{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}}\n"
        );
        let (mut w, r) = tokio::io::duplex(64);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            w.write_all(input.as_bytes()).await.unwrap();
        });
        let mut lr = LineReader::new(r, 200);
        let mut got = Vec::new();
        loop {
            match lr.next().await {
                Incoming::Eof => break,
                Incoming::Reply(v) => got.push(v),
                Incoming::Message(m) => got.push(serde_json::to_value(&*m).unwrap()),
            }
        }
        writer.await.unwrap();
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(
            (got[0]["id"].clone(), got[0]["error"]["code"].clone()),
            (json!(11), json!(-32600))
        );
        assert!(
            got[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("over the limit of 200 bytes")
        );
        assert_eq!(got[1]["id"], "late");
        assert_eq!(
            (got[2]["id"].clone(), got[2]["error"]["code"].clone()),
            (Value::Null, json!(-32600))
        );
        assert_eq!(got[3]["method"], "ping");
        assert_eq!(got[3]["id"], 3);
    }
}
