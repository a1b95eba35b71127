//! Native EKS authentication: the bearer token `aws eks get-token` prints, generated here (a
//! SigV4-presigned STS `GetCallerIdentity` URL naming the cluster in the signed `x-k8s-aws-id`
//! header, base64url without padding, prefixed `k8s-aws-v1.`), and the endpoint and CA from
//! `DescribeCluster` when the provider block does not give them.
//!
//! Tokens are valid for 15 minutes. The client gets them through [`EksAuth`], a tower layer in
//! front of the `kube` service stack that sets the `Authorization` header on every request
//! from a cached token and generates a new one once the cached one is older than
//! [`REFRESH_AFTER`], so long waits keep working.

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use base64::Engine;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use thiserror::Error;

use super::error::KubeError;
use crate::aws::AwsClients;
use crate::settings::{EksSettings, KubernetesSettings};

/// What every EKS token starts with.
pub const TOKEN_PREFIX: &str = "k8s-aws-v1.";
/// The signed header that names the cluster the token is for.
pub const CLUSTER_ID_HEADER: &str = "x-k8s-aws-id";
/// How long the presigned URL itself is valid (`X-Amz-Expires`), as `aws eks get-token` signs it.
pub const PRESIGN_EXPIRES: Duration = Duration::from_secs(60);
/// A cached token older than this is replaced (EKS accepts a token for 15 minutes).
pub const REFRESH_AFTER: Duration = Duration::from_secs(10 * 60);

/// Characters escaped in query values (SigV4 URI encoding: all but `A-Za-z0-9-_.~`).
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

#[derive(Debug, Error)]
pub enum EksError {
    #[error("kubernetes.eks: no region; set kubernetes.eks.region or aws.region (or AWS_REGION)")]
    NoRegion,
    #[error("kubernetes.eks: no AWS credentials provider is configured")]
    NoCredentialsProvider,
    #[error("kubernetes.eks: could not get AWS credentials: {0}")]
    Credentials(String),
    #[error("kubernetes.eks: could not sign the token: {0}")]
    Signing(String),
    #[error("kubernetes.eks: DescribeCluster {cluster:?} failed: {message}")]
    Describe { cluster: String, message: String },
}

impl From<EksError> for KubeError {
    fn from(e: EksError) -> Self {
        KubeError::Client(e.to_string())
    }
}

/// The presigned GetCallerIdentity URL for `cluster`, signed with `credentials` at `now`.
pub fn presigned_url(
    cluster: &str,
    region: &str,
    credentials: &Credentials,
    now: SystemTime,
) -> Result<String, EksError> {
    let base = format!("https://sts.{region}.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15");
    let identity: Identity = credentials.clone().into();
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(PRESIGN_EXPIRES);
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("sts")
        .time(now)
        .settings(settings)
        .build()
        .map_err(|e| EksError::Signing(e.to_string()))?
        .into();
    let request = SignableRequest::new(
        "GET",
        base.as_str(),
        [(CLUSTER_ID_HEADER, cluster)].into_iter(),
        SignableBody::Bytes(&[]),
    )
    .map_err(|e| EksError::Signing(e.to_string()))?;
    let (instructions, _signature) = sign(request, &params)
        .map_err(|e| EksError::Signing(e.to_string()))?
        .into_parts();
    let (_headers, query) = instructions.into_parts();
    let mut url = base;
    for (name, value) in query {
        url.push('&');
        url.push_str(name);
        url.push('=');
        url.extend(utf8_percent_encode(&value, QUERY_VALUE));
    }
    Ok(url)
}

/// The EKS bearer token for `cluster` (see the module documentation).
pub fn token(
    cluster: &str,
    region: &str,
    credentials: &Credentials,
    now: SystemTime,
) -> Result<String, EksError> {
    let url = presigned_url(cluster, region, credentials, now)?;
    Ok(format!(
        "{TOKEN_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(url)
    ))
}

/// Generates and caches tokens for one cluster.
#[derive(Debug)]
pub struct TokenSource {
    cluster: String,
    region: String,
    credentials: SharedCredentialsProvider,
    cached: tokio::sync::Mutex<Option<(String, Instant)>>,
}

