//! Snapshot tests of both forms: these snapshots are what a model reads.

use std::path::{Path, PathBuf};

use scry_model::{
    Action, Alternative, Answer, AskedAt, Body, CallDirection, CallEdge, CallItem, Folder,
    IndexAbout, IndexOrigin, IndexStatus, IndexerStatus, Loc, MemoryAction, MemoryNote, OpError,
    PathProgram, ProviderRole, ProviderStatus, Question, Reason, RefreshStatus, RootChoice,
    RunState, RunningServer, Selector, StatusReport, SymbolItem, SymbolNode, Via, WatcherStatus,
};
use scry_render::{
    Dialect, RenderOptions, error_json, normalize_hover, render_error, render_json, render_text,
};
use serde_json::json;

const ROOT: &str = "/ws/shop";

fn root() -> &'static Path {
    Path::new(ROOT)
}

fn p(rel: &str) -> PathBuf {
    if rel.starts_with('/') {
        PathBuf::from(rel)
    } else {
        Path::new(ROOT).join(rel)
    }
}

fn loc(path: &str, line: u32, col: u32, len: u32, text: Option<&str>) -> Loc {
    Loc {
        path: p(path),
        line,
        col,
        end_line: line,
        end_col: col + len,
        text: text.map(str::to_string),
    }
}

fn asked(path: &str, line: u32, col: u32, text: &str, via: Via) -> AskedAt {
    AskedAt {
        loc: loc(path, line, col, 12, Some(text)),
        via,
    }
}

fn decl(kind: &str, name: &str) -> Via {
    Via::Declaration {
        kind: kind.into(),
        name: name.into(),
    }
}

fn question(symbol: &str, path: &str) -> Question {
    Question {
        path: Some(p(path)),
        symbol: Some(symbol.to_string()),
        ..Question::default()
    }
}

fn both(answer: &Answer, opts: &RenderOptions) -> (String, serde_json::Value) {
    (
        render_text(answer, root(), opts),
        render_json(answer, root(), opts),
    )
}

/// References across three files, one outside the workspace, with a
/// duplicate and out-of-order input.
fn references() -> Answer {
    let mut a = Answer::new(
        Action::References,
        question("total_weight", "src/inventory.rs"),
        Body::Locations {
            locations: vec![
                loc(
                    "src/main.rs",
                    4,
                    13,
                    12,
                    Some("    let w = total_weight(&inv);"),
                ),
                loc(
                    "/home/u/.cargo/registry/src/shop-util/src/lib.rs",
                    7,
                    9,
                    12,
                    Some("\tshop::total_weight(x)"),
                ),
                loc(
                    "src/inventory.rs",
                    30,
                    5,
                    12,
                    Some("    let w = total_weight(&inv);   "),
                ),
                loc(
                    "src/inventory.rs",
                    12,
                    8,
                    12,
                    Some("pub fn total_weight(inv: &Inventory) -> u32 {"),
                ),
                loc(
                    "src/main.rs",
                    4,
                    13,
                    12,
                    Some("    let w = total_weight(&inv);"),
                ),
                loc("src/inventory.rs", 30, 1, 12, None),
            ],
        },
    );
    a.server = Some("rust-analyzer".into());
    a.asked_at = Some(asked(
        "src/inventory.rs",
        12,
        8,
        "pub fn total_weight(inv: &Inventory) -> u32 {",
        decl("function", "total_weight"),
    ));
    a
}

#[test]
#[cfg_attr(
    windows,
    ignore = "its fixture's file outside the workspace is spelled the Unix way (/home/u/…), which is no absolute path on Windows, so it sorts among the workspace's files"
)]
fn references_grouped_sorted_deduped() {
    let (text, json) = both(&references(), &RenderOptions::default());
    insta::assert_snapshot!("references_text", text);
    insta::assert_json_snapshot!("references_json", json);
}

#[test]
fn references_capped_at_three() {
    let opts = RenderOptions {
        max_locations: 3,
        ..RenderOptions::default()
    };
    let (text, json) = both(&references(), &opts);
    insta::assert_snapshot!("references_cap3_text", text);
    insta::assert_json_snapshot!("references_cap3_json", json);
}

