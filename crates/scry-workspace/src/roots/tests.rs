//! The root recipes on the layouts real repositories have: the fixtures
//! of `fixtures/monorepo` (a copy each), and the rules one by one.

use super::*;
use crate::catalog;
use std::fs;

fn spec(id: &str) -> ServerSpec {
    catalog::builtins()
        .into_iter()
        .find(|s| s.id == id)
        .unwrap()
}

/// A copy of `fixtures/monorepo/<name>` (canonical path) in a temp dir.
fn layout(name: &str) -> (tempfile::TempDir, PathBuf) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/monorepo")
        .join(name);
    let tmp = tempfile::tempdir().unwrap();
    let to = scry_base::paths::canonical(tmp.path()).unwrap().join(name);
    copy(&from, &to);
    (tmp, to)
}

fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &t);
        } else {
            fs::copy(e.path(), &t).unwrap();
        }
    }
}

/// No several-packages walk in these tests unless one is given.
fn no_walk(_: &[String]) -> Vec<PathBuf> {
    Vec::new()
}

/// What a workspace file at `file` (with `key`, when one) chooses.
fn by(file: PathBuf, key: Option<&str>) -> RootChoice {
    RootChoice::Workspace {
        file,
        key: key.map(String::from),
    }
}

fn root_of(id: &str, ws: &Path, rel: &str) -> Chosen {
    choose(
        &spec(id),
        &ws.join(rel),
        ws,
        &RootFiles::default(),
        &no_walk,
    )
}

#[test]
fn cargo_members_share_the_workspace_root_and_an_excluded_crate_is_its_own() {
    let (_t, ws) = layout("cargo");
    for f in [
        "crates/app/src/main.rs",
        "crates/core/src/lib.rs",
        "crates/tools/src/lib.rs",
    ] {
        let c = root_of("rust-analyzer", &ws, f);
        assert_eq!(c.root, ws, "{f}");
        assert_eq!(c.why, by(ws.join("Cargo.toml"), Some("workspace")));
    }
    // Excluded from the root's workspace, a workspace of its own.
    let c = root_of("rust-analyzer", &ws, "scratch/src/main.rs");
    assert_eq!(c.root, ws.join("scratch"));
    assert!(
        matches!(c.why, RootChoice::Workspace { ref file, .. } if file == &ws.join("scratch/Cargo.toml"))
    );
    // A crate the members do not name is its own root.
    fs::create_dir_all(ws.join("loose/src")).unwrap();
    fs::write(ws.join("loose/Cargo.toml"), "[package]\nname = \"loose\"\n").unwrap();
    let c = root_of("rust-analyzer", &ws, "loose/src/main.rs");
    assert_eq!(c.root, ws.join("loose"));
    assert_eq!(
        c.why,
        RootChoice::Package {
            marker: ws.join("loose/Cargo.toml")
        }
    );
    // The workspace root's own package is a member.
    fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"top\"\n[workspace]\nmembers = [\"crates/*\"]\n",
    )
    .unwrap();
    fs::create_dir_all(ws.join("src")).unwrap();
    assert_eq!(root_of("rust-analyzer", &ws, "src/main.rs").root, ws);
    // Broken TOML claims nothing: the nearest marker.
    fs::write(ws.join("Cargo.toml"), "[workspace\nmembers = [").unwrap();
    assert_eq!(
        root_of("rust-analyzer", &ws, "crates/app/src/main.rs").root,
        ws.join("crates/app")
    );
}

#[test]
fn python_workspaces_uv_and_a_root_pyrightconfig() {
    let (_t, ws) = layout("uv");
    let c = root_of("pyright", &ws, "packages/app/src/app/main.py");
    assert_eq!(c.root, ws);
    assert_eq!(
        c.why,
        by(ws.join("pyproject.toml"), Some("tool.uv.workspace"))
    );
    assert_eq!(
        member_dirs(&c.root, &c.members),
        vec![ws.join("packages/app"), ws.join("packages/core")]
    );
    assert_eq!(
        root_of("pylsp", &ws, "packages/core/src/core_lib/__init__.py").root,
        ws
    );
    let (_t, ws) = layout("pyright");
    let c = root_of("pyright", &ws, "packages/core/src/core_lib/__init__.py");
    assert_eq!(c.root, ws);
    assert_eq!(c.why, by(ws.join("pyrightconfig.json"), None));
    assert_eq!(c.members, Members::None);
    // The package's own root without the top-level file.
    fs::remove_file(ws.join("pyrightconfig.json")).unwrap();
    assert_eq!(
        root_of("pyright", &ws, "packages/core/src/core_lib/__init__.py").root,
        ws.join("packages/core")
    );
}

