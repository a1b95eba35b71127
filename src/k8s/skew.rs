//! Version skew between this provider's schemas (Karpenter v1.15, [`SCHEMA_RELEASE`]) and the
//! Karpenter CRDs a cluster actually serves (any v1 minor since v1.0).
//!
//! The CRD gate hands over the served version's `openAPIV3Schema`; [`undeclared`] walks an
//! object about to be written and lists the fields that schema does not declare, so the
//! resource can stop before the write (server-side apply would answer 500 "field not declared
//! in schema", which looks like a server fault). [`first_release`] says which Karpenter
//! release added a field, from [`FIRST_RELEASES`], a table of facts kept honest by a test that
//! derives it from the CRDs of every v1 minor. [`undeclared_in_error`] reads the field paths
//! out of the server's own 500, for when the gate had no schema to check against.

use serde_json::Value as Json;

/// `(CRD name, wire path, first Karpenter release whose CRD declares it)`, for every `spec`
/// field our schemas write that the v1.0 CRDs do not have. A path names list items with `[]`
/// and is listed only where it first appears (children added together with their parent are
/// covered by the parent's row).
pub const FIRST_RELEASES: &[(&str, &str, &str)] = &[
    ("nodepools.karpenter.sh", "spec.replicas", "v1.8"),
    (
        "ec2nodeclasses.karpenter.k8s.aws",
        "spec.capacityReservationSelectorTerms",
        "v1.3",
    ),
    (
        "ec2nodeclasses.karpenter.k8s.aws",
        "spec.amiSelectorTerms[].ssmParameter",
        "v1.4",
    ),
    (
        "ec2nodeclasses.karpenter.k8s.aws",
        "spec.blockDeviceMappings[].ebs.volumeInitializationRate",
        "v1.5",
    ),
    (
        "ec2nodeclasses.karpenter.k8s.aws",
        "spec.capacityReservationSelectorTerms[].instanceMatchCriteria",
        "v1.8",
    ),
    ("ec2nodeclasses.karpenter.k8s.aws", "spec.ipPrefixCount", "v1.8"),
    (
        "ec2nodeclasses.karpenter.k8s.aws",
        "spec.networkInterfaces",
        "v1.11",
    ),
    (
        "ec2nodeclasses.karpenter.k8s.aws",
        "spec.placementGroupSelector",
        "v1.11",
    ),
    (
        "ec2nodeclasses.karpenter.k8s.aws",
        "spec.connectionTracking",
        "v1.13",
    ),
    ("ec2nodeclasses.karpenter.k8s.aws", "spec.cpuOptions", "v1.13"),
];

/// Fields of Karpenter v1.15 (whose CRD files are not among the minors `FIRST_RELEASES` is
/// derived from): `spec.enclaveOptions`, and every field of its open `spec.kubelet` beyond the
/// 12 typed in the v1.14 CRD ([`V1_14_KUBELET`]).
pub const V1_15: &str = "v1.15";
pub const V1_15_FIELDS: &[(&str, &str)] = &[("ec2nodeclasses.karpenter.k8s.aws", "spec.enclaveOptions")];
/// The fields of `spec.kubelet` that the EC2NodeClass CRDs of v1.0–v1.14 declare.
pub const V1_14_KUBELET: &[&str] = &[
    "clusterDNS",
    "maxPods",
    "podsPerCore",
    "systemReserved",
    "kubeReserved",
    "evictionHard",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "evictionMaxPodGracePeriod",
    "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent",
    "cpuCFSQuota",
];

/// The oldest Karpenter release whose v1 CRDs this provider writes to.
pub const OLDEST_SUPPORTED: &str = "v1.0";
/// The release our schemas follow field by field.
pub const SCHEMA_RELEASE: &str = "v1.15";