/// Capped references asked in a file that sorts last (`z.rb`), of which
/// the engine kept 6 of the 95 it found: the asked file's first, the
/// header says the true total and how many are shown, the marker how many
/// were left out and how many were never considered.
#[test]
fn capped_references_list_the_asked_file_first_and_say_the_true_total() {
    let mut locations: Vec<Loc> = (1..=4)
        .map(|l| loc("a.py", l, 1, 3, Some("qux()")))
        .collect();
    locations.push(loc("z.rb", 1, 5, 3, Some("def qux(a)")));
    locations.push(loc("z.rb", 4, 1, 3, Some("qux(1)")));
    let mut a = Answer::new(
        Action::References,
        question("qux", "z.rb"),
        Body::Locations { locations },
    );
    a.server = Some("tree-sitter".into());
    a.notes.push(Reason::NameMatchesCapped {
        name: "qux".into(),
        found: 95,
        kept: 6,
    });
    let opts = RenderOptions {
        max_locations: 3,
        ..RenderOptions::default()
    };
    let (text, json) = both(&a, &opts);
    insta::assert_snapshot!("references_engine_capped_text", text);
    assert_eq!(json["total"], 95);
    assert_eq!(json["locations"][0]["path"], "z.rb");
    assert_eq!(json["locations"][1]["path"], "z.rb");
    assert_eq!(
        json["omitted"],
        json!({"count": 92, "files": 1, "reason": "max_locations", "not_considered": 89})
    );
    // Not capped: the usual order, no "shown".
    let text = render_text(
        &a,
        root(),
        &RenderOptions {
            max_locations: 100,
            ..RenderOptions::default()
        },
    );
    assert!(
        text.starts_with("95 references to `qux` (at z.rb), 6 shown — tree-sitter\nz.rb\n"),
        "{text}"
    );
    assert!(
        text.contains("\n… 89 more references, past those considered (narrow the question"),
        "{text}"
    );
}

#[test]
#[cfg_attr(
    windows,
    ignore = "its fixture's file outside the workspace is spelled the Unix way (/home/u/…), which is no absolute path on Windows, so it sorts among the workspace's files"
)]
fn references_char_cap() {
    let opts = RenderOptions {
        max_locations: 100,
        max_chars: 330,
        ..RenderOptions::default()
    };
    let text = render_text(&references(), root(), &opts);
    assert!(text.chars().count() <= 330, "{}", text.chars().count());
    assert!(text.ends_with("(narrow the question to see the rest)"));
    insta::assert_snapshot!("references_charcap_text", text);
    let opts = RenderOptions {
        max_locations: 100,
        max_chars: 800,
        ..RenderOptions::default()
    };
    let json = render_json(&references(), root(), &opts);
    assert!(serde_json::to_string(&json).unwrap().chars().count() <= 800);
    assert_eq!(json["omitted"]["reason"], "max_chars");
    insta::assert_json_snapshot!("references_charcap_json", json);
}

#[test]
fn emoji_and_long_lines() {
    let long = format!("let s = \"{}\"; // 🎉 done", "é🎉".repeat(150));
    let mut a = Answer::new(
        Action::Definition,
        Question {
            path: Some(p("src/emoji.rs")),
            line: Some(3),
            column: Some(9),
            ..Question::default()
        },
        Body::Locations {
            locations: vec![
                loc(
                    "src/emoji.rs",
                    1,
                    8,
                    5,
                    Some("const PARTY: &str = \"🎉🎊\"; // ünïcödé"),
                ),
                loc("src/emoji.rs", 9, 3, 1, Some(&long)),
            ],
        },
    );
    a.asked_at = Some(AskedAt {
        loc: loc("src/emoji.rs", 3, 9, 5, Some("    s = 🎉 PARTY;")),
        via: Via::GivenPosition,
    });
    let (text, json) = both(&a, &RenderOptions::default());
    for line in text.lines() {
        assert!(line.chars().count() <= 220, "{line}");
    }
    insta::assert_snapshot!("emoji_text", text);
    insta::assert_json_snapshot!("emoji_json", json);
}

#[test]
fn empty_with_reason() {
    let mut a = Answer::new(
        Action::References,
        question("restock", "src/inventory.rs"),
        Body::Locations { locations: vec![] },
    );
    a.server = Some("rust-analyzer".into());
    a.asked_at = Some(asked(
        "src/inventory.rs",
        14,
        12,
        "    pub fn restock(&mut self, n: u32) {",
        decl("method", "Inventory::restock"),
    ));
    a.empty_reason = Some(Reason::Indexing {
        server: "rust-analyzer".into(),
        progress: "Indexing 45%".into(),
    });
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("empty_text", text);
    insta::assert_json_snapshot!("empty_json", json);

    // Every kind of empty answer says something.
    let kinds = [
        Answer::new(
            Action::Hover,
            question("x", "src/a.rs"),
            Body::Hover {
                text: "  \n".into(),
            },
        ),
        Answer::new(
            Action::Symbols,
            Question {
                path: Some(p("src/a.rs")),
                ..Question::default()
            },
            Body::Outline {
                path: p("src/a.rs"),
                symbols: vec![],
            },
        ),
        Answer::new(
            Action::WorkspaceSymbols,
            Question {
                query: Some("Foo".into()),
                ..Question::default()
            },
            Body::WorkspaceSymbols {
                query: "Foo".into(),
                symbols: vec![],
            },
        ),
        Answer::new(
            Action::IncomingCalls,
            question("main", "src/main.rs"),
            Body::Calls {
                direction: CallDirection::Incoming,
                item: None,
                calls: vec![],
            },
        ),
        Answer::new(
            Action::Definition,
            Question::default(),
            Body::Locations { locations: vec![] },
        ),
    ];
    let lines: Vec<String> = kinds
        .iter()
        .map(|a| render_text(a, root(), &RenderOptions::default()))
        .collect();
    insta::assert_snapshot!("empty_kinds_text", lines.join("\n"));
}

