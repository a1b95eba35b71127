//! Figure 11 (issue 53): where a plan's time goes. `terraform plan` of N node pools in four
//! forms, interleaved: N `terraform_data` holding the same objects (no provider), N
//! `yardstick_tiny` (a provider built on this project's framework, one attribute), N
//! `yardstick_schema_only` (the same framework, `karpenter_node_pool`'s schema, nothing else
//! done) and N `karpenter_node_pool` (the real provider, against the test server). The
//! yardsticks are `src/bin/yardstick.rs`. Each plan is timed twice: once plainly (wall, and
//! the CPU of `terraform` with everything it waited for, from `getrusage(RUSAGE_CHILDREN)`), once
//! with every plugin process under `src/bin/cpu_wrapper.rs`, which records each one's own CPU:
//! Terraform core's share is the first CPU minus the plugins'. Then, at the largest N, the
//! schema-shape experiments: the same plan with `yardstick_schema_only` reshaped
//! (`YARDSTICK_SHAPE`), each shape's configuration written by the yardstick itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use acceptance_tests::Workdir;
use acceptance_tests::kube::Cluster;

use crate::configs;
use crate::error::BenchError;
use crate::options::Options;
use crate::provider::ProviderDir;
use crate::stats::Samples;

/// The yardstick's provider address (its `dev_overrides` entry) and its source in configs.
const YARDSTICK_ADDRESS: &str = "registry.terraform.io/karpenter/yardstick";
const YARDSTICK_SOURCE: &str = "karpenter/yardstick";
const PLAN: &[&str] = &["plan", "-no-color", "-input=false"];

/// The forms of figure 11, in table order: key and what it is.
pub const FORMS: &[(&str, &str)] = &[
    ("data", "`terraform_data` (no provider)"),
    ("tiny", "`yardstick_tiny` (framework, one attribute)"),
    (
        "schema_only",
        "`yardstick_schema_only` (framework, the pool's schema)",
    ),
    ("karpenter", "`karpenter_node_pool` (the provider)"),
];

/// The shapes of the experiment (the yardstick's `SHAPES`, with `tiny` and the baseline).
pub const SHAPES: &[&str] = &[
    "schema_only",
    "no_docs",
    "no_status",
    "no_computed",
    "flat",
    "blocks",
];

/// The measurements of one form (or shape) at one N, one sample per repetition, in seconds.
#[derive(Debug, Clone, Default)]
pub struct Cell {
    pub wall: Samples,
    /// `terraform` and everything it waited for (plugins included).
    pub cpu: Samples,
    /// The plugin processes' own CPU (wrapped runs).
    pub plugins_cpu: Samples,
    /// Plugin processes per plan (last wrapped run).
    pub plugins: usize,
}

impl Cell {
    /// Terraform core's own CPU: the whole CPU less the plugins' (medians).
    pub fn terraform_cpu(&self) -> f64 {
        (self.cpu.median() - self.plugins_cpu.median()).max(0.0)
    }

    /// Terraform core's own CPU per repetition (the plain run's less the wrapped run's plugins).
    fn terraform_cpu_samples(&self) -> Samples {
        self.cpu
            .paired(&self.plugins_cpu, |all, plugins| (all - plugins).max(0.0))
    }

    /// Terraform core's CPU over `base`'s, round by round (both measured in the same round):
    /// `median [first–third quartile]`. Shapes differ by less than the spread of one cell, so a
    /// ratio of medians would read noise as a finding.
    fn paired_terraform_ratio(&self, base: &Cell) -> String {
        let r = self
            .terraform_cpu_samples()
            .paired(
                &base.terraform_cpu_samples(),
                |a, b| if b > 0.0 { a / b } else { 0.0 },
            );
        let (q1, q3) = r.quartiles();
        format!("{:.2}× [{q1:.2}–{q3:.2}]", r.median())
    }
}

/// Shape statistics the yardstick prints (`--stats`).
#[derive(Debug, Clone, Default)]
pub struct ShapeStats(pub BTreeMap<String, u64>);

/// What figure 11 measured.
#[derive(Debug, Clone, Default)]
pub struct YardstickFigures {
    /// (form, N) → cell.
    pub forms: BTreeMap<(String, usize), Cell>,
    /// The N of the shape experiment.
    pub shape_n: usize,
    /// shape → cell at `shape_n` (`data` and `tiny` beside them).
    pub shapes: BTreeMap<String, Cell>,
    pub shape_stats: BTreeMap<String, ShapeStats>,
}

/// The two binaries of figure 11.
pub struct Binaries {
    pub yardstick: PathBuf,
    pub cpu_wrapper: PathBuf,
}

