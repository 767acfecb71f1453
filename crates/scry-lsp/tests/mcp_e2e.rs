//! End to end: the built `scry mcp` spoken to over stdio as an MCP client
//! would (initialize, tools/list, tools/call on pyright), then stdin closed:
//! scry must exit and leave no language-server process behind.

use std::process::Command;
use std::time::{Duration, Instant};

use scry_testkit::mcp_stdio::StdioClient;
use serde_json::json;

/// Parent pid from /proc/<pid>/stat (the field after the parenthesised name).
fn ppid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Every live descendant of `root`.
fn descendants(root: u32) -> Vec<u32> {
    let all: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| Some((p, ppid(p)?)))
        .collect();
    let mut out = vec![];
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (c, _) in all.iter().filter(|(_, pp)| *pp == p) {
            out.push(*c);
            frontier.push(*c);
        }
    }
    out
}

/// Gone, or a zombie (dead, waiting for its new parent to reap it).
fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rfind(')')
            .and_then(|i| s[i + 2..].split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

#[test]
fn mcp_over_stdio_answers_and_leaves_no_server_behind() {
    if !scry_testkit::require_on_path(
        "pyright-langserver",
        "mcp_over_stdio_answers_and_leaves_no_server_behind",
    ) {
        return;
    }
    let (_dir, root) = scry_testkit::canonical_tempdir();
    scry_testkit::copy_fixture_to("python", &root);
    let (mut child, mut c) = StdioClient::spawn(
        Command::new(env!("CARGO_BIN_EXE_scry"))
            .args(["mcp", "--root"])
            .arg(&root)
            .env("SCRY_NO_DAEMON", "1"),
    );
    let scry_pid = child.id();
    let init = c.initialize("e2e");
    assert_eq!(init["result"]["serverInfo"]["name"], "scry", "{init}");

    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let list = c.response(2);
    let tools = list["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["lsp", "lsp_edit"]);
    assert!(tools[0]["description"].as_str().unwrap().contains("Python"));

    c.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "lsp", "arguments": {"action": "references", "path": "inventory.py",
        "symbol": "total_weight", "timeout_ms": 90000}}}),
    );
    let r = c.response(3);
    let result = &r["result"];
    assert_eq!(result["isError"], json!(false), "{r}");
    let text = result["content"][0]["text"].as_str().unwrap().to_string();
    assert!(text.contains("references to `total_weight`"), "{text}");
    assert!(text.contains("main.py"), "{text}");
    assert_eq!(result["structuredContent"]["action"], "references", "{r}");

    // The same text as the CLI gives.
    let cli = Command::new(env!("CARGO_BIN_EXE_scry"))
        .env("SCRY_NO_DAEMON", "1")
        .args([
            "refs",
            "inventory.py",
            "total_weight",
            "--timeout-ms",
            "90000",
            "--root",
        ])
        .arg(&root)
        .current_dir(&root)
        .output()
        .expect("run scry refs");
    assert!(cli.status.success());
    assert_eq!(
        String::from_utf8_lossy(&cli.stdout).trim_end(),
        text.trim_end()
    );

    // A tool failure is a result, not a protocol error.
    c.send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "lsp", "arguments": {"action": "hover", "path": "missing.py", "symbol": "x"}}}),
    );
    let r = c.response(4);
    assert_eq!(r["result"]["isError"], json!(true), "{r}");
    assert_eq!(
        r["result"]["structuredContent"]["error"]["code"],
        "FILE_NOT_FOUND"
    );

    let servers = descendants(scry_pid);
    assert!(!servers.is_empty(), "pyright should be running under scry");

    // The client goes away: stdin closes.
    c.close();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("scry mcp did not exit after stdin closed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "scry mcp exited with {status}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive: Vec<u32> = servers.iter().copied().filter(|p| !dead(*p)).collect();
        if alive.is_empty() {
            break;
        }
        if Instant::now() > deadline {
            panic!("language-server processes survived scry mcp: {alive:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Nothing but protocol messages on stdout.
    let read = c.finish();
    assert!(read.not_protocol.is_empty(), "{:?}", read.not_protocol);
    assert!(read.lines >= 4);
}
