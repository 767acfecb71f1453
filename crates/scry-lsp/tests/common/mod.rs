//! Shared helpers for the integration tests that run real language servers
//! against the fixtures in `fixtures/` (see `fixtures/README.md`).
//!
//! Every fixture is copied into a fresh temporary directory first, so the
//! files servers write (`target/`, `Cargo.lock`, `.cache/clangd/`) never
//! touch the repository.

#![allow(dead_code)]

pub mod process;
pub mod suite;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use scry_model::{Action, Answer, Body, Loc, OpError, Query, SymbolNode};
use scry_ops::Engine;
use scry_render::{RenderOptions, render_text};
use scry_workspace::Workspace;
use serde_json::Value;

#[allow(unused_imports)] // each test file uses some
pub use scry_testkit::{copy_fixture, copy_tree, fixtures_dir, servers_required};

/// The time budget of one query in these tests (the engine's maximum is
/// 120 s; the default from the configuration is shorter).
pub const TEST_TIMEOUT: Duration = Duration::from_secs(90);

/// `fixtures/expected.json`.
pub fn expected() -> Value {
    let p = fixtures_dir().join("expected.json");
    let text = std::fs::read_to_string(&p).expect("read fixtures/expected.json");
    serde_json::from_str(&text).expect("fixtures/expected.json is JSON")
}

/// The language server command each fixture needs.
pub fn server_command(lang: &str) -> &'static str {
    match lang {
        "rust" => "rust-analyzer",
        "python" => "pyright-langserver",
        "typescript" => "typescript-language-server",
        "go" => "gopls",
        "c" => "clangd",
        other => panic!("no fixture for language {other}"),
    }
}

/// Whether `command` is usable; when it is not, either print why the test
/// is skipped (returns false) or, under `SCRY_REQUIRE_SERVERS=1`, fail.
pub fn server_available(ws: &Workspace, command: &str, test: &str) -> bool {
    if ws.installed(command).is_some() {
        return true;
    }
    scry_testkit::skip_or_fail(format_args!("{test}: `{command}` is not installed"));
    false
}

/// One fixture copy with one engine (one server start for the whole test).
pub struct Fixture {
    pub lang: &'static str,
    /// Keeps the copy alive; removed on drop.
    pub dir: tempfile::TempDir,
    /// The canonical workspace root (what answers' paths start with).
    pub root: PathBuf,
    pub engine: Engine,
    /// `expected.json[lang]`.
    pub exp: Value,
}

impl Fixture {
    /// Copy the fixture and open it; `None` (after printing why) when the
    /// language's server is not installed and servers are not required.
    pub fn open(lang: &'static str, test: &str) -> Option<Fixture> {
        let dir = copy_fixture(lang);
        let ws = Workspace::open(dir.path()).expect("open workspace");
        if !server_available(&ws, server_command(lang), test) {
            return None;
        }
        let root = ws.root().to_path_buf();
        let exp = expected()[lang].clone();
        assert!(exp.is_object(), "expected.json has no `{lang}`");
        Some(Fixture {
            lang,
            dir,
            root,
            engine: Engine::new(Arc::new(ws)),
            exp,
        })
    }

    /// Run a query, failing the test with the error's code and message.
    /// Queries without a timeout get [`TEST_TIMEOUT`]: slow CI machines
    /// index slowly, and the engine waits for indexing within the budget.
    pub async fn run(&self, q: &Query) -> Answer {
        let mut q = q.clone();
        q.timeout.get_or_insert(TEST_TIMEOUT);
        match self.engine.run_query(&q).await {
            Ok(a) => a,
            Err(e) => panic!(
                "[{}] {:?} {:?} {:?} failed: {}: {e}",
                self.lang,
                q.action,
                q.path,
                q.symbol,
                e.code()
            ),
        }
    }

    pub async fn try_run(&self, q: &Query) -> Result<Answer, OpError> {
        let mut q = q.clone();
        q.timeout.get_or_insert(TEST_TIMEOUT);
        self.engine.run_query(&q).await
    }

