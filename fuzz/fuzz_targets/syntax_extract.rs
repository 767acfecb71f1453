//! Fuzz target: the syntactic extractor (crates/scry-syntax) on arbitrary
//! bytes, the language chosen by the first byte. The checks live in
//! `scry_syntax::fuzzing`, shared with the unit test that replays
//! fuzz/corpus/syntax_extract on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scry_syntax::fuzzing::check_extract(data);
});
