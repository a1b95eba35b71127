//! The selector terms of an EC2NodeClass (subnets, security groups, capacity reservations, the
//! placement group) and the AMI alias format, with their per-term rules.

use crate::aws_names;
use crate::resources::kube::kind::rules;
use crate::resources::kube::kind::rules::values::{elements, has, invalid};
use crate::resources::kube::v1::ec2_node_class::ami_family;
use crate::terraform::framework::Attribute;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::tfvalue::{Type, Value};

pub(crate) fn tag_selector(what: &str) -> Attribute {
    Attribute::map_of("tags", Type::String)
        .describe(format!(
            "Select {what} that have all these tags (at most 20; `*` as a value matches any value)."
        ))
        .validate(rules::values::selector_tags())
}
/// A list that may be unset but not empty, because a CRD rule is false on an empty list
/// (`why` says which).
fn not_empty_when_set(why: &'static str) -> impl Validator {
    v::rule(
        "Omit it rather than setting an empty list: the API server refuses an empty list here.",
        move |value, path, diags| {
            if value.as_elements().is_some_and(<[Value]>::is_empty) {
                invalid(
                    diags,
                    path,
                    format!(
                        "An empty list is not accepted here: remove the attribute or give at least one term. {why}"
                    ),
                );
            }
        },
    )
}

