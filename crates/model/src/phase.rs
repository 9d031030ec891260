//! Phases: windows of a run in which the task set changes (paper 001's
//! transient and permanent overloads, paper 002's extended Hartstone, mode
//! changes). One interpretation, shared by the simulator and the
//! real-thread executor ([`PhasePlan`]):
//!
//! * a job of task `i` released at `r` executes `C_i` scaled by the phase
//!   that contains `r` (`ceil(C * num / den)`, at least 1 ns), whatever
//!   the instant it runs: the transition rule "new set from the boundary"
//!   (Real & Crespo 2004, *Mode change protocols for real-time systems: a
//!   survey and a new proposal*): jobs released at or after a boundary use
//!   the new parameters, a job in flight finishes with its old C;
//! * a task a phase suspends releases nothing in `[start, end)`: a release
//!   `r` in it moves to `r + ceil((end - r) / T) * T`, its first period
//!   boundary at or after `end` (it keeps its period grid);
//! * a phase's own tasks release at `start + offset + k*T` while that is
//!   before `end`;
//! * a release's job index counts periods from the task's first possible
//!   release (`window start + offset`), so a suspended task's indices skip
//!   the releases it did not make.

use std::fmt;

use crate::task::{Task, TaskSet};
use crate::time::Nanos;

/// Why phases cannot be used as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PhaseError {
    /// `START..END:SCALE` that does not parse.
    #[error(
        "phase `{text}`: {why} (write START..END:xFACTOR or START..END:UTIL%, e.g. 30s..45s:120%)"
    )]
    Syntax {
        /// The text as written.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// A phase that starts when the run is over.
    #[error("phase {phase} starts at {start}, at or after the end of the run ({duration} long)")]
    AfterEnd {
        /// The phase as written.
        phase: String,
        /// Its start.
        start: Nanos,
        /// How long the run is.
        duration: Nanos,
    },
    /// Two phases that overlap.
    #[error("phase {phase} overlaps phase {other}: phases must not overlap")]
    Overlap {
        /// The later-starting phase.
        phase: String,
        /// The phase it overlaps.
        other: String,
    },
    /// A mode of a task-set file that starts when the run is over.
    #[error("mode `{mode}` starts at {start}, at or after the end of the run ({duration} long)")]
    ModeAfterEnd {
        /// The mode's name (printable).
        mode: String,
        /// Its start.
        start: Nanos,
        /// How long the run is.
        duration: Nanos,
    },
    /// A phase's own task is not a valid task, or a phase suspends a task
    /// the set does not have.
    #[error("phase {message}")]
    Task {
        /// What is wrong.
        message: String,
    },
}

/// How an overload phase changes execution times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Multiply every execution time by `num / den`.
    Factor {
        /// Numerator.
        num: u64,
        /// Denominator (> 0).
        den: u64,
    },
    /// Scale execution times so that the base set's utilization becomes this
    /// many parts per million (480000 for 48 %).
    UtilizationPpm(u64),
}

/// A window of simulated time `[start, end)` in which jobs released are
/// scaled, extra tasks are released and chosen tasks of the set are
/// suspended (overload phases, paper 001 and the extended Hartstone of
/// paper 002).
///
/// Replacing a task for the phase (another period or execution time) is
/// suspending it and adding its replacement as a phase task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// First instant of the phase.
    pub start: Nanos,
    /// First instant after it.
    pub end: Nanos,
    /// How execution times of jobs released in it change.
    pub scale: Scale,
    /// Tasks that exist only during the phase (first release at
    /// `start + offset`, none at or after `end`).
    pub tasks: Vec<Task>,
    /// Indices (declaration order) of the set's tasks that release no job
    /// in `[start, end)`: a release `r` of task `i` (period `T`) that falls
    /// in it moves to `r + ceil((end - r) / T) * T`, its first period
    /// boundary at or after `end`. A job released before `start` runs on.
    pub suspended: Vec<usize>,
}

