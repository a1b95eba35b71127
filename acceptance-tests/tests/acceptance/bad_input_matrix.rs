//! The bad-input matrix: invalid values for every attribute of every resource type, the data
//! source and the provider block, generated from the schemas themselves, validated in one batch
//! by the real terraform binary.
//!
//! For each settable attribute (walking nested attributes and blocks), a pool of candidate
//! values of its type is tried: empty, too long, out of range, malformed, the wrong type that
//! Terraform converts on the way in (a number or bool where a string is expected, a numeric
//! string for a number), collections that are empty, too large or hold a bad element or key.
//! The attribute's own validators (run here, in-process, exactly as the provider runs them) say
//! which candidates are invalid and on which path the error belongs; one invalid candidate per
//! category becomes a case. Hand-written cases add the contradictory combinations that the
//! resources' cross-attribute rules reject.
//!
//! The cases go into `cases.tf.json` files (each resource, data source or aliased provider block
//! with its top-level attributes on lines of their own), in chunks, the first beside valid
//! baseline configurations of every type and each later one beside one small baseline, and
//! `terraform validate -json` runs once per chunk. Each case must come back as an error
//! diagnostic whose detail starts with the expected attribute path, shown on the line of the
//! top-level attribute that path starts with (#28: never on the resource's header line, where
//! Terraform puts a path it cannot follow); every baseline must validate clean in the same run
//! (so the plugin kept serving after all the bad input), and terraform's debug log must show no
//! plugin crash.
//! A second, smaller batch feeds bad values through variables, unknown at validate and known at
//! plan, so the same checks must hold at plan time.
//!
//! `BAD_INPUT_LIST=1` prints the table of cases.

use std::collections::{BTreeMap, BTreeSet};

use acceptance_tests::Workdir;
use serde_json::{Map, Value as Json, json};
use terraform_provider_karpenter::provider::KarpenterProvider;
use terraform_provider_karpenter::terraform::framework::convert::json_to_dynamic;
use terraform_provider_karpenter::terraform::framework::schema::validate_attributes;
use terraform_provider_karpenter::terraform::framework::{
    Attribute, Block, Diagnostics, Nesting, Provider, Schema, Severity,
};
use terraform_provider_karpenter::terraform::tfvalue::{AttributePath, Type, Value, json as tfjson};

/// What kind of bad input a case is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Category {
    Empty,
    TooLong,
    OutOfRange,
    Malformed,
    WrongType,
    TooMany,
    Duplicate,
    BadKey,
    Contradiction,
}

/// Where a configuration goes in the JSON configuration.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Resource(String),
    Data(String),
    Provider,
}

impl Kind {
    fn label(&self) -> String {
        match self {
            Kind::Resource(t) => t.clone(),
            Kind::Data(t) => format!("data.{t}"),
            Kind::Provider => "provider".into(),
        }
    }
}

/// One step of a path into a JSON configuration.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
    /// The first key of a map (whichever the baseline has).
    FirstKey,
}

/// One bad-input case: a baseline configuration with one value replaced.
#[derive(Debug, Clone)]
struct Case {
    kind: Kind,
    category: Category,
    /// The attribute, as a path (for the table).
    attribute: String,
    /// The whole configuration of the case.
    body: Map<String, Json>,
    /// The value written (for the table).
    shown: String,
    /// Any of these paths (an error's detail starts with `path: `) satisfies the case.
    expected: BTreeSet<String>,
    /// For generated cases: where the bad value is and what it is (the plan batch passes it
    /// through a variable).
    placed: Option<(Vec<Step>, Json)>,
}

/// Valid configurations of each type; every case is one of them with one value replaced.
fn baselines() -> Vec<(Kind, Vec<&'static str>)> {
    let r = |t: &str| Kind::Resource(t.to_string());
    vec![
        (r("karpenter_node_pool"), vec![NODE_POOL, NODE_POOL_STATIC]),
        (
            r("karpenter_ec2_node_class"),
            vec![NODE_CLASS, NODE_CLASS_PROFILE, NODE_CLASS_OPEN_KUBELET],
        ),
        (
            r("karpenter_eks_node_class"),
            vec![EKS_NODE_CLASS, EKS_NODE_CLASS_PROFILE],
        ),
        (r("karpenter_provisioner"), vec![PROVISIONER]),
        (
            r("karpenter_node_template"),
            vec![NODE_TEMPLATE, NODE_TEMPLATE_LT],
        ),
        (r("karpenter_interruption_queue"), vec![QUEUE, QUEUE_KMS]),
        (r("karpenter_node_role"), vec![NODE_ROLE, NODE_ROLE_PREFIX]),
        (
            r("karpenter_controller_role"),
            vec![CONTROLLER_ROLE, CONTROLLER_ROLE_PREFIX],
        ),
        (
            r("karpenter_node_overlay"),
            vec![NODE_OVERLAY, NODE_OVERLAY_PRICE],
        ),
        (
            r("karpenter_capacity_buffer"),
            vec![CAPACITY_BUFFER, CAPACITY_BUFFER_SCALABLE],
        ),
        (
            Kind::Data("karpenter_controller_policy".into()),
            vec![CONTROLLER_POLICY],
        ),
        (Kind::Data("karpenter_ec2_node_class".into()), vec![DATA_BY_NAME]),
        (Kind::Data("karpenter_eks_node_class".into()), vec![DATA_BY_NAME]),
        (Kind::Data("karpenter_node_pool".into()), vec![DATA_BY_NAME]),
        (Kind::Data("karpenter_node_claims".into()), vec![DATA_NODE_CLAIMS]),
        (
            Kind::Data("karpenter_instance_types".into()),
            vec![DATA_INSTANCE_TYPES, DATA_INSTANCE_TYPES_EC2],
        ),
        (
            Kind::Provider,
            vec![PROVIDER, PROVIDER_EKS, PROVIDER_WEB_IDENTITY],
        ),
    ]
}

const TIMEOUTS: &str = "";

const EKS_NODE_CLASS: &str = r#"
name = "base"
metadata = { labels = { team = "a" } }
role = "eks-auto-nodes"
subnet_selector_terms = [{ tags = { "kubernetes.io/role/internal-elb" = "1" } }, { id = "subnet-0a1b2c3d" }]
security_group_selector_terms = [{ id = "sg-0a1b2c3d" }, { name = "nodes" }]
pod_subnet_selector_terms = [{ tags = { "kubernetes.io/role/pod" = "1" } }]
pod_security_group_selector_terms = [{ id = "sg-0a1b2c3e" }]
capacity_reservation_selector_terms = [{ id = "cr-0a1b2c3d" }, { tags = { app = "a" }, owner = "012345678901" }]
snat_policy = "Disabled"
network_policy = "DefaultDeny"
network_policy_event_logs = "Enabled"
ephemeral_storage = { size = "100Gi", iops = 4000, throughput = 200, kms_key_id = "alias/ebs" }
placement_group_selector = { name = "training" }
advanced_networking = { associate_public_ip_address = false, https_proxy = "http://192.0.2.4:3128", no_proxy = ["localhost"], ipv4_prefix_size = "32", enable_v4_egress = true, network_interfaces = [{ network_card_index = 0, device_index = 0, interface_type = "interface", secondary_ipv4_prefix_count = 1 }, { network_card_index = 1, device_index = 0, interface_type = "efa-only" }] }
advanced_security = { fips = false, kernel_lockdown = "integrity" }
certificate_bundles = [{ name = "corp", data = "LS0tLS1CRUdJTg==" }]
tags = { team = "a" }
wait_for_ready = true
timeouts {
  create = "10m"
  update = "10m"
  delete = "15m"
}
"#;

const EKS_NODE_CLASS_PROFILE: &str = r#"
name = "base-profile"
instance_profile = "eks-us-east-1-nodes"
subnet_selector_terms = [{ id = "subnet-0a1b2c3d" }]
security_group_selector_terms = [{ tags = { a = "b" } }]
"#;

