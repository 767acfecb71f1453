//! Edit answers as text and JSON (reviewed snapshots).

use std::path::{Path, PathBuf};

use scry_model::{
    Action, Answer, Body, CodeActionInfo, CodeActionList, EditKind, EditReport, EditedLine,
    FileMove, FilePreview, Loc, Question,
};
use scry_render::{RenderOptions, render_json, render_text};

const ROOT: &str = "/ws/proj";

fn p(s: &str) -> PathBuf {
    Path::new(ROOT).join(s)
}

fn rename_report(applied: bool) -> EditReport {
    let line = |f: &str, l: u32, c: u32, t: &str| EditedLine {
        path: p(f),
        line: l,
        col: c,
        text: t.into(),
    };
    EditReport {
        kind: EditKind::Rename,
        title: "total_weight".into(),
        new_name: Some("weight_sum".into()),
        applied,
        edits: vec![
            line("src/report.rs", 8, 13, "    let w = weight_sum(inv);"),
            line(
                "src/inventory.rs",
                17,
                8,
                "pub fn weight_sum(inv: &Inventory) -> u32 {",
            ),
            line(
                "src/main.rs",
                7,
                17,
                "use inventory::{weight_sum, Inventory};",
            ),
            line(
                "src/main.rs",
                13,
                33,
                "    let (label, w) = (\"📦 café\", weight_sum(&inv));",
            ),
        ],
        files_changed: 4,
        created: vec![],
        renamed: vec![FileMove {
            from: p("src/report.rs"),
            to: p("src/summary.rs"),
        }],
        deleted: vec![],
        overwritten: vec![],
        previews: if applied {
            vec![]
        } else {
            vec![FilePreview {
                path: p("src/main.rs"),
                diff: "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -7 +7 @@\n-use inventory::{total_weight, Inventory};\n+use inventory::{weight_sum, Inventory};\n".into(),
            }]
        },
        diagnostics: None,
        journal_id: applied.then(|| "abc123".into()),
        replayed: false,
    }
}

fn answer(body: Body, action: Action) -> Answer {
    let mut a = Answer::new(action, Question::default(), body);
    a.server = Some("rust-analyzer".into());
    a
}

#[test]
fn rename_applied_text() {
    let a = answer(Body::Edit(rename_report(true)), Action::Rename);
    insta::assert_snapshot!(render_text(&a, Path::new(ROOT), &RenderOptions::default()));
}

#[test]
fn rename_preview_text() {
    let a = answer(Body::Edit(rename_report(false)), Action::Rename);
    insta::assert_snapshot!(render_text(&a, Path::new(ROOT), &RenderOptions::default()));
}

#[test]
fn rename_capped_text_and_json() {
    let a = answer(Body::Edit(rename_report(true)), Action::Rename);
    let opts = RenderOptions {
        max_locations: 2,
        max_chars: 16_000,
        ..RenderOptions::default()
    };
    insta::assert_snapshot!(render_text(&a, Path::new(ROOT), &opts));
    insta::assert_json_snapshot!(render_json(&a, Path::new(ROOT), &opts));
}

#[test]
fn code_action_list_text() {
    let list = CodeActionList {
        range: Loc {
            path: p("src/main.rs"),
            line: 3,
            col: 5,
            end_line: 3,
            end_col: 12,
            text: None,
        },
        diagnostics: 1,
        actions: vec![
            CodeActionInfo {
                index: 1,
                title: "Import `std::collections::HashMap`".into(),
                kind: Some("quickfix".into()),
                preferred: true,
                disabled: None,
            },
            CodeActionInfo {
                index: 2,
                title: "Extract into variable".into(),
                kind: Some("refactor.extract".into()),
                preferred: false,
                disabled: Some("no expression selected".into()),
            },
        ],
    };
    let a = answer(Body::CodeActions(list), Action::CodeActions);
    insta::assert_snapshot!(render_text(&a, Path::new(ROOT), &RenderOptions::default()));
    // How to apply one, in the command line's syntax there.
    let cli = RenderOptions {
        dialect: scry_render::Dialect::Cli,
        ..RenderOptions::default()
    };
    let text = render_text(&a, Path::new(ROOT), &cli);
    assert!(
        text.ends_with(
            "Apply one by number or title (`--apply N`, `--apply TITLE`); preview it with `--dry-run`."
        ),
        "{text}"
    );
}

/// Issue 11: resource operations are named in the first line. A code
/// action that only overwrites a file (emptying it) never reads as "no file
/// changes"; many operations are capped with a count.
#[test]
fn resource_operations_in_the_summary_line() {
    let resources = |applied: bool| EditReport {
        kind: EditKind::CodeAction,
        title: "Reset config".into(),
        new_name: None,
        applied,
        edits: vec![],
        files_changed: 1,
        created: vec![],
        renamed: vec![],
        deleted: vec![],
        overwritten: vec![p("setup.py")],
        previews: if applied {
            vec![]
        } else {
            vec![FilePreview {
                path: p("setup.py"),
                diff: "--- a/setup.py\n+++ b/setup.py\n@@ -1 +0,0 @@\n-import setuptools\n".into(),
            }]
        },
        diagnostics: None,
        journal_id: applied.then(|| "abc123".into()),
        replayed: false,
    };
    let a = answer(Body::Edit(resources(true)), Action::CodeActions);
    let text = render_text(&a, Path::new(ROOT), &RenderOptions::default());
    assert!(!text.contains("no file changes"), "{text}");
    insta::assert_snapshot!("overwrite_only_applied_text", text);
    let a = answer(Body::Edit(resources(false)), Action::CodeActions);
    insta::assert_snapshot!(
        "overwrite_only_preview_text",
        render_text(&a, Path::new(ROOT), &RenderOptions::default())
    );
    insta::assert_json_snapshot!(
        "overwrite_only_preview_json",
        render_json(&a, Path::new(ROOT), &RenderOptions::default())
    );
    // Every kind, with more names than the first line shows.
    let mut r = rename_report(true);
    r.kind = EditKind::CodeAction;
    r.title = "Split module".into();
    r.new_name = None;
    r.created = (1..=5).map(|i| p(&format!("src/part{i}.rs"))).collect();
    r.overwritten = vec![p("src/lib.rs")];
    r.deleted = vec![p("src/old.rs")];
    r.files_changed = 12;
    let a = answer(Body::Edit(r), Action::CodeActions);
    insta::assert_snapshot!(
        "all_resource_operations_text",
        render_text(&a, Path::new(ROOT), &RenderOptions::default())
    );
}

/// A server's edits that write what is there (renaming `total_weight` to
/// `r#total_weight`): the header says nothing changes, not "4 edits in 3
/// files" as if something did (issue 38).
#[test]
fn edits_that_change_nothing_say_so() {
    let mut r = rename_report(true);
    r.new_name = Some("r#total_weight".into());
    r.files_changed = 0;
    r.renamed = vec![];
    let a = answer(Body::Edit(r), Action::Rename);
    let text = render_text(&a, Path::new(ROOT), &RenderOptions::default());
    let header = text.lines().next().unwrap_or_default();
    assert!(
        header.starts_with(
            "Renaming `total_weight` → `r#total_weight` changes nothing: the server's"
        ),
        "{header}"
    );
}