impl Phase {
    /// Parses `START..END:xFACTOR` (`30s..45s:x2.5`) or `START..END:PCT%`
    /// (`30s..45s:120%`, a target utilization of the base set).
    pub fn parse(text: &str) -> Result<Phase, PhaseError> {
        let bad = |why: &str| PhaseError::Syntax {
            text: text.to_string(),
            why: why.to_string(),
        };
        let (range, scale) = text.split_once(':').ok_or_else(|| bad("missing `:`"))?;
        let (start, end) = range.split_once("..").ok_or_else(|| bad("missing `..`"))?;
        let start: Nanos = start.parse().map_err(|e| bad(&format!("{e}")))?;
        let end: Nanos = end.parse().map_err(|e| bad(&format!("{e}")))?;
        if end <= start {
            return Err(bad("the end must be after the start"));
        }
        let scale = scale.trim();
        let scale = if let Some(pct) = scale.strip_suffix('%') {
            Scale::UtilizationPpm(parse_fixed(pct, 4).ok_or_else(|| bad("bad percentage"))?)
        } else if let Some(factor) = scale.strip_prefix('x') {
            let num = parse_fixed(factor, 6).ok_or_else(|| bad("bad factor"))?;
            if num == 0 {
                return Err(bad("the factor must be greater than 0"));
            }
            Scale::Factor {
                num,
                den: 1_000_000,
            }
        } else {
            return Err(bad("the scale must be xFACTOR or UTIL%"));
        };
        Ok(Phase {
            start,
            end,
            scale,
            tasks: Vec::new(),
            suspended: Vec::new(),
        })
    }

    /// The extended Hartstone profile of paper 002 (§4.2): 48 % load for
    /// 30 s, 120 % for 15 s, back to 48 % until 120 s.
    pub fn extended_hartstone() -> Vec<Phase> {
        let s = Nanos::from_secs;
        let phase = |a, b, ppm| Phase {
            start: s(a),
            end: s(b),
            scale: Scale::UtilizationPpm(ppm),
            tasks: Vec::new(),
            suspended: Vec::new(),
        };
        vec![
            phase(0, 30, 480_000),
            phase(30, 45, 1_200_000),
            phase(45, 120, 480_000),
        ]
    }
}

impl Scale {
    /// Execution times unchanged (x1).
    pub const UNCHANGED: Scale = Scale::Factor { num: 1, den: 1 };
}

impl fmt::Display for Scale {
    /// As written on the command line: `x2.5` or `120%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scale::Factor { num, den } => {
                write!(f, "x{}", num / den.max(1))?;
                write_fraction(f, num % den.max(1), den.max(1))
            }
            Scale::UtilizationPpm(ppm) => {
                write!(f, "{}", ppm / 10_000)?;
                write_fraction(f, ppm % 10_000, 10_000)?;
                f.write_str("%")
            }
        }
    }
}

/// Writes `.DIGITS` of `rem / den` (nothing when it is 0), at most 9 digits.
fn write_fraction(f: &mut fmt::Formatter<'_>, mut rem: u64, den: u64) -> fmt::Result {
    if rem == 0 {
        return Ok(());
    }
    f.write_str(".")?;
    for _ in 0..9 {
        if rem == 0 {
            break;
        }
        let scaled = u128::from(rem) * 10;
        write!(f, "{}", scaled / u128::from(den))?;
        rem = (scaled % u128::from(den)) as u64;
    }
    Ok(())
}

impl fmt::Display for Phase {
    /// `START..END:SCALE`, as [`Phase::parse`] reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}:{}", self.start, self.end, self.scale)
    }
}

/// Refuses phases that could not mean what they say: two that overlap (which
/// scale applies?) and one that starts at or after the end of the run (it
/// would change nothing). A phase may end after the run; it applies until
/// the run stops.
pub fn check_phases(phases: &[Phase], duration: Nanos) -> Result<(), PhaseError> {
    if let Some(p) = phases.iter().find(|p| p.start >= duration) {
        return Err(PhaseError::AfterEnd {
            phase: p.to_string(),
            start: p.start,
            duration,
        });
    }
    let mut by_start: Vec<&Phase> = phases.iter().collect();
    by_start.sort_by_key(|p| (p.start, p.end));
    for pair in by_start.windows(2) {
        if pair[1].start < pair[0].end {
            return Err(PhaseError::Overlap {
                phase: pair[1].to_string(),
                other: pair[0].to_string(),
            });
        }
    }
    Ok(())
}

/// `"2.5"` with `digits` decimals -> 2.5 * 10^digits, exactly.
fn parse_fixed(text: &str, digits: u32) -> Option<u64> {
    let text = text.trim();
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && frac.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > digits as usize
    {
        return None;
    }
    let scale = 10u64.pow(digits);
    let whole = if whole.is_empty() {
        0
    } else {
        whole.parse::<u64>().ok()?
    };
    let frac = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<width$}", width = digits as usize)
            .parse::<u64>()
            .ok()?
    };
    whole.checked_mul(scale)?.checked_add(frac)
}

