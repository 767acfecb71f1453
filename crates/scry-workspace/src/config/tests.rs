//! Tests of the configuration: layering, the liberal forms, errors,
//! loading from disk, trust; `layers` and `ids` are shared with the
//! routing tests.

use super::*;
use crate::catalog::ProviderKind;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;

/// Layers from (path, text) pairs.
pub(crate) fn layers(items: &[(&str, &str)]) -> Vec<(PathBuf, String)> {
    items
        .iter()
        .map(|(p, t)| (PathBuf::from(p), t.to_string()))
        .collect()
}

/// The ids of the specs, in order.
pub(crate) fn ids(specs: &[&ServerSpec]) -> Vec<String> {
    specs.iter().map(|s| s.id.clone()).collect()
}

#[test]
fn no_layers_is_builtins() {
    let c = Config::from_layers(&[]).unwrap();
    assert_eq!(c.servers, catalog::builtins());
    assert_eq!(c.limits, Limits::default());
    assert!(c.sources.is_empty() && c.warnings.is_empty());
    assert_eq!(c.limits.max_chars, 16000);
}

#[test]
fn layering_user_then_project() {
    let user = r#"{
        "servers": {
            "pyright": { "settings": { "python": { "analysis": { "typeCheckingMode": "strict" } } } },
            "gopls": { "disabled": true },
            "my-lsp": { "command": "my-lsp", "args": ["--stdio"], "fileTypes": [".foo", "*.bar"] }
        },
        "autoDetect": false,
        "limits": { "maxLocations": 50, "timeoutMs": 20000 }
    }"#;
    let project = r#"{
        // project overrides
        "servers": {
            "pyright": { "settings": { "python": { "analysis": { "diagnosticMode": "workspace" } } } },
            "my-lsp": { "env": { "A": "1" } },
        },
        "autoDetect": true,
        "limits": { "maxChars": 8000 },
    }"#;
    let c = Config::from_layers(&layers(&[
        ("/home/u/.config/scry/config.json", user),
        ("/ws/.scry.json", project),
    ]))
    .unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.sources.len(), 2);
    let analysis = &c.server("pyright").unwrap().settings["python"]["analysis"];
    assert_eq!(analysis["typeCheckingMode"], "strict");
    assert_eq!(analysis["diagnosticMode"], "workspace");
    assert_eq!(analysis["autoSearchPaths"], true);
    // untouched fields survive the merge
    assert_eq!(c.server("pyright").unwrap().args, ["--stdio"]);
    assert!(c.server("gopls").unwrap().disabled);
    let my = c.server("my-lsp").unwrap();
    assert_eq!(my.file_types, ["foo", "bar"]);
    assert_eq!(my.env["A"], "1");
    assert_eq!(my.kind, ProviderKind::Lsp);
    // new servers go first; autoDetect true again keeps the built-ins
    assert_eq!(c.servers[0].id, "my-lsp");
    assert!(c.server("rust-analyzer").is_some());
    assert_eq!(
        c.limits,
        Limits {
            max_locations: 50,
            max_chars: 8000,
            timeout_ms: 20000,
            max_open_documents: 200,
            ..Limits::default()
        }
    );
    let all = |_: &ServerSpec| true;
    assert!(c.servers_for(Path::new("/ws/main.go"), &all).is_empty());
    assert_eq!(
        ids(&c.servers_for(Path::new("/ws/x.foo"), &all)),
        ["my-lsp"]
    );
}

