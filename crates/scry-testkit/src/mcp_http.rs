//! Reading what `scry mcp --http` says, for end-to-end tests that speak
//! raw HTTP/1.1 to it: where it serves (from its start line) and an
//! answer's head and JSON-RPC messages (plain JSON or SSE `data:` lines).
//!
//! Invariants: nothing here opens a connection; the helpers only read text
//! a test already has, so blocking and async tests use them alike.

use serde_json::Value;

/// `host:port` from scry's start line (`scry mcp: serving
/// http://127.0.0.1:PORT/mcp over …`);
/// panics naming the line when it holds no loopback URL.
pub fn served_at(start_line: &str) -> String {
    let url = start_line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no URL in {start_line:?}"));
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string()
}

/// A whole HTTP answer split into its head (lower-cased) and the JSON-RPC
/// messages of its body: each line, or each SSE `data:` line, that parses
/// as a JSON object.
pub fn answer(text: &str) -> (String, Vec<Value>) {
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((text, ""));
    let messages = rest
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("data:").map(str::trim).unwrap_or(l);
            serde_json::from_str::<Value>(l)
                .ok()
                .filter(Value::is_object)
        })
        .collect();
    (head.to_ascii_lowercase(), messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_address_and_an_sse_answer() {
        let line = "scry mcp: serving http://127.0.0.1:4711/mcp over Streamable HTTP (workspace /w); send `Authorization: Bearer <token>` with the token in /t/tok\n";
        assert_eq!(served_at(line), "127.0.0.1:4711");
        let raw = "HTTP/1.1 200 OK\r\nMcp-Session-Id: abc\r\n\r\ndata: {\"id\":1}\r\n\r\ndata: \r\n: keep-alive\r\n{\"id\":2}\r\n";
        let (head, messages) = answer(raw);
        assert_eq!(head, "http/1.1 200 ok\r\nmcp-session-id: abc");
        assert_eq!(
            messages,
            vec![serde_json::json!({"id": 1}), serde_json::json!({"id": 2})]
        );
    }
}