    /// A position of `expected.json` as `(relative path, line, col)`.
    pub fn pos(&self, v: &Value) -> Pos {
        Pos::from_json(v)
    }

    /// The position at a JSON pointer into `expected.json[lang]`.
    pub fn exp_pos(&self, pointer: &str) -> Pos {
        let v = self
            .exp
            .pointer(pointer)
            .unwrap_or_else(|| panic!("expected.json {}{pointer} missing", self.lang));
        Pos::from_json(v)
    }

    pub fn exp_str(&self, pointer: &str) -> String {
        self.exp
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("expected.json {}{pointer} is not a string", self.lang))
            .to_string()
    }

    /// `expected.json[lang].files.{a,b,c}`.
    pub fn file(&self, which: &str) -> String {
        self.exp_str(&format!("/files/{which}"))
    }

    /// A location as `(path relative to the root, line, col)`.
    pub fn rel(&self, loc: &Loc) -> Pos {
        Pos {
            path: rel_path(&loc.path, &self.root),
            line: loc.line,
            col: loc.col,
        }
    }

    /// The locations of a `Locations` answer, relative.
    pub fn locs(&self, a: &Answer) -> Vec<Pos> {
        match &a.body {
            Body::Locations { locations } => locations.iter().map(|l| self.rel(l)).collect(),
            other => panic!("[{}] expected locations, got {other:?}", self.lang),
        }
    }

    /// Text rendering with paths relative to the fixture copy.
    pub fn text(&self, a: &Answer) -> String {
        render_text(a, &self.root, &RenderOptions::default())
    }

    pub async fn shutdown(self) {
        let _ = tokio::time::timeout(Duration::from_secs(15), self.engine.shutdown()).await;
    }
}

/// A position: path relative to the fixture root (with `/`), 1-based line
/// and character column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    pub path: String,
    pub line: u32,
    pub col: u32,
}

impl Pos {
    pub fn from_json(v: &Value) -> Pos {
        let get = |k: &str| {
            v.get(k)
                .unwrap_or_else(|| panic!("position {v} has no `{k}`"))
                .clone()
        };
        Pos {
            path: get("path").as_str().expect("path").to_string(),
            line: get("line").as_u64().expect("line") as u32,
            col: get("col").as_u64().expect("col") as u32,
        }
    }
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.path, self.line, self.col)
    }
}

pub fn rel_path(p: &Path, root: &Path) -> String {
    match p.strip_prefix(root) {
        Ok(r) => r
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => p.display().to_string(),
    }
}

/// A query builder.
pub fn query(action: Action) -> QueryBuilder {
    QueryBuilder(Query::new(action))
}

pub struct QueryBuilder(Query);

impl QueryBuilder {
    pub fn path(mut self, p: impl Into<PathBuf>) -> Self {
        self.0.path = Some(p.into());
        self
    }
    pub fn symbol(mut self, s: &str) -> Self {
        self.0.symbol = Some(s.to_string());
        self
    }
    pub fn line(mut self, l: u32) -> Self {
        self.0.line = Some(l);
        self
    }
    pub fn column(mut self, c: u32) -> Self {
        self.0.column = Some(c);
        self
    }
    pub fn query(mut self, s: &str) -> Self {
        self.0.query = Some(s.to_string());
        self
    }
    pub fn timeout(mut self, d: Duration) -> Self {
        self.0.timeout = Some(d);
        self
    }
    pub fn build(self) -> Query {
        self.0
    }
}

/// Find a symbol node by name anywhere in an outline, with its parent chain.
pub fn find_symbol<'a>(
    nodes: &'a [SymbolNode],
    name: &str,
) -> Option<(&'a SymbolNode, Vec<String>)> {
    for n in nodes {
        if n.name == name {
            return Some((n, Vec::new()));
        }
        if let Some((hit, mut parents)) = find_symbol(&n.children, name) {
            parents.insert(0, n.name.clone());
            return Some((hit, parents));
        }
    }
    None
}

pub fn list(ps: &[Pos]) -> String {
    ps.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