impl TokenSource {
    pub fn new(cluster: String, region: String, credentials: SharedCredentialsProvider) -> Self {
        Self {
            cluster,
            region,
            credentials,
            cached: tokio::sync::Mutex::new(None),
        }
    }

    /// A token valid for at least five more minutes: the cached one, or a new one.
    pub async fn token(&self) -> Result<String, EksError> {
        let mut cached = self.cached.lock().await;
        if let Some((token, at)) = cached.as_ref()
            && at.elapsed() < REFRESH_AFTER
        {
            return Ok(token.clone());
        }
        let credentials = self
            .credentials
            .provide_credentials()
            .await
            .map_err(|e| EksError::Credentials(e.to_string()))?;
        let token = token(&self.cluster, &self.region, &credentials, SystemTime::now())?;
        *cached = Some((token.clone(), Instant::now()));
        Ok(token)
    }
}

/// The tower layer that authenticates every request with a fresh EKS token.
#[derive(Clone, Debug)]
pub struct EksAuthLayer {
    source: Arc<TokenSource>,
}

impl EksAuthLayer {
    pub fn new(source: Arc<TokenSource>) -> Self {
        Self { source }
    }
}

impl<S> tower::Layer<S> for EksAuthLayer {
    type Service = EksAuth<S>;
    fn layer(&self, inner: S) -> EksAuth<S> {
        EksAuth {
            inner: Arc::new(tokio::sync::Mutex::new(inner)),
            source: self.source.clone(),
        }
    }
}

/// See [`EksAuthLayer`]. The inner service is shared behind a lock held only while it is
/// polled for readiness and called, never while a response is awaited.
#[derive(Debug)]
pub struct EksAuth<S> {
    inner: Arc<tokio::sync::Mutex<S>>,
    source: Arc<TokenSource>,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, B> tower::Service<http::Request<B>> for EksAuth<S>
where
    S: tower::Service<http::Request<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // readiness of the inner service is awaited in `call`, under the lock
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let inner = self.inner.clone();
        let source = self.source.clone();
        Box::pin(async move {
            let token = source.token().await?;
            let mut value = http::HeaderValue::from_str(&format!("Bearer {token}"))?;
            value.set_sensitive(true);
            request.headers_mut().insert(http::header::AUTHORIZATION, value);
            let future = {
                let mut service = inner.lock().await;
                std::future::poll_fn(|cx| service.poll_ready(cx))
                    .await
                    .map_err(Into::into)?;
                service.call(request)
            };
            future.await.map_err(Into::into)
        })
    }
}

/// The region the cluster is in: `eks.region`, else the `aws {}` block's.
fn region(eks: &EksSettings, aws: &AwsClients) -> Result<String, EksError> {
    eks.region
        .clone()
        .or_else(|| aws.region().map(str::to_string))
        .ok_or(EksError::NoRegion)
}

/// The credentials tokens are signed with: the `aws {}` chain, or `eks.role_arn` assumed with it.
async fn credentials(
    eks: &EksSettings,
    aws: &AwsClients,
    region: &str,
) -> Result<SharedCredentialsProvider, EksError> {
    let base = aws
        .sdk_config()
        .credentials_provider()
        .ok_or(EksError::NoCredentialsProvider)?;
    let Some(role) = &eks.role_arn else {
        return Ok(base);
    };
    let mut sts = aws.sdk_config().to_builder();
    if let Some(url) = aws.endpoint("sts") {
        sts = sts.endpoint_url(url);
    }
    let provider = aws_config::sts::AssumeRoleProvider::builder(role.clone())
        .session_name(crate::aws::config::DEFAULT_SESSION_NAME)
        .region(aws_config::Region::new(region.to_string()))
        .configure(&sts.build())
        .build()
        .await;
    Ok(SharedCredentialsProvider::new(provider))
}

/// What DescribeCluster says about reaching a cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterAccess {
    /// The API server URL.
    pub endpoint: String,
    /// The cluster CA as EKS returns it: base64 of the PEM.
    pub certificate_authority_data: String,
}

