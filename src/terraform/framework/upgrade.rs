//! Upgrading stored state to the current schema (`UpgradeResourceState`), which Terraform asks
//! for every resource in state before each plan, refresh or apply.
//!
//! Two mechanisms, both on the stored JSON before it is decoded (leniently: keys no longer
//! declared are dropped, missing ones are null):
//!
//! - **Version steps** ([`UpgradeStep`]): a schema at version `n` carries `n` steps
//!   ([`Schema::with_upgrade_steps`]); step `v` turns state of version `v` into version `v + 1`
//!   (a rename, a re-shape). They run in order from the stored version to the schema's. A
//!   step's [`UpgradeError`] becomes a diagnostic naming the type, the versions and what could
//!   not be upgraded.
//! - **Default fill** ([`fill_defaults`]): every attribute whose key the stored object lacks and
//!   whose schema has a default gets the default, at every level where the stored object
//!   exists. It runs at every upgrade, same version included, after the steps: an attribute
//!   added with a default needs no version bump, and its default never shows in a plan after
//!   the upgrade, even with `-refresh=false`. Terraform writes every attribute a schema
//!   declares, so a missing key only ever means "written before the attribute existed"; an
//!   attribute whose value for such objects is not its default for new ones says so with
//!   [`Attribute::state_fill`], which the fill writes instead.
//!
//! The JSON is re-encoded (through `serde_json`) only when a step ran or a default was
//! filled; otherwise the stored bytes are decoded as they are, at full numeric precision.

use serde_json::{Map, Value as Json};

use super::diagnostics::Diagnostics;
use super::schema::{Attribute, Block, Nesting, Schema};
pub use super::upgrade_step::{UpgradeError, UpgradeStep, rename, to_dynamic};
use crate::terraform::tfvalue::{Value, json};

/// The stored state `raw_json` of a `type_name` at schema `version`, upgraded to `schema`:
/// its steps from `version` on, then the default fill, then the lenient decode.
pub fn upgrade_state(
    type_name: &str,
    schema: &Schema,
    version: i64,
    raw_json: &[u8],
) -> Result<Value, Diagnostics> {
    check_version(version, schema.version)?;
    let mut doc: Option<Json> = None;
    if version < schema.version {
        let mut state = parse_object(type_name, raw_json)?;
        for from in version..schema.version {
            let step = usize::try_from(from)
                .ok()
                .and_then(|i| schema.upgrade_steps.get(i))
                .ok_or_else(|| {
                    Diagnostics::from_error(
                        "Missing state upgrade step",
                        format!(
                            "{type_name} is at schema version {} but has no step from version {from}. This is a bug in the provider: please report it.",
                            schema.version
                        ),
                    )
                })?;
            state = step(state).map_err(|e| {
                Diagnostics::from_error(
                    "State upgrade failed",
                    format!(
                        "The stored state of this {type_name} (schema version {from}) could not be upgraded to version {}: {e}. \
                         Use the provider version that wrote it, or remove the object from state (`terraform state rm`) and import it again.",
                        from + 1
                    ),
                )
            })?;
        }
        doc = Some(Json::Object(state));
    }
    let mut changed = doc.is_some();
    if doc.is_none() && has_defaults(&schema.attributes, &schema.blocks) {
        // Not parseable here: the decode below says why.
        doc = serde_json::from_slice(raw_json).ok();
    }
    if let Some(Json::Object(state)) = &mut doc {
        changed |= fill_defaults(&schema.attributes, &schema.blocks, state).map_err(|e| {
            Diagnostics::from_error(
                "State upgrade failed",
                format!("The default of {e} of {type_name} cannot be written. This is a bug in the provider: please report it."),
            )
        })?;
    }
    let bytes = match doc.filter(|_| changed) {
        Some(doc) => serde_json::to_vec(&doc).map_err(|e| {
            Diagnostics::from_error(
                "State upgrade failed",
                format!("The upgraded state of this {type_name} could not be written: {e}"),
            )
        })?,
        None => raw_json.to_vec(),
    };
    json::decode_lenient(&bytes, &schema.value_type()).map_err(|e| {
        Diagnostics::from_error(
            "Unreadable state",
            format!("The stored state of this {type_name} could not be read: {e}"),
        )
    })
}

