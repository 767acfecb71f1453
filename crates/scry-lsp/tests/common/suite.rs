//! The checks every fixture language goes through (same shape, positions
//! from `expected.json`). Each takes the shared [`Fixture`] so one server
//! start serves all of them.

use std::collections::BTreeSet;

use scry_model::{Action, Answer, Body, CallDirection};

use super::{Fixture, Pos, find_symbol, list, query};

/// How a language spells things the fixtures do not share.
pub struct Lang {
    /// `Inventory::restock`, `Inventory.restock`, or C's `inventory_restock`.
    pub qualified_restock: &'static str,
    /// The symbol workspace symbols should find for restock.
    pub restock_query: &'static str,
    /// The file (relative) and text that declares the `Inventory` type, e.g.
    /// `("src/inventory.rs", "struct Inventory")`.
    pub inventory_decl: (&'static str, &'static str),
    /// Whether the server nests `restock` under a parent in file A's outline
    /// (and the parent's name contains `Inventory`).
    pub restock_nested: bool,
}

/// The answers of [`every_check`] that language files snapshot.
pub struct Checked {
    pub refs: Answer,
    pub def: Answer,
    pub outline: Answer,
}

/// Every check above, in order, on one fixture (one server start). The
/// implementation check is left out where `expected.json` says it is not
/// applicable (C has no implementations).
pub async fn every_check(fx: &Fixture, l: &Lang) -> Checked {
    let refs = references_by_name(fx).await;
    let def = definition_from_main(fx).await;
    qualified_definition(fx, l).await;
    definition_without_path(fx, l).await;
    hover(fx).await;
    let outline = document_symbols(fx, l).await;
    workspace_symbols(fx, l).await;
    if fx.exp["implementation"] != "not applicable" {
        implementation(fx).await;
    }
    call_hierarchy(fx).await;
    Checked { refs, def, outline }
}

/// Where `needle`'s last word starts in `file` (first line that contains it).
pub fn decl_pos(fx: &Fixture, file: &str, needle: &str) -> Pos {
    let text = std::fs::read_to_string(fx.root.join(file)).expect("read fixture file");
    let word = needle.rsplit(' ').next().unwrap();
    for (i, line) in text.lines().enumerate() {
        if let Some(b) = line.find(needle) {
            let b = b + needle.len() - word.len();
            return Pos {
                path: file.to_string(),
                line: i as u32 + 1,
                col: line[..b].chars().count() as u32 + 1,
            };
        }
    }
    panic!("`{needle}` not in {file}");
}

fn ctx(fx: &Fixture, what: &str, a: &Answer) -> String {
    format!(
        "[{}] {what}\n--- rendered ---\n{}\n--- empty_reason: {:?}, partial: {:?}",
        fx.lang,
        fx.text(a),
        a.empty_reason,
        a.partial
    )
}

fn asked_at(fx: &Fixture, a: &Answer, what: &str) -> (Pos, String) {
    let at = a
        .asked_at
        .as_ref()
        .unwrap_or_else(|| panic!("{}", ctx(fx, &format!("{what}: asked_at missing"), a)));
    let via = scry_render::via_text(&at.via);
    assert!(
        !via.trim().is_empty(),
        "{}",
        ctx(fx, &format!("{what}: asked_at.via is empty"), a)
    );
    (fx.rel(&at.loc), via)
}

