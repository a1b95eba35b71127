//! Listing `karpenter_controller_role`: its list schema, and which roles are this type's, on the role
//! listing both role types share ([`crate::resources::aws::iam_role`]).

use std::sync::LazyLock;

use async_trait::async_trait;

use crate::aws::iam::{Iam, ListedRole};
use crate::aws::ownership;
use crate::context::KarpenterContext;
use crate::resources::aws::iam_role::{
    RoleListing, Trust, Verdict, cannot_import, cluster_from_name, list_roles, unreadable,
};
use crate::resources::aws::listing::{cluster_name_filter, read_back, text};
use crate::terraform::framework::list::name_prefix_attribute;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{ListRequest, ListSink, Resource, Schema};

/// Upstream's controller role name: `KarpenterControllerRole-<cluster>`.
pub const CONTROLLER_ROLE_NAME_PREFIX: &str = "KarpenterControllerRole-";

pub static CONTROLLER_ROLE_LIST: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "Finds the Karpenter controller roles in the account of the provider configuration: IAM roles trusted \
         through IRSA or EKS Pod Identity that carry this provider's ownership tag, are named \
         `KarpenterControllerRole-<cluster>`, or trust a Karpenter service account \
         (`system:serviceaccount:<namespace>:karpenter`), and whose permissions are in the shape \
         `karpenter_controller_role` manages (one that is not is reported as a warning).",
        vec![
            name_prefix_attribute("roles"),
            cluster_name_filter("the cluster the role's permissions are scoped to (its `cluster_name`)."),
        ],
    )
});

/// The role listing of `karpenter_controller_role`, importing through the resource type.
struct ControllerRoles<'a, R>(&'a R);

#[async_trait]
impl<R: Resource<KarpenterContext>> RoleListing for ControllerRoles<'_, R> {
    fn type_name(&self) -> &'static str {
        self.0.type_name()
    }

    fn trust_fits(&self, trust: &Trust) -> bool {
        trust.pod_identity || !trust.service_accounts.is_empty()
    }

    async fn examine(
        &self,
        ctx: &KarpenterContext,
        iam: &Iam,
        role: &ListedRole,
        trust: &Trust,
        include_state: bool,
    ) -> Verdict {
        let karpenter_shaped = cluster_from_name(&role.name, CONTROLLER_ROLE_NAME_PREFIX).is_some()
            || trust.admits_karpenter_service_account();
        if !karpenter_shaped {
            match iam.role_tags(&role.name).await {
                Ok(tags) if ownership::is_owned_by(&tags, self.type_name()) => {}
                Ok(_) => return Verdict::NotOurs,
                Err(e) if e.is_not_found() => return Verdict::NotOurs,
                Err(e) => return unreadable(&role.name, &e),
            }
        }
        // Its permissions must be in the shape the resource manages: the import reads them
        // (and the cluster they are scoped to).
        let imported = match self.0.import(ctx, &role.name).await {
            Ok(s) => s,
            Err(d) => {
                return Verdict::Skip {
                    summary: format!("IAM role {} not listed", role.name),
                    detail: format!(
                        "It looks like a Karpenter controller role, but karpenter_controller_role cannot manage it: {}. \
                         Keep managing it as it is managed now, or replace it with a karpenter_controller_role.",
                        text(&d)
                    ),
                };
            }
        };
        let state = if include_state {
            match read_back(self.0, ctx, imported.clone()).await {
                Ok(s) => Some(s),
                Err(why) => return cannot_import(self.type_name(), &role.name, &why),
            }
        } else {
            None
        };
        let described = state.as_ref().unwrap_or(&imported);
        let cluster = get_str(described, "cluster_name").map(str::to_string);
        let display_name = match (&cluster, get_str(described, "region")) {
            (Some(c), Some(r)) => format!("{} (cluster {c}, {r})", role.name),
            (Some(c), None) => format!("{} (cluster {c})", role.name),
            _ => role.name.clone(),
        };
        Verdict::Found {
            display_name,
            cluster,
            state,
        }
    }
}

/// `list "karpenter_controller_role" …`, importing each role found with `resource`.
pub async fn list_controller_roles<R: Resource<KarpenterContext>>(
    resource: &R,
    ctx: &KarpenterContext,
    request: &ListRequest,
    sink: &ListSink,
) {
    list_roles(&ControllerRoles(resource), ctx, request, sink).await;
}