const NODE_OVERLAY: &str = r#"
name = "base"
metadata = { labels = { team = "a" }, annotations = { "example.com/a" = "b" } }
requirements = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot"] }]
capacity = { "example.com/device" = "1" }
price_adjustment = "-10%"
weight = 10
timeouts {
  create = "10m"
  update = "10m"
  delete = "15m"
}
"#;

const NODE_OVERLAY_PRICE: &str = r#"
name = "base-price"
requirements = []
price = "0.5"
"#;

const CAPACITY_BUFFER: &str = r#"
name = "base"
namespace = "ci"
metadata = { labels = { team = "a" }, annotations = { "example.com/a" = "b" } }
pod_template_ref = { name = "runner" }
replicas = 3
limits = { cpu = "12", memory = "48Gi" }
provisioning_strategy = "buffer.x-k8s.io/active-capacity"
timeouts {
  create = "10m"
  update = "10m"
  delete = "15m"
}
"#;

const CAPACITY_BUFFER_SCALABLE: &str = r#"
name = "base-scalable"
scalable_ref = { api_group = "apps", kind = "Deployment", name = "web" }
percentage = 20
"#;

/// The cluster-reading data sources: only validated here (they read the cluster at plan).
const DATA_BY_NAME: &str = r#"
name = "base"
"#;

const DATA_NODE_CLAIMS: &str = r#"
node_pool = "base"
"#;

const DATA_INSTANCE_TYPES: &str = r#"
requirements = [
  { key = "karpenter.k8s.aws/instance-category", operator = "In", values = ["c", "m"], min_values = 2 },
  { key = "karpenter.k8s.aws/instance-generation", operator = "Gt", values = ["5"] },
]
source = "offline"
"#;

const DATA_INSTANCE_TYPES_EC2: &str = r#"
requirements = [{ key = "kubernetes.io/arch", operator = "In", values = ["arm64"] }]
source       = "ec2"
region       = "us-east-1"
zones        = ["us-east-1a"]
"#;

/// Data sources that read the cluster (or, for `karpenter_instance_types` with `source = "ec2"`,
/// AWS) when planned: their baselines cannot plan here (there is no cluster, no AWS), so the
/// plan batch leaves them out; their bad values fail validation first.
const READS_THE_CLUSTER: &[&str] = &[
    "karpenter_ec2_node_class",
    "karpenter_eks_node_class",
    "karpenter_node_pool",
    "karpenter_node_claims",
    "karpenter_instance_types",
];

/// Cases per terraform run. Terraform's time on one run grows faster than its number of cases:
/// the 1,092 cases took 365 s in chunks of 100 and 205 s in chunks of 50 (the runs holding the
/// kubelet maps with over a hundred keys took 110 s each, then 46–56 s). Measured alone later:
/// 251 CPU-seconds in chunks of 50, 185 in chunks of 25, 187 in chunks of 12 (where a run's own
/// start-up takes over).
const CHUNK: usize = 25;

const NODE_POOL: &str = r#"
name = "base"
metadata = { labels = { team = "a" }, annotations = { "example.com/a" = "b" } }
template = {
  metadata = { labels = { workload = "general" }, annotations = { "example.com/a" = "b" } }
  spec = {
    node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
    requirements = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"], min_values = 1 }]
    taints = [{ key = "example.com/dedicated", value = "general", effect = "NoSchedule" }]
    startup_taints = [{ key = "example.com/startup", value = "x", effect = "NoSchedule" }]
    expire_after = "720h"
    termination_grace_period = "48h"
  }
}
disruption = {
  consolidation_policy = "WhenEmptyOrUnderutilized"
  consolidate_after = "1m"
  budgets = [{ nodes = "10%", schedule = "0 9 * * 1-5", duration = "8h", reasons = ["Empty"] }]
}
limits = { cpu = "1000" }
weight = 10
timeouts {
  create = "10m"
  update = "10m"
  delete = "15m"
}
"#;

const NODE_POOL_STATIC: &str = r#"
name = "static"
template = {
  spec = {
    node_class_ref = { name = "default" }
    requirements = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }]
  }
}
limits = { nodes = "10" }
replicas = 3
"#;

/// Karpenter v1.15's open kubelet: every upstream field besides the 12 Karpenter reads
/// (`register_with_taints`, which Karpenter refuses, has a case of its own).
const NODE_CLASS_OPEN_KUBELET: &str = r#"
name = "base-open-kubelet"
role = "KarpenterNodeRole-demo"
ami_selector_terms = [{ alias = "al2023@latest" }]
subnet_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
kubelet = {
  enable_server = true
  static_pod_path = "x"
  pod_logs_dir = "x"
  sync_frequency = "30s"
  file_check_frequency = "30s"
  http_check_frequency = "30s"
  static_pod_url = "https://example.com/pods"
  static_pod_url_header = { Accept = ["application/json"] }
  address = "0.0.0.0"
  port = 5
  read_only_port = 5
  tls_cert_file = "x"
  tls_private_key_file = "x"
  tls_cipher_suites = ["a"]
  tls_curve_preferences = [23]
  tls_min_version = "VersionTLS12"
  rotate_certificates = true
  server_tls_bootstrap = true
  authentication = { x509 = { client_ca_file = "x" }, webhook = { enabled = true, cache_ttl = "30s" }, anonymous = { enabled = true } }
  authorization = { mode = "AlwaysAllow", webhook = { cache_authorized_ttl = "30s", cache_unauthorized_ttl = "30s" } }
  registry_pull_qps = 5
  registry_burst = 5
  image_pull_credentials_verification_policy = "NeverVerify"
  preloaded_images_verification_allowlist = ["a"]
  event_record_qps = 5
  event_burst = 5
  enable_debugging_handlers = true
  enable_contention_profiling = true
  healthz_port = 5
  healthz_bind_address = "x"
  oom_score_adj = 5
  cluster_domain = "x"
  streaming_connection_idle_timeout = "30s"
  node_status_update_frequency = "30s"
  node_status_report_frequency = "30s"
  node_lease_duration_seconds = 5
  image_minimum_gc_age = "30s"
  image_maximum_gc_age = "30s"
  volume_stats_agg_period = "30s"
  kubelet_cgroups = "x"
  system_cgroups = "x"
  cgroup_root = "x"
  cgroups_per_qos = true
  cgroup_driver = "cgroupfs"
  cpu_manager_policy = "none"
  single_process_oom_kill = true
  cpu_manager_policy_options = { a = "b" }
  cpu_manager_reconcile_period = "30s"
  memory_manager_policy = "None"
  topology_manager_policy = "none"
  topology_manager_scope = "container"
  topology_manager_policy_options = { a = "b" }
  qos_reserved = { memory = "50%" }
  runtime_request_timeout = "30s"
  hairpin_mode = "promiscuous-bridge"
  pod_cidr = "x"
  pod_pids_limit = 100
  resolv_conf = "x"
  run_once = true
  cpu_cfs_quota_period = "30s"
  node_status_max_images = 5
  max_open_files = 100
  content_type = "x"
  kube_api_qps = 5
  kube_api_burst = 5
  serialize_image_pulls = true
  max_parallel_image_pulls = 5
  eviction_pressure_transition_period = "30s"
  eviction_minimum_reclaim = { "memory.available" = "0Mi" }
  merge_default_eviction_settings = true
  enable_controller_attach_detach = true
  protect_kernel_defaults = true
  make_ip_tables_util_chains = true
  iptables_masquerade_bit = 5
  iptables_drop_bit = 5
  feature_gates = { KubeletCrashLoopBackOffMax = true }
  fail_swap_on = true
  memory_swap = { swap_behavior = "NoSwap" }
  container_log_max_size = "10Mi"
  container_log_max_files = 5
  container_log_max_workers = 5
  container_log_monitor_interval = "30s"
  config_map_and_secret_change_detection_strategy = "Get"
  reserved_system_cpus = "0-1"
  show_hidden_metrics_for_version = "1.35"
  system_reserved_cgroup = "x"
  kube_reserved_cgroup = "x"
  enforce_node_allocatable = ["pods"]
  allowed_unsafe_sysctls = ["a"]
  volume_plugin_dir = "x"
  provider_id = "x"
  kernel_memcg_notification = true
  logging = { format = "text", flush_frequency = "5s", verbosity = 2, vmodule = [{ file_pattern = "x", verbosity = 3 }], options = { text = { split_stream = true, info_buffer_size = "10Mi" }, json = { split_stream = true, info_buffer_size = "10Mi" } } }
  enable_system_log_handler = true
  enable_system_log_query = true
  shutdown_grace_period = "30s"
  shutdown_grace_period_critical_pods = "30s"
  shutdown_grace_period_by_pod_priority = [{ priority = 5, shutdown_grace_period_seconds = 100 }]
  crash_loop_back_off = { max_container_restart_period = "30s" }
  reserved_memory = [{ numa_node = 5, limits = { memory = "1Gi" } }]
  enable_profiling_handler = true
  enable_debug_flags_handler = true
  seccomp_default = true
  memory_throttling_factor = 0.8
  memory_reservation_policy = "None"
  register_node = true
  tracing = { endpoint = "x", sampling_rate_per_million = 5 }
  local_storage_capacity_isolation = true
  container_runtime_endpoint = "unix:///run/containerd/containerd.sock"
  image_service_endpoint = "x"
  fail_cgroup_v1 = true
  user_namespaces = { ids_per_pod = 100 }
}
"#;

