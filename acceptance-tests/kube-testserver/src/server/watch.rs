//! Watches: the replay from a resourceVersion, then live events, as JSON lines.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Response, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::shared::{Body, Shared, lock};
use crate::store::{Event, ResourceType, Selectors};
use crate::util::{ApiError, meta_str};

pub(super) fn event_line(etype: &str, object: &Value) -> Bytes {
    let mut v = serde_json::to_vec(&json!({"type": etype, "object": object})).unwrap_or_default();
    v.push(b'\n');
    Bytes::from(v)
}
pub(super) fn watch(
    shared: &Arc<Shared>,
    rt: ResourceType,
    ns: Option<String>,
    sel: Selectors,
    q: &HashMap<String, String>,
) -> Result<Response<Body>, ApiError> {
    let rv_param = q.get("resourceVersion").cloned().unwrap_or_default();
    let send_initial = q.get("sendInitialEvents").is_some_and(|s| s == "true");
    let bookmarks = q.get("allowWatchBookmarks").is_some_and(|s| s == "true");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(1800));
    let matches = {
        let rt = rt.clone();
        let ns = ns.clone();
        move |ev: &Event| -> bool {
            ev.group == rt.group
                && ev.plural == rt.plural
                && ns
                    .as_deref()
                    .is_none_or(|n| meta_str(&ev.object, "namespace") == Some(n))
                && sel.matches(&ev.object)
        }
    };
    let api_version = rt.api_version();
    let with_version = move |o: &Value| {
        let mut o = o.clone();
        if let Some(m) = o.as_object_mut() {
            m.insert("apiVersion".into(), json!(api_version));
        }
        o
    };
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    let mut initial: Vec<Bytes> = Vec::new();
    let sub: Option<broadcast::Receiver<Arc<Event>>>;
    let start_rv;
    {
        let st = lock(&shared.state);
        start_rv = st.rv;
        if rv_param.is_empty() || rv_param == "0" || send_initial {
            for o in st.list(&rt, ns.as_deref(), &Selectors::default()) {
                let ev = Event {
                    rv: 0,
                    group: rt.group.clone(),
                    plural: rt.plural.clone(),
                    etype: "ADDED",
                    object: o,
                };
                if matches(&ev) {
                    initial.push(event_line("ADDED", &with_version(&ev.object)));
                }
            }
            if send_initial {
                let bm = json!({"kind": rt.kind, "apiVersion": rt.api_version(), "metadata": {"resourceVersion": st.rv.to_string(),
                    "annotations": {"k8s.io/initial-events-end": "true"}}});
                initial.push(event_line("BOOKMARK", &bm));
            }
            sub = Some(st.subscribe());
        } else {
            let rv: u64 = rv_param
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv_param}")))?;
            match st.watch_from(rv) {
                Ok((past, r)) => {
                    for ev in past.iter().filter(|e| matches(e)) {
                        initial.push(event_line(ev.etype, &with_version(&ev.object)));
                    }
                    sub = Some(r);
                }
                Err(oldest) => {
                    let e = ApiError::new(
                        410,
                        "Expired",
                        format!("too old resource version: {rv} ({oldest})"),
                    );
                    initial.push(event_line("ERROR", &e.body()));
                    sub = None;
                }
            }
        }
    }
    let mut shutdown = shared.shutdown.clone();
    let kind = rt.kind.clone();
    let av = rt.api_version();
    tokio::spawn(async move {
        for line in initial {
            if tx.send(line).await.is_err() {
                return;
            }
        }
        let Some(mut sub) = sub else { return };
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        let mut last_rv = start_rv;
        loop {
            tokio::select! {
                ev = sub.recv() => match ev {
                    Ok(ev) => {
                        last_rv = ev.rv;
                        if matches(&ev) && tx.send(event_line(ev.etype, &with_version(&ev.object))).await.is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let e = ApiError::new(410, "Expired", "too old resource version: watch fell behind");
                        let _ = tx.send(event_line("ERROR", &e.body())).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = tick.tick(), if bookmarks => {
                    let bm = json!({"kind": kind, "apiVersion": av, "metadata": {"resourceVersion": last_rv.to_string()}});
                    if tx.send(event_line("BOOKMARK", &bm)).await.is_err() {
                        return;
                    }
                }
                _ = &mut deadline => return,
                _ = shutdown.changed() => return,
                _ = tx.closed() => return,
            }
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    let mut r = Response::new(StreamBody::new(stream).boxed_unsync());
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(r)
}
