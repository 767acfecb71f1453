//! End to end: the built `scry mcp --http 127.0.0.1:0` prints where it
//! serves and where the token is (never the token), refuses a request
//! without the token (401) and from a foreign Origin (403), answers
//! `initialize` with it, refuses a non-loopback address without
//! `--allow-remote`, and exits on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

fn scry() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scry"));
    c.env("SCRY_NO_DAEMON", "1");
    c
}

/// One HTTP/1.1 POST to `url`'s `/mcp`; the status code.
fn post(addr: &str, headers: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}"#;
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).expect("a status line");
    String::from_utf8_lossy(&head[9..12])
        .parse()
        .expect("a status code")
}

/// `scry mcp --http 127.0.0.1:0` over a new workspace holding `files`: its
/// temporary home, its state directory, the child and the line it starts
/// with (where it serves, where the token is).
struct Served {
    _dir: tempfile::TempDir,
    state: std::path::PathBuf,
    child: std::process::Child,
    line: String,
    /// Kept open: a server whose stderr is closed stops.
    _err: BufReader<std::process::ChildStderr>,
}

fn serve(files: &[(&str, &str)]) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let root = scry_base::paths::canonical(dir.path()).unwrap().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    let state = dir.path().join("state");
    let mut child = scry()
        .args(["mcp", "--http", "127.0.0.1:0", "--root"])
        .arg(&root)
        .env("XDG_STATE_HOME", &state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("scry runs");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).expect("the start line");
    Served {
        _dir: dir,
        state,
        child,
        line,
        _err: err,
    }
}

#[test]
fn serves_http_with_a_token_and_stops_on_sigterm() {
    let Served {
        _dir,
        state,
        mut child,
        line,
        _err,
    } = serve(&[("a.py", "x = 1\n")]);
    let token_path = state.join("scry/mcp-http-token");
    let token = std::fs::read_to_string(&token_path)
        .expect("the token was generated in the state directory")
        .trim()
        .to_string();
    assert!(line.contains(&token_path.display().to_string()), "{line}");
    assert!(!line.contains(&token), "the token itself is never printed");
    let addr = scry_testkit::mcp_http::served_at(&line);

    assert_eq!(post(&addr, ""), 401);
    let auth = format!("Authorization: Bearer {token}\r\n");
    assert_eq!(
        post(&addr, &format!("{auth}Origin: https://evil.example\r\n")),
        403
    );
    assert_eq!(post(&addr, &auth), 200);

    // SIGTERM: it stops.
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let mut status = None;
    for _ in 0..200 {
        if let Some(s) = child.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = status.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("scry mcp --http did not stop on SIGTERM");
    });
    assert!(status.success(), "{status:?}");
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert!(out.is_empty(), "nothing on stdout: {out}");
}

#[test]
fn refuses_remote_without_allow_remote() {
    let dir = tempfile::tempdir().unwrap();
    let out = scry()
        .args(["mcp", "--http", "0.0.0.0:0", "--root"])
        .arg(dir.path())
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-remote"), "{err}");
    let out = scry()
        .args(["mcp", "--allow-remote"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--allow-remote needs --http");
}

/// Clients that write requests and never read their answers (issue 38):
/// 64 connections (the most the server takes), each writing pipelined
/// `tools/list` POSTs to one session. hyper reads a connection's next
/// request only once the answer before it went out, so each connection
/// stalls when its answers fill the socket, and the server's memory stays
/// bounded whatever the clients write.
#[cfg(target_os = "linux")]
#[test]
fn http_clients_that_never_read_are_not_read_either() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let Served {
        _dir,
        state,
        mut child,
        line,
        _err,
    } = serve(&[]);
    let pid = child.id();
    let addr = scry_testkit::mcp_http::served_at(&line);
    let token = std::fs::read_to_string(state.join("scry/mcp-http-token"))
        .unwrap()
        .trim()
        .to_string();
    // A session: `initialize`, its id from the answer's head.
    let (a, t) = (addr.clone(), token.clone());
    let request = move |session: &str, body: &str, close: bool| {
        let (addr, token) = (&a, &t);
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n{session}Content-Length: {}\r\n{}\r\n{body}",
            body.len(),
            if close { "Connection: close\r\n" } else { "" }
        )
    };
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"never-reads","version":"0"}}}"#;
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request("", init, true).as_bytes()).unwrap();
    let mut head = String::new();
    let _ = s.read_to_string(&mut head);
    let id = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("mcp-session-id:")
                .then(|| l.split_once(':').unwrap().1.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id: {head}"));
    let session = format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let mut s = TcpStream::connect(&addr).unwrap();
    s.write_all(request(&session, initialized, true).as_bytes())
        .unwrap();
    let _ = s.read_to_string(&mut String::new());

    let written = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    let mut streams = Vec::new();
    for c in 0..64u64 {
        let Ok(mut s) = TcpStream::connect(&addr) else {
            break;
        };
        streams.push(s.try_clone().unwrap());
        let (counter, session) = (written.clone(), session.clone());
        let request = request.clone();
        writers.push(std::thread::spawn(move || {
            for i in 1..=20_000u64 {
                let body = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/list\"}}",
                    c * 1_000_000 + i
                );
                let r = request(&session, &body, false);
                if s.write_all(r.as_bytes()).is_err() {
                    return;
                }
                counter.fetch_add(r.len() as u64, Ordering::SeqCst);
            }
        }));
    }
    // Stalled: nothing more written for 3 s.
    let stalled = scry_testkit::proc::stalls(
        &written,
        Duration::from_secs(3),
        Duration::from_secs(90),
        || writers.iter().all(|w| w.is_finished()),
    );
    let peak = scry_testkit::proc::status_kib(&pid.to_string(), "VmHWM").unwrap();
    let _ = child.kill();
    let _ = child.wait();
    for s in &streams {
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
    for w in writers {
        let _ = w.join();
    }
    let wrote = written.load(Ordering::SeqCst);
    eprintln!("64 connections wrote {wrote} bytes of requests; peak {peak} KiB");
    assert!(
        stalled,
        "scry mcp --http read {wrote} bytes of requests whose answers were never read"
    );
    assert!(
        peak < 200 * 1024,
        "scry mcp --http's peak memory {peak} KiB with clients that never read"
    );
}
