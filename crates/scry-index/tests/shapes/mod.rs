//! Generated `index.scip` files of the shapes that stress a conversion's
//! memory, written one document at a time (never whole in memory): shared
//! by `tests/memory.rs` and `examples/synthetic_index.rs`.
//!
//! Each shape writes its source files under `DIR/ws` so the occurrences
//! fit them (documents are verified), and `DIR/index.scip`.

#![allow(dead_code)]

use std::io::Write;
use std::path::Path;

use scry_index::proto::{Document, Metadata, Occurrence, SymbolInformation, ToolInfo};

/// The shapes, by name.
pub const SHAPES: [&str; 4] = ["defs", "locals", "symbols", "documents"];

/// Write shape `shape` at scale `n` under `dir`; the index's size.
pub fn generate(dir: &Path, shape: &str, n: u32) -> u64 {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let file = std::fs::File::create(dir.join("index.scip")).unwrap();
    let mut out = Out {
        w: std::io::BufWriter::with_capacity(1 << 20, file),
        buf: Vec::new(),
    };
    out.field(1, &meta());
    match shape {
        // `n` files of 1,000 lines, each defining one symbol and using one
        // of the next file's: as many symbols as lines, two occurrences a
        // line.
        "defs" => {
            for f in 0..n {
                let mut text = String::new();
                let mut occurrences = Vec::new();
                for l in 0..1000 {
                    let (def, used) = (format!("s{l}"), format!("u{l}"));
                    let uc = 3 + def.len() as i32 + 6;
                    occurrences.push(occ(l, 3, def.len(), format!("g c g 1 f{f}/{def}()."), 1));
                    occurrences.push(occ(
                        l,
                        uc,
                        used.len(),
                        format!("g c g 1 f{}/s{l}().", (f + 1) % n),
                        0,
                    ));
                    text.push_str(&format!("fn {def}() {{ {used}(); }}\n"));
                }
                out.document(&ws, format!("f{f}.rs"), &text, occurrences, vec![]);
            }
        }
        // Five documents of `n` × 1,000 lines, four distinct locals a line:
        // every occurrence its own symbol.
        "locals" => {
            let line = "aaaa bbbb cccc dddd\n";
            for f in 0..5 {
                let mut occurrences = Vec::new();
                for l in 0..n as i32 * 1000 {
                    for c in 0..4 {
                        let k = l * 4 + c;
                        occurrences.push(occ(l, c * 5, 4, format!("local {k}"), (c == 0) as i32));
                    }
                }
                let text = line.repeat(n as usize * 1000);
                out.document(&ws, format!("l{f}.py"), &text, occurrences, vec![]);
            }
        }
        // One small document and `n` × 1,000 symbols' information, each
        // with its documentation and a relationship, half of them external.
        "symbols" => {
            let mut symbols = Vec::new();
            for s in 0..n * 500 {
                symbols.push(info(format!("g c g 1 p/S{s}#"), s));
                if symbols.len() == 50_000 {
                    out.document(
                        &ws,
                        format!("d{s}.rs"),
                        "",
                        vec![],
                        std::mem::take(&mut symbols),
                    );
                }
            }
            out.document(&ws, "d.rs".into(), "", vec![], symbols);
            for s in 0..n * 500 {
                out.field(3, &info(format!("g c g 1 q/E{s}#"), s));
            }
        }
        // `n` × 1,000 documents of one occurrence each, their files not
        // written (unverified, still keyed).
        "documents" => {
            for d in 0..n * 1000 {
                let doc = Document {
                    relative_path: format!("pkg{}/module_{d}.py", d % 100),
                    language: "python".into(),
                    position_encoding: 1,
                    occurrences: vec![occ(0, 0, 4, format!("scip-python python p 1 m{d}/f()."), 1)],
                    ..Default::default()
                };
                out.field(2, &doc);
            }
        }
        other => panic!("no shape {other}"),
    }
    out.w.flush().unwrap();
    std::fs::metadata(dir.join("index.scip")).unwrap().len()
}

struct Out {
    w: std::io::BufWriter<std::fs::File>,
    buf: Vec<u8>,
}

impl Out {
    fn field<M: prost::Message>(&mut self, tag: u32, m: &M) {
        self.buf.clear();
        prost::encoding::message::encode(tag, m, &mut self.buf);
        self.w.write_all(&self.buf).unwrap();
    }

    fn document(
        &mut self,
        ws: &Path,
        name: String,
        text: &str,
        occurrences: Vec<Occurrence>,
        symbols: Vec<SymbolInformation>,
    ) {
        std::fs::write(ws.join(&name), text).unwrap();
        let doc = Document {
            relative_path: name,
            language: "rust".into(),
            position_encoding: 1,
            occurrences,
            symbols,
            ..Default::default()
        };
        self.field(2, &doc);
    }
}

fn meta() -> Metadata {
    Metadata {
        version: 0,
        tool_info: Some(ToolInfo {
            name: "synthetic".into(),
            version: "1".into(),
            arguments: vec![],
        }),
        project_root: "file:///ws".into(),
        text_document_encoding: 1,
    }
}

fn occ(line: i32, col: i32, len: usize, symbol: String, roles: i32) -> Occurrence {
    Occurrence {
        range: vec![line, col, col + len as i32],
        symbol,
        symbol_roles: roles,
        ..Default::default()
    }
}

fn info(symbol: String, s: u32) -> SymbolInformation {
    SymbolInformation {
        documentation: vec![format!(
            "```rust\npub struct S{s}\n```\nThe {s}th of its kind, generated."
        )],
        relationships: vec![scry_index::proto::Relationship {
            symbol: format!("g c g 1 p/T{}#", s % 97),
            is_implementation: true,
            ..Default::default()
        }],
        kind: 49,
        display_name: format!("S{s}"),
        symbol,
        ..Default::default()
    }
}
