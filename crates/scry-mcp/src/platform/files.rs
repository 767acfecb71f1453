//! The HTTP endpoint's private files: a directory only its owner may enter
//! and files only its owner may read.
//!
//! Unix: directories created 0700, files 0600, and a file is private when
//! no group or other bit is set. Windows: no mode bits; the state
//! directory lies under the user's profile, whose inherited ACL keeps
//! other users out, so every file counts as private (its ACL is not read).

use std::fs::{DirBuilder, Metadata, OpenOptions};

/// Whether only the owner can read the file of `meta`.
pub fn is_private(meta: &Metadata) -> bool {
    imp::is_private(meta)
}

/// A recursive builder of directories only their owner may enter.
pub fn private_dirs() -> DirBuilder {
    let mut b = DirBuilder::new();
    b.recursive(true);
    imp::private_dir(&mut b);
    b
}

/// Make `opts` create files only their owner may read.
pub fn private_file(opts: &mut OpenOptions) {
    imp::private_file(opts)
}

/// Test support: the permission bits of `path`, where the OS has them.
#[cfg(test)]
pub fn mode(path: &std::path::Path) -> Option<u32> {
    imp::mode(path)
}

/// Test support: set the permission bits of `path`; false where the OS
/// has none (nothing done).
#[cfg(test)]
pub fn set_mode(path: &std::path::Path, mode: u32) -> bool {
    imp::set_mode(path, mode)
}

#[cfg(unix)]
mod imp {
    use std::fs::{DirBuilder, Metadata, OpenOptions};
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

    pub fn is_private(meta: &Metadata) -> bool {
        meta.permissions().mode() & 0o077 == 0
    }

    pub fn private_dir(b: &mut DirBuilder) {
        b.mode(0o700);
    }

    pub fn private_file(opts: &mut OpenOptions) {
        opts.mode(0o600);
    }

    #[cfg(test)]
    pub fn mode(path: &std::path::Path) -> Option<u32> {
        Some(std::fs::metadata(path).unwrap().permissions().mode() & 0o777)
    }

    #[cfg(test)]
    pub fn set_mode(path: &std::path::Path, mode: u32) -> bool {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        true
    }
}

#[cfg(not(unix))]
mod imp {
    use std::fs::{DirBuilder, Metadata, OpenOptions};

    pub fn is_private(_meta: &Metadata) -> bool {
        true
    }

    pub fn private_dir(_b: &mut DirBuilder) {}

    pub fn private_file(_opts: &mut OpenOptions) {}

    #[cfg(test)]
    pub fn mode(_path: &std::path::Path) -> Option<u32> {
        None
    }

    #[cfg(test)]
    pub fn set_mode(_path: &std::path::Path, _mode: u32) -> bool {
        false
    }
}