#[test]
fn several_python_packages_share_the_workspace_root() {
    let (_t, ws) = layout("pyright");
    fs::remove_file(ws.join("pyrightconfig.json")).unwrap();
    let packages = |names: &[String]| -> Vec<PathBuf> {
        assert!(names.iter().any(|n| n == "pyproject.toml"));
        vec![ws.join("packages/app"), ws.join("packages/core")]
    };
    let c = choose(
        &spec("pyright"),
        &ws.join("packages/app/src/app/main.py"),
        &ws,
        &RootFiles::default(),
        &packages,
    );
    assert_eq!(c.root, ws);
    assert_eq!(c.why, RootChoice::SeveralPackages { packages: 2 });
    assert_eq!(member_dirs(&ws, &c.members).len(), 2);
    // One package: its own root.
    let one = |_: &[String]| vec![ws.join("packages/app")];
    let c = choose(
        &spec("pyright"),
        &ws.join("packages/app/src/app/main.py"),
        &ws,
        &RootFiles::default(),
        &one,
    );
    assert_eq!(c.root, ws.join("packages/app"));
    // rust-analyzer asks no such walk.
    let never = |_: &[String]| -> Vec<PathBuf> { panic!("not asked") };
    choose(
        &spec("rust-analyzer"),
        &ws.join("x.rs"),
        &ws,
        &RootFiles::default(),
        &never,
    );
}

