//! Build step of the offline instance-type preview (issue 39): parses Karpenter's generated
//! instance-type reference (`instance-types-v<version>.md`) and its built-in on-demand price
//! table (`zz_generated.pricing_aws.go`) into a compact Rust table in `OUT_DIR`, which
//! `src/instance_types/catalog.rs` includes. Nothing of the files' text is kept but the values:
//! every string is interned once, each instance type is one row of small indexes.
//!
//! The files come from `../shared/karpenter/reference/instance-types/` beside the workspace (or
//! the directory `KARPENTER_INSTANCE_TYPES_DIR` names). Without them the build fails and says
//! where it looked: a provider built without its data would silently check nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The environment variable that overrides where the reference files are read from.
pub const DIR_VARIABLE: &str = "KARPENTER_INSTANCE_TYPES_DIR";
const PRICING_FILE: &str = "zz_generated.pricing_aws.go";
/// The region of the price table we keep (the only one Karpenter ships).
const PRICE_REGION: &str = "us-east-1";
/// Index of "absent" in the generated tables.
const NONE: u16 = u16::MAX;

/// Why the table could not be built.
#[derive(Debug)]
pub struct BuildError(String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}

fn fail(message: impl Into<String>) -> BuildError {
    BuildError(message.into())
}

/// One instance type as the reference describes it.
#[derive(Debug, Default)]
struct Parsed {
    name: String,
    labels: BTreeMap<String, String>,
    resources: BTreeMap<String, String>,
}

/// Where the reference files are: the override, or `../shared/karpenter/…` beside the workspace.
fn reference_dir(manifest_dir: &Path) -> PathBuf {
    match std::env::var_os(DIR_VARIABLE) {
        Some(dir) => PathBuf::from(dir),
        None => manifest_dir.join("../shared/karpenter/reference/instance-types"),
    }
}

