//! Utilization vectors: n task utilizations that sum to a target U.
//!
//! Three algorithms from the schedulability-test literature, all of which
//! draw from the *uniform* distribution over their set of valid vectors, so
//! that no region of the task-set space is favoured:
//!
//! | name               | valid vectors                               | source |
//! |--------------------|---------------------------------------------|--------|
//! | `uunifast`         | u_i ≥ 0, Σ u_i = U (the standard simplex)   | Bini & Buttazzo 2005 |
//! | `uunifast-discard` | ... and every u_i ≤ cap                     | Davis & Burns 2009 |
//! | `randfixedsum`     | lo ≤ u_i ≤ hi, Σ u_i = U                    | Stafford 2006; Emberson, Stafford & Davis 2010 |
//!
//! UUniFast-Discard rejects whole vectors, so it slows down sharply as U
//! approaches n × cap (the motivation for RandFixedSum in Emberson et al.
//! 2010). With cap 1 the share of
//! accepted draws, P(all u_i ≤ 1) = Σ_k (−1)^k C(n,k) (1 − k/U)_+^(n−1), is
//! 0.08 for n = 10, U = 5; 3.7e−6 for n = 10, U = 8; 8e−6 for n = 40, U = 20.
//! RandFixedSum has no rejection and is the method of choice for high
//! per-task utilizations.

use std::fmt;
use std::str::FromStr;

use rand::Rng;

use super::GenerateError;
use crate::random::{shuffle, unit_open};

/// Attempts UUniFast-Discard makes inside [`UtilizationMethod::draw`] (and so
/// inside [`generate_set`](super::generate_set)) before giving up.
pub const DEFAULT_DISCARD_ATTEMPTS: usize = 100_000;

/// Relative slack allowed when comparing a target total with `n × bound`, so
/// that e.g. `--utilization 2.1` with 3 tasks capped at 0.7 (where `3.0 * 0.7`
/// is `2.0999999999999996` in binary floating point) is accepted.
const TOTAL_SLACK: f64 = 1e-12;

/// UUniFast: `n` utilizations, each ≥ 0, summing to `total`, uniformly
/// distributed over that simplex.
///
/// Bini & Buttazzo 2005, "Measuring the performance of schedulability tests",
/// Real-Time Systems 30(1–2), pp. 129–154:
///
/// ```text
/// sum_U = U
/// for i = 1 .. n-1:
///     next = sum_U · r_i^(1/(n-i))      r_i uniform in (0, 1)
///     u_i  = sum_U − next
///     sum_U = next
/// u_n = sum_U
/// ```
///
/// It consumes exactly `n − 1` random words. `n = 0` gives an empty vector.
/// Nothing bounds a single u_i except `total`; use [`uunifast_discard`] or
/// [`randfixedsum`] when U > 1 or a per-task cap matters.
pub fn uunifast<R: Rng + ?Sized>(n: usize, total: f64, rng: &mut R) -> Vec<f64> {
    let mut out = Vec::with_capacity(n);
    uunifast_into(n, total, rng, &mut out);
    out
}

/// [`uunifast`] into `out` (cleared first), reusing its allocation.
fn uunifast_into<R: Rng + ?Sized>(n: usize, total: f64, rng: &mut R, out: &mut Vec<f64>) {
    out.clear();
    if n == 0 {
        return;
    }
    let mut sum = total;
    for i in 1..n {
        let next = sum * libm::pow(unit_open(rng), 1.0 / (n - i) as f64);
        out.push(sum - next);
        sum = next;
    }
    out.push(sum);
}

/// UUniFast-Discard: [`uunifast`], redrawn while any u_i exceeds
/// `max_per_task`, giving a uniform draw over the simplex cut by the cap.
///
/// Davis & Burns 2009, "Priority assignment for global fixed priority
/// pre-emptive scheduling in multiprocessor real-time systems", RTSS 2009
/// (for multiprocessor sets, U > 1, with the cap 1.0 so that no C_i > T_i).
///
/// Errors: `n = 0`, `total ≤ 0`, `max_per_task ≤ 0`, `total > n ×
/// max_per_task` (no vector exists), and [`GenerateError::DiscardExhausted`]
/// when `max_attempts` vectors were all rejected.
pub fn uunifast_discard<R: Rng + ?Sized>(
    n: usize,
    total: f64,
    max_per_task: f64,
    rng: &mut R,
    max_attempts: usize,
) -> Result<Vec<f64>, GenerateError> {
    check_target(n, total, max_per_task)?;
    let mut out = Vec::with_capacity(n);
    uunifast_discard_into(n, total, max_per_task, rng, max_attempts, &mut out)?;
    Ok(out)
}

/// [`uunifast_discard`] into `out`, the target already checked.
fn uunifast_discard_into<R: Rng + ?Sized>(
    n: usize,
    total: f64,
    max_per_task: f64,
    rng: &mut R,
    max_attempts: usize,
    out: &mut Vec<f64>,
) -> Result<(), GenerateError> {
    for _ in 0..max_attempts {
        uunifast_into(n, total, rng, out);
        if out.iter().all(|&x| x <= max_per_task) {
            return Ok(());
        }
    }
    Err(GenerateError::DiscardExhausted {
        attempts: max_attempts,
        tasks: n,
        total,
        cap: max_per_task,
    })
}

