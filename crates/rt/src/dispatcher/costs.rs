//! What the dispatcher costs, measured on every run:
//!
//! | figure | what it is | how it is measured |
//! | --- | --- | --- |
//! | dispatch latency | from the decision to the chosen thread running | the dispatcher's clock right after `pick`, against the thread's own first clock reading after its run order (with `--kernel-trace`, also the kernel's: the `sched_switch` to the thread after the decision) |
//! | decision cost | one turn that decides: the hooks and `pick` (decide), then raising and lowering threads (enact) | the dispatcher's monotonic clock at the wake-up, after `pick`, after the system calls |
//! | CPU share | the dispatcher thread's CPU time over the run's length | its `CLOCK_THREAD_CPUTIME_ID` before the first release and at the end |
//!
//! Histograms are sized before the run ([`crate::stats::new_histogram`]):
//! recording never allocates.

use hdrhistogram::Histogram;
use rtlab_model::Nanos;
use serde::Serialize;

use crate::stats::{new_histogram, Extremes, Summary};

/// The running measurements of one dispatcher.
pub struct CostMeter {
    wake: (Histogram<u64>, Extremes),
    post: (Histogram<u64>, Extremes),
    latency: (Histogram<u64>, Extremes),
    decide: (Histogram<u64>, Extremes),
    enact: (Histogram<u64>, Extremes),
    turn: (Histogram<u64>, Extremes),
}

impl Default for CostMeter {
    fn default() -> Self {
        CostMeter::new()
    }
}

impl CostMeter {
    /// Empty histograms, sized once.
    pub fn new() -> CostMeter {
        let pair = || (new_histogram(), Extremes::default());
        CostMeter {
            wake: pair(),
            post: pair(),
            latency: pair(),
            decide: pair(),
            enact: pair(),
            turn: pair(),
        }
    }

    /// The dispatcher woke `d` after the time its timer was set for.
    #[inline]
    pub fn wake(&mut self, d: Nanos) {
        self.wake.0.saturating_record(d.as_ns());
        self.wake.1.record(d);
    }

    /// The dispatcher began its turn `d` after a thread posted the end of
    /// its job.
    #[inline]
    pub fn post(&mut self, d: Nanos) {
        self.post.0.saturating_record(d.as_ns());
        self.post.1.record(d);
    }

    /// A thread began `d` after the decision that ordered it to run.
    #[inline]
    pub fn latency(&mut self, d: Nanos) {
        self.latency.0.saturating_record(d.as_ns());
        self.latency.1.record(d);
    }

    /// A turn that decided: `decide` from the wake-up to the end of
    /// `pick`, `enact` the system calls that carried it out.
    #[inline]
    pub fn decision(&mut self, decide: Nanos, enact: Nanos) {
        self.decide.0.saturating_record(decide.as_ns());
        self.decide.1.record(decide);
        self.enact.0.saturating_record(enact.as_ns());
        self.enact.1.record(enact);
        let turn = decide.saturating_add(enact);
        self.turn.0.saturating_record(turn.as_ns());
        self.turn.1.record(turn);
    }

    /// Folds another meter in (the dispatchers of several CPUs).
    pub fn merge(&mut self, other: &CostMeter) {
        for (mine, theirs) in [
            (&mut self.wake, &other.wake),
            (&mut self.post, &other.post),
            (&mut self.latency, &other.latency),
            (&mut self.decide, &other.decide),
            (&mut self.enact, &other.enact),
            (&mut self.turn, &other.turn),
        ] {
            let _ = mine.0.add(&theirs.0);
            if !theirs.0.is_empty() {
                mine.1.min = mine.1.min.min(theirs.1.min);
                mine.1.max = mine.1.max.max(theirs.1.max);
                mine.1.sum_ns += theirs.1.sum_ns;
            }
        }
    }

    /// How late the dispatcher's timer wake-ups were.
    pub fn wake_summary(&self) -> Summary {
        self.wake.1.summary(&self.wake.0)
    }

    /// How long after a thread's post of its job's end the dispatcher
    /// began its turn.
    pub fn post_summary(&self) -> Summary {
        self.post.1.summary(&self.post.0)
    }

    /// The dispatch latencies.
    pub fn latency_summary(&self) -> Summary {
        self.latency.1.summary(&self.latency.0)
    }

    /// The decision costs (decide + enact).
    pub fn decision_summary(&self) -> Summary {
        self.turn.1.summary(&self.turn.0)
    }

    /// The decide part alone (hooks and `pick`).
    pub fn decide_summary(&self) -> Summary {
        self.decide.1.summary(&self.decide.0)
    }

    /// The enact part alone (raising, lowering, waking threads).
    pub fn enact_summary(&self) -> Summary {
        self.enact.1.summary(&self.enact.0)
    }
}

/// One measured quantity in the JSON: count, extremes, mean and
/// percentiles, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// Samples.
    pub count: u64,
    /// Smallest.
    pub min_ns: u64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest.
    pub max_ns: u64,
    /// Mean, rounded.
    pub mean_ns: u64,
}

impl From<Summary> for Percentiles {
    fn from(s: Summary) -> Percentiles {
        Percentiles {
            count: s.count,
            min_ns: if s.count == 0 { 0 } else { s.min.as_ns() },
            p50_ns: s.p50.as_ns(),
            p99_ns: s.p99.as_ns(),
            p999_ns: s.p999.as_ns(),
            max_ns: s.max.as_ns(),
            mean_ns: s.mean().as_ns(),
        }
    }
}

