use std::collections::HashMap;

use super::parse::{Env, parse};
use super::schema::{AWS, KUBERNETES, SCHEMA};
use super::validate::{check_aws, validate_aws};
use crate::settings::{AwsSettings, EksSettings, Redacted, WebIdentitySettings, expand_home};
use crate::terraform::framework::Block;
use crate::terraform::framework::values::object;
use crate::terraform::tfvalue::{AttributePath, Value};

struct FakeEnv(HashMap<&'static str, &'static str>);
impl Env for FakeEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).map(|s| s.to_string())
    }
    fn vars_with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        self.0
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(prefix).map(|r| (r.to_string(), v.to_string())))
            .collect()
    }
}

fn null_block(block: &Block) -> Value {
    let mut pairs: Vec<(&str, Value)> = block.attributes.iter().map(|a| (a.name, Value::Null)).collect();
    pairs.extend(block.blocks.iter().map(|b| (b.name, Value::Null)));
    object(pairs)
}

#[test]
fn explicit_values_win_over_environment() {
    let mut k = null_block(&KUBERNETES);
    if let Value::Object(m) = &mut k {
        m.insert("host".into(), Value::string("https://example:6443"));
    }
    let config = object([("kubernetes", k), ("aws", Value::Null)]);
    let env = FakeEnv(HashMap::from([
        ("KUBE_HOST", "https://env:6443"),
        ("KUBE_TOKEN", "t0k3n"),
        ("AWS_REGION", "eu-west-1"),
    ]));
    let s = parse(&config, &env);
    assert_eq!(s.kubernetes.host.as_deref(), Some("https://example:6443"));
    assert_eq!(s.kubernetes.token.as_deref(), Some("t0k3n"));
    assert_eq!(s.aws.region.as_deref(), Some("eu-west-1"));
    assert!(s.unknown.is_empty());
}

#[test]
fn kubeconfig_settings_come_from_hashicorp_kubernetes_env_vars() {
    let config = object([("kubernetes", null_block(&KUBERNETES)), ("aws", Value::Null)]);
    let env = FakeEnv(HashMap::from([
        ("KUBE_CONFIG_PATHS", "/a/kubeconfig::/b/kubeconfig"),
        ("KUBE_CTX_AUTH_INFO", "admin"),
        ("KUBE_CTX_CLUSTER", "prod"),
        ("KUBE_TLS_SERVER_NAME", "api.internal"),
        ("KUBE_PROXY_URL", "http://proxy:3128"),
    ]));
    let k = parse(&config, &env).kubernetes;
    assert_eq!(
        k.config_paths,
        vec!["/a/kubeconfig".to_string(), "/b/kubeconfig".to_string()]
    );
    assert_eq!(k.config_context_auth_info.as_deref(), Some("admin"));
    assert_eq!(k.config_context_cluster.as_deref(), Some("prod"));
    assert_eq!(k.tls_server_name.as_deref(), Some("api.internal"));
    assert_eq!(k.proxy_url.as_deref(), Some("http://proxy:3128"));

    // configuration wins over the environment
    let mut block = null_block(&KUBERNETES);
    if let Value::Object(m) = &mut block {
        m.insert(
            "config_paths".into(),
            Value::List(vec![Value::string("/c/kubeconfig")]),
        );
    }
    let config = object([("kubernetes", block), ("aws", Value::Null)]);
    assert_eq!(
        parse(&config, &env).kubernetes.config_paths,
        vec!["/c/kubeconfig".to_string()]
    );
}

#[test]
fn unknown_values_are_recorded_not_rejected() {
    let mut k = null_block(&KUBERNETES);
    if let Value::Object(m) = &mut k {
        m.insert("host".into(), Value::unknown());
    }
    let config = object([("kubernetes", k), ("aws", Value::Null)]);
    let s = parse(&config, &FakeEnv(HashMap::new()));
    assert_eq!(
        s.unknown,
        vec![AttributePath::root().attr("kubernetes").attr("host")]
    );
    assert_eq!(s.kubernetes.host, None);
}

