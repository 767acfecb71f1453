//! The answer order of a read-only question, in one place: the live
//! language server, then the SCIP index (`indexed`), then the syntactic
//! index (`syntactic`, tree-sitter). A lower source answers only when the
//! one above cannot, and says so (`precision`, and a note or `partial`
//! naming why).
//!
//! How a call runs ([`Engine::answer_in_order`]):
//! 1. The SCIP index answers at once when it covers the question and the
//!    server is not ready yet (not running — it is started meanwhile —,
//!    starting, indexing).
//! 2. Otherwise the server is asked, and *alongside* it the lower sources
//!    prepare their answer (the index's, else the syntactic one: the
//!    syntactic index is built or refreshed then, off the runtime), so that
//!    it is ready when the server is late. A server that is running and
//!    ready gets a head start ([`READY_HEAD_START`]) before that work
//!    begins: it answers most questions well within it, and the work is
//!    then never done. A server that is running but not ready (starting,
//!    indexing) gets a shorter one ([`BUSY_HEAD_START`]): most of its
//!    answers still come within it, so the speculative work (a scoped
//!    refresh of the syntactic index: a walk of the workspace, reads and
//!    parses) is not done beside every call of a fresh server's first
//!    minutes, on the cores the call and the server need. A server that is
//!    not running gets none.
//!    While the server is in a long phase (starting, loading, indexing:
//!    [`Engine::loading`]) and a lower source has its answer, that answer
//!    is given once the call is `early` old (`limits.earlyAnswerMs`, 2 s
//!    by default; only with the default budget — a budget asked for waits
//!    for the server), labelled with what the server is doing: a model
//!    does not wait out its budget for an answer that was ready at once.
//!    A ready server that is merely slow is waited for.
//! 3. The wait for the server ends [`render_margin`] before the call's
//!    deadline. The server's answer wins when it has one; the lower
//!    answer is then dropped (its requests are never sent, a refresh under
//!    way finishes into the cache). When the server failed (none
//!    installed, crashed), timed out, or answered empty while indexing,
//!    the first lower source with an answer answers, labelled with why
//!    ([`Unlabelled::label`](super::lower::Unlabelled::label)).
//!
//! Invariants: `TIMEOUT` only when no source answered by the deadline (+
//! `DEADLINE_GRACE`, [`Engine::run`]); a lower answer is never given
//! while the server's own answer is there; writes never come here.

use super::lower::{Unlabelled, Why};
use super::syntactic::has_grammar;
use super::*;

/// How long a running, ready server has alone before the lower sources
/// start preparing their answer (at most a quarter of the budget).
pub(crate) const READY_HEAD_START: Duration = Duration::from_secs(1);

/// How long a running server that is not ready yet (starting, indexing)
/// has alone before the lower sources start (at most an eighth of the
/// budget).
pub(crate) const BUSY_HEAD_START: Duration = Duration::from_millis(250);

/// How long before the call's deadline the wait for the server ends, so
/// that a lower answer (already prepared) is rendered in time: a tenth of
/// the budget, at most 300 ms.
pub(crate) fn render_margin(budget: Duration) -> Duration {
    (budget / 10).min(Duration::from_millis(300))
}

/// The lower sources' answers for one question, in order.
#[derive(Default)]
struct Lower {
    index: Option<Unlabelled>,
    syntactic: Option<Result<Option<Unlabelled>, OpError>>,
}

impl Lower {
    /// Whether a lower source has an answer.
    fn answers(&self) -> bool {
        self.index.is_some() || matches!(self.syntactic, Some(Ok(Some(_))))
    }

    /// The first lower answer, taken out and labelled with `why` the
    /// server did not give it; `None` (nothing taken) when there is none.
    fn take_answer(&mut self, why: &Why) -> Option<Answer> {
        if let Some(a) = self.index.take() {
            return Some(a.label(why));
        }
        match self.syntactic.take() {
            Some(Ok(Some(a))) => Some(a.label(why)),
            other => {
                self.syntactic = other;
                None
            }
        }
    }
}

