//! Build step of the offline instance-type data (issue 39): reads the committed table
//! `data/karpenter/instance-types.tsv` (one row per instance type: the labels Karpenter gives it,
//! the resources it computes for it, its on-demand price and its ENI limits, written by
//! `scripts/karpenter-release.sh` from a Karpenter release's files) and writes a compact Rust
//! table into `OUT_DIR`, which `src/instance_types/catalog.rs` includes: every string is
//! interned once, each instance type is one row of small indexes. The build needs nothing
//! outside the repository.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::error::BuildError;

/// The table, relative to the package.
pub const TABLE: &str = "data/karpenter/instance-types.tsv";
/// What the table writes for a value a type does not have.
const ABSENT: &str = "-";
/// Index of "absent" in the generated tables.
const NONE: u16 = u16::MAX;

fn fail(message: impl Into<String>) -> BuildError {
    BuildError(format!("{TABLE}: {}", message.into()))
}

/// The table as read: metadata, the column names, the rows (cells, `None` where absent).
struct Table<'a> {
    meta: BTreeMap<&'a str, &'a str>,
    columns: Vec<&'a str>,
    rows: Vec<Vec<Option<&'a str>>>,
}

fn read_table(text: &str) -> Result<Table<'_>, BuildError> {
    let mut meta = BTreeMap::new();
    let mut columns: Vec<&str> = Vec::new();
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('@') {
            let (key, value) = rest
                .split_once('\t')
                .ok_or_else(|| fail(format!("line {}: a metadata line is `@key<TAB>value`", n + 1)))?;
            meta.insert(key, value);
            continue;
        }
        let cells: Vec<&str> = line.split('\t').collect();
        if columns.is_empty() {
            columns = cells;
            continue;
        }
        if cells.len() != columns.len() {
            return Err(fail(format!(
                "line {}: {} cells, the header has {}",
                n + 1,
                cells.len(),
                columns.len()
            )));
        }
        rows.push(cells.into_iter().map(|c| (c != ABSENT).then_some(c)).collect());
    }
    if rows.len() < 100 {
        return Err(fail(format!(
            "only {} instance types: the table is damaged",
            rows.len()
        )));
    }
    Ok(Table { meta, columns, rows })
}

