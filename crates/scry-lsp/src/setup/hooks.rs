//! `scry setup CLIENT --hooks`: the edit check of README.md's hook recipe
//! ("check every edit automatically"), for the clients whose hooks are
//! shell commands fed the tool call as JSON (Claude Code, Gemini CLI; see
//! `clients::HookSpec`). Before an edit tool runs, the file's problems
//! become the `diag --changes` baseline; after it, whatever the edit
//! introduced goes back to the model (exit status 2, on stderr). Where
//! the client's hook can add context to a search's result (Claude Code's
//! `Grep`), a search for one identifier gets a reminder that `lsp`
//! answers its references precisely.
//!
//! Invariants: the commands are README.md's, with `scry` replaced by the
//! installed binary's absolute path (shell-quoted) and the project
//! variable by the client's (tests/setup.rs compares them). A group of
//! hooks is scry's when each of its commands runs `diag --changes` of a
//! scry binary, or is the reminder ([`is_scry_group`]): setting hooks
//! replaces those groups
//! (also the recipe pasted by hand), removing takes out exactly those.

use serde_json::{Value, json};

use super::clients::HookSpec;

/// The command before an edit (README's PreToolUse): record the baseline.
const BEFORE: &str = r#"f=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("tool_input",{}).get("file_path",""))') && [ -f "$f" ] && scry diag --changes --root "${CLAUDE_PROJECT_DIR:-.}" "$f" >/dev/null 2>&1; exit 0"#;

/// The command after an edit (README's PostToolUse): what is new.
const AFTER: &str = r#"f=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("tool_input",{}).get("file_path",""))') && [ -n "$f" ] || exit 0; out=$(scry diag --changes --root "${CLAUDE_PROJECT_DIR:-.}" "$f" 2>/dev/null) || exit 0; case "$out" in 'No new problems'*|'First check'*|'Nothing checked'*) exit 0;; esac; printf '%s\n' "$out" >&2; exit 2"#;

/// After a text search (Claude Code's `Grep`) for a single identifier:
/// the reminder that `lsp` lists its references precisely, as context
/// for the model (`hookSpecificOutput.additionalContext`); nothing for
/// any other pattern. `EVENT` is the client's after-tool event.
const REMINDER: &str = r#"python3 -c 'import json,re,sys; p=str(json.load(sys.stdin).get("tool_input",{}).get("pattern","")); m=re.fullmatch(r"(?:\b)?([A-Za-z_][A-Za-z0-9_]{2,})(?:\b)?", p); m and print(json.dumps({"hookSpecificOutput":{"hookEventName":"EVENT","additionalContext":"`%s` is an identifier: the lsp tool (action references, with path and symbol) lists its uses precisely, without comments, strings or other symbols of that name." % m.group(1)}}))' 2>/dev/null; exit 0 # scry: grep reminder"#;

/// What scry's commands share, to know them again.
const MARK: &str = " diag --changes --root ";

/// What the reminder's command ends with, to know it again.
const REMINDER_MARK: &str = "# scry: grep reminder";

/// `s` as one word for `sh`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn command(template: &str, spec: &HookSpec, scry: &str) -> String {
    template
        .replace("scry diag", &format!("{} diag", sh_quote(scry)))
        .replace("CLAUDE_PROJECT_DIR", spec.project_env)
}

/// The (event, group) pairs to add for `spec` with the binary `scry`:
/// the edit check before and after an edit, and the reminder after a
/// search where the client has one.
pub fn groups(spec: &HookSpec, scry: &str) -> Vec<(&'static str, Value)> {
    let group = |matcher: &str, command: String| {
        json!({
            "matcher": matcher,
            "hooks": [{
                "type": "command",
                "command": command,
                "timeout": spec.timeout,
            }]
        })
    };
    let mut out = vec![
        (
            spec.before,
            group(spec.edit_tools, command(BEFORE, spec, scry)),
        ),
        (
            spec.after,
            group(spec.edit_tools, command(AFTER, spec, scry)),
        ),
    ];
    if let Some(search) = spec.search_tools {
        out.push((
            spec.after,
            group(search, REMINDER.replace("EVENT", spec.after)),
        ));
    }
    out
}

/// Whether the hook group `v` is scry's (see the module's invariants).
pub fn is_scry_group(v: &Value) -> bool {
    let Some(hooks) = v.get("hooks").and_then(Value::as_array) else {
        return false;
    };
    !hooks.is_empty()
        && hooks.iter().all(|h| {
            h.get("command").and_then(Value::as_str).is_some_and(|c| {
                (c.contains(MARK) && c.contains("scry")) || c.ends_with(REMINDER_MARK)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_and_known_again() {
        let spec = super::super::clients::Client::find("gemini")
            .and_then(|c| c.hooks)
            .unwrap();
        let g = groups(spec, "/opt/it's/scry");
        let [(before, pre), (after, post)] = [g[0].clone(), g[1].clone()];
        assert_eq!(g.len(), 2, "no reminder for Gemini");
        assert_eq!((before, after), ("BeforeTool", "AfterTool"));
        let cmd = post["hooks"][0]["command"].as_str().unwrap();
        assert!(cmd.contains(r"'/opt/it'\''s/scry' diag --changes --root "));
        assert!(cmd.contains("GEMINI_PROJECT_DIR"));
        assert!(is_scry_group(&pre) && is_scry_group(&post));
        assert!(!is_scry_group(
            &json!({"hooks": [{"type": "command", "command": "prettier --write"}]})
        ));
    }
}
