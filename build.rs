//! Build script: compiles `proto/*.proto` with the pure-Rust `protox` compiler (no system
//! `protoc`) and generates prost messages plus tonic server and client code; and compiles the
//! committed Karpenter data of `data/karpenter/` (written by `scripts/karpenter-release.sh`)
//! into Rust: the offline instance-type table ([`instance_types`], issue 39) and the controller
//! policy of every Karpenter release the provider knows ([`controller_policy`], issue 50). The
//! build reads nothing outside the repository.

use std::error::Error;
use std::path::PathBuf;

// `check` in each is the generator's (acceptance-tests/src/karpenter_release), not the build's.
#[allow(dead_code)]
#[path = "build/controller_policy.rs"]
mod controller_policy;
#[allow(dead_code)]
#[path = "build/instance_types.rs"]
mod instance_types;

const PROTOS: &[&str] = &[
    "proto/tfplugin6.proto",
    "proto/grpc_controller.proto",
    "proto/grpc_stdio.proto",
    "proto/grpc_broker.proto",
];

fn main() -> Result<(), Box<dyn Error>> {
    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }
    println!("cargo:rerun-if-changed=build/instance_types.rs");
    println!("cargo:rerun-if-changed=build/controller_policy.rs");
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    instance_types::generate(&manifest_dir, &out_dir.join("instance_types_table.rs"))?;
    controller_policy::generate(&manifest_dir, &out_dir.join("controller_policies.rs"))?;
    let descriptors = protox::compile(PROTOS, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(descriptors)?;
    Ok(())
}