/// References of `total_weight` asked from file A by name: the definition,
/// the imports and both calls, at exact positions; the comment and string
/// occurrences are not references; the emoji-line call is at the character
/// column (UTF-16/UTF-8 conversion).
pub async fn references_by_name(fx: &Fixture) -> Answer {
    let a = fx
        .run(
            &query(Action::References)
                .path(fx.file("a"))
                .symbol("total_weight")
                .build(),
        )
        .await;
    let got: BTreeSet<Pos> = fx.locs(&a).into_iter().collect();
    let what = format!(
        "references of total_weight: got {}",
        list(&got.iter().cloned().collect::<Vec<_>>())
    );
    let def = fx.exp_pos("/total_weight/definition");
    assert!(
        got.contains(&def),
        "{}",
        ctx(fx, &format!("{what}; missing definition {def}"), &a)
    );
    for key in ["calls", "imports", "declarations"] {
        for v in fx.exp["total_weight"][key].as_array().unwrap() {
            let p = fx.pos(v);
            assert!(
                got.contains(&p),
                "{}",
                ctx(fx, &format!("{what}; missing {key} {p}"), &a)
            );
        }
    }
    for key in ["comment", "string"] {
        let v = &fx.exp["total_weight"][key];
        assert_eq!(v["is_reference"], false);
        let p = fx.pos(v);
        assert!(
            !got.contains(&p),
            "{}",
            ctx(
                fx,
                &format!("{what}; the {key} occurrence {p} is listed"),
                &a
            )
        );
        assert!(
            !got.iter().any(|g| g.path == p.path && g.line == p.line),
            "{}",
            ctx(
                fx,
                &format!("{what}; something on the {key} line {p} is listed"),
                &a
            )
        );
    }
    // Every reference is an occurrence of the name (no off-by-one columns).
    for p in &got {
        let text = std::fs::read_to_string(fx.root.join(&p.path)).unwrap();
        let line = text.lines().nth(p.line as usize - 1).unwrap_or_default();
        let at: String = line.chars().skip(p.col as usize - 1).take(12).collect();
        assert_eq!(
            at,
            "total_weight",
            "{}",
            ctx(fx, &format!("{what}; {p} is not at the name"), &a)
        );
    }
    // The emoji line: character column, and the end column too.
    let emoji = fx.exp_pos("/emoji_line");
    let Body::Locations { locations } = &a.body else {
        unreachable!()
    };
    let loc = locations
        .iter()
        .find(|l| fx.rel(l) == emoji)
        .unwrap_or_else(|| {
            panic!(
                "{}",
                ctx(fx, &format!("{what}; emoji-line call {emoji} missing"), &a)
            )
        });
    assert_eq!(
        loc.end_line,
        emoji.line,
        "{}",
        ctx(fx, "emoji-line end line", &a)
    );
    assert_eq!(
        loc.end_col,
        emoji.col + "total_weight".len() as u32,
        "{}",
        ctx(fx, "emoji-line end column", &a)
    );
    let expected_text = fx.exp_str("/emoji_line/text");
    assert_eq!(
        loc.text.as_deref(),
        Some(expected_text.as_str()),
        "source line of the emoji call"
    );
    // Asked at the definition, found through the file's declarations.
    let (at, via) = asked_at(fx, &a, "references");
    assert_eq!(at, def, "{}", ctx(fx, "references asked_at", &a));
    assert!(
        via.contains("declaration"),
        "{}",
        ctx(fx, &format!("references via `{via}`"), &a)
    );
    assert_eq!(a.server.as_deref().map(str::is_empty), Some(false));
    assert!(
        a.empty_reason.is_none(),
        "{}",
        ctx(fx, "references empty_reason", &a)
    );
    a
}

