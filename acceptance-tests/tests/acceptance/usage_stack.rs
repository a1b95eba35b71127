//! #52: the README's usage stack is `examples/complete-eks/main.tf`, and its Karpenter part
//! works against the local test environment.
//!
//! What this proves:
//! - every top-level block of the README's usage snippet (the `hcl` block after
//!   `<!-- usage-stack -->`) is the same configuration as the block of the same type and labels
//!   in the example, compared as parsed HCL (comments and layout aside), and the README shows
//!   every piece of the stack (both charts, the access entry, the Pod Identity association and its
//!   agent, the roles, the queue, the node class, a pool);
//! - every `required_providers` entry for this provider, in every example and every Terraform
//!   snippet of the README, the guides and the provider page's templates, pins `~> X.Y.0` of this
//!   release;
//! - the example's `provider "karpenter"` block (EKS token made by the provider, as written) and
//!   its `karpenter_*` resources and outputs apply with the real `terraform`, re-plan empty and
//!   destroy, against the Kubernetes API test server (Karpenter's v1 CRDs, a simulated Karpenter
//!   that marks node classes Ready, EKS-token authentication) and moto, with the EKS access-entry
//!   calls answered by the proxy's stand-in (`acceptance_tests::eks_standin`). `module.eks`'s
//!   outputs are replaced by the test environment's values (the cluster's name, the test
//!   server's URL and CA), the AWS endpoints point at moto, and a `depends_on` entry naming a
//!   left-out block (the node class's on the Spot service-linked role) is dropped, as it only
//!   orders; nothing else of those blocks is changed.
//!
//! What it does not prove: the VPC and EKS modules, the `aws_eks_*` resources and the Helm
//! releases are left out (they need registry downloads and an AWS account), so nothing here shows
//! that the charts install Karpenter v1.15.1, that EKS accepts the access entry or the Pod Identity
//! association, or that real nodes join.

use std::collections::BTreeMap;

use acceptance_tests::kube::{Cluster, Config, ControllerConfig, TestServer};
use acceptance_tests::moto::{self, FaultProxy, Moto};
use acceptance_tests::{Workdir, provider_version, repo_file, resource_at, workspace_root};
use base64::Engine;
use hcl::{Block, BlockLabel, Body, Expression, ObjectKey, Structure, TraversalOperator};

use crate::doc_snippets::snippets;

const EXAMPLE: &str = "examples/complete-eks/main.tf";
const README_MARKER: &str = "<!-- usage-stack -->";

/// Blocks the README must show: the whole stack but the VPC and the cluster.
const README_SHOWS: &[&str] = &[
    "terraform",
    "provider karpenter",
    "resource karpenter_node_role this",
    "resource karpenter_interruption_queue this",
    "resource karpenter_controller_role this",
    "resource aws_eks_addon pod_identity_agent",
    "resource aws_eks_pod_identity_association karpenter",
    "resource aws_iam_service_linked_role spot",
    "resource helm_release karpenter_crd",
    "resource helm_release karpenter",
    "resource karpenter_ec2_node_class default",
    "resource karpenter_node_pool default",
];

fn address(block: &Block) -> String {
    let mut parts = vec![block.identifier.as_str().to_string()];
    parts.extend(block.labels.iter().map(|l| match l {
        BlockLabel::String(s) => s.clone(),
        BlockLabel::Identifier(i) => i.as_str().to_string(),
    }));
    parts.join(" ")
}

fn blocks(body: &Body) -> BTreeMap<String, Block> {
    body.blocks().map(|b| (address(b), b.clone())).collect()
}

fn parse(place: &str, text: &str) -> Body {
    hcl::parse(text).unwrap_or_else(|e| panic!("{place}: not valid HCL: {e}"))
}

/// The README's usage snippet.
fn readme_stack() -> Body {
    let readme = repo_file("README.md");
    let after = readme
        .split_once(README_MARKER)
        .unwrap_or_else(|| panic!("README.md has no {README_MARKER} marker"))
        .1;
    let (_, snippet) = snippets(after)
        .into_iter()
        .next()
        .expect("an hcl block after the usage-stack marker");
    parse("README.md usage stack", &snippet)
}

fn shown(block: &Block) -> String {
    hcl::format::to_string(block).unwrap_or_else(|e| format!("(cannot format: {e})"))
}