/// A mode of a task-set file (`[[mode]]`): from `start` until the next
/// mode's start (the last one to the end of the run) only the tasks it
/// names release jobs; before the first mode every task does. A task a mode
/// leaves out is suspended (it keeps its period grid and releases again at
/// its first period boundary at or after a mode that names it starts); a
/// task no earlier mode named starts the same way. The transition rule is
/// "new set from the boundary": a job in flight at a mode change finishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mode {
    /// The mode's name.
    pub name: String,
    /// When it starts, from the run's start.
    pub start: Nanos,
    /// The tasks it runs (indices in declaration order).
    pub tasks: Vec<usize>,
}

impl Mode {
    /// The modes of a set of `tasks` tasks as phases of a run of `duration`
    /// (execution times unchanged, the tasks each mode leaves out
    /// suspended). A mode that starts at or after the end of the run is
    /// refused, naming it.
    pub fn phases(modes: &[Mode], tasks: usize, duration: Nanos) -> Result<Vec<Phase>, PhaseError> {
        let mut out = Vec::with_capacity(modes.len());
        for (i, m) in modes.iter().enumerate() {
            if m.start >= duration {
                return Err(PhaseError::ModeAfterEnd {
                    mode: crate::text::printable(&m.name).into_owned(),
                    start: m.start,
                    duration,
                });
            }
            let end = modes
                .get(i + 1)
                .map_or(duration, |next| next.start.min(duration));
            out.push(Phase {
                start: m.start,
                end,
                scale: Scale::UNCHANGED,
                tasks: Vec::new(),
                suspended: (0..tasks).filter(|t| !m.tasks.contains(t)).collect(),
            });
        }
        Ok(out)
    }
}

/// The phases of a run, resolved against its task set: per task (the set's,
/// then every phase's own, [`PhasePlan::tasks`]) the window it may release
/// in and the windows that suspend it, and the scale of each phase. The
/// simulator's engine and the real-thread executor both ask it, so a phase
/// means the same in both worlds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhasePlan {
    /// Per task, `[first, end)`: `[0, MAX)` for the set's tasks, the
    /// phase's window for a phase's task.
    windows: Vec<(Nanos, Nanos)>,
    /// Per task, the `[start, end)` of the phases that suspend it.
    suspensions: Vec<Vec<(Nanos, Nanos)>>,
    /// Per phase, `(start, end, num, den)`: C becomes `ceil(C * num / den)`.
    scales: Vec<(Nanos, Nanos, u64, u64)>,
}

impl PhasePlan {
    /// The set's tasks followed by every phase's own tasks, in phase order.
    pub fn tasks(set: &TaskSet, phases: &[Phase]) -> Vec<Task> {
        let mut tasks = set.tasks.clone();
        for phase in phases {
            tasks.extend(phase.tasks.iter().cloned());
        }
        tasks
    }

    /// Resolves `phases` for `set` in a run of `duration`: refuses phases
    /// that overlap or start at or after the end ([`check_phases`]), a
    /// phase task that is not a valid task, and a suspension of a task
    /// index the set does not have. A [`Scale::UtilizationPpm`] is relative
    /// to the set's own utilization (without phase tasks), in ppm.
    pub fn new(set: &TaskSet, phases: &[Phase], duration: Nanos) -> Result<PhasePlan, PhaseError> {
        check_phases(phases, duration)?;
        let mut windows = vec![(Nanos::ZERO, Nanos::MAX); set.tasks.len()];
        for phase in phases {
            for t in &phase.tasks {
                if let Some(e) = TaskSet::new("phase", vec![t.clone()]).errors().first() {
                    return Err(PhaseError::Task {
                        message: format!("task: {}", e.message),
                    });
                }
                windows.push((phase.start, phase.end));
            }
        }
        let mut suspensions = vec![Vec::new(); windows.len()];
        for phase in phases {
            for &i in &phase.suspended {
                if i >= set.tasks.len() {
                    return Err(PhaseError::Task {
                        message: format!(
                            "suspends task index {i}, but the set has {} tasks",
                            set.tasks.len()
                        ),
                    });
                }
                suspensions[i].push((phase.start, phase.end));
            }
        }
        let base_util_ppm = (set.utilization() * 1e6).round().max(1.0) as u64;
        let scales = phases
            .iter()
            .map(|p| match p.scale {
                Scale::Factor { num, den } => (p.start, p.end, num, den.max(1)),
                Scale::UtilizationPpm(ppm) => (p.start, p.end, ppm, base_util_ppm),
            })
            .collect();
        Ok(PhasePlan {
            windows,
            suspensions,
            scales,
        })
    }