#[test]
fn typescript_workspaces_npm_pnpm_and_solutions() {
    let (_t, ws) = layout("npm");
    let c = root_of(
        "typescript-language-server",
        &ws,
        "packages/app/src/main.ts",
    );
    assert_eq!(c.root, ws);
    assert_eq!(c.why, by(ws.join("package.json"), Some("workspaces")));
    let (_t, ws) = layout("pnpm");
    let c = root_of(
        "typescript-language-server",
        &ws,
        "packages/core/src/index.ts",
    );
    assert_eq!(c.root, ws);
    assert_eq!(c.why, by(ws.join("pnpm-workspace.yaml"), Some("packages")));
    // The solution tsconfig alone (its references name files and dirs).
    fs::remove_file(ws.join("pnpm-workspace.yaml")).unwrap();
    fs::write(
        ws.join("tsconfig.json"),
        r#"{"files": [], "references": [{"path": "./packages/core/tsconfig.json"}, {"path": "packages/app/"}]}"#,
    )
    .unwrap();
    let c = root_of(
        "typescript-language-server",
        &ws,
        "packages/app/src/main.ts",
    );
    assert_eq!(c.why, by(ws.join("tsconfig.json"), Some("references")));
    assert_eq!(
        root_of(
            "typescript-language-server",
            &ws,
            "packages/core/src/index.ts"
        )
        .root,
        ws
    );
    // A package no reference names: its own root.
    fs::create_dir_all(ws.join("packages/other/src")).unwrap();
    fs::write(ws.join("packages/other/package.json"), "{}").unwrap();
    assert_eq!(
        root_of("typescript-language-server", &ws, "packages/other/src/x.ts").root,
        ws.join("packages/other")
    );
    // An empty references list is no solution.
    fs::write(ws.join("tsconfig.json"), r#"{"references": []}"#).unwrap();
    assert_eq!(
        root_of(
            "typescript-language-server",
            &ws,
            "packages/app/src/main.ts"
        )
        .root,
        ws.join("packages/app")
    );
    // lerna's default members; `!` excludes.
    fs::write(ws.join("lerna.json"), r#"{"version": "1.0.0"}"#).unwrap();
    assert_eq!(
        root_of(
            "typescript-language-server",
            &ws,
            "packages/app/src/main.ts"
        )
        .root,
        ws
    );
    fs::remove_file(ws.join("lerna.json")).unwrap();
    fs::write(
        ws.join("package.json"),
        r#"{"workspaces": {"packages": ["packages/**", "!packages/other"]}}"#,
    )
    .unwrap();
    assert_eq!(
        root_of(
            "typescript-language-server",
            &ws,
            "packages/app/src/main.ts"
        )
        .root,
        ws
    );
    assert_eq!(
        root_of("typescript-language-server", &ws, "packages/other/src/x.ts").root,
        ws.join("packages/other")
    );
}

#[test]
fn go_work_and_a_compilation_database() {
    let (_t, ws) = layout("go");
    for f in ["app/main.go", "core/core.go"] {
        let c = root_of("gopls", &ws, f);
        assert_eq!(c.root, ws, "{f}");
        assert_eq!(c.why, by(ws.join("go.work"), None));
    }
    fs::create_dir_all(ws.join("other")).unwrap();
    fs::write(ws.join("other/go.mod"), "module example.com/other\n").unwrap();
    assert_eq!(root_of("gopls", &ws, "other/x.go").root, ws.join("other"));

    let (_t, ws) = layout("c");
    // Without a database: each Makefile's directory.
    assert_eq!(root_of("clangd", &ws, "app/main.c").root, ws.join("app"));
    let entries = serde_json::json!([
        {"directory": ws.join("libs/core"), "file": "core.c"},
        {"directory": ws.join("app"), "file": ws.join("app/main.c")},
    ]);
    fs::write(ws.join("compile_commands.json"), entries.to_string()).unwrap();
    for f in ["app/main.c", "libs/core/core.c", "libs/core/core.h"] {
        let c = root_of("clangd", &ws, f);
        assert_eq!(c.root, ws, "{f}");
        assert_eq!(c.why, by(ws.join("compile_commands.json"), None));
    }
    // A file the database does not list, in a package it has no file of.
    fs::create_dir_all(ws.join("tools")).unwrap();
    fs::write(ws.join("tools/Makefile"), "").unwrap();
    assert_eq!(root_of("clangd", &ws, "tools/t.c").root, ws.join("tools"));
}

#[test]
fn strategies_package_and_root() {
    let (_t, ws) = layout("cargo");
    let mut ra = spec("rust-analyzer");
    ra.project_root.strategy = RootStrategy::Package;
    let f = ws.join("crates/app/src/main.rs");
    let c = choose(&ra, &f, &ws, &RootFiles::default(), &no_walk);
    assert_eq!(c.root, ws.join("crates/app"));
    ra.project_root.strategy = RootStrategy::Root;
    let c = choose(&ra, &f, &ws, &RootFiles::default(), &no_walk);
    assert_eq!((c.root, c.why), (ws.clone(), RootChoice::Configured));
    // Outside the workspace: its root, never above.
    let c = root_of("rust-analyzer", &ws.join("crates"), "../Cargo.toml");
    assert_eq!(c.root, ws.join("crates"));
}

/// A workspace file is named below its directory: one that names a parent
/// or an absolute path is never read.
#[test]
fn a_workspace_file_never_leaves_its_directory() {
    let (_t, ws) = layout("cargo");
    let outside = ws.parent().unwrap().join("go.work");
    fs::write(&outside, "use ./cargo\n").unwrap();
    for file in ["../go.work", outside.to_str().unwrap()] {
        let mut spec = spec("gopls");
        spec.project_root.workspaces = vec![crate::catalog::WorkspaceFile {
            file: file.into(),
            ..Default::default()
        }];
        let c = choose(
            &spec,
            &ws.join("x.go"),
            &ws,
            &RootFiles::default(),
            &no_walk,
        );
        assert_eq!(c.why, RootChoice::NoMarker, "{file}");
    }
}

#[test]
fn a_workspace_file_is_read_again_when_it_changes() {
    let (_t, ws) = layout("cargo");
    let files = RootFiles::default();
    let f = ws.join("crates/app/src/main.rs");
    assert_eq!(
        choose(&spec("rust-analyzer"), &f, &ws, &files, &no_walk).root,
        ws
    );
    fs::write(
        ws.join("Cargo.toml"),
        "[workspace]\nmembers = [\"crates/core\"]\n",
    )
    .unwrap();
    assert_eq!(
        choose(&spec("rust-analyzer"), &f, &ws, &files, &no_walk).root,
        ws.join("crates/app")
    );
}

#[test]
fn find_root_nearest_marker_inside_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let outer = tmp.path();
    fs::write(outer.join("Cargo.toml"), "").unwrap();
    let ws = outer.join("ws");
    fs::create_dir_all(ws.join("crates/a/src/deep")).unwrap();
    fs::create_dir_all(ws.join("other")).unwrap();
    fs::write(ws.join("crates/a/Cargo.toml"), "").unwrap();
    let ra = catalog::builtins()
        .into_iter()
        .find(|s| s.id == "rust-analyzer")
        .unwrap();
    let file = ws.join("crates/a/src/deep/x.rs");
    assert_eq!(find_root(&ra, &file, &ws), ws.join("crates/a"));
    assert_eq!(
        find_root(&ra, Path::new("crates/a/src/lib.rs"), &ws),
        ws.join("crates/a")
    );
    // the marker above the workspace is never used
    assert_eq!(find_root(&ra, &ws.join("other/x.rs"), &ws), ws);
    assert_eq!(find_root(&ra, &outer.join("x.rs"), &ws), ws);
    assert_eq!(find_root(&ra, &ws.join("../x.rs"), &ws), ws);
    // the workspace root itself counts, and nearer wins
    fs::write(ws.join("Cargo.toml"), "").unwrap();
    assert_eq!(find_root(&ra, &ws.join("other/x.rs"), &ws), ws);
    assert_eq!(find_root(&ra, &file, &ws), ws.join("crates/a"));
    // wildcard markers
    let spec = ServerSpec {
        root_markers: vec!["*.csproj".into()],
        ..Default::default()
    };
    fs::write(ws.join("other/App.csproj"), "").unwrap();
    assert_eq!(
        find_root(&spec, &ws.join("other/x.cs"), &ws),
        ws.join("other")
    );
    assert_eq!(find_root(&spec, &file, &ws), ws);
}