/// `0.025500` → 25500 micro-dollars (exact: the table has at most six decimals). The release
/// generator reads the upstream price table with it too.
pub fn micro_dollars(s: &str) -> Option<u32> {
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

/// The Rust source of the table.
fn render(table: &Table<'_>) -> Result<String, BuildError> {
    let meta = |key: &str| {
        table
            .meta
            .get(key)
            .copied()
            .ok_or_else(|| fail(format!("no @{key} line")))
    };
    let (version, region, generated) = (
        meta("karpenter_version")?,
        meta("price_region")?,
        meta("prices_generated_at")?,
    );
    let column = |name: &str| {
        table
            .columns
            .iter()
            .position(|c| *c == name)
            .ok_or_else(|| fail(format!("no column {name}")))
    };
    let name_column = column("name")?;
    let price_column = column(&format!("price:{region}"))?;
    let enis_column = column("default_enis")?;
    let ips_column = column("ips_per_eni")?;
    let labels: Vec<(usize, &str)> = table
        .columns
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((i, c.strip_prefix("label:")?)))
        .collect();
    let resources: Vec<(usize, &str)> = table
        .columns
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((i, c.strip_prefix("resource:")?)))
        .collect();
    if !labels.windows(2).all(|w| w[0].1 < w[1].1) {
        return Err(fail(
            "the label columns are not sorted (catalog.rs searches them in halves)",
        ));
    }
    let mut strings = Strings::default();
    let mut rows = String::new();
    for row in &table.rows {
        let name = row[name_column].unwrap_or_default();
        let mut label_ids = Vec::with_capacity(labels.len());
        for (i, _) in &labels {
            label_ids.push(match row[*i] {
                Some(v) => strings.id(v)?,
                None => NONE,
            });
        }
        let mut quantities = Vec::with_capacity(resources.len());
        for (i, _) in &resources {
            quantities.push(match row[*i] {
                Some(q) => strings.id(q)?,
                None => NONE,
            });
        }
        let price = match row[price_column] {
            Some(p) => {
                micro_dollars(p).ok_or_else(|| fail(format!("{name}: the price {p:?} is not dollars")))?
            }
            None => u32::MAX,
        };
        let small = |cell: Option<&str>, what: &str| -> Result<u16, BuildError> {
            match cell {
                None => Ok(NONE),
                Some(c) => c
                    .parse::<u16>()
                    .ok()
                    .filter(|n| *n != NONE)
                    .ok_or_else(|| fail(format!("{name}: {what} {c:?} is not a small number"))),
            }
        };
        let enis = small(row[enis_column], "default_enis")?;
        let ips = small(row[ips_column], "ips_per_eni")?;
        writeln!(
            rows,
            "    Row {{ labels: {label_ids:?}, resources: {quantities:?}, price_micros: {price}, default_enis: {enis}, ips_per_eni: {ips} }},"
        )
        .map_err(|e| fail(e.to_string()))?;
    }
    let label_keys: Vec<&str> = labels.iter().map(|(_, k)| *k).collect();
    let resource_names: Vec<&str> = resources.iter().map(|(_, r)| *r).collect();
    let mut out = String::new();
    let mut w = |s: String| out.push_str(&s);
    w(format!(
        "// Generated by build/instance_types.rs from {TABLE}. Do not edit.\n"
    ));
    w(format!(
        "/// The Karpenter version whose instance-type reference the table holds.\npub const KARPENTER_VERSION: &str = {version:?};\n"
    ));
    w(format!(
        "/// The region of the on-demand prices.\npub const PRICE_REGION: &str = {region:?};\n"
    ));
    w(format!(
        "/// When Karpenter generated its price table.\npub const PRICES_GENERATED_AT: &str = {generated:?};\n"
    ));
    w(format!(
        "/// Number of label keys of a row.\npub const LABELS: usize = {};\n",
        label_keys.len()
    ));
    w(format!(
        "/// Number of resources of a row.\npub const RESOURCES: usize = {};\n",
        resource_names.len()
    ));
    w(format!(
        "/// The label keys, in the order of [`Row::labels`].\npub static LABEL_KEYS: [&str; LABELS] = {label_keys:?};\n"
    ));
    w(format!(
        "/// The resource names, in the order of [`Row::resources`].\npub static RESOURCE_NAMES: [&str; RESOURCES] = {resource_names:?};\n"
    ));
    w(format!(
        "/// Every distinct value, addressed by the rows' indexes.\npub static STRINGS: [&str; {}] = {:?};\n",
        strings.list.len(),
        strings.list
    ));
    w(format!(
        "/// One row per instance type, in the reference's order.\npub static ROWS: [Row; {}] = [\n{rows}];\n",
        table.rows.len()
    ));
    Ok(out)
}

/// Whether the build can read `text` as the table (the generator checks what it writes).
pub fn check(text: &str) -> Result<(), BuildError> {
    render(&read_table(text)?).map(drop)
}

/// Reads the committed table and writes the Rust table to `out`; tells cargo what to watch.
pub fn generate(manifest_dir: &Path, out: &Path) -> Result<(), BuildError> {
    let path = manifest_dir.join(TABLE);
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(&path).map_err(|e| {
        fail(format!(
            "cannot be read ({e}). It is part of the repository (written by scripts/karpenter-release.sh): \
             restore it with `git checkout -- {TABLE}`."
        ))
    })?;
    let source = render(&read_table(&text)?)?;
    std::fs::write(out, source).map_err(|e| fail(format!("{} cannot be written: {e}", out.display())))
}
