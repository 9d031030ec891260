//! The scheduler registry: the single source of every simulated scheduler.
//!
//! One [`SchedulerEntry`] per scheduler owns its name, accepted forms,
//! parameter parsing, scope, one-line help, tie rule and paper; one
//! [`SchedulerSpec`] variant carries what was parsed. Parsing
//! ([`SchedulerSpec::from_str`], with a "did you mean" for a near miss),
//! `--help` ([`scheduler_help`]), the tables of the guide
//! (`docs/src/reference/schedulers.md`: [`uniprocessor_table`],
//! [`multiprocessor_table`], checked by a test) and the error messages come
//! from [`SCHEDULERS`].
//!
//! Every `match` on [`SchedulerSpec`] here is exhaustive (no `_` arm): a new
//! variant does not compile until [`SchedulerSpec::name`],
//! [`fmt::Display`], [`SchedulerSpec::build`] (uniprocessor engine),
//! [`SchedulerSpec::global_rule`] (global engine) and
//! [`SchedulerSpec::per_processor`] (partitioned runs) say what it is, so
//! no scheduler can silently run as another.
//!
//! Adding a scheduler is its module (`scheduler/NAME.rs` for one processor,
//! `multi/NAME.rs` for a global rule), one entry in [`SCHEDULERS`], and its
//! variant with the arms the compiler asks for.

use std::fmt;
use std::str::FromStr;

use rtlab_model::policy::{ModelScheduler, PriorityAssignment, Scope};
use rtlab_model::simso::SimsoScheduler;
use rtlab_model::{Nanos, Task, TaskSet};

use crate::error::SimError;
use crate::multi::{self, GlobalRule};
use crate::scheduler::{
    edf, fifo, fixed_levels, fp, hybrid, ipi, llf, multiburst, np_edf, rr, rr_linux, Scheduler,
};

/// A scheduler as named on the command line (`--scheduler`), with its
/// parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedulerSpec {
    /// `fp:rm`, `fp:dm`, `fp:given`.
    Fp(PriorityAssignment),
    /// `edf`.
    Edf,
    /// `llf`.
    Llf,
    /// `fifo`.
    Fifo,
    /// `np-edf`.
    NpEdf,
    /// `rr:QUANTUM`: a fresh quantum at every dispatch.
    Rr(Nanos),
    /// `rr:QUANTUM:linux`: Linux SCHED_RR, the timeslice kept across sleeps.
    RrLinux(Nanos),
    /// `ipi[:key=value,...]`.
    Ipi(ipi::IpiParams),
    /// `multiburst[:key=value,...]`.
    Multiburst(multiburst::MultiburstParams),
    /// `hybrid[:rm|dm]`.
    Hybrid(PriorityAssignment),
    /// `gedf`: global EDF, LITMUS^RT's tie rule.
    Gedf,
    /// `gfp:rm|dm|given`: global fixed priority.
    Gfp(PriorityAssignment),
    /// `edzl`: global EDF until zero laxity.
    Edzl,
    /// `linux-dl`: global EDF as SCHED_DEADLINE runs it.
    LinuxDl,
    /// `gllf`: global least laxity first.
    Gllf,
    /// `pedf`: partitioned EDF.
    Pedf,
    /// `pfp:rm|dm|given`: partitioned fixed priority.
    Pfp(PriorityAssignment),
    /// `cedf`: clustered EDF.
    Cedf,
}

/// One scheduler of the registry: everything parsing, `--help`, error
/// messages and the guide's tables need.
pub struct SchedulerEntry {
    /// The name before any `:` argument.
    pub name: &'static str,
    /// The accepted forms, e.g. `fp:rm|dm|given`.
    pub forms: &'static str,
    /// One line: what it does.
    pub summary: &'static str,
    /// Where it runs.
    pub scope: Scope,
    /// Whether a more urgent job preempts a running one.
    pub preemptive: bool,
    /// How equal priorities are ordered.
    pub ties: &'static str,
    /// Where the rule comes from.
    pub paper: &'static str,
    /// For a uniprocessor scheduler, its multiprocessor counterparts (what
    /// to use on m > 1 processors); empty when it has none.
    pub on_many: &'static str,
    /// Parses the argument after `name:` (`None`: none given).
    pub parse: fn(Option<&str>) -> Result<SchedulerSpec, String>,
}

