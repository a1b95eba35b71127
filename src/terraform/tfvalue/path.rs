//! Attribute paths: where in a value a diagnostic or a plan change points.

use std::fmt;

/// One step into a value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathStep {
    Attribute(String),
    ElementKeyString(String),
    ElementKeyInt(i64),
}

/// A path from the root of a resource's value, e.g. `template.spec.requirements[0].key`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct AttributePath {
    pub steps: Vec<PathStep>,
}

impl AttributePath {
    pub fn root() -> Self {
        Self::default()
    }

    pub fn attr(&self, name: impl Into<String>) -> Self {
        self.with(PathStep::Attribute(name.into()))
    }

    pub fn key(&self, key: impl Into<String>) -> Self {
        self.with(PathStep::ElementKeyString(key.into()))
    }

    pub fn index(&self, index: usize) -> Self {
        self.with(PathStep::ElementKeyInt(i64::try_from(index).unwrap_or(i64::MAX)))
    }

    /// `rest` continued from the end of this path.
    pub fn join(&self, rest: &AttributePath) -> Self {
        let mut steps = self.steps.clone();
        steps.extend(rest.steps.iter().cloned());
        Self { steps }
    }

    fn with(&self, step: PathStep) -> Self {
        let mut steps = self.steps.clone();
        steps.push(step);
        Self { steps }
    }

    pub fn is_root(&self) -> bool {
        self.steps.is_empty()
    }
}

impl fmt::Display for AttributePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.steps.iter().enumerate() {
            match step {
                PathStep::Attribute(name) if i == 0 => write!(f, "{name}")?,
                PathStep::Attribute(name) => write!(f, ".{name}")?,
                PathStep::ElementKeyString(key) => write!(f, "[{key:?}]")?,
                PathStep::ElementKeyInt(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}
