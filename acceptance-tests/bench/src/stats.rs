//! Repeated measurements and their summary: median and the min–max range, as the report
//! prints them.

/// The values of one measurement, one per repetition.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    values: Vec<f64>,
}

impl Samples {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, v: f64) {
        self.values.push(v);
    }

    pub fn count(&self) -> usize {
        self.values.len()
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v = self.values.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    /// The median (the mean of the two middle values for an even count); 0 when empty.
    pub fn median(&self) -> f64 {
        let v = self.sorted();
        match v.len() {
            0 => 0.0,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }

    pub fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(0.0)
    }

    pub fn max(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(0.0)
    }

    /// This median over `baseline`'s; `None` when the baseline's median is 0.
    pub fn median_ratio(&self, baseline: &Samples) -> Option<f64> {
        let b = baseline.median();
        (b > 0.0).then(|| self.median() / b)
    }

    /// The first and third quartiles (medians of the lower and upper halves); 0 when empty.
    pub fn quartiles(&self) -> (f64, f64) {
        let v = self.sorted();
        let half = v.len() / 2;
        let lower = Samples {
            values: v[..half].to_vec(),
        };
        let upper = Samples {
            values: v[v.len() - half..].to_vec(),
        };
        (lower.median(), upper.median())
    }

    /// Per repetition, `f(self[i], other[i])`: the two measured in the same round (paired).
    pub fn paired(&self, other: &Samples, f: impl Fn(f64, f64) -> f64) -> Samples {
        Samples {
            values: self
                .values
                .iter()
                .zip(&other.values)
                .map(|(a, b)| f(*a, *b))
                .collect(),
        }
    }

    /// `median [min–max]` with `decimals` places, e.g. `1.23 [1.10–1.40]`.
    pub fn summary(&self, decimals: usize) -> String {
        if self.values.len() <= 1 {
            return format!("{:.decimals$}", self.median());
        }
        format!(
            "{:.decimals$} [{:.decimals$}–{:.decimals$}]",
            self.median(),
            self.min(),
            self.max()
        )
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "median": self.median(),
            "min": self.min(),
            "max": self.max(),
            "n": self.values.len(),
            "values": self.values,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let mut s = Samples::new();
        for v in [3.0, 1.0, 2.0] {
            s.push(v);
        }
        assert_eq!(s.median(), 2.0);
        s.push(10.0);
        assert_eq!(s.median(), 2.5);
        assert_eq!(s.min(), 1.0);
        assert_eq!(s.max(), 10.0);
        assert_eq!(s.summary(1), "2.5 [1.0–10.0]");
    }

    #[test]
    fn quartiles_and_paired_ratios() {
        let mut a = Samples::new();
        let mut b = Samples::new();
        for (x, y) in [(2.0, 1.0), (9.0, 3.0), (4.0, 4.0), (8.0, 2.0), (5.0, 5.0)] {
            a.push(x);
            b.push(y);
        }
        // sorted 2 4 5 8 9: lower half 2 4, upper half 8 9
        assert_eq!(a.quartiles(), (3.0, 8.5));
        let r = a.paired(&b, |x, y| x / y);
        // 2, 3, 1, 4, 1: each pair from its own round, not median over median (5 / 3)
        assert_eq!(r.median(), 2.0);
        assert_eq!(Samples::new().quartiles(), (0.0, 0.0));
        assert_eq!(a.median_ratio(&b), Some(5.0 / 3.0));
        assert_eq!(a.median_ratio(&Samples::new()), None);
    }

    #[test]
    fn empty_is_zero() {
        let s = Samples::new();
        assert_eq!(s.median(), 0.0);
        assert_eq!(s.summary(0), "0");
    }
}
