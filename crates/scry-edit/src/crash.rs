//! TEST HOOK, not a feature: `SCRY_TEST_CRASH_AT=<point>` makes the
//! writing process kill itself (SIGKILL on Unix, `TerminateProcess` on
//! Windows: [`crate::platform::process`]) at that point of an edit, so tests can
//! prove that recovery ([`crate::journal::Journal::recover`]) brings every
//! file back whatever the moment of a crash (an OOM kill, a power cut).
//! Compiled into debug builds only (`cfg(debug_assertions)`, like
//! `scry_ops::isolate::test_panic_hook`): the tests run debug binaries; a
//! release or dist build never reads the variable, and the points are
//! no-ops (`scripts/test-packages` checks that the dist binary holds no
//! `SCRY_TEST_` name). Unset, a debug build does nothing but read it — the
//! calling client's, through the daemon (`scry_base::dirs::var_os`, which
//! reads the call's environment scry-workspace scopes).
//!
//! Points, in the order an edit reaches them:
//! - `before-journal`: the plan is validated, nothing is written yet;
//! - `after-journal`: the `pending` entry (before-images, manifest) is
//!   durable, no file of the workspace is touched;
//! - `after-stage-N`: the N-th (1-based, plan order) new content is staged
//!   in its temporary file;
//! - `after-replace-N`: the N-th file is replaced (renamed into place, or
//!   removed);
//! - `before-close`: every file holds its after-image, the entry is still
//!   `pending`.
//!
//! The same points are passed by an `undo`, which is journaled the same way.

/// The variable naming the point.
pub const ENV: &str = "SCRY_TEST_CRASH_AT";

/// The point `SCRY_TEST_CRASH_AT` names.
#[cfg(debug_assertions)]
fn named() -> Option<std::ffi::OsString> {
    scry_base::dirs::var_os(ENV)
}

/// A release build has no test hook: no point is ever named.
#[cfg(not(debug_assertions))]
fn named() -> Option<std::ffi::OsString> {
    None
}

/// Die here when `SCRY_TEST_CRASH_AT` names `point`.
pub(crate) fn point(point: &str) {
    if named().is_some_and(|v| v == point) {
        die();
    }
}

/// Die here when `SCRY_TEST_CRASH_AT` is `<prefix>-<n>`.
pub(crate) fn point_n(prefix: &str, n: usize) {
    if let Some(v) = named()
        && v.to_str()
            .and_then(|v| v.strip_prefix(prefix)?.strip_prefix('-'))
            .is_some_and(|k| k == n.to_string())
    {
        die();
    }
}

fn die() -> ! {
    crate::platform::process::die()
}
