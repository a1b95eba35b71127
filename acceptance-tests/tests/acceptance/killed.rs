//! Killed mid-apply (issue #10, item 5; since #26 with create never adopting): 20 node pools on
//! the Kubernetes API test server and an interruption queue in moto are applied with latency on
//! both (every NodePool write and every PutTargets answered late, so there is a middle), and
//! once the 8th NodePool write shows in the server's request log and the queue's second
//! PutTargets has reached moto, SIGKILL hits either the provider plugin (a child of terraform)
//! or terraform itself. Right after the kill, pools and the queue must exist that the state
//! does not list (in flight). With the latency gone, the next `terraform apply` refuses exactly
//! those — each on its name, saying it carries this provider's mark and giving the `import {}`
//! block — and creates the rest. After the import blocks it names, one apply converges: the
//! plan after it is empty, and the server and moto hold exactly what the state lists: 20 pools,
//! one queue, five rules — nothing twice, nothing left over, the in-flight pools and queue the
//! same objects (uid, queue URL) they were at the kill. When terraform itself is killed, its
//! orphaned provider must exit too.

use std::path::Path;
use std::time::{Duration, Instant};

use acceptance_tests::kube::{Cluster, FaultSpec};
use acceptance_tests::moto::{self, Fault, FaultProxy, Moto};
use acceptance_tests::processes::{alive, provider_children, sigkill};
use acceptance_tests::{Background, Workdir};
use serde_json::Value as Json;

const POOLS: usize = 20;
/// The kill comes after this many NodePool writes reached the server.
const KILL_AFTER_WRITES: usize = 8;
const GUARD: Duration = Duration::from_secs(180);

struct Stack {
    cluster: Cluster,
    moto: Moto,
    proxy: FaultProxy,
    work: Workdir,
}

/// Creates the EC2NodeClass `default` the pools name, as kubectl would.
fn create_node_class(cluster: &Cluster) {
    let class = serde_json::json!({
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "role": "KarpenterNodeRole-killed",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "killed"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "killed"}}]
        }
    });
    tokio::runtime::Runtime::new().expect("runtime").block_on(async {
        let client = cluster.server.client().await.expect("client");
        let api: kube::Api<kube::core::DynamicObject> = kube::Api::all_with(
            client,
            &terraform_provider_karpenter::k8s::kinds::EC2_NODE_CLASS.api_resource(),
        );
        let object = serde_json::from_value(class).expect("EC2NodeClass object");
        api.create(&kube::api::PostParams::default(), &object)
            .await
            .expect("create the EC2NodeClass");
    });
}

