//! Reading the workspace files a root recipe names (`Cargo.toml`,
//! `pyproject.toml`, `package.json`, `pnpm-workspace.yaml`, `go.work`,
//! `tsconfig.json`, `compile_commands.json`, …) into one shape: a JSON
//! value to look keys up in, or a compilation database's listing. Parsed
//! once per file version ([`RootFiles`], by the file's
//! [`scry_base::disk::Stamp`]).
//!
//! Invariants: every read goes through `scry_base::disk` (regular files
//! only, bounded: [`DOC_LIMIT`], [`LISTING_LIMIT`]); a file that cannot be
//! read or parsed is [`Parsed::Unreadable`] (it claims nothing), never an
//! error; nothing here runs a program (a workspace may be untrusted); a
//! cached parse is used only while its stamp is the file's and it was
//! settled when read ([`scry_base::disk::Stamp::settled`]); at most
//! [`KEPT`] files are kept.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use scry_base::disk::{self, Stamp};
use serde_json::{Map, Value};

/// The largest workspace file read (a manifest, a tsconfig).
pub const DOC_LIMIT: u64 = 4 * 1024 * 1024;

/// The largest compilation database whose listing is read; a larger one
/// claims every file below it ([`Listing::too_large`]).
pub const LISTING_LIMIT: u64 = 64 * 1024 * 1024;

/// How many parsed files are kept (then the cache starts afresh).
const KEPT: usize = 512;

/// One workspace file as read.
#[derive(Debug)]
pub enum Parsed {
    /// A document: TOML, JSON, the YAML subset or `go.work`, as JSON.
    Doc(Value),
    /// A compilation database's files.
    Listing(Listing),
    /// Not readable or not parseable: claims nothing.
    Unreadable,
}

/// The files a compilation database lists (absolute, normalised) and
/// their directories.
#[derive(Debug, Default)]
pub struct Listing {
    pub files: HashSet<PathBuf>,
    pub dirs: HashSet<PathBuf>,
    /// Over [`LISTING_LIMIT`]: not read, taken to list every file below it.
    pub too_large: bool,
}

/// A file read as a listing or not, and its parse with the stamp it was
/// read under and when.
type Kept = HashMap<(PathBuf, bool), (Stamp, SystemTime, Arc<Parsed>)>;

/// Parsed workspace files, kept by their stamp. One per workspace.
#[derive(Default)]
pub struct RootFiles {
    kept: Mutex<Kept>,
}

impl RootFiles {
    /// The file at `path` parsed (as a listing when `listing`), or `None`
    /// when there is no regular file there.
    pub fn get(&self, path: &Path, listing: bool) -> Option<Arc<Parsed>> {
        let limit = if listing { LISTING_LIMIT } else { DOC_LIMIT };
        let meta = match disk::check(path, u64::MAX) {
            Ok(m) => m,
            Err(_) => return None,
        };
        let stamp = Stamp::of(path, &meta);
        let key = (path.to_path_buf(), listing);
        {
            let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((s, at, p)) = kept.get(&key)
                && *s == stamp
                && s.settled(*at)
            {
                return Some(p.clone());
            }
        }
        let read_at = SystemTime::now();
        let parsed = Arc::new(if meta.len() > limit {
            if listing {
                Parsed::Listing(Listing {
                    too_large: true,
                    ..Listing::default()
                })
            } else {
                tracing::debug!(path = %path.display(), "workspace file over {limit} bytes: not read");
                Parsed::Unreadable
            }
        } else {
            match disk::read_text(path, limit) {
                Ok(Some(text)) if listing => parse_listing(&text, path),
                Ok(Some(text)) => parse_doc(&text, path),
                _ => Parsed::Unreadable,
            }
        });
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= KEPT {
            kept.clear();
        }
        kept.insert(key, (stamp, read_at, parsed.clone()));
        Some(parsed)
    }
}

/// A document by its name: `.toml` TOML, `.yaml`/`.yml` the YAML subset,
/// `go.work` its own format, anything else JSON with comments.
pub fn parse_doc(text: &str, path: &Path) -> Parsed {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let value = if name.ends_with(".toml") {
        toml(text)
    } else if name.ends_with(".yaml") || name.ends_with(".yml") {
        Some(yaml_lists(text))
    } else if name == "go.work" {
        Some(go_work(text))
    } else {
        serde_json::from_str(&crate::jsonc::strip_jsonc(text)).ok()
    };
    match value {
        Some(v) => Parsed::Doc(v),
        None => {
            tracing::debug!(path = %path.display(), "workspace file not parsed");
            Parsed::Unreadable
        }
    }
}

