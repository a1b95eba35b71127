//! Listing node and controller roles: one ListRoles page at a time, per-role calls only for
//! roles whose trust fits, and only while the sink wants more.

use super::*;

/// What a role listing concludes about one candidate.
#[derive(Debug)]
pub enum Verdict {
    /// Not one of this type's roles.
    NotOurs,
    /// One of them: its name for people, the cluster when known, and its state when asked for.
    Found {
        display_name: String,
        cluster: Option<String>,
        state: Option<Value>,
    },
    /// It looks like one but cannot be listed: a warning, and the listing goes on.
    Skip { summary: String, detail: String },
}

/// The type-specific part of a role listing.
#[async_trait]
trait RoleListing: Send + Sync {
    fn type_name(&self) -> &'static str;
    /// The cheap test, on what ListRoles returns: whether the trust policy is this type's.
    fn trust_fits(&self, trust: &Trust) -> bool;
    /// The closer look at a candidate whose trust fits (its tags, policies, an import).
    async fn examine(
        &self,
        ctx: &KarpenterContext,
        iam: &Iam,
        role: &ListedRole,
        trust: &Trust,
        include_state: bool,
    ) -> Verdict;
}

fn unreadable(role: &str, e: &crate::aws::iam::IamError) -> Verdict {
    Verdict::Skip {
        summary: format!("IAM role {role} not listed"),
        detail: format!(
            "Its trust policy fits, but the role could not be read ({e}), so whether it is Karpenter's is not known. \
             Allow the provider's credentials to read it, or leave it out with name_prefix."
        ),
    }
}

/// Pages through ListRoles, examines the roles whose trust fits, and writes the ones that are
/// this type's into `sink`, until it says to stop.
async fn list_roles(
    lister: &dyn RoleListing,
    ctx: &KarpenterContext,
    request: &ListRequest,
    sink: &ListSink,
) {
    let iam = match ctx.aws().await {
        Ok(aws) => Iam::new(aws.iam()),
        Err(d) => return sink.fail(d).await,
    };
    let config = &request.config;
    let cluster_filter = get_str(config, "cluster_name");
    let mut marker = None;
    loop {
        if !sink.wants_more() {
            return;
        }
        let page = match iam.list_roles_page(marker).await {
            Ok(p) => p,
            Err(e) => {
                return sink
                    .fail(Diagnostics::from_error(
                        format!("Could not list {} roles", lister.type_name()),
                        format!("{e}. Allow iam:ListRoles for the provider's AWS credentials."),
                    ))
                    .await;
            }
        };
        for role in &page.roles {
            if !name_matches(config, &role.name) {
                continue;
            }
            let Some(trust) = role.trust_policy.as_ref().map(classify_trust) else {
                continue;
            };
            if !lister.trust_fits(&trust) {
                continue;
            }
            if !sink.wants_more() {
                return;
            }
            let verdict = lister
                .examine(ctx, &iam, role, &trust, sink.include_state())
                .await;
            let more = match verdict {
                Verdict::NotOurs => true,
                Verdict::Skip { summary, detail } => sink.skip(summary, detail).await,
                Verdict::Found {
                    display_name,
                    cluster,
                    state,
                } => {
                    if cluster_filter.is_some_and(|want| cluster.as_deref() != Some(want)) {
                        continue;
                    }
                    let identity = match &state {
                        Some(s) => role_identity(s),
                        None => ROLE_IDENTITY.value([
                            ("name", Value::string(role.name.clone())),
                            (
                                "account_id",
                                arn_region_account(&role.arn)
                                    .map_or(Value::Null, |(_, account)| Value::string(account)),
                            ),
                        ]),
                    };
                    sink.found(identity, display_name, state, Diagnostics::new())
                        .await
                }
            };
            if !more {
                return;
            }
        }
        match page.next {
            Some(next) => marker = Some(next),
            None => return,
        }
    }
}

struct NodeRoles;

#[async_trait]
impl RoleListing for NodeRoles {
    fn type_name(&self) -> &'static str {
        NodeRole.type_name()
    }

    fn trust_fits(&self, trust: &Trust) -> bool {
        trust.ec2
    }

    async fn examine(
        &self,
        ctx: &KarpenterContext,
        iam: &Iam,
        role: &ListedRole,
        _trust: &Trust,
        include_state: bool,
    ) -> Verdict {
        let tags = match iam.role_tags(&role.name).await {
            Ok(t) => t,
            Err(e) if e.is_not_found() => return Verdict::NotOurs,
            Err(e) => return unreadable(&role.name, &e),
        };
        let named_cluster = cluster_from_name(&role.name, NODE_ROLE_NAME_PREFIX);
        if !ownership::is_owned_by(&tags, self.type_name()) {
            // Upstream's shape: its name, and the worker node policy attached.
            if named_cluster.is_none() {
                return Verdict::NotOurs;
            }
            let partition = role.arn.split(':').nth(1).unwrap_or("aws");
            let worker = format!("arn:{partition}:iam::aws:policy/AmazonEKSWorkerNodePolicy");
            match iam.attached_policies(&role.name).await {
                Ok(attached) if attached.contains(&worker) => {}
                Ok(_) => return Verdict::NotOurs,
                Err(e) if e.is_not_found() => return Verdict::NotOurs,
                Err(e) => return unreadable(&role.name, &e),
            }
        }
        let cluster = named_cluster
            .map(str::to_string)
            .or_else(|| cluster_from_tags(&tags));
        let state = if include_state {
            match imported_and_read(&NodeRole, ctx, &role.name).await {
                Ok(s) => Some(s),
                Err(why) => return cannot_import(self.type_name(), &role.name, &why),
            }
        } else {
            None
        };
        let display_name = match &cluster {
            Some(c) => format!("{} (cluster {c})", role.name),
            None => role.name.clone(),
        };
        Verdict::Found {
            display_name,
            cluster,
            state,
        }
    }
}

fn cannot_import(type_name: &str, role: &str, why: &str) -> Verdict {
    Verdict::Skip {
        summary: format!("IAM role {role} not listed"),
        detail: format!("It looks like a {type_name}, but importing it failed: {why}"),
    }
}

struct ControllerRoles;

#[async_trait]
impl RoleListing for ControllerRoles {
    fn type_name(&self) -> &'static str {
        ControllerRole.type_name()
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
        let imported = match ControllerRole.import(ctx, &role.name).await {
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
            match read_back(&ControllerRole, ctx, imported.clone()).await {
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

/// `list "karpenter_node_role" …`.
pub async fn list_node_roles(ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
    list_roles(&NodeRoles, ctx, request, sink).await;
}

/// `list "karpenter_controller_role" …`.
pub async fn list_controller_roles(ctx: &KarpenterContext, request: &ListRequest, sink: &ListSink) {
    list_roles(&ControllerRoles, ctx, request, sink).await;
}
