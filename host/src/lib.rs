//! The buildvise host: runs toolchain commands through plugins, stores their logs, and renders
//! what an agent needs. See docs/architecture.md for the map.
//!
//! Data flows request → plan → run → parse → render: a surface ([`cli`], [`mcp`]) maps a call
//! onto the [`app`], which checks [`access`] and [`config`], asks the tool ([`tools`]: a plugin's
//! from [`plugins`], or one a config file defines) for the plan, runs it ([`run`]) while a parser thread reads its lines ([`parse`]), keeps everything in
//! the [`store`], and answers through [`render`].
#![deny(unsafe_code)]

pub mod access;
pub mod app;
pub mod cli;
pub mod config;
mod describe;
pub mod history;
pub mod mcp;
pub mod outcome;
pub mod parse;
pub mod plugins;
pub mod render;
pub mod run;
pub mod store;
pub mod tools;

pub use describe::describe;