/// Builds the yardstick and the wrapper (`--release` unless quick), unless given.
pub fn binaries(o: &Options) -> Result<Binaries, BenchError> {
    let absolute = |p: &Path| {
        p.canonicalize()
            .map_err(BenchError::io(format!("figure 11 binary {}", p.display())))
    };
    if let (Some(yardstick), Some(cpu_wrapper)) = (&o.yardstick, &o.cpu_wrapper) {
        return Ok(Binaries {
            yardstick: absolute(yardstick)?,
            cpu_wrapper: absolute(cpu_wrapper)?,
        });
    }
    let root = acceptance_tests::workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root).args([
        "build",
        "--quiet",
        "-p",
        "bench",
        "--bin",
        "terraform-provider-yardstick",
        "--bin",
        "cpu_wrapper",
    ]);
    if !o.quick {
        cmd.arg("--release");
    }
    eprintln!("bench: building the yardstick provider and the CPU wrapper");
    let out = cmd.output().map_err(BenchError::io("running cargo"))?;
    if !out.status.success() {
        return Err(BenchError::Build(
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join(if o.quick { "debug" } else { "release" });
    Ok(Binaries {
        yardstick: absolute(&dir.join("terraform-provider-yardstick"))?,
        cpu_wrapper: absolute(&dir.join("cpu_wrapper"))?,
    })
}

/// User + system CPU (s) of the children this process has waited for.
fn children_cpu() -> f64 {
    // SAFETY: getrusage only writes into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage that lives for the call.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return 0.0;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(usage.ru_utime) + s(usage.ru_stime)
}

/// A directory holding `terraform-provider-<name>` as a link to `target`.
fn link_dir(name: &str, target: &Path) -> Result<tempfile::TempDir, BenchError> {
    let dir = tempfile::Builder::new()
        .prefix("bench-yardstick-")
        .tempdir()
        .map_err(BenchError::io("temp dir"))?;
    std::os::unix::fs::symlink(target, dir.path().join(format!("terraform-provider-{name}")))
        .map_err(BenchError::io("linking a plugin"))?;
    Ok(dir)
}

/// One form's configuration at N, ready in two working directories: plain, and with its
/// plugin under the CPU wrapper (recording into `record`).
struct Form {
    plain: Workdir,
    wrapped: Option<(Workdir, PathBuf)>,
    /// Keeps the wrapper's record and link directories alive.
    _dirs: Vec<tempfile::TempDir>,
}

/// The plugin directories of one run: the real ones, and the wrapped ones.
struct Plugins<'a> {
    provider: &'a ProviderDir,
    yardstick_dir: PathBuf,
    bins: &'a Binaries,
}

impl Plugins<'_> {
    /// `config` for the plugin `name` (`karpenter` or `yardstick`, none for `terraform_data`),
    /// with extra environment `env` (the yardstick's shape).
    fn form(&self, config: &str, plugin: Option<&str>, env: &[(&str, &str)]) -> Result<Form, BenchError> {
        let overrides = [(YARDSTICK_ADDRESS, self.yardstick_dir.as_path())];
        let mut plain = Workdir::with_provider_dir(config, &self.provider.dir, &overrides);
        for (k, v) in env {
            plain.env(k, v);
        }
        let Some(name) = plugin else {
            return Ok(Form {
                plain,
                wrapped: None,
                _dirs: Vec::new(),
            });
        };
        let record_dir = tempfile::tempdir().map_err(BenchError::io("temp dir"))?;
        let record = record_dir.path().join("cpu.txt");
        let link = link_dir(name, &self.bins.cpu_wrapper)?;
        let target = if name == "karpenter" {
            self.provider.binary.clone()
        } else {
            self.bins.yardstick.clone()
        };
        let mut wrapped = if name == "karpenter" {
            Workdir::with_provider_dir(config, link.path(), &overrides)
        } else {
            Workdir::with_provider_dir(config, &self.provider.dir, &[(YARDSTICK_ADDRESS, link.path())])
        };
        wrapped
            .env("BENCH_CPU_EXEC", &target.display().to_string())
            .env("BENCH_CPU_OUT", &record.display().to_string());
        for (k, v) in env {
            wrapped.env(k, v);
        }
        Ok(Form {
            plain,
            wrapped: Some((wrapped, record)),
            _dirs: vec![record_dir, link],
        })
    }
}

/// Runs a plan in `work`: (wall s, CPU s of terraform and everything it waited for).
fn plan(work: &Workdir, what: &str) -> Result<(f64, f64), BenchError> {
    let cpu_before = children_cpu();
    let start = Instant::now();
    let run = work.terraform(PLAN);
    let wall = start.elapsed().as_secs_f64();
    let cpu = children_cpu() - cpu_before;
    if !run.success {
        return Err(BenchError::Terraform {
            what: what.to_string(),
            output: run.output(),
        });
    }
    Ok((wall, cpu))
}

