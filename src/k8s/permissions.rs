//! The Kubernetes permissions the provider uses: one table, written from the calls the code
//! makes, that every page listing permissions shows (docgen puts it between the
//! `<!-- generated: kubernetes-permissions -->` markers of the guides and the provider page,
//! and writes the least-privilege ClusterRole from it), and that the 403 message quotes. The
//! least-privilege tests run every resource, a `force_destroy` teardown and the "is Karpenter
//! running" check with a token limited to exactly this table.

/// One rule: verbs on resources of an API group, and why the provider needs them.
#[derive(Debug, Clone, Copy)]
pub struct Permission {
    /// `""` for the core group.
    pub group: &'static str,
    pub resources: &'static [&'static str],
    pub verbs: &'static [&'static str],
    pub why: &'static str,
}

/// What the provider writes with: server-side apply (`patch`; `create` when the object is new),
/// reads (`get`), waits (`list`, `watch`), deletes, and the merge patch that moves field
/// ownership of adopted objects (`patch`).
const WRITE: &[&str] = &["get", "list", "watch", "create", "patch", "delete"];

pub const PERMISSIONS: &[Permission] = &[
    Permission {
        group: "karpenter.sh",
        resources: &["nodepools", "nodeoverlays", "provisioners"],
        verbs: WRITE,
        why: "NodePool and NodeOverlay (v1), Provisioner (v1alpha5): written with server-side apply, read, listed, \
              deleted with a watch until the finalizers are gone; `force_destroy` removes Karpenter's finalizers \
              (patch)",
    },
    Permission {
        group: "karpenter.k8s.aws",
        resources: &["ec2nodeclasses", "awsnodetemplates"],
        verbs: WRITE,
        why: "EC2NodeClass (v1) and AWSNodeTemplate (v1alpha1), as above; a NodePool's apply also reads the \
              EC2NodeClass it refers to",
    },
    Permission {
        group: "eks.amazonaws.com",
        resources: &["nodeclasses"],
        verbs: WRITE,
        why: "EKS Auto Mode's NodeClass, as above (only on Auto Mode clusters); a NodePool's apply also reads \
              the NodeClass it refers to",
    },
    Permission {
        group: "autoscaling.x-k8s.io",
        resources: &["capacitybuffers"],
        verbs: WRITE,
        why: "CapacityBuffer (Karpenter v1.14 and later), the one namespaced kind",
    },
    Permission {
        group: "karpenter.sh",
        resources: &["nodeclaims"],
        verbs: &["get", "list", "patch", "delete"],
        why: "a plan lists them (once) to say which nodes a NodePool or node class change replaces, and which of a \
              refreshed pool's NodeClaims cannot launch or join (health; `plan_health`); a delete that waits names the \
              NodeClaims that hold a NodePool; `force_destroy` removes their finalizers (patch) and deletes them",
    },
    Permission {
        group: "",
        resources: &["nodes"],
        verbs: &["get", "list", "patch", "delete"],
        why: "`force_destroy` only: removes Karpenter's finalizers from the Nodes of the pool, or of the class's \
              NodeClaims, it tears down (patch) and deletes them",
    },
    Permission {
        group: "coordination.k8s.io",
        resources: &["leases"],
        verbs: &["list"],
        why: "whether Karpenter runs (its leader-election Lease is held and renewed): once per plan that refreshes \
              Karpenter's objects, to say so when it does not (health; `plan_health`); after writing an \
              EC2NodeClass without `wait_for_ready`, to decide whether to wait for Karpenter's `ValidationSucceeded` \
              verdict on it; and while a delete waits on Karpenter's finalizers. Without it the verdict is silently \
              not waited for (an EC2NodeClass Karpenter refuses applies without an error, and launches no node), \
              and a destroy after Karpenter is gone waits its whole `timeouts.delete` (with a warning) instead of \
              failing within about half a minute",
    },
    Permission {
        group: "apiextensions.k8s.io",
        resources: &["customresourcedefinitions"],
        verbs: &["get", "list", "watch"],
        why: "waits until Karpenter's CRDs are established before the first write, and reads their schema; tells \
              an EKS Auto Mode cluster by its `nodeclasses.eks.amazonaws.com` CRD",
    },
];

fn group_name(group: &str) -> &str {
    if group.is_empty() { "\"\" (core)" } else { group }
}

/// The table as Markdown.
pub fn markdown_table() -> String {
    let mut out = String::from("| API group | Resources | Verbs | Why |\n|---|---|---|---|\n");
    for p in PERMISSIONS {
        let code = |items: &[&str]| {
            items
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            group_name(p.group),
            code(p.resources),
            code(p.verbs),
            p.why
        ));
    }
    out
}

/// The ClusterRole (YAML) that grants exactly the table.
pub fn cluster_role_yaml(name: &str) -> String {
    let list = |items: &[&str]| {
        items
            .iter()
            .map(|i| format!("\"{i}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {name}\nrules:\n"
    );
    for p in PERMISSIONS {
        out.push_str(&format!(
            "  - apiGroups: [\"{}\"]\n    resources: [{}]\n    verbs: [{}]\n",
            p.group,
            list(p.resources),
            list(p.verbs)
        ));
    }
    out
}

/// What a 403 on `resource` (`nodepools.karpenter.sh`) says the credentials need: the verbs of
/// its rule, and the CRD rule.
pub fn needed_for(resource: &str) -> String {
    let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
    let rule = PERMISSIONS
        .iter()
        .find(|p| p.group == group && p.resources.contains(&plural));
    let crd = PERMISSIONS
        .iter()
        .find(|p| p.resources.contains(&"customresourcedefinitions"));
    let verbs = |p: &Permission| p.verbs.join(", ");
    match (rule, crd) {
        (Some(r), Some(c)) => format!(
            "{} on {resource} and {} on customresourcedefinitions",
            verbs(r),
            verbs(c)
        ),
        _ => "the permissions of the least-privilege ClusterRole".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_role_and_the_table_say_the_same() {
        let yaml = cluster_role_yaml("terraform-karpenter");
        let table = markdown_table();
        for p in PERMISSIONS {
            for r in p.resources {
                assert!(yaml.contains(&format!("\"{r}\"")), "{r}");
                assert!(table.contains(&format!("`{r}`")), "{r}");
            }
        }
        assert_eq!(
            needed_for("nodepools.karpenter.sh"),
            "get, list, watch, create, patch, delete on nodepools.karpenter.sh and get, list, watch on \
             customresourcedefinitions"
        );
    }
}