/// Definition of `total_weight` asked from file C by name, with a line hint
/// (the emoji line), and with an exact line+column at the emoji call.
pub async fn definition_from_main(fx: &Fixture) -> Answer {
    let def = fx.exp_pos("/total_weight/definition");
    let emoji = fx.exp_pos("/emoji_line");
    let c = fx.file("c");

    let a = fx
        .run(
            &query(Action::Definition)
                .path(&c)
                .symbol("total_weight")
                .build(),
        )
        .await;
    assert_eq!(
        fx.locs(&a),
        vec![def.clone()],
        "{}",
        ctx(fx, "definition by name from file C", &a)
    );
    let (_, via) = asked_at(fx, &a, "definition by name");
    assert!(
        via.contains("total_weight"),
        "{}",
        ctx(fx, &format!("via `{via}`"), &a)
    );

    let a = fx
        .run(
            &query(Action::Definition)
                .path(&c)
                .symbol("total_weight")
                .line(emoji.line)
                .build(),
        )
        .await;
    assert_eq!(
        fx.locs(&a),
        vec![def.clone()],
        "{}",
        ctx(fx, "definition with line hint", &a)
    );
    let (at, via) = asked_at(fx, &a, "definition with line hint");
    assert_eq!(
        at,
        emoji,
        "{}",
        ctx(fx, "line hint picks the emoji-line occurrence", &a)
    );
    assert!(
        via.contains("occurrence"),
        "{}",
        ctx(fx, &format!("via `{via}`"), &a)
    );

    let exact = fx
        .run(
            &query(Action::Definition)
                .path(&c)
                .line(emoji.line)
                .column(emoji.col)
                .build(),
        )
        .await;
    assert_eq!(
        fx.locs(&exact),
        vec![def.clone()],
        "{}",
        ctx(fx, "definition at line+column", &exact)
    );
    let (at, via) = asked_at(fx, &exact, "definition at line+column");
    assert_eq!(
        at,
        emoji,
        "{}",
        ctx(fx, "asked exactly at the given column", &exact)
    );
    assert_eq!(via, "the given line and column");
    let Some(at) = &exact.asked_at else {
        unreachable!()
    };
    assert_eq!(at.loc.end_col, emoji.col + "total_weight".len() as u32);
    exact
}

/// Definition of the qualified restock name asked from file B.
pub async fn qualified_definition(fx: &Fixture, l: &Lang) {
    let def = fx.exp_pos("/restock/definition");
    let call = fx.exp_pos("/restock/calls/0");
    let a = fx
        .run(
            &query(Action::Definition)
                .path(fx.file("b"))
                .symbol(l.qualified_restock)
                .build(),
        )
        .await;
    assert_eq!(
        fx.locs(&a),
        vec![def],
        "{}",
        ctx(fx, &format!("definition of {}", l.qualified_restock), &a)
    );
    let (at, via) = asked_at(fx, &a, "qualified definition");
    assert_eq!(
        at,
        call,
        "{}",
        ctx(fx, &format!("asked at the call (via `{via}`)"), &a)
    );
}

/// Definition with no path: found through workspace symbols.
pub async fn definition_without_path(fx: &Fixture, l: &Lang) {
    let want = decl_pos(fx, l.inventory_decl.0, l.inventory_decl.1);
    let a = fx
        .run(&query(Action::Definition).symbol("Inventory").build())
        .await;
    let got = fx.locs(&a);
    assert!(
        got.contains(&want),
        "{}",
        ctx(
            fx,
            &format!(
                "definition of Inventory without a path: want {want}, got {}",
                list(&got)
            ),
            &a
        )
    );
    let (at, via) = asked_at(fx, &a, "definition without path");
    assert_eq!(at, want, "{}", ctx(fx, "asked at the workspace symbol", &a));
    assert!(
        via.starts_with("workspace symbol"),
        "{}",
        ctx(fx, &format!("via `{via}`"), &a)
    );
}

/// Hover on `total_weight` in file A names it and shows a type.
pub async fn hover(fx: &Fixture) -> Answer {
    let a = fx
        .run(
            &query(Action::Hover)
                .path(fx.file("a"))
                .symbol("total_weight")
                .build(),
        )
        .await;
    let Body::Hover { text } = &a.body else {
        panic!("{}", ctx(fx, "hover body", &a))
    };
    assert!(
        text.contains("total_weight"),
        "{}",
        ctx(fx, "hover names total_weight", &a)
    );
    assert!(
        text.contains("Inventory"),
        "{}",
        ctx(fx, "hover shows the parameter type", &a)
    );
    let (at, _) = asked_at(fx, &a, "hover");
    assert_eq!(at, fx.exp_pos("/total_weight/definition"));
    a
}