/// The one `instance-types-v<version>.md` in `dir`, with its version (`v1.14`).
fn reference_file(dir: &Path) -> Result<(PathBuf, String), BuildError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        fail(format!(
            "the instance-type reference directory {} cannot be read ({e}). The provider compiles its offline \
             instance-type data (data \"karpenter_instance_types\" and the node-pool plan checks) from Karpenter's \
             generated reference there: check out ../shared/karpenter beside the workspace, or set {DIR_VARIABLE} \
             to a directory holding instance-types-v<version>.md and {PRICING_FILE}.",
            dir.display()
        ))
    })?;
    let mut found: Vec<(PathBuf, String)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name
                .strip_prefix("instance-types-")?
                .strip_suffix(".md")?
                .to_string();
            Some((e.path(), version))
        })
        .collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(fail(format!(
            "no instance-types-v<version>.md in {}: the provider's offline instance-type data is built from it \
             (set {DIR_VARIABLE} to another directory, or restore the file).",
            dir.display()
        ))),
        _ => Err(fail(format!(
            "{} holds {} instance-type references ({}); keep exactly one, the Karpenter version the provider's \
             offline data should describe.",
            dir.display(),
            found.len(),
            found
                .iter()
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The cells of a markdown table row ` |a|b|`, or None for another line.
fn cells(line: &str) -> Option<(&str, &str)> {
    let row = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let (key, value) = row.split_once('|')?;
    Some((key.trim(), value.trim()))
}

/// Every instance type of the reference, in the file's order.
fn parse_reference(text: &str) -> Result<Vec<Parsed>, BuildError> {
    #[derive(PartialEq)]
    enum Section {
        None,
        Labels,
        Resources,
    }
    let mut types: Vec<Parsed> = Vec::new();
    let mut section = Section::None;
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("### ") {
            let name = rest.trim().trim_matches('`').to_string();
            if name.is_empty() || name.contains(' ') {
                return Err(fail(format!(
                    "line {}: {line:?} does not name an instance type",
                    n + 1
                )));
            }
            types.push(Parsed {
                name,
                ..Parsed::default()
            });
            section = Section::None;
        } else if line.starts_with("## ") {
            section = Section::None;
        } else if line.trim() == "#### Labels" {
            section = Section::Labels;
        } else if line.trim() == "#### Resources" {
            section = Section::Resources;
        } else if let Some((key, value)) = cells(line) {
            if key.is_empty() || key.starts_with("--") || key == "Label" || key == "Resource" {
                continue;
            }
            let Some(current) = types.last_mut() else {
                return Err(fail(format!(
                    "line {}: a table row before the first instance type",
                    n + 1
                )));
            };
            let into = match section {
                Section::Labels => &mut current.labels,
                Section::Resources => &mut current.resources,
                Section::None => {
                    return Err(fail(format!(
                        "line {}: a table row outside Labels and Resources",
                        n + 1
                    )));
                }
            };
            into.insert(key.to_string(), value.to_string());
        }
    }
    for t in &types {
        if t.labels.get("node.kubernetes.io/instance-type") != Some(&t.name) {
            return Err(fail(format!(
                "{}: its node.kubernetes.io/instance-type label does not name it",
                t.name
            )));
        }
        if !t.resources.contains_key("cpu") || !t.resources.contains_key("memory") {
            return Err(fail(format!("{}: no cpu or memory resource", t.name)));
        }
    }
    if types.len() < 100 {
        return Err(fail(format!(
            "only {} instance types parsed: the reference's format has changed",
            types.len()
        )));
    }
    Ok(types)
}

/// The on-demand prices of [`PRICE_REGION`] in micro-dollars per hour, and when they were
/// generated.
fn parse_prices(text: &str) -> Result<(BTreeMap<String, u32>, String), BuildError> {
    let generated = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("// generated at "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("unknown")
        .to_string();
    let start = text
        .find(&format!("\"{PRICE_REGION}\": {{"))
        .ok_or_else(|| fail(format!("{PRICING_FILE}: no {PRICE_REGION} table")))?;
    let body = &text[start..];
    let end = body.find("\n\t},").unwrap_or(body.len());
    let mut prices = BTreeMap::new();
    for line in body[..end].lines().skip(1) {
        let line = line.trim();
        if line.starts_with("//") {
            continue;
        }
        for pair in line.split(',') {
            let Some((name, price)) = pair.split_once(':') else {
                continue;
            };
            let name = name.trim().trim_matches('"');
            let micros = micro_dollars(price.trim())
                .ok_or_else(|| fail(format!("{PRICING_FILE}: the price of {name} is not a number")))?;
            prices.insert(name.to_string(), micros);
        }
    }
    if prices.len() < 100 {
        return Err(fail(format!(
            "{PRICING_FILE}: only {} prices parsed",
            prices.len()
        )));
    }
    Ok((prices, generated))
}

/// `0.025500` → 25500 (exact: the table has six decimals).
fn micro_dollars(s: &str) -> Option<u32> {
    let (whole, fraction) = s.split_once('.').unwrap_or((s, ""));
    if fraction.len() > 6 || !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let whole: u32 = whole.parse().ok()?;
    let fraction: u32 = format!("{fraction:0<6}").parse().ok()?;
    whole.checked_mul(1_000_000)?.checked_add(fraction)
}

/// Interned strings: each distinct string once, addressed by index.
#[derive(Default)]
struct Strings {
    list: Vec<String>,
    index: BTreeMap<String, u16>,
}

impl Strings {
    fn id(&mut self, s: &str) -> Result<u16, BuildError> {
        if let Some(i) = self.index.get(s) {
            return Ok(*i);
        }
        let i = u16::try_from(self.list.len())
            .ok()
            .filter(|i| *i != NONE)
            .ok_or_else(|| fail("more distinct strings than the table's u16 indexes hold"))?;
        self.list.push(s.to_string());
        self.index.insert(s.to_string(), i);
        Ok(i)
    }
}

/// Resources first in this order, then the extended ones alphabetically.
const FIRST_RESOURCES: &[&str] = &["cpu", "memory", "ephemeral-storage", "pods"];

/// The Rust source of the table.
fn render(
    types: &[Parsed],
    prices: &BTreeMap<String, u32>,
    version: &str,
    generated: &str,
) -> Result<String, BuildError> {
    let label_keys: BTreeSet<&str> = types
        .iter()
        .flat_map(|t| t.labels.keys().map(String::as_str))
        .collect();
    let label_keys: Vec<&str> = label_keys.into_iter().collect();
    let extended: BTreeSet<&str> = types
        .iter()
        .flat_map(|t| t.resources.keys().map(String::as_str))
        .filter(|r| !FIRST_RESOURCES.contains(r))
        .collect();
    let resources: Vec<&str> = FIRST_RESOURCES.iter().copied().chain(extended).collect();
    let mut strings = Strings::default();
    let mut rows = String::new();
    for t in types {
        let mut labels = Vec::with_capacity(label_keys.len());
        for key in &label_keys {
            labels.push(match t.labels.get(*key) {
                Some(v) => strings.id(v)?,
                None => NONE,
            });
        }
        let mut quantities = Vec::with_capacity(resources.len());
        for r in &resources {
            quantities.push(match t.resources.get(*r) {
                Some(q) => strings.id(q)?,
                None => NONE,
            });
        }
        let price = prices.get(&t.name).copied().unwrap_or(u32::MAX);
        writeln!(
            rows,
            "    Row {{ labels: {labels:?}, resources: {quantities:?}, price_micros: {price} }},"
        )
        .map_err(|e| fail(e.to_string()))?;
    }
    let mut out = String::new();
    let w = |out: &mut String, s: String| out.push_str(&s);
    w(&mut out, "// Generated by build/instance_types.rs from Karpenter's instance-type reference and price table. Do not edit.\n".into());
    w(
        &mut out,
        format!(
            "/// The Karpenter version whose instance-type reference the table holds.\npub const KARPENTER_VERSION: &str = {version:?};\n"
        ),
    );
    w(
        &mut out,
        format!(
            "/// The region of the on-demand prices.\npub const PRICE_REGION: &str = {PRICE_REGION:?};\n"
        ),
    );
    w(
        &mut out,
        format!(
            "/// When Karpenter generated its price table.\npub const PRICES_GENERATED_AT: &str = {generated:?};\n"
        ),
    );
    w(
        &mut out,
        format!(
            "/// Number of label keys of a row.\npub const LABELS: usize = {};\n",
            label_keys.len()
        ),
    );
    w(
        &mut out,
        format!(
            "/// Number of resources of a row.\npub const RESOURCES: usize = {};\n",
            resources.len()
        ),
    );
    w(
        &mut out,
        format!(
            "/// The label keys, in the order of [`Row::labels`].\npub static LABEL_KEYS: [&str; LABELS] = {label_keys:?};\n"
        ),
    );
    w(
        &mut out,
        format!(
            "/// The resource names, in the order of [`Row::resources`].\npub static RESOURCE_NAMES: [&str; RESOURCES] = {resources:?};\n"
        ),
    );
    w(
        &mut out,
        format!(
            "/// Every distinct value, addressed by the rows' indexes.\npub static STRINGS: [&str; {}] = {:?};\n",
            strings.list.len(),
            strings.list
        ),
    );
    w(
        &mut out,
        format!(
            "/// One row per instance type, in the reference's order.\npub static ROWS: [Row; {}] = [\n{rows}];\n",
            types.len()
        ),
    );
    Ok(out)
}

/// Reads the reference files and writes the table to `out`; tells cargo what to watch.
pub fn generate(manifest_dir: &Path, out: &Path) -> Result<(), BuildError> {
    println!("cargo:rerun-if-env-changed={DIR_VARIABLE}");
    let dir = reference_dir(manifest_dir);
    println!("cargo:rerun-if-changed={}", dir.display());
    let (reference, version) = reference_file(&dir)?;
    let pricing = dir.join(PRICING_FILE);
    println!("cargo:rerun-if-changed={}", reference.display());
    println!("cargo:rerun-if-changed={}", pricing.display());
    let text = std::fs::read_to_string(&reference)
        .map_err(|e| fail(format!("{} cannot be read: {e}", reference.display())))?;
    let pricing_text = std::fs::read_to_string(&pricing).map_err(|e| {
        fail(format!(
            "{} cannot be read ({e}): the offline data takes its on-demand prices from it (set {DIR_VARIABLE} \
             to a directory holding it beside the reference).",
            pricing.display()
        ))
    })?;
    let types = parse_reference(&text)?;
    let (prices, generated) = parse_prices(&pricing_text)?;
    let source = render(&types, &prices, &version, &generated)?;
    std::fs::write(out, source).map_err(|e| fail(format!("{} cannot be written: {e}", out.display())))
}
