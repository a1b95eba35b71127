//! The Kubernetes-side figures (1–5) and the orchestration of the whole run: plan and apply
//! of N node pools against `terraform_data`, the CRD gate's reaction, API requests per node
//! pool, and the plugin's peak RSS; then the handshake (6), the interruption queue (7), the
//! instance-type data source (8), the CEL kubelet expressions (9), the drift preview (10) and
//! where a plan's time goes, beside yardstick providers (11).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use acceptance_tests::Workdir;
use acceptance_tests::kube::{Cluster, Config, ControllerConfig, LoggedRequest, TestServer};

use crate::error::BenchError;
use crate::options::Options;
use crate::provider::ProviderDir;
use crate::stats::Samples;
use crate::{configs, handshake, queue};

/// One size's timings, in seconds: the provider's runs and the baseline's, interleaved.
#[derive(Debug, Clone)]
pub struct Pair {
    pub n: usize,
    pub provider: Samples,
    pub baseline: Samples,
}

impl Pair {
    fn new(n: usize) -> Self {
        Pair {
            n,
            provider: Samples::new(),
            baseline: Samples::new(),
        }
    }

    /// Median over median.
    pub fn ratio(&self) -> f64 {
        self.provider.median_ratio(&self.baseline).unwrap_or(0.0)
    }
}

/// API requests answered by the test server during one apply and one refresh of N pools.
#[derive(Debug, Clone, Default)]
pub struct Requests {
    pub n: usize,
    /// Objects written: N pools and the class. The figures divide every request (the CRD
    /// gate's and discovery's included) by this.
    pub objects: usize,
    pub apply_per_pool: Samples,
    /// The refresh plan's requests for one object each (all but its lists), per object.
    pub refresh_per_pool: Samples,
    /// The refresh plan's lists (the drift preview's and the health notes' NodeClaims,
    /// Karpenter's Lease), and the most of one kind.
    pub refresh_lists: Samples,
    pub refresh_lists_of_one_kind: Samples,
    /// From the last repetition: "METHOD what" → count.
    pub apply_breakdown: BTreeMap<String, usize>,
    pub refresh_breakdown: BTreeMap<String, usize>,
}

/// Peak resident set sizes (kB) of the plugin processes of one apply.
#[derive(Debug, Clone, Default)]
pub struct Rss {
    pub n: usize,
    /// The largest peak among the plugin processes of the N = max apply, per repetition.
    pub peak_kb: Samples,
    /// The same for N = 1, for comparison.
    pub peak_kb_n1: Samples,
    /// How many plugin processes terraform started for one apply.
    pub processes: usize,
}

