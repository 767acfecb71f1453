//! Workspace: configuration ([`config`], layered files), the server
//! catalogue ([`catalog`]), routing of files to servers by file type
//! ([`routing`]) and root markers ([`roots`]), finding executables
//! ([`command`]), the lifecycle of server processes ([`pool`]: one per
//! server and root, started lazily, reused), workspace trust ([`trust`]:
//! what project configuration may run), re-exporting the bottom crate's
//! paths inside the workspace ([`paths`]: normalise, show relative,
//! confine), walking it ([`walk`]: one walker, one list of skipped
//! directories) and scry's per-user directories ([`dirs`]: state, journal,
//! logs, daemon, caches, the user configuration file) — all in scry-base —,
//! the home of the environment that shapes a call ([`env`]: captured by
//! clients, read through one function), and of the servers' memory
//! ([`procmem`]: a process tree's resident memory from `/proc`; [`memory`]:
//! the policy — restart over a cap, stop the least recently used over the
//! budget).

pub mod catalog;
pub mod command;
pub mod config;
pub mod doctor;
pub mod env;
pub mod indexing;
mod jsonc;
mod keys;
pub mod memory;
pub mod pool;
pub mod procmem;
pub mod roots;
pub mod routing;
pub mod seed_config;
pub mod trust;
pub mod watch;

pub use pool::{Route, ServerMemory, ServerUse, Workspace, WorkspaceError};
