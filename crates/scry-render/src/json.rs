//! The structured JSON form: same content, sorting and caps as the text.
//!
//! Invariant: the compact serialisation stays within about `max_chars`
//! characters whatever the answer holds. Lists are cut to fit with an
//! `"omitted"` object; edit previews' diffs share what is left, each cut at
//! a line with its own `"omitted"`; and a last pass ([`bound`]) clips any
//! other long string or list, saying so in a top-level `"truncated"`.

use std::path::Path;

use scry_model::{Answer, Body, CallEdge, CallItem, Loc, SymbolItem, SymbolNode};
use serde_json::{Map, Value, json};

use crate::common::{
    Placed, asked_file_first, clip_line, distinct_files, flatten_outline, found_total, place,
    sort_dedup,
};
use crate::words::{self, Dialect};
use crate::{RenderOptions, display_path};

fn chars(v: &Value) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.chars().count())
}

/// `build(n)` for the largest `n <= limit` whose compact serialisation fits
/// in `max_chars` (or `build(0)` when nothing does).
fn fit_json(limit: usize, max_chars: usize, build: impl Fn(usize) -> Value) -> Value {
    let full = build(limit);
    if chars(&full) <= max_chars || limit == 0 {
        return full;
    }
    let (mut lo, mut hi) = (0usize, limit - 1); // answer in [lo, hi]
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if chars(&build(mid)) <= max_chars {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    build(lo)
}

fn reason(shown: usize, max_locations: usize) -> &'static str {
    if shown >= max_locations {
        "max_locations"
    } else {
        "max_chars"
    }
}

fn omitted_items(omitted: &[Placed], shown: usize, max_locations: usize) -> Option<Value> {
    (!omitted.is_empty()).then(|| {
        json!({
            "count": omitted.len(),
            "files": distinct_files(omitted),
            "reason": reason(shown, max_locations),
        })
    })
}

fn loc_json(loc: &Loc, path: &str) -> Value {
    let mut m = Map::new();
    m.insert("path".into(), path.into());
    m.insert("line".into(), loc.line.into());
    m.insert("col".into(), loc.col.into());
    m.insert("end_line".into(), loc.end_line.into());
    m.insert("end_col".into(), loc.end_col.into());
    if let Some(t) = &loc.text {
        m.insert("text".into(), clip_line(t).into());
    }
    Value::Object(m)
}

fn placed_json(p: &Placed) -> Value {
    loc_json(p.loc, &p.path)
}

fn call_item_json(item: &CallItem, root: &Path) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), item.name.clone().into());
    m.insert("kind".into(), item.kind.clone().into());
    if let Some(d) = &item.detail {
        m.insert("detail".into(), d.clone().into());
    }
    let loc = loc_json(&item.loc, &display_path(&item.loc.path, root));
    if let Value::Object(l) = loc {
        m.extend(l);
    }
    Value::Object(m)
}

/// The answer's common fields.
fn base(answer: &Answer, root: &Path, dialect: Dialect) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("action".into(), answer.action.name().into());
    let q = &answer.question;
    let mut question = Map::new();
    if let Some(p) = &q.path {
        question.insert("path".into(), display_path(p, root).into());
    }
    if let Some(s) = &q.symbol {
        question.insert("symbol".into(), s.clone().into());
    }
    if let Some(l) = q.line {
        question.insert("line".into(), l.into());
    }
    if let Some(c) = q.column {
        question.insert("column".into(), c.into());
    }
    if let Some(s) = &q.query {
        question.insert("query".into(), s.clone().into());
    }
    m.insert("question".into(), Value::Object(question));
    let server = crate::reports::server(answer, root).or_else(|| match &answer.body {
        Body::Capabilities { server, .. } => Some(server.clone()),
        _ => None,
    });
    m.insert("server".into(), server.into());
    m.insert(
        "asked_at".into(),
        answer.asked_at.as_ref().map_or(Value::Null, |a| {
            json!({
                "path": display_path(&a.loc.path, root),
                "line": a.loc.line,
                "col": a.loc.col,
                "via": words::via(&a.via).unwrap_or_default(),
            })
        }),
    );
    let mut others: Vec<_> = answer.others.iter().collect();
    others.sort_by_key(|o| (o.line, o.col));
    m.insert(
        "others".into(),
        others
            .iter()
            .map(|o| serde_json::to_value(o).unwrap_or(Value::Null))
            .collect(),
    );
    if let Some(same) = &answer.same_name {
        m.insert("same_name".into(), same_name(same, root, dialect));
    }
    let said = |r: &scry_model::Reason| Value::from(words::reason_in(r, root, dialect));
    m.insert(
        "partial".into(),
        answer.partial.as_ref().map_or(Value::Null, said),
    );
    m.insert("empty".into(), answer.body.is_empty().into());
    m.insert(
        "empty_reason".into(),
        answer.empty_reason.as_ref().map_or(Value::Null, said),
    );
    m.insert(
        "notes".into(),
        answer.notes.iter().map(said).collect::<Vec<_>>().into(),
    );
    if let Some(p) = answer.precision {
        m.insert("precision".into(), p.name().into());
    }
    m
}