#[test]
fn auto_detect_false_keeps_only_named() {
    let c = Config::from_layers(&layers(&[
        ("/u.json", r#"{"servers": {"pyright": {}}}"#),
        (
            "/p.json",
            r#"{"autoDetect": false, "servers": {"x": {"command": "x", "fileTypes": ["x"]}}}"#,
        ),
    ]))
    .unwrap();
    let mut got: Vec<_> = c.servers.iter().map(|s| s.id.as_str()).collect();
    got.sort();
    assert_eq!(got, ["pyright", "x"]);
    // the last layer that sets it wins
    let c = Config::from_layers(&layers(&[
        ("/u.json", r#"{"autoDetect": false}"#),
        ("/p.json", r#"{"servers": {}}"#),
    ]))
    .unwrap();
    assert!(c.servers.is_empty());
}

#[test]
fn single_quote_is_char_is_catalog_data() {
    let c = Config::default();
    assert!(c.server("rust-analyzer").unwrap().single_quote_is_char);
    assert!(!c.server("pyright").unwrap().single_quote_is_char);
    let text = r#"{"servers": {"my-rust": {"command": "ra2", "fileTypes": ["rs"],
        "single_quote_is_char": true}}}"#;
    let c = Config::from_layers(&layers(&[("/ws/scry.json", text)])).unwrap();
    assert!(c.server("my-rust").unwrap().single_quote_is_char);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn liberal_forms() {
    let text = "\u{feff}{
        \"lsp_servers\": {
            \"rust-analyzer\": false,
            \"tool\": { \"cmd\": [\"tool\", \"--stdio\"], \"args\": \"-v\", \"extensions\": \"ts, .tsx\", \"enabled\": true, \"colour\": 1 },
            /* block
               comment */
            \"yaml-language-server\": { \"enabled\": false },
        },
        \"linters\": [ { \"id\": \"mylint\", \"command\": \"mylint\", \"parser\": \"sarif\", \"fileTypes\": [\"ts\"] } ],
        \"theme\": \"dark\", // unknown
    }";
    let c = Config::from_layers(&layers(&[("/ws/scry.json", text)])).unwrap();
    assert!(c.server("rust-analyzer").unwrap().disabled);
    assert!(c.server("yaml-language-server").unwrap().disabled);
    let tool = c.server("tool").unwrap();
    assert_eq!(tool.command, "tool");
    assert_eq!(tool.args, ["--stdio", "-v"]);
    assert_eq!(tool.file_types, ["ts", "tsx"]);
    let lint = c.server("mylint").unwrap();
    assert!(lint.is_linter);
    assert_eq!(lint.kind, ProviderKind::Cli);
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(c.warnings.iter().any(|w| w.contains("\"theme\"")));
    assert!(c.warnings.iter().any(|w| w.contains("\"colour\"")));
    // new servers, in written order, ahead of the built-ins
    assert_eq!(c.servers[0].id, "tool");
    assert_eq!(c.servers[1].id, "mylint");
    let all = |_: &ServerSpec| true;
    let ts = Path::new("a.ts");
    assert_eq!(
        ids(&c.servers_for(ts, &all)),
        ["tool", "typescript-language-server"]
    );
    assert_eq!(
        ids(&c.providers_for(ts, true, &all)),
        ["tool", "mylint", "typescript-language-server", "eslint"]
    );
    // strings keep their slashes, commas and comment look-alikes
    let c = Config::from_layers(&layers(&[(
        "/p.json",
        r#"{"servers": {"pyright": {"args": ["--x=//y,", "/*z*/]"]}}}"#,
    )]))
    .unwrap();
    assert_eq!(c.server("pyright").unwrap().args, ["--x=//y,", "/*z*/]"]);
}

#[test]
fn a_startup_log_that_is_no_regular_expression_is_refused_when_read() {
    let text = r#"{"servers": {"pyright": {"startupLog": "Found (\\d+"}}}"#;
    let err = Config::from_layers(&layers(&[("/u/config.json", text)])).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("\"startupLog\" is not a regular expression"),
        "{msg}"
    );
    assert!(msg.contains("pyright"), "{msg}");
    let text = r#"{"servers": {"pyright": {"startupLog": "^ready$"}}}"#;
    let c = Config::from_layers(&layers(&[("/u/config.json", text)])).unwrap();
    let signal = c.server("pyright").unwrap().startup_signal().unwrap();
    assert!(signal.pattern.is_match("ready"));
}

