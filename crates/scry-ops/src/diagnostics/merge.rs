//! One answer from many providers: deduplicated (path, severity, code,
//! start, normalised message), ordered (severity, path, position),
//! cascades under an unresolved import / missing module put beneath it as
//! SECONDARY, repeated identical messages grouped with a count and example
//! locations, capped with an account of what was left out.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use scry_model::{
    Diagnostic, DiagnosticEntry, DiagnosticsReport, PendingFile, ProviderRun, Severity,
    SeverityFilter,
};

/// Longest message kept (characters); longer ones end with `…`.
pub const MAX_MESSAGE: usize = 400;
/// Example locations kept for a group.
const MAX_ALSO: usize = 3;

/// Whitespace runs (newlines included) to one space, trimmed, clipped to
/// `max` characters.
pub fn compact(msg: &str, max: usize) -> String {
    let s = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= max {
        return s;
    }
    let mut c: String = s.chars().take(max.saturating_sub(1)).collect();
    c.truncate(c.trim_end().len());
    c.push('…');
    c
}

/// The message as compared: lower case, whitespace compacted, without a
/// trailing period.
pub fn normalise(msg: &str) -> String {
    let s = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    s.trim_end_matches('.').to_lowercase()
}

type Key = (PathBuf, Severity, Option<String>, u32, u32, String);

fn key(d: &Diagnostic) -> Key {
    (
        d.loc.path.clone(),
        d.severity,
        d.code.clone(),
        d.loc.line,
        d.loc.col,
        normalise(&d.message),
    )
}

/// Drops repeats: same path, severity, code, start and normalised message
/// (from two providers, or pull and push of one server). The first wins.
pub fn dedup(diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut seen = HashSet::new();
    diags.into_iter().filter(|d| seen.insert(key(d))).collect()
}

/// Severity, then path, then position, then message.
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by(|a, b| {
        (a.severity, &a.loc.path, a.loc.line, a.loc.col, &a.message).cmp(&(
            b.severity,
            &b.loc.path,
            b.loc.line,
            b.loc.col,
            &b.message,
        ))
    });
}

const ROOT_CODES: [&str; 14] = [
    "reportMissingImports",
    "2307",
    "2792",
    "E0432",
    "E0433",
    "E0463",
    "unresolved-import",
    "unresolved-module",
    "unresolved-extern-crate",
    "pp_file_not_found",
    "import-error",
    "E0401",
    "F0401",
    "BrokenImport",
];

const ROOT_PATTERNS: [&str; 12] = [
    "could not be resolved",
    "cannot find module",
    "unresolved import",
    "unresolved module",
    "file not found",
    "no module named",
    "could not import",
    "failed to resolve",
    "cannot resolve module",
    "module not found",
    "unable to resolve path to module",
    "no required module provides package",
];

/// Follow-up errors a missing header typically causes in C-like code.
const UNDEFINED_PATTERNS: [&str; 8] = [
    "undeclared",
    "unknown type name",
    "implicit declaration",
    "not defined",
    "cannot find name",
    "undefined",
    "unresolved",
    "incomplete type",
];

const KEYWORDS: [&str; 22] = [
    "from", "import", "as", "use", "crate", "self", "super", "pub", "mod", "include", "require",
    "const", "let", "var", "type", "export", "default", "extern", "package", "std", "the", "for",
];

/// An error that says a module, import or header is missing.
pub fn is_root(d: &Diagnostic) -> bool {
    if d.severity != Severity::Error {
        return false;
    }
    if d.code.as_deref().is_some_and(|c| ROOT_CODES.contains(&c)) {
        return true;
    }
    let m = d.message.to_lowercase();
    ROOT_PATTERNS.iter().any(|p| m.contains(p))
}

fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Names a root error is about: identifiers on its source line (what the
/// import brings in) and the quoted parts of its message.
fn root_names(root: &Diagnostic) -> HashSet<String> {
    let mut names = HashSet::new();
    if let Some(t) = &root.loc.text {
        names.extend(words(t).map(str::to_string));
    }
    for q in ['"', '\'', '`'] {
        for (i, part) in root.message.split(q).enumerate() {
            if i % 2 == 1 {
                names.extend(words(part).map(str::to_string));
            }
        }
    }
    names.retain(|n| {
        n.chars().count() >= 2
            && !KEYWORDS.contains(&n.as_str())
            && !n.chars().all(|c| c.is_ascii_digit())
    });
    names
}

fn mentions(msg: &str, names: &HashSet<String>) -> bool {
    words(msg).any(|w| names.contains(w))
}

/// For each diagnostic, the index of the root error it cascades from.
fn cascades(diags: &[Diagnostic]) -> Vec<Option<usize>> {
    let roots: Vec<(usize, HashSet<String>, bool)> = diags
        .iter()
        .enumerate()
        .filter(|(_, d)| is_root(d))
        .map(|(i, d)| {
            let header = d.message.to_lowercase().contains("file not found")
                || d.code.as_deref() == Some("pp_file_not_found");
            (i, root_names(d), header)
        })
        .collect();
    diags
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if is_root(d) {
                return None;
            }
            let same_file = roots
                .iter()
                .filter(|(r, _, _)| diags[*r].loc.path == d.loc.path && *r != i);
            let mut fallback = None;
            for (r, names, header) in same_file {
                let root = &diags[*r];
                if root.loc.line == d.loc.line || mentions(&d.message, names) {
                    return Some(*r);
                }
                let m = d.message.to_lowercase();
                if *header
                    && d.severity == Severity::Error
                    && d.loc.line > root.loc.line
                    && UNDEFINED_PATTERNS.iter().any(|p| m.contains(p))
                    && fallback.is_none()
                {
                    fallback = Some(*r);
                }
            }
            fallback
        })
        .collect()
}