impl Stack {
    fn new() -> Stack {
        let cluster = Cluster::with_v1_crds();
        // The pools' node class exists, so each pool's apply finds it at once instead of looking
        // for it for 3 s after its write: that look left a gap between the two waves of writes
        // in which no write was in flight, and under load the queue's second PutTargets could
        // fall into it, so the middle this test waits for never came.
        create_node_class(&cluster);
        let moto = Moto::start();
        let proxy = FaultProxy::start(moto.port());
        // One provider block with both sides.
        let kube = cluster.provider_block();
        let aws = proxy.provider_block();
        let provider = format!(
            "{}{}",
            kube.trim_end().trim_end_matches('}'),
            aws.trim_start_matches("provider \"karpenter\" {\n")
        );
        let config = format!(
            r#"{provider}
resource "karpenter_node_pool" "many" {{
  count = {POOLS}
  name  = "pool-${{count.index}}"
  template = {{
    spec = {{
      node_class_ref = {{ name = "default" }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
    }}
  }}
}}

resource "karpenter_interruption_queue" "q" {{
  cluster_name = "killed"
}}
"#
        );
        let mut work = Workdir::new(&config);
        moto::configure_env(&mut work);
        Stack {
            cluster,
            moto,
            proxy,
            work,
        }
    }

    fn pool_writes(&self) -> usize {
        self.cluster
            .requests(Some("PATCH"), "/apis/karpenter.sh/v1/nodepools/")
            .len()
    }

    /// PutTargets calls that reached the proxy (the queue's rules being wired).
    fn put_targets(&self) -> usize {
        self.proxy
            .log()
            .iter()
            .filter(|(op, _)| op == "AWSEvents.PutTargets")
            .count()
    }

    /// Starts an apply with latency on both sides and returns it once the middle is reached;
    /// what the apply did when it ended before the middle.
    fn start_slow_apply(&self) -> Result<Background, String> {
        self.cluster.server.set_latency(Duration::from_millis(200));
        // Each NodePool write is answered 6 s late: with Terraform's parallelism of 10, the
        // second ten are still in flight when the first ten are done, and while the queue
        // wires its rules. (At 3 s a loaded 2-core machine reached the queue's second
        // PutTargets only after the last pool was answered: no middle to kill in.)
        self.cluster.server.inject_fault(
            FaultSpec::slow(Duration::from_secs(6), POOLS as u32)
                .method("PATCH")
                .path_contains("/apis/karpenter.sh/v1/nodepools/"),
        );
        // The queue's five PutTargets each answer late, so the queue is still being built
        // when the kill comes: 5 × 2.5 s keeps it in flight well past the first pools' answers
        // (~8 s in). At 1.5 s the queue was done at ~7 s once moto answered its first calls
        // at once (forked warm), just before the pools' first wave came back.
        self.proxy
            .arm(Fault::slow("AWSEvents.PutTargets", 5, Duration::from_millis(2500)).exact());
        self.cluster.server.clear_request_log();
        let mut child = self
            .work
            .spawn(&["apply", "-no-color", "-input=false", "-auto-approve"]);
        let deadline = Instant::now() + GUARD;
        // The middle: enough writes answered, the queue's rules being wired, and at least one
        // pool created on the server whose write is not answered yet (so it cannot be in state).
        // The log records a write when it is answered; the pools are listed first, so a write
        // answered in between only makes the comparison stricter.
        let in_flight = || {
            let on_server = list_pools(&self.cluster).len();
            on_server > self.pool_writes()
        };
        while self.pool_writes() < KILL_AFTER_WRITES || self.put_targets() < 2 || !in_flight() {
            if child.finished() {
                let (run, _) = child.wait(GUARD);
                // What the apply did, not the plan it printed first (CI logs keep the ends).
                let output = run.output();
                let applied = output.find("Plan:").map_or(output.as_str(), |i| &output[i..]);
                return Err(format!(
                    "terraform ended before the middle of the apply ({} NodePool writes, {} PutTargets):\n{applied}",
                    self.pool_writes(),
                    self.put_targets()
                ));
            }
            assert!(
                Instant::now() < deadline,
                "the apply never reached {KILL_AFTER_WRITES} writes"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(child)
    }

    /// Right after the kill: what the state file records against what exists. The kill must
    /// have left work in flight — pools and the queue that exist but are not in state — or the
    /// case would not test adoption at all.
    fn assert_left_in_flight(&self) -> InFlight {
        let state: Json = serde_json::from_str(
            &std::fs::read_to_string(self.work.path().join("terraform.tfstate")).unwrap_or_default(),
        )
        .unwrap_or(Json::Null);
        let count = |t: &str| {
            state["resources"]
                .as_array()
                .map(|rs| {
                    rs.iter()
                        .filter(|r| r["type"] == t)
                        .map(|r| r["instances"].as_array().map_or(0, Vec::len))
                        .sum::<usize>()
                })
                .unwrap_or(0)
        };
        let (pools_in_state, queue_in_state) = (
            count("karpenter_node_pool"),
            count("karpenter_interruption_queue"),
        );
        let pools_on_server = list_pools(&self.cluster).len();
        let (queues, rules) = aws_objects(&self.moto);
        println!(
            "after the kill: {pools_on_server} pools on the server, {pools_in_state} in state; \
             {} queue(s) and {} rule(s) in moto, {queue_in_state} queue in state",
            queues.len(),
            rules.len()
        );
        assert!(
            pools_on_server > pools_in_state,
            "no pool was in flight at the kill ({pools_on_server} on the server, {pools_in_state} in state)"
        );
        assert!(
            queues.len() == 1 && !rules.is_empty() && queue_in_state == 0,
            "the queue was not in flight at the kill ({} queue(s) and {} rule(s) in moto, {queue_in_state} in state)",
            queues.len(),
            rules.len()
        );
        let recorded: Vec<String> = state["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["type"] == "karpenter_node_pool")
            .flat_map(|r| r["instances"].as_array().cloned().unwrap_or_default())
            .filter_map(|i| i["attributes"]["name"].as_str().map(str::to_string))
            .collect();
        let pools: Vec<(String, Json)> = list_pools(&self.cluster)
            .into_iter()
            .filter(|name| !recorded.contains(name))
            .map(|name| {
                let uid = self
                    .cluster
                    .node_pool(&name)
                    .map(|p| p["metadata"]["uid"].clone())
                    .unwrap_or(Json::Null);
                (name, uid)
            })
            .collect();
        InFlight {
            pools,
            queue: queues[0].clone(),
        }
    }

    fn clear_slowness(&self) {
        self.cluster.server.set_latency(Duration::ZERO);
        self.cluster.server.clear_faults();
        self.proxy.disarm();
    }

    /// After the kill: a plain apply refuses exactly what was in flight (and creates the rest);
    /// with the import blocks the refusals give, the next apply converges, the plan is empty,
    /// and nothing is missing, extra or recreated.
    fn converges(&self, in_flight: &InFlight) {
        let run = self.work.apply();
        assert!(
            !run.success,
            "the apply after the kill adopted what was in flight:\n{}",
            run.output()
        );
        let out = run.output().split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            out.matches("Error: NodePool already exists").count(),
            in_flight.pools.len(),
            "refusals vs pools in flight {:?}: {out}",
            in_flight.pools
        );
        assert_eq!(out.matches("Error: SQS queue already exists").count(), 1, "{out}");
        assert_eq!(
            out.matches("It carries this provider's mark").count(),
            out.matches("already exists with").count(),
            "{out}"
        );
        let mut imports = String::new();
        for (name, _) in &in_flight.pools {
            let block = format!("import {{ to = karpenter_node_pool.<name> id = \"{name}\" }}");
            assert!(out.contains(&block), "no import block for {name}: {out}");
            let index = name.trim_start_matches("pool-");
            imports.push_str(&format!(
                "import {{\n  to = karpenter_node_pool.many[{index}]\n  id = \"{name}\"\n}}\n"
            ));
        }
        let queue = &in_flight.queue;
        assert!(
            out.contains(&format!(
                "import {{ to = karpenter_interruption_queue.<name> id = \"{queue}\" }}"
            )),
            "{out}"
        );
        imports.push_str(&format!(
            "import {{\n  to = karpenter_interruption_queue.q\n  id = \"{queue}\"\n}}\n"
        ));
        let queue_url = aws_queue_url(&self.moto, queue);
        self.work.write("imports.tf", &imports);
        let run = self.work.apply();
        assert!(
            run.success,
            "the apply after the imports failed:\n{}",
            run.output()
        );
        for (name, uid) in &in_flight.pools {
            let now = self.cluster.node_pool(name).map(|p| p["metadata"]["uid"].clone());
            assert_eq!(
                now.as_ref(),
                Some(uid),
                "{name} was recreated instead of imported"
            );
        }
        assert_eq!(
            aws_queue_url(&self.moto, queue),
            queue_url,
            "the queue was recreated"
        );
        assert!(
            self.work.plan_is_empty(),
            "plan after converging:\n{}",
            self.work.plan().output()
        );
        let state = self.work.state();
        let resources = state["values"]["root_module"]["resources"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut state_pools: Vec<String> = resources
            .iter()
            .filter(|r| r["type"] == "karpenter_node_pool")
            .filter_map(|r| r["values"]["name"].as_str().map(str::to_string))
            .collect();
        state_pools.sort();
        let mut server_pools = list_pools(&self.cluster);
        server_pools.sort();
        assert_eq!(state_pools.len(), POOLS);
        assert_eq!(server_pools, state_pools, "NodePools on the server vs in state");

        let queue: Vec<&Json> = resources
            .iter()
            .filter(|r| r["type"] == "karpenter_interruption_queue")
            .map(|r| &r["values"])
            .collect();
        assert_eq!(queue.len(), 1);
        let mut state_rules: Vec<String> = queue[0]["rules"]
            .as_object()
            .map(|m| {
                m.values()
                    .filter_map(|r| r["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        state_rules.sort();
        let (queues, mut rules) = aws_objects(&self.moto);
        rules.sort();
        assert_eq!(
            queues,
            vec![queue[0]["queue_name"].as_str().unwrap_or_default().to_string()]
        );
        assert_eq!(state_rules.len(), 5);
        assert_eq!(rules, state_rules, "EventBridge rules in moto vs in state");
    }
}

/// What the kill left in flight: pools on the server that the state does not list (with their
/// uids), and the queue's name.
struct InFlight {
    pools: Vec<(String, Json)>,
    queue: String,
}

/// The queue's URL in moto.
fn aws_queue_url(moto: &Moto, name: &str) -> String {
    let sqs = aws_sdk_sqs::Client::new(&moto.sdk_config());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let out = sqs
            .get_queue_url()
            .queue_name(name)
            .send()
            .await
            .expect("GetQueueUrl");
        out.queue_url().unwrap_or_default().to_string()
    })
}

fn list_pools(cluster: &Cluster) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = cluster.server.client().await.expect("client");
        let ar = kube::core::ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk("karpenter.sh", "v1", "NodePool"),
            "nodepools",
        );
        let api: kube::Api<kube::core::DynamicObject> = kube::Api::all_with(client, &ar);
        api.list(&Default::default())
            .await
            .expect("list")
            .items
            .into_iter()
            .filter_map(|o| o.metadata.name)
            .collect()
    })
}

/// Queue names and rule names in moto.
fn aws_objects(moto: &Moto) -> (Vec<String>, Vec<String>) {
    let config = moto.sdk_config();
    let sqs = aws_sdk_sqs::Client::new(&config);
    let events = aws_sdk_eventbridge::Client::new(&config);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let queues = sqs.list_queues().send().await.expect("ListQueues");
        let rules = events.list_rules().send().await.expect("ListRules");
        (
            queues
                .queue_urls()
                .iter()
                .filter_map(|u| u.rsplit('/').next().map(str::to_string))
                .collect(),
            rules
                .rules()
                .iter()
                .filter_map(|r| r.name().map(str::to_string))
                .collect(),
        )
    })
}

