//! #19 for the AWS resource types, at the protocol level: resource identity, list resources
//! and generated configuration of `karpenter_interruption_queue`, `karpenter_node_role` and
//! `karpenter_controller_role`, driven as Terraform 1.14/1.15 drives them (see
//! `protocol/mod.rs`) over the real plugin binary with mTLS, against moto.
//!
//! The Karpenter parts are made with the AWS SDK as people made them before this provider:
//! Karpenter's CloudFormation reference (a queue named after the cluster, its policy, and the
//! interruption rules targeting it; `KarpenterNodeRole-<cluster>` with EC2 trust and the four
//! node policies) and a controller role with an IRSA trust for `kube-system:karpenter` and the
//! controller policy. Beside them, decoys the listings must leave out: an unrelated queue, a
//! queue other rules target, a node group role, a role named like Karpenter's without its
//! policies, a Lambda role, other IRSA and Pod Identity roles.

use crate::iam_common;

use crate::protocol::{Listed, Session, attribute_names, has_errors, text, value};
use acceptance_tests::moto::{ACCOUNT_ID, Moto, REGION};
use aws_sdk_eventbridge::types::{RuleState, Target};
use aws_sdk_iam::types::Tag as IamTag;
use aws_sdk_sqs::types::QueueAttributeName;
use serde_json::{Value as Json, json};
use terraform_provider_karpenter::policy::controller::{ControllerPolicyInputs, policy_document};
use terraform_provider_karpenter::resources::aws::interruption_queue::{self as iq, RULE_KINDS, TARGET_ID};
use terraform_provider_karpenter::terraform::plugin::proto::tfplugin6 as pb;
use terraform_provider_karpenter::terraform::tfvalue::Value;

const QUEUE: &str = "karpenter_interruption_queue";
const NODE_ROLE: &str = "karpenter_node_role";
const CONTROLLER_ROLE: &str = "karpenter_controller_role";
const OWNER_TAG: &str = "terraform-provider-karpenter/resource-type";
const NODE_POLICIES: &[&str] = &[
    "AmazonEKS_CNI_Policy",
    "AmazonEKSWorkerNodePolicy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonSSMManagedInstanceCore",
];

fn provider_config(moto: &Moto) -> Json {
    let ep = moto.endpoint();
    json!({"aws": {
        "region": REGION,
        "access_key": "testing",
        "secret_key": "testing",
        "endpoints": {"iam": ep, "sqs": ep, "events": ep, "sts": ep, "ec2": ep},
    }})
}

/// The test's own AWS clients, against moto.
struct Aws {
    sqs: aws_sdk_sqs::Client,
    events: aws_sdk_eventbridge::Client,
    iam: aws_sdk_iam::Client,
}

impl Aws {
    fn new(moto: &Moto) -> Self {
        let config = moto.sdk_config();
        Self {
            sqs: aws_sdk_sqs::Client::new(&config),
            events: aws_sdk_eventbridge::Client::new(&config),
            iam: iam_common::client(moto),
        }
    }

