//! The fault proxy in front of moto: fails armed calls (see [`crate::moto::Fault`]), logs every call
//! with its timing, and answers the EKS access-entry calls moto lacks from a stand-in
//! ([`crate::eks_standin`]).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::eks_standin::{self, AccessEntries};
use crate::moto::client::provider_block;
use crate::moto::fault::{Fault, FaultMode};

/// One call that went through the proxy, with when it arrived and when its answer was sent.
#[derive(Debug, Clone)]
pub struct ProxyCall {
    /// `X-Amz-Target` (e.g. `AmazonSQS.CreateQueue`) or the form's `Action=…`.
    pub operation: String,
    /// Whether an armed fault answered it.
    pub failed: bool,
    pub started: Instant,
    pub finished: Instant,
    /// The access key ID the request was signed with (from `Authorization`), if signed.
    pub access_key_id: Option<String>,
    /// The request body as text (form-encoded for the query protocols, JSON otherwise).
    pub body: String,
    /// The `User-Agent` header (empty when absent).
    pub user_agent: String,
}

#[derive(Default)]
struct ProxyState {
    faults: VecDeque<Fault>,
    /// Every request's operation (X-Amz-Target or Action=), in order, and whether it was failed.
    log: Vec<(String, bool)>,
    /// The same calls with their timing, for the benchmarks.
    calls: Vec<ProxyCall>,
}

/// A reverse proxy in front of moto that fails armed calls; stops on drop.
pub struct FaultProxy {
    port: u16,
    state: Arc<Mutex<ProxyState>>,
    stop: Arc<AtomicBool>,
    access_entries: Arc<AccessEntries>,
}

impl FaultProxy {
    /// Starts the proxy on an ephemeral port of 127.0.0.1, forwarding to `upstream_port`.
    pub fn start(upstream_port: u16) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("proxy bind: {e}"));
        let port = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("proxy addr: {e}"))
            .port();
        let state = Arc::new(Mutex::new(ProxyState::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let access_entries = Arc::new(AccessEntries::default());
        {
            let state = state.clone();
            let stop = stop.clone();
            let entries = access_entries.clone();
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let state = state.clone();
                    let entries = entries.clone();
                    std::thread::spawn(move || {
                        let _ = serve(conn, upstream_port, &state, &entries);
                    });
                }
            });
        }
        FaultProxy {
            port,
            state,
            stop,
            access_entries,
        }
    }

    /// The EKS access entries the stand-in holds (moto has none).
    pub fn access_entries(&self) -> &AccessEntries {
        &self.access_entries
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Arms a fault (faults are consumed in the order armed).
    pub fn arm(&self, fault: Fault) {
        self.lock().faults.push_back(fault);
    }

    /// Drops all armed faults that have not fired.
    pub fn disarm(&self) {
        self.lock().faults.clear();
    }

    /// Faults armed that have not fired yet (their remaining count summed).
    pub fn pending(&self) -> usize {
        self.lock().faults.iter().map(|f| f.count).sum()
    }

    /// The operations seen so far, in order, with whether each was failed by the proxy.
    pub fn log(&self) -> Vec<(String, bool)> {
        self.lock().log.clone()
    }

    /// The calls answered so far, in the order they arrived, with their timing.
    pub fn calls(&self) -> Vec<ProxyCall> {
        self.lock().calls.clone()
    }

    /// Forgets the logged operations and calls (armed faults stay).
    pub fn clear_log(&self) {
        let mut s = self.lock();
        s.log.clear();
        s.calls.clear();
    }

    /// The provider block with every AWS endpoint pointing at this proxy.
    pub fn provider_block(&self) -> String {
        provider_block(&self.endpoint())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ProxyState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

struct Request {
    head: Vec<(String, String)>,
    request_line: String,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.head
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `AKID` of `Authorization: AWS4-HMAC-SHA256 Credential=AKID/date/region/service/...`.
    fn access_key_id(&self) -> Option<String> {
        let auth = self.header("authorization")?;
        let at = auth.find("Credential=")? + "Credential=".len();
        auth[at..].split('/').next().map(str::to_string)
    }

    fn operation(&self) -> String {
        if let Some(target) = self.header("x-amz-target") {
            return target.to_string();
        }
        let body = String::from_utf8_lossy(&self.body);
        body.split('&')
            .find(|p| p.starts_with("Action="))
            .map_or_else(|| self.request_line.clone(), str::to_string)
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(None);
    }
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            head.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut req = Request {
        head,
        request_line: request_line.trim_end().to_string(),
        body: Vec::new(),
    };
    if let Some(len) = req.header("content-length").and_then(|l| l.parse::<usize>().ok()) {
        req.body = vec![0; len];
        reader.read_exact(&mut req.body)?;
    } else if req
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            req.body.extend_from_slice(&chunk[..n]);
        }
    }
    Ok(Some(req))
}

