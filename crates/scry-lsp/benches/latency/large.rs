//! The large-file workspaces of the latency bench: where a question by
//! name costs what the issue measured (a file of thousands of lines, its
//! document symbols in the thousands).
//!
//! * `pyright-large`: a copy of `fixtures/python` with `ledger.py`, a
//!   generated module of exactly [`LINES`] lines (deterministic: the same
//!   bytes every run), asked about `settle_balance`, defined in its middle
//!   and called throughout it and from `use_ledger.py`;
//! * `rust-analyzer-clap` (opt-in): a copy of `clap_builder` from the
//!   cargo registry (`~/.cargo/registry/src/*/clap_builder-*`, the newest
//!   found), asked about `get_bin_name` in `src/builder/command.rs` (5,296
//!   lines in 4.6.7) and at its call in `src/output/help_template.rs`;
//! * `pyright-click` (opt-in): a copy of the installed `click` package
//!   (`python3 -c "import click"`), asked about `make_context` in
//!   `click/core.py` (3,535 lines in 8.4.0).

use std::path::{Path, PathBuf};

use super::Pos;

/// The generated module's length in lines.
pub const LINES: usize = 5_000;

/// The symbol the generated module is asked about.
pub const SYMBOL: &str = "settle_balance";

/// `ledger.py`: `LINES` lines, and how many times `settle_balance` is
/// called in it.
pub fn ledger() -> (String, usize) {
    let mut lines: Vec<String> = [
        "\"\"\"A generated ledger (scry's latency bench): accounts and audits.\"\"\"",
        "",
        "from typing import List",
        "",
        "",
    ]
    .map(String::from)
    .to_vec();
    let blocks = 380;
    let mut calls = 0;
    for i in 0..blocks {
        if i == blocks / 2 {
            lines.extend(
                [
                    "def settle_balance(amounts: List[int]) -> int:",
                    "    \"\"\"The sum of the amounts (the name the bench asks for).\"\"\"",
                    "    return sum(amounts)",
                    "",
                    "",
                ]
                .map(String::from),
            );
        }
        lines.extend([
            format!("class Account{i}:"),
            format!("    \"\"\"Account {i}: a balance and its history.\"\"\""),
            String::new(),
            "    def __init__(self, opening: int) -> None:".to_string(),
            format!("        self.balance = opening + {i}"),
            "        self.history: List[int] = []".to_string(),
            String::new(),
            format!("    def deposit{i}(self, amount: int) -> int:"),
            "        self.history.append(amount)".to_string(),
            "        self.balance += amount".to_string(),
            "        return self.balance".to_string(),
            String::new(),
        ]);
        if i % 10 == 9 {
            lines.extend([
                format!("def audit{i}(accounts: List[Account{i}]) -> int:"),
                "    return settle_balance([a.balance for a in accounts])".to_string(),
                String::new(),
                String::new(),
            ]);
            calls += 1;
        }
    }
    assert!(
        lines.len() <= LINES,
        "the generated module grew past {LINES} lines"
    );
    while lines.len() < LINES {
        let n = lines.len() + 1;
        lines.push(format!("# ledger line {n}"));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    (text, calls)
}

/// `use_ledger.py`: an import and a call of `settle_balance`.
pub const USE_LEDGER: &str = "\"\"\"Uses the generated ledger.\"\"\"\n\
\n\
from ledger import settle_balance\n\
\n\
\n\
def closing(amounts: list) -> int:\n\
    return settle_balance(amounts)\n";

/// Write the generated files into a copy of `fixtures/python`.
pub fn write_ledger(dir: &Path) {
    std::fs::write(dir.join("ledger.py"), ledger().0).unwrap();
    std::fs::write(dir.join("use_ledger.py"), USE_LEDGER).unwrap();
}

/// In a copy with the generated files: the positions (the definition, the
/// call in `use_ledger.py`) and the full references count (definition,
/// calls, import, call).
pub fn ledger_positions(dir: &Path) -> (Pos, Pos, usize) {
    let def = find(dir, "ledger.py", "def settle_balance(", SYMBOL, 0).unwrap();
    let call = find(dir, "use_ledger.py", "return settle_balance(", SYMBOL, 0).unwrap();
    (def, call, 1 + ledger().1 + 2)
}

/// The newest `clap_builder` in the cargo registry, if any.
pub fn clap_builder() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .flatten()
        .flat_map(|reg| {
            std::fs::read_dir(reg.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("clap_builder-"))
                && p.join("src/builder/command.rs").is_file()
        })
        .collect();
    found.sort();
    found.pop()
}

/// The installed `click` package directory, if any.
pub fn click() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import click, os; print(os.path.dirname(click.__file__))",
        ])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    p.join("core.py").is_file().then_some(p)
}

/// The 1-based position of `name` on the `skip`-th (0-based) line of
/// `file` holding `needle`.
pub fn find(dir: &Path, file: &str, needle: &str, name: &str, skip: usize) -> Option<Pos> {
    let text = std::fs::read_to_string(dir.join(file)).ok()?;
    let (i, line) = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .nth(skip)?;
    let at = line.find(needle)? + needle.find(name)?;
    Some(Pos {
        file: file.to_string(),
        line: i as u32 + 1,
        col: line[..at].chars().count() as u32 + 1,
    })
}
