//! List resources (tfplugin6 6.10, Terraform 1.14+ `terraform query`): a resource type that
//! can list finds the remote objects of its kind, each as an identity (what an `import`
//! block takes), a name a person reads, and optionally the state an import would give.
//!
//! The resource writes its results into a [`ListSink`]; the server streams each as one
//! `ListResource.Event`. The sink enforces the request's `limit` and tells the resource when
//! to stop (the limit is reached, or Terraform stopped reading), so a listing never does the
//! work of objects nobody will see.
//!
//! Contract (Terraform core's `ListResource` client): every event carries an identity of the
//! resource's identity schema; an event with an error diagnostic ends the whole listing, so an
//! object that cannot be listed is reported as a warning event without an identity
//! ([`ListSink::skip`]), and only a failure of the listing itself is an error
//! ([`ListSink::fail`]).

use tokio::sync::mpsc;

use super::schema::Attribute;
use super::validate as v;
use crate::terraform::framework::diagnostics::Diagnostics;
use crate::terraform::tfvalue::Value;

/// What Terraform asks a listing for.
#[derive(Debug, Clone)]
pub struct ListRequest {
    /// The list block's `config { … }`, in the list schema's type (never null).
    pub config: Value,
    /// `include_resource = true`: each result carries the state an import would give.
    pub include_resource_object: bool,
    /// At most this many results; 0 or less means no limit.
    pub limit: i64,
}

/// One result of a listing.
// Events pass one at a time through a bounded channel and are encoded at once: boxing the
// larger variant would only add an allocation per object.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum ListEvent {
    /// A remote object: its identity, a name for people, and its state when asked for.
    Found {
        identity: Value,
        display_name: String,
        state: Option<Value>,
        /// Warnings about this object (e.g. part of it could not be read).
        diagnostics: Diagnostics,
    },
    /// An object that could not be listed (warnings, no identity), or the failure of the
    /// listing (errors), after which nothing more is sent.
    Diagnostics(Diagnostics),
}

/// Where a listing writes its results. Cloneable, so a listing may fan out.
#[derive(Clone)]
pub struct ListSink {
    tx: mpsc::Sender<ListEvent>,
    remaining: std::sync::Arc<std::sync::atomic::AtomicI64>,
    include_state: bool,
}

impl ListSink {
    /// A sink for `request`, and the receiving end the server streams from.
    pub fn new(request: &ListRequest) -> (Self, mpsc::Receiver<ListEvent>) {
        let (tx, rx) = mpsc::channel(16);
        let remaining = if request.limit > 0 {
            request.limit
        } else {
            i64::MAX
        };
        (
            Self {
                tx,
                remaining: std::sync::Arc::new(std::sync::atomic::AtomicI64::new(remaining)),
                include_state: request.include_resource_object,
            },
            rx,
        )
    }

    /// Whether results still have a reader and the limit is not reached: a listing checks this
    /// before doing per-object work.
    pub fn wants_more(&self) -> bool {
        !self.tx.is_closed() && self.remaining.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    /// Whether results carry their state (`include_resource`).
    pub fn include_state(&self) -> bool {
        self.include_state
    }

    /// Sends one found object. Returns `false` when the listing should stop (limit reached,
    /// or Terraform stopped reading). The state is dropped unless it was asked for.
    pub async fn found(
        &self,
        identity: Value,
        display_name: String,
        state: Option<Value>,
        diagnostics: Diagnostics,
    ) -> bool {
        use std::sync::atomic::Ordering;
        if self.remaining.fetch_sub(1, Ordering::SeqCst) <= 0 {
            return false;
        }
        let state = if self.include_state { state } else { None };
        let event = ListEvent::Found {
            identity,
            display_name,
            state,
            diagnostics,
        };
        self.tx.send(event).await.is_ok() && self.wants_more()
    }

    /// Reports an object that could not be listed: a warning, and the listing goes on.
    pub async fn skip(&self, summary: impl Into<String>, detail: impl Into<String>) -> bool {
        let mut d = Diagnostics::new();
        d.warning(summary, detail);
        self.tx.send(ListEvent::Diagnostics(d)).await.is_ok() && self.wants_more()
    }

    /// Reports the failure of the whole listing (errors); the listing must stop after this.
    pub async fn fail(&self, diagnostics: Diagnostics) {
        // A closed stream has no reader left to tell.
        let _ = self.tx.send(ListEvent::Diagnostics(diagnostics)).await;
    }
}

/// The `name_prefix` filter every list schema offers.
pub fn name_prefix_attribute(what: &str) -> Attribute {
    Attribute::string("name_prefix")
        .optional()
        .describe(format!("Only {what} whose name starts with this prefix."))
        .validate(v::non_empty())
}

/// Whether `name` passes an optional `name_prefix` filter of a list configuration.
pub fn name_matches(config: &Value, name: &str) -> bool {
    config
        .get("name_prefix")
        .and_then(Value::as_str)
        .is_none_or(|prefix| name.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(limit: i64, include: bool) -> ListRequest {
        ListRequest {
            config: Value::object([("name_prefix", Value::Null)]),
            include_resource_object: include,
            limit,
        }
    }

    #[tokio::test]
    async fn the_sink_stops_at_the_limit() {
        let (sink, mut rx) = ListSink::new(&request(2, false));
        let id = Value::object([("name", Value::string("a"))]);
        assert!(sink.found(id.clone(), "a".into(), None, Diagnostics::new()).await);
        assert!(!sink.found(id.clone(), "b".into(), None, Diagnostics::new()).await);
        assert!(!sink.wants_more());
        assert!(!sink.found(id.clone(), "c".into(), None, Diagnostics::new()).await);
        drop(sink);
        let mut names = Vec::new();
        while let Some(ListEvent::Found { display_name, .. }) = rx.recv().await {
            names.push(display_name);
        }
        assert_eq!(names, ["a", "b"]);
    }

    #[tokio::test]
    async fn state_is_sent_only_when_asked_for() {
        for include in [false, true] {
            let (sink, mut rx) = ListSink::new(&request(0, include));
            let state = Value::object([("name", Value::string("a"))]);
            assert!(
                sink.found(state.clone(), "a".into(), Some(state.clone()), Diagnostics::new())
                    .await
            );
            let Some(ListEvent::Found { state: sent, .. }) = rx.recv().await else {
                panic!("no event")
            };
            assert_eq!(sent.is_some(), include);
        }
    }

    #[tokio::test]
    async fn a_closed_reader_stops_the_listing() {
        let (sink, rx) = ListSink::new(&request(0, false));
        drop(rx);
        assert!(!sink.wants_more());
        assert!(
            !sink
                .found(Value::Null, "a".into(), None, Diagnostics::new())
                .await
        );
    }

    #[test]
    fn name_prefix_filters_only_when_set() {
        let none = Value::object([("name_prefix", Value::Null)]);
        let some = Value::object([("name_prefix", Value::string("team-"))]);
        assert!(name_matches(&none, "anything"));
        assert!(name_matches(&some, "team-a"));
        assert!(!name_matches(&some, "other"));
    }
}
