//! The one way a test reaches a file from outside the repository: Karpenter's upstream CRDs,
//! references and AWS's Auto Mode manifests, kept in `../shared/karpenter` beside the clone and
//! listed, with their SHA-256 and where each comes from, in `acceptance-tests/upstream-files.tsv`.
//! [`path`] refuses a path the list does not name (so the list stays the whole story of what the
//! tests need) and says how to get the files when they are not there
//! (`scripts/upstream-files.sh fetch`). Nothing a user runs reads any of them.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The workspace root, as seen from this crate.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where the listed files are kept: `../shared/karpenter` beside the repository.
pub fn root() -> PathBuf {
    workspace().join("../shared/karpenter")
}

/// The list's file.
pub const LIST: &str = "acceptance-tests/upstream-files.tsv";

/// The listed paths (relative to [`root`]), from the list's rows.
pub fn listed() -> &'static [String] {
    static LISTED: OnceLock<Vec<String>> = OnceLock::new();
    LISTED.get_or_init(|| {
        let text = std::fs::read_to_string(workspace().join(LIST)).unwrap_or_else(|e| panic!("{LIST}: {e}"));
        text.lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter_map(|l| l.split('\t').next().map(str::to_string))
            .collect()
    })
}

/// The path of a listed upstream file, or of a directory holding listed files
/// (`crds/versions/v1.14.1`, `crds/versions`). Panics, saying what to do, when the list does
/// not name it or the files are not beside the clone.
pub fn path(relative: &str) -> PathBuf {
    let relative = relative.trim_end_matches('/');
    let dir = format!("{relative}/");
    assert!(
        listed().iter().any(|p| p == relative || p.starts_with(&dir)),
        "{relative} is not in {LIST}: every file a test reads from outside the repository is listed there, with its \
         SHA-256 and where it comes from"
    );
    let full = root().join(relative);
    assert!(
        full.exists(),
        "{} is missing: the tests read the upstream files of {LIST} from ../shared/karpenter beside the clone; \
         run scripts/upstream-files.sh fetch",
        full.display()
    );
    full
}

/// The order of Karpenter's release names, for sorting the release directories here and the
/// tables of `data/karpenter/crds/`: `v1.10.2` → `[1, 10, 2]` (`v1.9` before `v1.10`; a part
/// that is not a number counts as 0).
pub fn release_key(name: &str) -> Vec<u64> {
    name.trim_start_matches('v')
        .split('.')
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}