/// Every scheduler, in the order help lists them.
pub const SCHEDULERS: &[SchedulerEntry] = &[
    SchedulerEntry {
        name: "fp",
        forms: "fp:rm|dm|given",
        summary: "preemptive fixed priority (rate or deadline monotonic, or the file's priorities)",
        scope: Scope::Uni,
        preemptive: true,
        ties: "running job, then earlier release, then declaration order",
        paper: "Liu & Layland 1973; Leung & Whitehead 1982",
        on_many: "gfp or pfp",
        parse: |a| fp_policy("fp", a).map(SchedulerSpec::Fp),
    },
    SchedulerEntry {
        name: "edf",
        forms: "edf",
        summary: "preemptive earliest deadline first",
        scope: Scope::Uni,
        preemptive: true,
        ties: "running job, then earlier release, then declaration order",
        paper: "Liu & Layland 1973",
        on_many: "gedf, linux-dl, pedf or cedf",
        parse: |a| no_arg("edf", a, SchedulerSpec::Edf),
    },
    SchedulerEntry {
        name: "llf",
        forms: "llf",
        summary: "least laxity first (deadline - now - remaining), decided at every scheduling point",
        scope: Scope::Uni,
        preemptive: true,
        ties: "running job, then earlier release, then declaration order",
        paper: "Mok 1983; Dertouzos & Mok 1989",
        on_many: "gllf",
        parse: |a| no_arg("llf", a, SchedulerSpec::Llf),
    },
    SchedulerEntry {
        name: "fifo",
        forms: "fifo",
        summary: "non-preemptive, release order",
        scope: Scope::Uni,
        preemptive: false,
        ties: "declaration order",
        paper: "Soyer 2024",
        on_many: "",
        parse: |a| no_arg("fifo", a, SchedulerSpec::Fifo),
    },
    SchedulerEntry {
        name: "np-edf",
        forms: "np-edf",
        summary: "non-preemptive earliest deadline first",
        scope: Scope::Uni,
        preemptive: false,
        ties: "earlier release, then declaration order",
        paper: "Jeffay, Stanat & Martel 1991",
        on_many: "",
        parse: |a| no_arg("np-edf", a, SchedulerSpec::NpEdf),
    },
    SchedulerEntry {
        name: "rr",
        forms: "rr:QUANTUM[:linux]",
        summary: "round robin with a quantum (e.g. rr:2ms); :linux keeps SCHED_RR's timeslice across sleeps",
        scope: Scope::Uni,
        preemptive: true,
        ties: "queue order",
        paper: "Linux SCHED_RR",
        on_many: "",
        parse: parse_rr,
    },
    SchedulerEntry {
        name: "ipi",
        forms: "ipi[:burst=4ms,bmin=200us,bmax=20ms,share=rate]",
        summary: "I+PI control scheduler (Golchin 2017 section 3.1.1)",
        scope: Scope::Uni,
        preemptive: true,
        ties: "Golchin 2017",
        paper: "Golchin 2017",
        on_many: "",
        parse: |a| ipi::IpiParams::parse(a.unwrap_or("")).map(SchedulerSpec::Ipi),
    },
    SchedulerEntry {
        name: "multiburst",
        forms: "multiburst[:burst=..,wake=[POLICY/]TASK:POLICY/..,reshare=ROUND:W1/W2/..]",
        summary: "PI Multiburst scheduler (Golchin 2017 section 3.2); POLICY: immediate, next-burst or end-of-round",
        scope: Scope::Uni,
        preemptive: true,
        ties: "Golchin 2017",
        paper: "Golchin 2017",
        on_many: "",
        parse: |a| {
            multiburst::MultiburstParams::parse(a.unwrap_or("")).map(SchedulerSpec::Multiburst)
        },
    },
    SchedulerEntry {
        name: "hybrid",
        forms: "hybrid[:rm|dm]",
        summary: "EDF, falling back to fixed priority on overload (Carletto & Vardanega 2017)",
        scope: Scope::Uni,
        preemptive: true,
        ties: "as edf / fp",
        paper: "Carletto & Vardanega 2017",
        on_many: "",
        parse: |a| match a {
            None | Some("rm") => Ok(SchedulerSpec::Hybrid(PriorityAssignment::RateMonotonic)),
            Some("dm") => Ok(SchedulerSpec::Hybrid(PriorityAssignment::DeadlineMonotonic)),
            Some(_) => Err("write hybrid, hybrid:rm or hybrid:dm".into()),
        },
    },
    SchedulerEntry {
        name: "gedf",
        forms: "gedf",
        summary: "global EDF on m processors, equal deadlines to the task declared first",
        scope: Scope::Global,
        preemptive: true,
        ties: "the task declared first, even against a running job (LITMUS^RT's rule by task id; SimSo's EDF keeps the running job, as linux-dl)",
        paper: "Baker 2003; Goossens, Funk, Baruah 2003",
        on_many: "",
        parse: |a| no_arg("gedf", a, SchedulerSpec::Gedf),
    },
    SchedulerEntry {
        name: "gfp",
        forms: "gfp:rm|dm|given",
        summary: "global fixed priority on m processors",
        scope: Scope::Global,
        preemptive: true,
        ties: "the task declared first",
        paper: "Bertogna & Cirinei 2007",
        on_many: "",
        parse: |a| fp_policy("gfp", a).map(SchedulerSpec::Gfp),
    },
    SchedulerEntry {
        name: "edzl",
        forms: "edzl",
        summary: "global EDF until zero laxity (Lee 1994; Cho, Ravindran, Jensen 2002)",
        scope: Scope::Global,
        preemptive: true,
        ties: "zero-laxity jobs first (by deadline), then as gedf",
        paper: "Lee 1994; Cho, Ravindran, Jensen 2002",
        on_many: "",
        parse: |a| no_arg("edzl", a, SchedulerSpec::Edzl),
    },
    SchedulerEntry {
        name: "linux-dl",
        forms: "linux-dl",
        summary: "Linux SCHED_DEADLINE: global EDF, preempting only on a strictly earlier deadline",
        scope: Scope::Global,
        preemptive: true,
        ties: "a running job keeps the processor; waiting jobs in the order they became ready",
        paper: "Linux SCHED_DEADLINE (kernel/sched/deadline.c); Abeni & Buttazzo 1998 (CBS)",
        on_many: "",
        parse: |a| no_arg("linux-dl", a, SchedulerSpec::LinuxDl),
    },
    SchedulerEntry {
        name: "gllf",
        forms: "gllf",
        summary: "global least laxity first on m processors, decided at every scheduling point",
        scope: Scope::Global,
        preemptive: true,
        ties: "a running job keeps its processor, then the task declared first",
        paper: "Mok 1983; Dertouzos & Mok 1989",
        on_many: "",
        parse: |a| no_arg("gllf", a, SchedulerSpec::Gllf),
    },
    SchedulerEntry {
        name: "pedf",
        forms: "pedf",
        summary: "partitioned EDF: each processor's tasks under edf (tasks' `cpu` or --partition)",
        scope: Scope::Partitioned,
        preemptive: true,
        ties: "as edf on each processor",
        paper: "Lopez, Diaz, Garcia 2004",
        on_many: "",
        parse: |a| no_arg("pedf", a, SchedulerSpec::Pedf),
    },
    SchedulerEntry {
        name: "pfp",
        forms: "pfp:rm|dm|given",
        summary: "partitioned fixed priority (tasks' `cpu` or --partition)",
        scope: Scope::Partitioned,
        preemptive: true,
        ties: "as fp on each processor",
        paper: "Dhall & Liu 1978",
        on_many: "",
        parse: |a| fp_policy("pfp", a).map(SchedulerSpec::Pfp),
    },
    SchedulerEntry {
        name: "cedf",
        forms: "cedf",
        summary: "clustered EDF: global EDF inside each of the platform's clusters",
        scope: Scope::Clustered,
        preemptive: true,
        ties: "as gedf inside each cluster",
        paper: "Calandrino et al. 2007; Baker & Baruah 2007",
        on_many: "",
        parse: |a| no_arg("cedf", a, SchedulerSpec::Cedf),
    },
];

