//! What stops a benchmark run, and the command line a usage error prints.

/// Everything that stops a benchmark run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("usage: {0}\n{USAGE}")]
    Usage(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("building the provider failed:\n{0}")]
    Build(String),
    #[error("terraform {what} failed:\n{output}")]
    Terraform { what: String, output: String },
    #[error("{0}")]
    Measure(String),
    #[error("AWS SDK baseline: {0}")]
    Aws(String),
}

impl BenchError {
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
        let what = what.into();
        move |source| BenchError::Io { what, source }
    }
}

/// The command line, printed with every usage error.
pub const USAGE: &str = "bench [--quick] [--reps N] [--out FILE.md] [--json FILE.json] [--provider PATH] \
                     [--sizes 1,10,100] [--handshakes N] [--figures 1,5,8] [--yardstick PATH --cpu-wrapper PATH]";