#[test]
fn the_readme_stack_is_the_complete_eks_example() {
    let readme = blocks(&readme_stack());
    let example = blocks(&parse(EXAMPLE, &repo_file(EXAMPLE)));
    let mut findings = Vec::new();
    for wanted in README_SHOWS {
        if !readme.contains_key(*wanted) {
            findings.push(format!("the README's usage stack has no `{wanted}` block"));
        }
    }
    for (address, block) in &readme {
        match example.get(address) {
            None => findings.push(format!(
                "`{address}` is in the README's usage stack but not in {EXAMPLE}"
            )),
            Some(theirs) if theirs != block => findings.push(format!(
                "`{address}` differs:\nREADME:\n{}\n{EXAMPLE}:\n{}",
                shown(block),
                shown(theirs)
            )),
            Some(_) => {}
        }
    }
    assert!(findings.is_empty(), "{}", findings.join("\n"));
}

/// The `karpenter` entry of every `terraform { required_providers { … } }` in `body`.
fn karpenter_requirements(body: &Body) -> Vec<Expression> {
    body.blocks()
        .filter(|b| b.identifier.as_str() == "terraform")
        .flat_map(|b| b.body.blocks())
        .filter(|b| b.identifier.as_str() == "required_providers")
        .flat_map(|b| b.body.attributes())
        .filter(|a| a.key.as_str() == "karpenter")
        .map(|a| a.expr.clone())
        .collect()
}

fn version_of(requirement: &Expression) -> Option<String> {
    let Expression::Object(entries) = requirement else {
        return None;
    };
    entries.iter().find_map(|(k, v)| match (k, v) {
        (ObjectKey::Identifier(id), Expression::String(s)) if id.as_str() == "version" => Some(s.clone()),
        _ => None,
    })
}

fn tf_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            tf_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "tf") {
            out.push(path);
        }
    }
}

#[test]
fn every_example_and_snippet_pins_this_minor_release() {
    let version = provider_version();
    let minor = version.rsplit_once('.').map_or(version.as_str(), |(m, _)| m);
    let expected = format!("~> {minor}.0");
    let root = workspace_root();
    let mut sources: Vec<(String, String)> = Vec::new();
    let mut files = Vec::new();
    tf_files(&root.join("examples"), &mut files);
    for path in files {
        let place = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
        sources.push((place, std::fs::read_to_string(&path).expect("read example")));
    }
    let mut pages = vec!["README.md".to_string()];
    for dir in ["docs/guides", "templates"] {
        let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
            .expect("read dir")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(".md"))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        names.sort();
        pages.extend(names);
    }
    for page in pages {
        for (line, snippet) in snippets(&repo_file(&page)) {
            sources.push((format!("{page}:{line}"), snippet));
        }
    }
    let mut pinned = 0;
    let mut findings = Vec::new();
    for (place, text) in sources {
        let Ok(body) = hcl::parse(&text) else {
            continue; // doc_snippets.rs reports snippets that do not parse
        };
        for requirement in karpenter_requirements(&body) {
            match version_of(&requirement) {
                Some(v) if v == expected => pinned += 1,
                Some(v) => findings.push(format!("{place}: version = {v:?}, not {expected:?}")),
                None => findings.push(format!(
                    "{place}: karpenter is required without version = {expected:?}"
                )),
            }
        }
    }
    assert!(findings.is_empty(), "{}", findings.join("\n"));
    assert!(pinned >= 8, "only {pinned} pins found");
}

