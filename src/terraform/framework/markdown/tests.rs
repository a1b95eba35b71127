use super::*;
use crate::terraform::framework::timeouts;
use crate::terraform::framework::validate::{self as v, Validator};
use crate::terraform::framework::values::object;
use crate::terraform::tfvalue::Number;

fn sample() -> Schema {
    Schema::new(
        "Manages a widget.",
        vec![
            Attribute::string("name")
                .required()
                .replace_on_change()
                .describe("The widget's name.")
                .validate(v::non_empty()),
            Attribute::string("token").sensitive().describe("API token"),
            Attribute::number("replicas")
                .describe("How many.")
                .default_value(Value::Number(Number::from_i64(3))),
            Attribute::string("id").computed().describe("The widget's ID."),
            Attribute::object(
                "spec",
                vec![
                    Attribute::list_of_objects(
                        "budgets",
                        vec![
                            Attribute::string("nodes").required().describe("Nodes."),
                            Attribute::map_of_objects(
                                "deep",
                                vec![Attribute::bool("flag").describe("A flag.")],
                            ),
                        ],
                    )
                    .describe("Budgets.")
                    .default_value(Value::List(vec![object([
                        ("nodes", Value::string("10%")),
                        ("deep", Value::Null),
                    ])])),
                    Attribute::list_of("tags", Type::String).describe("Tags."),
                ],
            )
            .required()
            .describe("The specification."),
            Attribute::object("status", vec![Attribute::string("phase").describe("Phase.")])
                .computed()
                .describe("Observed status."),
        ],
    )
    .with_blocks(vec![timeouts::block(&[("create", "10m")])])
}

fn page(example: Option<&str>, import: Option<&str>) -> String {
    render_page(
        &Page {
            kind: PageKind::Resource,
            type_name: "acme_widget",
            provider_name: "acme",
            subcategory: "",
            example,
            import,
            identity: None,
            import_by_identity: None,
            key_check_guide: None,
        },
        &sample(),
    )
}

fn identity() -> IdentitySchema {
    IdentitySchema::new(vec![
        IdentityAttribute::required("name", "The widget's name."),
        IdentityAttribute::required("zone_name", "Its zone."),
        IdentityAttribute::optional("account_id", "The account; the provider's when left out."),
    ])
}

fn identity_page(import: Option<&str>, import_by_identity: Option<&str>) -> String {
    let identity = identity();
    render_page(
        &Page {
            kind: PageKind::Resource,
            type_name: "acme_widget",
            provider_name: "acme",
            subcategory: "",
            example: None,
            import,
            identity: Some(&identity),
            import_by_identity,
            key_check_guide: None,
        },
        &sample(),
    )
}

/// The lines of the list under `heading` (a `### X` or `X:` line) up to the blank line.
fn section<'a>(doc: &'a str, heading: &str) -> Vec<&'a str> {
    let mut lines = doc.lines().skip_while(|l| *l != heading).skip(2);
    let mut out = Vec::new();
    for l in lines.by_ref() {
        if l.is_empty() {
            break;
        }
        out.push(l);
    }
    out
}

fn names(lines: &[&str]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split_once('`').map(|(n, _)| n.to_string()))
        .collect()
}

#[test]
fn splits_required_optional_and_read_only() {
    let doc = page(None, None);
    let top = |h| names(&section(&doc, h));
    assert_eq!(top("### Required"), ["name", "spec"]);
    assert_eq!(top("### Optional"), ["token", "replicas", "timeouts"]);
    assert_eq!(top("### Read-Only"), ["id", "status"]);
}

#[test]
fn nested_attributes_get_their_own_sections_at_any_depth() {
    let doc = page(None, None);
    assert!(doc.contains(
        "- `spec` (Attributes, see [below for nested schema](#nestedatt--spec)) The specification."
    ));
    assert!(doc.contains("<a id=\"nestedatt--spec\"></a>\n### Nested Schema for `spec`\n"));
    assert!(doc.contains("(Attributes List, see [below for nested schema](#nestedatt--spec--budgets))"));
    assert!(doc.contains("<a id=\"nestedatt--spec--budgets\"></a>\n### Nested Schema for `spec.budgets`"));
    assert!(doc.contains("(Attributes Map, see [below for nested schema](#nestedatt--spec--budgets--deep))"));
    assert!(doc.contains("### Nested Schema for `spec.budgets.deep`"));
    assert!(doc.contains("- `tags` (List of String) Tags."));
    // every link has its anchor
    for link in doc.split("](#").skip(1) {
        let target = link.split(')').next().unwrap_or_default();
        assert!(
            doc.contains(&format!("<a id=\"{target}\"></a>")),
            "no anchor for {target}"
        );
    }
    // the nested sections split by mode too
    let spec_budgets = doc
        .split("### Nested Schema for `spec.budgets`")
        .nth(1)
        .unwrap_or_default();
    assert_eq!(names(&section(spec_budgets, "Required:")), ["nodes"]);
    assert_eq!(names(&section(spec_budgets, "Optional:")), ["deep"]);
}

