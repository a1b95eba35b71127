//! The provider block: its schema (`kubernetes {}` and `aws {}`, in the words of the
//! hashicorp/kubernetes and hashicorp/aws providers so configurations port over), and its
//! parsing into [`ProviderSettings`] with the usual environment-variable fallbacks.
//!
//! Configuration may be unknown during plan (the cluster is created in the same apply): the
//! unknown attributes are recorded, and whatever needs them fails only if it is used while they
//! are still unknown. Nothing here connects anywhere.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use crate::aws_names;
use crate::policy::arn::{self, Arn};
use crate::settings::{
    AssumeRoleSettings, AwsSettings, EksSettings, ExecSettings, KubernetesSettings, ProviderSettings,
    Redacted, WebIdentitySettings, expand_home,
};
use crate::terraform::framework::validate as v;
use crate::terraform::framework::{Attribute, Block, Schema};
use crate::terraform::tfvalue::{AttributePath, Type, Value};

static KUBERNETES: LazyLock<Block> = LazyLock::new(kubernetes_block);
static AWS: LazyLock<Block> = LazyLock::new(aws_block);

pub static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "The Karpenter provider manages Karpenter's custom resources in a Kubernetes cluster and \
         Karpenter's AWS resources (interruption queue, IAM roles, the nodes' EKS access entry). \
         Configuration may depend on resources created in the same apply (e.g. an EKS module's \
         outputs): while it is unknown, a plan reads nothing from the cluster or AWS, and the \
         clients are built when first needed.",
        vec![cluster_name_attribute()],
    )
    .with_blocks(vec![KUBERNETES.clone(), AWS.clone()])
});

/// The top-level `cluster_name`: the EKS cluster Karpenter runs in, for what is scoped by it
/// when the provider does not authenticate with `kubernetes { eks {} }`.
fn cluster_name_attribute() -> Attribute {
    Attribute::string("cluster_name")
        .describe(
            "Name of the EKS cluster Karpenter runs in. `force_destroy` scopes its cleanup by it (Karpenter tags what \
             it creates with the cluster's name). Set it when the provider reaches the cluster another way than \
             `kubernetes { eks {} }` (e.g. `exec` with `aws eks get-token`, a kubeconfig or a token); with \
             `kubernetes { eks { cluster_name } }` it defaults to that name, and must equal it when both are set.",
        )
        .validate(aws_names::eks_cluster_name_validator())
}