/// Document symbols of file A.
pub async fn document_symbols(fx: &Fixture, l: &Lang) -> Answer {
    let a = fx
        .run(&query(Action::Symbols).path(fx.file("a")).build())
        .await;
    let Body::Outline { path, symbols } = &a.body else {
        panic!("{}", ctx(fx, "outline body", &a))
    };
    assert_eq!(super::rel_path(path, &fx.root), fx.file("a"));
    let def = fx.exp_pos("/total_weight/definition");
    let (tw, _) = find_symbol(symbols, "total_weight")
        .unwrap_or_else(|| panic!("{}", ctx(fx, "outline has total_weight", &a)));
    assert_eq!(
        (tw.line, tw.col),
        (def.line, def.col),
        "{}",
        ctx(fx, "total_weight outline position", &a)
    );
    // C declares `struct Inventory` in the header, not in file A.
    if l.inventory_decl.0 == fx.file("a") {
        let want = decl_pos(fx, l.inventory_decl.0, l.inventory_decl.1);
        let inv = symbols
            .iter()
            .find(|s| s.name == "Inventory")
            .unwrap_or_else(|| panic!("{}", ctx(fx, "outline has Inventory at the top level", &a)));
        assert_eq!(
            (inv.line, inv.col),
            (want.line, want.col),
            "{}",
            ctx(fx, "Inventory outline position", &a)
        );
    }
    let rdef = fx.exp_pos("/restock/definition");
    let restock = fx.exp_str("/restock/symbol");
    // gopls names methods `(*Inventory).restock`; match on the last word.
    let found = find_restock(symbols, &restock, &mut Vec::new());
    let (node_pos, parents) =
        found.unwrap_or_else(|| panic!("{}", ctx(fx, &format!("outline has {restock}"), &a)));
    assert_eq!(
        node_pos,
        (rdef.line, rdef.col),
        "{}",
        ctx(fx, "restock outline position", &a)
    );
    if l.restock_nested {
        assert!(
            parents.last().is_some_and(|p| p.contains("Inventory")),
            "{}",
            ctx(
                fx,
                &format!("restock nested under Inventory (parents {parents:?})"),
                &a
            )
        );
    }
    a
}

fn find_restock(
    nodes: &[scry_model::SymbolNode],
    name: &str,
    parents: &mut Vec<String>,
) -> Option<((u32, u32), Vec<String>)> {
    for n in nodes {
        let last = n
            .name
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .find(|s| !s.is_empty())
            .unwrap_or("");
        if last == name {
            return Some(((n.line, n.col), parents.clone()));
        }
        parents.push(n.name.clone());
        if let Some(hit) = find_restock(&n.children, name, parents) {
            return Some(hit);
        }
        parents.pop();
    }
    None
}

/// Workspace symbols for restock find its definition.
pub async fn workspace_symbols(fx: &Fixture, l: &Lang) -> Answer {
    let a = fx
        .run(
            &query(Action::WorkspaceSymbols)
                .query(l.restock_query)
                .build(),
        )
        .await;
    let Body::WorkspaceSymbols { symbols, .. } = &a.body else {
        panic!("{}", ctx(fx, "workspace symbols body", &a))
    };
    let rdef = fx.exp_pos("/restock/definition");
    assert!(
        symbols.iter().any(|s| fx.rel(&s.loc) == rdef),
        "{}",
        ctx(
            fx,
            &format!("workspace symbols `{}` include {rdef}", l.restock_query),
            &a
        )
    );
    a
}