    /// A queue as the CloudFormation reference makes it (retention 300 s, SQS-managed SSE, the
    /// interruption policy), with `tags`; returns its ARN.
    async fn queue(&self, name: &str, tags: &[(&str, &str)]) -> String {
        let url = self
            .sqs
            .create_queue()
            .queue_name(name)
            .attributes(QueueAttributeName::MessageRetentionPeriod, "300")
            .attributes(QueueAttributeName::SqsManagedSseEnabled, "true")
            .set_tags(
                (!tags.is_empty())
                    .then(|| tags.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
            )
            .send()
            .await
            .expect("CreateQueue")
            .queue_url
            .expect("queue url");
        let arn = format!("arn:aws:sqs:{REGION}:{ACCOUNT_ID}:{name}");
        self.sqs
            .set_queue_attributes()
            .queue_url(&url)
            .attributes(QueueAttributeName::Policy, iq::policy_document(&arn, &[]))
            .send()
            .await
            .expect("SetQueueAttributes");
        arn
    }

    /// Replaces a queue's policy.
    async fn set_policy(&self, name: &str, policy: &str) {
        let url = self
            .sqs
            .get_queue_url()
            .queue_name(name)
            .send()
            .await
            .expect("GetQueueUrl")
            .queue_url
            .expect("queue url");
        self.sqs
            .set_queue_attributes()
            .queue_url(&url)
            .attributes(QueueAttributeName::Policy, policy)
            .send()
            .await
            .expect("SetQueueAttributes");
    }

    /// A rule with `pattern` targeting `arn` with the target Id the reference uses.
    async fn rule(&self, name: &str, pattern: &str, arn: &str) {
        self.events
            .put_rule()
            .name(name)
            .event_pattern(pattern)
            .state(RuleState::Enabled)
            .send()
            .await
            .expect("PutRule");
        self.events
            .put_targets()
            .rule(name)
            .targets(Target::builder().id(TARGET_ID).arn(arn).build().expect("target"))
            .send()
            .await
            .expect("PutTargets");
    }

    /// Karpenter's five interruption rules, named `<prefix><Kind>`, targeting `arn`.
    async fn interruption_rules(&self, prefix: &str, arn: &str) {
        for kind in RULE_KINDS {
            self.rule(&kind.rule_name(prefix), &kind.event_pattern(), arn)
                .await;
        }
    }

    async fn role(&self, name: &str, trust: Json, tags: &[(&str, &str)]) -> String {
        let tags: Vec<IamTag> = tags
            .iter()
            .map(|(k, v)| IamTag::builder().key(*k).value(*v).build().expect("tag"))
            .collect();
        self.iam
            .create_role()
            .role_name(name)
            .assume_role_policy_document(trust.to_string())
            .set_tags((!tags.is_empty()).then_some(tags))
            .send()
            .await
            .expect("CreateRole")
            .role()
            .expect("role")
            .arn()
            .to_string()
    }

    async fn attach(&self, role: &str, policies: &[&str]) {
        for p in policies {
            self.iam
                .attach_role_policy()
                .role_name(role)
                .policy_arn(format!("arn:aws:iam::aws:policy/{p}"))
                .send()
                .await
                .expect("AttachRolePolicy");
        }
    }

    async fn inline(&self, role: &str, name: &str, document: &str) {
        self.iam
            .put_role_policy()
            .role_name(role)
            .policy_name(name)
            .policy_document(document)
            .send()
            .await
            .expect("PutRolePolicy");
    }
}

fn service_trust(service: &str, actions: Json) -> Json {
    json!({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": service}, "Action": actions}]})
}

fn irsa_trust(oidc: &str, service_account: &str) -> Json {
    let issuer = oidc.split("oidc-provider/").nth(1).expect("issuer");
    json!({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow",
        "Principal": {"Federated": oidc},
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {"StringEquals": {
            format!("{issuer}:aud"): "sts.amazonaws.com",
            format!("{issuer}:sub"): format!("system:serviceaccount:{service_account}"),
        }},
    }]})
}

/// Everything the listings look at: the Karpenter parts of clusters `demo`, `prod` and `cfn`,
/// and the decoys.
async fn karpenter_and_decoys(aws: &Aws) {
    // demo: the reference's queue and rules.
    let demo = aws.queue("demo", &[]).await;
    aws.interruption_rules("Karpenter-demo-", &demo).await;
    // prod: a queue this provider created (its tags), named apart from its cluster, no rules.
    aws.queue(
        "prod-interruption",
        &[
            (OWNER_TAG, QUEUE),
            ("terraform-provider-karpenter/cluster-name", "prod"),
        ],
    )
    .await;
    // cfn: exactly what the CloudFormation reference makes: its policy as CloudFormation
    // writes it (no Version, no Sid on the allow statement, a boolean condition value), and
    // the five rules named as CloudFormation names them (stack, logical ID, suffix): found by
    // their pattern alone.
    let cfn = aws.queue("cfn", &[]).await;
    aws.set_policy("cfn", &cloudformation_policy(&cfn)).await;
    for (kind, logical_id) in RULE_KINDS.iter().zip([
        "ScheduledChangeRule",
        "SpotInterruptionRule",
        "RebalanceRule",
        "InstanceStateChangeRule",
        "CapacityReservationInterruptionRule",
    ]) {
        aws.rule(
            &format!("Karpenter-cfn-{logical_id}-1X2Y3Z"),
            &kind.event_pattern(),
            &cfn,
        )
        .await;
    }
    // Decoys: a queue nothing targets, a queue another rule targets.
    aws.queue("orders", &[]).await;
    let s3 = aws.queue("s3-events", &[]).await;
    aws.rule(
        "s3-object-created",
        r#"{"source":["aws.s3"],"detail-type":["Object Created"]}"#,
        &s3,
    )
    .await;

    // Node roles: the reference's, one this provider created (its tags), and decoys.
    let ec2 = service_trust("ec2.amazonaws.com", json!("sts:AssumeRole"));
    let demo_nodes = aws.role("KarpenterNodeRole-demo", ec2.clone(), &[]).await;
    aws.attach("KarpenterNodeRole-demo", NODE_POLICIES).await;
    aws.role(
        "team-nodes",
        ec2.clone(),
        &[(OWNER_TAG, NODE_ROLE), ("karpenter.sh/discovery", "prod")],
    )
    .await;
    aws.attach("team-nodes", NODE_POLICIES).await;
    aws.role("eks-managed-nodes", ec2.clone(), &[]).await;
    aws.attach("eks-managed-nodes", NODE_POLICIES).await;
    aws.role("KarpenterNodeRole-nopolicy", ec2, &[]).await;
    aws.role(
        "lambda-exec",
        service_trust("lambda.amazonaws.com", json!("sts:AssumeRole")),
        &[(OWNER_TAG, NODE_ROLE)],
    )
    .await;

    // Controller roles: IRSA for kube-system:karpenter with the controller policy; one named
    // like upstream's without it; decoys trusted by other service accounts and Pod Identity.
    let oidc = iam_common::oidc_provider(&aws.iam).await;
    let inputs = ControllerPolicyInputs {
        cluster_name: "demo".into(),
        partition: "aws".into(),
        region: REGION.into(),
        account_id: ACCOUNT_ID.into(),
        node_role_arn: demo_nodes,
        interruption_queue_arn: Some(demo),
        release: terraform_provider_karpenter::policy::releases::newest(),
    };
    aws.role(
        "KarpenterControllerRole-demo",
        irsa_trust(&oidc, "kube-system:karpenter"),
        &[],
    )
    .await;
    aws.inline(
        "KarpenterControllerRole-demo",
        "KarpenterControllerPolicy",
        &policy_document(&inputs).to_json(),
    )
    .await;
    aws.role(
        "KarpenterControllerRole-legacy",
        irsa_trust(&oidc, "karpenter:karpenter"),
        &[],
    )
    .await;
    aws.role("external-dns", irsa_trust(&oidc, "kube-system:external-dns"), &[])
        .await;
    aws.inline(
        "external-dns",
        "dns",
        r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"route53:*","Resource":"*"}]}"#,
    )
    .await;
    aws.role(
        "pod-reader",
        service_trust(
            "pods.eks.amazonaws.com",
            json!(["sts:AssumeRole", "sts:TagSession"]),
        ),
        &[],
    )
    .await;
}

