//! rtlab's record of the kernel's schedule during a real run
//! (`--kernel-trace`): a private tracefs instance on the run's CPUs
//! ([`recorder`]), the binary ring-buffer pages decoded with the kernel's
//! own `format` files ([`decode`], [`format`](mod@format), [`trace`]), the schedule
//! rebuilt from them ([`schedule`]), and each job's waits attributed to a
//! cause ([`causes`]): another task of the set, another thread, an
//! interrupt, throttling, or nothing visible (idle in the guest: the host).
//!
//! The decoder is hand-written (about 250 lines): the crates that parse
//! ftrace data either wrap the C libtracecmd (a system library and the
//! trace-cmd `trace.dat` format, which rtlab does not write) or target
//! other kernels; the page format is small and documented in
//! `events/header_page` and `events/header_event`.

#![forbid(unsafe_code)]

pub mod causes;
pub mod costs;
pub mod decode;
pub mod error;
pub mod format;
pub mod gantt;
pub mod jobs;
pub mod perfetto;
pub mod recorder;
pub mod schedule;
pub mod session;
pub mod trace;

pub use causes::{
    attribute, CauseKind, JobKernel, JobWindow, MissesByCause, SetThreads, ThreadClass,
};
pub use error::TraceError;
pub use recorder::{check_available, Losses, Recorded, Recording};
pub use schedule::Schedule;
pub use session::{KernelTrace, Traced};
pub use trace::Trace;

pub use rtlab_model::kernel_trace::{KernelTraceSummary, MissCause, TraceSummary};

/// A finished recording, decoded, with every job's causes.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// What the recorder wrote and lost.
    pub recorded: Recorded,
    /// The decoded trace's facts.
    pub events: usize,
    /// Pages the kernel flagged as following lost events.
    pub pages_after_loss: u64,
    /// Decoding stopped at [`trace::MAX_EVENTS`].
    pub truncated: bool,
    /// Per job, in the order given.
    pub jobs: Vec<JobKernel>,
    /// Misses by cause.
    pub misses: MissesByCause,
    /// Per task name: missed jobs whose largest share of lateness came
    /// from outside the set ([`causes::outside_the_set`]).
    pub disturbed_misses: std::collections::BTreeMap<String, u64>,
    /// The rebuilt schedule (for drawing).
    pub schedule: Schedule,
    /// The set's threads.
    pub set: SetThreads,
    /// IRQ line -> handler name.
    pub irq_names: std::collections::BTreeMap<i32, String>,
}

/// A job to explain: its window and whether it missed.
#[derive(Debug, Clone, Copy)]
pub struct JobToExplain {
    /// Its window.
    pub window: JobWindow,
    /// Missed its deadline.
    pub missed: bool,
}

/// Decodes the recording and attributes every job.
pub fn analyse(
    recorded: Recorded,
    set: SetThreads,
    jobs: &[JobToExplain],
) -> Result<Analysis, TraceError> {
    let trace = Trace::load(&recorded.file)?;
    let watched: Vec<i32> = set.tasks.iter().filter_map(|(_, t)| *t).collect();
    let schedule = Schedule::build(&trace.events, &watched);
    let mut misses = MissesByCause::default();
    let mut disturbed_misses = std::collections::BTreeMap::new();
    let explained: Vec<JobKernel> = jobs
        .iter()
        .map(|j| {
            let k = attribute(&schedule, &set, &j.window, j.missed);
            if j.missed {
                misses.add(&k);
                if causes::outside_the_set(&k.main_cause()) {
                    let name = set.tasks.get(j.window.task).map_or("?", |(n, _)| n);
                    *disturbed_misses.entry(name.to_string()).or_insert(0) += 1;
                }
            }
            k
        })
        .collect();
    Ok(Analysis {
        events: trace.events.len(),
        pages_after_loss: trace.pages_after_loss,
        truncated: trace.truncated,
        recorded,
        jobs: explained,
        misses,
        disturbed_misses,
        schedule,
        set,
        irq_names: trace.irq_names,
    })
}

impl Analysis {
    /// The JSON summary; `kept`: the trace file when the user keeps it.
    pub fn summary(&self, kept: Option<&str>) -> TraceSummary {
        let l = self.recorded.losses;
        TraceSummary {
            events: self.events as u64,
            pages: self.recorded.pages,
            lost_overrun: l.overrun,
            lost_dropped: l.dropped,
            pages_after_loss: self.pages_after_loss,
            pages_unwritten: l.pages_unwritten,
            truncated: self.truncated,
            steal_ns: self.recorded.steal_ns,
            jobs_untraced: self.jobs.iter().filter(|j| j.untraced).count() as u64,
            kernel_preemptions: self.jobs.iter().map(|j| u64::from(j.preemptions)).sum(),
            kernel_switches: self.jobs.iter().map(|j| u64::from(j.switches)).sum(),
            inferred_switches: self.schedule.inferred_switches,
            misses_by_cause: self.misses.lines(),
            file: kept.map(str::to_string),
            disturbed_misses: self.disturbed_misses.clone(),
        }
    }
}
