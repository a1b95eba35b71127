//! Building the `kube` client from the provider's `kubernetes {}` settings: explicit host and
//! credentials (token, client certificate, exec plugin), or a kubeconfig file and context.
//! Built once per provider process, on first use.

use base64::Engine;
use kube::config::{AuthInfo, ExecConfig, KubeConfigOptions, Kubeconfig};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::error::KubeError;
use crate::settings::{KubernetesSettings, expand_home};

/// The `kube::Config` the settings describe: an explicit `host`, else the kubeconfig file(s);
/// then `tls_server_name` and `proxy_url`, which apply to either.
pub async fn config(settings: &KubernetesSettings) -> Result<kube::Config, KubeError> {
    let mut config = if let Some(host) = settings.host.as_deref() {
        explicit_config(host, settings)?
    } else if let Some(paths) = kubeconfig_paths(settings) {
        kubeconfig_config(&paths, settings).await?
    } else {
        return Err(KubeError::NotConfigured(
            "set kubernetes { host = … } with credentials (token, client certificate or exec), or kubernetes { config_path = … } / { config_paths = [...] } (or KUBE_HOST / KUBE_CONFIG_PATH / KUBE_CONFIG_PATHS)".into(),
        ));
    };
    if let Some(name) = settings.tls_server_name.as_deref() {
        config.tls_server_name = Some(name.to_string());
    }
    if let Some(proxy) = settings.proxy_url.as_deref() {
        config.proxy_url =
            Some(proxy.parse().map_err(|e| {
                KubeError::Client(format!("kubernetes.proxy_url {proxy:?} is not a URL: {e}"))
            })?);
    }
    super::transport::set_user_agent(&mut config);
    Ok(config)
}

/// `config_path`, or else `config_paths`; `None` when neither is set.
fn kubeconfig_paths(settings: &KubernetesSettings) -> Option<Vec<String>> {
    match settings.config_path.as_deref() {
        Some(path) => Some(vec![path.to_string()]),
        None => (!settings.config_paths.is_empty()).then(|| settings.config_paths.clone()),
    }
}

/// The configuration of the kubeconfig files `paths`, merged in order (the first file that sets
/// a value wins, as with `KUBECONFIG`), with the context, cluster and user overrides applied.
async fn kubeconfig_config(
    paths: &[String],
    settings: &KubernetesSettings,
) -> Result<kube::Config, KubeError> {
    let mut merged: Option<Kubeconfig> = None;
    for path in paths {
        let file = Kubeconfig::read_from(expand_home(path)).map_err(|e| {
            KubeError::Client(format!(
                "cannot read kubeconfig {path}: {}",
                super::error::redacted_kubeconfig(&e)
            ))
        })?;
        merged = Some(match merged {
            None => file,
            Some(earlier) => earlier.merge(file).map_err(|e| {
                KubeError::Client(format!(
                    "cannot merge kubeconfig {path}: {}",
                    super::error::redacted_kubeconfig(&e)
                ))
            })?,
        });
    }
    let Some(kubeconfig) = merged else {
        return Err(KubeError::NotConfigured(
            "kubernetes.config_paths is empty".into(),
        ));
    };
    let options = KubeConfigOptions {
        context: settings.config_context.clone(),
        cluster: settings.config_context_cluster.clone(),
        user: settings.config_context_auth_info.clone(),
    };
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| {
            KubeError::Client(format!(
                "kubeconfig {}: {}",
                paths.join(", "),
                super::error::redacted_kubeconfig(&e)
            ))
        })?;
    if settings.insecure {
        config.accept_invalid_certs = true;
    }
    Ok(config)
}

fn explicit_config(host: &str, s: &KubernetesSettings) -> Result<kube::Config, KubeError> {
    let url = if host.contains("://") {
        host.to_string()
    } else {
        format!("https://{host}")
    };
    let uri = url
        .parse()
        .map_err(|e| KubeError::Client(format!("kubernetes.host {host:?} is not a URL: {e}")))?;
    let mut config = kube::Config::new(uri);
    if let Some(ca) = s.cluster_ca_certificate.as_deref() {
        let certs: Vec<Vec<u8>> = CertificateDer::pem_slice_iter(ca.as_bytes())
            .map(|c| c.map(|c| c.to_vec()))
            .collect::<Result<_, _>>()
            .map_err(|e| KubeError::Client(format!("kubernetes.cluster_ca_certificate is not PEM: {e}")))?;
        if certs.is_empty() {
            return Err(KubeError::Client(
                "kubernetes.cluster_ca_certificate holds no PEM certificate".into(),
            ));
        }
        config.root_cert = Some(certs);
    }
    config.accept_invalid_certs = s.insecure;
    let b64 = base64::engine::general_purpose::STANDARD;
    config.auth_info = AuthInfo {
        token: s.token.clone().map(Into::into),
        client_certificate_data: s.client_certificate.as_ref().map(|c| b64.encode(c)),
        client_key_data: s.client_key.as_ref().map(|k| b64.encode(k).into()),
        exec: s.exec.as_ref().map(|e| ExecConfig {
            api_version: Some(e.api_version.clone()),
            command: Some(e.command.clone()),
            args: Some(e.args.clone()),
            env: (!e.env.is_empty()).then(|| {
                e.env
                    .iter()
                    .map(|(k, v)| {
                        [("name".to_string(), k.clone()), ("value".to_string(), v.clone())]
                            .into_iter()
                            .collect()
                    })
                    .collect()
            }),
            drop_env: None,
            interactive_mode: None,
            provide_cluster_info: false,
            cluster: None,
            install_hint: None,
            other: Default::default(),
        }),
        ..Default::default()
    };
    Ok(config)
}

/// A client for the settings.
pub async fn client(settings: &KubernetesSettings) -> Result<kube::Client, KubeError> {
    let config = config(settings).await?;
    let url = config.cluster_url.to_string();
    let builder = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| KubeError::Client(super::error::redacted(&e)))?;
    Ok(builder
        .with_layer(&tower::util::MapResultLayer::new(super::transport::observing(
            url,
            super::transport::Reachability::new(),
        )))
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn host_token_and_ca() {
        let s = KubernetesSettings {
            host: Some("https://127.0.0.1:6443".into()),
            token: Some("abc".into()),
            ..Default::default()
        };
        let c = config(&s).await.expect("config");
        assert_eq!(c.cluster_url.to_string(), "https://127.0.0.1:6443/");
        assert!(c.auth_info.token.is_some());
    }

    #[tokio::test]
    async fn bad_ca_is_an_error_naming_the_attribute() {
        let s = KubernetesSettings {
            host: Some("https://127.0.0.1:6443".into()),
            cluster_ca_certificate: Some("not pem".into()),
            ..Default::default()
        };
        let e = config(&s).await.expect_err("bad CA");
        assert!(e.to_string().contains("cluster_ca_certificate"), "{e}");
    }

    #[tokio::test]
    async fn nothing_configured_says_what_to_set() {
        let e = config(&KubernetesSettings::default())
            .await
            .expect_err("nothing set");
        assert!(e.to_string().contains("config_path"), "{e}");
    }
}