/// Implementation of `Shape`: the position `implementation.lsp_answer` names,
/// or (pyright) an empty answer saying the server does not support it.
pub async fn implementation(fx: &Fixture) -> Answer {
    let imp = &fx.exp["implementation"];
    let trait_pos = fx.pos(&imp["trait"]);
    let a = fx
        .run(
            &query(Action::Implementation)
                .path(&trait_pos.path)
                .symbol("Shape")
                .build(),
        )
        .await;
    let (at, _) = asked_at(fx, &a, "implementation");
    assert_eq!(
        at,
        trait_pos,
        "{}",
        ctx(fx, "implementation asked at the trait", &a)
    );
    let answer = imp["lsp_answer"].as_str().unwrap();
    if answer.starts_with("unsupported") {
        assert!(
            a.body.is_empty(),
            "{}",
            ctx(fx, "unsupported implementation is empty", &a)
        );
        let reason = a
            .empty_reason
            .as_ref()
            .map(|r| scry_render::reason_text(r, &fx.root))
            .unwrap_or_default();
        assert!(
            reason.contains("does not support") && reason.contains("textDocument/implementation"),
            "{}",
            ctx(fx, &format!("empty_reason `{reason}`"), &a)
        );
    } else {
        let want = fx.pos(&imp["impl"][0][answer]);
        assert_eq!(
            fx.locs(&a),
            vec![want],
            "{}",
            ctx(fx, "implementation of Shape", &a)
        );
    }
    a
}

/// Incoming calls of total_weight: main and report with their call sites;
/// outgoing calls: item_weight with its site.
pub async fn call_hierarchy(fx: &Fixture) -> (Answer, Answer) {
    let ch = &fx.exp["call_hierarchy"];
    let root = fx.pos(&ch["root"]);
    let a = fx
        .run(
            &query(Action::IncomingCalls)
                .path(fx.file("a"))
                .symbol("total_weight")
                .build(),
        )
        .await;
    let Body::Calls {
        direction,
        item,
        calls,
    } = &a.body
    else {
        panic!("{}", ctx(fx, "incoming body", &a))
    };
    assert_eq!(*direction, CallDirection::Incoming);
    let item = item
        .as_ref()
        .unwrap_or_else(|| panic!("{}", ctx(fx, "incoming item", &a)));
    assert_eq!(item.name, "total_weight");
    assert_eq!(
        fx.rel(&item.loc),
        root,
        "{}",
        ctx(fx, "incoming root item", &a)
    );
    for exp in ch["incoming"].as_array().unwrap() {
        check_call(fx, &a, calls, exp, "incoming");
    }
    let (at, _) = asked_at(fx, &a, "incoming");
    assert_eq!(at, root);

    let b = fx
        .run(
            &query(Action::OutgoingCalls)
                .path(fx.file("a"))
                .symbol("total_weight")
                .build(),
        )
        .await;
    let Body::Calls {
        direction, calls, ..
    } = &b.body
    else {
        panic!("{}", ctx(fx, "outgoing body", &b))
    };
    assert_eq!(*direction, CallDirection::Outgoing);
    for exp in ch["outgoing"].as_array().unwrap() {
        check_call(fx, &b, calls, exp, "outgoing");
    }
    (a, b)
}

fn check_call(
    fx: &Fixture,
    a: &Answer,
    calls: &[scry_model::CallEdge],
    exp: &serde_json::Value,
    dir: &str,
) {
    let name = exp["name"].as_str().unwrap();
    let call = calls
        .iter()
        .find(|c| c.item.name == name)
        .unwrap_or_else(|| panic!("{}", ctx(fx, &format!("{dir} calls include {name}"), a)));
    let def = fx.pos(&exp["definition"]);
    assert_eq!(
        fx.rel(&call.item.loc),
        def,
        "{}",
        ctx(fx, &format!("{dir} {name} item position"), a)
    );
    let sites: Vec<Pos> = call.sites.iter().map(|s| fx.rel(s)).collect();
    for s in exp["call_sites"].as_array().unwrap() {
        let p = fx.pos(s);
        assert!(
            sites.contains(&p),
            "{}",
            ctx(
                fx,
                &format!("{dir} {name} site {p} (got {})", list(&sites)),
                a
            )
        );
    }
}
