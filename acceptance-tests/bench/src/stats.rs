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
    fn empty_is_zero() {
        let s = Samples::new();
        assert_eq!(s.median(), 0.0);
        assert_eq!(s.summary(0), "0");
    }
}