/// The shape of a CRD schema node, as the provider's coverage checks and the release generator
/// compare it: `object` (with properties), `map` (an object without), `free-form`
/// (preserve-unknown-fields, no properties), `list(object)`, `list`, `string` (int-or-string
/// too), `number`, `bool`.
pub fn schema_shape(node: &Json) -> &'static str {
    if node.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true)) {
        return "string";
    }
    if node.get("x-kubernetes-preserve-unknown-fields") == Some(&Json::Bool(true))
        && node.get("properties").is_none()
    {
        return "free-form";
    }
    match node["type"].as_str() {
        Some("object") if node.get("properties").is_some() => "object",
        Some("object") => "map",
        Some("array") if node["items"].get("properties").is_some() => "list(object)",
        Some("array") => "list",
        Some("string") => "string",
        Some("integer") | Some("number") => "number",
        Some("boolean") => "bool",
        _ => "unknown",
    }
}

/// `spec.a[3].b` → `spec.a[].b`: the table's form of a concrete field path.
pub fn generic_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_brackets = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_brackets = true;
                out.push('[');
            }
            ']' => {
                in_brackets = false;
                out.push(']');
            }
            _ if in_brackets => {}
            _ => out.push(c),
        }
    }
    out
}

/// The first Karpenter release whose CRD `crd` declares the field at `path` (concrete or
/// generic form), when the table knows it.
pub fn first_release(crd: &str, path: &str) -> Option<&'static str> {
    let generic = generic_path(path);
    if let Some((_, _, release)) = FIRST_RELEASES.iter().find(|(c, p, _)| *c == crd && *p == generic) {
        return Some(release);
    }
    if V1_15_FIELDS
        .iter()
        .any(|(c, p)| *c == crd && (generic == *p || generic.starts_with(&format!("{p}."))))
    {
        return Some(V1_15);
    }
    let kubelet_field = generic
        .strip_prefix("spec.kubelet.")
        .map(|rest| rest.split(['.', '[']).next().unwrap_or(rest));
    match kubelet_field {
        Some(field) if crd == "ec2nodeclasses.karpenter.k8s.aws" && !V1_14_KUBELET.contains(&field) => {
            Some(V1_15)
        }
        _ => None,
    }
}

/// The fields of `object`'s `spec` that the CRD schema `root` does not declare, outermost
/// only (`spec.a` when `a` is missing, not also `spec.a.b`), as `spec.x[0].y` paths.
pub fn undeclared(root: &Json, object: &Json) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(spec_schema), Some(spec)) = (root.pointer("/properties/spec"), object.get("spec")) {
        walk(spec_schema, spec, "spec", &mut out);
    }
    out
}

