//! The `new_name` table: valid and invalid names per language, the
//! invisible characters refused everywhere, and the injection of issue 20.

use std::path::Path;

use super::*;

/// The injection a rename must never write.
const INJECTION: &str = r#"x = __import__("os").system("echo INJECTED")"#;

/// (file, name, None when valid / Some(the message) when refused).
const TABLE: &[(&str, &str, Option<&str>)] = &[
    // Rust.
    ("a.rs", "total_weight", None),
    ("a.rs", "Größe", None),
    ("a.rs", "_unused", None),
    ("a.rs", "r#fn", None),
    ("a.rs", "r#match", None),
    ("a.rs", "'a", None),
    (
        "a.rs",
        "fn",
        Some("`fn` is a Rust keyword (`r#fn` would be a name)"),
    ),
    ("a.rs", "Self", Some("`Self` is a Rust keyword")),
    ("a.rs", "_", Some("`_` is a Rust keyword")),
    (
        "a.rs",
        "r#crate",
        Some("`r#crate` cannot be a Rust name: `crate` cannot follow `r#`"),
    ),
    (
        "a.rs",
        "r#",
        Some("`r#` cannot be a Rust name: nothing follows `r#`"),
    ),
    ("a.rs", "'static", Some("`static` is a Rust keyword")),
    (
        "a.rs",
        "a::b",
        Some("`a::b` cannot be a Rust name: it contains `:`"),
    ),
    (
        "a.rs",
        "$x",
        Some("`$x` cannot be a Rust name: it starts with `$`"),
    ),
    (
        "a.rs",
        "9lives",
        Some("`9lives` cannot be a Rust name: it starts with a digit"),
    ),
    // Python.
    ("app.py", "total_weight", None),
    ("app.py", "match", None),
    ("app.py", "_", None),
    ("app.py", "naïve", None),
    (
        "app.py",
        "1abc",
        Some("`1abc` cannot be a Python name: it starts with a digit"),
    ),
    ("app.py", "class", Some("`class` is a Python keyword")),
    ("app.py", "None", Some("`None` is a Python keyword")),
    (
        "app.py",
        "a.b",
        Some("`a.b` cannot be a Python name: it contains `.`"),
    ),
    (
        "app.py",
        "a b",
        Some("`a b` cannot be a Python name: it contains a space"),
    ),
    (
        "app.py",
        "a-b",
        Some("`a-b` cannot be a Python name: it contains `-`"),
    ),
    (
        "app.py",
        "$x",
        Some("`$x` cannot be a Python name: it starts with `$`"),
    ),
    (
        "app.py",
        "'a",
        Some("`'a` cannot be a Python name: it starts with `'`"),
    ),
    (
        "app.py",
        INJECTION,
        Some(
            "`x = __import__(\"os\").system(\"echo INJECTED\")` cannot be a Python name: it contains a space",
        ),
    ),
    (
        "app.py",
        "a\u{00A0}b",
        Some("`a\\u{a0}b` cannot be a Python name: it contains the invisible character U+00A0"),
    ),
    // TypeScript and JavaScript.
    ("a.ts", "$store", None),
    ("a.ts", "jQuery$", None),
    ("a.ts", "_private", None),
    ("a.ts", "#secret", None),
    ("a.tsx", "Widget", None),
    ("a.js", "$", None),
    ("a.ts", "class", Some("`class` is a TypeScript keyword")),
    ("a.ts", "await", Some("`await` is a TypeScript keyword")),
    (
        "a.js",
        "function",
        Some("`function` is a JavaScript keyword"),
    ),
    (
        "a.ts",
        "my-var",
        Some("`my-var` cannot be a TypeScript name: it contains `-`"),
    ),
    (
        "a.ts",
        "2d",
        Some("`2d` cannot be a TypeScript name: it starts with a digit"),
    ),
    (
        "a.ts",
        "a;b",
        Some("`a;b` cannot be a TypeScript name: it contains `;`"),
    ),
    // Go.
    ("main.go", "totalWeight", None),
    ("main.go", "Übung", None),
    ("main.go", "func", Some("`func` is a Go keyword")),
    ("main.go", "chan", Some("`chan` is a Go keyword")),
    (
        "main.go",
        "pkg.Name",
        Some("`pkg.Name` cannot be a Go name: it contains `.`"),
    ),
    (
        "main.go",
        "$x",
        Some("`$x` cannot be a Go name: it starts with `$`"),
    ),
    // C and C++.
    ("a.c", "total_weight", None),
    ("a.c", "class", None),
    ("a.h", "_Reserved", None),
    ("a.c", "int", Some("`int` is a C keyword")),
    ("a.c", "_Bool", Some("`_Bool` is a C keyword")),
    (
        "a.c",
        "a->b",
        Some("`a->b` cannot be a C name: it contains `-`"),
    ),
    (
        "a.c",
        "x$",
        Some("`x$` cannot be a C name: it contains `$`"),
    ),
    ("a.cpp", "class", Some("`class` is a C++ keyword")),
    ("a.cpp", "and", Some("`and` is a C++ keyword")),
    (
        "a.cpp",
        "ns::f",
        Some("`ns::f` cannot be a C++ name: it contains `:`"),
    ),
    (
        "a.cpp",
        "~Widget",
        Some("`~Widget` cannot be a C++ name: it starts with `~`"),
    ),
    // Others the table knows.
    ("run.sh", "my_var", None),
    (
        "run.sh",
        "é",
        Some("`é` cannot be a Bash name: it starts with `é` (U+00E9)"),
    ),
    ("run.sh", "done", Some("`done` is a Bash keyword")),
    ("A.java", "$proxy", None),
    ("A.java", "class", Some("`class` is a Java keyword")),
    ("a.cs", "@class", None),
    (
        "a.cs",
        "class",
        Some("`class` is a C# keyword (`@class` would be a name)"),
    ),
    ("a.rb", "empty?", None),
    ("a.rb", "@count", None),
    ("a.rb", "@@total", None),
    ("a.rb", "save!", None),
    (
        "a.rb",
        "a?b",
        Some("`a?b` cannot be a Ruby name: it contains `?`"),
    ),
    ("a.php", "$count", None),
    ("a.php", "count", None),
    // No rules of its own: Unicode identifiers.
    ("a.yaml", "anchor_1", None),
    (
        "a.unknown",
        "x y",
        Some("`x y` cannot be a name: it contains a space (a name is letters, digits and `_`)"),
    ),
    (
        "noext",
        "1x",
        Some("`1x` cannot be a name: it starts with a digit"),
    ),
];

