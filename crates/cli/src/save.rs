//! `--save` / `--store PATH`: wiring between a command and the results
//! store (crate `rtlab-store`). The store is opened before the command
//! measures anything (a bad path fails at once); rows stream into the
//! store's spool as they come; the run is written after the command has
//! printed its result, so a store that cannot be written loses nothing:
//! the error says why and rtlab exits 1.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context;
use clap::Args;
use rtlab_model::{printable, Nanos, TaskSet};
use rtlab_rt::executor::{JobRecord, JobSink};
use rtlab_store::{NewRun, RunKind, RunStatus, RunWriter, Store};

/// Simulated jobs stored per run at most (about 60 bytes each in the
/// database); later jobs are counted, not stored.
pub const MAX_SAVED_SIM_JOBS: u64 = 1_000_000;

/// Latency samples stored per run at most (about 40 bytes each in the
/// database); later samples are counted, not stored.
pub const MAX_SAVED_SAMPLES: u64 = 1_000_000;

/// `--save` and `--store PATH`, on every command that measures, runs,
/// simulates or sweeps.
#[derive(Debug, Clone, Default, Args)]
pub struct SaveFlags {
    /// Save the run in the results store (see `rtlab results`; the guide "Results store").
    #[arg(long)]
    pub save: bool,
    /// The results database to save in (implies --save; default: $RTLAB_STORE, else
    /// $XDG_DATA_HOME/rtlab/results.sqlite, else ~/.local/share/rtlab/results.sqlite).
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
}

impl SaveFlags {
    /// The database these flags name (`--store`, else the default).
    pub fn path(&self) -> PathBuf {
        self.store.clone().unwrap_or_else(Store::default_path)
    }

    /// Opens the store and starts a run when saving was asked for. `taskset`
    /// is the task-set argument (a path or `builtin:NAME`) whose text is
    /// stored.
    pub fn begin(&self, kind: RunKind, taskset: Option<&str>) -> anyhow::Result<Option<Saver>> {
        if !self.save && self.store.is_none() {
            return Ok(None);
        }
        let store = Store::open(self.path())?;
        let host = serde_json::to_value(rtlab_host::platform::host_metadata())?;
        let writer = store.begin(NewRun {
            rtlab_version: env!("CARGO_PKG_VERSION").to_string(),
            command: command_line(),
            kind,
            taskset: taskset.map(taskset_text).transpose()?,
            host,
        })?;
        Ok(Some(Saver {
            path: store.path().to_path_buf(),
            writer: Arc::new(Mutex::new(writer)),
            samples_left_out: 0,
            jobs_left_out: 0,
        }))
    }
}

/// The command line as typed, each argument quoted where a shell needs it
/// (`std::env::args` would panic on an argument that is not UTF-8).
fn command_line() -> String {
    shell_words::join(std::env::args_os().map(|a| a.to_string_lossy().into_owned()))
}

/// The text of a task set: the file as written, or a built-in as TOML.
fn taskset_text(spec: &str) -> anyhow::Result<String> {
    if spec.starts_with(rtlab_model::file::BUILTIN_PREFIX) {
        let set = rtlab_model::file::load(spec)?.set;
        return Ok(rtlab_model::file::to_toml_string(&set));
    }
    std::fs::read_to_string(spec).with_context(|| format!("--save: cannot read {spec}"))
}

/// A run being saved.
pub struct Saver {
    path: PathBuf,
    writer: Arc<Mutex<RunWriter>>,
    samples_left_out: u64,
    jobs_left_out: u64,
}

impl Saver {
    /// Takes the host's metadata again now that the measurement starts
    /// (after the wait for the CPU lock, during which another run may
    /// have had RT throttling off).
    pub fn measurement_starts(&self) {
        if let Ok(host) = serde_json::to_value(rtlab_host::platform::host_metadata()) {
            self.writer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .set_host(host);
        }
    }

    /// A job sink for the executor's writer thread that adds every job as a
    /// row.
    pub fn job_sink(&self, set: &TaskSet) -> Box<dyn JobSink + Send> {
        Box::new(StoreSink {
            writer: Arc::clone(&self.writer),
            set: set.clone(),
        })
    }

