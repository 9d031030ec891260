//! Built-in task sets from the literature, usable anywhere a file is as
//! `builtin:NAME` (and `builtin:NAME?param=value&...` for parameters).
//!
//! | name | source |
//! | --- | --- |
//! | `hartstone-ph` | Hartstone PH baseline, paper 002 Table 4.1 (Weiderman & Kamenoff 1992) |
//! | `gap` | Generic Avionics Platform, Locke, Vogel & Mesler, RTSS 1991 |
//! | `avionics` | paper 004 section 5: `gap` without Weapon Release |
//! | `ins`, `ins-big` | paper 004 Table 2 (Inertial Navigation System), and x10 |
//! | `lf-scenario-1..4` | paper 000 section 4.2, the periodic-task scenarios |
//! | `priority-inversion` | the classic unbounded inversion (Sha, Rajkumar & Lehoczky 1990) |
//! | `dhall` | Dhall's effect on 2 processors (Dhall & Liu 1978) |
//! | `dhall-linux` | the same with C = 20/85 ms: SCHED_DEADLINE admits it per CPU |
//! | `no-partition` | 2 processors: global EDF and RM meet it, no partition does |

use crate::platform::Platform;
use crate::task::{CriticalSection, Task, TaskSet};
use crate::time::Nanos;

/// One catalog entry as listed by `rtlab taskset list`.
#[derive(Debug, Clone, Copy)]
pub struct CatalogEntry {
    /// The name after `builtin:`.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// Where the numbers come from.
    pub source: &'static str,
    /// Accepted parameters as `name=default: meaning`, or empty.
    pub parameters: &'static [Parameter],
}

/// A parameter of a catalog entry.
#[derive(Debug, Clone, Copy)]
pub struct Parameter {
    /// Its name in `?name=value`.
    pub name: &'static str,
    /// Its default value, as it would be written.
    pub default: &'static str,
    /// What it means.
    pub meaning: &'static str,
}

/// Why `builtin:...` could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// No entry of that name.
    #[error("unknown built-in task set `{name}` (known: {known}; see `rtlab taskset list`)")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A parameter the entry does not take, or a malformed value.
    #[error("builtin:{entry}: {message}")]
    BadParameter {
        /// The entry.
        entry: String,
        /// What is wrong.
        message: String,
    },
}

/// Length of one Hartstone kilo-whetstone by default: paper 002 (section
/// 4.2) implements it as a 1.25 ms busy wait.
pub const DEFAULT_KILO_WHET: Nanos = Nanos::from_us(1250);

const HARTSTONE_PARAMS: &[Parameter] = &[Parameter {
    name: "kilo-whet",
    default: "1.25ms",
    meaning: "execution time of one kilo-whetstone of work",
}];

