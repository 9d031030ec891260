//! Statistics of measured costs and the straight line through them: pure
//! arithmetic, no I/O, so every figure here is tested exactly.
//!
//! * Percentiles are **nearest-rank** on the exact sorted samples: the
//!   q-quantile of N samples is the `ceil(q * N)`-th smallest (the smallest
//!   for q = 0). The median is the 0.5-quantile, so of an even count the
//!   lower middle sample.
//! * The fit is ordinary least squares of `y = a*n + b` over the points
//!   `(n, statistic at n)`, computed **exactly** in integers:
//!   `a = (N Σny − Σn Σy) / (N Σn² − (Σn)²)`, `b = (Σy − a Σn) / N`, then
//!   each rounded **up** to whole picoseconds, so the cost the file states
//!   is never below the fitted line for any n >= 0. `R² = 1 − SS_res/SS_tot`
//!   (1 when every point lies on the line).
//! * For the overheads file, a negative slope or intercept is clamped to 0:
//!   costs are not negative, and the clamped line `max(a,0) n + max(b,0)`
//!   lies on or above the fitted one for every n >= 0, so it stays safe.

use std::fmt;
use std::str::FromStr;

use rtlab_model::overheads::{LinearCost, Overheads, Timing};
use rtlab_model::Nanos;
use serde::Serialize;

/// min, median, p99, p99.9 and max of one scenario's samples at one n.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CostStats {
    /// Samples.
    pub count: usize,
    /// Smallest, ns.
    pub min_ns: u64,
    /// Median (nearest rank), ns.
    pub median_ns: u64,
    /// 99th percentile (nearest rank), ns.
    pub p99_ns: u64,
    /// 99.9th percentile (nearest rank), ns.
    pub p999_ns: u64,
    /// Largest, ns.
    pub max_ns: u64,
}

impl CostStats {
    /// The statistics of `samples` (sorted in place); `None` when empty.
    pub fn of(samples: &mut [u64]) -> Option<CostStats> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        Some(CostStats {
            count: samples.len(),
            min_ns: samples[0],
            median_ns: nearest_rank(samples, 500),
            p99_ns: nearest_rank(samples, 990),
            p999_ns: nearest_rank(samples, 999),
            max_ns: samples[samples.len() - 1],
        })
    }

    /// The value of `stat`.
    pub fn get(&self, stat: Statistic) -> u64 {
        match stat {
            Statistic::Max => self.max_ns,
            Statistic::P999 => self.p999_ns,
            Statistic::P99 => self.p99_ns,
            Statistic::Median => self.median_ns,
        }
    }
}

/// The `per_mille / 1000` quantile of `sorted` (ascending, not empty) by
/// nearest rank: the `ceil(q N)`-th smallest, the smallest for q = 0.
pub fn nearest_rank(sorted: &[u64], per_mille: u32) -> u64 {
    let n = sorted.len() as u64;
    let rank = (u64::from(per_mille.min(1000)) * n).div_ceil(1000).max(1);
    sorted[(rank - 1) as usize]
}

/// Which statistic of each n the line is fitted to (`--stat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// The largest sample: the worst case seen, one-off VM stalls included.
    Max,
    /// The 99.9th percentile (default): the worst case without the rare
    /// stalls of a virtual machine or a stray interrupt.
    #[default]
    P999,
    /// The 99th percentile.
    P99,
    /// The median: the typical cost, not a worst case.
    Median,
}

impl Statistic {
    /// The names `--stat` takes.
    pub const NAMES: [&'static str; 4] = ["max", "p999", "p99", "median"];

    /// The flag's spelling.
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Max => "max",
            Statistic::P999 => "p999",
            Statistic::P99 => "p99",
            Statistic::Median => "median",
        }
    }
}

impl fmt::Display for Statistic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Statistic {
    type Err = String;

