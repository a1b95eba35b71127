//! No code: this crate exists for its `Cargo.toml`, which turns on, for the dependencies whose
//! features would otherwise differ between cargo commands, the features the workspace's test
//! build compiles them with, so every command reuses one build of the dependencies.