/// Waits (bounded) for terraform to end and returns what it printed.
fn finish(child: Background) -> String {
    child.wait(GUARD).0.output()
}

fn state_file_summary(dir: &Path) -> String {
    let state = std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap_or_default();
    let parsed: Json = serde_json::from_str(&state).unwrap_or(Json::Null);
    let instances: usize = parsed["resources"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .map(|r| r["instances"].as_array().map_or(0, Vec::len))
                .sum()
        })
        .unwrap_or(0);
    format!(
        "terraform.tfstate {} ({instances} resource instances), lock info file {}",
        if state.is_empty() { "absent" } else { "present" },
        if dir.join(".terraform.tfstate.lock.info").exists() {
            "left behind"
        } else {
            "absent"
        }
    )
}

/// A fresh stack whose slow apply has reached the middle. Whether an apply passes through it
/// depends on which ten resources Terraform starts first: when the queue waits for a slot until
/// the first pools are answered, the apply can end without the three conditions ever holding at
/// once. Such an apply is not a failure of the provider, so it is tried again on a fresh stack,
/// at most three times in all; never reaching the middle still fails, with each apply's output.
fn stack_in_the_middle() -> (Stack, Background) {
    let mut misses = Vec::new();
    for _ in 0..3 {
        let stack = Stack::new();
        match stack.start_slow_apply() {
            Ok(child) => return (stack, child),
            Err(why) => {
                println!("retrying on a fresh stack: {why}");
                misses.push(why);
            }
        }
    }
    panic!(
        "three applies ended before the middle:\n{}",
        misses.join("\n---\n")
    );
}

