//! Why a generator refused its settings.

/// A generator setting that cannot produce a task set, or a draw that gave up.
///
/// Messages are one line and name settings as words: `tasks`,
/// `utilization`, `method`, `max-task-utilization`, `periods`, `period-min`,
/// `period-max`, `period-granularity`, `deadlines`, `count`. A command line
/// spells them its own way (`rtlab taskset gen` as `--tasks`, ...): the
/// fields say which settings a message names, so it can.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum GenerateError {
    /// A setting is outside its allowed range, e.g. `utilization must be > 0`.
    InvalidSetting {
        /// The setting (`utilization`).
        setting: &'static str,
        /// What is wrong with it, starting with a verb (`must be > 0`).
        problem: String,
        /// The other settings `problem` names, as words in it
        /// (`max-task-utilization` in `exceeds max-task-utilization 0.5`).
        mentions: &'static [&'static str],
    },
    /// A name (method, period distribution, deadline model) that is not known.
    UnknownName {
        /// What was being named, e.g. `utilization method`.
        what: &'static str,
        /// The name as given.
        name: String,
        /// The accepted names, for the message.
        expected: &'static str,
    },
    /// UUniFast-Discard drew `attempts` vectors and every one had a task above the cap.
    DiscardExhausted {
        /// Vectors drawn before giving up.
        attempts: usize,
        /// Number of tasks n.
        tasks: usize,
        /// Target total utilization U.
        total: f64,
        /// Per-task cap (`--max-task-utilization`).
        cap: f64,
    },
    /// RandFixedSum was asked for a total that n values in [lo, hi] cannot reach.
    TotalOutOfRange {
        /// Target total utilization U.
        total: f64,
        /// Number of tasks n.
        tasks: usize,
        /// Lower bound on each value.
        lo: f64,
        /// Upper bound on each value.
        hi: f64,
        /// `n * lo`.
        min: f64,
        /// `n * hi`.
        max: f64,
    },
    /// RandFixedSum's transition table for these settings would exceed its
    /// memory limit ([`RANDFIXEDSUM_MAX_TABLE_ENTRIES`](super::RANDFIXEDSUM_MAX_TABLE_ENTRIES)).
    TableTooLarge {
        /// Number of tasks n.
        tasks: usize,
        /// Target total utilization U.
        total: f64,
        /// Entries the table would have.
        entries: u64,
        /// The limit on entries.
        limit: u64,
    },
}

impl GenerateError {
    /// [`GenerateError::InvalidSetting`] about `setting` alone.
    pub fn invalid(setting: &'static str, problem: impl Into<String>) -> GenerateError {
        GenerateError::invalid_naming(setting, &[], problem)
    }

    /// [`GenerateError::InvalidSetting`] whose problem names `mentions`.
    pub fn invalid_naming(
        setting: &'static str,
        mentions: &'static [&'static str],
        problem: impl Into<String>,
    ) -> GenerateError {
        GenerateError::InvalidSetting {
            setting,
            problem: problem.into(),
            mentions,
        }
    }
}

impl GenerateError {
    /// The one-line message with every setting it names spelled by
    /// `spell`: [`Display`](std::fmt::Display) writes them as words
    /// (`utilization must be > 0`); a command line passes its own spelling
    /// (`|s| format!("--{s}")` gives `--utilization must be > 0`).
    pub fn message_with(&self, spell: &dyn Fn(&str) -> String) -> String {
        match self {
            GenerateError::InvalidSetting {
                setting,
                problem,
                mentions,
            } => format!("{} {}", spell(setting), spell_words(problem, mentions, spell)),
            GenerateError::UnknownName {
                what,
                name,
                expected,
            } => format!("unknown {what} `{name}` (expected {expected})"),
            GenerateError::DiscardExhausted {
                attempts,
                tasks,
                total,
                cap,
            } => format!(
                "uunifast-discard found no utilizations with every task at most {cap} in {attempts} attempts \
                 ({} {tasks}, {} {total}); lower {} or use {} randfixedsum",
                spell("tasks"),
                spell("utilization"),
                spell("utilization"),
                spell("method")
            ),
            GenerateError::TotalOutOfRange {
                total,
                tasks,
                lo,
                hi,
                min,
                max,
            } => format!(
                "{} {total} is outside [{min}, {max}], the totals {tasks} tasks with utilization in [{lo}, {hi}] can reach",
                spell("utilization")
            ),
            GenerateError::TableTooLarge {
                tasks,
                total,
                entries,
                limit,
            } => format!(
                "{} randfixedsum with {} {tasks} and {} {total} needs a table of {entries} entries, \
                 above its limit of {limit} ({} MiB); lower {} or {}, or use {} uunifast-discard",
                spell("method"),
                spell("tasks"),
                spell("utilization"),
                limit * 8 / (1 << 20),
                spell("tasks"),
                spell("utilization"),
                spell("method")
            ),
        }
    }
}

/// `text` with each whole word of `names` (not part of a longer
/// hyphenated word: `utilization` is not found in `max-task-utilization`)
/// spelled by `spell`.
fn spell_words(text: &str, names: &[&str], spell: &dyn Fn(&str) -> String) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    'scan: while !rest.is_empty() {
        let at_boundary = out.chars().next_back().is_none_or(|c| !is_word(c));
        if at_boundary {
            for name in names {
                if let Some(after) = rest.strip_prefix(name) {
                    if after.chars().next().is_none_or(|c| !is_word(c)) {
                        out.push_str(&spell(name));
                        rest = after;
                        continue 'scan;
                    }
                }
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

impl std::fmt::Display for GenerateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message_with(&|s| s.to_string()))
    }
}

impl std::error::Error for GenerateError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_line_spells_every_setting_a_message_names_and_no_other_word() {
        let e = GenerateError::invalid_naming(
            "utilization",
            &["tasks", "max-task-utilization"],
            "3.5 exceeds tasks × max-task-utilization = 3 × 1 (no subtasks, no task-utilization)",
        );
        assert_eq!(
            e.to_string(),
            "utilization 3.5 exceeds tasks × max-task-utilization = 3 × 1 (no subtasks, no task-utilization)"
        );
        // Whole words only: `subtasks` and `task-utilization` stay.
        assert_eq!(
            e.message_with(&|s| format!("--{s}")),
            "--utilization 3.5 exceeds --tasks × --max-task-utilization = 3 × 1 (no subtasks, no task-utilization)"
        );
    }
}