/// Endpoint and CA data of the cluster, from DescribeCluster.
pub async fn describe_cluster(
    client: &aws_sdk_eks::Client,
    cluster: &str,
) -> Result<ClusterAccess, EksError> {
    let err = |message: String| EksError::Describe {
        cluster: cluster.to_string(),
        message,
    };
    let out = client
        .describe_cluster()
        .name(cluster)
        .send()
        .await
        .map_err(|e| err(crate::aws::error::error_chain(&e)))?;
    let c = out
        .cluster
        .ok_or_else(|| err("the answer holds no cluster".into()))?;
    let endpoint = c
        .endpoint
        .filter(|e| !e.is_empty())
        .ok_or_else(|| err("the cluster has no endpoint yet (is it still creating?)".into()))?;
    let certificate_authority_data = c
        .certificate_authority
        .and_then(|ca| ca.data)
        .filter(|d| !d.is_empty())
        .ok_or_else(|| err("the cluster has no certificate authority data".into()))?;
    Ok(ClusterAccess {
        endpoint,
        certificate_authority_data,
    })
}

/// The PEM text of EKS certificate authority data (base64 of the PEM).
pub fn ca_pem(cluster: &str, data: &str) -> Result<String, EksError> {
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .filter(|pem| pem.contains("-----BEGIN CERTIFICATE-----"))
        .ok_or_else(|| EksError::Describe {
            cluster: cluster.to_string(),
            message: "the certificate authority data is not a base64-encoded PEM certificate".into(),
        })
}