fn check_version(version: i64, current: i64) -> Result<(), Diagnostics> {
    if version < 0 {
        return Err(Diagnostics::from_error(
            "Malformed state version",
            format!(
                "Terraform sent schema version {version}; versions start at 0. This is a bug in Terraform or the provider."
            ),
        ));
    }
    if version > current {
        return Err(Diagnostics::from_error(
            "State written by a newer provider",
            format!(
                "This state has schema version {version} but this provider knows version {current}. Use the provider version that wrote it, or newer."
            ),
        ));
    }
    Ok(())
}

fn parse_object(type_name: &str, raw_json: &[u8]) -> Result<Map<String, Json>, Diagnostics> {
    match serde_json::from_slice(raw_json) {
        Ok(Json::Object(state)) => Ok(state),
        Ok(_) => Err(Diagnostics::from_error(
            "Unreadable state",
            format!("The stored state of this {type_name} is not a JSON object."),
        )),
        Err(e) => Err(Diagnostics::from_error(
            "Unreadable state",
            format!("The stored state of this {type_name} could not be read: {e}"),
        )),
    }
}

fn has_defaults(attributes: &[Attribute], blocks: &[Block]) -> bool {
    attributes.iter().any(|a| {
        a.default.is_some()
            || a.state_fill.is_some()
            || a.nested().is_some_and(|(_, nested)| has_defaults(nested, &[]))
    }) || blocks.iter().any(|b| has_defaults(&b.attributes, &b.blocks))
}

/// Writes the default of every attribute of `attributes` (and of `blocks`, recursively) whose
/// key `object` lacks — its [`Attribute::state_fill`] when it has one — descending into every
/// stored nested object. Returns whether anything was filled; an error names the attribute
/// whose default does not encode (a schema bug).
pub fn fill_defaults(
    attributes: &[Attribute],
    blocks: &[Block],
    object: &mut Map<String, Json>,
) -> Result<bool, String> {
    let mut changed = false;
    for attribute in attributes {
        match object.get_mut(attribute.name) {
            None => {
                if let Some(default) = attribute.state_fill.as_ref().or(attribute.default.as_ref()) {
                    let text = json::encode(default, &attribute.value_type())
                        .map_err(|e| format!("{} ({e})", attribute.name))?;
                    let value =
                        serde_json::from_slice(&text).map_err(|e| format!("{} ({e})", attribute.name))?;
                    object.insert(attribute.name.to_string(), value);
                    changed = true;
                }
            }
            Some(stored) => {
                if let Some((nesting, nested)) = attribute.nested() {
                    changed |= fill_nested(nesting, nested, &[], stored)?;
                }
            }
        }
    }
    for block in blocks {
        if let Some(stored) = object.get_mut(block.name) {
            changed |= fill_nested(block.nesting, &block.attributes, &block.blocks, stored)?;
        }
    }
    Ok(changed)
}

