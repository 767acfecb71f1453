//! The first-run commands of the `scry` binary: `completions`, `doctor`,
//! and the terminal-only progress line.

use std::process::Command;

fn scry() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scry"));
    c.env_remove("SCRY_LOG");
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
    let opt = complete("scry refs --time", 2);
    assert_eq!(opt.trim(), "--timeout-ms");
}

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
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace(&root.display().to_string(), "$WS")
        .replace(&bin.display().to_string(), "$BIN");
    insta::assert_snapshot!("doctor_with_servers_missing", text);
}
