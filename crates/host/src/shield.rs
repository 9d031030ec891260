//! `--isolate`: a shield for the measured CPUs, as `cset shield` and
//! `tuna --isolate` make one. For the run's length every thread and
//! interrupt that may be moved is moved off the measured CPUs; what cannot
//! be moved (per-CPU kernel threads, per-CPU or kernel-managed interrupts)
//! is counted and said.
//!
//! On cgroup v1 (the cpuset hierarchy at [`CPUSET_ROOT`]) the shield is a
//! cpuset `rtlab-shield-PID` holding the *other* CPUs, into which every
//! thread of the root cpuset is moved but this process's own (its task
//! threads stay in the root, free to use the measured CPUs); a per-CPU
//! kernel thread (`PF_NO_SETAFFINITY`) is refused by the kernel and stays.
//! Threads created while the shield is up inherit it. Every interrupt
//! whose `/proc/irq/N/smp_affinity_list` includes a measured CPU gets the
//! list without them (or the other CPUs), and `/proc/irq/default_smp_affinity`
//! the mask of the other CPUs, for interrupts set up meanwhile.
//!
//! Every change goes through the [`crate::kernel_state`] ledger: recorded
//! before it is made, undone when the shield is dropped, and after a
//! SIGKILL by the next rtlab command (or `rtlab doctor --restore`): the
//! cpuset's threads are moved back to the root cpuset (their own affinity
//! masks, kept by the kernel since Linux 6.2 as `user_cpus_ptr`, apply
//! again) and it is removed; each interrupt's list is written back while it
//! still reads what rtlab set.
//!
//! cgroup v2 is refused with an explanation (its equivalent, a child with
//! `cpuset.cpus.partition = isolated`, could not be tested on the machine
//! kind rtlab is developed on), as are: not root, another tool's cpusets in
//! the hierarchy (cset's `system`/`user`, docker, systemd's), this process
//! outside the root cpuset, and measured CPUs that are every CPU (nowhere
//! to move the rest). Nothing is changed before these are checked.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rtlab_model::disturbance::ShieldSummary;

use crate::cpuset::{cgroup_version, CgroupVersion, CPUSET_ROOT};
use crate::error::HostError;
use crate::kernel_state::{self, SettingGuard, StateError};
use crate::platform::sources::parse_cpu_list;

/// The name of rtlab's shield cpusets, followed by the owner's pid.
pub const SHIELD_PREFIX: &str = "rtlab-shield-";

/// Passes over the root cpuset's threads when raising a shield.
const MOVE_PASSES: usize = 5;

/// Where interrupts' affinities are.
const IRQ_ROOT: &str = "/proc/irq";

/// `PF_KTHREAD` in a thread's `stat` flags (field 9).
const PF_KTHREAD: u64 = 0x0020_0000;
/// `PF_NO_SETAFFINITY`: the kernel refuses to move the thread.
const PF_NO_SETAFFINITY: u64 = 0x0400_0000;

/// A thread the shield would move or cannot move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldThread {
    /// The thread.
    pub tid: i32,
    /// Its name.
    pub name: String,
    /// A kernel thread.
    pub kernel: bool,
}

/// An interrupt the shield would move or cannot move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldIrq {
    /// Its number.
    pub irq: u32,
    /// Its affinity list now.
    pub now: String,
    /// The list the shield writes.
    pub moved_to: String,
    /// Why it cannot be moved (empty: it can, as far as rtlab can tell
    /// before trying).
    pub pinned: String,
}

/// What a shield of some CPUs would do (`rtlab doctor` shows it; [`Shield::raise`]
/// does it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShieldPlan {
    /// The CPUs to shield.
    pub cpus: Vec<usize>,
    /// Where everything else goes.
    pub rest: Vec<usize>,
    /// Threads of the root cpuset that can be moved.
    pub movable: Vec<ShieldThread>,
    /// Per-CPU kernel threads on a shielded CPU that cannot.
    pub pinned: Vec<ShieldThread>,
    /// Interrupts allowed on a shielded CPU.
    pub irqs: Vec<ShieldIrq>,
}

