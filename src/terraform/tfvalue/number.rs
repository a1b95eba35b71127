//! Terraform numbers: arbitrary-precision decimals.
//!
//! Terraform (cty) keeps numbers as 512-bit binary floats and writes them on the wire as an
//! msgpack int, a float64 or a string holding a decimal. Every one of those forms is an exact
//! decimal, so a [`Number`] is stored as one: a sign, a string of significant digits and a
//! power-of-ten exponent, kept in a canonical form (no leading or trailing zeros) so that
//! structural equality is numeric equality (`1 == 1.0 == 10e-1`). ±Infinity is a cty number
//! too and is kept as its own variant; NaN is not a number in cty and cannot be built here.

use std::cmp::Ordering;
use std::fmt;

/// Largest decimal exponent magnitude `parse` accepts (`1e1000000000000` parses, `1e10000000000000`
/// does not). Far beyond anything cty can hold, small enough to keep all arithmetic in range.
const MAX_EXPONENT: i64 = 1_000_000_000_000;

/// Longest plain (non-scientific) rendering; longer values are written as `<digits>e<exp>`.
/// The exact expansion of the smallest subnormal f64 (1076 characters) still fits.
const MAX_PLAIN_LEN: i128 = 1100;

/// Whether `digits × 10^exponent` can be a binary fraction at all: with `exponent = -k < 0`
/// it is `digits / (2^k × 5^k)`, a binary fraction only when `5^k` divides `digits` (which has
/// no trailing zero). Decided cheaply when `digits` fits a u128 and `5^k` does too (`k ≤ 55`),
/// which is every price and quantity a provider writes; otherwise `true` (the exact
/// comparison decides). Saves the exact expansion of the nearest float for the common
/// decimals (`0.0255`) that no float holds.
fn fraction_fits_binary(digits: &str, exponent: i64) -> bool {
    if exponent >= 0 || digits.is_empty() || digits.len() > 38 || exponent < -55 {
        return true;
    }
    let Some(value) = digits.bytes().try_fold(0u128, |acc, d| {
        acc.checked_mul(10)?.checked_add(u128::from(d - b'0'))
    }) else {
        return true;
    };
    let Some(power) = 5u128.checked_pow(exponent.unsigned_abs() as u32) else {
        return true;
    };
    value % power == 0
}

/// A Terraform number. Compares (and hashes) by numeric value.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Number {
    repr: Repr,
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    NegInfinity,
    /// `(-1)^negative × digits × 10^exponent`. `digits` holds ASCII digits without leading or
    /// trailing zeros; it is empty for zero, which is never negative and has exponent 0.
    Finite {
        negative: bool,
        digits: Box<str>,
        exponent: i64,
    },
    PosInfinity,
}

impl Number {
    /// Zero.
    pub fn zero() -> Self {
        Number {
            repr: Repr::Finite {
                negative: false,
                digits: "".into(),
                exponent: 0,
            },
        }
    }

    pub fn positive_infinity() -> Self {
        Number {
            repr: Repr::PosInfinity,
        }
    }

    pub fn negative_infinity() -> Self {
        Number {
            repr: Repr::NegInfinity,
        }
    }

    pub fn from_i64(v: i64) -> Self {
        Self::from_magnitude(v < 0, v.unsigned_abs(), 0)
    }

    pub fn from_u64(v: u64) -> Self {
        Self::from_magnitude(false, v, 0)
    }

    /// `value × 10^exponent` (`from_scaled(25500, -6)` is `0.0255`): a decimal written as an
    /// integer count of a fixed unit, exactly.
    pub fn from_scaled(value: u64, exponent: i64) -> Self {
        Self::from_magnitude(false, value, exponent)
    }

