//! The sentences of an edit's refusals and failures, from their facts
//! ([`scry_model::EditFact`]): planning a workspace edit, writing it,
//! undoing it. The one place each is written; `fact` hands these over.
//!
//! Invariant: as `fact`: paths stay path parts, the OS's and a server's
//! text stays foreign, the undo command an example (each front end spells
//! it).

use crate::{msg, msgf};
use scry_model::edit_fact::{MoveProblem, Protection, WriteStep};
use scry_model::{Action, EditFact, Example, Message};

/// The sentence of an edit's `fact`, in parts.
pub(crate) fn sentence(fact: &EditFact) -> Message {
    match fact {
        EditFact::DanglingLink { path: p } => msg!(
            path(p),
            " is a symbolic link that leads nowhere; scry does not write through it"
        ),
        EditFact::WorkspaceRoot { root } => msgf!(
            "the edit names the workspace root {} itself; refused",
            root.display()
        ),
        EditFact::Protected { path: p, why } => {
            let why = match why {
                Protection::InsideGit => "inside .git",
                Protection::ScryConfig => "(scry's own configuration)",
                Protection::ReadConfig => "(configuration scry reads)",
                Protection::UserConfig => "(scry's user configuration)",
            };
            msg!("the edit touches ", path(p), format!(" {why}; refused"))
        }
        EditFact::NotAUri { field } => {
            msgf!("malformed workspace edit: {field} is not a URI")
        }
        EditFact::NotAFile { uri } => msg!(
            "the edit names ",
            foreign(uri),
            ", which is not a file in the workspace"
        ),
        EditFact::CannotRead { path: p, why } => {
            msg!("cannot read ", path(p), ": ", foreign(why))
        }
        EditFact::Symlink { path: p } => msg!(
            path(p),
            " is a symbolic link; scry does not edit, move or delete links"
        ),
        EditFact::NotRegular { path: p } => msg!(path(p), " is not a regular file"),
        EditFact::TooManyBytes { mib } => {
            msgf!("the edit touches more than {mib} MiB of files; refused")
        }
        EditFact::TooManyPaths { max } => {
            msgf!("the edit touches more than {max} paths; refused")
        }
        EditFact::InsideAFile { file, path: p } => msg!(
            path(file),
            " is a file, so ",
            path(p),
            " cannot be created inside it"
        ),
        EditFact::DirTooLarge { path: p, max } => {
            msg!(path(p), format!(" holds more than {max} files; refused"))
        }
        EditFact::ChangesMissing { path: p } => {
            msg!("the edit changes ", path(p), ", which does not exist")
        }
        EditFact::ChangesDirectory { path: p } => {
            msg!("the edit changes ", path(p), ", a directory")
        }
        EditFact::NotUtf8 { path: p } => {
            msg!(path(p), " is not UTF-8 text; scry does not edit it")
        }
        EditFact::ChangedSinceRead { path: p, server } => msg!(
            path(p),
            format!(" changed on disk since {server} read it; nothing was written — ask again")
        ),
        EditFact::VersionMismatch {
            server,
            path: p,
            version,
            synced,
        } => msg!(
            format!("{server} computed the edit for version {version} of "),
            path(p),
            format!(", but scry synced version {synced}; nothing was written — ask again")
        ),
        EditFact::TextEditWithout { path: p, field } => {
            msg!("malformed text edit for ", path(p), format!(": no {field}"))
        }
        EditFact::NotAPosition {
            server,
            path: p,
            line,
            col,
            encoding,
        } => msg!(
            format!("{server} sent an edit for "),
            path(p),
            format!(
                " at {line}:{col} ({encoding} units), which is not a position in the file; nothing was written"
            )
        ),
        EditFact::RangeReversed { server, path: p } => msg!(
            format!("{server} sent an edit for "),
            path(p),
            " whose range ends before it starts"
        ),
        EditFact::Overlapping {
            server,
            path: p,
            line,
            col,
        } => msg!(
            format!("{server} sent overlapping edits in "),
            path(p),
            format!(" (at {line}:{col}); nothing was written")
        ),
        EditFact::CreateOverDirectory { path: p } => {
            msg!("CreateFile ", path(p), ": a directory is there")
        }
        EditFact::CreateExists { path: p } => {
            msg!("CreateFile ", path(p), ": the file already exists")
        }
        EditFact::MoveRefused { from, to, why } => {
            let why = match why {
                MoveProblem::IntoItself => msg!("a directory cannot move into itself"),
                MoveProblem::Missing => msg!(path(from), " does not exist"),
                MoveProblem::Exists => msg!(path(to), " already exists"),
            };
            msg!(
                "RenameFile ",
                path(from),
                " → ",
                path(to),
                ": ",
                message(why)
            )
        }
        EditFact::DeleteMissing { path: p } => {
            msg!("DeleteFile ", path(p), ": it does not exist")
        }
        EditFact::DeleteNonEmpty { path: p } => msg!(
            "DeleteFile ",
            path(p),
            ": the directory is not empty and the edit did not ask for a recursive delete"
        ),
        EditFact::NoWorkspaceEdit { server } => msgf!("{server} sent no workspace edit"),
        EditFact::UnknownOperation { server, kind } => msg!(
            format!("{server} sent an unknown resource operation `"),
            foreign(kind),
            "`"
        ),
        EditFact::NoEdits { server } => {
            msgf!("malformed workspace edit from {server}: a document change without edits")
        }
        EditFact::EditsNotAList { server, uri } => msg!(
            format!("malformed workspace edit from {server}: edits of "),
            foreign(uri),
            " are not a list"
        ),
        EditFact::TwoEditLists { server, path: p } => {
            msg!(format!("{server} sent two edit lists for "), path(p))
        }
        EditFact::ChangedWhilePrepared { path: p } => msg!(
            path(p),
            " changed on disk while the edit was prepared; nothing was written — ask again"
        ),
        EditFact::WriteFailed { step, unrestored } => {
            let what = match step {
                WriteStep::CreateDir { path: d, why } => {
                    msg!("cannot create directory ", path(d), ": ", foreign(why))
                }
                WriteStep::Stage { path: p, why } => {
                    msg!("cannot write ", path(p), ": ", foreign(why))
                }
                WriteStep::Replace { path: p, k, n, why } => msg!(
                    "writing ",
                    path(p),
                    format!(" failed (file {k} of {n}): "),
                    foreign(why)
                ),
                WriteStep::RemoveDir { path: d, why } => {
                    msg!("cannot remove directory ", path(d), ": ", foreign(why))
                }
            };
            if unrestored.is_empty() {
                return msg!(
                    message(what),
                    "; every file was restored, nothing of the edit remains"
                );
            }
            let mut list = Message::new();
            for (i, f) in unrestored.iter().enumerate() {
                if i > 0 {
                    list = list.text(", ");
                }
                list = list.path(&f.path).text(": ").foreign(&f.why);
            }
            msg!(
                message(what),
                "; restoring failed for ",
                message(list),
                " — their previous content is in scry's edit journal (",
                example(Example::bare(Action::Undo)),
                ")"
            )
        }
        EditFact::LockFailed { lock, why } => msg!(
            "cannot take the workspace's writer lock ",
            path(lock),
            ": ",
            foreign(why),
            "; nothing was changed (free space there, or set SCRY_JOURNAL_DIR to a \
             writable directory)"
        ),
        EditFact::Busy { root, lock } => msg!(
            "another scry process is writing in ",
            path(root),
            " (an edit or undo holds its writer lock ",
            path(lock),
            "); nothing was changed — retry when it has finished"
        ),
        EditFact::ReplayUnreadable { why } => msg!(
            "an edit was already applied under this idempotency key, but its answer cannot be read back: ",
            foreign(why)
        ),
        EditFact::RecoveryFailed { failed, journal } => {
            let mut m = Message::new();
            for f in failed {
                m = m
                    .text(format!(
                        "recovery of the interrupted edit {} (journal entry {}) could not restore ",
                        f.title, f.id
                    ))
                    .path(&f.path)
                    .text(": ")
                    .foreign(&f.why)
                    .text("; ");
            }
            m.append(msg!(
                "scry writes nothing in this workspace until that is resolved (the \
                 before-images are in ",
                path(journal),
                ")"
            ))
        }
        EditFact::JournalUnwritable { why, undo: false } => msg!(
            foreign(why),
            "; the edit was refused and nothing was changed (undo needs the \
             journal: free space there, or set SCRY_JOURNAL_DIR to a writable directory)"
        ),
        EditFact::JournalUnwritable { why, undo: true } => msg!(
            foreign(why),
            "; undo refused, nothing was changed (free space there, or set \
             SCRY_JOURNAL_DIR to a writable directory)"
        ),
        EditFact::NothingToUndo {
            journal: None,
            root: _,
        } => msg!("nothing to undo: the edit journal is disabled (no state directory)"),
        EditFact::NothingToUndo {
            root,
            journal: Some(j),
        } => msg!(
            format!(
                "nothing to undo: scry has applied no edit in {} (journal ",
                root.display()
            ),
            path(j),
            ")"
        ),
        EditFact::ChangedSinceEdit { path: p, title } => msg!(
            path(p),
            " changed since scry's edit `",
            foreign(title),
            "`; undo refused, nothing was written"
        ),
        EditFact::JournalLost { path: p } => msg!(
            "the journal lost the previous content of ",
            path(p),
            "; undo refused"
        ),
    }
}
