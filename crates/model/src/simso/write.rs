//! Writing a task set as a SimSo configuration, in the layout of SimSo's own
//! `GenerateConfiguration.py` (every attribute its parser requires).

use std::fmt::Write as _;

use super::millis::{format_ms, CYCLES_PER_MS};
use super::{packing, SimsoScheduler, CLASS_PREFIX};
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
    /// A scheduler of one processor for a set on several.
    #[error("`{scheduler}` schedules one processor; on {processors} processors export gedf, gfp:rm|dm|given, edzl, pedf or pfp:rm")]
    Uniprocessor {
        /// rtlab's name of the scheduler.
        scheduler: String,
        /// The set's processor count.
        processors: u32,
    },
    /// Clusters, which SimSo does not model.
    #[error("the set has clusters, which SimSo does not model (cedf has no SimSo equivalent): write it without `clusters`")]
    Clusters,
    /// A task fixed to a processor under a global scheduler.
    #[error("task `{task}` has a fixed `cpu`, which global {scheduler} ignores: drop the `cpu` fields or export pedf")]
    FixedCpu {
        /// The task.
        task: String,
        /// rtlab's name of the scheduler.
        scheduler: String,
    },
    /// Some tasks with a `cpu`, some without.
    #[error("task `{task}` has no `cpu` while other tasks have one: give every task a `cpu`, or none (SimSo's P_EDF then places them), or use --partition")]
    PartialAssignment {
        /// The first task without one.
        task: String,
    },
    /// SimSo's own packing fails.
    #[error("SimSo's P_EDF places no processor for task `{task}` (first fit on decreasing utilization, at most 1 per processor; SimSo would stop with `Packing failed`): give every task a `cpu` or use --partition")]
    Packing {
        /// The task.
        task: String,
    },
    /// P_RM would place a task elsewhere than its `cpu`.
    #[error("task `{task}` has cpu {cpu}, but SimSo's P_RM puts it on {simso} (the least-loaded processor, in file order): drop the `cpu` fields or export pedf")]
    PRmAssignment {
        /// The task.
        task: String,
        /// Its `cpu`.
        cpu: u32,
        /// Where P_RM puts it.
        simso: u32,
    },
    /// A name with a character XML 1.0 cannot hold.
    #[error("name `{name}` holds a control character, which XML 1.0 cannot hold")]
    Name {
        /// The name, escaped.
        name: String,
    },
}

impl ExportError {
    /// The command-line flag the error is about, when a flag's value (not
    /// the task set) is what cannot be exported: a usage error there.
    pub fn flag(&self) -> Option<&'static str> {
        match self {
            ExportError::Uniprocessor { .. } => Some("--scheduler"),
            ExportError::Time { what, .. } if what == "duration" => Some("--duration"),
            _ => None,
        }
    }
}

/// The configuration text and what it leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimsoExport {
    /// The XML document.
    pub xml: String,
    /// What SimSo will not see (best-case execution times).
    pub notes: Vec<String>,
}

/// `set` as a SimSo configuration for its processors under `scheduler`,
/// simulated for `duration`. Times are written so that SimSo, at
/// `cycles_per_ms` 10⁶, simulates exactly rtlab's nanoseconds (see
/// [`super::millis`]). rtlab's processor `k` is SimSo's `<processor
/// id="k+1">`, in order. Partitioned: see [`partitioned_class`].
pub fn to_xml_string(
    set: &TaskSet,
    scheduler: SimsoScheduler,
    duration: Nanos,
) -> Result<SimsoExport, ExportError> {
    let m = set.processors();
    if scheduler.is_uniprocessor() && m > 1 {
        return Err(ExportError::Uniprocessor {
            scheduler: scheduler.rtlab_spec(),
            processors: m,
        });
    }
    if !set.platform.clusters.is_empty() {
        return Err(ExportError::Clusters);
    }
    let mut notes = Vec::new();
    let (class, cpu_field) = if scheduler.is_partitioned() {
        partitioned_class(set, scheduler, &mut notes)?
    } else {
        if !scheduler.is_uniprocessor() {
            if let Some(task) = set.tasks.iter().find(|t| t.cpu.is_some()) {
                return Err(ExportError::FixedCpu {
                    task: task.name.clone(),
                    scheduler: scheduler.rtlab_spec(),
                });
            }
        }
        (scheduler.simso_class(), false)
    };
    let priorities: Vec<Option<u32>> = match scheduler {
        SimsoScheduler::FixedPriority(PriorityAssignment::RateMonotonic)
        | SimsoScheduler::GlobalFixedPriority(PriorityAssignment::RateMonotonic)
        | SimsoScheduler::Edf
        | SimsoScheduler::GlobalEdf
        | SimsoScheduler::Edzl
        | SimsoScheduler::PartitionedEdf
        | SimsoScheduler::PartitionedRm => set.tasks.iter().map(|t| t.priority).collect(),
        SimsoScheduler::FixedPriority(assignment)
        | SimsoScheduler::GlobalFixedPriority(assignment) => assignment
            .levels(&set.tasks)?
            .into_iter()
            .map(Some)
            .collect(),
    };
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
        "\t<sched class=\"{CLASS_PREFIX}{class}\" overhead=\"0\" overhead_activate=\"0\" overhead_terminate=\"0\"/>"
    );
    xml.push_str("\t<caches memory_access_time=\"100\"/>\n");
    xml.push_str("\t<processors>\n");
    for id in 1..=m {
        let _ = writeln!(
            xml,
            "\t\t<processor name=\"CPU {id}\" id=\"{id}\" cl_overhead=\"0\" cs_overhead=\"0\" speed=\"1.0\"/>"
        );
    }
    xml.push_str("\t</processors>\n\t<tasks>\n");
    if cpu_field {
        xml.push_str("\t\t<field name=\"cpu\" type=\"int\"/>\n");
    }
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
        if let (true, Some(cpu)) = (cpu_field, task.cpu) {
            let _ = write!(xml, " cpu=\"{}\"", u64::from(cpu) + 1);
        }
        xml.push_str("/>\n");
    }
    xml.push_str("\t</tasks>\n</simulation>\n");
    Ok(SimsoExport { xml, notes })
}

