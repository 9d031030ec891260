//! Runs a task set under rt-app (`rtlab compare --with rt-app`) with the
//! settings `rtlab run` uses: the same thread policies (SCHED_DEADLINE
//! budgets fitted to the same admission limit), the same CPU (for EDF the
//! same kind of exclusive cpuset, which rt-app joins before it starts), RT
//! throttling off when `--no-rt-throttling` asks, pages locked unless
//! `--no-mlock`.
//!
//! The workload and rt-app's logs live in a temporary directory removed
//! afterwards. rt-app always ends: it stops itself at `duration`; if it has
//! not said its calibration within [`CALIBRATION_LIMIT`], or not exited by
//! `duration + GRACE` after it did, or when `interrupt` is set (Ctrl-C),
//! it gets SIGINT (rt-app then stops its threads and flushes its logs) and,
//! after another [`STOP_GRACE`], SIGKILL; it is always reaped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rtlab_model::{Nanos, TaskSet};

use super::export::{export_with_policies, Calibration, ExportOptions};
use super::log;
use super::summary::{summarize, RtAppRun};
use crate::error::RtError;
use crate::executor::{fit_to_admission, thread_policies, RunConfig};
use rtlab_host::cpuset::ExclusiveCpuset;
use rtlab_host::policy::{self, Policy, RtThrottling, RtThrottlingOff};
use rtlab_sys::signal::send_signal;

/// How long rt-app may take beyond `duration` once it has calibrated
/// (thread set-up, the last period) before it is stopped.
pub const GRACE: Duration = Duration::from_secs(30);

/// How long rt-app's own calibration may take before it is stopped. It
/// repeats its measurement of the busy loop until two agree, which on a
/// noisy virtual machine took from 3 s to over 15 s (`rt-app` 1.0 on the
/// project's 2-CPU VM, `timeout 15 rt-app w.json`: 3 runs in 12 past 15 s),
/// so the run's own deadline starts only when it has said its result.
pub const CALIBRATION_LIMIT: Duration = Duration::from_secs(120);

/// How long rt-app has to exit after SIGINT before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(3);

/// The log basename rtlab gives rt-app.
const BASENAME: &str = "rtapp";

/// The `rt-app` on `PATH`, if any.
pub fn find_rtapp() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("rt-app"))
        .find(|candidate| candidate.is_file())
}

/// The one-line message when rt-app is missing.
pub const INSTALL_HINT: &str =
    "rt-app is not installed (on Debian/Ubuntu: `apt-get install rt-app`; or build scheduler-tools/rt-app)";