fn walk(schema: &Json, value: &Json, path: &str, out: &mut Vec<String>) {
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Json::Bool(true)) {
        return;
    }
    match value {
        Json::Object(fields) => {
            if let Some(props) = schema.get("properties").and_then(Json::as_object) {
                for (k, v) in fields {
                    let child = format!("{path}.{k}");
                    match props.get(k) {
                        Some(s) => walk(s, v, &child, out),
                        None => out.push(child),
                    }
                }
            } else if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                for (k, v) in fields {
                    walk(additional, v, &format!("{path}[{k}]"), out);
                }
            }
        }
        Json::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(item_schema, v, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// Removes the field at a `spec.x[0].y` path from `object`, if it is there.
pub fn remove(object: &mut Json, path: &str) {
    let mut steps: Vec<Step> = Vec::new();
    for part in path.split('.') {
        let (name, rest) = part.split_once('[').unwrap_or((part, ""));
        steps.push(Step::Key(name.to_string()));
        for index in rest.split('[') {
            let inner = index.trim_end_matches(']');
            if inner.is_empty() {
                continue;
            }
            steps.push(match inner.parse::<usize>() {
                Ok(i) => Step::Index(i),
                Err(_) => Step::Key(inner.to_string()),
            });
        }
    }
    let Some((last, parents)) = steps.split_last() else {
        return;
    };
    let mut here = object;
    for step in parents {
        let next = match (step, here) {
            (Step::Key(k), Json::Object(m)) => m.get_mut(k),
            (Step::Index(i), Json::Array(a)) => a.get_mut(*i),
            _ => None,
        };
        match next {
            Some(n) => here = n,
            None => return,
        }
    }
    match (last, here) {
        (Step::Key(k), Json::Object(m)) => {
            m.remove(k);
        }
        (Step::Index(i), Json::Array(a)) if *i < a.len() => {
            a.remove(*i);
        }
        _ => {}
    }
}

enum Step {
    Key(String),
    Index(usize),
}

/// Whether an API error is the server-side apply refusal of a field the CRD does not declare
/// (or another typed-conversion failure that no retry can heal).
pub fn is_schema_refusal(message: &str) -> bool {
    message.contains("failed to create typed patch object")
        || message.contains("failed to create typed live object")
        || message.contains("field not declared in schema")
}

/// The field paths (`spec.replicas`) that a "field not declared in schema" answer names.
/// Keyed list selectors (`[name="x"]`) end the path there: only plain indexes map onto
/// attributes.
pub fn undeclared_in_error(message: &str) -> Vec<String> {
    const TAIL: &str = ": field not declared in schema";
    let mut out = Vec::new();
    let mut rest = message;
    while let Some(end) = rest.find(TAIL) {
        let before = &rest[..end];
        let start = before
            .rfind(|c: char| c.is_whitespace() || c == ',')
            .map_or(0, |i| i + 1);
        let raw = before[start..].trim_start_matches('.');
        let mut path = String::new();
        let mut chars = raw.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '[' {
                let close = raw[i..].find(']').map(|j| i + j);
                let inner = close.map(|j| &raw[i + 1..j]);
                match (inner, close) {
                    (Some(inner), Some(j)) if inner.parse::<usize>().is_ok() => {
                        path.push_str(&raw[i..=j]);
                        while chars.peek().is_some_and(|(k, _)| *k <= j) {
                            chars.next();
                        }
                    }
                    _ => break,
                }
            } else {
                path.push(c);
            }
        }
        if !path.is_empty() && !out.contains(&path) {
            out.push(path);
        }
        rest = &rest[end + TAIL.len()..];
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn schema() -> Json {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "limits": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "terms": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}},
            "template": {"type": "object", "properties": {"weight": {"type": "integer"}}}
        }}}})
    }

    #[test]
    fn lists_outermost_undeclared_fields() {
        let object = json!({"spec": {
            "limits": {"cpu": "1"},
            "free": {"anything": {"goes": 1}},
            "terms": [{"id": "a"}, {"id": "b", "ownerID": "1"}],
            "template": {"weight": 1, "extra": {"deep": 1}},
            "replicas": 3
        }});
        let mut found = undeclared(&schema(), &object);
        found.sort();
        assert_eq!(
            found,
            vec!["spec.replicas", "spec.template.extra", "spec.terms[1].ownerID"]
        );
        assert!(undeclared(&schema(), &json!({"spec": {"limits": {"cpu": "1"}}})).is_empty());
    }

    #[test]
    fn removes_a_field_by_path() {
        let mut object = json!({"spec": {"terms": [{"id": "a", "x": 1}], "replicas": 3}});
        remove(&mut object, "spec.terms[0].x");
        remove(&mut object, "spec.replicas");
        remove(&mut object, "spec.not.there[4]");
        assert_eq!(object, json!({"spec": {"terms": [{"id": "a"}]}}));
    }

    #[test]
    fn reads_field_paths_from_the_servers_refusal() {
        let one = "failed to create typed patch object (/static; karpenter.sh/v1, Kind=NodePool): .spec.replicas: field not declared in schema";
        assert!(is_schema_refusal(one));
        assert_eq!(undeclared_in_error(one), vec!["spec.replicas"]);
        let many = "failed to create typed patch object (/d; karpenter.k8s.aws/v1, Kind=EC2NodeClass): errors:\n  .spec.cpuOptions: field not declared in schema\n  .spec.blockDeviceMappings[0].ebs.volumeInitializationRate: field not declared in schema\n  .spec.x[name=\"a\"].y: field not declared in schema";
        assert_eq!(
            undeclared_in_error(many),
            vec![
                "spec.cpuOptions",
                "spec.blockDeviceMappings[0].ebs.volumeInitializationRate",
                "spec.x"
            ]
        );
        assert!(!is_schema_refusal(
            "Internal error occurred: failed calling webhook"
        ));
    }

    #[test]
    fn looks_up_first_releases_by_concrete_path() {
        assert_eq!(
            first_release("nodepools.karpenter.sh", "spec.replicas"),
            Some("v1.8")
        );
        assert_eq!(
            first_release(
                "ec2nodeclasses.karpenter.k8s.aws",
                "spec.blockDeviceMappings[2].ebs.volumeInitializationRate"
            ),
            Some("v1.5")
        );
        assert_eq!(first_release("nodepools.karpenter.sh", "spec.limits"), None);
        let class = "ec2nodeclasses.karpenter.k8s.aws";
        assert_eq!(
            first_release(class, "spec.kubelet.registryPullQPS"),
            Some("v1.15")
        );
        assert_eq!(
            first_release(class, "spec.kubelet.logging.vmodule[0].verbosity"),
            Some("v1.15")
        );
        assert_eq!(first_release(class, "spec.kubelet.maxPods"), None);
        assert_eq!(first_release(class, "spec.enclaveOptions"), Some("v1.15"));
        assert_eq!(first_release("nodepools.karpenter.sh", "spec.kubelet.x"), None);
    }

    /// [`V1_14_KUBELET`] is what the v1.0–v1.14 CRDs declare under `spec.kubelet`, and the v1.15
    /// stand-in (`crds/v1-main`) leaves `spec.kubelet` open.
    #[test]
    fn the_typed_kubelet_of_every_minor_has_the_twelve_fields() {
        for (release, schemas) in all_minor_schemas() {
            let kubelet =
                &schemas["ec2nodeclasses.karpenter.k8s.aws"]["properties"]["spec"]["properties"]["kubelet"];
            let mut fields: Vec<&str> = kubelet["properties"]
                .as_object()
                .expect("typed kubelet")
                .keys()
                .map(String::as_str)
                .collect();
            fields.sort();
            let mut expected = V1_14_KUBELET.to_vec();
            expected.sort();
            assert_eq!(fields, expected, "{release}");
        }
        let path = kube_testserver::upstream::path("crds/v1-main/karpenter.k8s.aws_ec2nodeclasses.yaml");
        let text = std::fs::read_to_string(&path).expect("v1-main CRD");
        let crd: Json = serde_saphyr::from_str(&text).expect("CRD");
        let kubelet = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["kubelet"];
        assert_eq!(kubelet["x-kubernetes-preserve-unknown-fields"], Json::Bool(true));
        assert!(kubelet.get("properties").is_none());
    }

    /// The user guide's minimum-version table states every row of [`FIRST_RELEASES`].
    #[test]
    fn guide_lists_every_first_release() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guides/karpenter-versions.md");
        let guide = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        // Only the table's own rows count: a row after a blank line renders as plain text.
        let rows = table_rows(
            &guide,
            "| Resource | Attribute | CRD field | First Karpenter release |",
        );
        let v1_15 = V1_15_FIELDS.iter().map(|(crd, wire)| (*crd, *wire, V1_15));
        for (_, wire, release) in FIRST_RELEASES.iter().copied().chain(v1_15) {
            assert!(
                rows.iter()
                    .any(|l| l.contains(&format!("`{wire}`"))
                        && l.trim_end().ends_with(&format!("| {release} |"))),
                "docs/guides/karpenter-versions.md: the table has no row for {wire} ({release})"
            );
        }
        assert!(
            rows.iter().any(|l| l.contains("every `kubelet` attribute")
                && l.trim_end().ends_with(&format!("| {V1_15} |"))),
            "docs/guides/karpenter-versions.md: the table has no row for the open kubelet ({V1_15})"
        );
    }

    /// The rows of the Markdown table whose header line is `header`: the lines after its
    /// delimiter row, up to the first that is not a row.
    fn table_rows<'a>(page: &'a str, header: &str) -> Vec<&'a str> {
        let mut lines = page.lines().skip_while(|l| l.trim_end() != header);
        assert!(lines.next().is_some(), "no table headed {header}");
        assert!(
            lines.next().is_some_and(|l| l.starts_with("|---")),
            "the table headed {header} has no delimiter row"
        );
        lines.take_while(|l| l.starts_with('|')).collect()
    }

    #[test]
    fn table_rows_end_at_a_blank_line() {
        let page = "| A | B |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n";
        assert_eq!(table_rows(page, "| A | B |"), vec!["| 1 | 2 |"]);
    }

    // ---- the table, derived from the CRDs of every v1 minor ----

    fn versions_dir() -> std::path::PathBuf {
        kube_testserver::upstream::path("crds/versions")
    }

    fn fields(node: &Json, prefix: &str, out: &mut Vec<String>) {
        for (name, sub) in node["properties"].as_object().into_iter().flatten() {
            let path = format!("{prefix}.{name}");
            out.push(path.clone());
            if sub.get("properties").is_some() {
                fields(sub, &path, out);
            }
            if sub["items"].get("properties").is_some() {
                fields(&sub["items"], &format!("{path}[]"), out);
            }
        }
    }

    /// Every v1 minor's served v1 schema per CRD file, oldest first.
    pub(crate) fn all_minor_schemas() -> Vec<(String, BTreeMap<String, Json>)> {
        let mut dirs: Vec<String> = std::fs::read_dir(versions_dir())
            .expect("versions dir")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        dirs.sort_by_key(|d| kube_testserver::upstream::release_key(d));
        dirs.into_iter()
            .map(|dir| {
                let mut schemas = BTreeMap::new();
                for file in [
                    "karpenter.sh_nodepools.yaml",
                    "karpenter.k8s.aws_ec2nodeclasses.yaml",
                ] {
                    let path = versions_dir().join(&dir).join(file);
                    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
                    let crd: Json = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
                    let name = crd["metadata"]["name"].as_str().expect("name").to_string();
                    let v1 = crd["spec"]["versions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|v| v["name"] == "v1")
                        .unwrap_or_else(|| panic!("{path:?}: no v1"));
                    schemas.insert(name, v1["schema"]["openAPIV3Schema"].clone());
                }
                (dir, schemas)
            })
            .collect()
    }

    /// The table holds exactly the facts the CRDs show: for every field of the newest CRD, the
    /// first minor that declares it, listed where that is later than v1.0 and not implied by
    /// the parent's row.
    #[test]
    fn first_release_table_matches_the_crds_of_every_minor() {
        let minors = all_minor_schemas();
        assert!(
            minors.len() >= 15,
            "expected every v1 minor, found {}",
            minors.len()
        );
        assert!(minors[0].0.starts_with("v1.0."), "{}", minors[0].0);
        let (_, newest) = minors.last().expect("newest");
        let mut derived = Vec::new();
        for (crd, newest_schema) in newest {
            let mut newest_fields = Vec::new();
            fields(&newest_schema["properties"]["spec"], "spec", &mut newest_fields);
            let mut first: BTreeMap<String, String> = BTreeMap::new();
            for path in &newest_fields {
                let release = minors
                    .iter()
                    .find(|(_, schemas)| {
                        let mut have = Vec::new();
                        fields(&schemas[crd]["properties"]["spec"], "spec", &mut have);
                        have.contains(path)
                    })
                    .map(|(dir, _)| {
                        dir.rsplit_once('.')
                            .map_or(dir.clone(), |(minor, _)| minor.to_string())
                    })
                    .expect("the newest minor has it");
                first.insert(path.clone(), release);
            }
            for (path, release) in &first {
                if release == OLDEST_SUPPORTED {
                    continue;
                }
                let parent = path
                    .rsplit_once('.')
                    .map(|(p, _)| p.trim_end_matches("[]").to_string());
                let implied = parent.and_then(|p| first.get(&p)).is_some_and(|r| r == release);
                if !implied {
                    derived.push((crd.clone(), path.clone(), release.clone()));
                }
            }
        }
        let mut table: Vec<(String, String, String)> = FIRST_RELEASES
            .iter()
            .map(|(c, p, r)| (c.to_string(), p.to_string(), r.to_string()))
            .collect();
        derived.sort();
        table.sort();
        assert_eq!(
            table, derived,
            "FIRST_RELEASES differs from what the CRDs in versions/ show"
        );
        // The newest minor here is v1.14; the schemas follow v1.15, whose additions are the
        // rows of V1_15_FIELDS and the open kubelet.
        assert!(minors.last().expect("newest").0.starts_with("v1.14."));
        assert_eq!(SCHEMA_RELEASE, V1_15);
    }
}
