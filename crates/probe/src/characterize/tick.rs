//! Finding the periodic tick and the gaps it makes in a lone spinner's
//! stamps. The kernel does not tell user space its `CONFIG_HZ`, so rtlab
//! measures it, from the one clock that moves only at ticks:
//!
//! 1. A lone SCHED_FIFO thread spins on the measured CPU reading
//!    `CLOCK_MONOTONIC` and `CLOCK_MONOTONIC_COARSE`. A difference of at
//!    least the gap threshold between consecutive `CLOCK_MONOTONIC` stamps
//!    is a **gap** (the CPU was taken away); a new value of the coarse
//!    clock is a **change**, stamped with the first `CLOCK_MONOTONIC` stamp
//!    that saw it. The coarse clock is the time of the last tick's
//!    timekeeping update, so it changes once per tick: right at the end of
//!    the spinner's tick gap when this CPU keeps the time, at the same
//!    instant on another CPU's tick otherwise (ticks share one grid).
//! 2. The tick period is the **mode of the intervals between consecutive
//!    changes** (10 us bins), refined to the median interval of the modal
//!    bin and its neighbours (an interval of several ticks, where an update
//!    was missed, is rare and does not win). When that lies within 2 % of
//!    the period of a usual `CONFIG_HZ` (100, 250, 300, 1000), the tick is
//!    that period exactly (the kernel's `TICK_NSEC = (10^9 + HZ/2) / HZ`).
//! 3. Each change's **tick gap** is the gap nearest to it, within 30 us
//!    (0 when the change falls inside or at the end of the gap); C_timer is
//!    taken from their lengths, except that a gap of a whole tick period or
//!    more is a **stall** (the CPU was away so long it missed a tick: in a
//!    virtual machine, the host not running the vCPU), counted apart and
//!    left out: it is no tick's cost. The other gaps are other interrupts or, in
//!    a virtual machine, the host taking the CPU: those keep the host's
//!    rate (often 1000 Hz), which is why the intervals between gaps alone
//!    cannot tell the guest's tick.
//!
//! Cross-checks, reported beside it: `clock_getres(CLOCK_MONOTONIC_COARSE)`
//! (the kernel's own tick length), and the `LOC` (local timer interrupts)
//! count of the CPU in `/proc/interrupts` per second of spinning (about HZ,
//! a little more for other high-resolution timers on the CPU).

use std::collections::BTreeMap;

use serde::Serialize;

/// The usual `CONFIG_HZ` values the measured period is matched against.
pub const USUAL_HZ: [u32; 4] = [100, 250, 300, 1000];

/// Width of the interval histogram's bins.
const BIN_NS: u64 = 10_000;

/// How the tick period was found (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TickEstimate {
    /// The median interval of the modal bin and its neighbours, ns.
    pub measured_ns: u64,
    /// Intervals between coarse-clock changes seen.
    pub intervals: usize,
    /// The share of them within one bin of the modal bin.
    pub modal_share: f64,
    /// The usual CONFIG_HZ within 2 % of the measurement, if any.
    pub hz: Option<u32>,
    /// The tick period used: `TICK_NSEC` of `hz`, else `measured_ns`.
    pub tick_ns: u64,
}

/// The kernel's tick length for `hz`: `(10^9 + hz/2) / hz` ns.
pub fn tick_nsec(hz: u32) -> u64 {
    (1_000_000_000 + u64::from(hz) / 2) / u64::from(hz)
}

