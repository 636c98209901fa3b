//! The buildvise host: runs toolchain commands through plugins, stores their logs, and renders
//! what an agent needs. See docs/architecture.md for the map.

pub mod cli;
pub mod config;
pub mod exec;
pub mod mcp;
pub mod outcome;
pub mod plugins;
pub mod render;
pub mod run;
pub mod store;