    /// `(-1)^negative × magnitude × 10^exponent`, with the digits written on the stack (these
    /// are built for every number a state holds).
    fn from_magnitude(negative: bool, magnitude: u64, exponent: i64) -> Self {
        let mut buffer = [0u8; 20];
        let mut start = buffer.len();
        let mut rest = magnitude;
        loop {
            start -= 1;
            buffer[start] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        Self::from_parts(negative, &buffer[start..], exponent)
    }

    /// The exact value of a float (`0.1f64` becomes `0.1000000000000000055511151231257827…`,
    /// as in cty). ±Infinity maps to the infinities; NaN gives `None`. `-0.0` is zero.
    pub fn from_f64(v: f64) -> Option<Self> {
        if v.is_nan() {
            return None;
        }
        if v.is_infinite() {
            return Some(if v > 0.0 {
                Self::positive_infinity()
            } else {
                Self::negative_infinity()
            });
        }
        if v == 0.0 {
            return Some(Self::zero());
        }
        let bits = v.to_bits();
        let negative = bits >> 63 == 1;
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let fraction = bits & ((1u64 << 52) - 1);
        let (mut mantissa, mut exp2) = if biased == 0 {
            (fraction, -1074i64)
        } else {
            (fraction | (1u64 << 52), biased - 1075)
        };
        while mantissa & 1 == 0 && exp2 < 0 {
            mantissa >>= 1;
            exp2 += 1;
        }
        let mut big = BigDec::from_u64(mantissa);
        let exponent = if exp2 >= 0 {
            big.mul_pow(2, 31, exp2 as u32);
            0
        } else {
            // m × 2^-k = m × 5^k × 10^-k
            big.mul_pow(5, 13, (-exp2) as u32);
            exp2
        };
        Some(Self::from_parts(negative, big.to_digits().as_bytes(), exponent))
    }

    /// Parses a decimal as JSON, HCL or cty write it: optional sign, digits with an optional
    /// fraction (`1.5`, `.5`, `5.`), optional exponent (`1e400`, `2E-3`), or `inf`/`infinity`
    /// in any case with an optional sign. No whitespace. `None` for anything else, for NaN and
    /// for exponents beyond ±10^12.
    pub fn parse(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        let (negative, rest) = match b.first() {
            Some(b'-') => (true, &b[1..]),
            Some(b'+') => (false, &b[1..]),
            _ => (false, b),
        };
        if rest.eq_ignore_ascii_case(b"inf") || rest.eq_ignore_ascii_case(b"infinity") {
            return Some(if negative {
                Self::negative_infinity()
            } else {
                Self::positive_infinity()
            });
        }
        let mut i = 0;
        while i < rest.len() && rest[i].is_ascii_digit() {
            i += 1;
        }
        let int_part = &rest[..i];
        let mut frac_part: &[u8] = &[];
        if i < rest.len() && rest[i] == b'.' {
            i += 1;
            let start = i;
            while i < rest.len() && rest[i].is_ascii_digit() {
                i += 1;
            }
            frac_part = &rest[start..i];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let mut exp: i64 = 0;
        if i < rest.len() && (rest[i] == b'e' || rest[i] == b'E') {
            i += 1;
            let exp_negative = match rest.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let start = i;
            while i < rest.len() && rest[i].is_ascii_digit() {
                if exp <= MAX_EXPONENT {
                    exp = exp * 10 + i64::from(rest[i] - b'0');
                }
                i += 1;
            }
            if i == start || exp > MAX_EXPONENT {
                return None;
            }
            if exp_negative {
                exp = -exp;
            }
        }
        if i != rest.len() {
            return None;
        }
        let mut digits = Vec::with_capacity(int_part.len() + frac_part.len());
        digits.extend_from_slice(int_part);
        digits.extend_from_slice(frac_part);
        let frac_len = i64::try_from(frac_part.len()).unwrap_or(i64::MAX);
        Some(Self::from_parts(negative, &digits, exp.saturating_sub(frac_len)))
    }

    /// Builds the canonical form of `(-1)^negative × digits × 10^exponent` from ASCII digits
    /// that may carry leading or trailing zeros.
    fn from_parts(negative: bool, digits: &[u8], exponent: i64) -> Self {
        let start = digits.iter().position(|&d| d != b'0').unwrap_or(digits.len());
        let digits = &digits[start..];
        let end = digits.iter().rposition(|&d| d != b'0').map_or(0, |p| p + 1);
        if end == 0 {
            return Self::zero();
        }
        let stripped = i64::try_from(digits.len() - end).unwrap_or(i64::MAX);
        // `digits` are ASCII digits (every caller passes such); anything else would be a bug
        // upstream, and is kept out rather than trusted.
        let text: Box<str> = match std::str::from_utf8(&digits[..end]) {
            Ok(text) => Box::from(text),
            Err(_) => digits[..end].iter().map(|&d| char::from(d)).collect(),
        };
        Number {
            repr: Repr::Finite {
                negative,
                digits: text,
                exponent: exponent.saturating_add(stripped),
            },
        }
    }

    /// The value as an i64 when it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        let (negative, magnitude) = self.small_integer()?;
        let signed = if negative {
            -(magnitude as i128)
        } else {
            magnitude as i128
        };
        i64::try_from(signed).ok()
    }

    /// The value as a u64 when it is a non-negative integer in range.
    pub fn as_u64(&self) -> Option<u64> {
        match self.small_integer()? {
            (false, magnitude) => u64::try_from(magnitude).ok(),
            (true, _) => None,
        }
    }

    /// Sign and magnitude of an integer with at most 20 digits.
    fn small_integer(&self) -> Option<(bool, u128)> {
        match &self.repr {
            Repr::Finite {
                negative,
                digits,
                exponent,
            } => {
                if digits.is_empty() {
                    return Some((false, 0));
                }
                let len = i64::try_from(digits.len()).ok()?;
                if *exponent < 0 || len.saturating_add(*exponent) > 20 {
                    return None;
                }
                let mut magnitude: u128 = 0;
                for d in digits.bytes() {
                    magnitude = magnitude * 10 + u128::from(d - b'0');
                }
                for _ in 0..*exponent {
                    magnitude *= 10;
                }
                Some((*negative, magnitude))
            }
            _ => None,
        }
    }

    /// The nearest f64 (correctly rounded); values beyond f64's range give ±infinity and
    /// values below its smallest subnormal give ±0. Always `Some`.
    pub fn as_f64(&self) -> Option<f64> {
        Some(match &self.repr {
            Repr::NegInfinity => f64::NEG_INFINITY,
            Repr::PosInfinity => f64::INFINITY,
            Repr::Finite {
                negative,
                digits,
                exponent,
            } => {
                if digits.is_empty() {
                    return Some(0.0);
                }
                let magnitude = format!("{digits}e{exponent}")
                    .parse::<f64>()
                    .unwrap_or(f64::INFINITY);
                if *negative { -magnitude } else { magnitude }
            }
        })
    }

    /// The value as an f64 when that f64 holds it exactly (the infinities included).
    pub fn to_exact_f64(&self) -> Option<f64> {
        match &self.repr {
            Repr::NegInfinity => Some(f64::NEG_INFINITY),
            Repr::PosInfinity => Some(f64::INFINITY),
            Repr::Finite { digits, exponent, .. } => {
                // Every finite f64 has at most 767 significant decimal digits and lies
                // between 4.9e-324 and 1.8e308; skip the exact comparison outside that.
                let len = i64::try_from(digits.len()).ok()?;
                if !digits.is_empty() && (len > 770 || !(-330..=310).contains(&len.saturating_add(*exponent)))
                {
                    return None;
                }
                if !fraction_fits_binary(digits, *exponent) {
                    return None;
                }
                let f = self.as_f64()?;
                if !f.is_finite() {
                    return None;
                }
                (Self::from_f64(f).as_ref() == Some(self)).then_some(f)
            }
        }
    }

    pub fn is_integer(&self) -> bool {
        matches!(&self.repr, Repr::Finite { exponent, .. } if *exponent >= 0)
    }

    pub fn is_infinite(&self) -> bool {
        matches!(self.repr, Repr::NegInfinity | Repr::PosInfinity)
    }

    pub fn is_zero(&self) -> bool {
        matches!(&self.repr, Repr::Finite { digits, .. } if digits.is_empty())
    }

    /// True below zero (negative infinity included).
    pub fn is_negative(&self) -> bool {
        matches!(
            &self.repr,
            Repr::NegInfinity | Repr::Finite { negative: true, .. }
        )
    }

    /// Order class: -inf < negative < zero < positive < +inf.
    fn class(&self) -> u8 {
        match &self.repr {
            Repr::NegInfinity => 0,
            Repr::Finite { digits, .. } if digits.is_empty() => 2,
            Repr::Finite { negative: true, .. } => 1,
            Repr::Finite { .. } => 3,
            Repr::PosInfinity => 4,
        }
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Self) -> Ordering {
        let by_class = self.class().cmp(&other.class());
        if by_class != Ordering::Equal {
            return by_class;
        }
        match (&self.repr, &other.repr) {
            (
                Repr::Finite {
                    negative,
                    digits: a,
                    exponent: ea,
                },
                Repr::Finite {
                    digits: b,
                    exponent: eb,
                    ..
                },
            ) => {
                // Same sign, both non-zero (or both zero: empty digits compare equal).
                let adjusted_a = i128::from(*ea) + a.len() as i128;
                let adjusted_b = i128::from(*eb) + b.len() as i128;
                let magnitude = adjusted_a
                    .cmp(&adjusted_b)
                    .then_with(|| a.as_bytes().cmp(b.as_bytes()));
                if *negative { magnitude.reverse() } else { magnitude }
            }
            _ => Ordering::Equal,
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl From<i64> for Number {
    fn from(v: i64) -> Self {
        Self::from_i64(v)
    }
}

impl From<i32> for Number {
    fn from(v: i32) -> Self {
        Self::from_i64(i64::from(v))
    }
}

impl From<u64> for Number {
    fn from(v: u64) -> Self {
        Self::from_u64(v)
    }
}

impl From<u32> for Number {
    fn from(v: u32) -> Self {
        Self::from_u64(u64::from(v))
    }
}

/// Plain decimal (`42`, `-0.5`, `1000…0`) like cty's `Text('f', -1)`, unless that would be
/// longer than 1100 characters; then `<digits>e<exponent>` (`123e-5000`). Infinities are
/// `+Inf` / `-Inf`. The output always parses back with [`Number::parse`] to the same value.
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (negative, digits, exponent) = match &self.repr {
            Repr::NegInfinity => return f.write_str("-Inf"),
            Repr::PosInfinity => return f.write_str("+Inf"),
            Repr::Finite {
                negative,
                digits,
                exponent,
            } => (*negative, &**digits, i128::from(*exponent)),
        };
        if digits.is_empty() {
            return f.write_str("0");
        }
        if negative {
            f.write_str("-")?;
        }
        let len = digits.len() as i128;
        let plain_len = if exponent >= 0 {
            len + exponent
        } else if -exponent < len {
            len + 1
        } else {
            2 - exponent
        };
        if plain_len > MAX_PLAIN_LEN {
            return write!(f, "{digits}e{exponent}");
        }
        if exponent >= 0 {
            f.write_str(digits)?;
            for _ in 0..exponent {
                f.write_str("0")?;
            }
            Ok(())
        } else if -exponent < len {
            let split = (len + exponent) as usize;
            write!(f, "{}.{}", &digits[..split], &digits[split..])
        } else {
            f.write_str("0.")?;
            for _ in 0..(-exponent - len) {
                f.write_str("0")?;
            }
            f.write_str(digits)
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({self})")
    }
}

/// Tiny unsigned big integer (base 10^9 limbs, least significant first), only what exact
/// float-to-decimal conversion needs.
struct BigDec {
    limbs: Vec<u64>,
}

const LIMB: u64 = 1_000_000_000;

impl BigDec {
    fn from_u64(mut v: u64) -> Self {
        let mut limbs = Vec::new();
        while v > 0 {
            limbs.push(v % LIMB);
            v /= LIMB;
        }
        BigDec { limbs }
    }

    fn mul_small(&mut self, m: u64) {
        let mut carry = 0u64;
        for limb in &mut self.limbs {
            let product = *limb * m + carry;
            *limb = product % LIMB;
            carry = product / LIMB;
        }
        while carry > 0 {
            self.limbs.push(carry % LIMB);
            carry /= LIMB;
        }
    }

    /// Multiplies by `base^exp`, `base^chunk` at a time (`base^chunk` must stay below 2^32).
    fn mul_pow(&mut self, base: u64, chunk: u32, mut exp: u32) {
        let big_step = base.pow(chunk);
        while exp >= chunk {
            self.mul_small(big_step);
            exp -= chunk;
        }
        if exp > 0 {
            self.mul_small(base.pow(exp));
        }
    }

    fn to_digits(&self) -> String {
        let mut out = String::new();
        for (i, limb) in self.limbs.iter().rev().enumerate() {
            if i == 0 {
                out.push_str(&limb.to_string());
            } else {
                out.push_str(&format!("{limb:09}"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Number {
        Number::parse(s).unwrap()
    }

    #[test]
    fn equality_is_numeric() {
        assert_eq!(n("1"), n("1.0"));
        assert_eq!(n("1"), n("10e-1"));
        assert_eq!(n("0.5"), Number::from_f64(0.5).unwrap());
        assert_eq!(n("-0"), n("0"));
        assert_eq!(Number::from_f64(-0.0).unwrap(), Number::zero());
        assert_eq!(n("+12"), Number::from_i64(12));
        assert_ne!(n("1"), n("1.0000000000000000000000000000001"));
        assert_eq!(n("inf"), Number::positive_infinity());
        assert_eq!(n("-Infinity"), Number::negative_infinity());
    }

    #[test]
    fn parse_rejects_garbage() {
        for s in [
            "",
            "-",
            ".",
            "e5",
            "1e",
            "1e+",
            "1.2.3",
            " 1",
            "1 ",
            "nan",
            "NaN",
            "0x10",
            "1_000",
            "1e10000000000000",
        ] {
            assert!(Number::parse(s).is_none(), "{s:?} should not parse");
        }
        assert_eq!(n(".5"), n("0.5"));
        assert_eq!(n("5."), n("5"));
    }

    #[test]
    fn display_is_plain_and_round_trips() {
        assert_eq!(n("1.50").to_string(), "1.5");
        assert_eq!(n("-0.001").to_string(), "-0.001");
        assert_eq!(n("12e3").to_string(), "12000");
        assert_eq!(n("1e400").to_string(), format!("1{}", "0".repeat(400)));
        let big = "123456789012345678901234567890";
        assert_eq!(n(big).to_string(), big);
        assert_eq!(n("1e5000").to_string(), "1e5000");
        assert_eq!(n("-123e-5000").to_string(), "-123e-5000");
        assert_eq!(n("1e5000"), n(&n("1e5000").to_string()));
        assert_eq!(Number::positive_infinity().to_string(), "+Inf");
        assert_eq!(
            n(&Number::negative_infinity().to_string()),
            Number::negative_infinity()
        );
    }

    #[test]
    fn integer_views() {
        assert_eq!(n("9223372036854775807").as_i64(), Some(i64::MAX));
        assert_eq!(n("-9223372036854775808").as_i64(), Some(i64::MIN));
        assert_eq!(n("9223372036854775808").as_i64(), None);
        assert_eq!(n("9223372036854775808").as_u64(), Some(1 << 63));
        assert_eq!(n("18446744073709551616").as_u64(), None);
        assert_eq!(n("1.5").as_i64(), None);
        assert_eq!(n("2e3").as_i64(), Some(2000));
        assert_eq!(n("-1").as_u64(), None);
        assert_eq!(n("1e30").as_i64(), None);
    }

    #[test]
    fn float_views() {
        assert_eq!(n("0.1").as_f64(), Some(0.1));
        assert_eq!(n("1e400").as_f64(), Some(f64::INFINITY));
        assert_eq!(n("0.5").to_exact_f64(), Some(0.5));
        assert_eq!(n("0.1").to_exact_f64(), None);
        assert_eq!(n("1e20").to_exact_f64(), Some(1e20));
        assert_eq!(n("18446744073709551615").to_exact_f64(), None);
        let tiny = Number::from_f64(f64::from_bits(1)).unwrap();
        assert_eq!(tiny.to_exact_f64(), Some(f64::from_bits(1)));
        assert_eq!(
            Number::from_f64(0.1).unwrap().to_string(),
            "0.1000000000000000055511151231257827021181583404541015625"
        );
        assert_eq!(Number::from_f64(f64::MAX).unwrap().to_exact_f64(), Some(f64::MAX));
        assert!(Number::from_f64(f64::NAN).is_none());
    }

    #[test]
    fn integers_and_scaled_decimals_are_canonical() {
        assert_eq!(Number::from_i64(i64::MIN).to_string(), "-9223372036854775808");
        assert_eq!(Number::from_u64(u64::MAX).to_string(), "18446744073709551615");
        assert_eq!(Number::from_i64(0), Number::zero());
        assert_eq!(Number::from_u64(1000), n("1e3"));
        assert_eq!(Number::from_scaled(25_500, -6), n("0.0255"));
        assert_eq!(Number::from_scaled(3_000_000, -6), n("3"));
        assert_eq!(Number::from_scaled(0, -6), Number::zero());
    }

    /// The quick "no float holds this fraction" answer never refuses a value a float holds
    /// exactly, and refuses the decimals a price table is made of.
    #[test]
    fn exact_float_precheck_agrees_with_the_exact_comparison() {
        let mut bits: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            // xorshift: floats of every magnitude, sign and fraction length
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            let f = f64::from_bits(bits);
            if !f.is_finite() {
                continue;
            }
            let exact = Number::from_f64(f).unwrap();
            assert_eq!(exact.to_exact_f64(), Some(f), "{f:e}");
        }
        for text in [
            "0.0255",
            "1.234",
            "0.1",
            "0.0000001",
            "123.456",
            "0.0625",
            "0.375",
        ] {
            let number = n(text);
            let slow = number
                .as_f64()
                .filter(|f| Number::from_f64(*f).as_ref() == Some(&number));
            assert_eq!(number.to_exact_f64(), slow, "{text}");
        }
        assert_eq!(n("0.0625").to_exact_f64(), Some(0.0625));
        assert!(!super::fraction_fits_binary("255", -4));
        assert!(super::fraction_fits_binary("625", -4));
    }

    #[test]
    fn ordering_is_numeric() {
        let mut v = vec![
            n("1"),
            n("-inf"),
            n("0.5"),
            n("-2"),
            n("0"),
            n("1e400"),
            n("-0.25"),
            n("inf"),
            n("10"),
            n("9.99"),
        ];
        v.sort();
        let text: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "-Inf",
                "-2",
                "-0.25",
                "0",
                "0.5",
                "1",
                "9.99",
                "10",
                &format!("1{}", "0".repeat(400)),
                "+Inf"
            ]
        );
    }
}
