//! The hostile cases of issue 19, through the built `scry` and its daemon:
//! per case the call's wall time and the daemon's peak RSS (VmHWM) after
//! it, for this build and, when `SCRY_BENCH_BEFORE` names an older `scry`
//! binary, for that one too, as ratios (before / after).
//!
//! Cases: `symbols` on a FIFO (before: hung), `refs` by name with a ~1 MB
//! line of 70,000 uses in Ruby (syntactic) and in Python (pyright), and
//! `symbols` on a 5 MB minified bundle. Each call is killed at
//! [`KILL_AFTER`] (a killed call counts as that long, marked `killed`).
//!
//! Run: `SCRY_BENCH_SERVERS=hostile cargo bench -p scry-lsp --bench latency`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A case still running after this is killed.
const KILL_AFTER: Duration = Duration::from_secs(90);

struct Case {
    name: &'static str,
    args: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "fifo symbols",
        args: &["symbols", "fifo.py", "--timeout-ms", "5000"],
    },
    Case {
        name: "ruby 70k uses refs",
        args: &["refs", "a.rb", "target", "--timeout-ms", "5000"],
    },
    Case {
        name: "python 70k uses refs",
        args: &["refs", "lib.py", "short_fn", "--timeout-ms", "30000"],
    },
    Case {
        name: "5 MB bundle symbols",
        args: &["symbols", "bundle.js", "--timeout-ms", "5000"],
    },
];

fn workspace(ws: &Path) {
    std::fs::create_dir_all(ws).unwrap();
    let _ = Command::new("mkfifo").arg(ws.join("fifo.py")).status();
    std::fs::write(ws.join("a.rb"), "def target\n  1\nend\n").unwrap();
    std::fs::write(
        ws.join("b.rb"),
        format!("{}\n", "target;       ".repeat(70_000)),
    )
    .unwrap();
    std::fs::write(ws.join("lib.py"), "def short_fn():\n    return 1\n").unwrap();
    std::fs::write(
        ws.join("longline.py"),
        format!(
            "from lib import short_fn\n{}\n",
            "short_fn();   ".repeat(70_000)
        ),
    )
    .unwrap();
    let mut js = String::new();
    let mut i = 0;
    while js.len() < 5_200_000 {
        js.push_str(&format!("var f{i}=function(a){{return a+{i}}};"));
        i += 1;
    }
    std::fs::write(ws.join("bundle.js"), js).unwrap();
}

fn scry(bin: &Path, base: &Path, ws: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(args)
        .current_dir(ws)
        .envs(super::daemon::private_env(base))
        .env_remove("SCRY_NO_DAEMON")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn daemon_pid(bin: &Path, base: &Path, ws: &Path) -> Option<u32> {
    let out = scry(bin, base, ws, &["daemon", "status", "--json"])
        .stdout(Stdio::piped())
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v["pid"].as_u64().map(|p| p as u32)
}

fn hwm_mib(pid: u32) -> Option<f64> {
    let kib = scry_testkit::proc::status_kib(&pid.to_string(), "VmHWM")?;
    Some(kib as f64 / 1024.0)
}

/// (seconds, killed, daemon peak MiB) per case, each case on a fresh
/// daemon (so a case that hangs or kills it does not spoil the next).
fn run_all(bin: &Path) -> Vec<(f64, bool, Option<f64>)> {
    let mut out = Vec::new();
    for case in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        let ws = base.join("ws");
        workspace(&ws);
        std::fs::write(base.join("config.json"), "{}").unwrap();
        let t = Instant::now();
        let mut child = scry(bin, &base, &ws, case.args).spawn().unwrap();
        let mut killed = false;
        while child.try_wait().unwrap().is_none() {
            if t.elapsed() > KILL_AFTER {
                let _ = child.kill();
                killed = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.wait();
        let secs = t.elapsed().as_secs_f64();
        let pid = daemon_pid(bin, &base, &ws);
        let hwm = pid.and_then(hwm_mib);
        let _ = scry(bin, &base, &ws, &["daemon", "stop"]).status();
        if let Some(p) = pid {
            let _ = Command::new("kill")
                .args(["-KILL", &p.to_string()])
                .status();
        }
        out.push((secs, killed, hwm));
    }
    out
}

pub fn bench() {
    let after = PathBuf::from(env!("CARGO_BIN_EXE_scry"));
    let before = std::env::var_os("SCRY_BENCH_BEFORE").map(PathBuf::from);
    println!("hostile cases (issue 19): wall time of one call through the daemon, daemon peak RSS");
    let a = run_all(&after);
    let b = before.as_deref().map(run_all);
    println!(
        "{:<22} {:>10} {:>10} {:>12} {:>12} {:>9} {:>9}",
        "case", "before s", "after s", "before MiB", "after MiB", "time b/a", "rss b/a"
    );
    let show = |v: Option<&(f64, bool, Option<f64>)>| match v {
        Some((s, k, _)) => format!("{s:.2}{}", if *k { " killed" } else { "" }),
        None => "-".into(),
    };
    let mib = |v: Option<&(f64, bool, Option<f64>)>| match v.and_then(|x| x.2) {
        Some(m) => format!("{m:.0}"),
        None => "gone".into(),
    };
    for (i, case) in CASES.iter().enumerate() {
        let bi = b.as_ref().and_then(|b| b.get(i));
        let ai = a.get(i);
        let ratio_t = match (bi, ai) {
            (Some(x), Some(y)) => format!("{:.1}x", x.0 / y.0.max(1e-3)),
            _ => "-".into(),
        };
        let ratio_m = match (bi.and_then(|x| x.2), ai.and_then(|y| y.2)) {
            (Some(x), Some(y)) => format!("{:.1}x", x / y.max(1.0)),
            _ => "-".into(),
        };
        println!(
            "{:<22} {:>10} {:>10} {:>12} {:>12} {:>9} {:>9}",
            case.name,
            if b.is_some() { show(bi) } else { "-".into() },
            show(ai),
            if b.is_some() { mib(bi) } else { "-".into() },
            mib(ai),
            ratio_t,
            ratio_m
        );
    }
    println!();
}
