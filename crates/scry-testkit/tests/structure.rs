//! The house rules of the source tree that a compiler does not check
//! (ARCHITECTURE.md), checked on every file of every crate:
//! - every crate's directory is named as its package;
//! - every source file starts with a `//!` header naming its job;
//! - ARCHITECTURE.md's crate table (directory, dependencies) is what
//!   `cargo metadata` says;
//! - no file cycles inside a crate: no two modules use each other, directly
//!   or through others. A module and its ancestors do not count (a parent
//!   declares its children, a child may name its parent's items); siblings
//!   and cousins do. A use is a path from `crate::`, `super::` or `self::`,
//!   taken to the deepest module it names (comments are left out).
//!
//! Invariant: each check names every file or module that breaks it, so a
//! failure says what to change.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Each crate directory (`crates/NAME`) with its package name.
fn crates() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(workspace_root().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        out.push((dir, package_name(&manifest)));
    }
    out.sort();
    assert!(out.len() > 5, "the crates were not found: {out:?}");
    out
}

/// The `name` of a manifest's `[package]` table.
fn package_name(manifest: &str) -> String {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if let Some(value) = line.strip_prefix("name").map(str::trim_start)
            && in_package
            && let Some(value) = value.strip_prefix('=')
        {
            return value.trim().trim_matches('"').to_string();
        }
    }
    panic!("no [package] name in {manifest}");
}

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
#[cfg_attr(
    windows,
    ignore = "checks the source tree, the same on every platform: run where cargo runs"
)]
fn crate_directories_are_named_as_their_packages() {
    let wrong: Vec<String> = crates()
        .into_iter()
        .filter(|(dir, name)| dir.file_name().unwrap().to_str() != Some(name))
        .map(|(dir, name)| format!("{} holds the package {name}", dir.display()))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
#[cfg_attr(
    windows,
    ignore = "checks the source tree, the same on every platform: run where cargo runs"
)]
fn every_source_file_starts_with_its_header() {
    let mut missing = Vec::new();
    for (dir, _) in crates() {
        for sub in ["src", "tests", "benches", "examples"] {
            let mut files = Vec::new();
            rust_files(&dir.join(sub), &mut files);
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap();
                if !text.trim_start().starts_with("//!") {
                    missing.push(f);
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files without a `//!` header: {missing:#?}"
    );
}

/// A module's path inside its crate (`["engine", "order"]`); the crate root
/// (`lib.rs`, `main.rs`) is the empty path.
type Module = Vec<String>;

fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The text without `//` comments (a `//` inside a string cuts the rest
/// of its line, which can only hide a use, never make one).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths a text names from `crate::`, `super::` or `self::`, a `use`
/// group (`crate::a::{b, c::d}`) expanded into its paths.
fn paths_in(text: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = (i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':')
            && ["crate::", "super::", "self::"]
                .iter()
                .any(|k| chars[i..].starts_with(&k.chars().collect::<Vec<_>>()));
        if starts {
            i = path_at(&chars, i, Vec::new(), &mut out);
        } else {
            i += 1;
        }
    }
    out
}

/// Reads the path starting at `i` (after `prefix`), pushing every path it
/// names into `out`; returns where it ends.
fn path_at(chars: &[char], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i < chars.len() && chars[i] == '{' {
            i += 1;
            loop {
                while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
                    i += 1;
                }
                if i >= chars.len() || chars[i] == '}' {
                    return i + 1;
                }
                let before = i;
                i = path_at(chars, i, path.clone(), out);
                // Skip what a path does not read (`as name`, `*`).
                while i < chars.len() && !matches!(chars[i], ',' | '}') {
                    i += 1;
                }
                if i == before {
                    i += 1;
                }
            }
        }
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        if i == start {
            break;
        }
        path.push(chars[start..i].iter().collect());
        if chars[i..].starts_with(&[':', ':']) {
            i += 2;
        } else {
            break;
        }
    }
    out.push(path);
    i
}

/// The module a path from `from` names: the deepest one it reaches.
fn resolve(from: &Module, path: &[String], modules: &BTreeSet<Module>) -> Module {
    let mut cur: Module = Vec::new();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => rest = &path[1..],
        _ => {
            cur = from.clone();
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        cur.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
    }
    for seg in rest {
        let mut next = cur.clone();
        next.push(seg.clone());
        if modules.contains(&next) {
            cur = next;
        } else {
            break;
        }
    }
    cur
}

/// The modules of `src` and which others each uses.
fn module_graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for f in &files {
        let m = module_of(src, f);
        let text = without_comments(&std::fs::read_to_string(f).unwrap());
        let uses = graph.entry(m.clone()).or_default();
        for path in paths_in(&text) {
            let to = resolve(&m, &path, &modules);
            let related = to.starts_with(&m) || m.starts_with(&to);
            if !related {
                uses.insert(to);
            }
        }
    }
    graph
}