/// Everything one run measured.
#[derive(Debug, Clone, Default)]
pub struct Results {
    pub plan: Vec<Pair>,
    /// The same provider plans beside the user-shape baseline (YAML text, no schema).
    pub plan_user_shape: Vec<Pair>,
    pub plan_refresh: Vec<Pair>,
    pub apply: Vec<Pair>,
    /// Milliseconds from the CRD becoming Established to the first node-pool write.
    pub gate_ms: Samples,
    pub requests: Requests,
    pub rss: Rss,
    pub handshake: handshake::Handshake,
    pub binary_bytes: u64,
    pub queue: queue::QueueFigures,
    pub instance_types: crate::instance_types::InstanceTypeFigures,
    pub kubelet_cel: crate::kubelet_cel::CelFigures,
    pub drift: crate::drift::DriftFigures,
    pub yardsticks: crate::yardsticks::YardstickFigures,
    pub load_before: String,
    pub load_after: String,
    pub terraform_version: String,
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Runs every figure.
pub fn run_all(o: &Options, p: &ProviderDir) -> Result<Results, BenchError> {
    let mut r = Results {
        load_before: load_average(),
        terraform_version: terraform_version(),
        ..Results::default()
    };
    r.binary_bytes = std::fs::metadata(&p.binary)
        .map_err(BenchError::io("provider binary size"))?
        .len();
    if o.wants(6) {
        eprintln!("bench: 6. plugin start to handshake");
        r.handshake = handshake::measure(&p.binary, o.handshakes)?;
    }
    if o.wants(1) {
        eprintln!("bench: 1. plan");
        (r.plan, r.plan_user_shape) = plans(o, p)?;
    }
    if o.wants(2) || o.wants(4) {
        eprintln!("bench: 2./4. apply, refresh and API requests");
        let (apply, refresh, requests) = applies(o, p)?;
        r.apply = apply;
        r.plan_refresh = refresh;
        r.requests = requests;
    }
    if o.wants(5) {
        eprintln!("bench: 5. peak RSS");
        r.rss = rss(o, p)?;
    }
    if o.wants(3) {
        eprintln!("bench: 3. CRD gate reaction");
        r.gate_ms = gate(o, p)?;
    }
    if o.wants(7) {
        eprintln!("bench: 7. interruption queue against moto");
        r.queue = queue::measure(o, p)?;
    }
    if o.wants(8) {
        eprintln!("bench: 8. instance-type data source");
        r.instance_types = crate::instance_types::measure(o.reps, p, &|out| rss_wrapper(&p.binary, out))?;
    }
    if o.wants(9) {
        eprintln!("bench: 9. CEL kubelet expressions over the offline table");
        r.kubelet_cel = crate::kubelet_cel::measure(o.reps)?;
    }
    if o.wants(10) {
        eprintln!(
            "bench: 10. plan of a drifting change with {} NodeClaims",
            crate::drift::CLAIMS
        );
        r.drift = crate::drift::measure(o.reps, p)?;
    }
    if o.wants(11) {
        r.yardsticks = crate::yardsticks::measure_all(o, p)?;
    }
    r.load_after = load_average();
    Ok(r)
}

fn terraform_version() -> String {
    std::process::Command::new(acceptance_tests::terraform_binary())
        .args(["version"])
        .env("CHECKPOINT_DISABLE", "1")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// Runs `terraform args` in `work` and returns the wall time in seconds.
fn timed(work: &Workdir, args: &[&str], what: &str) -> Result<f64, BenchError> {
    let start = Instant::now();
    let run = work.terraform(args);
    let secs = start.elapsed().as_secs_f64();
    if !run.success {
        return Err(BenchError::Terraform {
            what: what.to_string(),
            output: run.output(),
        });
    }
    Ok(secs)
}

const PLAN: &[&str] = &["plan", "-no-color", "-input=false"];
const APPLY: &[&str] = &["apply", "-no-color", "-input=false", "-auto-approve"];

fn provider_work(p: &ProviderDir, config: &str) -> Workdir {
    Workdir::with_provider_dir(config, &p.dir, &[])
}

/// Figure 1: plan of a fresh configuration (nothing in state), provider and both baselines
/// (the same objects as `terraform_data` input; the user's YAML text) interleaved, the order
/// rotating by repetition. One untimed warm-up run each. Returns the pairs against the object
/// baseline and against the user-shape baseline (the provider's samples are the same).
fn plans(o: &Options, p: &ProviderDir) -> Result<(Vec<Pair>, Vec<Pair>), BenchError> {
    // Plan never connects; the server only makes the provider block realistic.
    let cluster = Cluster::with_v1_crds();
    let mut works = Vec::new();
    for &n in &o.sizes {
        let karp = provider_work(p, &configs::karpenter(&cluster.provider_block(), n));
        let base = provider_work(p, &configs::baseline(n));
        let yaml = provider_work(p, &configs::baseline_yaml(n));
        timed(&karp, PLAN, "plan (warm-up)")?;
        timed(&base, PLAN, "plan of the baseline (warm-up)")?;
        timed(&yaml, PLAN, "plan of the user-shape baseline (warm-up)")?;
        works.push((n, [karp, base, yaml]));
    }
    let mut out: Vec<Pair> = o.sizes.iter().map(|&n| Pair::new(n)).collect();
    let mut user: Vec<Pair> = o.sizes.iter().map(|&n| Pair::new(n)).collect();
    for rep in 0..o.reps {
        for (i, (n, w)) in works.iter().enumerate() {
            for turn in 0..3 {
                match (turn + rep) % 3 {
                    0 => {
                        let t = timed(&w[0], PLAN, &format!("plan N={n}"))?;
                        out[i].provider.push(t);
                        user[i].provider.push(t);
                    }
                    1 => out[i]
                        .baseline
                        .push(timed(&w[1], PLAN, &format!("plan of the baseline N={n}"))?),
                    _ => user[i].baseline.push(timed(
                        &w[2],
                        PLAN,
                        &format!("plan of the user-shape baseline N={n}"),
                    )?),
                }
            }
        }
    }
    Ok((out, user))
}

/// Short name of a request for the breakdown: method, resource (or "discovery"), watch.
fn classify(r: &LoggedRequest) -> String {
    let segs: Vec<&str> = r.path.split('/').filter(|s| !s.is_empty()).collect();
    let what = if segs.contains(&"customresourcedefinitions") {
        "customresourcedefinitions".to_string()
    } else if segs.first() == Some(&"apis") && segs.len() >= 4 {
        let mut s = segs[3].to_string();
        if segs.len() >= 6 {
            s.push('/');
            s.push_str(segs[5]);
        }
        s
    } else {
        format!("discovery {}", r.path)
    };
    let watch = if r.is_watch() { " (watch)" } else { "" };
    format!("{} {what}{watch}", r.method)
}

/// Whether a request lists a kind (a collection path, not one object's).
fn is_list(r: &LoggedRequest) -> bool {
    let segs: Vec<&str> = r.path.split('/').filter(|s| !s.is_empty()).collect();
    r.method == "GET"
        && !r.is_watch()
        && match segs.first() {
            Some(&"apis") => segs.len() == 4 || (segs.len() == 6 && segs[3] == "namespaces"),
            Some(&"api") => segs.len() == 3 || (segs.len() == 5 && segs[2] == "namespaces"),
            _ => false,
        }
}

fn breakdown(log: &[LoggedRequest]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in log {
        *m.entry(classify(r)).or_insert(0) += 1;
    }
    m
}

/// Figures 2 and 4 (and the refresh plan): per repetition a fresh server and fresh states;
/// apply then plan (a refresh with nothing to change), provider and baseline interleaved.
/// The server's request log gives the requests of the largest N's apply and refresh.
#[allow(clippy::type_complexity)]
fn applies(o: &Options, p: &ProviderDir) -> Result<(Vec<Pair>, Vec<Pair>, Requests), BenchError> {
    let mut apply: Vec<Pair> = o.sizes.iter().map(|&n| Pair::new(n)).collect();
    let mut refresh: Vec<Pair> = o.sizes.iter().map(|&n| Pair::new(n)).collect();
    let max_n = o.sizes.iter().copied().max().unwrap_or(1);
    let mut req = Requests {
        n: max_n,
        objects: max_n + 1,
        ..Requests::default()
    };
    for rep in 0..o.reps {
        for (i, &n) in o.sizes.iter().enumerate() {
            let provider_first = rep % 2 == 0;
            for turn in 0..2 {
                if (turn == 0) == provider_first {
                    let cluster = Cluster::with_v1_crds();
                    let work = provider_work(p, &configs::karpenter(&cluster.provider_block(), n));
                    cluster.server.clear_request_log();
                    apply[i]
                        .provider
                        .push(timed(&work, APPLY, &format!("apply N={n}"))?);
                    let log = cluster.server.request_log();
                    cluster.server.clear_request_log();
                    refresh[i]
                        .provider
                        .push(timed(&work, PLAN, &format!("plan after apply N={n}"))?);
                    let log_refresh = cluster.server.request_log();
                    if n == max_n {
                        req.apply_per_pool.push(log.len() as f64 / (n + 1) as f64);
                        let lists: Vec<&LoggedRequest> = log_refresh.iter().filter(|r| is_list(r)).collect();
                        req.refresh_per_pool
                            .push((log_refresh.len() - lists.len()) as f64 / (n + 1) as f64);
                        req.refresh_lists.push(lists.len() as f64);
                        let mut per_kind: BTreeMap<String, usize> = BTreeMap::new();
                        for r in &lists {
                            *per_kind.entry(classify(r)).or_insert(0) += 1;
                        }
                        req.refresh_lists_of_one_kind
                            .push(per_kind.values().copied().max().unwrap_or(0) as f64);
                        req.apply_breakdown = breakdown(&log);
                        req.refresh_breakdown = breakdown(&log_refresh);
                    }
                } else {
                    let work = provider_work(p, &configs::baseline(n));
                    apply[i]
                        .baseline
                        .push(timed(&work, APPLY, &format!("apply of the baseline N={n}"))?);
                    refresh[i].baseline.push(timed(
                        &work,
                        PLAN,
                        &format!("plan after apply of the baseline N={n}"),
                    )?);
                }
            }
        }
    }
    Ok((apply, refresh, req))
}

/// A provider directory whose `terraform-provider-karpenter` runs the real binary under GNU
/// time, which appends each process's peak RSS (kB, from wait4's rusage) to `out`.
fn rss_wrapper(binary: &Path, out: &Path) -> Result<tempfile::TempDir, BenchError> {
    use std::os::unix::fs::PermissionsExt;
    let time = Path::new("/usr/bin/time");
    if !time.is_file() {
        return Err(BenchError::Measure(
            "peak RSS needs GNU time at /usr/bin/time (apt-get install time)".into(),
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix("bench-rss-")
        .tempdir()
        .map_err(BenchError::io("temp dir"))?;
    let script = dir.path().join("terraform-provider-karpenter");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec /usr/bin/time -a -o '{}' -f '%M' '{}' \"$@\"\n",
            out.display(),
            binary.display()
        ),
    )
    .map_err(BenchError::io("writing the RSS wrapper"))?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
        .map_err(BenchError::io("chmod the RSS wrapper"))?;
    Ok(dir)
}

/// Peak RSS (kB) of each plugin process of one apply of `n` pools.
fn one_rss_apply(p: &ProviderDir, n: usize) -> Result<Vec<u64>, BenchError> {
    let out_dir = tempfile::tempdir().map_err(BenchError::io("temp dir"))?;
    let out = out_dir.path().join("rss.txt");
    let wrapper = rss_wrapper(&p.binary, &out)?;
    let cluster = Cluster::with_v1_crds();
    let work = Workdir::with_provider_dir(
        &configs::karpenter(&cluster.provider_block(), n),
        wrapper.path(),
        &[],
    );
    timed(&work, APPLY, &format!("apply N={n} (RSS)"))?;
    let text = std::fs::read_to_string(&out).map_err(BenchError::io("reading the RSS record"))?;
    let kb: Vec<u64> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    if kb.is_empty() {
        return Err(BenchError::Measure(format!(
            "no RSS recorded by GNU time:\n{text}"
        )));
    }
    Ok(kb)
}

/// Figure 5: peak RSS of the plugin during the N = max apply (and N = 1 beside it).
fn rss(o: &Options, p: &ProviderDir) -> Result<Rss, BenchError> {
    let max_n = o.sizes.iter().copied().max().unwrap_or(1);
    let mut r = Rss {
        n: max_n,
        ..Rss::default()
    };
    for _ in 0..o.reps.min(3) {
        let big = one_rss_apply(p, max_n)?;
        r.processes = big.len();
        r.peak_kb.push(big.iter().copied().max().unwrap_or(0) as f64);
        let small = one_rss_apply(p, 1)?;
        r.peak_kb_n1.push(small.iter().copied().max().unwrap_or(0) as f64);
    }
    Ok(r)
}

/// Figure 3: the apply of one node pool waits at the CRD gate on a cluster without the CRDs;
/// once the provider is watching, the CRDs are installed with an establish delay, so the
/// server marks them Established at a moment it records; the reaction is the time from that
/// moment to the first write of the NodePool in the server's request log (microseconds).
fn gate(o: &Options, p: &ProviderDir) -> Result<Samples, BenchError> {
    let mut out = Samples::new();
    for _ in 0..o.reps {
        let cluster = Cluster::start(Config {
            establish_delay: Duration::from_millis(300),
            controller: ControllerConfig::karpenter(),
            ..Config::default()
        });
        let work = provider_work(p, &configs::karpenter_pools_only(&cluster.provider_block(), 1));
        let run = std::thread::scope(|s| {
            let apply = s.spawn(|| work.terraform(APPLY));
            let deadline = Instant::now() + Duration::from_secs(60);
            while cluster.requests(None, "customresourcedefinitions").is_empty() && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            // Let the provider settle into its wait before the CRDs arrive.
            std::thread::sleep(Duration::from_millis(300));
            let installed = cluster
                .server
                .install_crds_from_dir(TestServer::shared_crds_dir("v1"))
                .map_err(|e| BenchError::Measure(format!("installing the CRDs: {e}")));
            let run = apply.join();
            installed.map(|_| run)
        })?;
        let run = run.map_err(|_| BenchError::Measure("the apply thread panicked".into()))?;
        if !run.success {
            return Err(BenchError::Terraform {
                what: "apply waiting at the CRD gate".into(),
                output: run.output(),
            });
        }
        let established = cluster
            .server
            .established_at_unix_us("nodepools.karpenter.sh")
            .ok_or_else(|| BenchError::Measure("the NodePool CRD was never Established".into()))?;
        let first_write = cluster
            .server
            .request_log()
            .iter()
            .filter(|r| {
                matches!(r.method.as_str(), "PATCH" | "POST" | "PUT")
                    && (200..300).contains(&r.status)
                    && r.path.contains("/nodepools")
            })
            .map(|r| r.at_unix_us)
            .min()
            .ok_or_else(|| BenchError::Measure("no NodePool write in the request log".into()))?;
        if first_write < established {
            return Err(BenchError::Measure(
                "a NodePool was written before its CRD was Established".into(),
            ));
        }
        out.push((first_write - established) as f64 / 1000.0);
    }
    Ok(out)
}