#[test]
fn partial_others_and_notes() {
    let mut a = Answer::new(
        Action::Definition,
        question("restock", "src/main.rs"),
        Body::Locations {
            locations: vec![loc(
                "src/inventory.rs",
                14,
                12,
                7,
                Some("    pub fn restock(&mut self, n: u32) {"),
            )],
        },
    );
    a.server = Some("rust-analyzer".into());
    a.asked_at = Some(asked(
        "src/main.rs",
        9,
        9,
        "    inv.restock(3);",
        Via::Occurrence {
            n: 1,
            of: 2,
            name: "restock".into(),
            prose: false,
        },
    ));
    a.partial = Some(Reason::Indexing {
        server: "rust-analyzer".into(),
        progress: "Indexing 45%".into(),
    });
    a.others = vec![
        Alternative {
            name: "restock".into(),
            kind: "function".into(),
            line: 88,
            col: 1,
            container: None,
        },
        Alternative {
            name: "restock".into(),
            kind: "method".into(),
            line: 40,
            col: 5,
            container: Some("Warehouse".into()),
        },
    ];
    a.notes = vec![Reason::ServerNotRunning {
        server: "pylsp".into(),
    }];
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("partial_others_text", text);
    insta::assert_json_snapshot!("partial_others_json", json);
}

/// References complete for the project they were asked in, and the files
/// outside it that write the name: a partial view, said so, with the data
/// (the folder, the projects, the files) in JSON.
#[test]
fn references_from_a_partial_view() {
    let mut a = references();
    a.partial = Some(Reason::OutsideServerView {
        server: "rust-analyzer".into(),
        name: "total_weight".into(),
        folders: vec![p("crates")],
        parts: vec![p("tools/report"), p("fuzz")],
        shown: vec![
            p("tools/report/src/main.rs"),
            p("fuzz/fuzz_targets/weights.rs"),
        ],
        files: 2,
        complete: true,
    });
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("references_partial_view_text", text);
    insta::assert_json_snapshot!("references_partial_view_json", json);
}

/// Files whose names are not UTF-8 write the name: the server cannot open
/// them, so the references are partial, said with the files (escaped) and
/// what to do (issue 38).
#[test]
fn references_missing_files_whose_names_are_not_utf8() {
    let mut a = references();
    a.partial = Some(Reason::NotUtf8Names {
        server: "rust-analyzer".into(),
        name: "total_weight".into(),
        shown: vec![p("src/odd.rs")],
        files: 2,
    });
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("references_not_utf8_text", text);
    assert_eq!(
        json["partial"],
        "rust-analyzer cannot open files whose names are not UTF-8 (a language server names a file as text), and `total_weight` is written in 2 such files: src/odd.rs, …"
    );
}

/// The server listed more than scry kept: the count is said as a lower
/// bound, in text and JSON (issue 38).
#[test]
fn a_server_capped_list_says_at_least() {
    let mut a = references();
    a.notes.push(Reason::ServerCapped {
        server: "rust-analyzer".into(),
        kept: 5,
    });
    let (text, json) = both(&a, &RenderOptions::default());
    assert!(
        text.starts_with("at least 5 references to `total_weight`"),
        "{text}"
    );
    assert_eq!(json["total"], 5);
    assert_eq!(json["total_at_least"], true);
    let (_, plain) = both(&references(), &RenderOptions::default());
    assert!(plain.get("total_at_least").is_none(), "{plain}");
}

#[test]
fn hover_with_html() {
    let raw = "```rust\npub struct Inventory<T>   \n```\n\n\n\n---\n\n\n<b>An inventory</b> of items&nbsp;of type &lt;T&gt;.<br>Use <code>restock</code> to add.<br/><br>\n\n\n\n\nSee also: `Vec<T>` &amp; friends.   \n\n";
    let text = normalize_hover(raw);
    let mut a = Answer::new(
        Action::Hover,
        question("Inventory", "src/inventory.rs"),
        Body::Hover { text },
    );
    a.server = Some("rust-analyzer".into());
    a.asked_at = Some(asked(
        "src/inventory.rs",
        3,
        12,
        "pub struct Inventory<T> {",
        decl("struct", "Inventory"),
    ));
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("hover_text", text);
    insta::assert_json_snapshot!("hover_json", json);
}

fn sym(
    name: &str,
    kind: &str,
    line: u32,
    detail: Option<&str>,
    children: Vec<SymbolNode>,
) -> SymbolNode {
    SymbolNode {
        name: name.into(),
        kind: kind.into(),
        detail: detail.map(str::to_string),
        line,
        col: 5,
        end_line: line + 3,
        children,
    }
}