/// The queue policy of Karpenter's CloudFormation reference, as CloudFormation writes it.
fn cloudformation_policy(queue_arn: &str) -> String {
    json!({
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": false}},
                "Principal": "*"
            }
        ]
    })
    .to_string()
}

fn names(listed: &[Listed]) -> Vec<String> {
    let mut n: Vec<String> = listed.iter().map(|l| l.display_name.clone()).collect();
    n.sort();
    n
}

fn identity(session: &Session, type_name: &str, json: Json) -> Value {
    value(&session.identity_type(type_name), json)
}

/// The import ID of a listed identity: the queue's or the role's name.
fn import_id(listed: &Listed) -> String {
    listed
        .identity
        .get("queue_name")
        .or_else(|| listed.identity.get("name"))
        .and_then(Value::as_str)
        .expect("a name in the identity")
        .to_string()
}

/// Lists `type_name` with `config`, with states, and checks each result: its generated
/// configuration plans empty, and import by identity gives what import by ID gives, which is
/// the listed state.
async fn list_and_check(s: &mut Session, type_name: &str, config: Json) -> Vec<Listed> {
    let (found, diags) = s.list(type_name, config, true, 100).await;
    assert!(!has_errors(&diags), "{type_name}: {}", text(&diags));
    for listed in &found {
        s.assert_generated_config_plans_empty(type_name, listed).await;
        let by_identity = s
            .import_by_identity(type_name, &listed.identity)
            .await
            .unwrap_or_else(|e| panic!("{type_name} {}: {e}", listed.display_name));
        let by_id = s
            .import_by_id(type_name, &import_id(listed))
            .await
            .unwrap_or_else(|e| panic!("{type_name} {}: {e}", listed.display_name));
        assert_eq!(by_identity, by_id, "{type_name} {}", listed.display_name);
        assert_eq!(by_id.1, listed.identity, "{}", listed.display_name);
        assert_eq!(
            Some(&by_id.0),
            listed.state.as_ref(),
            "{type_name} {}: the listed state is what import and read give",
            listed.display_name
        );
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interruption_queues_are_found_by_their_rules_and_tags() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    karpenter_and_decoys(&aws).await;
    let mut s = Session::start(provider_config(&moto)).await;

    let all = list_and_check(&mut s, QUEUE, json!({})).await;
    assert_eq!(
        names(&all),
        [
            "cfn (us-east-1)",
            "demo (us-east-1)",
            "prod (us-east-1, queue prod-interruption)"
        ]
    );
    let demo = all
        .iter()
        .find(|l| l.display_name.starts_with("demo"))
        .expect("demo");
    assert_eq!(
        demo.identity,
        identity(
            &s,
            QUEUE,
            json!({"queue_name": "demo", "region": REGION, "account_id": ACCOUNT_ID})
        )
    );
    // The queue the CloudFormation reference made imports and plans empty (checked above),
    // its CloudFormation-named rules adopted under their own names.
    let cfn = all
        .iter()
        .find(|l| l.display_name.starts_with("cfn"))
        .expect("cfn");
    assert!(cfn.diagnostics.is_empty(), "{}", text(&cfn.diagnostics));
    let cfn_names = cfn
        .state
        .as_ref()
        .and_then(|s| s.get("rule_names"))
        .and_then(Value::as_entries)
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        cfn_names.get("spot_interruption").and_then(Value::as_str),
        Some("Karpenter-cfn-SpotInterruptionRule-1X2Y3Z"),
        "{cfn_names:?}"
    );
    assert!(demo.diagnostics.is_empty(), "{}", text(&demo.diagnostics));
    let state = demo.state.as_ref().expect("state");
    assert_eq!(state.get("cluster_name").and_then(Value::as_str), Some("demo"));
    assert_eq!(
        state.get("rules").and_then(Value::as_entries).map(|r| r.len()),
        Some(5),
        "the five rules come with the queue"
    );

    // Filters, states only when asked for, and the limit.
    let (prefixed, _) = s.list(QUEUE, json!({"name_prefix": "pr"}), false, 100).await;
    assert_eq!(names(&prefixed), ["prod (us-east-1, queue prod-interruption)"]);
    assert!(prefixed[0].state.is_none());
    let (by_cluster, _) = s.list(QUEUE, json!({"cluster_name": "prod"}), false, 100).await;
    assert_eq!(names(&by_cluster), ["prod (us-east-1, queue prod-interruption)"]);
    let (none, diags) = s.list(QUEUE, json!({"cluster_name": "nope"}), true, 100).await;
    assert!(none.is_empty() && diags.is_empty(), "{none:?} {}", text(&diags));
    let (one, _) = s.list(QUEUE, json!({}), true, 1).await;
    assert_eq!(one.len(), 1);
    assert_eq!(s.events_sent(QUEUE, 1).await, 1, "limit = 1 sends one result");
    assert_eq!(s.events_sent(QUEUE, 0).await, 3, "no limit sends all");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_and_controller_roles_are_found_by_trust_tags_and_shape() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    karpenter_and_decoys(&aws).await;
    let mut s = Session::start(provider_config(&moto)).await;

    let nodes = list_and_check(&mut s, NODE_ROLE, json!({})).await;
    assert_eq!(
        names(&nodes),
        [
            "KarpenterNodeRole-demo (cluster demo)",
            "team-nodes (cluster prod)"
        ]
    );
    let demo = nodes
        .iter()
        .find(|l| l.display_name.starts_with("KarpenterNodeRole-demo"))
        .expect("demo");
    assert_eq!(
        demo.identity,
        identity(
            &s,
            NODE_ROLE,
            json!({"name": "KarpenterNodeRole-demo", "account_id": ACCOUNT_ID})
        )
    );
    let (prod, _) = s
        .list(NODE_ROLE, json!({"cluster_name": "prod"}), false, 100)
        .await;
    assert_eq!(names(&prod), ["team-nodes (cluster prod)"]);
    assert!(prod[0].state.is_none());
    let (prefixed, _) = s
        .list(NODE_ROLE, json!({"name_prefix": "Karp"}), false, 100)
        .await;
    assert_eq!(names(&prefixed), ["KarpenterNodeRole-demo (cluster demo)"]);
    assert_eq!(s.events_sent(NODE_ROLE, 1).await, 1, "limit = 1 sends one result");

    let (controllers, diags) = s.list(CONTROLLER_ROLE, json!({}), true, 100).await;
    assert!(!has_errors(&diags), "{}", text(&diags));
    assert_eq!(
        names(&controllers),
        ["KarpenterControllerRole-demo (cluster demo, us-east-1)"]
    );
    // The role named like upstream's, without the controller policy, is a warning.
    assert!(
        diags
            .iter()
            .any(|d| d.severity == pb::diagnostic::Severity::Warning as i32
                && d.summary.contains("KarpenterControllerRole-legacy")),
        "{}",
        text(&diags)
    );
    let controllers = list_and_check(&mut s, CONTROLLER_ROLE, json!({"cluster_name": "demo"})).await;
    assert_eq!(controllers.len(), 1);
    let (none, _) = s
        .list(CONTROLLER_ROLE, json!({"cluster_name": "prod"}), false, 100)
        .await;
    assert!(none.is_empty(), "{none:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identities_naming_another_region_or_account_are_refused() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let arn = aws.queue("demo", &[]).await;
    aws.interruption_rules("Karpenter-demo-", &arn).await;
    aws.role(
        "KarpenterNodeRole-demo",
        service_trust("ec2.amazonaws.com", json!("sts:AssumeRole")),
        &[],
    )
    .await;
    let mut s = Session::start(provider_config(&moto)).await;

    let err = s
        .import_by_identity(
            QUEUE,
            &identity(&s, QUEUE, json!({"queue_name": "demo", "region": "us-west-2"})),
        )
        .await
        .expect_err("another region");
    assert!(err.contains("configured for us-east-1"), "{err}");
    assert!(err.contains("provider = karpenter.usw2"), "{err}");
    let err = s
        .import_by_identity(
            QUEUE,
            &identity(
                &s,
                QUEUE,
                json!({"queue_name": "demo", "account_id": "210987654321"}),
            ),
        )
        .await
        .expect_err("another account");
    assert!(err.contains("account 123456789012"), "{err}");
    // The region and account that match, or none given, import.
    for id in [
        json!({"queue_name": "demo", "region": REGION, "account_id": ACCOUNT_ID}),
        json!({"queue_name": "demo"}),
    ] {
        let (_, imported) = s
            .import_by_identity(QUEUE, &identity(&s, QUEUE, id))
            .await
            .expect("import");
        s.assert_valid_identity(QUEUE, &imported);
    }

    // Roles: the role found is in another account; no role, and the credentials (STS) are in
    // another account; no role in this account.
    for name in ["KarpenterNodeRole-demo", "KarpenterNodeRole-elsewhere"] {
        let err = s
            .import_by_identity(
                NODE_ROLE,
                &identity(&s, NODE_ROLE, json!({"name": name, "account_id": "210987654321"})),
            )
            .await
            .expect_err("another account");
        assert!(
            err.contains("Identity in another AWS account") && err.contains("account 123456789012"),
            "{err}"
        );
    }
    let err = s
        .import_by_identity(
            CONTROLLER_ROLE,
            &identity(
                &s,
                CONTROLLER_ROLE,
                json!({"name": "nope", "account_id": ACCOUNT_ID}),
            ),
        )
        .await
        .expect_err("no such role");
    assert!(err.contains("There is no IAM role named"), "{err}");
    let err = s
        .import_by_identity(NODE_ROLE, &identity(&s, NODE_ROLE, json!({})))
        .await
        .expect_err("no name");
    assert!(err.contains("name"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_configurations_are_validated_on_their_attribute() {
    let moto = Moto::start();
    let mut s = Session::start(provider_config(&moto)).await;
    for type_name in [QUEUE, NODE_ROLE, CONTROLLER_ROLE] {
        let ok = s
            .validate_list(type_name, json!({"name_prefix": "Karp", "cluster_name": "demo"}))
            .await;
        assert!(!has_errors(&ok), "{type_name}: {}", text(&ok));
        for (config, path) in [
            (json!({"name_prefix": ""}), "name_prefix"),
            (json!({"cluster_name": "not a cluster!"}), "cluster_name"),
        ] {
            let d = s.validate_list(type_name, config).await;
            let at: Vec<Vec<String>> = d
                .iter()
                .filter(|d| d.severity == pb::diagnostic::Severity::Error as i32)
                .map(attribute_names)
                .collect();
            // The path within the list block, where Terraform resolves it.
            assert_eq!(at, [["config", path]], "{type_name}: {}", text(&d));
        }
    }
}

/// A create (null prior) returns a wholly known identity; an update with a changed tag plans
/// and applies the identity it had, and a refresh keeps it.
async fn create_then_update_keeps_the_identity(s: &mut Session, type_name: &str, config: Json) -> Value {
    let ty = s.resource_type(type_name);
    let config = value(&ty, config);
    let (planned, _, _, diags) = s.plan(type_name, &Value::Null, &config, &Value::Null).await;
    assert!(!has_errors(&diags), "{type_name}: {}", text(&diags));
    let (state, id, diags) = s
        .apply(type_name, &Value::Null, &planned, &config, &Value::Null)
        .await;
    assert!(!has_errors(&diags), "{type_name}: {}", text(&diags));
    s.assert_valid_identity(type_name, &id);
    let (state, read_id) = s.read(type_name, &state, &id).await.expect("refresh");
    assert_eq!(read_id, id);

    let mut changed = config.clone();
    if let Value::Object(fields) = &mut changed {
        fields.insert(
            "tags".into(),
            Value::Map([("team".to_string(), Value::string("data"))].into()),
        );
    }
    let (planned, planned_id, replace, diags) = s.plan(type_name, &state, &changed, &id).await;
    assert!(!has_errors(&diags), "{type_name}: {}", text(&diags));
    assert!(replace.is_empty(), "{type_name}: {replace:?}");
    assert_ne!(planned, state, "{type_name}: the tag change is planned");
    assert_eq!(planned_id, id, "{type_name}: an update plans the identity it had");
    let (applied, applied_id, diags) = s.apply(type_name, &state, &planned, &changed, &planned_id).await;
    assert!(!has_errors(&diags), "{type_name}: {}", text(&diags));
    assert_eq!(
        applied_id, id,
        "{type_name}: an update applies the identity it had"
    );
    let (_, read_id) = s.read(type_name, &applied, &applied_id).await.expect("refresh");
    assert_eq!(read_id, id);
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_parts_have_known_identities_that_updates_keep() {
    let moto = Moto::start();
    let aws = Aws::new(&moto);
    let oidc = iam_common::oidc_provider(&aws.iam).await;
    let mut s = Session::start(provider_config(&moto)).await;

    let id = create_then_update_keeps_the_identity(&mut s, QUEUE, json!({"cluster_name": "life"})).await;
    assert_eq!(
        id,
        identity(
            &s,
            QUEUE,
            json!({"queue_name": "life", "region": REGION, "account_id": ACCOUNT_ID})
        )
    );
    // A generated name: the identity is known only once the role exists.
    let id = create_then_update_keeps_the_identity(&mut s, NODE_ROLE, json!({"name_prefix": "life-"})).await;
    let name = id.get("name").and_then(Value::as_str).expect("name");
    assert!(name.starts_with("life-"), "{name}");
    let id = create_then_update_keeps_the_identity(
        &mut s,
        CONTROLLER_ROLE,
        json!({
            "name": "KarpenterControllerRole-life",
            "cluster_name": "life",
            "node_role_arn": format!("arn:aws:iam::{ACCOUNT_ID}:role/KarpenterNodeRole-life"),
            "irsa": {"oidc_provider_arn": oidc},
        }),
    )
    .await;
    assert_eq!(
        id,
        identity(
            &s,
            CONTROLLER_ROLE,
            json!({"name": "KarpenterControllerRole-life", "account_id": ACCOUNT_ID})
        )
    );

    // What was created is listed, by its ownership tag.
    let (queues, _) = s.list(QUEUE, json!({"cluster_name": "life"}), false, 100).await;
    assert_eq!(names(&queues), ["life (us-east-1)"]);
    let (roles, _) = s
        .list(NODE_ROLE, json!({"name_prefix": "life-"}), false, 100)
        .await;
    assert_eq!(roles.len(), 1);
    let (controllers, _) = s
        .list(CONTROLLER_ROLE, json!({"cluster_name": "life"}), false, 100)
        .await;
    assert_eq!(
        names(&controllers),
        ["KarpenterControllerRole-life (cluster life, us-east-1)"]
    );
}
