//! Layering: applying one configuration layer's JSON onto what the layers
//! below gave ([`Builder`]) — servers merged deeply by id (new ones placed
//! first), the liberal key and value forms normalised, limits and `index`
//! checked, what an untrusted project layer may not choose left out
//! ([`crate::trust::restrict_server`]) — and the resolved [`Config`] at the
//! end. The rules are those of the module docs of [`crate::config`].

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Config, ConfigError, IndexConfig, Limits, RemoteHeader, RemoteIndex};
use crate::catalog::{self, ServerSpec};
use crate::jsonc::strip_jsonc;
use crate::keys::{canon, server_key};
use crate::trust::{self, TrustState};
use scry_model::limits;

struct Entry {
    id: String,
    value: Value,
    spec: ServerSpec,
}

pub(super) struct Builder {
    entries: Vec<Entry>,
    /// Every id ever defined (for alternativeTo checks).
    known: HashSet<String>,
    named: HashSet<String>,
    auto_detect: bool,
    limits: Limits,
    sources: Vec<PathBuf>,
    pub(super) warnings: Vec<String>,
    /// The layers being applied are project layers.
    pub(super) project: bool,
    /// ... and not trusted: what chooses what runs is ignored.
    pub(super) untrusted: bool,
    /// `trustedRoots` of the user layer.
    pub(super) trusted_roots: Vec<String>,
    /// What untrusted layers asked for and was ignored.
    pub(super) ignored: Vec<(PathBuf, String)>,
    /// `"index"` so far.
    index: IndexConfig,
}

fn deep_merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(bv) => deep_merge(bv, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) => *b = o,
    }
}

fn split_list(s: &str, commas: bool) -> Value {
    Value::Array(
        s.split(|c: char| c.is_whitespace() || (commas && c == ','))
            .filter(|p| !p.is_empty())
            .map(|p| Value::String(p.to_string()))
            .collect(),
    )
}

impl Builder {
    pub(super) fn new() -> Self {
        let entries: Vec<Entry> = catalog::builtins()
            .into_iter()
            .map(|spec| Entry {
                id: spec.id.clone(),
                value: serde_json::to_value(&spec).expect("ServerSpec serialises"),
                spec,
            })
            .collect();
        Builder {
            known: entries.iter().map(|e| e.id.clone()).collect(),
            entries,
            named: HashSet::new(),
            auto_detect: true,
            limits: Limits::default(),
            sources: Vec::new(),
            warnings: Vec::new(),
            project: false,
            untrusted: false,
            trusted_roots: Vec::new(),
            ignored: Vec::new(),
            index: IndexConfig::default(),
        }
    }

    pub(super) fn apply(&mut self, path: &Path, text: &str) -> Result<(), ConfigError> {
        self.sources.push(path.to_path_buf());
        let cleaned = strip_jsonc(text);
        if cleaned.trim().is_empty() {
            return Ok(());
        }
        let root: Value = serde_json::from_str(&cleaned).map_err(|e| {
            let msg = e.to_string();
            let message = match msg.rfind(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            };
            ConfigError::Parse {
                path: path.to_path_buf(),
                line: e.line(),
                column: e.column(),
                message,
            }
        })?;
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let Value::Object(top) = root else {
            return Err(invalid("the top level must be a JSON object".into()));
        };
        let mut insert_at = 0;
        for (key, value) in top {
            match canon(&key).as_str() {
                "servers" | "lspservers" => {
                    self.apply_servers(path, &key, value, false, &mut insert_at)?
                }
                "linters" => self.apply_servers(path, &key, value, true, &mut insert_at)?,
                "autodetect" => match value {
                    Value::Bool(b) => self.auto_detect = b,
                    other => {
                        return Err(invalid(format!(
                            "\"{key}\" must be true or false, not {other}"
                        )));
                    }
                },
                "limits" => self.apply_limits(path, value)?,
                "index" => self.apply_index(path, value)?,
                "trustedroots" => self.apply_trusted_roots(path, &key, value)?,
                "schema" | "comment" => {}
                _ => self
                    .warnings
                    .push(format!("{}: unknown key \"{key}\" ignored", path.display())),
            }
        }
        Ok(())
    }

