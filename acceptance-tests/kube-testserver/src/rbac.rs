//! Token-based authorization in the manner of Kubernetes RBAC, for least-privilege tests.
//!
//! A [`Grant`] maps a bearer token to a user name and a list of [`PolicyRule`]s (API groups,
//! resources, verbs, with `*` wildcards, as in a ClusterRole). A request made with a granted
//! token is authenticated and then allowed only if a rule covers its verb, API group and
//! resource; otherwise it gets 403 `Forbidden` with the apiserver's wording. Discovery
//! (`/version`, `/api`, `/apis…` listings, `/openapi/…`, health) is open to every
//! authenticated user, as the `system:discovery` role makes it on a real cluster. The admin
//! paths on the TLS port are refused to granted tokens. The server's own token and client
//! certificates stay unrestricted, so servers without grants behave as before.

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::util::{ApiError, qualified};

/// One rule of a ClusterRole: the request must match an API group, a resource and a verb.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    /// API groups (`""` is the core group, `*` any).
    #[serde(default)]
    pub api_groups: Vec<String>,
    /// Resources by plural name; `plural/status` for a subresource, `*` any, `plural/*` any
    /// subresource of `plural`.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Verbs: get, list, watch, create, update, patch, delete, deletecollection, or `*`.
    #[serde(default)]
    pub verbs: Vec<String>,
}

impl PolicyRule {
    /// A rule from string slices.
    pub fn new(api_groups: &[&str], resources: &[&str], verbs: &[&str]) -> Self {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Self {
            api_groups: own(api_groups),
            resources: own(resources),
            verbs: own(verbs),
        }
    }

    fn covers(&self, a: &Attributes) -> bool {
        let any = |list: &[String], want: &str| list.iter().any(|x| x == "*" || x == want);
        let resource_ok = self.resources.iter().any(|r| {
            r == "*"
                || *r == a.resource
                || (a.resource.contains('/')
                    && r.strip_suffix("/*")
                        .is_some_and(|base| a.resource.split('/').next() == Some(base)))
        });
        any(&self.api_groups, &a.group) && resource_ok && any(&self.verbs, &a.verb)
    }
}

/// A bearer token, who it stands for, and what it may do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub token: String,
    /// The user name in 403 messages.
    #[serde(default = "default_user")]
    pub user: String,
    pub rules: Vec<PolicyRule>,
}

fn default_user() -> String {
    "system:serviceaccount:kube-system:terraform".to_string()
}

impl Grant {
    /// A grant for `token` as the default service-account user.
    pub fn new(token: impl Into<String>, rules: Vec<PolicyRule>) -> Self {
        Self {
            token: token.into(),
            user: default_user(),
            rules,
        }
    }
}

/// What a resource request asks for, as the authorizer sees it.
#[derive(Debug, PartialEq, Eq)]
pub struct Attributes {
    pub verb: String,
    pub group: String,
    /// `plural` or `plural/subresource`.
    pub resource: String,
    pub name: Option<String>,
    pub namespace: Option<String>,
}

/// The resource attributes of a request, or `None` for a non-resource (discovery) request.
pub fn attributes(method: &str, path: &str, query: &str) -> Option<Attributes> {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let (group, rest): (&str, &[&str]) = match segs.as_slice() {
        ["apis", g, _v, rest @ ..] if !rest.is_empty() => (g, rest),
        ["api", _v, rest @ ..] if !rest.is_empty() => ("", rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some(ns.to_string()), tail),
        other => (None, other),
    };
    let plural = rest.first()?;
    let name = rest.get(1).map(|s| s.to_string());
    let resource = match rest.get(2) {
        Some(sub) => format!("{plural}/{sub}"),
        None => plural.to_string(),
    };
    let watch = query
        .split('&')
        .any(|kv| kv == "watch=true" || kv == "watch=1" || kv == "watch");
    let verb = match (method, &name) {
        ("GET" | "HEAD", _) if watch => "watch",
        ("GET" | "HEAD", None) => "list",
        ("GET" | "HEAD", Some(_)) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", None) => "deletecollection",
        ("DELETE", Some(_)) => "delete",
        (other, _) => {
            return Some(Attributes {
                verb: other.to_ascii_lowercase(),
                group: group.to_string(),
                resource,
                name,
                namespace,
            });
        }
    };
    Some(Attributes {
        verb: verb.to_string(),
        group: group.to_string(),
        resource,
        name,
        namespace,
    })
}

