//! Error sentences from their facts (`scry_render::fact`, reached through
//! `error_text`): each refusal `Query::validate` makes, with its exact text
//! in MCP's syntax (the command line's is in `render.rs`), and the
//! no-server and lost-daemon sentences in both front ends' syntax.

use std::path::{Path, PathBuf};

use scry_model::limits::MAX_MAP_BUDGET;
use scry_model::query::MAX_NEW_NAME_CHARS;
use scry_model::{Action, OpError, Query, SeverityFilter};

fn q(action: Action) -> Query {
    Query::new(action)
}

fn at(action: Action, path: Option<&str>, symbol: Option<&str>, line: Option<u32>) -> Query {
    let mut q = q(action);
    q.path = path.map(PathBuf::from);
    q.symbol = symbol.map(str::to_string);
    q.line = line;
    q
}

/// The words of `q`'s refusal, as an MCP answer shows them.
fn refusal(q: &Query) -> String {
    match q.validate() {
        Err(e @ OpError::InvalidArgument(_)) => scry_render::error_text(&e, Path::new("/ws")),
        other => panic!("{q:?} was not refused: {other:?}"),
    }
}

#[test]
fn refusals_and_their_texts() {
    let mut cases: Vec<(Query, &str)> = Vec::new();
    let mut zero_line = at(Action::Hover, Some("a.rs"), Some("x"), Some(0));
    cases.push((zero_line.clone(), "line is 1-based: the first line is 1"));
    zero_line.line = Some(3);
    zero_line.column = Some(0);
    cases.push((
        zero_line,
        "column is 1-based (characters): the first column is 1",
    ));
    let mut col = at(Action::Definition, Some("a.rs"), None, None);
    col.column = Some(2);
    cases.push((
        col,
        "column needs line as well (or name the symbol instead)",
    ));
    cases.push((
        at(Action::References, Some("a.rs"), None, None),
        "references needs a symbol (or a line): e.g. path=src/lib.rs symbol=Config",
    ));
    cases.push((
        at(Action::Definition, None, None, None),
        "definition needs a symbol, and usually a path: e.g. path=src/lib.rs symbol=Config",
    ));
    cases.push((
        at(Action::Definition, None, None, Some(3)),
        "definition needs a symbol, and usually a path: e.g. path=src/lib.rs symbol=Config",
    ));
    cases.push((
        at(Action::Hover, None, Some("x"), Some(3)),
        "hover: line and column need a path (the file they are in)",
    ));
    cases.push((
        at(Action::Symbols, None, None, None),
        "symbols needs a path (to search across files use workspace_symbols with a query)",
    ));
    let mut blank = q(Action::WorkspaceSymbols);
    blank.query = Some("  ".into());
    cases.push((
        blank,
        "workspace_symbols needs a query (part of a symbol name)",
    ));
    cases.push((
        q(Action::Request),
        "request needs a method (e.g. textDocument/foldingRange) and params",
    ));
    cases.push((
        at(Action::Rename, Some("a.rs"), Some("x"), None),
        "rename needs new_name (and path + symbol): e.g. path=src/lib.rs symbol=Config new_name=Settings",
    ));
    let mut rename = at(Action::Rename, Some("a.rs"), None, None);
    rename.new_name = Some("y".into());
    cases.push((
        rename.clone(),
        "rename needs a symbol (or a line): e.g. path=src/lib.rs symbol=Config new_name=Settings",
    ));
    rename.path = None;
    cases.push((
        rename.clone(),
        "rename needs a symbol (or a line): e.g. path=src/lib.rs symbol=Config new_name=Settings",
    ));
    rename.line = Some(2);
    cases.push((
        rename,
        "rename: line and column need a path (the file they are in)",
    ));
    cases.push((
        q(Action::CodeActions),
        "code_actions needs a path (and optionally a symbol or a line)",
    ));
    let mut both = at(Action::CodeActions, Some("a.rs"), None, None);
    both.action_index = Some(1);
    both.action_title = Some("Fix".into());
    cases.push((
        both,
        "pick a code action by action_index or by action_title, not both",
    ));
    let mut nn = at(Action::Hover, Some("a.rs"), Some("x"), None);
    nn.new_name = Some("y".into());
    cases.push((nn, "new_name is for rename, not hover"));
    let mut ix = at(Action::Hover, Some("a.rs"), Some("x"), None);
    ix.action_title = Some("Fix".into());
    cases.push((
        ix,
        "action_index and action_title pick a code action; hover takes neither",
    ));
    let mut sev = at(Action::Symbols, Some("a.rs"), None, None);
    sev.severity = Some(SeverityFilter::All);
    cases.push((sev, "severity is for diagnostics, not symbols"));
    let mut ch = at(Action::Symbols, Some("a.rs"), None, None);
    ch.changes = true;
    ch.column = Some(1);
    // `changes` is reported before the column without a line.
    cases.push((ch, "changes is for diagnostics, not symbols"));
    let mut budget = q(Action::Map);
    budget.budget = Some(MAX_MAP_BUDGET + 1);
    cases.push((
        budget.clone(),
        "budget is a number of characters from 1 to 15000 (default 4000)",
    ));
    budget.budget = Some(0);
    cases.push((
        budget,
        "budget is a number of characters from 1 to 15000 (default 4000)",
    ));
    for (query, want) in cases {
        assert_eq!(refusal(&query), want, "{query:?}");
    }
}

