//! Linter output into raw diagnostics. One parser per output format:
//! `eslint-json`, `ruff-json`, `golangci-lint-json` (v2), `sarif` (any
//! SARIF 2.1 producer), `shellcheck-json` (`json1`) and `generic`
//! (`path:line:col: severity: message` lines).
//!
//! Positions stay as the tool wrote them (0-based here, in the tool's column
//! unit); the caller converts them to characters with the file's text.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use scry_lsp_session::Encoding;
use serde_json::Value;

use scry_model::Severity;

/// A diagnostic before conversion: 0-based line, 0-based column in `unit`.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw {
    /// Absolute (relative paths from the tool are joined to its root).
    pub path: PathBuf,
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
    pub end_col: u32,
    /// The unit of `col`/`end_col`: `Utf8` bytes, `Utf16` code units,
    /// `Utf32` characters.
    pub unit: Encoding,
    pub severity: Severity,
    pub code: Option<String>,
    pub source: Option<String>,
    pub message: String,
}

/// The parsers `parse` knows.
pub const PARSERS: [&str; 6] = [
    "eslint-json",
    "ruff-json",
    "golangci-lint-json",
    "sarif",
    "shellcheck-json",
    "generic",
];

/// Parse a linter's stdout. `root` is the directory the tool ran in
/// (relative paths are relative to it). An error says why the output is not
/// in the expected format.
pub fn parse(parser: &str, out: &str, root: &Path) -> Result<Vec<Raw>, String> {
    match parser {
        "eslint-json" => eslint(&json(out)?, root),
        "ruff-json" => ruff(&json(out)?, root),
        "golangci-lint-json" => golangci(&json(out)?, root),
        "sarif" => sarif(&json(out)?, root),
        "shellcheck-json" => shellcheck(&json(out)?, root),
        "generic" => Ok(generic(out, root)),
        other => Err(format!(
            "unknown parser `{other}` (known: {})",
            PARSERS.join(", ")
        )),
    }
}

fn json(out: &str) -> Result<Value, String> {
    let t = out.trim();
    if t.is_empty() {
        return Err("no output".into());
    }
    serde_json::from_str(t).map_err(|e| {
        let start: String = t.chars().take(80).collect();
        format!(
            "output is not JSON ({e}); it starts with: {}",
            start.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    })
}

fn abs(root: &Path, p: &str) -> PathBuf {
    let p = p.strip_prefix("file://").unwrap_or(p);
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p.strip_prefix("./").unwrap_or(p))
    }
}

/// 1-based to 0-based, with a default of the first line/column.
fn zero(v: &Value) -> Option<u32> {
    v.as_u64().map(|n| n.saturating_sub(1) as u32)
}

fn shape_err(what: &str) -> String {
    format!("output is not {what}")
}

#[allow(clippy::too_many_arguments)]
fn raw(
    path: PathBuf,
    start: (u32, u32),
    end: Option<(u32, u32)>,
    unit: Encoding,
    severity: Severity,
    code: Option<String>,
    source: Option<String>,
    message: String,
) -> Raw {
    let (end_line, end_col) = end.filter(|e| *e >= start).unwrap_or(start);
    Raw {
        path,
        line: start.0,
        col: start.1,
        end_line,
        end_col,
        unit,
        severity,
        code,
        source,
        message,
    }
}