const ENTRIES: &[CatalogEntry] = &[
    CatalogEntry {
        name: "hartstone-ph",
        summary:
            "Hartstone PH baseline: 2-32 Hz, 32-2 kilo-whets per period, U = 0.40, RM priorities",
        source: "Golchin 2017 Table 4.1 (Weiderman & Kamenoff, Hartstone)",
        parameters: HARTSTONE_PARAMS,
    },
    CatalogEntry {
        name: "gap",
        summary: "Generic Avionics Platform, 16 tasks, 25 ms - 1 s, U = 0.8451",
        source: "Locke, Vogel & Mesler, RTSS 1991",
        parameters: &[],
    },
    CatalogEntry {
        name: "avionics",
        summary: "the 15-task avionics set (gap without Weapon Release), U = 0.8301",
        source: "Arakawa et al. 1993 section 5",
        parameters: &[],
    },
    CatalogEntry {
        name: "ins",
        summary: "Inertial Navigation System, 6 tasks, 2.5 ms - 1.25 s, U = 0.8840",
        source: "Arakawa et al. 1993 Table 2",
        parameters: &[],
    },
    CatalogEntry {
        name: "ins-big",
        summary: "ins with periods and execution times x10, U = 0.8840",
        source: "Arakawa et al. 1993 section 5",
        parameters: &[],
    },
    CatalogEntry {
        name: "lf-scenario-1",
        summary: "2 tasks, T = 50 ms; t2 has D = 25 ms: FIFO meets it only if t2 is declared first",
        source: "Soyer 2024 section 4.2, Figure 4.7",
        parameters: &[],
    },
    CatalogEntry {
        name: "lf-scenario-2",
        summary:
            "2 tasks, T = 50 ms and 25 ms, implicit deadlines: FIFO by declaration misses, DM meets",
        source: "Soyer 2024 section 4.2, Figure 4.8",
        parameters: &[],
    },
    CatalogEntry {
        name: "lf-scenario-3",
        summary:
            "scenario 1 with the tight-deadline task released 1 ms late: FIFO misses, DM meets",
        source: "Soyer 2024 section 4.2, Figure 4.9",
        parameters: &[],
    },
    CatalogEntry {
        name: "lf-scenario-4",
        summary: "T = 25/50 ms, D = 23/45 ms, C = 3/40 ms, t1 offset 1 ms: DM misses, EDF meets",
        source: "Soyer 2024 section 4.2, Figure 4.10",
        parameters: &[],
    },
    CatalogEntry {
        name: "priority-inversion",
        summary: "high and low share a lock, mid preempts low: high waits for mid under none, not under pip/ipcp",
        source: "Sha, Rajkumar & Lehoczky 1990 (the Mars Pathfinder pattern); README \"Critical sections on real threads\"",
        parameters: &[],
    },
    CatalogEntry {
        name: "dhall",
        summary: "Dhall's effect, m = 2: two light tasks (2 ms every 100 ms) and a heavy one (100 ms every 101 ms), U = 1.03: global EDF and RM miss, a partition (and global DkC) meets",
        source: "Dhall & Liu, Operations Research 26(1), 1978",
        parameters: &[],
    },
    CatalogEntry {
        name: "dhall-linux",
        summary: "Dhall's effect that Linux can run, m = 2: light tasks 20 ms every 100 ms, heavy 85 ms every 101 ms, U = 1.24: global EDF misses (20 + 85 > 101 ms), partitioned EDF meets with the heavy task at 0.84 of a CPU, under SCHED_DEADLINE's 0.90",
        source: "Dhall & Liu 1978, rescaled for SCHED_DEADLINE admission (catalog.rs)",
        parameters: &[],
    },
    CatalogEntry {
        name: "no-partition",
        summary: "m = 2, C/T = 1/2, 2/3, 2/3 ms, U = 1.83: no partition fits (every pair has U > 1), global EDF and RM meet every deadline",
        source: "rtlab, hand-checked schedule (catalog.rs)",
        parameters: &[],
    },
];

/// Every built-in task set, in listing order.
pub fn entries() -> &'static [CatalogEntry] {
    ENTRIES
}

