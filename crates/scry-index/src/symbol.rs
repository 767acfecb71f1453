//! SCIP symbol strings: the descriptors at their end, hence a symbol's
//! name as written in source and a coarse kind.
//!
//! Grammar (scip.proto): `<scheme> <manager> <package> <version>
//! <descriptor>+`, or `local <id>`; a space inside a field is doubled;
//! descriptors are `name/` (namespace), `name#` (type), `name.` (term),
//! `name(disambiguator).` (method), `[name]` (type parameter), `(name)`
//! (parameter), `name:` (meta), `name!` (macro); a name that is not a
//! simple identifier is backquoted with `` ` `` doubled inside.
//! Invariants: pure, total (a malformed symbol yields no descriptors, never
//! a panic).

/// What kind of descriptor ends a symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suffix {
    Namespace,
    Type,
    Term,
    Method,
    TypeParameter,
    Parameter,
    Meta,
    Macro,
}

impl Suffix {
    /// How answers name the kind.
    pub fn kind_name(self, owner: Option<Suffix>) -> &'static str {
        match self {
            Suffix::Namespace => "module",
            Suffix::Type => "type",
            Suffix::Term if owner == Some(Suffix::Type) => "field",
            Suffix::Term => "variable",
            Suffix::Method if owner == Some(Suffix::Type) => "method",
            Suffix::Method => "function",
            Suffix::TypeParameter => "type parameter",
            Suffix::Parameter => "parameter",
            Suffix::Meta => "meta",
            Suffix::Macro => "macro",
        }
    }
}

/// Whether a symbol is document-local (`local <id>`).
pub fn is_local(symbol: &str) -> bool {
    symbol.starts_with("local ")
}

/// The descriptors of a global symbol, outermost first.
pub fn descriptors(symbol: &str) -> Vec<(String, Suffix)> {
    parse(symbol).into_iter().map(|(n, s, _)| (n, s)).collect()
}

/// The symbol that encloses `symbol` (it without its last descriptor), when
/// it has one: `…shapes/Shape#area().` → `…shapes/Shape#`; an impl block's
/// is what encloses the block (`…iter/impl#[`Either<L, R>`][Iterator]` →
/// `…iter/`).
pub fn parent(symbol: &str) -> Option<String> {
    let d = parse(symbol);
    let at = match impl_at(&d) {
        Some(at) => at,
        None => d.len().checked_sub(1)?,
    };
    (at > 0).then(|| symbol[..d[at].2].to_string())
}

/// The index of the `impl#` descriptor when `d` is an impl block: `impl#`
/// then one or two type parameters (self type, trait) and nothing else.
fn impl_at(d: &[(String, Suffix, usize)]) -> Option<usize> {
    let at = d
        .iter()
        .rposition(|(n, s, _)| n == "impl" && *s == Suffix::Type)?;
    let rest = &d[at + 1..];
    (!rest.is_empty()
        && rest.len() <= 2
        && rest.iter().all(|(_, s, _)| *s == Suffix::TypeParameter))
    .then_some(at)
}

