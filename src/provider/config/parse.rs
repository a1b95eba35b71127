//! Parsing the provider block into [`ProviderSettings`], with the usual environment-variable
//! fallbacks (each attribute's, as its schema names them in `schema`).
//!
//! Configuration may be unknown during plan (the cluster is created in the same apply): the
//! unknown attributes are recorded, and whatever needs them fails only if it is used while they
//! are still unknown. Nothing here connects anywhere.

use std::collections::BTreeMap;

use super::schema::{AWS, DEFAULT_TAGS_ENV_PREFIX, ENDPOINT_SERVICES, KUBERNETES};
use crate::settings::{
    AssumeRoleSettings, AwsSettings, EksSettings, ExecSettings, KubernetesSettings, ProviderSettings,
    Redacted, WebIdentitySettings,
};
use crate::terraform::framework::Block;
use crate::terraform::framework::validate as v;
use crate::terraform::tfvalue::{AttributePath, Value};

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
    // default true: only an explicit false (in the block, or KARPENTER_PLAN_HEALTH) turns it off
    let no_plan_health = match config.get("plan_health") {
        Some(Value::Bool(on)) => !on,
        Some(v) if v.is_unknown() => false,
        _ => r
            .env
            .var("KARPENTER_PLAN_HEALTH")
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "0" | "false" | "no")),
    };
    ProviderSettings {
        cluster_name,
        kubernetes,
        aws,
        no_plan_health,
        unknown: r.unknown,
    }
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
pub(super) fn present<'a>(parent: &'a Value, name: &str) -> Option<&'a Value> {
    parent.get(name).filter(|b| !b.is_null())
}
