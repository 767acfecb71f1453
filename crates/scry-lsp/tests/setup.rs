//! `scry setup`, run as a user would: the built binary with `HOME` (and
//! `XDG_CONFIG_HOME`, `APPDATA`, `USERPROFILE`) in a temporary directory
//! and the current directory in a temporary project. For every client:
//! the file written parses in the client's format and names this binary
//! by its absolute path with `mcp`; another server and the comments
//! already there are kept; a second run changes no byte and says so; the
//! old file is backed up; `--remove` takes out scry alone. Also: `--print`
//! writes nothing, an unparseable file is refused and left as it was, an
//! unknown client is a usage error, the hooks are README.md's recipe, and
//! the listing says where scry is configured.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Json,
    Jsonc,
    Toml,
}

/// One client at one scope: where its file is (below HOME, or the
/// project's root), its format, the key of the servers' table, and a
/// file already holding another server (and a comment where allowed).
struct Case {
    client: &'static str,
    scope: &'static str,
    in_home: bool,
    file: &'static str,
    format: Format,
    servers: &'static str,
    seed: &'static str,
}

const JSON_SEED: &str = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"other-server\"\n    }\n  }\n}\n";

fn vscode_user_file() -> &'static str {
    if cfg!(windows) {
        "AppData/Roaming/Code/User/mcp.json"
    } else if cfg!(target_os = "macos") {
        "Library/Application Support/Code/User/mcp.json"
    } else {
        ".config/Code/User/mcp.json"
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            client: "claude",
            scope: "user",
            in_home: true,
            file: ".claude.json",
            format: Format::Json,
            servers: "mcpServers",
            seed: JSON_SEED,
        },
        Case {
            client: "claude",
            scope: "project",
            in_home: false,
            file: ".mcp.json",
            format: Format::Json,
            servers: "mcpServers",
            seed: JSON_SEED,
        },
        Case {
            client: "codex",
            scope: "user",
            in_home: true,
            file: ".codex/config.toml",
            format: Format::Toml,
            servers: "mcp_servers",
            seed: "# my comment\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"other-server\" # theirs\n",
        },
        Case {
            client: "codex",
            scope: "project",
            in_home: false,
            file: ".codex/config.toml",
            format: Format::Toml,
            servers: "mcp_servers",
            seed: "[mcp_servers.other]\n# my comment\ncommand = \"other-server\"\n",
        },
        Case {
            client: "cursor",
            scope: "user",
            in_home: true,
            file: ".cursor/mcp.json",
            format: Format::Jsonc,
            servers: "mcpServers",
            seed: "{\n  // my comment\n  \"mcpServers\": {\n    \"other\": { \"command\": \"other-server\" }\n  }\n}\n",
        },
        Case {
            client: "cursor",
            scope: "project",
            in_home: false,
            file: ".cursor/mcp.json",
            format: Format::Jsonc,
            servers: "mcpServers",
            seed: "{ \"mcpServers\": { \"other\": { \"command\": \"other-server\" } } } // my comment\n",
        },
        Case {
            client: "vscode",
            scope: "user",
            in_home: true,
            file: vscode_user_file(),
            format: Format::Jsonc,
            servers: "servers",
            seed: "{\n  \"servers\": {\n    /* my comment */\n    \"other\": { \"type\": \"stdio\", \"command\": \"other-server\" }\n  },\n  \"inputs\": []\n}\n",
        },
        Case {
            client: "vscode",
            scope: "project",
            in_home: false,
            file: ".vscode/mcp.json",
            format: Format::Jsonc,
            servers: "servers",
            seed: "// my comment\n{\"servers\": {\"other\": {\"command\": \"other-server\"}}}\n",
        },
        Case {
            client: "gemini",
            scope: "user",
            in_home: true,
            file: ".gemini/settings.json",
            format: Format::Jsonc,
            servers: "mcpServers",
            seed: "{\n  \"general\": { \"vimMode\": true }, // my comment\n  \"mcpServers\": {\n    \"other\": { \"command\": \"other-server\" }\n  }\n}\n",
        },
        Case {
            client: "gemini",
            scope: "project",
            in_home: false,
            file: ".gemini/settings.json",
            format: Format::Jsonc,
            servers: "mcpServers",
            seed: "{\n  // my comment\n  \"mcpServers\": { \"other\": { \"command\": \"other-server\" } }\n}\n",
        },
        Case {
            client: "opencode",
            scope: "user",
            in_home: true,
            file: ".config/opencode/opencode.jsonc",
            format: Format::Jsonc,
            servers: "mcp",
            seed: "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  // my comment\n  \"mcp\": {\n    \"other\": { \"type\": \"local\", \"command\": [\"other-server\"] }\n  }\n}\n",
        },
        Case {
            client: "opencode",
            scope: "project",
            in_home: false,
            file: "opencode.json",
            format: Format::Jsonc,
            servers: "mcp",
            seed: "{\n  \"mcp\": {\n    \"other\": { \"type\": \"local\", \"command\": [\"other-server\"] } // my comment\n  }\n}\n",
        },
        Case {
            client: "zed",
            scope: "user",
            in_home: true,
            file: ".config/zed/settings.json",
            format: Format::Jsonc,
            servers: "context_servers",
            seed: "// my comment\n{\n  \"ui_font_size\": 16,\n  \"context_servers\": {\n    \"other\": { \"command\": \"other-server\", \"args\": [] },\n  },\n}\n",
        },
        Case {
            client: "windsurf",
            scope: "user",
            in_home: true,
            file: ".codeium/windsurf/mcp_config.json",
            format: Format::Jsonc,
            servers: "mcpServers",
            seed: "{\"mcpServers\": {\"other\": {\"command\": \"other-server\"}}} // my comment\n",
        },
    ]
}