/// `spec` when no argument was given.
fn no_arg(name: &str, arg: Option<&str>, spec: SchedulerSpec) -> Result<SchedulerSpec, String> {
    match arg {
        None => Ok(spec),
        Some(_) => Err(format!("`{name}` takes no argument")),
    }
}

/// `rm`, `dm` or `given` after `name:`.
fn fp_policy(name: &str, arg: Option<&str>) -> Result<PriorityAssignment, String> {
    match arg {
        Some("rm") => Ok(PriorityAssignment::RateMonotonic),
        Some("dm") => Ok(PriorityAssignment::DeadlineMonotonic),
        Some("given") => Ok(PriorityAssignment::Given),
        _ => Err(format!("write {name}:rm, {name}:dm or {name}:given")),
    }
}

fn parse_rr(arg: Option<&str>) -> Result<SchedulerSpec, String> {
    let arg = arg.ok_or("give a quantum, e.g. rr:2ms")?;
    let (q, linux) = match arg.split_once(':') {
        None => (arg, false),
        Some((q, "linux")) => (q, true),
        Some((_, other)) => {
            return Err(format!(
                "unknown round-robin variant `{other}` (write rr:QUANTUM or rr:QUANTUM:linux)"
            ))
        }
    };
    let q: Nanos = q.parse().map_err(|e| format!("{e}"))?;
    if q.is_zero() {
        return Err("the quantum must be greater than 0".into());
    }
    Ok(if linux {
        SchedulerSpec::RrLinux(q)
    } else {
        SchedulerSpec::Rr(q)
    })
}

