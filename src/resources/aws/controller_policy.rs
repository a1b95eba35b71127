//! Data source `karpenter_controller_policy`: the Karpenter controller's IAM policy for one
//! cluster, rendered offline (no AWS call) from the cluster name, region, account, partition,
//! node role and interruption queue, as the Karpenter release `karpenter_version` names
//! publishes it. Also that attribute, which `karpenter_controller_role` shares.

use crate::aws_names;
use std::sync::LazyLock;

use async_trait::async_trait;

use crate::aws_names::PARTITIONS;
use crate::context::{KarpenterContext, ProviderDefault};
use crate::policy::arn::{self, Arn};
use crate::policy::controller::{ControllerPolicyInputs, policy_document, policy_groups};
use crate::policy::releases::{self, RELEASES};
use crate::policy::{PolicyDocument, Statement};
use crate::terraform::framework::validate as v;
use crate::terraform::framework::values::{get_str, object, opt_string, string_list};
use crate::terraform::framework::{Attribute, DataSource, Diagnostics, Schema};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

pub struct ControllerPolicy;

/// `karpenter_version`, the Karpenter release whose reference policy is rendered; `unset` says
/// what leaving it out means for the type.
pub fn karpenter_version_attribute(unset: &str) -> Attribute {
    let newest = releases::newest().version;
    let first = RELEASES.first().map_or(newest, |r| r.version);
    Attribute::string("karpenter_version")
        .optional_computed()
        .describe(format!(
            "The Karpenter release whose controller policy is rendered: the statements of that release's \
             getting-started CloudFormation reference, grouped into managed policies as it groups them \
             (one policy up to v1.8, `Controller`; from v1.9 one per concern). `\"{newest}\"`, `\"{bare}\"` and \
             `\"{newest}.1\"` all name {newest}: a patch release has its minor's policy. The provider knows \
             {first} to {newest}; set the version of the Karpenter you run (v1.15 adds `ec2:RebootInstances`, \
             which node repair's reboot uses). {unset}",
            bare = newest.trim_start_matches('v'),
        ))
        .validate(v::check(
            format!(
                "Must be a Karpenter release this provider knows the controller policy of ({first} to {newest}), \
                 written `v<major>.<minor>`, optionally with the patch."
            ),
            |value| {
                releases::release(value.as_str()?)
                    .err()
                    .map(|e| format!("karpenter_version: {e}"))
            },
        ))
}

