//! Build script: compiles `proto/*.proto` with the pure-Rust `protox` compiler (no system
//! `protoc`) and generates prost messages plus tonic server and client code.

use std::error::Error;

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
    let descriptors = protox::compile(PROTOS, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(descriptors)?;
    Ok(())
}
