//! Build script: compiles `proto/*.proto` with the pure-Rust `protox` compiler (no system
//! `protoc`) and generates prost messages plus tonic server and client code; and compiles the
//! committed Karpenter data of `data/karpenter/` (written by `scripts/karpenter-release.sh`)
//! into Rust (the steps in `build/`): the offline instance-type table (issue 39) and the
//! controller policy of every Karpenter release the provider knows (issue 50). The
//! build reads nothing outside the repository.

use std::error::Error;
use std::path::PathBuf;

// Each step's `check` is the generator's (acceptance-tests/src/karpenter_release), not the
// build's.
#[allow(dead_code)]
#[path = "build/mod.rs"]
mod steps;

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
    for step in ["mod", "error", "instance_types", "controller_policy"] {
        println!("cargo:rerun-if-changed=build/{step}.rs");
    }
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    steps::instance_types::generate(&manifest_dir, &out_dir.join("instance_types_table.rs"))?;
    steps::controller_policy::generate(&manifest_dir, &out_dir.join("controller_policies.rs"))?;
    let descriptors = protox::compile(PROTOS, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(descriptors)?;
    Ok(())
}
