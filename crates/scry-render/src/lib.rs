//! scry-render: the one place where operation answers ([`scry_model::Answer`])
//! become the text a model reads and the structured JSON scripts read.
//!
//! Both forms share the same choices: paths relative to the workspace root
//! (with `/`), locations grouped by file (workspace files first, then paths
//! outside it), sorted by line and column, de-duplicated, source lines trimmed
//! and clipped to 200 characters, at most [`RenderOptions::max_locations`]
//! items and about [`RenderOptions::max_chars`] characters, with an explicit
//! account of what was left out.
//!
//! The reports are worded here too, from scry-model's data: `status` (an
//! answer like the others), an index answer's label ([`index_label`]),
//! `scry doctor` ([`doctor_text`], [`doctor_json`]) and `scry daemon
//! status` ([`daemon_status_text`], [`daemon_status_json`]); every date,
//! age and uptime by one clock module.
//!
//! Errors ([`render_error`], [`error_json`], [`error_text`]) are rendered
//! from their parts ([`scry_model::Message`]): paths through [`display_path`]
//! like every other path, scry's text as written, and only a server's or a
//! tool's text (foreign parts) has the root string-replaced
//! (`scry_base::paths::relativise_text`); scry's own text never is.

use std::path::Path;

use scry_model::{Answer, OpError};
use serde_json::{Value, json};

mod clock;
mod common;
mod diagnostics;
mod edit;
mod edit_fact;
mod fact;
mod hover;
mod json;
mod map;
pub mod mcp;
mod msg;
mod reports;
mod text;
mod tool_fact;
mod usage_fact;
mod words;

pub use fact::fact;
pub use reports::{
    daemon_status_json, daemon_status_text, doctor_json, doctor_text, index_label, indexer_missing,
};
/// What the sentence macros ([`msg!`], [`msgf!`]) expand to.
#[doc(hidden)]
pub use scry_model as __model;
pub use words::{Dialect, memory_action};

/// Limits on what one rendering shows.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Most locations (references, symbols, callers, ...) listed.
    pub max_locations: usize,
    /// Most characters (not bytes) in the whole output.
    pub max_chars: usize,
    /// Whose syntax the arguments an answer suggests are written in.
    pub dialect: Dialect,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            max_locations: scry_model::limits::MAX_LOCATIONS,
            max_chars: scry_model::limits::MAX_CHARS,
            dialect: Dialect::default(),
        }
    }
}

/// Model-facing text. Never empty.
///
/// The first line says what was answered and where it was asked; then the
/// results; then what was left out, other declarations of the name, and notes.
/// When lists are capped the header gives the total found and how many are
/// shown (`95002 references to `qux` (at big.rb), 100 shown — …`), the file
/// asked about is listed first, and the last result line is `… N more references in M
/// files (...)`; when anything else is over `max_chars` the text is cut at a
/// line boundary and ends with `… output truncated at N characters (M more
/// lines)`.
pub fn render_text(answer: &Answer, workspace_root: &Path, opts: &RenderOptions) -> String {
    text::render(answer, workspace_root, opts)
}

/// Structured JSON with the same content and the same caps as
/// [`render_text`] (paths relative the same way; an `"omitted"` object says
/// what was left out: `{"count", "files", "reason"}` for lists, `{"chars",
/// "reason"}` for text and raw values).
///
/// Always present: `action`, `kind`, `question`, `server`, `asked_at`,
/// `others`, `partial`, `empty`, `empty_reason`, `notes`; then per kind
/// `locations`/`symbols`/`calls` with `total`, `text`, `result`, ...
pub fn render_json(answer: &Answer, workspace_root: &Path, opts: &RenderOptions) -> Value {
    json::render(answer, workspace_root, opts)
}

/// A reason or note ([`scry_model::Reason`]) as the answers word it, one
/// sentence without its final period (paths relative to the root).
pub fn reason_text(reason: &scry_model::Reason, workspace_root: &Path) -> String {
    words::reason(reason, workspace_root)
}

