//! #38, EKS Auto Mode as AWS ships it: every NodeClass and NodePool of AWS's published Auto Mode
//! manifests (aws-samples/karpenter-blueprints, copied unchanged into
//! `../shared/karpenter/blueprints-automode/`, placeholders filled here) is created in a cluster
//! as kubectl creates it, imported with `-generate-config-out`, applied and re-planned empty;
//! then the generated configuration alone is planned and applied against a second, empty Auto
//! Mode cluster, and every object it creates equals the original: the same spec, field by
//! field, with the same JSON types. Both clusters serve the NodeClass CRD rebuilt from the live
//! EKS 1.31 schema and the guide (`acceptance-tests/crds/eks-auto-mode/`) and Auto Mode's
//! NodePool defaults. A quantity in NodePool `limits` comes back as written: `cpu: 100` as a
//! number, `cpu: "16"` as a string (#50).

use std::collections::BTreeMap;

use acceptance_tests::kube::Cluster;
use acceptance_tests::moved::{create_manifests, yaml_fixture};
use acceptance_tests::roundtrip::{Import, import_with_generated_config, recreate, spec_differences};
use acceptance_tests::upstream;
use serde_json::{Value as Json, json};

/// The placeholders of the published manifests and what this test fills in.
const PLACEHOLDERS: &[(&str, &str)] = &[
    ("<<CLUSTER_NAME>>", "auto-mode-demo"),
    ("<<AZ>>", "us-east-1a"),
    ("<<KARPENTER_NODE_IAM_ROLE_NAME>>", "auto-mode-demo-nodes"),
];

/// Every document of every published manifest, placeholders filled, as the JSON kubectl sends.
fn blueprints() -> Vec<(String, Json)> {
    let dir = upstream("blueprints-automode");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut docs = Vec::new();
    for file in files {
        let mut text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (placeholder, value) in PLACEHOLDERS {
            text = text.replace(placeholder, value);
        }
        assert!(!text.contains("<<"), "{}: a placeholder is left", file.display());
        let source = file
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        for doc in text.split("\n---\n").filter(|d| !d.trim().is_empty()) {
            docs.push((source.clone(), yaml_fixture(doc)));
        }
    }
    docs
}

/// The Terraform type of a manifest's kind.
fn resource_type(manifest: &Json) -> &'static str {
    match (manifest["apiVersion"].as_str(), manifest["kind"].as_str()) {
        (Some("eks.amazonaws.com/v1"), Some("NodeClass")) => "karpenter_eks_node_class",
        (Some("karpenter.sh/v1"), Some("NodePool")) => "karpenter_node_pool",
        other => panic!("a published Auto Mode manifest of an unexpected kind: {other:?}"),
    }
}

fn name_of(manifest: &Json) -> &str {
    manifest["metadata"]["name"].as_str().expect("metadata.name")
}

/// The built-in class four of the pools name: EKS makes it on a cluster with the built-in node
/// pools; it is not part of the blueprints, so it is created as EKS would, and not imported.
fn built_in_class() -> Json {
    json!({
        "apiVersion": "eks.amazonaws.com/v1",
        "kind": "NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "role": "auto-mode-demo-cluster-node-role",
            "subnetSelectorTerms": [{"tags": {"kubernetes.io/role/internal-elb": "1"}}],
            "securityGroupSelectorTerms": [{"tags": {"kubernetes.io/cluster/auto-mode-demo": "owned"}}],
        }
    })
}

fn stored(cluster: &Cluster, manifest: &Json) -> Json {
    let name = name_of(manifest);
    let object = match manifest["kind"].as_str() {
        Some("NodeClass") => cluster.eks_node_class(name),
        _ => cluster.node_pool(name),
    };
    object.unwrap_or_else(|| panic!("{} {name} is not on the server", manifest["kind"]))
}

#[test]
fn the_published_auto_mode_manifests_import_plan_empty_and_recreate_equal() {
    let docs = blueprints();
    let classes = docs.iter().filter(|(_, m)| m["kind"] == "NodeClass").count();
    let pools = docs.len() - classes;
    assert_eq!((classes, pools), (8, 12), "the published set changed: {docs:#?}");
    // Object names are unique per kind, so they serve as resource names too.
    let mut seen = BTreeMap::new();
    for (file, m) in &docs {
        if let Some(other) = seen.insert((resource_type(m), name_of(m).to_string()), file.clone()) {
            panic!("{} {} is in {other} and {file}", m["kind"], name_of(m));
        }
    }

    // 1. As a new user has them: created with kubectl (server-side apply), defaults filled by
    // the API server.
    let original = Cluster::with_eks_auto_mode();
    let mut manifests: Vec<Json> = docs.iter().map(|(_, m)| m.clone()).collect();
    manifests.push(built_in_class());
    create_manifests(&original, manifests);

    // 2. Imported with generated configuration, which plans nothing but the imports, applies,
    // and then plans empty.
    let imports: Vec<Import> = docs
        .iter()
        .map(|(_, m)| Import::new(resource_type(m), name_of(m), name_of(m)))
        .collect();
    let generated = import_with_generated_config(&original, &imports, "");

    // 3. The generated configuration alone, against an empty Auto Mode cluster: it plans the
    // objects, applies, plans empty, and what it creates equals what kubectl created.
    let fresh = Cluster::with_eks_auto_mode();
    create_manifests(&fresh, vec![built_in_class()]);
    recreate(&fresh, &generated, "", docs.len());
    let mut problems = Vec::new();
    for (file, m) in &docs {
        let found = spec_differences(&stored(&original, m), &stored(&fresh, m));
        problems.extend(
            found
                .into_iter()
                .map(|d| format!("{file}: {} {}{d}", m["kind"], name_of(m))),
        );
    }
    assert!(problems.is_empty(), "{}\n{generated}", problems.join("\n"));
}
