//! The contract between the buildvise host and its toolchain plugins.
//!
//! A plugin knows one toolchain: which command runs a tool ([`Plugin::plan`]) and what the output
//! means ([`Parser`]). It implements the two safe traits here and exports them with
//! [`export_plugin!`]; the crate turns them into the versioned C ABI in [`abi`], catching every
//! panic at the boundary. The shared types in [`types`] cross as JSON.
//!
//! A parser reads a tool's output through [`Recognisers`]: one [`Recogniser`] per output format,
//! each offered only the lines it may want ([`Wants`]).
//!
//! This crate is not the host: it spawns nothing, stores nothing and renders nothing. Beyond the
//! contract it holds only what every plugin needs ([`strip_ansi`], [`clip`], [`relative_to`],
//! [`split_location`], [`join_test_name`], [`occurrences`], [`DiagnosticSet`], [`PrefixSet`],
//! [`PlanRequest::check_path`]) so that plugins do not each write their own.
//!
//! The `testing` feature (off by default) adds the module `testing`: a parser run in-process in
//! unit tests and benchmarks. Enable it from `[dev-dependencies]` only.
//!
//! # Versions
//!
//! What the host checks is the ABI ([`abi::ABI_VERSION`], and its minor [`abi::ABI_MINOR`]), not
//! this crate's version: a plugin built against any release of this crate that speaks ABI 1 loads
//! in any host that speaks ABI 1. The crate follows semver on its Rust API (0.x: a minor release
//! may change it, a patch never does).
// `abi` is the one module allowed `unsafe`: the C ABI cannot be written without it.
#![deny(unsafe_code)]

pub mod abi;
mod ansi;
mod collect;
mod paths;
mod plugin;
mod prefixes;
mod programs;
mod recognise;
mod roots;
#[cfg(feature = "testing")]
pub mod testing;
mod text;
pub mod types;

pub use ansi::{strip_ansi, strip_ansi_str};
pub use collect::{DiagnosticSet, TestCases, join_test_name, millis_to_us, seconds_to_us};
pub use paths::{cache_dir, is_absolute, lexical, relative_to, split_location};
pub use plugin::{Parser, Plugin};
pub use prefixes::PrefixSet;
pub use programs::{find_program, program_extensions};
pub use recognise::{Head, LineTest, MAX_RECOGNISERS, Recogniser, Recognisers, Text, Wants};
pub use text::{clip, occurrences};
pub use types::*;
