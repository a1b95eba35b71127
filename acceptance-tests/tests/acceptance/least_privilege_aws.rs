//! The IAM policy in `docs/guides/least-privilege.md` is enough for the provider's AWS
//! resources, and each action in it counts; so is its second policy for `terraform query`. moto runs with IAM enforcement switched on
//! (`/moto-api/reset-auth`): requests must be signed with the keys of an IAM user, and that
//! user's policy must allow the action.
//!
//! moto does not evaluate resource patterns faithfully (it checks existing queues and roles and
//! uses `*` for everything else), so the enforced runs grant the documented *actions* on `*`.
//! The documented *resource patterns* are then checked against every ARN the provider created
//! (from the state), statement by statement. The calls themselves are recorded by a pass-through
//! proxy, and each must be allowed by the documented policy: the list is generated from what the
//! provider did, not written by hand.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use crate::iam_common::{self, glob};
use crate::protocol;

use acceptance_tests::moto::{ACCOUNT_ID, FaultProxy, Moto, REGION};
use acceptance_tests::{Workdir, repo_file};
use serde_json::{Value, json};

const CLUSTER: &str = "demo";

/// The documented policy with the placeholders filled in for moto's account.
fn documented_policy() -> Value {
    let guide = repo_file("docs/guides/least-privilege.md");
    let text = guide
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```json block in the guide");
    let text = text
        .replace("${AccountId}", ACCOUNT_ID)
        .replace("${Region}", REGION)
        .replace("${ClusterName}", CLUSTER);
    serde_json::from_str(&text).expect("the documented policy is JSON")
}

fn statements(policy: &Value) -> Vec<Value> {
    policy["Statement"].as_array().cloned().unwrap_or_default()
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect(),
        _ => vec![],
    }
}

/// Whether `policy` allows `action` (case-insensitive, as IAM compares actions) on `resource`.
fn allows(policy: &Value, action: &str, resource: &str) -> bool {
    statements(policy).iter().any(|st| {
        st["Effect"] == "Allow"
            && strings(&st["Action"])
                .iter()
                .any(|a| glob(&a.to_ascii_lowercase(), &action.to_ascii_lowercase()))
            && strings(&st["Resource"]).iter().any(|r| glob(r, resource))
    })
}

/// Whether an Allow statement of `policy` names `action` (on whatever resource).
fn lists(policy: &Value, action: &str) -> bool {
    statements(policy).iter().any(|st| {
        st["Effect"] == "Allow"
            && strings(&st["Action"])
                .iter()
                .any(|a| glob(&a.to_ascii_lowercase(), &action.to_ascii_lowercase()))
    })
}

/// The documented policy with every Resource widened to `*`, minus `remove` actions.
fn enforced_policy(remove: &[&str]) -> Value {
    let mut policy = documented_policy();
    if let Some(sts) = policy["Statement"].as_array_mut() {
        for st in sts.iter_mut() {
            let actions: Vec<String> = strings(&st["Action"])
                .into_iter()
                .filter(|a| !remove.contains(&a.as_str()))
                .collect();
            st["Action"] = json!(actions);
            st["Resource"] = json!("*");
        }
        sts.retain(|st| st["Action"].as_array().is_some_and(|a| !a.is_empty()));
    }
    policy
}

/// The IAM action behind a request the proxy saw (`AmazonSQS.CreateQueue`,
/// `AWSEvents.PutRule`, `Action=CreateRole`).
fn action_of(operation: &str) -> Option<String> {
    if let Some(op) = operation.strip_prefix("AmazonSQS.") {
        return Some(format!("sqs:{op}"));
    }
    if let Some(op) = operation.strip_prefix("AWSEvents.") {
        return Some(format!("events:{op}"));
    }
    let op = operation.strip_prefix("Action=")?;
    let service = if matches!(op, "AssumeRole" | "GetCallerIdentity") {
        "sts"
    } else {
        "iam"
    };
    Some(format!("{service}:{op}"))
}

/// POSTs `body` to moto's `path` (its admin API needs no signature).
fn moto_post(moto: &Moto, path: &str, body: &str) {
    let mut s = TcpStream::connect(("127.0.0.1", moto.port())).expect("connect to moto");
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        moto.port(),
        body.len()
    )
    .expect("write to moto");
    let mut status = String::new();
    let mut reader = BufReader::new(s);
    reader.read_line(&mut status).expect("moto answers");
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    assert!(status.contains(" 200 "), "POST {path}: {status}{rest}");
}

/// Creates IAM user `name` with `policy` inline and returns its access key (id, secret).
/// Runs while moto's IAM enforcement is off.
async fn user_with_policy(moto: &Moto, name: &str, policy: &Value) -> (String, String) {
    let iam = aws_sdk_iam::Client::new(&moto.sdk_config());
    iam.create_user()
        .user_name(name)
        .send()
        .await
        .expect("CreateUser");
    iam.put_user_policy()
        .user_name(name)
        .policy_name("terraform-karpenter")
        .policy_document(policy.to_string())
        .send()
        .await
        .expect("PutUserPolicy");
    let key = iam
        .create_access_key()
        .user_name(name)
        .send()
        .await
        .expect("CreateAccessKey");
    let key = key.access_key().expect("an access key");
    (key.access_key_id().to_owned(), key.secret_access_key().to_owned())
}

/// A working directory using `keys` (and nothing else) against `endpoint`.
fn workdir(provider_block: &str, cluster: &str, keys: &(String, String)) -> Workdir {
    let config = format!(
        r#"{provider_block}
resource "karpenter_interruption_queue" "this" {{
  cluster_name = "{cluster}"
}}

resource "karpenter_node_role" "nodes" {{
  name                    = "KarpenterNodeRole-{cluster}"
  create_instance_profile = true
}}

resource "karpenter_controller_role" "controller" {{
  name                   = "KarpenterControllerRole-{cluster}"
  cluster_name           = "{cluster}"
  region                 = "{REGION}"
  node_role_arn          = karpenter_node_role.nodes.arn
  interruption_queue_arn = karpenter_interruption_queue.this.queue_arn
  pod_identity           = true
  policy_attachment      = "managed"
}}
"#
    );
    let mut work = Workdir::new(&config);
    let missing = work.path().join("no-aws-config").to_string_lossy().into_owned();
    work.env("AWS_ACCESS_KEY_ID", &keys.0)
        .env("AWS_SECRET_ACCESS_KEY", &keys.1)
        .env("AWS_REGION", REGION)
        .env("AWS_CONFIG_FILE", &missing)
        .env("AWS_SHARED_CREDENTIALS_FILE", &missing)
        .env("AWS_EC2_METADATA_DISABLED", "true");
    work
}

/// Every ARN in the state, with the IAM action family that created it.
fn created_arns(state: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let resources = state["values"]["root_module"]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for r in resources {
        let v = &r["values"];
        match r["type"].as_str().unwrap_or("") {
            "karpenter_interruption_queue" => {
                out.push((
                    "sqs:CreateQueue".into(),
                    v["queue_arn"].as_str().unwrap_or("").into(),
                ));
                for rule in v["rules"].as_object().into_iter().flat_map(|m| m.values()) {
                    out.push(("events:PutRule".into(), rule["arn"].as_str().unwrap_or("").into()));
                }
            }
            "karpenter_node_role" => {
                out.push(("iam:CreateRole".into(), v["arn"].as_str().unwrap_or("").into()));
                out.push((
                    "iam:CreateInstanceProfile".into(),
                    v["instance_profile_arn"].as_str().unwrap_or("").into(),
                ));
                out.push(("iam:PassRole".into(), v["arn"].as_str().unwrap_or("").into()));
            }
            "karpenter_controller_role" => {
                out.push(("iam:CreateRole".into(), v["arn"].as_str().unwrap_or("").into()));
                for arn in strings(&v["managed_policy_arns"]) {
                    out.push(("iam:CreatePolicy".into(), arn));
                }
            }
            _ => {}
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn the_documented_policy_is_enough_and_covers_every_call() {
    let moto = Moto::start_for_iam_enforcement();
    let proxy = FaultProxy::start(moto.port());
    let keys = user_with_policy(&moto, "terraform", &enforced_policy(&[])).await;
    moto_post(&moto, "/moto-api/reset-auth", "0");

    // Enforcement is on: unknown keys are refused (moto: 403 InvalidClientTokenId).
    let stranger = workdir(
        &proxy.provider_block(),
        "stranger",
        &("AKIAUNKNOWN0000000000".into(), "x".into()),
    );
    let run = stranger.apply().failed();
    assert!(run.text().contains("HTTP 403"), "{}", run.output());

    let work = workdir(&proxy.provider_block(), CLUSTER, &keys);
    let before = proxy.log().len();
    work.apply().ok();
    let state = work.state();
    assert!(
        work.plan_is_empty(),
        "refresh with the least-privilege user finds no drift"
    );
    work.destroy().ok();

    // Every call the provider made is allowed by the documented policy (its actions).
    let documented = documented_policy();
    let called: BTreeSet<String> = proxy.log()[before..]
        .iter()
        .filter_map(|(op, _)| action_of(op))
        .collect();
    assert!(called.len() >= 20, "too few calls recorded: {called:?}");
    // sts:GetCallerIdentity needs no permission on AWS.
    let missing: Vec<&String> = called
        .iter()
        .filter(|a| a.as_str() != "sts:GetCallerIdentity" && !lists(&documented, a))
        .collect();
    assert!(
        missing.is_empty(),
        "calls the documented policy does not allow: {missing:?}"
    );

    // Every ARN the provider created matches the Resource of a statement allowing its action.
    let arns = created_arns(&state);
    assert!(arns.len() >= 9, "ARNs from the state: {arns:?}");
    let unscoped: Vec<&(String, String)> = arns
        .iter()
        .filter(|(action, arn)| arn.is_empty() || !allows(&documented, action, arn))
        .collect();
    assert!(
        unscoped.is_empty(),
        "created outside the documented resource patterns: {unscoped:?}"
    );

    let unused: Vec<String> = statements(&documented)
        .iter()
        .flat_map(|st| strings(&st["Action"]))
        .filter(|a| !called.iter().any(|c| c.eq_ignore_ascii_case(a)))
        .collect();
    eprintln!(
        "least-privilege AWS: {} distinct actions called, all allowed; {} ARNs in scope; documented but not called in this run: {unused:?}",
        called.len(),
        arns.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn removing_one_action_fails_the_apply_with_access_denied() {
    let moto = Moto::start_for_iam_enforcement();
    let cases = [
        ("sqs:SetQueueAttributes", "SetQueueAttributes"),
        ("events:PutTargets", "PutTargets"),
        ("iam:CreateInstanceProfile", "CreateInstanceProfile"),
        ("iam:AttachRolePolicy", "AttachRolePolicy"),
    ];
    let mut users = Vec::new();
    for (i, (action, _)) in cases.iter().enumerate() {
        users.push(user_with_policy(&moto, &format!("without-{i}"), &enforced_policy(&[action])).await);
    }
    moto_post(&moto, "/moto-api/reset-auth", "0");
    for (i, ((action, op), keys)) in cases.iter().zip(&users).enumerate() {
        let work = workdir(&moto.provider_block(), &format!("case{i}"), keys);
        let run = work.apply().failed();
        let text = run.text();
        assert!(
            text.contains("Error:")
                && text.contains(op)
                && (text.contains("AccessDenied")
                    || text.contains("not authorized")
                    || text.contains("denied")),
            "without {action}: the error should name the denied action:\n{}",
            run.output()
        );
        let diagnostic: Vec<&str> = run
            .stderr
            .lines()
            .skip_while(|l| !l.starts_with("Error:"))
            .filter(|l| !l.trim().is_empty() && !l.starts_with("  "))
            .take(4)
            .collect();
        eprintln!("without {action}:\n{}\n", diagnostic.join("\n"));
    }
}

/// The guide's second policy: what `terraform query` needs beyond the first (the `list`
/// blocks of the AWS types, with `include_resource`), placeholders filled in.
fn documented_query_policy() -> Value {
    let guide = repo_file("docs/guides/least-privilege.md");
    let text = guide
        .split("```json\n")
        .nth(2)
        .and_then(|rest| rest.split("```").next())
        .expect("a second ```json block in the guide: the query statement");
    serde_json::from_str(
        &text
            .replace("${AccountId}", ACCOUNT_ID)
            .replace("${Region}", REGION),
    )
    .expect("the documented query policy is JSON")
}