/// Builds `NAME` or `NAME?param=value&...` (the part after `builtin:`).
pub fn build(spec: &str) -> Result<TaskSet, CatalogError> {
    let (name, query) = spec.split_once('?').unwrap_or((spec, ""));
    let entry = ENTRIES
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| CatalogError::Unknown {
            name: name.to_string(),
            known: ENTRIES
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let params = parse_parameters(entry, query)?;
    let ms = Nanos::from_ms;
    let set = match name {
        "hartstone-ph" => hartstone_ph(params.duration("kilo-whet")?.unwrap_or(DEFAULT_KILO_WHET))
            .map_err(|message| bad(entry, message))?,
        "gap" => TaskSet::new("gap", gap_tasks(true)),
        "avionics" => TaskSet::new("avionics", gap_tasks(false)),
        "ins" => TaskSet::new("ins", ins_tasks(1)),
        "ins-big" => TaskSet::new("ins-big", ins_tasks(10)),
        "lf-scenario-1" => TaskSet::new(
            name,
            vec![
                Task::new("t1", ms(50), ms(15)),
                Task::new("t2", ms(50), ms(23)).with_deadline(ms(25)),
            ],
        ),
        "lf-scenario-2" => TaskSet::new(
            name,
            vec![
                Task::new("t1", ms(50), ms(15)),
                Task::new("t2", ms(25), ms(13)),
            ],
        ),
        "lf-scenario-3" => TaskSet::new(
            name,
            vec![
                Task::new("t1", ms(50), ms(15)),
                Task::new("t2", ms(50), ms(23))
                    .with_deadline(ms(25))
                    .with_offset(ms(1)),
            ],
        ),
        "lf-scenario-4" => TaskSet::new(
            name,
            vec![
                Task::new("t1", ms(25), ms(3))
                    .with_deadline(ms(23))
                    .with_offset(ms(1)),
                Task::new("t2", ms(50), ms(40)).with_deadline(ms(45)),
            ],
        ),
        "priority-inversion" => TaskSet::new(name, priority_inversion_tasks()),
        "dhall" => dhall(name, ms(2), ms(100)),
        "dhall-linux" => dhall(name, ms(20), ms(85)),
        "no-partition" => TaskSet::new(
            name,
            vec![
                Task::new("a", ms(2), ms(1)),
                Task::new("b", ms(3), ms(2)),
                Task::new("c", ms(3), ms(2)),
            ],
        )
        .on_platform(Platform::new(2)),
        _ => unreachable!("every catalog entry has a builder"),
    };
    Ok(set)
}

/// Three tasks, T = 100 ms each, priorities high > mid > low by deadline
/// (20, 60, 100 ms; RM breaks the equal periods the same way):
///
/// | task   | offset | C     | critical section on `R` |
/// | ------ | ------ | ----- | ----------------------- |
/// | `high` | 5 ms   | 6 ms  | from 1 ms, 2 ms long    |
/// | `mid`  | 8 ms   | 30 ms | none                    |
/// | `low`  | 0      | 20 ms | from 2 ms, 12 ms long   |
///
/// `low` takes `R` at 2 ms; `high` preempts it at 5 and asks for `R` at 6.
/// With plain locks `mid` preempts `low` at 8 and runs its whole job
/// (8-38) while `high` waits: `high` gets `R` at 45 and finishes at 50,
/// after `mid` (lock wait 39 ms, response 45 ms, deadline missed). With
/// inheritance `low` runs at `high`'s priority from 6, `mid` cannot preempt
/// it, `R` is free at 15 and `high` finishes at 20 (lock wait 9 ms), before
/// `mid` (50). With the immediate ceiling `low` runs at `high`'s priority
/// from 2, `high` cannot preempt it until 14 and finishes at 20 (lock wait
/// 0). Every job is done by 56 ms, so each period repeats the first.
fn priority_inversion_tasks() -> Vec<Task> {
    let ms = Nanos::from_ms;
    let section = |start: u64, length: u64| {
        vec![CriticalSection {
            resource: "R".into(),
            start: ms(start),
            length: ms(length),
        }]
    };
    let mut high = Task::new("high", ms(100), ms(6))
        .with_deadline(ms(20))
        .with_offset(ms(5));
    high.critical_sections = section(1, 2);
    let mid = Task::new("mid", ms(100), ms(30))
        .with_deadline(ms(60))
        .with_offset(ms(8));
    let mut low = Task::new("low", ms(100), ms(20));
    low.critical_sections = section(2, 12);
    vec![high, mid, low]
}

/// Dhall's effect (Dhall & Liu 1978) with `m = 2`, `ε = 0.01` and the
/// time unit 100 ms: `m` light tasks (C = 2ε, T = 1) and one heavy task
/// (C = 1, T = 1 + ε), on 2 processors. U = 0.02 + 0.02 + 100/101 = 1.03.
///
/// At 0 every task is released. Global EDF runs the light tasks first
/// (deadline 100 ms before 101 ms) on both processors until 2 ms; the
/// heavy task starts at 2 ms and ends at 102 ms, after its deadline at
/// 101 ms. Global RM does the same (the heavy task has the longest
/// period). A partition meets every deadline: the heavy task alone on one
/// processor (U = 0.99), the light ones on the other (U = 0.04).
///
/// `dhall-linux` is the same with light C = 20 ms and heavy C = 85 ms.
/// Linux cannot run `dhall` on real threads under partitioned EDF: a
/// SCHED_DEADLINE CPU admits at most 0.90 (the 0.95 RT limit minus the
/// fair server's 0.05), and the fair server takes up to 50 ms a second
/// from a task at 0.99. 20 + 85 > 101 ms keeps Dhall's effect (the heavy
/// job released with the light ones misses under global EDF) with the
/// heavy task at 0.84, which one CPU admits.
fn dhall(name: &str, light: Nanos, heavy: Nanos) -> TaskSet {
    let ms = Nanos::from_ms;
    TaskSet::new(
        name,
        vec![
            Task::new("light1", ms(100), light),
            Task::new("light2", ms(100), light),
            Task::new("heavy", ms(101), heavy),
        ],
    )
    .on_platform(Platform::new(2))
}

// `no-partition`, worked by hand. Tasks a = (C 1, T 2), b = c = (C 2,
// T 3) ms on 2 processors, implicit deadlines, hyperperiod 6 ms.
// No partition: two tasks share a processor, and every pair has
// U > 1 (a + b = 7/6, b + c = 4/3), which no uniprocessor scheduler meets.
// Global EDF, ties by task order: at 0, a (deadline 2) and b (3) run; a
// ends at 1, c runs from 1; b ends at 2; at 2 a is released (deadline 4)
// and runs beside c; c ends at 3 (its deadline), a at 3. At 3 b and c are
// released (deadline 6) and run; at 4 a is released (deadline 6): three
// jobs with 1 ms each left and 2 ms to their common deadline on 2
// processors: whatever the order, all end by 6. At 6 the pattern repeats.
// Global RM (a above b above c) gives the same schedule up to 4, where a
// preempts c; a and b end at 5, c at 6.

fn bad(entry: &CatalogEntry, message: String) -> CatalogError {
    CatalogError::BadParameter {
        entry: entry.name.to_string(),
        message,
    }
}

struct Parameters<'a> {
    entry: &'a CatalogEntry,
    pairs: Vec<(&'a str, &'a str)>,
}