const NODE_CLASS: &str = r#"
name = "base"
metadata = { labels = { team = "a" }, annotations = { "example.com/a" = "b" } }
role = "KarpenterNodeRole-demo"
ami_selector_terms = [{ alias = "al2023@latest" }]
subnet_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
security_group_selector_terms = [{ tags = { "karpenter.sh/discovery" = "demo" } }]
capacity_reservation_selector_terms = [{ id = "cr-0123456789abcdef0" }]
placement_group_selector = { name = "pg" }
enclave_options = { enabled = true }
associate_public_ip_address = false
tags = { team = "platform" }
kubelet = {
  cluster_dns = ["10.0.0.10"]
  max_pods = 110
  pods_per_core = 10
  system_reserved = { cpu = "100m" }
  kube_reserved = { memory = "1Gi" }
  eviction_hard = { "memory.available" = "5%" }
  eviction_soft = { "memory.available" = "10%" }
  eviction_soft_grace_period = { "memory.available" = "1m" }
  eviction_max_pod_grace_period = 60
  image_gc_high_threshold_percent = 85
  image_gc_low_threshold_percent = 80
  cpu_cfs_quota = true
}
block_device_mappings = [{
  device_name = "/dev/xvda"
  root_volume = true
  ebs = {
    volume_size = "100Gi"
    volume_type = "gp3"
    encrypted = true
    iops = 3000
    throughput = 125
    delete_on_termination = true
    kms_key_id = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    snapshot_id = "snap-0123456789abcdef0"
  }
}]
instance_store_policy = "RAID0"
user_data = "echo hello"
detailed_monitoring = true
metadata_options = { http_endpoint = "enabled", http_protocol_ipv6 = "disabled", http_put_response_hop_limit = 2, http_tokens = "required" }
network_interfaces = [{ network_card_index = 0, device_index = 0, interface_type = "interface" }]
ip_prefix_count = 1
connection_tracking = { tcp_established_timeout = 3600, udp_stream_timeout = 60, udp_timeout = 30 }
cpu_options = { nested_virtualization = "enabled" }
context = "ctx"
wait_for_ready = false
timeouts {
  create = "10m"
}
"#;

const NODE_CLASS_PROFILE: &str = r#"
name = "profile"
instance_profile = "KarpenterNodeInstanceProfile-demo"
ami_family = "AL2023"
ami_selector_terms = [{ name = "my-ami-*", owner = "123456789012", ssm_parameter = "/aws/service/x", tags = { team = "a" } }]
subnet_selector_terms = [{ id = "subnet-0123456789abcdef0" }]
security_group_selector_terms = [{ name = "sg-name" }]
capacity_reservation_selector_terms = [{ owner_id = "123456789012", instance_match_criteria = "open", tags = { team = "a" } }]
placement_group_selector = { id = "pg-0123456789abcdef0" }
block_device_mappings = [{ device_name = "/dev/xvda", ebs = { volume_size = "20Gi", volume_initialization_rate = 100, snapshot_id = "snap-0123456789abcdef0" } }]
"#;

const PROVISIONER: &str = r#"
name = "base"
metadata = { labels = { team = "a" }, annotations = { "example.com/a" = "b" } }
labels = { workload = "general" }
annotations = { "example.com/a" = "b" }
requirements = [{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] }]
taints = [{ key = "example.com/dedicated", value = "general", effect = "NoSchedule" }]
startup_taints = [{ key = "example.com/startup", value = "x", effect = "NoSchedule" }]
provider_ref = { name = "default", kind = "AWSNodeTemplate", api_version = "karpenter.k8s.aws/v1alpha1" }
kubelet_configuration = {
  cluster_dns = ["10.0.0.10"]
  max_pods = 110
  pods_per_core = 10
  system_reserved = { cpu = "100m" }
  kube_reserved = { memory = "1Gi" }
  eviction_hard = { "memory.available" = "5%" }
  eviction_soft = { "memory.available" = "10%" }
  eviction_soft_grace_period = { "memory.available" = "1m" }
  eviction_max_pod_grace_period = 60
  image_gc_high_threshold_percent = 85
  image_gc_low_threshold_percent = 80
  cpu_cfs_quota = true
  container_runtime = "containerd"
}
limits = { resources = { cpu = "1000" } }
consolidation = { enabled = false }
ttl_seconds_after_empty = 30
ttl_seconds_until_expired = 2592000
weight = 10
timeouts {
  create = "10m"
}
"#;

