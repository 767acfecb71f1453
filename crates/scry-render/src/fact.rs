//! Error sentences from their facts ([`scry_model::Fact`]): the one place
//! each is written. A refused question (`scry_model::Invalid`: which
//! argument of which action, and how) is worded by [`refusal`].
//!
//! Invariant: the arguments, actions and example questions a sentence
//! names stay typed parts ([`scry_model::Part::Arg`], …), and text scry
//! did not write stays foreign, so each front end spells and shows them
//! its own way (`Dialect`) when the message is shown.

use crate::{msg, msgf};
use scry_model::action::{Action, Arg};
use scry_model::limits::{DEFAULT_MAP_BUDGET, MAX_MAP_BUDGET};
use scry_model::query::MAX_NEW_NAME_CHARS;
use scry_model::{ArgProblem, Invalid};
use scry_model::{Example, Fact, Message, OpError};

/// The sentence of `fact`, in parts.
pub fn fact(fact: &Fact) -> Message {
    match fact {
        Fact::Refused(i) => refusal(i),
        Fact::Edit(e) => crate::edit_fact::sentence(e),
        Fact::Tool(t) => crate::tool_fact::sentence(t),
        Fact::Usage(u) => crate::usage_fact::sentence(u),
        Fact::Untrusted(t) => msg!(" (", note(scry_model::Reason::TrustIgnored(t.clone())), ")"),
        Fact::ReadTimedOut { path: p } => msg!(
            "reading ",
            path(p),
            " did not finish within the time budget"
        ),
        Fact::DaemonUnreachable { why } => {
            msg!("the scry daemon cannot be reached: ", foreign(why))
        }
        Fact::DaemonLost { pid, why, writes } => {
            let m = msg!(
                format!("the scry daemon (pid {pid}) stopped during the call ("),
                foreign(why),
                "); the next call starts a new one"
            );
            if *writes {
                m.text(
                    "; an edit it left half-written is rolled back by the next call (which says so); \
                     undo as a dry run shows the last applied one",
                )
            } else {
                m
            }
        }
        Fact::AnswerNotEncoded { why } => msg!(
            "the scry daemon could not encode this answer (",
            foreign(why),
            "); it serves on, and --no-daemon answers in-process"
        ),
        Fact::QuestionNotSent { why } => msg!(
            "the question could not be sent to the scry daemon (",
            foreign(why),
            "); --no-daemon answers in-process"
        ),
        Fact::NameNotUtf8 { server, shown } => msgf!(
            "{server} cannot open {shown}: its name is not UTF-8, and a language server names a file as text; give it a UTF-8 name to ask one"
        ),
        Fact::NoServerConfigured { file } => msg!(
            format!("no language server is configured for {file}; add one to .scry.json (see `"),
            example(Example::bare(Action::Status)),
            "`)"
        ),
        Fact::NoServerInstalled { file, missing } => {
            let mut m = msg!(format!("no installed language server for {file}: "));
            for (i, (id, command)) in missing.iter().enumerate() {
                let sep = if i == 0 { "" } else { ", " };
                m = msg!(
                    message(m),
                    format!("{sep}{id} (command `"),
                    foreign(command),
                    "`)"
                );
            }
            msg!(
                message(m),
                " not found on PATH; install it or configure another server"
            )
        }
        Fact::LinePastEnd {
            line,
            path: p,
            lines,
        } => msg!(
            format!("line {line} is past the end of "),
            path(p),
            format!(" ({lines} lines)")
        ),
        Fact::NothingToAskAt { action: a, path: p } => msg!(
            action(*a),
            " needs a ",
            arg(Arg::Symbol),
            " (or ",
            arg(Arg::Line),
            " and ",
            arg(Arg::Column),
            ") in ",
            path(p)
        ),
        Fact::ScanTimedOut {
            path: p,
            name,
            seen,
        } => msg!(
            "scanning ",
            path(p),
            format!(" for `{name}` ran past the time budget ({seen} occurrences seen); pass "),
            arg(Arg::Line),
            " and ",
            arg(Arg::Column)
        ),
        Fact::NotInFile { symbol, path: p } => msg!(
            format!("`{symbol}` does not occur in "),
            path(p),
            "; check the spelling, or omit ",
            arg(Arg::Path),
            " to search the workspace"
        ),
        Fact::NoWorkspaceSymbol { symbol, servers } => msg!(
            format!(
                "no workspace symbol named `{symbol}` ({}); pass a ",
                servers.join(", ")
            ),
            arg(Arg::Path),
            " to search one file"
        ),
        Fact::NoServerRunning => msg!(
            "no server is running in this process; pass a ",
            arg(Arg::Path),
            " to start the server for that file"
        ),
        Fact::CallTimedOut { action: a, ms } => msg!(
            action(*a),
            format!(
                " did not finish within its {ms} ms budget (no source could answer in time); try again or raise "
            ),
            arg(Arg::Timeout)
        ),
        Fact::ConfigUnreadable { why } => msg!("configuration: ", foreign(why)),
        Fact::MapFailed { why } => msg!("map failed: ", foreign(why)),
        Fact::StartTimedOut {
            server,
            waited_ms,
            budget_ms,
        } => msg!(
            format!(
                "{server} did not finish starting within {}; try again or raise ",
                of_budget(*waited_ms, *budget_ms)
            ),
            arg(Arg::Timeout)
        ),
        Fact::NotAnswered {
            server,
            method,
            waited_ms,
            budget_ms,
            indexing,
        } => {
            let m = msgf!(
                "{server} did not answer {method} within {}",
                of_budget(*waited_ms, *budget_ms)
            );
            match indexing {
                Some(progress) => {
                    let indexing = scry_model::Reason::Indexing {
                        server: server.clone(),
                        progress: progress.clone(),
                    };
                    msg!(message(m), "; ", note(indexing), " — ask again shortly")
                }
                None => m,
            }
        }
        Fact::IsDirectory { asked } => {
            let shown = if asked.is_absolute() {
                msg!(path(asked))
            } else {
                msg!(asked.display().to_string())
            };
            msg!(message(shown), " is a directory; name a file")
        }
        Fact::ServerStopped {
            server,
            method,
            detail,
        } => msg!(
            format!("{server} stopped answering {method}: "),
            foreign(detail),
            "; it is restarted on the next call"
        ),
        Fact::ServerFailed {
            server,
            method,
            error,
        } => msg!(format!("{server} failed {method}: "), foreign(error)),
        Fact::ProtocolBroken { server, detail } => {
            msg!(format!("{server}: "), foreign(detail))
        }
        Fact::NotEncoded { detail } => msg!(foreign(detail)),
        Fact::StartFailed { server, detail } => msg!(
            format!("{server} failed to start: "),
            foreign(detail),
            "; see the server log (",
            example(Example::bare(Action::Status)),
            ") — the next call retries"
        ),
        Fact::SpawnFailed {
            server,
            program,
            why,
            hint,
        } => msg!(
            format!("could not start {server} ("),
            path(program),
            "): ",
            foreign(why),
            hint.as_str()
        ),
        Fact::MalformedReply {
            server,
            method,
            detail,
        } => msg!(
            format!("{server} sent a malformed {method} response: "),
            foreign(detail)
        ),
        Fact::BadGlob { glob, why } => msg!(format!("bad glob `{glob}`: "), foreign(why)),
        Fact::BadNewName { rule } => msg!(
            arg(Arg::NewName),
            format!(": {rule}; nothing was changed. Give one identifier of the file's language")
        ),
        Fact::NotOffered { server, action } => match action {
            Action::CodeActions => msgf!("{server} does not offer code actions"),
            other => msgf!("{server} does not support {}", other.noun()),
        },
        Fact::CannotRename {
            what,
            server,
            path: p,
            refusals,
        } => msg!(
            format!("`{what}` cannot be renamed: {server} refused at "),
            path(p),
            ":",
            foreign(refusals),
            "; nothing was changed"
        ),
        Fact::RenameRefused {
            server,
            old_name,
            new_name,
            why,
        } => msg!(
            format!("{server} refused to rename `{old_name}` to `{new_name}`: "),
            foreign(why),
            "; nothing was changed"
        ),
        Fact::NoRenameEdit {
            server,
            old_name,
            path: p,
            line,
            col,
        } => msg!(
            format!("{server} returned no edit for renaming `{old_name}` at "),
            path(p),
            format!(":{line}:{col}; nothing was changed")
        ),
        Fact::NoCodeActionNumber { n, server, offered } => {
            msgf!("there is no code action number {n}: {server} offers {offered} there")
        }
        Fact::CodeActionDisabled { title, reason } => msg!(
            "code action `",
            foreign(title),
            "` is disabled: ",
            foreign(reason)
        ),
        Fact::CodeActionEditRefused { server, title, why } => msg!(
            format!("{server} asked to apply an edit for `"),
            foreign(title),
            "`, which scry refused: ",
            foreign(why)
        ),
        Fact::NoCodeActionTitled { title, available } => msg!(
            format!("no code action titled `{title}`; available: "),
            foreign(available.join("; "))
        ),
        Fact::CodeActionTitleAmbiguous { title, matches } => msg!(
            format!("`{title}` matches {} code actions (", matches.len()),
            foreign(matches.join("; ")),
            "); pick one by number"
        ),
        Fact::Panicked { action, panic } => msgf!(
            "scry failed inside this {action} call (a bug; please report it): {panic}; other calls are unaffected"
        ),
    }
}