/// A temporary home and project.
struct Env {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, c: &Case) -> PathBuf {
        let base = if c.in_home {
            self.home.path()
        } else {
            self.project.path()
        };
        // As setup names it: the project's root canonical (macOS's /tmp
        // is a link).
        std::fs::canonicalize(base).unwrap().join(c.file)
    }

    /// `scry setup ARGS…`: (success, exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let home = self.home.path();
        let out = Command::new(env!("CARGO_BIN_EXE_scry"))
            .arg("setup")
            .args(args)
            .current_dir(self.project.path())
            .env("HOME", home)
            .env("USERPROFILE", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("APPDATA", home.join("AppData").join("Roaming"))
            .output()
            .expect("run scry");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(code, 0, "scry setup {args:?}: {out}{err}");
        out
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// This binary's absolute path, as setup writes it.
fn scry() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_scry"))
        .unwrap()
        .to_str()
        .unwrap()
        .to_string()
}

/// The file parsed in its format, as JSON; panics when it does not parse.
fn parsed(format: Format, text: &str) -> Value {
    match format {
        Format::Json => serde_json::from_str(text).expect("strict JSON"),
        Format::Jsonc => jsonc_parser::cst::CstRootNode::parse(text, &Default::default())
            .expect("JSONC")
            .to_serde_value()
            .expect("a value"),
        Format::Toml => toml_json(
            text.parse::<toml_edit::DocumentMut>()
                .expect("TOML")
                .as_item(),
        ),
    }
}

fn toml_json(item: &toml_edit::Item) -> Value {
    if let Some(t) = item.as_table_like() {
        return Value::Object(t.iter().map(|(k, v)| (k.into(), toml_json(v))).collect());
    }
    let v = item.as_value().expect("a value");
    if let Some(a) = v.as_array() {
        return a
            .iter()
            .map(|v| toml_json(&toml_edit::Item::Value(v.clone())))
            .collect();
    }
    v.as_str().map(Value::from).unwrap_or(Value::Null)
}

