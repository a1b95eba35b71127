//! AutoMTLS as go-plugin does it: Terraform hands us its client certificate in
//! `PLUGIN_CLIENT_CERT`, we make a fresh self-signed server certificate, announce it in the
//! handshake line, and accept only connections that present exactly Terraform's certificate.
//!
//! Terraform's certificate is a self-signed CA (ECDSA P-521/SHA-512) used as a client leaf.
//! Stock webpki verification rejects a CA certificate used as an end entity, and `ring` has no
//! P-521, so this module pins the certificate bytes itself and checks the handshake signature
//! with the aws-lc-rs provider's algorithms.

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms, aws_lc_rs};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, ServerConfig, SignatureScheme};

use super::error::PluginError;

/// Environment variable carrying Terraform's client certificate (PEM).
pub const CLIENT_CERT_ENV: &str = "PLUGIN_CLIENT_CERT";

/// Everything the server needs for mTLS.
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// rustls configuration: TLS 1.2/1.3, ALPN `h2`, mandatory pinned client certificate.
    pub config: Arc<ServerConfig>,
    /// DER of our own certificate, for the handshake line.
    pub cert_der: CertificateDer<'static>,
}

/// The crypto provider used everywhere in the plugin (aws-lc-rs: it has P-521).
pub fn crypto_provider() -> Arc<CryptoProvider> {
    Arc::new(aws_lc_rs::default_provider())
}

/// Builds the server side of AutoMTLS from the PEM Terraform gave us.
pub fn server_tls(client_cert_pem: &str) -> Result<ServerTls, PluginError> {
    let client_cert = CertificateDer::from_pem_slice(client_cert_pem.as_bytes())
        .map_err(|e| PluginError::ClientCert(e.to_string()))?;
    let (cert_der, key_der) = self_signed_server_cert()?;
    let provider = crypto_provider();
    let verifier = PinnedClientCert::new(client_cert, &provider);
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_client_cert_verifier(Arc::new(verifier))
        .with_single_cert(vec![cert_der.clone()], key_der)?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(ServerTls {
        config: Arc::new(config),
        cert_der,
    })
}

/// A fresh certificate shaped like go-plugin's: self-signed, CA=true, SAN `localhost`,
/// serverAuth (and clientAuth) EKU. P-256 rather than go-plugin's P-521: Go verifies either, and
/// P-256 keys are quicker to make in a process Terraform may start dozens of times per run.
fn self_signed_server_cert() -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>), PluginError> {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
    };
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
    let mut params = CertificateParams::new(vec!["localhost".to_owned()])?;
    params.distinguished_name.push(DnType::CommonName, "localhost");
    params
        .distinguished_name
        .push(DnType::OrganizationName, "terraform-provider-karpenter");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::KeyCertSign,
    ];
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    let cert = params.self_signed(&key)?;
    let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    Ok((cert.der().clone(), key_der))
}

/// Accepts exactly one client certificate, compared byte for byte, and verifies the handshake
/// signature made with its key.
#[derive(Debug)]
pub struct PinnedClientCert {
    expected: CertificateDer<'static>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinnedClientCert {
    /// Pins `expected`, checking signatures with `provider`'s algorithms.
    pub fn new(expected: CertificateDer<'static>, provider: &CryptoProvider) -> Self {
        Self {
            expected,
            algorithms: provider.signature_verification_algorithms,
        }
    }
}

impl ClientCertVerifier for PinnedClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        true
    }

    // No CA names: Go's client then offers its only certificate, whatever its issuer.
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.expected.as_ref() {
            Ok(ClientCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifier_offers_p521_and_pins_bytes() {
        let provider = crypto_provider();
        let v = PinnedClientCert::new(CertificateDer::from(vec![1, 2, 3]), &provider);
        assert!(
            v.supported_verify_schemes()
                .contains(&SignatureScheme::ECDSA_NISTP521_SHA512)
        );
        assert!(v.client_auth_mandatory());
        let now = UnixTime::now();
        assert!(
            v.verify_client_cert(&CertificateDer::from(vec![1, 2, 3]), &[], now)
                .is_ok()
        );
        assert!(
            v.verify_client_cert(&CertificateDer::from(vec![1, 2, 4]), &[], now)
                .is_err()
        );
    }

    #[test]
    fn garbage_client_cert_is_an_error() {
        assert!(matches!(server_tls("not a pem"), Err(PluginError::ClientCert(_))));
    }

    #[test]
    fn server_config_has_h2_alpn() {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P521_SHA512).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let tls = server_tls(&cert.pem()).unwrap();
        assert_eq!(tls.config.alpn_protocols, vec![b"h2".to_vec()]);
        assert!(!tls.cert_der.is_empty());
    }
}