    /// `trustedRoots`: a list of directories, honoured in the user layer
    /// only (a project cannot trust itself).
    fn apply_trusted_roots(
        &mut self,
        path: &Path,
        key: &str,
        value: Value,
    ) -> Result<(), ConfigError> {
        if self.project {
            self.warnings.push(format!(
                "{}: \"{key}\" is only read from the user configuration; ignored",
                path.display()
            ));
            return Ok(());
        }
        let roots = match value {
            Value::String(s) => vec![s],
            Value::Array(items) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    other => Err(other),
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|other| ConfigError::Invalid {
                    path: path.to_path_buf(),
                    message: format!("\"{key}\" must list directories, not {other}"),
                })?,
            other => {
                return Err(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    message: format!(
                        "\"{key}\" must be an array of directories, not {}",
                        type_name(&other)
                    ),
                });
            }
        };
        self.trusted_roots.extend(roots);
        Ok(())
    }

    /// `"index": {"path": "build/index.scip", "refresh": true}`; a path
    /// from an untrusted project layer is ignored and recorded.
    fn apply_index(&mut self, path: &Path, value: Value) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let Value::Object(map) = value else {
            return Err(invalid(format!(
                "\"index\" must be an object, not {}",
                type_name(&value)
            )));
        };
        for (key, v) in map {
            match (canon(&key).as_str(), v) {
                ("path" | "scip" | "file", Value::String(p)) if !p.trim().is_empty() => {
                    if self.untrusted {
                        self.ignored
                            .push((path.to_path_buf(), format!("index.path \"{p}\"")));
                    } else {
                        self.index.path = Some((PathBuf::from(p), path.to_path_buf()));
                    }
                }
                ("path" | "scip" | "file", Value::Null) => self.index.path = None,
                ("refresh", Value::Bool(b)) => self.index.refresh = b,
                ("remote", Value::Null) => self.index.remote = None,
                ("remote", v) => {
                    let remote = remote(v).map_err(|m| invalid(format!("\"index.remote\" {m}")))?;
                    if self.untrusted {
                        self.ignored.push((
                            path.to_path_buf(),
                            format!("index.remote \"{}\"", remote.shown()),
                        ));
                    } else {
                        self.index.remote = Some((remote, path.to_path_buf()));
                    }
                }
                ("path" | "scip" | "file" | "refresh", other) => {
                    return Err(invalid(format!(
                        "\"index.{key}\" must be {}, not {other}",
                        if canon(&key) == "refresh" {
                            "true or false"
                        } else {
                            "a path to an index.scip"
                        }
                    )));
                }
                _ => self.warnings.push(format!(
                    "{}: unknown key \"index.{key}\" ignored",
                    path.display()
                )),
            }
        }
        Ok(())
    }

    fn apply_servers(
        &mut self,
        path: &Path,
        key: &str,
        value: Value,
        linters: bool,
        insert_at: &mut usize,
    ) -> Result<(), ConfigError> {
        match value {
            Value::Object(map) => {
                for (id, entry) in map {
                    self.apply_server(path, &id, entry, linters, insert_at)?;
                }
            }
            Value::Array(items) => {
                for (i, item) in items.into_iter().enumerate() {
                    let id = item.get("id").and_then(Value::as_str).map(str::to_string);
                    let Some(id) = id else {
                        return Err(ConfigError::Invalid {
                            path: path.to_path_buf(),
                            message: format!("\"{key}\"[{i}] needs a string \"id\""),
                        });
                    };
                    self.apply_server(path, &id, item, linters, insert_at)?;
                }
            }
            Value::Null => {}
            other => {
                return Err(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    message: format!(
                        "\"{key}\" must be an object of servers by id, not {}",
                        type_name(&other)
                    ),
                });
            }
        }
        Ok(())
    }

    fn apply_server(
        &mut self,
        path: &Path,
        id: &str,
        entry: Value,
        linters: bool,
        insert_at: &mut usize,
    ) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        if id.trim().is_empty() {
            return Err(invalid("a server has an empty id".into()));
        }
        let mut obj = match entry {
            Value::Object(o) => self.normalise_server(path, id, o)?,
            Value::Bool(enabled) => Map::from_iter([("disabled".into(), Value::Bool(!enabled))]),
            Value::Null => Map::from_iter([("disabled".into(), Value::Bool(true))]),
            other => {
                return Err(invalid(format!(
                    "server \"{id}\" must be an object, not {}",
                    type_name(&other)
                )));
            }
        };
        if self.untrusted {
            let is_new = !self.entries.iter().any(|e| e.id == id);
            if !trust::restrict_server(path, id, &mut obj, is_new, &mut self.ignored) {
                return Ok(());
            }
        }
        self.named.insert(id.to_string());
        let pos = self.entries.iter().position(|e| e.id == id);
        let index = match pos {
            Some(i) => {
                deep_merge(&mut self.entries[i].value, Value::Object(obj));
                i
            }
            None => {
                let has_command = obj
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| !c.trim().is_empty());
                if !has_command {
                    return Err(invalid(format!(
                        "server \"{id}\" is not a known server and has no \"command\" \
                         (to override a built-in use its id: {})",
                        catalog::builtins()
                            .iter()
                            .map(|s| s.id.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                if linters && !obj.contains_key("isLinter") {
                    obj.insert("isLinter".into(), Value::Bool(true));
                }
                if !obj.contains_key("kind")
                    && (obj.contains_key("parser") || obj.contains_key("mode"))
                {
                    obj.insert("kind".into(), Value::String("cli".into()));
                }
                obj.insert("id".into(), Value::String(id.to_string()));
                self.entries.insert(
                    *insert_at,
                    Entry {
                        id: id.to_string(),
                        value: Value::Object(obj),
                        spec: ServerSpec::default(),
                    },
                );
                self.known.insert(id.to_string());
                *insert_at += 1;
                *insert_at - 1
            }
        };
        let entry = &mut self.entries[index];
        let spec: ServerSpec = serde_json::from_value(entry.value.clone())
            .map_err(|e| invalid(format!("server \"{id}\": {e}")))?;
        if spec.command.trim().is_empty() {
            return Err(invalid(format!("server \"{id}\" has an empty \"command\"")));
        }
        if let Some(p) = &spec.startup_log
            && let Err(e) = regex::Regex::new(p)
        {
            return Err(invalid(format!(
                "server \"{id}\": \"startupLog\" is not a regular expression: {e}"
            )));
        }
        entry.spec = spec;
        Ok(())
    }

    /// Canonical key names and the liberal value forms (see module docs).
    fn normalise_server(
        &mut self,
        path: &Path,
        id: &str,
        obj: Map<String, Value>,
    ) -> Result<Map<String, Value>, ConfigError> {
        let mut out = Map::new();
        let mut extra_args: Option<Vec<Value>> = None;
        for (key, value) in obj {
            let Some(k) = server_key(&key) else {
                self.warnings.push(format!(
                    "{}: server \"{id}\": unknown key \"{key}\" ignored",
                    path.display()
                ));
                continue;
            };
            match (k, value) {
                ("id", v) => {
                    if v.as_str() != Some(id) {
                        self.warnings.push(format!(
                            "{}: server \"{id}\": \"id\" {v} ignored (the key names the server)",
                            path.display()
                        ));
                    }
                }
                ("enabled", Value::Bool(b)) => {
                    out.insert("disabled".into(), Value::Bool(!b));
                }
                ("command", Value::Array(mut parts)) => {
                    if parts.is_empty() {
                        continue;
                    }
                    let first = parts.remove(0);
                    out.insert("command".into(), first);
                    extra_args = Some(parts);
                }
                ("args", Value::String(s)) => {
                    out.insert("args".into(), split_list(&s, false));
                }
                ("fileTypes" | "rootMarkers" | "languages", Value::String(s)) => {
                    out.insert(k.into(), split_list(&s, true));
                }
                (k, v) => {
                    out.insert(k.into(), v);
                }
            }
        }
        if let Some(mut parts) = extra_args {
            if let Some(Value::Array(args)) = out.remove("args") {
                parts.extend(args);
            }
            out.insert("args".into(), Value::Array(parts));
        }
        if let Some(Value::Array(fts)) = out.get_mut("fileTypes") {
            for ft in fts.iter_mut() {
                if let Value::String(s) = ft {
                    let t = s.trim();
                    let t = t.strip_prefix('*').unwrap_or(t);
                    let t = t.strip_prefix('.').unwrap_or(t);
                    *s = t.to_string();
                }
            }
        }
        Ok(out)
    }

    fn apply_limits(&mut self, path: &Path, value: Value) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let Value::Object(map) = value else {
            return Err(invalid(format!(
                "\"limits\" must be an object, not {}",
                type_name(&value)
            )));
        };
        for (key, v) in map {
            let slot = match canon(&key).as_str() {
                "maxlocations" => 0,
                "maxchars" => 1,
                "timeoutms" | "timeout" => 2,
                "maxopendocuments" => 3,
                "maxdiagnostics" => 4,
                "diagnosticsdeltams" => 5,
                "serveridlems" => 6,
                "maxservers" => 7,
                "maxfilebytes" => 8,
                "servermemorymib" => 9,
                "memorybudgetmib" => 10,
                "memorycheckms" => 11,
                "indexrefreshidlems" => 12,
                "maxwatcheddirs" => 13,
                "earlyanswerms" => 14,
                _ => {
                    self.warnings.push(format!(
                        "{}: unknown key \"limits.{key}\" ignored",
                        path.display()
                    ));
                    continue;
                }
            };
            let n = v
                .as_u64()
                .or_else(|| {
                    v.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                        .map(|f| f as u64)
                })
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    invalid(format!(
                        "\"limits.{key}\" must be a positive integer, not {v}"
                    ))
                })?;
            let size = usize::try_from(n).unwrap_or(usize::MAX);
            match slot {
                0 => self.limits.max_locations = size,
                1 => self.limits.max_chars = size,
                2 => self.limits.timeout_ms = n,
                3 => self.limits.max_open_documents = size,
                4 => self.limits.max_diagnostics = size,
                5 => self.limits.diagnostics_delta_ms = n,
                6 => self.limits.server_idle_ms = n,
                7 => self.limits.max_servers = size,
                8 => self.limits.max_file_bytes = n,
                9 => self.limits.server_memory_mib = n,
                10 => self.limits.memory_budget_mib = n,
                11 => self.limits.memory_check_ms = n,
                12 => self.limits.index_refresh_idle_ms = n,
                13 => self.limits.max_watched_dirs = size,
                _ => self.limits.early_answer_ms = n,
            }
        }
        Ok(())
    }

    pub(super) fn finish(mut self) -> Config {
        if !self.auto_detect {
            let named = &self.named;
            self.entries.retain(|e| named.contains(&e.id));
        }
        let mut warnings = self.warnings;
        for e in &self.entries {
            let s = &e.spec;
            if s.file_types.is_empty() && !s.disabled {
                warnings.push(format!(
                    "server \"{}\" has no fileTypes and will never be used",
                    s.id
                ));
            }
            if let Some(p) = &s.alternative_to
                && !self.known.contains(p)
            {
                warnings.push(format!(
                    "server \"{}\" is an alternative to unknown server \"{p}\"",
                    s.id
                ));
            }
        }
        Config {
            servers: self.entries.into_iter().map(|e| e.spec).collect(),
            limits: self.limits,
            sources: self.sources,
            warnings,
            trust: TrustState::default(),
            index: self.index,
        }
    }
}

