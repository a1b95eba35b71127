//! #59: `terraform plan` as Karpenter's health check. A plan that refreshes Karpenter's objects
//! says what Karpenter reports wrong with them (status conditions for the current spec, in
//! Karpenter's words, on the attribute to look at), which NodeClaims of a pool cannot launch,
//! once whether Karpenter runs at all, and an interruption queue nobody reads; a healthy object
//! says nothing, a condition Karpenter wrote for an older spec says nothing, and
//! `-refresh=false` reads and says nothing.

use acceptance_tests::kube::Cluster;
use acceptance_tests::moto::Moto;
use acceptance_tests::{PlanWarning, Workdir, plan_warnings};
use serde_json::json;

const STACK: &str = r#"
resource "karpenter_ec2_node_class" "default" {
  name                          = "default"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{ alias = "al2023@latest" }]
  subnet_selector_terms         = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
  security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
}

resource "karpenter_node_pool" "general" {
  name = "general"
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = karpenter_ec2_node_class.default.name }
      requirements   = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }]
    }
  }
}
"#;

/// The health warnings of a plan (`-json`), with `args`.
fn health(work: &Workdir, args: &[&str]) -> Vec<PlanWarning> {
    plan_warnings(work, args)
        .into_iter()
        .filter(|(_, summary, _)| {
            summary.contains("not healthy")
                || summary.contains("NodeClaims are failing")
                || summary.contains("Karpenter is not running")
                || summary.contains("nothing reads them")
        })
        .collect()
}

fn set_class_conditions(cluster: &Cluster, conditions: serde_json::Value) {
    assert!(cluster.server.patch_object(
        "karpenter.k8s.aws",
        "ec2nodeclasses",
        "",
        "default",
        &json!({"status": {"conditions": conditions}}),
    ));
}

fn generation(cluster: &Cluster) -> i64 {
    cluster.node_class("default").expect("the class")["metadata"]["generation"]
        .as_i64()
        .unwrap_or(1)
}

#[test]
fn a_failing_condition_is_said_in_karpenters_words_on_the_attribute_to_look_at() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&format!("{}\n{STACK}", cluster.provider_block()));
    work.apply().ok();
    assert_eq!(health(&work, &[]), [], "a healthy stack says nothing");

    let g = generation(&cluster);
    let at = "2026-11-28T00:00:00Z";
    set_class_conditions(
        &cluster,
        json!([
            {"type": "SubnetsReady", "status": "False", "reason": "SubnetsNotFound",
             "message": "SubnetSelector did not match any Subnets", "lastTransitionTime": at, "observedGeneration": g},
            {"type": "SecurityGroupsReady", "status": "True", "reason": "SecurityGroupsReady", "message": "",
             "lastTransitionTime": at, "observedGeneration": g},
            {"type": "Ready", "status": "False", "reason": "UnhealthyDependents", "message": "SubnetsReady=False",
             "lastTransitionTime": at, "observedGeneration": g}
        ]),
    );
    let said = health(&work, &[]);
    let class: Vec<&PlanWarning> = said
        .iter()
        .filter(|(address, _, _)| address == "karpenter_ec2_node_class.default")
        .collect();
    assert_eq!(class.len(), 1, "{said:#?}");
    let (_, summary, detail) = class[0];
    assert_eq!(
        summary,
        "EC2NodeClass \"default\": Karpenter reports it is not healthy"
    );
    for expected in [
        "SubnetsReady is False for",
        "(SubnetsNotFound): SubnetSelector did not match any Subnets.",
        "Check the terms' tags or IDs",
    ] {
        assert!(detail.contains(expected), "missing {expected:?} in {detail}");
    }
    assert!(
        !detail.contains("Ready is False for") || detail.matches("Ready is False").count() == 1,
        "{detail}"
    );
    assert_eq!(health(&work, &[]), said, "the same plan says the same");
    assert_eq!(
        health(&work, &["-refresh=false"]),
        [],
        "no refresh, nothing read or said"
    );

    // Karpenter has not observed the current spec yet: nothing to say about it.
    set_class_conditions(
        &cluster,
        json!([{"type": "SubnetsReady", "status": "False", "reason": "SubnetsNotFound",
                "message": "SubnetSelector did not match any Subnets", "lastTransitionTime": at,
                "observedGeneration": g - 1}]),
    );
    assert_eq!(health(&work, &[]), []);
}