/// The accepted forms of the multiprocessor schedulers (`multi`) or the
/// uniprocessor ones, comma-separated.
pub fn forms_of(multi: bool) -> String {
    SCHEDULERS
        .iter()
        .filter(|e| e.scope.is_multi() == multi)
        .map(|e| e.forms)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every accepted form, comma-separated (error messages).
pub fn scheduler_forms() -> String {
    SCHEDULERS
        .iter()
        .map(|e| e.forms)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per scheduler, `  FORMS  summary`, for `--help`.
pub fn scheduler_help() -> String {
    let width = SCHEDULERS.iter().map(|e| e.forms.len()).max().unwrap_or(0);
    SCHEDULERS
        .iter()
        .map(|e| {
            let m = if e.scope.is_multi() {
                " [--cpus M]"
            } else {
                ""
            };
            format!("  {:width$}  {}{m}\n", e.forms, e.summary)
        })
        .collect()
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The guide's table of the uniprocessor schedulers (a test keeps
/// `docs/src/reference/schedulers.md` equal to it): forms, what it does,
/// preemptive, tie rule, paper, multiprocessor counterpart.
pub fn uniprocessor_table() -> String {
    let mut out = String::from(
        "| scheduler | rule | preemptive | ties go to | paper | on m processors |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for e in SCHEDULERS.iter().filter(|e| !e.scope.is_multi()) {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            cell(e.forms),
            cell(e.summary),
            if e.preemptive { "yes" } else { "no" },
            cell(e.ties),
            cell(e.paper),
            if e.on_many.is_empty() {
                "-".to_string()
            } else {
                e.on_many.to_string()
            }
        ));
    }
    out
}

/// The table of the multiprocessor schedulers (README's copy and the
/// guide's are checked against it): name, scope, preemptive, tie rule,
/// paper.
pub fn multiprocessor_table() -> String {
    let mut out = String::from(
        "| scheduler | scope | preemptive | ties go to | paper |\n| --- | --- | --- | --- | --- |\n",
    );
    for e in SCHEDULERS.iter().filter(|e| e.scope.is_multi()) {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            cell(e.forms),
            e.scope,
            if e.preemptive { "yes" } else { "no" },
            e.ties,
            e.paper
        ));
    }
    out
}

/// The registry entry of `name`.
fn entry(name: &str) -> Option<&'static SchedulerEntry> {
    SCHEDULERS.iter().find(|e| e.name == name)
}