#[test]
fn eks_block_is_parsed_and_its_unknowns_recorded() {
    let eks_block = KUBERNETES
        .blocks
        .iter()
        .find(|b| b.name == "eks")
        .expect("eks block");
    let mut eks = null_block(eks_block);
    if let Value::Object(m) = &mut eks {
        m.insert("cluster_name".into(), Value::string("demo"));
        m.insert(
            "role_arn".into(),
            Value::string("arn:aws:iam::123456789012:role/admin"),
        );
    }
    let mut k = null_block(&KUBERNETES);
    if let Value::Object(m) = &mut k {
        m.insert("eks".into(), eks.clone());
    }
    let config = object([("kubernetes", k.clone()), ("aws", Value::Null)]);
    let s = parse(&config, &FakeEnv(HashMap::new()));
    assert_eq!(
        s.kubernetes.eks,
        Some(EksSettings {
            cluster_name: "demo".into(),
            region: None,
            role_arn: Some("arn:aws:iam::123456789012:role/admin".into()),
        })
    );
    assert!(s.unknown.is_empty());

    // the cluster is created in the same apply: its name is unknown at plan time
    if let Value::Object(e) = &mut eks {
        e.insert("cluster_name".into(), Value::unknown());
    }
    if let Value::Object(m) = &mut k {
        m.insert("eks".into(), eks);
    }
    let config = object([("kubernetes", k), ("aws", Value::Null)]);
    let s = parse(&config, &FakeEnv(HashMap::new()));
    assert_eq!(
        s.unknown,
        vec![
            AttributePath::root()
                .attr("kubernetes")
                .attr("eks")
                .attr("cluster_name")
        ]
    );
}

#[test]
fn secrets_are_marked_sensitive() {
    let k = &*KUBERNETES;
    for name in ["token", "client_key"] {
        assert!(
            k.attributes.iter().any(|a| a.name == name && a.sensitive),
            "{name}"
        );
    }
}

#[test]
fn names_used_by_parse_exist() {
    let k = &*KUBERNETES;
    for name in [
        "host",
        "cluster_ca_certificate",
        "token",
        "client_certificate",
        "client_key",
        "insecure",
        "config_path",
        "config_paths",
        "config_context",
        "config_context_auth_info",
        "config_context_cluster",
        "tls_server_name",
        "proxy_url",
    ] {
        assert!(k.attributes.iter().any(|a| a.name == name), "{name}");
    }
    assert!(k.blocks.iter().any(|b| b.name == "exec"));
    let a = &*AWS;
    assert!(
        a.blocks.iter().any(|b| b.name == "assume_role") && a.blocks.iter().any(|b| b.name == "endpoints")
    );
}

fn aws_config(aws: Value) -> Value {
    object([("kubernetes", Value::Null), ("aws", aws)])
}

fn error_paths(diags: &crate::terraform::framework::Diagnostics) -> Vec<String> {
    diags
        .iter()
        .filter_map(|d| d.path.as_ref())
        .map(ToString::to_string)
        .collect()
}

/// What the schema's own validators say of `config`, as at validate and plan.
fn schema_diagnostics(config: &Value) -> crate::terraform::framework::Diagnostics {
    let mut diags = crate::terraform::framework::Diagnostics::new();
    crate::terraform::framework::schema::validate_attributes(
        &SCHEMA.attributes,
        &SCHEMA.blocks,
        config,
        &AttributePath::root(),
        &mut diags,
    );
    diags
}

/// Asserts the schema's verdict on `config`: no error when `ok`, else exactly one, at `path`
/// (`case` names the value in a failure). Returns the diagnostics for further checks.
fn assert_schema_verdict(
    config: &Value,
    ok: bool,
    path: &str,
    case: &str,
) -> crate::terraform::framework::Diagnostics {
    let diags = schema_diagnostics(config);
    if ok {
        assert!(!diags.has_errors(), "{case}: {diags}");
    } else {
        assert_eq!(error_paths(&diags), [path], "{case}: {diags}");
    }
    diags
}