const NODE_TEMPLATE: &str = r#"
name = "base"
metadata = { labels = { team = "a" }, annotations = { "example.com/a" = "b" } }
subnet_selector = { "karpenter.sh/discovery" = "demo" }
security_group_selector = { "karpenter.sh/discovery" = "demo" }
ami_selector = { "karpenter.sh/discovery" = "demo" }
ami_family = "AL2"
instance_profile = "KarpenterNodeInstanceProfile-demo"
user_data = "echo hello"
tags = { team = "platform" }
detailed_monitoring = true
context = "ctx"
metadata_options = { http_endpoint = "enabled", http_protocol_ipv6 = "disabled", http_put_response_hop_limit = 2, http_tokens = "required" }
block_device_mappings = [{ device_name = "/dev/xvda", ebs = { volume_size = "100Gi", volume_type = "gp3", encrypted = true, iops = 3000, throughput = 125, delete_on_termination = true, kms_key_id = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab", snapshot_id = "snap-0123456789abcdef0" } }]
timeouts {
  create = "10m"
}
"#;

const NODE_TEMPLATE_LT: &str = r#"
name = "lt"
subnet_selector = { "karpenter.sh/discovery" = "demo" }
launch_template = "my-launch-template"
"#;

const QUEUE: &str = r#"
cluster_name = "demo"
name = "demo-queue"
message_retention_seconds = 300
sqs_managed_sse_enabled = true
policy_statements = [{
  sid = "Extra"
  effect = "Allow"
  actions = ["sqs:SendMessage"]
  principals = [{ type = "Service", identifiers = ["sns.amazonaws.com"] }]
  conditions = [{ test = "StringEquals", variable = "aws:SourceAccount", values = ["123456789012"] }]
}]
rule_name_prefix = "Karp"
tags = { team = "platform" }
timeouts {
  create = "10m"
}
"#;

const QUEUE_KMS: &str = r#"
cluster_name = "demo"
sqs_managed_sse_enabled = false
kms_master_key_id = "alias/karpenter"
kms_data_key_reuse_period_seconds = 300
enabled_rules = ["spot_interruption"]
"#;

const NODE_ROLE: &str = r#"
name = "KarpenterNodeRole-demo"
path = "/karpenter/"
permissions_boundary = "arn:aws:iam::123456789012:policy/boundary"
tags = { team = "platform" }
additional_policy_arns = ["arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy"]
partition = "aws"
ip_family = "ipv4"
attach_cni_policy = true
create_instance_profile = true
"#;

const NODE_ROLE_PREFIX: &str = r#"
name_prefix = "KarpenterNode-"
mode = "eks_auto_mode"
eks_access_entry = { cluster_name = "demo" }
"#;

const CONTROLLER_ROLE: &str = r#"
name = "KarpenterControllerRole-demo"
cluster_name = "demo"
region = "us-east-1"
node_role_arn = "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"
interruption_queue_arn = "arn:aws:sqs:us-east-1:123456789012:demo"
path = "/karpenter/"
permissions_boundary = "arn:aws:iam::123456789012:policy/boundary"
tags = { team = "platform" }
additional_policy_arns = ["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"]
account_id = "123456789012"
irsa = {
  oidc_provider_arn = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/EXAMPLED539D4633E53DE1B71EXAMPLE"
  namespace = "kube-system"
  service_account = "karpenter"
}
pod_identity = true
policy_attachment = "managed"
"#;

const CONTROLLER_ROLE_PREFIX: &str = r#"
name_prefix = "KarpenterController-"
cluster_name = "demo"
region = "us-east-1"
node_role_arn = "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"
pod_identity = true
"#;

const CONTROLLER_POLICY: &str = r#"
cluster_name = "demo"
region = "us-east-1"
account_id = "123456789012"
partition = "aws"
node_role_arn = "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"
interruption_queue_arn = "arn:aws:sqs:us-east-1:123456789012:demo"
"#;

const PROVIDER: &str = r#"
kubernetes {
  host = "https://127.0.0.1:6443"
  cluster_ca_certificate = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
  insecure = false
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command = "aws"
    args = ["eks", "get-token", "--cluster-name", "demo"]
    env = { AWS_PROFILE = "demo" }
  }
}
aws {
  region = "us-east-1"
  profile = "demo"
  allowed_account_ids = ["123456789012"]
  default_tags {
    tags = { team = "karpenter" }
  }
  assume_role {
    role_arn = "arn:aws:iam::123456789012:role/terraform"
    session_name = "terraform"
    external_id = "x"
  }
  endpoints {
    iam = "http://127.0.0.1:5000"
    sqs = "http://127.0.0.1:5000"
    events = "http://127.0.0.1:5000"
    sts = "http://127.0.0.1:5000"
  }
}
"#;

const PROVIDER_EKS: &str = r#"
kubernetes {
  eks {
    cluster_name = "demo"
    region = "us-east-1"
    role_arn = "arn:aws:iam::123456789012:role/eks-access"
  }
}
"#;

/// Web identity in front of the role assumption (the block `PROVIDER` does not have).
const PROVIDER_WEB_IDENTITY: &str = r#"
aws {
  region = "us-east-1"
  forbidden_account_ids = ["210987654321"]
  assume_role_with_web_identity {
    role_arn = "arn:aws:iam::123456789012:role/ci"
    session_name = "ci"
    web_identity_token_file = "/var/run/secrets/eks.amazonaws.com/serviceaccount/token"
    duration = "1h"
    policy = "{\"Version\":\"2012-10-17\",\"Statement\":[]}"
    policy_arns = ["arn:aws:iam::aws:policy/ReadOnlyAccess"]
  }
}
"#;

fn parse_body(hcl_text: &str) -> Map<String, Json> {
    let text = hcl_text.replace("{TIMEOUTS}", TIMEOUTS);
    match hcl::from_str::<Json>(&text) {
        Ok(Json::Object(m)) => m,
        other => panic!("baseline does not parse: {other:?}\n{text}"),
    }
}

/// The schemas by kind, from the provider itself.
fn schemas() -> BTreeMap<Kind, Schema> {
    let provider = KarpenterProvider::new();
    let mut out = BTreeMap::new();
    for r in provider.resources() {
        out.insert(Kind::Resource(r.type_name().to_string()), r.schema().clone());
    }
    for d in provider.data_sources() {
        out.insert(Kind::Data(d.type_name().to_string()), d.schema().clone());
    }
    out.insert(Kind::Provider, provider.schema().clone());
    out
}

// ---------------------------------------------------------------------------------------------
// Candidate values

const LONG_LENGTHS: [usize; 4] = [64, 254, 320, 2100];

/// Strings worth trying anywhere: each is invalid for some rule.
fn string_pool() -> Vec<(Category, Json)> {
    let mut pool = vec![(Category::Empty, json!(""))];
    for s in [
        " ",
        "not valid!",
        "UPPER_Case",
        "a/b/c",
        "-1",
        "1.5",
        "0",
        "Never",
        "in",
        "ünïcode",
        "line\nbreak",
        "-leading-dash",
        "arn:aws:iam::12345:role/x",
        "ami-zz",
        "http//missing-colon",
        "@daily",
        "101%",
        "9999999999999",
    ] {
        pool.push((Category::Malformed, json!(s)));
    }
    for n in LONG_LENGTHS {
        pool.push((Category::TooLong, json!("x".repeat(n))));
    }
    // Converted by Terraform to the strings "-1", "1.5", "true", "0", "99999".
    for v in [json!(-1), json!(1.5), json!(true), json!(0), json!(99999)] {
        pool.push((Category::WrongType, v));
    }
    pool
}

fn number_pool() -> Vec<(Category, Json)> {
    let mut pool = Vec::new();
    for v in [json!(-1), json!(0), json!(1.5), json!(-2147483649i64)] {
        pool.push((Category::Malformed, v));
    }
    for v in [
        json!(51),
        json!(65),
        json!(101),
        json!(1_000_000),
        json!(1_000_000_000_000_000i64),
    ] {
        pool.push((Category::OutOfRange, v));
    }
    // Converted by Terraform to the numbers -1, 0.5 and 1e9.
    for v in [json!("-1"), json!("0.5"), json!("1000000000")] {
        pool.push((Category::WrongType, v));
    }
    pool
}

fn keys_pool() -> Vec<(Category, String)> {
    vec![
        (Category::BadKey, String::new()),
        (Category::BadKey, "bad key!".into()),
        (Category::BadKey, "-x".into()),
        (Category::BadKey, "a/b/c".into()),
        (Category::BadKey, "kubernetes.io/hostname".into()),
        (Category::BadKey, "karpenter.sh/unknown".into()),
        (Category::BadKey, "kubernetes.io/cluster/demo".into()),
        (Category::BadKey, "memory.unavailable".into()),
        (Category::BadKey, "aws:reserved".into()),
        (Category::BadKey, format!("example.com/{}", "k".repeat(64))),
    ]
}

/// Candidates for an attribute; `current` is the baseline's value (used to build collections
/// of valid elements).
fn candidates(attribute: &Attribute, current: Option<&Json>) -> Vec<(Category, Json)> {
    let ty = attribute.value_type();
    let mut out = Vec::new();
    match (&ty, attribute.nested()) {
        (_, Some((nesting, nested))) => {
            let any_required = nested
                .iter()
                .any(|a| a.mode == terraform_provider_karpenter::terraform::framework::Mode::Required);
            match nesting {
                Nesting::Single => {
                    if !any_required {
                        out.push((Category::Empty, json!({})));
                    }
                }
                Nesting::List | Nesting::Set => {
                    out.push((Category::Empty, json!([])));
                    if let Some(first) = current.and_then(|c| c.as_array()).and_then(|a| a.first()) {
                        out.push((Category::Duplicate, json!([first, first])));
                        for n in [3, 6, 11, 51, 101] {
                            out.push((Category::TooMany, Json::Array(vec![first.clone(); n])));
                        }
                    }
                }
                Nesting::Map => {
                    out.push((Category::Empty, json!({})));
                    if let Some(first) = current
                        .and_then(|c| c.as_object())
                        .and_then(|m| m.values().next())
                    {
                        for (c, k) in keys_pool() {
                            out.push((c, obj1(&k, first)));
                        }
                    }
                }
            }
        }
        (Type::String, None) => out = string_pool(),
        (Type::Number, None) => out = number_pool(),
        (Type::List(e) | Type::Set(e), None) if **e == Type::String => {
            out.push((Category::Empty, json!([])));
            for (c, s) in string_pool() {
                out.push((c, json!([s])));
            }
            out.push((Category::Duplicate, json!(["a", "a"])));
            for n in [3, 6, 11, 51, 101] {
                let many: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
                out.push((Category::TooMany, json!(many)));
            }
        }
        (Type::Map(e), None) if **e == Type::String => {
            out.push((Category::Empty, json!({})));
            for (c, k) in keys_pool() {
                out.push((c, obj1(&k, &json!("x"))));
            }
            for (c, s) in string_pool() {
                out.push((c, json!({ "key": s })));
            }
            let many: Map<String, Json> = (0..101).map(|i| (format!("k{i}"), json!("v"))).collect();
            out.push((Category::TooMany, Json::Object(many)));
        }
        // A value of any type (an int-or-string field, a map of them): every pool, as it is
        // (Terraform converts nothing on the way in), and the types no such field takes.
        (Type::Dynamic, None) => {
            out.extend(string_pool());
            out.extend(number_pool());
            out.push((Category::WrongType, json!(true)));
            out.push((Category::WrongType, json!(["x"])));
            out.push((Category::Empty, json!({})));
            for (c, k) in keys_pool() {
                out.push((c, obj1(&k, &json!("1"))));
            }
            for (c, v) in string_pool().into_iter().chain(number_pool()) {
                out.push((c, json!({ "cpu": v })));
            }
        }
        _ => {}
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Walking the schema

/// A place in the schema to put bad values: the attribute and the JSON path to it.
struct Slot<'a> {
    attribute: &'a Attribute,
    json_path: Vec<Step>,
}

fn slots<'a>(attributes: &'a [Attribute], blocks: &'a [Block], prefix: &[Step], out: &mut Vec<Slot<'a>>) {
    for a in attributes.iter().filter(|a| a.is_settable()) {
        let mut path = prefix.to_vec();
        path.push(Step::Key(a.name.to_string()));
        out.push(Slot {
            attribute: a,
            json_path: path.clone(),
        });
        if let Some((nesting, nested)) = a.nested() {
            let mut inner = path.clone();
            match nesting {
                Nesting::Single => {}
                Nesting::List | Nesting::Set => inner.push(Step::Index(0)),
                Nesting::Map => inner.push(Step::FirstKey),
            }
            slots(nested, &[], &inner, out);
        }
    }
    for b in blocks {
        let mut path = prefix.to_vec();
        path.push(Step::Key(b.name.to_string()));
        slots(&b.attributes, &b.blocks, &path, out);
    }
}

/// Resolves `path` in `body` (FirstKey becomes the actual key); `None` when a parent is missing.
/// Returns the resolved steps and the terraform attribute path.
fn resolve(body: &Map<String, Json>, path: &[Step]) -> Option<(Vec<Step>, AttributePath)> {
    let mut node = Json::Object(body.clone());
    let mut steps = Vec::new();
    let mut tf = AttributePath::root();
    for (i, step) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        let (resolved, next) = match step {
            Step::Key(k) => {
                tf = tf.attr(k.clone());
                (Step::Key(k.clone()), node.get(k).cloned())
            }
            Step::Index(n) => {
                tf = tf.index(*n);
                (Step::Index(*n), node.get(*n).cloned())
            }
            Step::FirstKey => {
                let k = node.as_object()?.keys().next()?.clone();
                tf = tf.key(k.clone());
                (Step::Key(k.clone()), node.get(&k).cloned())
            }
        };
        steps.push(resolved);
        match next {
            Some(n) => node = n,
            None if last => node = Json::Null,
            None => return None,
        }
    }
    Some((steps, tf))
}

fn get_at<'a>(body: &'a Map<String, Json>, steps: &[Step]) -> Option<&'a Json> {
    let (first, rest) = steps.split_first()?;
    let Step::Key(k) = first else { return None };
    let mut node = body.get(k)?;
    for s in rest {
        node = match s {
            Step::Key(k) => node.get(k)?,
            Step::Index(i) => node.get(*i)?,
            Step::FirstKey => return None,
        };
    }
    Some(node)
}

