//! Mutating admission, as the Karpenter releases that served the legacy kinds did it: Karpenter
//! v0.32's webhook appended default requirements to every Provisioner it admitted (create and
//! update). Off unless a test turns it on (`State::legacy_webhook_defaults`), because the
//! v1 CRDs and Karpenter v1 have no such webhook.
//!
//! The rules, per the v0.32 sources: a requirement on `kubernetes.io/os` In [linux], on
//! `kubernetes.io/arch` In [amd64] and on `karpenter.sh/capacity-type` In [on-demand], each
//! when no requirement has that key; and `karpenter.k8s.aws/instance-category` In [c, m, r] plus
//! `karpenter.k8s.aws/instance-generation` Gt [2] when none constrains the instance type,
//! family, category or generation. Legacy `beta.kubernetes.io/*` keys count as their stable
//! names.

use serde_json::{Value, json};

/// The stable name of a label key (legacy beta spellings normalised).
fn normalised(key: &str) -> &str {
    match key {
        "beta.kubernetes.io/arch" => "kubernetes.io/arch",
        "beta.kubernetes.io/os" => "kubernetes.io/os",
        "beta.kubernetes.io/instance-type" => "node.kubernetes.io/instance-type",
        other => other,
    }
}

/// Appends v0.32's default requirements to a Provisioner object (`spec.requirements`).
pub fn default_provisioner(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let has: std::collections::BTreeSet<String> = spec
        .get("requirements")
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .filter_map(|r| r.get("key").and_then(Value::as_str))
                .map(|k| normalised(k).to_string())
                .collect()
        })
        .unwrap_or_default();
    let mut added = Vec::new();
    for (key, value) in [
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("karpenter.sh/capacity-type", "on-demand"),
    ] {
        if !has.contains(key) {
            added.push(json!({"key": key, "operator": "In", "values": [value]}));
        }
    }
    let instance_keys = [
        "node.kubernetes.io/instance-type",
        "karpenter.k8s.aws/instance-family",
        "karpenter.k8s.aws/instance-category",
        "karpenter.k8s.aws/instance-generation",
    ];
    if !instance_keys.iter().any(|k| has.contains(*k)) {
        added.push(json!({"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]}));
        added
            .push(json!({"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]}));
    }
    if added.is_empty() {
        return;
    }
    match spec.get_mut("requirements").and_then(Value::as_array_mut) {
        Some(list) => list.extend(added),
        None => {
            spec.insert("requirements".into(), Value::Array(added));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(obj: &Value) -> Vec<String> {
        obj["spec"]["requirements"]
            .as_array()
            .map(|rs| {
                rs.iter()
                    .map(|r| r["key"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn an_empty_provisioner_gets_all_five_defaults() {
        let mut p = json!({"spec": {}});
        default_provisioner(&mut p);
        assert_eq!(
            keys(&p),
            [
                "kubernetes.io/os",
                "kubernetes.io/arch",
                "karpenter.sh/capacity-type",
                "karpenter.k8s.aws/instance-category",
                "karpenter.k8s.aws/instance-generation"
            ]
        );
    }

    #[test]
    fn keys_already_constrained_are_left_alone() {
        let mut p = json!({"spec": {"requirements": [
            {"key": "beta.kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}
        ]}});
        default_provisioner(&mut p);
        assert_eq!(
            keys(&p),
            [
                "beta.kubernetes.io/arch",
                "karpenter.sh/capacity-type",
                "karpenter.k8s.aws/instance-family",
                "kubernetes.io/os"
            ]
        );
        // Idempotent, like a webhook seeing its own output on the next update.
        let once = p.clone();
        default_provisioner(&mut p);
        assert_eq!(p, once);
    }
}
