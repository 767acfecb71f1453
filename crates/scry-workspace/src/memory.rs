//! The memory policy for running language servers: given one sample per
//! server (its process tree's resident memory, its cap, whether a call is
//! using it, how long since a question used it) and the pool's budget,
//! which servers to restart and which to stop. A pure function,
//! [`decide`]; the pool ([`crate::pool`]) takes the samples
//! (`scry_lsp_session::process::memory`) and carries the decisions out, and says what it did
//! ([`MemoryEvent`]).
//!
//! Rules:
//! - A server over its cap is restarted, but only when no call is using it
//!   (never mid-request): a busy one is left for the next check, or the
//!   next call, which restarts it before sending anything.
//! - When the servers together are over the budget (what the restarts free
//!   counted as freed), idle servers are stopped, least recently used
//!   first, until the rest fit. Busy servers are never stopped.
//! - Unknown memory (no figure from the OS: macOS, a Windows server
//!   outside a measuring job) decides nothing.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use scry_model::MemoryAction;

/// One running server's memory at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub id: String,
    pub root: PathBuf,
    pub pid: u32,
    /// The process tree's resident memory, KiB.
    pub rss_kib: u64,
    /// How many processes that is.
    pub processes: usize,
    /// The server's cap, KiB (`None`: no cap).
    pub cap_kib: Option<u64>,
    /// A call holds the server now (a request may be in flight).
    pub busy: bool,
    /// Since a question last used it.
    pub idle: Duration,
}

/// What to do with the server at index `index` of the samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Over its cap: restart it.
    Restart { index: usize },
    /// The pool is over budget and this is the least recently used idle
    /// server: stop it. `total_kib` is what all servers used together.
    Stop {
        index: usize,
        total_kib: u64,
        budget_kib: u64,
    },
}

impl Decision {
    pub fn index(&self) -> usize {
        match self {
            Decision::Restart { index } | Decision::Stop { index, .. } => *index,
        }
    }
}

/// The decisions for `samples` under `budget_kib` (see the module header),
/// restarts first, then stops in the order they are to happen.
pub fn decide(samples: &[Sample], budget_kib: Option<u64>) -> Vec<Decision> {
    let mut out: Vec<Decision> = samples
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.busy && s.cap_kib.is_some_and(|cap| s.rss_kib > cap))
        .map(|(index, _)| Decision::Restart { index })
        .collect();
    let Some(budget) = budget_kib else {
        return out;
    };
    let total: u64 = samples.iter().map(|s| s.rss_kib).sum();
    let restarted = |i: usize| out.iter().any(|d| d.index() == i);
    let mut left: u64 = samples
        .iter()
        .enumerate()
        .filter(|(i, _)| !restarted(*i))
        .map(|(_, s)| s.rss_kib)
        .sum();
    if left <= budget {
        return out;
    }
    let mut idle: Vec<usize> = (0..samples.len())
        .filter(|&i| !samples[i].busy && !restarted(i))
        .collect();
    // Least recently used first; ties: the larger first.
    idle.sort_by_key(|&i| {
        (
            std::cmp::Reverse(samples[i].idle),
            std::cmp::Reverse(samples[i].rss_kib),
        )
    });
    for index in idle {
        if left <= budget {
            break;
        }
        left = left.saturating_sub(samples[index].rss_kib);
        out.push(Decision::Stop {
            index,
            total_kib: total,
            budget_kib: budget,
        });
    }
    out
}

/// What the pool did about memory, and why, with the figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryEvent {
    pub at: SystemTime,
    pub server: String,
    pub root: PathBuf,
    /// What the next answer and `status` say (worded by scry-render).
    pub what: MemoryAction,
}

impl MemoryEvent {
    /// What `status` and `daemon status` report of it: when (seconds since
    /// the Unix epoch) and what.
    pub fn note(&self) -> scry_model::MemoryNote {
        scry_model::MemoryNote {
            at_secs: (self.at.duration_since(std::time::UNIX_EPOCH)).map_or(0, |d| d.as_secs()),
            what: self.what.clone(),
        }
    }
}