/// `4700 ms of the call's 5000 ms budget`, or `its 5000 ms budget` when
/// the whole budget was waited.
fn of_budget(waited_ms: u128, budget_ms: u128) -> String {
    if waited_ms >= budget_ms {
        format!("its {budget_ms} ms budget")
    } else {
        format!("{waited_ms} ms of the call's {budget_ms} ms budget")
    }
}

/// A refused question, in parts.
fn refusal(i: &Invalid) -> Message {
    let a = i.action;
    let arg = i.arg;
    let example = |args: &[(Arg, &str)]| Example {
        action: a,
        args: args.iter().map(|(k, v)| (*k, v.to_string())).collect(),
    };
    let in_file = [(Arg::Path, "src/lib.rs"), (Arg::Symbol, "Config")];
    match (i.problem, arg) {
        (ArgProblem::Zero, Arg::Column) => msg!(
            arg(Arg::Column),
            " is 1-based (characters): the first column is 1"
        ),
        (ArgProblem::Zero, _) => msg!(
            arg(arg),
            format!(" is 1-based: the first {} is 1", arg.name())
        ),
        (ArgProblem::WithoutLine, _) => msg!(
            arg(Arg::Column),
            " needs ",
            arg(Arg::Line),
            " as well (or name the symbol instead)"
        ),
        (ArgProblem::WithoutPath, _) => msg!(
            action(a),
            ": ",
            arg(Arg::Line),
            " and ",
            arg(Arg::Column),
            " need a ",
            arg(Arg::Path),
            " (the file they are in)"
        ),
        (ArgProblem::NotTaken, Arg::ActionIndex | Arg::ActionTitle) => msg!(
            arg(Arg::ActionIndex),
            " and ",
            arg(Arg::ActionTitle),
            " pick a code action; ",
            action(a),
            " takes neither"
        ),
        (ArgProblem::NotTaken, _) => {
            let owner = match scry_model::action::owner(arg) {
                Some(o) => msg!(action(o)),
                None => msg!("another action"),
            };
            msg!(arg(arg), " is for ", message(owner), ", not ", action(a))
        }
        (ArgProblem::Missing, Arg::Symbol) => msg!(
            action(a),
            " needs a ",
            arg(Arg::Symbol),
            ", and usually a ",
            arg(Arg::Path),
            ": e.g. ",
            example(example(&in_file))
        ),
        (ArgProblem::Missing, Arg::NewName) => msg!(
            action(a),
            " needs ",
            arg(Arg::NewName),
            " (and ",
            arg(Arg::Path),
            " + ",
            arg(Arg::Symbol),
            "): e.g. ",
            example(example(&[
                in_file[0],
                in_file[1],
                (Arg::NewName, "Settings")
            ]))
        ),
        (ArgProblem::Missing, Arg::Query) => msg!(
            action(a),
            " needs a ",
            arg(Arg::Query),
            " (part of a symbol name)"
        ),
        (ArgProblem::Missing, Arg::Method) => msg!(
            action(a),
            " needs a ",
            arg(Arg::Method),
            " (e.g. textDocument/foldingRange) and ",
            arg(Arg::Params)
        ),
        (ArgProblem::Missing, Arg::Path) if a == Action::Symbols => msg!(
            action(a),
            " needs a ",
            arg(Arg::Path),
            " (to search across files use ",
            action(Action::WorkspaceSymbols),
            " with a ",
            arg(Arg::Query),
            ")"
        ),
        (ArgProblem::Missing, Arg::Path) => msg!(
            action(a),
            " needs a ",
            arg(Arg::Path),
            " (and optionally a ",
            arg(Arg::Symbol),
            " or a ",
            arg(Arg::Line),
            ")"
        ),
        (ArgProblem::Missing, _) => msg!(action(a), " needs ", arg(arg)),
        (ArgProblem::NoSymbolOrLine, _) => {
            let mut args = in_file.to_vec();
            if a.facts().takes(Arg::NewName) {
                args.push((Arg::NewName, "Settings"));
            }
            msg!(
                action(a),
                " needs a ",
                arg(Arg::Symbol),
                " (or a ",
                arg(Arg::Line),
                "): e.g. ",
                example(example(&args))
            )
        }
        (ArgProblem::Both, _) => msg!(
            "pick a code action by ",
            arg(Arg::ActionIndex),
            " or by ",
            arg(Arg::ActionTitle),
            ", not both"
        ),
        (ArgProblem::OutOfRange, _) => msg!(
            arg(arg),
            format!(
                " is a number of characters from 1 to {MAX_MAP_BUDGET} (default {DEFAULT_MAP_BUDGET})"
            )
        ),
        (ArgProblem::ControlChar(c), _) => msg!(
            arg(arg),
            format!(
                " contains the control character {}; nothing was changed. Give the new identifier alone, on one line",
                c.escape_default()
            )
        ),
        (ArgProblem::Unchanged, _) => msg!(
            arg(arg),
            " is the name the symbol already has: renaming it to itself changes nothing, so nothing was asked or written. Give a different ",
            arg(arg)
        ),
        (ArgProblem::TooLong(n), _) => msg!(
            arg(arg),
            format!(
                " is {n} characters long (at most {MAX_NEW_NAME_CHARS}); nothing was changed. Give the new identifier alone, on one line"
            )
        ),
    }
}

