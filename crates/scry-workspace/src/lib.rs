//! Workspace: configuration ([`config`], layered files; other agents'
//! files translated by [`seed_config`]), the server catalogue
//! ([`catalog`]), routing of files to servers by file type ([`routing`])
//! and roots by the project's own workspace files ([`roots`]; the
//! workspace's [`layout`] to see what a server's folders leave out),
//! finding executables ([`command`]), the lifecycle of server processes
//! ([`pool`]: one per server, serving each root as a folder where the
//! server takes folders, else one per root; started lazily, reused), running the catalogue's SCIP indexers into
//! scry-index's cache ([`indexing`]), the remote index fetched by commit
//! ([`remote_index`]), workspace trust ([`trust`]: what
//! project configuration may run), the home of the environment that
//! shapes a call ([`env`]: captured by clients, read through one
//! function), and of the servers' memory policy ([`memory`]: restart over
//! a cap, stop the least recently used over the budget; each server's
//! process tree measured by `scry_lsp_session::process::memory`, `/proc` on Linux,
//! its job on Windows). What differs between Unix and Windows here (how an
//! indexer runs) is in `platform`, one module per concern.
//!
//! Paths, the walker, per-user directories, the file reader and log files
//! are scry-base's, named there by every caller (`scry_base::paths`, …):
//! none is re-exported here. Inside, dependencies run one way: `catalog` and
//! the shared JSONC and key-name helpers (`jsonc`, `keys`) at the bottom,
//! then `seed_config`, `config`, `routing`, `pool`.

pub mod catalog;
pub mod command;
pub mod config;
pub mod doctor;
pub mod env;
pub mod indexing;
mod jsonc;
mod keys;
pub mod layout;
pub mod memory;
mod platform;
pub mod pool;
pub mod remote_index;
pub mod roots;
pub mod routing;
pub mod seed_config;
pub mod trust;
pub mod watch;

pub use pool::{OutsideView, Route, ServerMemory, ServerUse, Workspace, WorkspaceError};
/// What one memory check reads once for every server (hosts that check
/// several workspaces take one: [`Workspace::memory_samples`]).
pub use scry_lsp_session::process::memory::{ProcessTable, TreeMemory};