#[test]
fn aws_credentials_and_role_settings_are_parsed() {
    let config = aws_config(object([
        ("access_key", Value::string("AKIAEXAMPLE")),
        ("secret_key", Value::string("s3cret")),
        ("token", Value::string("tok")),
        ("shared_config_files", Value::List(vec![Value::string("~/c")])),
        ("max_retries", Value::number(7)),
        (
            "assume_role",
            object([
                ("role_arn", Value::string("arn:aws:iam::123456789012:role/r")),
                ("duration", Value::string("1h30m")),
                (
                    "policy_arns",
                    Value::Set(vec![Value::string("arn:aws:iam::aws:policy/P")]),
                ),
                (
                    "tags",
                    Value::Map([("team".to_string(), Value::string("a"))].into()),
                ),
                ("transitive_tag_keys", Value::Set(vec![Value::string("team")])),
            ]),
        ),
        (
            "assume_role_with_web_identity",
            object([("web_identity_token", Value::string("eyJ"))]),
        ),
    ]));
    let env = FakeEnv(HashMap::from([
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/web"),
        ("AWS_ROLE_SESSION_NAME", "env-session"),
        ("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token"),
        ("AWS_CA_BUNDLE", "/etc/ca.pem"),
    ]));
    let s = parse(&config, &env).aws;
    assert_eq!(s.access_key, Some(Redacted("AKIAEXAMPLE".into())));
    assert_eq!(s.secret_key.as_ref().map(Redacted::expose), Some("s3cret"));
    assert_eq!(s.token.as_ref().map(Redacted::expose), Some("tok"));
    assert_eq!(s.shared_config_files, ["~/c"]);
    assert!(s.shared_credentials_files.is_empty());
    assert_eq!(s.max_retries, Some(7));
    assert_eq!(s.custom_ca_bundle.as_deref(), Some("/etc/ca.pem"));
    let r = s.assume_role.clone().unwrap_or_default();
    assert_eq!(r.duration, Some(std::time::Duration::from_secs(5400)));
    assert_eq!(r.policy_arns, ["arn:aws:iam::aws:policy/P"]);
    assert_eq!(r.tags.get("team").map(String::as_str), Some("a"));
    assert_eq!(r.transitive_tag_keys, ["team"]);
    let w = s.assume_role_with_web_identity.clone().unwrap_or_default();
    assert_eq!(w.role_arn.as_deref(), Some("arn:aws:iam::123456789012:role/web"));
    assert_eq!(w.session_name.as_deref(), Some("env-session"));
    // an inline token: the environment's token file is not taken as well
    assert_eq!(w.web_identity_token_file, None);
    // secrets never show in Debug output
    let shown = format!("{s:?}");
    assert!(
        !shown.contains("s3cret") && !shown.contains("eyJ") && !shown.contains("AKIAEXAMPLE"),
        "{shown}"
    );

    // max_retries = 0 is "not set", as in hashicorp/aws
    let zero = aws_config(object([("max_retries", Value::number(0))]));
    assert_eq!(parse(&zero, &FakeEnv(HashMap::new())).aws.max_retries, None);
}

