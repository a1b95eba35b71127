//! The plugin binary Terraform starts.
fn main() {}
