//! Instruction counts for the latency bench (`SCRY_BENCH_CALLGRIND=DIR`):
//! the bench runs itself again under `valgrind --tool=callgrind` (output
//! in DIR), and around each measured block of calls zeroes the counters
//! and dumps them with a description (Callgrind's client requests, the
//! same magic instruction sequence as `valgrind/callgrind.h`; a no-op when
//! not under Valgrind). The daemon route's two processes, `scry mcp` and
//! its daemon, are started under Callgrind too, and dumped from outside
//! (`callgrind_control --dump=WHAT PID`, through Valgrind's gdbserver: no
//! symbol of theirs is needed, so it works on an optimized build where
//! everything is inlined) before a block, after it, and after as long
//! again with no call (what runs beside the calls — the daemon's reaping
//! tick, timers — taken off). At the end, [`report`]'s readers turn the
//! dumps into instructions per call.
//!
//! Counts are of scry's processes only (the language servers are not
//! traced): what scry adds, free of the machine's noise.

use std::path::{Path, PathBuf};

/// `VG_USERREQ_TOOL_BASE('C', 'T')`.
const BASE: usize = ((b'C' as usize) << 24) | ((b'T' as usize) << 16);
const ZERO_STATS: usize = BASE + 1;
const DUMP_STATS_AT: usize = BASE + 3;
/// `VG_USERREQ__RUNNING_ON_VALGRIND`.
const RUNNING_ON_VALGRIND: usize = 0x1001;

/// The environment variable naming the output directory.
pub const VAR: &str = "SCRY_BENCH_CALLGRIND";

/// One Valgrind client request; `default` when not under Valgrind.
#[cfg(target_arch = "x86_64")]
fn request(args: [usize; 6], default: usize) -> usize {
    let mut result = default;
    // SAFETY: the special instruction preamble rotates rdi by 128 bits in
    // all (a no-op) and `xchg rbx, rbx` changes nothing; Valgrind reads the
    // argument block through rax and writes the result to rdx.
    unsafe {
        std::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            inout("rdx") result,
            in("rax") args.as_ptr(),
            inout("rdi") 0usize => _,
            options(nostack),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
fn request(_args: [usize; 6], default: usize) -> usize {
    default
}

/// Whether this process runs under Valgrind.
pub fn on_valgrind() -> bool {
    request([RUNNING_ON_VALGRIND, 0, 0, 0, 0, 0], 0) > 0
}

/// The output directory when instruction counts were asked for.
pub fn dir() -> Option<PathBuf> {
    std::env::var_os(VAR).map(PathBuf::from)
}

/// Run this bench again under Callgrind when [`VAR`] is set and this is
/// not already Valgrind's run; returns only in the run that measures.
pub fn reexec_if_asked() {
    let Some(dir) = dir() else { return };
    if on_valgrind() {
        return;
    }
    std::fs::create_dir_all(&dir).expect("callgrind output dir");
    let exe = std::env::current_exe().expect("bench executable");
    let status = std::process::Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}/bench.%p", dir.display()))
        .arg(&exe)
        .args(std::env::args_os().skip(1))
        .status()
        .expect("valgrind (install it, or unset SCRY_BENCH_CALLGRIND)");
    std::process::exit(status.code().unwrap_or(1));
}

/// Zero the counters (every thread of this process).
pub fn zero() {
    request([ZERO_STATS, 0, 0, 0, 0, 0], 0);
}

/// Dump the counters since the last zero or dump, described as `what`
/// (`CASE|OP|ROUTE|CALLS`, read back by [`report`]).
pub fn dump(what: &str) {
    let c = std::ffi::CString::new(what).expect("no NUL");
    request([DUMP_STATS_AT, c.as_ptr() as usize, 0, 0, 0, 0], 0);
}

/// The arguments that run one of the daemon route's processes (`kind`:
/// `daemon`, `mcp`) under Callgrind, its output named `KIND-TAG.%p`.
pub fn prefix(dir: &Path, kind: &str, tag: &str) -> Vec<String> {
    vec![
        "--tool=callgrind".into(),
        format!("--callgrind-out-file={}/{kind}-{tag}.%p", dir.display()),
    ]
}

/// `what` as a dump's description given to `callgrind_control`, which
/// passes it through a shell: letters, digits, `.`, `:` and `-` only.
pub fn slug(what: &str) -> String {
    what.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Dump the counters of process `pid` (run under Callgrind), described
/// as [`slug`]`(what)` (`callgrind_control`, which waits until it is
/// done).
pub fn dump_process(pid: u32, what: &str) {
    let ok = std::process::Command::new("callgrind_control")
        .arg(format!("--dump={}", slug(what)))
        .arg(pid.to_string())
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("callgrind_control could not dump process {pid} ({what})");
    }
}

/// Total instructions (`Ir`) of one Callgrind output file, and its
/// description (`desc: Trigger: Client Request: …` from the bench's own
/// requests, `desc: Trigger: dump …` from `callgrind_control`), when it
/// has one.
fn read_dump(path: &Path) -> Option<(u64, Option<String>)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut total = None;
    let mut desc = None;
    for line in text.lines() {
        if let Some(t) = line
            .strip_prefix("totals: ")
            .or_else(|| line.strip_prefix("summary: "))
        {
            total = t.split_whitespace().next().and_then(|n| n.parse().ok());
        } else if let Some(d) = line
            .strip_prefix("desc: Trigger: Client Request: ")
            .or_else(|| line.strip_prefix("desc: Trigger: dump "))
        {
            desc = Some(d.to_string());
        }
    }
    Some((total?, desc))
}

/// The numbered dumps of one output file prefix (`PREFIX.N`), in order.
fn dumps(dir: &Path, prefix: &str) -> Vec<(u64, Option<String>)> {
    let mut v: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    let rest = name.strip_prefix(prefix)?.strip_prefix('.')?;
                    // `KIND-TAG.PID.N` or `bench.PID.N`: the part after
                    // the pid.
                    let n = rest.split('.').nth(1)?.parse().ok()?;
                    Some((n, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v.into_iter().filter_map(|(_, p)| read_dump(&p)).collect()
}

/// Instructions of the dump described `what` among the dumps of the
/// outputs named `PREFIX.PID.N` (a process of the daemon route), `what`
/// as [`dump_process`] was given it.
pub fn process_dump(dir: &Path, prefix: &str, what: &str) -> Option<u64> {
    let what = slug(what);
    dumps(dir, prefix)
        .into_iter()
        .find(|(_, d)| d.as_deref() == Some(what.as_str()))
        .map(|(ir, _)| ir)
}

/// The in-process blocks' counts: (description, instructions per call).
pub fn bench_per_call(dir: &Path) -> Vec<(String, f64)> {
    dumps(dir, "bench")
        .into_iter()
        .filter_map(|(ir, desc)| {
            let desc = desc?;
            let calls: f64 = desc.rsplit('|').next()?.parse().ok()?;
            Some((desc, ir as f64 / calls))
        })
        .collect()
}
