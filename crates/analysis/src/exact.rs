//! Exact comparisons of utilization-like sums, where floating-point rounding
//! could flip a verdict (SchedCAT's lesson).
//!
//! Each comparison first decides in `f64` when the two sides are more than
//! [`MARGIN`] apart, and otherwise decides exactly with big integers by
//! cross-multiplying every denominator. Fractions are `(numerator,
//! denominator)` pairs of integers (typically `(C, T)` in nanoseconds);
//! denominators must be non-zero.

use std::cmp::Ordering;

use num_bigint::BigUint;

/// Below this distance between the two sides, `f64` is not trusted.
pub const MARGIN: f64 = 1e-9;

/// A fraction `num / den` of integers.
pub type Fraction = (u64, u64);

fn as_f64(f: Fraction) -> f64 {
    f.0 as f64 / f.1 as f64
}

/// `Σ fractions` as one exact fraction `N / D`, with `D = Π den`.
fn exact_sum(fractions: &[Fraction]) -> (BigUint, BigUint) {
    let mut num = BigUint::from(0u32);
    let mut den = BigUint::from(1u32);
    for &(a, b) in fractions {
        // num/den + a/b = (num*b + a*den) / (den*b)
        num = num * b + den.clone() * a;
        den *= b;
    }
    (num, den)
}

/// `Σ fractions` compared with `p / q`, exactly (`q > 0`).
pub fn cmp_sum(fractions: &[Fraction], p: u64, q: u64) -> Ordering {
    let approx: f64 = fractions.iter().map(|&f| as_f64(f)).sum();
    let rhs = p as f64 / q as f64;
    if approx < rhs - MARGIN {
        return Ordering::Less;
    }
    if approx > rhs + MARGIN {
        return Ordering::Greater;
    }
    let (num, den) = exact_sum(fractions);
    (num * q).cmp(&(den * p))
}

/// `Σ fractions <= p / q`, exactly (`q > 0`).
pub fn sum_at_most(fractions: &[Fraction], p: u64, q: u64) -> bool {
    cmp_sum(fractions, p, q) != Ordering::Greater
}

/// `Σ fractions <= 1`, exactly.
pub fn sum_at_most_one(fractions: &[Fraction]) -> bool {
    sum_at_most(fractions, 1, 1)
}

/// Largest power [`sum_within_liu_layland`] computes exactly, in bits
/// (16 MiB): `(k D)^k` has about `k · bits(k D)` bits, where `D` is the
/// product of all periods, so 10,000 tasks would need about 400 MB.
pub const MAX_EXACT_POWER_BITS: u64 = 1 << 27;

/// `Σ fractions <= k (2^{1/k} - 1)` (the Liu & Layland bound for `k`
/// tasks), exactly: with `U = N / D` the inequality is equivalent to
/// `(k D + N)^k <= 2 (k D)^k`. `k = 0` is treated as `k = 1`.
///
/// When `f64` cannot decide and the power would exceed
/// [`MAX_EXACT_POWER_BITS`], the answer is `false`: the bound is a
/// sufficient test, so not meeting it is inconclusive, never wrong.
pub fn sum_within_liu_layland(fractions: &[Fraction], k: u32) -> bool {
    let k = k.max(1);
    let approx: f64 = fractions.iter().map(|&f| as_f64(f)).sum();
    let bound = f64::from(k) * (2f64.powf(1.0 / f64::from(k)) - 1.0);
    if approx < bound - MARGIN {
        return true;
    }
    if approx > bound + MARGIN {
        return false;
    }
    let (num, den) = exact_sum(fractions);
    let kd = den * k;
    if (kd.bits() + 1).saturating_mul(u64::from(k)) > MAX_EXACT_POWER_BITS {
        return false;
    }
    let lhs = (kd.clone() + num).pow(k);
    let rhs = kd.pow(k) * 2u32;
    lhs <= rhs
}

/// `Π (1 + fraction) <= 2`, exactly: `Π (den + num) <= 2 Π den`.
pub fn product_of_one_plus_at_most_two(fractions: &[Fraction]) -> bool {
    let approx: f64 = fractions.iter().map(|&f| 1.0 + as_f64(f)).product();
    if approx < 2.0 - MARGIN {
        return true;
    }
    if approx > 2.0 + MARGIN {
        return false;
    }
    let mut lhs = BigUint::from(1u32);
    let mut rhs = BigUint::from(2u32);
    for &(a, b) in fractions {
        lhs *= BigUint::from(a) + b;
        rhs *= b;
    }
    lhs <= rhs
}

