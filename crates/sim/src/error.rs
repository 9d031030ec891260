//! Errors of the simulator. All of them are about the input (task set,
//! scheduler spec, configuration); a run that starts always finishes.
//!
//! Messages name no command-line flag (the CLI adds that context); they
//! quote what the user wrote (specs, task names) and print it
//! through [`printable`], so an error is one line whatever the input holds.

use rtlab_model::{printable, Nanos};

/// Why a simulation could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A configuration value is wrong; the message says what and the fix.
    #[error("{}", printable(.0))]
    Config(String),
    /// A setting does not fit: `{setting} {message}`, e.g. `duration must
    /// be greater than 0`, ``phase `1ms..2ms:x`: bad factor (...)``,
    /// `protocol ipcp needs a fixed-priority scheduler ...` (the CLI names
    /// the flag, `--{setting}`).
    #[error("{setting} {}", printable(.message))]
    Setting {
        /// The setting: `duration`, `tick`, `phase`, `protocol`.
        setting: &'static str,
        /// What is wrong with it and the fix.
        message: String,
    },
    /// An overload phase that starts when the run is over.
    #[error("phase {phase} starts at {start}, at or after the end of the run ({duration} long)")]
    PhaseAfterEnd {
        /// The phase as written.
        phase: String,
        /// Its start.
        start: Nanos,
        /// How long the run is.
        duration: Nanos,
    },
    /// Two overload phases that overlap.
    #[error("phase {phase} overlaps phase {other}: phases must not overlap")]
    PhasesOverlap {
        /// The later-starting phase.
        phase: String,
        /// The phase it overlaps.
        other: String,
    },
    /// A setting's value is not one of the accepted names (the CLI names
    /// the flag, `--{setting}`).
    #[error("unknown {setting} `{}` (use {accepted})", printable(.value))]
    Choice {
        /// The setting: `on-miss`, `exec`, `jitter`, `protocol`.
        setting: &'static str,
        /// The value as written.
        value: String,
        /// The accepted values.
        accepted: &'static str,
    },
    /// A scheduler spec that does not parse (the CLI adds `--scheduler`).
    #[error("scheduler `{}`: {}", printable(.spec), printable(.why))]
    Spec {
        /// The spec as written.
        spec: String,
        /// What is wrong and the accepted forms.
        why: String,
    },
    /// A scheduler that cannot be built for this task set (`fp:given`
    /// without priorities, a multiburst wake-up naming no task, ...).
    #[error("scheduler {}: {}", printable(.scheduler), printable(.why))]
    Setup {
        /// The scheduler (or its parameter) concerned.
        scheduler: String,
        /// What is wrong and the fix.
        why: String,
    },
    /// The task set breaks the model's rules.
    #[error("task set `{}`: {}", printable(.name), printable(.message))]
    TaskSet {
        /// The set's name.
        name: String,
        /// The first error found by validation.
        message: String,
    },
}

impl From<rtlab_model::phase::PhaseError> for SimError {
    /// The same messages the simulator gave before phases moved to the
    /// model (`phase ...`; the CLI names `--phase`).
    fn from(e: rtlab_model::phase::PhaseError) -> SimError {
        use rtlab_model::phase::PhaseError;
        match e {
            PhaseError::AfterEnd {
                phase,
                start,
                duration,
            } => SimError::PhaseAfterEnd {
                phase,
                start,
                duration,
            },
            PhaseError::Overlap { phase, other } => SimError::PhasesOverlap { phase, other },
            PhaseError::Syntax { .. } | PhaseError::Task { .. } => SimError::Setting {
                setting: "phase",
                message: e.to_string().trim_start_matches("phase ").to_string(),
            },
            _ => SimError::Setting {
                setting: "phase",
                message: e.to_string(),
            },
        }
    }
}