impl Parameters<'_> {
    fn duration(&self, name: &str) -> Result<Option<Nanos>, CatalogError> {
        self.pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| {
                v.parse::<Nanos>()
                    .map_err(|e| bad(self.entry, format!("parameter {name}: {e}")))
            })
            .transpose()
    }
}

fn parse_parameters<'a>(
    entry: &'a CatalogEntry,
    query: &'a str,
) -> Result<Parameters<'a>, CatalogError> {
    let mut pairs = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            bad(
                entry,
                format!("parameter `{pair}` needs a value (name=value)"),
            )
        })?;
        if !entry.parameters.iter().any(|p| p.name == key) {
            let accepted = if entry.parameters.is_empty() {
                "it takes none".to_string()
            } else {
                let names: Vec<_> = entry.parameters.iter().map(|p| p.name).collect();
                format!("it takes {}", names.join(", "))
            };
            return Err(bad(
                entry,
                format!("unknown parameter `{key}` ({accepted})"),
            ));
        }
        // As the scheduler spec does: which of two values was meant is
        // anyone's guess.
        if pairs.iter().any(|&(k, _)| k == key) {
            return Err(bad(entry, format!("parameter `{key}` is given twice")));
        }
        pairs.push((key, value));
    }
    Ok(Parameters { entry, pairs })
}

/// Hartstone PH baseline (paper 002 Table 4.1): task k (k = 1..5) runs at
/// 2^k Hz with 2^(6-k) kilo-whets per period, so every task carries 64
/// kilo-whets per second; with a 1.25 ms kilo-whet, C = 40, 20, 10, 5, 2.5 ms
/// and U = 5 x 0.08 = 0.40. Priorities are rate monotonic (32 Hz highest).
fn hartstone_ph(kilo_whet: Nanos) -> Result<TaskSet, String> {
    let mut tasks = Vec::new();
    for k in 1..=5u32 {
        let hz = 1u64 << k;
        let whets = 1u64 << (6 - k);
        let period = Nanos::from_secs(1).div_floor(Nanos::from_ns(hz));
        let wcet = kilo_whet
            .checked_mul(whets)
            .ok_or_else(|| "parameter kilo-whet: too large".to_string())?;
        tasks
            .push(Task::new(format!("t{k}-{hz}hz"), Nanos::from_ns(period), wcet).with_priority(k));
    }
    let set = TaskSet::new("hartstone-ph", tasks);
    if let Some(e) = set.errors().first() {
        return Err(format!("parameter kilo-whet: {}", e.message));
    }
    Ok(set)
}

