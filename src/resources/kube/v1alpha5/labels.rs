//! The label rules of Karpenter ≤ 0.32 that both legacy kinds apply: the restricted label
//! domains, the well-known labels of that era and the values it knew.

/// The label Karpenter ≤ 0.32 put on every node with the name of its Provisioner.
pub const PROVISIONER_NAME_LABEL: &str = "karpenter.sh/provisioner-name";
/// Values Karpenter ≤ 0.32 knew for `karpenter.sh/capacity-type` (`reserved` came with v1).
pub const CAPACITY_TYPES: &[&str] = &["spot", "on-demand"];

/// Label domains whose keys a Provisioner may not use, unless the key is well known.
const RESTRICTED_DOMAINS: &[&str] = &["kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws"];
/// Domains inside the restricted ones that are open to users.
const DOMAIN_EXCEPTIONS: &[&str] = &[
    "kops.k8s.io",
    "node.kubernetes.io",
    "node-restriction.kubernetes.io",
];

/// Label keys Karpenter ≤ 0.32 understood (core, their legacy beta spellings, and the AWS
/// provider's instance labels). `karpenter.k8s.aws/instance-ami-id` is included to stay lenient:
/// older releases knew it and it is not certain v0.32 rejected it.
pub const WELL_KNOWN_LABELS: &[&str] = &[
    "karpenter.sh/capacity-type",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "node.kubernetes.io/windows-build",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "beta.kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-pods",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-ami-id",
];

/// Why a label key may not be used in a Provisioner's labels or requirements, if it may not:
/// `karpenter.sh/provisioner-name` is Karpenter's, `kubernetes.io/hostname` is per node, and the
/// restricted domains (`kubernetes.io`, `k8s.io`, `karpenter.sh`, `karpenter.k8s.aws` and their
/// subdomains, except `node.kubernetes.io`, `node-restriction.kubernetes.io`, `kops.k8s.io`)
/// take only the well-known keys.
pub fn restricted_label_problem(key: &str) -> Option<String> {
    if key == PROVISIONER_NAME_LABEL {
        return Some(format!(
            "the label {PROVISIONER_NAME_LABEL:?} is set by Karpenter (the provisioner's name) and cannot be used here"
        ));
    }
    if key == "kubernetes.io/hostname" {
        return Some("the label \"kubernetes.io/hostname\" is restricted and cannot be used here".into());
    }
    if WELL_KNOWN_LABELS.contains(&key) {
        return None;
    }
    let (domain, _) = key.split_once('/')?;
    if DOMAIN_EXCEPTIONS.iter().any(|d| domain.ends_with(d)) {
        return None;
    }
    RESTRICTED_DOMAINS
        .iter()
        .find(|d| domain.ends_with(*d))
        .map(|d| {
            format!(
                "the label domain {d:?} is restricted: use a well-known label ({}) or a key outside the domains {}",
                WELL_KNOWN_LABELS.join(", "),
                RESTRICTED_DOMAINS.join(", ")
            )
        })
}

/// Values Karpenter ≤ 0.32 accepted for a well-known key with a fixed value set.
pub fn well_known_values(key: &str) -> Option<&'static [&'static str]> {
    (key == "karpenter.sh/capacity-type").then_some(CAPACITY_TYPES)
}

#[cfg(test)]
mod tests {
    use super::restricted_label_problem;

    #[test]
    fn restricted_keys_of_the_era() {
        for allowed in [
            "karpenter.sh/capacity-type",
            "karpenter.k8s.aws/instance-family",
            "karpenter.k8s.aws/instance-pods",
            "topology.kubernetes.io/zone",
            "node.kubernetes.io/instance-type",
            "node.kubernetes.io/lifecycle",
            "sub.node-restriction.kubernetes.io/x",
            "kops.k8s.io/instancegroup",
            "beta.kubernetes.io/arch",
            "topology.k8s.aws/zone-id",
            "example.com/team",
            "team",
        ] {
            assert_eq!(restricted_label_problem(allowed), None, "{allowed}");
        }
        for restricted in [
            "karpenter.sh/provisioner-name",
            "kubernetes.io/hostname",
            "karpenter.sh/anything",
            "karpenter.k8s.aws/nitro",
            "kubernetes.io/team",
            "example.k8s.io/x",
            "sub.karpenter.sh/x",
        ] {
            assert!(restricted_label_problem(restricted).is_some(), "{restricted}");
        }
    }
}
