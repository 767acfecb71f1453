//! Workspace: configuration, the server catalogue, routing of files to
//! servers by file type and root markers, and the lifecycle of server
//! processes (one per server and root, started lazily, reused).

pub mod catalog;
pub mod config;
pub mod doctor;
pub mod pool;
pub mod seed_config;
pub mod watch;

pub use pool::{Route, Workspace, WorkspaceError, default_log_dir};
