//! Command lookup: finding a server's or linter's executable, the way a
//! shell would but without one.
//!
//! Invariants: the result is an absolute path to a program (an
//! executable regular file on Unix; on Windows a file under a name the
//! call's `PATHEXT` gives, [`scry_base::platform::fs::program_candidates`],
//! so npm's `tsserver.cmd` is found as `tsserver` and never its
//! extensionless `sh` twin); a command with a separator is resolved
//! against the workspace root and never searched; project-local bin directories are searched first
//! only for a trusted workspace; relative `PATH` entries are ignored; for an
//! untrusted workspace nothing inside it is found through `PATH` either (an
//! absolute entry inside it, or a symlink resolving into it: project-local,
//! [`scry_base::paths::project_local`], passed over and reported like a
//! project bin dir's).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use scry_base::paths::{normalise, project_local};
use scry_base::platform::fs;

/// Find an executable: if `command` contains a '/', resolve it relative to
/// the workspace root (`~/` is the home directory, [`scry_base::dirs::home`]) and check it is an
/// executable file; else look in project-local bin dirs first
/// (`<root>/node_modules/.bin`, `<root>/.venv/bin`, `<root>/venv/bin`) then
/// each absolute `PATH` entry. In each place the names of
/// [`fs::program_candidates`] are tried (`PATHEXT` on Windows). Returns the
/// absolute path or `None`. No shell.
pub fn resolve_command(command: &str, workspace_root: &Path) -> Option<PathBuf> {
    resolve_command_in(
        command,
        workspace_root,
        crate::env::var_os("PATH").as_deref(),
    )
}

/// [`resolve_command`] for an untrusted workspace: the project-local bin
/// dirs are not searched (`PATH` only; a command with a '/' still resolves,
/// as only trusted configuration can name one). The second value is the
/// project-local executable that was passed over, if any.
pub fn resolve_command_untrusted(
    command: &str,
    workspace_root: &Path,
) -> (Option<PathBuf>, Option<PathBuf>) {
    let path_var = crate::env::var_os("PATH");
    resolve_command_local(command, workspace_root, path_var.as_deref(), false)
}

/// [`resolve_command`] with an explicit `PATH` value.
pub fn resolve_command_with_path(
    command: &str,
    workspace_root: &Path,
    path_var: Option<&OsStr>,
) -> Option<PathBuf> {
    resolve_command_in(command, workspace_root, path_var)
}

fn resolve_command_in(
    command: &str,
    workspace_root: &Path,
    path_var: Option<&OsStr>,
) -> Option<PathBuf> {
    resolve_command_local(command, workspace_root, path_var, true).0
}

/// The command found (project-local dirs searched first when `local`), and
/// when not `local`, the project-local executable passed over.
fn resolve_command_local(
    command: &str,
    workspace_root: &Path,
    path_var: Option<&OsStr>,
    local: bool,
) -> (Option<PathBuf>, Option<PathBuf>) {
    resolve_command_search(command, workspace_root, path_var, local)
}

/// The lookup (see [`resolve_command`]); `trusted`: the project-local bin
/// dirs first, and what lies inside the workspace may be found. Untrusted,
/// the second value is the project-local executable passed over (a
/// project bin dir's, else one a `PATH` entry reached inside the
/// workspace).
fn resolve_command_search(
    command: &str,
    workspace_root: &Path,
    path_var: Option<&OsStr>,
    trusted: bool,
) -> (Option<PathBuf>, Option<PathBuf>) {
    if command.is_empty() {
        return (None, None);
    }
    let absolute = |p: PathBuf| std::path::absolute(&p).ok().map(|p| normalise(&p));
    // '/' everywhere, '\\' too on Windows.
    if command.chars().any(std::path::is_separator) {
        // `~/` is the home directory (scry_base::dirs::home).
        let Some(p) = scry_base::dirs::expand_home(command) else {
            return (None, None);
        };
        let p = workspace_root.join(p);
        return (executable_in(&p).and_then(absolute), None);
    }
    let local = [
        workspace_root.join("node_modules").join(".bin"),
        workspace_root.join(".venv").join("bin"),
        workspace_root.join("venv").join("bin"),
        workspace_root.join(".venv").join("Scripts"),
    ];
    let path_dirs = path_var
        .map(|v| std::env::split_paths(v).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|d| !d.as_os_str().is_empty() && d.is_absolute());
    if trusted {
        let found = local
            .into_iter()
            .chain(path_dirs)
            .find_map(|dir| executable_in(&dir.join(command)))
            .and_then(absolute);
        return (found, None);
    }
    let mut reached_inside = None;
    let mut found = None;
    for dir in path_dirs {
        let Some(p) = executable_in(&dir.join(command)) else {
            continue;
        };
        if project_local(&p, workspace_root) {
            reached_inside.get_or_insert(p);
            continue;
        }
        found = absolute(p);
        break;
    }
    let skipped = local
        .iter()
        .find_map(|dir| executable_in(&dir.join(command)))
        .or(reached_inside)
        .and_then(absolute);
    (found, skipped)
}

/// Where a program started with `path_var` as its `PATH` finds `name` (a
/// bare name): the first absolute entry holding it, as found there (not
/// made canonical: a virtual environment's `python` is a link to its base
/// interpreter, and the environment is what differs).
pub fn on_path(name: &str, path_var: &OsStr) -> Option<PathBuf> {
    if name.is_empty() || name.chars().any(std::path::is_separator) {
        return None;
    }
    std::env::split_paths(path_var)
        .filter(|d| d.is_absolute())
        .find_map(|dir| executable_in(&dir.join(name)))
}