/// What `module.eks`'s outputs are in the test environment.
struct ClusterOutputs(BTreeMap<&'static str, String>);

impl ClusterOutputs {
    /// `module.eks.<name>` → its value, for a traversal or a template's `${…}`.
    fn substitute(&self, expr: &mut Expression, missing: &mut Vec<String>) {
        match expr {
            Expression::Traversal(t) => {
                let module_output = match (&t.expr, t.operators.as_slice()) {
                    (
                        Expression::Variable(v),
                        [TraversalOperator::GetAttr(m), TraversalOperator::GetAttr(name)],
                    ) if v.as_str() == "module" && m.as_str() == "eks" => Some(name.as_str().to_string()),
                    _ => None,
                };
                match module_output {
                    Some(name) => match self.0.get(name.as_str()) {
                        Some(value) => *expr = Expression::String(value.clone()),
                        None => missing.push(format!("module.eks.{name}")),
                    },
                    None => {
                        self.substitute(&mut t.expr, missing);
                        for op in &mut t.operators {
                            if let TraversalOperator::Index(e) = op {
                                self.substitute(e, missing);
                            }
                        }
                    }
                }
            }
            Expression::TemplateExpr(template) => {
                let text = match template.as_mut() {
                    hcl::expr::TemplateExpr::QuotedString(text) => text,
                    hcl::expr::TemplateExpr::Heredoc(heredoc) => &mut heredoc.template,
                };
                for (name, value) in &self.0 {
                    *text = text.replace(&format!("${{module.eks.{name}}}"), value);
                }
                if let Some(at) = text.find("${module.eks.") {
                    missing.push(text[at + 2..].chars().take_while(|c| *c != '}').collect());
                }
            }
            Expression::Array(items) => items.iter_mut().for_each(|e| self.substitute(e, missing)),
            Expression::Object(entries) => entries.values_mut().for_each(|e| self.substitute(e, missing)),
            Expression::FuncCall(f) => f.args.iter_mut().for_each(|e| self.substitute(e, missing)),
            Expression::Parenthesis(e) => self.substitute(e, missing),
            Expression::Conditional(c) => {
                self.substitute(&mut c.cond_expr, missing);
                self.substitute(&mut c.true_expr, missing);
                self.substitute(&mut c.false_expr, missing);
            }
            Expression::Operation(op) => match op.as_mut() {
                hcl::expr::Operation::Unary(u) => self.substitute(&mut u.expr, missing),
                hcl::expr::Operation::Binary(b) => {
                    self.substitute(&mut b.lhs_expr, missing);
                    self.substitute(&mut b.rhs_expr, missing);
                }
            },
            Expression::ForExpr(f) => {
                self.substitute(&mut f.collection_expr, missing);
                self.substitute(&mut f.value_expr, missing);
            }
            _ => {}
        }
    }

    fn substitute_body(&self, body: &mut Body, missing: &mut Vec<String>) {
        for structure in body.iter_mut() {
            match structure {
                Structure::Attribute(a) => self.substitute(&mut a.expr, missing),
                Structure::Block(b) => self.substitute_body(&mut b.body, missing),
            }
        }
    }
}

/// The roots of the references in `body` (`var.region` → `var`, `karpenter_node_role.this.arn`
/// → `karpenter_node_role`, `module.vpc.x` → `module`), in expressions and in templates.
fn reference_roots(body: &Body) -> Vec<String> {
    let text = hcl::format::to_string(body).unwrap_or_default();
    let pattern =
        regex::Regex::new(r"(?:^|[^A-Za-z0-9_.\-])([A-Za-z_][A-Za-z0-9_]*)\.[A-Za-z_]").expect("regex");
    let mut roots = Vec::new();
    for line in text.lines() {
        // String contents are blanked, except the `${…}` interpolations of templates.
        let mut scan = String::new();
        let mut in_string = false;
        let mut depth = 0;
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if in_string && depth == 0 {
                if c == '\\' {
                    i += 2;
                    scan.push(' ');
                    continue;
                }
                if c == '"' {
                    in_string = false;
                } else if c == '$' && chars.get(i + 1) == Some(&'{') {
                    depth = 1;
                    scan.push(' ');
                    i += 2;
                    continue;
                }
                scan.push(' ');
            } else if in_string {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                scan.push(if depth == 0 { ' ' } else { c });
            } else {
                if c == '"' {
                    in_string = true;
                }
                scan.push(c);
            }
            i += 1;
        }
        for cap in pattern.captures_iter(&scan) {
            roots.push(cap[1].to_string());
        }
    }
    roots
}

/// Drops from `body`'s `depends_on` the entries whose root `keep` refuses (blocks the test
/// leaves out: a `depends_on` only orders, nothing is read from it), and the attribute when none
/// is left.
fn drop_left_out_dependencies(body: &mut Body, keep: impl Fn(&str) -> bool) {
    body.0.retain_mut(|structure| {
        let Structure::Attribute(attribute) = structure else {
            return true;
        };
        if attribute.key.as_str() != "depends_on" {
            return true;
        }
        let Expression::Array(items) = &mut attribute.expr else {
            return true;
        };
        items.retain(|item| match item {
            Expression::Traversal(t) => match &t.expr {
                Expression::Variable(root) => keep(root.as_str()),
                _ => true,
            },
            _ => true,
        });
        !items.is_empty()
    });
}