fn kubernetes_block() -> Block {
    Block::single(
        "kubernetes",
        vec![
            Attribute::string("host")
                .describe("The Kubernetes API server URL, e.g. an EKS cluster endpoint.")
                .env(&["KUBE_HOST"]),
            Attribute::string("cluster_ca_certificate")
                .describe("PEM-encoded CA certificate of the API server.")
                .env(&["KUBE_CLUSTER_CA_CERT_DATA"]),
            Attribute::string("token")
                .sensitive()
                .describe("Bearer token for the API server.")
                .env(&["KUBE_TOKEN"]),
            Attribute::string("client_certificate")
                .describe("PEM-encoded client certificate for TLS authentication.")
                .env(&["KUBE_CLIENT_CERT_DATA"]),
            Attribute::string("client_key")
                .sensitive()
                .describe("PEM-encoded private key of `client_certificate`.")
                .env(&["KUBE_CLIENT_KEY_DATA"]),
            Attribute::bool("insecure")
                .describe("Skip verification of the server's certificate. Never use this in production.")
                .env(&["KUBE_INSECURE"]),
            Attribute::string("config_path")
                .describe("Path to a kubeconfig file.")
                .env(&["KUBE_CONFIG_PATH"]),
            Attribute::list_of("config_paths", Type::String)
                .describe("Paths to kubeconfig files, merged in order as kubectl merges `KUBECONFIG` (for each setting, the first file that has it wins). Cannot be combined with `config_path`. From `KUBE_CONFIG_PATHS` (separated by `:`, `;` on Windows) when not set.")
                .env(&["KUBE_CONFIG_PATHS"]),
            Attribute::string("config_context")
                .describe("Context to use from the kubeconfig file.")
                .env(&["KUBE_CTX"]),
            Attribute::string("config_context_auth_info")
                .describe("Kubeconfig user to use instead of the context's (kubectl's `--user`).")
                .env(&["KUBE_CTX_AUTH_INFO"]),
            Attribute::string("config_context_cluster")
                .describe("Kubeconfig cluster to use instead of the context's (kubectl's `--cluster`).")
                .env(&["KUBE_CTX_CLUSTER"]),
            Attribute::string("tls_server_name")
                .describe("Server name sent for SNI and checked against the server's certificate, when it differs from the name in `host` (e.g. `host` is an IP address or a tunnel). Applies to a kubeconfig's cluster too.")
                .env(&["KUBE_TLS_SERVER_NAME"])
                .validate(v::non_empty()),
            Attribute::string("proxy_url")
                .describe("HTTP proxy for every request to the API server, e.g. `http://proxy.internal:3128` (the provider tunnels through it with CONNECT). Applies to a kubeconfig's cluster too.")
                .env(&["KUBE_PROXY_URL"])
                .validate(v::matches(r"^http://[^\s/]+(/[^\s]*)?$", "an http:// proxy URL (https:// and socks5:// proxies are not supported)")),
        ],
    )
    .describe("How to reach the Kubernetes cluster Karpenter runs in. Same attribute names as the hashicorp/kubernetes provider.")
    .with_blocks(vec![
        Block::single(
            "exec",
            vec![
                Attribute::string("api_version")
                    .required()
                    .describe("API version of the credential plugin, e.g. `client.authentication.k8s.io/v1beta1`.")
                    .validate(v::one_of(&[
                        "client.authentication.k8s.io/v1",
                        "client.authentication.k8s.io/v1beta1",
                    ])),
                Attribute::string("command").required().describe("Command to run, e.g. `aws`.").validate(v::non_empty()),
                Attribute::list_of("args", Type::String).describe("Arguments, e.g. `[\"eks\", \"get-token\", \"--cluster-name\", \"demo\"]`."),
                Attribute::map_of("env", Type::String).sensitive().describe("Extra environment variables for the command (they often carry credentials for the plugin)."),
            ],
        )
        .describe("A credential plugin that prints a token, as `kubectl` runs it."),
        Block::single(
            "eks",
            vec![
                Attribute::string("cluster_name")
                    .required()
                    .describe("Name of the EKS cluster. Its endpoint and CA are looked up with `DescribeCluster` when `host` / `cluster_ca_certificate` are not set.")
                    .validate(aws_names::eks_cluster_name_validator()),
                Attribute::string("region")
                    .describe("Region of the cluster; the `aws {}` block's region when not set."),
                Attribute::string("role_arn")
                    .describe("Role to assume (with the credentials of the `aws {}` block) before generating the token.")
                    .validate(role_arn()),
            ],
        )
        .describe("Native EKS authentication, recommended on EKS: the provider generates the bearer token itself, as `aws eks get-token` does (a presigned STS GetCallerIdentity URL), with the credentials of the `aws {}` block, and renews it before it expires. No aws CLI or kubeconfig needed."),
    ])
}

