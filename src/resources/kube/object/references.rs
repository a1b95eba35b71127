//! The node class a pool refers to: a NodePool's `template.spec.node_class_ref` (a legacy
//! Provisioner's `provider_ref`) naming a class that does not exist applies, and the pool then
//! launches nothing, silently. After each write the class is looked up; when it is still
//! missing a few seconds later (time for a class created beside it, without a reference that
//! would make Terraform order them), the apply warns on the reference, naming the class. A
//! class found once is not looked up again by the same provider process.

use std::time::Duration;

use tokio::time::Instant;

use super::{ClassRef, KubeObjectType, READ_TIMEOUT};
use crate::context::KarpenterContext;
use crate::k8s::{self, Kind};
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::get_str;
use crate::terraform::tfvalue::{AttributePath, Value};

/// How long a missing class is looked for before the warning.
const LOOK_FOR: Duration = Duration::from_secs(3);
const LOOK_EVERY: Duration = Duration::from_millis(500);

impl ClassRef {
    /// The kind and name a planned state refers to; `None` when it names a kind of another
    /// cloud provider (not looked up) or no name.
    fn target<'a>(&self, state: &'a Value) -> Option<(Kind, &'a str)> {
        let reference = self.path.iter().try_fold(state, |v, step| v.get(step))?;
        let name = get_str(reference, "name")?;
        let default = self.kinds.first()?;
        let group = get_str(reference, "group")
            .or_else(|| get_str(reference, "api_version").and_then(|a| a.split_once('/').map(|(g, _)| g)))
            .unwrap_or(default.group);
        let kind = get_str(reference, "kind").unwrap_or(default.kind);
        let target = self.kinds.iter().find(|k| k.group == group && k.kind == kind)?;
        Some((*target, name))
    }

    fn name_path(&self) -> AttributePath {
        self.path
            .iter()
            .fold(AttributePath::root(), |p, step| p.attr(*step))
            .attr("name")
    }
}

impl KubeObjectType {
    /// Warns when the node class the planned state refers to does not exist (after looking for
    /// it for a few seconds, never past `deadline`). Errors reading it are not reported: the
    /// check only adds a warning.
    pub(super) async fn check_class_reference(
        &self,
        ctx: &KarpenterContext,
        client: &kube::Client,
        planned: &Value,
        deadline: Instant,
        diags: &mut Diagnostics,
    ) {
        let Some(reference) = self.class_ref else { return };
        let Some((kind, class)) = reference.target(planned) else {
            return;
        };
        let seen_key = format!("{}/{class}", kind.kind);
        if ctx.classes_seen.lock().is_ok_and(|seen| seen.contains(&seen_key)) {
            return;
        }
        let give_up = (Instant::now() + LOOK_FOR).min(deadline);
        loop {
            let read_by = (Instant::now() + READ_TIMEOUT).min(deadline);
            match k8s::apply::get(client, &kind, None, class, read_by).await {
                Ok(None) => {}
                Ok(Some(_)) => {
                    if let Ok(mut seen) = ctx.classes_seen.lock() {
                        seen.insert(seen_key);
                    }
                    return;
                }
                Err(_) => return,
            }
            if Instant::now() + LOOK_EVERY >= give_up {
                break;
            }
            tokio::time::sleep(LOOK_EVERY).await;
        }
        let what = self.kind.kind;
        let name = get_str(planned, "name").unwrap_or_default();
        diags.warning_at(
            &reference.name_path(),
            format!("The {} {class:?} does not exist", kind.kind),
            format!(
                "The {what} {name} was applied, but it refers to the {} {class:?}, which is not in the cluster: Karpenter \
                 launches no node for this {what} until it exists (its NodeClassReady condition stays False). Create \
                 it, preferably in this configuration with a reference Terraform can order by (for example name = \
                 {}.<name>.name), or correct the name.",
                kind.kind,
                match kind.kind {
                    "AWSNodeTemplate" => "karpenter_node_template",
                    "NodeClass" => "karpenter_eks_node_class",
                    _ => "karpenter_ec2_node_class",
                }
            ),
        );
    }
}
