//! Diagnostics: what the provider tells the user, with the attribute path it is about.
//!
//! Every error that reaches Terraform goes through [`Diagnostics`]: a summary a user can scan,
//! a detail that says what to do, and (where there is one) the attribute the problem is in.

use std::fmt;

use crate::terraform::tfvalue::AttributePath;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub summary: String,
    pub detail: String,
    pub path: Option<AttributePath>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{level}: {}", self.summary)?;
        if let Some(path) = &self.path {
            write!(f, " (at {path})")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// An ordered collection of diagnostics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diagnostics(Vec<Diagnostic>);

impl Diagnostics {
    pub fn new() -> Self {
        Self::default()
    }

    /// One error diagnostic, for the common `Err(Diagnostics::error(..))` case.
    pub fn from_error(summary: impl Into<String>, detail: impl Into<String>) -> Self {
        let mut d = Self::new();
        d.error(summary, detail);
        d
    }

    pub fn error(&mut self, summary: impl Into<String>, detail: impl Into<String>) {
        self.push(Severity::Error, summary, detail, None);
    }

    pub fn error_at(&mut self, path: &AttributePath, summary: impl Into<String>, detail: impl Into<String>) {
        self.push(Severity::Error, summary, detail, Some(path.clone()));
    }

    pub fn warning(&mut self, summary: impl Into<String>, detail: impl Into<String>) {
        self.push(Severity::Warning, summary, detail, None);
    }

    pub fn warning_at(
        &mut self,
        path: &AttributePath,
        summary: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.push(Severity::Warning, summary, detail, Some(path.clone()));
    }

    fn push(
        &mut self,
        severity: Severity,
        summary: impl Into<String>,
        detail: impl Into<String>,
        path: Option<AttributePath>,
    ) {
        self.0.push(Diagnostic {
            severity,
            summary: summary.into(),
            detail: detail.into(),
            path: path.filter(|p| !p.is_root()),
        });
    }

    /// The same diagnostics, with every attribute path taken as relative to `prefix`: for
    /// values checked on their own that Terraform places inside a larger body (a list
    /// resource's `config {}` block).
    pub fn within(self, prefix: &AttributePath) -> Self {
        Self(
            self.0
                .into_iter()
                .map(|mut d| {
                    d.path = d.path.map(|p| prefix.join(&p));
                    d
                })
                .collect(),
        )
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.0
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_prefixes_paths_and_leaves_pathless_diagnostics_alone() {
        let mut d = Diagnostics::new();
        d.error_at(&AttributePath::root().attr("label_selector"), "bad", "detail");
        d.warning("general", "");
        let d = d.within(&AttributePath::root().attr("config"));
        let paths: Vec<Option<String>> = d.iter().map(|d| d.path.as_ref().map(|p| p.to_string())).collect();
        assert_eq!(paths, [Some("config.label_selector".to_string()), None]);
    }
}
