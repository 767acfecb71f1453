//! Argument parsing: a tool call's JSON arguments become a
//! [`scry_model::Query`], validated once into the [`scry_model::Valid`]
//! question the answerer is sent ([`ToolCall`]), or a refusal with the
//! reason. Here: the JSON types, which tool offers which action and
//! argument (names from the action table, `scry_model::action::Arg`), and
//! checking the path; whether the arguments fit the action is
//! `Query::validate`'s (scry-ops). Nothing here starts a server or touches
//! a file beyond resolving the path.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::JsonObject;
use scry_base::paths::{self, Unconfined};
use scry_model::{Action, OpError, Query, SeverityFilter, ToolFact, Valid};
use scry_ops::{Engine, TargetKind};
use serde_json::Value;

use scry_model::action::{self, Arg as A};

use scry_model::limits::MAX_TIMEOUT_MS;

use crate::tools;

fn invalid(fact: ToolFact) -> OpError {
    OpError::InvalidArgument(fact.message())
}

fn string(args: &JsonObject, key: &str) -> Result<Option<String>, OpError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(invalid(ToolFact::NotAString {
            key: key.into(),
            got: other.to_string(),
        })),
    }
}

fn number(args: &JsonObject, key: &str, max: u64) -> Result<Option<u64>, OpError> {
    let v = match args.get(key) {
        None | Some(Value::Null) => return Ok(None),
        Some(v) => v,
    };
    // Integers, and integral strings ("12") some clients send; one past
    // any integer type (`18446744073709551616`, `1e30`) is out of range,
    // not "not a number".
    let n: Option<i128> = match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i128)),
        Value::String(s) => {
            let t = s.trim();
            t.parse::<i128>().ok().or_else(|| {
                let digits = t.strip_prefix('+').unwrap_or(t);
                (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                    .then_some(i128::MAX)
            })
        }
        _ => None,
    };
    match n {
        Some(n) if n >= 1 && n <= i128::from(max) => Ok(Some(n as u64)),
        Some(n) if n >= 1 => Err(invalid(ToolFact::OverMax {
            key: key.into(),
            got: v.to_string(),
            max,
        })),
        Some(0) if key == A::Line.name() || key == A::Column.name() => {
            Err(invalid(ToolFact::ZeroForOneBased { key: key.into() }))
        }
        Some(n) => Err(invalid(ToolFact::NotPositive {
            key: key.into(),
            got: n.to_string(),
        })),
        None => Err(invalid(ToolFact::NotAnInteger {
            key: key.into(),
            got: v.to_string(),
        })),
    }
}

fn check_unknown(args: &JsonObject, allowed: &[&str], tool: &str) -> Result<(), OpError> {
    let mut unknown: Vec<&str> = args
        .keys()
        .map(String::as_str)
        .filter(|k| !allowed.contains(k))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort();
    Err(invalid(ToolFact::UnknownArguments {
        tool: tool.into(),
        unknown: unknown.into_iter().map(String::from).collect(),
        takes: allowed.iter().map(|k| k.to_string()).collect(),
    }))
}

fn action(args: &JsonObject, allowed: &[Action], tool: &str) -> Result<Action, OpError> {
    let Some(name) = string(args, action::ACTION)? else {
        return Err(invalid(ToolFact::NoAction {
            tool: tool.into(),
            allowed: allowed.to_vec(),
        }));
    };
    match Action::parse(&name) {
        Some(a) if allowed.contains(&a) => Ok(a),
        Some(a) if tool == tools::LSP && tools::edit_actions().contains(&a) => {
            Err(invalid(ToolFact::OtherToolsAction {
                action: a,
                writes: true,
            }))
        }
        Some(a) if tool == tools::LSP_EDIT && tools::lsp_actions().contains(&a) => {
            Err(invalid(ToolFact::OtherToolsAction {
                action: a,
                writes: false,
            }))
        }
        _ => Err(invalid(ToolFact::UnknownAction {
            tool: tool.into(),
            name,
            allowed: allowed.to_vec(),
        })),
    }
}

fn boolean(args: &JsonObject, key: &str) -> Result<Option<bool>, OpError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(other) => Err(invalid(ToolFact::NotABoolean {
            key: key.into(),
            got: other.to_string(),
        })),
    }
}

/// A validated tool call: the question, its budget, and whether it
/// changes state (so that read-only mode refuses it).
#[derive(Debug)]
pub struct ToolCall {
    pub question: Valid,
    pub timeout: Option<Duration>,
    /// `lsp_edit` (anything it does changes state), or `lsp` asked to
    /// apply (which it never does).
    pub writes: bool,
}

