//! Whether a text can be a name in a file's language: the check of a
//! rename's `new_name`, before any server is asked.
//!
//! The rules are data: each row of `languages.json` carries `names`
//! ([`NameRules`], read with the rest of the row by [`crate::lang`]: the
//! language as messages call it, extra start/continue characters such as
//! JavaScript's `$`, prefixes such as Rust's `r#` raw identifiers,
//! suffixes such as Ruby's `?`, the keywords that cannot be names). A
//! file of no known language gets [`NameRules::default`]: Unicode
//! identifiers (`XID_Start` or `_`, then `XID_Continue`, UAX #31), no
//! keywords.
//!
//! Invariants: a Unicode format character (general category Cf: the bidi
//! controls of "Trojan Source", zero-width spaces and joiners, the BOM) is
//! refused in every language, before any language rule; every refusal says
//! which rule the name breaks ([`BadName`]'s `Display`), with invisible
//! characters shown escaped, never raw; no code path names a language.

use std::fmt;
use std::path::Path;

use unicode_general_category::{GeneralCategory, get_general_category};

use crate::lang::{NameRules, spec_for};

/// Which rule a name breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrokenRule {
    /// A Unicode format character (category Cf), anywhere.
    Format(char),
    /// Nothing after the prefix.
    OnlyPrefix(String),
    /// The first character is a digit.
    StartsWithDigit,
    /// The first character cannot start a name.
    BadStart(char),
    /// A character that cannot be part of a name.
    BadChar(char),
    /// A keyword; `raw`: the prefix under which it would be a name.
    Keyword { word: String, raw: Option<String> },
    /// A keyword that stays one even after the prefix (`r#crate`).
    NotEvenRaw { word: String, prefix: String },
}

/// A refused name: the name, its language's rules' name, and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadName {
    pub name: String,
    /// Empty when the file's language has no rules of its own.
    pub language: String,
    pub problem: BrokenRule,
}

/// The rules for `path`'s language (by extension), if it has any.
pub fn rules_for(path: &Path) -> Option<&'static NameRules> {
    spec_for(path).and_then(|s| s.names.as_ref())
}

/// Check `name` as a name in `path`'s language.
pub fn check_for(path: &Path, name: &str) -> Result<(), BadName> {
    match rules_for(path) {
        Some(r) => check(r, name),
        None => check(&NameRules::default(), name),
    }
}

/// Check `name` against `rules`.
pub fn check(rules: &NameRules, name: &str) -> Result<(), BadName> {
    let bad = |problem| BadName {
        name: name.to_string(),
        language: rules.language.clone(),
        problem,
    };
    if let Some(c) = name.chars().find(|&c| is_format(c)) {
        return Err(bad(BrokenRule::Format(c)));
    }
    let prefix = rules
        .prefixes
        .iter()
        .filter(|p| !p.text.is_empty() && name.starts_with(p.text.as_str()))
        .max_by_key(|p| p.text.len());
    let mut body = prefix.map_or(name, |p| &name[p.text.len()..]);
    if body.is_empty() {
        let p = prefix.map_or_else(String::new, |p| p.text.clone());
        return Err(bad(BrokenRule::OnlyPrefix(p)));
    }
    if let Some(last) = body.chars().last()
        && rules.suffixes.contains(last)
        && body.len() > last.len_utf8()
    {
        body = &body[..body.len() - last.len_utf8()];
    }
    let mut chars = body.chars();
    let first = chars.next().expect("not empty");
    if !starts(rules, first) {
        return Err(bad(if first.is_numeric() {
            BrokenRule::StartsWithDigit
        } else {
            BrokenRule::BadStart(first)
        }));
    }
    if let Some(c) = chars.find(|&c| !continues(rules, c)) {
        return Err(bad(BrokenRule::BadChar(c)));
    }
    if rules.keywords.iter().any(|k| k == body) {
        let word = body.to_string();
        return match prefix {
            Some(p) if p.keywords_allowed && !p.except.contains(&word) => Ok(()),
            Some(p) if p.keywords_allowed => Err(bad(BrokenRule::NotEvenRaw {
                word,
                prefix: p.text.clone(),
            })),
            Some(_) => Err(bad(BrokenRule::Keyword { word, raw: None })),
            None => {
                let raw = rules
                    .prefixes
                    .iter()
                    .find(|p| p.keywords_allowed && !p.except.contains(&word))
                    .map(|p| p.text.clone());
                Err(bad(BrokenRule::Keyword { word, raw }))
            }
        };
    }
    Ok(())
}

fn starts(rules: &NameRules, c: char) -> bool {
    let base = if rules.ascii {
        c.is_ascii_alphabetic()
    } else {
        unicode_ident::is_xid_start(c)
    };
    base || c == '_' || rules.extra_start.contains(c)
}

