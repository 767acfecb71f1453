//! The checks of the `mcp_args` fuzz target (`fuzz/`), shared with the unit
//! test that replays the committed corpus on stable. Not an API: only
//! compiled for tests and with the `fuzzing` feature.
//!
//! One input = a tool (`lsp` or `lsp_edit`) and its JSON arguments: the
//! input as JSON when it is an object, else an object built from the bytes
//! (known and unknown keys; strings, numbers, booleans, nulls, arrays and
//! objects, with paths that escape the workspace, globs, symlinks, control
//! characters). Validation must never panic, must be deterministic, must
//! touch no file, and what it accepts must hold: the action belongs to the
//! tool, `lsp` never applies, positions are 1-based, the budget is capped,
//! every path is inside the workspace. A refusal renders to a coded error.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rmcp::model::JsonObject;
use scry_model::{OpError, Valid};
use scry_ops::Engine;
use scry_workspace::Workspace;
use serde_json::{Value, json};

use crate::args;
use crate::scrub::ToolError;
use scry_model::limits::MAX_TIMEOUT_MS;

use crate::tools::{self, LSP, LSP_EDIT};

struct Fixture {
    engine: Engine,
    root: PathBuf,
    base: PathBuf,
}

/// A small workspace (and a file beside it) made once per process.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let base = scry_base::dirs::scratch("scry-fuzz-args");
        let root = base.join("ws");
        for d in ["src", "dir/sub", "-h"] {
            std::fs::create_dir_all(root.join(d)).expect("fixture dirs");
        }
        std::fs::create_dir_all(base.join("outside")).expect("fixture dirs");
        for (f, text) in [
            ("src/lib.rs", "pub fn total() -> u32 { 1 }\n"),
            ("app.py", "def total():\n    return 1\n"),
            ("dir/sub/x.ts", "export const x = 1;\n"),
            ("-h.py", "x = 1\n"),
        ] {
            std::fs::write(root.join(f), text).expect("fixture files");
        }
        std::fs::write(base.join("outside/secret.txt"), "secret\n").expect("fixture files");
        #[cfg(unix)]
        {
            let _ = std::os::unix::fs::symlink("../outside/secret.txt", root.join("link_out"));
            let _ = std::os::unix::fs::symlink("../outside", root.join("dir_out"));
        }
        let root = scry_base::paths::canonical(&root).expect("canonical root");
        let ws = Workspace::with_config(root.clone(), Default::default()).with_log_dir(None);
        Fixture {
            engine: Engine::new(Arc::new(ws)),
            base: scry_base::paths::canonical(&base).expect("canonical base"),
            root,
        }
    })
}

/// Every path under `dir` with its size and kind (to prove nothing changed).
fn tree(dir: &Path, out: &mut Vec<(PathBuf, u64, bool)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(m) = p.symlink_metadata() else {
            continue;
        };
        out.push((p.clone(), m.len(), m.is_dir()));
        if m.is_dir() {
            tree(&p, out);
        }
    }
}

/// The argument names the decoder draws from: every name the two tools
/// accept (from [`crate::tools`], so a new argument is fuzzed too), an
/// unknown one and the empty one.
fn keys() -> &'static [&'static str] {
    static K: OnceLock<Vec<&'static str>> = OnceLock::new();
    K.get_or_init(|| {
        let mut k: Vec<&str> = Vec::new();
        for n in crate::tools::lsp_args()
            .iter()
            .chain(crate::tools::edit_args())
            .chain(&["unknown", ""])
        {
            if !k.contains(n) {
                k.push(n);
            }
        }
        k
    })
}

const STRINGS: &[&str] = &[
    "definition",
    "references",
    "hover",
    "symbols",
    "workspace_symbols",
    "diagnostics",
    "rename",
    "code_actions",
    "status",
    "capabilities",
    "undo",
    "request",
    "reload",
    "incoming_calls",
    "src/lib.rs",
    "app.py",
    "-h.py",
    "./-h.py",
    "dir",
    "dir/sub/x.ts",
    "src/**/*.rs",
    "*",
    ".",
    "",
    " ",
    "../outside/secret.txt",
    "link_out",
    "dir_out/secret.txt",
    "dir/../../outside/secret.txt",
    "/etc/passwd",
    "/",
    "missing.rs",
    "src/../app.py",
    "total",
    "Inventory::restock",
    "a\nb",
    "\u{0}",
    "é😀",
    "error",
    "warning",
    "all",
    "true",
    "false",
    "12",
    "-1",
    "0",
    "textDocument/foldingRange",
    "{\"a\":1}",
    "{not json",
];

/// Reads bytes as a JSON value (bounded depth).
fn value(bytes: &mut impl Iterator<Item = u8>, depth: u32) -> Value {
    let Some(tag) = bytes.next() else {
        return Value::Null;
    };
    let arg = bytes.next().unwrap_or(0);
    match tag % 9 {
        0..=2 => {
            let mut s = STRINGS[usize::from(arg) % STRINGS.len()].to_string();
            if tag & 0x80 != 0 {
                // Odd bytes appended: control characters, non-ASCII.
                s.push(char::from(bytes.next().unwrap_or(0)));
            }
            Value::String(s)
        }
        3 => json!(i64::from(arg as i8)),
        4 => match arg % 8 {
            0 => json!(0),
            1 => json!(u64::from(u32::MAX) + 1),
            2 => json!(1.5),
            3 => json!(120_001),
            4 => json!(-1.0),
            5 => json!(i64::MIN),
            6 => json!(3.0),
            _ => json!(f64::MAX),
        },
        5 => Value::Bool(arg & 1 == 1),
        6 => Value::Null,
        7 if depth < 3 => Value::Array((0..arg % 4).map(|_| value(bytes, depth + 1)).collect()),
        _ if depth < 3 => Value::Object(object(bytes, arg % 4, depth + 1)),
        _ => Value::Null,
    }
}