/// Runs `set` under rt-app at `binary` as `cfg` says (duration in whole
/// seconds), calibrated as `calibration` says (default: on the pinned CPU). Fails before rt-app starts when the policies, the cpuset or
/// the admission limit refuse the set, and afterwards when rt-app failed
/// or a thread's log is missing or malformed (with rt-app's last words).
pub fn run(
    set: &TaskSet,
    cfg: &RunConfig,
    binary: &Path,
    calibration: Option<Calibration>,
    interrupt: &AtomicBool,
) -> Result<RtAppRun, RtError> {
    let mut policies = thread_policies(set, cfg.policy, cfg.edf_margin)?;
    for p in &policies {
        p.validate()?;
    }
    let _throttling_off = if cfg.no_rt_throttling {
        Some(RtThrottlingOff::new()?)
    } else {
        None
    };
    fit_to_admission(set, cfg, RtThrottling::read().ok(), &mut policies)?;
    let dir = tempfile::Builder::new()
        .prefix("rtlab-rtapp-")
        .tempdir()
        .map_err(|e| fail(format!("cannot create a temporary directory: {e}")))?;
    let mut options = ExportOptions::new(cfg.cpu, cfg.duration);
    options.lock_pages = cfg.mlock;
    if let Some(c) = calibration {
        options.calibration = c;
    }
    options.logdir = dir.path().to_string_lossy().into_owned();
    options.log_basename = BASENAME.to_string();
    let exported = export_with_policies(set, &policies, &options)?;
    let workload = dir.path().join("workload.json");
    std::fs::write(&workload, exported.document.to_json_string())
        .map_err(|e| fail(format!("cannot write {}: {e}", workload.display())))?;
    let cpuset = match (cfg.policy.is_deadline(), cfg.cpu) {
        (true, Some(cpu)) => Some(ExclusiveCpuset::create(cpu)?),
        _ => None,
    };
    let output = dir.path().join("rt-app.out");
    let out_file = std::fs::File::create(&output)
        .map_err(|e| fail(format!("cannot create {}: {e}", output.display())))?;
    let err_file = out_file
        .try_clone()
        .map_err(|e| fail(format!("cannot open {}: {e}", output.display())))?;
    let mut command = match &cpuset {
        // The shell joins the cpuset, then becomes rt-app: every thread
        // rt-app starts is inside it before it becomes a deadline thread.
        Some(c) => {
            let mut sh = Command::new("/bin/sh");
            sh.arg("-c")
                .arg("echo $$ > \"$1\" && exec \"$2\" \"$3\"")
                .arg("sh")
                .arg(c.door().tasks_file())
                .arg(binary)
                .arg(&workload);
            sh
        }
        None => {
            let mut direct = Command::new(binary);
            direct.arg(&workload);
            direct
        }
    };
    command
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(err_file);
    let child = spawn_at_top_priority(&mut command)
        .map_err(|e| fail(format!("cannot start {}: {e}", binary.display())))?;
    let calibrating = matches!(options.calibration, Calibration::Cpu(_));
    let deadline = Deadline {
        calibrated_by: calibrating.then(|| Instant::now() + CALIBRATION_LIMIT),
        run: Duration::from(cfg.duration) + GRACE,
        output: &output,
    };
    let (status, stopped) = wait_or_stop(child, deadline, interrupt)?;
    let interrupted = stopped.is_some();
    drop(cpuset);
    let said = std::fs::read_to_string(&output).unwrap_or_default();
    let last_words = || {
        said.lines()
            .rev()
            .find(|l| l.contains("critical") || l.contains("rror"))
            .or_else(|| said.lines().last())
            .unwrap_or("no output")
            .trim()
            .to_string()
    };
    if !interrupted && !status.success() {
        return Err(fail(format!("exited with {status}: {}", last_words())));
    }
    let calibrated = ns_per_loop(&said);
    if stopped == Some(Stopped::Calibrating) && !interrupt.load(Ordering::Relaxed) {
        return Err(fail(format!(
            "its calibration of the busy loop did not settle within {}s (it repeats until two \
             measurements agree, which a noisy machine can delay without end): give a fixed value \
             with --rtapp-calibration NS (a few tens of ns on a current CPU)",
            CALIBRATION_LIMIT.as_secs()
        )));
    }
    if interrupted && !interrupt.load(Ordering::Relaxed) {
        return Err(fail(format!(
            "did not stop within {}s of its end and was killed: a thread never finished its job, \
             so rt-app's `run` took longer than the period (its calibration said {} ns per loop; \
             give a fixed value with --rtapp-calibration NS)",
            GRACE.as_secs(),
            calibrated.map_or("?".to_string(), |n| n.to_string())
        )));
    }
    let mut tasks = Vec::with_capacity(set.tasks.len());
    for (i, task) in set.tasks.iter().enumerate() {
        let path = dir.path().join(format!("{BASENAME}-{}-{i}.log", task.name));
        let text = std::fs::read_to_string(&path).map_err(|e| {
            fail(format!(
                "no log for task `{}` ({}: {e}); rt-app said: {}",
                task.name,
                path.display(),
                last_words()
            ))
        })?;
        let parsed = log::parse(&text).map_err(|e| fail(format!("{}: {e}", path.display())))?;
        tasks.push(summarize(task, &parsed));
    }
    Ok(RtAppRun {
        binary: binary.display().to_string(),
        calibration: match options.calibration {
            Calibration::Cpu(cpu) => format!("CPU{cpu}"),
            Calibration::NsPerLoop(ns) => ns.to_string(),
        },
        ns_per_loop: calibrated,
        duration_ns: cfg.duration.as_ns(),
        interrupted,
        exit_status: status.code(),
        tasks,
    })
}