#[test]
fn new_name_refusals() {
    let rename = |name: &str| {
        let mut r = at(Action::Rename, Some("a.rs"), Some("old"), None);
        r.new_name = Some(name.to_string());
        r
    };
    for blank in ["", "   ", "\t"] {
        assert_eq!(
            refusal(&rename(blank)),
            "rename needs new_name (and path + symbol): e.g. path=src/lib.rs symbol=Config new_name=Settings"
        );
    }
    assert_eq!(
        refusal(&rename("foo\nbar")),
        "new_name contains the control character \\n; nothing was changed. Give the new identifier alone, on one line"
    );
    assert_eq!(
        refusal(&rename(&"y".repeat(MAX_NEW_NAME_CHARS + 1))),
        format!(
            "new_name is {} characters long (at most {MAX_NEW_NAME_CHARS}); nothing was changed. Give the new identifier alone, on one line",
            MAX_NEW_NAME_CHARS + 1
        )
    );
    for (symbol, new) in [("old", "old"), ("Shape.old", "old"), ("m::old", " old ")] {
        let mut r = rename(new);
        r.symbol = Some(symbol.into());
        assert_eq!(
            refusal(&r),
            "new_name is the name the symbol already has: renaming it to itself changes nothing, so nothing was asked or written. Give a different new_name",
            "{symbol} -> {new}"
        );
    }
    let mut nowhere = rename("a\nb");
    nowhere.path = None;
    nowhere.symbol = None;
    assert_eq!(
        refusal(&nowhere),
        "rename needs a symbol (or a line): e.g. path=src/lib.rs symbol=Config new_name=Settings"
    );
}

/// The no-server sentences from their facts: the configured commands are
/// foreign text (a root they name is shown relative), the question that
/// shows the configuration is asked as each front end asks it.
#[test]
fn no_server_facts_are_worded_per_front_end() {
    use scry_model::{Fact, Message};
    let root = Path::new("/ws");
    let err = |fact| OpError::NoServer(Message::new().fact(fact));
    let none = err(Fact::NoServerConfigured {
        file: "*.rb files".into(),
    });
    assert_eq!(
        scry_render::error_text(&none, root),
        "no language server is configured for *.rb files; add one to .scry.json (see `action=status`)"
    );
    assert_eq!(
        scry_render::error_text_in(&none, root, scry_render::Dialect::Cli),
        "no language server is configured for *.rb files; add one to .scry.json (see `scry status`)"
    );
    let missing = err(Fact::NoServerInstalled {
        file: "*.py files".into(),
        missing: vec![
            ("pyright".into(), "pyright-langserver".into()),
            ("pylsp".into(), "/ws/.venv/bin/pylsp".into()),
        ],
    });
    assert_eq!(
        scry_render::error_text(&missing, root),
        "no installed language server for *.py files: pyright (command `pyright-langserver`), pylsp (command `.venv/bin/pylsp`) not found on PATH; install it or configure another server"
    );
    let lost = OpError::DaemonRestarted(Message::new().fact(Fact::DaemonLost {
        pid: 42,
        why: "connection reset".into(),
        writes: true,
    }));
    assert_eq!(
        scry_render::error_text(&lost, root),
        "the scry daemon (pid 42) stopped during the call (connection reset); the next call starts a new one; an edit it left half-written is rolled back by the next call (which says so); undo as a dry run shows the last applied one"
    );
}

/// The typed errors' sentences from their fields, paths shown as the reader
/// shows them (relative inside the root; the root itself absolute).
#[test]
fn typed_errors_are_worded_from_their_fields() {
    let root = Path::new("/ws");
    let errs = [
        (
            OpError::FileNotFound("/ws/a.rs".into()),
            "file not found: a.rs",
        ),
        (
            OpError::BinaryFile("/ws/a.png".into()),
            "a.png is not a text file",
        ),
        (
            OpError::OutsideWorkspace {
                path: "/etc/passwd".into(),
                root: "/ws".into(),
            },
            "/etc/passwd is outside the workspace /ws; only files inside it can be asked about",
        ),
        (
            OpError::FileTooLarge {
                path: "/ws/big.rs".into(),
                len: 5 * 1024 * 1024 + 1,
                limit: 4 * 1024 * 1024,
            },
            "big.rs is 5121 KiB, over the 4096 KiB file limit; it is not read (raise limits.maxFileBytes to read it)",
        ),
        (
            OpError::NotARegularFile {
                path: "/ws/fifo".into(),
                kind: "a FIFO".into(),
            },
            "fifo is not a regular file (a FIFO); scry reads only regular files",
        ),
    ];
    for (e, said) in errs {
        assert_eq!(scry_render::error_text(&e, root), said, "{e:?}");
        assert!(e.to_string().starts_with(e.code()), "Display is data: {e}");
    }
}

