//! The CLI's `diag --changes` baseline between runs: a JSON file per
//! workspace in `scry_base::dirs::changes()` (`<state dir>/changes`),
//! named `<workspace name>-<hash of its path>.json` (the edit journal's
//! workspace key, `scry_edit::journal::workspace_key`). The file is the
//! truth, in-process and in the daemon alike: each `--changes` question
//! loads it into the engine before and saves the engine's baseline after,
//! atomically (temporary file + rename).

use std::path::{Path, PathBuf};

use scry_ops::Engine;

/// The baseline file of workspace `root`.
pub fn baseline_file(root: &Path) -> Option<PathBuf> {
    let dir = scry_base::dirs::changes()?.join(scry_edit::journal::workspace_key(root));
    Some(dir.with_extension("json"))
}

/// Load the saved baseline into the engine, replacing what it held (none
/// or unreadable: an empty one — never another session's left behind).
pub fn load(engine: &Engine) {
    let saved = baseline_file(engine.workspace().root())
        .and_then(|file| std::fs::read_to_string(file).ok())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(serde_json::Value::Null);
    engine.import_changes_baseline(&saved);
}

/// Save the engine's baseline; a failure is a warning for the user.
pub fn save(engine: &Engine) -> Result<(), String> {
    let Some(file) = baseline_file(engine.workspace().root()) else {
        return Err("no state directory (HOME unset): the --changes baseline is not kept".into());
    };
    let text = engine.export_changes_baseline().to_string();
    let tmp = file.with_extension(format!("json.{}.tmp", std::process::id()));
    let result = file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|_| std::fs::write(&tmp, text))
        .and_then(|_| std::fs::rename(&tmp, &file));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!(
            "cannot save the --changes baseline to {}: {e}",
            file.display()
        )
    })
}
