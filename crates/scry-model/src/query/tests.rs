//! `Query::validate`: each refusal as data (its words are scry-render's,
//! tested there), and what each action's validated form carries.

use super::*;

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

/// The refusal of `q`: the argument and what is wrong with it (scry-render's
/// tests check its words).
fn refusal(q: &Query) -> (Arg, ArgProblem) {
    match q.check() {
        Err(e) => (e.arg, e.problem),
        other => panic!("{q:?} was not refused: {other:?}"),
    }
}

#[test]
fn front_ends_can_tell_refusals_apart() {
    let mut c = at(Action::Hover, Some("a.rs"), Some("x"), None);
    c.changes = true;
    let e = c.check().unwrap_err();
    assert_eq!((e.arg, e.problem), (Arg::Changes, ArgProblem::NotTaken));
    let e = at(Action::Rename, Some("a.rs"), Some("x"), None)
        .check()
        .unwrap_err();
    assert_eq!((e.arg, e.problem), (Arg::NewName, ArgProblem::Missing));
}

fn spot_in(path: &str, symbol: Option<&str>, line: Option<u32>, column: Option<u32>) -> Spot {
    Spot::InFile {
        path: path.into(),
        symbol: symbol.map(str::to_string),
        line,
        column,
    }
}

#[test]
fn positional_actions_carry_their_spot() {
    for action in Action::ALL.iter().copied().filter(|a| a.needs_position()) {
        let v = at(action, Some("a.rs"), Some("Config"), Some(4))
            .validate()
            .unwrap();
        assert_eq!(v.action(), action);
        assert_eq!(
            v.spot(),
            Some(&spot_in("a.rs", Some("Config"), Some(4), None))
        );
        let mut exact = at(action, Some("a.rs"), None, Some(4));
        exact.column = Some(7);
        assert_eq!(
            exact.validate().unwrap().spot(),
            Some(&spot_in("a.rs", None, Some(4), Some(7)))
        );
        // A blank symbol is no symbol; no path: looked up by name.
        let v = at(action, None, Some("Config"), None).validate().unwrap();
        assert_eq!(
            v.spot(),
            Some(&Spot::Named {
                symbol: "Config".into()
            })
        );
        assert!(
            at(action, Some("a.rs"), Some(" "), None)
                .validate()
                .is_err()
        );
        // Arguments other actions use are ignored, not refused.
        let mut extra = at(action, Some("a.rs"), Some("x"), None);
        extra.query = Some("q".into());
        extra.method = Some("m".into());
        assert!(extra.validate().is_ok());
    }
}

#[test]
fn other_actions_carry_their_arguments() {
    let v = at(Action::Symbols, Some("a.rs"), None, None).validate();
    assert_eq!(
        v.unwrap(),
        Valid::Symbols {
            path: "a.rs".into()
        }
    );

    let mut ws = at(Action::WorkspaceSymbols, None, Some("Conf"), None);
    assert_eq!(
        ws.validate().unwrap(),
        Valid::WorkspaceSymbols {
            query: "Conf".into(),
            path: None
        }
    );
    ws.query = Some("load".into());
    ws.path = Some("a.rs".into());
    assert_eq!(
        ws.validate().unwrap(),
        Valid::WorkspaceSymbols {
            query: "load".into(),
            path: Some("a.rs".into())
        }
    );

    let mut d = q(Action::Diagnostics);
    d.targets = vec!["src".into(), "*".into()];
    d.severity = Some(SeverityFilter::Error);
    d.changes = true;
    assert_eq!(
        d.validate().unwrap(),
        Valid::Diagnostics {
            targets: vec!["src".into(), "*".into()],
            path: None,
            severity: Some(SeverityFilter::Error),
            changes: true
        }
    );

    let mut r = at(Action::Rename, Some("a.rs"), Some("old"), None);
    r.new_name = Some("new".into());
    r.apply = false;
    r.idempotency_key = Some("k".into());
    assert_eq!(
        r.validate().unwrap(),
        Valid::Rename {
            spot: spot_in("a.rs", Some("old"), None, None),
            new_name: "new".into(),
            apply: false,
            idempotency_key: Some("k".into())
        }
    );

    let mut c = at(Action::CodeActions, Some("a.rs"), None, Some(3));
    let list = c.validate().unwrap();
    assert!(matches!(
        list,
        Valid::CodeActions {
            choice: None,
            line: Some(3),
            ..
        }
    ));
    c.action_index = Some(2);
    assert!(matches!(
        c.validate().unwrap(),
        Valid::CodeActions {
            choice: Some(ActionChoice::Index(2)),
            ..
        }
    ));
    c.action_index = None;
    c.action_title = Some("Import".into());
    assert!(matches!(
        c.validate().unwrap(),
        Valid::CodeActions { choice: Some(ActionChoice::Title(t)), .. } if t == "Import"
    ));

    let mut m = at(Action::Map, Some("src"), Some(" Engine "), None);
    m.targets = vec!["lib".into()];
    m.focus_symbols = vec!["Query".into(), " ".into()];
    assert_eq!(
        m.validate().unwrap(),
        Valid::Map {
            paths: vec!["src".into(), "lib".into()],
            symbols: vec!["Engine".into(), "Query".into()],
            budget: DEFAULT_MAP_BUDGET
        }
    );

    assert_eq!(q(Action::Status).validate().unwrap(), Valid::Status);
    assert_eq!(q(Action::Reload).validate().unwrap(), Valid::Reload);
    assert_eq!(
        q(Action::Capabilities).validate().unwrap(),
        Valid::Capabilities { path: None }
    );
    let mut u = q(Action::Undo);
    u.apply = false;
    assert_eq!(
        u.validate().unwrap(),
        Valid::Undo {
            apply: false,
            idempotency_key: None
        }
    );
    let mut req = q(Action::Request);
    req.method = Some("textDocument/foldingRange".into());
    req.params = Some(serde_json::json!({"textDocument": {"uri": "$uri"}}));
    assert_eq!(
        req.validate().unwrap(),
        Valid::Request {
            method: "textDocument/foldingRange".into(),
            params: Some(serde_json::json!({"textDocument": {"uri": "$uri"}})),
            path: None
        }
    );
}