/// [`reason_text`], the arguments its errors name spelled in `dialect`.
pub fn reason_text_in(
    reason: &scry_model::Reason,
    workspace_root: &Path,
    dialect: Dialect,
) -> String {
    words::reason_in(reason, workspace_root, dialect)
}

/// How the asked position was found ([`scry_model::Via`]) as the answers
/// word it; empty when not said.
pub fn via_text(via: &scry_model::Via) -> String {
    words::via(via).unwrap_or_default()
}

/// The after-edit diagnostics delta (`Engine::diagnostics_after_edit`) as
/// text: `Diagnostics after the edit: 1 introduced, 2 resolved (pyright)`,
/// then `  + path:line:col  error[code] (source): message` lines for what
/// the edit introduced and `  - … (resolved)` lines for what it fixed, and a
/// `Note:` when results are still pending. For embedding in an edit answer.
pub fn render_delta_text(delta: &scry_model::DiagnosticsDelta, workspace_root: &Path) -> String {
    diagnostics::delta_text(delta, workspace_root)
}

/// The after-edit diagnostics delta as JSON: `introduced`, `resolved`
/// (diagnostic objects with relative paths), `more_introduced`,
/// `more_resolved`, `pending`, `checked_by`.
pub fn render_delta_json(delta: &scry_model::DiagnosticsDelta, workspace_root: &Path) -> Value {
    diagnostics::delta_json(delta, workspace_root)
}

/// The error message with paths inside `root` shown relative, on one line
/// (what [`render_error`] and [`error_json`] show).
pub fn error_message(err: &OpError, root: &Path) -> String {
    error_message_in(err, root, Dialect::Mcp)
}

