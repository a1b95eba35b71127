//! What the scan reports: a [`Finding`] about a block, and the [`Place`] in the configuration
//! files it is about.

use std::fmt;

use crate::terraform::framework::diagnostics::Severity;
use crate::terraform::tfvalue::AttributePath;

/// Where a piece of configuration is written: file (relative to the root module), line and
/// column, both from 1; a line of 0 means "somewhere in this file" (JSON has no positions).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Place {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}:{}", self.file, self.line, self.column)
        }
    }
}

/// One thing the scan found in a block: a key the schema does not have (an error), or an
/// object whose keys it could not read (a warning).
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub severity: Severity,
    pub summary: String,
    /// Starts with the full path (`template.spec.expireAfter: …`) and names where the key is
    /// written.
    pub detail: String,
    /// The part of the path Terraform can show the source line of: the top-level attribute
    /// (after any blocks), then the next step as an element key, which Terraform resolves
    /// inside the attribute's object or tuple constructor (one level deeper than an attribute
    /// path; Terraform 1.15 follows it further, older releases stop there).
    pub subject: AttributePath,
    /// Where the key (or the unreadable value) is written.
    pub at: Option<Place>,
}