/// TOML as JSON (dates as strings).
fn toml(text: &str) -> Option<Value> {
    let doc = toml_edit::Document::parse(text).ok()?;
    Some(toml_table(doc.as_table()))
}

fn toml_table(t: &toml_edit::Table) -> Value {
    Value::Object(
        t.iter()
            .map(|(k, item)| (k.to_string(), toml_item(item)))
            .collect(),
    )
}

fn toml_item(item: &toml_edit::Item) -> Value {
    match item {
        toml_edit::Item::None => Value::Null,
        toml_edit::Item::Value(v) => toml_value(v),
        toml_edit::Item::Table(t) => toml_table(t),
        toml_edit::Item::ArrayOfTables(a) => Value::Array(a.iter().map(toml_table).collect()),
    }
}

fn toml_value(v: &toml_edit::Value) -> Value {
    match v {
        toml_edit::Value::String(s) => Value::String(s.value().clone()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => serde_json::Number::from_f64(*f.value())
            .map(Value::Number)
            .unwrap_or(Value::Null),
        toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
        toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(toml_value).collect()),
        toml_edit::Value::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_value(v)))
                .collect(),
        ),
    }
}

/// The subset of YAML workspace files use: top-level keys whose value is a
/// list of strings, as a block (`- 'packages/*'`) or in flow (`[a, b]`);
/// other keys are kept as strings. Comments and quotes are dropped.
pub fn yaml_lists(text: &str) -> Value {
    let mut out = Map::new();
    let mut current: Option<String> = None;
    for raw in text.lines() {
        let line = strip_yaml_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        let t = line.trim();
        if indented || t.starts_with("- ") || t == "-" {
            if let (Some(key), Some(item)) = (&current, t.strip_prefix('-')) {
                let item = unquote(item.trim());
                if let Some(Value::Array(a)) = out.get_mut(key) {
                    a.push(Value::String(item.to_string()));
                }
            }
            continue;
        }
        let Some((key, rest)) = t.split_once(':') else {
            current = None;
            continue;
        };
        let key = unquote(key.trim()).to_string();
        let rest = rest.trim();
        if rest.is_empty() {
            out.insert(key.clone(), Value::Array(Vec::new()));
            current = Some(key);
        } else if let Some(flow) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            let items = flow
                .split(',')
                .map(|i| unquote(i.trim()))
                .filter(|i| !i.is_empty())
                .map(|i| Value::String(i.to_string()))
                .collect();
            out.insert(key, Value::Array(items));
            current = None;
        } else {
            out.insert(key, Value::String(unquote(rest).to_string()));
            current = None;
        }
    }
    Value::Object(out)
}

/// A YAML line without its comment (a `#` outside quotes, at the start or
/// after a space).
fn strip_yaml_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && (prev == ' ' || prev == '\t' || i == 0) => return &line[..i],
            None => {}
        }
        prev = c;
    }
    line
}

fn unquote(s: &str) -> &str {
    for q in ['\'', '"'] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// `go.work`: its `use` directives (`use ./a`, `use ( ./a ./b )`) as
/// `{"use": [...]}`; `//` comments dropped.
pub fn go_work(text: &str) -> Value {
    let mut uses = Vec::new();
    let mut in_block = false;
    for raw in text.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if in_block {
            if line.starts_with(')') {
                in_block = false;
            } else {
                uses.push(Value::String(unquote(line).to_string()));
            }
            continue;
        }
        let Some(rest) = line
            .strip_prefix("use")
            .filter(|r| r.starts_with([' ', '\t', '(']))
        else {
            continue;
        };
        let rest = rest.trim();
        if let Some(inner) = rest.strip_prefix('(') {
            let inner = inner.trim();
            match inner.strip_suffix(')') {
                Some(one) if !one.trim().is_empty() => {
                    uses.push(Value::String(unquote(one.trim()).to_string()))
                }
                Some(_) => {}
                None if inner.is_empty() => in_block = true,
                None => {
                    uses.push(Value::String(unquote(inner).to_string()));
                    in_block = true;
                }
            }
        } else {
            uses.push(Value::String(unquote(rest).to_string()));
        }
    }
    serde_json::json!({ "use": uses })
}

/// A compilation database's entries: only `directory` and `file` are read.
#[derive(serde::Deserialize)]
struct CdbEntry {
    #[serde(default)]
    directory: String,
    file: String,
}