/// A `kube` client for `settings` authenticated with EKS tokens; host and CA come from
/// DescribeCluster when the settings do not give them.
pub async fn client(
    settings: &KubernetesSettings,
    eks: &EksSettings,
    aws: &AwsClients,
) -> Result<kube::Client, KubeError> {
    let region = region(eks, aws)?;
    let mut settings = settings.clone();
    if settings.host.is_none() || settings.cluster_ca_certificate.is_none() {
        let access = describe_cluster(&aws.eks_in(&region), &eks.cluster_name).await?;
        if settings.cluster_ca_certificate.is_none() {
            settings.cluster_ca_certificate =
                Some(ca_pem(&eks.cluster_name, &access.certificate_authority_data)?);
        }
        settings.host.get_or_insert(access.endpoint);
    }
    // the token comes from the layer, never from a static setting
    settings.token = None;
    settings.exec = None;
    let config = super::client::config(&settings).await?;
    let url = config.cluster_url.to_string();
    let source = Arc::new(TokenSource::new(
        eks.cluster_name.clone(),
        region.clone(),
        credentials(eks, aws, &region).await?,
    ));
    let builder =
        kube::client::ClientBuilder::try_from(config).map_err(|e| KubeError::Client(e.to_string()))?;
    Ok(builder
        .with_layer(&EksAuthLayer::new(source))
        .with_layer(&tower::util::MapResultLayer::new(super::transport::observing(
            url,
            super::transport::Reachability::new(),
        )))
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn creds(session: Option<&str>) -> Credentials {
        Credentials::new(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            session.map(str::to_string),
            None,
            "test",
        )
    }

    /// 2015-08-30T12:36:00Z, the date of the SigV4 test suite.
    fn fixed_clock() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_440_938_160)
    }

    fn decode(token: &str) -> (String, HashMap<String, String>) {
        let body = token.strip_prefix(TOKEN_PREFIX).expect("prefix");
        assert!(!body.contains('='), "no padding");
        let url = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(body)
            .expect("base64url");
        let url = String::from_utf8(url).expect("utf-8");
        let (base, query) = url.split_once('?').expect("query");
        let params = query
            .split('&')
            .map(|kv| {
                let (k, v) = kv.split_once('=').expect("k=v");
                let v = percent_encoding::percent_decode_str(v)
                    .decode_utf8()
                    .expect("utf-8");
                (k.to_string(), v.into_owned())
            })
            .collect();
        (base.to_string(), params)
    }

    #[test]
    fn token_is_a_presigned_get_caller_identity_url() {
        let t = token("demo", "eu-west-1", &creds(None), fixed_clock()).expect("token");
        let (base, q) = decode(&t);
        assert_eq!(base, "https://sts.eu-west-1.amazonaws.com/");
        assert_eq!(q["Action"], "GetCallerIdentity");
        assert_eq!(q["Version"], "2011-06-15");
        assert_eq!(q["X-Amz-Algorithm"], "AWS4-HMAC-SHA256");
        assert_eq!(
            q["X-Amz-Credential"],
            "AKIDEXAMPLE/20150830/eu-west-1/sts/aws4_request"
        );
        assert_eq!(q["X-Amz-Date"], "20150830T123600Z");
        assert_eq!(q["X-Amz-Expires"], "60");
        let signed: Vec<&str> = q["X-Amz-SignedHeaders"].split(';').collect();
        assert!(
            signed.contains(&"host") && signed.contains(&CLUSTER_ID_HEADER),
            "{signed:?}"
        );
        let sig = &q["X-Amz-Signature"];
        assert!(
            sig.len() == 64 && sig.chars().all(|c| c.is_ascii_hexdigit()),
            "{sig}"
        );
        assert!(!q.contains_key("X-Amz-Security-Token"));
    }

    #[test]
    fn the_test_servers_shape_check_accepts_our_tokens() {
        let t = token("demo", "eu-west-1", &creds(Some("session")), fixed_clock()).expect("token");
        let later = fixed_clock() + Duration::from_secs(60);
        assert_eq!(
            kube_testserver::eks::check_token(&t, later),
            Ok("eu-west-1".to_string())
        );
    }

    #[test]
    fn the_signature_depends_on_cluster_time_and_key() {
        let sig = |cluster: &str, now: SystemTime, c: &Credentials| {
            decode(&token(cluster, "us-east-1", c, now).expect("token")).1["X-Amz-Signature"].clone()
        };
        let base = sig("demo", fixed_clock(), &creds(None));
        // deterministic for the same input
        assert_eq!(base, sig("demo", fixed_clock(), &creds(None)));
        assert_ne!(base, sig("other", fixed_clock(), &creds(None)));
        assert_ne!(
            base,
            sig("demo", fixed_clock() + Duration::from_secs(1), &creds(None))
        );
        let other_key = Credentials::new("AKIDEXAMPLE", "another", None, None, "test");
        assert_ne!(base, sig("demo", fixed_clock(), &other_key));
    }

    #[test]
    fn session_tokens_travel_in_the_url_escaped() {
        let t = token("demo", "us-east-1", &creds(Some("FQoG/a+b=")), fixed_clock()).expect("token");
        let url = String::from_utf8(
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(t.strip_prefix(TOKEN_PREFIX).expect("prefix"))
                .expect("b64"),
        )
        .expect("utf8");
        assert!(url.contains("X-Amz-Security-Token=FQoG%2Fa%2Bb%3D"), "{url}");
        assert_eq!(decode(&t).1["X-Amz-Security-Token"], "FQoG/a+b=");
    }

    #[test]
    fn ca_data_is_base64_of_pem() {
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let data = base64::engine::general_purpose::STANDARD.encode(pem);
        assert_eq!(ca_pem("demo", &data).expect("pem"), pem);
        let e = ca_pem("demo", "bm90IGEgY2VydA==").expect_err("not a certificate");
        assert!(e.to_string().contains("\"demo\""), "{e}");
        assert!(ca_pem("demo", "%%%").is_err());
    }

    #[tokio::test]
    async fn tokens_are_cached_then_renewed() {
        let source = TokenSource::new(
            "demo".into(),
            "us-east-1".into(),
            SharedCredentialsProvider::new(creds(None)),
        );
        let first = source.token().await.expect("token");
        assert_eq!(first, source.token().await.expect("token"));
        // age the cached token past the refresh point
        if let Some((_, at)) = source.cached.lock().await.as_mut() {
            *at = Instant::now() - REFRESH_AFTER - Duration::from_secs(1);
        }
        // a new token is generated (the cache entry is fresh again)
        source.token().await.expect("token");
        let age = source.cached.lock().await.as_ref().map(|(_, at)| at.elapsed());
        assert!(age.is_some_and(|a| a < REFRESH_AFTER));
    }
}
