//! A synthetic SCIP index of any size, and its conversion, for measuring
//! the conversion's peak memory (`/usr/bin/time -v`):
//!
//! ```text
//! cargo run -p scry-index --example synthetic_index -- gen DIR FILES LINES
//! /usr/bin/time -v target/debug/examples/synthetic_index convert DIR
//! ```
//!
//! `gen` writes `FILES` source files of `LINES` lines each under `DIR/ws`
//! and `DIR/index.scip` describing them: each line defines one symbol and
//! uses one of the next file's (two occurrences, one symbol per line), so
//! 4,000 × 1,000 gives 4 M symbols and 8 M occurrences in about 250 MB.
//! The index is written one document at a time (never whole in memory).
//! `convert` converts it into `DIR/index.db` with the default memory cap
//! and prints the figures.

use std::io::Write;
use std::path::{Path, PathBuf};

use scry_index::proto::{Document, Metadata, Occurrence, ToolInfo};
use scry_index::store::convert::{self, ConvertOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen") if args.len() == 4 => {
            let dir = PathBuf::from(&args[1]);
            let files: u32 = args[2].parse().expect("FILES");
            let lines: u32 = args[3].parse().expect("LINES");
            generate(&dir, files, lines);
        }
        Some("convert") if args.len() == 2 => {
            let dir = PathBuf::from(&args[1]);
            let root = scry_base::paths::canonical(&dir.join("ws")).expect("DIR/ws");
            let t = std::time::Instant::now();
            let built = convert::convert(
                &dir.join("index.scip"),
                &dir.join("index.db"),
                ConvertOptions::new(&root),
            );
            match built {
                Ok(b) => println!("{b:?} in {:.1} s", t.elapsed().as_secs_f64()),
                Err(e) => {
                    eprintln!("error[{}]: {e}", e.code());
                    std::process::exit(1);
                }
            }
        }
        _ => {
            eprintln!("usage: synthetic_index gen DIR FILES LINES | convert DIR");
            std::process::exit(2);
        }
    }
}

/// `fn s12() { t13(); }`-style lines; symbols `g c g 1 fF/sL().`.
pub fn generate(dir: &Path, files: u32, lines: u32) {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let out = std::fs::File::create(dir.join("index.scip")).unwrap();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, out);
    let mut buf = Vec::new();
    let meta = Metadata {
        version: 0,
        tool_info: Some(ToolInfo {
            name: "synthetic".into(),
            version: "1".into(),
            arguments: vec![],
        }),
        project_root: "file:///ws".into(),
        text_document_encoding: 1,
    };
    prost::encoding::message::encode(1, &meta, &mut buf);
    out.write_all(&buf).unwrap();
    for f in 0..files {
        let mut text = String::new();
        let mut occurrences = Vec::with_capacity(2 * lines as usize);
        for l in 0..lines {
            let def = format!("s{l}");
            let used = format!("u{l}");
            let line = format!("fn {def}() {{ {used}(); }}\n");
            let (dc, uc) = (3, 3 + def.len() as i32 + 6);
            occurrences.push(Occurrence {
                range: vec![l as i32, dc, dc + def.len() as i32],
                symbol: format!("g c g 1 f{f}/{def}()."),
                symbol_roles: 1,
                ..Default::default()
            });
            occurrences.push(Occurrence {
                range: vec![l as i32, uc, uc + used.len() as i32],
                symbol: format!("g c g 1 f{}/s{l}().", (f + 1) % files),
                symbol_roles: 0,
                ..Default::default()
            });
            text.push_str(&line);
        }
        let name = format!("f{f}.rs");
        std::fs::write(ws.join(&name), text).unwrap();
        let doc = Document {
            relative_path: name,
            language: "rust".into(),
            position_encoding: 1,
            occurrences,
            ..Default::default()
        };
        buf.clear();
        prost::encoding::message::encode(2, &doc, &mut buf);
        out.write_all(&buf).unwrap();
    }
    out.flush().unwrap();
    let size = std::fs::metadata(dir.join("index.scip")).unwrap().len();
    println!(
        "{}: {} bytes, {} symbols, {} occurrences",
        dir.join("index.scip").display(),
        size,
        files as u64 * lines as u64,
        2 * files as u64 * lines as u64
    );
}
