//! The provider crate's integration tests, one module per area, in one test binary (compiled
//! and linked once): the house rules ([`architecture`]), generated docs and every Markdown
//! link ([`markdown_links`]), the fuzz corpus, the
//! Kubernetes side against the test server, the tfplugin6 protocol over the built plugin, and
//! the real `terraform` CLI smoke test. Run one area with `cargo test --test provider -- <module>::`.

mod architecture;
mod cargo_tree;
mod common;
mod docs;
mod fuzz_build;
mod fuzz_corpus;
mod k8s_side;
mod markdown_links;
mod one_build;
mod protocol;
mod protocol_malformed;
mod protocol_rpcs;
mod rust_version;
mod terraform_smoke;
mod upstream_files;
