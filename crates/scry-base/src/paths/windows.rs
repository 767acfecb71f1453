//! Windows' path rules as plain functions over text, so that they run (and
//! are tested) on every platform; `super` applies them where the OS is
//! Windows (`crate::platform::OS`).
//!
//! - A path is a prefix (a drive `C:`, a UNC share `\\server\share`, either
//!   behind the verbatim `\\?\` that `canonicalize` adds, or a `\\.\`
//!   device), whether it is rooted, and its components; `\` and `/` both
//!   separate, empty and `.` components are nothing.
//! - Two paths name one place when their prefixes and components are equal
//!   ignoring case (`C:\Repo` and `c:\repo\` are one workspace) and the
//!   verbatim prefix (`\\?\C:\x` is `C:\x`, `\\?\UNC\s\h` is `\\s\h`).
//!   Case is folded per character (`char::to_lowercase`), the common
//!   approximation of NTFS's own upper-case table.
//! - [`strip_verbatim`] is the spelling a server or a person sees: the
//!   `\\?\` prefix removed where the path means the same without it (a
//!   drive or UNC path under `MAX_PATH` with no `.`/`..` component, no
//!   component ending in a dot or a space and no device name), kept
//!   where removing it would change what the path names.
//! - [`device_name`]: the names the OS turns into devices in every
//!   directory, whatever the extension: `CON`, `PRN`, `AUX`, `NUL`,
//!   `COM0`–`COM9`, `LPT0`–`LPT9` (and `¹²³`), `CONIN$`, `CONOUT$`.
//! - [`relativise_text`]: a root removed from foreign text however a
//!   server spells it (either separator, any case).
//! - [`RUNNABLE_EXTENSIONS`] / [`runnable`]: what makes a file a program
//!   scry can start (Windows has no executable bit): `.exe` and `.com`
//!   started directly, `.bat` and `.cmd` through `cmd.exe` with the
//!   arguments quoted as Rust's std quotes them for a batch file. Other
//!   `PATHEXT` entries (`.js`, `.vbs`, `.msc`) need a host program that
//!   `CreateProcess` does not start, so they are no executables here.
//! - [`program_extensions`] and [`program_names`]: the names under which a
//!   command is found, by `PATHEXT` (`.COM;.EXE;.BAT;.CMD` when unset), in
//!   its order, ignoring case, keeping only [`RUNNABLE_EXTENSIONS`]: npm's
//!   `tsserver.cmd` is found as `tsserver`, and its extensionless sibling
//!   (a `sh` script) never is.

/// The longest path Windows takes without the verbatim prefix
/// (`MAX_PATH`, 260, less the terminating NUL).
const MAX_PATH: usize = 259;

fn is_sep(c: char) -> bool {
    c == '\\' || c == '/'
}

/// The extensions of the files scry can start, lower case, without the dot.
pub const RUNNABLE_EXTENSIONS: [&str; 4] = ["exe", "com", "bat", "cmd"];

/// Whether the file name `name` has one of [`RUNNABLE_EXTENSIONS`] (in
/// any case).
pub fn runnable(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && RUNNABLE_EXTENSIONS
                .iter()
                .any(|r| r.eq_ignore_ascii_case(ext))
    })
}

/// Whether `name` (a file name, no separator) is one Windows makes a device.
pub fn device_name(name: &str) -> bool {
    let stem = name.split(['.', ':']).next().unwrap_or("");
    let stem = stem.trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" => true,
        _ => {
            let Some(n) = upper
                .strip_prefix("COM")
                .or_else(|| upper.strip_prefix("LPT"))
            else {
                return false;
            };
            let mut cs = n.chars();
            matches!((cs.next(), cs.next()),
                (Some(c), None) if c.is_ascii_digit() || matches!(c, '¹' | '²' | '³'))
        }
    }
}