/// Serves requests on one client connection, one upstream connection per request.
fn serve(
    conn: TcpStream,
    upstream_port: u16,
    state: &Mutex<ProxyState>,
    entries: &AccessEntries,
) -> std::io::Result<()> {
    let mut writer = conn.try_clone()?;
    let mut reader = BufReader::new(conn);
    while let Some(req) = read_request(&mut reader)? {
        let started = Instant::now();
        let op = req.operation();
        let fault = {
            let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
            let hit = s.faults.iter().position(|f| {
                f.count > 0
                    && if f.exact {
                        op == f.matches
                    } else {
                        op.contains(&f.matches)
                    }
            });
            let hit = match hit {
                Some(i) if s.faults[i].skip > 0 => {
                    s.faults[i].skip -= 1;
                    None
                }
                other => other,
            };
            let fault = hit.map(|i| {
                let f = &mut s.faults[i];
                f.count -= 1;
                let out = f.clone();
                if f.count == 0 {
                    s.faults.remove(i);
                }
                out
            });
            s.log.push((op.clone(), fault.is_some()));
            fault
        };
        let failed = fault.is_some();
        let response = match fault {
            Some(f) if f.mode == FaultMode::Drop => {
                let _ = writer.shutdown(Shutdown::Both);
                return Ok(());
            }
            Some(Fault {
                mode: FaultMode::Slow(delay),
                ..
            }) => {
                let response = forward(&req, upstream_port)?;
                std::thread::sleep(delay);
                response
            }
            Some(f) => error_response(&req, &f),
            None if eks_standin::is_access_entry_call(&req.request_line) => {
                eks_standin::answer(entries, &req.request_line, &req.body, |cluster| {
                    cluster_exists(&req, upstream_port, cluster)
                })
            }
            None => {
                let answer = forward(&req, upstream_port)?;
                match eks_standin::describe_cluster_name(&req.request_line)
                    .and_then(|cluster| entries.compute_config(&cluster))
                {
                    Some(compute) => eks_standin::with_compute_config(answer, &compute),
                    None => answer,
                }
            }
        };
        // Recorded before the client gets the answer: a client that has its answer (and a
        // process that exited after it) finds its call in `calls()`, and a `clear_log()` made
        // after that answer cannot be overtaken by the record of the call.
        state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .calls
            .push(ProxyCall {
                operation: op,
                failed,
                started,
                finished: Instant::now(),
                access_key_id: req.access_key_id(),
                body: String::from_utf8_lossy(&req.body).into_owned(),
                user_agent: req.header("user-agent").unwrap_or_default().to_string(),
            });
        writer.write_all(&response)?;
        writer.flush()?;
    }
    let _ = writer.shutdown(Shutdown::Both);
    Ok(())
}

/// Whether moto knows the EKS cluster `name` (DescribeCluster, signed headers reused: moto
/// does not check signatures).
fn cluster_exists(req: &Request, upstream_port: u16, name: &str) -> bool {
    let describe = Request {
        head: req.head.clone(),
        request_line: format!("GET /clusters/{name} HTTP/1.1"),
        body: Vec::new(),
    };
    forward(&describe, upstream_port)
        .is_ok_and(|r| r.starts_with(b"HTTP/1.1 200") || r.starts_with(b"HTTP/1.0 200"))
}

