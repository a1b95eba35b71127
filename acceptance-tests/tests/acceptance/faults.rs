//! Faults mid-apply (issue #10, item 4), through the real terraform against the Kubernetes API
//! test server and moto behind the fault proxy.
//!
//! For each resource family the steps are not written down here: a clean create, update and
//! delete are recorded first (the test server's request log, the proxy's operation log), and
//! every distinct request of each operation is a step. Each (fault × step) case then:
//!
//! 1. brings the working directory to the operation's starting configuration (clean apply);
//! 2. arms the fault on that step (429, 500, 503, a dropped connection — each a burst of
//!    [`BURST`] consecutive answers — or one answer that comes 3 s later than the resource's short `timeouts {}`;
//!    the role resources have no timeouts, so there it is an answer 5 s late);
//! 3. applies the target configuration: it must succeed, or fail with an `Error:` diagnostic
//!    (never a crashed or hung plugin), and no diagnostic may show a library's own text
//!    (`client error (Connect)`, `os error 111`, …; #41);
//! 4. clears the faults, applies again (must succeed), plans (must be empty), and compares what
//!    the server / moto holds with the state: every object in state exists once, nothing else
//!    exists (no duplicate, no orphan). Create never adopts (#26): when the fault let a part be
//!    created that Terraform never recorded (a late answer), the apply after it refuses that part
//!    with this provider's mark and an `import {}` block; the case then writes exactly those
//!    import blocks, and the apply with them must succeed.
//!
//! CI runs a fixed subset (each fault kind once per family, at steps spread evenly over the
//! recorded ones); set `FAULTS_FULL=1` for the whole matrix, and `FAULTS_ONLY=<text>` to run
//! only the cases whose name (`<family> <Phase> <step> × <Fault>`) contains the text. Each family prints one `faults[...]` summary line
//! (run with `--nocapture` to see it).

use crate::iam_common;

use std::time::Duration;

use acceptance_tests::kube::{Cluster, FaultKind, FaultSpec};
use acceptance_tests::moto::{self, Fault as ProxyFault, FaultProxy, Moto};
use acceptance_tests::{Run, Workdir};
use serde_json::Value as Json;

/// The injected fault kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    TooManyRequests,
    InternalError,
    ServiceUnavailable,
    DropConnection,
    /// One answer that arrives after the operation's timeout.
    Slow,
}

const FAULTS: [Fault; 5] = [
    Fault::TooManyRequests,
    Fault::InternalError,
    Fault::ServiceUnavailable,
    Fault::DropConnection,
    Fault::Slow,
];

/// A burst: this many consecutive matching requests fail. More than the clients retry within a
/// write's 5 s timeout (so writes fail midway), fewer than a refresh's 2-minute read budget
/// sits out (so reads recover); the AWS SDK's standard mode gives up after 3 attempts.
const BURST: usize = 8;

/// The node pool's and node class's `timeouts {}` in the test configurations (a clean
/// create takes well under a second against the test server).
const KUBE_TIMEOUT: Duration = Duration::from_secs(5);
/// The interruption queue's: a clean create is about 20 calls to moto, which take a few
/// seconds on a loaded machine.
const QUEUE_TIMEOUT: Duration = Duration::from_secs(30);
/// The role resources have no `timeouts {}`: their slow answers are just late.
const ROLE_SLOW: Duration = Duration::from_secs(5);

/// A slow answer comes this long after a timeout of `timeout`: past it.
fn slow_past(timeout: Duration) -> Duration {
    timeout + Duration::from_secs(3)
}

fn timeouts_block(timeout: Duration) -> String {
    let t = format!("{}s", timeout.as_secs());
    format!("timeouts {{\n    create = \"{t}\"\n    update = \"{t}\"\n    delete = \"{t}\"\n  }}")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Create,
    Update,
    Delete,
}

const PHASES: [Phase; 3] = [Phase::Create, Phase::Update, Phase::Delete];

impl Phase {
    /// (from, to) as indexes into [`Family::configs`] (0 empty, 1 first, 2 changed).
    fn configs(self) -> (usize, usize) {
        match self {
            Phase::Create => (0, 1),
            Phase::Update => (1, 2),
            Phase::Delete => (2, 0),
        }
    }
}

