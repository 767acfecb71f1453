//! LSP base-protocol framing: `Content-Length: N\r\n\r\n` followed by N bytes of JSON.
//!
//! The reader is deliberately lenient, because real servers are sloppy:
//! header names are case-insensitive and may come in any order,
//! `Content-Type` (and any other well-formed header) is accepted and ignored,
//! lines may end in `\r\n` or a bare `\n`, and junk lines (a server printing
//! "Starting server..." to stdout) are skipped with a warning. A header
//! block that ends without a `Content-Length` is skipped too.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Longest header line kept in memory; longer lines are junk and are discarded
/// (still consumed up to their newline, so the stream stays in sync).
const MAX_HEADER_LINE: usize = 8 * 1024;

/// Errors produced while reading one framed message.
#[derive(Debug, thiserror::Error)]
pub enum FramingError {
    /// Reading from the underlying stream failed.
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// The announced `Content-Length` exceeds the limit; the body was not read,
    /// so the stream is no longer in sync.
    #[error("message of {len} bytes exceeds the limit of {max} bytes")]
    TooLarge { len: usize, max: usize },
    /// The stream ended inside a message (inside its headers or its body).
    #[error("stream ended in the middle of a message")]
    UnexpectedEof,
    /// A `Content-Length` header whose value is not a byte count; the stream is
    /// no longer in sync.
    #[error("invalid header: {0}")]
    InvalidHeader(String),
    /// The body was read completely but is not valid JSON. The stream is still
    /// in sync: the caller may keep reading.
    #[error("message body is not valid JSON: {0}")]
    InvalidJson(String),
}

impl FramingError {
    /// Whether the stream is still usable after this error (only [`FramingError::InvalidJson`]).
    pub fn is_recoverable(&self) -> bool {
        matches!(self, FramingError::InvalidJson(_))
    }
}

enum LineEnd {
    Newline,
    Eof,
}

/// Reads one line (terminator not included) into `line`, keeping at most `cap`
/// bytes. Returns how the line ended and whether it was truncated.
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<(LineEnd, bool)> {
    let mut truncated = false;
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            return Ok((LineEnd::Eof, truncated));
        }
        let (chunk, used, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = cap.saturating_sub(line.len());
        if chunk.len() > room {
            truncated = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        r.consume(used);
        if done {
            return Ok((LineEnd::Newline, truncated));
        }
    }
}

/// Splits a `Name: value` header line. The name must be a non-empty token.
fn parse_header(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.split_once(':')?;
    let is_token = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    is_token.then(|| (name, value.trim()))
}

/// Finds a `Content-Length:` header glued to the end of a junk line (a server
/// printing without a trailing newline right before a message).
fn find_glued_content_length(line: &str) -> Option<&str> {
    const NEEDLE: &[u8] = b"content-length:";
    let bytes = line.as_bytes();
    let pos = bytes
        .windows(NEEDLE.len())
        .position(|w| w.eq_ignore_ascii_case(NEEDLE))?;
    // `pos` is the start of an ASCII sequence, hence a char boundary.
    Some(&line[pos..])
}

/// Reads the next framed message.
///
/// Returns `Ok(None)` on a clean end of stream between messages (trailing junk
/// lines included). A body that is not valid JSON yields
/// [`FramingError::InvalidJson`] with the body consumed, so reading may continue.
pub async fn read_message<R: AsyncBufRead + Unpin>(
    r: &mut R,
    max_len: usize,
) -> Result<Option<serde_json::Value>, FramingError> {
    let mut content_length: Option<usize> = None;
    // Whether the current header block contains at least one real header.
    let mut in_headers = false;
    let mut line = Vec::new();
    let len = loop {
        line.clear();
        let (end, truncated) = read_line(r, &mut line, MAX_HEADER_LINE).await?;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if matches!(end, LineEnd::Eof) && line.is_empty() {
            if in_headers {
                return Err(FramingError::UnexpectedEof);
            }
            return Ok(None);
        }
        if line.is_empty() {
            match content_length {
                Some(len) => break len,
                None => {
                    if in_headers {
                        tracing::warn!("header block without Content-Length; skipping it");
                    }
                    in_headers = false;
                    continue;
                }
            }
        }
        let text = String::from_utf8_lossy(&line);
        let header = if truncated {
            None
        } else {
            parse_header(&text).or_else(|| {
                let glued = find_glued_content_length(&text)?;
                tracing::warn!(junk = %&text[..text.len() - glued.len()], "skipping junk before a header");
                parse_header(glued)
            })
        };
        match header {
            Some((name, value)) if name.eq_ignore_ascii_case("content-length") => {
                let len: usize = value.parse().map_err(|_| {
                    FramingError::InvalidHeader(format!("bad Content-Length value {value:?}"))
                })?;
                if len > max_len {
                    return Err(FramingError::TooLarge { len, max: max_len });
                }
                if content_length.is_some() {
                    tracing::warn!("duplicate Content-Length header; using the last one");
                }
                content_length = Some(len);
                in_headers = true;
            }
            Some((name, _)) => {
                if !name.eq_ignore_ascii_case("content-type") {
                    tracing::debug!(header = %name, "ignoring unknown header");
                }
                in_headers = true;
            }
            None => {
                tracing::warn!(line = %text, truncated, "skipping junk line in server output");
            }
        }
        if matches!(end, LineEnd::Eof) {
            if in_headers {
                return Err(FramingError::UnexpectedEof);
            }
            return Ok(None);
        }
    };

    let mut body = Vec::with_capacity(len.min(64 * 1024));
    (&mut *r).take(len as u64).read_to_end(&mut body).await?;
    if body.len() != len {
        return Err(FramingError::UnexpectedEof);
    }
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| FramingError::InvalidJson(e.to_string()))
}

