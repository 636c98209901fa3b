//! What can go wrong in a call, as one type, and how a surface says it.
//!
//! Each message says what went wrong and what to send or do instead, and never repeats its cause:
//! causes are kept as `source` and printed once, as a chain, by [`buildvise_engine::describe()`].

use buildvise_engine::access::AccessError;
use buildvise_engine::config::ConfigError;
use buildvise_engine::parse::SavedError;
use buildvise_engine::plugins::PluginError;
use buildvise_engine::run::RunError;
use buildvise_engine::store::StoreError;
use buildvise_engine::tools::ToolError;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Access(#[from] AccessError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Sandbox(#[from] buildvise_engine::sandbox::SandboxError),
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// A tool its plugin cannot run on this machine; the plugin's sentence says why.
    #[error("{tool} cannot run here: {reason}")]
    Unavailable { tool: String, reason: String },
    #[error("unknown tool {name:?}{suggest}; send a tool name that list shows{why}")]
    UnknownTool { name: String, suggest: String, why: String },
    /// A tool that changes the workspace, called without consent; says exactly what would run.
    #[error("{tool} {what}, so nothing ran; to run `{command}`, call again with confirm: true (CLI: --confirm)")]
    NeedsConfirm { tool: String, what: String, command: String },
    /// A read-only server and a call that would change the workspace.
    #[error(
        "{tool} changes the workspace without {flag} and this server is read-only, so nothing ran; add {flag} to only check"
    )]
    ReadOnly { tool: String, flag: String },
    /// A read-only server and arguments that make a call change the workspace; the plugin says
    /// which and how.
    #[error("{tool}: {why}, and this server is read-only, so nothing ran; send the arguments without it")]
    ReadOnlyArgs { tool: String, why: String },
    /// The plugin refused the call; its message says what to send instead.
    #[error("{tool}: {message}")]
    Refused { tool: String, message: String },
    #[error("{tool} could not be prepared")]
    Plugin {
        tool: String,
        #[source]
        source: PluginError,
    },
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Saved(#[from] SavedError),
    #[error("grep is not a valid regular expression; send a pattern in Rust regex syntax")]
    Grep(#[source] regex::Error),
    #[error("the call was cancelled before it finished")]
    Cancelled,
    #[error("buildvise failed while handling the call; a run it started is still in the store (`buildvise runs`)")]
    Internal(#[source] tokio::task::JoinError),
}

impl AppError {
    /// A plugin's answer to a call, as the error a caller should see.
    pub(super) fn from_plugin(tool: &str, error: PluginError) -> Self {
        match error {
            PluginError::Reported(message) => AppError::Refused { tool: tool.to_string(), message },
            other => AppError::Plugin { tool: tool.to_string(), source: other },
        }
    }

    /// Whether the call named a run the store does not have (or an id no run can have).
    pub fn is_unknown_run(&self) -> bool {
        matches!(self, AppError::Store(StoreError::BadRunId(_) | StoreError::UnknownRun(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use buildvise_engine::describe;

    #[test]
    fn causes_are_printed_once_each() {
        let io = std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left on device");
        let error = AppError::Saved(SavedError::Read { path: "/x/log".into(), source: io });
        assert_eq!(describe(&error), "cannot read /x/log\n  caused by: No space left on device");
    }
}
