//! `bench`: measures the provider against Terraform's own floor (issue 9) and writes the
//! figures to `acceptance-tests/reports/performance.md`.
//!
//! ```text
//! cargo run --release -p bench -- [--quick] [--reps N] [--out acceptance-tests/reports/performance.md] [--json FILE]
//!                                 [--provider PATH] [--sizes 1,10,100] [--handshakes N] [--figures 1,5,8]
//!                                 [--yardstick PATH --cpu-wrapper PATH]
//! ```
//!
//! Every timed figure is measured beside its baseline in the same run, the two interleaved
//! (their order alternating between repetitions), and reported as median and min–max. The
//! provider is the release build (`cargo build --release`, the shipped profile) unless
//! `--quick` (debug build, N = 1, one repetition: the CI smoke mode, whose figures say only
//! that the bench works) or `--provider` says otherwise. `--figures` runs only the figures named
//! (a before/after comparison of a few figures); such a partial run prints its table and never
//! rewrites the report. Figure 11 also builds (unless `--yardstick` and `--cpu-wrapper` name
//! them) this package's two other binaries: the yardstick provider and the CPU wrapper.

mod configs;
mod drift;
mod error;
mod figures;
mod handshake;
mod instance_types;
mod kubelet_cel;
mod options;
mod provider;
mod queue;
mod report;
mod stats;
mod yardsticks;

use std::process::ExitCode;

use error::BenchError;
use provider::ProviderDir;

fn run() -> Result<(), BenchError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = options::parse_args(&args)?;
    let binary = match &options.provider {
        Some(p) => p.clone(),
        None => provider::build_provider(options.quick)?,
    };
    let provider = ProviderDir::new(&binary)?;
    eprintln!(
        "bench: provider {} ; {} repetition(s), N = {:?}",
        provider.binary.display(),
        options.reps,
        options.sizes
    );
    let results = figures::run_all(&options, &provider)?;
    let md = report::markdown(&options, &provider, &results);
    match &options.out {
        Some(path) => report::write_into(path, &md)?,
        None => println!("{md}"),
    }
    if let Some(path) = &options.json {
        let text = serde_json::to_string_pretty(&report::json(&options, &provider, &results))
            .map_err(|e| BenchError::Measure(format!("JSON: {e}")))?;
        std::fs::write(path, text).map_err(BenchError::io(format!("writing {}", path.display())))?;
    }
    eprintln!("{}", report::console_summary(&options, &results));
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}
