//! The provider block's schema: the top-level `cluster_name` and the `kubernetes {}` and
//! `aws {}` blocks, in the words of the hashicorp/kubernetes and hashicorp/aws providers so
//! configurations port over, each attribute with its environment-variable fallbacks (`parse`
//! reads them from here) and its validators. A new attribute is one entry here and its read in
//! `parse`.

use std::sync::LazyLock;

use crate::aws_names;
use crate::policy::arn;
use crate::terraform::framework::validate as v;
use crate::terraform::framework::{Attribute, Block, Schema};
use crate::terraform::tfvalue::Type;

pub(super) static KUBERNETES: LazyLock<Block> = LazyLock::new(kubernetes_block);
pub(super) static AWS: LazyLock<Block> = LazyLock::new(aws_block);

pub static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "The Karpenter provider manages Karpenter's custom resources in a Kubernetes cluster and \
         Karpenter's AWS resources (interruption queue, IAM roles, the nodes' EKS access entry). \
         Configuration may depend on resources created in the same apply (e.g. an EKS module's \
         outputs): while it is unknown, a plan reads nothing from the cluster or AWS, and the \
         clients are built when first needed.",
        vec![cluster_name_attribute(), plan_health_attribute()],
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

/// `plan_health`: whether a plan says what Karpenter reports wrong with what it manages.
fn plan_health_attribute() -> Attribute {
    Attribute::bool("plan_health")
        .describe(
            "Whether a plan that refreshes Karpenter's objects also says, as warnings, what Karpenter reports wrong \
             with them: status conditions that fail for the current spec (with Karpenter's reason and message), a \
             pool's NodeClaims that cannot launch or never joined, whether Karpenter runs at all, and an interruption \
             queue that nothing reads. Default `true`. It reads what the refresh reads, plus one `list` of \
             `leases` (coordination.k8s.io) and one `list` of `nodeclaims` (karpenter.sh) per plan (the one the \
             drift preview makes too) and the queue's `sqs:GetQueueAttributes` of its refresh; `false` reads and says \
             none of it (and needs none of those permissions for it). `-refresh=false` reads nothing either.",
        )
        .env(&["KARPENTER_PLAN_HEALTH"])
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
                    .describe("Region of the cluster; the `aws {}` block's region when not set.")
                    .validate(aws_names::aws_region_validator()),
                Attribute::string("role_arn")
                    .describe("Role to assume (with the credentials of the `aws {}` block) before generating the token.")
                    .validate(arn::role_arn_validator()),
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
                .env(&["AWS_REGION", "AWS_DEFAULT_REGION"])
                .validate(aws_names::aws_region_validator()),
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
                Attribute::string("role_arn").required().describe("Role to assume.").validate(arn::role_arn_validator()),
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
                    .validate(arn::role_arn_validator()),
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
const RESERVED_TAG_PREFIX: &str = "terraform-provider-karpenter/";

/// The environment variables that add default tags: `TF_AWS_DEFAULT_TAGS_<key>`, as in
/// hashicorp/aws.
pub(super) const DEFAULT_TAGS_ENV_PREFIX: &str = "TF_AWS_DEFAULT_TAGS_";

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
const ROLE_DURATION_MIN: std::time::Duration = std::time::Duration::from_secs(15 * 60);
const ROLE_DURATION_MAX: std::time::Duration = std::time::Duration::from_secs(12 * 60 * 60);

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
        .validate(v::each(arn::policy_arn_validator()))
}

/// A JSON document (a session policy).
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

/// The services whose endpoints can be overridden, by their `endpoints {}` attribute name.
pub(super) const ENDPOINT_SERVICES: &[&str] = &["iam", "sqs", "events", "sts", "eks", "ec2"];

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
