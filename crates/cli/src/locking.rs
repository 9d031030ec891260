//! `--locking` with a multiprocessor protocol, shared by `rtlab analyze`
//! and `rtlab sim`: the protocol's refusals (nesting it cannot handle, a
//! resource across clusters it cannot share, a uniprocessor protocol
//! across processors) as one line naming the file's place, and `analyze
//! --locking` on m processors.

use std::str::FromStr;

use rtlab_analysis::mp_locking as bounds;
use rtlab_analysis::multiprocessor::{MultiprocessorTest, Partitioned};
use rtlab_analysis::partition::Heuristic;
use rtlab_model::file::LoadedTaskSet;
use rtlab_model::mp_locking::{self, MpProtocol, MpScheduling, Places};
use rtlab_model::policy::{LockingProtocol, PriorityAssignment, Scope};
use rtlab_model::{Diagnostic, TaskSet};
use rtlab_sim::SchedulerSpec;
use serde_json::Value;

use crate::commands::analyze::AnalyzeArgs;
use crate::usage::usage;

/// One value of `analyze --locking`: a protocol, or `all` (every
/// multiprocessor protocol). Not a second protocol type: `all` is a
/// spelling of the flag, which names a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockingFlag {
    /// One protocol.
    Protocol(LockingProtocol),
    /// Every multiprocessor protocol.
    All,
}

impl FromStr for LockingFlag {
    type Err = String;
    fn from_str(s: &str) -> Result<LockingFlag, String> {
        match s {
            "all" => Ok(LockingFlag::All),
            _ => s.parse().map(LockingFlag::Protocol),
        }
    }
}

impl LockingFlag {
    /// The flag's values split: the one uniprocessor protocol (`None` when
    /// multiprocessor protocols were named, each once in the given order),
    /// refusing a mix and more than one uniprocessor protocol.
    pub fn split(
        flags: &[LockingFlag],
    ) -> anyhow::Result<(Option<Option<LockingProtocol>>, Vec<MpProtocol>)> {
        let mut multi: Vec<MpProtocol> = Vec::new();
        let mut uni: Vec<LockingProtocol> = Vec::new();
        for &flag in flags {
            let named = match flag {
                LockingFlag::All => MpProtocol::ALL.to_vec(),
                LockingFlag::Protocol(LockingProtocol::Multiprocessor(p)) => vec![p],
                LockingFlag::Protocol(p) => {
                    uni.push(p);
                    Vec::new()
                }
            };
            for p in named {
                if !multi.contains(&p) {
                    multi.push(p);
                }
            }
        }
        match (uni.as_slice(), multi.is_empty()) {
            ([], false) => Ok((None, multi)),
            ([], true) => Ok((Some(None), multi)),
            ([one], true) => Ok((Some(Some(*one)), multi)),
            ([one, ..], false) => Err(usage(format!(
                "--locking {one}: a uniprocessor protocol does not go with the multiprocessor ones ({}); analyse them separately",
                MpProtocol::names()
            ))),
            (_, true) => Err(usage(
                "--locking: give one of none, npp, pip, ipcp, srp, dfp on one processor (several multiprocessor protocols can be compared on --cpus M)",
            )),
        }
    }
}

