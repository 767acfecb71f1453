//! The edit layer alone, without servers or the engine: confinement of
//! every path an edit names, validation of ranges and views, faithful text
//! edits (line endings, BOM, permissions), resource operations, and the
//! transactional commit with an injected failure at any file. (Journal,
//! undo, recovery and the writer lock on the whole edit path: in
//! `safety_tests`.)

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use scry_base::uri::path_to_uri as uri;
use scry_model::EditFact;
use scry_model::edit_fact::WriteStep;
use scry_model::error::OpError;
use scry_testkit::edits::{Ws, edit, edit_fact, snapshot, ws};
use scry_text::{Encoding, LineIndex};
use serde_json::{Value, json};

use crate::apply::{WriteOptions, commit};
use crate::diff;
use crate::plan::{EditPlan, Protected, ServerView, build_plan};
use crate::platform::testing;

/// No configuration file protected: what these tests edit is the layer's
/// own rules (scry's and other agents' files are the engine's, tested there).
const NONE_PROTECTED: Protected<'static> = Protected {
    anywhere: &[],
    at_root: &[],
};

fn plan(w: &Ws, e: &Value) -> Result<EditPlan, OpError> {
    build_plan(
        &w.root,
        e,
        Encoding::Utf16,
        &HashMap::new(),
        "test-server",
        &NONE_PROTECTED,
    )
}

fn rejected_and_untouched(w: &Ws, e: Value) {
    let before = snapshot(w.root.parent().unwrap());
    let r = plan(w, &e).and_then(|p| commit(&p, &WriteOptions::default()));
    assert!(r.is_err(), "expected a rejection for {e}");
    assert_eq!(
        before,
        snapshot(w.root.parent().unwrap()),
        "nothing may be written"
    );
}