/// RandFixedSum: `n` values in `[lo, hi]` summing to `total`, uniformly
/// distributed over that slice of the cube.
///
/// Roger Stafford, "Random vectors with fixed sum" (MATLAB Central file 9700,
/// 2006), as used for task sets by Emberson, Stafford & Davis 2010,
/// "Techniques for the synthesis of multiprocessor tasksets", WATERS, pp. 6–11.
///
/// The problem is rescaled to the unit cube, s = (U − n·lo)/(hi − lo). The
/// slice `{x in [0, 1]^n : Σx = s}` is a union of simplices; a table of
/// transition probabilities `t` (built from the volumes of lower-dimensional
/// slices) chooses one simplex with probability proportional to its volume, a
/// uniform point inside it is found from the coordinates `r^(1/i)`, the
/// coordinates are randomly permuted (the table construction orders them), and
/// the result is rescaled to `[lo, hi]`. With 0-based indices (the MATLAB
/// original is 1-based):
///
/// ```text
/// 1. k = floor(s) clamped to 0..=n-1; s clamped to [k, k+1];
///    s1[c] = s - (k - c),  s2[c] = (k + n - c) - s       (both >= 0)
/// 2. w = zeros(n, n+1); w[0][1] = 1
///    for i = 2..=n, c = 0..i:
///      tmp1 = w[i-2][c+1] * s1[c] / i
///      tmp2 = w[i-2][c] * s2[n-i+c] / i
///      w[i-1][c+1] = tmp1 + tmp2
///      t[i-2][c] = if s2[n-i+c] > s1[c] { tmp2 / (w[i-1][c+1] + tiny) }
///                  else                 { 1 - tmp1 / (w[i-1][c+1] + tiny) }
/// 3. j = k; sm = 0; pr = 1
///    for i = n-1 down to 1:
///      e  = (r_t <= t[i-1][j])            as 0 or 1
///      sx = r_s ^ (1/i)
///      sm = sm + (1 - sx) * pr * s / (i+1)
///      pr = sx * pr
///      x[n-i-1] = sm + pr * e
///      s = s - e; j = j - e
///    x[n-1] = sm + pr * s
/// 4. shuffle x uniformly; u = lo + (hi - lo) * x
/// ```
///
/// MATLAB permutes by sorting a vector of uniforms; Fisher–Yates gives the
/// same distribution. `tiny` is 2^−1074, and only matters when both terms
/// are 0.
///
/// One deviation, which changes no probability: MATLAB scales w by `realmax`
/// to use the full double range, yet w still underflows when n is large and s
/// small (n = 400, s = 3.3 leaves 0 in the bottom row). Every t is a
/// ratio of two entries of the same row of w, so each row is rescaled here to
/// a maximum of 1 instead, which keeps the table finite for any n.
///
/// Random words are consumed per step as r_t then r_s (2·(n−1) words), then
/// by the shuffle (the original draws all r_t, then all r_s; the distribution
/// is the same).
///
/// Memory: step 2 keeps two rows of w and only the band of t that step 3
/// can read ([`randfixedsum_table_entries`], about n·(k + 1) entries, so
/// O(n) for U ≤ cap); time is O(n²) as in the original.
///
/// Errors: `n = 0`, bounds not finite or `lo > hi`, and
/// [`GenerateError::TotalOutOfRange`] when `total` is outside `[n·lo, n·hi]`;
/// above [`RANDFIXEDSUM_MAX_TASKS`] tasks or a band above
/// [`RANDFIXEDSUM_MAX_TABLE_ENTRIES`] entries, [`GenerateError::InvalidSetting`]
/// and [`GenerateError::TableTooLarge`], both naming `--method uunifast-discard`.
/// Results are clamped into `[lo, hi]` against last-bit rounding.
pub fn randfixedsum<R: Rng + ?Sized>(
    n: usize,
    total: f64,
    lo: f64,
    hi: f64,
    rng: &mut R,
) -> Result<Vec<f64>, GenerateError> {
    let mut out = Vec::with_capacity(n);
    RandFixedSum::new(n, total, lo, hi)?.draw_into(rng, &mut out);
    Ok(out)
}

impl RandFixedSum {
    /// Checks the settings and builds step 2's table: the errors of
    /// [`randfixedsum`].
    pub(crate) fn new(
        n: usize,
        total: f64,
        lo: f64,
        hi: f64,
    ) -> Result<RandFixedSum, GenerateError> {
        check_tasks(n)?;
        if n > RANDFIXEDSUM_MAX_TASKS {
            return Err(GenerateError::invalid_naming(
            "tasks",
            &["method"],
            format!(
                "{n} is above randfixedsum's limit of {RANDFIXEDSUM_MAX_TASKS} tasks (its time grows \
                 as n²); use method uunifast-discard"
            ),
        ));
        }
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(GenerateError::invalid(
                "max-task-utilization",
                format!("must give a non-empty range of per-task utilizations (got [{lo}, {hi}])"),
            ));
        }
        let nf = n as f64;
        let (min, max) = (nf * lo, nf * hi);
        let slack = TOTAL_SLACK * min.abs().max(max.abs()).max(1.0);
        if !total.is_finite() || total < min - slack || total > max + slack {
            return Err(GenerateError::TotalOutOfRange {
                total,
                tasks: n,
                lo,
                hi,
                min,
                max,
            });
        }
        if n == 1 || lo == hi {
            let only = if n == 1 { total.clamp(lo, hi) } else { lo };
            return Ok(RandFixedSum {
                n,
                lo,
                hi,
                draw: Stafford::Constant(only),
            });
        }
        let s = (total - min) / (hi - lo);
        let entries = randfixedsum_table_entries(n, s);
        if entries > RANDFIXEDSUM_MAX_TABLE_ENTRIES {
            return Err(GenerateError::TableTooLarge {
                tasks: n,
                total,
                entries,
                limit: RANDFIXEDSUM_MAX_TABLE_ENTRIES,
            });
        }
        let k = stafford_k(n, s);
        let s = s.clamp(k as f64, k as f64 + 1.0);
        Ok(RandFixedSum {
            n,
            lo,
            hi,
            draw: Stafford::Cube {
                k,
                s,
                table: TransitionTable::build(n, k, s),
            },
        })
    }
}

