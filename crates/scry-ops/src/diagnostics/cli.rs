//! Running a command-line linter: argv only (never a shell), `{files}`
//! expanded, in the provider's root, with its output capped before parsing
//! and its whole process group (Job Object on Windows:
//! `scry_lsp_session::process::contained`) killed when the time budget runs out.
//!
//! Invariant: a file name never becomes an option. Every path handed to a
//! linter starts with `./` (relative) or `/` (absolute), so a file named
//! `--output-file=setup.py` or `-h.py` is a path to every option parser.
//! Where a tool understands `--`, the catalogue puts it before `{files}`
//! (data, not code).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The most stdout read from one linter run; the rest is drained unread.
pub const MAX_OUTPUT: usize = 8 * 1024 * 1024;
/// The most stderr kept (its tail explains failures).
const MAX_STDERR: usize = 16 * 1024;

/// What one run produced.
#[derive(Debug, Clone)]
pub struct CliOutput {
    pub stdout: String,
    /// Stdout was longer than [`MAX_OUTPUT`] and was cut.
    pub truncated: bool,
    pub exit_code: Option<i32>,
    /// The last lines of stderr, on one line.
    pub stderr_tail: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    /// Could not start the program.
    Spawn(String),
    /// The deadline passed; the process group was killed.
    Timeout(Duration),
}

/// Expand `{files}` in `args`: a standalone `{files}` becomes one argument
/// per path; a `{files}` inside an argument (`--files={files}`) becomes one
/// argument per path with the rest of the argument kept. In `files` mode
/// with no placeholder the paths are appended. `files` is empty in
/// `workspace` mode: a standalone placeholder then stands for `.`.
pub fn expand_args(args: &[String], files: &[String], workspace_mode: bool) -> Vec<String> {
    let dot = [".".to_string()];
    let files: &[String] = if workspace_mode { &dot } else { files };
    let mut out = Vec::new();
    let mut placed = false;
    for a in args {
        if a == "{files}" {
            out.extend(files.iter().cloned());
            placed = true;
        } else if a.contains("{files}") {
            out.extend(files.iter().map(|f| a.replace("{files}", f)));
            placed = true;
        } else {
            out.push(a.clone());
        }
    }
    if !placed && !workspace_mode {
        out.extend(files.iter().cloned());
    }
    out
}

/// `path` relative to `root` when inside it, as `./rel/path` (else
/// absolute, made so against `root` if it was not). Never starts with `-`.
pub fn relative_arg(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(r) if !r.as_os_str().is_empty() => format!("./{}", r.to_string_lossy()),
        Ok(_) => ".".to_string(),
        Err(_) if path.is_absolute() => path.to_string_lossy().into_owned(),
        Err(_) => format!("./{}", path.to_string_lossy()),
    }
}

async fn read_capped(
    mut r: impl AsyncRead + Unpin,
    cap: usize,
    keep_tail: bool,
) -> (Vec<u8>, bool) {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut truncated = false;
    loop {
        let n = match r.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if keep_tail {
            buf.extend_from_slice(&chunk[..n]);
            if buf.len() > cap {
                let cut = buf.len() - cap;
                buf.drain(..cut);
                truncated = true;
            }
        } else if buf.len() < cap {
            let take = n.min(cap - buf.len());
            buf.extend_from_slice(&chunk[..take]);
            truncated |= take < n;
        } else {
            truncated = true; // drain so the child never blocks on a full pipe
        }
    }
    (buf, truncated)
}

/// Run `program args` in `root` with exactly the environment `env` (the
/// workspace's [`scry_workspace::Workspace::child_env`]) until it exits or
/// `deadline` passes.
pub async fn run(
    program: &Path,
    args: &[String],
    env: &scry_workspace::env::ChildEnv,
    root: &Path,
    deadline: tokio::time::Instant,
) -> Result<CliOutput, CliError> {
    let start = tokio::time::Instant::now();
    // Its own process group (a Job Object on Windows), killed whole.
    let mut cmd = scry_lsp_session::process::contained(program, |c| {
        env.apply_async(c);
        c.args(args)
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    });
    let mut child = cmd.spawn().map_err(|e| {
        CliError::Spawn(format!(
            "could not start {}: {e}{}",
            program.display(),
            scry_lsp_session::process::refused_argument_hint(&e)
        ))
    })?;
    let stdout = child.stdout().take();
    let stderr = child.stderr().take();
    let work = async {
        let out = async {
            match stdout {
                Some(s) => read_capped(s, MAX_OUTPUT, false).await,
                None => (Vec::new(), false),
            }
        };
        let err = async {
            match stderr {
                Some(s) => read_capped(s, MAX_STDERR, true).await,
                None => (Vec::new(), false),
            }
        };
        let ((out, truncated), (err, _)) = tokio::join!(out, err);
        (out, truncated, err)
    };
    match tokio::time::timeout_at(deadline, work).await {
        Ok((out, truncated, err)) => {
            let status = match tokio::time::timeout_at(deadline, child.wait()).await {
                Ok(Ok(s)) => s.code(),
                Ok(Err(_)) => None,
                Err(_) => {
                    let _ = child.start_kill();
                    return Err(CliError::Timeout(start.elapsed()));
                }
            };
            let err = String::from_utf8_lossy(&err);
            let tail: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
            let tail = tail[tail.len().saturating_sub(3)..].join(" | ");
            Ok(CliOutput {
                stdout: String::from_utf8_lossy(&out).into_owned(),
                truncated,
                exit_code: status,
                stderr_tail: tail.chars().take(300).collect(),
            })
        }
        Err(_) => {
            let _ = child.start_kill();
            // Reap in the background: no zombie stays behind.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            Err(CliError::Timeout(start.elapsed()))
        }
    }
}

