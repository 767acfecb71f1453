//! Question picking shared by the accuracy programs (`name_accuracy`,
//! `index_bench`): identifier positions in real third-party code, drawn at
//! random (seeded xorshift, deterministic for a given tree), and how an
//! answer's location set is scored against the server's truth.
//!
//! Invariants: the same tree and seed give the same questions in the same
//! order in every program; only identifiers in code (not in comments or
//! strings) are drawn.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use std::time::Duration;

use scry_model::name::SymbolName;
use scry_model::{Action, Answer, Body, Query};
use scry_ops::resolve::{self, MatchKind};

/// (path, 1-based line, 1-based column) of each location.
pub type Set = BTreeSet<(PathBuf, u32, u32)>;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn extensions(lang: &str) -> &'static [&'static str] {
    match lang {
        "rust" => &["rs"],
        "python" => &["py"],
        "typescript" => &["ts"],
        "go" => &["go"],
        "c" => &["c"],
        other => panic!("unknown language {other}"),
    }
}

/// The language's source files under `root` (no hidden directories, no
/// `node_modules` or `target`, no `.d.ts`), sorted.
pub fn source_files(root: &Path, lang: &str) -> Vec<PathBuf> {
    let exts = extensions(lang);
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || name == "node_modules" || name == "target" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else if exts.iter().any(|x| name.ends_with(&format!(".{x}")))
                && !name.ends_with(".d.ts")
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Identifier tokens of a line that sit in code (not in a comment or a
/// string): (0-based char column, token).
pub fn code_tokens(line: &str, quote_single: bool) -> Vec<(u32, String)> {
    let idx = scry_lsp_session::LineIndex::new(line);
    let mut toks = Vec::new();
    let mut seen = BTreeSet::new();
    for t in resolve::ident_tokens(line) {
        if t.starts_with(|c: char| c.is_ascii_digit()) || !seen.insert(t) {
            continue;
        }
        let occ =
            resolve::occurrences(&idx, &SymbolName::parse(t), Some(0), quote_single, 64, None);
        for o in occ.list {
            if o.kind == MatchKind::Code {
                toks.push((o.pos.col, t.to_string()));
            }
        }
    }
    toks
}

/// One drawn position: a file, a 1-based line, the 0-based character
/// column of an identifier on it, and the identifier.
pub struct Pick {
    pub file: PathBuf,
    pub line: u32,
    pub col: u32,
    pub symbol: String,
}

/// Draws identifier positions from a project's source files.
pub struct Picker {
    pub files: Vec<PathBuf>,
    /// Whether `'` quotes strings in the language (not in Rust).
    pub quote_single: bool,
    rng: Rng,
}

impl Picker {
    pub fn new(root: &Path, lang: &str, seed: u64) -> Picker {
        let files = source_files(root, lang);
        assert!(
            !files.is_empty(),
            "no {lang} files under {}",
            root.display()
        );
        Picker {
            files,
            quote_single: lang != "rust",
            rng: Rng(seed | 1),
        }
    }

    /// The next draw; `None` when the drawn line holds no identifier in code
    /// (the caller draws again, counting its tries).
    pub fn draw(&mut self) -> Option<Pick> {
        let f = &self.files[self.rng.below(self.files.len())];
        let text = std::fs::read_to_string(f).ok()?;
        let lines: Vec<&str> = text.lines().collect();
        if lines.is_empty() {
            return None;
        }
        let li = self.rng.below(lines.len());
        let toks = code_tokens(lines[li], self.quote_single);
        if toks.is_empty() {
            return None;
        }
        let (col, symbol) = toks[self.rng.below(toks.len())].clone();
        Some(Pick {
            file: f.clone(),
            line: li as u32 + 1,
            col,
            symbol,
        })
    }
}

/// A question at `line` (1-based) of `path`, by `symbol` and/or at `col`
/// (1-based characters), with a 60 s budget.
pub fn query(
    action: Action,
    path: &Path,
    symbol: Option<&str>,
    line: u32,
    col: Option<u32>,
) -> Query {
    let mut q = Query::new(action);
    q.path = Some(path.to_path_buf());
    q.symbol = symbol.map(str::to_string);
    q.line = Some(line);
    q.column = col;
    q.timeout = Some(Duration::from_secs(60));
    q
}

pub fn locs(a: &Answer) -> Set {
    body_locs(&a.body)
}

pub fn body_locs(b: &Body) -> Set {
    match b {
        Body::Locations { locations } => locations
            .iter()
            .map(|l| (l.path.clone(), l.line, l.col))
            .collect(),
        _ => Set::new(),
    }
}

/// Recall and precision of `got` against a truth asked twice: only
/// locations both truths agree on (`stable`) count for recall; ones they
/// disagree on (`unstable`) are not held against precision.
pub fn score(stable: &Set, unstable: &Set, got: &Set) -> (f64, f64) {
    let hit = got.intersection(stable).count() as f64;
    let judged = got.difference(unstable).count() as f64;
    let r = if stable.is_empty() {
        1.0
    } else {
        hit / stable.len() as f64
    };
    let p = if judged == 0.0 {
        if stable.is_empty() { 1.0 } else { 0.0 }
    } else {
        hit / judged
    };
    (r, p)
}
