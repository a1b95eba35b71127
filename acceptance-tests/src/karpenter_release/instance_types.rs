//! The instance-type table: Karpenter's generated instance-type reference
//! (`instance-types-v<minor>.md`: the labels Karpenter gives each type and the resources it
//! computes for it, with an `AL2023` AMI), its built-in on-demand prices
//! (`zz_generated.pricing_aws.go`, us-east-1) and its ENI limits
//! (`zz_generated.vpclimits.go`: the default network card's interfaces and the IPv4 addresses
//! per interface, the `default_enis` and `ips_per_eni` of Karpenter's CEL kubelet expressions),
//! parsed and written as `data/karpenter/instance-types.tsv`, one row per type. Only the values
//! are kept, never the files' text.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::error::ReleaseError;
use super::provider_build::micro_dollars;

/// The region of the price table kept (the only one Karpenter ships).
pub const PRICE_REGION: &str = "us-east-1";
/// What the table writes for a value the type does not have (an empty cell is a value: bare
/// metal's hypervisor label is the empty string).
pub const ABSENT: &str = "-";
/// Resources first in this order, then the extended ones alphabetically.
const FIRST_RESOURCES: &[&str] = &["cpu", "memory", "ephemeral-storage", "pods"];
/// The two ENI columns, last in each row.
pub const ENI_COLUMNS: [&str; 2] = ["default_enis", "ips_per_eni"];

fn fail(message: impl Into<String>) -> ReleaseError {
    ReleaseError::Input(message.into())
}

/// One instance type as the reference describes it.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Described {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub resources: BTreeMap<String, String>,
}

/// The ENI limits of one type: the default network card's `MaximumNetworkInterfaces` and
/// `IPv4PerInterface`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EniLimits {
    pub default_enis: u32,
    pub ips_per_eni: u32,
}

/// The cells of a markdown table row ` |a|b|`, or None for another line.
fn cells(line: &str) -> Option<(&str, &str)> {
    let row = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let (key, value) = row.split_once('|')?;
    Some((key.trim(), value.trim()))
}