/// Validate a call of `tool` and build the question. The path is checked
/// (inside the workspace, existing, a file; for diagnostics also a
/// directory, a glob or `*`) but passed on as given.
pub fn parse(tool: &str, args: Option<&JsonObject>, engine: &Engine) -> Result<ToolCall, OpError> {
    let empty = JsonObject::new();
    let args = args.unwrap_or(&empty);
    let (allowed_args, allowed_actions) = if tool == tools::LSP {
        (tools::lsp_args(), tools::lsp_actions())
    } else {
        (tools::edit_args(), tools::edit_actions())
    };
    // `apply` is not in lsp's schema; a client that sends it anyway is told
    // where applying lives (or, read-only, that it is refused).
    let lsp_apply = if tool == tools::LSP {
        boolean(args, A::Apply.name())?
    } else {
        None
    };
    let mut checked = args.clone();
    if lsp_apply.is_some() {
        checked.remove(A::Apply.name());
    }
    check_unknown(&checked, allowed_args, tool)?;
    let action = action(args, &allowed_actions, tool)?;
    let mut q = Query::new(action);
    // A name copied from an answer, written escaped (`\xff_x.rb`): the
    // file it was shown for.
    q.path = string(args, A::Path.name())?
        .map(|p| paths::unescaped(engine.workspace().root(), Path::new(&p)));
    q.timeout = number(args, A::Timeout.name(), MAX_TIMEOUT_MS)?.map(Duration::from_millis);
    q.symbol = string(args, A::Symbol.name())?;
    q.line = number(args, A::Line.name(), u32::MAX as u64)?.map(|n| n as u32);
    q.column = number(args, A::Column.name(), u32::MAX as u64)?.map(|n| n as u32);
    q.new_name = string(args, A::NewName.name())?;
    q.action_index = number(args, A::ActionIndex.name(), u32::MAX as u64)?.map(|n| n as usize);
    q.action_title = string(args, A::ActionTitle.name())?;
    let writes = if tool == tools::LSP {
        q.query = string(args, A::Query.name())?;
        if let Some(s) = string(args, A::Severity.name())? {
            q.severity = Some(
                SeverityFilter::parse(&s)
                    .ok_or_else(|| invalid(ToolFact::BadSeverity { got: s.clone() }))?,
            );
        }
        q.changes = boolean(args, A::Changes.name())?.unwrap_or(false);
        // lsp never writes: rename and code actions are previews.
        q.apply = false;
        lsp_apply == Some(true)
    } else {
        q.apply = boolean(args, A::Apply.name())?.unwrap_or(true);
        q.method = string(args, A::Method.name())?;
        q.params = match args.get(A::Params.name()) {
            None | Some(Value::Null) => None,
            Some(v @ (Value::Object(_) | Value::Array(_))) => Some(v.clone()),
            Some(Value::String(s)) => Some(
                serde_json::from_str(s)
                    .map_err(|e| invalid(ToolFact::ParamsNotJson { why: e.to_string() }))?,
            ),
            Some(other) => {
                return Err(invalid(ToolFact::ParamsNotAnObject {
                    got: other.to_string(),
                }));
            }
        };
        true
    };
    let mut question = q.validate()?;
    // `lsp_edit` applies: its code_actions needs the action to apply (the
    // same question in `lsp`, or the CLI, lists them).
    if tool == tools::LSP_EDIT
        && let Valid::CodeActions {
            choice: None,
            apply: true,
            ..
        } = question
    {
        return Err(invalid(ToolFact::CodeActionToApply));
    }
    match &mut question {
        Valid::Diagnostics { targets, path, .. } => {
            if let Some(p) = path.take() {
                *targets = vec![diagnostics_target(&p, engine)?];
            }
        }
        // A map's paths are its focus, checked when it is drawn.
        Valid::Map { .. } => {}
        v => {
            if let Some(p) = v.path() {
                engine.resolve_path(p)?;
            }
        }
    }
    Ok(ToolCall {
        question,
        timeout: q.timeout,
        writes,
    })
}

