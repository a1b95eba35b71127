//! Build script: compiles `proto/*.proto` with the pure-Rust `protox` compiler (no system
//! `protoc`) and generates prost messages plus tonic server and client code; and compiles
//! Karpenter's instance-type reference into the provider's offline table
//! ([`instance_types`], issue 39).

use std::error::Error;
use std::path::PathBuf;

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
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    instance_types::generate(&manifest_dir, &out_dir.join("instance_types_table.rs"))?;
    let descriptors = protox::compile(PROTOS, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(descriptors)?;
    Ok(())
}
