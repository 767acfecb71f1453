//! The engine's protected files through the edit layer: scry's and git's
//! files never written, named or carried along by a directory operation.
//! (The safety core — journal, undo, recovery, the writer lock — and the
//! layer's validation and commit are tested in scry-edit.)

use std::collections::HashMap;

use scry_base::uri::path_to_uri as uri;
use scry_edit::plan::{EditPlan, build_plan};
use scry_lsp_session::Encoding;
use scry_testkit::edits::{Ws, edit, edit_fact, snapshot, ws};
use serde_json::{Value, json};

use super::service::PROTECTED;
use scry_model::EditFact;
use scry_model::edit_fact::Protection;
use scry_model::error::OpError;

fn plan(w: &Ws, e: &Value) -> Result<EditPlan, OpError> {
    build_plan(
        &w.root,
        e,
        Encoding::Utf16,
        &HashMap::new(),
        "test-server",
        &PROTECTED,
    )
}

/// Issue 11: no edit writes inside `.git` or scry's own configuration
/// files, named directly or carried along by a directory rename/delete;
/// refused as EDIT_REJECTED with the reason, nothing written.
#[test]
fn git_and_scry_config_are_never_written() {
    let w = ws(&[
        ("a.txt", "hello\n"),
        (".scry.json", "{}\n"),
        (".scry/config.json", "{}\n"),
        ("sub/scry.json", "{}\n"),
        ("vendored/.git/config", "[core]\n"),
        ("vendored/lib.txt", "lib\n"),
        (".git/config", "[core]\n"),
    ]);
    let reason = |e: Value| {
        let before = snapshot(w.root.parent().unwrap());
        let err = plan(&w, &e).unwrap_err();
        assert_eq!(snapshot(w.root.parent().unwrap()), before);
        assert_eq!(err.code(), "EDIT_REJECTED", "{err}");
        match edit_fact(&err) {
            EditFact::Protected { why, .. } => *why,
            other => panic!("{other:?}"),
        }
    };
    let config = [
        ".scry.json",
        ".scry/config.json",
        "sub/scry.json",
        "new/.scry.json",
        "lsp.json",
        ".zut/lsp.json",
    ];
    for f in config {
        let p = uri(&w.root.join(f));
        for e in [
            json!({"changes": {p.clone(): [edit(0,0,0,2,"{\"servers\":{\"x\":{\"command\":\"sh\"}}}")]}}),
            json!({"documentChanges": [{"kind": "create", "uri": p.clone(), "options": {"overwrite": true}}]}),
            json!({"documentChanges": [{"kind": "delete", "uri": p.clone()}]}),
            json!({"documentChanges": [{"kind": "rename", "oldUri": uri(&w.root.join("a.txt")), "newUri": p.clone(), "options": {"overwrite": true}}]}),
        ] {
            let why = reason(e);
            assert!(
                matches!(why, Protection::ScryConfig | Protection::ReadConfig),
                "{f}: {why:?}"
            );
        }
    }
    // .git, named or carried along by a directory operation.
    for e in [
        json!({"changes": {uri(&w.root.join(".git/config")): [edit(0,0,0,0,"x")]}}),
        json!({"documentChanges": [{"kind": "rename", "oldUri": uri(&w.root.join("vendored")), "newUri": uri(&w.root.join("moved"))}]}),
        json!({"documentChanges": [{"kind": "delete", "uri": uri(&w.root.join("vendored")), "options": {"recursive": true}}]}),
        json!({"documentChanges": [{"kind": "rename", "oldUri": uri(&w.root.join(".scry")), "newUri": uri(&w.root.join("elsewhere"))}]}),
    ] {
        let why = reason(e.clone());
        assert!(
            matches!(why, Protection::InsideGit | Protection::ScryConfig),
            "{e}: {why:?}"
        );
    }
    // An ordinary file next to them is still editable.
    let p = plan(
        &w,
        &json!({"changes": {uri(&w.root.join("a.txt")): [edit(0,0,0,5,"HELLO")]}}),
    )
    .unwrap();
    assert_eq!(p.changes.len(), 1);
}