#[test]
fn default_tags_come_over_their_environment_and_account_guards_conflict() {
    let config = aws_config(object([
        (
            "default_tags",
            object([(
                "tags",
                Value::Map(
                    [
                        ("env".to_string(), Value::string("prod")),
                        ("team".to_string(), Value::string("k")),
                    ]
                    .into(),
                ),
            )]),
        ),
        (
            "allowed_account_ids",
            Value::Set(vec![Value::string("123456789012")]),
        ),
    ]));
    let env = FakeEnv(HashMap::from([
        ("TF_AWS_DEFAULT_TAGS_env", "stage"),
        ("TF_AWS_DEFAULT_TAGS_cost", "42"),
    ]));
    let s = parse(&config, &env);
    let tags: Vec<(&str, &str)> = s
        .aws
        .default_tags
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(tags, [("cost", "42"), ("env", "prod"), ("team", "k")]);
    assert_eq!(s.aws.allowed_account_ids, ["123456789012"]);
    assert!(s.aws.forbidden_account_ids.is_empty());
    assert!(s.unknown.is_empty());

    // unknown default tags are recorded
    let unknown = aws_config(object([("default_tags", object([("tags", Value::unknown())]))]));
    let s = parse(&unknown, &FakeEnv(HashMap::new()));
    assert_eq!(
        s.unknown,
        [AttributePath::root()
            .attr("aws")
            .attr("default_tags")
            .attr("tags")]
    );

    let both = aws_config(object([
        (
            "allowed_account_ids",
            Value::Set(vec![Value::string("123456789012")]),
        ),
        (
            "forbidden_account_ids",
            Value::Set(vec![Value::string("210987654321")]),
        ),
    ]));
    let mut diags = crate::terraform::framework::Diagnostics::new();
    validate_aws(&both, &mut diags);
    assert_eq!(error_paths(&diags), ["aws.forbidden_account_ids"]);
}

#[test]
fn bad_account_ids_and_reserved_default_tag_keys_are_refused_on_the_attribute() {
    for (config, path) in [
        (
            aws_config(object([(
                "allowed_account_ids",
                Value::Set(vec![Value::string("12345")]),
            )])),
            "aws.allowed_account_ids",
        ),
        (
            aws_config(object([(
                "default_tags",
                object([(
                    "tags",
                    Value::Map(
                        [(
                            "terraform-provider-karpenter/resource-type".to_string(),
                            Value::string("x"),
                        )]
                        .into(),
                    ),
                )]),
            )])),
            "aws.default_tags.tags",
        ),
    ] {
        let diags = schema_diagnostics(&config);
        let paths = error_paths(&diags);
        assert!(
            paths.len() == 1 && paths[0].starts_with(path),
            "{path}: {paths:?}"
        );
    }
}

#[test]
fn static_key_parts_go_together() {
    for (set, expected) in [
        (vec!["access_key"], vec!["aws.secret_key"]),
        (vec!["secret_key"], vec!["aws.access_key"]),
        (vec!["token"], vec!["aws.token"]),
        (vec!["access_key", "token"], vec!["aws.secret_key"]),
        (vec!["access_key", "secret_key", "token"], vec![]),
    ] {
        let config = aws_config(object(set.iter().map(|n| (*n, Value::string("x")))));
        let mut diags = crate::terraform::framework::Diagnostics::new();
        validate_aws(&config, &mut diags);
        assert_eq!(error_paths(&diags), expected, "{set:?}: {diags}");
    }
    let both = aws_config(object([(
        "assume_role_with_web_identity",
        object([
            ("web_identity_token", Value::string("t")),
            ("web_identity_token_file", Value::string("/f")),
        ]),
    )]));
    let mut diags = crate::terraform::framework::Diagnostics::new();
    validate_aws(&both, &mut diags);
    assert_eq!(
        error_paths(&diags),
        ["aws.assume_role_with_web_identity.web_identity_token_file"]
    );
}

#[test]
fn role_durations_outside_sts_limits_are_refused_on_the_attribute() {
    for (duration, ok) in [
        ("15m", true),
        ("12h", true),
        ("1h", true),
        ("14m59s", false),
        ("13h", false),
        ("soon", false),
    ] {
        let config = aws_config(object([(
            "assume_role",
            object([
                ("role_arn", Value::string("arn:aws:iam::123456789012:role/r")),
                ("duration", Value::string(duration)),
            ]),
        )]));
        assert_schema_verdict(&config, ok, "aws.assume_role.duration", duration);
    }
}

