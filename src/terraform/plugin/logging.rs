//! Logging for a process whose stderr Terraform reads: one hclog JSON object per line
//! (`@level`, `@message`, `@timestamp`, `@module`, plus the event's fields).
//!
//! Terraform re-logs these lines under `provider.<binary>` and filters them by its own level;
//! we filter locally too (`TF_LOG_PROVIDER`, else `TF_LOG`) so a quiet run does not fill the
//! pipe. With both unset nothing is emitted. Nothing is ever written to stdout.

use std::cmp::min;
use std::fmt;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// Per-provider level variable; wins over [`GLOBAL_LEVEL_ENV`] when set.
pub const PROVIDER_LEVEL_ENV: &str = "TF_LOG_PROVIDER";
/// Terraform's global level variable.
pub const GLOBAL_LEVEL_ENV: &str = "TF_LOG";

/// Keys hclog reserves; event fields with these names lose their `@`.
const RESERVED: [&str; 5] = ["@level", "@message", "@timestamp", "@module", "@caller"];

/// Turns the Terraform log variables into a level; `None` means "log nothing".
///
/// `TF_LOG_PROVIDER` wins when set and non-empty, otherwise `TF_LOG`. Values are
/// TRACE/DEBUG/INFO/WARN/ERROR (any case), OFF, and JSON (Terraform's JSON trace mode, so
/// trace). Like Terraform, any other non-empty value means trace.
pub fn level_from_env(provider: Option<&str>, global: Option<&str>) -> Option<Level> {
    let raw = [provider, global]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|v| !v.is_empty())?;
    match raw.to_ascii_uppercase().as_str() {
        "OFF" => None,
        "ERROR" => Some(Level::ERROR),
        "WARN" => Some(Level::WARN),
        "INFO" => Some(Level::INFO),
        "DEBUG" => Some(Level::DEBUG),
        _ => Some(Level::TRACE),
    }
}

/// hclog's spelling of a level.
pub fn level_name(level: Level) -> &'static str {
    match level {
        Level::TRACE => "trace",
        Level::DEBUG => "debug",
        Level::INFO => "info",
        Level::WARN => "warn",
        Level::ERROR => "error",
    }
}

/// Formats `t` as hclog's JSON time (`2006-01-02T15:04:05.000000Z07:00`), always in UTC.
pub fn format_timestamp(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_micros()
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Builds one hclog JSON line (with trailing newline).
pub fn format_line(
    level: Level,
    message: &str,
    module: &str,
    time: SystemTime,
    fields: Map<String, Value>,
) -> String {
    let mut obj = Map::new();
    for (k, v) in fields {
        let key = if RESERVED.contains(&k.as_str()) {
            k.trim_start_matches('@').to_owned()
        } else {
            k
        };
        obj.insert(key, v);
    }
    obj.insert("@level".into(), level_name(level).into());
    obj.insert("@message".into(), message.into());
    obj.insert("@module".into(), module.into());
    obj.insert("@timestamp".into(), format_timestamp(time).into());
    let mut line = Value::Object(obj).to_string();
    line.push('\n');
    line
}

/// Where finished lines go.
type Sink = Box<dyn Fn(&[u8]) + Send + Sync>;

/// A `tracing` layer that writes hclog JSON lines.
pub struct HclogLayer {
    module: &'static str,
    sink: Sink,
}

impl HclogLayer {
    /// Writes to stderr, one whole line per write so threads never interleave.
    pub fn stderr(module: &'static str) -> Self {
        Self::with_sink(
            module,
            Box::new(|line| {
                let mut err = std::io::stderr().lock();
                // Nowhere to report a failed log write; dropping the line is the only option.
                let _ = err.write_all(line).and_then(|()| err.flush());
            }),
        )
    }

    /// Writes to any sink (used by tests).
    pub fn with_sink(module: &'static str, sink: Sink) -> Self {
        Self { module, sink }
    }
}

impl<S: Subscriber> Layer<S> for HclogLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut visitor = FieldCollector::default();
        event.record(&mut visitor);
        let line = format_line(
            *event.metadata().level(),
            &visitor.message,
            self.module,
            SystemTime::now(),
            visitor.fields,
        );
        (self.sink)(line.as_bytes());
    }
}

#[derive(Default)]
struct FieldCollector {
    message: String,
    fields: Map<String, Value>,
}

impl FieldCollector {
    fn put(&mut self, field: &Field, value: Value) {
        if field.name() == "message" {
            self.message = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
        } else {
            self.fields.insert(field.name().to_owned(), value);
        }
    }
}