#[test]
fn outline_nested() {
    let mut a = Answer::new(
        Action::Symbols,
        Question {
            path: Some(p("src/inventory.rs")),
            ..Question::default()
        },
        Body::Outline {
            path: p("src/inventory.rs"),
            symbols: vec![
                sym(
                    "total_weight",
                    "function",
                    120,
                    Some("fn(inv: &Inventory) -> u32"),
                    vec![],
                ),
                sym(
                    "Inventory",
                    "struct",
                    3,
                    None,
                    vec![
                        sym("items", "field", 4, Some("Vec<Item>"), vec![]),
                        sym("capacity", "field", 5, Some("u32"), vec![]),
                    ],
                ),
                sym(
                    "impl Inventory",
                    "object",
                    9,
                    None,
                    vec![
                        sym("new", "function", 10, Some("fn() -> Self"), vec![]),
                        sym(
                            "restock",
                            "method",
                            14,
                            Some(
                                "fn(&mut self, n: u32, reason: &'static str, when: std::time::SystemTime) -> Result<(), Error>",
                            ),
                            vec![sym("helper", "function", 15, None, vec![])],
                        ),
                    ],
                ),
            ],
        },
    );
    a.server = Some("rust-analyzer".into());
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("outline_text", text);
    insta::assert_json_snapshot!("outline_json", json);

    let opts = RenderOptions {
        max_locations: 4,
        ..RenderOptions::default()
    };
    let (text, json) = both(&a, &opts);
    insta::assert_snapshot!("outline_cap4_text", text);
    insta::assert_json_snapshot!("outline_cap4_json", json);
}

#[test]
fn workspace_symbols() {
    let item = |name: &str, kind: &str, container: Option<&str>, l: Loc| SymbolItem {
        name: name.into(),
        kind: kind.into(),
        container: container.map(str::to_string),
        loc: l,
    };
    let mut a = Answer::new(
        Action::WorkspaceSymbols,
        Question {
            query: Some("restock".into()),
            ..Question::default()
        },
        Body::WorkspaceSymbols {
            query: "restock".into(),
            symbols: vec![
                item(
                    "restock",
                    "method",
                    Some("Warehouse"),
                    loc("src/warehouse.rs", 40, 12, 7, None),
                ),
                item(
                    "restock",
                    "method",
                    Some("Inventory"),
                    loc("src/inventory.rs", 14, 12, 7, None),
                ),
                item(
                    "restock_all",
                    "function",
                    None,
                    loc("src/inventory.rs", 88, 8, 11, None),
                ),
            ],
        },
    );
    a.server = Some("rust-analyzer".into());
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("workspace_symbols_text", text);
    insta::assert_json_snapshot!("workspace_symbols_json", json);
}

#[test]
fn incoming_calls() {
    let citem = |name: &str, kind: &str, l: Loc| CallItem {
        name: name.into(),
        kind: kind.into(),
        detail: None,
        loc: l,
    };
    let mut a = Answer::new(
        Action::IncomingCalls,
        question("total_weight", "src/inventory.rs"),
        Body::Calls {
            direction: CallDirection::Incoming,
            item: Some(citem(
                "total_weight",
                "function",
                loc("src/inventory.rs", 12, 8, 12, None),
            )),
            calls: vec![
                CallEdge {
                    item: citem("main", "function", loc("src/main.rs", 2, 4, 4, None)),
                    sites: vec![
                        loc(
                            "src/main.rs",
                            9,
                            13,
                            12,
                            Some("    let again = total_weight(&inv);"),
                        ),
                        loc(
                            "src/main.rs",
                            4,
                            13,
                            12,
                            Some("    let w = total_weight(&inv);"),
                        ),
                    ],
                },
                CallEdge {
                    item: citem("report", "method", loc("src/inventory.rs", 28, 12, 6, None)),
                    sites: vec![loc(
                        "src/inventory.rs",
                        30,
                        17,
                        12,
                        Some("        let w = total_weight(self);"),
                    )],
                },
            ],
        },
    );
    a.server = Some("rust-analyzer".into());
    a.asked_at = Some(asked(
        "src/inventory.rs",
        12,
        8,
        "pub fn total_weight(inv: &Inventory) -> u32 {",
        decl("function", "total_weight"),
    ));
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("incoming_calls_text", text);
    insta::assert_json_snapshot!("incoming_calls_json", json);
}