    fn from_str(s: &str) -> Result<Statistic, String> {
        match s {
            "max" => Ok(Statistic::Max),
            "p999" | "p99.9" => Ok(Statistic::P999),
            "p99" => Ok(Statistic::P99),
            "median" | "p50" => Ok(Statistic::Median),
            _ => Err(format!(
                "unknown statistic `{}` (use max, p999, p99 or median)",
                rtlab_model::printable(s)
            )),
        }
    }
}

/// A least-squares line `a*n + b`, in picoseconds, rounded up.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LineFit {
    /// Slope a, ps per thread (rounded up; may be negative).
    pub per_thread_ps: i128,
    /// Intercept b, ps (rounded up; may be negative).
    pub base_ps: i128,
    /// Coefficient of determination; `None` with fewer than two distinct n.
    pub r_squared: Option<f64>,
    /// Points fitted.
    pub points: usize,
}

impl LineFit {
    /// The line as a file cost: negative parts clamped to 0 (module docs),
    /// with a note naming each clamp.
    pub fn to_cost(&self, what: &str) -> (LinearCost, Vec<String>) {
        let mut notes = Vec::new();
        let mut clamp = |v: i128, part: &str| -> u64 {
            if v < 0 {
                notes.push(format!(
                    "{what}: the fitted {part} is negative ({} ps); written as 0 (costs are not negative, and the line only rises)",
                    v
                ));
                0
            } else {
                u64::try_from(v).unwrap_or(u64::MAX)
            }
        };
        let per_thread = clamp(self.per_thread_ps, "slope");
        let base = clamp(self.base_ps, "intercept");
        (LinearCost::from_ps(per_thread, base), notes)
    }
}

/// `ceil(p / q)` for `q > 0`.
fn div_ceil_signed(p: i128, q: i128) -> i128 {
    -((-p).div_euclid(q))
}

/// The least-squares line through `points` = `(n, cost in ns)` (module
/// docs). `None` for no points or sums too large for 128 bits (costs of
/// more than about 10^12 s). With a single distinct n the line is flat
/// through the mean of its costs (rounded up).
pub fn fit_line(points: &[(u64, u64)]) -> Option<LineFit> {
    if points.is_empty() {
        return None;
    }
    let count = points.len() as i128;
    let (mut sx, mut sy, mut sxx, mut sxy) = (0i128, 0i128, 0i128, 0i128);
    for &(x, y) in points {
        let (x, y) = (i128::from(x), i128::from(y));
        sx = sx.checked_add(x)?;
        sy = sy.checked_add(y)?;
        sxx = sxx.checked_add(x.checked_mul(x)?)?;
        sxy = sxy.checked_add(x.checked_mul(y)?)?;
    }
    // a = num / den (ns per thread), den > 0 unless every n is equal.
    let den = count.checked_mul(sxx)?.checked_sub(sx.checked_mul(sx)?)?;
    let num = if den == 0 {
        0
    } else {
        count.checked_mul(sxy)?.checked_sub(sx.checked_mul(sy)?)?
    };
    let den = if den == 0 { 1 } else { den };
    let per_thread_ps = div_ceil_signed(num.checked_mul(1000)?, den);
    // b = (sy * den - num * sx) / (count * den) ns.
    let b_num = sy.checked_mul(den)?.checked_sub(num.checked_mul(sx)?)?;
    let base_ps = div_ceil_signed(b_num.checked_mul(1000)?, count.checked_mul(den)?);
    let distinct = points.iter().any(|p| p.0 != points[0].0);
    let r_squared = distinct.then(|| {
        let a = num as f64 / den as f64;
        let b = b_num as f64 / (count * den) as f64;
        let mean = sy as f64 / count as f64;
        let (mut ss_res, mut ss_tot) = (0.0, 0.0);
        for &(x, y) in points {
            let y = y as f64;
            ss_res += (y - (a * x as f64 + b)).powi(2);
            ss_tot += (y - mean).powi(2);
        }
        if ss_tot == 0.0 {
            1.0
        } else {
            1.0 - ss_res / ss_tot
        }
    });
    Some(LineFit {
        per_thread_ps,
        base_ps,
        r_squared,
        points: points.len(),
    })
}

