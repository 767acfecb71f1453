//! The remote SCIP index (`index.remote`): an index CI publishes per
//! commit, fetched for HEAD or its nearest ancestor, verified, converted
//! under the local import's rules and cached by commit; and the git
//! facts that place it (which commits, which files changed since, their
//! text then, each file's diff hunks).
//!
//! - [`fetch`]: the search, nearest commit first: the remote is asked
//!   only for commits nearer than the nearest whose converted index is in
//!   the cache (404: the next ancestor), which answers when they have
//!   none or the remote fails; a download's `.sha256` is checked when the
//!   server has one, and it is converted
//!   ([`scry_index::cache::install_remote`]) against the files as they
//!   were at that commit ([`at_commit`]); the cache keeps the last
//!   [`KEEP_COMMITS`] fetched.
//! - [`hunks`]: one file's `git diff -U0` from the index's commit to the
//!   working tree (committed and uncommitted changes).
//!
//! Invariants: git runs as argv with the workspace's child environment
//! (`crate::env::for_child`), stdin closed, `core.fsmonitor` off and no
//! external diff or text conversion; a download is streamed to a file in
//! the cache, never held whole, stopped past
//! [`scry_model::limits::MAX_REMOTE_INDEX_BYTES`] or when the server sends
//! nothing for `stallMs`; a redirect to another origin is not followed;
//! a digest that does not match refuses the index; a header's value is
//! read from the environment variable the configuration names, at each
//! fetch; every failure is a [`RemoteProblem`] (data, worded by
//! scry-render), never a panic or a wait past the search's time.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use scry_index::store::convert::AtCommit;
use scry_index::store::read::Index;
use scry_index::translate::Hunks;
use scry_model::RemoteProblem;
use scry_model::limits::{MAX_REMOTE_INDEX_BYTES, REMOTE_INDEX_SEARCH_MS};
use sha2::{Digest, Sha256};

use crate::config::RemoteIndex;
use crate::env::ChildEnv;

/// The most bytes of a `.sha256` file read.
const MAX_DIGEST_BYTES: u64 = 4096;

/// A fetched index: the commit it was built at, how many commits before
/// HEAD that is, and the index, converted and open.
pub struct Fetched {
    pub commit: String,
    pub behind: u32,
    pub index: Index,
}

/// Git in the workspace at `root`.
#[derive(Clone)]
pub struct Git {
    root: PathBuf,
    env: ChildEnv,
}

impl Git {
    /// Git for the workspace at `root` (canonical), with its trust.
    pub fn new(root: &Path, trusted: bool) -> Git {
        Git {
            root: root.to_path_buf(),
            env: crate::env::for_child(root, trusted, &BTreeMap::new()),
        }
    }