/// Every instance type of the reference, in the file's order.
pub fn parse_reference(text: &str) -> Result<Vec<Described>, ReleaseError> {
    #[derive(PartialEq)]
    enum Section {
        None,
        Labels,
        Resources,
    }
    let mut types: Vec<Described> = Vec::new();
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
            types.push(Described {
                name,
                ..Described::default()
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
        let cells = t.labels.values().chain(t.resources.values());
        if let Some(bad) = cells.clone().find(|v| *v == ABSENT || v.contains('\t')) {
            return Err(fail(format!(
                "{}: the value {bad:?} cannot be written to the table ({ABSENT:?} marks an absent value)",
                t.name
            )));
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

/// The on-demand prices of [`PRICE_REGION`] as written (`0.096000`, dollars per hour), and
/// when Karpenter generated them.
pub fn parse_prices(text: &str) -> Result<(BTreeMap<String, String>, String), ReleaseError> {
    let generated = generated_at(text);
    let start = text
        .find(&format!("\"{PRICE_REGION}\": {{"))
        .ok_or_else(|| fail(format!("the price file has no {PRICE_REGION} table")))?;
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
            let price = price.trim();
            if micro_dollars(price).is_none() {
                return Err(fail(format!(
                    "the price of {name} ({price:?}) is not a number of dollars"
                )));
            }
            prices.insert(name.to_string(), price.to_string());
        }
    }
    if prices.len() < 100 {
        return Err(fail(format!("only {} prices parsed", prices.len())));
    }
    Ok((prices, generated))
}

/// The `// This file was generated at …` / `// generated at …` stamp of a Go file.
fn generated_at(text: &str) -> String {
    text.lines()
        .find_map(|l| {
            let l = l.trim().strip_prefix("//")?.trim();
            let rest = l
                .strip_prefix("This file was generated at ")
                .or_else(|| l.strip_prefix("generated at "))?;
            rest.split_whitespace().next().map(str::to_string)
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// The number after `field:` in a Go struct literal's body, where `field` is a whole word.
fn go_number(body: &str, field: &str) -> Option<u32> {
    body.lines().find_map(|l| {
        let rest = l.trim().strip_prefix(field)?.strip_prefix(':')?;
        rest.trim().trim_end_matches(',').parse().ok()
    })
}

/// The ENI limits per instance type, and when Karpenter generated them: for each entry of the
/// `Limits` map, `IPv4PerInterface` and the `MaximumNetworkInterfaces` of the network card
/// whose `NetworkCardIndex` is the entry's `DefaultNetworkCardIndex`.
pub fn parse_vpc_limits(text: &str) -> Result<(BTreeMap<String, EniLimits>, String), ReleaseError> {
    let generated = generated_at(text);
    let start = text
        .find("map[string]*VPCLimits{")
        .ok_or_else(|| fail("the VPC limits file has no `map[string]*VPCLimits{` table"))?;
    let mut limits = BTreeMap::new();
    // Entries start with `\t"<name>": {` and end with `\t},` at the same depth.
    for entry in text[start..].split("\n\t\"").skip(1) {
        let Some((name, body)) = entry.split_once("\": {") else {
            continue;
        };
        let body = body.split("\n\t},").next().unwrap_or(body);
        let missing = |what: &str| fail(format!("{name}: no {what} in the VPC limits"));
        let ips = go_number(body, "IPv4PerInterface").ok_or_else(|| missing("IPv4PerInterface"))?;
        let card =
            go_number(body, "DefaultNetworkCardIndex").ok_or_else(|| missing("DefaultNetworkCardIndex"))?;
        let mut default_enis = None;
        for card_body in body.split('{').skip(1) {
            let index = go_number(card_body, "NetworkCardIndex");
            let interfaces = go_number(card_body, "MaximumNetworkInterfaces");
            if let (Some(index), Some(interfaces)) = (index, interfaces)
                && index == card
            {
                default_enis = Some(interfaces);
            }
        }
        let default_enis =
            default_enis.ok_or_else(|| missing("network card whose index is DefaultNetworkCardIndex"))?;
        limits.insert(
            name.to_string(),
            EniLimits {
                default_enis,
                ips_per_eni: ips,
            },
        );
    }
    if limits.len() < 100 {
        return Err(fail(format!("only {} VPC limits parsed", limits.len())));
    }
    Ok((limits, generated))
}

/// What the table is made from.
pub struct Sources<'a> {
    /// The Karpenter minor, `v1.14`.
    pub version: &'a str,
    pub types: &'a [Described],
    pub prices: &'a BTreeMap<String, String>,
    pub prices_generated_at: &'a str,
    /// None when the release's VPC limits file is not at hand: the ENI columns are then absent.
    pub vpc_limits: Option<(&'a BTreeMap<String, EniLimits>, &'a str)>,
    /// Where the VPC limits file came from, when not from the release itself.
    pub vpc_limits_note: Option<&'a str>,
}

/// The columns of the table: `name`, `label:<key>` (sorted), `resource:<name>`,
/// `price_us-east-1`, then [`ENI_COLUMNS`].
pub fn columns(types: &[Described]) -> Vec<String> {
    let labels: BTreeSet<&str> = types
        .iter()
        .flat_map(|t| t.labels.keys().map(String::as_str))
        .collect();
    let extended: BTreeSet<&str> = types
        .iter()
        .flat_map(|t| t.resources.keys().map(String::as_str))
        .filter(|r| !FIRST_RESOURCES.contains(r))
        .collect();
    let mut out = vec!["name".to_string()];
    out.extend(labels.into_iter().map(|k| format!("label:{k}")));
    out.extend(
        FIRST_RESOURCES
            .iter()
            .copied()
            .chain(extended)
            .map(|r| format!("resource:{r}")),
    );
    out.push(format!("price:{PRICE_REGION}"));
    out.extend(ENI_COLUMNS.iter().map(|c| c.to_string()));
    out
}

/// The text of `data/karpenter/instance-types.tsv`.
pub fn render(s: &Sources<'_>) -> String {
    let mut out = String::new();
    let vpc = match s.vpc_limits {
        Some((_, at)) => format!("zz_generated.vpclimits.go (generated at {at})"),
        None => "no zz_generated.vpclimits.go (the ENI columns are absent)".to_string(),
    };
    let _ = writeln!(
        out,
        "# Karpenter {}'s instance types: one row per type of instance-types-{}.md (the labels Karpenter\n\
         # gives it and the resources it computes for it, AL2023 AMI), its us-east-1 on-demand price from\n\
         # zz_generated.pricing_aws.go (generated at {}, dollars per hour), and the default network card's\n\
         # interfaces and IPv4 addresses per interface from {vpc}.",
        s.version, s.version, s.prices_generated_at
    );
    if let Some((limits, _)) = s.vpc_limits {
        if let Some(note) = s.vpc_limits_note {
            let _ = writeln!(out, "# ENI limits: {note}");
        }
        let unnamed: Vec<&str> = s
            .types
            .iter()
            .filter(|t| !limits.contains_key(&t.name))
            .map(|t| t.name.as_str())
            .collect();
        if !unnamed.is_empty() {
            let _ = writeln!(
                out,
                "# The VPC limits name no figures for {} of the types (their ENI columns are `{ABSENT}`): {}.",
                unnamed.len(),
                unnamed.join(", ")
            );
        }
    }
    let _ = writeln!(
        out,
        "# Written by scripts/karpenter-release.sh; do not edit. `{ABSENT}` marks a value the type does not have."
    );
    let _ = writeln!(out, "@karpenter_version\t{}", s.version);
    let _ = writeln!(out, "@price_region\t{PRICE_REGION}");
    let _ = writeln!(out, "@prices_generated_at\t{}", s.prices_generated_at);
    let columns = columns(s.types);
    let _ = writeln!(out, "{}", columns.join("\t"));
    for t in s.types {
        let limits = s.vpc_limits.and_then(|(l, _)| l.get(&t.name));
        let row: Vec<String> = columns
            .iter()
            .map(|c| {
                let value = if c == "name" {
                    Some(t.name.clone())
                } else if let Some(key) = c.strip_prefix("label:") {
                    t.labels.get(key).cloned()
                } else if let Some(r) = c.strip_prefix("resource:") {
                    t.resources.get(r).cloned()
                } else if c.starts_with("price:") {
                    s.prices.get(&t.name).cloned()
                } else if c == ENI_COLUMNS[0] {
                    limits.map(|l| l.default_enis.to_string())
                } else {
                    limits.map(|l| l.ips_per_eni.to_string())
                };
                value.unwrap_or_else(|| ABSENT.to_string())
            })
            .collect();
        let _ = writeln!(out, "{}", row.join("\t"));
    }
    out
}

/// The data rows of a table's text (header and rows, split into cells), without the comment and
/// `@` lines.
pub fn rows(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('@') && !l.is_empty())
        .map(|l| l.split('\t').collect())
        .collect()
}
