//! The converted index against synthetic SCIP indexes: lookups, column
//! conversion, freshness, hostile inputs (corrupt, truncated, another
//! version) and the memory bound of a huge index.

use std::path::Path;

use prost::Message;
use scry_index::cache::{self, Fresh};
use scry_index::proto::{
    self, Document, Metadata, Occurrence, Relationship, ScipIndex, SymbolInformation, ToolInfo,
};
use scry_index::store::IndexError;
use scry_index::store::convert::{ConvertOptions, MAX_CONVERT_MEMORY};
use scry_index::store::query::MAX_RECORDS_PER_READ;
use scry_index::store::read::Index;
use scry_index::store::stamp::Before;

fn meta() -> Option<Metadata> {
    Some(Metadata {
        version: 0,
        tool_info: Some(ToolInfo {
            name: "test-indexer".into(),
            version: "1.2.3".into(),
            arguments: vec![],
        }),
        project_root: "file:///x".into(),
        text_document_encoding: 1,
    })
}

fn occ(range: &[i32], symbol: &str, roles: i32) -> Occurrence {
    Occurrence {
        range: range.to_vec(),
        symbol: symbol.into(),
        symbol_roles: roles,
        ..Default::default()
    }
}

const SHAPE: &str = "t cargo demo 0.1 shapes/Shape#";
const AREA: &str = "t cargo demo 0.1 shapes/Shape#area().";
const SQUARE: &str = "t cargo demo 0.1 shapes/Square#";
const TOTAL: &str = "t cargo demo 0.1 total_weight().";

