//! The provider block: its schema (`kubernetes {}` and `aws {}`, in the words of the
//! hashicorp/kubernetes and hashicorp/aws providers so configurations port over), and its
//! parsing into [`ProviderSettings`] with the usual environment-variable fallbacks.
//!
//! Configuration may be unknown during plan (the cluster is created in the same apply): the
//! unknown attributes are recorded, and whatever needs them fails only if it is used while they
//! are still unknown. Nothing here connects anywhere.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use crate::framework::validate as v;
use crate::framework::{Attribute, Block, Schema};
use crate::tfvalue::{AttributePath, Type, Value};

static KUBERNETES: LazyLock<Block> = LazyLock::new(kubernetes_block);
static AWS: LazyLock<Block> = LazyLock::new(aws_block);

pub static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new(
        "The Karpenter provider manages Karpenter's custom resources in a Kubernetes cluster and \
         Karpenter's AWS resources (interruption queue, IAM roles). Configuration may depend on \
         resources created in the same apply (e.g. an EKS module's outputs): the provider \
         connects only when a resource needs it.",
        vec![],
    )
    .with_blocks(vec![KUBERNETES.clone(), AWS.clone()])
});

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
                    .validate(v::non_empty()),
                Attribute::string("region")
                    .describe("Region of the cluster; the `aws {}` block's region when not set."),
                Attribute::string("role_arn")
                    .describe("Role to assume (with the credentials of the `aws {}` block) before generating the token.")
                    .validate(v::matches(
                        r"^arn:aws(-cn|-us-gov)?:iam::[0-9]{12}:role/.+$",
                        "an IAM role ARN (arn:aws:iam::123456789012:role/NAME)",
                    )),
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
        ],
    )
    .describe("AWS access for the interruption queue and IAM resources: the standard credential chain (environment, profile, SSO, web identity, instance metadata).")
    .with_blocks(vec![
        Block::single(
            "assume_role",
            vec![
                Attribute::string("role_arn").required().describe("Role to assume.").validate(v::matches(
                    r"^arn:aws(-cn|-us-gov)?:iam::[0-9]{12}:role/.+$",
                    "an IAM role ARN (arn:aws:iam::123456789012:role/NAME)",
                )),
                Attribute::string("session_name").describe("Session name for the assumed role."),
                Attribute::string("external_id").describe("External ID required by the role's trust policy."),
            ],
        )
        .describe("Assume this role (with the credentials of the chain) for every AWS call."),
        Block::single(
            "endpoints",
            ENDPOINT_SERVICES.iter().map(|s| endpoint(s)).collect(),
        )
        .describe("Custom service endpoints (e.g. a local test environment)."),
    ])
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

/// The kubernetes block, resolved with environment fallbacks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KubernetesSettings {
    pub host: Option<String>,
    pub cluster_ca_certificate: Option<String>,
    pub token: Option<String>,
    pub client_certificate: Option<String>,
    pub client_key: Option<String>,
    pub insecure: bool,
    pub config_path: Option<String>,
    /// `config_paths`, or `KUBE_CONFIG_PATHS` split at the platform's path separator.
    pub config_paths: Vec<String>,
    pub config_context: Option<String>,
    pub config_context_auth_info: Option<String>,
    pub config_context_cluster: Option<String>,
    pub tls_server_name: Option<String>,
    pub proxy_url: Option<String>,
    pub exec: Option<ExecSettings>,
    pub eks: Option<EksSettings>,
}

/// `kubernetes { eks {} }`: native EKS authentication.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EksSettings {
    pub cluster_name: String,
    pub region: Option<String>,
    pub role_arn: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecSettings {
    pub api_version: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

/// The aws block, resolved with environment fallbacks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AwsSettings {
    pub region: Option<String>,
    pub profile: Option<String>,
    pub assume_role: Option<AssumeRoleSettings>,
    pub endpoints: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssumeRoleSettings {
    pub role_arn: String,
    pub session_name: Option<String>,
    pub external_id: Option<String>,
}

/// The whole provider configuration. `unknown` lists what was not yet known when configured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderSettings {
    pub kubernetes: KubernetesSettings,
    pub aws: AwsSettings,
    pub unknown: Vec<AttributePath>,
}

/// Reads environment variables; tests pass their own.
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
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
    };
    if let Some(assume) = present(a, "assume_role") {
        let p = ap.attr("assume_role");
        aws.assume_role = Some(AssumeRoleSettings {
            role_arn: r.string(assume, &p, "role_arn", &[]).unwrap_or_default(),
            session_name: r.string(assume, &p, "session_name", &[]),
            external_id: r.string(assume, &p, "external_id", &[]),
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
    ProviderSettings {
        kubernetes,
        aws,
        unknown: r.unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::values::object;
    use std::collections::HashMap;

    struct FakeEnv(HashMap<&'static str, &'static str>);
    impl Env for FakeEnv {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|s| s.to_string())
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
            a.blocks.iter().any(|b| b.name == "assume_role")
                && a.blocks.iter().any(|b| b.name == "endpoints")
        );
    }
}