#[test]
fn status() {
    let server = |id: &str, installed: Option<&str>, types: &[&str]| ProviderStatus {
        id: id.into(),
        kind: "lsp".into(),
        command: id.into(),
        installed: installed.map(PathBuf::from),
        file_types: types.iter().map(|s| s.to_string()).collect(),
        disabled: false,
        role: None,
        running: vec![],
    };
    let mut ra = server(
        "rust-analyzer",
        Some("/root/.cargo/bin/rust-analyzer"),
        &["rs"],
    );
    ra.running = vec![RunningServer {
        root: p("fixtures/rust"),
        folders: vec![
            Folder {
                path: p("fixtures/rust"),
                chosen_by: RootChoice::Workspace {
                    file: p("fixtures/rust/Cargo.toml"),
                    key: Some("workspace".into()),
                },
            },
            Folder {
                path: p("tools/x"),
                chosen_by: RootChoice::Package {
                    marker: p("tools/x/Cargo.toml"),
                },
            },
        ],
        programs: Vec::new(),
        pid: Some(123),
        state: RunState::Ready,
        encoding: Some("utf-8".into()),
        open_documents: 3,
        memory_kib: Some(1_890_000),
        processes: Some(2),
        memory_cap_kib: Some(8192 * 1024),
    }];
    let gopls = server("gopls", None, &["go"]);
    let mut pylsp = server("pylsp", None, &["py", "pyi"]);
    pylsp.role = Some(ProviderRole::AlternativeTo {
        primary: "pyright".into(),
    });
    let mut pyright = server(
        "pyright",
        Some("/usr/local/bin/pyright-langserver"),
        &["py", "pyi"],
    );
    // Two clients whose PATHs find another python: a server each, told
    // apart by it.
    pyright.running = ["venvA", "venvB"]
        .iter()
        .zip([201, 202])
        .map(|(venv, pid)| RunningServer {
            root: p("."),
            folders: Vec::new(),
            programs: vec![PathProgram {
                name: "python3".into(),
                path: PathBuf::from(format!("/home/u/{venv}/bin/python3")),
            }],
            pid: Some(pid),
            state: RunState::Ready,
            encoding: Some("utf-16".into()),
            open_documents: 1,
            memory_kib: None,
            processes: None,
            memory_cap_kib: None,
        })
        .collect();
    let mut clangd = server("clangd", Some("/usr/bin/clangd"), &["c", "h", "cpp"]);
    clangd.disabled = true;
    let mut ruff = server("ruff", Some("/usr/local/bin/ruff"), &["py", "pyi"]);
    ruff.kind = "cli".into();
    ruff.role = Some(ProviderRole::CliLinter);
    let a = Answer::new(
        Action::Status,
        Question::default(),
        Body::Status(StatusReport {
            workspace_root: PathBuf::from(ROOT),
            servers: vec![ra, gopls, pyright, pylsp, clangd, ruff],
            warnings: vec!["gopls is not installed: install it with `go install golang.org/x/tools/gopls@latest`".into()],
            trust_ignored: None,
            syntactic: None,
            index_problem: None,
            index: Some(IndexStatus {
                about: IndexAbout {
                    tool: "rust-analyzer".into(),
                    tool_version: "1.95.0".into(),
                    commit: None,
                    built_at_secs: 1_796_184_600,
                    age_secs: 12 * 60 + 30,
                    origin: IndexOrigin::Configured {
                        path: p("build/index.scip"),
                    },
                },
                documents: 42,
                changed: 1,
                refused: 0,
                refused_first: None,
                stale_unrefreshed: false,
            }),
            index_refresh: Some(RefreshStatus::Failed {
                ago_secs: 200,
                millis: 2140,
                error: format!(
                    "rust-analyzer failed (exit status: 1): error: cannot find {ROOT}/Cargo.toml"
                ),
            }),
            indexers: vec![
                IndexerStatus {
                    command: "rust-analyzer".into(),
                    server: "rust-analyzer".into(),
                    program: Some(PathBuf::from("/usr/bin/rust-analyzer")),
                    install: Some("rustup component add rust-analyzer".into()),
                },
                IndexerStatus {
                    command: "scip-python".into(),
                    server: "pyright".into(),
                    program: None,
                    install: Some("npm install -g @sourcegraph/scip-python".into()),
                },
            ],
            memory_events: vec![MemoryNote {
                at_secs: 21 * 3600 + 50 * 60 + 3,
                what: MemoryAction::Restarted {
                    server: "pyright".into(),
                    memory_kib: 2355 * 1024,
                    processes: 2,
                    memory_cap_kib: Some(2048 * 1024),
                    now: true,
                },
            }],
            memory_budget_kib: Some(16384 * 1024),
            watcher: Some(Box::new(WatcherStatus {
                watched: 10_000,
                polled: 2_003,
                dropped: 0,
                why: Some("over the 10000-directory bound".into()),
            })),
        }),
    );
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("status_text", text);
    insta::assert_json_snapshot!("status_json", json);
}