/// The files a `compile_commands.json` lists, absolute (a relative `file`
/// is taken from its `directory`, a relative `directory` from the
/// database's).
pub fn parse_listing(text: &str, path: &Path) -> Parsed {
    let Ok(entries) = serde_json::from_str::<Vec<CdbEntry>>(text) else {
        tracing::debug!(path = %path.display(), "compilation database not parsed");
        return Parsed::Unreadable;
    };
    let base = path.parent().unwrap_or(Path::new("/"));
    let mut listing = Listing::default();
    for e in entries {
        let dir = base.join(&e.directory);
        let file = scry_base::paths::normalise(&dir.join(&e.file));
        if let Some(parent) = file.parent() {
            listing.dirs.insert(parent.to_path_buf());
        }
        listing.files.insert(file);
    }
    Parsed::Listing(listing)
}

/// The values at a selector: dotted keys, `name[]` for each element of a
/// list (`references[].path`).
pub fn select<'a>(doc: &'a Value, selector: &str) -> Vec<&'a Value> {
    let mut at: Vec<&Value> = vec![doc];
    for part in selector.split('.').filter(|p| !p.is_empty()) {
        let (name, each) = match part.strip_suffix("[]") {
            Some(n) => (n, true),
            None => (part, false),
        };
        let mut next = Vec::new();
        for v in at {
            let Some(child) = v.get(name) else { continue };
            if each {
                if let Value::Array(items) = child {
                    next.extend(items.iter());
                }
            } else {
                next.push(child);
            }
        }
        at = next;
    }
    at
}

/// The strings at a selector (a string, or a list's strings).
pub fn strings(doc: &Value, selector: &str) -> Option<Vec<String>> {
    let found = select(doc, selector);
    if found.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for v in found {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => {
                out.extend(items.iter().filter_map(|i| i.as_str().map(String::from)))
            }
            _ => {}
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_is_read_as_json() {
        let v = toml("[workspace]\nmembers = [\"crates/*\"] # all\nexclude = [\"fuzz\"]\n[package]\nname = \"x\"\n").unwrap();
        assert_eq!(strings(&v, "workspace.members").unwrap(), ["crates/*"]);
        assert_eq!(strings(&v, "workspace.exclude").unwrap(), ["fuzz"]);
        assert!(strings(&v, "tool.uv.workspace").is_none());
        let v = toml("[tool.uv.workspace]\nmembers = ['packages/*']\n").unwrap();
        assert!(!select(&v, "tool.uv.workspace").is_empty());
        assert!(toml("[[broken").is_none());
    }

    #[test]
    fn yaml_lists_block_and_flow() {
        let v = yaml_lists(
            "# pnpm\npackages:\n  # the apps\n  - 'apps/*'\n  - \"packages/**\" # all\n  - '!**/test/**'\ncatalog:\n  react: ^18\nother: [a, 'b']\n",
        );
        assert_eq!(
            strings(&v, "packages").unwrap(),
            ["apps/*", "packages/**", "!**/test/**"]
        );
        assert_eq!(strings(&v, "other").unwrap(), ["a", "b"]);
    }

    #[test]
    fn go_work_uses() {
        let v = go_work(
            "go 1.21\n\nuse (\n\t./core // the core\n\t\"./app\"\n)\nuse ./tools\nreplace x => ./y\n",
        );
        assert_eq!(strings(&v, "use").unwrap(), ["./core", "./app", "./tools"]);
        let v = go_work("use (./one)\n");
        assert_eq!(strings(&v, "use").unwrap(), ["./one"]);
    }

    #[test]
    fn selectors_walk_lists() {
        let v: Value = serde_json::json!({"references": [{"path": "a"}, {"path": "b"}], "workspaces": {"packages": ["p/*"]}});
        assert_eq!(strings(&v, "references[].path").unwrap(), ["a", "b"]);
        assert_eq!(strings(&v, "workspaces.packages").unwrap(), ["p/*"]);
        assert!(strings(&v, "workspaces").unwrap().is_empty());
    }

    #[test]
    fn listing_resolves_relative_entries() {
        let text = r#"[{"directory": "/r/app", "file": "main.c"}, {"directory": "sub", "file": "/r/x/y.c"}, {"file": "z.c"}]"#;
        let Parsed::Listing(l) = parse_listing(text, Path::new("/r/compile_commands.json")) else {
            panic!("not a listing");
        };
        assert!(l.files.contains(Path::new("/r/app/main.c")));
        assert!(l.files.contains(Path::new("/r/x/y.c")));
        assert!(l.files.contains(Path::new("/r/z.c")));
        assert!(l.dirs.contains(Path::new("/r/app")));
        assert!(matches!(
            parse_listing("{", Path::new("/r/c.json")),
            Parsed::Unreadable
        ));
    }
}
