//! Create never adopts: the one refusal every resource gives when a name it would create is
//! already taken, whoever took it.
//!
//! Neither the ownership tag on AWS parts nor this provider's field manager on Kubernetes objects
//! proves that a part belongs to *this* state: another Terraform state (staging beside prod, a
//! module copied into a second root) writes exactly the same marks, and so does an apply of this
//! configuration that was killed between "created" and "recorded". The provider cannot tell
//! those apart, and guessing wrong means a second state rewrites, and its destroy deletes, what
//! the first one manages. So a create that finds its name taken stops before changing anything,
//! says what it found and whose marks it carries, and gives the `import {}` block that takes the
//! part over on purpose. Nothing is recorded, so a destroy of the refusing configuration deletes
//! nothing of it.

use std::collections::BTreeMap;

use crate::aws::ownership;
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::AttributePath;

/// Whose marks an existing part carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marks {
    /// This provider's own (the ownership tag with this resource type, or our field manager).
    Ours,
    /// Someone else's; the text names them when it can (`kubectl-client-side-apply, helm`) and
    /// is empty when nothing tells.
    Others(String),
}

impl Marks {
    /// The marks of an AWS part with these tags: ours when it carries the ownership tag with
    /// `resource_type`'s value.
    pub fn of_tags(tags: &BTreeMap<String, String>, resource_type: &str) -> Marks {
        if ownership::is_owned_by(tags, resource_type) {
            Marks::Ours
        } else {
            Marks::Others(String::new())
        }
    }
}

/// How the ownership tag of `resource_type` is spelled in refusals ([`Taken::our_mark`]).
pub fn owner_tag_mark(resource_type: &str) -> String {
    format!("the tag `{}` = `{resource_type}`", ownership::OWNER_TAG_KEY)
}

/// A part found under a name the resource was about to create.
#[derive(Debug, Clone)]
pub struct Taken<'a> {
    /// The Terraform resource type that refuses (`karpenter_node_role`).
    pub resource_type: &'a str,
    /// What the part is, as a user calls it (`IAM role`, `SQS queue`, `NodePool`).
    pub what: &'a str,
    /// Its name, and what identifies it beyond the name (an ARN), if anything.
    pub name: &'a str,
    pub id_detail: Option<&'a str>,
    /// Where it lives (`in this account`, `in the cluster`).
    pub place: &'a str,
    /// How our marks are spelled for this kind of part, for the message
    /// (`the tag terraform-provider-karpenter/resource-type = karpenter_node_role`).
    pub our_mark: String,
    pub marks: Marks,
    /// The id that `terraform import` of the refusing resource takes to adopt it, when an
    /// import of this resource adopts it; `None` when the part is not importable through it.
    pub import_id: Option<&'a str>,
    /// What else the user can do (`choose another name`).
    pub otherwise: &'a str,
}

