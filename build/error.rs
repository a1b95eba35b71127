//! Why a build step could not turn the committed data of `data/karpenter/` into Rust: one
//! message naming the file and what is wrong in it. The build script and the release
//! generator (which checks every table with the build's own readers) share it.

/// Why a table could not be built.
#[derive(Debug)]
pub struct BuildError(pub String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}