/// A small tree and its SCIP index: `a.rs` defines `Shape`, `Square`
/// (implementing it) and `total_weight`; `b.rs` uses `total_weight` after
/// an emoji (UTF-16 columns differ from characters there).
fn tree(dir: &Path) -> Vec<u8> {
    std::fs::write(
        dir.join("a.rs"),
        "trait Shape { fn area(&self); }\nstruct Square;\nimpl Shape for Square {}\nfn total_weight() {}\n",
    )
    .unwrap();
    std::fs::write(dir.join("b.rs"), "fn f() { \"📦\"; total_weight(); }\n").unwrap();
    let a = Document {
        relative_path: "a.rs".into(),
        language: "rust".into(),
        position_encoding: 2,
        occurrences: vec![
            occ(&[0, 6, 11], SHAPE, 1),
            occ(&[0, 17, 21], AREA, 1),
            occ(&[1, 7, 13], SQUARE, 1),
            occ(&[2, 5, 10], SHAPE, 0),
            occ(&[2, 15, 21], SQUARE, 0),
            occ(&[3, 3, 15], TOTAL, 1),
            occ(&[3, 0, 2], "local 1", 1),
        ],
        symbols: vec![
            SymbolInformation {
                symbol: SHAPE.into(),
                documentation: vec!["```rust\ntrait Shape\n```".into(), "A shape.".into()],
                ..Default::default()
            },
            SymbolInformation {
                symbol: SQUARE.into(),
                relationships: vec![Relationship {
                    symbol: SHAPE.into(),
                    is_implementation: true,
                    ..Default::default()
                }],
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let b = Document {
        relative_path: "b.rs".into(),
        language: "rust".into(),
        position_encoding: 2,
        // `total_weight` starts at UTF-16 column 16 (character 15).
        occurrences: vec![occ(&[0, 16, 28], TOTAL, 8)],
        ..Default::default()
    };
    ScipIndex {
        metadata: meta(),
        documents: vec![a, b],
        external_symbols: vec![],
    }
    .encode_to_vec()
}

fn convert(dir: &Path, bytes: &[u8]) -> Result<Index, IndexError> {
    convert_capped(dir, bytes, MAX_CONVERT_MEMORY)
}

/// [`convert`] with a cap on the conversion's memory.
fn convert_capped(dir: &Path, bytes: &[u8], max_memory: u64) -> Result<Index, IndexError> {
    let scip = dir.join("index.scip");
    std::fs::write(&scip, bytes).unwrap();
    let db = dir.join("out").join("index.db");
    let root = scry_base::paths::canonical(dir).unwrap();
    scry_index::store::convert::convert(
        &scip,
        &db,
        ConvertOptions {
            commit: Some("abc123".into()),
            max_memory,
            ..ConvertOptions::new(&root)
        },
    )?;
    Index::open(&db)
}

/// [`convert`] of an index of one document.
fn convert_doc(dir: &Path, doc: Document) -> Index {
    let bytes = ScipIndex {
        metadata: meta(),
        documents: vec![doc],
        external_symbols: vec![],
    }
    .encode_to_vec();
    convert(dir, &bytes).unwrap()
}

#[test]
fn lookups_answer_from_the_tables() {
    let t = tempfile::tempdir().unwrap();
    let ix = convert(t.path(), &tree(t.path())).unwrap();
    let m = ix.meta();
    assert_eq!(
        (m.tool.as_str(), m.tool_version.as_str()),
        ("test-indexer", "1.2.3")
    );
    assert_eq!((m.documents, m.verified), (2, 2));
    assert_eq!(m.commit.as_deref(), Some("abc123"));

    let b = ix.document("b.rs").unwrap().unwrap();
    let on = ix.occurrences_on_line(&b, 0).unwrap();
    assert_eq!(on.len(), 1);
    // UTF-16 column 16 is character 15.
    assert_eq!((on[0].col, on[0].end_col), (15, 27));
    let total = ix.symbol_at(on[0].symbol).unwrap();
    assert_eq!(total.symbol, TOTAL);
    let uses = ix.symbol_occurrences(&total, 0, 100).unwrap();
    let docs: Vec<String> = uses
        .iter()
        .map(|u| ix.doc_at(u.doc).unwrap().path)
        .collect();
    assert_eq!(docs, vec!["a.rs", "b.rs"]);
    assert!(uses[0].occ.is_definition() && !uses[1].occ.is_definition());

    let shape = ix.symbol(SHAPE).unwrap().unwrap();
    assert_eq!(ix.info(&shape).unwrap().documentation[1], "A shape.");
    let imps = ix.implementors(&shape, 10).unwrap();
    assert_eq!(ix.symbol_at(imps[0]).unwrap().symbol, SQUARE);
    assert!(ix.symbol("t cargo demo 0.1 nothing#").unwrap().is_none());
    assert!(ix.document("c.rs").unwrap().is_none());

    let named: Vec<String> = ix
        .symbols_named("s", 10)
        .unwrap()
        .into_iter()
        .map(|i| ix.symbol_at(i).unwrap().symbol)
        .collect();
    assert_eq!(named, vec![SHAPE.to_string(), SQUARE.to_string()]);
    // A local is never found by name.
    assert!(ix.symbols_named("local", 10).unwrap().is_empty());
}

/// rust-analyzer's impl blocks as it writes them: `Self` an occurrence of
/// the impl symbol with the block as enclosing range; members' symbols under
/// the impl symbol.
#[test]
fn self_in_an_impl_block_is_its_self_type_and_impl_blocks_have_extents() {
    const EITHER: &str = "t cargo e 1 Either#";
    const OTHER: &str = "t cargo e 1 other/Either#";
    const IMP: &str = "t cargo e 1 iter/impl#[`Either<L, R>`][Iterator]";
    const NEXT: &str = "t cargo e 1 iter/impl#[`Either<L, R>`][Iterator]next().";
    const INHERENT: &str = "t cargo e 1 impl#[`Either<L, R>`]";
    const LEFT: &str = "t cargo e 1 impl#[`Either<L, R>`]left().";
    let t = tempfile::tempdir().unwrap();
    let text = "\
pub enum Either<L, R> {}
impl<L, R> From<other::Either> for Either<L, R> {
    fn next(&mut self) -> Option<Self> {
        None
    }
}
impl<L, R> Either<L, R> {
    fn left(&self) {}
}
";
    std::fs::write(t.path().join("lib.rs"), text).unwrap();
    let enc = |o: Occurrence, e: &[i32]| Occurrence {
        enclosing_range: e.to_vec(),
        ..o
    };
    let doc = Document {
        relative_path: "lib.rs".into(),
        language: "rust".into(),
        position_encoding: 1,
        occurrences: vec![
            occ(&[0, 9, 15], EITHER, 1),
            occ(&[1, 23, 29], OTHER, 0),
            occ(&[1, 35, 41], EITHER, 0),
            enc(occ(&[2, 7, 11], NEXT, 1), &[2, 4, 4, 5]),
            enc(occ(&[2, 33, 37], IMP, 0), &[1, 0, 5, 1]),
            occ(&[6, 11, 17], EITHER, 0),
            enc(occ(&[7, 7, 11], LEFT, 1), &[7, 4, 7, 21]),
        ],
        ..Default::default()
    };
    let ix = convert_doc(t.path(), doc);
    // `Self` on line 3 is a reference of `Either` (not of `other::Either`,
    // named earlier in the header).
    let either = ix.symbol(EITHER).unwrap().unwrap();
    let at: Vec<(u32, u32)> = ix
        .symbol_occurrences(&either, 0, 100)
        .unwrap()
        .iter()
        .map(|o| (o.occ.line, o.occ.col))
        .collect();
    assert_eq!(at, vec![(0, 9), (1, 35), (2, 33), (6, 11)]);
    // Asked at `Self`, the block: defined where its header names `Either`,
    // referenced by its `Self`s.
    let d = ix.document("lib.rs").unwrap().unwrap();
    let on = ix.occurrences_on_line(&d, 2).unwrap();
    let at_self = on.iter().find(|o| o.col == 33).unwrap();
    let imp = ix.symbol_at(at_self.symbol).unwrap();
    assert_eq!(imp.symbol, IMP);
    let uses: Vec<(u32, u32, bool)> = ix
        .symbol_occurrences(&imp, 0, 100)
        .unwrap()
        .iter()
        .map(|o| (o.occ.line, o.occ.col, o.occ.is_definition()))
        .collect();
    assert_eq!(uses, vec![(1, 35, true), (2, 33, false)]);
    // Impl blocks are not found by name.
    assert!(ix.symbols_named("iterator", 10).unwrap().is_empty());
    // Extents: the definitions with an enclosing range and both impl blocks
    // (the trait impl from its `Self`, the inherent one from its member),
    // each named where its header names the self type.
    let ext: Vec<(String, u32, u32, u32, u32)> = ix
        .extents(&d)
        .unwrap()
        .iter()
        .map(|e| {
            let s = ix.symbol_at(e.symbol).unwrap().symbol;
            (s, e.line, e.col, e.start_line, e.end_line)
        })
        .collect();
    assert_eq!(
        ext,
        vec![
            (IMP.to_string(), 1, 35, 1, 5),
            (NEXT.to_string(), 2, 7, 2, 4),
            (INHERENT.to_string(), 6, 11, 6, 8),
            (LEFT.to_string(), 7, 7, 7, 7),
        ]
    );
}

/// rust-analyzer's `Self` in a trait: a local named `Self` enclosed by the
/// trait, with no definition; the live server defines it at the trait's
/// name.
#[test]
fn self_in_a_trait_is_defined_at_the_trait() {
    const SHAPE: &str = "t cargo e 1 Shape#";
    let t = tempfile::tempdir().unwrap();
    std::fs::write(
        t.path().join("lib.rs"),
        "pub trait Shape {\n    fn twice(&self) -> Self;\n}\n",
    )
    .unwrap();
    let doc = Document {
        relative_path: "lib.rs".into(),
        language: "rust".into(),
        position_encoding: 1,
        occurrences: vec![occ(&[0, 10, 15], SHAPE, 1), occ(&[1, 23, 27], "local 1", 0)],
        symbols: vec![SymbolInformation {
            symbol: "local 1".into(),
            display_name: "Self".into(),
            enclosing_symbol: SHAPE.into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let ix = convert_doc(t.path(), doc);
    let d = ix.document("lib.rs").unwrap().unwrap();
    let at_self = ix.occurrences_on_line(&d, 1).unwrap()[0];
    let local = ix.symbol_at(at_self.symbol).unwrap();
    let uses: Vec<(u32, u32, bool)> = ix
        .symbol_occurrences(&local, 0, 10)
        .unwrap()
        .iter()
        .map(|o| (o.occ.line, o.occ.col, o.occ.is_definition()))
        .collect();
    assert_eq!(uses, vec![(0, 10, true), (1, 23, false)]);
}

/// scip-typescript's `T['name']` occurrence covers the quotes; the live
/// server (and so the converted index) places it on the name.
#[test]
fn a_quoted_name_is_placed_on_the_name() {
    const C: &str = "t npm demo 1 src/`a.ts`/R#comments.";
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.ts"), "type C = R['comments'][number]\n").unwrap();
    let doc = Document {
        relative_path: "a.ts".into(),
        language: "typescript".into(),
        occurrences: vec![occ(&[0, 11, 21], C, 0)],
        ..Default::default()
    };
    let ix = convert_doc(t.path(), doc);
    let d = ix.document("a.ts").unwrap().unwrap();
    let on = ix.occurrences_on_line(&d, 0).unwrap();
    assert_eq!((on[0].col, on[0].end_col), (12, 20));
}

#[test]
fn a_changed_file_is_stale_and_counted() {
    let t = tempfile::tempdir().unwrap();
    let ix = convert(t.path(), &tree(t.path())).unwrap();
    let fresh = Fresh::default();
    let b = ix.document("b.rs").unwrap().unwrap();
    assert!(fresh.is_fresh(t.path(), &b));
    assert_eq!(fresh.changed(t.path(), &ix), (0, 2));
    std::fs::write(t.path().join("b.rs"), "\nfn f() { total_weight(); }\n").unwrap();
    assert!(!fresh.is_fresh(t.path(), &b));
    assert_eq!(fresh.changed(t.path(), &ix), (1, 2));
    // Touched but the same bytes: fresh again (by content hash).
    std::fs::write(
        t.path().join("b.rs"),
        "fn f() { \"📦\"; total_weight(); }\n",
    )
    .unwrap();
    assert!(fresh.is_fresh(t.path(), &b));
    std::fs::remove_file(t.path().join("a.rs")).unwrap();
    assert_eq!(fresh.changed(t.path(), &ix), (1, 2));
}

/// A file written while the indexer ran (after `Before::walk`, before the
/// conversion reads it) is stale: the conversion would otherwise record
/// the new text's stamp and hash beside occurrences of the old text, and
/// answer from them as fresh.
#[test]
fn a_file_written_while_the_indexer_ran_is_stale_until_the_next_build() {
    let t = tempfile::tempdir().unwrap();
    let root = scry_base::paths::canonical(t.path()).unwrap();
    let bytes = tree(&root);
    let before = Before::walk(&root);
    assert_eq!(before.len(), 2);
    // The edit lands while the indexer runs (the old occurrences still
    // fit the new text, so nothing else would tell).
    std::fs::write(root.join("b.rs"), "fn g() { \"📦\"; total_weight(); }\n").unwrap();
    let scip = root.join("index.scip");
    std::fs::write(&scip, &bytes).unwrap();
    let convert_with = |before: Option<&Before>, out: &str| {
        let db = root.join(out).join("index.db");
        scry_index::store::convert::convert(
            &scip,
            &db,
            ConvertOptions {
                before,
                ..ConvertOptions::new(&root)
            },
        )
        .unwrap();
        Index::open(&db).unwrap()
    };
    let fresh = Fresh::default();
    let ix = convert_with(Some(&before), "with");
    assert!(!fresh.is_fresh(&root, &ix.document("b.rs").unwrap().unwrap()));
    assert!(fresh.is_fresh(&root, &ix.document("a.rs").unwrap().unwrap()));
    assert_eq!(fresh.changed(&root, &ix), (1, 2));
    // Without what the files were, the edit is taken for the indexed text.
    let blind = convert_with(None, "without");
    assert_eq!(Fresh::default().changed(&root, &blind), (0, 2));
}

#[test]
fn a_document_that_does_not_fit_its_file_is_not_verified() {
    let t = tempfile::tempdir().unwrap();
    let mut bytes = tree(t.path());
    // Now b.rs is shorter than its occurrence.
    std::fs::write(t.path().join("b.rs"), "fn f() {}\n").unwrap();
    let ix = convert(t.path(), &bytes).unwrap();
    let b = ix.document("b.rs").unwrap().unwrap();
    assert!(!b.verified);
    assert_eq!(b.occ_count, 0);
    assert!(!Fresh::default().is_fresh(t.path(), &b));
    // A path leaving the root is dropped, not read.
    let mut scip = ScipIndex::decode(&bytes[..]).unwrap();
    scip.documents[0].relative_path = "../a.rs".into();
    bytes = scip.encode_to_vec();
    let ix = convert(t.path(), &bytes).unwrap();
    assert!(ix.document("../a.rs").unwrap().is_none());
    assert_eq!(ix.meta().documents, 1);
}

#[test]
fn hostile_indexes_are_errors_naming_the_file() {
    let t = tempfile::tempdir().unwrap();
    let good = tree(t.path());
    // Truncated in the middle of a document.
    let e = convert(t.path(), &good[..good.len() - 7]).err().unwrap();
    assert!(matches!(e, IndexError::Scip { .. }), "{e}");
    assert!(e.to_string().contains("truncated"), "{e}");
    // Garbage.
    let e = convert(t.path(), &[0xff; 64]).err().unwrap();
    assert!(matches!(e, IndexError::Scip { .. }), "{e}");
    // Empty (no metadata).
    let e = convert(t.path(), b"").err().unwrap();
    assert!(e.to_string().contains("no metadata"), "{e}");
    // Another protocol version.
    let mut scip = ScipIndex::decode(&good[..]).unwrap();
    scip.metadata.as_mut().unwrap().version = 7;
    let e = convert(t.path(), &scip.encode_to_vec()).err().unwrap();
    assert!(
        matches!(e, IndexError::WrongVersion { version: 7, .. }),
        "{e}"
    );
    // A huge length prefix is refused, not allocated.
    let mut huge = vec![0x12]; // field 2, length-delimited
    huge.extend([0xff, 0xff, 0xff, 0xff, 0x7f]);
    let e = convert(t.path(), &huge).err().unwrap();
    assert!(e.to_string().contains("over"), "{e}");

    // The converted form: truncated, wrong magic, empty.
    convert(t.path(), &good).unwrap();
    let db = t.path().join("out").join("index.db");
    let full = std::fs::read(&db).unwrap();
    for bad in [
        &full[..full.len() - 1],
        &full[..10],
        b"NOTSCRY!xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" as &[u8],
    ] {
        std::fs::write(&db, bad).unwrap();
        let e = Index::open(&db).err().unwrap();
        assert!(matches!(e, IndexError::Format { .. }), "{e}");
    }
}

#[test]
fn the_cache_converts_once_and_again_when_the_scip_changes() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let cache_dir = t.path().join("cache");
    assert!(cache::load(&cache_dir, &root, None).unwrap().is_none());
    let dir = cache::dir_for(&cache_dir, &root);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.scip"), tree(&root)).unwrap();
    std::fs::write(dir.join("commit"), "deadbeef\n").unwrap();
    let (ix, src) = cache::load(&cache_dir, &root, None).unwrap().unwrap();
    assert!(matches!(src, cache::Source::Built(_)));
    assert_eq!(ix.meta().commit.as_deref(), Some("deadbeef"));
    let converted = std::fs::metadata(dir.join("index.db"))
        .unwrap()
        .modified()
        .unwrap();
    // Opened as is the second time.
    let (_ix, _) = cache::load(&cache_dir, &root, None).unwrap().unwrap();
    assert_eq!(
        std::fs::metadata(dir.join("index.db"))
            .unwrap()
            .modified()
            .unwrap(),
        converted
    );
    // A configured file that is missing is an error; a present one loads.
    let ci = t.path().join("ci.scip");
    assert!(cache::load(&cache_dir, &root, Some(&ci)).is_err());
    std::fs::write(&ci, tree(&root)).unwrap();
    let (ix, src) = cache::load(&cache_dir, &root, Some(&ci)).unwrap().unwrap();
    assert_eq!(src, cache::Source::Configured(ci.clone()));
    assert_eq!(ix.meta().commit, None);
}

/// 1,500 files × 200 lines × 2 occurrences (600,000 occurrences, 600,000
/// symbols): opening reads the header and metadata only, and one lookup
/// reads a few KiB whatever the index holds.
#[test]
fn a_huge_index_opens_and_answers_within_its_memory_bound() {
    let t = tempfile::tempdir().unwrap();
    let mut docs = Vec::new();
    let line = "let aaaa = bbbb;\n";
    let text = line.repeat(200);
    for f in 0..1500 {
        let name = format!("f{f:04}.rs");
        std::fs::write(t.path().join(&name), &text).unwrap();
        let mut occs = Vec::new();
        for l in 0..200 {
            occs.push(occ(&[l, 4, 8], &format!("t c p 1 a{f}_{l}."), 1));
            occs.push(occ(
                &[l, 11, 15],
                &format!("t c p 1 b{}_{l}.", (f + 1) % 1500),
                0,
            ));
        }
        docs.push(Document {
            relative_path: name,
            language: "rust".into(),
            position_encoding: 1,
            occurrences: occs,
            ..Default::default()
        });
    }
    let bytes = ScipIndex {
        metadata: meta(),
        documents: docs,
        external_symbols: vec![],
    }
    .encode_to_vec();
    let ix = convert(t.path(), &bytes).unwrap();
    let size = std::fs::metadata(ix.path()).unwrap().len();
    assert!(size > 20_000_000, "{size}");
    let (after_open, _) = ix.reads();
    assert!(after_open < 4096, "open read {after_open} bytes");
    assert_eq!(ix.meta().occurrences, 600_000);

    let before = ix.reads().0;
    let d = ix.document("f1234.rs").unwrap().unwrap();
    let on = ix.occurrences_on_line(&d, 150).unwrap();
    assert_eq!(on.len(), 2);
    let s = ix.symbol_at(on[1].symbol).unwrap();
    assert_eq!(s.symbol, "t c p 1 b1235_150.");
    let uses = ix.symbol_occurrences(&s, 0, 100).unwrap();
    assert_eq!(uses.len(), 1);
    let named = ix.symbols_named("a1234_19", 20).unwrap();
    assert_eq!(named.len(), 11, "a1234_19 and a1234_190..199");
    let (total, largest) = ix.reads();
    let lookup = total - before;
    assert!(lookup < 16 * 1024, "one question read {lookup} bytes");
    assert!(largest <= MAX_RECORDS_PER_READ * 24, "{largest}");
    let _ = proto::MAX_FIELD_BYTES;
}

/// A generated index of `files` × `lines` (one definition and one use per
/// line), written under `dir`.
fn generated(dir: &Path, files: u32, lines: u32) -> Vec<u8> {
    let mut docs = Vec::new();
    for f in 0..files {
        let mut text = String::new();
        let mut occurrences = Vec::new();
        for l in 0..lines {
            text.push_str(&format!("fn s{l}() {{ u{l}(); }}\n"));
            let d = format!("s{l}").len() as i32;
            occurrences.push(occ(
                &[l as i32, 3, 3 + d],
                &format!("g c g 1 f{f}/s{l}()."),
                1,
            ));
            occurrences.push(occ(
                &[l as i32, 9 + d, 9 + 2 * d],
                &format!("g c g 1 f{}/s{l}().", (f + 1) % files),
                0,
            ));
        }
        std::fs::write(dir.join(format!("f{f}.rs")), text).unwrap();
        docs.push(Document {
            relative_path: format!("f{f}.rs"),
            language: "rust".into(),
            position_encoding: 1,
            occurrences,
            ..Default::default()
        });
    }
    ScipIndex {
        metadata: meta(),
        documents: docs,
        external_symbols: vec![],
    }
    .encode_to_vec()
}

#[test]
fn an_index_over_the_memory_cap_is_refused_with_a_stable_code() {
    let t = tempfile::tempdir().unwrap();
    let bytes = generated(t.path(), 20, 200);
    // Within the default cap it converts, every symbol and use found.
    let ix = convert(t.path(), &bytes).unwrap();
    assert_eq!(ix.meta().symbols, 4000);
    assert_eq!(ix.meta().occurrences, 8000);
    let s = ix.symbol("g c g 1 f3/s7().").unwrap().unwrap();
    let uses = ix.symbol_occurrences(&s, 0, 10).unwrap();
    let docs: Vec<String> = uses
        .iter()
        .map(|o| ix.doc_at(o.doc).unwrap().path)
        .collect();
    assert_eq!(docs, ["f2.rs", "f3.rs"]);
    // Over a lowered cap: refused, nothing written over the old one.
    let e = convert_capped(t.path(), &bytes, 64 * 1024).err().unwrap();
    assert!(matches!(e, IndexError::TooLarge { .. }), "{e}");
    assert_eq!(e.code(), "INDEX_TOO_LARGE");
    assert!(e.to_string().contains("too large to convert"), "{e}");
    assert_eq!(
        Index::open(&t.path().join("out").join("index.db"))
            .unwrap()
            .meta()
            .symbols,
        4000
    );
}

// Unix: symbolic links (Windows needs a privilege to make one) or a FIFO.
#[cfg(unix)]
#[test]
fn documents_outside_the_workspace_are_refused_and_counted() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mut scip = ScipIndex::decode(&tree(&ws)[..]).unwrap();
    std::fs::write(elsewhere.join("secret.rs"), "fn total_weight() {}\n").unwrap();
    std::os::unix::fs::symlink(&elsewhere, ws.join("etclink")).unwrap();
    let outside = |path: &str| Document {
        relative_path: path.into(),
        language: "rust".into(),
        position_encoding: 2,
        occurrences: vec![occ(&[0, 3, 15], TOTAL, 1)],
        ..Default::default()
    };
    let abs = elsewhere.join("secret.rs").display().to_string();
    for p in ["etclink/secret.rs", "../elsewhere/secret.rs", abs.as_str()] {
        scip.documents.push(outside(p));
    }
    let ix = convert(&ws, &scip.encode_to_vec()).unwrap();
    assert_eq!(ix.meta().documents, 2, "only a.rs and b.rs");
    assert_eq!(ix.meta().refused, 3);
    assert_eq!(
        ix.meta().refused_first.as_deref(),
        Some("etclink/secret.rs")
    );
    assert!(ix.document("etclink/secret.rs").unwrap().is_none());
    // The definition stays the workspace's own.
    let s = ix.symbol(TOTAL).unwrap().unwrap();
    for o in ix.symbol_occurrences(&s, 0, 10).unwrap() {
        let p = ix.doc_at(o.doc).unwrap().path;
        assert!(p == "a.rs" || p == "b.rs", "{p}");
    }

    // A directory swapped for a symlink out after converting: no longer
    // fresh, even with the same bytes there.
    let root = scry_base::paths::canonical(&ws).unwrap();
    let ix = convert(&ws, &tree(&ws)).unwrap();
    std::fs::create_dir(ws.join("sub")).unwrap();
    let moved = elsewhere.join("sub");
    std::fs::create_dir(&moved).unwrap();
    let b = ix.document("b.rs").unwrap().unwrap();
    assert!(Fresh::default().is_fresh(&root, &b));
    std::fs::copy(ws.join("b.rs"), moved.join("b.rs")).unwrap();
    std::fs::remove_file(ws.join("b.rs")).unwrap();
    std::os::unix::fs::symlink(moved.join("b.rs"), ws.join("b.rs")).unwrap();
    assert!(!Fresh::default().is_fresh(&root, &b));
}

#[test]
fn touch_r_after_a_same_size_edit_does_not_make_a_file_fresh() {
    let t = tempfile::tempdir().unwrap();
    let root = scry_base::paths::canonical(t.path()).unwrap();
    std::fs::write(root.join("a.rs"), "fn aa() {}\nfn bb() {}\n").unwrap();
    let doc = Document {
        relative_path: "a.rs".into(),
        language: "rust".into(),
        position_encoding: 1,
        occurrences: vec![occ(&[0, 3, 5], "t c p 1 aa().", 1)],
        ..Default::default()
    };
    let ix = convert_doc(&root, doc);
    let d = ix.document("a.rs").unwrap().unwrap();
    let fresh = Fresh::default();
    assert!(fresh.is_fresh(&root, &d));
    let path = root.join("a.rs");
    let old = std::fs::metadata(&path).unwrap().modified().unwrap();
    // The two functions swapped (same size), the time set back.
    std::fs::write(&path, "fn bb() {}\nfn aa() {}\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let m = std::fs::metadata(&path).unwrap();
    assert_eq!((m.len(), m.modified().unwrap()), (d.size, old));
    assert!(!fresh.is_fresh(&root, &d));
    assert!(!Fresh::default().is_fresh(&root, &d));
    // Back to the indexed bytes: fresh again (by content hash).
    std::fs::write(&path, "fn aa() {}\nfn bb() {}\n").unwrap();
    assert!(fresh.is_fresh(&root, &d));
}

#[test]
fn a_refused_import_leaves_the_working_index() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let root = scry_base::paths::canonical(&root).unwrap();
    let cache_dir = t.path().join("cache");
    let good = t.path().join("good.scip");
    std::fs::write(&good, tree(&root)).unwrap();
    let ix = scry_index::cache::take(&cache_dir, &root, &good).unwrap();
    assert_eq!(ix.meta().documents, 2);
    let dir = cache::dir_for(&cache_dir, &root);
    let scip_before = std::fs::read(dir.join("index.scip")).unwrap();
    let broken = t.path().join("broken.scip");
    std::fs::write(&broken, &tree(&root)[..40]).unwrap();
    let e = scry_index::cache::take(&cache_dir, &root, &broken)
        .err()
        .unwrap();
    assert_eq!(e.code(), "INDEX_CORRUPT", "{e}");
    // It names the file given, not the cache's copy of it (issue 38).
    let said = e.to_string();
    assert!(
        said.contains("broken.scip") && !said.contains("index.scip.tmp"),
        "{said}"
    );
    assert_eq!(std::fs::read(dir.join("index.scip")).unwrap(), scip_before);
    let (ix, _) = cache::load(&cache_dir, &root, None).unwrap().unwrap();
    assert_eq!(ix.meta().documents, 2);
    assert!(ix.document("a.rs").unwrap().is_some());
    // Nothing left behind but the index, its converted form and markers.
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["index.db", "index.scip"]);
}

// Unix: symbolic links (Windows needs a privilege to make one) or a FIFO.
#[cfg(unix)]
#[test]
fn an_import_from_a_fifo_is_refused_at_once() {
    let t = tempfile::tempdir().unwrap();
    let root = scry_base::paths::canonical(t.path()).unwrap();
    let fifo = root.join("pipe.scip");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a plain syscall on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let cache_dir = root.join("cache");
    let (tx, rx) = std::sync::mpsc::channel();
    let (c2, r2, f2) = (cache_dir.clone(), root.clone(), fifo.clone());
    std::thread::spawn(move || {
        let _ = tx.send(
            scry_index::cache::take(&c2, &r2, &f2)
                .err()
                .map(|e| e.code()),
        );
    });
    // A generous bound: it must not wait for a writer.
    let code = rx.recv_timeout(std::time::Duration::from_secs(20)).unwrap();
    assert_eq!(code, Some("NOT_A_REGULAR_FILE"));
    assert!(
        !cache::dir_for(&cache_dir, &root)
            .join("index.scip")
            .exists()
    );
}