/// Each action asked with what it needs (and more), validated.
fn each_action_valid() -> Vec<(Action, Valid)> {
    Action::ALL
        .iter()
        .copied()
        .map(|action| {
            let mut q = at(action, Some("a.rs"), Some("x"), Some(1));
            q.new_name = (action == Action::Rename).then(|| "y".into());
            q.method = Some("m".into());
            (action, q.validate().unwrap())
        })
        .collect()
}

/// Every action validates to its own question; the positional ones (the
/// table's flag) to the one positional variant.
#[test]
fn every_action_validates_to_its_own_variant() {
    for (action, v) in each_action_valid() {
        assert_eq!(v.action(), action);
        assert_eq!(
            matches!(v, Valid::Positional { .. }),
            action.facts().positional,
            "{action:?}"
        );
    }
}

#[test]
fn the_query_round_trips_through_json() {
    let mut q = at(Action::Rename, Some("src/a.rs"), Some("old"), Some(3));
    q.new_name = Some("new".into());
    q.timeout = Some(Duration::from_millis(2500));
    q.severity = Some(SeverityFilter::All);
    let v = serde_json::to_value(&q).unwrap();
    assert_eq!(v["action"], "rename");
    assert_eq!(v["timeout_ms"], 2500);
    let back: Query = serde_json::from_value(v).unwrap();
    assert_eq!(back, q);
}

#[test]
fn writes_follow_the_table_apply_and_the_chosen_action() {
    let rename = |apply| Valid::Rename {
        spot: spot_in("a.rs", Some("x"), None, None),
        new_name: "y".into(),
        apply,
        idempotency_key: None,
    };
    assert!(rename(true).writes());
    assert!(!rename(false).writes(), "a preview writes nothing");
    let code = |choice, apply| Valid::CodeActions {
        path: "a.rs".into(),
        symbol: None,
        line: Some(1),
        column: None,
        choice,
        apply,
        idempotency_key: None,
    };
    assert!(
        !code(None, true).writes(),
        "a list of code actions writes nothing"
    );
    assert!(code(Some(ActionChoice::Index(1)), true).writes());
    assert!(!code(Some(ActionChoice::Index(1)), false).writes());
    let undo = |apply| Valid::Undo {
        apply,
        idempotency_key: None,
    };
    assert!(undo(true).writes());
    assert!(!undo(false).writes());
    let hover = at(Action::Hover, Some("a.rs"), Some("x"), None);
    assert!(!hover.validate().unwrap().writes());
    assert!(!q(Action::Diagnostics).validate().unwrap().writes());
    let mut req = q(Action::Request);
    req.method = Some("m".into());
    assert!(req.validate().unwrap().writes());
    assert!(Valid::Reload.writes());
}