static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "Renders the IAM policy the Karpenter v1 controller needs, scoped to one cluster, as JSON. \
         The statements are those of Karpenter's getting-started reference of the release \
         `karpenter_version` names (default: the newest the provider knows): EC2 writes only on \
         resources tagged for this cluster and a node pool, instance-profile writes only on profiles \
         tagged for this cluster, region and a node class, `iam:PassRole` only for the node role, SQS \
         only on the interruption queue. Nothing is sent to AWS: use `json` with `aws_iam_role_policy`, \
         or each entry of `documents` as its own managed policy (from v1.9, each fits IAM's \
         6,144-character limit).",
        vec![
            Attribute::string("cluster_name")
                .required()
                .describe("Name of the EKS cluster the controller manages.")
                .validate(aws_names::eks_cluster_name_validator()),
            Attribute::string("region")
                .optional_computed()
                .describe("AWS region of the cluster, e.g. `us-east-1`. Defaults to the provider's `aws { region }` (which falls back to `AWS_REGION`, then `AWS_DEFAULT_REGION`), as hashicorp/aws data sources do.")
                .validate(aws_names::aws_region_validator()),
            Attribute::string("account_id")
                .optional_computed()
                .describe("AWS account ID (12 digits) of the cluster. Defaults to the account of `node_role_arn` (the controller may only pass a role of its own account).")
                .validate(aws_names::aws_account_id_validator()),
            Attribute::string("partition")
                .optional_computed()
                .describe("AWS partition. Derived from `region` when unset (`cn-*` → `aws-cn`, `us-gov-*` → `aws-us-gov`, `us-iso-*` → `aws-iso`, `us-isob-*` → `aws-iso-b`, `eu-isoe-*` → `aws-iso-e`, `us-isof-*` → `aws-iso-f`, `eusc-*` → `aws-eusc`, else `aws`).")
                .validate(v::one_of(PARTITIONS)),
            Attribute::string("node_role_arn")
                .required()
                .describe("ARN of the IAM role Karpenter's nodes use; the controller may pass only this role to EC2.")
                .validate(arn::role_arn_validator()),
            Attribute::string("interruption_queue_arn")
                .optional()
                .describe("ARN of the SQS interruption queue. When unset, the interruption statement is left out.")
                .validate(arn::queue_arn_validator()),
            karpenter_version_attribute(&format!(
                "Unset: the newest, {} (`karpenter_version` then says which). A data source keeps \
                 nothing between runs, so unset it follows the provider: a provider that knows a newer \
                 release renders that one, and a policy made from it changes with the upgrade. Set it to \
                 keep the policy where it is.",
                releases::newest().version
            )),
            Attribute::string("json").computed().describe("The whole policy document, as compact JSON."),
            Attribute::map_of("documents", Type::String).computed().describe(
                "The same statements split into the upstream reference's managed policies, one policy document \
                 each: from v1.9 `NodeLifecycle`, `IAMIntegration`, `EKSIntegration`, `Interruption`, \
                 `ResourceDiscovery` (and `ZonalShift` from v1.12); up to v1.8 the one policy `Controller`.",
            ),
            Attribute::list_of_objects(
                "statements",
                vec![
                    Attribute::string("sid").computed().describe("Statement ID."),
                    Attribute::string("effect").computed().describe("`Allow` or `Deny`."),
                    Attribute::list_of("actions", Type::String).computed().describe("IAM actions."),
                    Attribute::list_of("resources", Type::String).computed().describe("Resource ARNs or `*`."),
                    Attribute::list_of_objects(
                        "conditions",
                        vec![
                            Attribute::string("test").computed().describe("Condition operator, e.g. `StringEquals`."),
                            Attribute::string("variable").computed().describe("Condition key."),
                            Attribute::list_of("values", Type::String).computed().describe("Values matched."),
                        ],
                    )
                    .computed()
                    .describe("Conditions, one per operator and key."),
                ],
            )
            .computed()
            .describe("The statements as structured data."),
        ],
    )
});

/// The partition the configuration asks for: explicit, or derived from the region.
fn partition(config: &Value) -> Option<String> {
    get_str(config, "partition")
        .map(str::to_string)
        .or_else(|| get_str(config, "region").map(|r| aws_names::partition_of_region(r).to_string()))
}

fn statement_value(s: &Statement) -> Value {
    object([
        ("sid", Value::string(s.sid)),
        ("effect", Value::string(s.effect)),
        ("actions", string_list(&s.actions)),
        ("resources", string_list(&s.resources)),
        (
            "conditions",
            Value::List(
                s.conditions
                    .iter()
                    .map(|c| {
                        object([
                            ("test", Value::string(c.test)),
                            ("variable", Value::string(c.variable.clone())),
                            ("values", string_list(&c.values)),
                        ])
                    })
                    .collect(),
            ),
        ),
    ])
}

/// `config` with `region` and `account_id` filled in from their defaults: the provider's
/// region and the node role's account.
fn with_defaults(ctx: &KarpenterContext, config: &Value) -> Result<Value, Diagnostics> {
    let mut effective = config.clone();
    let Value::Object(fields) = &mut effective else {
        return Ok(effective);
    };
    let path = AttributePath::root().attr("region");
    if get_str(config, "region").is_none() {
        match ctx.default_region() {
            ProviderDefault::Known(r) => {
                fields.insert("region".into(), Value::string(r));
            }
            ProviderDefault::Unknown => {
                let mut d = Diagnostics::new();
                d.error_at(
                    &path,
                    "Region not known yet",
                    "region is not set and the provider's aws { region } is not known until apply, so the policy \
                     cannot be rendered now. Set region here from a value known at plan time.",
                );
                return Err(d);
            }
            ProviderDefault::Unset => {
                let mut d = Diagnostics::new();
                d.error_at(
                    &path,
                    "No region",
                    "region is not set and the provider has no region either. Set region = \"...\" here, or region \
                     in the provider's aws {} block (or AWS_REGION in its environment).",
                );
                return Err(d);
            }
        }
    }
    if get_str(config, "account_id").is_none()
        && let Some(Ok(role)) = get_str(config, "node_role_arn").map(Arn::parse_role)
    {
        fields.insert("account_id".into(), Value::string(role.account));
    }
    Ok(effective)
}

