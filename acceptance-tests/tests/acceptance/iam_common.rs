//! Checks the IAM role tests make against moto with the SDK: documents decoded and parsed,
//! attached policies, instance profiles, and what is left after a destroy; and IAM's wildcard
//! match, for the tests that ask what a policy allows.

#![allow(dead_code)]

use std::collections::BTreeSet;

use acceptance_tests::moto::Moto;
use acceptance_tests::{Workdir, repo_file};
use aws_sdk_iam::Client;
use serde_json::Value as Json;

pub fn client(moto: &Moto) -> Client {
    Client::new(&moto.sdk_config())
}

/// IAM's wildcard match of `pattern` (`*` any run, `?` one character) against `s`,
/// case-sensitive as for ARNs (callers lower-case actions, which IAM compares without case).
pub fn glob(pattern: &str, s: &str) -> bool {
    let (p, s): (Vec<char>, Vec<char>) = (pattern.chars().collect(), s.chars().collect());
    let (mut pi, mut si, mut star, mut mark) = (0, 0, None, 0);
    while si < s.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(st) = star {
            pi = st + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// IAM returns documents percent-encoded; decode and parse.
pub fn decode(raw: &str) -> Json {
    let text = percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .expect("utf-8 document");
    serde_json::from_str(&text).expect("JSON document")
}

pub async fn trust(iam: &Client, role: &str) -> Json {
    let out = iam.get_role().role_name(role).send().await.expect("GetRole");
    decode(
        out.role()
            .and_then(|r| r.assume_role_policy_document())
            .expect("trust policy"),
    )
}

pub async fn attached(iam: &Client, role: &str) -> BTreeSet<String> {
    let out = iam
        .list_attached_role_policies()
        .role_name(role)
        .send()
        .await
        .expect("ListAttachedRolePolicies");
    out.attached_policies()
        .iter()
        .filter_map(|p| p.policy_arn().map(str::to_string))
        .collect()
}

pub async fn inline(iam: &Client, role: &str, name: &str) -> Json {
    let out = iam
        .get_role_policy()
        .role_name(role)
        .policy_name(name)
        .send()
        .await
        .expect("GetRolePolicy");
    decode(out.policy_document())
}

pub async fn managed_document(iam: &Client, arn: &str) -> Json {
    let policy = iam.get_policy().policy_arn(arn).send().await.expect("GetPolicy");
    let version = policy
        .policy()
        .and_then(|p| p.default_version_id())
        .expect("default version")
        .to_string();
    let out = iam
        .get_policy_version()
        .policy_arn(arn)
        .version_id(version)
        .send()
        .await
        .expect("GetPolicyVersion");
    decode(out.policy_version().and_then(|v| v.document()).expect("document"))
}

/// Role names, instance profile names and customer managed policy ARNs that exist.
pub async fn leftovers(iam: &Client) -> (Vec<String>, Vec<String>, Vec<String>) {
    let roles = iam.list_roles().send().await.expect("ListRoles");
    let profiles = iam
        .list_instance_profiles()
        .send()
        .await
        .expect("ListInstanceProfiles");
    let policies = iam
        .list_policies()
        .scope(aws_sdk_iam::types::PolicyScopeType::Local)
        .send()
        .await
        .expect("ListPolicies");
    (
        roles.roles().iter().map(|r| r.role_name().to_string()).collect(),
        profiles
            .instance_profiles()
            .iter()
            .map(|p| p.instance_profile_name().to_string())
            .collect(),
        policies
            .policies()
            .iter()
            .filter_map(|p| p.arn().map(str::to_string))
            .collect(),
    )
}

/// Asserts that moto holds no role, instance profile or customer managed policy.
pub async fn assert_nothing_left(iam: &Client) {
    let (roles, profiles, policies) = leftovers(iam).await;
    assert!(
        roles.is_empty() && profiles.is_empty() && policies.is_empty(),
        "left behind: roles {roles:?}, profiles {profiles:?}, policies {policies:?}"
    );
}

/// An EKS-like OIDC provider in moto; returns its ARN.
pub async fn oidc_provider(iam: &Client) -> String {
    let out = iam
        .create_open_id_connect_provider()
        .url("https://oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE")
        .client_id_list("sts.amazonaws.com")
        .send()
        .await
        .expect("CreateOpenIDConnectProvider");
    out.open_id_connect_provider_arn().expect("arn").to_string()
}

/// The resource's attributes in `terraform show -json`.
pub fn attrs(state: &Json, address: &str) -> Json {
    state["values"]["root_module"]["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["address"] == address))
        .map(|r| r["values"].clone())
        .unwrap_or_else(|| panic!("{address} not in state: {state}"))
}

/// Runs an example's `resource.tf` and `import.sh`: apply, plan empty, re-import, destroy.
pub fn run_example(moto: &Moto, dir: &str, address: &str) {
    let config = repo_file(&format!("examples/resources/{dir}/resource.tf"));
    let mut work = Workdir::new(&format!("{}\n{config}", moto.provider_block()));
    moto.configure(&mut work);
    work.apply().ok();
    assert!(work.plan_is_empty(), "{dir}: plan after apply is not empty");
    let import = repo_file(&format!("examples/resources/{dir}/import.sh"));
    let line = import
        .lines()
        .find(|l| l.starts_with("terraform import"))
        .unwrap_or_else(|| panic!("{dir}/import.sh has no terraform import line"));
    let args: Vec<&str> = line.split_whitespace().skip(1).collect();
    work.terraform(&["state", "rm", address]).ok();
    let mut with_flags = vec![args[0], "-no-color"];
    with_flags.extend(&args[1..]);
    work.terraform(&with_flags).ok();
    assert!(work.plan_is_empty(), "{dir}: plan after import is not empty");
    work.destroy().ok();
}

/// Adds, outside Terraform, an inline `s3:*` policy named `s3-everything` and attaches
/// AdministratorAccess to the role.
pub async fn add_out_of_band_permissions(iam: &Client, role: &str) {
    let doc = serde_json::json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]});
    iam.put_role_policy()
        .role_name(role)
        .policy_name("s3-everything")
        .policy_document(doc.to_string())
        .send()
        .await
        .expect("PutRolePolicy");
    iam.attach_role_policy()
        .role_name(role)
        .policy_arn("arn:aws:iam::aws:policy/AdministratorAccess")
        .send()
        .await
        .expect("AttachRolePolicy");
}
