//! Errors of the simulator. All of them are about the input (task set,
//! scheduler spec, configuration); a run that starts always finishes.
//!
//! Messages quote what the user wrote (specs, task names); they print it
//! through [`printable`], so an error is one line whatever the input holds.

use rtlab_model::printable;

/// Why a simulation could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A configuration value is wrong; the message names the flag and the fix.
    #[error("{}", printable(.0))]
    Config(String),
    /// The task set breaks the model's rules.
    #[error("task set `{}`: {}", printable(.name), printable(.message))]
    TaskSet {
        /// The set's name.
        name: String,
        /// The first error found by validation.
        message: String,
    },
}