impl SchedulerSpec {
    /// Its registry name (the part before any `:`).
    pub fn name(&self) -> &'static str {
        match self {
            SchedulerSpec::Fp(_) => "fp",
            SchedulerSpec::Edf => "edf",
            SchedulerSpec::Llf => "llf",
            SchedulerSpec::Fifo => "fifo",
            SchedulerSpec::NpEdf => "np-edf",
            SchedulerSpec::Rr(_) | SchedulerSpec::RrLinux(_) => "rr",
            SchedulerSpec::Ipi(_) => "ipi",
            SchedulerSpec::Multiburst(_) => "multiburst",
            SchedulerSpec::Hybrid(_) => "hybrid",
            SchedulerSpec::Gedf => "gedf",
            SchedulerSpec::Gfp(_) => "gfp",
            SchedulerSpec::Edzl => "edzl",
            SchedulerSpec::LinuxDl => "linux-dl",
            SchedulerSpec::Gllf => "gllf",
            SchedulerSpec::Pedf => "pedf",
            SchedulerSpec::Pfp(_) => "pfp",
            SchedulerSpec::Cedf => "cedf",
        }
    }

    /// Its registry entry.
    pub fn entry(&self) -> &'static SchedulerEntry {
        let name = self.name();
        // A test checks that every name has its entry.
        entry(name).unwrap_or(&SCHEDULERS[0])
    }

    /// Where it runs.
    pub fn scope(&self) -> Scope {
        self.entry().scope
    }

    /// Whether it schedules m processors ([`crate::multi`]).
    pub fn is_multiprocessor(&self) -> bool {
        self.scope().is_multi()
    }

    /// Builds the uniprocessor scheduler for `tasks`; a multiprocessor one
    /// is an error (it runs through [`crate::run`]).
    pub fn build(&self, tasks: &[Task]) -> Result<Box<dyn Scheduler>, SimError> {
        Ok(match self {
            SchedulerSpec::Fp(policy) => Box::new(fp::FixedPriority::new(*policy, tasks)?),
            SchedulerSpec::Edf => Box::new(edf::Edf),
            SchedulerSpec::Llf => Box::new(llf::Llf),
            SchedulerSpec::Fifo => Box::new(fifo::Fifo),
            SchedulerSpec::NpEdf => Box::new(np_edf::NpEdf),
            SchedulerSpec::Rr(q) => Box::new(rr::RoundRobin::new(*q)),
            SchedulerSpec::RrLinux(q) => Box::new(rr_linux::LinuxRoundRobin::new(*q)),
            SchedulerSpec::Ipi(p) => Box::new(ipi::Ipi::new(p.clone(), tasks)?),
            SchedulerSpec::Multiburst(p) => {
                Box::new(multiburst::Multiburst::new(p.clone(), tasks)?)
            }
            SchedulerSpec::Hybrid(policy) => Box::new(hybrid::Hybrid::new(*policy, tasks)?),
            SchedulerSpec::Gedf
            | SchedulerSpec::Gfp(_)
            | SchedulerSpec::Edzl
            | SchedulerSpec::LinuxDl
            | SchedulerSpec::Gllf
            | SchedulerSpec::Pedf
            | SchedulerSpec::Pfp(_)
            | SchedulerSpec::Cedf => {
                return Err(SimError::Setup {
                    scheduler: self.to_string(),
                    why: "is a multiprocessor scheduler: run it with rtlab_sim::run".into(),
                })
            }
        })
    }

    /// Builds it for a task set.
    pub fn build_for(&self, set: &TaskSet) -> Result<Box<dyn Scheduler>, SimError> {
        self.build(&set.tasks)
    }

    /// The rule of the global engine for `tasks` (the global schedulers;
    /// clustered EDF runs `gedf` inside each cluster); `None` for the
    /// others.
    pub fn global_rule(&self, tasks: &[Task]) -> Result<Option<Box<dyn GlobalRule>>, SimError> {
        Ok(match self {
            SchedulerSpec::Gedf | SchedulerSpec::Cedf => Some(Box::new(multi::gedf::Gedf)),
            SchedulerSpec::Gfp(policy) => Some(Box::new(multi::gfp::Gfp::new(fixed_levels(
                *policy,
                tasks,
                &self.to_string(),
            )?))),
            SchedulerSpec::Edzl => Some(Box::new(multi::edzl::Edzl)),
            SchedulerSpec::LinuxDl => Some(Box::new(multi::linux_dl::LinuxDl)),
            SchedulerSpec::Gllf => Some(Box::new(multi::gllf::Gllf)),
            SchedulerSpec::Fp(_)
            | SchedulerSpec::Edf
            | SchedulerSpec::Llf
            | SchedulerSpec::Fifo
            | SchedulerSpec::NpEdf
            | SchedulerSpec::Rr(_)
            | SchedulerSpec::RrLinux(_)
            | SchedulerSpec::Ipi(_)
            | SchedulerSpec::Multiburst(_)
            | SchedulerSpec::Hybrid(_)
            | SchedulerSpec::Pedf
            | SchedulerSpec::Pfp(_) => None,
        })
    }

    /// A partitioned scheduler's uniprocessor scheduler of each processor
    /// (`pedf`: `edf`, `pfp:X`: `fp:X`); `None` for the others.
    pub fn per_processor(&self) -> Option<SchedulerSpec> {
        match self {
            SchedulerSpec::Pedf => Some(SchedulerSpec::Edf),
            SchedulerSpec::Pfp(p) => Some(SchedulerSpec::Fp(*p)),
            SchedulerSpec::Fp(_)
            | SchedulerSpec::Edf
            | SchedulerSpec::Llf
            | SchedulerSpec::Fifo
            | SchedulerSpec::NpEdf
            | SchedulerSpec::Rr(_)
            | SchedulerSpec::RrLinux(_)
            | SchedulerSpec::Ipi(_)
            | SchedulerSpec::Multiburst(_)
            | SchedulerSpec::Hybrid(_)
            | SchedulerSpec::Gedf
            | SchedulerSpec::Gfp(_)
            | SchedulerSpec::Edzl
            | SchedulerSpec::LinuxDl
            | SchedulerSpec::Gllf
            | SchedulerSpec::Cedf => None,
        }
    }
}