/// The command line an entry runs: `command` (a string, or OpenCode's
/// array) and `args`.
fn command_line(entry: &Value) -> Vec<String> {
    let mut words: Vec<String> = match &entry["command"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().map(|w| w.as_str().unwrap().to_string()).collect(),
        other => panic!("command is {other}"),
    };
    if let Some(args) = entry.get("args").and_then(Value::as_array) {
        words.extend(args.iter().map(|w| w.as_str().unwrap().to_string()));
    }
    words
}

#[test]
fn every_client_is_set_up_merged_idempotent_and_removed() {
    let scry = scry();
    for c in cases() {
        let env = Env::new();
        let file = env.path(&c);
        write(&file, c.seed);
        let what = format!("{} --scope {}", c.client, c.scope);

        let out = env.ok(&[c.client, "--scope", c.scope]);
        assert!(
            out.contains("added scry's MCP server entry"),
            "{what}: {out}"
        );
        let text = read(&file);
        let v = parsed(c.format, &text);
        assert_eq!(
            command_line(&v[c.servers]["scry"]),
            [scry.as_str(), "mcp"],
            "{what}: {text}"
        );
        assert!(
            v[c.servers]["other"].is_object(),
            "{what}: other entry lost: {text}"
        );
        if c.format != Format::Json {
            assert!(text.contains("my comment"), "{what}: comment lost: {text}");
        }
        let backup = format!("{}.scry-backup", file.display());
        assert_eq!(read(Path::new(&backup)), c.seed, "{what}: backup");

        // Idempotent: the same bytes, and it says so.
        let again = env.ok(&[c.client, "--scope", c.scope]);
        assert!(again.contains("already configured"), "{what}: {again}");
        assert_eq!(read(&file), text, "{what}: a second run changed the file");

        // The listing sees it.
        let list = env.ok(&[]);
        let line = list
            .lines()
            .find(|l| l.contains(&file.display().to_string()))
            .unwrap_or_else(|| panic!("{what}: not listed: {list}"));
        assert!(
            line.contains(" configured: ") && !line.contains("not configured"),
            "{what}: {line}"
        );

        // --remove: scry alone goes.
        let out = env.ok(&[c.client, "--scope", c.scope, "--remove"]);
        assert!(
            out.contains("removed scry's MCP server entry"),
            "{what}: {out}"
        );
        let text = read(&file);
        let v = parsed(c.format, &text);
        assert!(v[c.servers].get("scry").is_none(), "{what}: {text}");
        assert!(v[c.servers]["other"].is_object(), "{what}: {text}");
        if c.format != Format::Json {
            assert!(text.contains("my comment"), "{what}: comment lost: {text}");
        }
        let out = env.ok(&[c.client, "--scope", c.scope, "--remove"]);
        assert!(out.contains("not configured"), "{what}: {out}");
    }
}

#[test]
fn a_new_file_is_made_with_the_entry_alone() {
    let scry = scry();
    for c in cases() {
        let env = Env::new();
        // Without a file, OpenCode's is made as opencode.json.
        let file = PathBuf::from(env.path(&c).to_str().unwrap().trim_end_matches('c'));
        let out = env.ok(&[c.client, "--scope", c.scope]);
        assert!(out.contains("a new file"), "{}: {out}", c.client);
        let v = parsed(c.format, &read(&file));
        assert_eq!(command_line(&v[c.servers]["scry"]), [scry.as_str(), "mcp"]);
        assert!(!Path::new(&format!("{}.scry-backup", file.display())).exists());
    }
}

#[test]
fn print_writes_nothing() {
    let env = Env::new();
    let c = &cases()[4]; // cursor, user
    let file = env.path(c);
    write(&file, c.seed);
    let out = env.ok(&["cursor", "--print"]);
    assert!(out.contains("nothing written"), "{out}");
    assert!(out.contains(&scry()), "{out}");
    assert_eq!(read(&file), c.seed);
    let fresh = Env::new();
    let out = fresh.ok(&["gemini", "--print", "--hooks"]);
    assert!(out.contains("AfterTool"), "{out}");
    assert!(
        std::fs::read_dir(fresh.home.path())
            .unwrap()
            .next()
            .is_none()
    );
}