fn aws_block() -> Block {
    Block::single(
        "aws",
        vec![
            Attribute::string("region")
                .describe("AWS region for SQS, EventBridge and STS calls.")
                .env(&["AWS_REGION", "AWS_DEFAULT_REGION"]),
            Attribute::string("profile").describe("Named profile from the shared AWS config files.").env(&["AWS_PROFILE"]),
            // credentials, files, retries and trust as hashicorp/aws names them (issue #21)
            Attribute::string("access_key")
                .sensitive()
                .describe("AWS access key ID. Set together with `secret_key`; static keys in the configuration take precedence over the credential chain. When not set, the chain is used (it reads `AWS_ACCESS_KEY_ID` first).")
                .validate(v::non_empty()),
            Attribute::string("secret_key")
                .sensitive()
                .describe("AWS secret access key. Set together with `access_key`. When not set, the chain is used (it reads `AWS_SECRET_ACCESS_KEY` first).")
                .validate(v::non_empty()),
            Attribute::string("token")
                .sensitive()
                .describe("Session token of temporary static credentials; needs `access_key` and `secret_key`. When not set with them, the chain is used (it reads `AWS_SESSION_TOKEN`).")
                .validate(v::non_empty()),
            Attribute::list_of("shared_config_files", Type::String)
                .describe("Shared config files to read profiles from, in place of `AWS_CONFIG_FILE` or `~/.aws/config`. A leading `~` is the home directory.")
                .validate(v::each(v::non_empty())),
            Attribute::list_of("shared_credentials_files", Type::String)
                .describe("Shared credentials files to read profiles from, in place of `AWS_SHARED_CREDENTIALS_FILE` or `~/.aws/credentials`. A leading `~` is the home directory.")
                .validate(v::each(v::non_empty())),
            Attribute::number("max_retries")
                .describe("Maximum number of attempts of an AWS call that is throttled or fails transiently, with exponential backoff between them (hashicorp/aws semantics: the number becomes the SDK's maximum attempts; `0` means not set). When not set, `AWS_MAX_ATTEMPTS` or the profile's `max_attempts`, else 3.")
                .validate(v::int_range(0, 100)),
            Attribute::string("custom_ca_bundle")
                .describe("File holding a PEM bundle of certificate authorities trusted by every AWS client, beside the system's roots (e.g. a TLS-inspecting proxy or a private endpoint).")
                .env(&["AWS_CA_BUNDLE"])
                .validate(v::non_empty()),
            // account guards, as hashicorp/aws names them (issue #21)
            Attribute::set_of("allowed_account_ids", Type::String)
                .describe("AWS account IDs the provider may change anything in. Before its first call that creates, changes or deletes anything, the provider asks STS (`GetCallerIdentity`, once per run) which account its credentials belong to, and fails without touching anything when that account is not listed. Conflicts with `forbidden_account_ids`.")
                .validate(v::each(aws_names::aws_account_id_validator())),
            Attribute::set_of("forbidden_account_ids", Type::String)
                .describe("AWS account IDs the provider must not change anything in: checked like `allowed_account_ids`, failing when the credentials' account is listed. Conflicts with `allowed_account_ids`.")
                .validate(v::each(aws_names::aws_account_id_validator())),
        ],
    )
    .describe("AWS access for every AWS call the provider makes: IAM (the roles), SQS and EventBridge (the interruption queue), EKS (access entries, the Auto Mode check, and `kubernetes { eks {} }`'s token and cluster lookup), EC2 (`force_destroy`'s cleanup, `karpenter_instance_types` with `source = \"ec2\"`) and STS (the account guards): static keys when set, else the standard credential chain (environment, profile, SSO, web identity, instance metadata); then `assume_role_with_web_identity` and `assume_role`, in that order, when set.")
    .with_blocks(vec![
        Block::single(
            "assume_role",
            vec![
                Attribute::string("role_arn").required().describe("Role to assume.").validate(role_arn()),
                Attribute::string("session_name").describe("Session name for the assumed role."),
                Attribute::string("external_id").describe("External ID required by the role's trust policy."),
                Attribute::string("duration")
                    .describe("How long the role's credentials last, from `15m` to `12h` (the role's maximum session duration must allow it); they are renewed before they expire. Default: 1 hour.")
                    .validate(role_duration()),
                session_policy(),
                session_policy_arns(),
                Attribute::map_of("tags", Type::String)
                    .describe("Session tags passed when assuming the role."),
                Attribute::set_of("transitive_tag_keys", Type::String)
                    .describe("Keys of `tags` that carry over to roles assumed from this session (role chaining)."),
            ],
        )
        .describe("Assume this role for every AWS call, with the credentials of the chain (or of `assume_role_with_web_identity`)."),
        Block::single(
            "assume_role_with_web_identity",
            vec![
                Attribute::string("role_arn")
                    .describe("Role to assume with the web identity token.")
                    .env(&["AWS_ROLE_ARN"])
                    .validate(role_arn()),
                Attribute::string("session_name")
                    .describe("Session name for the assumed role.")
                    .env(&["AWS_ROLE_SESSION_NAME"]),
                Attribute::string("web_identity_token")
                    .sensitive()
                    .describe("The OAuth 2.0 or OpenID Connect ID token. Exactly one of this and `web_identity_token_file`.")
                    .validate(v::non_empty()),
                Attribute::string("web_identity_token_file")
                    .describe("File holding the token, read again each time the credentials are renewed (e.g. a projected service account token). Exactly one of this and `web_identity_token`.")
                    .env(&["AWS_WEB_IDENTITY_TOKEN_FILE"])
                    .validate(v::non_empty()),
                Attribute::string("duration")
                    .describe("How long the role's credentials last, from `15m` to `12h`. Default: 1 hour.")
                    .validate(role_duration()),
                session_policy(),
                session_policy_arns(),
            ],
        )
        .describe("Assume a role with a web identity token (OIDC) through STS AssumeRoleWithWebIdentity; its credentials are then used directly, or to assume `assume_role`."),
        Block::single(
            "default_tags",
            vec![Attribute::map_of("tags", Type::String)
                .describe(format!(
                    "Tags every AWS part the provider creates carries (interruption queue and rules, roles, instance profile, managed policies), merged with each resource's own `tags`; a resource's tag wins over a default tag of the same key. Each resource shows the merged set in `tags_all`. `TF_AWS_DEFAULT_TAGS_<key>` environment variables add default tags, and these win over them. Keys starting with `{RESERVED_TAG_PREFIX}` are reserved for the provider's bookkeeping."
                ))
                .validate(v::each_key(v::length(1, 128)))
                .validate(v::each_key(reserved_default_tag_key()))],
        )
        .describe("Default tags for every AWS part the provider creates, as in hashicorp/aws."),
        Block::single(
            "endpoints",
            ENDPOINT_SERVICES.iter().map(|s| endpoint(s)).collect(),
        )
        .describe("Custom service endpoints (e.g. a local test environment)."),
    ])
}