/// `0,1,3`.
fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `3` for CPUs 0 and 1: a CPU mask as `/proc/irq/default_smp_affinity`
/// reads back (hex, 32-bit words separated by commas, the highest
/// unpadded), so that the ledger finds its own value when it restores.
/// `possible`: how many CPUs the kernel's masks hold (its width).
pub fn cpu_mask(cpus: &[usize], possible: usize) -> String {
    let words = possible.max(1).div_ceil(32);
    let mut w = vec![0u32; words];
    for &c in cpus.iter().filter(|&&c| c < words * 32) {
        w[c / 32] |= 1 << (c % 32);
    }
    let top_digits = (possible.max(1) - (words - 1) * 32).div_ceil(4);
    w.iter()
        .rev()
        .enumerate()
        .map(|(i, x)| {
            if i == 0 {
                format!("{x:0top_digits$x}")
            } else {
                format!("{x:08x}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// How many CPUs the kernel's masks hold (`/sys/devices/system/cpu/possible`).
fn possible_cpus() -> usize {
    fs::read_to_string("/sys/devices/system/cpu/possible")
        .map(|l| parse_cpu_list(l.trim()).iter().max().map_or(1, |m| m + 1))
        .unwrap_or(1)
}

/// The affinity an interrupt allowed on `now` gets: `now` without the
/// shielded CPUs, or every other CPU when nothing is left. `None` when it
/// does not touch a shielded CPU.
pub fn irq_list_without(now: &[usize], shielded: &[usize], rest: &[usize]) -> Option<Vec<usize>> {
    if !now.iter().any(|c| shielded.contains(c)) {
        return None;
    }
    let left: Vec<usize> = now
        .iter()
        .copied()
        .filter(|c| !shielded.contains(c))
        .collect();
    Some(if left.is_empty() { rest.to_vec() } else { left })
}

/// A thread's `stat` flags (field 9) and name.
fn thread_flags(proc: &Path, tid: i32) -> Option<(u64, String)> {
    let text = fs::read_to_string(proc.join(tid.to_string()).join("stat")).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let flags = text
        .get(close + 1..)?
        .split_whitespace()
        .nth(9 - 3)?
        .parse()
        .ok()?;
    Some((flags, name))
}

/// The threads of this process (they stay in the root cpuset).
fn own_threads() -> Vec<i32> {
    fs::read_dir("/proc/self/task")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// A thread's allowed CPUs (`Cpus_allowed_list` of its status).
fn allowed_of(proc: &Path, tid: i32) -> Vec<usize> {
    fs::read_to_string(proc.join(tid.to_string()).join("status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|l| parse_cpu_list(l.trim()))
        })
        .unwrap_or_default()
}

impl ShieldPlan {
    /// What shielding `cpus` would move, and what it could not; checks
    /// everything that refuses a shield first (see the module docs).
    pub fn new(cpus: &[usize]) -> Result<ShieldPlan, HostError> {
        let refuse = |why: String| HostError::Shield {
            cpus: cpu_list(cpus),
            why,
        };
        let online = crate::platform::online_cpus();
        let rest: Vec<usize> = online
            .iter()
            .copied()
            .filter(|c| !cpus.contains(c))
            .collect();
        if let Some(c) = cpus.iter().find(|c| !online.contains(c)) {
            return Err(refuse(format!("CPU {c} is not online")));
        }
        if rest.is_empty() {
            return Err(refuse(format!(
                "the measured CPUs are every CPU of this machine ({}): there is no CPU to move the rest to; \
                 measure on fewer CPUs (--cpu N or --cpus LIST); nothing was changed",
                cpu_list(&online)
            )));
        }
        if rtlab_sys::resource::geteuid() != 0 {
            return Err(refuse(
                "moving other users' threads and interrupts needs root; run as root or without --isolate; \
                 nothing was changed"
                    .into(),
            ));
        }
        match cgroup_version() {
            CgroupVersion::V1 => {}
            CgroupVersion::V2 => {
                return Err(refuse(
                    "this machine has cgroup v2, where a shield is a child cgroup with `cpuset.cpus.partition = \
                     isolated`; rtlab shields with cgroup v1 only (the hierarchy it was tested on); nothing was \
                     changed (by hand: `cset shield`, or `tuna --cpus LIST --isolate`)"
                        .into(),
                ))
            }
            CgroupVersion::Missing => {
                return Err(refuse(format!(
                    "no cpuset controller is mounted ({CPUSET_ROOT} is missing); nothing was changed"
                )))
            }
        }
        let here = fs::read_to_string("/proc/self/cpuset").unwrap_or_else(|_| "/".into());
        if here.trim() != "/" {
            return Err(refuse(format!(
                "this process runs in cpuset {} (set up by another tool); run rtlab from the root cpuset; \
                 nothing was changed",
                here.trim()
            )));
        }
        if let Some(theirs) = foreign_cpusets(Path::new(CPUSET_ROOT)).first() {
            return Err(refuse(format!(
                "{} exists: another tool owns this cpuset hierarchy (cset, docker, systemd, tuned); \
                 nothing was changed (`cset shield --reset` removes cset's)",
                theirs.display()
            )));
        }
        Ok(Self::of(
            cpus,
            &rest,
            Path::new(CPUSET_ROOT),
            Path::new("/proc"),
        ))
    }

    /// The plan over the hierarchy at `cpuset_root` and the threads under
    /// `proc` (no checks).
    fn of(cpus: &[usize], rest: &[usize], cpuset_root: &Path, proc: &Path) -> ShieldPlan {
        let own = own_threads();
        let mut plan = ShieldPlan {
            cpus: cpus.to_vec(),
            rest: rest.to_vec(),
            ..ShieldPlan::default()
        };
        let tasks = fs::read_to_string(cpuset_root.join("tasks")).unwrap_or_default();
        for tid in tasks
            .split_whitespace()
            .filter_map(|t| t.parse::<i32>().ok())
        {
            if own.contains(&tid) {
                continue;
            }
            let Some((flags, name)) = thread_flags(proc, tid) else {
                continue;
            };
            let t = ShieldThread {
                tid,
                name,
                kernel: flags & PF_KTHREAD != 0,
            };
            if flags & PF_NO_SETAFFINITY != 0 {
                if allowed_of(proc, tid).iter().any(|c| cpus.contains(c)) {
                    plan.pinned.push(t);
                }
            } else {
                plan.movable.push(t);
            }
        }
        plan.irqs = irqs(Path::new(IRQ_ROOT), cpus, rest);
        plan
    }

    /// One paragraph per kind: what would move, what could not.
    pub fn describe(&self) -> Vec<String> {
        let names = |ts: &[ShieldThread]| {
            let mut n: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
            n.sort_unstable();
            n.dedup();
            let shown: Vec<&str> = n.iter().take(8).copied().collect();
            let more = n.len().saturating_sub(shown.len());
            format!(
                "{}{}",
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more names")
                } else {
                    String::new()
                }
            )
        };
        let moved_irqs: Vec<String> = self
            .irqs
            .iter()
            .filter(|i| i.pinned.is_empty())
            .map(|i| format!("{} ({} -> {})", i.irq, i.now, i.moved_to))
            .collect();
        let pinned_irqs: Vec<String> = self
            .irqs
            .iter()
            .filter(|i| !i.pinned.is_empty())
            .map(|i| format!("{} ({})", i.irq, i.pinned))
            .collect();
        let mut out = vec![
            format!(
                "{} threads would move to CPU {}: {}",
                self.movable.len(),
                cpu_list(&self.rest),
                names(&self.movable)
            ),
            format!(
                "{} per-CPU kernel threads stay (the kernel does not move them): {}",
                self.pinned.len(),
                names(&self.pinned)
            ),
            format!(
                "{} interrupts would move: {}",
                moved_irqs.len(),
                if moved_irqs.is_empty() {
                    "none".into()
                } else {
                    moved_irqs.join(", ")
                }
            ),
        ];
        if !pinned_irqs.is_empty() {
            out.push(format!(
                "{} interrupts stay: {}",
                pinned_irqs.len(),
                pinned_irqs.join(", ")
            ));
        }
        out.push(
            "the timer tick, IPIs and per-CPU work (RCU callbacks, vmstat, kworker/N) stay on every CPU: \
             only isolcpus/nohz_full at boot remove those"
                .into(),
        );
        out
    }
}

/// The child cpusets under `root` that are not rtlab's.
fn foreign_cpusets(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter(|e| !e.file_name().to_string_lossy().starts_with("rtlab-"))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The interrupts under `root` allowed on a shielded CPU.
fn irqs(root: &Path, cpus: &[usize], rest: &[usize]) -> Vec<ShieldIrq> {
    let Ok(entries) = fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let Some(irq) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(now) = fs::read_to_string(e.path().join("smp_affinity_list")) else {
            continue;
        };
        let now = now.trim().to_string();
        let Some(to) = irq_list_without(&parse_cpu_list(&now), cpus, rest) else {
            continue;
        };
        // One whose affinity file is read-only is managed by its driver;
        // others the kernel may still refuse when written (then counted as
        // pinned).
        let pinned = if fs::metadata(e.path().join("smp_affinity_list"))
            .map(|m| m.permissions().readonly())
            .unwrap_or(true)
        {
            "its affinity is read-only (managed by its driver)".to_string()
        } else {
            String::new()
        };
        out.push(ShieldIrq {
            irq,
            now,
            moved_to: cpu_list(&to),
            pinned,
        });
    }
    out.sort_by_key(|i| i.irq);
    out
}

/// The shield in force in this process, for the disturbance account.
static IN_FORCE: Mutex<Option<ShieldSummary>> = Mutex::new(None);

/// What the shield in force moved (`None`: no shield).
pub fn in_force() -> Option<ShieldSummary> {
    IN_FORCE.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The threads in this process's shield cpuset now (confined to the
/// other CPUs); empty without a shield.
pub fn confined_threads() -> Vec<i32> {
    if in_force().is_none() {
        return Vec::new();
    }
    let dir = Path::new(CPUSET_ROOT).join(format!("{SHIELD_PREFIX}{}", std::process::id()));
    fs::read_to_string(dir.join("tasks"))
        .map(|t| {
            t.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// A shield in force; dropping it puts everything back.
#[derive(Debug)]
pub struct Shield {
    summary: ShieldSummary,
    notes: Vec<String>,
    cpuset_dir: PathBuf,
    // Dropped in this order: the interrupts' affinities, then the cpuset
    // (the reverse of raising).
    irq_guards: Vec<SettingGuard>,
    _default_irq: Option<SettingGuard>,
    _cpuset: Option<SettingGuard>,
}

impl Shield {
    /// Raises the shield of `cpus` ([`ShieldPlan::new`] refuses first).
    pub fn raise(cpus: &[usize]) -> Result<Shield, HostError> {
        let plan = ShieldPlan::new(cpus)?;
        let fail = |why: String| HostError::Shield {
            cpus: cpu_list(cpus),
            why,
        };
        let state_error = |e: StateError| match e {
            StateError::HeldByLive { .. } | StateError::LeftChanged { .. } => HostError::from(e),
            other => fail(other.to_string()),
        };
        let ledger = kernel_state::ledger().map_err(state_error)?;
        let root = PathBuf::from(CPUSET_ROOT);
        let dir = root.join(format!("{SHIELD_PREFIX}{}", std::process::id()));
        let mut shield = Shield {
            summary: ShieldSummary {
                cpus: cpus.to_vec(),
                ..ShieldSummary::default()
            },
            notes: Vec::new(),
            cpuset_dir: dir.clone(),
            irq_guards: Vec::new(),
            _default_irq: None,
            _cpuset: None,
        };
        // From here on, Drop undoes whatever was done.
        shield._cpuset = Some(ledger.create_cgroup(&dir).map_err(state_error)?);
        let mems = fs::read_to_string(root.join("cpuset.mems"))
            .map_err(|e| fail(format!("read {}/cpuset.mems: {e}", root.display())))?;
        for (file, value) in [
            ("cpuset.cpus", cpu_list(&plan.rest)),
            ("cpuset.mems", mems.trim().to_string()),
        ] {
            fs::write(dir.join(file), &value).map_err(|e| {
                fail(format!(
                    "write `{value}` to {}: {e}",
                    dir.join(file).display()
                ))
            })?;
        }
        let tasks = dir.join("tasks");
        let mut refused: Vec<i32> = Vec::new();
        let mut movable: Vec<i32> = plan.movable.iter().map(|t| t.tid).collect();
        // A thread that forks while the others are moved leaves its child
        // in the root cpuset: pass again over what is still there, until
        // nothing movable is left (a few passes; `cset shield` does the
        // same).
        for _ in 0..MOVE_PASSES {
            for &tid in &movable {
                match fs::write(&tasks, tid.to_string()) {
                    Ok(()) => shield.summary.threads_moved += 1,
                    // Ended meanwhile: nothing to move.
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                    Err(_) => refused.push(tid),
                }
            }
            let again = ShieldPlan::of(cpus, &plan.rest, &root, Path::new("/proc"));
            movable = again
                .movable
                .iter()
                .map(|t| t.tid)
                .filter(|t| !refused.contains(t))
                .collect();
            if movable.is_empty() {
                break;
            }
        }
        shield.summary.threads_pinned = plan.pinned.len() + refused.len();
        for i in &plan.irqs {
            if !i.pinned.is_empty() {
                shield.summary.irqs_pinned += 1;
                continue;
            }
            let path = Path::new(IRQ_ROOT)
                .join(i.irq.to_string())
                .join("smp_affinity_list");
            match ledger.set_value(&path, &i.moved_to) {
                Ok(g) => {
                    shield.irq_guards.push(g);
                    shield.summary.irqs_moved += 1;
                }
                Err(StateError::Apply { .. }) => shield.summary.irqs_pinned += 1,
                Err(e) => return Err(state_error(e)),
            }
        }
        let default = Path::new(IRQ_ROOT).join("default_smp_affinity");
        if default.exists() {
            match ledger.set_value(&default, &cpu_mask(&plan.rest, possible_cpus())) {
                Ok(g) => shield._default_irq = Some(g),
                Err(e @ StateError::Apply { .. }) => shield.notes.push(format!(
                    "new interrupts may still land on the shielded CPUs: {e}"
                )),
                Err(e) => return Err(state_error(e)),
            }
        }
        if shield.summary.irqs_pinned > 0 {
            shield.notes.push(format!(
                "{} interrupts could not be moved (per-CPU, or managed by their driver)",
                shield.summary.irqs_pinned
            ));
        }
        *IN_FORCE.lock().unwrap_or_else(|e| e.into_inner()) = Some(shield.summary.clone());
        Ok(shield)
    }

    /// What it moved.
    pub fn summary(&self) -> &ShieldSummary {
        &self.summary
    }

    /// One line for the user: `shielded CPU 1: moved 212 threads and 14
    /// interrupts to CPU 0; 9 per-CPU kernel threads stay`.
    pub fn line(&self) -> String {
        let s = &self.summary;
        let rest: Vec<usize> = crate::platform::online_cpus()
            .into_iter()
            .filter(|c| !s.cpus.contains(c))
            .collect();
        let mut line = format!(
            "shielded CPU {}: moved {} threads and {} interrupts to CPU {}; {} per-CPU kernel threads stay",
            cpu_list(&s.cpus),
            s.threads_moved,
            s.irqs_moved,
            cpu_list(&rest),
            s.threads_pinned
        );
        for n in &self.notes {
            line.push_str("; ");
            line.push_str(n);
        }
        line
    }
}

impl Drop for Shield {
    fn drop(&mut self) {
        *IN_FORCE.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.irq_guards.clear();
        self._default_irq = None;
        // Threads forked into the cpuset while it is emptied would keep it
        // busy: empty it a few times before the guard removes it.
        let root_tasks = Path::new(CPUSET_ROOT).join("tasks");
        for _ in 0..3 {
            let Ok(tasks) = fs::read_to_string(self.cpuset_dir.join("tasks")) else {
                break;
            };
            if tasks.trim().is_empty() {
                break;
            }
            for tid in tasks.split_whitespace() {
                let _ = fs::write(&root_tasks, tid);
            }
        }
        self._cpuset = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_keeps_its_other_cpus_or_gets_every_other_one() {
        assert_eq!(irq_list_without(&[0, 1], &[1], &[0]), Some(vec![0]));
        assert_eq!(irq_list_without(&[1], &[1], &[0, 2]), Some(vec![0, 2]));
        assert_eq!(irq_list_without(&[0], &[1], &[0]), None);
    }

    #[test]
    fn masks_are_hex_words_high_first() {
        assert_eq!(cpu_mask(&[0], 2), "1");
        assert_eq!(cpu_mask(&[0, 1], 2), "3");
        assert_eq!(cpu_mask(&[4], 8), "10");
        assert_eq!(cpu_mask(&[0, 33], 40), "02,00000001");
    }

    #[test]
    fn cpusets_not_named_rtlab_are_another_tools() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir(tmp.path().join("rtlab-edf-12")).unwrap();
        fs::create_dir(tmp.path().join("rtlab-shield-13")).unwrap();
        fs::write(tmp.path().join("tasks"), "1\n").unwrap();
        assert!(foreign_cpusets(tmp.path()).is_empty());
        fs::create_dir(tmp.path().join("system")).unwrap();
        assert_eq!(foreign_cpusets(tmp.path()), vec![tmp.path().join("system")]);
    }

    /// Over a made-up /proc: a user thread moves, a per-CPU kernel thread
    /// bound to the shielded CPU stays, one bound elsewhere is not listed.
    #[test]
    fn the_plan_moves_what_the_kernel_lets_move() {
        let tmp = tempfile::tempdir().unwrap();
        let proc = tmp.path().join("proc");
        let stat = |tid: i32, name: &str, flags: u64, allowed: &str| {
            let dir = proc.join(tid.to_string());
            fs::create_dir_all(&dir).unwrap();
            fs::write(
                dir.join("stat"),
                format!("{tid} ({name}) S 2 0 0 0 -1 {flags} 0 0"),
            )
            .unwrap();
            fs::write(
                dir.join("status"),
                format!("Name:\t{name}\nCpus_allowed_list:\t{allowed}\n"),
            )
            .unwrap();
        };
        stat(100, "cc1", 0x400000, "0-1");
        stat(7, "ksoftirqd/1", PF_KTHREAD | PF_NO_SETAFFINITY, "1");
        stat(8, "ksoftirqd/0", PF_KTHREAD | PF_NO_SETAFFINITY, "0");
        fs::write(tmp.path().join("tasks"), "100\n7\n8\n").unwrap();
        let plan = ShieldPlan::of(&[1], &[0], tmp.path(), &proc);
        assert_eq!(plan.movable.len(), 1);
        assert_eq!(plan.movable[0].name, "cc1");
        assert_eq!(plan.pinned.len(), 1);
        assert_eq!(plan.pinned[0].name, "ksoftirqd/1");
        assert!(plan.describe()[0].starts_with("1 threads would move to CPU 0: cc1"));
    }
}
