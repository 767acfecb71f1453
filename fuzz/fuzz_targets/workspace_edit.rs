//! Fuzz target: WorkspaceEdit validation, commit, rollback and undo (crates/scry-edit). The checks live in
//! `scry_edit::fuzzing::edit`, shared with the unit test that replays
//! fuzz/corpus/workspace_edit on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scry_edit::fuzzing::edit::check_edit(data);
});