/// What a dispatcher run cost (`rtlab run --dispatcher --json`:
/// `dispatcher`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DispatcherCosts {
    /// The scheduler the dispatcher ran (`rtlab sim --scheduler`'s
    /// spelling).
    pub scheduler: String,
    /// `tickless`, or `tick 4ms` (decisions only at multiples of it).
    pub mode: String,
    /// The dispatchers: one per CPU of a partitioned run, one for a
    /// global one.
    pub dispatchers: usize,
    /// Wake-ups of the dispatcher(s).
    pub wakes: u64,
    /// Wake-ups that asked the scheduler to pick.
    pub decisions: u64,
    /// Run orders to a thread that was not running (each a dispatch).
    pub dispatches: u64,
    /// Task switches, as the simulator counts them (the chosen job's task
    /// differs from the last one that ran).
    pub context_switches: u64,
    /// Voluntary and involuntary switches of the task threads, as the
    /// kernel counted them (`getrusage(RUSAGE_THREAD)`).
    pub kernel_context_switches: u64,
    /// Task switches in the kernel's trace (`--kernel-trace`), counted as
    /// the simulator counts them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_task_switches: Option<u64>,
    /// From a decision to the chosen thread running, by the threads' own
    /// clock readings.
    pub dispatch_latency: Percentiles,
    /// The same from the kernel's trace (`--kernel-trace`): the decision
    /// to the `sched_switch` that put the thread on its CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_dispatch_latency: Option<Percentiles>,
    /// How late the dispatcher woke for its timer (a release, a burst end,
    /// a tick): the kernel's timer and wake-up latency.
    pub wake_latency: Percentiles,
    /// How late the dispatcher began its turn after a thread posted its
    /// job's end (the completion's notification: the doorbell's
    /// `futex_wake` and the switch to the dispatcher).
    pub post_latency: Percentiles,
    /// A deciding turn: wake-up to `pick` done, plus the system calls.
    pub decision_cost: Percentiles,
    /// Wake-up to `pick` done (the scheduler's hooks and `pick`).
    pub decide_cost: Percentiles,
    /// Raising, lowering and waking threads.
    pub enact_cost: Percentiles,
    /// The dispatcher threads' CPU time over the run.
    pub cpu_ns: u64,
    /// `cpu_ns` over the run's length times the dispatchers.
    pub cpu_share: f64,
    /// The priorities: dispatcher, running thread, waiting thread
    /// (SCHED_FIFO).
    pub priorities: String,
    /// Lock steps (a critical section entered or left) handled by the
    /// dispatcher: each is a wake-up and a decision.
    #[serde(skip_serializing_if = "is_zero")]
    pub lock_operations: u64,
    /// Jobs a global dispatcher moved to another CPU (`sched_setaffinity`
    /// of the thread), as the simulator counts migrations.
    #[serde(skip_serializing_if = "is_zero")]
    pub migrations: u64,
    /// `sched_setattr` (and a global dispatcher's `sched_setaffinity`)
    /// calls on task threads that failed (should be 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub enact_errors: u64,
    /// Why the watchdog ended the run, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watchdog: Option<String>,
}

impl DispatcherCosts {
    /// The dispatcher's costs as the simulator charges overheads (medians,
    /// constant in the number of threads): an instant with releases costs
    /// the timer's wake-up latency once however many releases coincide
    /// (`wake`: the dispatcher sleeps on one timer; charged per release,
    /// Hartstone's harmonic releases made every simulated job start 50-150
    /// us later than the real one), each switch to another job, after a
    /// preemption or a completion, the decide part of a turn plus the
    /// dispatch latency (`preempt`, `exit`), and a completion also the
    /// time its post took to reach the dispatcher (`exit`). A turn that keeps the running
    /// job costs nothing in the model: charged as the simulator's
    /// `schedule`, a burst end sooner than it would come back before the
    /// job ran again, forever (the simulator charges the overhead before
    /// the burst resumes). How `rtlab compare --dispatcher` simulates the
    /// run it compares with.
    pub fn as_overheads(&self) -> rtlab_model::overheads::Overheads {
        use rtlab_model::overheads::{LinearCost, Overheads};
        let cost = |ns: u64| LinearCost::from_ps(0, ns.saturating_mul(1000));
        let switch = self
            .decide_cost
            .p50_ns
            .saturating_add(self.dispatch_latency.p50_ns);
        Overheads {
            name: format!("dispatcher running {}", self.scheduler),
            source: "measured on this run".into(),
            wake: cost(self.wake_latency.p50_ns),
            preempt: cost(switch),
            exit: cost(switch.saturating_add(self.post_latency.p50_ns)),
            ..Overheads::zero()
        }
    }

    /// The dispatch latency that bounds a comparison with the simulator:
    /// the kernel's p99.9 when traced, else the threads' own.
    pub fn latency_p999(&self) -> Nanos {
        Nanos::from_ns(
            self.kernel_dispatch_latency
                .map_or(self.dispatch_latency.p999_ns, |k| {
                    k.p999_ns.max(self.dispatch_latency.p999_ns)
                }),
        )
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
