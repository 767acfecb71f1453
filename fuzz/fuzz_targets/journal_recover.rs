//! Fuzz target: recovery of a dead writer's edit journal entry (crates/scry-edit journal) on
//! arbitrary journal content and file states. The checks live in
//! `scry_edit::fuzzing::journal`, shared with the unit test that replays
//! fuzz/corpus/journal_recover on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scry_edit::fuzzing::journal::check_recover(data);
});