/// The message of `err` in parts: a typed variant's sentence from its
/// fields, else the message it carries. The workspace root of
/// [`OpError::OutsideWorkspace`] is text: it is shown absolute.
pub fn error_message(err: &OpError) -> Message {
    match err {
        OpError::FileNotFound(p) => msg!("file not found: ", path(p)),
        OpError::BinaryFile(p) => msg!(path(p), " is not a text file"),
        OpError::NotARegularFile { path: p, kind } => msg!(
            path(p),
            format!(" is not a regular file ({kind}); scry reads only regular files")
        ),
        OpError::FileTooLarge {
            path: p,
            len,
            limit,
        } => msg!(
            path(p),
            format!(
                " is {} KiB, over the {} KiB file limit; it is not read (raise limits.maxFileBytes to read it)",
                len.div_ceil(1024),
                limit / 1024
            )
        ),
        OpError::TooLargeForIndex {
            path: p,
            len,
            limit,
            server,
        } => msg!(
            path(p),
            format!(
                " is {} KiB, over the {} KiB the syntactic index reads (a fixed limit), and ",
                len.div_ceil(1024),
                limit / 1024
            ),
            message(server)
        ),
        OpError::OutsideWorkspace { path: p, root } => msg!(
            path(p),
            format!(
                " is outside the workspace {}; only files inside it can be asked about",
                root.display()
            )
        ),
        other => other.message().cloned().unwrap_or_default(),
    }
}
