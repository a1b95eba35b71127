//! Listing node and controller roles: one ListRoles page at a time, per-role calls only for
//! roles whose trust fits, and only while the sink wants more.

use async_trait::async_trait;

use super::identity::{ROLE_IDENTITY, role_identity};
use super::trust::{Trust, classify_trust};
use crate::aws::iam::{Iam, ListedRole};
use crate::context::KarpenterContext;
use crate::resources::aws::listing::arn_region_account;
use crate::terraform::framework::list::name_matches;
use crate::terraform::framework::values::get_str;
use crate::terraform::framework::{Diagnostics, ListRequest, ListSink};
use crate::terraform::tfvalue::Value;

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
pub trait RoleListing: Send + Sync {
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

pub fn unreadable(role: &str, e: &crate::aws::iam::IamError) -> Verdict {
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
pub async fn list_roles(
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

pub fn cannot_import(type_name: &str, role: &str, why: &str) -> Verdict {
    Verdict::Skip {
        summary: format!("IAM role {role} not listed"),
        detail: format!("It looks like a {type_name}, but importing it failed: {why}"),
    }
}
