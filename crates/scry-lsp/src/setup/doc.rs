//! One client configuration file, parsed for editing in its own format:
//! JSON and JSONC through jsonc-parser's concrete syntax tree, TOML through
//! toml_edit. Values go in and out as `serde_json::Value` at a key path
//! (`["mcpServers", "scry"]`), so the callers know no format.
//!
//! Invariants: what is not edited stays as it was, byte for byte: other
//! keys, their order, comments, blank lines, indentation. Strict JSON is
//! parsed strictly (no comments, no trailing commas): a file the client
//! itself could not read is refused, not "repaired". The top of the file
//! must be an object (an empty file counts as an empty one), and every key
//! on the way to an edited value must hold an object: a path through
//! anything else is an error, never overwritten.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

use super::clients::Format;

pub enum Doc {
    Json(CstRootNode),
    Toml(toml_edit::DocumentMut),
}

impl Doc {
    /// Parse `text` as `format`; the error says what is wrong and where.
    pub fn parse(text: &str, format: Format) -> Result<Doc, String> {
        match format {
            Format::Json | Format::Jsonc => {
                let loose = format == Format::Jsonc;
                // The tree keeps comments whatever the options say: strict
                // JSON is checked by serde_json first.
                if !loose && !text.trim().is_empty() {
                    serde_json::from_str::<Value>(text).map_err(|e| e.to_string())?;
                }
                let opts = ParseOptions {
                    allow_comments: loose,
                    allow_trailing_commas: loose,
                    allow_loose_object_property_names: false,
                    allow_missing_commas: false,
                    allow_single_quoted_strings: false,
                    allow_hexadecimal_numbers: false,
                    allow_unary_plus_numbers: false,
                    ..Default::default()
                };
                let root = CstRootNode::parse(text, &opts).map_err(|e| e.to_string())?;
                match root.value() {
                    None => {}
                    Some(v) if v.as_object().is_some() => {}
                    Some(_) => return Err("the top of the file is not an object".into()),
                }
                Ok(Doc::Json(root))
            }
            Format::Toml => text
                .parse::<toml_edit::DocumentMut>()
                .map(Doc::Toml)
                .map_err(|e| e.to_string().trim_end().to_string()),
        }
    }

    /// The value at `path`, if there is one.
    pub fn get(&self, path: &[&str]) -> Option<Value> {
        let (last, parents) = path.split_last()?;
        match self {
            Doc::Json(root) => {
                let obj = json_walk(root.object_value()?, parents, false).ok()??;
                obj.get(last)?.value()?.to_serde_value()
            }
            Doc::Toml(doc) => {
                let table = toml_walk_ref(doc.as_table(), parents)?;
                table.get(last).map(toml_to_json)
            }
        }
    }

    /// Put `value` at `path`, making the objects on the way.
    pub fn set(&mut self, path: &[&str], value: &Value) -> Result<(), String> {
        let (last, parents) = path.split_last().expect("a key path");
        match self {
            Doc::Json(root) => {
                if root.value().is_none() {
                    root.set_value(CstInputValue::Object(Vec::new()));
                }
                let top = root.object_value().ok_or("the top is not an object")?;
                let obj = json_walk(top, parents, true)?.expect("made on the way");
                match obj.get(last) {
                    Some(prop) => prop.set_value(to_input(value)),
                    None => {
                        obj.append(last, to_input(value));
                    }
                }
                Ok(())
            }
            Doc::Toml(doc) => {
                let table = toml_walk_mut(doc.as_table_mut(), parents)?;
                table.insert(last, toml_item(value));
                Ok(())
            }
        }
    }