/// [`randfixedsum`] for fixed settings: the checks and step 2's transition
/// table done once, each draw (steps 3 and 4) reusing them. Draws are
/// bit-for-bit those of [`randfixedsum`].
#[derive(Debug, Clone)]
pub(crate) struct RandFixedSum {
    n: usize,
    lo: f64,
    hi: f64,
    draw: Stafford,
}

#[derive(Debug, Clone)]
enum Stafford {
    /// One task, or `lo == hi`: every value is this one; no random word used.
    Constant(f64),
    /// Steps 3–4 on the unit cube with `k`, the clamped `s` and the table.
    Cube {
        k: usize,
        s: f64,
        table: TransitionTable,
    },
}

impl RandFixedSum {
    /// One vector into `out` (cleared first).
    pub(crate) fn draw_into<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut Vec<f64>) {
        out.clear();
        match &self.draw {
            Stafford::Constant(only) => out.resize(self.n, *only),
            Stafford::Cube { k, s, table } => {
                stafford_unit_cube_into(self.n, *k, *s, table, rng, out);
                let (lo, hi) = (self.lo, self.hi);
                out.iter_mut()
                    .for_each(|x| *x = (lo + (hi - lo) * *x).clamp(lo, hi));
            }
        }
    }
}

/// The smallest positive double, 2^−1074 (MATLAB's `tiny` in randfixedsum).
const TINY: f64 = f64::from_bits(1);

/// Stafford's algorithm on the unit cube: `n ≥ 2` values in `[0, 1]` summing
/// to `s ∈ [0, n]`, uniform over that slice; steps 1–4 of [`randfixedsum`].
/// The caller has checked `n` and `s` against [`randfixedsum_table_entries`].
#[cfg(test)]
fn stafford_unit_cube<R: Rng + ?Sized>(n: usize, s: f64, rng: &mut R) -> Vec<f64> {
    debug_assert!(n >= 2);
    let k = stafford_k(n, s);
    let s = s.clamp(k as f64, k as f64 + 1.0);
    let t = TransitionTable::build(n, k, s);
    let mut x = Vec::with_capacity(n);
    stafford_unit_cube_into(n, k, s, &t, rng, &mut x);
    x
}

/// Steps 3–4 of [`randfixedsum`] with step 1's `k` and clamped `s` and step
/// 2's table `t`, into `x` (cleared first).
fn stafford_unit_cube_into<R: Rng + ?Sized>(
    n: usize,
    k: usize,
    s: f64,
    t: &TransitionTable,
    rng: &mut R,
    x: &mut Vec<f64>,
) {
    debug_assert!(n >= 2);
    let mut s = s;
    x.clear();
    x.resize(n, 0.0);
    let mut j = k;
    let (mut sm, mut pr) = (0.0_f64, 1.0_f64);
    for i in (1..n).rev() {
        let rt = unit_open(rng);
        let rs = unit_open(rng);
        // j = 0 has t = 0 in exact arithmetic; the guard keeps j in range.
        let e = j > 0 && rt <= t.get(i - 1, j);
        let sx = libm::pow(rs, 1.0 / i as f64);
        sm += (1.0 - sx) * pr * s / (i as f64 + 1.0);
        pr *= sx;
        x[n - i - 1] = sm + if e { pr } else { 0.0 };
        if e {
            s -= 1.0;
            j -= 1;
        }
    }
    x[n - 1] = sm + pr * s;
    shuffle(x, rng);
}

/// Step 1's k = floor(s) clamped to `0..=n-1`.
fn stafford_k(n: usize, s: f64) -> usize {
    libm::floor(s).clamp(0.0, (n - 1) as f64) as usize
}

/// Largest transition table [`randfixedsum`] builds, in entries (8 bytes
/// each): 2^24 entries, 128 MiB. Above it the draw is refused (see
/// [`randfixedsum_table_entries`]).
pub const RANDFIXEDSUM_MAX_TABLE_ENTRIES: u64 = 1 << 24;

/// Entries of the transition table [`randfixedsum`] keeps for `n` values
/// summing to `s` on the unit cube (`s = U / cap` for task utilizations):
/// about `n · (floor(s) + 1)`, at most `n² / 4`.
///
/// Step 3 reads `t[i-1][j]` only for `j` on its path, which starts at
/// `k = floor(s)` and falls by at most 1 per step, so row `r` is needed only
/// for `j` in `[max(0, k − (n − 2 − r)), min(k, r + 1)]`: the table keeps
/// that band of each row, and steps 1–2 run over two rows of `w` at a time.
/// Memory is O(n) beyond the band, time O(n²) as in Stafford's original.
pub fn randfixedsum_table_entries(n: usize, s: f64) -> u64 {
    if n < 2 {
        return 0;
    }
    let k = stafford_k(n, s);
    (0..n - 1).map(|r| band(n, k, r).len() as u64).sum()
}

/// The columns of row `r` of the transition table that step 3 can read.
fn band(n: usize, k: usize, r: usize) -> std::ops::Range<usize> {
    let lo = k.saturating_sub(n - 2 - r);
    let hi = k.min(r + 1);
    lo..(hi + 1).max(lo)
}

/// The band of Stafford's transition table `t` that step 3 can read (see
/// [`randfixedsum_table_entries`]), entries outside it read as 0 like the
/// never-written entries of the full table.
#[derive(Debug, Clone)]
struct TransitionTable {
    /// Row `r` holds `t[r][starts[r]..starts[r] + len_r]`, rows concatenated.
    values: Vec<f64>,
    /// Where each row starts in `values`, and its first column.
    rows: Vec<(usize, std::ops::Range<usize>)>,
}

