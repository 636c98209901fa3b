//! The host's side of parsing: a plugin's parser fed on a thread of its own ([`worker`]), from a
//! live run or from a saved log ([`saved`]). The plugin decides what lines mean; this module
//! decides what the parser sees of each line and makes sure a stuck parser stops nobody.

mod saved;
mod worker;

pub use saved::{Parsed, SavedError, SavedLog, parse_saved, parse_stored};
pub use worker::{ParseFailure, ParseWorker};