/// A restart of `s` (`now`: started anew for the call about to be asked;
/// else stopped between requests, to start anew with the next question).
pub fn restarted(s: &Sample, now: bool) -> MemoryAction {
    MemoryAction::Restarted {
        server: s.id.clone(),
        memory_kib: s.rss_kib,
        processes: s.processes,
        memory_cap_kib: s.cap_kib,
        now,
    }
}

/// A stop of `s` because the pool was over its budget.
pub fn stopped(s: &Sample, total_kib: u64, budget_kib: u64) -> MemoryAction {
    MemoryAction::Stopped {
        server: s.id.clone(),
        memory_kib: s.rss_kib,
        processes: s.processes,
        total_kib,
        memory_budget_kib: budget_kib,
        idle_secs: s.idle.as_secs(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024;

    fn s(id: &str, mib: u64, cap_mib: Option<u64>, busy: bool, idle_s: u64) -> Sample {
        Sample {
            id: id.into(),
            root: PathBuf::from("/ws"),
            pid: 1,
            rss_kib: mib * MIB,
            processes: 1,
            cap_kib: cap_mib.map(|c| c * MIB),
            busy,
            idle: Duration::from_secs(idle_s),
        }
    }

    #[test]
    fn over_its_cap_and_idle_is_restarted_busy_is_left_for_later() {
        let samples = [
            s("pyright", 2300, Some(2048), false, 5),
            s("gopls", 3000, Some(2048), true, 0),
            s("clangd", 100, Some(2048), false, 50),
            s("uncapped", 9000, None, false, 50),
        ];
        assert_eq!(decide(&samples, None), [Decision::Restart { index: 0 }]);
        // At the cap exactly: not over it.
        assert_eq!(decide(&[s("a", 2048, Some(2048), false, 1)], None), []);
    }

    #[test]
    fn over_budget_stops_the_least_recently_used_idle_servers_until_under() {
        let samples = [
            s("a", 1000, None, false, 10),
            s("b", 1000, None, false, 300), // least recently used
            s("c", 1000, None, true, 900),  // busy: never stopped
            s("d", 1000, None, false, 100),
        ];
        let budget = Some(2500 * MIB);
        let total = 4000 * MIB;
        assert_eq!(
            decide(&samples, budget),
            [
                Decision::Stop {
                    index: 1,
                    total_kib: total,
                    budget_kib: 2500 * MIB
                },
                Decision::Stop {
                    index: 3,
                    total_kib: total,
                    budget_kib: 2500 * MIB
                },
            ]
        );
        // Under budget: nothing.
        assert_eq!(decide(&samples, Some(4000 * MIB)), []);
        // Only busy servers: nothing can be stopped.
        let busy = [s("a", 5000, None, true, 1), s("b", 5000, None, true, 1)];
        assert_eq!(decide(&busy, Some(MIB)), []);
    }

    #[test]
    fn what_a_restart_frees_counts_toward_the_budget() {
        let samples = [
            s("big", 3000, Some(2048), false, 1),
            s("old", 500, None, false, 600),
        ];
        // 3500 MiB over a 1000 MiB budget; restarting `big` leaves 500.
        assert_eq!(
            decide(&samples, Some(1000 * MIB)),
            [Decision::Restart { index: 0 }]
        );
        // A tighter budget stops `old` too.
        assert_eq!(decide(&samples, Some(400 * MIB)).len(), 2);
    }

    #[test]
    fn the_actions_carry_the_figures() {
        let mut p = s("pyright", 2355, Some(2048), false, 42);
        p.processes = 2;
        assert_eq!(
            restarted(&p, true),
            MemoryAction::Restarted {
                server: "pyright".into(),
                memory_kib: 2355 * MIB,
                processes: 2,
                memory_cap_kib: Some(2048 * MIB),
                now: true,
            }
        );
        assert_eq!(
            stopped(&p, 5 * 1024 * MIB, 4 * 1024 * MIB),
            MemoryAction::Stopped {
                server: "pyright".into(),
                memory_kib: 2355 * MIB,
                processes: 2,
                total_kib: 5 * 1024 * MIB,
                memory_budget_kib: 4 * 1024 * MIB,
                idle_secs: 42,
            }
        );
    }
}
