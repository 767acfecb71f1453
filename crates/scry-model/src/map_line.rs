//! The repository map's two line formats, defined once: the map's builder
//! (`scry_syntax::map`) counts its character budget in these lines and
//! scry-render writes them, so the listing fits the budget the caller gave.
//!
//! Invariant: what [`file_line`] and [`def_line`] return is exactly what a
//! rendered map line holds (without its newline).

use std::path::Path;

/// `path:` — the line heading a file (the path as shown, relative).
pub fn file_line(path: &Path) -> String {
    format!("{}:", path.display())
}

/// `  12│ pub fn f(x: u32) -> u32 {` — one definition.
pub fn def_line(line: u32, signature: &str) -> String {
    format!("{line:>6}│ {signature}")
}