impl Taken<'_> {
    /// The refusal as an error on `path` (the attribute the name comes from).
    pub fn refuse(&self, path: &AttributePath, diags: &mut Diagnostics) {
        self.refuse_as(path, None, diags);
    }

    /// [`Taken::refuse`], naming the refusing resource's `address` in the import advice when it
    /// is known (Terraform does not send it: see [`crate::terraform::framework::address`]).
    pub fn refuse_as(&self, path: &AttributePath, address: Option<&str>, diags: &mut Diagnostics) {
        let mut what = self.what.chars();
        let summary = match what.next() {
            Some(first) => format!("{}{} already exists", first.to_uppercase(), what.as_str()),
            None => "Already exists".to_string(),
        };
        diags.error_at(path, summary, self.detail_as(address));
    }

    /// The text of the refusal.
    pub fn detail(&self) -> String {
        self.detail_as(None)
    }

    /// The text of the refusal, its import advice addressed to `address` when known.
    pub fn detail_as(&self, address: Option<&str>) -> String {
        let Taken {
            resource_type,
            what,
            name,
            place,
            ..
        } = self;
        let id = self.id_detail.map(|d| format!(" ({d})")).unwrap_or_default();
        let whose = match &self.marks {
            Marks::Ours => format!(
                "It carries this provider's mark ({}): an apply of this configuration that was interrupted before \
                 Terraform recorded it may have left it, or another Terraform state manages it.",
                self.our_mark
            ),
            Marks::Others(who) if who.is_empty() => {
                format!("It was not made by this provider (it lacks {}).", self.our_mark)
            }
            Marks::Others(who) => format!(
                "It was not made by this provider (it lacks {}); {who}.",
                self.our_mark
            ),
        };
        let take_over = match (self.import_id, address) {
            (Some(import_id), Some(address)) => format!(
                " If this configuration is meant to manage it, import it, which takes it over as it is:\n\n\
                 import {{\n  to = {address}\n  id = \"{import_id}\"\n}}\n\n\
                 (or `terraform import {address} {import_id}`), then plan to see what the apply would change."
            ),
            (Some(import_id), None) => format!(
                " If this configuration is meant to manage it, import it, which takes it over as it is:\n\n\
                 import {{\n  to = {resource_type}.<name>\n  id = \"{import_id}\"\n}}\n\n\
                 (or `terraform import {resource_type}.<name> {import_id}`, where <name> is this resource's name \
                 shown above), then plan to see what the apply would change."
            ),
            (None, _) => String::new(),
        };
        // "an SQS queue": the acronym is read letter by letter.
        let article = if what.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u'])
            || what.starts_with("SQS")
        {
            "An"
        } else {
            "A"
        };
        format!(
            "{article} {what} named {name:?}{id} already exists {place}. {whose} A create never takes over an existing \
             {what}: nothing of it was changed, and nothing was recorded, so destroying this configuration will not \
             delete it.{take_over} Otherwise {}.",
            self.otherwise
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(marks: Marks, import_id: Option<&str>) -> Taken<'_> {
        Taken {
            resource_type: "karpenter_node_role",
            what: "IAM role",
            name: "KarpenterNodeRole-demo",
            id_detail: Some("arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"),
            place: "in this account",
            our_mark: "the tag `t` = `karpenter_node_role`".into(),
            marks,
            import_id,
            otherwise: "choose another name",
        }
    }

    #[test]
    fn ours_says_it_may_be_an_interrupted_apply_or_another_state() {
        let text = taken(Marks::Ours, Some("KarpenterNodeRole-demo")).detail();
        assert!(text.contains("interrupted"), "{text}");
        assert!(text.contains("another Terraform state"), "{text}");
        assert!(
            text.contains(
                "import {\n  to = karpenter_node_role.<name>\n  id = \"KarpenterNodeRole-demo\"\n}"
            ),
            "{text}"
        );
        assert!(
            text.contains("terraform import karpenter_node_role.<name> KarpenterNodeRole-demo"),
            "{text}"
        );
        assert!(text.contains("will not delete it"), "{text}");
    }

    /// With the resource's address known, the import advice names it instead of `<name>`.
    #[test]
    fn the_import_advice_names_a_known_address() {
        let text =
            taken(Marks::Ours, Some("KarpenterNodeRole-demo")).detail_as(Some("karpenter_node_role.this"));
        assert!(
            text.contains("import {\n  to = karpenter_node_role.this\n  id = \"KarpenterNodeRole-demo\"\n}"),
            "{text}"
        );
        assert!(
            text.contains("terraform import karpenter_node_role.this KarpenterNodeRole-demo"),
            "{text}"
        );
        assert!(!text.contains("<name>"), "{text}");
    }

    #[test]
    fn others_name_who_made_it_and_lack_our_mark() {
        let text = taken(Marks::Others("managed by kubectl".into()), None).detail();
        assert!(text.contains("not made by this provider"), "{text}");
        assert!(text.contains("managed by kubectl"), "{text}");
        assert!(!text.contains("import {"), "{text}");
        assert!(text.ends_with("Otherwise choose another name."), "{text}");
    }
}
