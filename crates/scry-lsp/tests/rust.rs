//! rust-analyzer against `fixtures/rust` (one server for all checks). No
//! snapshots here: rust-analyzer's answers may vary with its index.

mod common;

use std::time::{Duration, Instant};

use common::Fixture;
use common::process::scry_in;
use common::suite::{self, Lang};

const LANG: Lang = Lang {
    qualified_restock: "Inventory::restock",
    restock_query: "restock",
    inventory_decl: ("src/inventory.rs", "struct Inventory"),
    // rust-analyzer nests methods under `impl Inventory`.
    restock_nested: true,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_rust_analyzer() {
    let Some(fx) = Fixture::open("rust", "rust_rust_analyzer") else {
        return;
    };
    suite::every_check(&fx, &LANG).await;
    a_rename_to_the_raw_spelling_changes_nothing_and_says_so(&fx).await;
    fx.shutdown().await;
}

/// Renaming `total_weight` to `r#total_weight`: rust-analyzer answers
/// text edits that write the same name (`r#` dropped where it is not
/// needed); the answer says nothing changes, never "N edits in M files",
/// and no file is written.
async fn a_rename_to_the_raw_spelling_changes_nothing_and_says_so(fx: &Fixture) {
    let before = std::fs::read_to_string(fx.root.join("src/main.rs")).unwrap();
    let mut q = common::query(scry_model::Action::Rename)
        .path(fx.root.join("src/inventory.rs"))
        .symbol("total_weight")
        .build();
    q.new_name = Some("r#total_weight".into());
    q.apply = true;
    let a = fx.run(&q).await;
    let t = fx.text(&a);
    assert!(
        t.starts_with("Renaming `total_weight` → `r#total_weight` changes nothing: the server's"),
        "{t}"
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join("src/main.rs")).unwrap(),
        before
    );
}

/// The first call on a cold daemon (a fresh copy, no `target/`, a new
/// rust-analyzer) with a short budget is answered, never `TIMEOUT`: by
/// rust-analyzer (precise) when it is ready in time, else by the syntactic
/// index, labelled, within the budget (the syntactic answer is prepared
/// alongside the server's start).
#[test]
fn a_cold_first_call_with_a_short_budget_is_answered_never_timeout() {
    let Some(fx) = Fixture::open("rust", "rust_cold_first_call") else {
        return;
    };
    let base = tempfile::tempdir().unwrap();
    std::fs::write(base.path().join("config.json"), "{}").unwrap();
    let t0 = Instant::now();
    let out = scry_in(
        base.path(),
        &fx.root,
        &[
            "references",
            "src/inventory.rs",
            "Inventory",
            "--timeout-ms",
            "6000",
        ],
    )
    .output()
    .expect("run scry");
    let took = t0.elapsed();
    let _ = scry_in(base.path(), &fx.root, &["daemon", "stop"]).output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("TIMEOUT"), "{stderr}");
    let header = stdout.lines().next().unwrap_or_default();
    assert!(
        header.ends_with("— rust-analyzer") || header.contains("syntactic"),
        "{stdout}"
    );
    assert!(stdout.contains("src/main.rs"), "{stdout}");
    // Generous: the daemon's start (20 s at most) and the 6 s budget.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

/// A fresh project whose dependencies include a proc-macro (thiserror), a
/// cold daemon and rust-analyzer, the default budget (issue 39): the first
/// `references` by name — through MCP, then on the CLI — is answered
/// within seconds by a lower source, labelled with what rust-analyzer is
/// doing (before: at the 30 s budget, the syntactic answer having been
/// ready at once); asked with a budget, the call waits for rust-analyzer's
/// own answer.
#[test]
fn while_rust_analyzer_loads_the_default_budget_answers_early_and_labelled() {
    use scry_testkit::mcp_stdio::StdioClient;
    use serde_json::json;
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("rust-analyzer").is_file()));
    if !on_path {
        assert!(
            std::env::var_os("SCRY_REQUIRE_SERVERS").is_none(),
            "rust-analyzer is not installed"
        );
        return;
    }
    let base = tempfile::tempdir().unwrap();
    std::fs::write(base.path().join("config.json"), "{}").unwrap();
    let ws = scry_base::paths::canonical(base.path())
        .unwrap()
        .join("procs");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"procs\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nthiserror = \"2\"\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/main.rs"),
        "mod shapes;\nuse shapes::total_area;\n\n#[derive(Debug, thiserror::Error)]\n#[error(\"bad shape\")]\npub struct BadShape;\n\nfn main() {\n    println!(\"{}\", total_area(&[1, 2]));\n}\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("src/shapes.rs"),
        "pub fn total_area(xs: &[u32]) -> u32 {\n    xs.iter().sum()\n}\n",
    )
    .unwrap();
    // The lock file from the registry already on this machine (scry's own
    // dependencies include thiserror).
    let locked = std::process::Command::new("cargo")
        .args(["generate-lockfile", "--offline"])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(
        locked.status.success(),
        "{}",
        String::from_utf8_lossy(&locked.stderr)
    );

    // Through MCP (the daemon route), no budget given.
    let mut cmd = scry_in(base.path(), &ws, &["mcp"]);
    cmd.env("SCRY_LOG", "off");
    let (mut child, mut client) = StdioClient::spawn(&mut cmd);
    client.initialize("early-answers");
    let t0 = Instant::now();
    client.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "lsp", "arguments": {"action": "references",
        "path": "src/shapes.rs", "symbol": "total_area"}}}));
    let r = client.response(2);
    let took = t0.elapsed();
    client.close();
    let _ = child.kill();
    let _ = child.wait();
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.contains("src/main.rs"), "{r}");
    // The daemon's start is in this call: generous, far below the budget.
    assert!(took < Duration::from_secs(12), "took {took:?}: {text}");
    assert!(
        text.lines()
            .next()
            .is_some_and(|h| h.contains("syntactic") || h.contains("SCIP")),
        "{text}"
    );
    assert!(
        text.contains("Partial: rust-analyzer"),
        "what it is doing: {text}"
    );

    // On the CLI, the same while it loads.
    let t0 = Instant::now();
    let out = scry_in(
        base.path(),
        &ws,
        &["references", "src/shapes.rs", "total_area"],
    )
    .output()
    .unwrap();
    let took = t0.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{stdout}");
    let precise = stdout
        .lines()
        .next()
        .is_some_and(|h| h.ends_with("— rust-analyzer"));
    assert!(
        precise || (stdout.contains("Partial: rust-analyzer") && took < Duration::from_secs(6)),
        "took {took:?}: {stdout}"
    );

    // A budget asked for waits for rust-analyzer's own answer.
    let out = scry_in(
        base.path(),
        &ws,
        &[
            "references",
            "src/shapes.rs",
            "total_area",
            "--timeout-ms",
            "110000",
        ],
    )
    .output()
    .unwrap();
    let _ = scry_in(base.path(), &ws, &["daemon", "stop"]).output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .next()
            .is_some_and(|h| h.ends_with("— rust-analyzer")),
        "{stdout}\n{}",
        common::process::daemon_log(base.path())
    );
    assert!(!stdout.contains("Partial:"), "{stdout}");
}
