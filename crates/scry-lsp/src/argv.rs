//! Guarding the command line before clap sees it: an argument that starts
//! with a single `-` and is longer than a short flag (`-h.py`, `-V.sh`) is a
//! file name, never a cluster of short flags; clap would take `-h.py` for
//! `-h` and print the help instead of answering. Such an argument is a usage
//! error that says how to name the file (`./-h.py`, or after `--`).
//! Everything after `--` is positional and never inspected.
//! Also the one way a `scry` command line (or a subcommand's) is parsed:
//! [`parse`], which prints clap's help or usage error and gives the exit
//! status (0 for `--help`/`--version`, 2 for bad usage).
//! And the one check of a workspace root a subcommand names
//! ([`workspace_dir`], [`not_a_directory`]): canonical, as the daemon and
//! the trust store key a workspace, and a directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Parse `argv` (the program name first) into `T`; on `--help`,
/// `--version` or a usage error, print clap's text and return the exit
/// status to end with.
pub fn parse<T: clap::Parser>(argv: impl IntoIterator<Item = OsString>) -> Result<T, ExitCode> {
    T::try_parse_from(argv).map_err(|e| {
        let code = if e.use_stderr() { 2 } else { 0 };
        let _ = e.print();
        ExitCode::from(code)
    })
}

/// `given` as a workspace root: canonical (`scry_base::paths::canonical`:
/// links resolved, no `\\?\` shown on Windows) and a directory; `None`
/// otherwise.
pub fn workspace_dir(given: &Path) -> Option<PathBuf> {
    scry_base::paths::canonical(given)
        .ok()
        .filter(|r| r.is_dir())
}

/// Refuse a root that [`workspace_dir`] refused: the usage error of
/// `scry <command>` (exit status 2).
pub fn not_a_directory(command: &str, given: &Path) -> ExitCode {
    eprintln!(
        "scry {command}: workspace root {} is not a directory (see scry {command} --help)",
        given.display()
    );
    ExitCode::from(2)
}

/// clap's parser for a `--timeout-ms`-like budget: a positive whole number
/// of milliseconds (seconds for the old `--timeout`), worded for the user.
pub fn positive_number(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("must be a positive whole number, got `{s}`")),
    }
}

/// The first argument (after the program name, before `--`) that looks
/// like a file name written as an option, with the message to show.
pub fn option_like_file(args: &[OsString]) -> Option<String> {
    for a in args.iter().skip(1) {
        let a = a.to_string_lossy();
        if a == "--" {
            return None;
        }
        let Some(rest) = a.strip_prefix('-') else {
            continue;
        };
        if rest.starts_with('-') || rest.chars().count() < 2 {
            continue; // a long option or a short flag
        }
        if rest.parse::<i64>().is_ok() {
            continue; // a negative number: the option's own check explains it
        }
        return Some(format!(
            "`{a}` is not an option; to name a file that starts with `-`, write `./{a}` \
             or put it after `--` (scry ACTION -- {a})"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn file_names_written_as_options_are_caught() {
        let m = option_like_file(&v(&["scry", "symbols", "-h.py"])).unwrap();
        assert!(m.contains("./-h.py") && m.contains("-- -h.py"), "{m}");
        assert!(option_like_file(&v(&["scry", "diag", "-V.sh"])).is_some());
        for ok in [
            &["scry", "symbols", "--", "-h.py"][..],
            &["scry", "symbols", "./-h.py"],
            &["scry", "-h"],
            &["scry", "-V"],
            &["scry", "refs", "a.py", "x", "--line", "-12"],
            &["scry", "refs", "a.py", "x", "--line=3", "--json"],
        ] {
            assert_eq!(option_like_file(&v(ok)), None, "{ok:?}");
        }
    }
}