/// Whether `path` is in the device namespace (`\\.\COM1`, `\\?\GLOBALROOT\…`,
/// `\\.\pipe\x`): never a workspace file.
pub fn device_path(path: &str) -> bool {
    let b = path.as_bytes();
    let lead = |i: usize| b.get(i).is_some_and(|&c| c == b'\\' || c == b'/');
    if !(lead(0) && lead(1) && lead(3)) {
        return false;
    }
    match b.get(2) {
        Some(b'.') => true,
        Some(b'?') => path[4..]
            .split(is_sep)
            .next()
            .is_some_and(|c| c.eq_ignore_ascii_case("GLOBALROOT")),
        _ => false,
    }
}

/// `path` without the verbatim prefix, where that changes nothing it names.
pub fn strip_verbatim(path: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let Some(rest) = path.strip_prefix(r"\\?\") else {
        return Cow::Borrowed(path);
    };
    let plain: Cow<str> = match rest.get(..4) {
        Some(unc) if unc.eq_ignore_ascii_case(r"UNC\") => Cow::Owned(format!(r"\\{}", &rest[4..])),
        _ if drive(rest).is_some() => Cow::Borrowed(rest),
        _ => return Cow::Borrowed(path),
    };
    let (_, _, comps) = parts(&plain);
    let safe = plain.len() <= MAX_PATH
        && !plain.contains('/')
        && comps
            .iter()
            .all(|c| *c != ".." && !c.ends_with('.') && !c.ends_with(' ') && !device_name(c))
        && !rest.split('\\').any(|c| c == ".");
    if safe { plain } else { Cow::Borrowed(path) }
}

/// The drive letter `path` starts with (`C:`), if any.
fn drive(path: &str) -> Option<char> {
    let mut cs = path.chars();
    match (cs.next(), cs.next()) {
        (Some(l), Some(':')) if l.is_ascii_alphabetic() => Some(l),
        _ => None,
    }
}

/// `path` split: its prefix folded for comparison (`c:`, `\\server\share`,
/// empty for none), whether it is rooted, and its components as written
/// (empty and `.` left out). The verbatim prefix is taken away first.
pub fn parts(path: &str) -> (String, bool, Vec<&str>) {
    let path = match path.strip_prefix(r"\\?\") {
        Some(rest)
            if rest
                .get(..4)
                .is_some_and(|u| u.eq_ignore_ascii_case(r"UNC\")) =>
        {
            // `\\?\UNC\server\share\x` is `\\server\share\x`: parse the rest
            // as a UNC path by its components.
            return unc(&rest[4..]);
        }
        Some(rest) => rest,
        None => path,
    };
    let mut chars = path.chars();
    if chars.next().is_some_and(is_sep) && chars.next().is_some_and(is_sep) {
        return unc(&path[2..]);
    }
    let (prefix, rest) = match drive(path) {
        Some(l) => (format!("{}:", l.to_ascii_lowercase()), &path[2..]),
        None => (String::new(), path),
    };
    let rooted = rest.starts_with(is_sep);
    (prefix, rooted, components(rest))
}

/// The parts of a UNC path after its leading `\\`.
fn unc(after: &str) -> (String, bool, Vec<&str>) {
    let mut comps = components(after).into_iter();
    let server = comps.next().unwrap_or("");
    let share = comps.next().unwrap_or("");
    (
        format!(r"\\{}\{}", fold(server), fold(share)),
        true,
        comps.collect(),
    )
}

fn components(rest: &str) -> Vec<&str> {
    rest.split(is_sep)
        .filter(|c| !c.is_empty() && *c != ".")
        .collect()
}

/// `s` with its case folded (the comparison key of a name).
fn fold(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).collect()
}

/// The components of `path` below `root` (as `path` spells them), when
/// `path` is `root` or lies under it by Windows' rules; `None` otherwise.
pub fn strip_root<'a>(path: &'a str, root: &str) -> Option<Vec<&'a str>> {
    let (pp, pr, pc) = parts(path);
    let (rp, rr, rc) = parts(root);
    if pp != rp || pr != rr || rc.len() > pc.len() {
        return None;
    }
    let same = pc.iter().zip(&rc).all(|(a, b)| fold(a) == fold(b));
    same.then(|| pc[rc.len()..].to_vec())
}