#[async_trait]
impl DataSource<KarpenterContext> for ControllerPolicy {
    fn type_name(&self) -> &'static str {
        "karpenter_controller_policy"
    }

    fn schema(&self) -> &Schema {
        &SCHEMA
    }

    /// The ARNs must agree with the partition, account and region the policy is for.
    fn validate(&self, config: &Value, diags: &mut Diagnostics) {
        let root = AttributePath::root();
        let partition = partition(config);
        let account = get_str(config, "account_id");
        let region = get_str(config, "region");
        if let Some(Ok(role)) = get_str(config, "node_role_arn").map(Arn::parse_role) {
            let path = root.attr("node_role_arn");
            if let Some(p) = &partition
                && role.partition != *p
            {
                diags.error_at(&path, "Node role in another partition", format!("The role is in partition {:?} but the policy is for {p:?}; a role ARN of partition {p:?} is expected.", role.partition));
            }
            if let Some(a) = account
                && role.account != a
            {
                diags.error_at(&path, "Node role in another account", format!("The role is in account {} but account_id is {a}; EC2 can only be passed a role of the cluster's own account.", role.account));
            }
        }
        if let Some(Ok(queue)) = get_str(config, "interruption_queue_arn").map(Arn::parse_queue) {
            let path = root.attr("interruption_queue_arn");
            if let Some(p) = &partition
                && queue.partition != *p
            {
                diags.error_at(
                    &path,
                    "Queue in another partition",
                    format!(
                        "The queue is in partition {:?} but the policy is for {p:?}.",
                        queue.partition
                    ),
                );
            }
            if let Some(r) = region
                && queue.region != r
            {
                diags.error_at(&path, "Queue in another region", format!("The queue is in {} but the cluster is in {r}; Karpenter reads its interruption queue in its own region.", queue.region));
            }
            if let Some(a) = account
                && queue.account != a
            {
                diags.error_at(
                    &path,
                    "Queue in another account",
                    format!("The queue is in account {} but account_id is {a}.", queue.account),
                );
            }
        }
        if let (Some(p), Some(r)) = (get_str(config, "partition"), region)
            && aws_names::partition_of_region(r) != p
        {
            diags.error_at(
                &root.attr("partition"),
                "Partition does not match the region",
                format!(
                    "Region {r} is in partition {:?}, not {p:?}. Leave partition unset to derive it.",
                    aws_names::partition_of_region(r)
                ),
            );
        }
    }

    async fn read(&self, ctx: &KarpenterContext, config: &Value) -> Result<Value, Diagnostics> {
        let config = &with_defaults(ctx, config)?;
        // the defaults are checked like configured values (e.g. the queue's region)
        let mut d = Diagnostics::new();
        DataSource::<KarpenterContext>::validate(self, config, &mut d);
        if d.has_errors() {
            return Err(d);
        }
        let required = |name: &str| {
            get_str(config, name).map(str::to_string).ok_or_else(|| {
                let mut d = Diagnostics::new();
                d.error_at(
                    &AttributePath::root().attr(name),
                    "Missing value",
                    format!("{name} must be known to render the policy."),
                );
                d
            })
        };
        let version = get_str(config, "karpenter_version").unwrap_or(releases::newest().version);
        let release = releases::release(version).map_err(|e| {
            let mut d = Diagnostics::new();
            d.error_at(
                &AttributePath::root().attr("karpenter_version"),
                "Unknown Karpenter version",
                e.to_string(),
            );
            d
        })?;
        let inputs = ControllerPolicyInputs {
            release,
            cluster_name: required("cluster_name")?,
            region: required("region")?,
            account_id: required("account_id")?,
            partition: partition(config).unwrap_or_else(|| "aws".to_string()),
            node_role_arn: required("node_role_arn")?,
            interruption_queue_arn: get_str(config, "interruption_queue_arn").map(str::to_string),
        };
        let document = policy_document(&inputs);
        let documents = policy_groups(&inputs)
            .into_iter()
            .map(|g| {
                (
                    g.name.to_string(),
                    Value::string(
                        PolicyDocument {
                            statements: g.statements,
                        }
                        .to_json(),
                    ),
                )
            })
            .collect();
        Ok(object([
            ("cluster_name", Value::string(inputs.cluster_name.clone())),
            ("region", Value::string(inputs.region.clone())),
            ("account_id", Value::string(inputs.account_id.clone())),
            ("partition", Value::string(inputs.partition.clone())),
            ("node_role_arn", Value::string(inputs.node_role_arn.clone())),
            ("karpenter_version", Value::string(version)),
            (
                "interruption_queue_arn",
                opt_string(inputs.interruption_queue_arn.clone()),
            ),
            ("json", Value::string(document.to_json())),
            ("documents", Value::Map(documents)),
            (
                "statements",
                Value::List(document.statements.iter().map(statement_value).collect()),
            ),
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terraform::framework::schema::validate_attributes;

    fn config(pairs: &[(&str, &str)]) -> Value {
        let mut fields: Vec<(&str, Value)> =
            SCHEMA.attributes.iter().map(|a| (a.name, Value::Null)).collect();
        for (k, val) in pairs {
            if let Some(slot) = fields.iter_mut().find(|(n, _)| n == k) {
                slot.1 = Value::string(*val);
            }
        }
        object(fields)
    }

    fn good() -> Vec<(&'static str, &'static str)> {
        vec![
            ("cluster_name", "demo"),
            ("region", "us-east-1"),
            ("account_id", "123456789012"),
            (
                "node_role_arn",
                "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo",
            ),
            (
                "interruption_queue_arn",
                "arn:aws:sqs:us-east-1:123456789012:demo",
            ),
        ]
    }

    fn diagnose(pairs: &[(&str, &str)]) -> Diagnostics {
        let c = config(pairs);
        let mut d = Diagnostics::new();
        validate_attributes(
            &SCHEMA.attributes,
            &SCHEMA.blocks,
            &c,
            &AttributePath::root(),
            &mut d,
        );
        DataSource::<KarpenterContext>::validate(&ControllerPolicy, &c, &mut d);
        d
    }

    #[test]
    fn valid_inputs_pass_and_render() {
        assert!(diagnose(&good()).is_empty());
        let state = read(&context(None), &good()).expect("read");
        assert_eq!(get_str(&state, "partition"), Some("aws"));
        let json: serde_json::Value =
            serde_json::from_str(get_str(&state, "json").expect("json")).expect("parse");
        assert_eq!(json["Version"], "2012-10-17");
        assert_eq!(
            state
                .get("documents")
                .and_then(Value::as_entries)
                .map(|m| m.len()),
            Some(6)
        );
    }

    /// The newest release by default; any known minor, however spelled, on request.
    #[test]
    fn karpenter_version_chooses_the_release() {
        let state = read(&context(None), &good()).expect("read");
        assert_eq!(
            get_str(&state, "karpenter_version"),
            Some(releases::newest().version)
        );
        assert!(get_str(&state, "json").is_some_and(|j| j.contains("ec2:RebootInstances")));
        let mut pairs = good();
        pairs.push(("karpenter_version", "1.8.3"));
        let state = read(&context(None), &pairs).expect("read");
        assert_eq!(get_str(&state, "karpenter_version"), Some("1.8.3"));
        let groups: Vec<String> = state
            .get("documents")
            .and_then(Value::as_entries)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        assert_eq!(groups, ["Controller"]);
        let json = get_str(&state, "json").unwrap_or_default();
        assert!(!json.contains("ec2:RebootInstances") && json.contains("AllowScopedDeletion"));
        pairs.retain(|(k, _)| *k != "karpenter_version");
        pairs.push(("karpenter_version", "v1.16"));
        let d = read(&context(None), &pairs).expect_err("unknown release");
        let first = d.iter().next().expect("a diagnostic");
        assert_eq!(
            first.path.as_ref().map(ToString::to_string).as_deref(),
            Some("karpenter_version")
        );
        assert!(first.detail.contains("v1.0, v1.1"), "{}", first.detail);
    }

    #[test]
    fn bad_inputs_point_at_their_attribute() {
        let cases: &[(&str, &str, &str)] = &[
            ("cluster_name", "", "cluster_name"),
            ("cluster_name", "-bad", "cluster_name"),
            ("region", "moon-1", "region"),
            ("account_id", "1234", "account_id"),
            (
                "node_role_arn",
                "arn:aws:iam::123456789012:user/bob",
                "node_role_arn",
            ),
            ("node_role_arn", "not an arn", "node_role_arn"),
            (
                "node_role_arn",
                "arn:aws:iam::999999999999:role/x",
                "node_role_arn",
            ),
            (
                "interruption_queue_arn",
                "arn:aws:sqs:eu-west-1:123456789012:demo",
                "interruption_queue_arn",
            ),
            ("partition", "aws-cn", "partition"),
            ("karpenter_version", "v1.16", "karpenter_version"),
            ("karpenter_version", "latest", "karpenter_version"),
        ];
        for (attr, value, expected_path) in cases {
            let mut pairs = good();
            pairs.retain(|(k, _)| k != attr);
            pairs.push((attr, value));
            let d = diagnose(&pairs);
            assert!(d.has_errors(), "{attr}={value:?} passed");
            let paths: Vec<String> = d
                .iter()
                .filter_map(|x| x.path.as_ref().map(|p| p.to_string()))
                .collect();
            assert!(
                paths.iter().any(|p| p == expected_path),
                "{attr}={value:?}: {paths:?}"
            );
        }
    }

    fn context(region: Option<&str>) -> KarpenterContext {
        let mut settings = crate::settings::ProviderSettings::default();
        settings.aws.region = region.map(str::to_string);
        KarpenterContext::new(settings)
    }

    fn read(ctx: &KarpenterContext, pairs: &[(&str, &str)]) -> Result<Value, Diagnostics> {
        tokio_test_block(DataSource::<KarpenterContext>::read(
            &ControllerPolicy,
            ctx,
            &config(pairs),
        ))
    }

    #[test]
    fn region_defaults_to_the_providers_and_account_to_the_node_roles() {
        let mut pairs = good();
        pairs.retain(|(k, _)| *k != "region" && *k != "account_id");
        let state = read(&context(Some("us-east-1")), &pairs).expect("read");
        assert_eq!(get_str(&state, "region"), Some("us-east-1"));
        assert_eq!(get_str(&state, "account_id"), Some("123456789012"));
        // the configured region wins over the provider's
        let state = read(&context(Some("eu-west-1")), &good()).expect("read");
        assert_eq!(get_str(&state, "region"), Some("us-east-1"));
        // a defaulted region is checked like a configured one: the queue is in us-east-1
        let d = read(&context(Some("eu-west-1")), &pairs).expect_err("queue in another region");
        assert!(
            d.iter().any(
                |x| x.path.as_ref().map(ToString::to_string).as_deref() == Some("interruption_queue_arn")
            )
        );
        // no region anywhere: an error on region that says where to set it
        let d = read(&context(None), &pairs).expect_err("no region");
        let first = d.iter().next().expect("a diagnostic");
        assert_eq!(
            first.path.as_ref().map(ToString::to_string).as_deref(),
            Some("region")
        );
        assert!(first.detail.contains("aws {} block"), "{}", first.detail);
    }

    fn tokio_test_block<F: std::future::Future>(f: F) -> F::Output {
        // The read is synchronous in substance; a minimal executor keeps tests runtime-free.
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut f = std::pin::pin!(f);
        loop {
            if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
                return v;
            }
        }
    }
}
