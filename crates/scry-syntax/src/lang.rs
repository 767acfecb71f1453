//! Which grammar serves which file type (the data in `languages.json`), and
//! each grammar's compiled query: scry's own patterns (`queries/*.scm`)
//! first, then the grammar crate's `TAGS_QUERY`. A row also says what a
//! name may be in its language ([`NameRules`]), which [`crate::names`]
//! checks; this file depends on no other of the crate.
//!
//! Invariants: per-language knowledge is data (the JSON table and the query
//! files); the only code per grammar is the table binding a grammar name to
//! its crate. A query is compiled once per process, on first use; if scry's
//! own patterns fail to compile, the grammar's tags query alone is used
//! (logged), never a panic. A grammar left out of the build (a `without-*`
//! feature, [`LEFT_OUT`]) is the only reason [`grammar`] has none for a row.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use tree_sitter::{Language, Query};

/// One row of `languages.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LanguageSpec {
    /// Our name for it ("rust", "tsx").
    pub id: String,
    /// The grammar crate serving it (see [`grammar`]).
    pub grammar: String,
    /// File extensions, without the dot.
    pub file_types: Vec<String>,
    /// Node kinds whose text is an identifier occurrence (a reference).
    pub identifiers: Vec<String>,
    /// Node kinds that are comments (doc comments are read from them).
    pub comments: Vec<String>,
    /// Node kinds of import/use statements (their identifiers rank
    /// definitions in imported modules before others).
    pub imports: Vec<String>,
    /// Sibling kinds skipped between a doc comment and its definition
    /// (attributes, decorators).
    #[serde(default)]
    pub doc_skip: Vec<String>,
    /// Parent kinds that wrap a definition (`export_statement`): the doc
    /// comment precedes the wrapper.
    #[serde(default)]
    pub wrappers: Vec<String>,
    /// What a name may be (a rename's `new_name`, see [`crate::names`]).
    #[serde(default)]
    pub names: Option<NameRules>,
}

/// What a name may be in one language (the `names` of a `languages.json`
/// row).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NameRules {
    /// The language as a message names it ("Python"); empty: none known.
    pub language: String,
    /// Only ASCII letters, digits and `_` (else Unicode identifiers).
    #[serde(default)]
    pub ascii: bool,
    /// Characters a name may start with besides `XID_Start` and `_`.
    #[serde(default)]
    pub extra_start: String,
    /// Characters a name may continue with besides `XID_Continue`.
    #[serde(default)]
    pub extra_continue: String,
    /// Sigils a name may begin with (`r#`, `'`, `@`, `$`); the longest
    /// that matches is taken.
    #[serde(default)]
    pub prefixes: Vec<Prefix>,
    /// Characters one of which may end a name (Ruby's `?`, `!`, `=`).
    #[serde(default)]
    pub suffixes: String,
    /// Words that cannot be names.
    #[serde(default)]
    pub keywords: Vec<String>,
}

/// A sigil in front of a name.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Prefix {
    pub text: String,
    /// What a name with it is ("a raw identifier").
    pub what: String,
    /// After it a keyword is a name (Rust's `r#fn`, C#'s `@class`) …
    #[serde(default)]
    pub keywords_allowed: bool,
    /// … except these.
    #[serde(default)]
    pub except: Vec<String>,
}

/// A language ready to parse: its grammar and compiled query.
pub struct Lang {
    pub spec: LanguageSpec,
    pub language: Language,
    pub query: Query,
    /// For each pattern: scry's own (true) or the grammar's tags (false).
    pub own_patterns: usize,
}

