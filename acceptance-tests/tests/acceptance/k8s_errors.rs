//! #18, through the real terraform CLI against the Kubernetes API test server: an unreachable
//! or misconfigured API server fails fast with the real cause and the server's URL (bounded,
//! and a refresh keeps the prior state quickly), a 401 is worded as a bad credential and a 403
//! as missing RBAC naming the verb and resource, a delete that waits says every ~10 s which
//! finalizer it waits for and whose it is, and every request carries the provider's User-Agent.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use acceptance_tests::{Workdir, library_text, repo_file};
use kube_testserver::{Grant, PolicyRule};

/// The example node pool (the CRD gate, then server-side apply), with default timeouts.
fn pool() -> String {
    repo_file("examples/resources/karpenter_node_pool/resource.tf")
}

/// A local port nobody listens on (bound, then released).
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

fn dead_provider(port: u16) -> String {
    format!(
        "provider \"karpenter\" {{\n  kubernetes {{\n    host  = \"https://127.0.0.1:{port}\"\n    token = \"x\"\n  }}\n}}\n"
    )
}

/// Runs `args`, killing terraform after `guard` (the behaviour before the fix was 10 minutes).
fn timed(work: &Workdir, args: &[&str], guard: Duration) -> (acceptance_tests::Run, Duration) {
    let started = Instant::now();
    let (run, _) = work.spawn(args).wait(guard);
    (run, started.elapsed())
}

#[test]
fn connection_refused_fails_fast_naming_the_server_and_the_cause() {
    let port = closed_port();
    let work = Workdir::new(&format!("{}\n{}", dead_provider(port), pool()));
    let (run, took) = timed(
        &work,
        &["apply", "-auto-approve", "-no-color"],
        Duration::from_secs(180),
    );
    eprintln!("apply against a closed port failed after {took:?}");
    assert!(!run.success, "{}", run.output());
    let text = run.text();
    assert!(
        text.contains("Cannot reach the Kubernetes API server"),
        "{}",
        run.output()
    );
    assert!(
        text.contains(&format!("https://127.0.0.1:{port}/")),
        "{}",
        run.output()
    );
    assert!(
        text.to_lowercase().contains("connection refused"),
        "{}",
        run.output()
    );
    assert!(!text.contains("Failed waiting for the CRD"), "{}", run.output());
    // #41: plain words, not the connector's (`client error (Connect): tcp connect error: … (os
    // error 111)`).
    assert_eq!(library_text(&run), None, "{}", run.output());
    // Not a speed figure: the behaviour before the fix waited out the CRD wait's 10 minutes;
    // now each call gives up after 30 s of refused connections. The bound leaves room for
    // terraform's own time on a loaded machine.
    assert!(took < Duration::from_secs(150), "took {took:?}");
}

#[test]
fn an_untrusted_certificate_fails_at_once() {
    let cluster = Cluster::with_v1_crds();
    // host and token right, but no CA: the server's certificate is not trusted.
    let provider = format!(
        "provider \"karpenter\" {{\n  kubernetes {{\n    host  = \"{}\"\n    token = \"{}\"\n  }}\n}}\n",
        cluster.server.base_url(),
        cluster.server.token()
    );
    let work = Workdir::new(&format!("{provider}\n{}", pool()));
    let (run, took) = timed(
        &work,
        &["apply", "-auto-approve", "-no-color"],
        Duration::from_secs(120),
    );
    eprintln!("apply with an untrusted certificate failed after {took:?}");
    assert!(!run.success, "{}", run.output());
    assert!(
        run.text()
            .contains("TLS connection to the Kubernetes API server failed"),
        "{}",
        run.output()
    );
    assert_eq!(library_text(&run), None, "{}", run.output());
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

#[test]
fn refresh_of_an_unreachable_cluster_keeps_state_quickly() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&format!("{}\n{}", cluster.provider_block(), pool()));
    work.apply().ok();
    let port = closed_port();
    work.set_config(&format!("{}\n{}", dead_provider(port), pool()));
    let (run, took) = timed(&work, &["plan", "-no-color"], Duration::from_secs(180));
    eprintln!("plan with prior state against a closed port took {took:?}");
    assert!(run.success, "{}", run.output());
    let text = run.text();
    assert!(text.contains("Could not refresh"), "{}", run.output());
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{}", run.output());
    assert_eq!(library_text(&run), None, "{}", run.output());
    // As above: well under the minutes a refresh waited before, with room for a loaded machine.
    assert!(took < Duration::from_secs(150), "took {took:?}");
}

#[test]
fn a_401_is_a_bad_credential_not_missing_permissions() {
    let cluster = Cluster::with_v1_crds();
    let provider = cluster
        .provider_block()
        .replace(cluster.server.token(), "expired-or-wrong");
    let work = Workdir::new(&format!("{provider}\n{}", pool()));
    let run = work.apply().failed();
    let text = run.text();
    assert!(
        text.contains("did not accept the provider's credentials"),
        "{}",
        run.output()
    );
    assert!(text.contains("expired"), "{}", run.output());
    assert!(!text.contains("Not allowed"), "{}", run.output());
}

#[test]
fn a_403_names_the_denied_verb_and_resource() {
    let cluster = Cluster::with_v1_crds();
    const TOKEN: &str = "read-only-token";
    cluster.server.grant(Grant::new(
        TOKEN,
        vec![
            PolicyRule::new(
                &["apiextensions.k8s.io"],
                &["customresourcedefinitions"],
                &["get", "list", "watch"],
            ),
            PolicyRule::new(&["karpenter.sh"], &["nodepools"], &["get", "list", "watch"]),
        ],
    ));
    let provider = cluster.provider_block().replace(cluster.server.token(), TOKEN);
    let work = Workdir::new(&format!("{provider}\n{}", pool()));
    let run = work.apply().failed();
    let text = run.text();
    assert!(
        text.contains("Not allowed to patch nodepools.karpenter.sh"),
        "{}",
        run.output()
    );
    assert!(text.contains("RBAC"), "{}", run.output());
}

#[test]
fn a_waiting_delete_reports_progress_and_requests_carry_the_user_agent() {
    let mut controller = ControllerConfig::karpenter();
    controller.finalizer_removal_delay = Duration::from_secs(13);
    let cluster = Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        controller,
        ..Default::default()
    });
    let mut work = Workdir::new(&format!("{}\n{}", cluster.provider_block(), pool()));
    work.apply().ok();
    work.env("TF_LOG_PROVIDER", "info");
    let run = work.destroy().ok();
    let progress: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("still deleting NodePool"))
        .collect();
    assert!(!progress.is_empty(), "no progress line:\n{}", run.stderr);
    assert!(
        progress
            .iter()
            .any(|l| l.contains("karpenter.sh/termination") && l.contains("Karpenter's controller")),
        "{progress:?}"
    );
    let requests = cluster.server.request_log();
    assert!(!requests.is_empty());
    let expected = "terraform-provider-karpenter/";
    let others: Vec<_> = requests
        .iter()
        .filter(|r| !r.user_agent.starts_with(expected))
        .map(|r| format!("{} {} {:?}", r.method, r.path, r.user_agent))
        .collect();
    assert!(others.is_empty(), "requests without our User-Agent: {others:?}");
}