/// Every edit fact's sentence (planning, writing, undoing a workspace
/// edit), as MCP shows it, and the one that names a command as the command
/// line spells it.
#[test]
fn edit_facts_are_worded() {
    use scry_model::EditFact as E;
    use scry_model::edit_fact::{MoveProblem, Protection, Unrecovered, Unrestored, WriteStep};
    let root = Path::new("/ws");
    let p = |s: &str| PathBuf::from(format!("/ws/{s}"));
    let srv = || "rust-analyzer".to_string();
    let step = WriteStep::Replace {
        path: p("b.rs"),
        k: 2,
        n: 3,
        why: "Permission denied (os error 13)".into(),
    };
    let facts = vec![
        E::DanglingLink { path: p("l") },
        E::WorkspaceRoot { root: "/ws".into() },
        E::Protected {
            path: p(".git/config"),
            why: Protection::InsideGit,
        },
        E::Protected {
            path: p(".scry.json"),
            why: Protection::ScryConfig,
        },
        E::Protected {
            path: p("lsp.json"),
            why: Protection::ReadConfig,
        },
        E::Protected {
            path: p("u.json"),
            why: Protection::UserConfig,
        },
        E::NotAUri {
            field: "CreateFile.uri".into(),
        },
        E::NotAFile {
            uri: "http://x/a.rs".into(),
        },
        E::CannotRead {
            path: p("a.rs"),
            why: "Permission denied (os error 13)".into(),
        },
        E::Symlink { path: p("l") },
        E::NotRegular { path: p("fifo") },
        E::TooManyBytes { mib: 256 },
        E::TooManyPaths { max: 5000 },
        E::InsideAFile {
            file: p("a.rs"),
            path: p("a.rs/b.rs"),
        },
        E::DirTooLarge {
            path: p("vendor"),
            max: 5000,
        },
        E::ChangesMissing { path: p("gone.rs") },
        E::ChangesDirectory { path: p("src") },
        E::NotUtf8 { path: p("a.bin") },
        E::ChangedSinceRead {
            path: p("a.rs"),
            server: srv(),
        },
        E::VersionMismatch {
            server: srv(),
            path: p("a.rs"),
            version: 3,
            synced: 4,
        },
        E::TextEditWithout {
            path: p("a.rs"),
            field: "newText".into(),
        },
        E::NotAPosition {
            server: srv(),
            path: p("a.rs"),
            line: 9,
            col: 80,
            encoding: "UTF-16".into(),
        },
        E::RangeReversed {
            server: srv(),
            path: p("a.rs"),
        },
        E::Overlapping {
            server: srv(),
            path: p("a.rs"),
            line: 2,
            col: 5,
        },
        E::CreateOverDirectory { path: p("src") },
        E::CreateExists { path: p("a.rs") },
        E::MoveRefused {
            from: p("src"),
            to: p("src/inner"),
            why: MoveProblem::IntoItself,
        },
        E::MoveRefused {
            from: p("a.rs"),
            to: p("b.rs"),
            why: MoveProblem::Missing,
        },
        E::MoveRefused {
            from: p("a.rs"),
            to: p("b.rs"),
            why: MoveProblem::Exists,
        },
        E::DeleteMissing { path: p("a.rs") },
        E::DeleteNonEmpty { path: p("src") },
        E::NoWorkspaceEdit { server: srv() },
        E::UnknownOperation {
            server: srv(),
            kind: "copy".into(),
        },
        E::NoEdits { server: srv() },
        E::EditsNotAList {
            server: srv(),
            uri: "file:///ws/a.rs".into(),
        },
        E::TwoEditLists {
            server: srv(),
            path: p("a.rs"),
        },
        E::ChangedWhilePrepared { path: p("a.rs") },
        E::WriteFailed {
            step: step.clone(),
            unrestored: vec![],
        },
        E::WriteFailed {
            step: WriteStep::CreateDir {
                path: p("new"),
                why: "No space left on device (os error 28)".into(),
            },
            unrestored: vec![],
        },
        E::WriteFailed {
            step: WriteStep::Stage {
                path: p("a.rs"),
                why: "No space left on device (os error 28)".into(),
            },
            unrestored: vec![],
        },
        E::WriteFailed {
            step: WriteStep::RemoveDir {
                path: p("old"),
                why: "Directory not empty (os error 39)".into(),
            },
            unrestored: vec![],
        },
        E::WriteFailed {
            step,
            unrestored: vec![
                Unrestored {
                    path: p("a.rs"),
                    why: "Read-only file system (os error 30)".into(),
                },
                Unrestored {
                    path: p("c.rs"),
                    why: "Read-only file system (os error 30)".into(),
                },
            ],
        },
        E::LockFailed {
            lock: "/state/journal/ws.lock".into(),
            why: "Not a directory (os error 20)".into(),
        },
        E::Busy {
            root: "/ws".into(),
            lock: "/state/journal/ws.lock".into(),
        },
        E::ReplayUnreadable {
            why: "missing field `files`".into(),
        },
        E::RecoveryFailed {
            failed: vec![Unrecovered {
                title: "rename `a` → `b`".into(),
                id: "000000000007-deadbeef00".into(),
                path: p("a.rs"),
                why: "Permission denied (os error 13)".into(),
            }],
            journal: "/state/journal/ws".into(),
        },
        E::JournalUnwritable {
            why: "No space left on device (os error 28)".into(),
            undo: false,
        },
        E::JournalUnwritable {
            why: "No space left on device (os error 28)".into(),
            undo: true,
        },
        E::NothingToUndo {
            root: "/ws".into(),
            journal: None,
        },
        E::NothingToUndo {
            root: "/ws".into(),
            journal: Some("/state/journal/ws".into()),
        },
        E::ChangedSinceEdit {
            path: p("a.rs"),
            title: "rename `a` → `b`".into(),
        },
        E::JournalLost { path: p("a.rs") },
    ];
    let mut out = String::new();
    for f in facts {
        let names_undo = matches!(&f, E::WriteFailed { unrestored, .. } if !unrestored.is_empty());
        let err = OpError::EditRejected(f.message());
        out.push_str(&scry_render::error_text(&err, root));
        out.push('\n');
        if names_undo {
            let cli = scry_render::error_text_in(&err, root, scry_render::Dialect::Cli);
            out.push_str(&format!("(command line) {cli}\n"));
        }
    }
    insta::assert_snapshot!(out);
}

