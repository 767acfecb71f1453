//! Fuzz target: name and occurrence lookup (`scry_ops::resolve`, and the
//! syntactic index's lookups) on arbitrary text and names. The checks live
//! in `scry_ops::fuzzing::names`, shared with the unit test that replays
//! fuzz/corpus/name_lookup on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    scry_ops::fuzzing::names::check_names(data);
});
