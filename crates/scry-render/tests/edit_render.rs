//! Edit answers as text and JSON (reviewed snapshots).

use std::path::{Path, PathBuf};

use scry_ops::{
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
}