#[test]
fn children_of_computed_attributes_are_read_only() {
    let doc = page(None, None);
    let status = doc
        .split("### Nested Schema for `status`")
        .nth(1)
        .unwrap_or_default();
    let status = status.split("<a id=").next().unwrap_or_default();
    assert_eq!(names(&section(status, "Read-Only:")), ["phase"]);
    assert!(!status.contains("Optional:"));
}

#[test]
fn blocks_get_block_sections() {
    let doc = page(None, None);
    assert!(doc.contains("- `timeouts` (Block, see [below for nested schema](#nestedblock--timeouts))"));
    assert!(doc.contains("<a id=\"nestedblock--timeouts\"></a>\n### Nested Schema for `timeouts`"));
    assert!(doc.contains("- `create` (String) How long create may take"));
}

#[test]
fn defaults_sensitive_validators_and_replacement_are_stated() {
    let doc = page(None, None);
    assert!(doc.contains("- `replicas` (Number) How many. Default `3`.\n"));
    assert!(doc.contains("- `token` (String) API token. Sensitive.\n"));
    let name_line = doc
        .lines()
        .find(|l| l.starts_with("- `name`"))
        .unwrap_or_default();
    assert!(name_line.contains("The widget's name."));
    assert!(name_line.contains(&v::non_empty().description()));
    assert!(name_line.ends_with("Changing this replaces the resource."));
    assert!(doc.contains("Default `[{ nodes = \"10%\" }]`."));
}

#[test]
fn renders_defaults_as_compact_hcl() {
    assert_eq!(render_default(&Value::string("720h")), "720h");
    assert_eq!(render_default(&Value::Bool(false)), "false");
    assert_eq!(
        render_default(&Value::Map([("a b".to_string(), Value::string("x\"y"))].into())),
        r#"{ "a b" = "x\"y" }"#
    );
    assert_eq!(
        render_default(&object([
            ("z", Value::List(vec![])),
            ("a", Value::Number(Number::from_i64(1))),
            ("n", Value::Null)
        ])),
        "{ a = 1, z = [] }"
    );
}

#[test]
fn type_labels_follow_terraform_docs() {
    assert_eq!(type_label(&Attribute::map_of("m", Type::String)), "Map of String");
    assert_eq!(
        type_label(&Attribute::set_of("s", Type::list(Type::Number))),
        "Set of List of Number"
    );
    assert_eq!(
        type_label(&Attribute::set_of_objects("o", vec![])),
        "Attributes Set"
    );
    assert_eq!(type_label(&Attribute::bool("b")), "Bool");
}

#[test]
fn page_has_front_matter_title_example_and_import() {
    let doc = page(
        Some("resource \"acme_widget\" \"x\" {}\n\n"),
        Some("terraform import acme_widget.x x\n"),
    );
    assert!(doc.starts_with(&format!(
        "---\n{GENERATED_MARKER}\npage_title: \"acme_widget Resource - terraform-provider-acme\"\nsubcategory: \"\"\ndescription: |-\n  Manages a widget.\n---\n\n# acme_widget (Resource)\n\nManages a widget.\n\n## Example Usage\n\n```terraform\nresource \"acme_widget\" \"x\" {{}}\n```\n\n## Schema\n"
    )));
    assert!(doc.ends_with("## Import\n\nImport is supported using the following syntax:\n\n```shell\nterraform import acme_widget.x x\n```\n"));
    assert!(!page(None, None).contains("## Import"));
    assert!(!page(None, None).contains("## Example Usage"));
}

#[test]
fn identity_follows_the_import_by_id() {
    let doc = identity_page(
        Some("terraform import acme_widget.x x\n"),
        Some("import {\n  to = acme_widget.x\n  identity = {\n    name = \"x\"\n  }\n}\n"),
    );
    let import = doc.split("## Import\n\n").nth(1).unwrap_or_default();
    assert!(import.starts_with(
        "Import is supported using the following syntax:\n\n```shell\nterraform import acme_widget.x x\n```\n\n\
         In Terraform v1.12.0 and later, the [`import` block]"
    ));
    assert!(import.contains(
        "for example:\n\n```terraform\nimport {\n  to = acme_widget.x\n  identity = {\n    name = \"x\"\n  }\n}\n```\n\n### Identity Schema\n\n#### Required\n\n"
    ));
    assert_eq!(names(&section(import, "#### Required")), ["name", "zone_name"]);
    assert_eq!(names(&section(import, "#### Optional")), ["account_id"]);
    assert!(doc.contains("- `account_id` (String) The account; the provider's when left out.\n"));
    assert!(doc.ends_with("- `account_id` (String) The account; the provider's when left out.\n"));
    // the schema reference comes before, unchanged
    assert!(doc.find("## Schema").unwrap_or(usize::MAX) < doc.find("## Import").unwrap_or_default());
}