/// The example's `provider "karpenter"`, `karpenter_*` resources, variables and outputs, with
/// `module.eks`'s outputs replaced and every AWS endpoint at `aws_endpoint`; and what could not
/// be kept (a reference of a kept block to a left-out one, an output with no stand-in).
fn karpenter_part(example: &Body, outputs: &ClusterOutputs, aws_endpoint: &str) -> (String, Vec<String>) {
    let mut findings = Vec::new();
    let mut kept = Body::builder();
    // Only this provider's requirement: the others are not installed here.
    let requirement = karpenter_requirements(example)
        .into_iter()
        .next()
        .expect("the example requires the karpenter provider");
    kept = kept.add_block(
        Block::builder("terraform")
            .add_block(
                Block::builder("required_providers")
                    .add_attribute(("karpenter", requirement))
                    .build(),
            )
            .build(),
    );
    let allowed = |root: &str| root == "var" || root.starts_with("karpenter_");
    for block in example.blocks() {
        let address = address(block);
        let is_karpenter = address == "provider karpenter"
            || (block.identifier.as_str() == "resource"
                && block
                    .labels
                    .first()
                    .is_some_and(|l| l.as_str().starts_with("karpenter_")));
        let keep = is_karpenter || matches!(block.identifier.as_str(), "variable" | "output");
        if !keep {
            continue;
        }
        let mut block = block.clone();
        if is_karpenter {
            drop_left_out_dependencies(&mut block.body, allowed);
        }
        let mut missing = Vec::new();
        outputs.substitute_body(&mut block.body, &mut missing);
        for m in missing {
            findings.push(format!("`{address}` uses {m}, which has no test value"));
        }
        let foreign: std::collections::BTreeSet<String> = reference_roots(&block.body)
            .into_iter()
            .filter(|r| !allowed(r))
            .collect();
        if !foreign.is_empty() {
            if is_karpenter {
                findings.push(format!(
                    "`{address}` refers to {foreign:?}, which this test leaves out"
                ));
            }
            continue;
        }
        if address == "provider karpenter" {
            let endpoints = ["iam", "sqs", "events", "sts", "ec2", "eks"]
                .iter()
                .fold(Block::builder("endpoints"), |b, service| {
                    b.add_attribute((*service, aws_endpoint))
                })
                .build();
            match block.body.blocks_mut().find(|b| b.identifier.as_str() == "aws") {
                Some(aws) => aws.body.0.push(Structure::Block(endpoints)),
                None => findings.push("`provider karpenter` has no aws {} block".to_string()),
            }
        }
        kept = kept.add_block(block);
    }
    let text = hcl::format::to_string(&kept.build()).unwrap_or_else(|e| panic!("format: {e}"));
    (text, findings)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_examples_karpenter_part_applies_replans_empty_and_destroys() {
    let example = parse(EXAMPLE, &repo_file(EXAMPLE));
    let cluster_name = example
        .blocks()
        .find(|b| address(b) == "variable cluster_name")
        .and_then(|b| b.body.attributes().find(|a| a.key.as_str() == "default").cloned())
        .and_then(|a| match a.expr {
            Expression::String(s) => Some(s),
            _ => None,
        })
        .expect("variable \"cluster_name\" with a default");

    let cluster = Cluster::start(Config {
        crd_dirs: vec![TestServer::shared_crds_dir("v1")],
        controller: ControllerConfig::karpenter(),
        eks_tokens: true,
        ..Config::default()
    });
    let moto = Moto::start();
    let eks = aws_sdk_eks::Client::new(&moto.sdk_config());
    eks.create_cluster()
        .name(&cluster_name)
        .role_arn("arn:aws:iam::123456789012:role/eks")
        .resources_vpc_config(aws_sdk_eks::types::VpcConfigRequest::builder().build())
        .send()
        .await
        .expect("CreateCluster");
    let proxy = FaultProxy::start(moto.port());

    let outputs = ClusterOutputs(BTreeMap::from([
        ("cluster_name", cluster_name.clone()),
        ("cluster_endpoint", cluster.server.base_url()),
        (
            "cluster_certificate_authority_data",
            base64::engine::general_purpose::STANDARD.encode(cluster.server.ca_pem()),
        ),
    ]));
    let (config, findings) = karpenter_part(&example, &outputs, &proxy.endpoint());
    assert!(findings.is_empty(), "{}\n\n{config}", findings.join("\n"));
    assert!(
        config.contains("var.region") && config.contains("eks {"),
        "the example's provider block is applied as written:\n{config}"
    );

    let mut work = Workdir::new(&config);
    moto::configure_env(&mut work);
    let plan = work.plan().ok();
    for address in [
        "karpenter_node_role.this",
        "karpenter_interruption_queue.this",
        "karpenter_controller_role.this",
        "karpenter_ec2_node_class.default",
        "karpenter_node_pool.default",
        "karpenter_node_pool.on_demand",
    ] {
        assert!(
            plan.stdout.contains(&format!("# {address} will be created")),
            "{address} not planned:\n{}",
            plan.output()
        );
    }
    work.apply().ok();

    let state = work.state();
    let node_role_arn = resource_at(&state, "karpenter_node_role.this")["values"]["arn"]
        .as_str()
        .expect("node role arn")
        .to_string();
    assert_eq!(
        resource_at(&state, "karpenter_node_role.this")["values"]["access_entry_type"],
        "EC2_LINUX"
    );
    let entries = proxy.access_entries().list();
    assert!(
        entries
            .iter()
            .any(|(c, p, kind, _)| *c == cluster_name && *p == node_role_arn && kind == "EC2_LINUX"),
        "{entries:?}"
    );
    let trust = resource_at(&state, "karpenter_controller_role.this")["values"]["assume_role_policy"]
        .as_str()
        .expect("trust policy")
        .to_string();
    assert!(trust.contains("pods.eks.amazonaws.com"), "{trust}");
    // The controller role takes the charts' version (var.karpenter_version), not the newest.
    let karpenter_version = example
        .blocks()
        .find(|b| address(b) == "variable karpenter_version")
        .and_then(|b| b.body.attributes().find(|a| a.key.as_str() == "default").cloned())
        .and_then(|a| match a.expr {
            Expression::String(s) => Some(s),
            _ => None,
        })
        .expect("variable \"karpenter_version\" with a default");
    assert_eq!(
        resource_at(&state, "karpenter_controller_role.this")["values"]["karpenter_version"],
        karpenter_version.as_str()
    );
    let class = cluster.node_class("default").expect("EC2NodeClass default");
    let ready = class["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    assert!(ready, "{class}");
    assert!(cluster.node_pool("default").is_some() && cluster.node_pool("on-demand").is_some());
    assert_eq!(
        work.outputs()["node_pools"]["value"],
        serde_json::json!(["default", "on-demand"])
    );

    assert!(work.plan_is_empty(), "{}", work.plan().output());
    work.destroy().ok();
    assert!(cluster.node_pool("default").is_none() && cluster.node_class("default").is_none());
    assert!(proxy.access_entries().list().is_empty());
}

/// The substitution fails loudly on what it cannot stand in for, and the reference check finds
/// what the Karpenter part would need from the left-out blocks; a `depends_on` on a left-out
/// block is dropped, one on a kept block stays.
#[test]
fn the_karpenter_part_reports_what_it_cannot_stand_in_for() {
    let example = parse(
        "test",
        r#"
terraform {
  required_providers {
    karpenter = { source = "karpenter/karpenter", version = "~> 0.1.0" }
  }
}
provider "karpenter" {
  kubernetes {
    host = module.eks.cluster_endpoint
  }
  aws {
    region = var.region
  }
}
resource "karpenter_node_role" "this" {
  name       = "nodes-${module.eks.cluster_name}"
  depends_on = [aws_iam_service_linked_role.spot, karpenter_interruption_queue.this]
}
resource "karpenter_interruption_queue" "this" {
  cluster_name = module.eks.cluster_id
  tags         = { vpc = module.vpc.vpc_id, note = "not.a_reference" }
}
resource "helm_release" "karpenter" {
  name = "karpenter"
}
output "vpc" {
  value = module.vpc.vpc_id
}
"#,
    );
    let outputs = ClusterOutputs(BTreeMap::from([
        ("cluster_name", "demo".to_string()),
        ("cluster_endpoint", "https://127.0.0.1:1".to_string()),
    ]));
    let (config, findings) = karpenter_part(&example, &outputs, "http://127.0.0.1:2");
    let text = findings.join("\n");
    assert!(
        text.contains("`resource karpenter_interruption_queue this` uses module.eks.cluster_id"),
        "{text}"
    );
    assert!(
        text.contains("`resource karpenter_interruption_queue this` refers to {\"module\"}"),
        "{text}"
    );
    assert_eq!(findings.len(), 2, "{text}");
    assert!(config.contains("\"nodes-demo\""), "{config}");
    assert!(
        !config.contains("aws_iam_service_linked_role")
            && config.contains("depends_on = [\n    karpenter_interruption_queue.this\n  ]"),
        "{config}"
    );
    assert!(config.contains("\"https://127.0.0.1:1\""), "{config}");
    assert_eq!(config.matches("\"http://127.0.0.1:2\"").count(), 6, "{config}");
    assert!(
        !config.contains("helm_release") && !config.contains("output \"vpc\""),
        "{config}"
    );
}
