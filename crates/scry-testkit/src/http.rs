//! A tiny loopback HTTP/1.1 server for the remote index's tests
//! ([`Server`]): each path answers as its [`Route`] says — a body, a 404,
//! a status, a redirect, or a stall (headers never sent) — and every
//! request is recorded with its headers.
//!
//! Invariants: it listens on 127.0.0.1 only, one thread per connection,
//! `Connection: close` on every answer; a stalled connection is held until
//! the server is dropped (never answered); dropping the server stops
//! accepting.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How one path answers.
#[derive(Clone, Debug)]
pub enum Route {
    /// 200 with this body.
    Body(Vec<u8>),
    /// This status with an empty body.
    Status(u16),
    /// 302 to this location.
    Redirect(String),
    /// Accept, read the request, then send nothing.
    Stall,
}

/// One request as received: its path and headers (names lower-case).
#[derive(Clone, Debug)]
pub struct Request {
    pub path: String,
    pub headers: HashMap<String, String>,
}

#[derive(Default)]
struct State {
    routes: HashMap<String, Route>,
    seen: Vec<Request>,
}

/// A loopback server; unrouted paths answer 404.
pub struct Server {
    pub port: u16,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Start listening on 127.0.0.1, a free port.
    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("local address").port();
        let state = Arc::new(Mutex::new(State::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (st, sp) = (st.clone(), sp.clone());
                std::thread::spawn(move || serve(conn, &st, &sp));
            }
        });
        Server { port, state, stop }
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Answer `path` as `route` from now on.
    pub fn route(&self, path: &str, route: Route) {
        let mut st = self.state.lock().unwrap();
        st.routes.insert(path.to_string(), route);
    }

    /// The requests received so far.
    pub fn seen(&self) -> Vec<Request> {
        self.state.lock().unwrap().seen.clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(conn: TcpStream, state: &Mutex<State>, stop: &AtomicBool) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match conn.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let route = {
        let mut st = state.lock().unwrap();
        st.seen.push(Request {
            path: path.clone(),
            headers,
        });
        st.routes.get(&path).cloned().unwrap_or(Route::Status(404))
    };
    let mut conn = conn;
    let head = |status: u16, extra: &str, len: usize| {
        format!(
            "HTTP/1.1 {status} {}\r\nContent-Length: {len}\r\nConnection: close\r\n{extra}\r\n",
            if status == 200 { "OK" } else { "X" }
        )
    };
    let _ = match route {
        Route::Body(b) => conn
            .write_all(head(200, "", b.len()).as_bytes())
            .and_then(|_| conn.write_all(&b)),
        Route::Status(s) => conn.write_all(head(s, "", 0).as_bytes()),
        Route::Redirect(to) => {
            conn.write_all(head(302, &format!("Location: {to}\r\n"), 0).as_bytes())
        }
        Route::Stall => {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(())
        }
    };
    let _ = conn.flush();
}