impl TransitionTable {
    /// Step 2 of [`randfixedsum`], keeping only the band of `t`: every value
    /// kept is computed by the same operations in the same order as in the
    /// full n × (n + 1) table, so the draws are bit-for-bit the same.
    fn build(n: usize, k: usize, s: f64) -> TransitionTable {
        let s1: Vec<f64> = (0..n).map(|c| s - (k as f64 - c as f64)).collect();
        let s2: Vec<f64> = (0..n).map(|c| (k + n - c) as f64 - s).collect();
        let rows: Vec<(usize, std::ops::Range<usize>)> = (0..n - 1)
            .scan(0, |start, r| {
                let cols = band(n, k, r);
                let row = (*start, cols.clone());
                *start += cols.len();
                Some(row)
            })
            .collect();
        let entries = rows.last().map_or(0, |(start, cols)| start + cols.len());
        let mut values = vec![0.0_f64; entries];

        let mut prev = vec![0.0_f64; n + 1];
        let mut row = vec![0.0_f64; n + 1];
        prev[1] = 1.0;
        for i in 2..=n {
            // O(n²) in all (seconds at n = 100,000): stop when the caller's
            // flag is raised (crate::cancel); the caller throws the table away.
            if i.is_multiple_of(1024) && crate::cancel::requested() {
                break;
            }
            let fi = i as f64;
            let (start, cols) = &rows[i - 2];
            // w[i-1][c+1] = (w[i-2][c+1] s1[c] + w[i-2][c] s2[n-i+c]) / i for c in 0..i,
            // as two quotients added (the original's order of operations).
            let terms = |c: usize| {
                let tmp1 = prev[c + 1] * s1[c] / fi;
                let tmp2 = prev[c] * s2[n - i + c] / fi;
                (tmp1, tmp2)
            };
            for c in cols.clone() {
                let (tmp1, tmp2) = terms(c);
                let tmp3 = (tmp1 + tmp2) + TINY;
                values[start + c - cols.start] = if s2[n - i + c] > s1[c] {
                    tmp2 / tmp3
                } else {
                    1.0 - tmp1 / tmp3
                };
            }
            let next = prev[1..=i]
                .iter()
                .zip(&prev[..i])
                .zip(&s1[..i])
                .zip(&s2[n - i..]);
            // Every w is finite and >= 0, so a plain comparison finds the maximum
            // (the same value as f64::max, and it lets the loop vectorize).
            let mut peak = 0.0_f64;
            for (out, (((&up, &left), &a), &b)) in row[1..=i].iter_mut().zip(next) {
                *out = up * a / fi + left * b / fi;
                peak = if *out > peak { *out } else { peak };
            }
            if peak > 0.0 {
                row[..=i].iter_mut().for_each(|v| *v /= peak);
            }
            std::mem::swap(&mut prev, &mut row);
        }
        TransitionTable { values, rows }
    }

    /// `t[r][c]`, 0 outside the band.
    fn get(&self, r: usize, c: usize) -> f64 {
        let (start, cols) = &self.rows[r];
        if cols.contains(&c) {
            self.values[start + c - cols.start]
        } else {
            0.0
        }
    }
}

/// Most tasks in one generated set (`--tasks`): a million tasks take about
/// 400 MB while the set is built and written.
pub const MAX_TASKS: usize = 1_000_000;

/// Most tasks [`randfixedsum`] draws for: its time grows as n² (about 25 s
/// for 100,000 tasks on a 2-core VM), where UUniFast's is linear.
pub const RANDFIXEDSUM_MAX_TASKS: usize = 100_000;

fn check_tasks(n: usize) -> Result<(), GenerateError> {
    if n == 0 {
        return Err(GenerateError::invalid("tasks", "must be at least 1"));
    }
    if n > MAX_TASKS {
        return Err(GenerateError::invalid(
            "tasks",
            format!("{n} is above the limit of {MAX_TASKS} tasks in one set"),
        ));
    }
    Ok(())
}

/// The checks shared by every method: n ≥ 1, 0 < U ≤ n × cap, cap > 0.
pub(crate) fn check_target(n: usize, total: f64, cap: f64) -> Result<(), GenerateError> {
    check_tasks(n)?;
    if !(total.is_finite() && total > 0.0) {
        return Err(GenerateError::invalid("utilization", "must be > 0"));
    }
    if !(cap.is_finite() && cap > 0.0) {
        return Err(GenerateError::invalid(
            "max-task-utilization",
            "must be > 0",
        ));
    }
    let reachable = n as f64 * cap;
    if total > reachable * (1.0 + TOTAL_SLACK) {
        return Err(GenerateError::invalid_naming(
            "utilization",
            &["tasks", "max-task-utilization"],
            format!(
                "{total} exceeds tasks × max-task-utilization = {n} × {cap} = {reachable}{}",
                percent_hint(total, reachable)
            ),
        ));
    }
    Ok(())
}

/// The hint for a total utilization that looks written as a percentage
/// (`70` for 70 %): at most 100, over twice what the tasks can reach, and
/// the fraction it would stand for reachable. `3.5` on 3 tasks gets none:
/// that is a multiprocessor total a little too high.
fn percent_hint(total: f64, reachable: f64) -> String {
    let fraction = total / 100.0;
    if total <= 100.0 && total > 2.0 * reachable && fraction <= reachable {
        format!(" (utilization is a fraction of one processor, not a percentage: {fraction} for {total} %)")
    } else {
        String::new()
    }
}

/// Which algorithm draws the utilization vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum UtilizationMethod {
    /// [`uunifast`] (Bini & Buttazzo 2005). Requires U ≤ the per-task cap,
    /// since nothing else bounds a single task's share.
    UUniFast,
    /// [`uunifast_discard`] (Davis & Burns 2009), with the per-task cap.
    UUniFastDiscard,
    /// [`randfixedsum`] (Stafford; Emberson, Stafford & Davis 2010) on [0, cap].
    #[default]
    RandFixedSum,
}

impl UtilizationMethod {
    /// Every method, in the order of the documentation.
    pub const ALL: [UtilizationMethod; 3] = [
        UtilizationMethod::UUniFast,
        UtilizationMethod::UUniFastDiscard,
        UtilizationMethod::RandFixedSum,
    ];

