//! One daemon for clients whose environments differ (issue 19, item 4),
//! end to end through the `scry` binary and real pyright: clients whose
//! `PATH`s resolve pyright to the same file (two directories of symlinks to
//! one binary) share one pyright process; a `PATH` that resolves another
//! pyright (a wrapper script that execs the real one) gets a second, in
//! the same daemon; each server runs with the environment of the call that
//! started it; `daemon status` names each server's program and clients;
//! edits from two clients are serialized; one daemon pid throughout.
//!
//! The test runs its own daemon in its own directory (`SCRY_DAEMON_DIR` in
//! a temporary directory) and stops it at the end.
//!
//! Unix only: the `PATH`s are made of symlinks and a shell wrapper, and a
//! server's environment is read from `/proc`.
#![cfg(unix)]

mod common;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use common::process::scry_in;
use serde_json::Value;

/// The real pyright-langserver on this process's `PATH`, canonical.
fn real_pyright() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("pyright-langserver"))
            .find(|p| p.exists())
    });
    if found.is_none() {
        assert!(
            !common::servers_required(),
            "pyright-langserver is not installed but SCRY_REQUIRE_SERVERS=1"
        );
        eprintln!("skipping: pyright-langserver is not installed");
    }
    found.map(|p| scry_base::paths::canonical(&p).unwrap())
}

struct T {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
}

impl T {
    fn new() -> T {
        let tmp = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        let ws = base.join("ws");
        common::copy_tree(&common::fixtures_dir().join("python"), &ws);
        std::fs::write(base.join("config.json"), "{}").unwrap();
        T {
            _tmp: tmp,
            base,
            ws,
        }
    }

    /// `scry args` as a client whose `PATH` is `path` (plus `extra` vars).
    fn cmd(&self, path: &OsString, extra: &[(&str, &str)], args: &[&str]) -> Command {
        let mut c = scry_in(&self.base, &self.ws, args);
        c.env("PATH", path).env_remove("VIRTUAL_ENV");
        for (k, v) in extra {
            c.env(k, v);
        }
        c
    }

    fn scry(&self, path: &OsString, extra: &[(&str, &str)], args: &[&str]) -> Output {
        self.cmd(path, extra, args).output().unwrap()
    }