#[test]
fn capabilities_raw_reloaded() {
    let mut caps = Answer::new(
        Action::Capabilities,
        Question::default(),
        Body::Capabilities {
            server: "rust-analyzer".into(),
            root: p("fixtures/rust"),
            encoding: "utf-8".into(),
            capabilities: json!({"hoverProvider": true, "positionEncoding": "utf-8"}),
        },
    );
    caps.server = Some("rust-analyzer".into());
    let mut raw = Answer::new(
        Action::Request,
        Question::default(),
        Body::Raw {
            method: "rust-analyzer/viewSyntaxTree".into(),
            result: json!({"lines": (1..=60).map(|i| format!("NODE@{i}")).collect::<Vec<_>>()}),
        },
    );
    raw.server = Some("rust-analyzer".into());
    let reloaded = Answer::new(
        Action::Reload,
        Question::default(),
        Body::Reloaded { stopped: 1 },
    );
    let small = RenderOptions {
        max_locations: 100,
        max_chars: 300,
        ..RenderOptions::default()
    };
    let raw_text = render_text(&raw, root(), &small);
    assert!(raw_text.chars().count() <= 300);
    let raw_json = render_json(&raw, root(), &small);
    assert!(serde_json::to_string(&raw_json).unwrap().chars().count() <= 300);
    let out = [
        render_text(&caps, root(), &RenderOptions::default()),
        raw_text,
        render_text(&reloaded, root(), &RenderOptions::default()),
    ];
    insta::assert_snapshot!("caps_raw_reloaded_text", out.join("\n\n"));
    insta::assert_json_snapshot!("raw_capped_json", raw_json);
    insta::assert_json_snapshot!(
        "caps_json",
        render_json(&caps, root(), &RenderOptions::default())
    );
}

#[test]
fn hover_char_cap() {
    let body: String = (1..=400)
        .map(|i| format!("line {i} of the docs\n"))
        .collect();
    let a = Answer::new(
        Action::Hover,
        question("big", "src/a.rs"),
        Body::Hover { text: body },
    );
    let opts = RenderOptions {
        max_locations: 100,
        max_chars: 200,
        ..RenderOptions::default()
    };
    let text = render_text(&a, root(), &opts);
    assert!(text.chars().count() <= 200);
    insta::assert_snapshot!("hover_charcap_text", text);
}

#[test]
fn errors() {
    let errs = [
        OpError::FileNotFound(p("src/x.rs")),
        OpError::OutsideWorkspace {
            path: PathBuf::from("/etc/passwd"),
            root: PathBuf::from(ROOT),
        },
        OpError::BinaryFile(p("assets/logo.png")),
        OpError::SymbolNotFound(scry_render::msg!(
            "no symbol `restok` in ",
            path(p("src/inventory.rs")),
            "; did you mean `restock` (line 14)?"
        )),
        OpError::Timeout("rust-analyzer did not answer textDocument/references within 30s".into()),
    ];
    let lines: Vec<String> = errs.iter().map(|e| render_error(e, root())).collect();
    insta::assert_snapshot!("errors_text", lines.join("\n"));
    let json: Vec<_> = errs.iter().map(|e| error_json(e, root())).collect();
    insta::assert_json_snapshot!("errors_json", json);
}

/// An error that names an argument names it as the asking front end
/// spells it: `--timeout-ms` on the command line, `timeout_ms` in MCP, in
/// the error line, its JSON and a note quoting it.
#[test]
fn an_error_names_the_flag_in_each_front_ends_spelling() {
    use scry_model::action::Arg;
    let e = OpError::Timeout(scry_render::msg!(
        "references did not finish within its 30000 ms budget; try again or raise ",
        arg(Arg::Timeout)
    ));
    assert!(render_error(&e, root()).ends_with("raise timeout_ms"));
    let cli = scry_render::render_error_in(&e, root(), Dialect::Cli);
    assert!(cli.ends_with("raise --timeout-ms"), "{cli}");
    let json = scry_render::error_json_in(&e, root(), Dialect::Cli);
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("raise --timeout-ms")
    );
    let note = scry_model::Reason::Error { error: e.clone() };
    let said = scry_render::reason_text_in(&note, root(), Dialect::Cli);
    assert!(said.ends_with("raise --timeout-ms"), "{said}");
    assert!(scry_render::reason_text(&note, root()).ends_with("raise timeout_ms"));
}

/// An error that points at another question (the server log in `status`,
/// the journal in `undo`) asks it as the front end does: `scry status` on
/// the command line, `action=status` in MCP, never the CLI's spelling in an
/// MCP answer.
#[test]
fn an_error_names_the_question_to_ask_in_each_front_ends_spelling() {
    use scry_model::Example;
    let e = OpError::ServerCrashed(scry_render::msg!(
        "pyright failed to start: exit 1; see the server log (",
        example(Example::bare(Action::Status)),
        ") — the next call retries"
    ));
    let mcp = render_error(&e, root());
    assert!(mcp.contains("see the server log (action=status)"), "{mcp}");
    let cli = scry_render::render_error_in(&e, root(), Dialect::Cli);
    assert!(cli.contains("see the server log (scry status)"), "{cli}");
    let e = OpError::WriteFailed(scry_render::msg!(
        "restoring failed for a.py — their previous content is in scry's edit journal (",
        example(Example::bare(Action::Undo)),
        ")"
    ));
    assert!(render_error(&e, root()).ends_with("edit journal (action=undo)"));
    let cli = scry_render::render_error_in(&e, root(), Dialect::Cli);
    assert!(cli.ends_with("edit journal (scry undo)"), "{cli}");
}