/// [`error_message`], the arguments it names spelled in `dialect`
/// (`--timeout-ms` on the command line, `timeout_ms` in MCP).
pub fn error_message_in(err: &OpError, root: &Path, dialect: Dialect) -> String {
    error_text_in(err, root, dialect)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The message of an error (on as many lines as it has), its parts shown
/// for the model: each path with [`display_path`] (relative when inside the
/// root, control characters escaped), scry's own text as written, and only
/// foreign text (a server's, a linter's, a configuration error's message)
/// through [`relativise_text`], since only it can name the root as text.
///
/// [`relativise_text`]: scry_base::paths::relativise_text
///
/// Echoed input is bounded: a `quoted` span (how scry's messages quote a
/// symbol, a query, a name) over [`MAX_ECHO_CHARS`] characters and a path
/// over [`MAX_ECHO_PATH_CHARS`] are cut with `…` and their length said
/// (`` `xxxx…` (100000 characters) ``), so a huge argument never becomes
/// a huge error line.
pub fn error_text(err: &OpError, root: &Path) -> String {
    error_text_in(err, root, Dialect::Mcp)
}

/// [`error_text`], each argument, action and example question it names
/// ([`scry_model::Part::Arg`], `Action`, `Example`) spelled as `dialect`'s
/// front end takes it.
pub fn error_text_in(err: &OpError, root: &Path, dialect: Dialect) -> String {
    let mut out = Echo::default();
    message_into(&mut out, &fact::error_message(err), root, dialect);
    out.finish()
}

/// The sentence of `fact` alone (a front end's own refusal, whose code is
/// the front end's), shown as [`error_text_in`] shows a message.
pub fn fact_text(fact: &scry_model::Fact, root: &Path, dialect: Dialect) -> String {
    let mut out = Echo::default();
    message_into(&mut out, &fact::fact(fact), root, dialect);
    out.finish()
}

/// A message's parts onto `out`, as [`error_text_in`] shows them; a refused
/// question's own parts in its place.
fn message_into(out: &mut Echo, message: &scry_model::Message, root: &Path, dialect: Dialect) {
    for part in message.parts() {
        match part {
            scry_model::Part::Text(t) => out.text(t),
            scry_model::Part::Path(p) => {
                out.opaque(&clip_echo(&display_path(p, root), MAX_ECHO_PATH_CHARS))
            }
            scry_model::Part::Arg(a) => out.opaque(&dialect.flag(*a)),
            scry_model::Part::Action(a) => out.opaque(&dialect.action(*a)),
            scry_model::Part::Example(e) => out.opaque(&dialect.example(e)),
            scry_model::Part::Foreign(f) => {
                let f = scry_base::paths::relativise_text(f, root);
                let mut inner = Echo::default();
                inner.text(&f);
                out.opaque(&inner.finish());
            }
            scry_model::Part::Note(n) => {
                let mut inner = Echo::default();
                inner.text(&words::reason_in(n, root, dialect));
                out.opaque(&inner.finish());
            }
            scry_model::Part::Fact(f) => message_into(out, &fact::fact(f), root, dialect),
        }
    }
}

/// An error's text with each `quoted` span of scry's words (the caller's
/// symbol, query, name) bounded to [`MAX_ECHO_CHARS`] characters: cut
/// with `…`, its length said after the closing quote.
#[derive(Default)]
struct Echo {
    out: String,
    inside: bool,
    /// Characters of the open span so far.
    span: usize,
}

impl Echo {
    fn text(&mut self, t: &str) {
        for c in t.chars() {
            if c == '`' {
                self.out.push('`');
                if self.inside {
                    self.close();
                }
                self.inside = !self.inside;
                self.span = 0;
                continue;
            }
            if self.inside {
                self.span += 1;
                if self.span <= MAX_ECHO_CHARS {
                    self.out.push(c);
                } else if self.span == MAX_ECHO_CHARS + 1 {
                    // Over: the last character shown becomes the cut mark.
                    self.out.pop();
                    self.out.push('…');
                }
            } else {
                self.out.push(c);
            }
        }
    }

    /// A piece shown as it is (a path, a server's text).
    fn opaque(&mut self, t: &str) {
        self.out.push_str(t);
    }

    /// The marker of a span that was cut.
    fn close(&mut self) {
        if self.span > MAX_ECHO_CHARS {
            self.out.push_str(&format!(" ({} characters)", self.span));
        }
    }

    fn finish(mut self) -> String {
        if self.inside {
            self.close();
        }
        self.out
    }
}

/// Most characters of one `quoted` span an error shows (a symbol, query or
/// name as the caller gave it); longer ones are cut with a marker.
pub const MAX_ECHO_CHARS: usize = 200;
/// Most characters of one path an error shows (`PATH_MAX` is 4096 bytes:
/// only a path that names no file is longer).
pub const MAX_ECHO_PATH_CHARS: usize = 1024;

/// `s` cut to `max` characters (`…` at the cut) and its length said, when
/// longer; as it is otherwise.
fn clip_echo(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let n = s.chars().count();
    if n <= max {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(format!("{} ({n} characters)", common::clip(s, max)))
}

/// An error as one line: `error[FILE_NOT_FOUND]: file not found: src/x.rs`
/// (paths relative when inside the root).
pub fn render_error(err: &OpError, workspace_root: &Path) -> String {
    render_error_in(err, workspace_root, Dialect::Mcp)
}

/// [`render_error`] for `dialect`'s front end (the CLI passes
/// [`Dialect::Cli`]: `raise --timeout-ms`).
pub fn render_error_in(err: &OpError, workspace_root: &Path, dialect: Dialect) -> String {
    error_line(err.code(), &error_message_in(err, workspace_root, dialect))
}

/// `{"error": {"code": "FILE_NOT_FOUND", "message": "file not found: src/x.rs"}}`
pub fn error_json(err: &OpError, workspace_root: &Path) -> Value {
    error_json_in(err, workspace_root, Dialect::Mcp)
}

/// [`error_json`] for `dialect`'s front end.
pub fn error_json_in(err: &OpError, workspace_root: &Path, dialect: Dialect) -> Value {
    error_object(err.code(), &error_message_in(err, workspace_root, dialect))
}

/// The text shape of every error, from its code and its message as shown
/// (a front end that rewrites the message, as MCP's scrubbing does, words
/// it here too): `error[CODE]: message`.
pub fn error_line(code: &str, message: &str) -> String {
    format!("error[{code}]: {message}")
}

/// The JSON shape of every error: `{"error": {"code", "message"}}`.
pub fn error_object(code: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message}})
}

