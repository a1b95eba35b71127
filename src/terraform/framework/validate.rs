//! Validators: small named checks attached to attributes, and the walker that runs them over a
//! configuration. Each validator also describes itself, so the generated docs state exactly the
//! rule that validation enforces.
//!
//! Validators only ever see known, non-null values: unknown values are checked at apply time
//! (when Terraform validates the final plan), and null values are the schema's concern.

use std::sync::{Arc, OnceLock};

use regex::Regex;

use super::diagnostics::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};

/// A check on one attribute's value.
pub trait Validator: Send + Sync {
    /// One sentence for the docs, e.g. "Must be one of `WhenEmpty`, `Balanced`."
    fn description(&self) -> String;
    /// Adds a diagnostic at `path` (or below it) when `value` breaks the rule.
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics);
    /// Whether the rule itself is sound (a pattern compiles, …): `Err` is a provider bug, which
    /// a test over every schema reports before a user could meet it.
    fn self_check(&self) -> Result<(), String> {
        Ok(())
    }
}

fn invalid(diags: &mut Diagnostics, path: &AttributePath, detail: String) {
    diags.error_at(path, "Invalid attribute value", detail);
}

fn show_list(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The value must be one of a fixed set of strings.
pub struct OneOf(pub &'static [&'static str]);

impl Validator for OneOf {
    fn description(&self) -> String {
        format!("Must be one of {}.", show_list(self.0))
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        if let Some(s) = value.as_str()
            && !self.0.contains(&s)
        {
            invalid(
                diags,
                path,
                format!("{s:?} is not allowed here. {}", self.description()),
            );
        }
    }
}

pub fn one_of(values: &'static [&'static str]) -> OneOf {
    OneOf(values)
}

/// The string must match a regular expression; `what` says in words what that means.
///
/// The pattern compiles when a value is first checked against it, not when the schema is built:
/// every provider process builds every schema (Terraform asks for all of them), but a run checks
/// only the attributes its configuration sets.
pub struct Matches {
    pattern: String,
    /// The patterns are constants of this crate; a bad one is a provider bug, reported as a
    /// diagnostic rather than a panic (and caught by [`Validator::self_check`]'s test).
    regex: OnceLock<Result<Regex, String>>,
    what: String,
}

impl Matches {
    fn regex(&self) -> &Result<Regex, String> {
        self.regex
            .get_or_init(|| Regex::new(&self.pattern).map_err(|e| e.to_string()))
    }
}

impl Validator for Matches {
    fn description(&self) -> String {
        format!("Must be {}.", self.what)
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        let Some(s) = value.as_str() else { return };
        match self.regex() {
            Ok(regex) if regex.is_match(s) => {}
            Ok(_) => invalid(
                diags,
                path,
                format!("{s:?} is not valid: it must be {}.", self.what),
            ),
            Err(e) => diags.error_at(path, "Provider bug: invalid validation pattern", e.clone()),
        }
    }
    fn self_check(&self) -> Result<(), String> {
        self.regex()
            .as_ref()
            .map(|_| ())
            .map_err(|e| format!("pattern {:?}: {e}", self.pattern))
    }
}

pub fn matches(pattern: &str, what: impl Into<String>) -> Matches {
    Matches {
        pattern: pattern.to_string(),
        regex: OnceLock::new(),
        what: what.into(),
    }
}

/// String length (in characters) within bounds.
pub struct Length {
    pub min: usize,
    pub max: Option<usize>,
}

impl Validator for Length {
    fn description(&self) -> String {
        match (self.min, self.max) {
            (1, None) => "Must not be empty.".to_string(),
            (min, None) => format!("Must be at least {min} characters long."),
            (0, Some(max)) => format!("Must be at most {max} characters long."),
            (min, Some(max)) => format!("Must be {min} to {max} characters long."),
        }
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        if let Some(s) = value.as_str() {
            let n = s.chars().count();
            if n < self.min || self.max.is_some_and(|max| n > max) {
                let shown = if s.is_empty() {
                    "An empty string".to_string()
                } else {
                    format!("{n} characters")
                };
                invalid(
                    diags,
                    path,
                    format!("{shown} is not allowed here. {}", self.description()),
                );
            }
        }
    }
}

pub fn non_empty() -> Length {
    Length { min: 1, max: None }
}

pub fn length(min: usize, max: usize) -> Length {
    Length { min, max: Some(max) }
}

/// A whole number within bounds (inclusive).
pub struct IntRange {
    pub min: i64,
    pub max: i64,
}

