//! #28, "docs that say what is true": the Terraform snippets of the README, the guides and the
//! provider page's template (```` ```hcl ```` and ```` ```terraform ```` blocks) must parse, every
//! `karpenter_*` block in them must fit the schema (as `examples_static.rs` checks the examples),
//! and every reference to a resource or data source (`aws_sqs_queue.karpenter.arn`,
//! `data.aws_caller_identity.current`) must name one the same page declares, with an attribute
//! the schema has for the provider's own types. Addresses in `import`, `moved` and `removed`
//! blocks are not references; a snippet that elides (`# ...`) skips the schema check.

use std::collections::BTreeSet;

use acceptance_tests::workspace_root;
use hcl::{Body, Expression, TraversalOperator};
use terraform_provider_karpenter::provider::KarpenterProvider;
use terraform_provider_karpenter::terraform::framework::Provider;

use crate::examples_static::check_source;

/// Roots of references that are not resources.
const NOT_RESOURCES: &[&str] = &[
    "var",
    "local",
    "module",
    "each",
    "count",
    "path",
    "self",
    "terraform",
    "provider",
];

/// The Terraform snippets of a Markdown text, with the line each starts on.
pub(crate) fn snippets(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut current {
            None if matches!(line.trim(), "```hcl" | "```terraform") => current = Some((i + 1, Vec::new())),
            Some((start, lines)) if line.trim() == "```" => {
                out.push((*start, lines.join("\n")));
                current = None;
            }
            Some((_, lines)) => lines.push(line),
            None => {}
        }
    }
    out
}

/// Every reference (`a.b.c`, as names) in an expression.
fn references(expr: &Expression, out: &mut Vec<Vec<String>>) {
    match expr {
        Expression::Variable(v) => out.push(vec![v.as_str().to_string()]),
        Expression::Traversal(t) => {
            if let Expression::Variable(v) = &t.expr {
                let mut chain = vec![v.as_str().to_string()];
                for op in &t.operators {
                    match op {
                        TraversalOperator::GetAttr(name) => chain.push(name.as_str().to_string()),
                        _ => break,
                    }
                }
                out.push(chain);
            } else {
                references(&t.expr, out);
            }
            for op in &t.operators {
                if let TraversalOperator::Index(e) = op {
                    references(e, out);
                }
            }
        }
        Expression::Array(items) => items.iter().for_each(|e| references(e, out)),
        Expression::Object(o) => o.values().for_each(|e| references(e, out)),
        Expression::FuncCall(f) => f.args.iter().for_each(|e| references(e, out)),
        Expression::Parenthesis(e) => references(e, out),
        Expression::Conditional(c) => {
            references(&c.cond_expr, out);
            references(&c.true_expr, out);
            references(&c.false_expr, out);
        }
        Expression::Operation(op) => match op.as_ref() {
            hcl::expr::Operation::Unary(u) => references(&u.expr, out),
            hcl::expr::Operation::Binary(b) => {
                references(&b.lhs_expr, out);
                references(&b.rhs_expr, out);
            }
        },
        Expression::ForExpr(f) => {
            references(&f.collection_expr, out);
            references(&f.value_expr, out);
        }
        _ => {}
    }
}

/// Blocks whose attributes are addresses (`to = karpenter_node_pool.default`), not references.
const ADDRESS_BLOCKS: &[&str] = &["import", "moved", "removed"];

fn body_references(body: &Body, out: &mut Vec<Vec<String>>) {
    for attribute in body.attributes() {
        references(&attribute.expr, out);
    }
    for block in body.blocks() {
        if !ADDRESS_BLOCKS.contains(&block.identifier.as_str()) {
            body_references(&block.body, out);
        }
    }
}

/// What a page declares: (`resource`|`data`, type, name).
fn declarations(body: &Body, out: &mut BTreeSet<(String, String, String)>) {
    for block in body.blocks() {
        let kind = block.identifier.as_str();
        let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
        if let ("resource" | "data", [ty, name]) = (kind, labels.as_slice()) {
            out.insert((kind.to_string(), ty.to_string(), name.to_string()));
        }
    }
}

