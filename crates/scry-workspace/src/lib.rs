//! Workspace: configuration ([`config`], layered files), the server
//! catalogue ([`catalog`]), routing of files to servers by file type
//! ([`routing`]) and root markers ([`roots`]), finding executables
//! ([`command`]), the lifecycle of server processes ([`pool`]: one per
//! server and root, started lazily, reused), workspace trust ([`trust`]:
//! what project configuration may run), and the one home of paths inside
//! the workspace ([`paths`]: normalise, show relative, confine) and of
//! walking it ([`walk`]: one walker, one list of skipped directories).

pub mod catalog;
pub mod command;
pub mod config;
pub mod doctor;
pub mod paths;
pub mod pool;
pub mod roots;
pub mod routing;
pub mod seed_config;
pub mod trust;
pub mod walk;
pub mod watch;

pub use pool::{Route, ServerUse, Workspace, WorkspaceError, default_log_dir};
