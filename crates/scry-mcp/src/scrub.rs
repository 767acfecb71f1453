//! Error text as a model may see it: one line, bounded, and without secrets.

use std::path::Path;

use scry_model::OpError;

/// Longest error message sent (characters).
pub const MAX_ERROR_CHARS: usize = 600;

/// Names of environment variables whose values never appear in output.
fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "KEY",
        "AUTH",
        "CREDENTIAL",
        "COOKIE",
        "SESSION",
        "PRIVATE",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// Values to redact: secret-looking variables of this process and every
/// value a configured server's `env` sets (those are passed to servers and
/// may be keys). Short values are left alone (they would mangle text).
pub fn secrets(server_env: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = std::env::vars_os()
        .filter_map(|(k, v)| {
            let k = k.to_str()?;
            let v = v.to_str()?;
            secret_name(k).then(|| v.to_string())
        })
        .chain(server_env)
        .filter(|v| v.chars().count() >= 6)
        .collect();
    // Longest first, so that a value containing another is replaced whole.
    out.sort_by_key(|v| std::cmp::Reverse(v.len()));
    out.dedup();
    out
}

/// One line: the first line of `text` that says something (server error
/// messages may carry stack traces after it), whitespace compacted, secrets
/// replaced by `[redacted]`, at most [`MAX_ERROR_CHARS`] characters.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut s = text.to_string();
    for v in secrets {
        if s.contains(v.as_str()) {
            s = s.replace(v.as_str(), "[redacted]");
        }
    }
    let first = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string();
    let dropped_lines = s.lines().filter(|l| !l.trim().is_empty()).count() > 1;
    let mut one = first.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > MAX_ERROR_CHARS {
        one = one.chars().take(MAX_ERROR_CHARS - 1).collect::<String>();
        one.push('…');
    } else if dropped_lines {
        one.push_str(" …");
    }
    if one.is_empty() {
        one = "unknown error".into();
    }
    one
}

/// A failed call: a stable code and one scrubbed, actionable line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub code: &'static str,
    pub message: String,
}

impl ToolError {
    pub fn new(code: &'static str, message: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
        }
    }

    /// From an operation error: the renderer's message (paths relative to
    /// the root), scrubbed.
    pub fn from_op(e: &OpError, root: &Path, secrets: &[String]) -> ToolError {
        let msg = match e {
            OpError::FileNotFound(_)
            | OpError::BinaryFile(_)
            | OpError::OutsideWorkspace { .. } => scry_render::error_message(e, root),
            // Keep the line structure for `scrub` (it keeps the first line:
            // servers put stack traces after it); paths relative like the CLI.
            other => scry_render::error_text(other, root),
        };
        ToolError {
            code: e.code(),
            message: scrub(&msg, secrets),
        }
    }

    /// A refusal of the MCP front end's own (`code`, and `fact` worded by
    /// the renderer).
    pub fn refused(code: &'static str, fact: scry_model::ToolFact) -> ToolError {
        let text = scry_render::fact_text(
            &scry_model::Fact::Tool(fact),
            Path::new(""),
            scry_render::Dialect::Mcp,
        );
        ToolError::new(code, text)
    }

    /// `error[CODE]: message`, the renderer's shape.
    pub fn text(&self) -> String {
        scry_render::error_line(self.code, &self.message)
    }

    /// `{"error": {"code", "message"}}`, the renderer's shape.
    pub fn json(&self) -> serde_json::Value {
        scry_render::error_object(self.code, &self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_bounded_redacted() {
        let secrets = vec!["s3cr3t-value".to_string()];
        let s = scrub(
            "server failed: token s3cr3t-value rejected\n  at foo.js:1\n  at bar.js:2",
            &secrets,
        );
        assert_eq!(s, "server failed: token [redacted] rejected …");
        let long = "x".repeat(5000);
        assert_eq!(scrub(&long, &[]).chars().count(), MAX_ERROR_CHARS);
        assert_eq!(scrub("\n\n", &[]), "unknown error");
    }

    #[test]
    fn secret_names() {
        assert!(secret_name("GITHUB_TOKEN"));
        assert!(secret_name("openai_api_key"));
        assert!(!secret_name("PATH"));
        assert!(!secret_name("HOME"));
    }
}