fn set_at(body: &mut Map<String, Json>, steps: &[Step], value: Json) {
    let mut whole = Json::Object(std::mem::take(body));
    let (last, parents) = steps.split_last().expect("a non-empty path");
    let mut node = &mut whole;
    for s in parents {
        node = match s {
            Step::Key(k) => node.get_mut(k.as_str()),
            Step::Index(i) => node.get_mut(*i),
            Step::FirstKey => None,
        }
        .unwrap_or_else(|| panic!("no parent at {s:?} of {steps:?}"));
    }
    match (last, value) {
        (Step::Key(k), Json::Null) => {
            node.as_object_mut().expect("an object").remove(k.as_str());
        }
        (Step::Key(k), value) => {
            node.as_object_mut().expect("an object").insert(k.clone(), value);
        }
        (Step::Index(i), value) => node[*i] = value,
        (Step::FirstKey, _) => panic!("unresolved path {steps:?}"),
    }
    if let Json::Object(m) = whole {
        *body = m;
    }
}

fn obj1(key: &str, value: &Json) -> Json {
    let mut m = Map::new();
    m.insert(key.to_string(), value.clone());
    Json::Object(m)
}

/// The errors the attribute's validators (and those of the attributes nested in it) give for
/// `value` at `path`, run in-process exactly as the provider runs them.
fn oracle(attribute: &Attribute, value: &Json, path: &AttributePath) -> BTreeSet<String> {
    let converted = if attribute.value_type() == Type::Dynamic {
        json_to_dynamic(value).ok()
    } else {
        tfjson::decode_lenient(value.to_string().as_bytes(), &attribute.value_type()).ok()
    };
    let Some(converted) = converted else {
        return BTreeSet::new();
    };
    let parent = AttributePath {
        steps: path.steps[..path.steps.len() - 1].to_vec(),
    };
    let mut d = Diagnostics::new();
    let holder = Value::object([(attribute.name, converted)]);
    validate_attributes(std::slice::from_ref(attribute), &[], &holder, &parent, &mut d);
    d.iter()
        .filter(|d| d.severity == Severity::Error)
        .filter_map(|d| d.path.as_ref().map(|p| p.to_string()))
        .collect()
}

fn show(v: &Json) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        format!("{}… ({} chars)", s.chars().take(40).collect::<String>(), s.len())
    } else {
        s
    }
}

/// Generates the cases for every kind: one per (attribute, category) the validators reject.
fn generated_cases(schemas: &BTreeMap<Kind, Schema>) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut unplaced = Vec::new();
    for (kind, texts) in baselines() {
        let schema = &schemas[&kind];
        let bodies: Vec<Map<String, Json>> = texts.iter().map(|t| parse_body(t)).collect();
        let mut all = Vec::new();
        slots(&schema.attributes, &schema.blocks, &[], &mut all);
        for slot in all {
            let Some((body, steps, tf_path)) = bodies
                .iter()
                .find_map(|b| resolve(b, &slot.json_path).map(|(s, p)| (b, s, p)))
            else {
                // Refused whatever its value (Karpenter sets it itself): no baseline can hold it,
                // and a contradiction case below sets it.
                if !slot.attribute.description.starts_with("Karpenter sets it") {
                    unplaced.push(format!("{} {:?}", kind.label(), slot.json_path));
                }
                continue;
            };
            let current = get_at(body, &steps);
            let mut seen = BTreeSet::new();
            for (category, value) in candidates(slot.attribute, current) {
                if seen.contains(&category) {
                    continue;
                }
                let expected = oracle(slot.attribute, &value, &tf_path);
                if expected.is_empty() {
                    continue;
                }
                seen.insert(category);
                let mut case_body = body.clone();
                set_at(&mut case_body, &steps, value.clone());
                cases.push(Case {
                    kind: kind.clone(),
                    category,
                    attribute: tf_path.to_string(),
                    body: case_body,
                    shown: show(&value),
                    expected,
                    placed: Some((steps.clone(), value)),
                });
            }
        }
    }
    (cases, unplaced)
}