#[test]
fn an_unparseable_file_is_refused_and_left_as_it_was() {
    for (client, file, text) in [
        (
            "claude",
            ".claude.json",
            "{ // Claude's file is strict JSON\n}",
        ),
        ("gemini", ".gemini/settings.json", "{ \"mcpServers\": { \n"),
        (
            "codex",
            ".codex/config.toml",
            "[mcp_servers.other\ncommand = 1\n",
        ),
        ("cursor", ".cursor/mcp.json", "{ \"mcpServers\": [] }"),
        ("vscode", vscode_user_file(), "[]"),
    ] {
        let env = Env::new();
        let path = env.home.path().join(file);
        write(&path, text);
        let (code, out, err) = env.run(&[client]);
        assert_eq!(code, 1, "{client}: {out}{err}");
        assert!(err.contains("scry: error[SETUP_"), "{client}: {err}");
        assert!(err.contains("nothing was changed"), "{client}: {err}");
        assert_eq!(read(&path), text, "{client}");
        assert!(!Path::new(&format!("{}.scry-backup", path.display())).exists());
    }
}

#[test]
fn bad_usage_is_refused() {
    let env = Env::new();
    let (code, _, err) = env.run(&["notepad"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("error[SETUP_UNKNOWN_CLIENT]") && err.contains("claude"),
        "{err}"
    );
    let (code, _, err) = env.run(&["zed", "--scope", "project"]);
    assert_eq!(code, 2);
    assert!(err.contains("error[SETUP_NO_SUCH_SCOPE]"), "{err}");
    let (code, _, err) = env.run(&["cursor", "--hooks"]);
    assert_eq!(code, 2);
    assert!(err.contains("error[SETUP_NO_HOOKS]"), "{err}");
    let gone = env.project.path().join("gone");
    let (code, out, err) = env.run(&[
        "claude",
        "--scope",
        "project",
        "--root",
        gone.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("is not a directory"), "{err}");
    assert!(!gone.exists());
    assert!(std::fs::read_dir(env.home.path()).unwrap().next().is_none());
}

/// README.md's hook recipe (the block after the `hook-recipe` marker).
fn readme_recipe() -> Value {
    let readme = read(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../README.md"
    )));
    let at = readme.find("<!-- hook-recipe").expect("hook-recipe marker");
    let rest = &readme[at..];
    let start = rest.find("```json\n").expect("json block") + "```json\n".len();
    let end = rest[start..].find("```").expect("block end");
    serde_json::from_str(&rest[start..start + end]).expect("hook JSON")
}

