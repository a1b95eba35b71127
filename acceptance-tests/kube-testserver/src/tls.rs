//! Certificates for the test server: a throw-away CA, a serving certificate for
//! `127.0.0.1`/`localhost`, and a client certificate that the server accepts as an
//! alternative to the bearer token. Everything is generated in memory with rcgen.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

/// Errors while generating certificates or building the TLS configuration.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("certificate generation failed: {0}")]
    Rcgen(#[from] rcgen::Error),
    #[error("TLS configuration failed: {0}")]
    Rustls(#[from] rustls::Error),
    #[error("client verifier: {0}")]
    Verifier(#[from] rustls::server::VerifierBuilderError),
}

/// PEM material produced for one server instance.
#[derive(Clone)]
pub struct CertBundle {
    pub ca_pem: String,
    pub server_cert_pem: String,
    pub client_cert_pem: String,
    pub client_key_pem: String,
    server_cert_der: CertificateDer<'static>,
    server_key_der: Vec<u8>,
    ca_der: CertificateDer<'static>,
}

/// The CN of the generated client certificate (the user name it authenticates as).
pub const CLIENT_CERT_USER: &str = "kube-testserver-admin";

/// Generate a CA, a server certificate and a client certificate.
pub fn generate() -> Result<CertBundle, TlsError> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "kube-testserver-ca");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca_params, &ca_key);

    let server_key = KeyPair::generate()?;
    let mut sp = CertificateParams::new(vec!["localhost".to_string()])?;
    sp.subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    sp.distinguished_name.push(DnType::CommonName, "kube-apiserver");
    sp.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = sp.signed_by(&server_key, &issuer)?;

    let client_key = KeyPair::generate()?;
    let mut cp = CertificateParams::new(Vec::<String>::new())?;
    cp.distinguished_name.push(DnType::CommonName, CLIENT_CERT_USER);
    cp.distinguished_name
        .push(DnType::OrganizationName, "system:masters");
    cp.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client_cert = cp.signed_by(&client_key, &issuer)?;

    Ok(CertBundle {
        ca_pem: ca_cert.pem(),
        server_cert_pem: server_cert.pem(),
        client_cert_pem: client_cert.pem(),
        client_key_pem: client_key.serialize_pem(),
        server_cert_der: server_cert.der().clone(),
        server_key_der: server_key.serialize_der(),
        ca_der: ca_cert.der().clone(),
    })
}

/// A rustls server configuration that offers HTTP/1.1 and accepts (but does not require)
/// client certificates signed by our CA.
pub fn server_config(b: &CertBundle) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(b.ca_der.clone())?;
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(b.server_key_der.clone()));
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![b.server_cert_der.clone(), b.ca_der.clone()], key)?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}