#[test]
fn files_the_aws_block_names_must_be_readable() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let present = dir.path().join("credentials");
    std::fs::write(&present, "[default]\n").unwrap_or_else(|e| panic!("{e}"));
    let not_pem = dir.path().join("ca.pem");
    std::fs::write(&not_pem, "hello\n").unwrap_or_else(|e| panic!("{e}"));
    let missing = dir.path().join("missing").to_string_lossy().into_owned();
    let aws = AwsSettings {
        shared_credentials_files: vec![present.to_string_lossy().into_owned(), missing.clone()],
        custom_ca_bundle: Some(not_pem.to_string_lossy().into_owned()),
        assume_role_with_web_identity: Some(WebIdentitySettings {
            web_identity_token_file: Some(missing),
            ..Default::default()
        }),
        ..Default::default()
    };
    let diags = check_aws(&aws);
    assert_eq!(
        error_paths(&diags),
        [
            "aws.shared_credentials_files[1]",
            "aws.custom_ca_bundle",
            "aws.assume_role_with_web_identity.role_arn",
            "aws.assume_role_with_web_identity.web_identity_token_file",
        ],
        "{diags}"
    );
    assert!(diags.to_string().contains("holds no PEM certificate"), "{diags}");
    assert!(check_aws(&AwsSettings::default()).is_empty());
}

#[test]
fn a_leading_tilde_is_the_home_directory() {
    let Some(home) = std::env::var_os("HOME") else {
        return;
    };
    let home = std::path::PathBuf::from(home);
    assert_eq!(expand_home("~/.aws/config"), home.join(".aws/config"));
    assert_eq!(expand_home("~"), home);
    assert_eq!(expand_home("~other/x"), std::path::PathBuf::from("~other/x"));
    assert_eq!(expand_home("/abs/~/x"), std::path::PathBuf::from("/abs/~/x"));
}

#[test]
fn an_aws_region_that_is_not_a_region_is_refused_on_the_attribute() {
    for (region, ok) in [
        ("us-east-1", true),
        ("cn-north-1", true),
        ("moon-base", false),
        ("US-EAST-1", false),
    ] {
        let config = aws_config(object([("region", Value::string(region))]));
        let diags = assert_schema_verdict(&config, ok, "aws.region", region);
        assert_eq!(
            diags.to_string().contains("is not an AWS region name"),
            !ok,
            "{diags}"
        );
    }
}

#[test]
fn an_eks_region_that_is_not_a_region_is_refused_on_the_attribute() {
    for (region, ok) in [
        ("eu-west-1", true),
        ("us-gov-west-1", true),
        ("europe", false),
        ("eu-west", false),
    ] {
        let eks = object([
            ("cluster_name", Value::string("demo")),
            ("region", Value::string(region)),
        ]);
        let config = object([("kubernetes", object([("eks", eks)])), ("aws", Value::Null)]);
        let diags = assert_schema_verdict(&config, ok, "kubernetes.eks.region", region);
        assert_eq!(
            diags.to_string().contains("is not an AWS region name"),
            !ok,
            "{diags}"
        );
    }
}

#[test]
fn plan_health_is_on_unless_set_false_in_the_block_or_the_environment() {
    let with = |plan_health: Value, env: &[(&'static str, &'static str)]| {
        let config = object([
            ("plan_health", plan_health),
            ("kubernetes", Value::Null),
            ("aws", Value::Null),
        ]);
        parse(&config, &FakeEnv(env.iter().copied().collect())).no_plan_health
    };
    assert!(!with(Value::Null, &[]), "on by default");
    assert!(with(Value::Bool(false), &[]));
    assert!(
        !with(Value::Bool(true), &[("KARPENTER_PLAN_HEALTH", "false")]),
        "the block wins"
    );
    assert!(with(Value::Null, &[("KARPENTER_PLAN_HEALTH", "false")]));
    assert!(!with(Value::unknown(), &[]), "unknown: on");
}
