//! Checking the provider block beyond each attribute's own validators: the rules across
//! attributes, at validate time ([`validate_cluster_name`], [`validate_aws`]), and what the
//! `aws {}` settings name outside the configuration, at configure time ([`check_aws`]).

use super::parse::present;
use crate::settings::{AwsSettings, expand_home};
use crate::terraform::framework::Diagnostics;
use crate::terraform::tfvalue::{AttributePath, Value};

/// The top-level `cluster_name` and `kubernetes { eks { cluster_name } }` name one cluster.
pub fn validate_cluster_name(config: &Value, diags: &mut Diagnostics) {
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

/// Rules of the `aws {}` block across attributes, checked at validate time (values that are
/// still unknown are not judged): static key parts go together, and a web identity comes from
/// one place.
pub fn validate_aws(config: &Value, diags: &mut Diagnostics) {
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
pub fn check_aws(aws: &AwsSettings) -> Diagnostics {
    let mut diags = Diagnostics::new();
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
