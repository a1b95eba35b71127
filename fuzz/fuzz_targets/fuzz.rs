//! libFuzzer entry point for every target in `terraform_provider_karpenter_fuzz::TARGETS`; the
//! environment variable `FUZZ_TARGET` names the one to run (scripts/fuzz.sh sets it).
#![no_main]

use std::sync::LazyLock;

use terraform_provider_karpenter_fuzz::{Check, TARGETS};

static CHECK: LazyLock<Check> = LazyLock::new(|| {
    let name = std::env::var("FUZZ_TARGET").unwrap_or_default();
    match TARGETS.iter().find(|(n, _)| *n == name) {
        Some((_, check)) => *check,
        None => {
            let names: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
            eprintln!("set FUZZ_TARGET to one of: {}", names.join(", "));
            std::process::exit(2);
        }
    }
});

libfuzzer_sys::fuzz_target!(|data: &[u8]| CHECK(data));
