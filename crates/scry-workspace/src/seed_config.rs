//! The LSP configuration files of the coding agents scry comes from
//! (zut-style `lsp.json`), read as project layers below scry's own files.
//!
//! Each file is translated into a scry configuration layer (the JSON of
//! [`crate::config`]) and then layered like any other, so one set of rules
//! decides what the result means. Accepted forms:
//!
//! * `servers`, `lspServers` and `linters` maps (or arrays of objects with
//!   an `id`);
//! * a flat map: top-level keys that name a built-in provider or hold an
//!   object with a `command`;
//! * a `providers` array of built-in names (`"gopls"`) or objects with an
//!   `id`; nested `lsp` / `cli` option objects are merged into the entry,
//!   `selectors` mean `fileTypes`;
//! * `fileTypes` as extensions with or without the dot (`".go"`, `"go"`,
//!   `"*.go"`), basenames, or language ids (`"python"` → `py`, `pyi`), the
//!   language ids taken from the catalogue;
//! * `autoDetect`.
//!
//! Unknown fields are dropped without a warning (they belong to the other
//! agent). A file that is not valid JSON is skipped with a warning; it never
//! stops scry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::catalog;
use crate::jsonc::strip_jsonc;
use crate::keys::{canon, server_key};

/// Seed files relative to the workspace root, lowest precedence first (the
/// order the agents themselves layer them).
pub const SEED_CONFIG_FILES: [&str; 5] = [
    ".pi/lsp.json",
    ".omp/lsp.json",
    "lsp.json",
    ".lsp.json",
    ".zut/lsp.json",
];

/// The seed files present in `workspace_root`, each as (path, scry layer
/// JSON text), lowest precedence first; and a warning per file skipped.
pub fn read_layers(workspace_root: &Path) -> (Vec<(PathBuf, String)>, Vec<String>) {
    let mut layers = Vec::new();
    let mut warnings = Vec::new();
    for f in SEED_CONFIG_FILES {
        let path = workspace_root.join(f);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                warnings.push(format!("{}: not read: {e}", path.display()));
                continue;
            }
        };
        match translate(&text) {
            Ok(layer) => {
                tracing::debug!(path = %path.display(), "reading seed config file");
                layers.push((path, layer.to_string()));
            }
            Err(e) => warnings.push(format!("{}: not used: {e}", path.display())),
        }
    }
    (layers, warnings)
}