    /// Take the value at `path` out; whether there was one.
    pub fn remove(&mut self, path: &[&str]) -> Result<bool, String> {
        let Some((last, parents)) = path.split_last() else {
            return Ok(false);
        };
        match self {
            Doc::Json(root) => {
                let Some(top) = root.object_value() else {
                    return Ok(false);
                };
                let Some(obj) = json_walk(top, parents, false)? else {
                    return Ok(false);
                };
                match obj.get(last) {
                    Some(prop) => {
                        prop.remove();
                        Ok(true)
                    }
                    None => Ok(false),
                }
            }
            Doc::Toml(doc) => Ok(toml_walk_ref(doc.as_table(), parents).is_some()
                && toml_walk_mut(doc.as_table_mut(), parents)?
                    .remove(last)
                    .is_some()),
        }
    }

    /// Remove the elements of the array at `path` that `which` picks, and
    /// append `add` (JSON files only: hooks); how many were removed.
    pub fn splice_array(
        &mut self,
        path: &[&str],
        which: &dyn Fn(&Value) -> bool,
        add: Option<&Value>,
    ) -> Result<usize, String> {
        let Doc::Json(root) = self else {
            return Err("hooks are kept in JSON files only".into());
        };
        let (last, parents) = path.split_last().expect("a key path");
        if root.value().is_none() {
            if add.is_none() {
                return Ok(0);
            }
            root.set_value(CstInputValue::Object(Vec::new()));
        }
        let top = root.object_value().ok_or("the top is not an object")?;
        let Some(obj) = json_walk(top, parents, add.is_some())? else {
            return Ok(0);
        };
        let array = match obj.get(last) {
            Some(prop) => prop
                .array_value()
                .ok_or_else(|| format!("`{}` is not an array", path.join(".")))?,
            None if add.is_some() => obj.array_value_or_set(last),
            None => return Ok(0),
        };
        let mut removed = 0;
        for element in array.elements() {
            if element.to_serde_value().is_some_and(|v| which(&v)) {
                element.remove();
                removed += 1;
            }
        }
        if let Some(v) = add {
            array.append(to_input(v));
        }
        Ok(removed)
    }

    /// Take out the containers along `path`, from the deepest up, while
    /// they are empty (after scry's own entry left them so).
    pub fn prune(&mut self, path: &[&str]) -> Result<(), String> {
        for end in (1..=path.len()).rev() {
            let empty = match self.get(&path[..end]) {
                Some(Value::Object(o)) => o.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                _ => false,
            };
            if !empty {
                break;
            }
            self.remove(&path[..end])?;
        }
        Ok(())
    }

    /// The file's text.
    pub fn text(&self) -> String {
        match self {
            Doc::Json(root) => {
                let mut s = root.to_string();
                if !s.ends_with('\n') {
                    s.push('\n');
                }
                s
            }
            Doc::Toml(doc) => doc.to_string(),
        }
    }
}

/// The object at `keys` below `obj`; made on the way with `make`, else
/// `None` when a key is missing. A key that holds something other than an
/// object is an error.
fn json_walk(mut obj: CstObject, keys: &[&str], make: bool) -> Result<Option<CstObject>, String> {
    for (i, key) in keys.iter().enumerate() {
        obj = match obj.get(key) {
            Some(prop) => prop
                .object_value()
                .ok_or_else(|| format!("`{}` is not an object", keys[..=i].join(".")))?,
            None if make => obj.object_value_or_set(key),
            None => return Ok(None),
        };
    }
    Ok(Some(obj))
}

fn toml_walk_ref<'a>(
    mut t: &'a dyn toml_edit::TableLike,
    keys: &[&str],
) -> Option<&'a dyn toml_edit::TableLike> {
    for key in keys {
        t = t.get(key)?.as_table_like()?;
    }
    Some(t)
}

fn toml_walk_mut<'a>(
    mut t: &'a mut toml_edit::Table,
    keys: &[&str],
) -> Result<&'a mut toml_edit::Table, String> {
    for (i, key) in keys.iter().enumerate() {
        let item = t.entry(key).or_insert_with(|| {
            let mut new = toml_edit::Table::new();
            new.set_implicit(true);
            toml_edit::Item::Table(new)
        });
        t = item
            .as_table_mut()
            .ok_or_else(|| format!("`{}` is not a table", keys[..=i].join(".")))?;
    }
    Ok(t)
}