/// The query policy is enough to list the three AWS types with their states (a user with only
/// it, IAM enforced by moto, finds what the resources created with no warning), and every call
/// the listings made is in it.
#[tokio::test(flavor = "multi_thread")]
async fn the_documented_query_policy_is_enough_to_list_every_aws_type() {
    let moto = Moto::start_for_iam_enforcement();
    let proxy = FaultProxy::start(moto.port());
    let keys = user_with_policy(&moto, "terraform", &enforced_policy(&[])).await;
    let query = documented_query_policy();
    let reader = user_with_policy(&moto, "query", &query).await;
    // A controller role with the inline policy (the resource's default), made the way
    // `eksctl create iamserviceaccount` would, so the listing also reads an inline policy.
    let iam = iam_common::client(&moto);
    let oidc = iam_common::oidc_provider(&iam).await;
    let issuer = oidc.split("oidc-provider/").nth(1).expect("issuer");
    let trust = json!({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Federated": oidc},
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {"StringEquals": {
            format!("{issuer}:aud"): "sts.amazonaws.com",
            format!("{issuer}:sub"): "system:serviceaccount:kube-system:karpenter",
        }},
    }]});
    let inputs = terraform_provider_karpenter::policy::controller::ControllerPolicyInputs {
        cluster_name: "inline".into(),
        partition: "aws".into(),
        region: REGION.into(),
        account_id: ACCOUNT_ID.into(),
        node_role_arn: format!("arn:aws:iam::{ACCOUNT_ID}:role/KarpenterNodeRole-inline"),
        interruption_queue_arn: None,
        release: terraform_provider_karpenter::policy::releases::newest(),
    };
    iam.create_role()
        .role_name("KarpenterControllerRole-inline")
        .assume_role_policy_document(trust.to_string())
        .send()
        .await
        .expect("CreateRole");
    iam.put_role_policy()
        .role_name("KarpenterControllerRole-inline")
        .policy_name("KarpenterControllerPolicy")
        .policy_document(terraform_provider_karpenter::policy::controller::policy_document(&inputs).to_json())
        .send()
        .await
        .expect("PutRolePolicy");
    moto_post(&moto, "/moto-api/reset-auth", "0");
    workdir(&proxy.provider_block(), CLUSTER, &keys).apply().ok();

    let ep = proxy.endpoint();
    let mut s = protocol::Session::start(json!({"aws": {
        "region": REGION,
        "access_key": reader.0,
        "secret_key": reader.1,
        "endpoints": {"iam": ep, "sqs": ep, "events": ep, "sts": ep, "ec2": ep},
    }}))
    .await;
    let before = proxy.log().len();
    for (type_name, count) in [
        ("karpenter_interruption_queue", 1),
        ("karpenter_node_role", 1),
        ("karpenter_controller_role", 2),
    ] {
        let (found, diags) = s.list(type_name, json!({}), true, 100).await;
        assert!(diags.is_empty(), "{type_name}: {}", protocol::text(&diags));
        assert_eq!(found.len(), count, "{type_name}: {found:?}");
    }
    let called: BTreeSet<String> = proxy.log()[before..]
        .iter()
        .filter_map(|(op, _)| action_of(op))
        .collect();
    let missing: Vec<&String> = called
        .iter()
        .filter(|a| a.as_str() != "sts:GetCallerIdentity" && !lists(&query, a))
        .collect();
    assert!(
        missing.is_empty(),
        "listing calls the query policy does not allow: {missing:?}"
    );
    let unused: Vec<String> = statements(&query)
        .iter()
        .flat_map(|st| strings(&st["Action"]))
        .filter(|a| !called.iter().any(|c| c.eq_ignore_ascii_case(a)))
        .collect();
    assert!(
        unused.is_empty(),
        "documented for query but not called: {unused:?}"
    );
    eprintln!(
        "least-privilege query: {} distinct actions called: {called:?}",
        called.len()
    );
}