/// `"remote": "https://…/{commit}.scip"` or `{"url": …, "header": {"name":
/// …, "env": …}, "stallMs": …, "ancestors": …, "maxBytes": …}`, checked: the URL holds
/// `{commit}` and is https, http or file; a header names an environment
/// variable, never a value.
fn remote(v: Value) -> Result<RemoteIndex, String> {
    let mut r = RemoteIndex {
        url: String::new(),
        header: None,
        stall_ms: limits::REMOTE_INDEX_STALL_MS,
        ancestors: limits::MAX_REMOTE_INDEX_ANCESTORS,
        max_bytes: limits::MAX_REMOTE_INDEX_BYTES,
    };
    let map = match v {
        Value::String(url) => Map::from_iter([("url".to_string(), Value::String(url))]),
        Value::Object(m) => m,
        other => {
            return Err(format!(
                "must be a URL or an object, not {}",
                type_name(&other)
            ));
        }
    };
    for (key, v) in map {
        match (canon(&key).as_str(), v) {
            ("url", Value::String(u)) => r.url = u.trim().to_string(),
            ("header", Value::Object(h)) => {
                let field = |k: &str| match h.iter().find(|(hk, _)| canon(hk) == k) {
                    Some((_, Value::String(s))) if !s.trim().is_empty() => Ok(s.trim().to_string()),
                    _ => Err(format!("\"header\" needs \"{k}\" (a string)")),
                };
                let (name, env) = (field("name")?, field("env")?);
                if let Some((k, _)) = h
                    .iter()
                    .find(|(k, _)| !matches!(canon(k).as_str(), "name" | "env"))
                {
                    return Err(format!(
                        "\"header\" takes \"name\" and \"env\" (the environment variable holding its value), not \"{k}\""
                    ));
                }
                if !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
                {
                    return Err(format!("\"header.name\" \"{name}\" is not a header name"));
                }
                r.header = Some(RemoteHeader { name, env });
            }
            ("header", Value::Null) => r.header = None,
            ("stallms", Value::Number(n)) if n.as_u64().is_some_and(|n| n > 0) => {
                r.stall_ms = n.as_u64().unwrap_or(limits::REMOTE_INDEX_STALL_MS)
            }
            ("ancestors", Value::Number(n)) if n.as_u64().is_some() => {
                r.ancestors =
                    n.as_u64()
                        .unwrap_or(0)
                        .min(limits::MAX_REMOTE_INDEX_ANCESTORS as u64) as u32
            }
            ("maxbytes", Value::Number(n)) if n.as_u64().is_some_and(|n| n > 0) => {
                r.max_bytes = n.as_u64().unwrap_or(0).min(limits::MAX_REMOTE_INDEX_BYTES)
            }
            (k, other) => {
                return Err(format!(
                    "has \"{key}\" {}",
                    match k {
                        "url" | "header" | "stallms" | "ancestors" | "maxbytes" =>
                            format!("of the wrong type ({other})"),
                        _ => "(an unknown key)".to_string(),
                    }
                ));
            }
        }
    }
    let scheme = r.url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("https" | "http" | "file")) {
        return Err(format!(
            "\"url\" \"{}\" must start with https://, http:// or file://",
            r.url
        ));
    }
    if !r.url.contains("{commit}") {
        return Err(format!(
            "\"url\" \"{}\" must hold {{commit}} (the commit's full hash)",
            r.url
        ));
    }
    Ok(r)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
