//! `characterize --kernel-trace`: the same costs read from the kernel's
//! timestamps ([`rtlab_ktrace::costs`]) beside the user-space ones, per
//! scenario and n, with the host's stalls counted apart and left out.
//!
//! | cost    | user space (this module's `user`)                    | kernel (`kernel`)                                  | windows        |
//! | ------- | ---------------------------------------------------- | -------------------------------------------------- | -------------- |
//! | release | `preempt`: high's first stamp - low's last stamp     | timer expiry (or wake-up) to high's switch-in      | preempt, per n |
//! | exit    | `exit`: low's first stamp after - high's last stamp  | high's blocking call's entry to its switch out     | exit, per n    |
//! | switch  | `pingpong`: one hand-over by futex                    | the blocking call's entry to the other's return    | pingpong (n=2) |
//!
//! The two do not time the same span: the user-space release also holds
//! the interrupt's entry and the return to user space, the user-space exit
//! also holds the switch to the next thread. The kernel's side has no host
//! stall in it (a sample with a stall inside is left out and counted).
//! Lines `a*n + b` are fitted to the kernel samples of each n as to the
//! user-space ones ([`fit::fit_line`], the same statistic).

use rtlab_ktrace::costs::{CostSamples, KernelCosts, Stalls};
use serde::Serialize;

use super::fit::{fit_line, CostStats, LineFit, Statistic};
use super::{Characterization, ScenarioPoint};

/// One cost at one n, both ways.
#[derive(Debug, Clone, Serialize)]
pub struct CostComparison {
    /// `release`, `exit` or `switch`.
    pub cost: &'static str,
    /// The scenario it was measured in.
    pub scenario: &'static str,
    /// Threads on the CPU.
    pub n: usize,
    /// From user-space stamps (the scenario's statistics).
    pub user: CostStats,
    /// From kernel timestamps (`None`: no kernel sample in its window).
    pub kernel: Option<CostStats>,
}

/// The `kernel_trace` object of `characterize --json`.
#[derive(Debug, Clone, Serialize)]
pub struct KernelCharacterization {
    /// Events decoded on the measured CPU's trace.
    pub events: u64,
    /// Events the kernel lost (overrun + dropped).
    pub lost_events: u64,
    /// The event-less gap taken as a host stall, ns.
    pub stall_gap_ns: u64,
    /// Host stalls while a measuring thread was in a system call or being
    /// switched in, or inside a sample ([`rtlab_ktrace::costs`]).
    pub stalls: Stalls,
    /// Kernel samples left out because a stall lay inside them.
    pub excluded_samples: u64,
    /// Host steal time on the CPU over the run (`/proc/stat`), ns.
    pub steal_ns: u64,
    /// Per cost and n, both ways.
    pub costs: Vec<CostComparison>,
    /// The line fitted to the kernel's release samples (statistic of the
    /// user-space fit).
    pub release_fit: Option<LineFit>,
    /// The line fitted to the kernel's exit samples.
    pub exit_fit: Option<LineFit>,
    /// What the trace could not measure here, in words.
    pub not_measured: Vec<String>,
}

/// Pairs the kernel's samples with the user-space statistics; `costs` was
/// measured over [`windows`] (in that order).
pub fn compare(
    measured: &Characterization,
    costs: KernelCosts,
    stat: Statistic,
    events: u64,
    lost_events: u64,
    steal_ns: u64,
    stall_gap_ns: u64,
) -> KernelCharacterization {
    let mut samples = costs.windows.into_iter();
    let mut rows = Vec::new();
    let mut per_n = |cost: &'static str,
                     scenario: &'static str,
                     points: &[ScenarioPoint],
                     take: fn(CostSamples) -> Vec<u64>,
                     samples: &mut dyn Iterator<Item = CostSamples>| {
        let mut line = Vec::new();
        for p in points {
            let mut mine = samples.next().map(take).unwrap_or_default();
            let kernel = CostStats::of(&mut mine);
            if let Some(k) = kernel {
                line.push((p.n as u64, k.get(stat)));
            }
            rows.push(CostComparison {
                cost,
                scenario,
                n: p.n,
                user: p.stats,
                kernel,
            });
        }
        fit_line(&line)
    };
    let release_fit = per_n(
        "release",
        "preempt",
        &measured.preempt,
        |s| s.release,
        &mut samples,
    );
    let exit_fit = per_n("exit", "exit", &measured.exit, |s| s.exit, &mut samples);
    if let Some(pp) = &measured.pingpong {
        let mut mine = samples.next().map(|s| s.switch).unwrap_or_default();
        rows.push(CostComparison {
            cost: "switch",
            scenario: "pingpong",
            n: 2,
            user: pp.stats,
            kernel: CostStats::of(&mut mine),
        });
    }
    let mut not_measured = vec![
        "preemption of a spinning thread (nonpreempt) and the tick (timer): the interrupted thread runs user code on both sides, and no event marks where it stopped".to_string(),
    ];
    if !costs.saw_timers {
        not_measured.push(
            "no hrtimer_expire_entry events (the kernel lacks them): releases start at the wake-up"
                .into(),
        );
    }
    if !costs.saw_syscalls {
        not_measured.push(
            "no raw_syscalls events (the kernel lacks them): no exit or switch from the trace"
                .into(),
        );
    }
    KernelCharacterization {
        events,
        lost_events,
        stall_gap_ns,
        stalls: costs.stalls,
        excluded_samples: costs.excluded,
        steal_ns,
        costs: rows,
        release_fit,
        exit_fit,
        not_measured,
    }
}

