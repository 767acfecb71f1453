//! Workspace: configuration, the server catalogue, routing of files to
//! servers by file type and root markers, and the lifecycle of server
//! processes (one per server and root, started lazily, reused), and
//! workspace trust (what project configuration may run).

pub mod catalog;
pub mod config;
pub mod doctor;
pub mod pool;
pub mod seed_config;
pub mod trust;
pub mod watch;

pub use pool::{Route, ServerUse, Workspace, WorkspaceError, default_log_dir};
