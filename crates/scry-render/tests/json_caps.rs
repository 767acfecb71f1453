//! Structured output (`render_json`: MCP `structuredContent`, CLI `--json`)
//! gets the same caps as the text: a huge edit preview or answer stays
//! within `max_chars` and says what was left out.

use std::path::Path;

use scry_model::{Action, Answer, Body, EditReport, Loc, Question, Reason};
use scry_render::{RenderOptions, render_json, render_text};
use serde_json::{Value, json};

const ROOT: &str = "/ws/proj";

fn size(v: &Value) -> usize {
    serde_json::to_string(v).unwrap().chars().count()
}

/// A dry-run rename over two files with `lines` changed lines each.
fn huge_preview(lines: usize) -> EditReport {
    let diff = |f: &str| {
        let mut d = format!("--- a/{f}\n+++ b/{f}\n@@ -1,{lines} +1,{lines} @@\n");
        for i in 0..lines {
            d.push_str(&format!(
                "-let old_name_{i} = \"value\";\n+let new_name_{i} = \"value\";\n"
            ));
        }
        d
    };
    let edits: Vec<Value> = (0..lines)
        .map(|i| json!({"path": format!("{ROOT}/src/a.rs"), "line": i + 1, "col": 5, "text": "let new_name = 1;"}))
        .collect();
    serde_json::from_value(json!({
        "kind": "rename",
        "title": "old_name",
        "new_name": "new_name",
        "applied": false,
        "edits": edits,
        "files_changed": 2,
        "previews": [
            {"path": format!("{ROOT}/src/a.rs"), "diff": diff("src/a.rs")},
            {"path": format!("{ROOT}/src/b.rs"), "diff": diff("src/b.rs")},
        ],
    }))
    .expect("an EditReport")
}

#[test]
fn huge_edit_preview_is_capped_with_markers() {
    let report = huge_preview(60_000); // ~5 MB of diff
    let a = Answer::new(Action::Rename, Question::default(), Body::Edit(report));
    let opts = RenderOptions::default();
    let v = render_json(&a, Path::new(ROOT), &opts);
    let n = size(&v);
    assert!(n <= opts.max_chars, "structured output is {n} characters");
    let previews = v["previews"].as_array().unwrap();
    assert_eq!(previews.len(), 2);
    let first = &previews[0];
    assert!(
        first["diff"]
            .as_str()
            .unwrap()
            .starts_with("--- a/src/a.rs\n")
    );
    assert!(
        first["diff"].as_str().unwrap().ends_with('\n'),
        "cut at a line"
    );
    assert_eq!(first["omitted"]["reason"], "max_chars", "{first}");
    assert!(first["omitted"]["lines"].as_u64().unwrap() > 100_000);
    assert!(previews[1]["omitted"]["lines"].as_u64().unwrap() > 100_000);
    assert_eq!(v["total_edits"], 60_000);
    assert!(
        v["omitted"]["count"].as_u64().unwrap() > 0,
        "edits left out: {}",
        v["omitted"]
    );
    // the text is capped too, and neither is much bigger than the other
    let t = render_text(&a, Path::new(ROOT), &opts);
    assert!(t.chars().count() <= opts.max_chars + 200, "{}", t.len());

    // smaller caps hold as well
    let small = RenderOptions {
        max_chars: 2_000,
        max_locations: 10,
        ..RenderOptions::default()
    };
    let v = render_json(&a, Path::new(ROOT), &small);
    assert!(size(&v) <= 2_000, "{}", size(&v));
    assert!(v["edits"].as_array().unwrap().len() <= 10);
}

#[test]
fn small_preview_is_untouched() {
    let a = Answer::new(
        Action::Rename,
        Question::default(),
        Body::Edit(huge_preview(3)),
    );
    let v = render_json(&a, Path::new(ROOT), &RenderOptions::default());
    assert!(v["previews"][0].get("omitted").is_none(), "{v}");
    assert!(v.get("truncated").is_none(), "{v}");
    assert!(v.get("omitted").is_none(), "{v}");
}

#[test]
fn anything_else_over_the_cap_is_clipped_and_said() {
    let locations: Vec<Loc> = (0..5_000)
        .map(|i| Loc {
            path: Path::new(ROOT).join(format!("src/f{}.rs", i % 50)),
            line: i + 1,
            col: 1,
            end_line: i + 1,
            end_col: 2,
            text: Some("x".repeat(300)),
        })
        .collect();
    let mut a = Answer::new(
        Action::References,
        Question::default(),
        Body::Locations { locations },
    );
    let long = |name: String| Reason::LocalBinding { name };
    a.notes = vec![
        long("n".repeat(1_000_000)),
        Reason::ServerStarting {
            server: "pyright".into(),
        },
    ];
    a.empty_reason = Some(long("e".repeat(200_000)));
    let opts = RenderOptions::default();
    let v = render_json(&a, Path::new(ROOT), &opts);
    let n = size(&v);
    assert!(n <= opts.max_chars, "structured output is {n} characters");
    assert_eq!(v["truncated"]["reason"], "max_chars", "{}", v["truncated"]);
    assert!(v["truncated"]["chars"].as_u64().unwrap() > 1_000_000);
    assert!(v["notes"][0].as_str().unwrap().ends_with('…'));
    assert_eq!(v["notes"][1], "pyright is starting");
    assert_eq!(v["total"], 5_000);
    // the results are not crowded out by the huge notes
    let shown = v["locations"].as_array().unwrap().len();
    assert!(shown >= 20, "{shown} locations shown");
    assert_eq!(v["omitted"]["count"], 5_000 - shown);
}
