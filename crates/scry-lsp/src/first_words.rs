//! The words `scry` takes first, as the help lists them and shell completion
//! offers them: every action of `scry_model::action::ACTIONS` (its name with
//! `-` for `_`, and the short aliases the command line shows), then the
//! subcommands handled before the action parser (`crate::SUBCOMMANDS`).
//!
//! Invariants: the actions come from the table, so a new action is listed
//! and completed without a change here (placed by its facts, see
//! [`place`]); [`SHOWN_ALIASES`] and [`HOUSEKEEPING`] only choose how the
//! command line presents them, and every shown alias is an alias of its
//! action in the table (tested). `Action::parse` accepts every other alias
//! too; they are not offered, to keep completion short.

use scry_model::Action;
use scry_model::action::{ACTIONS, Facts, ReplyShape};

use crate::SUBCOMMANDS;

/// The aliases the help shows beside their action, and completion offers.
const SHOWN_ALIASES: &[&str] = &["def", "impl", "refs", "diag"];

/// The workspace's housekeeping, listed (in this order) after the
/// questions about code; see [`place`].
const HOUSEKEEPING: &[Action] = &[
    Action::Status,
    Action::Capabilities,
    Action::Reload,
    Action::Request,
];

/// Where the command line lists a row of the table (sorted stably, so
/// table order within a group): the questions about code (the rows with a
/// reply parser), then [`HOUSEKEEPING`], then the rest (diagnostics and
/// edits), then `map`.
fn place(f: &Facts) -> (u8, usize) {
    if f.reply != ReplyShape::Other {
        return (0, 0);
    }
    if let Some(i) = HOUSEKEEPING.iter().position(|a| *a == f.action) {
        return (1, i);
    }
    (if f.action == Action::Map { 3 } else { 2 }, 0)
}

/// How the command line spells an action's name or alias.
fn spelled(name: &str) -> String {
    name.replace('_', "-")
}

/// Every action, in the command line's order, with its shown aliases.
fn listed() -> Vec<(String, Vec<String>)> {
    let mut rows: Vec<&Facts> = ACTIONS.iter().collect();
    rows.sort_by_key(|f| place(f));
    rows.into_iter()
        .map(|f| {
            let shown = f
                .aliases
                .iter()
                .filter(|al| SHOWN_ALIASES.contains(al))
                .map(|al| spelled(al))
                .collect();
            (spelled(f.name), shown)
        })
        .collect()
}

/// The first words completion offers: each action then its shown aliases,
/// then the subcommands.
pub fn first_words() -> Vec<String> {
    let mut out = Vec::new();
    for (name, aliases) in listed() {
        out.push(name);
        out.extend(aliases);
    }
    out.extend(SUBCOMMANDS.iter().map(|s| s.to_string()));
    out
}

/// The help's list of actions: `name (alias)` entries, comma-separated,
/// filled into lines of at most 72 characters indented by two spaces.
pub fn help_list() -> String {
    let entries: Vec<String> = listed()
        .into_iter()
        .map(|(name, aliases)| match aliases.as_slice() {
            [] => name,
            _ => format!("{name} ({})", aliases.join(", ")),
        })
        .collect();
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for (i, e) in entries.iter().enumerate() {
        let word = if i + 1 < entries.len() {
            format!("{e},")
        } else {
            e.clone()
        };
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > 72 {
            lines.push(std::mem::take(&mut line));
        }
        if line.is_empty() {
            line.push_str("  ");
        } else {
            line.push(' ');
        }
        line.push_str(&word);
    }
    lines.push(line);
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_is_listed_once() {
        let words = first_words();
        for f in ACTIONS {
            let name = spelled(f.name);
            assert_eq!(
                words.iter().filter(|w| **w == name).count(),
                1,
                "{name} in {words:?}"
            );
            assert!(help_list().contains(&name), "{name} not in the help");
        }
        assert_eq!(listed().len(), ACTIONS.len());
        for w in &words {
            let known = Action::parse(w).is_some() || SUBCOMMANDS.contains(&w.as_str());
            assert!(known, "{w} is neither an action nor a subcommand");
        }
    }

    #[test]
    fn shown_aliases_belong_to_their_action() {
        for al in SHOWN_ALIASES {
            let owner = ACTIONS.iter().find(|f| f.aliases.contains(al));
            assert!(owner.is_some(), "{al} is no alias in the action table");
        }
        for (name, aliases) in listed() {
            for al in aliases {
                assert_eq!(Action::parse(&al), Action::parse(&name), "{al}");
            }
        }
    }

    #[test]
    fn no_subcommand_is_an_action() {
        for s in SUBCOMMANDS {
            assert_eq!(Action::parse(s), None, "{s}");
        }
    }

    #[test]
    fn help_lines_fit() {
        let help = help_list();
        for line in help.lines() {
            assert!(
                line.starts_with("  ") && line.chars().count() <= 72,
                "{line}"
            );
        }
    }
}
