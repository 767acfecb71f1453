//! A lower source's answer (the SCIP index's, the syntactic index's)
//! before it is known why the live server did not give it, and that why:
//! the sources make an [`Unlabelled`] answer, the answer order (`order`)
//! labels it with a [`Why`] once the server's outcome is known.
//!
//! Invariant: a lower answer given to a caller always carries its why, as
//! a note or as `partial` ([`Unlabelled::label`]).

use super::*;

/// Why a source below the live server answers.
#[derive(Debug, Clone)]
pub(crate) enum Why {
    /// (a) or (b): the server's error.
    NoServer(OpError),
    /// (c): the server is still indexing (or did not answer in time).
    Partial(Reason),
}

impl Why {
    /// The reason as one fact (the SCIP index's `because`).
    pub(crate) fn reason(&self) -> Reason {
        match self {
            Why::NoServer(e) => Reason::Error { error: e.clone() },
            Why::Partial(r) => r.clone(),
        }
    }
}

/// A lower source's answer made before it is known why the server did not
/// answer: [`Unlabelled::label`] adds that.
pub(crate) struct Unlabelled {
    pub(crate) answer: Answer,
    pub(crate) label: Label,
}

/// Where and how the reason is said.
pub(crate) enum Label {
    /// A SCIP index answer: the first note says it came from the index and
    /// why.
    Index,
    /// A syntactic answer: its note goes at `at` among the notes, and the
    /// server's indexing (or lateness) makes it partial.
    Syntactic { at: usize },
    /// An empty syntactic answer that says why it is empty: the reason
    /// goes at `at`.
    Said { at: usize },
}

impl Unlabelled {
    /// The answer, saying `why` the server did not give it.
    pub(crate) fn label(self, why: &Why) -> Answer {
        let mut a = self.answer;
        match self.label {
            Label::Index => a.notes.insert(
                0,
                Reason::FromIndex {
                    because: Box::new(why.reason()),
                },
            ),
            Label::Said { at } => a.notes.insert(at.min(a.notes.len()), why.reason()),
            Label::Syntactic { at } => {
                let at = at.min(a.notes.len());
                match why {
                    Why::NoServer(e) => a.notes.insert(
                        at,
                        Reason::Syntactic {
                            because: Some(Box::new(Reason::Error { error: e.clone() })),
                        },
                    ),
                    Why::Partial(r) => {
                        a.partial = Some(r.clone());
                        a.notes.insert(at, Reason::Syntactic { because: None });
                    }
                }
            }
        }
        a
    }
}
