//! Disruption budgets: window lengths, node counts, and the cron schedules Karpenter can parse.

use crate::terraform::framework::validate::{self as v, Validator};

/// Budget window length: hours and/or minutes, optionally followed by `0s`.
pub const BUDGET_DURATION: &str = r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$";

/// Budget `nodes`: a percentage 0–100 or a whole number.
pub const BUDGET_NODES: &str = r"^((100|[0-9]{1,2})%|[0-9]+)$";

/// Said by every diagnostic of a budget schedule the CRD's pattern lets through.
pub const CRON_ON_PURPOSE: &str = "(Stricter than the CRD on purpose: the CRD only counts the fields, and Karpenter cannot parse this schedule, so the budget would never take effect.)";

/// A budget window length.
pub fn budget_duration() -> impl Validator {
    v::matches(
        BUDGET_DURATION,
        "a duration of whole hours and/or minutes such as `8h`, `30m` or `1h30m` (seconds are not allowed)",
    )
}

/// A budget schedule: one of the `@` shorthands, or a standard five-field cron expression
/// (minute, hour, day of month, month, day of week). Stricter than the CRD pattern (which only
/// counts fields): each field is parsed the way Karpenter's cron parser does, so a typo fails at
/// plan rather than in the controller.
pub fn cron_schedule() -> impl Validator {
    v::check(
        "Must be a cron schedule: `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, or five fields (minute hour day-of-month month day-of-week) such as `0 9 * * 1-5`.",
        |value| {
            let s = value.as_str()?;
            cron_problem(s).map(|p| {
                format!(
                    "{s:?} is not a cron schedule: {p}. Use five fields (minute hour day-of-month month day-of-week), e.g. \"0 9 * * mon-fri\", or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly. {CRON_ON_PURPOSE}"
                )
            })
        },
    )
}

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// Why `s` is not a valid cron schedule, if it is not.
pub fn cron_problem(s: &str) -> Option<String> {
    if s.starts_with('@') {
        return match s {
            "@annually" | "@yearly" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly" => None,
            _ => Some(format!("{s:?} is not a known shorthand")),
        };
    }
    let fields: Vec<&str> = s.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!("it has {} field(s), not 5", fields.len()));
    }
    let specs: [(&str, u32, u32, &[&str], u32); 5] = [
        ("minute", 0, 59, &[], 0),
        ("hour", 0, 23, &[], 0),
        ("day of month", 1, 31, &[], 0),
        ("month", 1, 12, MONTHS, 1),
        ("day of week", 0, 6, DAYS, 0),
    ];
    for (field, (what, min, max, names, name_base)) in fields.iter().zip(specs) {
        for part in field.split(',') {
            if let Some(p) = cron_part_problem(part, what, min, max, names, name_base) {
                return Some(p);
            }
        }
    }
    None
}

fn cron_part_problem(
    part: &str,
    what: &str,
    min: u32,
    max: u32,
    names: &[&str],
    name_base: u32,
) -> Option<String> {
    let (range, step) = match part.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (part, None),
    };
    if let Some(step) = step {
        match step.parse::<u32>() {
            Ok(n) if n >= 1 => {}
            _ => {
                return Some(format!(
                    "the {what} step {step:?} must be a whole number of at least 1"
                ));
            }
        }
    }
    let value = |t: &str| -> Option<u32> {
        if let Ok(n) = t.parse::<u32>() {
            return Some(n);
        }
        let lower = t.to_ascii_lowercase();
        names
            .iter()
            .position(|n| *n == lower)
            .and_then(|i| u32::try_from(i).ok())
            .map(|i| i + name_base)
    };
    if range == "*" || (range == "?" && (what == "day of month" || what == "day of week")) {
        return None;
    }
    let (lo, hi) = match range.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (range, None),
    };
    let Some(lo_v) = value(lo) else {
        return Some(format!("{lo:?} is not a valid {what}"));
    };
    let hi_v = match hi {
        Some(h) => match value(h) {
            Some(n) => n,
            None => return Some(format!("{h:?} is not a valid {what}")),
        },
        None => lo_v,
    };
    if lo_v < min || hi_v > max {
        return Some(format!("the {what} {range:?} is outside {min}–{max}"));
    }
    if lo_v > hi_v {
        return Some(format!("the {what} range {range:?} ends before it starts"));
    }
    None
}