/// The grammars this build leaves out (this crate's `without-*` features;
/// `None` from [`grammar`] for each): none by default. Their rows in
/// `languages.json` stay (a rename's name rules still apply); their files get
/// no syntactic answer and no map entry, and `scry doctor` says so.
pub const LEFT_OUT: &[&str] = &[
    #[cfg(feature = "without-rust")]
    "rust",
    #[cfg(feature = "without-python")]
    "python",
    #[cfg(feature = "without-go")]
    "go",
    #[cfg(feature = "without-typescript")]
    "typescript",
    #[cfg(feature = "without-typescript")]
    "tsx",
    #[cfg(feature = "without-javascript")]
    "javascript",
    #[cfg(feature = "without-c")]
    "c",
    #[cfg(feature = "without-cpp")]
    "cpp",
    #[cfg(feature = "without-bash")]
    "bash",
    #[cfg(feature = "without-java")]
    "java",
    #[cfg(feature = "without-ruby")]
    "ruby",
    #[cfg(feature = "without-c-sharp")]
    "c_sharp",
    #[cfg(feature = "without-php")]
    "php",
];

/// Whether this build has the grammar for a spec (see [`LEFT_OUT`]).
pub fn built_in(spec: &LanguageSpec) -> bool {
    !LEFT_OUT.contains(&spec.grammar.as_str())
}

/// The specs whose grammar this build leaves out.
pub fn not_built_in() -> Vec<&'static LanguageSpec> {
    specs().iter().filter(|s| !built_in(s)).collect()
}

/// The grammar crate for a grammar name, and the tags queries it brings;
/// `None` for a name not bound here or left out of this build.
fn grammar(name: &str) -> Option<(Language, Vec<&'static str>, &'static str)> {
    Some(match name {
        #[cfg(not(feature = "without-rust"))]
        "rust" => (
            tree_sitter_rust::LANGUAGE.into(),
            vec![tree_sitter_rust::TAGS_QUERY],
            include_str!("queries/rust.scm"),
        ),
        #[cfg(not(feature = "without-python"))]
        "python" => (
            tree_sitter_python::LANGUAGE.into(),
            vec![tree_sitter_python::TAGS_QUERY],
            include_str!("queries/python.scm"),
        ),
        #[cfg(not(feature = "without-go"))]
        "go" => (
            tree_sitter_go::LANGUAGE.into(),
            vec![tree_sitter_go::TAGS_QUERY],
            include_str!("queries/go.scm"),
        ),
        #[cfg(not(feature = "without-typescript"))]
        "typescript" => (
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            vec![
                tree_sitter_javascript::TAGS_QUERY,
                tree_sitter_typescript::TAGS_QUERY,
            ],
            include_str!("queries/typescript.scm"),
        ),
        #[cfg(not(feature = "without-typescript"))]
        "tsx" => (
            tree_sitter_typescript::LANGUAGE_TSX.into(),
            vec![
                tree_sitter_javascript::TAGS_QUERY,
                tree_sitter_typescript::TAGS_QUERY,
            ],
            include_str!("queries/typescript.scm"),
        ),
        #[cfg(not(feature = "without-javascript"))]
        "javascript" => (
            tree_sitter_javascript::LANGUAGE.into(),
            vec![tree_sitter_javascript::TAGS_QUERY],
            include_str!("queries/javascript.scm"),
        ),
        #[cfg(not(feature = "without-c"))]
        "c" => (
            tree_sitter_c::LANGUAGE.into(),
            vec![tree_sitter_c::TAGS_QUERY],
            include_str!("queries/c.scm"),
        ),
        #[cfg(not(feature = "without-cpp"))]
        "cpp" => (
            tree_sitter_cpp::LANGUAGE.into(),
            vec![tree_sitter_cpp::TAGS_QUERY],
            include_str!("queries/cpp.scm"),
        ),
        #[cfg(not(feature = "without-bash"))]
        "bash" => (
            tree_sitter_bash::LANGUAGE.into(),
            vec![],
            include_str!("queries/bash.scm"),
        ),
        #[cfg(not(feature = "without-java"))]
        "java" => (
            tree_sitter_java::LANGUAGE.into(),
            vec![tree_sitter_java::TAGS_QUERY],
            include_str!("queries/java.scm"),
        ),
        #[cfg(not(feature = "without-ruby"))]
        "ruby" => (
            tree_sitter_ruby::LANGUAGE.into(),
            vec![tree_sitter_ruby::TAGS_QUERY],
            include_str!("queries/ruby.scm"),
        ),
        #[cfg(not(feature = "without-c-sharp"))]
        "c_sharp" => (
            tree_sitter_c_sharp::LANGUAGE.into(),
            vec![tree_sitter_c_sharp::TAGS_QUERY],
            include_str!("queries/c_sharp.scm"),
        ),
        #[cfg(not(feature = "without-php"))]
        "php" => (
            tree_sitter_php::LANGUAGE_PHP.into(),
            vec![tree_sitter_php::TAGS_QUERY],
            include_str!("queries/php.scm"),
        ),
        _ => return None,
    })
}

