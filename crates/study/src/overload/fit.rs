//! Ordinary least squares of a line through points, to check paper 001's
//! claim that FPS "presents a linear behavior" under overload.
//!
//! For points `(x_k, y_k)`, `k = 1..n`, with means `x̄`, `ȳ`:
//! `slope = Σ (x_k - x̄)(y_k - ȳ) / Σ (x_k - x̄)²`,
//! `intercept = ȳ - slope · x̄`, and the coefficient of determination
//! `R² = 1 - Σ (y_k - ŷ_k)² / Σ (y_k - ȳ)²` with `ŷ_k = intercept + slope · x_k`
//! (1 for a perfect line; undefined, `None`, when every `y_k` is equal).

use serde::Serialize;

/// A fitted line `y = intercept + slope · x`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Line {
    /// Change of y per unit of x.
    pub slope: f64,
    /// y at x = 0.
    pub intercept: f64,
    /// Coefficient of determination; `None` when y is constant.
    pub r_squared: Option<f64>,
}

/// The least-squares line through `points`; `None` with fewer than two
/// distinct x.
pub fn least_squares(points: &[(f64, f64)]) -> Option<Line> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let ss_tot: f64 = points.iter().map(|p| (p.1 - mean_y).powi(2)).sum();
    let ss_res: f64 = points
        .iter()
        .map(|p| (p.1 - (intercept + slope * p.0)).powi(2))
        .sum();
    let r_squared = (ss_tot > 0.0).then(|| 1.0 - ss_res / ss_tot);
    Some(Line {
        slope,
        intercept,
        r_squared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_perfect_line_has_r_squared_one() {
        let line = least_squares(&[(100.0, 5.0), (110.0, 25.0), (120.0, 45.0)]).unwrap();
        assert!((line.slope - 2.0).abs() < 1e-12);
        assert!((line.intercept + 195.0).abs() < 1e-9);
        assert!((line.r_squared.unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn hand_computed_fit() {
        // y = (0, 2, 1) at x = (0, 1, 2): x̄ = 1, ȳ = 1, Sxx = 2,
        // Sxy = (-1)(-1) + 0·1 + 1·0 = 1 → slope 0.5, intercept 0.5;
        // ŷ = (0.5, 1, 1.5), SSres = 0.25 + 1 + 0.25 = 1.5, SStot = 2 → R² = 0.25.
        let line = least_squares(&[(0.0, 0.0), (1.0, 2.0), (2.0, 1.0)]).unwrap();
        assert!((line.slope - 0.5).abs() < 1e-12);
        assert!((line.intercept - 0.5).abs() < 1e-12);
        assert!((line.r_squared.unwrap() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(least_squares(&[(1.0, 1.0)]), None);
        assert_eq!(least_squares(&[(1.0, 1.0), (1.0, 2.0)]), None);
        let flat = least_squares(&[(1.0, 3.0), (2.0, 3.0)]).unwrap();
        assert_eq!((flat.slope, flat.r_squared), (0.0, None));
    }
}