fn with(base: &Map<String, Value>, fields: Vec<(&str, Value)>) -> Value {
    let mut m = base.clone();
    for (k, v) in fields {
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

pub(crate) fn render(answer: &Answer, root: &Path, opts: &RenderOptions) -> Value {
    bound(render_body(answer, root, opts), opts.max_chars)
}

fn render_body(answer: &Answer, root: &Path, opts: &RenderOptions) -> Value {
    let b = base(answer, root, opts.dialect);
    // Huge notes or reasons must not crowd the results out: the common
    // fields get at most a quarter of the budget.
    let mut common = Value::Object(b);
    let clipped = clip_strings(&mut common, opts.max_chars / 4);
    let Value::Object(mut b) = common else {
        unreachable!("base is an object")
    };
    if clipped > 0 {
        b.insert(
            "truncated".into(),
            json!({"chars": clipped, "items": 0, "reason": "max_chars"}),
        );
    }
    let max = opts.max_chars;
    let cap = opts.max_locations;
    match &answer.body {
        Body::Locations { locations } => {
            b.insert("kind".into(), "locations".into());
            let mut placed =
                sort_dedup(locations.iter().enumerate().map(|(i, l)| place(l, root, i)));
            let listed = placed.len();
            let total = found_total(answer, listed);
            asked_file_first(&mut placed, answer, root, listed > cap || total > listed);
            let limit = listed.min(cap);
            fit_json(limit, max, |n| {
                let mut fields = vec![
                    ("locations", placed[..n].iter().map(placed_json).collect()),
                    ("total", total.into()),
                ];
                if crate::common::server_capped(answer) {
                    // The server listed more than were kept.
                    fields.push(("total_at_least", true.into()));
                }
                let mut omitted = omitted_items(&placed[n..], n, cap);
                if total > listed {
                    // Found but past those the engine considered.
                    let o = omitted.get_or_insert_with(
                        || json!({"count": 0, "files": 0, "reason": "not_considered"}),
                    );
                    o["count"] = (total - n).into();
                    o["not_considered"] = (total - listed).into();
                }
                fields.extend(omitted.map(|o| ("omitted", o)));
                with(&b, fields)
            })
        }
        Body::Hover { text } => {
            b.insert("kind".into(), "hover".into());
            let text = crate::normalize_hover(text).trim().to_string();
            let len = text.chars().count();
            fit_json(len, max, |n| {
                if n >= len {
                    return with(&b, vec![("text", text.clone().into())]);
                }
                let cut: String = text.chars().take(n).collect();
                with(
                    &b,
                    vec![
                        ("text", format!("{cut}…").into()),
                        ("omitted", json!({"chars": len - n, "reason": "max_chars"})),
                    ],
                )
            })
        }
        Body::Outline { path, symbols } => {
            b.insert("kind".into(), "outline".into());
            b.insert("path".into(), display_path(path, root).into());
            let total = flatten_outline(symbols).len();
            fit_json(total.min(cap), max, |n| {
                let mut budget = n;
                let mut fields = vec![
                    ("symbols", outline_json(symbols, &mut budget)),
                    ("total", total.into()),
                ];
                if n < total {
                    fields.push((
                        "omitted",
                        json!({"count": total - n, "reason": reason(n, cap)}),
                    ));
                }
                with(&b, fields)
            })
        }
        Body::WorkspaceSymbols { query, symbols } => {
            b.insert("kind".into(), "workspace_symbols".into());
            b.insert("query".into(), query.clone().into());
            let placed = sort_dedup(
                symbols
                    .iter()
                    .enumerate()
                    .map(|(i, s)| place(&s.loc, root, i)),
            );
            fit_json(placed.len().min(cap), max, |n| {
                let items = placed[..n]
                    .iter()
                    .map(|p| symbol_item_json(&symbols[p.idx], p))
                    .collect();
                let mut fields = vec![("symbols", items), ("total", placed.len().into())];
                fields.extend(omitted_items(&placed[n..], n, cap).map(|o| ("omitted", o)));
                with(&b, fields)
            })
        }
        Body::Calls {
            direction,
            item,
            calls,
        } => {
            b.insert("kind".into(), "calls".into());
            b.insert(
                "direction".into(),
                serde_json::to_value(direction).unwrap_or(Value::Null),
            );
            b.insert(
                "item".into(),
                item.as_ref()
                    .map_or(Value::Null, |i| call_item_json(i, root)),
            );
            let placed = sort_dedup(
                calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| place(&c.item.loc, root, i)),
            );
            let sites: usize = placed.iter().map(|p| calls[p.idx].sites.len()).sum();
            fit_json(placed.len().min(cap), max, |n| {
                let items = placed[..n]
                    .iter()
                    .map(|p| call_json(&calls[p.idx], root))
                    .collect();
                let mut fields = vec![
                    ("calls", items),
                    ("total", placed.len().into()),
                    ("call_sites", sites.into()),
                ];
                fields.extend(omitted_items(&placed[n..], n, cap).map(|o| ("omitted", o)));
                with(&b, fields)
            })
        }
        Body::Status(report) => {
            b.insert("kind".into(), "status".into());
            with(&b, crate::reports::status_json(report, root))
        }
        Body::Map(m) => {
            b.insert("kind".into(), "map".into());
            with(&b, crate::map::map_json(m, root))
        }
        Body::Capabilities {
            root: server_root,
            encoding,
            capabilities,
            ..
        } => {
            b.insert("kind".into(), "capabilities".into());
            b.insert("root".into(), display_path(server_root, root).into());
            b.insert("encoding".into(), encoding.clone().into());
            capped_value(&b, "capabilities", capabilities, max)
        }
        Body::Raw { method, result } => {
            b.insert("kind".into(), "raw".into());
            b.insert("method".into(), method.clone().into());
            capped_value(&b, "result", result, max)
        }
        Body::Diagnostics(report) => {
            b.insert("kind".into(), "diagnostics".into());
            fit_json(report.entries.len(), max, |n| {
                with(&b, crate::diagnostics::json_fields(report, root, n))
            })
        }
        Body::Edit(r) => {
            b.insert("kind".into(), "edit".into());
            // The previews' diffs get what the rest leaves of the budget.
            let fields = |n: usize, previews: &Value| {
                let mut f = crate::edit::json_fields(r, root, n, cap);
                for (k, v) in f.iter_mut() {
                    if *k == "previews" {
                        *v = previews.clone();
                    }
                }
                f
            };
            let empty: Value = r
                .previews
                .iter()
                .map(|p| json!({"path": display_path(&p.path, root), "diff": ""}))
                .collect();
            // each cut preview adds its "omitted" object
            let rest = chars(&with(&b, fields(0, &empty))) + 100 * r.previews.len();
            let previews = clipped_previews(r, root, max.saturating_sub(rest));
            fit_json(r.edits.len().min(cap), max, |n| {
                with(&b, fields(n, &previews))
            })
        }
        Body::CodeActions(list) => {
            b.insert("kind".into(), "code_actions".into());
            with(&b, crate::edit::actions_json(list, root))
        }
        Body::Reloaded { stopped } => {
            b.insert("kind".into(), "reloaded".into());
            with(&b, vec![("stopped", (*stopped).into())])
        }
    }
}

/// Each preview's diff cut at a line so that all of them together take at
/// most `budget` characters (as JSON); a cut one says what it left out:
/// `"omitted": {"lines", "chars", "reason": "max_chars"}`.
fn clipped_previews(r: &scry_model::EditReport, root: &Path, budget: usize) -> Value {
    let mut used = 0usize;
    let mut out = Vec::new();
    for p in &r.previews {
        let mut kept = String::new();
        let mut lines = p.diff.split_inclusive('\n');
        let mut full = true;
        for line in lines.by_ref() {
            // as JSON: escapes count (`\n` is two characters)
            let cost = chars(&Value::String(line.to_string())).saturating_sub(2);
            if used + cost > budget {
                full = false;
                let rest_lines = 1 + lines.clone().count();
                let rest_chars =
                    line.chars().count() + lines.map(|l| l.chars().count()).sum::<usize>();
                out.push(json!({
                    "path": display_path(&p.path, root),
                    "diff": std::mem::take(&mut kept),
                    "omitted": {"lines": rest_lines, "chars": rest_chars, "reason": "max_chars"},
                }));
                break;
            }
            used += cost;
            kept.push_str(line);
        }
        if full {
            out.push(json!({"path": display_path(&p.path, root), "diff": kept}));
        }
    }
    Value::Array(out)
}

/// The last guard of the cap: when `v` is still over `max` characters,
/// clip its longest strings (to at least 200 characters, ending with `…`)
/// and then halve its longest lists until it fits, and say so in a
/// top-level `"truncated": {"chars", "items", "reason": "max_chars"}`
/// (added to one already there).
fn bound(mut v: Value, max: usize) -> Value {
    if chars(&v) <= max {
        return v;
    }
    let budget = max.saturating_sub(100); // room for the marker
    let clipped = clip_strings(&mut v, budget);
    let mut dropped_items = 0usize;
    for _ in 0..64 {
        if chars(&v) <= budget {
            break;
        }
        let mut arrays = Vec::new();
        collect_arrays(&v, String::new(), &mut arrays);
        let Some((ptr, _)) = arrays.into_iter().max_by_key(|a| a.1) else {
            break;
        };
        if let Some(Value::Array(a)) = v.pointer_mut(&ptr) {
            let keep = a.len() / 2;
            dropped_items += a.len() - keep;
            a.truncate(keep);
        }
    }
    if let Value::Object(m) = &mut v {
        let before = |k: &str| m.get("truncated").and_then(|t| t[k].as_u64()).unwrap_or(0) as usize;
        let (c, i) = (before("chars") + clipped, before("items") + dropped_items);
        m.insert(
            "truncated".into(),
            json!({"chars": c, "items": i, "reason": "max_chars"}),
        );
    }
    v
}

/// Clip the longest strings of `v` (to at least 200 characters, ending with
/// `…`) until it takes at most `max` characters or no string is longer;
/// the number of characters removed.
fn clip_strings(v: &mut Value, max: usize) -> usize {
    let total = chars(v);
    if total <= max {
        return 0;
    }
    let mut excess = total - max;
    let mut removed_all = 0usize;
    let mut strings = Vec::new();
    collect_strings(v, String::new(), &mut strings);
    strings.sort_by_key(|s| std::cmp::Reverse(s.1));
    for (ptr, len) in strings {
        if excess == 0 || len <= 200 {
            break;
        }
        let keep = len.saturating_sub(excess + 1).max(200);
        if let Some(Value::String(s)) = v.pointer_mut(&ptr) {
            let cut: String = s.chars().take(keep).collect();
            let removed = len - keep;
            *s = format!("{cut}…");
            removed_all += removed;
            excess = excess.saturating_sub(removed);
        }
    }
    removed_all
}

fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn collect_strings(v: &Value, ptr: String, out: &mut Vec<(String, usize)>) {
    match v {
        Value::String(s) => out.push((ptr, s.chars().count())),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                collect_strings(x, format!("{ptr}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                collect_strings(x, format!("{ptr}/{}", pointer_escape(k)), out);
            }
        }
        _ => {}
    }
}

/// Arrays with at least two items, with their size in characters.
fn collect_arrays(v: &Value, ptr: String, out: &mut Vec<(String, usize)>) {
    match v {
        Value::Array(a) => {
            if a.len() >= 2 {
                out.push((ptr.clone(), chars(v)));
            }
            for (i, x) in a.iter().enumerate() {
                collect_arrays(x, format!("{ptr}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                collect_arrays(x, format!("{ptr}/{}", pointer_escape(k)), out);
            }
        }
        _ => {}
    }
}

/// `key: value`, or when that is over the cap, `key: null` plus
/// `key_text` holding the start of the compact JSON.
fn capped_value(b: &Map<String, Value>, key: &str, value: &Value, max: usize) -> Value {
    let full = with(b, vec![(key, value.clone())]);
    if chars(&full) <= max {
        return full;
    }
    let text = value.to_string();
    let len = text.chars().count();
    let text_key = format!("{key}_text");
    fit_json(len.saturating_sub(1), max, |n| {
        let cut: String = text.chars().take(n).collect();
        with(
            b,
            vec![
                (key, Value::Null),
                (&text_key, format!("{cut}…").into()),
                ("omitted", json!({"chars": len - n, "reason": "max_chars"})),
            ],
        )
    })
}

/// The outline as a tree, keeping only the first `budget` nodes in
/// pre-order (children sorted by position, as in the text).
fn outline_json(nodes: &[SymbolNode], budget: &mut usize) -> Value {
    let mut sorted: Vec<&SymbolNode> = nodes.iter().collect();
    sorted.sort_by_key(|n| (n.line, n.col));
    let mut out = Vec::new();
    for n in sorted {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let mut m = Map::new();
        m.insert("name".into(), n.name.clone().into());
        m.insert("kind".into(), n.kind.clone().into());
        if let Some(d) = &n.detail {
            m.insert("detail".into(), d.clone().into());
        }
        m.insert("line".into(), n.line.into());
        m.insert("col".into(), n.col.into());
        m.insert("end_line".into(), n.end_line.into());
        if !n.children.is_empty() && *budget > 0 {
            m.insert("children".into(), outline_json(&n.children, budget));
        }
        out.push(Value::Object(m));
    }
    Value::Array(out)
}

fn symbol_item_json(s: &SymbolItem, p: &Placed) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), s.name.clone().into());
    m.insert("kind".into(), s.kind.clone().into());
    if let Some(c) = &s.container {
        m.insert("container".into(), c.clone().into());
    }
    if let Value::Object(l) = placed_json(p) {
        m.extend(l);
    }
    Value::Object(m)
}

