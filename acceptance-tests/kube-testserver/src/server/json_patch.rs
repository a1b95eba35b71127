//! RFC 6902 JSON patch (`application/json-patch+json`), with the API server's error messages.

use serde_json::Value;

use crate::util::ApiError;

pub(super) fn unescape(t: &str) -> String {
    t.replace("~1", "/").replace("~0", "~")
}
pub(super) fn split_pointer(p: &str) -> Result<(String, String), ApiError> {
    let i = p
        .rfind('/')
        .ok_or_else(|| invalid_patch(&format!("invalid path {p}")))?;
    Ok((p[..i].to_string(), unescape(&p[i + 1..])))
}
pub(super) fn invalid_patch(m: &str) -> ApiError {
    ApiError::new(
        422,
        "Invalid",
        format!("the server rejected our request due to an error in our request: {m}"),
    )
}
pub(super) fn add_at(doc: &mut Value, path: &str, v: Value) -> Result<(), ApiError> {
    if path.is_empty() {
        *doc = v;
        return Ok(());
    }
    let (parent, last) = split_pointer(path)?;
    match doc.pointer_mut(&parent) {
        Some(Value::Object(o)) => {
            o.insert(last, v);
            Ok(())
        }
        Some(Value::Array(a)) => {
            if last == "-" {
                a.push(v);
                return Ok(());
            }
            let i: usize = last
                .parse()
                .map_err(|_| invalid_patch(&format!("invalid array index {last}")))?;
            if i > a.len() {
                return Err(invalid_patch(&format!("array index {i} out of bounds")));
            }
            a.insert(i, v);
            Ok(())
        }
        _ => Err(invalid_patch(&format!("doc is missing path: \"{path}\""))),
    }
}
pub(super) fn remove_at(doc: &mut Value, path: &str) -> Result<Value, ApiError> {
    let (parent, last) = split_pointer(path)?;
    let missing = || invalid_patch(&format!("doc is missing path: \"{path}\""));
    match doc.pointer_mut(&parent) {
        Some(Value::Object(o)) => o.remove(&last).ok_or_else(missing),
        Some(Value::Array(a)) => {
            let i: usize = last.parse().map_err(|_| missing())?;
            if i < a.len() {
                Ok(a.remove(i))
            } else {
                Err(missing())
            }
        }
        _ => Err(missing()),
    }
}
/// RFC 6902 JSON patch.
pub fn json_patch(doc: &mut Value, ops: &Value) -> Result<(), ApiError> {
    let ops = ops
        .as_array()
        .ok_or_else(|| ApiError::bad_request("a JSON patch must be an array"))?;
    for op in ops {
        let kind = op.get("op").and_then(Value::as_str).unwrap_or("");
        let path = op.get("path").and_then(Value::as_str).unwrap_or("").to_string();
        let value = op.get("value").cloned();
        match kind {
            "add" => add_at(doc, &path, value.unwrap_or(Value::Null))?,
            "remove" => {
                remove_at(doc, &path)?;
            }
            "replace" => {
                remove_at(doc, &path)?;
                add_at(doc, &path, value.unwrap_or(Value::Null))?;
            }
            "move" | "copy" => {
                let from = op.get("from").and_then(Value::as_str).unwrap_or("");
                let v = if kind == "move" {
                    remove_at(doc, from)?
                } else {
                    doc.pointer(from)
                        .cloned()
                        .ok_or_else(|| invalid_patch(&format!("doc is missing from path: \"{from}\"")))?
                };
                add_at(doc, &path, v)?;
            }
            "test" => {
                if doc.pointer(&path) != value.as_ref() {
                    return Err(invalid_patch(&format!("testing value {path} failed")));
                }
            }
            other => return Err(invalid_patch(&format!("Unexpected kind: {other}"))),
        }
    }
    Ok(())
}