impl fmt::Display for SchedulerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedulerSpec::Fp(p) | SchedulerSpec::Gfp(p) | SchedulerSpec::Pfp(p) => {
                write!(f, "{}:{}", self.name(), p.name())
            }
            SchedulerSpec::Hybrid(p) => write!(f, "hybrid:{}", p.name()),
            SchedulerSpec::Rr(q) => write!(f, "rr:{q}"),
            SchedulerSpec::RrLinux(q) => write!(f, "rr:{q}:linux"),
            SchedulerSpec::Ipi(p) => write!(f, "{p}"),
            SchedulerSpec::Multiburst(p) => write!(f, "{p}"),
            SchedulerSpec::Edf
            | SchedulerSpec::Llf
            | SchedulerSpec::Fifo
            | SchedulerSpec::NpEdf
            | SchedulerSpec::Gedf
            | SchedulerSpec::Edzl
            | SchedulerSpec::LinuxDl
            | SchedulerSpec::Gllf
            | SchedulerSpec::Pedf
            | SchedulerSpec::Cedf => f.write_str(self.name()),
        }
    }
}

/// The registry names nearest to `name` when they are within two edits of
/// it (one for names of three letters or fewer), ignoring case.
fn near_misses(name: &str) -> Vec<&'static str> {
    let lower = name.to_ascii_lowercase();
    let distances: Vec<(usize, &'static str)> = SCHEDULERS
        .iter()
        .map(|e| (edit_distance(&lower, e.name), e.name))
        .collect();
    let nearest = distances
        .iter()
        .map(|&(d, _)| d)
        .min()
        .unwrap_or(usize::MAX);
    let limit = if lower.len() <= 3 { 1 } else { 2 };
    distances
        .into_iter()
        .filter(|&(d, _)| d == nearest && d <= limit)
        .map(|(_, n)| n)
        .collect()
}

/// Levenshtein distance over bytes (names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

impl FromStr for SchedulerSpec {
    type Err = SimError;

