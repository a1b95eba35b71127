//! A cheap, borrowed path used while walking a value; turned into an [`AttributePath`] only
//! when an error needs one, so the codecs do not clone a path per element.

use super::path::{AttributePath, PathStep};

#[derive(Clone, Copy)]
pub(crate) enum Trail<'a> {
    Root,
    Attr(&'a Trail<'a>, &'a str),
    Key(&'a Trail<'a>, &'a str),
    Index(&'a Trail<'a>, usize),
}

impl<'a> Trail<'a> {
    pub(crate) fn attr(&'a self, name: &'a str) -> Trail<'a> {
        Trail::Attr(self, name)
    }

    pub(crate) fn key(&'a self, key: &'a str) -> Trail<'a> {
        Trail::Key(self, key)
    }

    pub(crate) fn index(&'a self, index: usize) -> Trail<'a> {
        Trail::Index(self, index)
    }

    pub(crate) fn to_path(self) -> AttributePath {
        let mut steps = Vec::new();
        let mut here = self;
        loop {
            match here {
                Trail::Root => break,
                Trail::Attr(parent, name) => {
                    steps.push(PathStep::Attribute(name.to_string()));
                    here = *parent;
                }
                Trail::Key(parent, key) => {
                    steps.push(PathStep::ElementKeyString(key.to_string()));
                    here = *parent;
                }
                Trail::Index(parent, index) => {
                    steps.push(PathStep::ElementKeyInt(i64::try_from(index).unwrap_or(i64::MAX)));
                    here = *parent;
                }
            }
        }
        steps.reverse();
        AttributePath { steps }
    }
}
