//! Workspace: configuration ([`config`], layered files), the server
//! catalogue ([`catalog`]), routing of files to servers by file type
//! ([`routing`]) and root markers ([`roots`]), finding executables
//! ([`command`]), the lifecycle of server processes ([`pool`]: one per
//! server and root, started lazily, reused), workspace trust ([`trust`]:
//! what project configuration may run), and the one home of paths inside
//! the workspace ([`paths`]: normalise, show relative, confine) and of
//! walking it ([`walk`]: one walker, one list of skipped directories), and
//! of scry's per-user directories ([`dirs`]: state, journal, logs, daemon,
//! caches, the user configuration file), of the environment that shapes
//! a call ([`env`]: captured by clients, read through one function), and of
//! the servers' memory
//! ([`procmem`]: a process tree's resident memory from `/proc`; [`memory`]:
//! the policy — restart over a cap, stop the least recently used over the
//! budget).

pub mod catalog;
pub mod command;
pub mod config;
pub mod dirs;
pub mod doctor;
pub mod env;
pub mod memory;
pub mod paths;
pub mod pool;
pub mod procmem;
pub mod roots;
pub mod routing;
pub mod seed_config;
pub mod trust;
pub mod walk;
pub mod watch;

pub use pool::{Route, ServerMemory, ServerUse, Workspace, WorkspaceError};
/// The one reader of workspace files (regular files only, non-blocking
/// open, bounded size), for the layers above that see only this crate.
pub use scry_lsp::disk;
/// Bounded, rotated log files (servers' stderr, the daemon's log).
pub use scry_lsp::logfile;