/// The fitted inputs of an overheads file: per scenario, the statistic at
/// each n.
#[derive(Debug, Clone, Default)]
pub struct FitInputs {
    /// `(n, stats)` of the preempt scenario.
    pub preempt: Vec<(usize, CostStats)>,
    /// `(n, stats)` of the exit scenario.
    pub exit: Vec<(usize, CostStats)>,
    /// `(n, stats)` of the nonpreempt scenario.
    pub nonpreempt: Vec<(usize, CostStats)>,
    /// The tick gaps.
    pub timer: Option<CostStats>,
    /// The measured tick period.
    pub tick: Option<Nanos>,
}

/// The three lines and the constant timer cost fitted to `stat`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fits {
    /// The statistic fitted.
    pub stat: Statistic,
    /// C_timer, ps (the statistic of the tick gaps).
    pub timer_ps: Option<u64>,
    /// C_preempt.
    pub preempt: Option<LineFit>,
    /// C_exit.
    pub exit: Option<LineFit>,
    /// C_nonpreempt.
    pub nonpreempt: Option<LineFit>,
}

impl FitInputs {
    /// Fits each scenario's `stat` against n.
    pub fn fit(&self, stat: Statistic) -> Fits {
        let line = |rows: &[(usize, CostStats)]| {
            let points: Vec<(u64, u64)> =
                rows.iter().map(|(n, s)| (*n as u64, s.get(stat))).collect();
            fit_line(&points)
        };
        Fits {
            stat,
            timer_ps: self.timer.map(|t| t.get(stat).saturating_mul(1000)),
            preempt: line(&self.preempt),
            exit: line(&self.exit),
            nonpreempt: line(&self.nonpreempt),
        }
    }
}