/// A refused question names its arguments, actions and example in the
/// asking front end's syntax: MCP's arguments, the command line's flags,
/// positionals and command.
#[test]
fn a_refused_question_is_worded_in_each_front_ends_syntax() {
    use scry_model::action::Arg;
    use scry_model::{ArgProblem, Invalid};
    let refused = |action, arg, problem| {
        OpError::from(Invalid {
            action,
            arg,
            problem,
        })
    };
    let both = |e: &OpError| {
        (
            render_error(e, root()),
            scry_render::render_error_in(e, root(), Dialect::Cli),
        )
    };
    let e = refused(Action::Definition, Arg::Symbol, ArgProblem::Missing);
    assert_eq!(
        both(&e),
        (
            "error[INVALID_ARGUMENT]: definition needs a symbol, and usually a path: e.g. path=src/lib.rs symbol=Config".into(),
            "error[INVALID_ARGUMENT]: definition needs a --symbol, and usually a PATH: e.g. scry definition src/lib.rs Config".into()
        )
    );
    let e = refused(Action::Rename, Arg::Symbol, ArgProblem::NoSymbolOrLine);
    assert!(
        both(&e)
            .1
            .ends_with("e.g. scry rename src/lib.rs Config Settings"),
        "{:?}",
        both(&e)
    );
    let e = refused(Action::Symbols, Arg::Path, ArgProblem::Missing);
    assert_eq!(
        both(&e).1,
        "error[INVALID_ARGUMENT]: symbols needs a PATH (to search across files use workspace-symbols with a --query)"
    );
    let e = refused(Action::Hover, Arg::ActionIndex, ArgProblem::NotTaken);
    assert_eq!(
        both(&e),
        (
            "error[INVALID_ARGUMENT]: action_index and action_title pick a code action; hover takes neither".into(),
            "error[INVALID_ARGUMENT]: --apply N and --apply TITLE pick a code action; hover takes neither".into()
        )
    );
    let e = refused(Action::Hover, Arg::Line, ArgProblem::WithoutPath);
    assert_eq!(
        both(&e).1,
        "error[INVALID_ARGUMENT]: hover: --line and --column need a PATH (the file they are in)"
    );
    // An engine error naming an argument.
    let e = OpError::SymbolNotFound(scry_render::msg!(
        "`restok` does not occur in ",
        path(p("src/inventory.rs")),
        "; check the spelling, or omit ",
        arg(Arg::Path),
        " to search the workspace"
    ));
    assert_eq!(
        both(&e),
        (
            "error[SYMBOL_NOT_FOUND]: `restok` does not occur in src/inventory.rs; check the spelling, or omit path to search the workspace".into(),
            "error[SYMBOL_NOT_FOUND]: `restok` does not occur in src/inventory.rs; check the spelling, or omit PATH to search the workspace".into()
        )
    );
}

#[test]
fn many_locations_under_default_caps() {
    let locations: Vec<Loc> = (0..100_000u32)
        .map(|i| {
            loc(
                &format!("src/mod{}/file{}.rs", i % 97, i % 13),
                i / 7 + 1,
                (i % 80) + 1,
                4,
                Some("        let value = compute_something_rather_long(argument_one, argument_two, argument_three);"),
            )
        })
        .collect();
    let a = Answer::new(
        Action::References,
        question("compute_something_rather_long", "src/lib.rs"),
        Body::Locations { locations },
    );
    let opts = RenderOptions::default();
    let text = render_text(&a, root(), &opts);
    assert!(text.chars().count() <= 16_000, "{}", text.chars().count());
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("… ") && last.contains("more references in"),
        "{last}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("  ")).count(),
        100,
        "{text}"
    );

    let json = render_json(&a, root(), &opts);
    // JSON spends more characters per location: the character cap bites
    // before the location cap, and "omitted" says so.
    let shown = json["locations"].as_array().unwrap().len();
    assert!(shown > 50 && shown < 100, "{shown}");
    assert_eq!(json["total"], 100_000);
    assert_eq!(json["omitted"]["count"], 100_000 - shown);
    assert_eq!(json["omitted"]["reason"], "max_chars");
    assert!(serde_json::to_string(&json).unwrap().chars().count() <= 16_000);

    // A tiny character cap still never yields an empty string.
    let tiny = RenderOptions {
        max_locations: 100,
        max_chars: 10,
        ..RenderOptions::default()
    };
    let t = render_text(&a, root(), &tiny);
    assert!(!t.is_empty() && t.chars().count() <= 10, "{t}");
}