/// A diagnostics target as the CLI passes it: `*` for the whole workspace,
/// else absolute (relative to the workspace root). Refused here, before
/// anything runs, exactly as the engine's target expansion refuses it: a
/// file or directory must exist and be confined to the workspace
/// (`paths::confine`, symlinks resolved); a glob must not climb out of it
/// (`paths::normalise_within`).
fn diagnostics_target(p: &Path, engine: &Engine) -> Result<PathBuf, OpError> {
    let root = engine.workspace().root();
    let abs = scry_ops::diagnostics_target(p, root, root);
    let outside = || OpError::OutsideWorkspace {
        path: p.to_path_buf(),
        root: root.to_path_buf(),
    };
    match TargetKind::of(p) {
        TargetKind::Whole | TargetKind::Here => return Ok(abs),
        TargetKind::Glob => {
            let rel = abs.strip_prefix(root).map_err(|_| outside())?;
            paths::normalise_within(rel).ok_or_else(outside)?;
            return Ok(abs);
        }
        TargetKind::Path => {}
    }
    match paths::confine(root, &abs) {
        Ok(real) if real.exists() => Ok(abs),
        Ok(_) | Err(Unconfined::DanglingLink) => Err(OpError::FileNotFound(p.to_path_buf())),
        Err(Unconfined::Outside) => Err(outside()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use scry_workspace::Workspace;
    use serde_json::json;

    use super::*;

    fn diag(path: &str) -> JsonObject {
        match json!({"action": "diagnostics", "path": path}) {
            Value::Object(o) => o,
            _ => unreachable!(),
        }
    }

    /// A line past the largest one is out of range, however it is spelled
    /// (a number, one past any integer type, an integral string), never
    /// "not a positive number".
    #[test]
    fn a_line_past_the_largest_is_out_of_range() {
        for v in [
            json!(4_294_967_296u64),
            json!(18_446_744_073_709_551_615u64),
            json!(1e30),
            json!("18446744073709551616"),
            json!("4294967296"),
        ] {
            let Value::Object(args) = json!({"line": v.clone()}) else {
                unreachable!()
            };
            let e = number(&args, "line", u32::MAX as u64).unwrap_err();
            let e = scry_render::error_text(&e, Path::new("/ws"));
            assert!(
                e.contains("out of range") && e.contains("at most 4294967295"),
                "{v}: {e}"
            );
            assert!(!e.contains("positive"), "{v}: {e}");
        }
        let Value::Object(args) = json!({"line": -3}) else {
            unreachable!()
        };
        let e = number(&args, "line", 10).unwrap_err();
        let e = scry_render::error_text(&e, Path::new("/ws"));
        assert!(e.contains("positive"), "{e}");
        let Value::Object(args) = json!({"line": "12"}) else {
            unreachable!()
        };
        assert_eq!(number(&args, "line", 100).unwrap(), Some(12));
    }

    /// The MCP front end refuses a diagnostics target before anything runs,
    /// and with the error the engine gives for the same target (the CLI
    /// passes targets straight to the engine).
    #[tokio::test]
    async fn diagnostics_targets_are_refused_as_the_engine_refuses_them() {
        let dir = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(dir.path()).unwrap();
        let root = base.join("ws");
        let out = base.join("out");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(root.join("src/a.zz"), "").unwrap();
        std::fs::write(out.join("b.zz"), "").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&out, root.join("link")).unwrap();
            std::os::unix::fs::symlink(base.join("nowhere"), root.join("dangling")).unwrap();
        }
        let engine = Engine::new(Arc::new(Workspace::open(&root).unwrap()));
        let outside_abs = out.join("b.zz").to_string_lossy().into_owned();
        // An absolute glob as this OS spells one (on Windows `/etc` has no
        // drive: the engine's `root.join` would give it the root's).
        let abs_glob = if cfg!(windows) {
            "C:/etc/*.conf"
        } else {
            "/etc/*.conf"
        };
        let refused = [
            ("nope.zz", "FILE_NOT_FOUND"),
            ("src/nope.zz", "FILE_NOT_FOUND"),
            ("src/../nope.zz", "FILE_NOT_FOUND"),
            ("../out/b.zz", "OUTSIDE_WORKSPACE"),
            ("../missing.zz", "OUTSIDE_WORKSPACE"),
            (outside_abs.as_str(), "OUTSIDE_WORKSPACE"),
            (abs_glob, "OUTSIDE_WORKSPACE"),
            ("../*.zz", "OUTSIDE_WORKSPACE"),
            ("src/../../out/*.zz", "OUTSIDE_WORKSPACE"),
            #[cfg(unix)]
            ("link/b.zz", "OUTSIDE_WORKSPACE"),
            #[cfg(unix)]
            ("link/missing.zz", "OUTSIDE_WORKSPACE"),
            #[cfg(unix)]
            ("dangling", "FILE_NOT_FOUND"),
        ];
        for (path, code) in refused {
            let mine = parse(tools::LSP, Some(&diag(path)), &engine).unwrap_err();
            let mut q = Query::new(Action::Diagnostics);
            q.targets = vec![root.join(path)];
            let engines = engine.run_query(&q).await.unwrap_err();
            assert_eq!(mine.code(), code, "{path}: {mine:?}");
            assert_eq!(engines.code(), code, "{path}: the engine says {engines:?}");
            assert_eq!(
                scry_render::render_error(&mine, &root),
                scry_render::render_error(&engines, &root),
                "{path}"
            );
        }
        for (path, target) in [
            ("src/a.zz", root.join("src/a.zz")),
            ("src", root.join("src")),
            ("src/*.zz", root.join("src/*.zz")),
            ("src/../src/*.zz", root.join("src/../src/*.zz")),
            (".", PathBuf::from("*")),
            ("./", PathBuf::from("*")),
            ("**", PathBuf::from("*")),
        ] {
            let call = parse(tools::LSP, Some(&diag(path)), &engine)
                .unwrap_or_else(|e| panic!("{path}: {e:?}"));
            let Valid::Diagnostics {
                targets, path: p, ..
            } = call.question
            else {
                panic!("{path}: {:?}", call.question)
            };
            assert_eq!(targets, vec![target], "{path}");
            assert_eq!(p, None, "{path}");
        }
    }
}