/// Tag keys under this prefix are the provider's bookkeeping (e.g. the ownership tag).
pub const RESERVED_TAG_PREFIX: &str = "terraform-provider-karpenter/";

/// The environment variables that add default tags: `TF_AWS_DEFAULT_TAGS_<key>`, as in
/// hashicorp/aws.
pub const DEFAULT_TAGS_ENV_PREFIX: &str = "TF_AWS_DEFAULT_TAGS_";

/// Refuses a default tag key in the provider's reserved namespace.
fn reserved_default_tag_key() -> impl v::Validator {
    v::check(
        format!("Must not start with `{RESERVED_TAG_PREFIX}` (reserved for the provider)."),
        |value| {
            let s = value.as_str()?;
            s.starts_with(RESERVED_TAG_PREFIX).then(|| {
                format!(
                    "{s:?} is reserved: the provider tags the parts it creates with keys under {RESERVED_TAG_PREFIX:?} to recognise them. Use another key."
                )
            })
        },
    )
}

/// Shortest and longest session of an assumed role (STS `DurationSeconds`).
pub const ROLE_DURATION_MIN: std::time::Duration = std::time::Duration::from_secs(15 * 60);
pub const ROLE_DURATION_MAX: std::time::Duration = std::time::Duration::from_secs(12 * 60 * 60);

/// An assumed role's session length: a Go duration between 15 minutes and 12 hours.
fn role_duration() -> impl v::Validator {
    v::check(
        "Must be a duration from `15m` to `12h`, such as `1h` or `90m`.",
        |value| {
            let s = value.as_str()?;
            match v::parse_go_duration(s) {
                None => Some(format!(
                    "{s:?} is not a duration: use a number with a unit, such as \"1h\" or \"90m\"."
                )),
                Some(d) if d < ROLE_DURATION_MIN || d > ROLE_DURATION_MAX => Some(format!(
                    "{s:?} is outside what STS allows: use a duration from \"15m\" to \"12h\"."
                )),
                Some(_) => None,
            }
        },
    )
}

/// A JSON document (a session policy).
/// The session policy both role assumptions accept.
fn session_policy() -> Attribute {
    Attribute::string("policy")
        .describe(
            "IAM policy document (JSON) further restricting the assumed role's permissions for this session.",
        )
        .validate(json_document())
}

/// The session's managed policies, for both role assumptions.
fn session_policy_arns() -> Attribute {
    Attribute::set_of("policy_arns", Type::String)
        .describe(
            "ARNs of managed policies further restricting the assumed role's permissions for this session.",
        )
        .validate(v::each(policy_arn()))
}

fn role_arn() -> impl v::Validator {
    arn::validator(
        "an IAM role ARN (arn:aws:iam::123456789012:role/NAME)",
        Arn::parse_role,
    )
}

fn json_document() -> impl v::Validator {
    v::check("Must be a JSON policy document.", |value| {
        let s = value.as_str()?;
        match serde_json::from_str::<serde_json::Value>(s) {
            Ok(serde_json::Value::Object(_)) => None,
            Ok(_) => {
                Some("The policy must be a JSON object ({\"Version\": ..., \"Statement\": [...]}).".into())
            }
            Err(e) => Some(format!(
                "The policy is not valid JSON ({e}): write it with jsonencode() or a data.aws_iam_policy_document's json."
            )),
        }
    })
}