fn continues(rules: &NameRules, c: char) -> bool {
    let base = if rules.ascii {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        unicode_ident::is_xid_continue(c)
    };
    base || rules.extra_continue.contains(c)
}

/// General category Cf: invisible characters that change how text shows
/// (bidi controls, zero-width characters, the BOM, tags).
pub fn is_format(c: char) -> bool {
    get_general_category(c) == GeneralCategory::Format
}

/// The Unicode names of the format characters an attack uses.
fn format_name(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{00AD}' => "SOFT HYPHEN",
        '\u{061C}' => "ARABIC LETTER MARK",
        '\u{180E}' => "MONGOLIAN VOWEL SEPARATOR",
        '\u{200B}' => "ZERO WIDTH SPACE",
        '\u{200C}' => "ZERO WIDTH NON-JOINER",
        '\u{200D}' => "ZERO WIDTH JOINER",
        '\u{200E}' => "LEFT-TO-RIGHT MARK",
        '\u{200F}' => "RIGHT-TO-LEFT MARK",
        '\u{202A}' => "LEFT-TO-RIGHT EMBEDDING",
        '\u{202B}' => "RIGHT-TO-LEFT EMBEDDING",
        '\u{202C}' => "POP DIRECTIONAL FORMATTING",
        '\u{202D}' => "LEFT-TO-RIGHT OVERRIDE",
        '\u{202E}' => "RIGHT-TO-LEFT OVERRIDE",
        '\u{2060}' => "WORD JOINER",
        '\u{2061}' => "FUNCTION APPLICATION",
        '\u{2062}' => "INVISIBLE TIMES",
        '\u{2063}' => "INVISIBLE SEPARATOR",
        '\u{2064}' => "INVISIBLE PLUS",
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE",
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE",
        '\u{2068}' => "FIRST STRONG ISOLATE",
        '\u{2069}' => "POP DIRECTIONAL ISOLATE",
        '\u{FEFF}' => "ZERO WIDTH NO-BREAK SPACE",
        _ => return None,
    })
}

/// The most characters of a refused name a message shows.
const SHOWN_CHARS: usize = 64;

/// `name` as a message may show it: invisible and control characters
/// escaped (`\u{202e}`), at most [`SHOWN_CHARS`] characters.
fn shown(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if i == SHOWN_CHARS {
            out.push('…');
            break;
        }
        if is_format(c) || c.is_control() || (c.is_whitespace() && c != ' ') {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// A character as a message names it.
fn described(c: char) -> String {
    match c {
        ' ' => "a space".to_string(),
        c if c.is_whitespace() || c.is_control() => {
            format!("the invisible character U+{:04X}", c as u32)
        }
        c if c.is_ascii() => format!("`{c}`"),
        c => format!("`{c}` (U+{:04X})", c as u32),
    }
}

impl fmt::Display for BadName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = shown(&self.name);
        let lang = if self.language.is_empty() {
            "a".to_string()
        } else {
            let article = if self.language.starts_with(['A', 'E', 'I', 'O', 'U']) {
                "an"
            } else {
                "a"
            };
            format!("{article} {}", self.language)
        };
        let cannot = format!("`{name}` cannot be {lang} name");
        match &self.problem {
            BrokenRule::Format(c) => {
                let what = format_name(*c).map_or_else(String::new, |n| format!(" {n}"));
                write!(
                    f,
                    "`{name}` contains U+{:04X}{what}, a Unicode format character (invisible; it can make code read differently from what it does)",
                    *c as u32
                )
            }
            BrokenRule::OnlyPrefix(p) => write!(f, "{cannot}: nothing follows `{p}`"),
            BrokenRule::StartsWithDigit => write!(f, "{cannot}: it starts with a digit"),
            BrokenRule::BadStart(c) => {
                write!(f, "{cannot}: it starts with {}", described(*c))
            }
            BrokenRule::BadChar(c) => {
                write!(f, "{cannot}: it contains {}", described(*c))?;
                if self.language.is_empty() {
                    write!(f, " (a name is letters, digits and `_`)")?;
                }
                Ok(())
            }
            BrokenRule::Keyword { word, raw } => {
                let l = if self.language.is_empty() {
                    "a"
                } else {
                    lang.as_str()
                };
                write!(f, "`{word}` is {l} keyword")?;
                if let Some(p) = raw {
                    write!(f, " (`{p}{word}` would be a name)")?;
                }
                Ok(())
            }
            BrokenRule::NotEvenRaw { word, prefix } => {
                write!(f, "{cannot}: `{word}` cannot follow `{prefix}`")
            }
        }
    }
}

impl std::error::Error for BadName {}

#[cfg(test)]
mod tests;
