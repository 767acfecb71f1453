//! Extraction per language: definitions, kinds, containers, docs, and
//! references that never come from comments or strings.

use super::*;
use crate::lang;

fn index(lang_id: &str, text: &str) -> FileIndex {
    let l = lang::lang(lang_id).expect(lang_id);
    let mut p = Parser::new();
    index_text(&l, &mut p, text)
}

fn ref_lines(ix: &FileIndex, name: &str) -> Vec<(u32, u32)> {
    let id = ix.name_id(name);
    ix.refs
        .iter()
        .filter(|r| Some(r.name_id()) == id)
        .map(|r| (r.line(), r.col()))
        .collect()
}

fn def<'a>(ix: &'a FileIndex, name: &str) -> &'a Def {
    ix.defs
        .iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no def {name} in {:#?}", ix.defs))
}

#[test]
fn rust_definitions_docs_and_references() {
    let src = r#"/// A shape.
/// With area.
#[derive(Debug)]
pub struct Square { side: f64 }

// total is mentioned here, in a comment
impl Shape for Square {
    /// The area.
    fn area(&self) -> f64 { let s = "total area"; total(self.side) }
}

fn total(x: f64) -> f64 { x }
"#;
    let ix = index("rust", src);
    let sq = def(&ix, "Square");
    assert_eq!(sq.kind, "struct");
    assert_eq!((sq.line, sq.col, sq.end_col), (3, 11, 17));
    assert_eq!(sq.doc.as_deref(), Some("A shape.\nWith area."));
    assert_eq!(sq.signature, "pub struct Square { side: f64 }");
    let area = def(&ix, "area");
    assert_eq!(area.kind, "method");
    assert_eq!(area.container.as_deref(), Some("Square"));
    assert_eq!(area.doc.as_deref(), Some("The area."));
    // `total` occurs in a comment and a string: only the code counts.
    assert_eq!(ref_lines(&ix, "total"), vec![(8, 50), (11, 3)]);
    assert_eq!(
        ix.impls,
        vec![Implementation {
            name: "Square".into(),
            parent: "Shape".into(),
            line: 6,
            col: 15
        }]
    );
    assert!(!ix.syntax_errors);
}

#[test]
fn python_docstrings_methods_and_bases() {
    let src = "import os\nfrom pkg.util import helper\n\nclass Dog(Animal):\n    \"\"\"A dog.\"\"\"\n\n    @property\n    def bark(self):\n        # helper here is a comment\n        return helper('helper')\n";
    let ix = index("python", src);
    assert_eq!(def(&ix, "Dog").kind, "class");
    assert_eq!(def(&ix, "Dog").doc.as_deref(), Some("A dog."));
    let bark = def(&ix, "bark");
    assert_eq!(bark.kind, "method");
    assert_eq!(bark.container.as_deref(), Some("Dog"));
    assert_eq!(ref_lines(&ix, "helper"), vec![(1, 21), (9, 15)]);
    assert!(ix.imports.contains(&"util".to_string()));
    assert_eq!(ix.impls[0].parent, "Animal");
}

#[test]
fn java_classes_interfaces_and_implements() {
    let src = "package p;\n/** Stores items. */\npublic class Store implements Repo<Item>, Closeable {\n  private int count;\n  public Store() {}\n  /** Adds. */\n  public void add(Item i) { count++; }\n}\n";
    let ix = index("java", src);
    assert_eq!(def(&ix, "Store").kind, "class");
    assert_eq!(def(&ix, "Store").doc.as_deref(), Some("Stores items."));
    assert_eq!(def(&ix, "add").kind, "method");
    assert_eq!(def(&ix, "add").container.as_deref(), Some("Store"));
    assert_eq!(def(&ix, "count").kind, "field");
    let parents: Vec<&str> = ix.impls.iter().map(|i| i.parent.as_str()).collect();
    assert_eq!(parents, vec!["Repo", "Closeable"]);
}

#[test]
fn ruby_and_go_and_typescript() {
    let rb = index(
        "ruby",
        "# A cart.\nclass Cart < Base\n  def total\n    items.sum # total\n  end\nend\n",
    );
    assert_eq!(def(&rb, "Cart").doc.as_deref(), Some("A cart."));
    assert_eq!(def(&rb, "total").kind, "method");
    assert_eq!(rb.impls[0].parent, "Base");

    let go = index(
        "go",
        "package main\n\n// Inventory holds items.\ntype Inventory struct{ n int }\n\nfunc (i *Inventory) Restock(n int) { i.n += n }\n",
    );
    assert_eq!(def(&go, "Inventory").kind, "struct");
    assert_eq!(
        def(&go, "Inventory").doc.as_deref(),
        Some("Inventory holds items.")
    );
    let r = def(&go, "Restock");
    assert_eq!(r.kind, "method");
    assert_eq!(r.container.as_deref(), Some("Inventory"));

    let ts = index(
        "typescript",
        "export interface Shape { area(): number }\n/** A square. */\nexport class Square extends Base implements Shape {\n  area(): number { return 1 }\n}\nexport const LIMIT = 3;\n",
    );
    assert_eq!(def(&ts, "Shape").kind, "interface");
    assert_eq!(def(&ts, "Square").doc.as_deref(), Some("A square."));
    assert_eq!(def(&ts, "LIMIT").kind, "variable");
    let mut parents: Vec<&str> = ts.impls.iter().map(|i| i.parent.as_str()).collect();
    parents.sort();
    assert_eq!(parents, vec!["Base", "Shape"]);
}

