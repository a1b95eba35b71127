//! Debug (reattach) mode: the user starts the provider by hand, and Terraform attaches to it
//! through `TF_REATTACH_PROVIDERS` instead of launching it. No cookie, no TLS, no handshake line.

use serde_json::json;

use super::handshake::{APP_PROTOCOL_VERSION, Endpoint};

/// The value for `TF_REATTACH_PROVIDERS` that points Terraform at this process.
///
/// `Test: true` tells Terraform not to call Shutdown or kill the process after each command, so
/// one debug process serves many Terraform runs.
pub fn reattach_json(provider_address: &str, endpoint: &Endpoint, pid: u32) -> String {
    json!({
        provider_address: {
            "Protocol": "grpc",
            "ProtocolVersion": APP_PROTOCOL_VERSION,
            "Pid": pid,
            "Test": true,
            "Addr": { "Network": endpoint.network, "String": endpoint.address },
        }
    })
    .to_string()
}

/// The text printed on stdout in debug mode (the only stdout output in that mode).
pub fn instructions(provider_address: &str, endpoint: &Endpoint, pid: u32) -> String {
    let value = reattach_json(provider_address, endpoint, pid);
    format!(
        "Provider {provider_address} started in debug mode. To attach Terraform, set this in the \
         shell you run Terraform from (Ctrl-C here stops the provider):\n\n\
         \tTF_REATTACH_PROVIDERS='{value}'\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reattach_json_shape() {
        let ep = Endpoint {
            network: "unix",
            address: "/tmp/x/plugin.sock".to_owned(),
        };
        let v: serde_json::Value =
            serde_json::from_str(&reattach_json("registry.terraform.io/a/b", &ep, 42)).unwrap();
        let p = &v["registry.terraform.io/a/b"];
        assert_eq!(p["Protocol"], "grpc");
        assert_eq!(p["ProtocolVersion"], 6);
        assert_eq!(p["Pid"], 42);
        assert_eq!(p["Test"], true);
        assert_eq!(p["Addr"]["Network"], "unix");
        assert_eq!(p["Addr"]["String"], "/tmp/x/plugin.sock");
    }

    #[test]
    fn instructions_contain_one_quoted_export() {
        let ep = Endpoint {
            network: "unix",
            address: "/tmp/x/plugin.sock".to_owned(),
        };
        let text = instructions("registry.terraform.io/a/b", &ep, 7);
        let line = text
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("TF_REATTACH_PROVIDERS="))
            .unwrap();
        let quoted = line.trim_start_matches("TF_REATTACH_PROVIDERS=");
        assert!(quoted.starts_with('\'') && quoted.ends_with('\''));
        let _: serde_json::Value = serde_json::from_str(&quoted[1..quoted.len() - 1]).unwrap();
    }
}