/// Sends `req` to moto on a fresh connection and returns its whole response, rewritten to
/// a Content-Length body so the client connection can stay open.
fn forward(req: &Request, upstream_port: u16) -> std::io::Result<Vec<u8>> {
    let mut up = TcpStream::connect(("127.0.0.1", upstream_port))?;
    let mut out = Vec::new();
    out.extend_from_slice(req.request_line.as_bytes());
    out.extend_from_slice(b"\r\n");
    for (k, v) in &req.head {
        if k.eq_ignore_ascii_case("connection")
            || k.eq_ignore_ascii_case("transfer-encoding")
            || k.eq_ignore_ascii_case("content-length")
        {
            continue;
        }
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(
        format!("Content-Length: {}\r\nConnection: close\r\n\r\n", req.body.len()).as_bytes(),
    );
    out.extend_from_slice(&req.body);
    up.write_all(&out)?;
    let mut reader = BufReader::new(up);
    let mut status_line = String::new();
    reader.read_line(&mut status_line)?;
    let mut headers = Vec::new();
    let mut chunked = false;
    let mut length = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end().to_string();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            let (k, v) = (k.trim(), v.trim());
            if k.eq_ignore_ascii_case("transfer-encoding") {
                chunked = v.eq_ignore_ascii_case("chunked");
                continue;
            }
            if k.eq_ignore_ascii_case("content-length") {
                length = v.parse::<usize>().ok();
                continue;
            }
            if k.eq_ignore_ascii_case("connection") {
                continue;
            }
            headers.push(format!("{k}: {v}"));
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = length {
        body = vec![0; n];
        reader.read_exact(&mut body)?;
    } else {
        reader.read_to_end(&mut body)?;
    }
    let mut resp = Vec::new();
    resp.extend_from_slice(status_line.trim_end().as_bytes());
    resp.extend_from_slice(b"\r\n");
    for h in headers {
        resp.extend_from_slice(h.as_bytes());
        resp.extend_from_slice(b"\r\n");
    }
    resp.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    resp.extend_from_slice(&body);
    Ok(resp)
}

/// The error in the shape the service's protocol uses: JSON `__type` (plus the query-compat
/// header for SQS) for `X-Amz-Target` services, an XML `ErrorResponse` for IAM/STS.
fn error_response(req: &Request, f: &Fault) -> Vec<u8> {
    if eks_standin::is_access_entry_call(&req.request_line) {
        let body = serde_json::json!({ "__type": f.code, "message": f.message });
        return eks_standin::response(f.status, &body, Some(&f.code));
    }
    let reason = match f.status {
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let fault_kind = if f.status >= 500 { "Receiver" } else { "Sender" };
    let (content_type, extra, body) = match req.header("x-amz-target") {
        Some(target) => {
            let mut extra = format!("X-Amzn-ErrorType: {}\r\n", f.code);
            if target.starts_with("AmazonSQS") {
                extra.push_str(&format!("x-amzn-query-error: {};{fault_kind}\r\n", f.code));
            }
            let body = serde_json::json!({ "__type": f.code, "message": f.message }).to_string();
            ("application/x-amz-json-1.1", extra, body)
        }
        None => (
            "text/xml",
            String::new(),
            format!(
                "<ErrorResponse><Error><Type>{fault_kind}</Type><Code>{}</Code><Message>{}</Message></Error><RequestId>fault-proxy</RequestId></ErrorResponse>",
                f.code, f.message
            ),
        ),
    };
    format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {content_type}\r\n{extra}x-amzn-RequestId: fault-proxy\r\nContent-Length: {}\r\n\r\n{body}",
        f.status,
        body.len()
    )
    .into_bytes()
}