    /// The command-line name: `uunifast`, `uunifast-discard` or `randfixedsum`.
    pub const fn name(self) -> &'static str {
        match self {
            UtilizationMethod::UUniFast => "uunifast",
            UtilizationMethod::UUniFastDiscard => "uunifast-discard",
            UtilizationMethod::RandFixedSum => "randfixedsum",
        }
    }

    /// `n` utilizations summing to `total`, none above `max_per_task`.
    ///
    /// UUniFast refuses `total > max_per_task` (it could give one task more
    /// than the cap); UUniFast-Discard tries [`DEFAULT_DISCARD_ATTEMPTS`]
    /// times; RandFixedSum draws on `[0, max_per_task]`.
    pub fn draw<R: Rng + ?Sized>(
        self,
        n: usize,
        total: f64,
        max_per_task: f64,
        rng: &mut R,
    ) -> Result<Vec<f64>, GenerateError> {
        let mut out = Vec::with_capacity(n);
        UtilizationPlan::new(self, n, total, max_per_task)?.draw_into(rng, &mut out)?;
        Ok(out)
    }
}

/// [`UtilizationMethod::draw`] for fixed settings: the checks (and
/// RandFixedSum's table) done once, each draw bit-for-bit the same as
/// [`UtilizationMethod::draw`]'s.
#[derive(Debug, Clone)]
pub(crate) enum UtilizationPlan {
    UUniFast { n: usize, total: f64 },
    UUniFastDiscard { n: usize, total: f64, cap: f64 },
    RandFixedSum(RandFixedSum),
}

impl UtilizationPlan {
    /// Checks the settings: the errors [`UtilizationMethod::draw`] reports
    /// before drawing.
    pub(crate) fn new(
        method: UtilizationMethod,
        n: usize,
        total: f64,
        max_per_task: f64,
    ) -> Result<UtilizationPlan, GenerateError> {
        check_target(n, total, max_per_task)?;
        Ok(match method {
            UtilizationMethod::UUniFast => {
                if total > max_per_task {
                    return Err(GenerateError::invalid_naming(
                        "utilization",
                        &["max-task-utilization", "method"],
                        format!(
                            "{total} exceeds max-task-utilization {max_per_task}, which plain uunifast \
                             cannot respect; use method uunifast-discard or randfixedsum"
                        ),
                    ));
                }
                UtilizationPlan::UUniFast { n, total }
            }
            UtilizationMethod::UUniFastDiscard => UtilizationPlan::UUniFastDiscard {
                n,
                total,
                cap: max_per_task,
            },
            UtilizationMethod::RandFixedSum => {
                UtilizationPlan::RandFixedSum(RandFixedSum::new(n, total, 0.0, max_per_task)?)
            }
        })
    }

    /// One utilization vector into `out`; only UUniFast-Discard can fail
    /// ([`GenerateError::DiscardExhausted`]).
    pub(crate) fn draw_into<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        out: &mut Vec<f64>,
    ) -> Result<(), GenerateError> {
        match self {
            UtilizationPlan::UUniFast { n, total } => uunifast_into(*n, *total, rng, out),
            UtilizationPlan::UUniFastDiscard { n, total, cap } => {
                uunifast_discard_into(*n, *total, *cap, rng, DEFAULT_DISCARD_ATTEMPTS, out)?
            }
            UtilizationPlan::RandFixedSum(plan) => plan.draw_into(rng, out),
        }
        Ok(())
    }
}

impl fmt::Display for UtilizationMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for UtilizationMethod {
    type Err = GenerateError;

    /// `uunifast`, `uunifast-discard` or `randfixedsum` (ASCII case ignored).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UtilizationMethod::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| GenerateError::UnknownName {
                what: "utilization method",
                name: s.to_string(),
                expected: "uunifast, uunifast-discard or randfixedsum",
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::stream_rng;

    fn sum(v: &[f64]) -> f64 {
        v.iter().sum()
    }

    /// Mean of `f(draw)` over `draws` draws.
    fn mean_of(draws: usize, mut f: impl FnMut() -> f64) -> f64 {
        (0..draws).map(|_| f()).sum::<f64>() / draws as f64
    }

    #[test]
    fn uunifast_sums_to_target_and_stays_non_negative() {
        let mut rng = stream_rng(1, 0);
        for n in 1..=20 {
            for &total in &[0.01, 0.5, 0.99, 1.0, 3.7] {
                let u = uunifast(n, total, &mut rng);
                assert_eq!(u.len(), n);
                assert!((sum(&u) - total).abs() < 1e-9, "n={n} U={total}: {u:?}");
                assert!(u.iter().all(|&x| (0.0..=total).contains(&x)), "{u:?}");
            }
        }
        assert!(uunifast(0, 1.0, &mut rng).is_empty());
    }

    #[test]
    fn uunifast_discard_never_exceeds_the_cap() {
        let mut rng = stream_rng(2, 0);
        for &(n, total, cap) in &[(4, 2.0, 1.0), (8, 3.5, 0.6), (3, 0.9, 0.35), (2, 2.0, 1.0)] {
            for _ in 0..200 {
                let u = match uunifast_discard(n, total, cap, &mut rng, 100_000) {
                    Ok(u) => u,
                    // (2, 2.0, 1.0) needs both exactly 1.0: a zero-probability event.
                    Err(GenerateError::DiscardExhausted { .. }) if total == n as f64 * cap => break,
                    Err(e) => panic!("{e}"),
                };
                assert!((sum(&u) - total).abs() < 1e-9);
                assert!(u.iter().all(|&x| (0.0..=cap).contains(&x)), "{u:?}");
            }
        }
    }