/// Every refusal of an MCP tool call's own, as MCP shows it (a client's
/// value quoted cut to 40 characters).
#[test]
fn tool_facts_are_worded() {
    use scry_model::ToolFact as T;
    let key = || "line".to_string();
    let facts = vec![
        T::NotAString {
            key: "symbol".into(),
            got: "[1,2]".into(),
        },
        T::OverMax {
            key: key(),
            got: "4294967296".into(),
            max: 4294967295,
        },
        T::ZeroForOneBased { key: key() },
        T::NotPositive {
            key: key(),
            got: "-3".into(),
        },
        T::NotAnInteger {
            key: key(),
            got: format!("\"{}\"", "x".repeat(60)),
        },
        T::NotABoolean {
            key: "apply".into(),
            got: "\"yes\"".into(),
        },
        T::UnknownArguments {
            tool: "lsp".into(),
            unknown: vec!["file".into()],
            takes: vec!["action".into(), "path".into()],
        },
        T::UnknownArguments {
            tool: "lsp".into(),
            unknown: vec!["file".into(), "pos".into()],
            takes: vec!["action".into(), "path".into()],
        },
        T::NoAction {
            tool: "lsp".into(),
            allowed: vec![Action::Definition, Action::References],
        },
        T::OtherToolsAction {
            action: Action::Rename,
            writes: true,
        },
        T::OtherToolsAction {
            action: Action::Hover,
            writes: false,
        },
        T::UnknownAction {
            tool: "lsp".into(),
            name: "goto".into(),
            allowed: vec![Action::Definition, Action::References],
        },
        T::BadSeverity {
            got: "fatal".into(),
        },
        T::ParamsNotJson {
            why: "expected value at line 1 column 1".into(),
        },
        T::ParamsNotAnObject { got: "3".into() },
        T::CodeActionToApply,
        T::ReadOnly {
            tool: "lsp".into(),
            action: Action::Rename,
        },
        T::ReadOnly {
            tool: "lsp_edit".into(),
            action: Action::Rename,
        },
        T::PreviewOnly {
            action: Action::Rename,
        },
        T::TooManyCalls { max: 8 },
        T::IdReused { id: "7".into() },
        T::Cancelled,
    ];
    let mut out = String::new();
    for f in facts {
        let err = OpError::InvalidArgument(f.message());
        out.push_str(&scry_render::error_text(&err, Path::new("/ws")));
        out.push('\n');
    }
    insta::assert_snapshot!(out);
}
