//! Snapshots of diagnostics answers and after-edit deltas: what a model reads.

use std::path::{Path, PathBuf};

use scry_model::{
    Action, Answer, Body, Diagnostic, DiagnosticEntry, DiagnosticsDelta, DiagnosticsReport, Loc,
    PendingFile, ProviderOutcome, ProviderRun, Question, Severity, SeverityFilter,
};
use scry_render::{RenderOptions, render_delta_text, render_json, render_text};

const ROOT: &str = "/ws/shop";

fn loc(rel: &str, line: u32, col: u32, text: Option<&str>) -> Loc {
    Loc {
        path: Path::new(ROOT).join(rel),
        line,
        col,
        end_line: line,
        end_col: col + 3,
        text: text.map(str::to_string),
    }
}

#[allow(clippy::too_many_arguments)]
fn diag(
    rel: &str,
    line: u32,
    col: u32,
    sev: Severity,
    code: &str,
    src: &str,
    msg: &str,
    text: Option<&str>,
) -> Diagnostic {
    Diagnostic {
        loc: loc(rel, line, col, text),
        severity: sev,
        code: (!code.is_empty()).then(|| code.to_string()),
        source: src.into(),
        provider: src.into(),
        message: msg.into(),
    }
}

fn run(id: &str, kind: &str, outcome: ProviderOutcome, detail: Option<&str>) -> ProviderRun {
    ProviderRun {
        id: id.into(),
        kind: kind.into(),
        outcome,
        files: 2,
        detail: detail.map(str::to_string),
        elapsed_ms: 10,
    }
}

fn answer(r: DiagnosticsReport) -> Answer {
    Answer::new(
        Action::Diagnostics,
        Question::default(),
        Body::Diagnostics(r),
    )
}

fn report(entries: Vec<DiagnosticEntry>) -> DiagnosticsReport {
    DiagnosticsReport {
        scope: "src/".into(),
        filter: SeverityFilter::Warning,
        files_checked: 2,
        entries,
        omitted: 0,
        errors: 0,
        warnings: 0,
        infos: 0,
        hints: 0,
        hidden: 0,
        files_with_problems: 0,
        providers: vec![
            run("pyright", "lsp", ProviderOutcome::Checked, None),
            run("ruff", "cli", ProviderOutcome::Checked, None),
            run("eslint", "cli", ProviderOutcome::NotInstalled, None),
        ],
        pending: Vec::new(),
        changes: None,
    }
}

#[test]
fn diagnostics_text_and_json() {
    let root_err = diag(
        "src/app.py",
        1,
        6,
        Severity::Error,
        "reportMissingImports",
        "pyright",
        "Import \"missing_helpers\" could not be resolved",
        Some("from missing_helpers import tidy, scrub"),
    );
    let cascade = diag(
        "src/app.py",
        1,
        35,
        Severity::Warning,
        "F401",
        "ruff",
        "`missing_helpers.scrub` imported but unused",
        Some("from missing_helpers import tidy, scrub"),
    );
    let ty = diag(
        "src/app.py",
        12,
        20,
        Severity::Error,
        "reportArgumentType",
        "pyright",
        "Argument of type \"list[str]\" cannot be assigned to parameter \"prices\"",
        Some("count: int = total([\"a\", \"b\"])"),
    );
    let unused = diag(
        "src/a.py",
        1,
        8,
        Severity::Warning,
        "F401",
        "ruff",
        "`os` imported but unused",
        Some("import os"),
    );
    let mut r = report(vec![
        DiagnosticEntry {
            diagnostic: root_err,
            count: 1,
            also: vec![],
            secondary: vec![cascade],
        },
        DiagnosticEntry {
            diagnostic: ty,
            count: 1,
            also: vec![],
            secondary: vec![],
        },
        DiagnosticEntry {
            diagnostic: unused,
            count: 5,
            also: vec![
                loc("src/b.py", 1, 8, None),
                loc("src/c.py", 2, 8, None),
                loc("src/d.py", 1, 8, None),
            ],
            secondary: vec![],
        },
    ]);
    r.errors = 2;
    r.warnings = 6;
    r.hidden = 3;
    r.files_with_problems = 5;
    r.omitted = 4;
    r.pending = vec![PendingFile {
        path: PathBuf::from(ROOT).join("src/slow.py"),
        provider: "pyright".into(),
        reason: "pyright was still checking (Indexing 40%)".into(),
    }];
    r.providers.push(run(
        "hang",
        "cli",
        ProviderOutcome::TimedOut,
        Some("hang did not finish within the time budget (1500 ms); it was stopped"),
    ));
    let a = answer(r);
    let opts = RenderOptions::default();
    insta::assert_snapshot!("diagnostics_text", render_text(&a, Path::new(ROOT), &opts));
    insta::assert_json_snapshot!("diagnostics_json", render_json(&a, Path::new(ROOT), &opts));
}

#[test]
fn clean_and_nothing_ran_differ() {
    let opts = RenderOptions::default();
    let clean = render_text(&answer(report(vec![])), Path::new(ROOT), &opts);
    let mut none = report(vec![]);
    none.providers = vec![run("eslint", "cli", ProviderOutcome::NotInstalled, None)];
    let none = render_text(&answer(none), Path::new(ROOT), &opts);
    let mut nothing = report(vec![]);
    nothing.files_checked = 0;
    nothing.providers.clear();
    let nothing = render_text(&answer(nothing), Path::new(ROOT), &opts);
    insta::assert_snapshot!(
        "diagnostics_clean",
        format!("{clean}\n---\n{none}\n---\n{nothing}")
    );
}

#[test]
fn delta_text() {
    let d = DiagnosticsDelta {
        introduced: vec![diag(
            "src/app.py",
            16,
            12,
            Severity::Error,
            "reportAssignmentType",
            "pyright",
            "Type \"Literal[1]\" is not assignable to declared type \"str\"",
            None,
        )],
        resolved: vec![diag(
            "src/app.py",
            12,
            20,
            Severity::Error,
            "reportArgumentType",
            "pyright",
            "Argument of type \"list[str]\" cannot be assigned",
            None,
        )],
        more_introduced: 2,
        more_resolved: 0,
        pending: vec![PendingFile {
            path: PathBuf::from(ROOT).join("src/lib.rs"),
            provider: "rust-analyzer".into(),
            reason: "rust-analyzer was still checking (cargo check)".into(),
        }],
        no_baseline: Vec::new(),
        checked_by: vec!["pyright".into(), "ruff".into()],
        elapsed_ms: 800,
    };
    insta::assert_snapshot!("diagnostics_delta", render_delta_text(&d, Path::new(ROOT)));
}
