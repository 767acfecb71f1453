//! The command line's flag surface: every command that has a workspace root
//! takes `--root DIR`, every command that has a budget takes
//! `--timeout-ms N`, spelled the same everywhere, in the help and in use —
//! `scry index` (the budget of its indexers; the old positional roots and
//! `--timeout SECS` still work), `scry trust`, `scry daemon status|stop`,
//! `scry doctor`, `scry mcp` and the actions. Each is run from a directory
//! that is not the workspace, so only `--root` can have named it.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::process::scry_in;

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn help(words: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_scry"))
        .args(words)
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{words:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_command_offers_root_and_timeout_ms_where_it_has_them() {
    // (command, has a root, has a budget)
    let commands: &[(&[&str], bool, bool)] = &[
        (&[], true, true),
        (&["index"], true, true),
        (&["doctor"], true, false),
        (&["trust"], true, false),
        (&["mcp"], true, false),
        (&["daemon"], true, false),
        (&["daemon", "status"], true, false),
        (&["daemon", "stop"], false, true),
        (&["setup"], true, false),
    ];
    for (words, root, budget) in commands {
        let h = help(words);
        assert_eq!(h.contains("--root <"), *root, "{words:?} --root:\n{h}");
        assert_eq!(
            h.contains("--timeout-ms <"),
            *budget,
            "{words:?} --timeout-ms:\n{h}"
        );
        assert!(
            !h.contains("--timeout <"),
            "{words:?} shows the old --timeout:\n{h}"
        );
    }
}

/// A rust workspace whose `rust-analyzer` (the SCIP indexer on PATH) never
/// finishes: `scry index --root WS --timeout-ms N` stops it at its budget.
#[cfg(unix)]
#[test]
fn index_takes_root_and_timeout_ms() {
    use std::os::unix::fs::PermissionsExt;
    use std::time::{Duration, Instant};
    let base = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let ws = common::copy_fixture("rust");
    let bin = base.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("rust-analyzer");
    std::fs::write(&fake, "#!/bin/sh\nexec sleep 120\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(base.path().join("config.json"), "{}").unwrap();
    let root = ws.path().to_str().unwrap();
    let run = |args: &[&str]| {
        let t = Instant::now();
        let out = scry_in(base.path(), elsewhere.path(), args)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap();
        (out, t.elapsed())
    };
    let (out, took) = run(&["index", "--root", root, "--timeout-ms", "1500"]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("was stopped"), "{all}");
    let canonical = scry_base::paths::canonical(ws.path()).unwrap();
    assert!(all.contains(&canonical.display().to_string()), "{all}");
    // Generous: the indexer would have run 120 s.
    assert!(took < Duration::from_secs(60), "{took:?}: {all}");
    // The old spelling still works: a positional root, --timeout in seconds.
    let (out, took) = run(&["index", root, "--timeout", "1"]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("was stopped"), "{all}");
    assert!(took < Duration::from_secs(60), "{took:?}: {all}");
    // Bad budgets and roots are usage errors that name the flag.
    for bad in [
        &["index", "--root", root, "--timeout-ms", "0"][..],
        &["index", "--root", root, "--timeout-ms", "soon"],
        &[
            "index",
            "--root",
            root,
            "--timeout-ms",
            "5",
            "--timeout",
            "5",
        ],
    ] {
        let (out, _) = run(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", text(&out));
        assert!(text(&out).contains("--timeout"), "{bad:?}: {}", text(&out));
    }
    let (out, _) = run(&["index", "--root", "no/such/dir"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no/such/dir"), "{}", text(&out));
}

#[test]
fn trust_takes_root() {
    let base = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().to_str().unwrap();
    let canonical = scry_base::paths::canonical(ws.path())
        .unwrap()
        .display()
        .to_string();
    std::fs::write(base.path().join("config.json"), "{}").unwrap();
    let scry = |args: &[&str]| {
        scry_in(base.path(), elsewhere.path(), args)
            .output()
            .unwrap()
    };
    let out = scry(&["trust", "--root", root]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("Trusted {canonical}")),
        "{}",
        text(&out)
    );
    let out = scry(&["trust", "--list"]);
    assert!(
        text(&out).contains(&format!("{canonical}  trusted")),
        "{}",
        text(&out)
    );
    let out = scry(&["trust", "--revoke", "--root", root]);
    assert!(
        text(&out).contains(&format!("Revoked the trust of {canonical}")),
        "{}",
        text(&out)
    );
    // One way to name the root at a time; --list names none.
    let out = scry(&["trust", "--root", root, root]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = scry(&["trust", "--list", "--root", root]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

/// `scry daemon status --root DIR` shows that workspace only; `scry daemon
/// stop --timeout-ms N` waits at most N ms.
#[test]
fn daemon_status_takes_root_and_stop_takes_timeout_ms() {
    let base = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    std::fs::write(a.path().join("a.py"), "x = 1\n").unwrap();
    std::fs::write(base.path().join("config.json"), "{}").unwrap();
    let scry = |args: &[&str]| {
        scry_in(base.path(), elsewhere.path(), args)
            .output()
            .unwrap()
    };
    let (ra, rb) = (a.path().to_str().unwrap(), b.path().to_str().unwrap());
    // No daemon yet: the same answer with or without --root.
    let out = scry(&["daemon", "status", "--root", ra, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("\"running\":false"), "{}", text(&out));
    // `status` (the action) through the daemon registers workspace a.
    let out = scry(&["status", "--root", ra, "--timeout-ms", "20000"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let canonical = |p: &Path| scry_base::paths::canonical(p).unwrap();
    let roots = |args: &[&str]| -> Vec<std::path::PathBuf> {
        let out = scry(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["workspaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["root"].as_str().unwrap().into())
            .collect()
    };
    assert_eq!(
        roots(&["daemon", "status", "--json"]),
        vec![canonical(a.path())]
    );
    assert_eq!(
        roots(&["daemon", "status", "--json", "--root", ra]),
        vec![canonical(a.path())]
    );
    assert!(roots(&["daemon", "status", "--json", "--root", rb]).is_empty());
    let out = scry(&["daemon", "status", "--root", rb]);
    let shown = format!(
        "no server for {} in this daemon",
        canonical(b.path()).display()
    );
    assert!(text(&out).contains(&shown), "{}", text(&out));
    let out = scry(&["daemon", "status", "--root", "no/such/dir"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = scry(&["daemon", "stop", "--timeout-ms", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = scry(&["daemon", "stop", "--timeout-ms", "20000"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("stopped"), "{}", text(&out));
}

/// The command line's own usage errors: one line on stderr naming what to
/// change, exit 2, before any server or file is touched.
#[test]
fn usage_errors_are_one_line_and_exit_2() {
    let base = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.py"), "x = 1\n").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["rename", "a.py", "x"],
            "scry: rename needs PATH SYMBOL NEW_NAME (see scry --help)",
        ),
        (
            &["refs", "a.py", "x", "--changes"],
            "scry: --changes is for diagnostics (scry diag --changes FILE...) (see scry --help)",
        ),
        (
            &["refs", "a.py", "x", "surplus"],
            "scry: unexpected argument `surplus` (see scry --help)",
        ),
        (
            &["refs", "a.py", "--symbol", "x", "--symbol", "y"],
            "scry: --symbol is given once (several only for map) (see scry --help)",
        ),
        (
            &["hover", "a.py", "--line", "0"],
            "scry: --line must be a positive 1-based number, got 0 (see scry --help)",
        ),
        (
            &["hover", "a.py", "--line", "4294967296"],
            "scry: --line 4294967296 is out of range: at most 4294967295 (see scry --help)",
        ),
        (
            &["code-actions", "a.py", "x", "--dry-run"],
            "scry: --dry-run with code-actions needs --apply N|TITLE (see scry --help)",
        ),
    ];
    for (args, said) in cases {
        let out = scry_in(base.path(), ws.path(), args)
            .env("PATH", "/nonexistent")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim_end(),
            *said,
            "{args:?}: {}",
            text(&out)
        );
    }
}
