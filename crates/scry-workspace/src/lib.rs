//! Workspace: configuration, the server catalogue, routing of files to
//! servers by file type and root markers, and the lifecycle of server
//! processes (one per server and root, started lazily, reused), and
//! workspace trust (what project configuration may run).

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

pub use pool::{Route, Workspace, WorkspaceError, default_log_dir};