/// Whether `path` is `root` or lies under it, by Windows' rules.
pub fn is_under(path: &str, root: &str) -> bool {
    strip_root(path, root).is_some()
}

/// `PATHEXT` when it is unset or names nothing: Windows' own default order.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The program extensions of a `PATHEXT` value (`;`-separated, any case;
/// `None`, or nothing runnable in it, is [`DEFAULT_PATHEXT`]): lower
/// case, with the dot, in `PATHEXT`'s order, each once, only
/// [`RUNNABLE_EXTENSIONS`] (`.VBS`, `.PY`, `.PS1` need a host program: a
/// file association, which is a shell's business).
pub fn program_extensions(pathext: Option<&str>) -> Vec<String> {
    let parse = |v: &str| {
        let mut out: Vec<String> = Vec::new();
        for e in v.split(';').map(str::trim) {
            let Some(bare) = e.strip_prefix('.') else {
                continue;
            };
            let e = format!(".{}", bare.to_ascii_lowercase());
            if RUNNABLE_EXTENSIONS.contains(&&e[1..]) && !out.contains(&e) {
                out.push(e);
            }
        }
        out
    };
    match pathext.map(parse) {
        Some(exts) if !exts.is_empty() => exts,
        _ => parse(DEFAULT_PATHEXT),
    }
}

/// The file names under which the command `name` (a file name, no
/// separator) is a program, in the order they are tried in one directory:
/// `name` itself when it is [`runnable`] (`ruff.exe`, `npm.CMD`), else
/// `name` with each of `exts` ([`program_extensions`]) appended. Empty for
/// an empty name.
pub fn program_names(name: &str, exts: &[String]) -> Vec<String> {
    if name.is_empty() {
        return Vec::new();
    }
    if runnable(name) {
        return vec![name.to_string()];
    }
    exts.iter().map(|e| format!("{name}{e}")).collect()
}