    #[test]
    fn uunifast_discard_gives_up_with_a_clear_error() {
        let mut rng = stream_rng(3, 0);
        // 10 tasks at U = 9.5 under cap 1: acceptance is astronomically rare.
        let err = uunifast_discard(10, 9.5, 1.0, &mut rng, 50).unwrap_err();
        assert_eq!(
            err.to_string(),
            "uunifast-discard found no utilizations with every task at most 1 in 50 attempts \
             (tasks 10, utilization 9.5); lower utilization or use method randfixedsum"
        );
        assert_eq!(
            uunifast_discard(3, 3.5, 1.0, &mut rng, 10)
                .unwrap_err()
                .to_string(),
            "utilization 3.5 exceeds tasks × max-task-utilization = 3 × 1 = 3"
        );
        assert_eq!(
            uunifast_discard(5, 70.0, 1.0, &mut rng, 10)
                .unwrap_err()
                .to_string(),
            "utilization 70 exceeds tasks × max-task-utilization = 5 × 1 = 5 (utilization is a \
             fraction of one processor, not a percentage: 0.7 for 70 %)"
        );
        assert_eq!(
            uunifast_discard(0, 0.5, 1.0, &mut rng, 10)
                .unwrap_err()
                .to_string(),
            "tasks must be at least 1"
        );
        assert_eq!(
            uunifast_discard(3, 0.0, 1.0, &mut rng, 10)
                .unwrap_err()
                .to_string(),
            "utilization must be > 0"
        );
    }

    #[test]
    fn randfixedsum_respects_bounds_and_sum() {
        let mut rng = stream_rng(4, 0);
        let cases: &[(usize, f64, f64, f64)] = &[
            (2, 1.5, 0.0, 1.0),
            (3, 1.0, 0.0, 1.0),
            (5, 2.5, 0.0, 1.0),
            (5, 4.99, 0.0, 1.0),
            (5, 0.01, 0.0, 1.0),
            (7, 2.0, 0.1, 0.5),
            (10, 3.0, 0.0, 0.35),
            (16, 12.0, 0.5, 0.9),
            (4, 4.0, 0.0, 1.0),     // the single corner (1, 1, 1, 1)
            (4, 0.4, 0.1, 0.9),     // the single corner (0.1, ...)
            (300, 150.0, 0.0, 1.0), // large n
            (400, 3.3, 0.0, 1.0),   // large n, small s: MATLAB's unscaled w underflows to 0
        ];
        for &(n, total, lo, hi) in cases {
            for _ in 0..50 {
                let u = randfixedsum(n, total, lo, hi, &mut rng).unwrap();
                assert_eq!(u.len(), n);
                assert!(
                    (sum(&u) - total).abs() < 1e-9,
                    "n={n} U={total}: sum {}",
                    sum(&u)
                );
                assert!(u.iter().all(|&x| (lo..=hi).contains(&x)), "{u:?}");
            }
        }
        assert_eq!(randfixedsum(1, 0.3, 0.0, 1.0, &mut rng).unwrap(), vec![0.3]);
        assert_eq!(
            randfixedsum(3, 1.5, 0.5, 0.5, &mut rng).unwrap(),
            vec![0.5; 3]
        );
        // 3 × 0.7 is 2.0999999999999996 in binary: still accepted.
        let u = randfixedsum(3, 2.1, 0.0, 0.7, &mut rng).unwrap();
        assert!(u.iter().all(|&x| x <= 0.7) && (sum(&u) - 2.1).abs() < 1e-9);
    }

    /// Stafford's step 2 with the whole n × (n + 1) table, as rtlab computed
    /// it before the table was cut to its band: the reference the banded
    /// form must match bit for bit.
    fn full_table_unit_cube(n: usize, s: f64, rng: &mut impl Rng) -> Vec<f64> {
        let k = stafford_k(n, s);
        let mut s = s.clamp(k as f64, k as f64 + 1.0);
        let s1: Vec<f64> = (0..n).map(|c| s - (k as f64 - c as f64)).collect();
        let s2: Vec<f64> = (0..n).map(|c| (k + n - c) as f64 - s).collect();
        let mut w = vec![vec![0.0_f64; n + 1]; n];
        w[0][1] = 1.0;
        let mut t = vec![vec![0.0_f64; n]; n - 1];
        for i in 2..=n {
            let fi = i as f64;
            for c in 0..i {
                let tmp1 = w[i - 2][c + 1] * s1[c] / fi;
                let tmp2 = w[i - 2][c] * s2[n - i + c] / fi;
                w[i - 1][c + 1] = tmp1 + tmp2;
                let tmp3 = w[i - 1][c + 1] + TINY;
                t[i - 2][c] = if s2[n - i + c] > s1[c] {
                    tmp2 / tmp3
                } else {
                    1.0 - tmp1 / tmp3
                };
            }
            let peak = w[i - 1].iter().copied().fold(0.0_f64, f64::max);
            if peak > 0.0 {
                w[i - 1].iter_mut().for_each(|v| *v /= peak);
            }
        }
        let mut x = vec![0.0_f64; n];
        let mut j = k;
        let (mut sm, mut pr) = (0.0_f64, 1.0_f64);
        for i in (1..n).rev() {
            let rt = unit_open(rng);
            let rs = unit_open(rng);
            let e = j > 0 && rt <= t[i - 1][j];
            let sx = libm::pow(rs, 1.0 / i as f64);
            sm += (1.0 - sx) * pr * s / (i as f64 + 1.0);
            pr *= sx;
            x[n - i - 1] = sm + if e { pr } else { 0.0 };
            if e {
                s -= 1.0;
                j -= 1;
            }
        }
        x[n - 1] = sm + pr * s;
        shuffle(&mut x, rng);
        x
    }