/// Issue 11: a file name with a line break cannot fake answer lines.
#[test]
fn control_characters_in_paths_cannot_fake_lines() {
    let fake = "src/a.rs\n  1:1  fn injected() {}\n\u{1b}[2Jb.rs";
    let a = Answer::new(
        Action::References,
        question("total_weight", fake),
        Body::Locations {
            locations: vec![loc(fake, 4, 13, 12, Some("let w = total_weight(&inv);"))],
        },
    );
    let (text, json) = both(&a, &RenderOptions::default());
    assert!(
        text.contains("src/a.rs\\n  1:1  fn injected() {}\\n\\u{1b}[2Jb.rs"),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.contains("injected") && !l.contains("\\n")),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(!json.to_string().contains("\\u001b"), "{json}");
}

/// Several occurrences of the name on the asked line with different
/// targets: a definition gives each target, labelled by column and form.
fn same_line_answer(action: Action) -> Answer {
    let line = "        HirKind::Literal(hir::Literal(ref bytes)) => {";
    let mut q = question("Literal", "src/hir/print.rs");
    q.line = Some(12);
    let body = Body::Locations {
        locations: vec![loc(
            "src/hir/mod.rs",
            140,
            5,
            7,
            Some("    Literal(Literal),"),
        )],
    };
    let mut a = Answer::new(action, q, body);
    a.server = Some("rust-analyzer".into());
    a.asked_at = Some(asked(
        "src/hir/print.rs",
        12,
        18,
        line,
        Via::OneOfTargets {
            form: "HirKind::Literal".into(),
            name: "Literal".into(),
            targets: 2,
            line: Some(12),
            at_line: 12,
            col: 18,
        },
    ));
    let other_body = (action != Action::References).then(|| Body::Locations {
        locations: vec![loc(
            "src/hir/mod.rs",
            610,
            12,
            7,
            Some("pub struct Literal(pub Box<[u8]>);"),
        )],
    });
    a.same_name = Some(scry_model::SameName {
        line: Some(12),
        answered_form: "HirKind::Literal".into(),
        others: vec![scry_model::SameNameOccurrence {
            line: 12,
            col: 35,
            form: "hir::Literal".into(),
            select: vec![
                Selector::Column(35),
                Selector::Symbol("hir::Literal".into()),
            ],
            body: other_body,
        }],
    });
    a
}

#[test]
fn same_line_definition_gives_each_target() {
    let (text, json) = both(
        &same_line_answer(Action::Definition),
        &RenderOptions::default(),
    );
    insta::assert_snapshot!("same_line_definition_text", text);
    insta::assert_json_snapshot!("same_line_definition_json", json);
}

/// The CLI words the arguments that select another occurrence as its own
/// flags; MCP (the default) as its arguments.
#[test]
fn same_line_selectors_in_the_cli_dialect() {
    let cli = RenderOptions {
        dialect: Dialect::Cli,
        ..RenderOptions::default()
    };
    let mut a = same_line_answer(Action::References);
    a.others = vec![Alternative {
        name: "Literal".into(),
        kind: "struct".into(),
        line: 610,
        col: 12,
        container: None,
    }];
    let (text, json) = both(&a, &cli);
    assert!(
        text.contains("(--column 35 or --symbol hir::Literal)"),
        "{text}"
    );
    assert!(text.contains("(pick one with --line)"), "{text}");
    assert!(!text.contains("column=35"), "{text}");
    assert_eq!(
        json["same_name"]["others"][0]["select"],
        json!(["--column 35", "--symbol hir::Literal"])
    );
    insta::assert_snapshot!("same_line_cli_text", text);
    let mcp = render_text(&a, root(), &RenderOptions::default());
    assert!(mcp.contains("(column=35 or symbol=hir::Literal)"), "{mcp}");
    assert!(mcp.contains("(pick one with line)"), "{mcp}");
}

#[test]
fn same_line_references_name_the_others() {
    let mut a = same_line_answer(Action::References);
    a.body = Body::Locations {
        locations: vec![
            loc("src/hir/mod.rs", 140, 5, 7, Some("    Literal(Literal),")),
            loc(
                "src/hir/print.rs",
                12,
                18,
                7,
                Some("        HirKind::Literal(hir::Literal(ref bytes)) => {"),
            ),
        ],
    };
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("same_line_references_text", text);
    insta::assert_json_snapshot!("same_line_references_json", json);
}

#[test]
fn not_on_the_asked_line() {
    let mut q = question("span", "src/parser.rs");
    q.line = Some(12);
    let mut a = Answer::new(
        Action::Definition,
        q,
        Body::Locations {
            locations: vec![loc(
                "src/parser.rs",
                301,
                12,
                4,
                Some("    pub fn span(&self) -> Span {"),
            )],
        },
    );
    a.server = Some("rust-analyzer".into());
    a.asked_at = Some(asked(
        "src/parser.rs",
        14,
        22,
        "        let s = self.span();",
        Via::NotOnLine {
            name: "span".into(),
            asked: 12,
            line: 14,
            first: true,
            prose: false,
        },
    ));
    let (text, json) = both(&a, &RenderOptions::default());
    insta::assert_snapshot!("not_on_line_text", text);
    insta::assert_json_snapshot!("not_on_line_json", json);
}