/// The end of the processor-demand testing interval for a demand bounded
/// by `U t + k`: `⌈(k + Σ w_i a_i/b_i) / (1 − Σ a_i/b_i)⌉`, with
/// `U = Σ a_i/b_i < 1` (George, Rivierre & Spuri 1996's `La` when
/// `w_i = max(0, T_i − D_i)`, `a_i/b_i = C_i/T_i`). `None` when `U >= 1` or
/// the bound does not fit in `u128`; `b_i > 0`.
///
/// Far from `U = 1` (`1 − U > 1e-6`) it is computed in `f64` and widened by
/// a relative `1e-8`, far more than the rounding error; closer to
/// 1 exactly, with big integers over `Π b_i`.
pub fn demand_horizon(k: u128, terms: &[(u128, u128, u128)]) -> Option<u128> {
    let u: f64 = terms.iter().map(|&(_, a, b)| a as f64 / b as f64).sum();
    if 1.0 - u > 1e-6 {
        let slack: f64 = terms
            .iter()
            .map(|&(w, a, b)| w as f64 * (a as f64 / b as f64))
            .sum::<f64>()
            + k as f64;
        let bound = (slack / (1.0 - u) * (1.0 + 1e-8)).ceil();
        return (bound < 1e38).then_some(bound as u128);
    }
    // U = N / P with P = Π b_i; bound = (k P + Σ w_i a_i P/b_i) / (P − N).
    let p = terms
        .iter()
        .fold(BigUint::from(1u32), |p, &(_, _, b)| p * BigUint::from(b));
    let mut n = BigUint::from(0u32);
    let mut num = BigUint::from(k) * &p;
    for &(w, a, b) in terms {
        let share = &p / BigUint::from(b) * BigUint::from(a);
        num += &share * BigUint::from(w);
        n += share;
    }
    if n >= p {
        return None;
    }
    let den = p - n;
    let bound = (num + &den - 1u32) / den;
    u128::try_from(bound).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn liu_layland_gives_up_instead_of_a_power_beyond_its_limit() {
        // 3,000 tasks whose periods multiply to ~90,000 bits: (k D)^k would
        // take ~34 MB. The sum sits 1e-12 below the bound, so f64 cannot
        // decide and the exact answer would be "within"; past the limit the
        // answer is the safe "not shown".
        let k = 3_000u32;
        let bound = f64::from(k) * (2f64.powf(1.0 / f64::from(k)) - 1.0);
        let period = 1_000_000_007u64;
        let c = (bound * period as f64 / f64::from(k)).floor() as u64;
        let mut fractions = vec![(c, period); k as usize - 1];
        let rest = bound - 1e-12 - f64::from(k - 1) * c as f64 / period as f64;
        let fine = 1_000_000_000_000_000_000u64;
        fractions.push(((rest * fine as f64) as u64, fine));
        let approx: f64 = fractions.iter().map(|&f| as_f64(f)).sum();
        assert!((approx - bound).abs() < MARGIN, "{approx} vs {bound}");
        assert!(!sum_within_liu_layland(&fractions, k));
        // Small sets are still decided exactly at the same closeness.
        assert!(sum_within_liu_layland(
            &[(414_213_562, 1_000_000_000); 2],
            2
        ));
    }

    #[test]
    fn exact_where_floats_are_ambiguous() {
        // 1/3 + 1/3 + 1/3 is exactly 1.
        assert!(sum_at_most_one(&[(1, 3), (1, 3), (1, 3)]));
        // One part in 10^15 above 1.
        let d = 1_000_000_000_000_000u64;
        assert!(!sum_at_most_one(&[(d / 2, d), (d / 2 + 1, d)]));
        assert!(sum_at_most(&[(1, 4), (1, 4)], 1, 2));
        assert!(!sum_at_most(
            &[(1, 4), (1, 4), (1, 1_000_000_000_000)],
            1,
            2
        ));
    }

    #[test]
    fn liu_layland_bound() {
        // 2 tasks: 2(sqrt 2 - 1) = 0.828427...
        assert!(sum_within_liu_layland(
            &[(414_213, 1_000_000), (414_213, 1_000_000)],
            2
        ));
        assert!(!sum_within_liu_layland(
            &[(414_214, 1_000_000), (414_214, 1_000_000)],
            2
        ));
        // 1 task: bound 1, exactly.
        assert!(sum_within_liu_layland(&[(7, 7)], 1));
        assert!(!sum_within_liu_layland(
            &[(7_000_000_001, 7_000_000_000)],
            1
        ));
    }

    #[test]
    fn hyperbolic_product() {
        // (1 + 1/2)(1 + 1/3) = 2 exactly.
        assert!(product_of_one_plus_at_most_two(&[(1, 2), (1, 3)]));
        assert!(!product_of_one_plus_at_most_two(&[
            (1, 2),
            (1_000_000_001, 3_000_000_000)
        ]));
    }

    #[test]
    fn demand_horizon_exact_and_fast_paths_agree() {
        // U = 1/2, slack 2 * 1/2 = 1: bound 2 exactly; the f64 path may add 1 ns.
        let fast = demand_horizon(0, &[(2, 1, 2)]).unwrap();
        assert!((2..=3).contains(&fast), "{fast}");
        // U = 1 - 1e-12 (exact path): (1 * 1/2) / 1e-12 = 5e11.
        let t = 1_000_000_000_000u128;
        let exact = demand_horizon(0, &[(1, 1, 2), (0, t / 2 - 1, t)]).unwrap();
        assert_eq!(exact, 500_000_000_000);
        assert_eq!(demand_horizon(0, &[(1, 1, 2), (0, 1, 2)]), None, "U = 1");
        assert_eq!(demand_horizon(3, &[(0, 3, 2)]), None, "U > 1");
        // The constant counts too: (3 + 0) / (1 - 1/4) = 4.
        let with_k = demand_horizon(3, &[(0, 1, 4)]).unwrap();
        assert!((4..=5).contains(&with_k), "{with_k}");
    }
}