/// Authorizes a request made with `grant`'s token: `Ok` or the 403 the apiserver would send.
pub fn authorize(grant: &Grant, method: &str, path: &str, query: &str) -> Result<(), ApiError> {
    let Some(a) = attributes(method, path, query) else {
        return Ok(());
    };
    if grant.rules.iter().any(|r| r.covers(&a)) {
        return Ok(());
    }
    Err(forbidden(&grant.user, &a))
}

/// The 403 for a denied request, worded like kube-apiserver's RBAC denial.
pub fn forbidden(user: &str, a: &Attributes) -> ApiError {
    let plural = a.resource.split('/').next().unwrap_or("");
    let subject = match &a.name {
        Some(n) => format!("{} \"{n}\" is forbidden", qualified(plural, &a.group)),
        None => format!("{} is forbidden", qualified(plural, &a.group)),
    };
    let scope = match &a.namespace {
        Some(n) => format!("in the namespace \"{n}\""),
        None => "at the cluster scope".to_string(),
    };
    ApiError::new(
        403,
        "Forbidden",
        format!(
            "{subject}: User \"{user}\" cannot {} resource \"{}\" in API group \"{}\" {scope}",
            a.verb, a.resource, a.group
        ),
    )
    .with_details(json!({"name": a.name.clone().unwrap_or_default(), "group": a.group, "kind": plural}))
}

/// The 403 for an admin path requested with a granted token.
pub fn admin_forbidden(user: &str) -> ApiError {
    ApiError::new(
        403,
        "Forbidden",
        format!("forbidden: User \"{user}\" cannot use the test server's admin endpoint"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn karpenter() -> Grant {
        Grant::new(
            "t",
            vec![
                PolicyRule::new(&["karpenter.sh"], &["nodepools"], &["get", "patch"]),
                PolicyRule::new(
                    &["apiextensions.k8s.io"],
                    &["customresourcedefinitions"],
                    &["get", "watch"],
                ),
            ],
        )
    }

    #[test]
    fn verbs_come_from_method_name_and_watch() {
        let a = |m, p, q| attributes(m, p, q).map(|a| a.verb);
        let p = "/apis/karpenter.sh/v1/nodepools";
        assert_eq!(a("GET", p, ""), Some("list".into()));
        assert_eq!(a("GET", p, "watch=true&resourceVersion=1"), Some("watch".into()));
        assert_eq!(
            a("GET", "/apis/karpenter.sh/v1/nodepools/x", ""),
            Some("get".into())
        );
        assert_eq!(
            a("PATCH", "/apis/karpenter.sh/v1/nodepools/x", ""),
            Some("patch".into())
        );
        assert_eq!(a("DELETE", p, ""), Some("deletecollection".into()));
        assert_eq!(a("GET", "/apis", ""), None);
        assert_eq!(a("GET", "/apis/karpenter.sh/v1", ""), None);
        assert_eq!(a("GET", "/version", ""), None);
    }

    #[test]
    fn rules_allow_exactly_what_they_name() {
        let g = karpenter();
        assert!(authorize(&g, "PATCH", "/apis/karpenter.sh/v1/nodepools/a", "").is_ok());
        assert!(
            authorize(
                &g,
                "GET",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x",
                ""
            )
            .is_ok()
        );
        assert!(authorize(&g, "GET", "/apis/karpenter.sh/v1/nodepools", "").is_err());
        let e = authorize(&g, "DELETE", "/apis/karpenter.sh/v1/nodepools/a", "").unwrap_err();
        assert_eq!(e.code, 403);
        assert_eq!(
            e.message,
            "nodepools.karpenter.sh \"a\" is forbidden: User \"system:serviceaccount:kube-system:terraform\" cannot delete resource \"nodepools\" in API group \"karpenter.sh\" at the cluster scope"
        );
        let e = authorize(&g, "PATCH", "/apis/karpenter.sh/v1/nodepools/a/status", "").unwrap_err();
        assert!(
            e.message.contains("cannot patch resource \"nodepools/status\""),
            "{}",
            e.message
        );
        assert!(authorize(&g, "GET", "/apis/karpenter.k8s.aws/v1/ec2nodeclasses/a", "").is_err());
    }

    #[test]
    fn wildcards() {
        let g = Grant::new("t", vec![PolicyRule::new(&["*"], &["nodepools/*"], &["*"])]);
        assert!(authorize(&g, "PUT", "/apis/karpenter.sh/v1/nodepools/a/status", "").is_ok());
        assert!(authorize(&g, "PUT", "/apis/karpenter.sh/v1/nodepools/a", "").is_err());
    }
}