impl Validator for IntRange {
    fn description(&self) -> String {
        format!("Must be a whole number from {} to {}.", self.min, self.max)
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        if let Some(n) = value.as_number() {
            match n.as_i64() {
                Some(i) if i >= self.min && i <= self.max => {}
                _ => invalid(
                    diags,
                    path,
                    format!("{n} is out of range. {}", self.description()),
                ),
            }
        }
    }
}

pub fn int_range(min: i64, max: i64) -> IntRange {
    IntRange { min, max }
}

/// The number of elements of a list, set or map within bounds.
pub struct Count {
    pub min: usize,
    pub max: Option<usize>,
}

impl Validator for Count {
    fn description(&self) -> String {
        match (self.min, self.max) {
            (min, None) => format!("Must have at least {min} element(s)."),
            (0, Some(max)) => format!("Must have at most {max} element(s)."),
            (min, Some(max)) => format!("Must have {min} to {max} element(s)."),
        }
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        let n = match value {
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => v.len(),
            Value::Map(m) | Value::Object(m) => m.len(),
            _ => return,
        };
        if n < self.min || self.max.is_some_and(|max| n > max) {
            invalid(
                diags,
                path,
                format!("{n} element(s) given. {}", self.description()),
            );
        }
    }
}

pub fn count(min: usize, max: usize) -> Count {
    Count { min, max: Some(max) }
}

pub fn min_count(min: usize) -> Count {
    Count { min, max: None }
}

/// Applies a validator to every element of a list/set or every value of a map.
pub struct Each(pub Arc<dyn Validator>);

impl Validator for Each {
    fn description(&self) -> String {
        format!("Each element: {}", self.0.description())
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        match value {
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => {
                for (i, element) in v.iter().enumerate() {
                    if !element.is_null() && !element.is_unknown() {
                        self.0.validate(element, &path.index(i), diags);
                    }
                }
            }
            // An object where a map belongs: the value of a `Dynamic` attribute written `{ a = 1 }`.
            Value::Map(m) | Value::Object(m) => {
                for (key, element) in m {
                    if !element.is_null() && !element.is_unknown() {
                        self.0.validate(element, &path.key(key.clone()), diags);
                    }
                }
            }
            _ => {}
        }
    }
    fn self_check(&self) -> Result<(), String> {
        self.0.self_check()
    }
}

pub fn each(validator: impl Validator + 'static) -> Each {
    Each(Arc::new(validator))
}

/// Applies a validator to every key of a map (the diagnostic points at the entry).
pub struct EachKey(pub Arc<dyn Validator>);

impl Validator for EachKey {
    fn description(&self) -> String {
        format!("Each key: {}", self.0.description())
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        if let Value::Map(m) | Value::Object(m) = value {
            for key in m.keys() {
                self.0
                    .validate(&Value::String(key.clone()), &path.key(key.clone()), diags);
            }
        }
    }
    fn self_check(&self) -> Result<(), String> {
        self.0.self_check()
    }
}

pub fn each_key(validator: impl Validator + 'static) -> EachKey {
    EachKey(Arc::new(validator))
}

/// A check written as a function: `check` returns the detail of the error, if any.
pub struct Check<F> {
    description: String,
    check: F,
}

impl<F> Validator for Check<F>
where
    F: Fn(&Value) -> Option<String> + Send + Sync,
{
    fn description(&self) -> String {
        self.description.clone()
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        if let Some(detail) = (self.check)(value) {
            invalid(diags, path, detail);
        }
    }
}

pub fn check<F>(description: impl Into<String>, check: F) -> Check<F>
where
    F: Fn(&Value) -> Option<String> + Send + Sync,
{
    Check {
        description: description.into(),
        check,
    }
}

/// A rule written as a function that reports its own diagnostics, for checks on a list or an
/// object whose errors belong on an element or a field below it (e.g. "at most one element may
/// set `root_volume`" reported at `block_device_mappings[2].root_volume`). The function gets the
/// (known, non-null) value and its path and adds errors with [`Diagnostics::error_at`].
pub struct Rule<F> {
    description: String,
    rule: F,
}

impl<F> Validator for Rule<F>
where
    F: Fn(&Value, &AttributePath, &mut Diagnostics) + Send + Sync,
{
    fn description(&self) -> String {
        self.description.clone()
    }
    fn validate(&self, value: &Value, path: &AttributePath, diags: &mut Diagnostics) {
        (self.rule)(value, path, diags);
    }
}