    /// Looks the name (before the first `:`) up in [`SCHEDULERS`] and
    /// hands the rest to its parser; an unknown name gets the nearest
    /// names ("did you mean"), else the list of every form.
    fn from_str(text: &str) -> Result<SchedulerSpec, SimError> {
        let text = text.trim();
        let (name, arg) = match text.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (text, None),
        };
        let bad = |why: String| SimError::Spec {
            spec: text.to_string(),
            why,
        };
        match entry(name) {
            Some(entry) => (entry.parse)(arg).map_err(bad),
            // `run`'s and `analyze`'s words for the fixed-priority
            // schedulers: `rm` is `fp:rm` (printed so).
            None if arg.is_none() && matches!(name, "rm" | "dm" | "given") => {
                fp_policy("fp", Some(name))
                    .map(SchedulerSpec::Fp)
                    .map_err(bad)
            }
            None => {
                let near = near_misses(name);
                Err(bad(match near.as_slice() {
                    [] => format!("unknown scheduler (use {})", scheduler_forms()),
                    [one] => format!("unknown scheduler; did you mean `{}`?", suggest(one, arg)),
                    many => format!(
                        "unknown scheduler; did you mean {}?",
                        many.iter()
                            .map(|n| format!("`{}`", suggest(n, arg)))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                }))
            }
        }
    }
}

/// `name` with the argument the user wrote, if its entry takes one.
fn suggest(name: &str, arg: Option<&str>) -> String {
    match (entry(name), arg) {
        (Some(e), Some(a)) if (e.parse)(Some(a)).is_ok() => format!("{name}:{a}"),
        (Some(e), _) if (e.parse)(None).is_ok() => name.to_string(),
        (Some(e), _) => e.forms.to_string(),
        (None, _) => name.to_string(),
    }
}

/// Why a uniprocessor scheduler is refused on `m` processors, naming its
/// multiprocessor counterparts when it has some.
/// (`counterpart`: the entry's `on_many`; empty when unknown).
pub(crate) fn uniprocessor_only(counterpart: &str, m: u32) -> String {
    if counterpart.is_empty() {
        format!(
            "schedules one processor; on {m} processors use a multiprocessor scheduler ({})",
            forms_of(true)
        )
    } else {
        format!(
            "schedules one processor; on {m} processors use {counterpart} (or another multiprocessor scheduler: {})",
            forms_of(true)
        )
    }
}

/// The simulator scheduler that models a real-thread policy.
impl From<ModelScheduler> for SchedulerSpec {
    fn from(model: ModelScheduler) -> SchedulerSpec {
        match model {
            ModelScheduler::FixedPriority(policy) => SchedulerSpec::Fp(policy),
            ModelScheduler::Edf => SchedulerSpec::Edf,
            ModelScheduler::Fifo => SchedulerSpec::Fifo,
            ModelScheduler::RoundRobin(quantum) => SchedulerSpec::RrLinux(quantum),
            ModelScheduler::LinuxDl => SchedulerSpec::LinuxDl,
            ModelScheduler::PartitionedEdf => SchedulerSpec::Pedf,
            ModelScheduler::ClusteredEdf => SchedulerSpec::Cedf,
            ModelScheduler::GlobalFixedPriority(order) => SchedulerSpec::Gfp(order),
            ModelScheduler::PartitionedFixedPriority(order) => SchedulerSpec::Pfp(order),
            ModelScheduler::Hybrid(policy) => SchedulerSpec::Hybrid(policy),
        }
    }
}

