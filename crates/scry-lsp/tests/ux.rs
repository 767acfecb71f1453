//! The first-run commands of the `scry` binary: `completions`, `doctor`,
//! and the terminal-only progress line.

use std::process::Command;

fn scry() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scry"));
    c.env_remove("SCRY_LOG").env("SCRY_NO_DAEMON", "1");
    c
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = scry().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        for word in ["workspace-symbols", "doctor", "timeout-ms"] {
            assert!(text.contains(word), "{shell} script lacks {word}");
        }
    }
    let out = scry().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// The bash script really completes the first word and an option.
#[test]
fn bash_completion_completes_actions() {
    let script = scry()
        .args(["completions", "bash"])
        .output()
        .unwrap()
        .stdout;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scry.bash");
    std::fs::write(&file, script).unwrap();
    let complete = |words: &str, cword: usize| -> String {
        let prog = format!(
            "source '{}'; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{words}'; \
             COMP_POINT=${{#COMP_LINE}}; _scry scry \"${{COMP_WORDS[$COMP_CWORD]}}\" \
             \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display()
        );
        let out = Command::new("bash").args(["-c", &prog]).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let first = complete("scry do", 1);
    assert_eq!(first.trim(), "doctor");
    assert_eq!(complete("scry ma", 1).trim(), "map");
    let opt = complete("scry refs --time", 2);
    assert_eq!(opt.trim(), "--timeout-ms");
}

/// Every action of the table is offered as the first word by each shell
/// that lists first words (bash, zsh, fish), and so is each alias the help
/// shows; nothing offered is unknown to `scry`.
#[test]
fn completion_offers_every_action() {
    let help = String::from_utf8(scry().arg("--help").output().unwrap().stdout).unwrap();
    let actions_in_help = help
        .split("Actions:\n")
        .nth(1)
        .and_then(|t| t.split("\n\n").next())
        .expect("the help lists the actions");
    for (shell, marker) in [
        ("bash", "opts=\""),
        ("zsh", "':action -- The action (see below):("),
        ("fish", "'__fish_is_first_arg' -f -a '"),
    ] {
        let out = scry().args(["completions", shell]).output().unwrap();
        let script = String::from_utf8(out.stdout).unwrap();
        // The first-word list: the line with the marker, after it.
        let line = script
            .lines()
            .filter_map(|l| l.split_once(marker).map(|(_, rest)| rest))
            .max_by_key(|rest| rest.len())
            .unwrap_or_else(|| panic!("{shell}: no first-word list"));
        let offered: Vec<&str> = line
            .split([' ', '"', '\'', ')'])
            .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic()))
            .collect();
        let help_words: Vec<&str> = actions_in_help
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .collect();
        for f in scry_model::action::ACTIONS {
            let name = f.name.replace('_', "-");
            assert!(offered.contains(&name.as_str()), "{shell} lacks {name}");
            for alias in f.aliases {
                let alias = alias.replace('_', "-");
                let shown = help_words.contains(&alias.as_str());
                assert_eq!(
                    offered.contains(&alias.as_str()),
                    shown,
                    "{shell}: alias {alias} offered iff the help shows it"
                );
            }
        }
        for w in &offered {
            // main.rs's SUBCOMMANDS.
            let subcommand = [
                "doctor",
                "completions",
                "mcp",
                "trust",
                "daemon",
                "index",
                "setup",
            ]
            .contains(w);
            assert!(
                subcommand || scry_model::Action::parse(w).is_some(),
                "{shell} offers {w}"
            );
        }
    }
}

