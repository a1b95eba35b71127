//! Figure 8 (issue 39): `data "karpenter_instance_types"` offline. A `terraform plan` reads
//! three of them (every type; the GPU types; one family) with the provider's debug log on, and
//! the provider's own "data source read" line gives each read's time from decoding the request
//! to encoding the answer (microseconds). The plugin runs under GNU time (as in figure 5), so
//! the same plans give its peak RSS while it holds the largest answer.

use std::path::Path;

use acceptance_tests::Workdir;

use crate::error::BenchError;
use crate::provider::ProviderDir;
use crate::stats::Samples;

/// The data sources read, and what each selects.
pub const READS: &[(&str, &str, &str)] = &[
    ("all", "every instance type (1,363)", "[]"),
    (
        "gpu",
        "the GPU types (70)",
        r#"[{ key = "karpenter.k8s.aws/instance-gpu-count", operator = "Exists" }]"#,
    ),
    (
        "family",
        "one family (9)",
        r#"[{ key = "karpenter.k8s.aws/instance-family", operator = "In", values = ["m5"] }]"#,
    ),
];

/// Milliseconds per read (by the keys of [`READS`]) and the plugin's peak RSS (kB).
#[derive(Debug, Clone, Default)]
pub struct InstanceTypeFigures {
    pub read_ms: Vec<(String, Samples)>,
    pub peak_kb: Samples,
}

fn config() -> String {
    let mut out = String::from("provider \"karpenter\" {}\n");
    for (name, _, requirements) in READS {
        out.push_str(&format!(
            "data \"karpenter_instance_types\" \"{name}\" {{\n  requirements = {requirements}\n}}\n\
             output \"{name}\" {{ value = data.karpenter_instance_types.{name}.match_count }}\n"
        ));
    }
    out
}

/// The micros of every "data source read" line of `karpenter_instance_types` in `log`, in
/// order.
fn read_micros(log: &str) -> Vec<u64> {
    log.lines()
        .filter(|l| l.contains("data source read") && l.contains("karpenter_instance_types"))
        .filter_map(|l| {
            let at = l.find("micros=")? + "micros=".len();
            l[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .ok()
        })
        .collect()
}

/// One data source alone: the timing line names the type, not the block, so each read is timed
/// in a plan of its own.
fn one_config(name: &str, requirements: &str) -> String {
    format!(
        "provider \"karpenter\" {{}}\ndata \"karpenter_instance_types\" \"{name}\" {{\n  requirements = {requirements}\n}}\n\
         output \"{name}\" {{ value = data.karpenter_instance_types.{name}.match_count }}\n"
    )
}

/// Runs figure 8; `rss_wrapper` makes a provider directory that records peak RSS to a file.
pub fn measure(
    reps: usize,
    p: &ProviderDir,
    rss_wrapper: &dyn Fn(&Path) -> Result<tempfile::TempDir, BenchError>,
) -> Result<InstanceTypeFigures, BenchError> {
    let mut figures = InstanceTypeFigures::default();
    for (name, _, requirements) in READS {
        let mut samples = Samples::new();
        let mut work = Workdir::with_provider_dir(&one_config(name, requirements), &p.dir, &[]);
        work.env("TF_LOG_PROVIDER", "debug");
        // One untimed warm-up (terraform init's caches, the page cache of the binary).
        work.terraform(&["plan", "-no-color", "-input=false"]);
        for _ in 0..reps {
            let run = work.terraform(&["plan", "-no-color", "-input=false"]);
            if !run.success {
                return Err(BenchError::Terraform {
                    what: format!("plan of data source {name}"),
                    output: run.output(),
                });
            }
            let micros = read_micros(&run.stderr);
            let Some(us) = micros.first() else {
                return Err(BenchError::Measure(format!(
                    "no \"data source read\" line for {name} in the provider's log"
                )));
            };
            samples.push(*us as f64 / 1000.0);
        }
        figures.read_ms.push((name.to_string(), samples));
    }
    for _ in 0..reps.min(3) {
        let out_dir = tempfile::tempdir().map_err(BenchError::io("temp dir"))?;
        let out = out_dir.path().join("rss.txt");
        let wrapper = rss_wrapper(&out)?;
        let work = Workdir::with_provider_dir(&config(), wrapper.path(), &[]);
        let run = work.terraform(&["plan", "-no-color", "-input=false"]);
        if !run.success {
            return Err(BenchError::Terraform {
                what: "plan of the instance-type data sources (RSS)".into(),
                output: run.output(),
            });
        }
        let text = std::fs::read_to_string(&out).map_err(BenchError::io("reading the RSS record"))?;
        let peak = text.lines().filter_map(|l| l.trim().parse::<u64>().ok()).max();
        match peak {
            Some(kb) => figures.peak_kb.push(kb as f64),
            None => {
                return Err(BenchError::Measure(format!(
                    "no RSS recorded by GNU time:\n{text}"
                )));
            }
        }
    }
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::read_micros;

    #[test]
    fn reads_the_providers_timing_line() {
        let log = "2026-11-26T06:00:00.000Z [DEBUG] provider.terraform-provider-karpenter: data source read: \
                   @module=karpenter data_source=karpenter_instance_types micros=1834 timestamp=…\n\
                   2026-11-26T06:00:00.000Z [DEBUG] provider.terraform-provider-karpenter: data source read: \
                   data_source=karpenter_node_claims micros=99";
        assert_eq!(read_micros(log), vec![1834]);
    }
}