// ---------------------------------------------------------------------------------------------
// Contradictory combinations: the cross-attribute rules of each type's `validate` (the
// node pool and node class rules already have their own table in invalid_inputs.rs; these are
// the others, and the rules that table does not reach).

/// One contradiction: (kind, baseline index, changes as (top-level attribute or `a.b` path,
/// JSON value; null removes), expected path).
type ContradictionSpec = (Kind, usize, Vec<(&'static str, Json)>, &'static str);

fn contradiction_specs() -> Vec<ContradictionSpec> {
    let r = |t: &str| Kind::Resource(t.to_string());
    let q = r("karpenter_interruption_queue");
    let nr = r("karpenter_node_role");
    let cr = r("karpenter_controller_role");
    let cp = Kind::Data("karpenter_controller_policy".into());
    let p = Kind::Provider;
    let np = r("karpenter_node_pool");
    let nc = r("karpenter_ec2_node_class");
    let pr = r("karpenter_provisioner");
    let nt = r("karpenter_node_template");
    let cb = r("karpenter_capacity_buffer");
    vec![
        // Karpenter v1.15's kubelet: a field Karpenter sets itself, and upstream fields an AMI
        // family other than AL2023 (or Custom) does not apply.
        (
            nc.clone(),
            2,
            vec![(
                "kubelet.register_with_taints",
                json!([{ "key": "a", "effect": "NoSchedule" }]),
            )],
            "kubelet.register_with_taints",
        ),
        (
            nc.clone(),
            2,
            vec![("ami_selector_terms", json!([{ "alias": "bottlerocket@latest" }]))],
            "kubelet.registry_pull_qps",
        ),
        // interruption queue
        (
            q.clone(),
            0,
            vec![("name", Json::Null), ("cluster_name", json!("c".repeat(81)))],
            "cluster_name",
        ),
        (
            q.clone(),
            1,
            vec![("kms_master_key_id", Json::Null)],
            "kms_data_key_reuse_period_seconds",
        ),
        (
            q.clone(),
            1,
            vec![("sqs_managed_sse_enabled", json!(true))],
            "sqs_managed_sse_enabled",
        ),
        (
            q.clone(),
            0,
            vec![(
                "policy_statements",
                json!([{ "actions": ["sqs:SendMessage"], "principals": [{ "type": "AWS", "identifiers": [] }] }]),
            )],
            "policy_statements[0].principals[0].identifiers",
        ),
        // node role
        (
            nr.clone(),
            0,
            vec![("name_prefix", json!("KarpenterNode-"))],
            "name_prefix",
        ),
        (
            nr.clone(),
            0,
            vec![("partition", json!("aws-cn"))],
            "permissions_boundary",
        ),
        // controller role
        (
            cr.clone(),
            0,
            vec![("name_prefix", json!("KarpenterController-"))],
            "name_prefix",
        ),
        (
            cr.clone(),
            0,
            vec![("irsa", Json::Null), ("pod_identity", json!(false))],
            "irsa",
        ),
        (cr.clone(), 1, vec![("pod_identity", json!(false))], "irsa"),
        (
            cr.clone(),
            0,
            vec![("account_id", json!("210987654321"))],
            "node_role_arn",
        ),
        (
            cr.clone(),
            0,
            vec![(
                "interruption_queue_arn",
                json!("arn:aws:sqs:us-east-1:210987654321:demo"),
            )],
            "interruption_queue_arn",
        ),
        (
            cr.clone(),
            0,
            vec![(
                "interruption_queue_arn",
                json!("arn:aws:sqs:eu-west-1:123456789012:demo"),
            )],
            "interruption_queue_arn",
        ),
        (cr.clone(), 0, vec![("region", json!("cn-north-1"))], "region"),
        // controller policy
        (
            cp.clone(),
            0,
            vec![("partition", json!("aws-cn"))],
            "node_role_arn",
        ),
        (
            cp.clone(),
            0,
            vec![("account_id", json!("210987654321"))],
            "node_role_arn",
        ),
        (
            cp.clone(),
            0,
            vec![(
                "interruption_queue_arn",
                json!("arn:aws:sqs:eu-west-1:123456789012:demo"),
            )],
            "interruption_queue_arn",
        ),
        (
            cp.clone(),
            0,
            vec![(
                "interruption_queue_arn",
                json!("arn:aws:sqs:us-east-1:210987654321:demo"),
            )],
            "interruption_queue_arn",
        ),
        // provider: both account guards
        (
            p.clone(),
            0,
            vec![("aws.forbidden_account_ids", json!(["210987654321"]))],
            "aws.forbidden_account_ids",
        ),
        // provider: eks {} beside other credentials
        (
            p.clone(),
            1,
            vec![("kubernetes.token", json!("t"))],
            "kubernetes.token",
        ),
        (
            p.clone(),
            1,
            vec![("kubernetes.config_path", json!("/tmp/kubeconfig"))],
            "kubernetes.config_path",
        ),
        (
            p.clone(),
            1,
            vec![(
                "kubernetes.client_certificate",
                json!("-----BEGIN CERTIFICATE-----"),
            )],
            "kubernetes.client_certificate",
        ),
        (
            p.clone(),
            1,
            vec![(
                "kubernetes.exec",
                json!({ "api_version": "client.authentication.k8s.io/v1beta1", "command": "aws" }),
            )],
            "kubernetes.exec",
        ),
        // node pool
        (np.clone(), 1, vec![("weight", json!(5))], "weight"),
        (
            np.clone(),
            1,
            vec![("limits", json!({ "cpu": "10" }))],
            "limits[\"cpu\"]",
        ),
        (
            np.clone(),
            0,
            vec![(
                "disruption",
                json!({ "consolidate_after": "1m", "budgets": [{ "nodes": "1", "duration": "1h" }] }),
            )],
            "disruption.budgets[0].schedule",
        ),
        // node class
        (
            nc.clone(),
            0,
            vec![("instance_profile", json!("p"))],
            "instance_profile",
        ),
        (nc.clone(), 1, vec![("instance_profile", Json::Null)], "role"),
        (
            nc.clone(),
            0,
            vec![(
                "ami_selector_terms",
                json!([{ "alias": "al2023@latest" }, { "id": "ami-0123456789abcdef0" }]),
            )],
            "ami_selector_terms[0].alias",
        ),
        // provisioner
        (
            pr.clone(),
            0,
            vec![("consolidation", json!({ "enabled": true }))],
            "ttl_seconds_after_empty",
        ),
        // node template
        (nt.clone(), 1, vec![("user_data", json!("echo x"))], "user_data"),
        (
            nt.clone(),
            1,
            vec![("metadata_options", json!({ "http_tokens": "required" }))],
            "metadata_options",
        ),
        (
            nt.clone(),
            0,
            vec![("subnet_selector", Json::Null)],
            "subnet_selector",
        ),
        // capacity buffer
        (
            cb.clone(),
            0,
            vec![("scalable_ref", json!({ "kind": "Deployment", "name": "web" }))],
            "scalable_ref",
        ),
        (
            cb.clone(),
            0,
            vec![("replicas", Json::Null), ("limits", Json::Null)],
            "pod_template_ref",
        ),
    ]
}

fn contradiction_cases() -> Vec<Case> {
    let bodies: BTreeMap<Kind, Vec<Map<String, Json>>> = baselines()
        .into_iter()
        .map(|(k, texts)| (k, texts.iter().map(|t| parse_body(t)).collect()))
        .collect();
    contradiction_specs()
        .into_iter()
        .map(|(kind, index, changes, expected)| {
            let mut body = bodies[&kind][index].clone();
            let mut shown = Vec::new();
            for (path, value) in changes {
                shown.push(format!("{path} = {}", show(&value)));
                let steps: Vec<Step> = path.split('.').map(|s| Step::Key(s.to_string())).collect();
                set_at(&mut body, &steps, value);
            }
            Case {
                kind,
                category: Category::Contradiction,
                attribute: expected.to_string(),
                body,
                shown: shown.join(", "),
                expected: BTreeSet::from([expected.to_string()]),
                placed: None,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Running a batch through terraform

/// A configuration line: a case or a baseline that must validate clean.
struct Entry<'a> {
    name: String,
    kind: &'a Kind,
    body: &'a Map<String, Json>,
}

/// Where each entry of a rendered configuration is: the lines it spans, and the line of each
/// of its top-level attributes.
#[derive(Default)]
struct Lines {
    entry_of_line: BTreeMap<usize, usize>,
    attribute: BTreeMap<(usize, String), usize>,
}

/// Writes the entries as a JSON configuration, each entry's top-level attributes on lines of
/// their own (as a reader writes them, so the line an error points at says which attribute it
/// is on); returns the text and where each entry and attribute is.
fn render(entries: &[Entry<'_>], extra: &str) -> (String, Lines) {
    let mut lines: Vec<String> = vec!["{".into()];
    let mut at = Lines::default();
    let mut groups: BTreeMap<(u8, String), Vec<usize>> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        let key = match e.kind {
            Kind::Resource(t) => (0, t.clone()),
            Kind::Data(t) => (1, t.clone()),
            Kind::Provider => (2, String::new()),
        };
        groups.entry(key).or_default().push(i);
    }
    // Lines marked "\0<entry>\0<attribute>\0<text>" belong to an entry ("" for its header).
    let mut sections: Vec<String> = Vec::new();
    for block in [0u8, 1, 2] {
        let mine: Vec<_> = groups.iter().filter(|((b, _), _)| *b == block).collect();
        if mine.is_empty() {
            continue;
        }
        let mut section = vec![match block {
            0 => "\"resource\": {".to_string(),
            1 => "\"data\": {".to_string(),
            _ => "\"provider\": {\"karpenter\": [".to_string(),
        }];
        let ntypes = mine.len();
        for (ti, ((_, ty), members)) in mine.into_iter().enumerate() {
            if block != 2 {
                section.push(format!("\"{ty}\": {{"));
            }
            for (mi, &i) in members.iter().enumerate() {
                let e = &entries[i];
                let comma = if mi + 1 < members.len() { "," } else { "" };
                let mut body = e.body.clone();
                let header = if block == 2 {
                    body.insert("alias".into(), json!(e.name));
                    "{".to_string()
                } else {
                    format!("\"{}\": {{", e.name)
                };
                section.push(format!("\u{0}{i}\u{0}\u{0}{header}"));
                let n = body.len();
                for (ai, (key, value)) in body.iter().enumerate() {
                    let sep = if ai + 1 < n { "," } else { "" };
                    section.push(format!(
                        "\u{0}{i}\u{0}{key}\u{0}{}: {value}{sep}",
                        Json::String(key.clone())
                    ));
                }
                section.push(format!("\u{0}{i}\u{0}\u{0}}}{comma}"));
            }
            if block != 2 {
                section.push(if ti + 1 < ntypes { "}," } else { "}" }.to_string());
            }
        }
        section.push(if block == 2 { "]}" } else { "}" }.to_string());
        sections.push(section.join("\n"));
    }
    let body = sections.join(",\n");
    for extra_line in extra.lines() {
        lines.push(extra_line.to_string());
    }
    for line in body.lines() {
        if let Some(rest) = line.strip_prefix('\u{0}') {
            let mut parts = rest.splitn(3, '\u{0}');
            let index: usize = parts.next().and_then(|i| i.parse().ok()).expect("entry index");
            let attribute = parts.next().expect("attribute marker");
            let text = parts.next().expect("text");
            let number = lines.len() + 1;
            at.entry_of_line.insert(number, index);
            if !attribute.is_empty() {
                at.attribute.insert((index, attribute.to_string()), number);
            }
            lines.push(text.to_string());
        } else {
            lines.push(line.to_string());
        }
    }
    lines.push("}".into());
    (lines.join("\n"), at)
}

/// The top-level attribute an attribute path starts with (`template` of
/// `template.spec.requirements[0].operator`).
fn top_level(path: &str) -> &str {
    path.split(['.', '[']).next().unwrap_or(path)
}

/// One diagnostic terraform reported: severity, detail, and the line it points at.
#[derive(Debug)]
struct Reported {
    error: bool,
    summary: String,
    detail: String,
    line: Option<usize>,
}

fn reported(doc: &Json) -> Vec<Reported> {
    doc.get("diagnostics")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|d| Reported {
            error: d.get("severity").and_then(Json::as_str) == Some("error"),
            summary: d
                .get("summary")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string(),
            detail: d
                .get("detail")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string(),
            line: d
                .pointer("/range/start/line")
                .and_then(Json::as_u64)
                .and_then(|l| usize::try_from(l).ok()),
        })
        .collect()
}

/// Signs in terraform's debug log or output that the plugin died or panicked.
fn crash_signs(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            // (a plain "[DEBUG] provider: plugin exited" is terraform stopping the plugin at the end)
            l.contains("panic")
                || (l.contains("plugin")
                    && l.contains("exited")
                    && (l.contains("[error]") || l.contains("error=")))
                || l.contains("failed to respond to the plugin")
                || l.contains("plugin did not respond")
                || l.contains("unexpected eof")
                || l.contains("connection refused")
                || l.contains("transport is closing")
        })
        .map(str::to_string)
        .collect()
}

/// Validates `cases` and `baselines` together in one terraform run. Returns the failures
/// (cases without their diagnostic, baselines with an error, crash signs).
fn run_batch(cases: &[Case], baselines: &[(Kind, Map<String, Json>)], plan: bool) -> Vec<String> {
    let mut entries = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        entries.push(Entry {
            name: format!("case_{i}"),
            kind: &c.kind,
            body: &c.body,
        });
    }
    for (i, (k, b)) in baselines.iter().enumerate() {
        entries.push(Entry {
            name: format!("valid_{i}"),
            kind: k,
            body: b,
        });
    }
    // Terraform prunes (and never validates) an aliased provider nothing uses: give each one a
    // data source (its own diagnostics are not checked).
    let data_kind = Kind::Data("karpenter_controller_policy".into());
    let users: Vec<(String, Map<String, Json>)> = entries
        .iter()
        .filter(|e| *e.kind == Kind::Provider)
        .map(|e| {
            let mut body = parse_body(CONTROLLER_POLICY);
            body.insert("provider".into(), json!(format!("karpenter.{}", e.name)));
            (format!("uses_{}", e.name), body)
        })
        .collect();
    let checked = entries.len();
    for (name, body) in &users {
        entries.push(Entry {
            name: name.clone(),
            kind: &data_kind,
            body,
        });
    }
    let (text, at) = render(&entries, "");
    let mut work = Workdir::new("");
    work.write("cases.tf.json", &text);
    if plan {
        work.write("variables.tf.json", &variables(cases));
        // The default provider block of the cases sets nothing; without a region the plans of
        // the AWS types fail on "No AWS region" (#26), which is not what a case is about.
        work.env("AWS_REGION", "us-east-1");
    }
    let log = work.path().join("terraform.log");
    work.env("TF_LOG", "debug")
        .env("TF_LOG_PATH", &log.display().to_string());
    let (run, diags) = if plan {
        let run = work.terraform(&["plan", "-json", "-no-color", "-input=false", "-refresh=false"]);
        let docs: Vec<Json> = run
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Json>(l).ok())
            .filter(|d| d.get("type").and_then(Json::as_str) == Some("diagnostic"))
            .filter_map(|d| d.get("diagnostic").cloned())
            .collect();
        let diags = reported(&json!({ "diagnostics": docs }));
        (run, diags)
    } else {
        let run = work.terraform(&["validate", "-json", "-no-color"]);
        let doc: Json = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("validate -json: {e}\n{}", run.output()));
        let diags = reported(&doc);
        (run, diags)
    };
    if diags.is_empty() {
        failures_early(&run);
    }
    let mut failures = Vec::new();
    let by_entry = |i: usize| -> Vec<&Reported> {
        diags
            .iter()
            .filter(|d| d.line.and_then(|l| at.entry_of_line.get(&l)) == Some(&i) && i < checked)
            .collect()
    };
    for (i, c) in cases.iter().enumerate() {
        let mine = by_entry(i);
        // On the line of the attribute the path starts with (#28: not on the resource's
        // header); anywhere in the entry for an attribute the case does not set (Terraform
        // shows where it is missing).
        let line_of = |p: &str| at.attribute.get(&(i, top_level(p).to_string())).copied();
        let hit = mine.iter().any(|d| {
            d.error
                && c.expected.iter().any(|p| {
                    d.detail.starts_with(&format!("{p}: ")) && line_of(p).is_none_or(|l| d.line == Some(l))
                })
        });
        if !hit {
            failures.push(format!(
                "case_{i} {} {} [{:?}] {} expected an error at {:?} on line {:?}; got {:?}",
                c.kind.label(),
                c.attribute,
                c.category,
                c.shown,
                c.expected,
                c.expected.iter().map(|p| line_of(p)).collect::<Vec<_>>(),
                mine.iter()
                    .map(|d| format!("line {:?}: {}: {}", d.line, d.summary, d.detail))
                    .collect::<Vec<_>>()
            ));
        }
    }
    for (j, (k, _)) in baselines.iter().enumerate() {
        let mine = by_entry(cases.len() + j);
        if mine.iter().any(|d| d.error) {
            failures.push(format!(
                "baseline valid_{j} ({}) has errors: {:?}",
                k.label(),
                mine.iter()
                    .map(|d| format!("{}: {}", d.summary, d.detail))
                    .collect::<Vec<_>>()
            ));
        }
    }
    let unmatched: Vec<_> = diags.iter().filter(|d| d.error && d.line.is_none()).collect();
    if !unmatched.is_empty() {
        failures.push(format!("errors without a line: {unmatched:?}"));
    }
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    for sign in crash_signs(&run.stderr)
        .into_iter()
        .chain(crash_signs(&log_text))
        .chain(diags.iter().flat_map(|d| crash_signs(&d.detail)))
    {
        failures.push(format!("crash sign: {sign}"));
    }
    let started = log_text.matches("plugin started").count();
    if started == 0 {
        failures.push("the debug log shows no plugin start".into());
    }
    failures
}

