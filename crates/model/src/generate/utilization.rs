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
    if n == 0 {
        return out;
    }
    let mut sum = total;
    for i in 1..n {
        let next = sum * libm::pow(unit_open(rng), 1.0 / (n - i) as f64);
        out.push(sum - next);
        sum = next;
    }
    out.push(sum);
    out
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
    for _ in 0..max_attempts {
        let u = uunifast(n, total, rng);
        if u.iter().all(|&x| x <= max_per_task) {
            return Ok(u);
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
/// Errors: `n = 0`, bounds not finite or `lo > hi`, and
/// [`GenerateError::TotalOutOfRange`] when `total` is outside `[n·lo, n·hi]`.
/// Results are clamped into `[lo, hi]` against last-bit rounding.
pub fn randfixedsum<R: Rng + ?Sized>(
    n: usize,
    total: f64,
    lo: f64,
    hi: f64,
    rng: &mut R,
) -> Result<Vec<f64>, GenerateError> {
    check_tasks(n)?;
    if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
        return Err(GenerateError::invalid(
            "--max-task-utilization",
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
        return Ok(vec![only; n]);
    }
    let s = (total - min) / (hi - lo);
    let unit = stafford_unit_cube(n, s, rng);
    Ok(unit
        .into_iter()
        .map(|x| (lo + (hi - lo) * x).clamp(lo, hi))
        .collect())
}

/// The smallest positive double, 2^−1074 (MATLAB's `tiny` in randfixedsum).
const TINY: f64 = f64::from_bits(1);

/// Stafford's algorithm on the unit cube: `n ≥ 2` values in `[0, 1]` summing
/// to `s ∈ [0, n]`, uniform over that slice; steps 1–4 of [`randfixedsum`].
fn stafford_unit_cube<R: Rng + ?Sized>(n: usize, s: f64, rng: &mut R) -> Vec<f64> {
    debug_assert!(n >= 2);
    let k = libm::floor(s).clamp(0.0, (n - 1) as f64) as usize;
    let mut s = s.clamp(k as f64, k as f64 + 1.0);
    let s1: Vec<f64> = (0..n).map(|c| s - (k as f64 - c as f64)).collect();
    let s2: Vec<f64> = (0..n).map(|c| (k + n - c) as f64 - s).collect();

    let mut w = vec![vec![0.0_f64; n + 1]; n];
    w[0][1] = 1.0;
    let mut t = vec![vec![0.0_f64; n]; n - 1];
    for i in 2..=n {
        let fi = i as f64;
        let (done, rest) = w.split_at_mut(i - 1);
        let (prev, row) = (&done[i - 2], &mut rest[0]);
        for c in 0..i {
            let tmp1 = prev[c + 1] * s1[c] / fi;
            let tmp2 = prev[c] * s2[n - i + c] / fi;
            let sum = tmp1 + tmp2;
            row[c + 1] = sum;
            let tmp3 = sum + TINY;
            t[i - 2][c] = if s2[n - i + c] > s1[c] {
                tmp2 / tmp3
            } else {
                1.0 - tmp1 / tmp3
            };
        }
        let peak = row.iter().copied().fold(0.0_f64, f64::max);
        if peak > 0.0 {
            row.iter_mut().for_each(|v| *v /= peak);
        }
    }

    let mut x = vec![0.0_f64; n];
    let mut j = k;
    let (mut sm, mut pr) = (0.0_f64, 1.0_f64);
    for i in (1..n).rev() {
        let rt = unit_open(rng);
        let rs = unit_open(rng);
        // j = 0 has t = 0 in exact arithmetic; the guard keeps j in range.
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

fn check_tasks(n: usize) -> Result<(), GenerateError> {
    if n == 0 {
        return Err(GenerateError::invalid("--tasks", "must be at least 1"));
    }
    Ok(())
}

/// The checks shared by every method: n ≥ 1, 0 < U ≤ n × cap, cap > 0.
pub(crate) fn check_target(n: usize, total: f64, cap: f64) -> Result<(), GenerateError> {
    check_tasks(n)?;
    if !(total.is_finite() && total > 0.0) {
        return Err(GenerateError::invalid("--utilization", "must be > 0"));
    }
    if !(cap.is_finite() && cap > 0.0) {
        return Err(GenerateError::invalid(
            "--max-task-utilization",
            "must be > 0",
        ));
    }
    let reachable = n as f64 * cap;
    if total > reachable * (1.0 + TOTAL_SLACK) {
        return Err(GenerateError::invalid(
            "--utilization",
            format!("{total} exceeds --tasks × --max-task-utilization = {n} × {cap} = {reachable}"),
        ));
    }
    Ok(())
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
        check_target(n, total, max_per_task)?;
        match self {
            UtilizationMethod::UUniFast => {
                if total > max_per_task {
                    return Err(GenerateError::invalid(
                        "--utilization",
                        format!(
                            "{total} exceeds --max-task-utilization {max_per_task}, which plain uunifast \
                             cannot respect; use --method uunifast-discard or randfixedsum"
                        ),
                    ));
                }
                Ok(uunifast(n, total, rng))
            }
            UtilizationMethod::UUniFastDiscard => {
                uunifast_discard(n, total, max_per_task, rng, DEFAULT_DISCARD_ATTEMPTS)
            }
            UtilizationMethod::RandFixedSum => randfixedsum(n, total, 0.0, max_per_task, rng),
        }
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
             (--tasks 10, --utilization 9.5); lower --utilization or use --method randfixedsum"
        );
        assert_eq!(
            uunifast_discard(3, 3.5, 1.0, &mut rng, 10)
                .unwrap_err()
                .to_string(),
            "--utilization 3.5 exceeds --tasks × --max-task-utilization = 3 × 1 = 3"
        );
        assert_eq!(
            uunifast_discard(0, 0.5, 1.0, &mut rng, 10)
                .unwrap_err()
                .to_string(),
            "--tasks must be at least 1"
        );
        assert_eq!(
            uunifast_discard(3, 0.0, 1.0, &mut rng, 10)
                .unwrap_err()
                .to_string(),
            "--utilization must be > 0"
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

    #[test]
    fn randfixedsum_refuses_unreachable_totals() {
        let mut rng = stream_rng(5, 0);
        assert_eq!(
            randfixedsum(4, 4.5, 0.0, 1.0, &mut rng).unwrap_err().to_string(),
            "--utilization 4.5 is outside [0, 4], the totals 4 tasks with utilization in [0, 1] can reach"
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
            "--utilization 1.5 exceeds --max-task-utilization 1, which plain uunifast cannot respect; \
             use --method uunifast-discard or randfixedsum"
        );
    }
}