    /// A plan with no phases for `tasks` tasks.
    pub fn none(tasks: usize) -> PhasePlan {
        PhasePlan {
            windows: vec![(Nanos::ZERO, Nanos::MAX); tasks],
            suspensions: vec![Vec::new(); tasks],
            scales: Vec::new(),
        }
    }

    /// Task `task`'s window `[first, end)`.
    pub fn window(&self, task: usize) -> (Nanos, Nanos) {
        self.windows[task]
    }

    /// Task `task`'s first release before suspensions: its window's start
    /// plus its offset.
    pub fn first_release(&self, task: usize, offset: Nanos) -> Nanos {
        self.windows[task].0.saturating_add(offset)
    }

    /// `at`, or, when it falls in a phase that suspends `task`, the task's
    /// first period boundary at or after that phase's end (repeated while
    /// the moved release falls in another suspension).
    pub fn after_suspensions(&self, task: usize, period: Nanos, mut at: Nanos) -> Nanos {
        while let Some(&(_, end)) = self.suspensions[task]
            .iter()
            .find(|&&(start, end)| start <= at && at < end)
        {
            let periods = end.saturating_sub(at).div_ceil(period);
            at = period
                .checked_mul(periods)
                .and_then(|d| at.checked_add(d))
                .unwrap_or(Nanos::MAX);
        }
        at
    }

    /// The release of `task` a candidate release `at` becomes (moved past
    /// suspensions), or `None` when that is at or after the end of the run
    /// or of the task's window.
    pub fn release(&self, task: usize, period: Nanos, at: Nanos, duration: Nanos) -> Option<Nanos> {
        let at = self.after_suspensions(task, period, at);
        (at < duration && at < self.windows[task].1).then_some(at)
    }

    /// The job index of `task`'s release at `at`: periods since its first
    /// possible release.
    pub fn job_index(&self, task: usize, period: Nanos, offset: Nanos, at: Nanos) -> u64 {
        at.saturating_sub(self.first_release(task, offset))
            .div_floor(period)
    }

    /// The execution time of a job released at `at` whose unscaled demand
    /// is `demand`: `ceil(demand * num / den)` (at least 1 ns) in a phase
    /// that scales, `demand` elsewhere.
    pub fn demand(&self, demand: Nanos, at: Nanos) -> Nanos {
        match self.scale_at(at) {
            Some((num, den)) => {
                let scaled =
                    (u128::from(demand.as_ns()) * u128::from(num)).div_ceil(u128::from(den));
                Nanos::from_ns(u64::try_from(scaled).unwrap_or(u64::MAX).max(1))
            }
            None => demand,
        }
    }

    /// `(num, den)` of the phase containing `at`, if any.
    fn scale_at(&self, at: Nanos) -> Option<(u64, u64)> {
        self.scales
            .iter()
            .find(|(s, e, _, _)| *s <= at && at < *e)
            .map(|&(_, _, num, den)| (num, den))
    }

    /// Whether the phases change `task`'s releases (it is a phase's task, or
    /// a phase suspends it); its C may be scaled either way.
    pub fn changes_releases_of(&self, task: usize) -> bool {
        self.windows[task] != (Nanos::ZERO, Nanos::MAX) || !self.suspensions[task].is_empty()
    }

    /// Whether there are no phases.
    pub fn is_empty(&self) -> bool {
        self.scales.is_empty()
    }

    /// The instants at which the set changes (every phase's start and end
    /// before `duration`), sorted, without duplicates, starting with 0: the
    /// starts of the segments in which every task's parameters are fixed.
    pub fn segment_starts(&self, duration: Nanos) -> Vec<Nanos> {
        let mut starts = vec![Nanos::ZERO];
        for &(s, e, _, _) in &self.scales {
            starts.extend([s, e].into_iter().filter(|&t| t < duration));
        }
        starts.sort();
        starts.dedup();
        starts
    }

