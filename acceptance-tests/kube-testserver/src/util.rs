//! Small shared helpers: API errors rendered as `metav1.Status` bodies, RFC 3339 timestamps,
//! and JSON path helpers used by the store, the schema code and server-side apply.

use serde_json::{Map, Value, json};
use std::time::{SystemTime, UNIX_EPOCH};

/// An error that is answered to the client as a Kubernetes `Status` object.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `Status.reason`, e.g. `NotFound`, `Invalid`, `Conflict`.
    pub reason: &'static str,
    /// `Status.message`.
    pub message: String,
    /// `Status.details`, if any.
    pub details: Option<Value>,
    /// Extra response headers (e.g. `Retry-After`).
    pub headers: Vec<(&'static str, String)>,
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
            headers: Vec::new(),
        }
    }
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }
    /// The generic 404 a real server gives for a path it does not serve.
    pub fn no_resource() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }
    pub fn not_found(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified(plural, group)),
        )
        .with_details(json!({"name": name, "group": group, "kind": plural}))
    }
    pub fn already_exists(group: &str, plural: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified(plural, group)),
        )
        .with_details(json!({"name": name, "group": group, "kind": plural}))
    }
    pub fn conflict(group: &str, plural: &str, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified(plural, group)
            ),
        )
        .with_details(json!({"name": name, "group": group, "kind": plural}))
    }
    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_details(json!({}))
    }
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {}", message.into()),
        )
    }

    /// The `Status` body for this error.
    pub fn body(&self) -> Value {
        let mut v = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        // Go's Status omits an empty reason (StatusReasonUnknown), as on a 500 from SSA.
        if self.reason.is_empty()
            && let Some(o) = v.as_object_mut()
        {
            o.remove("reason");
        }
        if let (Some(d), Some(o)) = (&self.details, v.as_object_mut()) {
            o.insert("details".into(), d.clone());
        }
        v
    }
}

/// `plural.group`, or just `plural` for the core group.
pub fn qualified(plural: &str, group: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}

/// Current time as RFC 3339 with second precision, as Kubernetes writes timestamps.
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// Format a time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Microseconds since the Unix epoch.
pub fn unix_micros(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// Milliseconds since the Unix epoch.
pub fn unix_millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// `obj.metadata` as a mutable map, creating it if needed. Returns `None` if `obj` is not an object.
pub fn meta_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    let o = obj.as_object_mut()?;
    let m = o.entry("metadata").or_insert_with(|| json!({}));
    if !m.is_object() {
        *m = json!({});
    }
    m.as_object_mut()
}

/// A string field of `metadata`.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

/// The finalizers of an object.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

/// Replace the finalizers of an object (removing the field when empty).
pub fn set_finalizers(obj: &mut Value, f: &[String]) {
    if let Some(m) = meta_mut(obj) {
        if f.is_empty() {
            m.remove("finalizers");
        } else {
            m.insert("finalizers".into(), json!(f));
        }
    }
}

/// RFC 7386 JSON merge patch.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            if let Some(t) = target.as_object_mut() {
                for (k, v) in p {
                    if v.is_null() {
                        t.remove(k);
                    } else {
                        merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                    }
                }
            }
        }
        other => *target = other.clone(),
    }
}

/// Parse a JSON body, falling back to YAML (for `application/apply-patch+yaml` and manifests).
pub fn parse_json_or_yaml(body: &[u8]) -> Result<Value, ApiError> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    let text =
        std::str::from_utf8(body).map_err(|e| ApiError::bad_request(format!("body is not UTF-8: {e}")))?;
    serde_saphyr::from_str::<Value>(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding body: {e}")))
}

/// Whether `text` is a Kubernetes resource quantity (`100m`, `1Gi`, `4`, `1e3`).
pub fn is_quantity(text: &str) -> bool {
    static PATTERN: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
        )
        .ok()
    });
    PATTERN.as_ref().is_some_and(|p| p.is_match(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_timestamps() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400 + 3661)),
            "2000-02-29T01:01:01Z"
        );
    }

    #[test]
    fn merge_patch_removes_nulls() {
        let mut t = json!({"a": {"b": 1, "c": 2}, "d": [1]});
        merge_patch(&mut t, &json!({"a": {"b": null, "e": 3}, "d": [2]}));
        assert_eq!(t, json!({"a": {"c": 2, "e": 3}, "d": [2]}));
    }
}