/// `rtlab analyze --locking PROTOCOL,...` with multiprocessor protocols:
/// each protocol's bounds on the file's placement (or the heuristic's of
/// `--test pfp-X:HEURISTIC`, default `pfp-rm:ff-decreasing`).
pub fn analyze(
    args: &AnalyzeArgs,
    loaded: &LoadedTaskSet,
    m: u32,
    protocols: &[MpProtocol],
) -> anyhow::Result<Value> {
    for (given, flag) in [
        (args.overheads.is_some(), "--overheads"),
        (args.breakdown, "--breakdown"),
    ] {
        if given {
            return Err(usage(format!(
                "{flag} does not go with --locking {}: the locking bounds model no overheads",
                protocols[0]
            )));
        }
    }
    let set = crate::flags::on_cpus(loaded.set.clone(), args.cpus)?;
    let mut order = (
        PriorityAssignment::RateMonotonic,
        Heuristic::FIRST_FIT_DECREASING,
    );
    let mut named = None;
    for &test in &args.test {
        match test {
            MultiprocessorTest::Partitioned(Partitioned::Fixed(p), h) if named.is_none() => {
                order = (p, h);
                named = Some(test);
            }
            MultiprocessorTest::Partitioned(Partitioned::Fixed(_), _) => {
                return Err(usage(format!(
                    "--test {test}: with --locking give one partitioned fixed-priority test (the priorities and the heuristic of the partitioned protocols), not {} and {test}",
                    named.map_or_else(String::new, |t: MultiprocessorTest| t.name())
                )))
            }
            other => {
                return Err(usage(format!(
                    "--test {other}: with --locking the partitioned protocols are analysed under pfp[-rm|-dm|-given]:HEURISTIC and the OMLP under global EDF (its tests are all run)"
                )))
            }
        }
    }
    let (assignment, heuristic) = order;
    let mut documents = Vec::with_capacity(protocols.len());
    for &protocol in protocols {
        let doc = match protocol.scheduling() {
            MpScheduling::PartitionedFixedPriority => {
                let placed = bounds::place(&set, m, assignment, heuristic)?;
                if let Some(on) = placed.set() {
                    let cpus = on.assignment().unwrap_or_default();
                    check_protocol(loaded, on, protocol, &cpus)?;
                }
                bounds::placed_document(&set, protocol, &placed, assignment, m)?
            }
            MpScheduling::GlobalEdf => {
                let groups = vec![0; set.tasks.len()];
                check_protocol(loaded, &set, protocol, &groups)?;
                let outcome = bounds::analyse(&set, protocol, assignment, m)?;
                let placement = if set.has_cpu_fields() {
                    "global EDF (the cpu fields are not read)"
                } else {
                    "global EDF"
                };
                bounds::document(&set, &outcome, assignment, placement)
            }
        };
        documents.push(doc);
    }
    let doc = bounds::MpLockingAnalyzeDocument {
        taskset: set.name.clone(),
        origin: loaded.origin.clone(),
        processors: m,
        utilization: set.utilization(),
        priorities: assignment.name().to_string(),
        protocols: documents,
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for note in &loaded.notes {
            eprintln!("{note}");
        }
        out!("{}", rtlab_report::mp_locking_text::analyze_text(&doc));
    }
    let doc = serde_json::to_value(&doc)?;
    crate::save::save_document(
        &args.save,
        rtlab_store::RunKind::Analyze,
        Some(&args.file),
        &doc,
        false,
    )?;
    Ok(doc)
}

/// Refuses `set` (a placed copy of `loaded`'s set, same tasks) when
/// `protocol` cannot run it with task `i` in group `groups[i]`
/// (processors for the partitioned protocols, clusters for the OMLP).
pub fn check_protocol(
    loaded: &LoadedTaskSet,
    set: &TaskSet,
    protocol: MpProtocol,
    groups: &[u32],
) -> anyhow::Result<()> {
    let places = match protocol {
        MpProtocol::Omlp => Places::Clusters,
        _ => Places::Processors,
    };
    refuse(loaded, mp_locking::check(set, groups, protocol, places))
}

/// `rtlab sim`'s refusals of the locking protocol about the file (nesting
/// it cannot handle, a resource shared where it cannot be), at
/// file:line:col.
pub fn check_sim(
    loaded: &LoadedTaskSet,
    spec: &SchedulerSpec,
    protocol: LockingProtocol,
) -> anyhow::Result<()> {
    let set = &loaded.set;
    if !set.tasks.iter().any(|t| !t.critical_sections.is_empty()) {
        return Ok(());
    }
    match (protocol, spec.scope()) {
        (LockingProtocol::Multiprocessor(p), Scope::Clustered) => {
            let Ok(clusters) = rtlab_sim::multi::clusters(set) else {
                return Ok(());
            };
            let mut groups = vec![0u32; set.tasks.len()];
            for (k, (_, tasks)) in clusters.iter().enumerate() {
                for &i in tasks {
                    groups[i] = k as u32;
                }
            }
            check_protocol(loaded, set, p, &groups)
        }
        (LockingProtocol::Multiprocessor(p), Scope::Global) => {
            check_protocol(loaded, set, p, &vec![0; set.tasks.len()])
        }
        (LockingProtocol::Multiprocessor(p), Scope::Partitioned) => match set.assignment() {
            Some(cpus) => check_protocol(loaded, set, p, &cpus),
            None => Ok(()),
        },
        (p, Scope::Partitioned) if set.processors() > 1 => match set.assignment() {
            Some(cpus) => {
                let name = match p {
                    LockingProtocol::None => "plain locking (no --locking)",
                    p => p.name(),
                };
                check_uniprocessor(loaded, set, name, &cpus)
            }
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Refuses `set` when the uniprocessor protocol `protocol` would have to
/// share a resource across the processors of `groups`.
pub fn check_uniprocessor(
    loaded: &LoadedTaskSet,
    set: &TaskSet,
    protocol: &str,
    groups: &[u32],
) -> anyhow::Result<()> {
    refuse(
        loaded,
        mp_locking::check_uniprocessor(set, groups, protocol),
    )
}

/// The first finding at its place in the file, with how many more.
fn refuse(loaded: &LoadedTaskSet, found: Vec<Diagnostic>) -> anyhow::Result<()> {
    let count = found.len();
    let placed = loaded.place(found);
    match placed.first() {
        None => Ok(()),
        Some(first) if count == 1 => anyhow::bail!("{first}"),
        Some(first) => anyhow::bail!(
            "{first} (and {} more error{})",
            count - 1,
            if count == 2 { "" } else { "s" }
        ),
    }
}
