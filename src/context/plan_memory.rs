//! What one Terraform command's plan learns, kept for the rest of it: Terraform runs one
//! provider process per command walk, so this lives in the process's context, is shared by
//! every resource it plans, and is gone with it (nothing global, nothing on disk).
//!
//! - from the cluster: [`PlanReads`] (NodeClaims, NodePools' disruption settings, the hash
//!   annotations of refreshed objects, the served CRDs), and the node classes read for pools
//!   whose class is not in this plan ([`PlanMemory::cluster_class`]);
//! - from the configuration files: what each block writes, read once ([`PlanMemory::written`]);
//! - from its own planning: the node classes it planned ([`PlanMemory::planned_class`]), the
//!   kubelet expressions it compiled, their evaluations, and the instance types each set of
//!   requirements selects ([`Memo`]s, computed once per key).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::OnceCell;

use super::memo::Memo;
use crate::instance_types::catalog::Row;
use crate::instance_types::kubelet_cel::{Evaluation, Kubelet};
use crate::k8s::plan_reads::PlanReads;
use crate::terraform::framework::config_scan::{BlockKind, Targets, Written, terraform_dirs};
use crate::terraform::framework::{Diagnostics, Schema};
use crate::terraform::tfvalue::Value;

/// The provider's name in configurations: the prefix of its types' names.
const PROVIDER_NAME: &str = "karpenter";

/// A node class as this plan planned it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedClass {
    /// The planned value of the resource.
    pub planned: Value,
    /// Whether the plan changes what its kubelet expressions are (a create, or other
    /// expressions than the prior state's).
    pub kubelet_changed: bool,
}

/// A node class's kubelet expressions, compiled; `key` says what from (the expressions and
/// the AMI family), for the evaluations kept under it.
#[derive(Debug)]
pub struct CompiledKubelet {
    pub key: String,
    pub kubelet: Kubelet,
    pub family: Option<String>,
}

/// One read of a node class from the cluster, shared by every pool that names it: `Ok(None)`
/// when absent, `Err` with why it could not be read.
type ClassRead = Arc<OnceCell<Result<Option<Value>, String>>>;

/// See the module docs.
#[derive(Default)]
pub struct PlanMemory {
    pub reads: PlanReads,
    planned_classes: Mutex<HashMap<String, PlannedClass>>,
    /// The block types the configuration is read for (type name, schema), and the attribute
    /// paths read of them.
    written_types: Vec<(&'static str, &'static Schema)>,
    written_paths: &'static [&'static str],
    written: OnceLock<Written>,
    cluster_classes: Mutex<HashMap<String, ClassRead>>,
    /// Kubelet expressions by what they are compiled from; `None` when there are none, or one
    /// does not compile (the class's validation says so).
    pub kubelets: Memo<String, Option<Arc<CompiledKubelet>>>,
    /// Evaluations by (compiled key, selection key).
    pub evaluations: Memo<(String, String), Evaluation>,
    /// The offline table's types a set of requirements selects, by the requirements' key;
    /// `None` when a requirement is malformed.
    pub selections: Memo<String, Option<Vec<&'static Row>>>,
    /// The instance-type checks of a pool's requirements, labels and limits, by what they
    /// check: identical pools are checked once.
    pub pool_checks: Memo<String, Diagnostics>,
    /// What was said once per plan, by what it is about.
    said: Mutex<HashSet<String>>,
    /// The interruption queues' message counts as their refresh read them, by queue name.
    queues: Mutex<HashMap<String, QueueBacklog>>,
}

/// An interruption queue's messages, as SQS counts them (approximately).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueBacklog {
    /// Messages waiting to be received (`ApproximateNumberOfMessages`).
    pub waiting: u64,
    /// Messages received and not deleted yet (`ApproximateNumberOfMessagesNotVisible`).
    pub in_flight: u64,
}

impl PlanMemory {
    /// Keeps what this plan planned for the node class `name`.
    pub fn plan_class(&self, name: &str, class: PlannedClass) {
        if let Ok(mut classes) = self.planned_classes.lock() {
            classes.insert(name.to_string(), class);
        }
    }

    /// The node class `name` as this plan planned it, if it did (so far).
    pub fn planned_class(&self, name: &str) -> Option<PlannedClass> {
        self.planned_classes.lock().ok()?.get(name).cloned()
    }

    /// A memory that reads the configuration files for `paths` of the blocks of `types` (type
    /// name, schema).
    pub fn reading(types: Vec<(&'static str, &'static Schema)>, paths: &'static [&'static str]) -> Self {
        Self {
            written_types: types,
            written_paths: paths,
            ..Self::default()
        }
    }

    /// The configuration as written (the blocks of the types given to [`PlanMemory::reading`]),
    /// read from Terraform's working directory on the first call; empty when there is none.
    pub fn written(&self) -> &Written {
        self.written.get_or_init(|| {
            let Some((root, data_dir)) = terraform_dirs() else {
                return Written::default();
            };
            let mut targets = Targets::new(PROVIDER_NAME);
            for (type_name, schema) in &self.written_types {
                targets = targets.with(BlockKind::Resource, *type_name, schema);
            }
            Written::load(&root, &data_dir, &targets, self.written_paths)
        })
    }

    /// The block types the configuration is read for.
    pub fn written_types(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.written_types.iter().map(|(t, _)| *t)
    }

    /// Whether `what` is said for the first time in this plan (it is then recorded as said).
    pub fn first_time(&self, what: &str) -> bool {
        self.said
            .lock()
            .is_ok_and(|mut said| said.insert(what.to_string()))
    }

    /// Keeps an interruption queue's message counts as its refresh read them.
    pub fn queue_read(&self, queue: &str, backlog: QueueBacklog) {
        if let Ok(mut queues) = self.queues.lock() {
            queues.insert(queue.to_string(), backlog);
        }
    }

    /// The message counts of the interruption queue `queue`, if this plan's refresh read them.
    pub fn queue_backlog(&self, queue: &str) -> Option<QueueBacklog> {
        self.queues.lock().ok()?.get(queue).copied()
    }

    /// The node class `name` as the cluster has it, read with `read` on the first call for that
    /// name (`Ok(None)`: absent; `Err`: why it could not be read); concurrent callers share the
    /// one read.
    pub async fn cluster_class<F, Fut>(&self, name: &str, read: F) -> Result<Option<Value>, String>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Option<Value>, String>>,
    {
        let cell = {
            let mut classes = self
                .cluster_classes
                .lock()
                .map_err(|_| "the plan memory's lock is poisoned".to_string())?;
            classes.entry(name.to_string()).or_default().clone()
        };
        cell.get_or_init(read).await.clone()
    }
}