fn group_key(d: &Diagnostic) -> (Severity, Option<String>, String, String) {
    (
        d.severity,
        d.code.clone(),
        d.source.clone(),
        normalise(&d.message),
    )
}

/// Entries in order: roots with their cascades, then the rest with
/// identical messages grouped (at the place of the first).
pub fn entries(mut diags: Vec<Diagnostic>) -> Vec<DiagnosticEntry> {
    sort(&mut diags);
    let parent = cascades(&diags);
    let mut secondary: HashMap<usize, Vec<Diagnostic>> = HashMap::new();
    for (i, p) in parent.iter().enumerate() {
        if let Some(r) = p {
            secondary.entry(*r).or_default().push(diags[i].clone());
        }
    }
    let mut out: Vec<DiagnosticEntry> = Vec::new();
    let mut groups: HashMap<(Severity, Option<String>, String, String), usize> = HashMap::new();
    for (i, d) in diags.iter().enumerate() {
        if parent[i].is_some() {
            continue;
        }
        if let Some(sec) = secondary.remove(&i) {
            out.push(DiagnosticEntry {
                diagnostic: d.clone(),
                count: 1,
                also: Vec::new(),
                secondary: sec,
            });
            continue;
        }
        let k = group_key(d);
        if let Some(&e) = groups.get(&k) {
            let entry = &mut out[e];
            entry.count += 1;
            if entry.also.len() < MAX_ALSO {
                entry.also.push(d.loc.clone());
            }
            continue;
        }
        groups.insert(k, out.len());
        out.push(DiagnosticEntry {
            diagnostic: d.clone(),
            count: 1,
            also: Vec::new(),
            secondary: Vec::new(),
        });
    }
    out
}

/// Everything a report needs besides the diagnostics.
pub struct ReportParts {
    pub scope: String,
    pub filter: SeverityFilter,
    pub cap: usize,
    pub files_checked: usize,
    pub providers: Vec<ProviderRun>,
    pub pending: Vec<PendingFile>,
}

/// Merge, filter, order, group and cap.
pub fn report(diags: Vec<Diagnostic>, parts: ReportParts) -> DiagnosticsReport {
    let diags = dedup(diags);
    let before = diags.len();
    let shown: Vec<Diagnostic> = diags
        .into_iter()
        .filter(|d| parts.filter.admits(d.severity))
        .collect();
    let hidden = before - shown.len();
    let count = |s: Severity| shown.iter().filter(|d| d.severity == s).count();
    let (errors, warnings, infos, hints) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
        count(Severity::Hint),
    );
    let files_with_problems = shown
        .iter()
        .map(|d| &d.loc.path)
        .collect::<HashSet<_>>()
        .len();
    let mut entries = entries(shown);
    let cap = parts.cap.max(1);
    let omitted = entries.len().saturating_sub(cap);
    entries.truncate(cap);
    let mut pending = parts.pending;
    pending.sort_by(|a, b| (&a.path, &a.provider).cmp(&(&b.path, &b.provider)));
    DiagnosticsReport {
        scope: parts.scope,
        filter: parts.filter,
        files_checked: parts.files_checked,
        entries,
        omitted,
        errors,
        warnings,
        infos,
        hints,
        hidden,
        files_with_problems,
        providers: parts.providers,
        pending,
        changes: None,
    }
}

