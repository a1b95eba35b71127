//! The go-plugin handshake: the magic-cookie check, protocol-version negotiation and the one
//! line on stdout that tells Terraform where and how to connect.

use std::io::Write;

use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;

use super::error::PluginError;

/// Environment variable Terraform uses to prove it launched us.
pub const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
/// The value Terraform puts in [`MAGIC_COOKIE_KEY`] (the same for protocols 5 and 6).
pub const MAGIC_COOKIE_VALUE: &str = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
/// go-plugin's own protocol version: the first handshake field.
pub const CORE_PROTOCOL_VERSION: u32 = 1;
/// The only Terraform plugin protocol this binary speaks.
pub const APP_PROTOCOL_VERSION: u32 = 6;

/// Checks the magic cookie as go-plugin does: an exact match of the whole value.
pub fn check_magic_cookie(value: Option<&str>) -> Result<(), PluginError> {
    match value {
        Some(v) if v == MAGIC_COOKIE_VALUE => Ok(()),
        _ => Err(PluginError::NotLaunchedByTerraform),
    }
}

/// Outcome of reading `PLUGIN_PROTOCOL_VERSIONS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Negotiated {
    /// The client offered protocol 6.
    Agreed,
    /// The client did not offer 6 (or sent nothing usable). Like go-plugin we still announce
    /// our version and let the client report the mismatch, which it explains better than we can.
    Mismatch,
}

/// Reads the client's comma-separated version list (order is meaningless).
pub fn negotiate(client_versions: Option<&str>) -> Negotiated {
    let offered = client_versions
        .unwrap_or("")
        .split(',')
        .filter_map(|v| v.trim().parse::<u32>().ok())
        .any(|v| v == APP_PROTOCOL_VERSION);
    if offered {
        Negotiated::Agreed
    } else {
        Negotiated::Mismatch
    }
}

/// Where the server listens, as the handshake line and the reattach JSON spell it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `unix` or `tcp`.
    pub network: &'static str,
    /// Socket path or `host:port`.
    pub address: String,
}

/// Environment variable a go-plugin client sets when it wants broker multiplexing.
pub const MULTIPLEX_ENV: &str = "PLUGIN_MULTIPLEX_GRPC";

/// Formats the handshake line (without the trailing newline).
///
/// `server_cert_der` is the DER of our TLS certificate, or `None` when serving plaintext, in
/// which case the sixth field is empty. `multiplex_asked` is whether [`MULTIPLEX_ENV`] was set
/// (non-empty): only then is a seventh field written, and it says `false` because this plugin
/// brokers nothing. Terraform never sets it, so its line has six fields.
pub fn handshake_line(endpoint: &Endpoint, server_cert_der: Option<&[u8]>, multiplex_asked: bool) -> String {
    let cert = server_cert_der
        .map(|der| STANDARD_NO_PAD.encode(der))
        .unwrap_or_default();
    let mut line = format!(
        "{CORE_PROTOCOL_VERSION}|{APP_PROTOCOL_VERSION}|{}|{}|grpc|{cert}",
        endpoint.network, endpoint.address
    );
    if multiplex_asked {
        line.push_str("|false");
    }
    line
}

/// Writes the handshake line to stdout and flushes it. Must be the first stdout output.
pub fn announce(line: &str) -> Result<(), PluginError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(PluginError::io("writing the handshake line to stdout"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_must_match_exactly() {
        assert!(check_magic_cookie(Some(MAGIC_COOKIE_VALUE)).is_ok());
        assert!(check_magic_cookie(None).is_err());
        assert!(check_magic_cookie(Some("")).is_err());
        let with_space = format!("{MAGIC_COOKIE_VALUE} ");
        assert!(check_magic_cookie(Some(&with_space)).is_err());
    }

    #[test]
    fn negotiation_needs_six_in_any_order() {
        assert_eq!(negotiate(Some("5,6")), Negotiated::Agreed);
        assert_eq!(negotiate(Some("6,5")), Negotiated::Agreed);
        assert_eq!(negotiate(Some(" 6 ")), Negotiated::Agreed);
        assert_eq!(negotiate(Some("5")), Negotiated::Mismatch);
        assert_eq!(negotiate(Some("")), Negotiated::Mismatch);
        assert_eq!(negotiate(None), Negotiated::Mismatch);
        assert_eq!(negotiate(Some("16,60")), Negotiated::Mismatch);
    }

    #[test]
    fn handshake_line_shape() {
        let ep = Endpoint {
            network: "unix",
            address: "/tmp/plugin1/plugin.sock".to_owned(),
        };
        assert_eq!(
            handshake_line(&ep, None, false),
            "1|6|unix|/tmp/plugin1/plugin.sock|grpc|"
        );
        assert_eq!(
            handshake_line(&ep, None, true),
            "1|6|unix|/tmp/plugin1/plugin.sock|grpc||false"
        );
        // One byte 0xff encodes to "/w" without padding.
        assert_eq!(
            handshake_line(&ep, Some(&[0xff]), false),
            "1|6|unix|/tmp/plugin1/plugin.sock|grpc|/w"
        );
    }
}