/// The tick period from the instants of the coarse clock's changes, one
/// list per spinning stretch (each ascending); `None` without any interval.
pub fn estimate_tick(stretches: &[Vec<u64>]) -> Option<TickEstimate> {
    let intervals: Vec<u64> = stretches
        .iter()
        .flat_map(|s| s.windows(2).map(|w| w[1].saturating_sub(w[0])))
        .collect();
    if intervals.is_empty() {
        return None;
    }
    let mut bins: BTreeMap<u64, usize> = BTreeMap::new();
    for &i in &intervals {
        *bins.entry(i / BIN_NS).or_default() += 1;
    }
    // The fullest bin; of equal ones the shortest interval.
    let (&mode, _) = bins.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))?;
    let mut near: Vec<u64> = intervals
        .iter()
        .copied()
        .filter(|i| (i / BIN_NS).abs_diff(mode) <= 1)
        .collect();
    near.sort_unstable();
    let measured_ns = near[(near.len() - 1) / 2];
    let hz = USUAL_HZ.into_iter().find(|&hz| {
        let t = tick_nsec(hz);
        t.abs_diff(measured_ns) * 50 <= t
    });
    Some(TickEstimate {
        measured_ns,
        intervals: intervals.len(),
        modal_share: near.len() as f64 / intervals.len() as f64,
        hz,
        tick_ns: hz.map_or(measured_ns, tick_nsec),
    })
}

/// How far from a coarse-clock change its tick gap may lie.
pub const CHANGE_DISTANCE_NS: u64 = 30_000;

/// One stretch's gaps, sorted out (module docs, step 3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SortedGaps {
    /// Lengths of the tick gaps.
    pub ticks: Vec<u64>,
    /// Lengths of the gaps nearest a change but of a whole tick or more.
    pub stalls: Vec<u64>,
    /// Lengths of the other gaps.
    pub others: Vec<u64>,
}

/// Sorts one stretch's gaps `(start, length)` (ascending starts): the gap
/// nearest each coarse-clock change in `changes` within
/// [`CHANGE_DISTANCE_NS`] is a tick gap, or a stall when it lasts
/// `tick_ns` or more; the rest are other gaps (module docs, step 3). A gap
/// is one change's tick gap at most.
pub fn split_tick_gaps(gaps: &[(u64, u64)], changes: &[u64], tick_ns: u64) -> SortedGaps {
    let distance = |g: &(u64, u64), c: u64| {
        let end = g.0.saturating_add(g.1);
        if c < g.0 {
            g.0 - c
        } else {
            c.saturating_sub(end)
        }
    };
    let mut is_tick = vec![false; gaps.len()];
    for &c in changes {
        // Gaps are sorted and do not overlap, so their ends are sorted too:
        // walk back from the last gap that starts by c + distance until one
        // ends more than the distance before c.
        let mut best: Option<(usize, u64)> = None;
        let mut i = gaps.partition_point(|g| g.0 <= c.saturating_add(CHANGE_DISTANCE_NS));
        while i > 0 {
            i -= 1;
            let g = &gaps[i];
            if g.0.saturating_add(g.1).saturating_add(CHANGE_DISTANCE_NS) < c {
                break;
            }
            let d = distance(g, c);
            if !is_tick[i] && d <= CHANGE_DISTANCE_NS && best.is_none_or(|(_, bd)| d < bd) {
                best = Some((i, d));
            }
        }
        if let Some((i, _)) = best {
            is_tick[i] = true;
        }
    }
    let mut sorted = SortedGaps::default();
    for (g, tick) in gaps.iter().zip(is_tick) {
        match (tick, g.1 >= tick_ns) {
            (true, false) => sorted.ticks.push(g.1),
            (true, true) => sorted.stalls.push(g.1),
            (false, _) => sorted.others.push(g.1),
        }
    }
    sorted
}

