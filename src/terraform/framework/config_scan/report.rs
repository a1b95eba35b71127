//! The scan's result, and handing it out: each block's findings go to the `Validate*Config`
//! call about that block, once per process.
//!
//! Terraform's validate walk (`terraform validate`, and the validation `plan` and `apply` run
//! before planning) calls `Validate*Config` once per block of the configuration, modules
//! included, with `count`/`for_each` not expanded yet; a request names the type but not the
//! block. So a call takes the not-yet-taken block of its type whose literal leaves best agree
//! with its configuration ([`literals`]) and reports that block's findings; blocks of types
//! without findings are not matched at all. Should the matching ever miss a block (its call
//! agreeing with none), no finding is lost: once as many calls of a type have come as there
//! are blocks of it, the findings of every block not taken yet are reported with that call,
//! naming their block. A finding written once and reached from several blocks (a local two
//! pools share) is reported once.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use super::check::Checker;
use super::eval::Evaluator;
use super::files::{load_modules, root_variable_files};
use super::finding::{Finding, Place};
use super::index::Config;
use super::literals::{Leaf, agreement, leaves};
use super::targets::{BlockKind, Targets};
use crate::terraform::tfvalue::Value;

/// One block the scan read.
struct Scanned {
    /// Its address (`module.pools.karpenter_node_pool.p`).
    address: String,
    header: Option<Place>,
    leaves: Vec<Leaf>,
    findings: Vec<Finding>,
}

/// The blocks of one type.
#[derive(Default)]
struct Group {
    blocks: Vec<Scanned>,
}

impl Group {
    fn has_findings(&self) -> bool {
        self.blocks.iter().any(|b| !b.findings.is_empty())
    }
}

#[derive(Default)]
struct State {
    taken: BTreeMap<(BlockKind, String), Vec<bool>>,
    calls: BTreeMap<(BlockKind, String), usize>,
    reported: HashSet<(Option<Place>, String)>,
}

/// What the scan found in a configuration, handed out per validation call.
#[derive(Default)]
pub struct ConfigScan {
    groups: BTreeMap<(BlockKind, String), Group>,
    state: Mutex<State>,
}

impl ConfigScan {
    /// Scans the configuration whose root module is `root` (Terraform's working directory),
    /// with Terraform's data directory `data_dir` (relative to `root` unless absolute).
    pub fn load(root: &Path, data_dir: &Path, targets: &Targets<'_>) -> ConfigScan {
        let started = Instant::now();
        let modules = load_modules(root, data_dir, &targets.provider_name);
        if modules.iter().all(|m| m.files.is_empty()) {
            return ConfigScan::default();
        }
        let tfvars = root_variable_files(root);
        let config = Config::build(&modules, &tfvars, targets);
        let eval = Evaluator::new(&config, root);
        let mut groups: BTreeMap<(BlockKind, String), Group> = BTreeMap::new();
        for (index, module) in config.modules.iter().enumerate() {
            let prefix = module.address_prefix();
            for block in &module.blocks {
                let key = (block.kind, block.type_name.clone());
                let schema_key = match block.kind {
                    BlockKind::Provider => (BlockKind::Provider, targets.provider_name.clone()),
                    _ => key.clone(),
                };
                let Some(schema) = targets.schemas.get(&schema_key) else {
                    continue;
                };
                groups.entry(key).or_default().blocks.push(Scanned {
                    address: format!("{prefix}{}", block.local_address()),
                    header: block.header.clone(),
                    leaves: leaves(block, schema),
                    findings: Checker::block(&eval, index, block, schema),
                });
            }
        }
        let scan = ConfigScan {
            groups,
            state: Mutex::default(),
        };
        tracing::debug!(
            modules = modules.len(),
            blocks = scan.groups.values().map(|g| g.blocks.len()).sum::<usize>(),
            findings = scan.finding_count(),
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            "configuration scanned for keys the schemas do not have"
        );
        scan
    }

    /// Every finding, of every block (for logs and tests).
    pub fn finding_count(&self) -> usize {
        self.groups
            .values()
            .flat_map(|g| &g.blocks)
            .map(|b| b.findings.len())
            .sum()
    }

    /// All findings with the address of their block, in scan order (for tests and tools).
    pub fn findings(&self) -> Vec<(String, Finding)> {
        self.groups
            .values()
            .flat_map(|g| &g.blocks)
            .flat_map(|b| b.findings.iter().map(|f| (b.address.clone(), f.clone())))
            .collect()
    }

    /// The findings to report with a validation call of `kind`/`type_name` whose
    /// configuration is `config`.
    pub fn take(&self, kind: BlockKind, type_name: &str, config: &Value) -> Vec<Finding> {
        let key = (kind, type_name.to_string());
        let Some(group) = self.groups.get(&key).filter(|g| g.has_findings()) else {
            return Vec::new();
        };
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let calls = {
            let c = state.calls.entry(key.clone()).or_insert(0);
            *c += 1;
            *c
        };
        let taken = state
            .taken
            .entry(key)
            .or_insert_with(|| vec![false; group.blocks.len()]);
        let best = group
            .blocks
            .iter()
            .enumerate()
            .filter(|(i, _)| !taken[*i])
            .filter_map(|(i, b)| agreement(&b.leaves, config).map(|score| (score, i)))
            .min_by_key(|(score, i)| (Reverse(*score), *i))
            .map(|(_, i)| i);
        let mut out: Vec<Finding> = Vec::new();
        if let Some(i) = best {
            taken[i] = true;
            out.extend(group.blocks[i].findings.iter().cloned());
        }
        if calls >= group.blocks.len() {
            for (i, block) in group.blocks.iter().enumerate() {
                if !taken[i] {
                    taken[i] = true;
                    out.extend(block.findings.iter().cloned().map(|mut f| {
                        let header = block
                            .header
                            .as_ref()
                            .map(|h| format!(" ({h})"))
                            .unwrap_or_default();
                        f.detail.push_str(&format!(" In {}{header}.", block.address));
                        f
                    }));
                }
            }
        }
        out.retain(|f| state.reported.insert((f.at.clone(), f.detail.clone())));
        out
    }
}
