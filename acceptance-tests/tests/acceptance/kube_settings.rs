//! The hashicorp/kubernetes connection settings beyond host and one kubeconfig, through the
//! real terraform CLI against the Kubernetes API test server: `config_paths` (and
//! `KUBE_CONFIG_PATHS`) merged in order, `config_context_cluster` / `config_context_auth_info`
//! overriding a context, `tls_server_name` used for SNI and certificate checks, and `proxy_url`
//! carrying every request through an HTTP CONNECT proxy.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use acceptance_tests::kube::Cluster;
use acceptance_tests::{Workdir, repo_file};

/// A node pool whose apply needs the cluster (CRD gate, then server-side apply), bounded so a
/// connection that cannot work fails in seconds.
fn pool(provider_block: &str) -> String {
    let example = repo_file("examples/resources/karpenter_node_pool/resource.tf");
    let bounded = example.replacen(
        "resource \"karpenter_node_pool\" \"default\" {",
        "resource \"karpenter_node_pool\" \"default\" {\n  timeouts { create = \"15s\" }",
        1,
    );
    format!("{provider_block}\n{bounded}")
}

/// A kubeconfig whose current context points at a cluster nobody listens on.
fn dead_end_kubeconfig(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("dead-end");
    std::fs::write(
        &path,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: dead-end\n  cluster:\n    server: https://127.0.0.1:9\n\
contexts:\n- name: dead-end\n  context:\n    cluster: dead-end\n    user: nobody\n\
current-context: dead-end\nusers:\n- name: nobody\n  user:\n    token: not-a-token\n",
    )
    .expect("write kubeconfig");
    path
}

fn provider(settings: &str) -> String {
    format!("provider \"karpenter\" {{\n  kubernetes {{\n{settings}\n  }}\n}}\n")
}

#[test]
fn config_paths_merge_in_order_and_contexts_can_be_overridden() {
    let cluster = Cluster::with_v1_crds();
    let scratch = tempfile::tempdir().expect("tempdir");
    let dead_end = dead_end_kubeconfig(scratch.path());
    let real = cluster.server.kubeconfig_path();

    // The first file's current-context wins the merge, so without more the provider would go to
    // the dead end; naming the test server's context (defined in the second file) reaches it.
    let work = Workdir::new(&pool(&provider(&format!(
        "    config_paths   = [\"{}\", \"{}\"]\n    config_context = \"kube-testserver\"",
        dead_end.display(),
        real.display()
    ))));
    work.apply().ok();
    assert!(cluster.node_pool("default").is_some());
    work.destroy().ok();

    // The dead end's context, with its cluster and user swapped for the test server's.
    let work = Workdir::new(&pool(&provider(&format!(
        "    config_paths             = [\"{}\", \"{}\"]\n    config_context_cluster   = \"kube-testserver\"\n    config_context_auth_info = \"kube-testserver\"",
        dead_end.display(),
        real.display()
    ))));
    work.apply().ok();
    assert!(cluster.node_pool("default").is_some());
    work.destroy().ok();

    // The same through KUBE_CONFIG_PATHS (":"-separated) and KUBE_CTX, with an empty block.
    let mut work = Workdir::new(&pool(&provider("")));
    work.env(
        "KUBE_CONFIG_PATHS",
        &format!("{}:{}", dead_end.display(), real.display()),
    )
    .env("KUBE_CTX", "kube-testserver");
    work.apply().ok();
    assert!(cluster.node_pool("default").is_some());
    work.destroy().ok();

    // Without an override the merged configuration really is the dead end.
    let work = Workdir::new(&pool(&provider(&format!(
        "    config_paths = [\"{}\", \"{}\"]",
        dead_end.display(),
        real.display()
    ))));
    let failed = work.apply().failed();
    assert!(
        failed.output().contains("connection refused"),
        "{}",
        failed.output()
    );
    assert!(cluster.node_pool("default").is_none());
}

#[test]
fn config_path_and_config_paths_together_are_refused_at_validate() {
    let run = Workdir::new(&pool(&provider(
        "    config_path  = \"/a\"\n    config_paths = [\"/b\"]",
    )))
    .validate()
    .failed();
    assert!(run.output().contains("config_paths"), "{}", run.output());
    assert!(run.output().contains("cannot both be set"), "{}", run.output());
}