/// What a front end sends the daemon is read back unchanged; what no front
/// end could send (it breaks what validation guarantees) is refused.
#[test]
fn the_valid_question_crosses_the_wire_checked() {
    for (action, v) in each_action_valid() {
        let back: Valid = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
        assert_eq!(back, v, "{action:?}");
    }
    let read = |v: serde_json::Value| serde_json::from_value::<Valid>(v);
    let hover = at(Action::Hover, Some("a.rs"), Some("x"), Some(2));
    let good = serde_json::to_value(hover.validate().unwrap()).unwrap();
    assert_eq!(good["kind"], "positional");
    assert!(read(good.clone()).is_ok());
    let named = serde_json::json!({"kind": "positional", "action": "references", "spot": {"named": {"symbol": "x"}}});
    assert!(read(named.clone()).is_ok());
    let broken = |pointer: &str, value: serde_json::Value, from: &serde_json::Value| {
        let mut v = from.clone();
        *v.pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer}")) = value;
        v
    };
    for bad in [
        broken("/action", "symbols".into(), &good),
        broken("/action", "rename".into(), &good),
        broken("/spot/in_file/line", 0.into(), &good),
        broken("/spot/in_file/column", 0.into(), &good),
        broken("/spot/in_file/symbol", " ".into(), &good),
        broken("/spot/named/symbol", "".into(), &named),
        broken(
            "/spot/in_file/line",
            serde_json::Value::Null,
            &broken("/spot/in_file/column", 3.into(), &good),
        ),
        broken(
            "/spot/in_file/line",
            serde_json::Value::Null,
            &broken("/spot/in_file/symbol", serde_json::Value::Null, &good),
        ),
    ] {
        assert!(read(bad.clone()).is_err(), "{bad}");
    }
    let mut rename = at(Action::Rename, Some("a.rs"), Some("x"), None);
    rename.new_name = Some("y".into());
    let rename = serde_json::to_value(rename.validate().unwrap()).unwrap();
    for name in ["a\nb", " y", "", &"y".repeat(MAX_NEW_NAME_CHARS + 1)] {
        let bad = broken("/new_name", name.into(), &rename);
        assert!(read(bad.clone()).is_err(), "{bad}");
    }
    let map = serde_json::to_value(q(Action::Map).validate().unwrap()).unwrap();
    for budget in [0, MAX_MAP_BUDGET + 1] {
        assert!(read(broken("/budget", budget.into(), &map)).is_err());
    }
    let ws = serde_json::json!({"kind": "workspace_symbols", "query": " ", "path": null});
    assert!(read(ws).is_err());
    let req = serde_json::json!({"kind": "request", "method": "", "params": null, "path": null});
    assert!(read(req).is_err());
}

#[test]
fn new_names_are_checked() {
    let rename = |name: &str| {
        let mut r = at(Action::Rename, Some("a.rs"), Some("old"), None);
        r.new_name = Some(name.to_string());
        r
    };
    let name_of = |r: &Query| match r.validate().unwrap() {
        Valid::Rename { new_name, .. } => new_name,
        other => panic!("not a rename: {other:?}"),
    };
    assert_eq!(name_of(&rename("weight_sum")), "weight_sum");
    assert_eq!(name_of(&rename("  Café ")), "Café");
    let long = "x".repeat(MAX_NEW_NAME_CHARS);
    assert_eq!(name_of(&rename(&long)), long);
    for bad in [
        "foo\nbar",
        "foo\n",
        "\tfoo",
        "foo\r",
        "a\u{1b}[31m",
        "a\u{2028}b",
        "a\u{0}",
        &"y".repeat(MAX_NEW_NAME_CHARS + 1),
    ] {
        let e = rename(bad).validate().unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{bad:?}");
    }
    // Blank: missing, as any blank argument.
    for blank in ["", "   ", "\t"] {
        assert_eq!(refusal(&rename(blank)), (Arg::NewName, ArgProblem::Missing));
    }
    assert_eq!(
        refusal(&rename("foo\nbar")),
        (Arg::NewName, ArgProblem::ControlChar('\n'))
    );
    assert_eq!(
        refusal(&rename(&"y".repeat(MAX_NEW_NAME_CHARS + 1))),
        (Arg::NewName, ArgProblem::TooLong(MAX_NEW_NAME_CHARS + 1))
    );
    // The name it already has (also as the last part of a qualified
    // name): nothing to rename, refused before any server is asked.
    for (symbol, new) in [("old", "old"), ("Shape.old", "old"), ("m::old", " old ")] {
        let mut r = rename(new);
        r.symbol = Some(symbol.into());
        assert_eq!(
            refusal(&r),
            (Arg::NewName, ArgProblem::Unchanged),
            "{symbol} -> {new}"
        );
    }
    assert_eq!(name_of(&rename("old2")), "old2");
    // Checked after where it points: a rename pointing nowhere says so
    // first, as before.
    let mut nowhere = rename("a\nb");
    nowhere.path = None;
    nowhere.symbol = None;
    assert_eq!(refusal(&nowhere), (Arg::Symbol, ArgProblem::NoSymbolOrLine));
}
