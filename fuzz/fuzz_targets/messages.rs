//! Fuzz target: JSON-RPC message decoding by a Connection (crates/scry-rpc). The checks live in
//! `scry_rpc::fuzzing`, shared with the unit test that replays
//! fuzz/corpus/messages on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scry_rpc::fuzzing::check_messages(data);
});