#[cfg(unix)]
fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[cfg(unix)]
fn write_exe(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(path, text);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `scry doctor` on a machine with only rust-analyzer and npm on `PATH`
/// (fakes), a project-local typescript-language-server and a C project
/// without compile_commands.json; a zut `lsp.json` is read.
#[cfg(unix)]
#[test]
fn doctor_with_servers_missing() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    let ran = home.path().join("ran");
    write_exe(
        &bin.join("rust-analyzer"),
        "#!/bin/sh\necho \"rust-analyzer 1.2.3 (test)\"\n",
    );
    write_exe(&bin.join("npm"), "#!/bin/sh\nexit 0\n");
    // A proxy whose component is missing (like rustup's): found, but broken.
    write_exe(
        &bin.join("yaml-language-server"),
        "#!/bin/sh\necho \"error: no such component\" >&2\nexit 1\n",
    );
    // Found first (project-local), never run: it would leave a trace.
    write_exe(
        &ws.path()
            .join("node_modules/.bin/typescript-language-server"),
        &format!("#!/bin/sh\ntouch '{}'\necho 9.9.9\n", ran.display()),
    );
    write(&ws.path().join("Cargo.toml"), "[package]\nname = \"x\"\n");
    write(&ws.path().join("src/main.rs"), "fn main() {}\n");
    write(&ws.path().join("app/main.py"), "print(1)\n");
    write(&ws.path().join("web/index.ts"), "export {}\n");
    write(&ws.path().join("native/CMakeLists.txt"), "project(x)\n");
    write(
        &ws.path().join("native/a.c"),
        "int main(void) { return 0; }\n",
    );
    write(&ws.path().join("native/a.h"), "\n");
    // Another agent's configuration, read below scry's own files.
    write(
        &ws.path().join(".zut/lsp.json"),
        r#"{"lspServers": {"gopls": {"fileTypes": [".go"]}}, "lsp_enabled": true}"#,
    );
    let out = scry()
        .args(["doctor", "--root"])
        .arg(ws.path())
        .env("PATH", &bin)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env_remove("SCRY_CONFIG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!ran.exists(), "a project-local binary was run");
    let root = scry_base::paths::canonical(ws.path()).unwrap();
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace(&root.display().to_string(), "$WS")
        .replace(&bin.display().to_string(), "$BIN");
    insta::assert_snapshot!("doctor_with_servers_missing", text);
}

/// The README's Claude Code hook commands (the JSON block after the
/// `hook-recipe` marker): (PreToolUse command, PostToolUse command).
fn readme_hooks() -> (String, String) {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let at = readme.find("<!-- hook-recipe").expect("hook-recipe marker");
    let rest = &readme[at..];
    let start = rest.find("```json\n").expect("json block") + "```json\n".len();
    let end = rest[start..].find("```").expect("block end");
    let v: serde_json::Value = serde_json::from_str(&rest[start..start + end]).expect("hook JSON");
    let cmd = |event: &str| {
        v["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_else(|| panic!("{event} command"))
            .to_string()
    };
    (cmd("PreToolUse"), cmd("PostToolUse"))
}

/// `diag --changes` with pyright, through the README's hook commands and
/// directly: a type error introduced (new), fixed (resolved), introduced
/// again on another line (new again); an unrelated old error is never new.
#[test]
fn diagnostics_changes_after_the_agents_own_edits() {
    if !scry_testkit::require_on_path(
        "pyright-langserver",
        "diagnostics_changes_after_the_agents_own_edits",
    ) {
        return;
    }
    let ws = scry_testkit::temp_copy("python");
    let home = tempfile::tempdir().unwrap();
    let file = ws.path().join("inventory.py");
    let original = std::fs::read_to_string(&file).unwrap();
    // An old, unrelated error, there before any check.
    let with_old = format!("{original}\n\nold_bad: str = 1\n");
    std::fs::write(&file, &with_old).unwrap();

    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_scry"))
        .parent()
        .unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin_dir.to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let envs = |c: &mut Command| {
        c.current_dir(ws.path())
            .env("PATH", &path)
            .env("SCRY_STATE_DIR", home.path().join("state"))
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("SCRY_LOG_DIR", home.path().join("logs"))
            .env("CLAUDE_PROJECT_DIR", ws.path())
            .env("SCRY_NO_DAEMON", "1")
            .env_remove("SCRY_CONFIG")
            .env_remove("SCRY_LOG");
    };
    let (pre, post) = readme_hooks();
    let hook_on = |cmd: &str, file: &std::path::Path| -> (i32, String, String) {
        let mut c = Command::new("sh");
        c.args(["-c", cmd]);
        envs(&mut c);
        let input = serde_json::json!({
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": file, "old_string": "x", "new_string": "y"},
            "cwd": ws.path(),
        });
        let out = scry_testkit::proc::run_fed(&mut c, input.to_string().as_bytes());
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let hook = |cmd: &str| hook_on(cmd, &file);
    let diag = || -> String {
        let mut c = scry();
        c.args(["diag", "--changes", "inventory.py"]);
        envs(&mut c);
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };

    // Before the edit: the baseline (the old error included), silently.
    let (code, out, err) = hook(&pre);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    // The edit introduces a type error above the old one (shifting it).
    let edited = with_old.replacen(
        "def total_weight",
        "bad: int = \"a\"\n\n\ndef total_weight",
        1,
    );
    assert_ne!(edited, with_old);
    std::fs::write(&file, &edited).unwrap();
    let (code, out, err) = hook(&post);
    assert_eq!(code, 2, "stdout: {out}\nstderr: {err}");
    assert!(
        err.starts_with("1 error new in 1 file since the previous check"),
        "{err}"
    );
    assert!(err.contains("bad: int = \"a\""), "{err}");
    assert!(
        !err.contains("old_bad"),
        "an old error reported as new: {err}"
    );
    // Nothing new since: the hook is silent.
    let (code, out, err) = hook(&post);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
    // Fixed: resolved.
    std::fs::write(&file, &with_old).unwrap();
    let text = diag();
    assert!(
        text.starts_with("No new problems in inventory.py since the previous check (1 resolved"),
        "{text}"
    );
    assert!(!text.contains("old_bad"), "{text}");
    // Introduced again, on another line: new again.
    std::fs::write(&file, format!("{with_old}bad: int = \"a\"\n")).unwrap();
    let text = diag();
    assert!(text.starts_with("1 error new in 1 file"), "{text}");
    assert!(text.contains("bad: int = \"a\""), "{text}");
    assert!(
        !text.contains("old_bad"),
        "an old error reported as new: {text}"
    );
    // The first edit of a file scry has never checked (a Write of a new
    // file: the PreToolUse hook skips it): its errors are all new, never
    // taken silently as the baseline.
    let fresh = ws.path().join("fresh.py");
    std::fs::write(&fresh, "count: int = \"none\"\n").unwrap();
    let (code, out, err) = hook_on(&post, &fresh);
    assert_eq!(code, 2, "stdout: {out}\nstderr: {err}");
    assert!(
        err.starts_with("1 error in 1 file, all new: first check of fresh.py"),
        "{err}"
    );
    assert!(err.contains("count: int = \"none\""), "{err}");
    // Then only changes: silent again.
    let (code, out, err) = hook_on(&post, &fresh);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
}

/// The progress line: drawn on a pseudo-terminal while rust-analyzer starts
/// and indexes, never when stderr is piped, nor with `--quiet`.
#[test]
fn progress_line_only_on_a_terminal() {
    let test = "progress_line_only_on_a_terminal";
    if !scry_testkit::require_on_path("rust-analyzer", test)
        || !scry_testkit::require_on_path("script", test)
    {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let fresh = || scry_testkit::temp_copy("rust");
    let envs = |c: &mut Command| {
        c.env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("SCRY_LOG_DIR", home.path().join("logs"))
            .env("SCRY_STATE_DIR", home.path().join("state"))
            .env("TERM", "xterm")
            .env("SCRY_NO_DAEMON", "1")
            .env_remove("SCRY_CONFIG")
            .env_remove("SCRY_LOG");
    };
    let scry_bin = env!("CARGO_BIN_EXE_scry");
    let on_pty = |extra: &str| -> String {
        let ws = fresh();
        let mut c = Command::new("script");
        c.args([
            "-q",
            "-e",
            "-c",
            &format!("'{scry_bin}' refs src/inventory.rs total_weight {extra}"),
            "/dev/null",
        ])
        .current_dir(ws.path())
        .stdin(std::process::Stdio::null());
        envs(&mut c);
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // A budget given: the wait for rust-analyzer (and its progress line),
    // not a lower answer after 2 s.
    let tty = on_pty("--timeout-ms 90000");
    assert!(
        tty.contains("rust-analyzer is "),
        "no progress line on the pty: {tty}"
    );
    assert!(tty.contains('…'), "{tty}");
    assert!(tty.contains("references to `total_weight`"), "{tty}");
    let quiet = on_pty("--quiet --timeout-ms 90000");
    assert!(
        !quiet.contains("rust-analyzer is "),
        "--quiet drew progress: {quiet}"
    );
    assert!(quiet.contains("references to `total_weight`"), "{quiet}");
    // Piped: stderr carries nothing, stdout only the answer.
    let ws = fresh();
    let mut c = scry();
    c.args([
        "refs",
        "src/inventory.rs",
        "total_weight",
        "--timeout-ms",
        "90000",
    ])
    .current_dir(ws.path());
    envs(&mut c);
    let out = c.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("rust-analyzer is "));
}
