//! Terraform numbers: arbitrary-precision decimals on the wire, usually small integers here.
//! PLACEHOLDER API: the codec work fills in the representation.

/// A Terraform number. Compares by numeric value.
#[derive(Debug, Clone)]
pub struct Number(String);

impl Number {
    pub fn from_i64(v: i64) -> Self {
        Number(v.to_string())
    }
    /// The value as an i64 when it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.0.parse().ok()
    }
    pub fn as_f64(&self) -> Option<f64> {
        self.0.parse().ok()
    }
    /// Parses a decimal (as JSON or HCL would write it).
    pub fn parse(s: &str) -> Option<Self> {
        s.parse::<f64>().ok().map(|_| Number(s.to_string()))
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
