//! The host's side of parsing: a run's parser ([`combined`]: a plugin's, or the formats and
//! [`patterns`] of a config-defined tool) fed on a thread of its own ([`worker`]), from a live run
//! or from a saved log ([`saved`]). Plugins decide what lines mean; this module decides what a
//! parser sees of each line and makes sure a stuck parser stops nobody. Where no parser explains
//! a failure, [`flagged`] finds the lines that read like one, for the answer to point at.

mod combined;
mod flagged;
mod patterns;
mod saved;
mod thread_cpu;
mod worker;

pub use combined::RunParser;
pub use flagged::{Flagged, TROUBLE_WORDS, flag_saved, flag_stored};
pub use patterns::PatternParser;
pub use saved::{Parsed, SavedError, SavedLog, parse_saved, parse_stored};
pub use worker::{ParseFailure, ParseWorker};
