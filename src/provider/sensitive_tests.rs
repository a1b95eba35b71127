//! Which attributes are secret: a walk over the provider schema and every resource and data
//! source schema, checked against a named list. A new secret attribute without `.sensitive()`,
//! or a new sensitive attribute, fails here until this list is edited on purpose.

use std::collections::BTreeSet;

use crate::provider::schema_walk::for_each_attribute;

/// Every attribute that must be marked sensitive, by dotted path.
const SENSITIVE: &[&str] = &[
    "provider.aws.access_key",
    "provider.aws.assume_role_with_web_identity.web_identity_token",
    "provider.aws.secret_key",
    "provider.aws.token",
    "provider.kubernetes.client_key",
    "provider.kubernetes.exec.env",
    "provider.kubernetes.token",
];

/// Attributes whose names look like secrets but are not, with the reason.
const NOT_SECRET: &[(&str, &str)] = &[
    (
        "karpenter_ec2_node_class.kubelet.tls_private_key_file",
        "the path of the key file on the node, not the key",
    ),
    (
        "data.karpenter_ec2_node_class.kubelet.tls_private_key_file",
        "the same path, read back",
    ),
    (
        "karpenter_ec2_node_class.kubelet.rotate_certificates",
        "a switch for certificate rotation, no certificate",
    ),
    (
        "data.karpenter_ec2_node_class.kubelet.rotate_certificates",
        "the same switch, read back",
    ),
    (
        "karpenter_ec2_node_class.kubelet.config_map_and_secret_change_detection_strategy",
        "the name of a strategy (Get, Cache, Watch), no secret",
    ),
    (
        "data.karpenter_ec2_node_class.kubelet.config_map_and_secret_change_detection_strategy",
        "the same strategy name, read back",
    ),
    (
        "karpenter_ec2_node_class.kubelet.image_pull_credentials_verification_policy",
        "the name of a policy (NeverVerify, AlwaysVerify, …), no credential",
    ),
    (
        "data.karpenter_ec2_node_class.kubelet.image_pull_credentials_verification_policy",
        "the same policy name, read back",
    ),
    (
        "karpenter_eks_node_class.certificate_bundles",
        "certificate authorities the nodes trust: public certificates, no keys",
    ),
    (
        "data.karpenter_eks_node_class.certificate_bundles",
        "the same public CA certificates, read back",
    ),
    (
        "provider.aws.shared_credentials_files",
        "paths of the shared credentials files, not their contents",
    ),
    (
        "provider.aws.assume_role_with_web_identity.web_identity_token_file",
        "the path of the token file, not the token",
    ),
    (
        "provider.kubernetes.client_certificate",
        "a certificate is public; its key is client_key",
    ),
    (
        "provider.kubernetes.cluster_ca_certificate",
        "the CA certificate is public",
    ),
    (
        "karpenter_ec2_node_class.metadata_options.http_tokens",
        "the IMDSv2 setting (required/optional), not a token",
    ),
    (
        "data.karpenter_ec2_node_class.metadata_options.http_tokens",
        "the IMDSv2 setting (required/optional), not a token",
    ),
    (
        "karpenter_node_template.metadata_options.http_tokens",
        "the IMDSv2 setting (required/optional), not a token",
    ),
];

/// Names that suggest a credential.
fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "token",
        "secret",
        "password",
        "passphrase",
        "private",
        "credential",
        "certificate",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n.ends_with("_key")
        || n == "env"
}

/// (path, sensitive) for every attribute the provider declares anywhere.
fn all_attributes() -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for_each_attribute(|path, attribute| out.push((path.to_string(), attribute.sensitive)));
    out
}

#[test]
fn exactly_the_named_secrets_are_sensitive() {
    let all = all_attributes();
    assert!(all.len() > 100, "the walk found only {} attributes", all.len());
    let sensitive: BTreeSet<&str> = all.iter().filter(|(_, s)| *s).map(|(p, _)| p.as_str()).collect();
    let expected: BTreeSet<&str> = SENSITIVE.iter().copied().collect();
    assert_eq!(
        sensitive, expected,
        "sensitive attributes differ from the named list"
    );
}

#[test]
fn every_secret_looking_attribute_is_sensitive_or_explained() {
    let all = all_attributes();
    for path in SENSITIVE.iter().chain(NOT_SECRET.iter().map(|(p, _)| p)) {
        assert!(
            all.iter().any(|(p, _)| p == path),
            "{path} is not in any schema any more"
        );
    }
    let unexplained: Vec<&str> = all
        .iter()
        .filter(|(p, s)| {
            let name = p.rsplit('.').next().unwrap_or("");
            looks_secret(name) && !s && !NOT_SECRET.iter().any(|(n, _)| n == p)
        })
        .map(|(p, _)| p.as_str())
        .collect();
    assert!(
        unexplained.is_empty(),
        "attributes that look like secrets but are not sensitive (mark them, or add them to NOT_SECRET with a reason): {unexplained:?}"
    );
}