/// How often a call given an early lower answer looks again whether the
/// server is loading.
const EARLY_RECHECK: Duration = Duration::from_millis(250);

/// Sleep until `at`; forever when `None`.
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl Engine {
    /// Answer a read-only question from the first source that can (see the
    /// module header). `started`: when the call began; `deadline`: its end.
    pub(crate) async fn answer_in_order(
        &self,
        q: &Valid,
        asked: &AskedPath,
        budget: Duration,
        started: Instant,
        deadline: Instant,
        early: Option<Duration>,
    ) -> Result<Answer, OpError> {
        let action = q.action();
        let lower = action.facts().lower;
        // A remote index being fetched is waited for half the budget at
        // most: the other sources have the rest.
        let by_index = lower.index() && self.has_index(budget / 2).await;
        let by_syntax = lower.syntax() && q.path().is_none_or(has_grammar);
        if !by_index && !by_syntax {
            // Only the server can answer: all of the budget is its.
            return self.dispatch(q, asked, budget, started, deadline).await;
        }
        // 1. The SCIP index at once while the server cannot answer yet.
        if by_index
            && let Some(why) = self.not_ready(q, asked)
            && let Ok(Some(a)) = self.indexed_answer(q, asked).await
        {
            return Ok(a.label(&Why::Partial(why)));
        }
        // 2. The server, and the lower sources alongside it.
        let server_deadline = deadline - render_margin(budget);
        let head_start = self.head_start(q, asked, budget);
        let begin_lower = Instant::now() + head_start;
        let mut lower = Box::pin(async {
            tokio::time::sleep_until(begin_lower).await;
            self.lower(q, asked, by_index, by_syntax).await
        });
        let mut server = Box::pin(self.dispatch(q, asked, budget, started, server_deadline));
        let mut ready: Option<Lower> = None;
        // When to look whether the server is loading and a lower answer is
        // there (again every EARLY_RECHECK while it is not).
        let mut look_at = early.map(|e| started + e);
        let result = loop {
            tokio::select! {
                biased;
                r = &mut server => break r,
                () = tokio::time::sleep_until(server_deadline) => {
                    break Err(self.server_late(q, asked, started, server_deadline, budget));
                }
                l = &mut lower, if ready.is_none() => ready = Some(l),
                () = sleep_until_some(look_at), if ready.as_ref().is_some_and(Lower::answers) => {
                    if let Some(why) = self.loading(q, asked)
                        && let Some(a) = ready.as_mut().and_then(|l| l.take_answer(&why))
                    {
                        // The server's request is cancelled; it loads on.
                        drop(server);
                        return Ok(a);
                    }
                    look_at = Some(Instant::now() + EARLY_RECHECK);
                }
            }
        };
        // A late server's requests are cancelled now.
        drop(server);
        // 3. The server's answer, unless it has none.
        let Some(why) = self.why_lower(q, asked, &result) else {
            return result;
        };
        let lower = match ready {
            Some(l) => l,
            // Not begun yet (the server failed within its head start):
            // begin now.
            None if Instant::now() < begin_lower => self.lower(q, asked, by_index, by_syntax).await,
            None => match tokio::time::timeout_at(deadline + DEADLINE_GRACE / 2, lower).await {
                Ok(l) => l,
                Err(_) => return result,
            },
        };
        if let Some(a) = lower.index {
            return Ok(a.label(&why));
        }
        match lower.syntactic {
            Some(Ok(Some(a))) => Ok(a.label(&why)),
            // No server, and the file too large for the syntactic index:
            // that is the reason, with why no server answered.
            Some(Ok(None)) => match (result, self.too_large_for_index(asked)) {
                (Err(OpError::NoServer(server)), Some((path, len))) => {
                    Err(OpError::TooLargeForIndex {
                        path,
                        len,
                        limit: scry_syntax::index::MAX_FILE_BYTES,
                        server,
                    })
                }
                (result, _) => result,
            },
            // A question the index cannot place either: the server's error
            // says more.
            Some(Err(e)) if result.is_ok() => Err(e),
            _ => result,
        }
    }

    /// The lower sources' answers, in order: the syntactic one only when
    /// the index has none.
    async fn lower(&self, q: &Valid, asked: &AskedPath, by_index: bool, by_syntax: bool) -> Lower {
        let mut out = Lower::default();
        if by_index {
            out.index = self.indexed_answer(q, asked).await.ok().flatten();
        }
        if out.index.is_none() && by_syntax {
            out.syntactic = Some(self.syntactic(q, asked).await);
        }
        out
    }

    /// How long the server has alone before the lower sources begin: a
    /// ready one [`READY_HEAD_START`], one running but not ready
    /// [`BUSY_HEAD_START`], none when no server runs for the file (or it
    /// cannot be told).
    fn head_start(&self, q: &Valid, asked: &AskedPath, budget: Duration) -> Duration {
        match self.server_waiting(q, asked, false) {
            None => READY_HEAD_START.min(budget / 4),
            Some(Reason::Indexing { .. }) => BUSY_HEAD_START.min(budget / 8),
            Some(Reason::ServerStarting { .. }) if self.server_alive(asked) => {
                BUSY_HEAD_START.min(budget / 8)
            }
            Some(_) => Duration::ZERO,
        }
    }

    /// What the server that would answer is doing when it is in a long
    /// phase — started for this question, starting, loading or indexing
    /// (its `$/progress`, with its percentage where it says one) —, as the
    /// reason a lower answer is given early; `None` when it is ready (a
    /// slow answer is waited for), or it exited.
    fn loading(&self, q: &Valid, asked: &AskedPath) -> Option<Why> {
        match self.server_waiting(q, asked, false)? {
            r @ (Reason::Indexing { .. } | Reason::ServerStarting { .. }) => Some(Why::Partial(r)),
            _ => None,
        }
    }

    /// Whether a live server runs for the question's file.
    fn server_alive(&self, asked: &AskedPath) -> bool {
        let Some(Ok(abs)) = self.resolve_asked(asked) else {
            return false;
        };
        let Ok(route) = self.ws.route(&abs) else {
            return false;
        };
        self.ws
            .running()
            .iter()
            .any(|s| s.name() == route.spec.id && s.has_folder(&route.root) && s.is_alive())
    }

    /// Why a lower source should answer after the server's `result`, or
    /// `None` when the server's result stands.
    fn why_lower(
        &self,
        q: &Valid,
        asked: &AskedPath,
        result: &Result<Answer, OpError>,
    ) -> Option<Why> {
        match result {
            Err(e @ (OpError::NoServer(_) | OpError::ServerCrashed(_))) => {
                Some(Why::NoServer(e.clone()))
            }
            Err(e @ OpError::Timeout(_)) => Some(Why::Partial(
                self.indexing_server(asked)
                    .or_else(|| self.server_waiting(q, asked, false))
                    .unwrap_or_else(|| Reason::Error { error: e.clone() }),
            )),
            Ok(a) if a.body.is_empty() => self.indexing_server(asked).map(Why::Partial),
            _ => None,
        }
    }

    /// The error of a server that had not answered when the wait for it
    /// ended, at `until` (what it was doing, when known, is said by
    /// [`Engine::why_lower`]).
    fn server_late(
        &self,
        q: &Valid,
        asked: &AskedPath,
        started: Instant,
        until: Instant,
        budget: Duration,
    ) -> OpError {
        let server = self
            .resolve_asked(asked)
            .and_then(Result::ok)
            .and_then(|p| self.ws.route(&p).ok())
            .map_or_else(|| "the language server".to_string(), |r| r.spec.id);
        crate::call::not_answered_within(
            &server,
            method_for(q.action()),
            until.saturating_duration_since(started),
            budget,
            None,
        )
    }
}
