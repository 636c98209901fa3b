//! buildvise's engine: everything beneath the application layer. It runs a command in its own
//! process group ([`run`]), keeps its log and result ([`store`]), loads plugins ([`plugins`]) and
//! feeds their parsers on a thread of their own ([`parse`]), compares a run with the one before
//! ([`history`]), adds up the tokens saved ([`gain`]), and renders answers ([`render`]), under the operator's settings ([`config`],
//! [`access`]) and with the tools they allow ([`tools`]).
//!
//! It is not an API for surfaces: the command line and the MCP server use `buildvise-app`, which
//! does each call's steps in order over these layers. The bench and the fuzzer use the layers
//! directly. docs/architecture.md is the map, with what may depend on what.
#![deny(unsafe_code)]

pub mod access;
pub mod config;
mod describe;
pub mod gain;
pub mod history;
pub mod outcome;
pub mod parse;
pub mod plugins;
pub mod render;
pub mod run;
pub mod sandbox;
pub mod shell_line;
pub mod store;
pub mod tools;

pub use describe::describe;