/// The time windows whose samples [`compare`] reads, in its order: each
/// preempt n, each exit n, then the ping-pong.
pub fn windows(measured: &Characterization) -> Vec<(u64, u64)> {
    measured
        .preempt
        .iter()
        .chain(&measured.exit)
        .map(|p| p.window)
        .chain(measured.pingpong.as_ref().map(|p| p.window))
        .collect()
}

/// The events `characterize --kernel-trace` records besides the
/// scheduling ones: timer expiries and system-call entries and exits.
pub fn extra_events() -> Vec<&'static str> {
    rtlab_ktrace::decode::TIMER_EVENTS
        .iter()
        .chain(&rtlab_ktrace::decode::SYSCALL_EVENTS)
        .copied()
        .collect()
}

/// Decodes a finished recording of `measured.cpu` and compares
/// ([`compare`]), with [`rtlab_ktrace::costs::STALL_GAP_NS`].
pub fn from_recording(
    measured: &Characterization,
    recorded: &rtlab_ktrace::Recorded,
    stat: Statistic,
) -> Result<KernelCharacterization, rtlab_ktrace::TraceError> {
    let trace = rtlab_ktrace::Trace::load(&recorded.file)?;
    let gap = rtlab_ktrace::costs::STALL_GAP_NS;
    let costs =
        rtlab_ktrace::costs::measure(&trace.events, measured.cpu as u32, &windows(measured), gap);
    let l = recorded.losses;
    Ok(compare(
        measured,
        costs,
        stat,
        trace.events.len() as u64,
        l.overrun + l.dropped,
        recorded.steal_ns,
        gap,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::characterize::TimerResult;
    use rtlab_ktrace::costs::KernelCosts;

    fn point(n: usize, window: (u64, u64)) -> ScenarioPoint {
        ScenarioPoint {
            n,
            stats: CostStats::of(&mut [10, 20]).unwrap(),
            invalid: 0,
            lost_batches: 0,
            window,
        }
    }

    fn measured() -> Characterization {
        Characterization {
            cpu: 1,
            samples: 2,
            gap_threshold_ns: 1000,
            loop_iteration_ns: 100.0,
            timer: TimerResult {
                stats: None,
                tick: None,
                coarse_resolution_ns: None,
                stalls: 0,
                stall_max_ns: 0,
                other_gaps: 0,
                other_gap_max_ns: 0,
                spun_ns: 0,
                dropped_gaps: 0,
                loc_per_second: None,
            },
            pingpong: None,
            preempt: vec![point(2, (0, 10)), point(4, (10, 20))],
            exit: vec![point(2, (20, 30))],
            nonpreempt: vec![],
            interrupted: false,
            elapsed_ns: 30,
        }
    }

    /// Windows in order preempt n=2, n=4, exit n=2; the kernel's release
    /// p99.9 is 5 ns at n=2 and 7 ns at n=4: the line 1 ns*n + 3 ns.
    #[test]
    fn kernel_samples_pair_with_their_scenario_and_n_and_are_fitted() {
        let m = measured();
        assert_eq!(windows(&m), vec![(0, 10), (10, 20), (20, 30)]);
        let samples = |release: Vec<u64>, exit: Vec<u64>| CostSamples {
            release,
            switch: vec![],
            exit,
        };
        let costs = KernelCosts {
            windows: vec![
                samples(vec![3, 5], vec![99]),
                samples(vec![7], vec![]),
                samples(vec![1], vec![4]),
            ],
            excluded: 1,
            saw_timers: true,
            saw_syscalls: true,
            ..KernelCosts::default()
        };
        let k = compare(&m, costs, Statistic::P999, 9, 0, 0, 100_000);
        let rows: Vec<(&str, usize, Option<u64>)> = k
            .costs
            .iter()
            .map(|c| (c.cost, c.n, c.kernel.map(|s| s.p999_ns)))
            .collect();
        assert_eq!(
            rows,
            vec![
                ("release", 2, Some(5)),
                ("release", 4, Some(7)),
                ("exit", 2, Some(4))
            ]
        );
        let fit = k.release_fit.unwrap();
        assert_eq!((fit.per_thread_ps, fit.base_ps), (1000, 3000));
        assert_eq!(k.excluded_samples, 1);
        assert_eq!(k.not_measured.len(), 1, "only nonpreempt and the tick");
    }
}