/// The strongly connected groups of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let Some((w, _)) = s.graph.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                group.push(w.clone());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                s.out.push(group);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

#[test]
fn the_cycle_finder_finds_a_cycle_and_reads_groups() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("engine")).unwrap();
    std::fs::write(src.join("lib.rs"), "//! x\nmod engine;\nmod render;\n").unwrap();
    std::fs::write(src.join("engine/mod.rs"), "//! x\nmod a;\nmod b;\n").unwrap();
    std::fs::write(
        src.join("engine/a.rs"),
        "//! x\nuse super::b::{Label, more::X as Y};\n",
    )
    .unwrap();
    std::fs::write(
        src.join("engine/b.rs"),
        "//! x\nuse crate::engine::{self, a::Why};\n// crate::render\n",
    )
    .unwrap();
    std::fs::write(src.join("render.rs"), "//! x\nuse crate::engine::a;\n").unwrap();
    let graph = module_graph(src);
    let m = |s: &str| s.split("::").map(String::from).collect::<Module>();
    assert_eq!(graph[&m("engine::b")], BTreeSet::from([m("engine::a")]));
    assert_eq!(graph[&m("render")], BTreeSet::from([m("engine::a")]));
    let found = cycles(&graph);
    assert_eq!(found.len(), 1, "{found:?}");
    let group: BTreeSet<Module> = found[0].iter().cloned().collect();
    assert_eq!(group, BTreeSet::from([m("engine::a"), m("engine::b")]));
}

#[test]
#[cfg_attr(
    windows,
    ignore = "checks the source tree, the same on every platform: run where cargo runs"
)]
fn no_file_cycles_inside_a_crate() {
    let mut found = Vec::new();
    for (dir, name) in crates() {
        let graph = module_graph(&dir.join("src"));
        for group in cycles(&graph) {
            let names: BTreeSet<String> = group.iter().map(|m| m.join("::")).collect();
            let edges: Vec<String> = group
                .iter()
                .flat_map(|m| {
                    graph[m]
                        .iter()
                        .filter(|t| group.contains(t))
                        .map(move |t| format!("{} -> {}", m.join("::"), t.join("::")))
                })
                .collect();
            found.push(format!("{name}: {names:?} ({})", edges.join(", ")));
        }
    }
    assert!(found.is_empty(), "modules that use each other: {found:#?}");
}

/// Each workspace package's scry-* dependencies (normal ones, not dev),
/// from `cargo metadata`, by package name, with its directory.
fn metadata_crates() -> BTreeMap<String, (String, BTreeSet<String>)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut crates = BTreeMap::new();
    for p in meta["packages"].as_array().unwrap() {
        let manifest = Path::new(p["manifest_path"].as_str().unwrap());
        let dir = manifest
            .parent()
            .unwrap()
            .strip_prefix(workspace_root())
            .unwrap();
        let deps = p["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|n| n.starts_with("scry"))
            .map(String::from)
            .collect();
        let dir = dir.to_str().unwrap().replace('\\', "/");
        crates.insert(p["name"].as_str().unwrap().to_string(), (dir, deps));
    }
    crates
}

/// The crate table of ARCHITECTURE.md: package → (directory, depends on).
fn documented_crates() -> BTreeMap<String, (String, BTreeSet<String>)> {
    let doc = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).unwrap();
    let header = "| package | directory | job | depends on |";
    let start = doc
        .lines()
        .position(|l| l.trim() == header)
        .expect("ARCHITECTURE.md has the crate table");
    let cell = |c: &str| c.trim().trim_matches('`').to_string();
    let mut crates = BTreeMap::new();
    for line in doc.lines().skip(start + 2) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        assert_eq!(cells.len(), 4, "a row of four cells: {line}");
        let deps = cells[3]
            .split(',')
            .map(cell)
            .filter(|d| d.starts_with("scry"))
            .collect();
        crates.insert(cell(cells[0]), (cell(cells[1]), deps));
    }
    crates
}

#[test]
#[cfg_attr(
    windows,
    ignore = "checks the source tree, the same on every platform: run where cargo runs"
)]
fn the_architecture_crate_table_is_what_cargo_says() {
    let documented = documented_crates();
    let actual = metadata_crates();
    for (name, (dir, deps)) in &actual {
        let Some((doc_dir, doc_deps)) = documented.get(name) else {
            panic!("ARCHITECTURE.md's crate table has no row for {name}");
        };
        assert_eq!(doc_dir, dir, "{name}'s directory");
        assert_eq!(doc_deps, deps, "{name}'s dependencies");
    }
    let extra: Vec<&String> = documented
        .keys()
        .filter(|n| !actual.contains_key(*n))
        .collect();
    assert!(extra.is_empty(), "rows for no package: {extra:?}");
}