/// The simulator scheduler a SimSo scheduler is compared with (the one
/// [`SimsoScheduler::rtlab_spec`] names).
impl From<SimsoScheduler> for SchedulerSpec {
    fn from(scheduler: SimsoScheduler) -> SchedulerSpec {
        match scheduler {
            SimsoScheduler::Edf => SchedulerSpec::Edf,
            SimsoScheduler::FixedPriority(order) => SchedulerSpec::Fp(order),
            SimsoScheduler::GlobalEdf => SchedulerSpec::Gedf,
            SimsoScheduler::GlobalFixedPriority(order) => SchedulerSpec::Gfp(order),
            SimsoScheduler::Edzl => SchedulerSpec::Edzl,
            SimsoScheduler::PartitionedEdf => SchedulerSpec::Pedf,
            SimsoScheduler::PartitionedRm => SchedulerSpec::Pfp(PriorityAssignment::RateMonotonic),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every model scheduler converts to the spec its printed name parses
    /// to, so a report that prints the model names the scheduler that ran.
    #[test]
    fn a_model_scheduler_converts_to_the_spec_of_its_name() {
        let dm = PriorityAssignment::DeadlineMonotonic;
        for model in [
            ModelScheduler::FixedPriority(dm),
            ModelScheduler::Edf,
            ModelScheduler::Fifo,
            ModelScheduler::RoundRobin(Nanos::from_ms(100)),
            ModelScheduler::LinuxDl,
            ModelScheduler::PartitionedEdf,
            ModelScheduler::ClusteredEdf,
            ModelScheduler::GlobalFixedPriority(dm),
            ModelScheduler::PartitionedFixedPriority(PriorityAssignment::Given),
        ] {
            let spec = SchedulerSpec::from(model);
            let parsed: SchedulerSpec = model.to_string().parse().expect("a spec");
            assert_eq!(parsed, spec, "{model}");
            assert_eq!(spec.to_string(), model.to_string());
        }
    }

    /// Every SimSo scheduler converts to the spec its rtlab name parses to.
    #[test]
    fn a_simso_scheduler_converts_to_the_spec_of_its_rtlab_name() {
        let dm = PriorityAssignment::DeadlineMonotonic;
        for scheduler in [
            SimsoScheduler::Edf,
            SimsoScheduler::FixedPriority(dm),
            SimsoScheduler::GlobalEdf,
            SimsoScheduler::GlobalFixedPriority(PriorityAssignment::Given),
            SimsoScheduler::Edzl,
            SimsoScheduler::PartitionedEdf,
            SimsoScheduler::PartitionedRm,
        ] {
            let spec = SchedulerSpec::from(scheduler);
            let parsed: SchedulerSpec = scheduler.rtlab_spec().parse().expect("a spec");
            assert_eq!(parsed, spec, "{scheduler:?}");
            assert_eq!(spec.to_string(), scheduler.rtlab_spec());
        }
    }

    /// Every spec prints as a form its own entry parses back to it, and
    /// every entry is reached by a spec's name.
    #[test]
    fn every_spec_round_trips_through_its_entry() {
        let rm = PriorityAssignment::RateMonotonic;
        let specs = [
            SchedulerSpec::Fp(rm),
            SchedulerSpec::Edf,
            SchedulerSpec::Llf,
            SchedulerSpec::Fifo,
            SchedulerSpec::NpEdf,
            SchedulerSpec::Rr(Nanos::from_ms(2)),
            SchedulerSpec::RrLinux(Nanos::from_ms(2)),
            SchedulerSpec::Ipi(ipi::IpiParams::default()),
            SchedulerSpec::Multiburst(multiburst::MultiburstParams::default()),
            SchedulerSpec::Hybrid(rm),
            SchedulerSpec::Gedf,
            SchedulerSpec::Gfp(rm),
            SchedulerSpec::Edzl,
            SchedulerSpec::LinuxDl,
            SchedulerSpec::Gllf,
            SchedulerSpec::Pedf,
            SchedulerSpec::Pfp(rm),
            SchedulerSpec::Cedf,
        ];
        for spec in &specs {
            assert!(entry(spec.name()).is_some(), "{spec} has no entry");
            assert_eq!(&spec.to_string().parse::<SchedulerSpec>().unwrap(), spec);
        }
        for e in SCHEDULERS {
            assert!(specs.iter().any(|s| s.name() == e.name), "{}", e.name);
        }
    }

    #[test]
    fn a_near_miss_is_answered_with_the_name_meant() {
        let why = |text: &str| match text.parse::<SchedulerSpec>() {
            Err(SimError::Spec { why, .. }) => why,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(why("EDF"), "unknown scheduler; did you mean `edf`?");
        assert_eq!(why("FP:rm"), "unknown scheduler; did you mean `fp:rm`?");
        assert_eq!(
            why("linuxdl"),
            "unknown scheduler; did you mean `linux-dl`?"
        );
        assert_eq!(
            why("edzf"),
            "unknown scheduler; did you mean `edf` or `edzl`?"
        );
        assert_eq!("dm".parse::<SchedulerSpec>().unwrap().to_string(), "fp:dm");
        assert!(why("banana").starts_with("unknown scheduler (use fp:rm|dm|given, edf"));
    }
}