#[test]
fn tls_server_name_is_what_the_certificate_is_checked_against() {
    let cluster = Cluster::with_v1_crds();
    // The server's certificate names localhost and 127.0.0.1; host is the IP.
    let with_name = |name: &str| {
        cluster.provider_block().replacen(
            "    token ",
            &format!("    tls_server_name        = \"{name}\"\n    token "),
            1,
        )
    };
    let work = Workdir::new(&pool(&with_name("localhost")));
    work.apply().ok();
    assert!(cluster.node_pool("default").is_some());
    work.destroy().ok();

    let work = Workdir::new(&pool(&with_name("api.other-cluster.invalid")));
    let failed = work.apply().failed();
    assert!(
        failed.output().contains("api.other-cluster.invalid")
            || failed.output().to_lowercase().contains("certificate"),
        "the error should say the certificate does not match: {}",
        failed.output()
    );
    assert!(cluster.node_pool("default").is_none());
}

/// A minimal HTTP CONNECT proxy on 127.0.0.1 that records the targets it tunnels to.
fn connect_proxy() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
    let url = format!("http://{}", listener.local_addr().expect("proxy address"));
    let tunnels = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&tunnels);
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let seen = Arc::clone(&seen);
            std::thread::spawn(move || tunnel(client, &seen));
        }
    });
    (url, tunnels)
}

fn tunnel(client: TcpStream, seen: &Mutex<Vec<String>>) {
    let Ok(read_half) = client.try_clone() else { return };
    let mut reader = BufReader::new(read_half);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => return,
            Ok(_) if header == "\r\n" => break,
            Ok(_) => {}
        }
    }
    let mut parts = request_line.split_whitespace();
    let (Some("CONNECT"), Some(target)) = (parts.next(), parts.next()) else {
        return;
    };
    seen.lock().expect("proxy log").push(target.to_string());
    let Ok(upstream) = TcpStream::connect(target) else {
        return;
    };
    let mut client_writer = client;
    if client_writer
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .is_err()
    {
        return;
    }
    let (Ok(mut upstream_reader), Ok(mut client_reader_writer)) =
        (upstream.try_clone(), client_writer.try_clone())
    else {
        return;
    };
    let mut upstream_writer = upstream;
    // bytes the reader buffered past the headers belong to the tunnel
    let buffered = reader.buffer().to_vec();
    std::thread::spawn(move || {
        let _ = upstream_writer.write_all(&buffered);
        let _ = std::io::copy(&mut reader, &mut upstream_writer);
        let _ = upstream_writer.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut upstream_reader, &mut client_reader_writer);
    let _ = client_reader_writer.shutdown(std::net::Shutdown::Write);
}

#[test]
fn proxy_url_carries_every_request_through_the_proxy() {
    let cluster = Cluster::with_v1_crds();
    let (proxy, tunnels) = connect_proxy();
    let block = cluster.provider_block().replacen(
        "    token ",
        &format!("    proxy_url              = \"{proxy}\"\n    token "),
        1,
    );
    let work = Workdir::new(&pool(&block));
    work.apply().ok();
    assert!(cluster.node_pool("default").is_some());
    let server = cluster
        .server
        .base_url()
        .trim_start_matches("https://")
        .trim_end_matches('/')
        .to_string();
    let seen = tunnels.lock().expect("proxy log").clone();
    assert!(!seen.is_empty(), "no request went through the proxy");
    assert!(
        seen.iter().all(|t| *t == server),
        "tunnels {seen:?}, server {server}"
    );
    work.destroy().ok();

    // A proxy that is not there: the apply fails and nothing reaches the server.
    let dead = cluster.provider_block().replacen(
        "    token ",
        "    proxy_url              = \"http://127.0.0.1:9\"\n    token ",
        1,
    );
    Workdir::new(&pool(&dead)).apply().failed();
    assert!(cluster.node_pool("default").is_none());
}

#[test]
fn a_proxy_url_that_is_not_http_is_refused_at_validate() {
    let run = Workdir::new(&pool(&provider(
        "    host      = \"https://127.0.0.1:6443\"\n    proxy_url = \"socks5://127.0.0.1:1080\"",
    )))
    .validate()
    .failed();
    assert!(run.output().contains("proxy_url"), "{}", run.output());
}

#[test]
fn an_eks_region_that_is_not_an_aws_region_is_refused_at_plan() {
    let run = Workdir::new(&pool(&provider(
        "    eks {\n      cluster_name = \"demo\"\n      region       = \"europe\"\n    }",
    )))
    .plan()
    .failed();
    let text = run.text();
    assert!(text.contains(r#"region = "europe""#), "{}", run.output());
    assert!(
        text.contains(r#""europe" is not an AWS region name"#),
        "{}",
        run.output()
    );
}