/// `text` (a server's or a tool's words) with every `root` followed by a
/// separator removed, `root` matched as Windows names it: `\` and `/`
/// alike, letters in any case (`c:/Repo/src` for `C:\repo`), and only where
/// it starts a path (not inside a longer name). Nothing for an empty root.
pub fn relativise_text<'a>(text: &'a str, root: &str) -> std::borrow::Cow<'a, str> {
    use std::borrow::Cow;
    let root: Vec<char> = root.trim_end_matches(is_sep).chars().collect();
    if root.is_empty() {
        return Cow::Borrowed(text);
    }
    let same = |a: char, b: char| {
        a == b || (is_sep(a) && is_sep(b)) || a.to_lowercase().eq(b.to_lowercase())
    };
    let in_name = |c: char| c.is_alphanumeric() || is_sep(c) || matches!(c, '.' | '_' | '-' | ':');
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = root.len();
    let (mut out, mut last, mut i) = (String::new(), 0, 0);
    while i + n < chars.len() {
        let starts = i == 0 || !in_name(chars[i - 1].1);
        if starts
            && is_sep(chars[i + n].1)
            && root
                .iter()
                .zip(&chars[i..i + n])
                .all(|(r, (_, t))| same(*r, *t))
        {
            out.push_str(&text[last..chars[i].0]);
            last = chars.get(i + n + 1).map_or(text.len(), |c| c.0);
            i += n + 1;
        } else {
            i += 1;
        }
    }
    if last == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_text_loses_the_root_however_windows_spells_it() {
        let root = r"C:\ws\proj";
        assert_eq!(
            relativise_text(
                r"cannot read c:/ws/proj/src/a.py and C:\WS\PROJ\b.py (see C:\ws\project\b.py)",
                root
            ),
            r"cannot read src/a.py and b.py (see C:\ws\project\b.py)"
        );
        // A trailing separator on the root changes nothing; a root inside
        // a longer path is left; the root alone (no separator after) too.
        assert_eq!(relativise_text(r"at C:\ws\proj\x", r"C:\ws\proj\"), "at x");
        assert_eq!(
            relativise_text(r"D:\C:\ws\proj\x", root),
            r"D:\C:\ws\proj\x"
        );
        assert_eq!(relativise_text(r"in C:\ws\proj.", root), r"in C:\ws\proj.");
        assert_eq!(relativise_text(r"/ws/proj/a.rs", "/ws/proj"), "a.rs");
        assert_eq!(relativise_text("x", ""), "x");
    }

    #[test]
    fn a_runnable_file_has_a_program_extension_in_any_case() {
        for n in ["rg.exe", "RG.EXE", "npm.cmd", "x.Bat", "old.com", "a.b.exe"] {
            assert!(runnable(n), "{n}");
        }
        for n in [
            "rg",
            "tool.js",
            "x.vbs",
            "exe",
            ".exe",
            "a.exe.txt",
            "a.exe ",
        ] {
            assert!(!runnable(n), "{n}");
        }
    }

    #[test]
    fn program_extensions_follow_pathext_keeping_what_starts_without_a_shell() {
        let e = |v: Option<&str>| program_extensions(v);
        assert_eq!(e(None), [".com", ".exe", ".bat", ".cmd"]);
        assert_eq!(e(Some("")), e(None), "empty: the default");
        assert_eq!(
            e(Some(".PY;.VBS")),
            e(None),
            "nothing startable: the default"
        );
        assert_eq!(
            e(Some(".CMD;.exe;.JS;.Bat;.cmd; .COM ;;.PS1;.WSF;.MSC;exe;.")),
            [".cmd", ".exe", ".bat", ".com"],
            "order kept, case folded, duplicates, associations and dotless entries dropped"
        );
    }

    #[test]
    fn program_names_append_pathext_unless_the_name_has_one() {
        let exts = program_extensions(None);
        assert_eq!(
            program_names("tsserver", &exts),
            [
                "tsserver.com",
                "tsserver.exe",
                "tsserver.bat",
                "tsserver.cmd"
            ]
        );
        assert_eq!(program_names("ruff.EXE", &exts), ["ruff.EXE"]);
        assert_eq!(program_names("x.Cmd", &exts), ["x.Cmd"]);
        assert_eq!(
            program_names("pyright-langserver.js", &exts)[1],
            "pyright-langserver.js.exe",
            "an extension that is no program's is part of the name"
        );
        assert_eq!(program_names("clangd-18", &exts)[0], "clangd-18.com");
        assert_eq!(program_names("", &exts), Vec::<String>::new());
        let cmd_first = program_extensions(Some(".CMD;.EXE"));
        assert_eq!(
            program_names("gopls", &cmd_first),
            ["gopls.cmd", "gopls.exe"]
        );
    }

    #[test]
    fn device_names_whatever_the_case_and_extension() {
        for n in [
            "CON",
            "con",
            "Nul",
            "nul.txt",
            "COM1",
            "com9.py",
            "LPT1",
            "lpt0",
            "AUX.tar.gz",
            "PRN ",
            "NUL .rs",
            "CONIN$",
            "conout$",
            "COM¹",
            "nul:stream",
        ] {
            assert!(device_name(n), "{n}");
        }
        for n in [
            "CONSOLE", "con_", "nul2", "COM10", "COM", "LPT", "xnul", "a.con", "COMx", "", "¹¹",
            "é", "COM¹¹", "LPTé",
        ] {
            assert!(!device_name(n), "{n}");
        }
    }

    #[test]
    fn device_namespace_paths() {
        assert!(device_path(r"\\.\COM1"));
        assert!(device_path(r"\\.\pipe\scry"));
        assert!(device_path("//./PhysicalDrive0"));
        assert!(device_path(r"\\?\GLOBALROOT\Device\Null"));
        assert!(!device_path(r"\\?\C:\repo"));
        assert!(!device_path(r"\\server\share\a"));
        assert!(!device_path(r"C:\repo"));
        assert!(!device_path(r"\\"));
    }

    #[test]
    fn verbatim_prefix_stripped_only_where_it_means_the_same() {
        assert_eq!(strip_verbatim(r"\\?\C:\Repo\src\a.rs"), r"C:\Repo\src\a.rs");
        assert_eq!(
            strip_verbatim(r"\\?\UNC\server\share\a.rs"),
            r"\\server\share\a.rs"
        );
        assert_eq!(strip_verbatim(r"C:\Repo"), r"C:\Repo");
        assert_eq!(strip_verbatim("/home/a"), "/home/a");
        // Kept: without it the path would name something else.
        for keep in [
            r"\\?\C:\repo\CON",
            r"\\?\C:\repo\trailing.",
            r"\\?\C:\repo\space ",
            r"\\?\C:\repo\..\x",
            r"\\?\C:\a/b",
            r"\\?\Volume{1234}\x",
            r"\\?\GLOBALROOT\Device\Null",
        ] {
            assert_eq!(strip_verbatim(keep), keep);
        }
        let long = format!(r"\\?\C:\{}", "a".repeat(300));
        assert_eq!(strip_verbatim(&long), long);
    }

    #[test]
    fn one_workspace_whatever_the_case_separators_and_prefix() {
        assert!(is_under(r"c:\repo", r"C:\Repo"));
        assert!(is_under(r"C:\REPO\src\a.rs", r"c:\repo\"));
        assert!(is_under("C:/Repo/src\\a.rs", r"C:\Repo"));
        assert!(is_under(r"\\?\C:\Repo\a.rs", r"C:\repo"));
        assert!(is_under(r"C:\Repo\a.rs", r"\\?\c:\Repo"));
        assert!(is_under(r"C:\Repo\\src\.\a.rs", r"C:\Repo\src"));
        assert!(is_under(r"C:\Café\ÉTÉ.py", r"c:\café\"));
        assert_eq!(
            strip_root(r"c:\REPO\Src/A.rs", r"C:\Repo"),
            Some(vec!["Src", "A.rs"])
        );
        assert_eq!(strip_root(r"C:\Repo", r"c:\repo\"), Some(vec![]));
        // Other places.
        assert!(!is_under(r"C:\Repository\a.rs", r"C:\Repo"));
        assert!(!is_under(r"D:\Repo\a.rs", r"C:\Repo"));
        assert!(!is_under(r"C:\a.rs", r"C:\Repo"));
        assert!(!is_under(r"Repo\a.rs", r"C:\Repo"));
        assert!(!is_under(r"C:Repo\a.rs", r"C:\Repo"));
    }

    #[test]
    fn unc_shares_compare_by_server_and_share() {
        assert!(is_under(
            r"\\Server\Share\repo\a.rs",
            r"\\server\share\repo"
        ));
        assert!(is_under(
            r"\\?\UNC\server\share\repo\a",
            r"\\SERVER\share\Repo"
        ));
        assert!(is_under("//server/share/repo/a", r"\\server\share\repo"));
        assert!(!is_under(r"\\server\other\repo\a", r"\\server\share\repo"));
        assert!(!is_under(r"\\other\share\repo\a", r"\\server\share\repo"));
        assert!(!is_under(r"C:\share\repo\a", r"\\server\share\repo"));
    }

    #[test]
    fn climbing_out_is_a_component_whatever_the_separator() {
        // `..` is a component of its own with either separator, so the
        // lexical pass before any comparison (`super::normalise`, over the
        // OS's own components) resolves it; like `Path::starts_with`, the
        // comparison itself is lexical.
        assert_eq!(parts(r"C:\repo\..\x").2, vec!["repo", "..", "x"]);
        assert_eq!(parts("C:/repo\\../x").2, vec!["repo", "..", "x"]);
        assert_eq!(
            parts(r"..\..\x"),
            (String::new(), false, vec!["..", "..", "x"])
        );
    }
}