fn call_json(call: &CallEdge, root: &Path) -> Value {
    let sites = sort_dedup(
        call.sites
            .iter()
            .enumerate()
            .map(|(i, l)| place(l, root, i)),
    );
    json!({
        "item": call_item_json(&call.item, root),
        "sites": sites.iter().map(placed_json).collect::<Vec<_>>(),
    })
}

/// `same_name`: the other targets of the asked name, each with the
/// arguments that select it and (for target-showing actions) its answer,
/// at most 5 locations each, paths relative.
fn same_name(same: &scry_model::SameName, root: &Path, dialect: Dialect) -> Value {
    let others: Vec<Value> = same
        .others
        .iter()
        .map(|o| {
            let mut v = json!({
                "line": o.line,
                "col": o.col,
                "form": o.form,
                "select": words::selectors(&o.select, dialect),
            });
            match &o.body {
                Some(Body::Locations { locations }) => {
                    v["locations"] = locations
                        .iter()
                        .take(5)
                        .map(|l| {
                            json!({
                                "path": display_path(&l.path, root),
                                "line": l.line,
                                "col": l.col,
                                "text": l.text,
                            })
                        })
                        .collect();
                }
                Some(Body::Hover { text }) => {
                    v["hover"] = text.chars().take(2000).collect::<String>().into()
                }
                _ => {}
            }
            v
        })
        .collect();
    json!({
        "scope": words::same_name_scope(same),
        "answered_form": same.answered_form,
        "others": others,
    })
}