pub fn rule<F>(description: impl Into<String>, rule: F) -> Rule<F>
where
    F: Fn(&Value, &AttributePath, &mut Diagnostics) + Send + Sync,
{
    Rule {
        description: description.into(),
        rule,
    }
}

/// A duration in Terraform's `timeouts` syntax (Go's `time.ParseDuration`: `30s`, `10m`, `1h30m`).
pub fn go_duration() -> impl Validator {
    go_duration_because("", "")
}

/// [`go_duration`] where a duration is needed for a reason the docs and the error say: `why`
/// ends the description's sentence (` (the kubelet cannot start with anything else)`), `more`
/// follows the error (` (Stricter than …)`); both empty or starting with a space.
pub fn go_duration_because(why: &'static str, more: &'static str) -> impl Validator {
    check(
        format!("Must be a duration such as `30s`, `10m` or `1h30m`{why}."),
        move |v| {
            let s = v.as_str()?;
            parse_go_duration(s).is_none().then(|| {
                format!(
                    "{s:?} is not a duration: use a number with a unit, such as \"30s\", \"10m\" or \"1h30m\".{more}"
                )
            })
        },
    )
}

/// Parses Go's duration syntax (units ns, us, µs, ms, s, m, h; no sign).
pub fn parse_go_duration(s: &str) -> Option<std::time::Duration> {
    if s == "0" {
        return Some(std::time::Duration::ZERO);
    }
    let mut rest = s;
    let mut total = 0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += number * seconds;
    }
    if !total.is_finite() || total > 1e12 {
        return None;
    }
    Some(std::time::Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::tfvalue::Number;

    fn run(v: &dyn Validator, value: Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        v.validate(&value, &AttributePath::root().attr("x"), &mut d);
        d
    }

    #[test]
    fn one_of_names_the_allowed_values() {
        let v = one_of(&["In", "NotIn"]);
        assert!(run(&v, Value::string("In")).is_empty());
        let d = run(&v, Value::string("Maybe"));
        assert!(d.has_errors());
        let text = d.to_string();
        assert!(text.contains("`In`, `NotIn`"), "{text}");
        assert!(text.contains("at x"), "{text}");
    }

    #[test]
    fn length_and_range() {
        assert!(run(&non_empty(), Value::string("")).has_errors());
        assert!(run(&length(1, 3), Value::string("abcd")).has_errors());
        assert!(run(&length(1, 3), Value::string("abc")).is_empty());
        assert!(run(&int_range(1, 100), Value::Number(Number::from_i64(0))).has_errors());
        assert!(run(&int_range(1, 100), Value::Number(Number::from_i64(100))).is_empty());
    }

    #[test]
    fn each_points_at_the_element() {
        let v = each(one_of(&["a"]));
        let d = run(&v, Value::List(vec![Value::string("a"), Value::string("b")]));
        assert_eq!(d.len(), 1);
        assert!(d.to_string().contains("x[1]"), "{d}");
    }

    #[test]
    fn patterns() {
        let v = matches(r"^[0-9]{12}$", "a 12-digit AWS account ID");
        assert!(run(&v, Value::string("123456789012")).is_empty());
        assert!(run(&v, Value::string("12345")).to_string().contains("12-digit"));
    }

    #[test]
    fn rule_reports_below_its_path() {
        let v = rule("At most one `a`.", |value, path, diags| {
            for (i, e) in value.as_elements().unwrap_or_default().iter().enumerate().skip(1) {
                if e.as_str() == Some("a") {
                    diags.error_at(&path.index(i), "Duplicate", "only one `a` is allowed");
                }
            }
        });
        assert_eq!(v.description(), "At most one `a`.");
        assert!(run(&v, Value::List(vec![Value::string("a"), Value::string("b")])).is_empty());
        let d = run(&v, Value::List(vec![Value::string("b"), Value::string("a")]));
        assert!(d.to_string().contains("at x[1]"), "{d}");
    }

    #[test]
    fn go_durations() {
        assert_eq!(
            parse_go_duration("10m"),
            Some(std::time::Duration::from_secs(600))
        );
        assert_eq!(
            parse_go_duration("1h30m"),
            Some(std::time::Duration::from_secs(5400))
        );
        assert_eq!(
            parse_go_duration("1.5s"),
            Some(std::time::Duration::from_millis(1500))
        );
        assert_eq!(parse_go_duration(""), None);
        assert_eq!(parse_go_duration("10"), None);
        assert_eq!(parse_go_duration("ten minutes"), None);
        assert_eq!(parse_go_duration("-5m"), None);
    }
}
