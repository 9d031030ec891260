//! Writing a task set as a SimSo configuration, in the layout of SimSo's own
//! `GenerateConfiguration.py` (every attribute its parser requires).

use std::fmt::Write as _;

use super::millis::{format_ms, CYCLES_PER_MS};
use super::{SimsoScheduler, CLASS_PREFIX};
use crate::policy::{MissingPriority, PriorityAssignment};
use crate::task::TaskSet;
use crate::time::Nanos;

/// Why a task set cannot be written for SimSo.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// `fp:given` with a task without a priority.
    #[error("{0}")]
    MissingPriority(#[from] MissingPriority),
    /// SimSo has no critical sections.
    #[error("task `{task}` has critical sections, which SimSo does not model")]
    CriticalSections {
        /// The task.
        task: String,
    },
    /// SimSo has no release jitter.
    #[error("task `{task}` has release jitter {jitter}, which SimSo does not model")]
    Jitter {
        /// The task.
        task: String,
        /// Its jitter.
        jitter: Nanos,
    },
    /// A time that no double carries to SimSo exactly.
    #[error("{what} {value} cannot be written as SimSo's float milliseconds exactly (at most about 12 days)")]
    Time {
        /// Which time (`task `a` period`, `duration`).
        what: String,
        /// The value.
        value: Nanos,
    },
    /// A name with a character XML 1.0 cannot hold.
    #[error("name `{name}` holds a control character, which XML 1.0 cannot hold")]
    Name {
        /// The name, escaped.
        name: String,
    },
}

/// The configuration text and what it leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimsoExport {
    /// The XML document.
    pub xml: String,
    /// What SimSo will not see (best-case execution times).
    pub notes: Vec<String>,
}

/// `set` as a SimSo configuration for one processor under `scheduler`,
/// simulated for `duration`. Times are written so that SimSo, at
/// `cycles_per_ms` 10⁶, simulates exactly rtlab's nanoseconds (see
/// [`super::millis`]).
pub fn to_xml_string(
    set: &TaskSet,
    scheduler: SimsoScheduler,
    duration: Nanos,
) -> Result<SimsoExport, ExportError> {
    let priorities: Vec<Option<u32>> = match scheduler {
        SimsoScheduler::FixedPriority(PriorityAssignment::RateMonotonic) | SimsoScheduler::Edf => {
            set.tasks.iter().map(|t| t.priority).collect()
        }
        SimsoScheduler::FixedPriority(assignment) => assignment
            .levels(&set.tasks)?
            .into_iter()
            .map(Some)
            .collect(),
    };
    let mut notes = Vec::new();
    let mut xml = String::from("<?xml version=\"1.0\" ?>\n");
    let _ = writeln!(
        xml,
        "<simulation name=\"{}\" duration=\"{}\" cycles_per_ms=\"{CYCLES_PER_MS}\" etm=\"wcet\">",
        escape(&set.name)?,
        duration.as_ns()
    );
    if format_ms(duration.as_ns()).is_none() {
        return Err(ExportError::Time {
            what: "duration".into(),
            value: duration,
        });
    }
    let _ = writeln!(
        xml,
        "\t<sched class=\"{CLASS_PREFIX}{}\" overhead=\"0\" overhead_activate=\"0\" overhead_terminate=\"0\"/>",
        scheduler.simso_class()
    );
    xml.push_str("\t<caches memory_access_time=\"100\"/>\n");
    xml.push_str("\t<processors>\n\t\t<processor name=\"CPU 1\" id=\"1\" cl_overhead=\"0\" cs_overhead=\"0\" speed=\"1.0\"/>\n\t</processors>\n");
    xml.push_str("\t<tasks>\n");
    if priorities.iter().any(Option::is_some) {
        xml.push_str("\t\t<field name=\"priority\" type=\"int\"/>\n");
    }
    for (index, (task, priority)) in set.tasks.iter().zip(&priorities).enumerate() {
        if !task.critical_sections.is_empty() {
            return Err(ExportError::CriticalSections {
                task: task.name.clone(),
            });
        }
        if !task.jitter.is_zero() {
            return Err(ExportError::Jitter {
                task: task.name.clone(),
                jitter: task.jitter,
            });
        }
        if let Some(bcet) = task.bcet {
            notes.push(format!(
                "task `{}`: bcet {bcet} is left out (SimSo's wcet model runs every job for its WCET)",
                task.name
            ));
        }
        if !simso_accepts_name(&task.name) {
            notes.push(format!(
                "task `{}`: SimSo's check_all() refuses this name (it wants a letter, then \
                 letters, digits, spaces, `_` or `-`); its parser reads it",
                crate::text::printable(&task.name)
            ));
        }
        let ms = |what: &str, value: Nanos| {
            format_ms(value.as_ns()).ok_or_else(|| ExportError::Time {
                what: format!("task `{}` {what}", task.name),
                value,
            })
        };
        let wcet = ms("wcet", task.wcet)?;
        let _ = write!(
            xml,
            "\t\t<task name=\"{}\" id=\"{}\" task_type=\"Periodic\" abort_on_miss=\"no\" \
             period=\"{}\" activationDate=\"{}\" list_activation_dates=\"\" deadline=\"{}\" \
             base_cpi=\"1.0\" instructions=\"0\" mix=\"0.5\" WCET=\"{wcet}\" ACET=\"{wcet}\" \
             preemption_cost=\"0\" et_stddev=\"0\"",
            escape(&task.name)?,
            index + 1,
            ms("period", task.period)?,
            ms("offset", task.offset)?,
            ms("deadline", task.deadline)?,
        );
        if let Some(p) = priority {
            let _ = write!(xml, " priority=\"{p}\"");
        }
        xml.push_str("/>\n");
    }
    xml.push_str("\t</tasks>\n</simulation>\n");
    Ok(SimsoExport { xml, notes })
}

/// SimSo's rule for task names (`Configuration.check_tasks`):
/// `^[a-zA-Z][a-zA-Z0-9 _-]*$`.
fn simso_accepts_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '_' | '-'))
}

/// `text` escaped for an XML attribute in double quotes; line breaks and
/// tabs as character references (an attribute value normalises them to
/// spaces otherwise).
fn escape(text: &str) -> Result<String, ExportError> {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' | '\n' | '\r' => {
                let _ = write!(out, "&#x{:X};", c as u32);
            }
            c if (c as u32) < 0x20 || matches!(c, '\u{fffe}' | '\u{ffff}') => {
                return Err(ExportError::Name {
                    name: crate::text::printable(text).into_owned(),
                })
            }
            c => out.push(c),
        }
    }
    Ok(out)
}