/// The Generic Avionics Platform (Locke, Vogel & Mesler 1991), C/T in ms.
/// Without Weapon Release it is paper 004's 15-task avionics set.
fn gap_tasks(with_weapon_release: bool) -> Vec<Task> {
    const GAP: [(&str, u64, u64); 16] = [
        ("weapon-release", 3, 200),
        ("radar-tracking-filter", 2, 25),
        ("rwr-contact-mgmt", 5, 25),
        ("data-bus-poll-device", 1, 40),
        ("weapon-aiming", 3, 50),
        ("radar-target-update", 5, 50),
        ("nav-update", 8, 59),
        ("display-graphic", 9, 80),
        ("display-hook-update", 2, 80),
        ("tracking-target-update", 5, 100),
        ("nav-steering-cmds", 3, 200),
        ("display-stores-update", 1, 200),
        ("display-key-set", 1, 200),
        ("display-stat-update", 3, 200),
        ("bet-e-status-update", 1, 1000),
        ("nav-status", 1, 1000),
    ];
    GAP.iter()
        .filter(|(name, _, _)| with_weapon_release || *name != "weapon-release")
        .map(|&(name, c, t)| Task::new(name, Nanos::from_ms(t), Nanos::from_ms(c)))
        .collect()
}

/// Paper 004 Table 2 (C/T in us), with periods and execution times scaled.
fn ins_tasks(scale: u64) -> Vec<Task> {
    const INS: [(u64, u64); 6] = [
        (1_180, 2_500),
        (4_280, 40_000),
        (10_280, 62_500),
        (20_280, 1_000_000),
        (100_280, 1_000_000),
        (25_000, 1_250_000),
    ];
    INS.iter()
        .enumerate()
        .map(|(i, &(c, t))| {
            Task::new(
                format!("ins{}", i + 1),
                Nanos::from_us(t * scale),
                Nanos::from_us(c * scale),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utilization(name: &str) -> f64 {
        build(name).unwrap().utilization()
    }

    #[test]
    fn every_entry_builds_and_validates_cleanly() {
        for e in entries() {
            let set = build(e.name).unwrap();
            assert!(
                set.validate().is_empty(),
                "{}: {:?}",
                e.name,
                set.validate()
            );
        }
    }

    #[test]
    fn multiprocessor_examples_name_their_platform() {
        let dhall = build("dhall").unwrap();
        assert_eq!(dhall.processors(), 2);
        assert!((dhall.utilization() - (0.04 + 100.0 / 101.0)).abs() < 1e-12);
        let none = build("no-partition").unwrap();
        assert_eq!(none.processors(), 2);
        assert!((none.utilization() - (0.5 + 4.0 / 3.0)).abs() < 1e-12);
        // Every pair is above 1: no processor can hold two of them.
        let u: Vec<f64> = none.tasks.iter().map(Task::utilization).collect();
        assert!(u[0] + u[1] > 1.0 && u[1] + u[2] > 1.0 && u[0] + u[2] > 1.0);
    }

    #[test]
    fn utilizations_match_the_papers() {
        // Exact sums, then the rounded figures the papers print.
        assert!((utilization("hartstone-ph") - 0.40).abs() < 1e-12);
        let gap = 3.0 / 200.0
            + 2.0 / 25.0
            + 5.0 / 25.0
            + 1.0 / 40.0
            + 3.0 / 50.0
            + 5.0 / 50.0
            + 8.0 / 59.0
            + 9.0 / 80.0
            + 2.0 / 80.0
            + 5.0 / 100.0
            + 3.0 / 200.0
            + 1.0 / 200.0
            + 1.0 / 200.0
            + 3.0 / 200.0
            + 1.0 / 1000.0
            + 1.0 / 1000.0;
        assert!((utilization("gap") - gap).abs() < 1e-12);
        assert!((utilization("gap") - 0.8451).abs() < 5e-5);
        assert!((utilization("avionics") - (gap - 0.015)).abs() < 1e-12);
        assert!((utilization("avionics") - 0.8301).abs() < 5e-5);
        assert!((utilization("ins") - 0.88404).abs() < 1e-12);
        assert!((utilization("ins-big") - 0.88404).abs() < 1e-12);
    }

    #[test]
    fn hartstone_matches_table_4_1() {
        let set = build("hartstone-ph").unwrap();
        let got: Vec<_> = set
            .tasks
            .iter()
            .map(|t| (t.period.as_ns(), t.wcet, t.priority))
            .collect();
        let ms = Nanos::from_ms;
        assert_eq!(
            got,
            vec![
                (500_000_000, ms(40), Some(1)),
                (250_000_000, ms(20), Some(2)),
                (125_000_000, ms(10), Some(3)),
                (62_500_000, ms(5), Some(4)),
                (31_250_000, Nanos::from_us(2500), Some(5)),
            ]
        );
        let small = build("hartstone-ph?kilo-whet=1ms").unwrap();
        assert_eq!(small.tasks[0].wcet, ms(32));
        assert!((small.utilization() - 0.32).abs() < 1e-12);
    }

    #[test]
    fn sizes_and_ranges() {
        let avionics = build("avionics").unwrap();
        assert_eq!(avionics.tasks.len(), 15);
        assert_eq!(build("gap").unwrap().tasks.len(), 16);
        let periods: Vec<_> = avionics.tasks.iter().map(|t| t.period).collect();
        assert_eq!(periods.iter().min(), Some(&Nanos::from_ms(25)));
        assert_eq!(periods.iter().max(), Some(&Nanos::from_secs(1)));
        let big = build("ins-big").unwrap();
        assert_eq!(big.tasks[0].period, Nanos::from_ms(25));
        assert_eq!(big.tasks[0].wcet, Nanos::from_us(11_800));
    }

    #[test]
    fn lf_scenarios_have_the_papers_parameters() {
        let s4 = build("lf-scenario-4").unwrap();
        let t1 = &s4.tasks[0];
        assert_eq!(
            (t1.period, t1.deadline, t1.wcet, t1.offset),
            (
                Nanos::from_ms(25),
                Nanos::from_ms(23),
                Nanos::from_ms(3),
                Nanos::from_ms(1)
            )
        );
        let t2 = &s4.tasks[1];
        assert_eq!(
            (t2.period, t2.deadline, t2.wcet, t2.offset),
            (
                Nanos::from_ms(50),
                Nanos::from_ms(45),
                Nanos::from_ms(40),
                Nanos::ZERO
            )
        );
        let s3 = build("lf-scenario-3").unwrap();
        assert_eq!(s3.tasks[1].offset, Nanos::from_ms(1));
        assert_eq!(s3.tasks[1].deadline, Nanos::from_ms(25));
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(build("nope")
            .unwrap_err()
            .to_string()
            .starts_with("unknown built-in task set `nope` (known: hartstone-ph, gap,"));
        assert_eq!(
            build("gap?x=1").unwrap_err().to_string(),
            "builtin:gap: unknown parameter `x` (it takes none)"
        );
        assert_eq!(
            build("hartstone-ph?kilo-whet=2xs").unwrap_err().to_string(),
            "builtin:hartstone-ph: parameter kilo-whet: invalid duration `2xs`: unknown unit `xs` (use ns, us, ms or s)"
        );
        assert_eq!(
            build("hartstone-ph?kilo-whet").unwrap_err().to_string(),
            "builtin:hartstone-ph: parameter `kilo-whet` needs a value (name=value)"
        );
        assert_eq!(
            build("hartstone-ph?kilo-whet=20ms").unwrap_err().to_string(),
            "builtin:hartstone-ph: parameter kilo-whet: task `t1-2hz`: wcet 640ms exceeds deadline 500ms: no job can meet it"
        );
    }
}