#[track_caller]
fn failures_early(run: &acceptance_tests::Run) {
    panic!("terraform reported no diagnostics at all:\n{}", run.output());
}

/// `variable "case_N" { default = <bad value> }` for each generated case.
fn variables(cases: &[Case]) -> String {
    let vars: Map<String, Json> = cases
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            c.placed
                .as_ref()
                .map(|(_, v)| (format!("case_{i}"), json!({ "default": v })))
        })
        .collect();
    json!({ "variable": vars }).to_string()
}

/// The cases with their bad value replaced by a reference to a variable holding it: unknown
/// to `terraform validate`, known at plan.
fn through_variables(cases: &[Case]) -> Vec<Case> {
    cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut c = c.clone();
            if let Some((steps, _)) = &c.placed {
                set_at(&mut c.body, steps, json!(format!("${{var.case_{i}}}")));
            }
            c
        })
        .collect()
}

fn all_baselines() -> Vec<(Kind, Map<String, Json>)> {
    baselines()
        .into_iter()
        .flat_map(|(k, texts)| texts.into_iter().map(move |t| (k.clone(), parse_body(t))))
        .collect()
}

fn print_table(cases: &[Case]) {
    for (i, c) in cases.iter().enumerate() {
        let category = format!("{:?}", c.category);
        println!(
            "case_{i:<4} {:<32} {:<60} {category:<13} {}",
            c.kind.label(),
            c.attribute,
            c.shown
        );
    }
}

