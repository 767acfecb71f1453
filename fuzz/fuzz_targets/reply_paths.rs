//! Fuzz target: file names of arbitrary bytes through the daemon's reply
//! path (crates/scry-daemon proto.rs, scry-ops os_path.rs). The checks live
//! in `scry_daemon::fuzzing`, shared with the unit tests that replay
//! fuzz/corpus/reply_paths on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scry_daemon::fuzzing::check_reply_paths(data);
});
