//! Sentences the kinds' descriptions share, so that every resource page says the same, and
//! truly, what a plan reads from the cluster: the served CRD of the kind
//! (`object/installed.rs`) for every kind, the NodeClaims of the drift preview
//! (`crate::k8s::plan_reads`) for the kinds whose changes replace nodes, and the health a
//! refresh reads (`resources/kube/health`).

/// What a plan of any kind reads from the cluster (appended to its description).
pub const PLAN_READS_CRD: &str = "A plan needs no cluster: while the provider's `kubernetes {}` settings are \
     unknown (a cluster made in the same apply) it reads nothing from it, and a cluster that does not answer \
     only leaves out the check that follows. Otherwise, besides refreshing what exists, a plan that creates or \
     changes one reads the cluster's CRD of this kind (once per kind and Terraform command, waiting at most 5 \
     seconds) and refuses, at plan, what the Karpenter installed in the cluster does not support. Nothing is \
     written until apply.";

/// What a plan of a NodePool or node class also reads (appended after [`PLAN_READS_CRD`]).
pub const PLAN_READS_NODE_CLAIMS: &str = "A plan that changes or destroys one also lists the cluster's NodeClaims \
     (once per Terraform command, waiting at most 20 seconds; for a node class change, its NodePools' \
     disruption budgets too) to say which running nodes the change replaces; when it cannot, a warning says \
     so and the plan goes on.";

/// What a plan says of the health of every kind (appended last).
pub const PLAN_READS_HEALTH: &str = "A plan that refreshes one also says, as a warning on the attribute to look at, \
     what Karpenter reports wrong with it: each status condition Karpenter wrote `False` for its current spec, with \
     Karpenter's reason and message (from the object the refresh read; no other request). Once per plan it also \
     says whether Karpenter runs at all (one read of its leader-election Lease). A plan with `-refresh=false` reads \
     and says nothing; `plan_health = false` in the provider block turns this off.";

/// What a plan says of a NodePool's NodeClaims (appended after [`PLAN_READS_HEALTH`]).
pub const PLAN_READS_POOL_HEALTH: &str = "For a refreshed NodePool, its NodeClaims that could not launch, or did not \
     join the cluster within Karpenter's 15 minutes, are summed up in one warning (from the plan's one NodeClaim \
     list).";
