//! The address of a resource in the configuration (`karpenter_node_pool.default`), for
//! messages that tell the user what to write (an `import {}` block's `to`).
//!
//! Terraform does not send it: tfplugin6's `ApplyResourceChange` carries the resource type, the
//! prior and planned states and the configuration's values, never the address (Terraform only
//! prints it above a diagnostic, as `with <address>,`). The provider runs in the root module's
//! directory (Terraform starts it there, after `-chdir`), so the address can be found where it is
//! unambiguous: the one `resource "<type>" "<label>"` block of the root module's `.tf` files
//! whose attributes have the given literal values and that has neither `count` nor `for_each`
//! (whose instance keys the values would not tell). A resource in a child module, one whose
//! identifying attribute is an expression, or several matches give `None`, and the caller says
//! where Terraform shows the address instead.

use std::path::Path;

/// The address of the resource of `type_name` in the root module (the working directory)
/// whose configuration sets each `(attribute, value)` of `literals` to that literal string.
pub fn in_root_module(type_name: &str, literals: &[(&str, &str)]) -> Option<String> {
    let dir = std::env::current_dir().ok()?;
    in_dir(&dir, type_name, literals)
}

/// [`in_root_module`] for the module in `dir`.
pub fn in_dir(dir: &Path, type_name: &str, literals: &[(&str, &str)]) -> Option<String> {
    let mut found: Vec<String> = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "tf"))
        .collect();
    files.sort();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        // A file that does not parse is Terraform's to report; it names nothing here.
        let Ok(body) = hcl_edit::parser::parse_body(&text) else {
            continue;
        };
        for block in body.blocks().filter(|b| b.ident.value().as_str() == "resource") {
            let [ty, label] = block.labels.as_slice() else {
                continue;
            };
            if ty.as_str() != type_name {
                continue;
            }
            let literal = |key: &str| block.body.get_attribute(key).and_then(|a| a.value.as_str());
            let repeated = block.body.has_attribute("count") || block.body.has_attribute("for_each");
            if !repeated && literals.iter().all(|(key, value)| literal(key) == Some(value)) {
                found.push(format!("{type_name}.{}", label.as_str()));
            }
        }
    }
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write");
        }
        dir
    }

    #[test]
    fn finds_the_one_block_with_the_literal_value() {
        let dir = module(&[
            (
                "main.tf",
                r#"
resource "karpenter_node_pool" "default" {
  name = "default"
  template = { spec = { node_class_ref = { name = "x" } } }
}
resource "karpenter_node_pool" "gpu" {
  name = "gpu"
}
"#,
            ),
            (
                "other.tf",
                "resource \"karpenter_ec2_node_class\" \"gpu\" {\n  name = \"gpu\"\n}\n",
            ),
            (
                "notes.txt",
                "resource \"karpenter_node_pool\" \"nope\" { name = \"gpu\" }",
            ),
        ]);
        assert_eq!(
            in_dir(dir.path(), "karpenter_node_pool", &[("name", "gpu")]).as_deref(),
            Some("karpenter_node_pool.gpu")
        );
        assert_eq!(
            in_dir(dir.path(), "karpenter_ec2_node_class", &[("name", "gpu")]).as_deref(),
            Some("karpenter_ec2_node_class.gpu")
        );
        assert_eq!(
            in_dir(dir.path(), "karpenter_node_pool", &[("name", "absent")]),
            None
        );
    }

    /// Where the address cannot be told for sure, none is guessed.
    #[test]
    fn ambiguous_computed_or_repeated_names_give_none() {
        let dir = module(&[(
            "main.tf",
            r#"
variable "n" { default = "v" }
resource "karpenter_node_pool" "a" { name = "same" }
resource "karpenter_node_pool" "b" { name = "same" }
resource "karpenter_node_pool" "c" { name = var.n }
resource "karpenter_node_pool" "d" {
  count = 2
  name  = "many"
}
resource "karpenter_node_pool" "e" { name = "pool-${var.n}" }
"#,
        )]);
        for name in ["same", "v", "many", "pool-v"] {
            assert_eq!(
                in_dir(dir.path(), "karpenter_node_pool", &[("name", name)]),
                None,
                "{name}"
            );
        }
        let broken = module(&[("main.tf", "resource \"karpenter_node_pool\" {")]);
        assert_eq!(
            in_dir(broken.path(), "karpenter_node_pool", &[("name", "x")]),
            None
        );
    }
}
