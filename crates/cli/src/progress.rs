//! The progress line of a real-time run on a terminal: elapsed / total,
//! and for task sets the jobs and misses so far (`indicatif`), fed by a job
//! sink. Nothing is drawn when standard error is not a terminal, so scripts
//! and tests see no change.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use rtlab_model::Nanos;
use rtlab_rt::executor::{JobRecord, JobSink};

/// Jobs and misses counted as the records arrive.
#[derive(Default)]
struct Counts {
    jobs: AtomicU64,
    misses: AtomicU64,
}

/// The line; dropping it clears it.
pub struct RunProgress {
    bar: ProgressBar,
    /// `None` for a measurement without jobs (`latency`): time only.
    counts: Option<Arc<Counts>>,
}

/// The job sink that feeds a [`RunProgress`].
pub struct CountingSink(Arc<Counts>);

impl JobSink for CountingSink {
    fn job(&mut self, job: &JobRecord, ended: Nanos) -> std::io::Result<()> {
        self.0.jobs.fetch_add(1, Ordering::Relaxed);
        if job.missed(ended) {
            self.0.misses.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl RunProgress {
    /// A line for a run of `total` on a terminal, with the sink that
    /// counts its jobs; `None` when standard error is not a terminal.
    pub fn start(total: Nanos) -> Option<(RunProgress, CountingSink)> {
        let counts = Arc::new(Counts::default());
        let progress = RunProgress::line(total, Some(counts.clone()))?;
        Some((progress, CountingSink(counts)))
    }

    /// A line of elapsed time only (a measurement without jobs, such as
    /// `latency`); `None` when standard error is not a terminal.
    pub fn timed(total: Nanos) -> Option<RunProgress> {
        RunProgress::line(total, None)
    }

    fn line(total: Nanos, counts: Option<Arc<Counts>>) -> Option<RunProgress> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let total_ms = total.as_ns() / 1_000_000;
        let bar = ProgressBar::new(total_ms.max(1));
        if let Ok(style) = ProgressStyle::with_template("{bar:30} {elapsed_precise} of {msg}") {
            bar.set_style(style);
        }
        let progress = RunProgress { bar, counts };
        progress.tick(total);
        Some(progress)
    }

    fn tick(&self, total: Nanos) {
        self.bar.set_message(match &self.counts {
            Some(counts) => format!(
                "{total}: {} jobs, {} missed",
                counts.jobs.load(Ordering::Relaxed),
                counts.misses.load(Ordering::Relaxed)
            ),
            None => total.to_string(),
        });
    }

    /// Redraws every 200 ms on its own thread until [`Following::finish`].
    pub fn follow(self, total: Nanos) -> Following {
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        let started = std::time::Instant::now();
        let thread = std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                self.bar.set_position(started.elapsed().as_millis() as u64);
                self.tick(total);
                std::thread::sleep(Duration::from_millis(200));
            }
            self.bar.finish_and_clear();
        });
        Following { done, thread }
    }
}

/// A progress line being redrawn.
pub struct Following {
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Following {
    /// Clears the line (before the run's summary is printed).
    pub fn finish(self) {
        self.done.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}