/// The findings for one page: snippets that do not parse, blocks that do not fit the schema,
/// references to what the page does not declare or the schema does not have.
fn check_page(provider: &KarpenterProvider, place: &str, text: &str) -> (usize, Vec<String>) {
    let mut findings = Vec::new();
    let mut parsed = Vec::new();
    for (line, snippet) in snippets(text) {
        match hcl::parse(&snippet) {
            Ok(body) => parsed.push((line, snippet, body)),
            Err(e) => findings.push(format!("{place}:{line}: not valid HCL: {e}")),
        }
    }
    let mut declared = BTreeSet::new();
    for (_, _, body) in &parsed {
        declarations(body, &mut declared);
    }
    let has_attribute = |kind: &str, ty: &str, attribute: &str| {
        let schema = if kind == "data" {
            provider
                .data_sources()
                .iter()
                .find(|d| d.type_name() == ty)
                .map(|d| d.schema())
        } else {
            provider
                .resources()
                .iter()
                .find(|r| r.type_name() == ty)
                .map(|r| r.schema())
        };
        schema.is_none_or(|s| s.attribute(attribute).is_some() || s.block(attribute).is_some())
    };
    for (line, snippet, body) in &parsed {
        // A snippet that elides what it does not show (`# ...`) is not checked against the
        // schema; its references still are.
        if !snippet.contains("# ...") {
            findings.extend(check_source(provider, &format!("{place}:{line}"), snippet).1);
        }
        let mut refs = Vec::new();
        body_references(body, &mut refs);
        for chain in refs {
            let (kind, rest) = match chain.first().map(String::as_str) {
                Some("data") => ("data", &chain[1..]),
                Some(head) if head.contains('_') && !NOT_RESOURCES.contains(&head) => {
                    ("resource", &chain[..])
                }
                _ => continue,
            };
            let [ty, name, attribute @ ..] = rest else {
                continue;
            };
            if !declared.contains(&(kind.to_string(), ty.clone(), name.clone())) {
                findings.push(format!(
                    "{place}:{line}: {} refers to {kind} {ty}.{name}, which the page does not declare",
                    chain.join(".")
                ));
                continue;
            }
            if let Some(attribute) = attribute.first()
                && ty.starts_with("karpenter_")
                && !has_attribute(kind, ty, attribute)
            {
                findings.push(format!(
                    "{place}:{line}: {ty} has no attribute {attribute} ({})",
                    chain.join(".")
                ));
            }
        }
    }
    (parsed.len(), findings)
}

fn pages() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut paths = vec![root.join("README.md"), root.join("templates/authentication.md")];
    let mut guides: Vec<_> = std::fs::read_dir(root.join("docs/guides"))
        .expect("docs/guides")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guides.sort();
    paths.extend(guides);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.strip_prefix(&root).unwrap_or(&p).display().to_string(), text)
        })
        .collect()
}

#[test]
fn doc_snippets_parse_fit_the_schema_and_declare_what_they_reference() {
    let provider = KarpenterProvider::new();
    let mut checked = 0;
    let mut findings = Vec::new();
    for (place, text) in pages() {
        let (n, f) = check_page(&provider, &place, &text);
        checked += n;
        findings.extend(f);
    }
    assert!(
        findings.is_empty(),
        "{} problems in the docs' snippets:\n{}",
        findings.len(),
        findings.join("\n")
    );
    assert!(checked >= 10, "only {checked} snippets checked");
}

/// The checker itself finds what #28 found in the README.
#[test]
fn the_snippet_checker_finds_undeclared_references_and_unknown_attributes() {
    let provider = KarpenterProvider::new();
    let page = r#"
```hcl
data "karpenter_controller_policy" "this" {
  cluster_name           = "demo"
  region                 = "us-east-1"
  account_id             = data.aws_caller_identity.current.account_id
  node_role_arn          = aws_iam_role.karpenter_node.arn
  interruption_queue_arn = karpenter_interruption_queue.q.queue_url_typo
}

resource "karpenter_interruption_queue" "q" {
  cluster_name = "demo"
}
```
"#;
    let (_, findings) = check_page(&provider, "page.md", page);
    let text = findings.join("\n");
    assert!(
        text.contains("data aws_caller_identity.current, which the page does not declare"),
        "{text}"
    );
    assert!(text.contains("resource aws_iam_role.karpenter_node"), "{text}");
    assert!(text.contains("has no attribute queue_url_typo"), "{text}");
    assert_eq!(findings.len(), 3, "{text}");
}