/// The SimSo class of a partitioned export and whether it carries the
/// task field `cpu`:
///
/// - `pedf`, no task with a `cpu`: `P_EDF`, which places the tasks itself
///   ([`packing::p_edf`]; refused when it cannot);
/// - `pedf`, every task with a `cpu`: `P_EDF` when that is where P_EDF puts
///   them, else `Fixed_PEDF` with the field `cpu` (the processor's `id`);
/// - `pfp:rm`: `P_RM`, refused when a task's `cpu` is not where P_RM puts it
///   ([`packing::p_rm`]).
///
/// Some tasks with a `cpu` and some without is refused.
fn partitioned_class(
    set: &TaskSet,
    scheduler: SimsoScheduler,
    notes: &mut Vec<String>,
) -> Result<(&'static str, bool), ExportError> {
    let m = set.processors();
    let given = set.assignment();
    if given.is_none() {
        if let Some(task) = set
            .tasks
            .iter()
            .find(|t| t.cpu.is_none() && set.has_cpu_fields())
        {
            return Err(ExportError::PartialAssignment {
                task: task.name.clone(),
            });
        }
    }
    if scheduler == SimsoScheduler::PartitionedRm {
        let simso = packing::p_rm(&set.tasks, m);
        if let Some(given) = &given {
            if let Some(i) = (0..given.len()).find(|&i| given[i] != simso[i]) {
                return Err(ExportError::PRmAssignment {
                    task: set.tasks[i].name.clone(),
                    cpu: given[i],
                    simso: simso[i],
                });
            }
        } else {
            notes.push(format!(
                "no task has a `cpu`: SimSo's P_RM places them on processors {} (the least-loaded, in file order), as `rtlab taskset import` of this file does",
                list(&simso)
            ));
        }
        return Ok(("P_RM", false));
    }
    let simso = packing::p_edf(&set.tasks, m);
    match (given, simso) {
        (None, Ok(simso)) => {
            notes.push(format!(
                "no task has a `cpu`: SimSo's P_EDF places them on processors {} (first fit on decreasing utilization), as `rtlab taskset import` of this file does",
                list(&simso)
            ));
            Ok(("P_EDF", false))
        }
        (None, Err(i)) => Err(ExportError::Packing {
            task: set.tasks[i].name.clone(),
        }),
        (Some(given), Ok(simso)) if given == simso => Ok(("P_EDF", false)),
        (Some(_), _) => {
            notes.push(
                "the tasks' `cpu` are not where SimSo's P_EDF would put them: written for \
                 Fixed_PEDF, which SimSo 0.8.5 cannot start (`'NoneType' object has no attribute \
                 'add_processor'`: simso/schedulers/Fixed_PEDF.py builds its EDF_mono with \
                 `SchedulerInfo(\"EDF_mono\", EDF_mono)`; as \
                 `SchedulerInfo(\"simso.schedulers.EDF_mono\")` it runs this file)"
                    .to_string(),
            );
            Ok(("Fixed_PEDF", true))
        }
    }
}

/// `0 1 0` (0-based, rtlab's numbering).
fn list(cpus: &[u32]) -> String {
    let cpus: Vec<String> = cpus.iter().map(u32::to_string).collect();
    cpus.join(" ")
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