/// The name of the type an impl block is for, when `symbol` is a
/// rust-analyzer impl block (`…impl#[`Either<L, R>`][Iterator]`: its first
/// type parameter, path and generics cut): `Either`.
pub fn impl_self_type(symbol: &str) -> Option<String> {
    let d = parse(symbol);
    let at = impl_at(&d)?;
    let head = d[at + 1].0.split('<').next()?.rsplit("::").next()?.trim();
    (!head.is_empty() && head.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then(|| head.to_string())
}

/// How an answer names an impl block (`impl Iterator for Either<L, R>`,
/// `impl Either<L, R>`), when `symbol` is one.
pub fn impl_name(symbol: &str) -> Option<String> {
    impl_self_type(symbol)?;
    let d = parse(symbol);
    let n = d.len();
    match &d[n - 2..] {
        [
            (ty, Suffix::TypeParameter, _),
            (tr, Suffix::TypeParameter, _),
        ] if n >= 3 && d[n - 3].0 == "impl" => Some(format!("impl {tr} for {ty}")),
        [_, (ty, Suffix::TypeParameter, _)] => Some(format!("impl {ty}")),
        _ => None,
    }
}

/// Descriptors with the byte offset in `symbol` where each starts.
fn parse(symbol: &str) -> Vec<(String, Suffix, usize)> {
    if is_local(symbol) {
        return Vec::new();
    }
    // Skip scheme, manager, package name, version.
    let b = symbol.as_bytes();
    let mut i = 0;
    for _ in 0..4 {
        loop {
            match b.get(i) {
                None => return Vec::new(),
                Some(b' ') if b.get(i + 1) == Some(&b' ') => i += 2,
                Some(b' ') => {
                    i += 1;
                    break;
                }
                Some(_) => i += 1,
            }
        }
    }
    let rest: Vec<char> = symbol[i..].chars().collect();
    // Byte offset in `symbol` of each char of `rest` (and of its end).
    let byte_at: Vec<usize> = symbol[i..]
        .char_indices()
        .map(|(b, _)| i + b)
        .chain(std::iter::once(symbol.len()))
        .collect();
    let mut out = Vec::new();
    let mut k = 0;
    let name = |k: &mut usize| -> Option<String> {
        if rest.get(*k) == Some(&'`') {
            let mut s = String::new();
            *k += 1;
            loop {
                match rest.get(*k) {
                    None => return None,
                    Some('`') if rest.get(*k + 1) == Some(&'`') => {
                        s.push('`');
                        *k += 2;
                    }
                    Some('`') => {
                        *k += 1;
                        return Some(s);
                    }
                    Some(c) => {
                        s.push(*c);
                        *k += 1;
                    }
                }
            }
        }
        let start = *k;
        while let Some(c) = rest.get(*k) {
            if c.is_alphanumeric() || matches!(c, '_' | '+' | '-' | '$') {
                *k += 1;
            } else {
                break;
            }
        }
        Some(rest[start..*k].iter().collect())
    };
    while k < rest.len() {
        let start = byte_at[k];
        match rest[k] {
            '[' | '(' => {
                let open = rest[k];
                k += 1;
                let Some(n) = name(&mut k) else {
                    return out;
                };
                let close = if open == '[' { ']' } else { ')' };
                if rest.get(k) != Some(&close) {
                    return out;
                }
                k += 1;
                out.push((
                    n,
                    if open == '[' {
                        Suffix::TypeParameter
                    } else {
                        Suffix::Parameter
                    },
                    start,
                ));
            }
            _ => {
                let Some(n) = name(&mut k) else {
                    return out;
                };
                let suffix = match rest.get(k) {
                    Some('/') => Suffix::Namespace,
                    Some('#') => Suffix::Type,
                    Some('.') => Suffix::Term,
                    Some(':') => Suffix::Meta,
                    Some('!') => Suffix::Macro,
                    Some('(') => {
                        // Method: `name(disambiguator).`
                        while k < rest.len() && rest[k] != ')' {
                            k += 1;
                        }
                        k += 1;
                        if rest.get(k) != Some(&'.') {
                            return out;
                        }
                        Suffix::Method
                    }
                    _ => return out,
                };
                k += 1;
                out.push((n, suffix, start));
            }
        }
    }
    out
}

/// The name a symbol is written as in source (its last descriptor), and its
/// kind; `None` for a local or malformed symbol.
pub fn name_and_kind(symbol: &str) -> Option<(String, &'static str)> {
    let d = descriptors(symbol);
    let (last, rest) = d.split_last()?;
    let owner = rest.last().map(|(_, s)| *s);
    Some((last.0.clone(), last.1.kind_name(owner)))
}

/// The enclosing names of a symbol (its descriptors but the last, types and
/// namespaces only), innermost last.
pub fn containers(symbol: &str) -> Vec<String> {
    let d = descriptors(symbol);
    let n = d.len().saturating_sub(1);
    d.into_iter()
        .take(n)
        .filter(|(_, s)| matches!(s, Suffix::Type | Suffix::Namespace))
        .map(|(n, _)| n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_analyzer_symbols() {
        let s = "rust-analyzer cargo demo 0.1.0 shapes/Shape#area().";
        assert_eq!(name_and_kind(s), Some(("area".into(), "method")));
        assert_eq!(containers(s), vec!["shapes".to_string(), "Shape".into()]);
        let s = "rust-analyzer cargo demo 0.1.0 shapes/Circle#radius.";
        assert_eq!(name_and_kind(s), Some(("radius".into(), "field")));
        let s = "rust-analyzer cargo demo 0.1.0 make().";
        assert_eq!(name_and_kind(s), Some(("make".into(), "function")));
    }

    #[test]
    fn parents_and_impl_blocks() {
        let m = "rust-analyzer cargo either 1.19.0 iterator/impl#[`Either<L, R>`][Iterator]next().";
        let imp = "rust-analyzer cargo either 1.19.0 iterator/impl#[`Either<L, R>`][Iterator]";
        assert_eq!(parent(m).as_deref(), Some(imp));
        assert_eq!(
            parent(imp).as_deref(),
            Some("rust-analyzer cargo either 1.19.0 iterator/")
        );
        assert_eq!(impl_self_type(imp).as_deref(), Some("Either"));
        assert_eq!(
            impl_name(imp).as_deref(),
            Some("impl Iterator for Either<L, R>")
        );
        let inherent = "rust-analyzer cargo either 1.19.0 impl#[`Either<L, R>`]";
        assert_eq!(impl_name(inherent).as_deref(), Some("impl Either<L, R>"));
        assert_eq!(impl_self_type("a b c d impl#[`(A, B)`][`Extend<X>`]"), None);
        assert_eq!(impl_self_type(m), None);
        assert_eq!(impl_self_type("a b c d Impl#"), None);
        assert_eq!(parent("a b c d top()."), None);
        assert_eq!(parent("local 3"), None);
        // A multi-byte name before the cut.
        assert_eq!(parent("a b c d `é`/x#").as_deref(), Some("a b c d `é`/"));
    }

    #[test]
    fn escapes_and_odd_symbols() {
        // A doubled space inside the package name; a backquoted name.
        let s = "scip-python python my  pkg 1.0 `a.b`/`we``ird`#";
        assert_eq!(name_and_kind(s), Some(("we`ird".into(), "type")));
        assert_eq!(name_and_kind("local 12"), None);
        assert_eq!(name_and_kind("garbage"), None);
        assert_eq!(name_and_kind("a b c d `unterminated"), None);
        assert_eq!(
            name_and_kind("a b c d x#[T]"),
            Some(("T".into(), "type parameter"))
        );
        assert_eq!(
            name_and_kind("a b c d f().(x)"),
            Some(("x".into(), "parameter"))
        );
        assert_eq!(name_and_kind("a b c d vec!"), Some(("vec".into(), "macro")));
    }
}