    #[test]
    fn randfixedsum_banded_table_draws_exactly_what_the_full_table_drew() {
        // Every k from 0 to n - 1, the band edges (s integral, s near n) and
        // sizes where MATLAB's unscaled table would underflow.
        let mut cases: Vec<(usize, f64)> = vec![(2, 0.5), (2, 1.5), (3, 2.9999), (400, 3.3)];
        for n in [3usize, 4, 7, 16, 61] {
            for step in 0..=(2 * n) {
                cases.push((n, step as f64 / 2.0));
            }
        }
        cases.extend([
            (150, 0.2),
            (150, 1.0),
            (150, 7.5),
            (150, 75.0),
            (150, 149.9),
        ]);
        for (case, &(n, s)) in cases.iter().enumerate() {
            for seed in 0..3 {
                let banded = stafford_unit_cube(n, s, &mut stream_rng(seed, case as u64));
                let full = full_table_unit_cube(n, s, &mut stream_rng(seed, case as u64));
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&banded), bits(&full), "n={n} s={s} seed={seed}");
            }
        }
    }

    #[test]
    fn randfixedsum_table_grows_with_n_times_the_total_not_n_squared() {
        // k = floor(s) = 0: one column per row.
        assert_eq!(randfixedsum_table_entries(100_000, 0.9), 99_999);
        // The classic uniprocessor sweep, U <= 1, at a million tasks: about 2n.
        assert!(randfixedsum_table_entries(1_000_000, 1.0) <= 2_000_000);
        // The band is a parallelogram: at most n² / 4 entries whatever s.
        for n in [2usize, 3, 10, 101] {
            for s in 0..=n {
                let entries = randfixedsum_table_entries(n, s as f64);
                assert!(entries <= (n * n / 4 + n) as u64, "n={n} s={s}: {entries}");
            }
        }
        assert_eq!(randfixedsum_table_entries(1, 0.5), 0);
    }

    #[test]
    fn randfixedsum_refuses_a_table_above_its_limit_naming_the_alternative() {
        let mut rng = stream_rng(12, 0);
        // 100,000 tasks at U = 50,000: a band of about n² / 4 = 2.5e9 entries.
        let err = randfixedsum(100_000, 50_000.0, 0.0, 1.0, &mut rng).unwrap_err();
        assert!(matches!(err, GenerateError::TableTooLarge { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.starts_with(
                "method randfixedsum with tasks 100000 and utilization 50000 needs a table of "
            ) && text.ends_with(
                "above its limit of 16777216 (128 MiB); lower tasks or utilization, \
                     or use method uunifast-discard"
            ),
            "{text}"
        );
        assert!(!text.contains('\n'));

        let err = randfixedsum(100_001, 0.5, 0.0, 1.0, &mut rng).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tasks 100001 is above randfixedsum's limit of 100000 tasks (its time grows as n²); \
             use method uunifast-discard"
        );
        let err = UtilizationMethod::UUniFast
            .draw(MAX_TASKS + 1, 0.5, 1.0, &mut rng)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "tasks 1000001 is above the limit of 1000000 tasks in one set"
        );
    }

    #[test]
    fn randfixedsum_refuses_unreachable_totals() {
        let mut rng = stream_rng(5, 0);
        assert_eq!(
            randfixedsum(4, 4.5, 0.0, 1.0, &mut rng).unwrap_err().to_string(),
            "utilization 4.5 is outside [0, 4], the totals 4 tasks with utilization in [0, 1] can reach"
        );
        assert!(matches!(
            randfixedsum(4, 0.3, 0.1, 1.0, &mut rng),
            Err(GenerateError::TotalOutOfRange { .. })
        ));
        assert!(randfixedsum(4, 1.0, 0.6, 0.5, &mut rng).is_err());
        assert!(randfixedsum(0, 1.0, 0.0, 1.0, &mut rng).is_err());
    }

    // Distribution tests. Each uses a fixed seed, so it is deterministic; the
    // tolerances are 5 standard errors of the estimated mean (SE = sd/√N),
    // wide enough that a correct sampler passes for any seed except with
    // probability ~6e-7 per check, and narrow enough to catch a biased one.

    #[test]
    fn uunifast_marginal_means_are_u_over_n() {
        // Each u_i of a uniform point on the simplex is U · Beta(1, n−1):
        // mean U/n, variance U²(n−1)/(n²(n+1)).
        let (n, total, draws) = (5usize, 0.8, 20_000usize);
        let nf = n as f64;
        let sd = libm::sqrt(total * total * (nf - 1.0) / (nf * nf * (nf + 1.0))); // 0.1306
        let tolerance = 5.0 * sd / libm::sqrt(draws as f64); // 0.0046
        let mut rng = stream_rng(6, 0);
        let mut sums = vec![0.0; n];
        for _ in 0..draws {
            for (acc, u) in sums.iter_mut().zip(uunifast(n, total, &mut rng)) {
                *acc += u;
            }
        }
        for (i, s) in sums.iter().enumerate() {
            let mean = s / draws as f64;
            assert!((mean - total / nf).abs() < tolerance, "u_{i}: mean {mean}");
        }
    }

    #[test]
    fn randfixedsum_marginal_means_are_u_over_n() {
        // (After the final shuffle this holds for any fixed-sum sampler, so it
        // is a sanity check; the two tests below check the actual law.)
        // Values lie in [lo, hi], so sd ≤ (hi − lo)/2 (Popoviciu's inequality);
        // with N = 20,000 draws the tolerance is 5 · 0.5/√N ≈ 0.0177 for [0, 1].
        let draws = 20_000usize;
        let tolerance = 5.0 * 0.5 / libm::sqrt(draws as f64);
        let mut rng = stream_rng(7, 0);
        for &(n, total) in &[(4usize, 1.3), (5, 2.5), (6, 4.8)] {
            let mut sums = vec![0.0; n];
            for _ in 0..draws {
                let u = randfixedsum(n, total, 0.0, 1.0, &mut rng).unwrap();
                for (acc, x) in sums.iter_mut().zip(u) {
                    *acc += x;
                }
            }
            for (i, s) in sums.iter().enumerate() {
                let mean = s / draws as f64;
                let expected = total / n as f64;
                assert!(
                    (mean - expected).abs() < tolerance,
                    "n={n} U={total} u_{i}: {mean}"
                );
            }
        }
    }

    #[test]
    fn randfixedsum_is_uniform_on_known_slices() {
        let draws = 20_000usize;
        let mut rng = stream_rng(8, 0);
        // n = 2, U = 1.5 on [0, 1]: x_1 is uniform on [0.5, 1]. P(x_1 < 0.75) = 1/2,
        // a Bernoulli proportion with SE = 0.5/√N = 0.0035; tolerance 5 SE.
        let below = mean_of(draws, || {
            let u = randfixedsum(2, 1.5, 0.0, 1.0, &mut rng).unwrap();
            f64::from(u8::from(u[0] < 0.75))
        });
        assert!(
            (below - 0.5).abs() < 5.0 * 0.5 / libm::sqrt(draws as f64),
            "{below}"
        );

        // n = 3, U = 1 on [0, 1] is the whole simplex: x_1 ~ Beta(1, 2), so
        // P(x_1 < 1/2) = 1 − (1/2)² = 3/4; SE = √(3/16)/√N ≈ 0.0031.
        let below = mean_of(draws, || {
            let u = randfixedsum(3, 1.0, 0.0, 1.0, &mut rng).unwrap();
            f64::from(u8::from(u[0] < 0.5))
        });
        let se = libm::sqrt(0.75 * 0.25 / draws as f64);
        assert!((below - 0.75).abs() < 5.0 * se, "{below}");

        // n = 3, U = 1.5 on [0, 1]: projected onto (x_1, x_2) the slice is the
        // unit square minus two corner triangles of area 1/8 (area 3/4), and the
        // projection keeps uniformity. For x_1 < 1/4, x_2 runs over
        // [1/2 − x_1, 1], so P(x_1 < 1/4) = ∫_0^{1/4} (1/2 + x) dx / (3/4) = 5/24.
        let below = mean_of(draws, || {
            let u = randfixedsum(3, 1.5, 0.0, 1.0, &mut rng).unwrap();
            f64::from(u8::from(u[0] < 0.25))
        });
        let p = 5.0 / 24.0;
        let se = libm::sqrt(p * (1.0 - p) / draws as f64);
        assert!((below - p).abs() < 5.0 * se, "{below}");
    }

    /// Irwin–Hall CDF: P(sum of m independent uniforms on [0, 1] ≤ x).
    fn irwin_hall_cdf(m: u32, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        if x >= f64::from(m) {
            return 1.0;
        }
        let choose = |k: u32| (0..k).fold(1.0, |acc, i| acc * f64::from(m - i) / f64::from(i + 1));
        let factorial = (1..=m).fold(1.0, |acc, i| acc * f64::from(i));
        (0..=libm::floor(x) as u32)
            .map(|k| {
                let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
                sign * choose(k) * libm::pow(x - f64::from(k), f64::from(m))
            })
            .sum::<f64>()
            / factorial
    }

    #[test]
    fn randfixedsum_marginal_matches_the_exact_law_when_the_cap_binds() {
        // Uniform on {x ∈ [0,1]^n : Σx = s}: x_1 has density proportional to the
        // Irwin–Hall density of n−1 uniforms at s − x_1, so
        // P(x_1 ≤ a) = (F(s) − F(s − a)) / (F(s) − F(s − 1)), F = CDF of n−1.
        // n = 10, s = 3.5 spans several simplices (k = 3), exercising the whole
        // probability table. Tolerance 5 SE of a proportion over N draws.
        let (n, s, draws) = (10usize, 3.5, 20_000usize);
        let cdf = |x| irwin_hall_cdf(n as u32 - 1, x);
        let mut rng = stream_rng(10, 0);
        let samples: Vec<f64> = (0..draws)
            .map(|_| randfixedsum(n, s, 0.0, 1.0, &mut rng).unwrap()[0])
            .collect();
        for a in [0.2, 0.5, 0.8] {
            let p = (cdf(s) - cdf(s - a)) / (cdf(s) - cdf(s - 1.0)); // 0.3605, 0.7254, 0.9271
            let seen = samples.iter().filter(|&&x| x <= a).count() as f64 / draws as f64;
            let se = libm::sqrt(p * (1.0 - p) / draws as f64);
            assert!(
                (seen - p).abs() < 5.0 * se,
                "P(x_1 <= {a}) = {seen}, expected {p}"
            );
        }
    }

    #[test]
    fn same_seed_same_vector_and_different_seed_different_vector() {
        for method in UtilizationMethod::ALL {
            let draw = |seed| method.draw(6, 0.9, 1.0, &mut stream_rng(seed, 0)).unwrap();
            assert_eq!(
                format!("{:?}", draw(11)),
                format!("{:?}", draw(11)),
                "{method}"
            );
            assert_ne!(draw(11), draw(12), "{method}");
        }
    }

    #[test]
    fn method_names_round_trip() {
        for method in UtilizationMethod::ALL {
            assert_eq!(method.name().parse::<UtilizationMethod>(), Ok(method));
            assert_eq!(method.to_string(), method.name());
        }
        assert_eq!("UUniFast".parse(), Ok(UtilizationMethod::UUniFast));
        assert_eq!(
            "uunifast_discard".parse::<UtilizationMethod>().unwrap_err().to_string(),
            "unknown utilization method `uunifast_discard` (expected uunifast, uunifast-discard or randfixedsum)"
        );
    }

    #[test]
    fn plain_uunifast_refuses_totals_above_the_cap() {
        let mut rng = stream_rng(9, 0);
        let err = UtilizationMethod::UUniFast
            .draw(4, 1.5, 1.0, &mut rng)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "utilization 1.5 exceeds max-task-utilization 1, which plain uunifast cannot respect; \
             use method uunifast-discard or randfixedsum"
        );
    }
}
