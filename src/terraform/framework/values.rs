//! Small helpers for building and reading [`Value`]s in resource code.

use std::collections::BTreeMap;

use crate::terraform::tfvalue::Value;

/// An object value from (attribute, value) pairs.
pub fn object<'a>(pairs: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// A list of strings.
pub fn string_list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Value {
    Value::List(items.into_iter().map(|s| Value::string(s.as_ref())).collect())
}

/// A map of strings.
pub fn string_map<K: AsRef<str>, V: AsRef<str>>(items: impl IntoIterator<Item = (K, V)>) -> Value {
    Value::Map(
        items
            .into_iter()
            .map(|(k, v)| (k.as_ref().to_string(), Value::string(v.as_ref())))
            .collect::<BTreeMap<_, _>>(),
    )
}

/// A string, or null.
pub fn opt_string(s: Option<impl Into<String>>) -> Value {
    s.map_or(Value::Null, |s| Value::String(s.into()))
}

/// A known string attribute of an object (None when null, unknown or absent).
pub fn get_str<'a>(object: &'a Value, name: &str) -> Option<&'a str> {
    object.get(name).and_then(Value::as_str)
}

/// True when the attribute is present and unknown.
pub fn is_unknown(object: &Value, name: &str) -> bool {
    object.get(name).is_some_and(Value::is_unknown)
}
