//! Usage errors: the command line itself is wrong (a bad value, flags that
//! do not go together, a value out of range for this task set). They exit
//! with status 2, as clap's own parse errors do; everything else that fails
//! (an invalid task-set file, a refused system call, a run cut short) exits
//! with 1.
//!
//! Values clap can check alone are typed flags (clap reports them); the
//! checks that need several flags or the task set mark their error with
//! [`usage`].

use std::fmt;

use rtlab_model::printable;
use rtlab_rt::RtError;

/// An error in the command line, in one line naming the flag.
#[derive(Debug)]
pub struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Marks `message` (which names the flag) as a usage error.
pub fn usage(message: impl fmt::Display) -> anyhow::Error {
    anyhow::Error::new(UsageError(message.to_string()))
}

/// The message of a runtime error, naming the flag where it is about a
/// setting (`invalid --interval 5us: ...`); the runtime library's own
/// message names the setting, not the flag.
pub fn naming_the_flag(error: &RtError) -> String {
    match error {
        RtError::Setting {
            setting,
            value: Some(value),
            why,
        } => format!("invalid --{setting} {value}: {why}"),
        RtError::Setting {
            setting,
            value: None,
            why,
        } => format!("invalid --{setting}: {why}"),
        RtError::HistogramCells {
            threads,
            buckets,
            max,
        } => format!(
            "invalid --threads {threads} x --histogram-buckets {buckets}: use at most {max} buckets in all (128 MiB)"
        ),
        other => other.to_string(),
    }
}

/// A generator error as `rtlab taskset gen` and `rtlab sweep` say it: a
/// usage error whose message spells each setting it names as the flag
/// (`--tasks`, `--utilization`, ...).
pub fn generator_usage(error: rtlab_model::generate::GenerateError) -> anyhow::Error {
    usage(error.message_with(&|setting| format!("--{setting}")))
}

/// The error and its causes as one line: `what: why: deeper why`, each
/// cause once (many errors already quote their source's text, which
/// `{:#}` would print again), with names from files and paths escaped.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    printable(&line).into_owned()
}

/// Every failure of a command that went on after the first (a job file
/// and the store both failing on a full disk): each but the last is said
/// on standard error as an `error:` line now, the last is returned for
/// `main` to say and set the exit status by.
pub fn all_of(results: impl IntoIterator<Item = anyhow::Result<()>>) -> anyhow::Result<()> {
    let mut last = Ok(());
    for result in results {
        if let Err(e) = result {
            if let Err(earlier) = std::mem::replace(&mut last, Err(e)) {
                crate::setup::say(&format!("error: {}", one_line(&earlier)));
            }
        }
    }
    last
}

/// The exit status for `error`: 2 when it is a usage error, else 1.
pub fn exit_status(error: &anyhow::Error) -> u8 {
    if error.chain().any(|e| e.is::<UsageError>()) {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn usage_errors_exit_2_even_under_context() {
        let plain = anyhow::anyhow!("cannot read");
        assert_eq!(exit_status(&plain), 1);
        let marked = usage("--duration `10`: missing unit");
        assert_eq!(marked.to_string(), "--duration `10`: missing unit");
        assert_eq!(exit_status(&marked), 2);
        let wrapped = Err::<(), _>(usage("--x")).context("rtlab sim").unwrap_err();
        assert_eq!(exit_status(&wrapped), 2);
    }
}
