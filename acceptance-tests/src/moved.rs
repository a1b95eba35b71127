//! What the `moved {}` tests start from: state entries as the `kubectl_manifest` providers
//! (gavinbunney/kubectl, alekc/kubectl) and `kubernetes_manifest` (hashicorp/kubernetes) store
//! them (state format 4), a working directory where those providers are the stand-in, and
//! objects created in the cluster as kubectl creates them.

use serde_json::{Value as Json, json};

use crate::kube::Cluster;
use crate::{Workdir, legacy_standin_dir};

/// cty's type JSON for an arbitrary YAML/JSON value, as kubernetes_manifest types its manifest.
pub fn cty_type(v: &Json) -> Json {
    match v {
        Json::Object(m) => json!([
            "object",
            m.iter()
                .map(|(k, v)| (k.clone(), cty_type(v)))
                .collect::<serde_json::Map<_, _>>()
        ]),
        Json::Array(items) => json!(["tuple", items.iter().map(cty_type).collect::<Vec<_>>()]),
        Json::String(_) => json!("string"),
        Json::Number(_) => json!("number"),
        Json::Bool(_) => json!("bool"),
        Json::Null => json!("dynamic"),
    }
}

/// A kubectl_manifest state entry for an object of any kind (`api_version` as `group/version`).
pub fn kubectl_manifest_of(
    api_version: &str,
    kind: &str,
    name: &str,
    provider: &str,
    yaml: &str,
    object_name: &str,
) -> Json {
    let plural = plural_of(kind);
    json!({
        "mode": "managed",
        "type": "kubectl_manifest",
        "name": name,
        "provider": format!("provider[\"registry.terraform.io/{provider}\"]"),
        "instances": [{
            "schema_version": 1,
            "attributes": {
                "id": format!("/apis/{api_version}/{plural}/{object_name}"),
                "uid": "", "live_uid": "", "yaml_incluster": "x", "live_manifest_incluster": "x",
                "api_version": api_version, "kind": kind, "name": object_name, "namespace": null,
                "override_namespace": null, "yaml_body": yaml, "yaml_body_parsed": yaml,
                "sensitive_fields": null, "force_new": false, "server_side_apply": false, "force_conflicts": false,
                "apply_only": false, "ignore_fields": null, "wait": null, "wait_for_rollout": true, "validate_schema": true
            },
            "sensitive_attributes": []
        }]
    })
}

/// A kubernetes_manifest state entry (`manifest` and `object` as cty dynamic values).
pub fn kubernetes_manifest(name: &str, manifest: &Json) -> Json {
    let dynamic = json!({"value": manifest, "type": cty_type(manifest)});
    json!({
        "mode": "managed",
        "type": "kubernetes_manifest",
        "name": name,
        "provider": "provider[\"registry.terraform.io/hashicorp/kubernetes\"]",
        "instances": [{
            "schema_version": 1,
            "attributes": {"manifest": dynamic, "object": dynamic, "computed_fields": null, "timeouts": null},
            "sensitive_attributes": []
        }]
    })
}

/// A state file (format 4, as Terraform 1.5 wrote it) holding `resources`.
pub fn state(resources: Vec<Json>) -> String {
    json!({
        "version": 4,
        "terraform_version": "1.5.7",
        "serial": 7,
        "lineage": "3f8c0b6e-6a4c-4f59-9d3e-2b7f1c0d9a11",
        "outputs": {},
        "resources": resources,
        "check_results": null
    })
    .to_string()
}

/// A working directory where the kubectl and kubernetes providers are the stand-in.
pub fn workdir(config: &str) -> Workdir {
    let standin = legacy_standin_dir();
    Workdir::with_overrides(
        config,
        &[
            ("registry.terraform.io/gavinbunney/kubectl", &standin),
            ("registry.terraform.io/alekc/kubectl", &standin),
            ("registry.terraform.io/hashicorp/kubernetes", &standin),
        ],
    )
}

/// The lower-case plural resource name of a Karpenter kind.
pub fn plural_of(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if lower.ends_with("ss") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

/// Creates `manifests` with server-side apply under the field manager `kubectl`.
pub fn create_manifests(cluster: &Cluster, manifests: Vec<Json>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = cluster.server.client().await.expect("client");
        for m in manifests {
            let (group, version) = m["apiVersion"]
                .as_str()
                .and_then(|a| a.split_once('/'))
                .expect("apiVersion");
            let kind = m["kind"].as_str().expect("kind");
            let plural = plural_of(kind);
            let ar = kube::core::ApiResource::from_gvk_with_plural(
                &kube::core::GroupVersionKind::gvk(group, version, kind),
                &plural,
            );
            let api: kube::Api<kube::core::DynamicObject> = kube::Api::all_with(client.clone(), &ar);
            let name = m["metadata"]["name"].as_str().expect("name").to_string();
            api.patch(
                &name,
                &kube::api::PatchParams::apply("kubectl"),
                &kube::api::Patch::Apply(&m),
            )
            .await
            .expect("create");
        }
    });
}

/// A YAML fixture as JSON, read the way the provider reads a kubectl_manifest's yaml_body.
pub fn yaml_fixture(yaml: &str) -> Json {
    terraform_provider_karpenter::resources::kube::moves::source_manifest(
        "registry.terraform.io/gavinbunney/kubectl",
        "kubectl_manifest",
        json!({"yaml_body": yaml}).to_string().as_bytes(),
    )
    .expect("fixture YAML parses")
}