/// Translate a seed file's text into a scry configuration layer.
/// `Err` carries why the text is not usable.
pub fn translate(text: &str) -> Result<Value, String> {
    let cleaned = strip_jsonc(text);
    if cleaned.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let root: Value = serde_json::from_str(&cleaned).map_err(|e| e.to_string())?;
    let Value::Object(top) = root else {
        return Err("the top level is not a JSON object".into());
    };
    let builtin_ids: Vec<String> = catalog::builtins().into_iter().map(|s| s.id).collect();
    let mut servers = Map::new();
    let mut linters = Map::new();
    let mut out = Map::new();
    for (key, value) in top {
        match canon(&key).as_str() {
            "servers" | "lspservers" => collect(value, &mut servers),
            "linters" => collect(value, &mut linters),
            "providers" => {
                if let Value::Array(items) = value {
                    for item in items {
                        match item {
                            Value::String(id) if !id.trim().is_empty() => {
                                servers.insert(id, Value::Object(Map::new()));
                            }
                            Value::Object(o) => {
                                if let Some(id) = o.get("id").and_then(Value::as_str) {
                                    let id = id.to_string();
                                    servers.insert(id, entry(Value::Object(o)));
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            "autodetect" if value.is_boolean() => {
                out.insert("autoDetect".into(), value);
            }
            _ => {
                // A flat map entry: a built-in's id, or anything with a command.
                let is_provider = builtin_ids.contains(&key)
                    || value.as_object().is_some_and(|o| {
                        o.keys().any(|k| server_key(k) == Some("command"))
                            || o.contains_key("lsp")
                            || o.contains_key("cli")
                    });
                if is_provider {
                    servers.insert(key, entry(value));
                }
            }
        }
    }
    if !servers.is_empty() {
        out.insert("servers".into(), Value::Object(servers));
    }
    if !linters.is_empty() {
        out.insert("linters".into(), Value::Object(linters));
    }
    Ok(Value::Object(out))
}

fn collect(value: Value, into: &mut Map<String, Value>) {
    match value {
        Value::Object(map) => {
            for (id, e) in map {
                into.insert(id, entry(e));
            }
        }
        Value::Array(items) => {
            for item in items {
                if let Some(id) = item.get("id").and_then(Value::as_str) {
                    let id = id.to_string();
                    into.insert(id, entry(item));
                }
            }
        }
        _ => {}
    }
}

/// One provider entry: nested `lsp`/`cli` merged, `selectors` as
/// `fileTypes`, language ids expanded, unknown keys dropped.
fn entry(value: Value) -> Value {
    let Value::Object(obj) = value else {
        // true / false / null keep their scry meaning.
        return match value {
            Value::Bool(_) | Value::Null => value,
            _ => Value::Object(Map::new()),
        };
    };
    let mut flat = Map::new();
    let mut nested = Vec::new();
    for (k, v) in obj {
        match (canon(&k).as_str(), v) {
            ("lsp" | "cli", Value::Object(o)) => nested.push(o),
            ("id", _) => {}
            ("selectors" | "selector", v) => {
                flat.insert("fileTypes".into(), v);
            }
            (_, v) => {
                flat.insert(k, v);
            }
        }
    }
    for o in nested {
        for (k, v) in o {
            flat.entry(k).or_insert(v);
        }
    }
    let mut out = Map::new();
    for (k, v) in flat {
        let Some(key) = server_key(&k) else { continue };
        let v = if key == "fileTypes" { file_types(v) } else { v };
        out.insert(key.to_string(), v);
    }
    Value::Object(out)
}

/// Language id → the catalogue's file types announced with that id.
fn language_ids() -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for spec in catalog::builtins() {
        for ft in &spec.file_types {
            let id = spec.language_id_for(Path::new(&format!("x.{ft}")));
            let list = map.entry(id).or_default();
            if !list.contains(ft) {
                list.push(ft.clone());
            }
        }
    }
    map
}

fn file_types(v: Value) -> Value {
    let items: Vec<String> = match v {
        Value::String(s) => s
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        Value::Array(a) => a
            .into_iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => return Value::Array(Vec::new()),
    };
    let ids = language_ids();
    let extensions: Vec<String> = catalog::builtins()
        .into_iter()
        .flat_map(|s| s.file_types)
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    };
    for item in items {
        let t = item.trim();
        let t = t.strip_prefix('*').unwrap_or(t);
        let bare = t.strip_prefix('.');
        match bare {
            // Written with a dot: an extension.
            Some(ext) => push(ext),
            None => match ids.get(t) {
                Some(exts) => {
                    if extensions.iter().any(|e| e == t) {
                        push(t);
                    }
                    for e in exts {
                        push(e);
                    }
                }
                None => push(t),
            },
        }
    }
    Value::Array(out.into_iter().map(Value::String).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ServerSpec;
    use crate::config::Config;

    fn scry(json: &str) -> Vec<ServerSpec> {
        let c = Config::from_layers(&[(PathBuf::from("/w/.scry.json"), json.to_string())])
            .expect("scry layer");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        c.servers
    }

    fn seed(json: &str) -> Vec<ServerSpec> {
        let layer = translate(json).expect("seed translates");
        let c = Config::from_layers(&[(PathBuf::from("/w/lsp.json"), layer.to_string())])
            .expect("seed layer");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        c.servers
    }

    const GOPLS_SCRY: &str = r#"{"servers": {"gopls": {"command": "gopls", "fileTypes": ["go"],
        "rootMarkers": ["go.mod", "go.work"]}}}"#;

    #[test]
    fn servers_and_lsp_servers_maps_with_dotted_file_types() {
        let zut = r#"{"servers": {"gopls": {"command": "gopls", "fileTypes": [".go"],
            "rootMarkers": ["go.mod", "go.work"]}}}"#;
        assert_eq!(seed(zut), scry(GOPLS_SCRY));
        let lsp_servers = r#"{"lspServers": {"gopls": {"command": "gopls", "fileTypes": ["*.go"],
            "rootMarkers": ["go.mod", "go.work"]}}}"#;
        assert_eq!(seed(lsp_servers), scry(GOPLS_SCRY));
        // The translation changed something real: the dotted form differs from the default.
        assert_ne!(scry(GOPLS_SCRY), scry("{}"));
    }

    #[test]
    fn linters_map_as_in_the_zut_docs() {
        let zut = r#"{"linters": {"my-eslint": {"kind": "cli", "command": "eslint",
            "args": ["--format", "json"], "parser": "eslint-json", "mode": "files",
            "fileTypes": [".js", ".jsx", ".ts", ".tsx"], "rootMarkers": ["eslint.config.js", ".eslintrc"]}}}"#;
        let ours = r#"{"linters": {"my-eslint": {"kind": "cli", "command": "eslint",
            "args": ["--format", "json"], "parser": "eslint-json", "mode": "files",
            "fileTypes": ["js", "jsx", "ts", "tsx"], "rootMarkers": ["eslint.config.js", ".eslintrc"]}}}"#;
        let s = seed(zut);
        assert_eq!(s, scry(ours));
        let e = s.iter().find(|s| s.id == "my-eslint").unwrap();
        assert!(e.is_linter);
    }

    #[test]
    fn flat_map() {
        let flat = r#"{"gopls": {"command": "gopls", "fileTypes": [".go"], "rootMarkers": ["go.mod", "go.work"]},
            "my-lsp": {"command": ["my-lsp", "--stdio"], "fileTypes": [".foo"]},
            "clangd": {"disabled": true},
            "lsp_diagnostics_on_write": true, "theme": {"dark": true}}"#;
        let ours = r#"{"servers": {"gopls": {"command": "gopls", "fileTypes": ["go"], "rootMarkers": ["go.mod", "go.work"]},
            "my-lsp": {"command": "my-lsp", "args": ["--stdio"], "fileTypes": ["foo"]},
            "clangd": {"disabled": true}}}"#;
        assert_eq!(seed(flat), scry(ours));
    }

    #[test]
    fn providers_array_of_names_and_objects() {
        let zut = r#"{"autoDetect": false, "providers": ["gopls",
            {"id": "my-py", "kind": "lsp", "command": "my-py-ls", "selectors": ["python"],
             "lsp": {"initializationOptions": {"a": 1}, "settings": {"x": true}}, "docs": "ignored"},
            {"id": "my-lint", "kind": "cli", "command": "mylint", "fileTypes": "sh",
             "cli": {"parser": "generic", "mode": "files"}}]}"#;
        let ours = r#"{"autoDetect": false, "servers": {"gopls": {},
            "my-py": {"kind": "lsp", "command": "my-py-ls", "fileTypes": ["py", "pyi"],
                      "initializationOptions": {"a": 1}, "settings": {"x": true}},
            "my-lint": {"kind": "cli", "command": "mylint", "fileTypes": ["sh"], "parser": "generic", "mode": "files"}}}"#;
        let s = seed(zut);
        assert_eq!(s, scry(ours));
        let ids: Vec<&str> = s.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            ["my-py", "my-lint", "gopls"],
            "autoDetect false keeps the named ones"
        );
    }

    #[test]
    fn file_types_as_language_ids() {
        let zut = r#"{"servers": {"ts2": {"command": "ts2", "fileTypes": ["typescript", "typescriptreact", "rust", "c"]}}}"#;
        let ours = r#"{"servers": {"ts2": {"command": "ts2", "fileTypes": ["ts", "mts", "cts", "tsx", "rs", "c", "h"]}}}"#;
        assert_eq!(seed(zut), scry(ours));
    }

    #[test]
    fn unknown_fields_are_ignored_silently() {
        let zut = r#"{"servers": {"gopls": {"command": "gopls", "fileTypes": [".go"],
            "rootMarkers": ["go.mod", "go.work"], "priority": 3, "description": "Go"}},
            "lsp_enabled": true, "subagent_lsp_enabled": false}"#;
        assert_eq!(seed(zut), scry(GOPLS_SCRY));
    }

    #[test]
    fn layered_below_scry_files_and_named_in_sources() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".zut")).unwrap();
        std::fs::create_dir_all(root.join(".pi")).unwrap();
        std::fs::write(root.join(".pi/lsp.json"), r#"{"gopls": {"args": ["-pi"]}}"#).unwrap();
        std::fs::write(
            root.join(".zut/lsp.json"),
            r#"{"gopls": {"args": ["-zut"]}}"#,
        )
        .unwrap();
        std::fs::write(
            root.join("lsp.json"),
            r#"{"servers": {"clangd": {"args": ["--seed"]}, "gopls": {"args": ["-lsp"]}}}"#,
        )
        .unwrap();
        // Not JSON: skipped with a warning, never fatal.
        std::fs::write(root.join(".omp/lsp.json").tap_dir(), "{ nope").unwrap();
        std::fs::write(
            root.join(".scry.json"),
            r#"{"servers": {"clangd": {"args": ["--scry"]}}}"#,
        )
        .unwrap();
        // Trusted: the seeds choose args, which an untrusted workspace ignores.
        let c =
            crate::config::load_with(root, &|_| None, crate::trust::TrustPolicy::Trusted).unwrap();
        assert_eq!(c.server("clangd").unwrap().args, ["--scry"]);
        assert_eq!(c.server("gopls").unwrap().args, ["-zut"]);
        let names: Vec<String> = c
            .sources
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [".pi/lsp.json", "lsp.json", ".zut/lsp.json", ".scry.json"]
        );
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(
            c.warnings[0].contains(".omp/lsp.json: not used"),
            "{:?}",
            c.warnings
        );
    }

    #[test]
    fn a_seed_scry_would_refuse_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join(".lsp.json"),
            r#"{"providers": ["no-such-server"]}"#,
        )
        .unwrap();
        let c = crate::config::load_with_env(root, &|_| None).unwrap();
        assert!(c.sources.is_empty());
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(c.warnings[0].contains("no-such-server"), "{:?}", c.warnings);
    }

    trait TapDir {
        fn tap_dir(self) -> Self;
    }
    impl TapDir for PathBuf {
        /// Create the parent directory, return the path.
        fn tap_dir(self) -> Self {
            std::fs::create_dir_all(self.parent().unwrap()).unwrap();
            self
        }
    }
}