#[test]
fn attack_paths_are_rejected_with_nothing_written() {
    let w = ws(&[("a.txt", "hello\n")]);
    let a = uri(&w.root.join("a.txt"));
    // `..` out of the root.
    let dotdot = format!("{}/../outside/secret.txt", uri(&w.root));
    rejected_and_untouched(
        &w,
        json!({"changes": {a.clone(): [edit(0,0,0,5,"HELLO")], dotdot: [edit(0,0,0,6,"pwned")]}}),
    );
    // Absolute path outside.
    rejected_and_untouched(
        &w,
        json!({"documentChanges": [
            {"textDocument": {"uri": a, "version": null}, "edits": [edit(0,0,0,5,"HELLO")]},
            {"textDocument": {"uri": uri(&w.outside.join("secret.txt")), "version": null}, "edits": [edit(0,0,0,6,"pwned")]},
        ]}),
    );
    // A symlink inside the root pointing outside: editing through it.
    if testing::link_or_skip(&w.outside.join("secret.txt"), &w.root.join("link.txt")) {
        rejected_and_untouched(
            &w,
            json!({"changes": {uri(&w.root.join("link.txt")): [edit(0,0,0,6,"pwned")]}}),
        );
    }
    // A symlinked directory pointing outside: creating a file through it.
    if testing::link_or_skip(&w.outside, &w.root.join("out")) {
        rejected_and_untouched(
            &w,
            json!({"documentChanges": [{"kind": "create", "uri": uri(&w.root.join("out/new.txt"))}]}),
        );
    }
    // RenameFile into /tmp.
    rejected_and_untouched(
        &w,
        json!({"documentChanges": [{"kind": "rename", "oldUri": uri(&w.root.join("a.txt")), "newUri": "file:///tmp/scry-stolen.txt"}]}),
    );
    assert!(!Path::new("/tmp/scry-stolen.txt").exists());
    // DeleteFile of the root.
    rejected_and_untouched(
        &w,
        json!({"documentChanges": [{"kind": "delete", "uri": uri(&w.root), "options": {"recursive": true}}]}),
    );
    // DeleteFile of the root spelt with `..`.
    rejected_and_untouched(
        &w,
        json!({"documentChanges": [{"kind": "delete", "uri": format!("{}/sub/..", uri(&w.root)), "options": {"recursive": true}}]}),
    );
    // Inside .git; a non-file URI.
    rejected_and_untouched(
        &w,
        json!({"documentChanges": [{"kind": "create", "uri": uri(&w.root.join(".git/hooks/pre-commit"))}]}),
    );
    rejected_and_untouched(
        &w,
        json!({"changes": {"untitled:Untitled-1": [edit(0,0,0,0,"x")]}}),
    );
    assert_eq!(
        std::fs::read_to_string(w.outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
}

#[test]
fn invalid_ranges_and_overlaps_are_rejected() {
    let w = ws(&[("a.txt", "ab😀c\nxyz\n")]);
    let a = uri(&w.root.join("a.txt"));
    // Inside the surrogate pair of 😀 (utf-16 units 2..4).
    rejected_and_untouched(&w, json!({"changes": {a.clone(): [edit(0,3,0,3,"!")]}}));
    // Past the line end, past the last line.
    rejected_and_untouched(&w, json!({"changes": {a.clone(): [edit(1,4,1,4,"!")]}}));
    rejected_and_untouched(&w, json!({"changes": {a.clone(): [edit(5,0,5,0,"!")]}}));
    // Overlapping, and end before start.
    rejected_and_untouched(
        &w,
        json!({"changes": {a.clone(): [edit(1,0,1,2,"A"), edit(1,1,1,3,"B")]}}),
    );
    rejected_and_untouched(&w, json!({"changes": {a.clone(): [edit(1,2,1,0,"A")]}}));
    // Exact utf-16 positions after the emoji work.
    let p = plan(
        &w,
        &json!({"changes": {a: [edit(0,4,0,5,"C"), edit(2,0,2,0,"end\n")]}}),
    )
    .unwrap();
    commit(&p, &WriteOptions::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(w.root.join("a.txt")).unwrap(),
        "ab😀C\nxyz\nend\n"
    );
    assert_eq!((p.edits[0].line, p.edits[0].col), (1, 4));
}

#[test]
fn stale_views_and_versions_refuse_naming_the_file() {
    let w = ws(&[("a.txt", "one\n")]);
    let path = w.root.join("a.txt");
    let a = uri(&path);
    let mut views = HashMap::new();
    views.insert(
        path.clone(),
        ServerView {
            text: Arc::new(LineIndex::new("old content\n")),
            version: 3,
        },
    );
    let e = json!({"documentChanges": [{"textDocument": {"uri": a, "version": 3}, "edits": [edit(0,0,0,3,"two")]}]});
    let err = build_plan(&w.root, &e, Encoding::Utf16, &views, "srv", &NONE_PROTECTED).unwrap_err();
    assert_eq!(err.code(), "FILE_CHANGED");
    assert!(
        matches!(edit_fact(&err), EditFact::ChangedSinceRead { path: p, server } if *p == path && server == "srv"),
        "{err}"
    );
    views.insert(
        path.clone(),
        ServerView {
            text: Arc::new(LineIndex::new("one\n")),
            version: 4,
        },
    );
    let err = build_plan(&w.root, &e, Encoding::Utf16, &views, "srv", &NONE_PROTECTED).unwrap_err();
    assert_eq!(err.code(), "FILE_CHANGED");
    assert!(
        matches!(edit_fact(&err), EditFact::VersionMismatch { path: p, version: 3, synced: 4, .. } if *p == path),
        "{err}"
    );
    views.get_mut(&path).unwrap().version = 3;
    let p = build_plan(&w.root, &e, Encoding::Utf16, &views, "srv", &NONE_PROTECTED).unwrap();
    // Changed on disk between plan and commit.
    std::fs::write(&path, "uno\n").unwrap();
    let err = commit(&p, &WriteOptions::default()).unwrap_err();
    assert_eq!(err.code(), "FILE_CHANGED");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "uno\n");
}

#[test]
fn crlf_bom_trailing_newline_and_permissions_are_kept() {
    let w = ws(&[
        ("crlf.txt", "let a = 1;\r\nlet b = a;\r\n"),
        ("bom.txt", "\u{feff}first\nsecond"),
    ]);
    testing::set_word(&w.root.join("crlf.txt"), testing::KEPT).unwrap();
    let e = json!({"changes": {
        uri(&w.root.join("crlf.txt")): [edit(0,4,0,5,"x"), edit(1,8,1,9,"x\nlet c = x;")],
        // Whole-document replacement without the BOM and with a trailing newline.
        uri(&w.root.join("bom.txt")): [edit(0,0,1,6,"FIRST\nSECOND\n")],
    }});
    let p = plan(&w, &e).unwrap();
    commit(&p, &WriteOptions::default()).unwrap();
    assert_eq!(
        std::fs::read(w.root.join("crlf.txt")).unwrap(),
        b"let x = 1;\r\nlet b = x\r\nlet c = x;;\r\n"
    );
    assert_eq!(
        testing::word(&w.root.join("crlf.txt")).unwrap() & 0o777,
        testing::KEPT
    );
    assert_eq!(
        std::fs::read_to_string(w.root.join("bom.txt")).unwrap(),
        "\u{feff}FIRST\nSECOND"
    );
}

#[test]
fn resource_operations_create_rename_delete() {
    let w = ws(&[
        ("src/old.rs", "fn f() {}\n"),
        ("gone.txt", "x"),
        ("dir/a.txt", "a"),
    ]);
    let e = json!({"documentChanges": [
        {"kind": "create", "uri": uri(&w.root.join("new/deep/n.rs"))},
        {"textDocument": {"uri": uri(&w.root.join("new/deep/n.rs")), "version": null}, "edits": [edit(0,0,0,0,"// new\n")]},
        {"kind": "rename", "oldUri": uri(&w.root.join("src/old.rs")), "newUri": uri(&w.root.join("src/renamed.rs"))},
        {"textDocument": {"uri": uri(&w.root.join("src/renamed.rs")), "version": null}, "edits": [edit(0,3,0,4,"g")]},
        {"kind": "rename", "oldUri": uri(&w.root.join("dir")), "newUri": uri(&w.root.join("dir2"))},
        {"kind": "delete", "uri": uri(&w.root.join("gone.txt"))},
    ]});
    let p = plan(&w, &e).unwrap();
    let diffs = diff::plan_diffs(&p, &w.root);
    assert!(
        diffs
            .iter()
            .any(|d| d.diff.starts_with("rename src/old.rs → src/renamed.rs"))
    );
    assert!(
        diffs
            .iter()
            .any(|d| d.diff.starts_with("new file new/deep/n.rs"))
    );
    commit(&p, &WriteOptions::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(w.root.join("new/deep/n.rs")).unwrap(),
        "// new\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.root.join("src/renamed.rs")).unwrap(),
        "fn g() {}\n"
    );
    assert!(!w.root.join("src/old.rs").exists());
    assert!(!w.root.join("gone.txt").exists());
    assert!(!w.root.join("dir").exists());
    assert_eq!(
        std::fs::read_to_string(w.root.join("dir2/a.txt")).unwrap(),
        "a"
    );
    assert_eq!(
        p.edits.iter().map(|e| e.path.clone()).collect::<Vec<_>>(),
        vec![w.root.join("new/deep/n.rs"), w.root.join("src/renamed.rs")]
    );
    // Options: exists without overwrite → rejected; ignoreIfExists → nothing.
    rejected_and_untouched(
        &w,
        json!({"documentChanges": [{"kind": "create", "uri": uri(&w.root.join("src/renamed.rs"))}]}),
    );
    let p = plan(&w, &json!({"documentChanges": [{"kind": "create", "uri": uri(&w.root.join("src/renamed.rs")), "options": {"ignoreIfExists": true}}]})).unwrap();
    assert!(p.is_empty());
    // A non-empty directory without `recursive`.
    rejected_and_untouched(
        &w,
        json!({"documentChanges": [{"kind": "delete", "uri": uri(&w.root.join("dir2"))}]}),
    );
}

/// Five files: edits, a creation, a deletion. A failure at every k restores
/// every file byte for byte.
#[test]
fn failure_at_file_k_of_n_restores_everything() {
    let files = [
        ("a.txt", "alpha\r\n"),
        ("b.txt", "\u{feff}beta"),
        ("c/c.txt", "gamma 😀\n"),
        ("d.txt", "delta\n"),
    ];
    let e = |w: &Ws| {
        json!({"documentChanges": [
            {"textDocument": {"uri": uri(&w.root.join("a.txt")), "version": null}, "edits": [edit(0,0,0,5,"ALPHA")]},
            {"textDocument": {"uri": uri(&w.root.join("b.txt")), "version": null}, "edits": [edit(0,1,0,5,"BETA")]},
            {"textDocument": {"uri": uri(&w.root.join("c/c.txt")), "version": null}, "edits": [edit(0,6,0,8,"🎉")]},
            {"kind": "delete", "uri": uri(&w.root.join("d.txt"))},
            {"kind": "create", "uri": uri(&w.root.join("e/new.txt"))},
        ]})
    };
    for k in 0..5 {
        let w = ws(&files);
        let before = snapshot(&w.root);
        let p = plan(&w, &e(&w)).unwrap();
        assert_eq!(p.changes.len(), 5);
        let err = commit(&p, &WriteOptions { fail_at: Some(k) }).unwrap_err();
        assert_eq!(err.code(), "WRITE_FAILED");
        assert!(
            matches!(
                edit_fact(&err),
                EditFact::WriteFailed { step: WriteStep::Replace { k: at, n: 5, .. }, unrestored }
                    if *at == k + 1 && unrestored.is_empty()
            ),
            "{err}"
        );
        assert_eq!(
            before,
            snapshot(&w.root),
            "failure at {k} left changes behind"
        );
    }
    // And without a failure, all of it lands.
    let w = ws(&files);
    let p = plan(&w, &e(&w)).unwrap();
    commit(&p, &WriteOptions::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(w.root.join("c/c.txt")).unwrap(),
        "gamma 🎉\n"
    );
    assert!(w.root.join("e/new.txt").exists() && !w.root.join("d.txt").exists());
}

/// A read-only file (no write permission on Unix, the read-only attribute
/// on Windows) is edited as its directory allows, and stays read-only.
#[test]
fn a_read_only_file_is_edited_and_stays_read_only() {
    let w = ws(&[("ro.txt", "old\r\n")]);
    let p = w.root.join("ro.txt");
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    perm.set_readonly(true);
    std::fs::set_permissions(&p, perm).unwrap();
    let word = testing::word(&p).unwrap();
    let e = json!({"changes": {uri(&p): [edit(0,0,0,3,"new")]}});
    commit(&plan(&w, &e).unwrap(), &WriteOptions::default()).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"new\r\n");
    assert!(std::fs::metadata(&p).unwrap().permissions().readonly());
    assert_eq!(testing::word(&p).unwrap(), word, "its permission word kept");
}
