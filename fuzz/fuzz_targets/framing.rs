//! Fuzz target: LSP base-protocol framing (crates/scry-rpc). The checks live in
//! `scry_rpc::fuzzing`, shared with the unit test that replays
//! fuzz/corpus/framing on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scry_rpc::fuzzing::check_framing(data);
});