fn object(bytes: &mut impl Iterator<Item = u8>, n: u8, depth: u32) -> JsonObject {
    let mut m = JsonObject::new();
    for _ in 0..n {
        let Some(k) = bytes.next() else { break };
        let key = keys()[usize::from(k) % keys().len()].to_string();
        m.insert(key, value(bytes, depth));
    }
    m
}

/// The tool and arguments an input stands for.
pub fn decode(data: &[u8]) -> (&'static str, Option<JsonObject>) {
    let Some((&head, rest)) = data.split_first() else {
        return (LSP, None);
    };
    let tool = if head & 1 == 0 { LSP } else { LSP_EDIT };
    if head & 2 != 0 {
        return (tool, None);
    }
    if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(rest) {
        return (tool, Some(m));
    }
    let mut bytes = rest.iter().copied();
    (tool, Some(object(&mut bytes, 16, 0)))
}

fn outcome(r: &Result<args::ToolCall, OpError>) -> String {
    match r {
        Ok(c) => format!("{:?} {:?} {}", c.question, c.timeout, c.writes),
        Err(e) => format!("{} {e}", e.code()),
    }
}

/// Run every check on one input; panics on a violated property.
pub fn check_args(data: &[u8]) {
    let f = fixture();
    let (tool, arguments) = decode(data);
    let mut before = Vec::new();
    tree(&f.base, &mut before);

    let result = args::parse(tool, arguments.as_ref(), &f.engine);
    let again = args::parse(tool, arguments.as_ref(), &f.engine);
    assert_eq!(
        outcome(&result),
        outcome(&again),
        "validation is deterministic"
    );

    let mut after = Vec::new();
    tree(&f.base, &mut after);
    assert_eq!(before, after, "validation touched the file system");

    let empty = JsonObject::new();
    let a = arguments.as_ref().unwrap_or(&empty);
    match result {
        Err(e) => {
            let te = ToolError::from_op(&e, &f.root, &[]);
            let text = te.text();
            assert!(!text.is_empty());
            assert!(!e.code().is_empty());
            assert!(te.json().is_object());
        }
        Ok(call) => {
            let q = &call.question;
            let (allowed_args, actions) = if tool == LSP {
                (tools::lsp_args(), tools::lsp_actions())
            } else {
                (tools::edit_args(), tools::edit_actions())
            };
            assert!(
                actions.contains(&q.action()),
                "{:?} is not an action of {tool}",
                q.action()
            );
            for k in a.keys() {
                assert!(
                    allowed_args.contains(&k.as_str()) || (tool == LSP && k == "apply"),
                    "unknown argument `{k}` accepted"
                );
            }
            if tool == LSP {
                assert!(!q.writes(), "lsp never applies");
                assert_eq!(
                    call.writes,
                    a.get("apply").is_some_and(|v| {
                        v == &Value::Bool(true)
                            || v.as_str()
                                .is_some_and(|s| s.trim().eq_ignore_ascii_case("true"))
                    })
                );
            } else {
                assert!(call.writes, "lsp_edit always writes");
            }
            assert!(q.line().is_none_or(|l| l >= 1));
            assert!(q.column().is_none_or(|c| c >= 1));
            assert!(
                q.column().is_none() || q.line().is_some(),
                "column without line"
            );
            assert!(
                call.timeout.is_none_or(
                    |t| t.as_millis() >= 1 && t.as_millis() <= u128::from(MAX_TIMEOUT_MS)
                )
            );
            // What a front end sends, the daemon reads back unchanged.
            let wire = serde_json::to_string(q).expect("a question serializes");
            let back: Valid = serde_json::from_str(&wire).expect("the daemon accepts it");
            assert_eq!(&back, q, "{wire}");
            if let Some(p) = q.path() {
                let resolved = f.engine.resolve_path(p).expect("an accepted path resolves");
                assert!(
                    resolved.starts_with(&f.root),
                    "{} escapes",
                    resolved.display()
                );
                assert!(resolved.is_file());
            }
            let targets = match q {
                Valid::Diagnostics { targets, .. } => targets.as_slice(),
                _ => &[],
            };
            for t in targets {
                if t.as_os_str() == "*" {
                    continue;
                }
                assert!(t.starts_with(&f.root), "target {} outside", t.display());
                let glob = t.to_string_lossy().contains(['*', '?', '[', '{']);
                if glob {
                    // Passed on as given (`a/../b*`), never climbing out.
                    let rel = t.strip_prefix(&f.root).expect("under the root");
                    assert!(
                        scry_base::paths::normalise_within(rel).is_some(),
                        "glob target {} climbs out",
                        t.display()
                    );
                } else {
                    let c = scry_base::paths::canonical(t).expect("an accepted target exists");
                    assert!(c.starts_with(&f.root), "target {} escapes", c.display());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// Replays the committed fuzz corpus (`fuzz/corpus/mcp_args`).
    #[test]
    fn fuzz_corpus_replays() {
        scry_testkit::replay_corpus("mcp_args", super::check_args);
    }
}