#[test]
fn every_language_indexes_something() {
    let samples = [
        (
            "c",
            "struct point { int x; };\nint area(struct point p) { return p.x; }\n",
        ),
        (
            "cpp",
            "namespace geo { class Square : public Shape { int side; }; }\nint Square::area() { return side; }\n",
        ),
        (
            "bash",
            "LIMIT=3\nbuild() {\n  echo \"build $LIMIT\"\n}\nbuild\n",
        ),
        (
            "csharp",
            "namespace N { public class Store : IRepo { public int Count { get; set; } public void Add() {} } }\n",
        ),
        (
            "php",
            "<?php\nclass Store extends Base implements Repo {\n  public function add($x) { return helper($x); }\n}\nfunction helper($x) { return $x; }\n",
        ),
        (
            "javascript",
            "class A extends B { m() { return f(1) } }\nfunction f(x) { return x }\n",
        ),
        (
            "tsx",
            "export function App(): JSX.Element { return <div/> }\n",
        ),
    ];
    for (l, src) in samples {
        if lang::not_built_in().iter().any(|s| s.id == l) {
            continue; // left out of this build (a `without-*` feature)
        }
        let ix = index(l, src);
        assert!(!ix.defs.is_empty(), "{l}: no definitions");
        assert!(!ix.refs.is_empty(), "{l}: no references");
    }
    let bash = index("bash", samples[2].1);
    assert_eq!(def(&bash, "build").kind, "function");
    // `build` inside the string is not a reference; the call on line 5 is.
    assert_eq!(ref_lines(&bash, "build"), vec![(4, 0)]);
    let cpp = index("cpp", samples[1].1);
    assert_eq!(def(&cpp, "area").container.as_deref(), Some("Square"));
}

#[test]
fn syntax_errors_are_tolerated() {
    let ix = index("rust", "fn ok() {}\nfn broken( {\nstruct After;\n");
    assert!(ix.syntax_errors);
    assert!(ix.defs.iter().any(|d| d.name == "ok"));
}

#[test]
fn columns_count_characters() {
    let ix = index("python", "s = 'ééé'; total = 1\n");
    assert_eq!(ref_lines(&ix, "total"), vec![(0, 11)]);
}

#[test]
fn local_bindings_resolve_uses_in_their_function() {
    let src = "fn old() {}\nfn diff<Old>(old: &[u8], n: usize) -> usize {\n    let total = n;\n    old.len() + total\n}\n";
    let ix = index("rust", src);
    // `old` on line 3 is the parameter, not the function `old`.
    assert_eq!(crate::query::local_binding(&ix, "old", 3, 4), Some((1, 13)));
    assert_eq!(
        crate::query::local_binding(&ix, "total", 3, 16),
        Some((2, 8))
    );
    assert_eq!(crate::query::local_binding(&ix, "Old", 1, 8), Some((1, 8)));
    // Outside the function nothing is local.
    assert_eq!(crate::query::local_binding(&ix, "old", 0, 3), None);
    let py = index("python", "def f(a, b=1):\n    c = a + b\n    return c\n");
    assert_eq!(crate::query::local_binding(&py, "c", 2, 11), Some((1, 4)));
    assert_eq!(crate::query::local_binding(&py, "b", 1, 12), Some((0, 9)));
}

/// Found by the `syntax_extract` fuzz target: tree-sitter's rows count `\n`
/// only, so after a lone `\r` (old Mac line ends) every position was on
/// the wrong line for the rest of scry, which counts lines as LSP does.
#[test]
fn lone_carriage_returns_end_lines_as_in_lsp() {
    let ix = index("rust", "fn a() {}\rfn b() { a() }\r\nfn c() {}\r");
    assert_eq!(ix.lines, 3);
    let b = def(&ix, "b");
    assert_eq!((b.line, b.col, b.end_col), (1, 3, 4));
    assert_eq!((b.start_line, b.end_line), (1, 1));
    assert_eq!(b.signature, "fn b() { a() }");
    assert_eq!((def(&ix, "c").line, def(&ix, "c").col), (2, 3));
    assert_eq!(ref_lines(&ix, "a"), vec![(0, 3), (1, 9)]);
}