/// Starts `command` from a thread at SCHED_FIFO 99 (when this process
/// may; else as it is), so rt-app inherits it: its calibration, a
/// wall-clock measurement of its busy loop, is then not stretched by
/// other processes on the CPU. rt-app gives each of its threads its own
/// policy before the first job.
fn spawn_at_top_priority(command: &mut Command) -> std::io::Result<Child> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let _ = policy::set_current_thread_policy(&Policy::Fifo { priority: 99 });
                command.spawn()
            })
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the spawning thread panicked")))
    })
}

fn fail(why: String) -> RtError {
    RtError::RtApp { why }
}

/// When rt-app is stopped: by `calibrated_by` if it has not said its
/// calibration by then (when it calibrates), else `run` after it said it
/// (read from its `output`), or at once without calibration.
struct Deadline<'a> {
    calibrated_by: Option<Instant>,
    run: Duration,
    output: &'a Path,
}

/// Why rt-app was stopped before it exited by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    /// Still calibrating at [`Deadline::calibrated_by`].
    Calibrating,
    /// Past its run's deadline, or interrupted (Ctrl-C).
    Running,
}

/// Waits for `child` until `deadline`; on `interrupt` or past the
/// deadline sends SIGINT, then SIGKILL after [`STOP_GRACE`]. Always reaps.
/// Says why it stopped rt-app, if it did.
fn wait_or_stop(
    mut child: Child,
    deadline: Deadline<'_>,
    interrupt: &AtomicBool,
) -> Result<(std::process::ExitStatus, Option<Stopped>), RtError> {
    let mut stopping: Option<(Instant, Stopped)> = None;
    // The run's deadline, once known: at once without calibration.
    let mut run_ends = match deadline.calibrated_by {
        None => Some(Instant::now() + deadline.run),
        Some(_) => None,
    };
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok((status, stopping.map(|(_, why)| why))),
            Ok(None) => {}
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail(format!("cannot wait for rt-app: {e}")));
            }
        }
        let now = Instant::now();
        if run_ends.is_none() {
            let said = std::fs::read_to_string(deadline.output).unwrap_or_default();
            if ns_per_loop(&said).is_some() {
                run_ends = Some(now + deadline.run);
            }
        }
        let late = match (run_ends, deadline.calibrated_by) {
            (Some(end), _) => (now >= end).then_some(Stopped::Running),
            (None, Some(by)) => (now >= by).then_some(Stopped::Calibrating),
            (None, None) => None,
        };
        let why = if interrupt.load(Ordering::Relaxed) {
            Some(Stopped::Running)
        } else {
            late
        };
        match (stopping, why) {
            (None, Some(why)) => {
                let _ = send_signal(child.id(), libc::SIGINT);
                stopping = Some((now, why));
            }
            (Some((since, why)), _) if now.duration_since(since) >= STOP_GRACE => {
                let _ = child.kill();
                let status = child
                    .wait()
                    .map_err(|e| fail(format!("cannot reap rt-app: {e}")))?;
                return Ok((status, Some(why)));
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// rt-app's calibration result, `pLoad = 20ns`.
fn ns_per_loop(output: &str) -> Option<u64> {
    let at = output.find("pLoad = ")? + "pLoad = ".len();
    let digits: String = output[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// True when this process may run rt-app's real-time threads (root or
/// CAP_SYS_NICE).
pub fn may_run_realtime() -> bool {
    policy::has_cap_sys_nice()
}

/// True when `d` is a whole, non-zero number of seconds (rt-app's `duration`).
pub fn whole_seconds(d: Nanos) -> bool {
    d.as_ns().is_multiple_of(1_000_000_000) && !d.is_zero()
}
