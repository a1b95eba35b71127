//! The local test environment for the quick-start: starts the Kubernetes API test server
//! (Karpenter's kinds rebuilt from the repository's release data, `data/karpenter/crds/`, and a
//! simulated Karpenter) and moto, writes a tfvars file pointing the quick-start at them, and
//! serves until stdin closes. It reads nothing outside the repository.
//!
//! `local_env <tfvars path>`

use std::io::Read;

use acceptance_tests::kube::Cluster;
use acceptance_tests::moto::{Moto, REGION};

fn main() -> std::process::ExitCode {
    let Some(tfvars) = std::env::args().nth(1) else {
        eprintln!("usage: local_env <tfvars path>");
        return std::process::ExitCode::from(2);
    };
    let cluster = match Cluster::from_release_data() {
        Ok(cluster) => cluster,
        Err(e) => {
            eprintln!("local_env: the Kubernetes API test server could not serve Karpenter's kinds: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let moto = Moto::start();
    let vars = format!(
        "kubeconfig_path = \"{}\"\naws_endpoint    = \"{}\"\nregion          = \"{REGION}\"\n",
        cluster.server.kubeconfig_path().display(),
        moto.endpoint()
    );
    if let Err(e) = std::fs::write(&tfvars, vars) {
        eprintln!("local_env: cannot write {tfvars}: {e}");
        return std::process::ExitCode::FAILURE;
    }
    println!("ready {tfvars}");
    // Serve until the caller closes our stdin (or kills us).
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(moto);
    drop(cluster);
    std::process::ExitCode::SUCCESS
}