/// Writes one framed message (`Content-Length` is the body's byte length) and flushes.
pub async fn write_message<W: AsyncWrite + Unpin>(
    w: &mut W,
    msg: &serde_json::Value,
) -> io::Result<()> {
    let body =
        serde_json::to_vec(msg).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(&body);
    w.write_all(&frame).await?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::{AsyncRead, BufReader, ReadBuf};

    const MAX: usize = 1 << 20;

    /// Yields one byte per read, returning `Pending` (and waking) in between.
    struct Trickle {
        data: Vec<u8>,
        pos: usize,
        ready: bool,
    }

    impl AsyncRead for Trickle {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            if !self.ready {
                self.ready = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.ready = false;
            if self.pos < self.data.len() {
                let b = self.data[self.pos];
                self.pos += 1;
                buf.put_slice(&[b]);
            }
            Poll::Ready(Ok(()))
        }
    }

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    async fn read_all(mut input: &[u8]) -> Vec<Result<serde_json::Value, String>> {
        let mut out = Vec::new();
        loop {
            match read_message(&mut input, MAX).await {
                Ok(Some(v)) => out.push(Ok(v)),
                Ok(None) => return out,
                Err(e) => {
                    let fatal = !e.is_recoverable();
                    out.push(Err(e.to_string()));
                    if fatal {
                        return out;
                    }
                }
            }
        }
    }

    #[tokio::test]
    async fn simple_message_and_clean_eof() {
        let input = frame(r#"{"a":1}"#);
        assert_eq!(read_all(input.as_bytes()).await, vec![Ok(json!({"a":1}))]);
        assert!(read_all(b"").await.is_empty());
    }

    #[tokio::test]
    async fn header_order_case_and_content_type() {
        let body = r#"{"x":true}"#;
        let input = format!(
            "content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: {}\r\n\r\n{body}",
            body.len()
        );
        assert_eq!(
            read_all(input.as_bytes()).await,
            vec![Ok(json!({"x":true}))]
        );
    }

    #[tokio::test]
    async fn bare_newline_headers() {
        let body = r#"{"n":1}"#;
        let input = format!("Content-Length: {}\nContent-Type: x\n\n{body}", body.len());
        assert_eq!(read_all(input.as_bytes()).await, vec![Ok(json!({"n":1}))]);
    }

    #[tokio::test]
    async fn junk_lines_are_skipped() {
        let input = format!(
            "Starting server...\nlistening on stdio\r\n\r\n{}\nwhat a nice day\n{}",
            frame(r#"{"a":1}"#),
            frame(r#"{"b":2}"#)
        );
        assert_eq!(
            read_all(input.as_bytes()).await,
            vec![Ok(json!({"a":1})), Ok(json!({"b":2}))]
        );
    }

    #[tokio::test]
    async fn header_glued_to_junk_is_recovered() {
        let input = format!("booting...{}{}", frame(r#"{"a":1}"#), frame(r#"{"b":2}"#));
        assert_eq!(
            read_all(input.as_bytes()).await,
            vec![Ok(json!({"a":1})), Ok(json!({"b":2}))]
        );
    }

    #[tokio::test]
    async fn trailing_junk_is_clean_eof() {
        let input = format!("{}goodbye", frame("1"));
        assert_eq!(read_all(input.as_bytes()).await, vec![Ok(json!(1))]);
    }

    #[tokio::test]
    async fn coalesced_messages() {
        let input: String = (0..5).map(|i| frame(&format!(r#"{{"i":{i}}}"#))).collect();
        let got = read_all(input.as_bytes()).await;
        let want: Vec<_> = (0..5).map(|i| Ok(json!({ "i": i }))).collect();
        assert_eq!(got, want);
    }

    #[tokio::test]
    async fn one_byte_reads() {
        let body = r#"{"text":"é😀","k":[1,2,3]}"#;
        assert_ne!(body.len(), body.chars().count());
        let input = format!("Junk\n{}{}", frame(body), frame("null"));
        let trickle = Trickle {
            data: input.into_bytes(),
            pos: 0,
            ready: false,
        };
        let mut r = BufReader::with_capacity(1, trickle);
        let v = read_message(&mut r, MAX).await.unwrap().unwrap();
        assert_eq!(v, json!({"text":"é😀","k":[1,2,3]}));
        assert_eq!(read_message(&mut r, MAX).await.unwrap(), Some(json!(null)));
        assert_eq!(read_message(&mut r, MAX).await.unwrap(), None);
    }

    #[tokio::test]
    async fn split_writes_over_duplex() {
        let (client, mut server) = tokio::io::duplex(16);
        let body = r#"{"s":"naïve — ok"}"#;
        let data = format!("{}{}", frame(body), frame("[]")).into_bytes();
        let writer = tokio::spawn(async move {
            for chunk in data.chunks(3) {
                server.write_all(chunk).await.unwrap();
                tokio::task::yield_now().await;
            }
        });
        let mut r = BufReader::new(client);
        assert_eq!(
            read_message(&mut r, MAX).await.unwrap(),
            Some(json!({"s":"naïve — ok"}))
        );
        assert_eq!(read_message(&mut r, MAX).await.unwrap(), Some(json!([])));
        writer.await.unwrap();
        assert_eq!(read_message(&mut r, MAX).await.unwrap(), None);
    }

    #[tokio::test]
    async fn write_uses_byte_length_and_round_trips() {
        let msg = json!({"text":"é😀"});
        let mut out = Vec::new();
        write_message(&mut out, &msg).await.unwrap();
        let body = serde_json::to_vec(&msg).unwrap();
        let expected_header = format!("Content-Length: {}\r\n\r\n", body.len());
        assert!(out.starts_with(expected_header.as_bytes()));
        assert_eq!(out.len(), expected_header.len() + body.len());
        assert_eq!(read_all(&out).await, vec![Ok(msg)]);
    }

    #[tokio::test]
    async fn too_large() {
        let input = "Content-Length: 100\r\n\r\n";
        let mut r = input.as_bytes();
        match read_message(&mut r, 10).await {
            Err(FramingError::TooLarge { len: 100, max: 10 }) => {}
            other => panic!("unexpected {other:?}"),
        }
    }

    #[tokio::test]
    async fn eof_mid_body_and_mid_headers() {
        let mut r: &[u8] = b"Content-Length: 10\r\n\r\n{\"a\":";
        assert!(matches!(
            read_message(&mut r, MAX).await,
            Err(FramingError::UnexpectedEof)
        ));
        let mut r: &[u8] = b"Content-Length: 10\r\n";
        assert!(matches!(
            read_message(&mut r, MAX).await,
            Err(FramingError::UnexpectedEof)
        ));
    }

    #[tokio::test]
    async fn invalid_content_length() {
        let mut r: &[u8] = b"Content-Length: lots\r\n\r\n{}";
        assert!(matches!(
            read_message(&mut r, MAX).await,
            Err(FramingError::InvalidHeader(_))
        ));
    }

    #[tokio::test]
    async fn invalid_json_then_valid_message() {
        let input = format!("{}{}", frame("{not json"), frame(r#"{"ok":1}"#));
        let got = read_all(input.as_bytes()).await;
        assert_eq!(got.len(), 2);
        assert!(got[0].as_ref().unwrap_err().contains("not valid JSON"));
        assert_eq!(got[1], Ok(json!({"ok":1})));
    }

    #[tokio::test]
    async fn header_block_without_length_is_skipped() {
        let input = format!("Content-Type: foo\r\n\r\n{}", frame("2"));
        assert_eq!(read_all(input.as_bytes()).await, vec![Ok(json!(2))]);
    }
}