    /// Whether `task` releases jobs in the segment `[from, to)` (some
    /// instant of it lies in its window and outside its suspensions).
    pub fn active_in(&self, task: usize, from: Nanos, to: Nanos) -> bool {
        let (ws, we) = self.windows[task];
        if we <= from || to <= ws {
            return false;
        }
        !self.suspensions[task]
            .iter()
            .any(|&(s, e)| s <= from && to <= e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_parse() {
        let p = Phase::parse("30s..45s:120%").unwrap();
        assert_eq!(p.start, Nanos::from_secs(30));
        assert_eq!(p.scale, Scale::UtilizationPpm(1_200_000));
        let p = Phase::parse("1ms..2ms:x2.5").unwrap();
        assert_eq!(
            p.scale,
            Scale::Factor {
                num: 2_500_000,
                den: 1_000_000
            }
        );
        for bad in [
            "1ms..2ms",
            "2ms..1ms:x2",
            "1ms..2ms:x0",
            "1ms..2ms:y",
            "a..2ms:x1",
        ] {
            let e = Phase::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("phase `{bad}`: ")), "{e}");
        }
        assert_eq!(Phase::extended_hartstone().len(), 3);
    }

    #[test]
    fn phases_print_as_they_are_written() {
        for text in [
            "30s..45s:120%",
            "1ms..2ms:x2.5",
            "0ns..1ms:x0.000001",
            "1s..2s:48.25%",
        ] {
            assert_eq!(Phase::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn overlapping_phases_and_phases_after_the_run_are_refused() {
        let p = |t: &str| Phase::parse(t).unwrap();
        let ms = Nanos::from_ms;
        assert!(check_phases(&Phase::extended_hartstone(), Nanos::from_secs(60)).is_ok());
        assert!(check_phases(&[p("0ms..10ms:x2"), p("10ms..20ms:x3")], ms(15)).is_ok());
        assert_eq!(
            check_phases(&[p("20ms..40ms:x2"), p("10ms..21ms:x3")], ms(100))
                .unwrap_err()
                .to_string(),
            "phase 20ms..40ms:x2 overlaps phase 10ms..21ms:x3: phases must not overlap"
        );
        assert_eq!(
            check_phases(&[p("100ms..200ms:x2")], ms(100))
                .unwrap_err()
                .to_string(),
            "phase 100ms..200ms:x2 starts at 100ms, at or after the end of the run (100ms long)"
        );
    }

    /// a (T 10, C 2) and b (T 15, C 3), U = 0.4; phase 20..50 ms at 80 %
    /// (x2: den = 400000 ppm) suspends b and adds c (T 10, C 1, offset 5).
    #[test]
    fn a_plan_scales_suspends_and_adds_by_release() {
        let ms = Nanos::from_ms;
        let set = TaskSet::new(
            "s",
            vec![Task::new("a", ms(10), ms(2)), Task::new("b", ms(15), ms(3))],
        );
        let mut phase = Phase::parse("20ms..50ms:80%").unwrap();
        phase.suspended = vec![1];
        phase.tasks = vec![Task::new("c", ms(10), ms(1)).with_offset(ms(5))];
        let plan = PhasePlan::new(&set, &[phase.clone()], ms(100)).unwrap();
        assert_eq!(PhasePlan::tasks(&set, &[phase]).len(), 3);
        assert_eq!(plan.demand(ms(2), ms(19)), ms(2));
        assert_eq!(plan.demand(ms(2), ms(20)), ms(4));
        assert_eq!(plan.demand(ms(3), ms(49)), ms(6));
        assert_eq!(plan.demand(ms(2), ms(50)), ms(2));
        // b's release at 30 moves to 60 (30 + 2 * 15), index 4.
        assert_eq!(plan.release(1, ms(15), ms(30), ms(100)), Some(ms(60)));
        assert_eq!(plan.job_index(1, ms(15), Nanos::ZERO, ms(60)), 4);
        // c: 25, 35, 45 in its window, none at 55.
        assert_eq!(plan.first_release(2, ms(5)), ms(25));
        assert_eq!(plan.release(2, ms(10), ms(45), ms(100)), Some(ms(45)));
        assert_eq!(plan.release(2, ms(10), ms(55), ms(100)), None);
        assert_eq!(plan.job_index(2, ms(10), ms(5), ms(45)), 2);
        assert_eq!(
            plan.segment_starts(ms(100)),
            vec![Nanos::ZERO, ms(20), ms(50)]
        );
        assert!(!plan.active_in(1, ms(20), ms(50)) && plan.active_in(1, ms(50), ms(100)));
        assert!(plan.active_in(2, ms(20), ms(50)) && !plan.active_in(2, Nanos::ZERO, ms(20)));
        let mut bad = Phase::parse("20ms..50ms:x1").unwrap();
        bad.suspended = vec![2];
        assert_eq!(
            PhasePlan::new(&set, &[bad], ms(100))
                .unwrap_err()
                .to_string(),
            "phase suspends task index 2, but the set has 2 tasks"
        );
    }
}