/// The `LOC:` (local timer interrupts) count of `cpu` in the text of
/// `/proc/interrupts`: the header names the CPU columns.
pub fn local_timer_count(interrupts: &str, cpu: usize) -> Option<u64> {
    let mut lines = interrupts.lines();
    let header = lines.next()?;
    let column = header
        .split_whitespace()
        .position(|c| c == format!("CPU{cpu}"))?;
    let loc = lines.find(|l| l.trim_start().starts_with("LOC:"))?;
    loc.trim_start()
        .strip_prefix("LOC:")?
        .split_whitespace()
        .nth(column)?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_lengths_of_the_usual_hz() {
        assert_eq!(tick_nsec(250), 4_000_000);
        assert_eq!(tick_nsec(300), 3_333_333);
        assert_eq!(tick_nsec(1000), 1_000_000);
    }

    #[test]
    fn a_250_hz_tick_from_the_coarse_clock_changes() {
        // Changes every 4 ms (+-2 us), one missed (an 8 ms interval), in two
        // stretches.
        let changes = |ks: std::ops::Range<u64>| -> Vec<u64> {
            ks.filter(|&k| k != 7)
                .map(|k| 1_000_123 + k * 4_000_000 + (k % 3) * 1_000)
                .collect()
        };
        let e = estimate_tick(&[changes(0..20), changes(100..110)]).unwrap();
        assert_eq!(e.intervals, 18 + 9);
        assert_eq!((e.hz, e.tick_ns), (Some(250), 4_000_000));
        assert!((3_998_000..=4_002_000).contains(&e.measured_ns), "{e:?}");
        assert!((e.modal_share - 26.0 / 27.0).abs() < 1e-12, "{e:?}");
    }

    #[test]
    fn an_unusual_period_is_kept_as_measured() {
        let starts: Vec<u64> = (0..10u64).map(|k| k * 2_500_000).collect();
        let e = estimate_tick(&[starts]).unwrap();
        assert_eq!(
            (e.hz, e.measured_ns, e.tick_ns),
            (None, 2_500_000, 2_500_000)
        );
        assert!(estimate_tick(&[vec![1], vec![]]).is_none());
    }

    #[test]
    fn each_change_takes_the_gap_nearest_to_it() {
        // A host's gaps every 1 ms (length 10); the tick's gaps (length 40)
        // at 0.5 ms + k * 4 ms. The change is seen at the tick gap's end
        // (this CPU keeps the time), or 5 us before its start (another CPU
        // does), or not at all (k = 2); one change has no gap near it.
        let mut gaps: Vec<(u64, u64)> = (0..16u64).map(|k| (30_000 + k * 1_000_000, 10)).collect();
        gaps.extend((0..4u64).map(|k| (500_000 + k * 4_000_000, 40 + k)));
        gaps.sort_unstable();
        let changes = [500_040, 4_500_000 - 5_000, 12_500_043, 14_100_000];
        let sorted = split_tick_gaps(&gaps, &changes, 4_000_000);
        assert_eq!(sorted.ticks, vec![40, 41, 43]);
        assert_eq!(sorted.others.len(), 17);
        assert_eq!(sorted.others.iter().filter(|&&l| l == 42).count(), 1);
        assert!(sorted.stalls.is_empty());
        // A change inside a long gap takes that gap; a whole tick or more
        // of it is a stall, not a tick's cost.
        let gaps = [(100, 5), (1_000, 3_000_000)];
        assert_eq!(
            split_tick_gaps(&gaps, &[2_000_000], 4_000_000).ticks,
            vec![3_000_000]
        );
        let sorted = split_tick_gaps(&gaps, &[2_000_000], 3_000_000);
        assert_eq!(
            (sorted.ticks.len(), sorted.stalls, sorted.others),
            (0, vec![3_000_000], vec![5])
        );
    }

    #[test]
    fn the_loc_column_of_a_cpu() {
        let text = "           CPU0       CPU1       \n  0:         22          0   IO-APIC   2-edge      timer\nNMI:          0          0   Non-maskable interrupts\nLOC:    6422319    7773984   Local timer interrupts\n";
        assert_eq!(local_timer_count(text, 0), Some(6_422_319));
        assert_eq!(local_timer_count(text, 1), Some(7_773_984));
        assert_eq!(local_timer_count(text, 2), None);
        assert_eq!(local_timer_count("", 0), None);
    }
}