#[test]
fn every_bad_input_is_an_error_on_its_attribute_and_the_plugin_keeps_serving() {
    let schemas = schemas();
    let (mut cases, unplaced) = generated_cases(&schemas);
    let generated = cases.len();
    cases.extend(contradiction_cases());
    if std::env::var_os("BAD_INPUT_LIST").is_some() {
        print_table(&cases);
    }
    let mut per_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_category: BTreeMap<String, usize> = BTreeMap::new();
    for c in &cases {
        *per_kind.entry(c.kind.label()).or_default() += 1;
        *per_category.entry(format!("{:?}", c.category)).or_default() += 1;
    }
    println!(
        "bad-input matrix: {} cases ({generated} generated from the schemas, {} contradictions)\nby type: {per_kind:?}\nby category: {per_category:?}",
        cases.len(),
        cases.len() - generated
    );
    assert!(
        unplaced.is_empty(),
        "attributes no baseline reaches: {unplaced:#?}"
    );
    for kind in schemas.keys() {
        assert!(
            per_kind.contains_key(&kind.label()),
            "no case for {}",
            kind.label()
        );
    }
    assert!(cases.len() >= 150, "only {} cases", cases.len());
    // Terraform's JSON diagnostics slow down badly with thousands of errors in one file, so
    // the cases go in chunks (a fresh plugin process per run). The first run holds every
    // baseline too, which must validate clean beside the bad input; each later run one small
    // baseline at its end, which shows the plugin still served after that run's bad input
    // (every baseline in every run proved the same thing again, for half the CPU of the test).
    let all = all_baselines();
    let sentinel: Vec<(Kind, Map<String, Json>)> = all
        .iter()
        .filter(|(k, _)| *k == Kind::Data("karpenter_controller_policy".into()))
        .cloned()
        .collect();
    assert_eq!(sentinel.len(), 1, "one controller-policy baseline");
    let mut failures = Vec::new();
    let mut offset = 0;
    for (n, chunk) in cases.chunks(CHUNK).enumerate() {
        let baselines = if n == 0 { &all } else { &sentinel };
        failures.extend(
            run_batch(chunk, baselines, false)
                .into_iter()
                .map(|f| format!("(chunk from case {offset}) {f}")),
        );
        offset += chunk.len();
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases (or checks) failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The same checks at plan time: one generated case per type and category, its bad value
/// coming from a variable (unknown when terraform validates, known when it plans).
#[test]
fn bad_values_from_variables_are_errors_at_plan() {
    let schemas = schemas();
    let (cases, _) = generated_cases(&schemas);
    let mut seen = BTreeSet::new();
    let picked: Vec<Case> = cases
        .into_iter()
        .filter(|c| c.kind != Kind::Provider && seen.insert((c.kind.clone(), c.category)))
        .collect();
    let picked = through_variables(&picked);
    println!("plan batch: {} cases through variables", picked.len());
    assert!(picked.len() >= 20, "only {} plan cases", picked.len());
    let baselines: Vec<_> = all_baselines()
        .into_iter()
        .filter(|(k, _)| *k != Kind::Provider)
        .filter(|(k, _)| !matches!(k, Kind::Data(t) if READS_THE_CLUSTER.contains(&t.as_str())))
        .collect();
    let failures = run_batch(&picked, &baselines, true);
    assert!(
        failures.is_empty(),
        "{} of {} plan cases (or checks) failed:\n{}",
        failures.len(),
        picked.len(),
        failures.join("\n")
    );
}