/// The table, parsed once.
pub fn specs() -> &'static [LanguageSpec] {
    static SPECS: OnceLock<Vec<LanguageSpec>> = OnceLock::new();
    SPECS.get_or_init(|| {
        serde_json::from_str(include_str!("languages.json")).expect("languages.json is valid")
    })
}

/// The language spec for a file, by extension.
pub fn spec_for(path: &Path) -> Option<&'static LanguageSpec> {
    let ext = path.extension()?.to_str()?;
    specs()
        .iter()
        .find(|s| s.file_types.iter().any(|t| t.eq_ignore_ascii_case(ext)))
}

/// The compiled language for a spec id (compiled on first use).
pub fn lang(id: &str) -> Option<Arc<Lang>> {
    static LANGS: OnceLock<std::sync::Mutex<HashMap<String, Option<Arc<Lang>>>>> = OnceLock::new();
    let map = LANGS.get_or_init(Default::default);
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    map.entry(id.to_string())
        .or_insert_with(|| compile(specs().iter().find(|s| s.id == id)?).map(Arc::new))
        .clone()
}

fn compile(spec: &LanguageSpec) -> Option<Lang> {
    let (language, tags, own) = grammar(&spec.grammar)?;
    let tags_src = tags.join("\n");
    let full = format!("{own}\n{tags_src}");
    let (query, own_patterns) = match Query::new(&language, &full) {
        Ok(q) => {
            let own_n = Query::new(&language, own)
                .map(|q| q.pattern_count())
                .unwrap_or(0);
            (q, own_n)
        }
        Err(e) => {
            tracing::warn!(language = %spec.id, "scry's tags query does not compile: {e}");
            (Query::new(&language, &tags_src).ok()?, 0)
        }
    };
    Some(Lang {
        spec: spec.clone(),
        language,
        query,
        own_patterns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every grammar named in `languages.json` is bound, unless this build
    /// leaves it out; every name left out is one of the table's.
    #[test]
    fn grammars_bound_unless_left_out() {
        for spec in specs() {
            assert_eq!(
                grammar(&spec.grammar).is_some(),
                built_in(spec),
                "{}",
                spec.grammar
            );
        }
        for g in LEFT_OUT {
            assert!(specs().iter().any(|s| s.grammar == *g), "{g}");
        }
    }

    /// Every built-in language's own query compiles together with the
    /// grammar's tags.
    #[test]
    fn every_query_compiles() {
        for spec in specs().iter().filter(|s| built_in(s)) {
            let (language, tags, own) = grammar(&spec.grammar).expect(&spec.grammar);
            if let Err(e) = Query::new(&language, own) {
                panic!("{}: own query: {e}", spec.id);
            }
            let full = format!("{own}\n{}", tags.join("\n"));
            if let Err(e) = Query::new(&language, &full) {
                panic!("{}: combined query: {e}", spec.id);
            }
        }
    }

    #[test]
    fn file_types_map_to_languages() {
        assert_eq!(spec_for(Path::new("a/b.rs")).unwrap().id, "rust");
        assert_eq!(spec_for(Path::new("x.tsx")).unwrap().id, "tsx");
        assert_eq!(spec_for(Path::new("x.java")).unwrap().id, "java");
        assert!(spec_for(Path::new("x.txt")).is_none());
    }
}