#[test]
fn glob_and_action_mapping() {
    assert!(glob(
        "arn:aws:iam::1:role/Karpenter*",
        "arn:aws:iam::1:role/KarpenterNodeRole-demo"
    ));
    assert!(!glob(
        "arn:aws:iam::1:role/Karpenter*",
        "arn:aws:iam::1:role/Other"
    ));
    assert!(glob("*", "anything"));
    assert!(!glob("arn:aws:sqs:us-east-1:1:demo", "*"));
    assert_eq!(
        action_of("AmazonSQS.CreateQueue").as_deref(),
        Some("sqs:CreateQueue")
    );
    assert_eq!(action_of("Action=AssumeRole").as_deref(), Some("sts:AssumeRole"));
    assert_eq!(action_of("Action=CreateRole").as_deref(), Some("iam:CreateRole"));
    let p = documented_policy();
    assert!(allows(
        &p,
        "sqs:CreateQueue",
        "arn:aws:sqs:us-east-1:123456789012:demo"
    ));
    assert!(!allows(
        &p,
        "sqs:CreateQueue",
        "arn:aws:sqs:us-east-1:123456789012:other"
    ));
    assert!(!allows(
        &p,
        "sqs:SendMessage",
        "arn:aws:sqs:us-east-1:123456789012:demo"
    ));
    let e = enforced_policy(&["sqs:TagQueue"]);
    assert!(!allows(&e, "sqs:TagQueue", "*"));
    assert!(allows(&e, "sqs:UntagQueue", "*"));
}