fn to_input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(to_input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), to_input(v))).collect())
        }
    }
}

/// A JSON value as a TOML item: an object is a table (`[a.b]`), objects
/// inside it inline tables.
fn toml_item(v: &Value) -> toml_edit::Item {
    match v {
        Value::Object(o) => {
            let mut t = toml_edit::Table::new();
            for (k, v) in o {
                t.insert(k, toml_edit::Item::Value(toml_value(v)));
            }
            toml_edit::Item::Table(t)
        }
        other => toml_edit::Item::Value(toml_value(other)),
    }
}

fn toml_value(v: &Value) -> toml_edit::Value {
    match v {
        Value::Null => toml_edit::Value::from(""),
        Value::Bool(b) => toml_edit::Value::from(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml_edit::Value::from(i),
            None => toml_edit::Value::from(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => toml_edit::Value::from(s.as_str()),
        Value::Array(a) => toml_edit::Value::Array(a.iter().map(toml_value).collect()),
        Value::Object(o) => toml_edit::Value::InlineTable(
            o.iter().map(|(k, v)| (k.as_str(), toml_value(v))).collect(),
        ),
    }
}

fn toml_to_json(item: &toml_edit::Item) -> Value {
    match item {
        toml_edit::Item::None => Value::Null,
        toml_edit::Item::Value(v) => toml_value_to_json(v),
        toml_edit::Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_to_json(v)))
                .collect(),
        ),
        toml_edit::Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| toml_to_json(&toml_edit::Item::Table(t.clone())))
                .collect(),
        ),
    }
}

fn toml_value_to_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::from(s.value().as_str()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => Value::from(*f.value()),
        T::Boolean(b) => Value::from(*b.value()),
        T::Datetime(d) => Value::from(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(toml_value_to_json).collect()),
        T::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_value_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonc_keeps_comments_and_other_entries() {
        let text = "{\n  // mine\n  \"servers\": {\n    \"other\": { \"command\": \"x\" } // keep\n  }\n}\n";
        let mut d = Doc::parse(text, Format::Jsonc).unwrap();
        let entry = json!({"command": "/bin/scry", "args": ["mcp"]});
        d.set(&["servers", "scry"], &entry).unwrap();
        let out = d.text();
        assert!(out.contains("// mine") && out.contains("// keep"), "{out}");
        assert_eq!(d.get(&["servers", "scry"]), Some(entry));
        assert!(d.remove(&["servers", "scry"]).unwrap());
        assert_eq!(d.text(), text);
    }

    #[test]
    fn strict_json_refuses_comments() {
        assert!(Doc::parse("{ // x\n}", Format::Json).is_err());
        assert!(Doc::parse("[1]", Format::Jsonc).is_err());
        assert!(
            Doc::parse("{\"mcpServers\": 3}", Format::Json)
                .unwrap()
                .set(&["mcpServers", "scry"], &json!({}))
                .is_err()
        );
    }

    #[test]
    fn toml_round_trip() {
        let text = "# top\nmodel = \"o3\"\n\n[mcp_servers.other] # theirs\ncommand = \"x\"\n";
        let mut d = Doc::parse(text, Format::Toml).unwrap();
        let entry = json!({"command": "/bin/scry", "args": ["mcp"]});
        d.set(&["mcp_servers", "scry"], &entry).unwrap();
        let out = d.text();
        assert!(out.contains("[mcp_servers.scry]"), "{out}");
        assert!(out.contains("# theirs") && out.contains("# top"), "{out}");
        assert_eq!(d.get(&["mcp_servers", "scry"]), Some(entry));
        assert!(d.remove(&["mcp_servers", "scry"]).unwrap());
        assert_eq!(d.text(), text);
    }
}