#[test]
fn nodeclaims_that_cannot_launch_are_summed_up_on_their_pool() {
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::new(&format!("{}\n{STACK}", cluster.provider_block()));
    work.apply().ok();
    for (name, minutes_ago) in [("general-a", 3), ("general-b", 1)] {
        let created = (std::time::SystemTime::now() - std::time::Duration::from_secs(minutes_ago * 60))
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs();
        let at = k8s_timestamp(created);
        cluster
            .server
            .create_object(
                "karpenter.sh",
                "v1",
                "nodeclaims",
                "",
                json!({
                    "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                    "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "general"}},
                    "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                             "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}
                }),
                "karpenter",
            )
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(cluster.server.patch_object(
            "karpenter.sh",
            "nodeclaims",
            "",
            name,
            &json!({"status": {"conditions": [
                {"type": "Launched", "status": "Unknown", "reason": "InsufficientFreeAddressesInSubnet",
                 "message": "There are not enough free IP addresses to launch an instance in this subnet",
                 "lastTransitionTime": at}
            ]}}),
        ));
    }
    let said = health(&work, &[]);
    let pool: Vec<&PlanWarning> = said
        .iter()
        .filter(|(address, summary, _)| {
            address == "karpenter_node_pool.general" && summary.contains("NodeClaims")
        })
        .collect();
    assert_eq!(pool.len(), 1, "{said:#?}");
    let (_, summary, detail) = pool[0];
    assert!(summary.starts_with("NodePool \"general\": 2 of its"), "{summary}");
    assert!(
        detail.contains("2 could not launch")
            && detail.contains("The most recent, general-b (InsufficientFreeAddressesInSubnet, 1m ago)")
            && detail.contains("not enough free IP addresses"),
        "{detail}"
    );
}

/// RFC 3339 of a Unix time in seconds (UTC).
fn k8s_timestamp(secs: u64) -> String {
    let days = secs / 86_400;
    let (h, m, s) = (secs / 3600 % 24, secs / 60 % 60, secs % 60);
    // civil-from-days (Howard Hinnant's algorithm)
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}

#[test]
fn karpenter_not_running_is_said_once_on_the_same_resource() {
    let cluster = Cluster::with_v1_crds();
    let pools: String = ["a", "b", "c"]
        .iter()
        .map(|p| {
            format!(
                r#"
resource "karpenter_node_pool" "{p}" {{
  name = "{p}"
  template = {{ spec = {{
    node_class_ref = {{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }}
    requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
  }} }}
}}
"#
            )
        })
        .collect();
    let work = Workdir::new(&format!("{}\n{STACK}\n{pools}", cluster.provider_block()));
    work.apply().ok();
    assert_eq!(health(&work, &[]), []);
    cluster.server.stop_controller(true);
    let said = health(&work, &[]);
    let gone: Vec<&PlanWarning> = said
        .iter()
        .filter(|(_, summary, _)| summary == "Karpenter is not running in this cluster")
        .collect();
    assert_eq!(gone.len(), 1, "{said:#?}");
    assert_eq!(
        gone[0].0, "karpenter_ec2_node_class.default",
        "the first by type and name"
    );
    assert!(gone[0].2.contains("has no holder"), "{}", gone[0].2);
    assert_eq!(health(&work, &[]), said);
}

#[test]
fn an_interruption_queue_nobody_reads_is_said_with_the_chart_setting() {
    let moto = Moto::start();
    let work = moto.workdir(
        r#"
resource "karpenter_interruption_queue" "this" {
  cluster_name = "health"
}
"#,
    );
    work.apply().ok();
    let config = moto.sdk_config();
    let sqs = aws_sdk_sqs::Client::new(&config);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let send = |n: usize| {
        runtime.block_on(async {
            let url = sqs
                .get_queue_url()
                .queue_name("health")
                .send()
                .await
                .expect("queue");
            for i in 0..n {
                sqs.send_message()
                    .queue_url(url.queue_url().unwrap_or_default())
                    .message_body(format!("{{\"id\": {i}}}"))
                    .send()
                    .await
                    .expect("send");
            }
        })
    };
    send(3);
    assert_eq!(health(&work, &[]), [], "fewer than a batch tells nothing");
    send(9);
    let said = health(&work, &[]);
    assert_eq!(said.len(), 1, "{said:#?}");
    let (address, summary, detail) = &said[0];
    assert_eq!(address, "karpenter_interruption_queue.this");
    assert_eq!(
        summary,
        "Interruption queue \"health\": 12 messages wait, and nothing reads them"
    );
    assert!(
        detail.contains("settings.interruptionQueue to \"health\""),
        "{detail}"
    );
    assert_eq!(health(&work, &["-refresh=false"]), []);
}