    /// `git ARGS` in the root: its stdout when it succeeded.
    fn run(&self, args: &[&str]) -> Option<Vec<u8>> {
        let mut cmd = Command::new("git");
        self.env.apply(&mut cmd);
        cmd.args(["-c", "core.fsmonitor=false", "-c", "core.quotepath=off"])
            .args(args)
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| o.stdout)
    }

    /// HEAD's full hash, `None` outside a git checkout (or before its
    /// first commit).
    pub fn head(&self) -> Option<String> {
        let out = self.run(&["rev-parse", "--verify", "-q", "HEAD"])?;
        let h = String::from_utf8(out).ok()?.trim().to_string();
        is_hash(&h).then_some(h)
    }

    /// HEAD and its ancestors, nearest first, `n` at most.
    pub fn ancestors(&self, n: u32) -> Vec<String> {
        let max = format!("--max-count={}", n.max(1));
        self.run(&["rev-list", &max, "HEAD"])
            .and_then(|o| String::from_utf8(o).ok())
            .map(|s| {
                s.lines()
                    .map(str::trim)
                    .filter(|h| is_hash(h))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The files under the root (relative to it) whose working-tree
    /// content differs from `commit`'s; `None` when git cannot say.
    pub fn changed_since(&self, commit: &str) -> Option<HashSet<String>> {
        let out = self.run(&[
            "diff",
            "--relative",
            "--name-only",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            commit,
            "--",
        ])?;
        Some(
            out.split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .filter_map(|p| std::str::from_utf8(p).ok().map(str::to_string))
                .collect(),
        )
    }

    /// The bytes of `rel` (relative to the root) at `commit`.
    pub fn show(&self, commit: &str, rel: &str) -> Option<Vec<u8>> {
        self.run(&["cat-file", "blob", &format!("{commit}:./{rel}")])
    }

    /// `rel`'s hunks from `commit` to the working tree (committed and
    /// uncommitted changes); `None` when git cannot say or its output does
    /// not parse (the file is then not translated).
    pub fn hunks(&self, commit: &str, rel: &str) -> Option<Hunks> {
        let out = self.run(&[
            "diff",
            "-U0",
            "--no-color",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            commit,
            "--",
            rel,
        ])?;
        Hunks::parse(&String::from_utf8_lossy(&out))
    }
}

/// A full commit hash (SHA-1 or SHA-256), lower-case hex.
fn is_hash(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Each document's file as it was at `commit`: the working tree's when
/// git says it did not change since, else its bytes then (`Unknown` when
/// git cannot give them).
pub fn at_commit<'a>(
    git: &'a Git,
    commit: &'a str,
    changed: Option<&'a HashSet<String>>,
) -> impl Fn(&str) -> AtCommit + 'a {
    move |rel: &str| match changed {
        None => AtCommit::Unknown,
        Some(c) if !c.contains(rel) => AtCommit::Same,
        Some(_) => git
            .show(commit, rel)
            .map_or(AtCommit::Unknown, AtCommit::Text),
    }
}

/// Look for the index of HEAD, else of its nearest ancestor (at most
/// `remote.ancestors` back, within [`REMOTE_INDEX_SEARCH_MS`] and before
/// `deadline`): the nearest in `cache` answers unless the remote has a
/// nearer one (verified, converted and returned); a failure of the remote
/// is the error only when the cache has none. `trusted`: the workspace's trust (for
/// git's environment).
pub async fn fetch(
    cache: &Path,
    root: &Path,
    trusted: bool,
    remote: &RemoteIndex,
    deadline: Instant,
) -> Result<Fetched, RemoteProblem> {
    let deadline = deadline.min(Instant::now() + Duration::from_millis(REMOTE_INDEX_SEARCH_MS));
    let git = Git::new(root, trusted);
    let (g, n) = (git.clone(), remote.ancestors.saturating_add(1));
    let commits = tokio::task::spawn_blocking(move || g.ancestors(n))
        .await
        .unwrap_or_default();
    if commits.is_empty() {
        return Err(RemoteProblem::NoCommit);
    }
    // The nearest commit whose index is in the cache: the remote is asked
    // only for nearer ones, and it answers when the remote fails.
    let (c, r, cs) = (cache.to_path_buf(), root.to_path_buf(), commits.clone());
    let mut cached = tokio::task::spawn_blocking(move || {
        cs.iter().enumerate().find_map(|(behind, commit)| {
            let index = scry_index::cache::open_remote(&c, &r, commit)?;
            Some(Fetched {
                commit: commit.clone(),
                behind: behind as u32,
                index,
            })
        })
    })
    .await
    .ok()
    .flatten();
    let nearer = cached.as_ref().map_or(commits.len(), |f| f.behind as usize);
    let mut tried = 0u32;
    for (behind, commit) in commits.iter().enumerate().take(nearer) {
        let mut fallback = |p: RemoteProblem| cached.take().ok_or(p);
        if Instant::now() >= deadline {
            return fallback(RemoteProblem::NoIndex {
                tried,
                timed_out: true,
            });
        }
        tried += 1;
        let tmp = temp_path(cache, root, "scip");
        let got =
            match tokio::time::timeout_at(deadline.into(), download(remote, commit, &tmp)).await {
                Ok(r) => r,
                Err(_) => Err(RemoteProblem::NoIndex {
                    tried,
                    timed_out: true,
                }),
            };
        match got {
            Ok(true) => {}
            Ok(false) => {
                let _ = std::fs::remove_file(&tmp);
                continue;
            }
            Err(p) => {
                let _ = std::fs::remove_file(&tmp);
                return fallback(p);
            }
        }
        let (c, r, cm, g) = (
            cache.to_path_buf(),
            root.to_path_buf(),
            commit.clone(),
            git.clone(),
        );
        let installed = tokio::task::spawn_blocking(move || {
            let changed = g.changed_since(&cm);
            let then = at_commit(&g, &cm, changed.as_ref());
            scry_index::cache::install_remote(&c, &r, &cm, &tmp, &then)
        })
        .await;
        return match installed {
            Ok(Ok(index)) => {
                let (c, r) = (cache.to_path_buf(), root.to_path_buf());
                let _ = tokio::task::spawn_blocking(move || {
                    scry_index::cache::prune_remote(&c, &r, KEEP_COMMITS)
                })
                .await;
                Ok(Fetched {
                    commit: commit.clone(),
                    behind: behind as u32,
                    index,
                })
            }
            Ok(Err(e)) => fallback(RemoteProblem::Unusable {
                error: e.to_string(),
            }),
            Err(e) => fallback(RemoteProblem::Unusable {
                error: e.to_string(),
            }),
        };
    }
    cached.ok_or(RemoteProblem::NoIndex {
        tried,
        timed_out: false,
    })
}

/// How many fetched commits' indexes the cache keeps per workspace (the
/// most recently fetched).
pub const KEEP_COMMITS: usize = 4;

/// A temporary file in the cache's directory for `root`'s fetched indexes.
fn temp_path(cache: &Path, root: &Path, ext: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = scry_index::cache::dir_for(cache, root).join("remote");
    let _ = std::fs::create_dir_all(&dir);
    dir.join(format!(
        "fetch.{}.{}.{ext}.tmp",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Fetch the index of `commit` into `to`, its digest checked when the
/// server has one: `Ok(false)` when there is none (404, or no such file).
async fn download(remote: &RemoteIndex, commit: &str, to: &Path) -> Result<bool, RemoteProblem> {
    let url = remote.url_for(commit);
    let stall = Duration::from_millis(remote.stall_ms);
    let mut out = std::fs::File::create(to).map_err(|e| RemoteProblem::Unreachable {
        error: e.to_string(),
    })?;
    let cap = remote.max_bytes.min(MAX_REMOTE_INDEX_BYTES);
    let Some(digest) = get(remote, &url, stall, cap, &mut out).await? else {
        return Ok(false);
    };
    out.sync_all().map_err(|e| RemoteProblem::Unreachable {
        error: e.to_string(),
    })?;
    let mut sum = Vec::new();
    let want = get(
        remote,
        &format!("{url}.sha256"),
        stall,
        MAX_DIGEST_BYTES,
        &mut sum,
    )
    .await?;
    if want.is_some() {
        let text = String::from_utf8_lossy(&sum);
        let hex = text.split_whitespace().next().unwrap_or("");
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(RemoteProblem::DigestUnreadable);
        }
        if !hex.eq_ignore_ascii_case(&digest) {
            return Err(RemoteProblem::DigestMismatch);
        }
    }
    Ok(true)
}

/// GET `url` into `out`, at most `cap` bytes, giving up when nothing comes
/// for `stall`: the SHA-256 of what was written (hex), `None` on a 404 (or
/// a `file:` URL naming no file).
async fn get(
    remote: &RemoteIndex,
    url: &str,
    stall: Duration,
    cap: u64,
    out: &mut impl Write,
) -> Result<Option<String>, RemoteProblem> {
    let unreachable = |e: &dyn std::fmt::Display| RemoteProblem::Unreachable {
        error: e.to_string(),
    };
    let mut hash = Sha256::new();
    let mut put = |chunk: &[u8], written: &mut u64| -> Result<(), RemoteProblem> {
        *written += chunk.len() as u64;
        if *written > cap {
            return Err(RemoteProblem::TooLarge { limit: cap });
        }
        hash.update(chunk);
        out.write_all(chunk).map_err(|e| unreachable(&e))
    };
    let mut written = 0u64;
    if let Some(path) = url.strip_prefix("file://") {
        let path = PathBuf::from(path);
        let file = match scry_index::store::convert::open_regular(&path) {
            Ok(f) => f,
            Err(scry_index::store::IndexError::Io { err, .. })
                if err.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(None);
            }
            Err(e) => return Err(unreachable(&e)),
        };
        let mut r = std::io::BufReader::new(file);
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = std::io::Read::read(&mut r, &mut buf).map_err(|e| unreachable(&e))?;
            if n == 0 {
                break;
            }
            put(&buf[..n], &mut written)?;
        }
        return Ok(Some(hex(&hash.finalize())));
    }
    let stalled = || RemoteProblem::Stalled {
        secs: stall.as_secs().max(1),
    };
    let mut req = client(stall)?.get(url);
    if let Some(h) = &remote.header {
        let unset = || RemoteProblem::HeaderUnset { env: h.env.clone() };
        let v = crate::env::var_os(&h.env)
            .and_then(|v| v.into_string().ok())
            .filter(|v| !v.is_empty())
            .ok_or_else(unset)?;
        let v = reqwest::header::HeaderValue::from_str(&v).map_err(|_| unset())?;
        req = req.header(h.name.as_str(), v);
    }
    let mut resp = tokio::time::timeout(stall, req.send())
        .await
        .map_err(|_| stalled())?
        .map_err(|e| {
            if e.is_timeout() {
                stalled()
            } else {
                unreachable(&without_url(e))
            }
        })?;
    let status = resp.status();
    if status.is_redirection() {
        let to = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .and_then(|l| resp.url().join(l).ok())
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        return Err(RemoteProblem::Redirected { to });
    }
    if status == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if status != reqwest::StatusCode::OK {
        return Err(RemoteProblem::Status {
            status: status.as_u16(),
        });
    }
    if resp.content_length().is_some_and(|n| n > cap) {
        return Err(RemoteProblem::TooLarge { limit: cap });
    }
    loop {
        let chunk = tokio::time::timeout(stall, resp.chunk())
            .await
            .map_err(|_| stalled())?
            .map_err(|e| unreachable(&without_url(e)))?;
        match chunk {
            Some(c) => put(&c, &mut written)?,
            None => break,
        }
    }
    Ok(Some(hex(&hash.finalize())))
}

/// The HTTP client's error without the URL it names (which may hold a
/// token in its query), with its causes.
fn without_url(e: reqwest::Error) -> String {
    use std::error::Error;
    let e = e.without_url();
    let mut words = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        words.push_str(": ");
        words.push_str(&c.to_string());
        cause = c.source();
    }
    words
}

