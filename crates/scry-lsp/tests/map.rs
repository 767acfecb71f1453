//! `scry map` and the syntactic index through the CLI: the map of a fixture
//! (insta), the budget respected with a marker of what was left out, focus
//! on paths and symbols, the `status` line, and a second process that starts
//! from the disk cache yet sees a file changed on disk.

mod common;

use std::path::Path;
use std::process::Command;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Run scry with private config, state and cache directories.
fn scry(home: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_scry"))
        .args(args)
        .env("SCRY_NO_DAEMON", "1")
        .current_dir(home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("SCRY_LOG_DIR", home.join("logs"))
        .env("SCRY_CACHE_DIR", home.join("cache"))
        .env_remove("SCRY_LOG")
        .output()
        .expect("run scry");
    Run {
        code: out.status.code().expect("exited"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn map_of_the_rust_fixture() {
    let ws = common::copy_fixture("rust");
    let home = tempfile::tempdir().unwrap();
    let root = ws.path().to_string_lossy().into_owned();
    let r = scry(home.path(), &["map", "--root", &root]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    insta::assert_snapshot!("map_rust", r.stdout);

    // Deterministic: the same map again (now from the disk cache).
    let again = scry(home.path(), &["map", "--root", &root]);
    assert_eq!(again.stdout, r.stdout);

    // Focused on a file and a symbol.
    let focused = scry(
        home.path(),
        &["map", "src/shapes.rs", "--symbol", "area", "--root", &root],
    );
    assert_eq!(focused.code, 0, "{}", focused.stderr);
    insta::assert_snapshot!("map_rust_focused", focused.stdout);

    let json = scry(
        home.path(),
        &["map", "--budget", "200", "--json", "--root", &root],
    );
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["precision"], "syntactic");
    assert_eq!(v["kind"], "map");
    assert!(v["omitted"]["definitions"].as_u64().unwrap() > 0, "{v}");
}

#[test]
fn map_respects_the_budget() {
    let ws = common::copy_fixture("python");
    let home = tempfile::tempdir().unwrap();
    let root = ws.path().to_string_lossy().into_owned();
    for budget in [80usize, 200, 400, 4000] {
        let r = scry(
            home.path(),
            &["map", "--budget", &budget.to_string(), "--root", &root],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let lines: Vec<&str> = r.stdout.lines().collect();
        // The listing: after the header, up to the marker or notes.
        let listing: usize = lines[1..]
            .iter()
            .take_while(|l| !l.starts_with('…') && !l.starts_with("Note:"))
            .map(|l| l.chars().count() + 1)
            .sum();
        assert!(
            listing <= budget,
            "budget {budget}: {listing} chars\n{}",
            r.stdout
        );
        if budget < 400 {
            assert!(
                r.stdout.contains("more definitions left out"),
                "marker at {budget}:\n{}",
                r.stdout
            );
        }
    }
    let bad = scry(home.path(), &["map", "--budget", "0", "--root", &root]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

#[test]
fn status_line_and_cache_across_processes() {
    let ws = common::copy_fixture("java");
    let home = tempfile::tempdir().unwrap();
    let root = ws.path().to_string_lossy().into_owned();
    let st = scry(home.path(), &["status", "--root", &root]);
    assert!(
        st.stdout.contains(
            "Syntactic index: not built in this process (built on first need), no disk cache yet"
        ),
        "{}",
        st.stdout
    );
    let main = "src/main/java/shop/Main.java";
    let r = scry(home.path(), &["def", main, "totalWeight", "--root", &root]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("src/main/java/shop/Inventory.java\n  20:23"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .lines()
            .next()
            .unwrap()
            .ends_with("— tree-sitter (syntactic)")
    );
    let st = scry(home.path(), &["status", "--root", &root]);
    // The files that question needed (those holding `totalWeight`: a
    // cold question parses no more), with the cache's size.
    assert!(
        st.stdout
            .contains("Syntactic index: 3 files (51 lines) cached on disk ("),
        "files and cache size shown: {}",
        st.stdout
    );

    // A change on disk is seen by the next process, cache or not.
    let inv = ws.path().join("src/main/java/shop/Inventory.java");
    let text = std::fs::read_to_string(&inv).unwrap();
    std::fs::write(&inv, format!("// moved\n// down\n{text}")).unwrap();
    let r = scry(home.path(), &["def", main, "totalWeight", "--root", &root]);
    assert!(
        r.stdout
            .contains("src/main/java/shop/Inventory.java\n  22:23"),
        "{}",
        r.stdout
    );
}
