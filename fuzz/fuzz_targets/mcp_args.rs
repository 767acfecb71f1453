//! Fuzz target: MCP tool-argument validation (crates/scry-mcp args.rs). The checks live in
//! `scry_mcp::fuzzing`, shared with the unit test that replays
//! fuzz/corpus/mcp_args on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scry_mcp::fuzzing::check_args(data);
});