/// The one HTTP client: rustls with ring (no OpenSSL), a connect timeout
/// of the stall time, redirects followed only within one origin (scheme,
/// host and port), five at most; one to another origin is handed back as
/// the redirect response, which [`get`] refuses.
fn client(stall: Duration) -> Result<reqwest::Client, RemoteProblem> {
    static CLIENTS: OnceLock<std::sync::Mutex<BTreeMap<u64, reqwest::Client>>> = OnceLock::new();
    let key = stall.as_millis() as u64;
    let clients = CLIENTS.get_or_init(Default::default);
    let mut clients = clients.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = clients.get(&key) {
        return Ok(c.clone());
    }
    // ring, not aws-lc (no C build); post-quantum key exchange, which only
    // aws-lc offers, is not needed to download an index.
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let origin = |u: &reqwest::Url| {
            (
                u.scheme().to_string(),
                u.host_str().map(str::to_string),
                u.port_or_known_default(),
            )
        };
        let first = attempt.previous().first().map(origin);
        if attempt.previous().len() > 5 {
            attempt.stop()
        } else if first.is_some_and(|f| f == origin(attempt.url())) {
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    let c = reqwest::Client::builder()
        .redirect(policy)
        .connect_timeout(stall)
        .read_timeout(stall)
        .build()
        .map_err(|e| RemoteProblem::Unreachable {
            error: without_url(e),
        })?;
    clients.insert(key, c.clone());
    Ok(c)
}

/// Lower-case hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
