//! Fuzz target: LineIndex conversions (crates/scry-text). The checks live in
//! `scry_text::fuzzing`, shared with the unit test that replays
//! fuzz/corpus/line_index on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scry_text::fuzzing::check_line_index(data);
});