fn policy_arn() -> impl v::Validator {
    arn::validator(
        "an IAM policy ARN (arn:aws:iam::aws:policy/NAME or arn:aws:iam::123456789012:policy/NAME)",
        Arn::parse_policy,
    )
}

/// The services whose endpoints can be overridden, by their `endpoints {}` attribute name.
pub const ENDPOINT_SERVICES: &[&str] = &["iam", "sqs", "events", "sts", "eks", "ec2"];

fn endpoint(name: &'static str) -> Attribute {
    let service = match name {
        "events" => "EventBridge",
        other => other,
    };
    Attribute::string(name)
        .describe(format!(
            "Endpoint URL for {}.",
            service.to_uppercase().replace("EVENTBRIDGE", "EventBridge")
        ))
        .validate(v::matches(r"^https?://[^\s]+$", "an http(s) URL"))
}

/// Reads environment variables; tests pass their own.
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
    /// Every set variable whose name starts with `prefix`, as (name without the prefix, value).
    fn vars_with_prefix(&self, prefix: &str) -> Vec<(String, String)>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
    fn vars_with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter_map(|(k, v)| k.strip_prefix(prefix).map(|rest| (rest.to_string(), v)))
            .filter(|(k, _)| !k.is_empty())
            .collect()
    }
}

struct Reader<'a> {
    env: &'a dyn Env,
    unknown: Vec<AttributePath>,
}

/// The environment variables an attribute of `block` falls back to.
fn env_of(block: &Block, name: &str) -> &'static [&'static str] {
    block
        .attributes
        .iter()
        .find(|a| a.name == name)
        .map_or(&[], |a| a.env)
}