#[test]
fn parse_error_names_path_and_line() {
    let text = "{\n  \"servers\": {\n    \"pyright\": { \"args\": [\"a\" \"b\"] }\n  }\n}";
    let err = Config::from_layers(&layers(&[("/ws/.scry.json", text)])).unwrap_err();
    match &err {
        ConfigError::Parse { path, line, .. } => {
            assert_eq!(path, Path::new("/ws/.scry.json"));
            assert_eq!(*line, 3);
        }
        other => panic!("{other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("/ws/.scry.json:3:"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
    // comments before the error do not shift the position
    let text = "// c\n/* x\n y */ {\n \"a\": }";
    match Config::from_layers(&layers(&[("/f", text)])).unwrap_err() {
        ConfigError::Parse { line, column, .. } => assert_eq!((line, column), (4, 7)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn memory_caps_come_from_the_catalogue_and_are_overridden_by_layers() {
    let c = Config::default();
    let limits = Limits::default();
    assert_eq!(
        (
            limits.server_memory_mib,
            limits.memory_budget_mib,
            limits.memory_check_ms
        ),
        (4096, 16384, 2000)
    );
    let ra = c.server("rust-analyzer").unwrap();
    assert_eq!(ra.memory_mib, Some(8192));
    assert_eq!(ra.memory_cap_kib(&c.limits), 8192 * 1024);
    // No catalogue cap: the global default.
    let gopls = c.server("gopls").unwrap();
    assert_eq!(gopls.memory_mib, None);
    assert_eq!(gopls.memory_cap_kib(&c.limits), 4096 * 1024);
    let c = Config::from_layers(&layers(&[
        (
            "/u.json",
            r#"{"servers": {"rust-analyzer": {"memoryMiB": 12288}},
                "limits": {"serverMemoryMiB": 2048, "memoryBudgetMiB": 8192}}"#,
        ),
        (
            "/ws/scry.json",
            r#"{"servers": {"gopls": {"memory_mib": 1500}}, "limits": {"memoryCheckMs": 500}}"#,
        ),
    ]))
    .unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(c.server("rust-analyzer").unwrap().memory_mib, Some(12288));
    assert_eq!(
        c.server("gopls").unwrap().memory_cap_kib(&c.limits),
        1500 * 1024
    );
    assert_eq!(
        c.server("clangd").unwrap().memory_cap_kib(&c.limits),
        2048 * 1024
    );
    assert_eq!(
        (c.limits.memory_budget_mib, c.limits.memory_check_ms),
        (8192, 500)
    );
    let bad = Config::from_layers(&layers(&[(
        "/ws/scry.json",
        r#"{"limits": {"memoryBudgetMiB": 0}}"#,
    )]));
    assert!(matches!(bad, Err(ConfigError::Invalid { .. })), "{bad:?}");
}

#[test]
fn invalid_configs() {
    let bad = |text: &str| match Config::from_layers(&layers(&[("/ws/scry.json", text)])) {
        Err(ConfigError::Invalid { path, message }) => {
            assert_eq!(path, Path::new("/ws/scry.json"));
            message
        }
        other => panic!("{text}: {other:?}"),
    };
    let m = bad(r#"{"servers": {"my-lsp": {"fileTypes": ["foo"]}}}"#);
    assert!(m.contains("\"my-lsp\"") && m.contains("command"), "{m}");
    let m = bad(r#"{"servers": {"pyright": {"args": 3}}}"#);
    assert!(m.contains("\"pyright\""), "{m}");
    let m = bad(r#"{"servers": {"pyright": {"kind": "grpc"}}}"#);
    assert!(m.contains("\"pyright\""), "{m}");
    let m = bad(r#"{"servers": {"pyright": {"command": ""}}}"#);
    assert!(m.contains("empty"), "{m}");
    let m = bad(r#"{"limits": {"maxChars": 0}}"#);
    assert!(m.contains("maxChars"), "{m}");
    bad(r#"{"autoDetect": "no"}"#);
    bad(r#"[1, 2]"#);
    bad(r#"{"servers": 3}"#);
    // an empty file is no configuration
    let c = Config::from_layers(&layers(&[("/e.json", "  \n")])).unwrap();
    assert_eq!(c.servers.len(), catalog::builtins().len());
}

#[test]
fn load_reads_user_then_project_files() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let xdg = tmp.path().join("xdg");
    fs::create_dir_all(ws.join(".scry")).unwrap();
    fs::create_dir_all(xdg.join("scry")).unwrap();
    fs::write(
        xdg.join("scry/config.json"),
        r#"{"limits": {"maxChars": 1000, "maxLocations": 7, "maxDiagnostics": 9}}"#,
    )
    .unwrap();
    fs::write(ws.join("scry.json"), r#"{"limits": {"maxChars": 2000}}"#).unwrap();
    fs::write(
        ws.join(".scry/config.json"),
        r#"{"servers": {"gopls": {"disabled": true}}}"#,
    )
    .unwrap();
    let vars: HashMap<&str, OsString> = HashMap::from([
        ("XDG_CONFIG_HOME", xdg.clone().into_os_string()),
        ("HOME", tmp.path().join("home").into_os_string()),
    ]);
    let env = |k: &str| vars.get(k).cloned();
    let c = load_with_env(&ws, &env).unwrap();
    assert_eq!(
        c.sources,
        [
            xdg.join("scry/config.json"),
            ws.join("scry.json"),
            ws.join(".scry/config.json")
        ]
    );
    assert_eq!((c.limits.max_chars, c.limits.max_locations), (2000, 7));
    assert_eq!(c.limits.max_diagnostics, 9);
    assert_eq!(c.limits.diagnostics_delta_ms, 2000);
    assert!(c.server("gopls").unwrap().disabled);

    // explicit $SCRY_CONFIG wins and must exist
    let missing = tmp.path().join("nope.json");
    let vars2: HashMap<&str, OsString> =
        HashMap::from([("SCRY_CONFIG", missing.clone().into_os_string())]);
    let env2 = |k: &str| vars2.get(k).cloned();
    match load_with_env(&ws, &env2) {
        Err(ConfigError::Read { path, .. }) => assert_eq!(path, missing),
        other => panic!("{other:?}"),
    }
    // The OS's convention below HOME when XDG is unset or relative
    // (`scry_base::dirs`, which tests both conventions).
    let vars3: HashMap<&str, OsString> = HashMap::from([
        ("XDG_CONFIG_HOME", OsString::from("rel")),
        ("HOME", OsString::from("/h")),
    ]);
    let env3 = |k: &str| vars3.get(k).cloned();
    let below: &[&str] = match scry_base::platform::OS {
        scry_base::platform::Os::Unix => &[".config", "scry", "config.json"],
        scry_base::platform::Os::Windows => &["AppData", "Roaming", "scry", "config.json"],
    };
    assert_eq!(
        scry_base::dirs::user_config_with(&env3),
        Some((
            below.iter().fold(PathBuf::from("/h"), |p, c| p.join(c)),
            false
        ))
    );
    assert_eq!(scry_base::dirs::user_config_with(&|_| None), None);
}

#[test]
fn untrusted_project_layers_cannot_choose_what_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let xdg = tmp.path().join("xdg");
    fs::create_dir_all(&ws).unwrap();
    fs::create_dir_all(xdg.join("scry")).unwrap();
    fs::write(
        xdg.join("scry/config.json"),
        r#"{"servers": {"mine": {"command": "mine-lsp", "fileTypes": ["m"]}}}"#,
    )
    .unwrap();
    fs::write(
        ws.join(".scry.json"),
        r#"{"servers": {
            "pyright": {"command": "./evil", "args": ["x"], "env": {"A": "1"},
                        "settings": {"python": {"pythonPath": "./evil-python"}},
                        "initializationOptions": {"x": 1}},
            "gopls": {"disabled": true},
            "mine": {"cmd": ["./evil2", "--stdio"], "fileTypes": ["m", "mm"]},
            "evil": {"command": "./evil3", "fileTypes": ["py"]}
          },
          "linters": {"evil-lint": {"command": "./evil4", "fileTypes": ["py"], "parser": "generic"}},
          "trustedRoots": ["/"],
          "index": {"path": "build/index.scip", "refresh": false},
          "limits": {"maxChars": 1234, "indexRefreshIdleMs": 5000}}"#,
    )
    .unwrap();
    let vars: HashMap<&str, OsString> = HashMap::from([
        ("XDG_CONFIG_HOME", xdg.clone().into_os_string()),
        ("SCRY_STATE_DIR", tmp.path().join("state").into_os_string()),
    ]);
    let env = |k: &str| vars.get(k).cloned();
    let c = load_with(&ws, &env, TrustPolicy::FromEnvironment).unwrap();
    assert_eq!(
        c.trust.trust,
        scry_model::Trust::Untrusted { revoked: false }
    );
    let builtin = catalog::builtins();
    let py = builtin.iter().find(|s| s.id == "pyright").unwrap();
    let pyright = c.server("pyright").unwrap();
    assert_eq!((&pyright.command, &pyright.args), (&py.command, &py.args));
    assert!(pyright.env.is_empty());
    // settings and initializationOptions name what the server runs:
    // ignored; disabled, limits and file types apply without trust
    assert_eq!(pyright.settings, py.settings);
    assert_eq!(pyright.initialization_options, py.initialization_options);
    assert!(c.server("gopls").unwrap().disabled);
    assert_eq!(c.limits.max_chars, 1234);
    let mine = c.server("mine").unwrap();
    assert_eq!(mine.command, "mine-lsp");
    assert!(mine.args.is_empty());
    assert_eq!(mine.file_types, ["m", "mm"]);
    assert!(c.server("evil").is_none() && c.server("evil-lint").is_none());
    let what: Vec<&str> = c.trust.ignored.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(
        what,
        [
            "server \"pyright\": command, args, env, settings, initializationOptions",
            "server \"mine\": command, args",
            "new server \"evil\"",
            "new server \"evil-lint\"",
            "index.path \"build/index.scip\""
        ]
    );
    // the index it names is not read; its refresh switch and idle time
    // (nothing they run is the project's) apply
    assert_eq!(c.index.path, None);
    assert!(!c.index.refresh);
    assert_eq!(c.limits.index_refresh_idle_ms, 5000);
    assert!(
        c.warnings.iter().any(|w| w.contains("trustedRoots")),
        "{:?}",
        c.warnings
    );
    assert_eq!(c.trust.project_files, [ws.join(".scry.json")]);

    // trusted: everything applies
    let t = load_with(&ws, &env, TrustPolicy::Trusted).unwrap();
    assert_eq!(t.server("pyright").unwrap().command, "./evil");
    assert_eq!(
        t.server("pyright").unwrap().settings["python"]["pythonPath"],
        "./evil-python"
    );
    assert_eq!(t.server("evil-lint").unwrap().command, "./evil4");
    assert!(t.trust.ignored.is_empty());
    assert_eq!(
        t.index.path,
        Some((PathBuf::from("build/index.scip"), ws.join(".scry.json")))
    );

    // the user's trustedRoots trusts the workspace
    fs::write(
        xdg.join("scry/config.json"),
        serde_json::json!({ "trustedRoots": [tmp.path()] }).to_string(),
    )
    .unwrap();
    let u = load_with(&ws, &env, TrustPolicy::FromEnvironment).unwrap();
    assert!(
        matches!(u.trust.trust, scry_model::Trust::UserRoot(_)),
        "{:?}",
        u.trust
    );
    assert_eq!(u.server("evil").unwrap().command, "./evil3");
}

#[test]
fn the_configured_index_stays_inside_the_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let root = scry_base::paths::canonical(tmp.path()).unwrap();
    let ws = root.join("ws");
    fs::create_dir_all(ws.join("build")).unwrap();
    fs::write(root.join("outside.scip"), b"x").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("outside.scip"), ws.join("build/link.scip")).unwrap();
    let with = |p: &str| {
        Config::from_layers(&[(
            ws.join(".scry.json"),
            format!(r#"{{"index": {{"path": "{p}"}}}}"#),
        )])
        .unwrap()
    };
    assert_eq!(Config::default().index_path(&ws), Ok(None));
    assert_eq!(
        with("build/index.scip").index_path(&ws),
        Ok(Some(ws.join("build/index.scip")))
    );
    let absolute = if cfg!(windows) {
        "C:/Windows/win.ini"
    } else {
        "/etc/passwd"
    };
    // The link is made on Unix only (above).
    let link: &[&str] = if cfg!(unix) {
        &["build/link.scip"]
    } else {
        &[]
    };
    for &bad in ["../outside.scip", absolute].iter().chain(link) {
        let e = with(bad).index_path(&ws).unwrap_err();
        assert!(e.contains("outside the workspace"), "{bad}: {e}");
        assert!(e.contains(".scry.json"), "{e}");
    }
    let e = Config::from_layers(&[(ws.join(".scry.json"), r#"{"index": {"refresh": 1}}"#.into())])
        .unwrap_err();
    assert!(e.to_string().contains("index.refresh"), "{e}");
}

/// A server's root recipe is configuration like the rest of its entry:
/// a layer changes the strategy, adds a workspace file or its own rule;
/// an unknown strategy is refused when read.
#[test]
fn root_recipes_are_overridden_by_layers() {
    use crate::catalog::{RootStrategy, WorkspaceFile};
    let c = Config::default();
    let ra = c.server("rust-analyzer").unwrap();
    assert_eq!(ra.project_root.strategy, RootStrategy::Workspace);
    assert!(
        !ra.project_root.from.is_empty(),
        "the recipe says where it comes from"
    );
    for s in c
        .servers
        .iter()
        .filter(|s| !s.project_root.workspaces.is_empty())
    {
        assert!(!s.project_root.from.is_empty(), "{}: no `from`", s.id);
    }
    let c = Config::from_layers(&layers(&[
        (
            "/u.json",
            r#"{"servers": {"rust-analyzer": {"projectRoot": {"strategy": "package"}}}}"#,
        ),
        (
            "/ws/.scry.json",
            r#"{"servers": {"gopls": {"root_strategy": {"workspaces": [{"file": "tools.work", "members": ["use"]}]}}}}"#,
        ),
    ]))
    .unwrap();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let ra = c.server("rust-analyzer").unwrap();
    assert_eq!(ra.project_root.strategy, RootStrategy::Package);
    // Objects merge deeply: the catalogue's workspace files stay.
    assert_eq!(ra.project_root.workspaces.len(), 2);
    let gopls = c.server("gopls").unwrap();
    assert_eq!(
        gopls.project_root.workspaces,
        vec![WorkspaceFile {
            file: "tools.work".into(),
            members: vec!["use".into()],
            ..Default::default()
        }]
    );
    let bad = Config::from_layers(&layers(&[(
        "/ws/scry.json",
        r#"{"servers": {"pyright": {"projectRoot": {"strategy": "nearest"}}}}"#,
    )]));
    assert!(matches!(bad, Err(ConfigError::Invalid { .. })), "{bad:?}");
}

#[test]
fn a_remote_index_is_checked_once_and_needs_trust_as_index_path_does() {
    use super::{RemoteHeader, RemoteIndex};
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    fs::create_dir_all(&ws).unwrap();
    let cfg = r#"{"index": {"remote": {"url": "https://user:pw@ci.example/scip/{commit}.scip?token=s3cret",
        "header": {"name": "Authorization", "env": "SCRY_INDEX_TOKEN"}, "stallMs": 500, "ancestors": 9999}}}"#;
    fs::write(ws.join(".scry.json"), cfg).unwrap();
    let vars: HashMap<&str, OsString> =
        HashMap::from([("SCRY_STATE_DIR", tmp.path().join("state").into_os_string())]);
    let env = |k: &str| vars.get(k).cloned();
    let t = load_with(&ws, &env, TrustPolicy::Trusted).unwrap();
    let (r, file) = t.index.remote.clone().expect("a trusted project's remote");
    assert_eq!(file, ws.join(".scry.json"));
    assert_eq!(
        r,
        RemoteIndex {
            url: "https://user:pw@ci.example/scip/{commit}.scip?token=s3cret".into(),
            header: Some(RemoteHeader {
                name: "Authorization".into(),
                env: "SCRY_INDEX_TOKEN".into()
            }),
            stall_ms: 500,
            ancestors: scry_model::limits::MAX_REMOTE_INDEX_ANCESTORS,
            max_bytes: scry_model::limits::MAX_REMOTE_INDEX_BYTES,
        }
    );
    assert_eq!(
        r.url_for("abc"),
        "https://user:pw@ci.example/scip/abc.scip?token=s3cret"
    );
    // Shown without credentials or query.
    assert_eq!(r.shown(), "https://ci.example/scip/{commit}.scip");
    assert_eq!(r.host(), "ci.example");

    // Untrusted: ignored and said, as index.path is.
    let u = load_with(&ws, &env, TrustPolicy::Untrusted).unwrap();
    assert_eq!(u.index.remote, None);
    let what: Vec<&str> = u.trust.ignored.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(
        what,
        ["index.remote \"https://ci.example/scip/{commit}.scip\""]
    );

    // A bare URL is the template; what is not usable is refused at once.
    let one = |v: &str| {
        Config::from_layers(&[(
            ws.join(".scry.json"),
            format!(r#"{{"index": {{"remote": {v}}}}}"#),
        )])
    };
    let c = one(r#""file:///srv/{commit}.scip""#).unwrap();
    assert_eq!(c.index.remote.unwrap().0.host(), "");
    for (bad, says) in [
        (r#""ftp://x/{commit}""#, "must start with https://"),
        (r#""https://x/latest.scip""#, "must hold {commit}"),
        (
            r#"{"url": "https://x/{commit}", "header": {"name": "A", "value": "s3cret"}}"#,
            "needs \"env\"",
        ),
        (
            r#"{"url": "https://x/{commit}", "header": {"name": "A b", "env": "T"}}"#,
            "not a header name",
        ),
        (
            r#"{"url": "https://x/{commit}", "token": "x"}"#,
            "unknown key",
        ),
        ("3", "must be a URL or an object"),
    ] {
        let e = one(bad).unwrap_err().to_string();
        assert!(e.contains("index.remote") && e.contains(says), "{bad}: {e}");
    }
}
