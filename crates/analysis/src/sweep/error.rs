//! Why a sweep, a shard or a merge did not happen, in one line each.

use rtlab_model::generate::GenerateError;
use rtlab_model::overheads::OverheadsError;

/// A refused sweep, shard or merge. Nothing is merged or written when one
/// occurs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SweepError {
    /// A setting of the spec (or of the generator it configures) is
    /// invalid; the message names the setting as a spec key, which a command
    /// line spells as its flag ([`SweepError::message_with`]).
    #[error("{0}")]
    Setting(#[from] GenerateError),
    /// The overheads file named by the spec could not be loaded.
    #[error("cannot load the overheads: {0}")]
    Overheads(OverheadsError),
    /// A JSON document (a spec, a shard, a result) is not what it should be:
    /// not JSON, truncated, an unknown key, a wrong value.
    #[error("{}", located(what, *line, *column, problem))]
    Document {
        /// What was being read (`sweep spec`, `sweep shard`, ...); a caller
        /// with a file name puts it in its place.
        what: &'static str,
        /// 1-based line of the problem (0 when it is about the whole
        /// document).
        line: usize,
        /// 1-based column of the problem (0 when about the whole document).
        column: usize,
        /// What is wrong, in one line.
        problem: String,
    },
    /// A shard that cannot be merged with the others (a different spec, a
    /// bad digest, a duplicate or missing index, counts that do not add
    /// up).
    #[error("shard #{position}: {problem}")]
    Merge {
        /// Its position in the list given to [`merge`](super::merge)
        /// (0-based); a caller with file names names the file instead.
        position: usize,
        /// What is wrong, in one line.
        problem: String,
    },
    /// No shards were given to merge.
    #[error("no shards to merge")]
    NoShards,
    /// The progress callback asked the run to stop.
    #[error("the sweep was cancelled")]
    Cancelled,
}

impl SweepError {
    /// The one-line message, with the setting a [`SweepError::Setting`]
    /// names spelled by `spell` (`|s| format!("--{s}")` for a command line);
    /// other errors print as [`Display`](std::fmt::Display) does.
    pub fn message_with(&self, spell: &dyn Fn(&str) -> String) -> String {
        match self {
            SweepError::Setting(e) => e.message_with(spell),
            other => other.to_string(),
        }
    }

    /// A [`SweepError::Document`] from serde_json's error, with its line
    /// and column apart from its message.
    pub(crate) fn document(what: &'static str, error: &serde_json::Error) -> SweepError {
        let text = error.to_string();
        let suffix = format!(" at line {} column {}", error.line(), error.column());
        SweepError::Document {
            what,
            line: error.line(),
            column: error.column(),
            problem: text.strip_suffix(&suffix).unwrap_or(&text).to_string(),
        }
    }

    /// Reads a JSON object into `T`, refusing any other JSON value first:
    /// serde reads a struct from an array too, by position (`[1, 2]` as
    /// `tasks` 1 and `from` 2), which no document of rtlab's is.
    pub(crate) fn read_object<T: serde::de::DeserializeOwned>(
        what: &'static str,
        text: &str,
    ) -> Result<T, SweepError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| SweepError::document(what, &e))?;
        if !value.is_object() {
            let kind = match value {
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Bool(_) => "a boolean",
                _ => "null",
            };
            return Err(SweepError::whole_document(
                what,
                format!("must be a JSON object of keys, not {kind}"),
            ));
        }
        // From the text again, so that a key's problem has its line and column.
        serde_json::from_str(text).map_err(|e| SweepError::document(what, &e))
    }

    /// A [`SweepError::Document`] about the whole document.
    pub(crate) fn whole_document(what: &'static str, problem: impl Into<String>) -> SweepError {
        SweepError::Document {
            what,
            line: 0,
            column: 0,
            problem: problem.into(),
        }
    }
}

/// `what:line:column: problem`, or `what: problem` without a position.
fn located(what: &str, line: usize, column: usize, problem: &str) -> String {
    if line == 0 {
        format!("{what}: {problem}")
    } else {
        format!("{what}:{line}:{column}: {problem}")
    }
}
