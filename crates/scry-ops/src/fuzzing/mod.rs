//! The checks of scry-ops' fuzz targets (`fuzz/`), one file per target,
//! shared with the unit tests that replay each target's committed corpus on
//! stable (`scry_testkit::replay_corpus`). Not an API: only compiled for
//! tests and with the `fuzzing` feature.
//!
//! - [`names`]: `name_lookup` (name and occurrence lookups).
//!
//! The edit and journal checks (`workspace_edit`, `journal_recover`) are
//! the edit leaf's: `scry_edit::fuzzing`.

pub mod names;
