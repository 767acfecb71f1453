//! What an answer says besides its body, said once: gathered after the
//! call, in one place (`add`). What an untrusted
//! workspace's configuration asked to run and was ignored (once per
//! client session: [`Told`]); what recovery of a dead writer's edit did;
//! what loading the SCIP index has to say; what the memory policy did to
//! the workspace's servers; what the file watcher could not see.
//!
//! Invariants: each notice is taken from where it waits when it is said,
//! so it is said once; an answer gets them all, an error the recovery
//! notes alone (the rest wait for the next answer); `status` reports trust
//! itself, so the trust notice is not added to it.

use std::collections::HashSet;
use std::sync::Mutex;

use scry_model::error::OpError;
use scry_model::{Action, Answer, Reason, TrustNotice};

use super::Engine;

/// What one client session has been told already (an MCP session, a CLI
/// run, a library user's engine): a trust notice is said to each session
/// once, the first time it has something new to say.
#[derive(Debug, Default)]
pub struct Told {
    trust: Mutex<HashSet<TrustNotice>>,
}

impl Told {
    /// Whether `notice` is new to this session (and so is told now).
    fn first_time(&self, notice: &TrustNotice) -> bool {
        self.trust
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(notice.clone())
    }
}

/// Add the notices waiting in `engine` to `result` (see the module
/// documentation); for an error, the recovery notes to say beside it, when
/// `beside` (a front end that can say them), else they wait for the next
/// answer.
pub(super) fn add(
    engine: &Engine,
    told: &Told,
    result: &mut Result<Answer, OpError>,
    beside: bool,
) -> Vec<Reason> {
    let recovered = || {
        engine
            .edits
            .take_notices()
            .into_iter()
            .map(|r| Reason::Recovered(Box::new(r)))
    };
    let answer = match result {
        Ok(a) => a,
        Err(_) if beside => return recovered().collect(),
        Err(_) => return Vec::new(),
    };
    answer.notes.extend(recovered());
    answer.notes.extend(std::mem::take(
        &mut *engine.index_notes.lock().unwrap_or_else(|e| e.into_inner()),
    ));
    answer.notes.extend(
        engine
            .ws
            .take_memory_notes()
            .into_iter()
            .map(|m| Reason::Memory(Box::new(m))),
    );
    // What the file watcher could not see before the request.
    answer.notes.extend(engine.ws.take_watch_note());
    if answer.action != Action::Status
        && let Some(n) = engine.ws.trust_notice()
        && told.first_time(&n)
    {
        answer.notes.push(Reason::TrustIgnored(Box::new(n)));
    }
    Vec::new()
}
