//! Regenerates the data the provider derives from a Karpenter release (`data/karpenter/`) from
//! the release's files. Run through `scripts/karpenter-release.sh`, which documents the
//! arguments; `karpenter_release --help` prints them.

use std::process::ExitCode;

use acceptance_tests::karpenter_release::{Args, ReleaseError, run};

fn main() -> ExitCode {
    let result = Args::parse(std::env::args().skip(1)).and_then(|args| run(&args));
    match result {
        Ok(written) => {
            for path in written {
                println!("wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e @ ReleaseError::Usage(_)) => {
            eprintln!("karpenter_release: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("karpenter_release: {e}");
            ExitCode::FAILURE
        }
    }
}