impl Fits {
    /// The overheads file: C_timer, C_preempt, C_exit, C_nonpreempt from the
    /// fits (clamped, with notes), C_system = C_exit (paper 004 §3), and
    /// `releases = "hrtimer"` with the measured tick (Linux wakes each
    /// release from its own high-resolution timer; the periodic tick still
    /// costs C_timer). Fails naming the first cost that has no measurement.
    pub fn overheads(
        &self,
        name: &str,
        source: &str,
        tick: Option<Nanos>,
    ) -> Result<(Overheads, Vec<String>), String> {
        let missing = |what: &str| {
            format!("no {what} samples were measured (interrupted?), so there is no {what} cost to write")
        };
        let mut notes = Vec::new();
        let mut cost = |fit: &Option<LineFit>, what: &str| -> Result<LinearCost, String> {
            let fit = fit.as_ref().ok_or_else(|| missing(what))?;
            let (cost, more) = fit.to_cost(what);
            notes.extend(more);
            Ok(cost)
        };
        let preempt = cost(&self.preempt, "preempt")?;
        let exit = cost(&self.exit, "exit")?;
        let nonpreempt = cost(&self.nonpreempt, "nonpreempt")?;
        let timer = LinearCost::from_ps(0, self.timer_ps.ok_or_else(|| missing("timer"))?);
        Ok((
            Overheads {
                name: name.to_string(),
                source: source.to_string(),
                timer,
                preempt,
                exit,
                nonpreempt,
                system: exit,
                schedule: LinearCost::ZERO,
                migration: LinearCost::ZERO,
                release: LinearCost::ZERO,
                wake: LinearCost::ZERO,
                timing: Timing::Hrtimer { tick },
                throttling: rtlab_model::overheads::Throttling::NONE,
                dispatcher: None,
            },
            notes,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(v: &[u64]) -> CostStats {
        CostStats::of(&mut v.to_vec()).unwrap()
    }

    #[test]
    fn nearest_rank_percentiles_of_one_to_a_thousand() {
        let mut v: Vec<u64> = (1..=1000).rev().collect();
        let s = CostStats::of(&mut v).unwrap();
        assert_eq!(
            (
                s.count,
                s.min_ns,
                s.median_ns,
                s.p99_ns,
                s.p999_ns,
                s.max_ns
            ),
            (1000, 1, 500, 990, 999, 1000)
        );
    }

    #[test]
    fn nearest_rank_of_small_counts() {
        // N = 10: median is the 5th, p99 the ceil(9.9) = 10th, p99.9 the 10th.
        let s = stats(&[10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
        assert_eq!((s.median_ns, s.p99_ns, s.p999_ns), (50, 100, 100));
        // N = 1: every statistic is the sample.
        let s = stats(&[7]);
        assert_eq!((s.min_ns, s.median_ns, s.p999_ns, s.max_ns), (7, 7, 7, 7));
        // N = 2001: p99.9 is the ceil(1998.999) = 1999th smallest.
        let mut v: Vec<u64> = (0..2001).collect();
        let s = CostStats::of(&mut v).unwrap();
        assert_eq!((s.median_ns, s.p99_ns, s.p999_ns), (1000, 1980, 1998));
        assert_eq!(nearest_rank(&[1, 2, 3], 0), 1);
        assert!(CostStats::of(&mut []).is_none());
    }

    #[test]
    fn statistic_names_parse_and_pick_their_value() {
        let s = stats(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 1000]);
        for (name, value) in [("max", 1000), ("p999", 1000), ("p99", 1000), ("median", 5)] {
            let stat: Statistic = name.parse().unwrap();
            assert_eq!(stat.name(), name);
            assert_eq!(s.get(stat), value, "{name}");
        }
        assert_eq!(Statistic::default(), Statistic::P999);
        let err = "p95".parse::<Statistic>().unwrap_err();
        assert_eq!(
            err,
            "unknown statistic `p95` (use max, p999, p99 or median)"
        );
    }

    #[test]
    fn an_exact_line_is_recovered_to_the_picosecond() {
        // y = 790 n + 30100 ns (paper 004's C_preempt in ns).
        let points: Vec<(u64, u64)> = [2u64, 4, 8, 12, 16, 20]
            .iter()
            .map(|&n| (n, 790 * n + 30_100))
            .collect();
        let f = fit_line(&points).unwrap();
        assert_eq!((f.per_thread_ps, f.base_ps), (790_000, 30_100_000));
        assert_eq!(f.r_squared, Some(1.0));
        assert_eq!(f.points, 6);
    }

    #[test]
    fn a_noisy_line_matches_the_hand_computed_fit() {
        // n = 1, 2, 3; y = 1, 2, 2 ns. N = 3, Σn = 6, Σy = 5, Σn² = 14,
        // Σny = 11: a = (33 - 30) / (42 - 36) = 0.5 ns, b = (5 - 3) / 3
        // = 0.6666.. ns -> 667 ps rounded up. Fitted 1.1667, 1.6667, 2.1667:
        // SS_res = 1/36 + 1/9 + 1/36 = 1/6, SS_tot = 2/3, R² = 0.75.
        let f = fit_line(&[(1, 1), (2, 2), (3, 2)]).unwrap();
        assert_eq!((f.per_thread_ps, f.base_ps), (500, 667));
        assert!((f.r_squared.unwrap() - 0.75).abs() < 1e-12);
    }

    #[test]
    fn negative_slopes_round_up_toward_zero_and_clamp_in_the_file() {
        // y = 10, 9, 9 at n = 1, 2, 3: a = (3*55 - 6*28)/6 = -0.5 ns,
        // b = (28 + 3)/3 = 10.333.. ns -> 10334 ps.
        let f = fit_line(&[(1, 10), (2, 9), (3, 9)]).unwrap();
        assert_eq!((f.per_thread_ps, f.base_ps), (-500, 10_334));
        let (cost, notes) = f.to_cost("exit");
        assert_eq!(cost, LinearCost::from_ps(0, 10_334));
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].starts_with("exit: the fitted slope is negative (-500 ps)"),
            "{}",
            notes[0]
        );
        // The clamped line is never below the fitted one for n >= 0.
        for n in 0..100i128 {
            assert!(cost.at(n as usize).as_ns() as i128 * 1000 >= -500 * n + 10_334);
        }
        // A negative intercept: y = 0, 10, 20 at n = 1, 2, 3 -> 10 n - 10.
        let f = fit_line(&[(1, 0), (2, 10), (3, 20)]).unwrap();
        assert_eq!((f.per_thread_ps, f.base_ps), (10_000, -10_000));
        let (cost, notes) = f.to_cost("preempt");
        assert_eq!((cost, notes.len()), (LinearCost::from_ps(10_000, 0), 1));
    }

    #[test]
    fn one_n_gives_a_flat_line_through_the_mean() {
        let f = fit_line(&[(4, 10), (4, 11)]).unwrap();
        assert_eq!((f.per_thread_ps, f.base_ps, f.r_squared), (0, 10_500, None));
        assert!(fit_line(&[]).is_none());
        // Sums past 128 bits are refused, not wrapped.
        assert!(fit_line(&[(u64::MAX, u64::MAX), (1, 1)]).is_none());
    }

    #[test]
    fn the_overheads_file_takes_the_chosen_statistic_of_each_n() {
        let row = |n: usize, base: u64| {
            // p99.9 of these 1000 samples is `base + 998`, the max `base + 999`.
            let mut v: Vec<u64> = (0..1000).map(|i| base + i).collect();
            (n, CostStats::of(&mut v).unwrap())
        };
        let inputs = FitInputs {
            preempt: vec![row(2, 1_000), row(4, 3_000)],
            exit: vec![row(2, 500), row(4, 500)],
            nonpreempt: vec![row(2, 200), row(4, 600)],
            timer: Some(stats(&[3_000, 4_000])),
            tick: Some(Nanos::from_ms(4)),
        };
        let fits = inputs.fit(Statistic::P999);
        // preempt: (2, 1998), (4, 3998): a = 1000 ns, b = -2 ns -> clamped.
        assert_eq!(fits.preempt.unwrap().per_thread_ps, 1_000_000);
        assert_eq!(fits.preempt.unwrap().base_ps, -2_000);
        let (o, notes) = fits.overheads("here", "measured", inputs.tick).unwrap();
        assert_eq!(o.preempt, LinearCost::from_ps(1_000_000, 0));
        assert_eq!(o.exit, LinearCost::from_ps(0, 1_498_000));
        assert_eq!(o.system, o.exit);
        // nonpreempt: (2, 1198), (4, 1598): a = 200 ns, b = 798 ns.
        assert_eq!(o.nonpreempt, LinearCost::from_ps(200_000, 798_000));
        assert_eq!(o.timer, LinearCost::from_ps(0, 4_000_000));
        assert_eq!(
            o.timing,
            Timing::Hrtimer {
                tick: Some(Nanos::from_ms(4))
            }
        );
        assert_eq!((o.name.as_str(), o.source.as_str()), ("here", "measured"));
        assert_eq!(notes.len(), 1, "{notes:?}");
        // The file reads back to the same profile.
        let back = Overheads::parse_toml(&o.to_toml_string(), "x", "x").unwrap();
        assert_eq!(back, o);
        // Max picks the largest sample instead.
        let max = inputs.fit(Statistic::Max);
        assert_eq!(max.exit.unwrap().base_ps, 1_499_000);
        // A scenario without samples cannot be written.
        let mut partial = inputs.clone();
        partial.nonpreempt.clear();
        let err = partial
            .fit(Statistic::P999)
            .overheads("x", "y", None)
            .unwrap_err();
        assert!(
            err.starts_with("no nonpreempt samples were measured"),
            "{err}"
        );
    }
}