#[test]
fn claude_hooks_are_the_readme_recipe_with_this_binary() {
    let env = Env::new();
    let settings = env.project.path().join(".claude/settings.json");
    let seed = "{\n  \"permissions\": { \"allow\": [\"Bash(ls)\"] },\n  \"hooks\": {\n    \"PostToolUse\": [\n      { \"matcher\": \"Write\", \"hooks\": [{ \"type\": \"command\", \"command\": \"prettier --write\" }] }\n    ]\n  }\n}\n";
    write(&settings, seed);
    let out = env.ok(&["claude", "--scope", "project", "--hooks"]);
    assert!(out.contains("edit-check hooks"), "{out}");
    let text = read(&settings);
    let v: Value = serde_json::from_str(&text).unwrap();
    let recipe = readme_recipe();
    let quoted = format!("'{}' diag", scry());
    for event in ["PreToolUse", "PostToolUse"] {
        let want = &recipe["hooks"][event][0];
        let ours = v["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["matcher"] == want["matcher"])
            .unwrap();
        assert_eq!(ours["matcher"], want["matcher"]);
        let cmd = want["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .replace("scry diag", &quoted);
        assert_eq!(ours["hooks"][0]["command"], Value::from(cmd), "{event}");
    }
    // The user's hook, the edit check and the reminder after a search.
    assert_eq!(v["hooks"]["PostToolUse"].as_array().unwrap().len(), 3);
    let reminder = v["hooks"]["PostToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["matcher"] == "Grep")
        .expect("the reminder after Grep");
    let cmd = reminder["hooks"][0]["command"].as_str().unwrap();
    let run = |pattern: &str| {
        let input = serde_json::json!({"tool_name": "Grep", "tool_input": {"pattern": pattern}});
        let out = scry_testkit::proc::run_fed(
            std::process::Command::new("sh").args(["-c", cmd]),
            input.to_string().as_bytes(),
        );
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let said: Value = serde_json::from_str(&run("total_weight")).expect("hook JSON");
    assert_eq!(said["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    let context = said["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("`total_weight`") && context.contains("references"),
        "{context}"
    );
    assert_eq!(run("fn .*weight"), "", "not one identifier: nothing said");
    assert_eq!(v["permissions"]["allow"][0], "Bash(ls)");
    // The entry itself went to .mcp.json.
    let mcp: Value = serde_json::from_str(&read(&env.project.path().join(".mcp.json"))).unwrap();
    assert_eq!(mcp["mcpServers"]["scry"]["args"][0], "mcp");

    let again = env.ok(&["claude", "--scope", "project", "--hooks"]);
    assert!(again.contains("already in"), "{again}");
    assert_eq!(read(&settings), text);

    env.ok(&["claude", "--scope", "project", "--remove"]);
    let v: Value = serde_json::from_str(&read(&settings)).unwrap();
    assert!(v["hooks"].get("PreToolUse").is_none(), "{v}");
    assert_eq!(v["hooks"]["PostToolUse"].as_array().unwrap().len(), 1);
    assert_eq!(
        v["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        "prettier --write"
    );
}

#[test]
fn gemini_entry_and_hooks_share_one_file() {
    let env = Env::new();
    let settings = env.home.path().join(".gemini/settings.json");
    write(&settings, "{\n  // my comment\n}\n");
    let out = env.ok(&["gemini", "--hooks"]);
    assert_eq!(out.matches("(backup: ").count(), 2, "{out}");
    let text = read(&settings);
    let v = parsed(Format::Jsonc, &text);
    assert!(text.contains("// my comment"));
    assert_eq!(v["hooks"]["AfterTool"][0]["matcher"], "write_file|replace");
    assert_eq!(v["hooks"]["AfterTool"][0]["hooks"][0]["timeout"], 60000);
    assert!(v["mcpServers"]["scry"].is_object());
    env.ok(&["gemini", "--remove"]);
    assert_eq!(read(&settings), "{\n  // my comment\n}\n");
}

#[cfg(unix)]
#[test]
fn a_linked_file_is_edited_where_the_link_leads() {
    let env = Env::new();
    let dotfiles = env.home.path().join("dotfiles/cursor-mcp.json");
    write(&dotfiles, "{}\n");
    let link = env.home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&dotfiles, &link).unwrap();
    let out = env.ok(&["cursor"]);
    assert!(out.contains("the link to"), "{out}");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(read(&dotfiles).contains("\"scry\""));
    // A link to nowhere is refused.
    let env = Env::new();
    let link = env.home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(env.home.path().join("gone.json"), &link).unwrap();
    let (code, _, err) = env.run(&["cursor"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("leads nowhere"), "{err}");
}

/// A private configuration file (`~/.claude.json` holds tokens) is backed
/// up private: the backup has the file's permissions.
#[cfg(unix)]
#[test]
fn a_private_file_is_backed_up_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let file = env.home.path().join(".claude.json");
    write(&file, "{\"oauthAccount\": {\"token\": \"secret\"}}\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    env.ok(&["claude"]);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    let backup = env.home.path().join(".claude.json.scry-backup");
    assert_eq!(mode(&backup), 0o600, "the backup is as private as the file");
    assert!(read(&backup).contains("secret"));
}