fn fill_nested(
    nesting: Nesting,
    attributes: &[Attribute],
    blocks: &[Block],
    stored: &mut Json,
) -> Result<bool, String> {
    let mut changed = false;
    let mut fill = |element: &mut Json| -> Result<(), String> {
        if let Json::Object(object) = element {
            changed |= fill_defaults(attributes, blocks, object)?;
        }
        Ok(())
    };
    match (nesting, stored) {
        (Nesting::Single, element) => fill(element)?,
        (Nesting::List | Nesting::Set, Json::Array(elements)) => elements.iter_mut().try_for_each(fill)?,
        (Nesting::Map, Json::Object(entries)) => entries.values_mut().try_for_each(fill)?,
        _ => {}
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value as Json, json};

    use super::{UpgradeError, fill_defaults, rename, upgrade_state};
    use crate::terraform::framework::schema::{Attribute, Block, Schema};
    use crate::terraform::tfvalue::Value;

    fn object(v: Json) -> Map<String, Json> {
        match v {
            Json::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    /// A schema like a resource's after an attribute with a default was added, at the top
    /// level, inside a single nested object, a list of objects, a map of objects and a block.
    fn schema_with_new_defaults() -> Schema {
        let nested = || {
            vec![
                Attribute::string("name").required(),
                Attribute::string("mode").default_value(Value::string("fast")),
            ]
        };
        Schema::new(
            "",
            vec![
                Attribute::string("name").required(),
                Attribute::string("mode").default_value(Value::string("karpenter")),
                Attribute::number("weight").default_value(Value::number(10)),
                Attribute::object("single", nested()),
                Attribute::list_of_objects("items", nested()),
                Attribute::map_of_objects("by_key", nested()),
                Attribute::object("absent", nested()),
            ],
        )
        .with_blocks(vec![Block::single("timeouts", nested())])
    }

    #[test]
    fn fill_writes_defaults_where_keys_are_missing_and_keeps_what_is_stored() {
        let schema = schema_with_new_defaults();
        let mut state = object(json!({
            "name": "a",
            "weight": null,
            "single": {"name": "s"},
            "items": [{"name": "i0"}, {"name": "i1", "mode": "slow"}, null],
            "by_key": {"k": {"name": "m"}},
            "absent": null,
            "timeouts": {"name": "t"},
        }));
        assert_eq!(
            fill_defaults(&schema.attributes, &schema.blocks, &mut state),
            Ok(true)
        );
        assert_eq!(
            Json::Object(state),
            json!({
                "name": "a",
                "mode": "karpenter",
                // a stored null is a value the schema of its time wrote: kept
                "weight": null,
                "single": {"name": "s", "mode": "fast"},
                "items": [{"name": "i0", "mode": "fast"}, {"name": "i1", "mode": "slow"}, null],
                "by_key": {"k": {"name": "m", "mode": "fast"}},
                // no stored object: nothing is made up inside it
                "absent": null,
                "timeouts": {"name": "t", "mode": "fast"},
            })
        );
        let mut complete = object(json!({"name": "a", "mode": "x", "weight": 1}));
        assert_eq!(
            fill_defaults(&schema.attributes, &schema.blocks, &mut complete),
            Ok(false)
        );
    }

    #[test]
    fn an_upgrade_at_the_same_version_fills_defaults() {
        let schema = schema_with_new_defaults();
        let state = upgrade_state("t", &schema, 0, br#"{"name":"a","gone":1}"#).expect("upgrade");
        assert_eq!(state.get("mode"), Some(&Value::string("karpenter")));
        assert_eq!(state.get("weight"), Some(&Value::number(10)));
        assert_eq!(state.get("single"), Some(&Value::Null));
        assert_eq!(state.get("gone"), None);
    }

    /// An attribute whose value for objects made before it existed is not its default for new
    /// ones (a version that new objects get at its newest): the fill writes `state_fill` into
    /// stored state without the key, keeps what is stored, and a plain computed one with a
    /// fill value but no default gets it too.
    #[test]
    fn state_fill_is_written_instead_of_the_default_where_the_key_is_missing() {
        let schema = Schema::new(
            "",
            vec![
                Attribute::string("name").required(),
                Attribute::string("version")
                    .optional_computed()
                    .stable()
                    .fill_stored_state_with(Value::string("v1")),
                Attribute::string("mode")
                    .default_value(Value::string("new"))
                    .fill_stored_state_with(Value::string("old")),
            ],
        );
        let state = upgrade_state("t", &schema, 0, br#"{"name":"a"}"#).expect("upgrade");
        assert_eq!(state.get("version"), Some(&Value::string("v1")));
        assert_eq!(state.get("mode"), Some(&Value::string("old")));
        let stored =
            upgrade_state("t", &schema, 0, br#"{"name":"a","version":"v2","mode":"new"}"#).expect("upgrade");
        assert_eq!(stored.get("version"), Some(&Value::string("v2")));
        assert_eq!(stored.get("mode"), Some(&Value::string("new")));
    }

    #[test]
    fn an_upgrade_with_nothing_to_fill_keeps_full_precision() {
        let schema = Schema::new("", vec![Attribute::number("n")]);
        let big = "123456789012345678901234567890.5";
        let state = upgrade_state("t", &schema, 0, format!(r#"{{"n":{big}}}"#).as_bytes()).expect("upgrade");
        assert_eq!(
            state.get("n").and_then(Value::as_number).map(|n| n.to_string()),
            Some(big.to_string())
        );
    }

    /// The pattern for a rename: version 0 called the attribute `ami_family`, version 1 calls
    /// it `image_family`; step 0 moves it. (A test-only schema: no resource needs one today.)
    fn rename_step(mut state: Map<String, Json>) -> Result<Map<String, Json>, UpgradeError> {
        rename(&mut state, "ami_family", "image_family")?;
        Ok(state)
    }

    /// Version 1 → 2 re-shapes `port` from a string to a number.
    fn reshape_step(mut state: Map<String, Json>) -> Result<Map<String, Json>, UpgradeError> {
        if let Some(Json::String(text)) = state.get("port") {
            let port: u16 = text
                .parse()
                .map_err(|_| UpgradeError::at("port", format!("{text:?} is not a port number")))?;
            state.insert("port".into(), Json::from(port));
        }
        Ok(state)
    }

    fn versioned_schema() -> Schema {
        Schema::new(
            "",
            vec![
                Attribute::string("image_family"),
                Attribute::number("port"),
                Attribute::string("mode").default_value(Value::string("karpenter")),
            ],
        )
        .with_upgrade_steps(&[rename_step, reshape_step])
    }

    #[test]
    fn the_rename_step_moves_the_value_and_refuses_two_values() {
        let renamed = rename_step(object(json!({"ami_family": "AL2023", "port": "1"}))).expect("step");
        assert_eq!(
            Json::Object(renamed),
            json!({"image_family": "AL2023", "port": "1"})
        );
        let kept = rename_step(object(json!({"image_family": "Bottlerocket"}))).expect("step");
        assert_eq!(Json::Object(kept), json!({"image_family": "Bottlerocket"}));
        let null = rename_step(object(
            json!({"ami_family": null, "image_family": "Bottlerocket"}),
        ));
        assert_eq!(
            null.map(Json::Object),
            Ok(json!({"image_family": "Bottlerocket"}))
        );
        let both = rename_step(object(json!({"ami_family": "a", "image_family": "b"})));
        assert_eq!(
            both.map(Json::Object).map_err(|e| e.to_string()),
            Err(
                "attribute ami_family: the state has both ami_family and its new name image_family"
                    .to_string()
            )
        );
    }

    #[test]
    fn the_reshape_step_converts_or_names_what_it_cannot() {
        let step = reshape_step(object(json!({"port": "8080"}))).expect("step");
        assert_eq!(Json::Object(step), json!({"port": 8080}));
        assert_eq!(
            reshape_step(object(json!({"port": "http"}))).map(Json::Object),
            Err(UpgradeError::at("port", "\"http\" is not a port number"))
        );
    }

    #[test]
    fn steps_run_from_the_stored_version_then_defaults_are_filled() {
        let schema = versioned_schema();
        assert_eq!(schema.version, 2);
        let expected = |family: &str| {
            Value::object([
                ("image_family", Value::string(family)),
                ("port", Value::number(8080)),
                ("mode", Value::string("karpenter")),
            ])
        };
        let v0 = upgrade_state("t", &schema, 0, br#"{"ami_family":"AL2023","port":"8080"}"#);
        assert_eq!(v0, Ok(expected("AL2023")));
        let v1 = upgrade_state("t", &schema, 1, br#"{"image_family":"AL2","port":"8080"}"#);
        assert_eq!(v1, Ok(expected("AL2")));
        let v2 = upgrade_state("t", &schema, 2, br#"{"image_family":"AL2","port":8080}"#);
        assert_eq!(v2, Ok(expected("AL2")));
    }

    #[test]
    fn a_failed_step_names_the_type_the_versions_and_the_attribute() {
        let schema = versioned_schema();
        let d = upgrade_state("karpenter_thing", &schema, 0, br#"{"port":"http"}"#).expect_err("bad port");
        let d = d.iter().next().expect("a diagnostic");
        assert_eq!(d.summary, "State upgrade failed");
        assert!(
            d.detail.starts_with(
                "The stored state of this karpenter_thing (schema version 1) could not be upgraded to version 2: \
                 attribute port: \"http\" is not a port number."
            ),
            "{}",
            d.detail
        );
    }

    #[test]
    fn versions_outside_the_schema_and_missing_steps_are_diagnostics() {
        let schema = versioned_schema();
        for (version, summary) in [
            (3, "State written by a newer provider"),
            (-1, "Malformed state version"),
        ] {
            let d = upgrade_state("t", &schema, version, b"{}").expect_err("refused");
            assert_eq!(d.iter().next().map(|d| d.summary.as_str()), Some(summary));
        }
        let stepless = Schema::new("", vec![Attribute::string("a")]).with_version(1);
        let d = upgrade_state("t", &stepless, 0, b"{}").expect_err("no step");
        assert_eq!(
            d.iter().next().map(|d| d.summary.as_str()),
            Some("Missing state upgrade step")
        );
        let d = upgrade_state("t", &schema, 0, b"[1]").expect_err("not an object");
        assert!(d.iter().any(|d| d.detail.contains("not a JSON object")));
        let d = upgrade_state("t", &schema, 2, b"{").expect_err("not JSON");
        assert_eq!(
            d.iter().next().map(|d| d.summary.as_str()),
            Some("Unreadable state")
        );
    }
}