    /// A tap for the simulator's job records (`Simulator::on_job`) that
    /// adds the first [`MAX_SAVED_SIM_JOBS`] as rows.
    pub fn sim_job_tap(&self, set: &TaskSet) -> impl FnMut(&JobRecord) + 'static {
        // Weak: the simulator keeps the tap after the run, and finish needs
        // the writer back.
        let writer = Arc::downgrade(&self.writer);
        let set = set.clone();
        move |record| {
            let Some(writer) = writer.upgrade() else {
                return;
            };
            let mut w = writer.lock().unwrap_or_else(PoisonError::into_inner);
            if w.job_count() < MAX_SAVED_SIM_JOBS {
                // A spool that cannot be written fails again at finish,
                // which reports it.
                let _ = w.job(&rtlab_store::JobRow::from((record, &set)));
            }
        }
    }

    /// Saves the run's drawn schedule window with it (real and simulated
    /// spans; bounded by the store).
    pub fn schedule(&self, spans: Vec<rtlab_model::results::ScheduleSpan>) {
        self.lock().schedule(spans);
    }

    /// Job rows added so far.
    pub fn jobs_saved(&self) -> u64 {
        self.lock().job_count()
    }

    /// A tap for the latency series that adds the first
    /// [`MAX_SAVED_SAMPLES`] samples as rows.
    pub fn sample_tap(&self) -> rtlab_probe::latency::SeriesTap {
        let writer = Arc::clone(&self.writer);
        Box::new(move |thread, p| {
            let mut w = writer.lock().unwrap_or_else(PoisonError::into_inner);
            if w.sample_count() < MAX_SAVED_SAMPLES {
                // A spool that cannot be written fails again at finish,
                // which reports it.
                let _ = w.sample(&rtlab_report::sources::sample_row(thread, &p));
            }
        })
    }

    /// Notes samples that were measured but not stored.
    pub fn left_out(&mut self, samples: u64) {
        self.samples_left_out = samples;
    }

    /// Notes simulated jobs that were not stored.
    pub fn jobs_left_out(&mut self, jobs: u64) {
        self.jobs_left_out = jobs;
    }

    /// Writes the run and says `saved as run N in PATH` on stderr.
    pub fn finish(self, document: &serde_json::Value, interrupted: bool) -> anyhow::Result<()> {
        let status = if interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        };
        let writer = Arc::try_unwrap(self.writer)
            .map_err(|_| anyhow::anyhow!("--save: the job writer is still running"))?
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if self.jobs_left_out > 0 {
            crate::setup::say(&format!(
                "note: the results store keeps the first {MAX_SAVED_SIM_JOBS} simulated jobs; {} more were simulated (the summary counts them)",
                self.jobs_left_out
            ));
        }
        if self.samples_left_out > 0 {
            crate::setup::say(&format!(
                "note: the results store keeps the first {MAX_SAVED_SAMPLES} samples; {} more were measured (the statistics count them)",
                self.samples_left_out
            ));
        }
        let id = writer.finish(document, status)?;
        crate::setup::say(&format!(
            "saved as run {id} in {}",
            printable(&self.path.display().to_string())
        ));
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RunWriter> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Saves a command's document with no rows, when asked.
pub fn save_document(
    flags: &SaveFlags,
    kind: RunKind,
    taskset: Option<&str>,
    document: &serde_json::Value,
    interrupted: bool,
) -> anyhow::Result<()> {
    match flags.begin(kind, taskset)? {
        Some(saver) => saver.finish(document, interrupted),
        None => Ok(()),
    }
}

/// `rtlab run`'s jobs into the store, on the executor's writer thread.
struct StoreSink {
    writer: Arc<Mutex<RunWriter>>,
    set: TaskSet,
}

impl JobSink for StoreSink {
    fn job(&mut self, j: &JobRecord, _ended: Nanos) -> std::io::Result<()> {
        let row = rtlab_store::JobRow::from((j, &self.set));
        self.writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .job(&row)
            .map_err(std::io::Error::other)
    }
}

/// `--store PATH` for the results commands.
#[derive(Debug, Clone, Args)]
pub struct StoreArg {
    /// The results database (default: $RTLAB_STORE, else
    /// $XDG_DATA_HOME/rtlab/results.sqlite, else ~/.local/share/rtlab/results.sqlite).
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
}

impl StoreArg {
    /// The database these flags name.
    pub fn path(&self) -> PathBuf {
        self.store.clone().unwrap_or_else(Store::default_path)
    }

    /// Opens the database these flags name to change it (`results rm`),
    /// creating it when it is not there.
    pub fn open(&self) -> anyhow::Result<Store> {
        Ok(Store::open(self.path())?)
    }

    /// Opens the database these flags name to read it, creating nothing
    /// (`results list|show|diff|export`, `report`).
    pub fn open_read_only(&self) -> Result<Store, rtlab_store::StoreError> {
        Store::open_read_only(self.path())
    }
}