impl Reader<'_> {
    fn env(&self, vars: &[&str]) -> Option<String> {
        vars.iter().find_map(|name| self.env.var(name))
    }

    /// A string attribute; when null, the first set environment variable of `env`.
    fn string(&mut self, block: &Value, path: &AttributePath, name: &str, env: &[&str]) -> Option<String> {
        match block.get(name) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Unknown(_)) => {
                self.unknown.push(path.attr(name));
                None
            }
            _ => self.env(env),
        }
    }

    fn bool(&mut self, block: &Value, path: &AttributePath, name: &str, env: &[&str]) -> bool {
        match block.get(name) {
            Some(Value::Bool(b)) => *b,
            Some(Value::Unknown(_)) => {
                self.unknown.push(path.attr(name));
                false
            }
            _ => self
                .env(env)
                .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes")),
        }
    }

    fn strings(&mut self, block: &Value, path: &AttributePath, name: &str) -> Vec<String> {
        match block.get(name) {
            Some(v) if !v.is_wholly_known() => {
                self.unknown.push(path.attr(name));
                Vec::new()
            }
            Some(v) => v
                .as_elements()
                .unwrap_or_default()
                .iter()
                .filter_map(|e| e.as_str().map(str::to_string))
                .collect(),
            None => Vec::new(),
        }
    }

    /// A list of paths; when null, the first set environment variable of `env`, split at the
    /// platform's path-list separator as `KUBECONFIG` is.
    fn paths(&mut self, block: &Value, path: &AttributePath, name: &str, env: &[&str]) -> Vec<String> {
        match block.get(name) {
            Some(v) if !v.is_null() => self.strings(block, path, name),
            _ => self
                .env(env)
                .map(|joined| {
                    std::env::split_paths(&joined)
                        .map(|p| p.to_string_lossy().into_owned())
                        .filter(|p| !p.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// A whole, non-negative number attribute (validated elsewhere); null when not set.
    fn count(&mut self, block: &Value, path: &AttributePath, name: &str) -> Option<u32> {
        match block.get(name) {
            Some(Value::Unknown(_)) => {
                self.unknown.push(path.attr(name));
                None
            }
            Some(Value::Number(n)) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
            _ => None,
        }
    }

    /// A Go duration string attribute (validated by the schema), as a `Duration`.
    fn duration(&mut self, block: &Value, path: &AttributePath, name: &str) -> Option<std::time::Duration> {
        self.string(block, path, name, &[])
            .and_then(|s| v::parse_go_duration(&s))
    }

    fn string_map(&mut self, block: &Value, path: &AttributePath, name: &str) -> BTreeMap<String, String> {
        match block.get(name) {
            Some(v) if !v.is_wholly_known() => {
                self.unknown.push(path.attr(name));
                BTreeMap::new()
            }
            Some(v) => v
                .as_entries()
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect(),
            None => BTreeMap::new(),
        }
    }
}

/// A nested block's value, when set.
fn present<'a>(parent: &'a Value, name: &str) -> Option<&'a Value> {
    parent.get(name).filter(|b| !b.is_null())
}

/// Rules of the `aws {}` block across attributes, checked at validate time (values that are
/// still unknown are not judged): static key parts go together, and a web identity comes from
/// one place.
/// The top-level `cluster_name` and `kubernetes { eks { cluster_name } }` name one cluster.
pub fn validate_cluster_name(config: &Value, diags: &mut crate::terraform::framework::Diagnostics) {
    let top = config.get("cluster_name").and_then(Value::as_str);
    let eks = config
        .get("kubernetes")
        .and_then(|k| k.get("eks"))
        .and_then(|e| e.get("cluster_name"))
        .and_then(Value::as_str);
    if let (Some(top), Some(eks)) = (top, eks)
        && top != eks
    {
        diags.error_at(
            &AttributePath::root().attr("cluster_name"),
            "Two different cluster names",
            format!(
                "cluster_name is {top:?} but kubernetes.eks.cluster_name is {eks:?}. They name the same cluster: \
                 remove cluster_name (it defaults to the eks block's) or make the two equal."
            ),
        );
    }
}

pub fn validate_aws(config: &Value, diags: &mut crate::terraform::framework::Diagnostics) {
    let Some(a) = present(config, "aws") else {
        return;
    };
    let ap = AttributePath::root().attr("aws");
    let set = |v: &Value, name: &str| v.get(name).is_some_and(|x| !x.is_null());
    let (access, secret, token) = (set(a, "access_key"), set(a, "secret_key"), set(a, "token"));
    if access && !secret {
        diags.error_at(
            &ap.attr("secret_key"),
            "Incomplete static AWS credentials",
            "aws.access_key is set but aws.secret_key is not: set both, or remove access_key to use the \
             credential chain (environment, profile, instance role).",
        );
    }
    if secret && !access {
        diags.error_at(
            &ap.attr("access_key"),
            "Incomplete static AWS credentials",
            "aws.secret_key is set but aws.access_key is not: set both, or remove secret_key to use the \
             credential chain (environment, profile, instance role).",
        );
    }
    if token && !(access || secret) {
        diags.error_at(
            &ap.attr("token"),
            "Session token without keys",
            "aws.token belongs to static credentials: set aws.access_key and aws.secret_key with it, or \
             remove it (AWS_SESSION_TOKEN is read with the environment's keys).",
        );
    }
    if set(a, "allowed_account_ids") && set(a, "forbidden_account_ids") {
        diags.error_at(
            &ap.attr("forbidden_account_ids"),
            "Conflicting account guards",
            "aws.allowed_account_ids and aws.forbidden_account_ids cannot both be set: list the accounts the \
             provider may work in (allowed_account_ids), or those it must not (forbidden_account_ids).",
        );
    }
    if let Some(web) = present(a, "assume_role_with_web_identity")
        && set(web, "web_identity_token")
        && set(web, "web_identity_token_file")
    {
        diags.error_at(
            &ap.attr("assume_role_with_web_identity")
                .attr("web_identity_token_file"),
            "Conflicting web identity token settings",
            "Set only one of web_identity_token and web_identity_token_file.",
        );
    }
}

/// Checks what the `aws {}` settings name outside the configuration, at configure time: the
/// files must be readable (and the CA bundle hold certificates), and a web identity must have
/// a role and a token from the block or the environment. Diagnostics carry the attribute path.
pub fn check_aws(aws: &AwsSettings) -> crate::terraform::framework::Diagnostics {
    let mut diags = crate::terraform::framework::Diagnostics::new();
    let ap = AttributePath::root().attr("aws");
    for (name, files) in [
        ("shared_config_files", &aws.shared_config_files),
        ("shared_credentials_files", &aws.shared_credentials_files),
    ] {
        for (i, file) in files.iter().enumerate() {
            if let Err(e) = std::fs::File::open(expand_home(file)) {
                diags.error_at(
                    &ap.attr(name).index(i),
                    "Unreadable shared AWS file",
                    format!(
                        "{file} cannot be read ({e}). Fix the path (a leading ~ is the home directory) \
                         or remove it from aws.{name}."
                    ),
                );
            }
        }
    }
    if let Some(bundle) = &aws.custom_ca_bundle {
        let path = ap.attr("custom_ca_bundle");
        match std::fs::read(expand_home(bundle)) {
            Err(e) => diags.error_at(
                &path,
                "Unreadable CA bundle",
                format!(
                    "{bundle} (aws.custom_ca_bundle or AWS_CA_BUNDLE) cannot be read ({e}). Point it at a \
                     PEM file of certificate authorities."
                ),
            ),
            Ok(pem) => {
                if let Err(problem) = crate::aws::config::pem_certificates(&pem) {
                    diags.error_at(
                        &path,
                        "Invalid CA bundle",
                        format!(
                            "{bundle} (aws.custom_ca_bundle or AWS_CA_BUNDLE) {problem}. It must hold \
                             PEM certificates (-----BEGIN CERTIFICATE----- ...)."
                        ),
                    );
                }
            }
        }
    }
    if let Some(web) = &aws.assume_role_with_web_identity {
        let wp = ap.attr("assume_role_with_web_identity");
        if web.role_arn.is_none() {
            diags.error_at(
                &wp.attr("role_arn"),
                "Web identity role missing",
                "assume_role_with_web_identity needs the role to assume: set role_arn, or AWS_ROLE_ARN in \
                 the environment.",
            );
        }
        match (&web.web_identity_token, &web.web_identity_token_file) {
            (None, None) => diags.error_at(
                &wp.attr("web_identity_token_file"),
                "Web identity token missing",
                "assume_role_with_web_identity needs a token: set web_identity_token or \
                 web_identity_token_file, or AWS_WEB_IDENTITY_TOKEN_FILE in the environment.",
            ),
            (None, Some(file)) => {
                if let Err(e) = std::fs::read(expand_home(file)) {
                    diags.error_at(
                        &wp.attr("web_identity_token_file"),
                        "Unreadable web identity token file",
                        format!(
                            "{file} (web_identity_token_file or AWS_WEB_IDENTITY_TOKEN_FILE) cannot be \
                             read ({e}). Fix the path, or pass the token itself as web_identity_token."
                        ),
                    );
                }
            }
            _ => {}
        }
    }
    diags
}

/// Resolves the provider configuration (which may hold unknowns) against the environment.
pub fn parse(config: &Value, env: &dyn Env) -> ProviderSettings {
    let mut r = Reader {
        env,
        unknown: Vec::new(),
    };
    let root = AttributePath::root();

    let k = config.get("kubernetes").unwrap_or(&Value::Null);
    let kp = root.attr("kubernetes");
    let ks = |r: &mut Reader, name: &str| r.string(k, &kp, name, env_of(&KUBERNETES, name));
    let mut kubernetes = KubernetesSettings {
        host: ks(&mut r, "host"),
        cluster_ca_certificate: ks(&mut r, "cluster_ca_certificate"),
        token: ks(&mut r, "token"),
        client_certificate: ks(&mut r, "client_certificate"),
        client_key: ks(&mut r, "client_key"),
        insecure: r.bool(k, &kp, "insecure", env_of(&KUBERNETES, "insecure")),
        config_path: ks(&mut r, "config_path"),
        config_paths: r.paths(k, &kp, "config_paths", env_of(&KUBERNETES, "config_paths")),
        config_context: ks(&mut r, "config_context"),
        config_context_auth_info: ks(&mut r, "config_context_auth_info"),
        config_context_cluster: ks(&mut r, "config_context_cluster"),
        tls_server_name: ks(&mut r, "tls_server_name"),
        proxy_url: ks(&mut r, "proxy_url"),
        exec: None,
        eks: None,
    };
    if let Some(exec) = present(k, "exec") {
        let p = kp.attr("exec");
        kubernetes.exec = Some(ExecSettings {
            api_version: r.string(exec, &p, "api_version", &[]).unwrap_or_default(),
            command: r.string(exec, &p, "command", &[]).unwrap_or_default(),
            args: r.strings(exec, &p, "args"),
            env: r.string_map(exec, &p, "env"),
        });
    }
    if let Some(eks) = present(k, "eks") {
        let p = kp.attr("eks");
        kubernetes.eks = Some(EksSettings {
            cluster_name: r.string(eks, &p, "cluster_name", &[]).unwrap_or_default(),
            region: r.string(eks, &p, "region", &[]),
            role_arn: r.string(eks, &p, "role_arn", &[]),
        });
    }

    let a = config.get("aws").unwrap_or(&Value::Null);
    let ap = root.attr("aws");
    let mut aws = AwsSettings {
        region: r.string(a, &ap, "region", env_of(&AWS, "region")),
        profile: r.string(a, &ap, "profile", env_of(&AWS, "profile")),
        assume_role: None,
        endpoints: BTreeMap::new(),
        // the environment's keys and shared files are left to the SDK's chain, which reads them
        access_key: r.string(a, &ap, "access_key", &[]).map(Redacted),
        secret_key: r.string(a, &ap, "secret_key", &[]).map(Redacted),
        token: r.string(a, &ap, "token", &[]).map(Redacted),
        shared_config_files: r.strings(a, &ap, "shared_config_files"),
        shared_credentials_files: r.strings(a, &ap, "shared_credentials_files"),
        max_retries: r.count(a, &ap, "max_retries").filter(|n| *n > 0),
        custom_ca_bundle: r.string(a, &ap, "custom_ca_bundle", env_of(&AWS, "custom_ca_bundle")),
        assume_role_with_web_identity: None,
        default_tags: env
            .vars_with_prefix(DEFAULT_TAGS_ENV_PREFIX)
            .into_iter()
            .collect(),
        allowed_account_ids: r.strings(a, &ap, "allowed_account_ids"),
        forbidden_account_ids: r.strings(a, &ap, "forbidden_account_ids"),
    };
    match a.get("default_tags") {
        Some(Value::Unknown(_)) => r.unknown.push(ap.attr("default_tags")),
        Some(block) if !block.is_null() => {
            let tags = r.string_map(block, &ap.attr("default_tags"), "tags");
            aws.default_tags.extend(tags);
        }
        _ => {}
    }
    if let Some(assume) = present(a, "assume_role") {
        let p = ap.attr("assume_role");
        aws.assume_role = Some(AssumeRoleSettings {
            role_arn: r.string(assume, &p, "role_arn", &[]).unwrap_or_default(),
            session_name: r.string(assume, &p, "session_name", &[]),
            external_id: r.string(assume, &p, "external_id", &[]),
            duration: r.duration(assume, &p, "duration"),
            policy: r.string(assume, &p, "policy", &[]),
            policy_arns: r.strings(assume, &p, "policy_arns"),
            tags: r.string_map(assume, &p, "tags"),
            transitive_tag_keys: r.strings(assume, &p, "transitive_tag_keys"),
        });
    }
    if let Some(web) = present(a, "assume_role_with_web_identity") {
        let p = ap.attr("assume_role_with_web_identity");
        let block = AWS
            .blocks
            .iter()
            .find(|b| b.name == "assume_role_with_web_identity");
        let env = |name: &str| block.map_or(&[][..], |b| env_of(b, name));
        aws.assume_role_with_web_identity = Some(WebIdentitySettings {
            role_arn: r.string(web, &p, "role_arn", env("role_arn")),
            session_name: r.string(web, &p, "session_name", env("session_name")),
            web_identity_token: r.string(web, &p, "web_identity_token", &[]).map(Redacted),
            // the token file from the environment only when no token is configured
            web_identity_token_file: match web.get("web_identity_token") {
                Some(t) if !t.is_null() => r.string(web, &p, "web_identity_token_file", &[]),
                _ => r.string(web, &p, "web_identity_token_file", env("web_identity_token_file")),
            },
            duration: r.duration(web, &p, "duration"),
            policy: r.string(web, &p, "policy", &[]),
            policy_arns: r.strings(web, &p, "policy_arns"),
        });
    }
    if let Some(endpoints) = present(a, "endpoints") {
        let p = ap.attr("endpoints");
        for service in ENDPOINT_SERVICES {
            if let Some(url) = r.string(endpoints, &p, service, &[]) {
                aws.endpoints.insert(service.to_string(), url);
            }
        }
    }
    let cluster_name = r
        .string(config, &root, "cluster_name", &[])
        .or_else(|| kubernetes.eks.as_ref().map(|e| e.cluster_name.clone()))
        .filter(|c| !c.is_empty());
    ProviderSettings {
        cluster_name,
        kubernetes,
        aws,
        no_plan_health: false,
        unknown: r.unknown,
    }
}

#[cfg(test)]
mod tests;