#[test]
fn provider_killed_mid_apply_then_apply_converges_without_leaks() {
    let (stack, child) = stack_in_the_middle();
    let terraform = child.id();
    let providers = provider_children(terraform);
    assert_eq!(
        providers.len(),
        1,
        "provider processes under terraform: {providers:?}"
    );
    sigkill(providers[0]);
    let output = finish(child);
    println!(
        "killed the provider after {} pool writes; terraform said:\n{output}\n{}",
        stack.pool_writes(),
        state_file_summary(stack.work.path())
    );
    assert!(
        output.contains("Error"),
        "terraform did not report the dead plugin:\n{output}"
    );
    let in_flight = stack.assert_left_in_flight();
    stack.clear_slowness();
    stack.converges(&in_flight);
}

#[test]
fn terraform_killed_mid_apply_then_apply_converges_and_the_plugin_exits() {
    let (stack, child) = stack_in_the_middle();
    let terraform = child.id();
    let providers = provider_children(terraform);
    assert_eq!(
        providers.len(),
        1,
        "provider processes under terraform: {providers:?}"
    );
    sigkill(terraform);
    let _ = finish(child);
    println!(
        "killed terraform after {} pool writes; {}",
        stack.pool_writes(),
        state_file_summary(stack.work.path())
    );
    // The orphaned plugin notices that Terraform is gone and exits (no process leak).
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(providers[0]) {
        assert!(
            Instant::now() < deadline,
            "the provider (pid {}) outlived the killed terraform by 30 s",
            providers[0]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let in_flight = stack.assert_left_in_flight();
    stack.clear_slowness();
    stack.converges(&in_flight);
}