    fn spawn(&self, path: &OsString, args: &[&str]) -> Child {
        self.cmd(path, &[], args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn status(&self, path: &OsString) -> Value {
        let out = self.scry(path, &[], &["daemon", "status", "--json"]);
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The running pyright servers: (pid, program, clients).
    fn pyrights(&self, path: &OsString) -> Vec<(u32, PathBuf, Vec<String>)> {
        let s = self.status(path);
        let mut out = Vec::new();
        for w in s["workspaces"].as_array().into_iter().flatten() {
            for v in w["servers"].as_array().into_iter().flatten() {
                if v["id"] == "pyright" {
                    out.push((
                        v["pid"].as_u64().unwrap() as u32,
                        PathBuf::from(v["program"].as_str().unwrap()),
                        v["clients"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|c| c.as_str().unwrap().to_string())
                            .collect(),
                    ));
                }
            }
        }
        out.sort();
        out
    }
}

/// `dir`'s entry first, then this process's `PATH`.
fn path_with(dir: &Path) -> OsString {
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// The value of `name` in process `pid`'s initial environment.
fn environ_of(pid: u32, name: &str) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    raw.split(|b| *b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .find_map(|kv| kv.strip_prefix(&format!("{name}=")).map(str::to_string))
}

/// The `PATH` hashes named in a server's client list.
fn path_tags(clients: &[String]) -> BTreeSet<String> {
    clients
        .iter()
        .filter_map(|c| {
            c.rsplit_once("(PATH ")
                .map(|(_, t)| t.trim_end_matches(')').to_string())
        })
        .collect()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{o:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn clients_share_a_server_when_their_paths_resolve_the_same_binary_and_not_otherwise() {
    let Some(real) = real_pyright() else {
        return;
    };
    let t = T::new();
    // Two directories of symlinks to the one binary, and a wrapper.
    let (dir_a, dir_b, dir_c) = (
        t.base.join("bin-a"),
        t.base.join("bin-b"),
        t.base.join("bin-c"),
    );
    for d in [&dir_a, &dir_b] {
        std::fs::create_dir_all(d).unwrap();
        std::os::unix::fs::symlink(&real, d.join("pyright-langserver")).unwrap();
    }
    std::fs::create_dir_all(&dir_c).unwrap();
    let wrapper = dir_c.join("pyright-langserver");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec '{}' \"$@\"\n", real.display()),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (path_a, path_b, path_c) = (path_with(&dir_a), path_with(&dir_b), path_with(&dir_c));
    let refs = [
        "refs",
        "inventory.py",
        "total_weight",
        "--timeout-ms",
        "90000",
    ];

    // Client A starts the daemon and pyright.
    let answer_a = ok(&t.scry(&path_a, &[], &refs));
    assert!(answer_a.contains("inventory.py"), "{answer_a}");
    let daemon = t.status(&path_a)["pid"].as_u64().unwrap();
    let first = t.pyrights(&path_a);
    assert_eq!(first.len(), 1, "{first:?}");
    let (shared_pid, program, _) = first[0].clone();
    assert_eq!(program, real, "the program is the canonical binary");
    assert_eq!(
        environ_of(shared_pid, "PATH").as_deref(),
        path_a.to_str(),
        "the server runs with the environment of the call that started it"
    );

    // Client B: another PATH, the same binary: the same process.
    let answer_b = ok(&t.scry(&path_b, &[], &refs));
    assert!(answer_b.contains("inventory.py"), "{answer_b}");
    let second = t.pyrights(&path_b);
    assert_eq!(second.len(), 1, "one pyright for both: {second:?}");
    assert_eq!(second[0].0, shared_pid);
    assert_eq!(
        path_tags(&second[0].2).len(),
        2,
        "both clients are listed: {second:?}"
    );
    assert_eq!(t.status(&path_b)["pid"].as_u64().unwrap(), daemon);

    // Client C: its PATH resolves another pyright (the wrapper), and it
    // has a virtualenv: its own server, in the same daemon.
    let answer_c = ok(&t.scry(&path_c, &[("VIRTUAL_ENV", "/nonexistent/venv-c")], &refs));
    assert!(answer_c.contains("inventory.py"), "{answer_c}");
    let third = t.pyrights(&path_c);
    assert_eq!(third.len(), 2, "a second pyright: {third:?}");
    let own = third
        .iter()
        .find(|s| s.0 != shared_pid)
        .expect("a new process")
        .clone();
    assert!(third.iter().any(|s| s.0 == shared_pid), "the first runs on");
    assert_eq!(own.1, wrapper, "it runs the wrapper: {own:?}");
    assert_eq!(
        environ_of(own.0, "VIRTUAL_ENV").as_deref(),
        Some("/nonexistent/venv-c")
    );
    assert_eq!(environ_of(own.0, "PATH").as_deref(), path_c.to_str());
    assert_eq!(environ_of(shared_pid, "VIRTUAL_ENV"), None);
    assert_eq!(t.status(&path_c)["pid"].as_u64().unwrap(), daemon);
    let text = ok(&t.scry(&path_c, &[], &["daemon", "status"]));
    assert!(
        text.contains(&format!("runs {}", wrapper.display())) && text.contains("clients: "),
        "{text}"
    );

    // Edits from A and B at once: serialized, both applied.
    let a = t.spawn(
        &path_a,
        &[
            "rename",
            "inventory.py",
            "total_weight",
            "weight_sum",
            "--timeout-ms",
            "90000",
        ],
    );
    let b = t.spawn(
        &path_b,
        &[
            "rename",
            "inventory.py",
            "Inventory",
            "Stock",
            "--timeout-ms",
            "90000",
        ],
    );
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    ok(&a);
    ok(&b);
    let now = std::fs::read_to_string(t.ws.join("inventory.py")).unwrap();
    assert!(now.contains("def weight_sum"), "{now}");
    assert!(now.contains("class Stock"), "{now}");
    let last = t.pyrights(&path_a);
    assert_eq!(
        last.iter().map(|s| s.0).collect::<BTreeSet<_>>(),
        [shared_pid, own.0].into_iter().collect(),
        "the same two servers: {last:?}"
    );
    assert_eq!(
        t.status(&path_a)["pid"].as_u64().unwrap(),
        daemon,
        "one daemon throughout"
    );
    ok(&t.scry(&path_a, &[], &["daemon", "stop"]));
}

/// Issue 26, item 6: a server is keyed by what it reads. A client with
/// the MCP SDKs' reduced environment (`HOME`, `LOGNAME`, `PATH`, `SHELL`,
/// `TERM`, `USER`) and one with a full one (`PYENV_ROOT`, `CARGO_HOME`, …:
/// variables pyright does not read) share one pyright; a client whose
/// `VIRTUAL_ENV` (which pyright reads) differs gets its own.
#[test]
fn a_reduced_environment_shares_the_server_when_what_it_reads_is_the_same() {
    let Some(_) = real_pyright() else {
        return;
    };
    let t = T::new();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let base: Vec<(String, String)> = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]
        .iter()
        .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
        .collect();
    let client = |extra: &[(&str, &str)], args: &[&str]| -> Output {
        // Exactly scry's places, the base and `extra`: nothing inherited.
        let places = scry_in(&t.base, &t.ws, args);
        let mut c = Command::new(places.get_program());
        c.args(args)
            .current_dir(&t.ws)
            .env_clear()
            .envs(
                places
                    .get_envs()
                    .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
            )
            .envs(base.iter().map(|(k, v)| (k, v)))
            .envs(extra.iter().copied())
            .stdin(Stdio::null());
        c.output().unwrap()
    };
    let refs = [
        "refs",
        "inventory.py",
        "total_weight",
        "--timeout-ms",
        "90000",
    ];
    let full = [
        ("PYENV_ROOT", "/root/.pyenv"),
        ("CARGO_HOME", "/root/.cargo"),
        ("RUSTUP_HOME", "/root/.rustup"),
        ("GOPATH", "/root/go"),
        ("JAVA_HOME", "/usr/lib/jvm/default"),
    ];
    let a = ok(&client(&[], &refs));
    assert!(a.contains("inventory.py"), "{a}");
    let b = ok(&client(&full, &refs));
    assert!(b.contains("inventory.py"), "{b}");
    let shared = t.pyrights(&path);
    assert_eq!(
        shared.len(),
        1,
        "one pyright for the reduced and the full environment: {shared:?}"
    );
    assert_eq!(shared[0].2.len(), 2, "both clients listed: {shared:?}");
    let c = ok(&client(&[("VIRTUAL_ENV", "/nonexistent/venv")], &refs));
    assert!(c.contains("inventory.py"), "{c}");
    let apart = t.pyrights(&path);
    assert_eq!(
        apart.len(),
        2,
        "another VIRTUAL_ENV, another pyright: {apart:?}"
    );
    let own = apart.iter().find(|s| s.0 != shared[0].0).unwrap();
    assert_eq!(
        environ_of(own.0, "VIRTUAL_ENV").as_deref(),
        Some("/nonexistent/venv")
    );
    ok(&t.scry(&path, &[], &["daemon", "stop"]));
}
