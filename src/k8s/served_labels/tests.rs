use kube_testserver::upstream::release_key;
use serde_json::{Value as Json, json};

use super::{FIRST_LABEL_RELEASES, LabelRules, OPEN_KUBERNETES_DOMAINS, first_label_release};

fn refused(schema: &Json, object: &Json) -> Vec<super::LabelRefusal> {
    super::refused(schema, &LabelRules::of(schema).expect("rules"), object)
}

/// The served `openAPIV3Schema` of the NodePool CRD of an upstream directory (`versions/v1.14.1`),
/// read once per test process.
fn node_pool_schema(dir: &str) -> Json {
    static READ: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<String, Json>>> =
        std::sync::LazyLock::new(Default::default);
    let mut read = READ.lock().expect("lock");
    read.entry(dir.to_string())
        .or_insert_with(|| {
            let path = kube_testserver::upstream::path(&format!("crds/{dir}/karpenter.sh_nodepools.yaml"));
            let text = std::fs::read_to_string(&path).expect("CRD");
            let crd: Json = serde_saphyr::from_str(&text).expect("YAML");
            crd["spec"]["versions"]
                .as_array()
                .expect("versions")
                .iter()
                .find(|v| v["name"] == "v1")
                .expect("v1")["schema"]["openAPIV3Schema"]
                .clone()
        })
        .clone()
}

/// A NodePool that names `key` in its template's labels and in a requirement.
fn pool_naming(key: &str) -> Json {
    json!({"spec": {"template": {
        "metadata": {"labels": {key: "true", "team": "a"}},
        "spec": {"requirements": [
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
            {"key": key, "operator": "In", "values": ["true"]}
        ]}
    }}})
}

/// Where `key` is refused (a rule failing twice at one place counts once).
fn refused_keys(dir: &str, key: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = refused(&node_pool_schema(dir), &pool_naming(key))
        .into_iter()
        .map(|r| (r.path, r.key))
        .collect();
    out.dedup();
    out
}

#[test]
fn nitro_sandbox_is_refused_by_v1_14_and_allowed_by_v1_15() {
    let key = "karpenter.k8s.aws/nitro-sandbox";
    let on_v1_14 = refused(&node_pool_schema("versions/v1.14.1"), &pool_naming(key));
    assert_eq!(
        on_v1_14
            .iter()
            .map(|r| (r.path.as_str(), r.key.as_str(), r.message.as_str()))
            .collect::<Vec<_>>(),
        [
            (
                "spec.template.metadata.labels",
                key,
                "label domain \"karpenter.k8s.aws\" is restricted"
            ),
            (
                "spec.template.spec.requirements[1].key",
                key,
                "label domain \"karpenter.k8s.aws\" is restricted"
            ),
        ]
    );
    assert_eq!(refused_keys("v1-main", key), []);
    assert_eq!(first_label_release(key), Some("v1.15"));
}

#[test]
fn restricted_keys_are_refused_by_every_release() {
    for dir in ["versions/v1.0.14", "versions/v1.9.2", "v1-main"] {
        for key in [
            "kubernetes.io/hostname",
            "karpenter.sh/nodepool",
            "karpenter.sh/other",
        ] {
            assert_eq!(refused_keys(dir, key).len(), 2, "{dir} {key}");
        }
        assert_eq!(refused_keys(dir, "example.com/team"), [], "{dir}");
    }
}

/// The release directories, oldest first, with their minor (`v1.9`).
fn releases() -> Vec<(String, String)> {
    let dir = kube_testserver::upstream::path("crds/versions");
    let mut out: Vec<(Vec<u64>, String)> = std::fs::read_dir(&dir)
        .expect("versions")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .map(|n| (release_key(&n), n))
        .collect();
    out.sort();
    let mut releases: Vec<(String, String)> = out
        .into_iter()
        .map(|(k, n)| (format!("versions/{n}"), format!("v{}.{}", k[0], k[1])))
        .collect();
    releases.push(("v1-main".to_string(), "v1.15".to_string()));
    releases
}

/// Every key of the table is refused by every release before the one it names and allowed from
/// it on; every `karpenter.k8s.aws` key the newest CRDs allow is allowed by v1.0 or in the
/// table; and the `kubernetes.io` domain opened when the table says.
#[test]
fn the_first_releases_are_those_of_the_crds_of_every_minor() {
    let releases = releases();
    for (key, first) in FIRST_LABEL_RELEASES {
        for (dir, minor) in &releases {
            let allowed = refused_keys(dir, key).is_empty();
            assert_eq!(
                allowed,
                release_key(minor) >= release_key(first),
                "{key} in {dir}: the table says it is allowed from {first}"
            );
        }
    }
    let newest = serde_json::to_string(&node_pool_schema("v1-main")).expect("JSON");
    let allow_listed = regex::Regex::new(r#"karpenter\.k8s\.aws/[a-z0-9-]+"#).expect("regex");
    for key in allow_listed.find_iter(&newest).map(|m| m.as_str()) {
        if !refused_keys(&releases[0].0, key).is_empty() {
            assert!(
                first_label_release(key).is_some(),
                "{key} is not in FIRST_LABEL_RELEASES"
            );
        }
    }
    let key = "example.kubernetes.io/team";
    for (dir, minor) in &releases {
        assert_eq!(
            refused_keys(dir, key).is_empty(),
            release_key(minor) >= release_key(OPEN_KUBERNETES_DOMAINS),
            "{key} in {dir}"
        );
    }
    assert_eq!(first_label_release(key), Some(OPEN_KUBERNETES_DOMAINS));
}

#[test]
fn a_schema_without_label_rules_refuses_nothing() {
    let schema =
        json!({"properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    assert_eq!(
        refused(&schema, &pool_naming("karpenter.k8s.aws/nitro-sandbox")),
        []
    );
}
