//! `karpenter_node_role`'s checks of a configuration on its own: the names, the mode's
//! settings, and ARNs in the role's partition.

use super::schema::validate_mode;
use crate::policy::arn;
use crate::resources::aws::iam_role;
use crate::terraform::framework::Diagnostics;
use crate::terraform::framework::values::get_str;
use crate::terraform::tfvalue::{AttributePath, Value};

pub(super) fn validate(config: &Value, diags: &mut Diagnostics) {
    iam_role::validate_names(config, diags);
    validate_mode(config, diags);
    if let Some(p) = get_str(config, "partition") {
        for attr in ["permissions_boundary"] {
            if let Some(a) = get_str(config, attr).and_then(|s| arn::Arn::parse(s).ok())
                && a.partition != p
            {
                diags.error_at(
                    &AttributePath::root().attr(attr),
                    "ARN in another partition",
                    format!(
                        "The ARN is in partition {:?} but the role is in {p:?}.",
                        a.partition
                    ),
                );
            }
        }
    }
}