/// The files of a `files`-mode run, relative to `root`.
pub fn file_args(files: &[PathBuf], root: &Path) -> Vec<String> {
    files.iter().map(|f| relative_arg(f, root)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn files_placeholder_expansion() {
        let files = s(&["a.py", "sub/b.py"]);
        assert_eq!(
            expand_args(&s(&["check", "{files}", "--x"]), &files, false),
            s(&["check", "a.py", "sub/b.py", "--x"])
        );
        assert_eq!(
            expand_args(&s(&["--file={files}", "-q"]), &files, false),
            s(&["--file=a.py", "--file=sub/b.py", "-q"])
        );
        assert_eq!(
            expand_args(&s(&["lint"]), &files, false),
            s(&["lint", "a.py", "sub/b.py"])
        );
        assert_eq!(
            expand_args(&s(&["run", "{files}"]), &[], true),
            s(&["run", "."])
        );
        assert_eq!(expand_args(&s(&["run"]), &files, true), s(&["run"]));
        // Absolute paths as this OS writes them (`C:/w` on Windows).
        let abs = |p: &str| PathBuf::from(format!("{}{p}", if cfg!(windows) { "C:" } else { "" }));
        let w = abs("/w");
        assert_eq!(relative_arg(&abs("/w/a/b.py"), &w), "./a/b.py");
        // a file name is never an option
        assert_eq!(
            relative_arg(&abs("/w/--output-file=x.py"), &w),
            "./--output-file=x.py"
        );
        assert_eq!(relative_arg(Path::new("-h.py"), &w), "./-h.py");
        assert_eq!(relative_arg(&w, &w), ".");
        assert_eq!(
            relative_arg(&abs("/x/b.py"), &w),
            abs("/x/b.py").to_string_lossy()
        );
    }

    /// What [`child`] does when this test binary is started as a linter.
    const CHILD: &str = "SCRY_CLI_TEST_CHILD";

    /// The linter of [`output_is_capped_and_hangs_are_killed`]: this test
    /// binary, running only [`child`] as `what` says.
    fn linter(what: &str) -> (PathBuf, Vec<String>, scry_workspace::env::ChildEnv) {
        let root = std::env::temp_dir();
        let mut configured = std::collections::BTreeMap::new();
        configured.insert(CHILD.to_string(), what.to_string());
        let env = scry_workspace::env::for_child(&root, true, &configured);
        let args = s(&[
            "--exact",
            "diagnostics::cli::tests::child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ]);
        (std::env::current_exe().unwrap(), args, env)
    }

    /// The child half of [`output_is_capped_and_hangs_are_killed`]
    /// (`SCRY_CLI_TEST_CHILD`): `big` writes 9 MiB to stdout, `done` to
    /// stderr and exits 3; `hang` starts a `sleep` child like itself and
    /// sleeps a minute. Ignored, so it runs only when asked by name.
    #[test]
    #[ignore = "the linter of output_is_capped_and_hangs_are_killed; run by it"]
    fn child() {
        use std::io::Write;
        match std::env::var(CHILD).as_deref() {
            Ok("big") => {
                let chunk = vec![b'x'; 1 << 20];
                let mut out = std::io::stdout().lock();
                for _ in 0..9 {
                    out.write_all(&chunk).unwrap();
                }
                out.flush().unwrap();
                std::io::stderr().write_all(b"done\n").unwrap();
                std::process::exit(3);
            }
            Ok("hang") => {
                let (exe, args, _) = linter("sleep");
                let _grandchild = std::process::Command::new(exe)
                    .args(args)
                    .env(CHILD, "sleep")
                    .spawn();
                std::thread::sleep(Duration::from_secs(60));
            }
            Ok("sleep") => std::thread::sleep(Duration::from_secs(60)),
            _ => {}
        }
    }

    #[tokio::test]
    async fn output_is_capped_and_hangs_are_killed() {
        let root = std::env::temp_dir();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        // 9 MiB of output: cut at the cap, the child still finishes.
        let (exe, args, env) = linter("big");
        let out = run(&exe, &args, &env, &root, deadline).await.unwrap();
        assert!(out.truncated);
        assert_eq!(out.stdout.len(), MAX_OUTPUT);
        assert_eq!(out.exit_code, Some(3));
        assert_eq!(out.stderr_tail, "done");
        // A hang: killed at the deadline, with its children.
        let t = tokio::time::Instant::now();
        let (exe, args, env) = linter("hang");
        let e = run(&exe, &args, &env, &root, t + Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(matches!(e, CliError::Timeout(_)));
        assert!(t.elapsed() < Duration::from_secs(5));
        let e = run(Path::new("/nonexistent/tool"), &[], &env, &root, deadline)
            .await
            .unwrap_err();
        assert!(matches!(e, CliError::Spawn(_)));
    }
}
