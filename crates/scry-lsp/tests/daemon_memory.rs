//! The daemon's memory check end to end, through the `scry` binary: a
//! server whose process tree (a child holding 64 MiB, from the fake
//! server's `FAKE_LSP_CHILD_MIB`) is over its 40 MiB cap is restarted by the
//! daemon's periodic check between calls; `scry daemon status` and the
//! next answer say so with the figures, and the next call is answered by
//! the same daemon. Its own daemon in its own directory, stopped at the
//! end. Linux only (memory is read from `/proc`).
#![cfg(target_os = "linux")]

mod common;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use common::process::{alive, fake_server, kill, scry_in, wait_until};
use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        Env {
            ws,
            base,
            _tmp: tmp,
        }
    }

    fn scry(&self, args: &[&str]) -> Output {
        scry_in(&self.base, &self.ws, args).output().unwrap()
    }

    fn status(&self) -> Value {
        let out = self.scry(&["daemon", "status", "--json"]);
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn pid_file(&self, name: &str) -> Option<u32> {
        std::fs::read_to_string(self.base.join(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let pid =
            serde_json::from_slice::<Value>(&self.scry(&["daemon", "status", "--json"]).stdout)
                .ok()
                .and_then(|v| v["pid"].as_u64());
        let _ = self.scry(&["daemon", "stop"]);
        if let Some(p) = pid {
            kill(p as u32, "KILL");
        }
    }
}

#[test]
fn the_daemon_restarts_a_server_over_its_cap_between_calls_and_says_so() {
    let env = Env::new();
    let Some(fake) = fake_server() else {
        return;
    };
    std::fs::write(env.ws.join("a.fake"), "alpha beta alpha\ngamma alpha\n").unwrap();
    let vars = json!({
        "FAKE_LSP_METHOD": "textDocument/hover",
        "FAKE_LSP_CHILD_MIB": "64",
        "FAKE_LSP_PID_FILE": env.base.join("fake.pid"),
        "FAKE_LSP_CHILD_PID_FILE": env.base.join("child.pid"),
    });
    // No `memoryMiB` of its own: the global default cap applies.
    std::fs::write(
        env.base.join("config.json"),
        json!({
            "autoDetect": false,
            "limits": {"serverMemoryMiB": 40, "memoryCheckMs": 200},
            "servers": {"fake": {"command": fake, "fileTypes": ["fake"], "env": vars}},
        })
        .to_string(),
    )
    .unwrap();
    let hover = ["hover", "a.fake", "alpha", "--timeout-ms", "20000"];
    let first = env.scry(&hover);
    assert!(first.status.success(), "{first:?}");
    let daemon = env.status()["pid"].as_u64().expect("a daemon") as u32;
    let server = env.pid_file("fake.pid").expect("server pid");
    wait_until("the child to start", Duration::from_secs(30), || {
        env.pid_file("child.pid").is_some()
    });
    let child = env.pid_file("child.pid").unwrap();

    // The periodic check restarts it (no call holds it), child included.
    wait_until(
        "the server over its cap to be restarted",
        Duration::from_secs(60),
        || !alive(server) && !alive(child),
    );
    let status = env.status();
    let events: Vec<String> = status["workspaces"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|w| w["memory_events"].as_array().cloned().unwrap_or_default())
        .filter_map(|e| e.as_str().map(str::to_string))
        .collect();
    let event = events
        .iter()
        .find(|e| e.starts_with("fake was restarted between requests: it used "))
        .unwrap_or_else(|| panic!("no restart event in {status}"));
    assert!(
        event.contains(" in 2 processes, over its 40.0 MiB memory cap"),
        "{event}"
    );

    // The next call is answered (a new server, the same daemon) and tells
    // what happened.
    let next = env.scry(&hover);
    assert!(next.status.success(), "{next:?}");
    let out = String::from_utf8_lossy(&next.stdout);
    assert!(out.contains("fake alpha"), "{out}");
    assert!(
        out.contains("Note: fake was restarted between requests: it used "),
        "{out}"
    );
    assert_eq!(env.status()["pid"].as_u64(), Some(daemon as u64));
    let new = env.pid_file("fake.pid").unwrap();
    assert_ne!(new, server);

    // `scry daemon status` tells it too (the new server, over its cap as
    // well once its child holds its memory, may be restarted again by now).
    let text = String::from_utf8_lossy(&env.scry(&["daemon", "status"]).stdout).into_owned();
    assert!(
        text.contains("memory: fake was restarted between requests"),
        "{text}"
    );
}