/// One repetition of `form` into `cell`: the plain plan, then the wrapped one.
fn measure(form: &Form, cell: &mut Cell, what: &str) -> Result<(), BenchError> {
    let (wall, cpu) = plan(&form.plain, what)?;
    cell.wall.push(wall);
    cell.cpu.push(cpu);
    match &form.wrapped {
        None => cell.plugins_cpu.push(0.0),
        Some((work, record)) => {
            let _ = std::fs::remove_file(record);
            plan(work, &format!("{what} (CPU wrapper)"))?;
            let text = std::fs::read_to_string(record).map_err(BenchError::io("reading the CPU record"))?;
            let per_process: Vec<f64> = text
                .lines()
                .filter_map(|l| {
                    let mut it = l.split_whitespace().filter_map(|x| x.parse::<f64>().ok());
                    Some((it.next()? + it.next()?) / 1e6)
                })
                .collect();
            cell.plugins = per_process.len();
            cell.plugins_cpu.push(per_process.iter().sum());
        }
    }
    Ok(())
}

/// The yardstick's `--hcl` (or `--stats`) output.
fn yardstick_says(bins: &Binaries, args: &[&str]) -> Result<String, BenchError> {
    let out = Command::new(&bins.yardstick)
        .args(args)
        .output()
        .map_err(BenchError::io("running the yardstick"))?;
    if !out.status.success() {
        return Err(BenchError::Measure(format!(
            "yardstick {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn yardstick_config(bins: &Binaries, shape: &str, n: usize) -> Result<String, BenchError> {
    let resources = yardstick_says(bins, &["--hcl", shape, &n.to_string()])?;
    Ok(format!(
        "terraform {{\n  required_providers {{\n    yardstick = {{\n      source = \"{YARDSTICK_SOURCE}\"\n    }}\n  }}\n}}\n\nprovider \"yardstick\" {{}}\n\n{resources}"
    ))
}

/// Runs `forms` (key → form) `reps` times, one untimed warm-up each, the order rotating.
fn rounds(
    reps: usize,
    forms: &[(String, Form)],
    cells: &mut BTreeMap<String, Cell>,
    label: &str,
) -> Result<(), BenchError> {
    for (key, form) in forms {
        plan(&form.plain, &format!("{label} {key} (warm-up)"))?;
        if let Some((work, _)) = &form.wrapped {
            plan(work, &format!("{label} {key} (warm-up, CPU wrapper)"))?;
        }
    }
    for rep in 0..reps {
        for turn in 0..forms.len() {
            let (key, form) = &forms[(turn + rep) % forms.len()];
            measure(
                form,
                cells.entry(key.clone()).or_default(),
                &format!("{label} {key}"),
            )?;
        }
    }
    Ok(())
}

/// The two floors every comparison stands on, at N: `terraform_data` and `yardstick_tiny`.
fn floors(plugins: &Plugins, bins: &Binaries, n: usize) -> Result<Vec<(String, Form)>, BenchError> {
    Ok(vec![
        (
            "data".to_string(),
            plugins.form(&configs::baseline_pools_only(n), None, &[])?,
        ),
        (
            "tiny".to_string(),
            plugins.form(&yardstick_config(bins, "tiny", n)?, Some("yardstick"), &[])?,
        ),
    ])
}

/// Figure 11.
pub fn measure_all(o: &Options, p: &ProviderDir) -> Result<YardstickFigures, BenchError> {
    let bins = binaries(o)?;
    let yardstick_dir = link_dir("yardstick", &bins.yardstick)?;
    let plugins = Plugins {
        provider: p,
        yardstick_dir: yardstick_dir.path().to_path_buf(),
        bins: &bins,
    };
    // The real provider plans against the test server (plan reads the CRDs it validates with).
    let cluster = Cluster::with_v1_crds();
    let reps = o.reps.max(if o.quick { 1 } else { 15 });
    let mut figures = YardstickFigures::default();
    for &n in &o.sizes {
        eprintln!("bench: 11. plan of {n} pools: terraform_data, the yardsticks, the provider");
        let mut forms = floors(&plugins, &bins, n)?;
        forms.extend([
            (
                "schema_only".to_string(),
                plugins.form(
                    &yardstick_config(&bins, "schema_only", n)?,
                    Some("yardstick"),
                    &[],
                )?,
            ),
            (
                "karpenter".to_string(),
                plugins.form(
                    &configs::karpenter_pools_only(&cluster.provider_block(), n),
                    Some("karpenter"),
                    &[],
                )?,
            ),
        ]);
        let mut cells = BTreeMap::new();
        rounds(reps, &forms, &mut cells, &format!("N={n}"))?;
        for (key, cell) in cells {
            figures.forms.insert((key, n), cell);
        }
    }
    let n = o.sizes.iter().copied().max().unwrap_or(1);
    figures.shape_n = n;
    eprintln!("bench: 11. schema shapes at N = {n}");
    let mut forms = floors(&plugins, &bins, n)?;
    for shape in SHAPES {
        let config = yardstick_config(&bins, shape, n)?;
        forms.push((
            (*shape).to_string(),
            plugins.form(&config, Some("yardstick"), &[("YARDSTICK_SHAPE", shape)])?,
        ));
        let stats = yardstick_says(&bins, &["--stats", shape])?;
        let parsed: BTreeMap<String, u64> = serde_json::from_str(stats.trim())
            .map_err(|e| BenchError::Measure(format!("yardstick --stats {shape}: {e}: {stats}")))?;
        figures
            .shape_stats
            .insert((*shape).to_string(), ShapeStats(parsed));
    }
    rounds(reps, &forms, &mut figures.shapes, &format!("shapes N={n}"))?;
    Ok(figures)
}

fn ms(s: f64) -> String {
    format!("{:.0}", s * 1000.0)
}

fn times(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "—".into(), |r| format!("{r:.2}×"))
}

/// Figure 11's tables: the four forms at each N, then the shapes.
pub fn markdown(y: &YardstickFigures) -> String {
    let mut s = String::from(
        "\n### Where a plan's time goes (figure 11)\n\nMedians; wall and CPU in ms; CPU is user + system; \
         \"terraform\" is the whole CPU less the plugin processes'.\n\n\
         | N | Form | Wall | × data | CPU, all | CPU, terraform | CPU, plugins (processes) | CPU × data |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let sizes: std::collections::BTreeSet<usize> = y.forms.keys().map(|(_, n)| *n).collect();
    for n in sizes {
        let data = y.forms.get(&("data".to_string(), n)).cloned().unwrap_or_default();
        for (key, what) in FORMS {
            let Some(c) = y.forms.get(&((*key).to_string(), n)) else {
                continue;
            };
            s.push_str(&format!(
                "| {n} | {what} | {} | {} | {} | {} | {} ({}) | {} |\n",
                ms(c.wall.median()),
                times(c.wall.median_ratio(&data.wall)),
                ms(c.cpu.median()),
                ms(c.terraform_cpu()),
                ms(c.plugins_cpu.median()),
                c.plugins,
                times(c.cpu.median_ratio(&data.cpu)),
            ));
        }
    }
    if y.shapes.is_empty() {
        return s;
    }
    s.push_str(&format!(
        "\n#### Schema shapes of `yardstick_schema_only`, N = {}\n\n\
         | Shape | Attributes | Nested | Depth | Optional+computed | Computed | Defaults | Description bytes | Wall | CPU, all | CPU, terraform | CPU, terraform × `schema_only`, paired by round: median [quartiles] |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
        y.shape_n
    ));
    let base = y.shapes.get("schema_only").cloned().unwrap_or_default();
    let order = ["data", "tiny"].into_iter().chain(SHAPES.iter().copied());
    for key in order {
        let Some(c) = y.shapes.get(key) else { continue };
        let st = y.shape_stats.get(key).map(|s| &s.0);
        let stat = |k: &str| st.and_then(|m| m.get(k)).map_or("—".to_string(), u64::to_string);
        s.push_str(&format!(
            "| `{key}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            stat("attributes"),
            stat("nested"),
            stat("depth"),
            stat("optional_computed"),
            stat("computed"),
            stat("defaults"),
            stat("description_bytes"),
            ms(c.wall.median()),
            ms(c.cpu.median()),
            ms(c.terraform_cpu()),
            c.paired_terraform_ratio(&base),
        ));
    }
    s
}

/// The samples, for the JSON report.
pub fn json(y: &YardstickFigures) -> serde_json::Value {
    let cell = |c: &Cell| {
        serde_json::json!({
            "wall_s": c.wall.to_json(),
            "cpu_s": c.cpu.to_json(),
            "plugins_cpu_s": c.plugins_cpu.to_json(),
            "plugin_processes": c.plugins,
        })
    };
    serde_json::json!({
        "forms": y.forms.iter().map(|((k, n), c)| serde_json::json!({"form": k, "n": n, "cells": cell(c)})).collect::<Vec<_>>(),
        "shape_n": y.shape_n,
        "shapes": y.shapes.iter().map(|(k, c)| (k.clone(), cell(c))).collect::<serde_json::Map<_, _>>(),
    })
}
