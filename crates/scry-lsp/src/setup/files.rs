//! Reading and replacing a client's configuration file for `scry setup`.
//!
//! Invariants:
//! - A file that is a symbolic link is edited where the link leads (a
//!   dotfiles repository keeps working; the link is never replaced by a
//!   plain file); a link that leads nowhere is an error.
//! - Before a file is changed, it is copied to `<file>.scry-backup`
//!   beside it (the real file, behind any link), with its permissions.
//! - The new text is written to a temporary file in the same directory,
//!   synced, given the old file's permissions (`~/.claude.json` is often
//!   0600), and renamed over the file (`scry_edit`'s atomic replace): the
//!   file holds the old text or the new, never part of either.
//! - Only regular UTF-8 files are read (`scry_base::disk`); anything else
//!   is an error and nothing is written.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The largest configuration file read (`~/.claude.json` keeps a history
/// and grows; far below this).
const LIMIT: u64 = 64 * 1024 * 1024;

/// The file to read and write for `path`: itself, or where its link leads.
pub fn real_path(path: &Path) -> Result<PathBuf, String> {
    match path.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => scry_base::paths::canonical(path).map_err(|e| {
            format!(
                "{} is a symbolic link that leads nowhere readable ({e}); fix or remove the link",
                path.display()
            )
        }),
        _ => Ok(path.to_path_buf()),
    }
}

/// The text of `path`, `None` when there is no such file.
pub fn read(path: &Path) -> Result<Option<String>, String> {
    if path.symlink_metadata().is_err() {
        return Ok(None);
    }
    match scry_base::disk::read_text(path, LIMIT) {
        Ok(Some(text)) => Ok(Some(text)),
        Ok(None) => Err(format!("{} is not UTF-8 text", path.display())),
        Err(e) => Err(e.to_string()),
    }
}

/// The backup of `path`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".scry-backup");
    path.with_file_name(name)
}

/// Replace `path`'s text with `text` (see the module's invariants); the
/// backup's path when there was a file to back up.
pub fn replace(path: &Path, old: Option<&str>, text: &str) -> Result<Option<PathBuf>, String> {
    let fail = |what: &str, e: std::io::Error| format!("cannot {what} {}: {e}", path.display());
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| fail("make the directory of", e))?;
    // Copied, so the backup has the file's permissions too: a private
    // file (`~/.claude.json` holds tokens) is never backed up readable.
    let backup = match old {
        Some(_) => {
            let b = backup_path(path);
            std::fs::copy(path, &b).map_err(|e| fail("back up", e))?;
            Some(b)
        }
        None => None,
    };
    let perms = path.metadata().ok().map(|m| m.permissions());
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(path.file_name().unwrap_or_default());
    tmp_name.push(format!(".scry-tmp-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let staged = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        // The file's permissions before its text: a private file's text
        // is never in a readable one.
        if let Some(p) = perms {
            std::fs::set_permissions(&tmp, p)?;
        }
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        scry_edit::platform::replace::rename(&tmp, path)?;
        scry_edit::platform::replace::sync_dir(dir)
    })();
    if let Err(e) = staged {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail("write", e));
    }
    Ok(backup)
}