/// The first of the names the program `path` may have that is an
/// executable file ([`scry_base::platform::fs::program_candidates`]:
/// `path` itself on Unix; on Windows `path` with the extensions of the
/// call's `PATHEXT`).
pub(crate) fn executable_in(path: &Path) -> Option<PathBuf> {
    let pathext = crate::env::var_os("PATHEXT");
    fs::program_candidates(path, pathext.as_deref())
        .into_iter()
        .find(|p| fs::is_executable(p))
}

#[cfg(test)]
mod tests {
    // The tests make executables with mode bits: Unix only (Windows' rule,
    // a program extension, is tested in scry_base::platform::fs).
    #[cfg(unix)]
    use super::*;
    #[cfg(unix)]
    use std::fs;

    #[cfg(unix)]
    #[test]
    fn resolve_command_on_custom_path() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        let bin = tmp.path().join("bin");
        let local = root.join("node_modules/.bin");
        fs::create_dir_all(&bin).unwrap();
        fs::create_dir_all(&local).unwrap();
        let make = |p: &Path, mode: u32| {
            fs::write(p, "#!/bin/sh\n").unwrap();
            fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
        };
        make(&bin.join("tool"), 0o755);
        make(&bin.join("plain"), 0o644);
        make(&bin.join("both"), 0o755);
        make(&local.join("both"), 0o755);
        fs::create_dir(bin.join("dir")).unwrap();
        let path_var = std::env::join_paths(["relative/bin".into(), bin.clone()]).unwrap();
        let find = |c: &str| resolve_command_in(c, &root, Some(&path_var));
        assert_eq!(find("tool"), Some(bin.join("tool")));
        assert_eq!(find("plain"), None);
        assert_eq!(find("dir"), None);
        assert_eq!(find("missing"), None);
        assert_eq!(find(""), None);
        assert_eq!(find("both"), Some(local.join("both")));
        assert_eq!(resolve_command_in("tool", &root, None), None);
        // with a slash: relative to the workspace root, never searched
        assert_eq!(find("node_modules/.bin/both"), Some(local.join("both")));
        assert_eq!(find("../bin/tool"), Some(bin.join("tool")));
        assert_eq!(find("../bin/plain"), None);
        assert_eq!(
            find(bin.join("tool").to_str().unwrap()),
            Some(bin.join("tool"))
        );
    }

    #[cfg(unix)]
    #[test]
    fn untrusted_lookup_skips_project_bins() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        let bin = tmp.path().join("bin");
        for d in [
            root.join("node_modules/.bin"),
            root.join(".venv/bin"),
            bin.clone(),
        ] {
            fs::create_dir_all(&d).unwrap();
        }
        for p in [
            root.join("node_modules/.bin/tool"),
            root.join(".venv/bin/ruff"),
            bin.join("tool"),
        ] {
            fs::write(&p, "#!/bin/sh\n").unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path_var = bin.clone().into_os_string();
        let find = |c: &str| resolve_command_local(c, &root, Some(&path_var), false);
        assert_eq!(
            find("tool"),
            (
                Some(bin.join("tool")),
                Some(root.join("node_modules/.bin/tool"))
            )
        );
        assert_eq!(find("ruff"), (None, Some(root.join(".venv/bin/ruff"))));
        assert_eq!(find("other"), (None, None));
        // trusted: the project's own first
        assert_eq!(
            resolve_command_local("ruff", &root, Some(&path_var), true).0,
            Some(root.join(".venv/bin/ruff"))
        );
    }

    #[cfg(unix)]
    #[test]
    fn untrusted_lookup_finds_nothing_inside_the_workspace_through_path() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        let root = base.join("ws");
        let sys = base.join("sys");
        let links = base.join("links");
        for d in [root.join("bin"), sys.clone(), links.clone()] {
            fs::create_dir_all(&d).unwrap();
        }
        for p in [
            root.join("bin/pyright-langserver"),
            root.join("bin/ruff"),
            sys.join("ruff"),
        ] {
            fs::write(&p, "#!/bin/sh\n").unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        }
        // A symlink from outside into the workspace.
        std::os::unix::fs::symlink(
            root.join("bin/pyright-langserver"),
            links.join("pyright-langserver"),
        )
        .unwrap();
        let path_var =
            std::env::join_paths([root.join("bin"), links.clone(), sys.clone()]).unwrap();
        let find =
            |c: &str, trusted: bool| resolve_command_local(c, &root, Some(&path_var), trusted);
        assert_eq!(
            find("pyright-langserver", false),
            (None, Some(root.join("bin/pyright-langserver"))),
            "an absolute PATH entry inside an untrusted workspace is project-local"
        );
        assert_eq!(
            find("ruff", false),
            (Some(sys.join("ruff")), Some(root.join("bin/ruff")))
        );
        let via_link = std::env::join_paths([links.clone()]).unwrap();
        assert_eq!(
            resolve_command_local("pyright-langserver", &root, Some(&via_link), false),
            (None, Some(links.join("pyright-langserver"))),
            "a symlink resolving into the workspace too"
        );
        // Trusted: found where PATH says.
        assert_eq!(
            find("pyright-langserver", true).0,
            Some(root.join("bin/pyright-langserver"))
        );
        assert_eq!(find("ruff", true).0, Some(root.join("bin/ruff")));
        assert!(project_local(&root.join("bin"), &root));
        assert!(project_local(&root.join("no/such/dir"), &root));
        assert!(!project_local(&sys, &root));
    }
}
