//! Empty: present so that the `[build-dependencies]` of this crate (features of the crates that
//! build scripts and proc-macros use) take part in the workspace's feature resolution.
fn main() {}
