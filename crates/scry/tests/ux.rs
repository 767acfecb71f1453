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