#[test]
fn identity_import_example_is_generated_from_the_required_attributes() {
    let doc = identity_page(None, None);
    assert!(!doc.contains("Import is supported using the following syntax"));
    assert!(doc.contains(
        "## Import\n\nIn Terraform v1.12.0 and later, the [`import` block](https://developer.hashicorp.com/terraform/language/import) can also"
    ));
    assert!(doc.contains(
        "```terraform\nimport {\n  to = acme_widget.example\n  identity = {\n    name      = \"example\"\n    zone_name = \"example\"\n  }\n}\n```\n"
    ));
    assert_eq!(
        identity_import_example("acme_widget", &IdentitySchema::new(vec![])),
        "import {\n  to = acme_widget.example\n  identity = {\n  }\n}\n"
    );
}

#[test]
fn list_resource_page_documents_the_config_block() {
    let schema = Schema::new(
        "Finds widgets.",
        vec![
            Attribute::string("name_prefix").describe("Only widgets whose name starts with this."),
            Attribute::string("zone")
                .replace_on_change()
                .describe("Only widgets in this zone."),
        ],
    );
    let doc = render_page(
        &Page {
            kind: PageKind::ListResource,
            type_name: "acme_widget",
            provider_name: "acme",
            subcategory: "",
            example: Some("list \"acme_widget\" \"all\" {\n  provider = acme\n}\n"),
            import: None,
            identity: None,
            import_by_identity: None,
            key_check_guide: None,
        },
        &schema,
    );
    assert!(doc.starts_with(&format!(
        "---\n{GENERATED_MARKER}\npage_title: \"acme_widget List Resource - acme\"\nsubcategory: \"\"\ndescription: |-\n  Finds widgets.\n---\n\n# acme_widget (List Resource)\n\nFinds widgets.\n\nA `list \"acme_widget\"` block in a `.tfquery.hcl` file"
    )));
    assert!(doc.contains("[identity](../resources/widget.md#identity-schema)"));
    assert!(doc.contains(
        "## Example Usage\n\n```terraform\nlist \"acme_widget\" \"all\" {\n  provider = acme\n}\n```\n\n## Schema\n\n### Optional\n\n"
    ));
    assert_eq!(names(&section(&doc, "### Optional")), ["name_prefix", "zone"]);
    assert!(!doc.contains("replaces"));
    assert!(!doc.contains("## Import"));
}

#[test]
fn output_is_deterministic() {
    assert_eq!(page(Some("x"), None), page(Some("x"), None));
}

#[test]
fn provider_page_mentions_env_fallbacks_and_guide() {
    let schema = Schema::new("The acme provider.", vec![]).with_blocks(vec![
        Block::single(
            "api",
            vec![
                Attribute::string("host").describe("Host").env(&["ACME_HOST"]),
                Attribute::string("region").env(&["ACME_REGION", "ACME_DEFAULT_REGION"]),
            ],
        )
        .describe("API access.")
        .with_blocks(vec![Block::single(
            "exec",
            vec![Attribute::string("command").required()],
        )]),
    ]);
    let doc = render_provider_page(
        &ProviderPage {
            provider_name: "acme",
            example: Some("provider \"acme\" {}"),
            guide: Some("## Authentication\n\nUse a token."),
        },
        &schema,
    );
    assert!(doc.contains("# acme Provider\n\nThe acme provider.\n\n## Example Usage\n"));
    assert!(doc.contains("```\n\n## Authentication\n\nUse a token.\n\n## Schema\n"));
    assert!(
        doc.contains("- `host` (String) Host. Can also be set with the `ACME_HOST` environment variable.")
    );
    assert!(doc.contains(
        "- `region` (String) Can also be set with the `ACME_REGION` or `ACME_DEFAULT_REGION` environment variables"
    ));
    assert!(doc.contains("<a id=\"nestedblock--api--exec\"></a>\n### Nested Schema for `api.exec`"));
    let exec = doc
        .split("### Nested Schema for `api.exec`")
        .nth(1)
        .unwrap_or_default();
    assert_eq!(names(&section(exec, "Required:")), ["command"]);
}
