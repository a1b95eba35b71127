//! Karpenter durations (with or without `Never`) and RFC 3339 date-times.

use regex::Regex;

use super::values::Pattern;
use crate::terraform::framework::validate::{self as v, Validator};

/// Karpenter duration that may also be `Never` (`expireAfter`, `consolidateAfter`).
pub const DURATION_OR_NEVER: &str = r"^(([0-9]+(s|m|h))+|Never)$";

/// Karpenter duration without `Never` (`terminationGracePeriod`).
pub const DURATION: &str = r"^([0-9]+(s|m|h))+$";

/// A Karpenter duration or `Never`.
pub fn duration_or_never() -> impl Validator {
    v::matches(
        DURATION_OR_NEVER,
        "a duration of whole hours, minutes and seconds such as `720h`, `1h30m` or `30s`, or `Never`",
    )
}

/// A Karpenter duration (`Never` not allowed).
pub fn duration() -> impl Validator {
    v::matches(
        DURATION,
        "a duration of whole hours, minutes and seconds such as `48h`, `1h30m` or `30s` (`Never` is not allowed)",
    )
}

/// An RFC 3339 date-time (`2024-05-01T10:00:00Z`), the CRD's `date-time` format: the API
/// server parses the value, so the date must exist (`2024-02-30` does not) and the seconds are
/// 0–59.
pub fn date_time() -> impl Validator {
    v::check(
        "Must be an RFC 3339 date-time of a real calendar date, such as `2024-05-01T10:00:00Z`.",
        |value| {
            let s = value.as_str()?;
            date_time_problem(s).map(|p| {
                format!("{s:?} is not an RFC 3339 date-time: {p}. Use e.g. \"2024-05-01T10:00:00Z\".")
            })
        },
    )
}

static DATE_TIME_RE: Pattern = Pattern::new(|| {
    Regex::new(
        r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|[+-]([0-9]{2}):([0-9]{2}))$",
    )
    .ok()
});

/// Why `s` is not an RFC 3339 date-time the API server accepts, if it is not.
pub fn date_time_problem(s: &str) -> Option<String> {
    let Some(caps) = DATE_TIME_RE.0.as_ref().and_then(|re| re.captures(s)) else {
        return Some("the form is YYYY-MM-DDThh:mm:ss, optional fractional seconds, then Z or ±hh:mm".into());
    };
    let n = |i: usize| caps.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
    let (Some(year), Some(month), Some(day)) = (n(1), n(2), n(3)) else {
        return Some("the date is not numeric".into());
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Some(format!("there is no month {month}")),
    };
    if day == 0 || day > days {
        return Some(format!("{year:04}-{month:02} has no day {day}"));
    }
    if n(4).is_none_or(|h| h > 23) || n(5).is_none_or(|m| m > 59) || n(6).is_none_or(|x| x > 59) {
        return Some("the time must be 00:00:00 to 23:59:59".into());
    }
    if caps.get(9).is_some() && (n(9).is_none_or(|h| h > 23) || n(10).is_none_or(|m| m > 59)) {
        return Some("the zone offset must be -23:59 to +23:59".into());
    }
    None
}