/// `[{filePath, messages: [{ruleId, severity: 1|2, message, line, column,
/// endLine, endColumn}]}]`; columns are 1-based UTF-16 code units.
fn eslint(v: &Value, root: &Path) -> Result<Vec<Raw>, String> {
    let files = v
        .as_array()
        .ok_or_else(|| shape_err("eslint JSON (an array of files)"))?;
    let mut out = Vec::new();
    for f in files {
        let Some(path) = f["filePath"].as_str() else {
            return Err(shape_err("eslint JSON (no filePath)"));
        };
        for m in f["messages"].as_array().into_iter().flatten() {
            // A file the configuration does not cover is not a finding.
            if m["ruleId"].is_null()
                && m["message"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("File ignored"))
            {
                continue;
            }
            let severity = if m["severity"].as_u64() == Some(2) || m["fatal"] == true {
                Severity::Error
            } else {
                Severity::Warning
            };
            let start = (
                zero(&m["line"]).unwrap_or(0),
                zero(&m["column"]).unwrap_or(0),
            );
            let end = zero(&m["endLine"]).zip(zero(&m["endColumn"]));
            out.push(raw(
                abs(root, path),
                start,
                end,
                Encoding::Utf16,
                severity,
                m["ruleId"].as_str().map(str::to_string),
                Some("eslint".into()),
                m["message"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    Ok(out)
}

/// `[{code, message, filename, location: {row, column}, end_location}]`;
/// columns are 1-based characters. No code means a syntax error.
fn ruff(v: &Value, root: &Path) -> Result<Vec<Raw>, String> {
    let items = v
        .as_array()
        .ok_or_else(|| shape_err("ruff JSON (an array)"))?;
    let mut out = Vec::new();
    for d in items {
        let Some(path) = d["filename"].as_str() else {
            return Err(shape_err("ruff JSON (no filename)"));
        };
        let code = d["code"].as_str().map(str::to_string);
        let severity = match code.as_deref() {
            None | Some("E999") => Severity::Error,
            _ => Severity::Warning,
        };
        let loc = &d["location"];
        let end = &d["end_location"];
        out.push(raw(
            abs(root, path),
            (
                zero(&loc["row"]).unwrap_or(0),
                zero(&loc["column"]).unwrap_or(0),
            ),
            zero(&end["row"]).zip(zero(&end["column"])),
            Encoding::Utf32,
            severity,
            code,
            Some("ruff".into()),
            d["message"].as_str().unwrap_or("").to_string(),
        ));
    }
    Ok(out)
}

/// golangci-lint v2 `--output.json.path`: `{"Issues": [{FromLinter, Text,
/// Severity, Pos: {Filename, Line, Column}}], "Report": {...}}`; columns
/// are 1-based bytes, file names relative to the run directory.
fn golangci(v: &Value, root: &Path) -> Result<Vec<Raw>, String> {
    let issues = match &v["Issues"] {
        Value::Null if v.get("Report").is_some() => return Ok(Vec::new()),
        Value::Array(a) => a,
        _ => return Err(shape_err("golangci-lint JSON (no Issues)")),
    };
    let mut out = Vec::new();
    for i in issues {
        let pos = &i["Pos"];
        let Some(file) = pos["Filename"].as_str() else {
            continue;
        };
        let linter = i["FromLinter"].as_str().unwrap_or("golangci-lint");
        let severity = match i["Severity"].as_str().filter(|s| !s.is_empty()) {
            Some(w) => Severity::from_word(w),
            None if linter == "typecheck" => Severity::Error,
            None => Severity::Warning,
        };
        out.push(raw(
            abs(root, file),
            (
                zero(&pos["Line"]).unwrap_or(0),
                zero(&pos["Column"]).unwrap_or(0),
            ),
            None,
            Encoding::Utf8,
            severity,
            Some(linter.to_string()),
            Some(linter.to_string()),
            i["Text"].as_str().unwrap_or("").to_string(),
        ));
    }
    Ok(out)
}

/// `{"comments": [{file, line, endLine, column, endColumn, level, code,
/// message}]}` (`--format json1`); levels error/warning/info/style.
fn shellcheck(v: &Value, root: &Path) -> Result<Vec<Raw>, String> {
    let comments = match v {
        Value::Object(_) => v["comments"]
            .as_array()
            .ok_or_else(|| shape_err("shellcheck json1 (no comments)"))?,
        // plain `--format json` is the bare array
        Value::Array(a) => a,
        _ => return Err(shape_err("shellcheck json1")),
    };
    let mut out = Vec::new();
    for c in comments {
        let Some(file) = c["file"].as_str() else {
            continue;
        };
        let code = match &c["code"] {
            Value::Number(n) => Some(format!("SC{n}")),
            Value::String(s) => Some(s.clone()),
            _ => None,
        };
        out.push(raw(
            abs(root, file),
            (
                zero(&c["line"]).unwrap_or(0),
                zero(&c["column"]).unwrap_or(0),
            ),
            zero(&c["endLine"]).zip(zero(&c["endColumn"])),
            Encoding::Utf32,
            Severity::from_word(c["level"].as_str().unwrap_or("warning")),
            code,
            Some("shellcheck".into()),
            c["message"].as_str().unwrap_or("").to_string(),
        ));
    }
    Ok(out)
}

/// Any SARIF 2.1 log: every run's results with a physical location. Levels
/// from the result, else the rule's default configuration, else warning;
/// `kind` pass/notApplicable results are skipped; column unit from the
/// run's `columnKind` (UTF-16 by default).
fn sarif(v: &Value, root: &Path) -> Result<Vec<Raw>, String> {
    let runs = v["runs"]
        .as_array()
        .ok_or_else(|| shape_err("SARIF (no runs)"))?;
    let mut out = Vec::new();
    for run in runs {
        let driver = &run["tool"]["driver"];
        let tool = driver["name"].as_str().unwrap_or("sarif").to_string();
        let rules = driver["rules"].as_array().cloned().unwrap_or_default();
        let unit = match run["columnKind"].as_str() {
            Some("unicodeCodePoints") => Encoding::Utf32,
            _ => Encoding::Utf16,
        };
        let base = |id: &str| -> Option<PathBuf> {
            let u = run["originalUriBaseIds"][id]["uri"].as_str()?;
            Some(abs(root, u))
        };
        for r in run["results"].as_array().into_iter().flatten() {
            if let Some("pass" | "notApplicable") = r["kind"].as_str() {
                continue;
            }
            let rule_id = r["ruleId"]
                .as_str()
                .or_else(|| r["rule"]["id"].as_str())
                .map(str::to_string);
            let rule = r["ruleIndex"]
                .as_u64()
                .and_then(|i| rules.get(i as usize))
                .or_else(|| {
                    let id = rule_id.as_deref()?;
                    rules.iter().find(|x| x["id"].as_str() == Some(id))
                });
            let level = r["level"]
                .as_str()
                .or_else(|| rule.and_then(|x| x["defaultConfiguration"]["level"].as_str()));
            let severity = match (level, r["kind"].as_str()) {
                (Some("error"), _) => Severity::Error,
                (Some("note"), _) | (_, Some("informational")) => Severity::Info,
                (Some("none"), _) => Severity::Hint,
                _ => Severity::Warning,
            };
            let message = sarif_message(&r["message"], rule);
            let Some(phys) = r["locations"]
                .as_array()
                .and_then(|l| l.iter().find_map(|l| l.get("physicalLocation")))
            else {
                continue;
            };
            let art = &phys["artifactLocation"];
            let Some(uri) = art["uri"].as_str() else {
                continue;
            };
            let uri = percent_decode(uri);
            let path = match art["uriBaseId"].as_str().and_then(base) {
                Some(b) if !uri.starts_with("file:") && !uri.starts_with('/') => b.join(&uri),
                _ => abs(root, &uri),
            };
            let reg = &phys["region"];
            let start = (
                zero(&reg["startLine"]).unwrap_or(0),
                zero(&reg["startColumn"]).unwrap_or(0),
            );
            let end_line = zero(&reg["endLine"]).unwrap_or(start.0);
            let end = zero(&reg["endColumn"]).map(|c| (end_line, c));
            out.push(raw(
                path,
                start,
                end,
                unit,
                severity,
                rule_id,
                Some(tool.clone()),
                message,
            ));
        }
    }
    Ok(out)
}

fn sarif_message(m: &Value, rule: Option<&Value>) -> String {
    let mut text = m["text"]
        .as_str()
        .or_else(|| m["markdown"].as_str())
        .map(str::to_string);
    if text.is_none()
        && let (Some(id), Some(rule)) = (m["id"].as_str(), rule)
    {
        let s = &rule["messageStrings"][id];
        text = s["text"].as_str().map(str::to_string);
    }
    let mut text = text.unwrap_or_default();
    for (i, a) in m["arguments"].as_array().into_iter().flatten().enumerate() {
        text = text.replace(&format!("{{{i}}}"), a.as_str().unwrap_or(""));
    }
    text
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(n) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(n);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `path:line:col: severity: message`, `path:line: severity: message`,
/// `path:line:col: message` (warning); an optional `[code]` after the
/// severity or at the end of the message. Other lines are ignored. Columns
/// are taken as characters.
fn generic(out: &str, root: &Path) -> Vec<Raw> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?i)^(?P<path>[^:\s][^:]*):(?P<line>\d+)(?::(?P<col>\d+))?:\s*(?:(?P<sev>fatal error|error|warning|warn|note|info|information|hint|style)(?:\s*\[(?P<code>[^\]]+)\])?\s*:\s*)?(?P<msg>.+)$",
        )
        .expect("generic diagnostic pattern")
    });
    static CODE_AT_END: OnceLock<Regex> = OnceLock::new();
    let code_end = CODE_AT_END
        .get_or_init(|| Regex::new(r"\s\[(?P<code>[\w./:-]+)\]$").expect("code pattern"));
    let mut v = Vec::new();
    for line in out.lines() {
        let line = line.trim_end();
        let Some(c) = re.captures(line) else {
            continue;
        };
        let n = |k: &str| c.name(k).and_then(|m| m.as_str().parse::<u32>().ok());
        let Some(l) = n("line") else {
            continue;
        };
        let mut msg = c["msg"].trim().to_string();
        let mut code = c.name("code").map(|m| m.as_str().to_string());
        if code.is_none()
            && let Some(m) = code_end.captures(&msg)
        {
            code = Some(m["code"].to_string());
            let cut = m.get(0).map_or(msg.len(), |m| m.start());
            msg.truncate(cut);
        }
        let severity = c.name("sev").map_or(Severity::Warning, |s| {
            Severity::from_word(s.as_str().split_whitespace().last().unwrap_or(""))
        });
        let start = (l.saturating_sub(1), n("col").unwrap_or(1).saturating_sub(1));
        v.push(raw(
            abs(root, &c["path"]),
            start,
            None,
            Encoding::Utf32,
            severity,
            code,
            None,
            msg,
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "/ws";

    fn p(parser: &str, text: &str) -> Vec<Raw> {
        parse(parser, text, Path::new(ROOT)).unwrap()
    }

    #[test]
    fn eslint_json() {
        let out = r#"[{"filePath":"/ws/src/a.js","messages":[
            {"ruleId":"no-unused-vars","severity":2,"message":"'x' is assigned a value but never used.","line":3,"column":7,"endLine":3,"endColumn":8},
            {"ruleId":null,"severity":1,"message":"File ignored"}],
            "errorCount":1,"warningCount":1},
            {"filePath":"/ws/src/b.js","messages":[]}]"#;
        let r = p("eslint-json", out);
        assert_eq!(r.len(), 1, "File ignored is not a finding");
        assert_eq!(r[0].path, Path::new("/ws/src/a.js"));
        assert_eq!((r[0].line, r[0].col, r[0].end_col), (2, 6, 7));
        assert_eq!(r[0].severity, Severity::Error);
        assert_eq!(r[0].code.as_deref(), Some("no-unused-vars"));
        assert_eq!(r[0].unit, Encoding::Utf16);
    }

    #[test]
    fn ruff_json() {
        let out = r#"[{"cell":null,"code":"F401","end_location":{"column":10,"row":1},"filename":"/ws/a.py","fix":null,"location":{"column":8,"row":1},"message":"`os` imported but unused","noqa_row":1,"url":"https://docs.astral.sh/ruff/rules/unused-import"},
            {"code":null,"end_location":{"column":2,"row":4},"filename":"b.py","location":{"column":1,"row":4},"message":"SyntaxError: Expected an expression"}]"#;
        let r = p("ruff-json", out);
        assert_eq!(r[0].code.as_deref(), Some("F401"));
        assert_eq!((r[0].line, r[0].col, r[0].end_col), (0, 7, 9));
        assert_eq!(r[0].severity, Severity::Warning);
        assert_eq!(r[1].severity, Severity::Error);
        assert_eq!(r[1].path, Path::new("/ws/b.py"));
        assert!(p("ruff-json", "[]").is_empty());
    }

    #[test]
    fn golangci_lint_json() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/diagnostics/golangci-lint.json"
        ))
        .unwrap();
        let r = p("golangci-lint-json", &text);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].path, Path::new("/ws/inventory.go"));
        assert_eq!((r[0].line, r[0].col), (11, 1));
        assert_eq!(r[0].code.as_deref(), Some("errcheck"));
        assert_eq!(r[0].severity, Severity::Warning);
        assert_eq!(r[0].unit, Encoding::Utf8);
        assert_eq!(r[1].severity, Severity::Error); // typecheck
        assert_eq!(r[2].severity, Severity::Error); // explicit severity
        let none = p("golangci-lint-json", r#"{"Issues":null,"Report":{}}"#);
        assert!(none.is_empty());
    }

    #[test]
    fn sarif_log() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/diagnostics/sample.sarif"
        ))
        .unwrap();
        let r = p("sarif", &text);
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(r[0].path, Path::new("/ws/src/app.py"));
        assert_eq!((r[0].line, r[0].col), (4, 8));
        assert_eq!(r[0].severity, Severity::Error);
        assert_eq!(r[0].code.as_deref(), Some("PY001"));
        assert_eq!(r[0].source.as_deref(), Some("demo-analyzer"));
        // level from the rule's default configuration; message from its strings
        assert_eq!(r[1].severity, Severity::Info);
        assert_eq!(r[1].message, "Variable 'total' shadows a builtin");
        assert_eq!(r[1].path, Path::new("/ws/lib/my util.py"));
        // second run, unicode code points, level from the result
        assert_eq!(r[2].unit, Encoding::Utf32);
        assert_eq!(r[2].severity, Severity::Warning);
        assert_eq!(r[2].path, Path::new("/abs/other.py"));
    }

    #[test]
    fn shellcheck_json1() {
        let out = r#"{"comments":[{"file":"run.sh","line":3,"endLine":3,"column":6,"endColumn":10,"level":"info","code":2086,"message":"Double quote to prevent globbing and word splitting.","fix":null},
            {"file":"run.sh","line":5,"endLine":5,"column":1,"endColumn":2,"level":"error","code":1073,"message":"Couldn't parse this"}]}"#;
        let r = p("shellcheck-json", out);
        assert_eq!(r[0].path, Path::new("/ws/run.sh"));
        assert_eq!(r[0].code.as_deref(), Some("SC2086"));
        assert_eq!(r[0].severity, Severity::Info);
        assert_eq!((r[0].line, r[0].col, r[0].end_col), (2, 5, 9));
        assert_eq!(r[1].severity, Severity::Error);
    }

    #[test]
    fn generic_lines() {
        let out = "src/a.c:3:5: error: unknown type name 'Foo'\n\
                   noise line\n\
                   src/a.c:10: warning[W12]: shadowed\n\
                   lib/x.py:2:1: missing docstring [D100]\n\
                   /abs/y.go:7:2: note: see here\n";
        let r = p("generic", out);
        assert_eq!(r.len(), 4);
        assert_eq!(
            (r[0].line, r[0].col, r[0].severity),
            (2, 4, Severity::Error)
        );
        assert_eq!(r[0].message, "unknown type name 'Foo'");
        assert_eq!(r[1].code.as_deref(), Some("W12"));
        assert_eq!((r[1].line, r[1].col), (9, 0));
        assert_eq!(r[2].code.as_deref(), Some("D100"));
        assert_eq!(r[2].message, "missing docstring");
        assert_eq!(r[2].severity, Severity::Warning);
        assert_eq!(r[3].path, Path::new("/abs/y.go"));
        assert_eq!(r[3].severity, Severity::Info);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for parser in PARSERS.iter().filter(|p| **p != "generic") {
            let e = parse(parser, "Segmentation fault\n{{{", Path::new(ROOT)).unwrap_err();
            assert!(e.contains("not JSON"), "{parser}: {e}");
            let e = parse(parser, "{\"x\": 1}", Path::new(ROOT));
            assert!(e.is_err(), "{parser}");
        }
        assert!(
            parse("generic", "garbage\n\u{0}\u{1}", Path::new(ROOT))
                .unwrap()
                .is_empty()
        );
        assert!(parse("nope", "", Path::new(ROOT)).is_err());
    }
}