/// A location for tests that build diagnostics by hand.
#[cfg(test)]
pub fn loc(path: impl Into<PathBuf>, line: u32, col: u32, text: Option<&str>) -> scry_model::Loc {
    scry_model::Loc {
        path: path.into(),
        line,
        col,
        end_line: line,
        end_col: col,
        text: text.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(path: &str, line: u32, sev: Severity, code: &str, src: &str, msg: &str) -> Diagnostic {
        Diagnostic {
            loc: loc(path, line, 1, None),
            severity: sev,
            code: (!code.is_empty()).then(|| code.to_string()),
            source: src.into(),
            provider: src.into(),
            message: msg.into(),
        }
    }

    fn parts(cap: usize) -> ReportParts {
        ReportParts {
            scope: "src/".into(),
            filter: SeverityFilter::All,
            cap,
            files_checked: 3,
            providers: Vec::new(),
            pending: Vec::new(),
        }
    }

    #[test]
    fn compact_and_normalise() {
        assert_eq!(compact("  a\n   b\tc  ", 100), "a b c");
        assert_eq!(compact("abcdefghij", 5), "abcd…");
        assert_eq!(compact("ab  cdefghij", 4), "ab…");
        assert_eq!(normalise("Unused  Import.\n"), "unused import");
    }

    #[test]
    fn dedup_across_providers_and_passes() {
        let a = d("/w/a.py", 3, Severity::Error, "E1", "pyright", "Bad thing.");
        let mut b = a.clone();
        b.message = "bad  thing".into();
        b.provider = "other".into();
        let mut c = a.clone();
        c.loc.line = 4;
        let out = dedup(vec![a.clone(), b, c.clone()]);
        assert_eq!(out, vec![a, c]);
    }

    #[test]
    fn order_is_severity_path_position() {
        let mut v = vec![
            d("/w/b.py", 1, Severity::Warning, "", "x", "w1"),
            d("/w/b.py", 9, Severity::Error, "", "x", "e2"),
            d("/w/a.py", 5, Severity::Error, "", "x", "e1"),
            d("/w/a.py", 2, Severity::Hint, "", "x", "h"),
        ];
        sort(&mut v);
        let msgs: Vec<_> = v.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(msgs, ["e1", "e2", "w1", "h"]);
    }

    #[test]
    fn groups_identical_messages() {
        let v: Vec<_> = (1..=6)
            .map(|i| {
                d(
                    "/w/a.py",
                    i,
                    Severity::Warning,
                    "F401",
                    "ruff",
                    "unused import",
                )
            })
            .chain([d(
                "/w/a.py",
                7,
                Severity::Warning,
                "F841",
                "ruff",
                "unused var",
            )])
            .collect();
        let e = entries(v);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].count, 6);
        assert_eq!(e[0].also.len(), 3);
        assert_eq!(e[0].also[0].line, 2);
        assert_eq!(e[1].count, 1);
    }

    #[test]
    fn cascades_under_unresolved_import() {
        let mut root = d(
            "/w/app.py",
            1,
            Severity::Error,
            "reportMissingImports",
            "pyright",
            "Import \"helpers\" could not be resolved",
        );
        root.loc.text = Some("from helpers import tidy, scrub".into());
        let unused = d(
            "/w/app.py",
            1,
            Severity::Warning,
            "F401",
            "ruff",
            "`helpers.scrub` imported but unused",
        );
        let uses = d(
            "/w/app.py",
            9,
            Severity::Error,
            "",
            "pyright",
            "\"tidy\" is not a known attribute",
        );
        let other = d(
            "/w/app.py",
            12,
            Severity::Error,
            "",
            "pyright",
            "Type mismatch",
        );
        let elsewhere = d(
            "/w/b.py",
            2,
            Severity::Error,
            "",
            "pyright",
            "\"tidy\" is odd",
        );
        let e = entries(vec![
            other.clone(),
            uses.clone(),
            unused.clone(),
            root.clone(),
            elsewhere,
        ]);
        assert_eq!(e.len(), 3, "{e:#?}");
        assert_eq!(e[0].diagnostic, root);
        assert_eq!(e[0].secondary, vec![uses, unused]);
        assert_eq!(e[1].diagnostic, other);
        assert!(e[1].secondary.is_empty());
    }

    #[test]
    fn missing_header_takes_undeclared_errors() {
        let root = d(
            "/w/main.c",
            1,
            Severity::Error,
            "pp_file_not_found",
            "clangd",
            "'gadget.h' file not found",
        );
        let a = d(
            "/w/main.c",
            4,
            Severity::Error,
            "",
            "clangd",
            "Unknown type name 'Gadget'",
        );
        let b = d(
            "/w/main.c",
            6,
            Severity::Error,
            "",
            "clangd",
            "Call to undeclared function 'make'",
        );
        let unrelated = d(
            "/w/main.c",
            8,
            Severity::Warning,
            "",
            "clangd",
            "Unused variable 'x'",
        );
        let e = entries(vec![root, a, b, unrelated]);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].secondary.len(), 2);
    }

    #[test]
    fn cap_filter_and_counts() {
        let mut v: Vec<_> = (1..=60)
            .map(|i| {
                d(
                    "/w/a.py",
                    i,
                    Severity::Error,
                    "",
                    "x",
                    &format!("error {i}"),
                )
            })
            .collect();
        v.push(d("/w/b.py", 1, Severity::Hint, "", "x", "hint"));
        v.push(d("/w/b.py", 2, Severity::Warning, "", "x", "warn"));
        let r = report(v.clone(), parts(50));
        assert_eq!((r.entries.len(), r.omitted), (50, 12));
        assert_eq!((r.errors, r.warnings, r.hints, r.hidden), (60, 1, 1, 0));
        assert_eq!(r.files_with_problems, 2);
        let r = report(
            v,
            ReportParts {
                filter: SeverityFilter::Error,
                ..parts(100)
            },
        );
        assert_eq!((r.entries.len(), r.omitted, r.hidden), (60, 0, 2));
        assert_eq!(r.files_with_problems, 1);
    }
}