/// A family of resources under test: its configurations, its step recording, its faults and
/// its orphan check.
trait Family {
    fn name(&self) -> &'static str;
    /// [nothing, the resources, the resources changed].
    fn configs(&self) -> [String; 3];
    fn clear_recording(&self);
    /// The distinct requests since [`Family::clear_recording`], in first-seen order.
    fn recorded_steps(&self) -> Vec<String>;
    fn inject(&self, fault: Fault, step: &str);
    fn clear_faults(&self);
    /// What exists beside the state, as one line per problem (empty: all good).
    fn mismatches(&self, state: &Json) -> Vec<String>;
}

/// The outcome counts of one family's matrix.
#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    succeeded: usize,
    failed_clearly: usize,
    /// Cases whose first apply after the fault refused a part the fault left unrecorded, and
    /// that converged through the import blocks the refusals gave.
    imported: usize,
    converged: usize,
    problems: Vec<String>,
}

impl Tally {
    fn problem(&mut self, text: String) {
        println!("  PROBLEM {}", text.lines().next().unwrap_or_default());
        self.problems.push(text);
    }
}

fn full_matrix() -> bool {
    std::env::var("FAULTS_FULL").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The local state file in the shape of `terraform show -json` (`values.root_module.resources`
/// with `type` and `values`), read directly: one terraform run less per case.
fn state_file(work: &Workdir) -> Json {
    let text = std::fs::read_to_string(work.path().join("terraform.tfstate")).unwrap_or_default();
    let raw: Json = serde_json::from_str(&text).unwrap_or(Json::Null);
    let resources: Vec<Json> = raw["resources"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .filter(|r| r["mode"] == "managed")
                .flat_map(|r| {
                    r["instances"].as_array().cloned().unwrap_or_default().into_iter().map(|i| {
                        serde_json::json!({"type": r["type"].clone(), "values": i["attributes"].clone()})
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    serde_json::json!({"values": {"root_module": {"resources": resources}}})
}

/// Resources in `terraform show -json`, as (type, values).
fn state_resources(state: &Json) -> Vec<(String, Json)> {
    state["values"]["root_module"]["resources"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .map(|r| {
                    (
                        r["type"].as_str().unwrap_or_default().to_string(),
                        r["values"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn state_names(state: &Json, resource_type: &str, attribute: &str) -> Vec<String> {
    state_resources(state)
        .into_iter()
        .filter(|(t, _)| t == resource_type)
        .filter_map(|(_, v)| v[attribute].as_str().map(str::to_string))
        .collect()
}

/// Compares names on the server with names in state (duplicates count as a mismatch).
fn compare(what: &str, on_server: Vec<String>, in_state: Vec<String>) -> Option<String> {
    let mut server_sorted = on_server.clone();
    server_sorted.sort();
    let mut state_sorted = in_state;
    state_sorted.sort();
    (server_sorted != state_sorted)
        .then(|| format!("{what}: server has {server_sorted:?}, state has {state_sorted:?}"))
}

/// A failed apply must say why in an error diagnostic a user can read (no debug dump of an
/// error), and must not be a crashed plugin.
fn clear_error(run: &Run) -> Result<(), String> {
    let text = run.text();
    let crashed = [
        "plugin exited",
        "Plugin did not respond",
        "panicked",
        "unexpected EOF",
        "rpc error: code = Unavailable",
    ];
    if let Some(sign) = crashed.iter().find(|s| text.contains(*s)) {
        return Err(format!("the plugin crashed ({sign})"));
    }
    // An error a user reads, never a Rust `Debug` dump of the SDK's or the client's error.
    let dumps = [
        "DispatchFailure",
        "ConnectorError",
        "ServiceError",
        "SdkError",
        "Some(",
        "None)",
        "kind: ",
        "source: ",
    ];
    if let Some(dump) = dumps.iter().find(|d| run.stderr.contains(*d)) {
        return Err(format!("a diagnostic shows a debug dump ({dump})"));
    }
    if !run.stderr.contains("Error: ") {
        return Err("failed without an error diagnostic".into());
    }
    Ok(())
}

/// The `import {}` blocks an apply's refusals ask for, addressed to the resources refused: every
/// error must be such a refusal of a part that carries this provider's mark (a part the fault
/// left unrecorded), and every refused resource must get an import id from one of them (a queue's
/// rules and a role's policies come with the queue's or role's import).
fn imports_from_refusals(run: &Run) -> Result<String, String> {
    let mut ids: Vec<(String, Option<String>)> = Vec::new();
    for error in run.stderr.split("Error: ").skip(1) {
        let text = error.split_whitespace().collect::<Vec<_>>().join(" ");
        if !text.contains("already exists") || !text.contains("It carries this provider's mark") {
            return Err(format!("an error that is not a refusal of our own part: {text}"));
        }
        let address = text
            .split("with ")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .ok_or_else(|| format!("a refusal without a resource address: {text}"))?
            .to_string();
        // `import { to = <type>.<name> id = "…" }`, or with the resource's address when the
        // provider could tell it (#41).
        let id = text
            .split("import { to = ")
            .nth(1)
            .and_then(|rest| rest.split(" id = \"").nth(1))
            .and_then(|rest| rest.split('"').next())
            .map(str::to_string);
        match ids.iter_mut().find(|(a, _)| *a == address) {
            Some((_, known)) => {
                if known.is_none() {
                    *known = id;
                }
            }
            None => ids.push((address, id)),
        }
    }
    if ids.is_empty() {
        return Err("no refusal".into());
    }
    ids.into_iter()
        .map(|(address, id)| match id {
            Some(id) => Ok(format!("import {{\n  to = {address}\n  id = \"{id}\"\n}}\n")),
            None => Err(format!("{address} was refused without an import id")),
        })
        .collect()
}

fn run_family(family: &dyn Family, work: &Workdir) -> Tally {
    let configs = family.configs();
    // Record a clean run of each operation.
    let mut steps = Vec::new();
    for phase in PHASES {
        let (from, to) = phase.configs();
        work.set_config(&configs[from]);
        work.apply().ok();
        family.clear_recording();
        work.set_config(&configs[to]);
        work.apply().ok();
        let recorded = family.recorded_steps();
        assert!(
            !recorded.is_empty(),
            "{}: {phase:?} made no requests",
            family.name()
        );
        for step in recorded {
            steps.push((phase, step));
        }
    }
    let full = full_matrix();
    let mut tally = Tally::default();
    println!(
        "faults[{}]: recorded steps: {}",
        family.name(),
        steps
            .iter()
            .map(|(phase, step)| format!("{phase:?} {step}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (step_index, (phase, step)) in steps.iter().enumerate() {
        for (fault_index, fault) in FAULTS.iter().enumerate() {
            // The CI subset: each fault kind once, at steps spread evenly over the recorded
            // create, update and delete steps.
            if !full && step_index != fault_index * steps.len() / FAULTS.len() {
                continue;
            }
            let (from, to) = phase.configs();
            let case = format!("{} {phase:?} {step} × {fault:?}", family.name());
            // FAULTS_ONLY=<text>: only the cases whose name contains it (re-running a few).
            if std::env::var("FAULTS_ONLY").is_ok_and(|only| !case.contains(&only)) {
                continue;
            }
            tally.cases += 1;
            work.set_config(&configs[from]);
            let setup = work.apply();
            if !setup.success {
                tally.problem(format!("{case}: setting up failed:\n{}", setup.output()));
                continue;
            }
            family.inject(*fault, step);
            work.set_config(&configs[to]);
            let run = work.apply();
            family.clear_faults();
            if let Some(library) = acceptance_tests::library_text(&run) {
                tally.problem(format!(
                    "{case}: a diagnostic shows a library's own text ({library}):\n{}",
                    run.output()
                ));
                continue;
            }
            let outcome = if run.success {
                tally.succeeded += 1;
                "succeeded"
            } else {
                match clear_error(&run) {
                    Ok(()) => {
                        tally.failed_clearly += 1;
                        "failed with an error"
                    }
                    Err(e) => {
                        tally.problem(format!("{case}: {e}:\n{}", run.output()));
                        "failed unclearly"
                    }
                }
            };
            let mut again = work.apply();
            if !again.success {
                match imports_from_refusals(&again) {
                    Ok(imports) => {
                        work.write("imports.tf", &imports);
                        again = work.apply();
                        let _ = std::fs::remove_file(work.path().join("imports.tf"));
                        tally.imported += 1;
                    }
                    Err(why) => {
                        tally.problem(format!(
                            "{case}: the apply after the fault failed ({why}):\n{}",
                            again.output()
                        ));
                        continue;
                    }
                }
            }
            if !again.success {
                tally.problem(format!(
                    "{case}: the apply with the import blocks of the refusals failed:\n{}",
                    again.output()
                ));
                continue;
            }
            if !work.plan_is_empty() {
                tally.problem(format!(
                    "{case}: the plan after converging is not empty:\n{}",
                    work.plan().output()
                ));
                continue;
            }
            let mismatches = family.mismatches(&state_file(work));
            if !mismatches.is_empty() {
                tally.problem(format!("{case}: {}", mismatches.join("; ")));
                continue;
            }
            tally.converged += 1;
            println!("  {case}: {outcome}, converged");
        }
    }
    println!(
        "faults[{}]: {} steps, {} cases ({}), {} succeeded under the fault, {} failed with an error diagnostic, \
         {} refused an unrecorded part and converged after importing it, {} converged",
        family.name(),
        steps.len(),
        tally.cases,
        if full { "full matrix" } else { "CI subset" },
        tally.succeeded,
        tally.failed_clearly,
        tally.imported,
        tally.converged
    );
    tally
}

fn assert_tally(family: &str, tally: &Tally) {
    assert!(
        tally.problems.is_empty(),
        "{family}: {} of {} cases went wrong:\n{}",
        tally.problems.len(),
        tally.cases,
        tally.problems.join("\n\n")
    );
    assert_eq!(tally.converged, tally.cases, "{family}: {tally:?}");
}

// ---------------------------------------------------------------------------------------------
// Kubernetes: node class + node pool against the test server

struct Kube {
    cluster: Cluster,
}

impl Kube {
    fn list(&self, group: &str, plural: &str, kind: &str) -> Vec<String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let client = self.cluster.server.client().await.expect("client");
            let ar = kube::core::ApiResource::from_gvk_with_plural(
                &kube::core::GroupVersionKind::gvk(group, "v1", kind),
                plural,
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
}

fn kube_config(provider: &str, limit: &str, team: &str) -> String {
    format!(
        r#"{provider}
resource "karpenter_ec2_node_class" "fc" {{
  name                          = "fc"
  role                          = "KarpenterNodeRole-demo"
  ami_selector_terms            = [{{ alias = "al2023@latest" }}]
  subnet_selector_terms         = [{{ tags = {{ "karpenter.sh/discovery" = "demo" }} }}]
  security_group_selector_terms = [{{ tags = {{ "karpenter.sh/discovery" = "demo" }} }}]
  tags                          = {{ team = "{team}" }}
  wait_for_ready                = true
  {timeouts}
}}

resource "karpenter_node_pool" "fp" {{
  name = "fp"
  template = {{
    spec = {{
      node_class_ref = {{ name = karpenter_ec2_node_class.fc.name }}
      requirements   = [{{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }}]
    }}
  }}
  limits = {{ cpu = "{limit}" }}
  {timeouts}
}}
"#,
        timeouts = timeouts_block(KUBE_TIMEOUT)
    )
}

impl Family for Kube {
    fn name(&self) -> &'static str {
        "node_pool+ec2_node_class"
    }

    fn configs(&self) -> [String; 3] {
        let provider = self.cluster.provider_block();
        [
            provider.clone(),
            kube_config(&provider, "100", "a"),
            kube_config(&provider, "200", "b"),
        ]
    }

    fn clear_recording(&self) {
        self.cluster.server.clear_request_log();
    }

    fn recorded_steps(&self) -> Vec<String> {
        let mut seen = Vec::new();
        for r in self.cluster.server.request_log() {
            let step = format!("{} {}", r.method, r.path);
            if !seen.contains(&step) {
                seen.push(step);
            }
        }
        seen
    }

    fn inject(&self, fault: Fault, step: &str) {
        let (method, path) = step.split_once(' ').unwrap_or(("GET", step));
        let spec = match fault {
            Fault::TooManyRequests => FaultSpec::new(FaultKind::TooManyRequests, BURST as u32),
            Fault::InternalError => FaultSpec::new(FaultKind::InternalError, BURST as u32),
            Fault::ServiceUnavailable => FaultSpec::new(FaultKind::ServiceUnavailable, BURST as u32),
            Fault::DropConnection => FaultSpec::new(FaultKind::DropConnection, BURST as u32),
            Fault::Slow => FaultSpec::slow(slow_past(KUBE_TIMEOUT), 1),
        };
        self.cluster
            .server
            .inject_fault(spec.method(method).path_contains(path));
    }

    fn clear_faults(&self) {
        self.cluster.server.clear_faults();
    }

    fn mismatches(&self, state: &Json) -> Vec<String> {
        [
            compare(
                "NodePools",
                self.list("karpenter.sh", "nodepools", "NodePool"),
                state_names(state, "karpenter_node_pool", "name"),
            ),
            compare(
                "EC2NodeClasses",
                self.list("karpenter.k8s.aws", "ec2nodeclasses", "EC2NodeClass"),
                state_names(state, "karpenter_ec2_node_class", "name"),
            ),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

#[test]
fn kube_faults_at_every_step_converge_without_orphans() {
    let kube = Kube {
        cluster: Cluster::with_v1_crds(),
    };
    let work = Workdir::new(&kube.configs()[0]);
    let tally = run_family(&kube, &work);
    assert_tally(kube.name(), &tally);
}

// ---------------------------------------------------------------------------------------------
// AWS: moto behind the fault proxy

struct Aws {
    name: &'static str,
    moto: Moto,
    proxy: FaultProxy,
    configs: [String; 3],
    recorded_from: std::sync::atomic::AtomicUsize,
    check: fn(&Moto, &Json) -> Vec<String>,
    /// How late a slow answer comes.
    slow: Duration,
}

impl Aws {
    fn new(
        name: &'static str,
        body: [&str; 2],
        check: fn(&Moto, &Json) -> Vec<String>,
        slow: Duration,
    ) -> Aws {
        let moto = Moto::start();
        let proxy = FaultProxy::start(moto.port());
        let provider = proxy.provider_block();
        let configs = [
            provider.clone(),
            format!("{provider}\n{}", body[0]),
            format!("{provider}\n{}", body[1]),
        ];
        Aws {
            name,
            moto,
            proxy,
            configs,
            recorded_from: std::sync::atomic::AtomicUsize::new(0),
            check,
            slow,
        }
    }

    fn workdir(&self) -> Workdir {
        let mut work = Workdir::new(&self.configs[0]);
        moto::configure_env(&mut work);
        work
    }
}

impl Family for Aws {
    fn name(&self) -> &'static str {
        self.name
    }

    fn configs(&self) -> [String; 3] {
        self.configs.clone()
    }

    fn clear_recording(&self) {
        self.recorded_from
            .store(self.proxy.log().len(), std::sync::atomic::Ordering::SeqCst);
    }

    fn recorded_steps(&self) -> Vec<String> {
        let from = self.recorded_from.load(std::sync::atomic::Ordering::SeqCst);
        let mut seen = Vec::new();
        for (op, _) in self.proxy.log().into_iter().skip(from) {
            if !seen.contains(&op) {
                seen.push(op);
            }
        }
        seen
    }

    fn inject(&self, fault: Fault, step: &str) {
        let armed = match fault {
            Fault::TooManyRequests => ProxyFault::new(step, BURST, 429, "ThrottlingException"),
            Fault::InternalError => ProxyFault::new(step, BURST, 500, "InternalFailure"),
            Fault::ServiceUnavailable => ProxyFault::new(step, BURST, 503, "ServiceUnavailable"),
            Fault::DropConnection => ProxyFault::drop_connection(step, BURST),
            Fault::Slow => ProxyFault::slow(step, 1, self.slow),
        };
        self.proxy.arm(armed.exact());
    }

    fn clear_faults(&self) {
        self.proxy.disarm();
    }

    fn mismatches(&self, state: &Json) -> Vec<String> {
        (self.check)(&self.moto, state)
    }
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(f)
}

fn queue_check(moto: &Moto, state: &Json) -> Vec<String> {
    let config = moto.sdk_config();
    let sqs = aws_sdk_sqs::Client::new(&config);
    let events = aws_sdk_eventbridge::Client::new(&config);
    let (queues, rules) = block_on(async {
        let queues = sqs.list_queues().send().await.expect("ListQueues");
        let rules = events.list_rules().send().await.expect("ListRules");
        (
            queues
                .queue_urls()
                .iter()
                .filter_map(|u| u.rsplit('/').next().map(str::to_string))
                .collect::<Vec<_>>(),
            rules
                .rules()
                .iter()
                .filter_map(|r| r.name().map(str::to_string))
                .collect::<Vec<_>>(),
        )
    });
    let in_state: Vec<Json> = state_resources(state)
        .into_iter()
        .filter(|(t, _)| t == "karpenter_interruption_queue")
        .map(|(_, v)| v)
        .collect();
    let state_queues = in_state
        .iter()
        .filter_map(|v| v["queue_name"].as_str().map(str::to_string))
        .collect();
    let state_rules = in_state
        .iter()
        .flat_map(|v| {
            v["rules"]
                .as_object()
                .map(|m| {
                    m.values()
                        .filter_map(|r| r["name"].as_str().map(str::to_string))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .collect();
    [
        compare("SQS queues", queues, state_queues),
        compare("EventBridge rules", rules, state_rules),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn role_check(moto: &Moto, state: &Json) -> Vec<String> {
    let iam = iam_common::client(moto);
    let (roles, profiles, policies) = block_on(iam_common::leftovers(&iam));
    let mut state_roles = state_names(state, "karpenter_node_role", "name");
    state_roles.extend(state_names(state, "karpenter_controller_role", "name"));
    let state_profiles = state_names(state, "karpenter_node_role", "instance_profile_name");
    let state_policies: Vec<String> = state_resources(state)
        .into_iter()
        .filter(|(t, _)| t == "karpenter_controller_role")
        .flat_map(|(_, v)| {
            v["managed_policy_arns"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str())
                        .filter(|p| p.contains(moto::ACCOUNT_ID))
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .collect();
    [
        compare("IAM roles", roles, state_roles),
        compare("instance profiles", profiles, state_profiles),
        compare("customer managed policies", policies, state_policies),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[test]
fn interruption_queue_faults_at_every_step_converge_without_orphans() {
    let body = |team: &str| {
        format!(
            "resource \"karpenter_interruption_queue\" \"q\" {{\n  cluster_name = \"faults\"\n  tags = {{ team = \"{team}\" }}\n  {}\n}}\n",
            timeouts_block(QUEUE_TIMEOUT)
        )
    };
    let family = Aws::new(
        "interruption_queue",
        [&body("a"), &body("b")],
        queue_check,
        slow_past(QUEUE_TIMEOUT),
    );
    let work = family.workdir();
    let tally = run_family(&family, &work);
    assert_tally(family.name(), &tally);
}

#[test]
fn node_role_faults_at_every_step_converge_without_orphans() {
    let body = |team: &str| {
        format!(
            "resource \"karpenter_node_role\" \"r\" {{\n  name = \"KarpenterNodeRole-faults\"\n  create_instance_profile = true\n  tags = {{ team = \"{team}\" }}\n}}\n"
        )
    };
    let family = Aws::new("node_role", [&body("a"), &body("b")], role_check, ROLE_SLOW);
    let work = family.workdir();
    let tally = run_family(&family, &work);
    assert_tally(family.name(), &tally);
}

#[test]
fn controller_role_faults_at_every_step_converge_without_orphans() {
    let body = |team: &str| {
        format!(
            r#"resource "karpenter_controller_role" "c" {{
  name              = "KarpenterControllerRole-faults"
  cluster_name      = "faults"
  region            = "us-east-1"
  node_role_arn     = "arn:aws:iam::123456789012:role/KarpenterNodeRole-faults"
  pod_identity      = true
  policy_attachment = "managed"
  tags              = {{ team = "{team}" }}
}}
"#
        )
    };
    let family = Aws::new("controller_role", [&body("a"), &body("b")], role_check, ROLE_SLOW);
    let work = family.workdir();
    let tally = run_family(&family, &work);
    assert_tally(family.name(), &tally);
}