pub(super) fn alias_format() -> impl Validator {
    v::check(
        "Must be `family@version` with family `al2`, `al2023`, `bottlerocket`, `windows2019`, `windows2022` or `windows2025`; Windows families only take `latest`.",
        |value| {
            let s = value.as_str()?;
            let Some((family, version)) = s.split_once('@') else {
                return Some(format!(
                    "{s:?} is not of the form family@version, e.g. \"al2023@latest\"."
                ));
            };
            if family.is_empty() || !family.chars().all(|c| c.is_ascii_alphanumeric()) || version.is_empty() {
                return Some(format!(
                    "{s:?} is not of the form family@version, e.g. \"al2023@latest\"."
                ));
            }
            if ami_family::of_alias(s).is_none() {
                return Some(format!(
                    "The alias family {family:?} is not supported: use al2, al2023, bottlerocket, windows2019, windows2022 or windows2025."
                ));
            }
            if family.starts_with("windows") && version != "latest" {
                return Some(format!(
                    "Windows aliases only support the version \"latest\": use \"{family}@latest\"."
                ));
            }
            None
        },
    )
}
pub(crate) fn subnet_selector_terms() -> Attribute {
    Attribute::list_of_objects(
        "subnet_selector_terms",
        vec![
            Attribute::string("id")
                .describe("A subnet ID, e.g. `subnet-0123456789abcdef0`; cannot be combined with `tags`.")
                .validate(v::matches(
                    "subnet-[0-9a-z]+",
                    "a subnet ID such as `subnet-0123456789abcdef0`",
                )),
            tag_selector("subnets"),
        ],
    )
    .required()
    .describe("How to find the subnets for the nodes (1 to 30 terms; each sets `id` or `tags`, not both).")
    .validate(v::count(1, 30))
    .validate(exclusive_terms("subnet", &["tags", "id"], &[("id", &["tags"])]))
}
pub(crate) fn security_group_selector_terms() -> Attribute {
    Attribute::list_of_objects(
        "security_group_selector_terms",
        vec![
            Attribute::string("id")
                .describe("A security group ID, e.g. `sg-0123456789abcdef0`; stands alone.")
                .validate(v::matches("sg-[0-9a-z]+", "a security group ID such as `sg-0123456789abcdef0`")),
            Attribute::string("name")
                .describe("A security group name (the group's `GroupName`); stands alone."),
            tag_selector("security groups"),
        ],
    )
    .required()
    .describe(
        "How to find the security groups for the nodes (1 to 30 terms; each sets exactly one of `id`, `name` or `tags`).",
    )
    .validate(v::count(1, 30))
    .validate(exclusive_terms(
        "security group",
        &["tags", "id", "name"],
        &[("id", &["tags", "name"]), ("name", &["tags", "id"])],
    ))
}
pub(super) fn capacity_reservation_selector_terms() -> Attribute {
    Attribute::list_of_objects(
        "capacity_reservation_selector_terms",
        vec![
            Attribute::string("id")
                .describe("A capacity reservation ID, e.g. `cr-0123456789abcdef0`; stands alone.")
                .validate(v::matches("^cr-[0-9a-z]+$", "a capacity reservation ID such as `cr-0123456789abcdef0`")),
            Attribute::string("owner_id")
                .wire_name("ownerID")
                .describe("Account ID (12 digits) that owns the reservations to select.")
                .validate(aws_names::aws_account_id_validator()),
            Attribute::string("instance_match_criteria")
                .describe("Select reservations by how they match instances: `open` or `targeted`.")
                .validate(v::one_of(&["open", "targeted"])),
            tag_selector("capacity reservations"),
        ],
    )
    .describe(
        "Which On-Demand Capacity Reservations or Capacity Blocks the nodes may use (at most 30 terms; each sets \
         `id` alone, or some of `tags`, `owner_id`, `instance_match_criteria`).",
    )
    .validate(v::count(0, 30))
    .validate(not_empty_when_set(
        "The CRD's rule that `id` stands alone is written as \"not all terms combine id with another field\", which is false for an empty list, so the API server refuses `[]`.",
    ))
    .validate(exclusive_terms(
        "capacity reservation",
        &["tags", "id", "instance_match_criteria"],
        &[("id", &["tags", "owner_id", "instance_match_criteria"])],
    ))
}
/// Selector-term rules (X1): each term sets at least one of `at_least_one`, and a field named in
/// `exclusive` cannot be combined with the fields listed with it.
///
/// Stricter than the CRD: its exclusivity rules are written as `!self.all(...)`, so the API server
/// only rejects a list in which *every* term combines the fields. Karpenter's documentation says a
/// term may not combine them at all, so we reject each offending term (as the CRD does for AMI
/// terms with `!self.exists(...)`).
pub(crate) fn exclusive_terms(
    what: &'static str,
    at_least_one: &'static [&'static str],
    exclusive: &'static [(&'static str, &'static [&'static str])],
) -> impl Validator {
    v::rule(
        format!(
            "Each term sets at least one of {}; {}.",
            at_least_one
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", "),
            exclusive
                .iter()
                .map(|(f, o)| format!("`{f}` cannot be combined with {}", o.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
                + " (as in the CRD, a list is refused for this only when every term combines them)"
        ),
        move |value, path, diags| {
            let terms = elements(value);
            for (i, t) in terms.iter().enumerate() {
                if at_least_one.iter().all(|f| has(t, f) == Some(false)) {
                    invalid(
                        diags,
                        &path.index(i),
                        format!(
                            "A {what} selector term must set at least one of {}.",
                            at_least_one.join(", ")
                        ),
                    );
                }
            }
            // The CRD states each exclusion as "not every term combines `lead` with another
            // field": one clean term makes the whole list acceptable to the API server (and
            // Karpenter then matches the combined term on all its fields), so only a list in
            // which every term clashes is refused, as the server refuses it.
            for (lead, others) in exclusive {
                let clashes: Vec<Vec<&str>> = terms
                    .iter()
                    .map(|t| {
                        if has(t, lead) != Some(true) {
                            return Vec::new();
                        }
                        others
                            .iter()
                            .copied()
                            .filter(|o| has(t, o) == Some(true))
                            .collect()
                    })
                    .collect();
                if clashes.is_empty() || clashes.iter().any(Vec::is_empty) {
                    continue;
                }
                for (i, clash) in clashes.iter().enumerate() {
                    invalid(
                        diags,
                        &path.index(i).attr(*lead),
                        format!(
                            "{lead} cannot be combined with {} in the same {what} selector term (the API server refuses a list in which every term does so): put {lead} in a term of its own.",
                            clash.join(", ")
                        ),
                    );
                }
            }
        },
    )
}
pub(crate) fn placement_group_selector() -> Attribute {
    Attribute::object(
        "placement_group_selector",
        vec![
            Attribute::string("name")
                .describe("Name of the placement group.")
                .validate(v::non_empty()),
            Attribute::string("id")
                .describe("ID of the placement group, e.g. `pg-0123456789abcdef0`.")
                .validate(v::matches(
                    "^pg-[0-9a-z]+$",
                    "a placement group ID such as `pg-0123456789abcdef0`",
                )),
        ],
    )
    .describe("The placement group to launch the nodes in, by `name` or by `id` (exactly one).")
    .validate(v::rule(
        "Set exactly one of `name` and `id`.",
        |value, path, diags| match (has(value, "name"), has(value, "id")) {
            (Some(true), Some(true)) => invalid(
                diags,
                &path.attr("id"),
                "Set either name or id of the placement group, not both.",
            ),
            (Some(false), Some(false)) => invalid(
                diags,
                path,
                "Select the placement group by name or by id (exactly one of them).",
            ),
            _ => {}
        },
    ))
}