#[test]
fn the_table() {
    let mut wrong = Vec::new();
    for (file, name, want) in TABLE {
        let got = check_for(Path::new(file), name).map_err(|e| e.to_string());
        let want = want.map(str::to_string);
        if got != want.clone().map_or(Ok(()), Err) {
            wrong.push(format!("{file} {name:?}: got {got:?}, want {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Bidi controls and zero-width characters: refused in every language,
/// before any rule of the language, with the character named and the name
/// shown escaped (never the raw control, which would reorder the message).
#[test]
fn format_characters_are_refused_everywhere() {
    let named = [
        ('\u{202A}', "LEFT-TO-RIGHT EMBEDDING"),
        ('\u{202B}', "RIGHT-TO-LEFT EMBEDDING"),
        ('\u{202C}', "POP DIRECTIONAL FORMATTING"),
        ('\u{202D}', "LEFT-TO-RIGHT OVERRIDE"),
        ('\u{202E}', "RIGHT-TO-LEFT OVERRIDE"),
        ('\u{2066}', "LEFT-TO-RIGHT ISOLATE"),
        ('\u{2067}', "RIGHT-TO-LEFT ISOLATE"),
        ('\u{2068}', "FIRST STRONG ISOLATE"),
        ('\u{2069}', "POP DIRECTIONAL ISOLATE"),
        ('\u{200B}', "ZERO WIDTH SPACE"),
        ('\u{200C}', "ZERO WIDTH NON-JOINER"),
        ('\u{200D}', "ZERO WIDTH JOINER"),
        ('\u{2060}', "WORD JOINER"),
        ('\u{FEFF}', "ZERO WIDTH NO-BREAK SPACE"),
        ('\u{00AD}', "SOFT HYPHEN"),
    ];
    let files = [
        "a.rs", "a.py", "a.ts", "a.js", "a.go", "a.c", "a.cpp", "a.sh", "a.rb", "a.cs", "a.php",
        "a.java", "a.yaml", "noext",
    ];
    for (c, cname) in named {
        for file in files {
            for name in [
                format!("ab{c}c"),
                format!("{c}abc"),
                format!("abc{c}"),
                format!("r#{c}x"),
            ] {
                let e = check_for(Path::new(file), &name).expect_err(&name);
                assert_eq!(e.problem, BrokenRule::Format(c), "{file} {name:?}");
                let msg = e.to_string();
                let want = format!(
                    "contains U+{:04X} {cname}, a Unicode format character",
                    c as u32
                );
                assert!(msg.contains(&want), "{msg}");
                assert!(!msg.contains(c), "the raw character is shown: {msg:?}");
            }
        }
    }
    // A format character without a name in the table still is one.
    let e = check_for(Path::new("a.py"), "a\u{E0041}").unwrap_err();
    assert_eq!(e.problem, BrokenRule::Format('\u{E0041}'));
    assert!(
        e.to_string()
            .contains("U+E0041, a Unicode format character")
    );
}

/// Every language's rules parse, name the language, and hold no keyword
/// that is not itself a name of that language's shape (a typo in the data).
#[test]
fn every_language_has_rules() {
    for spec in crate::lang::specs() {
        let rules = spec
            .names
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no names", spec.id));
        assert!(!rules.language.is_empty(), "{}", spec.id);
        for k in &rules.keywords {
            let plain = NameRules {
                keywords: Vec::new(),
                ..rules.clone()
            };
            assert!(check(&plain, k).is_ok(), "{}: keyword {k:?}", spec.id);
        }
    }
}

#[test]
fn long_names_are_shown_cut() {
    let name = format!("{} x", "a".repeat(300));
    let msg = check_for(Path::new("a.py"), &name).unwrap_err().to_string();
    assert!(msg.len() < 200, "{msg}");
    assert!(msg.contains('…'), "{msg}");
}
