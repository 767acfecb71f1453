//! The repository map (`map`) as text and JSON. The line formats are the
//! ones the map's budget was counted in (`scry_model::map_line`), so the
//! listing fits the budget the caller gave.

use std::path::Path;

use scry_model::RepoMapReport;
use scry_model::map_line;
use serde_json::{Value, json};

use crate::common::Rendered;
use crate::display_path;

/// Skipped files named before "and N more".
const SKIPPED_SHOWN: usize = 5;

pub(crate) fn render_map(m: &RepoMapReport, root: &Path) -> Rendered {
    let focus = if m.focus.is_empty() {
        String::new()
    } else {
        format!(", focused on {}", m.focus.join(", "))
    };
    let header = format!(
        "Repository map ({} of {} files{focus}; ranked by references between files) — syntactic (tree-sitter):",
        m.files.len(),
        m.total_files
    );
    let mut body = Vec::new();
    for f in &m.files {
        let rel = display_path(&f.path, root);
        body.push(map_line::file_line(Path::new(&rel)));
        body.extend(
            f.definitions
                .iter()
                .map(|d| map_line::def_line(d.line, &d.signature)),
        );
    }
    let mut marker = Vec::new();
    if m.omitted_files > 0 || m.omitted_definitions > 0 {
        marker.push(format!(
            "… {} more files and {} more definitions left out (budget {} characters; raise the budget or name paths/symbols to focus)",
            m.omitted_files, m.omitted_definitions, m.budget
        ));
    }
    if !m.skipped.is_empty() {
        let mut s = m
            .skipped
            .iter()
            .take(SKIPPED_SHOWN)
            .map(crate::words::skipped)
            .collect::<Vec<_>>()
            .join(", ");
        if m.skipped.len() > SKIPPED_SHOWN {
            s.push_str(&format!(" and {} more", m.skipped.len() - SKIPPED_SHOWN));
        }
        marker.push(format!("Not indexed: {s}"));
    }
    Rendered {
        header,
        body,
        marker: (!marker.is_empty()).then(|| marker.join("\n")),
    }
}

pub(crate) fn map_json(m: &RepoMapReport, root: &Path) -> Vec<(&'static str, Value)> {
    let files: Vec<Value> = m
        .files
        .iter()
        .map(|f| {
            json!({
                "path": display_path(&f.path, root),
                "definitions": f.definitions.iter().map(|d| json!({
                    "line": d.line,
                    "kind": d.kind,
                    "name": d.name,
                    "signature": d.signature,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    vec![
        ("focus", m.focus.clone().into()),
        ("files", files.into()),
        ("total_files", m.total_files.into()),
        (
            "omitted",
            json!({"files": m.omitted_files, "definitions": m.omitted_definitions, "reason": "budget"}),
        ),
        ("budget", m.budget.into()),
        (
            "skipped",
            m.skipped
                .iter()
                .map(crate::words::skipped)
                .collect::<Vec<_>>()
                .into(),
        ),
    ]
}