impl Visit for FieldCollector {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, Value::String(format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::String(value.to_owned()));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::Bool(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::from(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.put(field, Value::String(value.to_string()));
    }
}

/// The filter for a chosen level: our own crate at `level`, dependencies (h2, hyper, tonic,
/// kube, ...) at most INFO so trace logging stays readable.
pub fn filter_for(level: Level) -> Targets {
    let own = LevelFilter::from_level(level);
    Targets::new()
        .with_default(min(own, LevelFilter::INFO))
        .with_target(env!("CARGO_CRATE_NAME"), own)
}

/// Installs the stderr hclog logger if the environment asks for logs. Returns whether it did.
/// `module` becomes `@module` on every line.
pub fn init_from_env(module: &'static str) -> bool {
    let provider = std::env::var(PROVIDER_LEVEL_ENV).ok();
    let global = std::env::var(GLOBAL_LEVEL_ENV).ok();
    let Some(level) = level_from_env(provider.as_deref(), global.as_deref()) else {
        return false;
    };
    tracing_subscriber::registry()
        .with(HclogLayer::stderr(module).with_filter(filter_for(level)))
        .try_init()
        .is_ok()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;

    fn at(secs: u64, micros: u32) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(u64::from(micros))
    }

    #[test]
    fn timestamps_match_hclog_layout() {
        assert_eq!(format_timestamp(at(0, 0)), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            format_timestamp(at(951_782_400, 7)),
            "2000-02-29T00:00:00.000007Z"
        );
        assert_eq!(
            format_timestamp(at(1_700_000_000, 123_456)),
            "2023-11-14T22:13:20.123456Z"
        );
        assert_eq!(
            format_timestamp(at(4_102_444_799, 999_999)),
            "2099-12-31T23:59:59.999999Z"
        );
    }

    /// Checks `2006-01-02T15:04:05.000000Z` character classes.
    fn has_hclog_shape(ts: &str) -> bool {
        let b = ts.as_bytes();
        let digits = [
            0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22, 23, 24, 25,
        ];
        b.len() == 27
            && digits.iter().all(|&i| b[i].is_ascii_digit())
            && b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'T'
            && b[13] == b':'
            && b[16] == b':'
            && b[19] == b'.'
            && b[26] == b'Z'
    }

    #[test]
    fn env_levels() {
        assert_eq!(level_from_env(None, None), None);
        assert_eq!(level_from_env(Some(""), Some("")), None);
        assert_eq!(level_from_env(None, Some("debug")), Some(Level::DEBUG));
        assert_eq!(level_from_env(Some("WARN"), Some("TRACE")), Some(Level::WARN));
        assert_eq!(level_from_env(Some("off"), Some("TRACE")), None);
        assert_eq!(level_from_env(Some(""), Some("INFO")), Some(Level::INFO));
        assert_eq!(level_from_env(None, Some("JSON")), Some(Level::TRACE));
        assert_eq!(level_from_env(Some("error"), None), Some(Level::ERROR));
        assert_eq!(level_from_env(None, Some("OFF")), None);
    }

    #[test]
    fn layer_writes_parseable_hclog_lines() {
        let buf = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink_buf = buf.clone();
        let layer = HclogLayer::with_sink(
            "karpenter",
            Box::new(move |line| sink_buf.lock().unwrap().extend_from_slice(line)),
        );
        let subscriber = tracing_subscriber::registry().with(layer.with_filter(filter_for(Level::DEBUG)));
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(count = 3, name = "np", ok = true, "planned {} changes", 3);
            tracing::debug!(message_len = 1.5, "second");
            tracing::trace!("filtered out");
            tracing::warn!(target: "h2::codec", "dependency warning passes");
            tracing::debug!(target: "h2::codec", "dependency debug is capped");
        });
        let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        let first: Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(first["@level"], "info");
        assert_eq!(first["@message"], "planned 3 changes");
        assert_eq!(first["@module"], "karpenter");
        assert_eq!(first["count"], 3);
        assert_eq!(first["name"], "np");
        assert_eq!(first["ok"], true);
        assert!(has_hclog_shape(first["@timestamp"].as_str().unwrap()));
        let second: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(second["@level"], "debug");
        assert_eq!(second["message_len"], 1.5);
        let third: Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(third["@level"], "warn");
    }

    #[test]
    fn reserved_keys_are_not_overwritten_by_fields() {
        let mut fields = Map::new();
        fields.insert("@level".into(), "bogus".into());
        let line = format_line(Level::ERROR, "m", "karpenter", at(0, 0), fields);
        assert!(line.ends_with('\n') && !line.trim_end().contains('\n'));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["@level"], "error");
        assert_eq!(v["level"], "bogus");
        assert_eq!(v["@timestamp"], "1970-01-01T00:00:00.000000Z");
    }
}
