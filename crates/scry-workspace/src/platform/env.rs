//! How the OS names environment variables: exactly on Unix; ignoring case
//! on Windows, where the system's search path is `Path` and `PATH`,
//! `path` and `Path` are one variable.
//!
//! [`name`] is the one spelling scry keeps a variable under: the name as
//! it is on Unix; upper case on Windows (as Python's `os.environ` spells
//! them there). `crate::env` folds every name it captures, compares or
//! passes on through it, so a Windows `Path` is captured, cleaned and
//! handed to a child as `PATH` — never left beside a cleaned `PATH`, where
//! Windows would pick either.
//!
//! Invariant: two names are one variable exactly when their [`name`]s are
//! equal.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};

/// The spelling of the variable `name` that scry keeps.
pub fn name(name: &str) -> Cow<'_, str> {
    imp::name(name)
}

/// [`name`] of an OS string (one that is not Unicode stays as it is).
pub fn name_os(name: OsString) -> OsString {
    match name.to_str() {
        Some(s) => match self::name(s) {
            Cow::Borrowed(_) => name,
            Cow::Owned(o) => o.into(),
        },
        None => name,
    }
}

/// Whether `a` and `b` name one variable.
pub fn same(a: &OsStr, b: &OsStr) -> bool {
    match (a.to_str(), b.to_str()) {
        (Some(a), Some(b)) => name(a) == name(b),
        _ => a == b,
    }
}

#[cfg(unix)]
mod imp {
    use std::borrow::Cow;

    pub fn name(name: &str) -> Cow<'_, str> {
        Cow::Borrowed(name)
    }
}

#[cfg(windows)]
mod imp {
    use std::borrow::Cow;

    pub fn name(name: &str) -> Cow<'_, str> {
        if name.chars().any(char::is_lowercase) {
            Cow::Owned(name.to_uppercase())
        } else {
            Cow::Borrowed(name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_as_the_os_compares_them() {
        assert!(same(OsStr::new("PATH"), OsStr::new("PATH")));
        assert_eq!(same(OsStr::new("Path"), OsStr::new("PATH")), cfg!(windows));
        assert_eq!(name("HOME"), "HOME");
        let folded = if cfg!(windows) { "PATH" } else { "Path" };
        assert_eq!(name("Path"), folded);
        assert_eq!(name_os("Path".into()), OsString::from(folded));
    }
}