/// Path shown to the model: relative to the workspace root when inside it
/// (with `/` separators, `.` for the root itself), else as given (absolute).
///
/// Control characters and line/paragraph separators are escaped (`\n`,
/// `\t`, `\u{1b}`, …): a file name can never start a new answer line or
/// hide text. Every path an answer shows goes through here.
pub fn display_path(path: &Path, workspace_root: &Path) -> String {
    escape_controls(scry_base::paths::display(path, workspace_root))
}

/// `s` with control characters (C0, DEL, C1) and U+2028/U+2029 escaped as
/// Rust writes them; unchanged (no copy) when there are none.
fn escape_controls(s: String) -> String {
    let bad = |c: char| c.is_control() || c == '\u{2028}' || c == '\u{2029}';
    if !s.chars().any(bad) {
        return s;
    }
    s.chars()
        .map(|c| {
            if bad(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Hover normalisation: markdown kept readable, HTML tags stripped (`<br>` to
/// a newline, `<p>` to a paragraph break, `<li>` to `- `, `<code>` to
/// backticks, `<pre>` to a code fence), entities (`&lt; &gt; &amp; &quot;
/// &#39; &nbsp;` and numeric ones) decoded, whitespace compacted (runs of
/// blank lines to one, trailing spaces removed), horizontal rules between
/// sections kept as a single `---` line, code fences kept verbatim.
///
/// Tags are only recognised outside code spans and fences, and only for known
/// HTML names in lower case (or all upper case, longer than one letter), so
/// generics such as `Vec<T>`, `Foo<B>` or `Option<Code>` survive.
pub fn normalize_hover(raw: &str) -> String {
    hover::normalize_hover(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn display_path_relativises() {
        let root = Path::new("/ws/proj");
        assert_eq!(
            display_path(Path::new("/ws/proj/src/a.rs"), root),
            "src/a.rs"
        );
        assert_eq!(display_path(Path::new("/ws/proj"), root), ".");
        assert_eq!(
            display_path(Path::new("/ws/proj2/a.rs"), root),
            "/ws/proj2/a.rs"
        );
        assert_eq!(
            display_path(Path::new("/usr/lib/x.rs"), root),
            "/usr/lib/x.rs"
        );
        assert_eq!(
            display_path(Path::new("/ws/proj/src/a.rs"), Path::new("/ws/proj/")),
            "src/a.rs"
        );
    }

    #[test]
    fn control_characters_in_paths_are_escaped() {
        let root = Path::new("/ws/proj");
        assert_eq!(
            display_path(Path::new("/ws/proj/a\nerror[E1]: fake.py"), root),
            "a\\nerror[E1]: fake.py"
        );
        assert_eq!(
            display_path(
                Path::new("/elsewhere/t\tb\r\u{1b}[2J\u{85}\u{2028}.rs"),
                root
            ),
            "/elsewhere/t\\tb\\r\\u{1b}[2J\\u{85}\\u{2028}.rs"
        );
        assert_eq!(display_path(Path::new("/ws/proj/café.rs"), root), "café.rs");
        let e = OpError::FileNotFound(PathBuf::from("/ws/proj/x\ny.rs"));
        assert_eq!(
            render_error(&e, root),
            "error[FILE_NOT_FOUND]: file not found: x\\ny.rs"
        );
    }

    #[test]
    fn echoed_input_in_errors_is_bounded_with_a_marker() {
        let root = Path::new("/ws/proj");
        let long = "x".repeat(100_000);
        let e = OpError::SymbolNotFound(crate::msg!(
            format!("`{long}` does not occur in "),
            path("/ws/proj/a.py"),
            "; check the spelling"
        ));
        let line = render_error(&e, root);
        assert!(line.chars().count() < 400, "{line}");
        assert!(
            line.ends_with("…` (100000 characters) does not occur in a.py; check the spelling"),
            "{line}"
        );
        assert_eq!(line.matches('x').count(), MAX_ECHO_CHARS - 1);
        // At the bound, as it is; a path too long to name a file is cut.
        let at = "y".repeat(MAX_ECHO_CHARS);
        let e = OpError::SymbolNotFound(crate::msg!(format!("`{at}` is not here")));
        assert_eq!(
            render_error(&e, root),
            format!("error[SYMBOL_NOT_FOUND]: `{at}` is not here")
        );
        let e = OpError::FileNotFound(PathBuf::from(format!("/ws/proj/{long}.py")));
        let line = render_error(&e, root);
        assert!(
            line.ends_with("… (100003 characters)"),
            "{:.80}",
            &line[line.len() - 80..]
        );
        assert!(line.chars().count() < 1100);
        // A server's text quoting the input, too.
        let e = OpError::ServerError(crate::msg!(
            "pyright: ",
            foreign(format!("`{long}` is unknown"))
        ));
        assert!(render_error(&e, root).chars().count() < 400);
    }

    #[test]
    fn errors_are_one_line_with_relative_paths() {
        let root = Path::new("/ws/proj");
        let e = OpError::FileNotFound(PathBuf::from("/ws/proj/src/x.rs"));
        assert_eq!(
            render_error(&e, root),
            "error[FILE_NOT_FOUND]: file not found: src/x.rs"
        );
        let e = OpError::ServerError(crate::msg!(
            "rust-analyzer failed on ",
            path("/ws/proj/src/a.rs"),
            ":\n  ",
            foreign("boom")
        ));
        assert_eq!(
            render_error(&e, root),
            "error[SERVER_ERROR]: rust-analyzer failed on src/a.rs: boom"
        );
    }

    #[test]
    fn foreign_text_naming_the_root_is_relativised() {
        let root = Path::new("/ws/proj");
        let e = OpError::ServerError(crate::msg!(
            "pyright failed: ",
            foreign("cannot read /ws/proj/src/a.py (see /ws/project/b.py)")
        ));
        assert_eq!(
            render_error(&e, root),
            "error[SERVER_ERROR]: pyright failed: cannot read src/a.py (see /ws/project/b.py)"
        );
        // scry's own text is never rewritten: it carries paths as paths.
        let e = OpError::InvalidArgument("the root is /ws/proj/ here".into());
        assert_eq!(error_text(&e, root), "the root is /ws/proj/ here");
    }

    #[test]
    fn paths_outside_the_root_stay_absolute() {
        let root = Path::new("/ws/proj");
        let e = OpError::FileChanged(crate::msg!(
            path("/ws/proj2/a.rs"),
            " and ",
            path("/ws/proj/b.rs"),
            " changed since the server saw them"
        ));
        assert_eq!(
            render_error(&e, root),
            "error[FILE_CHANGED]: /ws/proj2/a.rs and b.rs changed since the server saw them"
        );
        assert_eq!(
            error_json(&e, root)["error"]["message"],
            "/ws/proj2/a.rs and b.rs changed since the server saw them"
        );
    }

    #[test]
    fn control_characters_in_message_paths_are_escaped() {
        let root = Path::new("/ws/proj");
        let e = OpError::EditRejected(crate::msg!(
            "cannot rename ",
            path("/ws/proj/a\nerror[E1]: b\u{1b}[2J.py"),
            "; nothing was changed"
        ));
        assert_eq!(
            render_error(&e, root),
            "error[EDIT_REJECTED]: cannot rename a\\nerror[E1]: b\\u{1b}[2J.py; nothing was changed"
        );
        assert_eq!(
            error_text(&e, root),
            "cannot rename a\\nerror[E1]: b\\u{1b}[2J.py; nothing was changed"
        );
        // Display (logs, library users) keeps the path as it is.
        assert!(e.to_string().contains("/ws/proj/a\nerror[E1]"));
    }
}
