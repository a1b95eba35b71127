//! The committed data is what the generator writes from the upstream files at hand in
//! `../shared/karpenter` (the v1.14 instance-type reference and prices, the v1.14
//! cloudformation.yaml, the CRDs of every v1 minor and of `main` as v1.15's stand-in), and the
//! parsers read what they should. The ENI columns of the instance-type table come from
//! `zz_generated.vpclimits.go` of Karpenter's `main` after v1.14.1 (commit 1d927085, as the
//! table's header says; the v1.14.1 tag's own file lacks 55 of v1.14's types), which `../shared`
//! does not hold: they cannot be regenerated here, and the provider's `instance_types` tests
//! check them against the pod counts instead (Karpenter's ENI-limited formula).

use std::path::{Path, PathBuf};

use super::cloudformation::{self, AddedAction};
use super::instance_types::{self, ENI_COLUMNS, Sources};
use super::{Args, crds, data_dir, minor, provider_build};
use crate::upstream;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines that carry data: `@` metadata and rows (the `#` header says where they came from).
fn data_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with('#')).collect()
}

fn assert_same(what: &str, ours: &str, committed: &str) {
    let (ours, committed) = (data_lines(ours), data_lines(committed));
    let first = ours.iter().zip(&committed).position(|(a, b)| a != b);
    assert!(
        ours == committed,
        "{what} is stale (first difference at data line {first:?}; {} lines generated, {} committed): \
         run scripts/karpenter-release.sh (CONTRIBUTING.md, \"A new Karpenter release\")",
        ours.len(),
        committed.len()
    );
}

#[test]
fn the_instance_type_table_is_the_shared_reference_and_prices() {
    let dir = upstream("reference/instance-types");
    let types =
        instance_types::parse_reference(&read(&dir.join("instance-types-v1.14.md"))).expect("reference");
    let (prices, at) =
        instance_types::parse_prices(&read(&dir.join("zz_generated.pricing_aws.go"))).expect("prices");
    let ours = instance_types::render(&Sources {
        version: "v1.14",
        types: &types,
        prices: &prices,
        prices_generated_at: &at,
        vpc_limits: None,
        vpc_limits_note: None,
    });
    let committed = read(&data_dir().join("instance-types.tsv"));
    // Everything but the two ENI columns, which need the VPC limits file.
    let strip = |text: &str| -> Vec<String> {
        let rows = instance_types::rows(text);
        rows.iter()
            .map(|r| r[..r.len() - ENI_COLUMNS.len()].join("\t"))
            .collect()
    };
    let (ours_rows, committed_rows) = (strip(&ours), strip(&committed));
    assert_eq!(ours_rows.len(), 1364, "a header and 1363 types");
    assert!(
        ours_rows == committed_rows,
        "data/karpenter/instance-types.tsv is stale: run scripts/karpenter-release.sh"
    );
    let meta = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with('@'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(meta(&ours), meta(&committed));
    // The committed table has the ENI columns for the types the VPC limits name.
    let rows = instance_types::rows(&committed);
    let header = &rows[0];
    assert_eq!(&header[header.len() - 2..], ENI_COLUMNS);
    let with_enis = rows[1..]
        .iter()
        .filter(|r| r[r.len() - 1] != instance_types::ABSENT)
        .count();
    assert_eq!(with_enis, 1355, "types with ENI limits");
    assert!(
        committed.contains("\n# ENI limits: aws/karpenter-provider-aws main after v1.14.1, commit 1d927085dd81a9df9301e613f371dac5b4d16bfe"),
        "the header says where the ENI limits come from"
    );
}

#[test]
fn the_header_says_where_the_eni_limits_come_from_and_which_types_they_lack() {
    let described = |name: &str| instance_types::Described {
        name: name.to_string(),
        ..instance_types::Described::default()
    };
    let types = [described("a1.big"), described("z9.big"), described("y9.big")];
    let limits = [(
        "a1.big".to_string(),
        instance_types::EniLimits {
            default_enis: 2,
            ips_per_eni: 4,
        },
    )]
    .into_iter()
    .collect();
    let prices = Default::default();
    let text = instance_types::render(&Sources {
        version: "v1.14",
        types: &types,
        prices: &prices,
        prices_generated_at: "then",
        vpc_limits: Some((&limits, "now")),
        vpc_limits_note: Some("main @ abc"),
    });
    let header: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        header[4..],
        [
            "# ENI limits: main @ abc",
            "# The VPC limits name no figures for 2 of the types (their ENI columns are `-`): z9.big, y9.big.",
            "# Written by scripts/karpenter-release.sh; do not edit. `-` marks a value the type does not have.",
        ]
    );
    assert!(header[3].ends_with("from zz_generated.vpclimits.go (generated at now)."));
}

#[test]
fn the_v1_14_policy_is_the_shared_cloudformation_template() {
    let policies =
        cloudformation::parse(&read(&upstream("reference/cloudformation.yaml"))).expect("template");
    let groups: Vec<&str> = policies.iter().map(|p| p.group.as_str()).collect();
    assert_eq!(
        groups,
        [
            "NodeLifecycle",
            "IAMIntegration",
            "EKSIntegration",
            "Interruption",
            "ZonalShift",
            "ResourceDiscovery"
        ]
    );
    let ours = cloudformation::render("v1.14", &policies);
    let committed = read(&data_dir().join("controller-policy/v1.14.tsv"));
    assert_eq!(
        ours, committed,
        "data/karpenter/controller-policy/v1.14.tsv is stale"
    );
}

/// v1.15's table is v1.14's with the one change the v1.15 documentation describes, written by
/// the generator's `--policy-from` (the command is in CONTRIBUTING.md).
#[test]
fn the_v1_15_policy_is_derived_from_v1_14_with_reboot_instances() {
    let v114 = read(&data_dir().join("controller-policy/v1.14.tsv"));
    let committed = read(&data_dir().join("controller-policy/v1.15.tsv"));
    let note = committed
        .lines()
        .find_map(|l| l.strip_prefix("# v1.14's table with the change v1.15's documentation describes: "))
        .expect("the derivation note");
    let added = [AddedAction {
        sid: "AllowScopedDeletion".into(),
        action: "ec2:RebootInstances".into(),
        after: "ec2:TerminateInstances".into(),
    }];
    let ours = cloudformation::derive("v1.15", "v1.14", &v114, &added, note).expect("derive");
    assert_eq!(ours, committed);
    let diff: Vec<&str> = data_lines(&ours)
        .into_iter()
        .filter(|l| !data_lines(&v114).contains(l))
        .collect();
    assert_eq!(
        diff,
        [
            "@karpenter_version\tv1.15",
            "@derived_from\tv1.14",
            "action\tAllowScopedDeletion\tec2:RebootInstances"
        ]
    );
}

/// Every upstream CRD directory as (minor, directory): the releases, and `main` as v1.15.
fn crd_directories() -> Vec<(String, PathBuf)> {
    let versions = upstream("crds/versions");
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&versions)
        .expect("crds/versions")
        .filter_map(Result::ok)
        .map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            (minor(&name).expect("a release directory"), e.path())
        })
        .collect();
    out.push(("v1.15".into(), upstream("crds/v1-main")));
    out
}

#[test]
fn the_crd_inventories_are_the_shared_crds() {
    let dirs = crd_directories();
    assert!(dirs.len() >= 16, "{dirs:?}");
    for (version, dir) in dirs {
        let ours = crds::render(&version, &crds::inventory(&dir).expect("CRDs"), None);
        let committed = read(&data_dir().join(format!("crds/{version}.tsv")));
        assert_same(
            &format!("data/karpenter/crds/{version}.tsv ({})", dir.display()),
            &ours,
            &committed,
        );
    }
    // Every committed inventory has its CRDs here (no orphan a test could not regenerate).
    let committed = std::fs::read_dir(data_dir().join("crds"))
        .expect("data/karpenter/crds")
        .count();
    assert_eq!(committed, crd_directories().len());
}

#[test]
fn every_committed_table_says_how_it_was_made() {
    let mut files = vec![data_dir().join("instance-types.tsv")];
    for sub in ["controller-policy", "crds"] {
        files.extend(
            std::fs::read_dir(data_dir().join(sub))
                .expect("dir")
                .filter_map(|e| Some(e.ok()?.path())),
        );
    }
    for file in files {
        let text = read(&file);
        assert!(text.starts_with("# "), "{}: no header", file.display());
        assert!(
            text.contains("Written by scripts/karpenter-release.sh; do not edit."),
            "{}",
            file.display()
        );
        let stem = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        if stem.starts_with('v') {
            assert!(
                text.contains(&format!("@karpenter_version\t{stem}\n")),
                "{}",
                file.display()
            );
        }
    }
}

#[test]
fn vpc_limits_take_the_default_network_cards_interfaces() {
    // Our own example in the file's layout: two cards, the default one is the second.
    let entry = |i: usize| {
        format!(
            "\t\"x{i}.big\": {{\n\t\tInterface:               10,\n\t\tIPv4PerInterface:        30,\n\
             \t\tDefaultNetworkCardIndex: 1,\n\t\tNetworkCards: []NetworkCard{{\n\
             \t\t\t{{\n\t\t\t\tMaximumNetworkInterfaces: 2,\n\t\t\t\tNetworkCardIndex:         0,\n\t\t\t}},\n\
             \t\t\t{{\n\t\t\t\tMaximumNetworkInterfaces: 8,\n\t\t\t\tNetworkCardIndex:         1,\n\t\t\t}},\n\
             \t\t}},\n\t}},\n"
        )
    };
    let entries: String = (0..120).map(entry).collect();
    let file = format!(
        "// This file was generated at 2026-01-02T03:04:05Z\nvar Limits = map[string]*VPCLimits{{\n{entries}}}\n"
    );
    let (limits, at) = instance_types::parse_vpc_limits(&file).expect("parse");
    assert_eq!(at, "2026-01-02T03:04:05Z");
    assert_eq!(limits.len(), 120);
    let x = limits["x7.big"];
    assert_eq!((x.default_enis, x.ips_per_eni), (8, 30));
}

#[test]
fn names_versions_and_prices() {
    assert_eq!(cloudformation::group_name("NodeLifecyclePolicy"), "NodeLifecycle");
    assert_eq!(
        cloudformation::group_name("KarpenterControllerPolicy"),
        "Controller"
    );
    assert_eq!(minor("v1.15.1").expect("minor"), "v1.15");
    assert_eq!(minor("1.9").expect("minor"), "v1.9");
    assert!(minor("latest").is_err());
    assert_eq!(provider_build::micro_dollars("0.025500"), Some(25_500));
    assert_eq!(provider_build::micro_dollars("0.1234567"), None);
    let args =
        Args::parse(["--version", "1.15.0", "--cloudformation", "cf.yaml"].map(String::from)).expect("args");
    assert_eq!(args.version, "v1.15");
    assert!(
        Args::parse(
            [
                "--version",
                "v1.15",
                "--instance-types",
                "a.md",
                "--pricing",
                "p.go"
            ]
            .map(String::from)
        )
        .is_err()
    );
    assert!(Args::parse(["--cloudformation", "cf.yaml"].map(String::from)).is_err());
    assert!(
        Args::parse(["--version", "v1.14", "--vpc-limits-note", "main"].map(String::from)).is_err(),
        "a note without the file it is about"
    );
}

/// The CRDs rebuilt from a committed table have exactly that table's inventory (what each CRD
/// is, every property and its shape): the quick-start's cluster serves what the facts say.
#[test]
fn rebuilt_crds_have_the_inventory_they_were_built_from() {
    let committed = super::served::committed().expect("the committed CRD tables");
    assert!(committed.len() >= 16, "{} tables", committed.len());
    for (minor, inventory) in committed {
        assert!(!inventory.heads.is_empty(), "{minor}: no @crd rows");
        let mut rebuilt = crds::Inventory::default();
        for crd in super::served::crds(&inventory).values() {
            let (head, properties) = crds::properties_of(&crd.to_string()).expect("a rebuilt CRD reads back");
            rebuilt.heads.push(head);
            rebuilt.properties.extend(properties);
        }
        rebuilt.heads.sort();
        rebuilt.properties.sort();
        assert_eq!(rebuilt, inventory, "{minor}");
    }
}

#[test]
fn the_quick_starts_crds_are_each_kinds_newest() {
    let crds = super::served::newest().expect("CRDs");
    let kinds: Vec<(&str, &str)> = crds
        .iter()
        .map(|c| {
            (
                c["spec"]["names"]["kind"].as_str().unwrap_or_default(),
                c["spec"]["scope"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    for expected in [
        ("NodePool", "Cluster"),
        ("NodeClaim", "Cluster"),
        ("EC2NodeClass", "Cluster"),
        ("NodeOverlay", "Cluster"),
        ("CapacityBuffer", "Namespaced"),
    ] {
        assert!(kinds.contains(&expected), "{expected:?} not in {kinds:?}");
    }
    // v1.15's open kubelet: the newest table's EC2NodeClass
    let class = crds
        .iter()
        .find(|c| c["spec"]["names"]["kind"] == "EC2NodeClass")
        .expect("EC2NodeClass");
    let kubelet = &class["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["kubelet"];
    assert_eq!(kubelet["x-kubernetes-preserve-unknown-fields"], true, "{kubelet}");
}

/// Our own Go, in the layout of Kubernetes' API types: what the kubelet-fields generator reads.
const GO_CONFIG: &str = r#"/*
A made-up configuration package.
*/

package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	core "k8s.io/api/core/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
)

// Mode is a closed set of strings.
type Mode string

// KubeletConfiguration is the root; `// not a comment` inside a tag stays.
type KubeletConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// Port, a pointer.
	Port *int32 `json:"port,omitempty"`
	Mode Mode `json:"mode,omitempty"` // a trailing comment
	Every metav1.Duration `json:"every,omitempty"`
	Hidden string `json:"-"`
	Labels map[string]string `json:"labels,omitempty"`
	Gates map[string]bool `json:"gates,omitempty"`
	Headers map[string][]string `json:"headers,omitempty"`
	Names []string `json:"names,omitempty"`
	Nested Nested `json:"nested"`
	Items []Item `json:"items,omitempty"`
	Taints []core.Taint `json:"taints,omitempty"`
	Logging logsapi.LoggingConfiguration `json:"logging,omitempty"`
}

type Nested struct {
	Ratio *float64 `json:"ratio,omitempty"`
}

type Item struct {
	Limits core.ResourceList `json:"limits"`
	Untagged uint32
}
"#;

/// Our own stand-in of the logging package: a list type, inlined options, a type with its own JSON.
const GO_LOGS: &str = r#"package v1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type LoggingConfiguration struct {
	Flush TimeOrMetaDuration `json:"flush"`
	Modules ModuleList `json:"modules,omitempty"`
	Options Options `json:"options,omitempty"`
}

type TimeOrMetaDuration struct {
	Duration metav1.Duration
}

func (t *TimeOrMetaDuration) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, &t.Duration)
}

type ModuleList []Module

type Module struct {
	Level Level `json:"level"`
}

type Level uint32

type Options struct {
	Shared `json:",inline"`
}

type Shared struct {
	Split bool `json:"split,omitempty"`
}
"#;

fn go_files() -> Vec<(String, super::go_types::GoFile)> {
    [("config.go", GO_CONFIG), ("logs.go", GO_LOGS)]
        .iter()
        .map(|(name, text)| (name.to_string(), super::go_types::read(name, text).expect(name)))
        .collect()
}

#[test]
fn go_declarations_are_read_with_their_json_names() {
    let files = go_files();
    let config = &files[0].1;
    assert_eq!(config.package, "v1beta1");
    assert_eq!(config.imports["logsapi"], "k8s.io/component-base/logs/api/v1");
    assert_eq!(config.named["Mode"], "string");
    let root = &config.structs["KubeletConfiguration"];
    let json: Vec<&str> = root.iter().map(|f| f.json.as_str()).collect();
    assert_eq!(
        json[..4],
        ["", "port", "mode", "every"],
        "embedded TypeMeta is inlined; json:\"-\" left out"
    );
    assert!(!json.contains(&"Hidden"));
    assert_eq!(root[1].ty, "*int32");
    assert_eq!(config.structs["Item"][1].json, "Untagged", "no tag: the Go name");
    let logs = &files[1].1;
    assert_eq!(logs.imports["json"], "encoding/json");
    assert!(logs.own_json.contains("TimeOrMetaDuration"));
    assert_eq!(logs.named["ModuleList"], "[]Module");
    assert!(super::go_types::read("x.go", "type A struct {\n\tB struct {\n").is_err());
    assert!(super::go_types::read("x.go", "no package here\n").is_err());
}

#[test]
fn kubelet_fields_are_derived_from_the_go_types() {
    let derived = super::kubelet_fields::derive(&go_files()).expect("derive");
    let rows: Vec<String> = derived.iter().map(|d| format!("{} {}", d.path, d.ty)).collect();
    assert_eq!(
        rows,
        [
            "apiVersion typemeta",
            "kind typemeta",
            "port int32",
            "mode string",
            "every duration",
            "labels string_map",
            "gates bool_map",
            "headers strings_map",
            "names strings",
            "nested object",
            "nested.ratio float",
            "items objects",
            "items[].limits quantity_map",
            "items[].Untagged uint32",
            "taints external",
            "logging object",
            "logging.flush duration_or_int",
            "logging.modules objects",
            "logging.modules[].level uint32",
            "logging.options object",
            "logging.options.split bool",
        ]
    );
    // A type with its own JSON that KNOWN does not name is refused, not guessed.
    let odd = GO_LOGS.replace("TimeOrMetaDuration", "OddDuration");
    let files = vec![
        go_files().remove(0),
        (
            "logs.go".to_string(),
            super::go_types::read("logs.go", &odd).expect("logs"),
        ),
    ];
    let e = super::kubelet_fields::derive(&files)
        .expect_err("own JSON")
        .to_string();
    assert!(e.contains("OddDuration decodes its own JSON"), "{e}");
}

#[test]
fn kubelet_rows_keep_our_words_and_refuse_a_field_without_them() {
    use super::kubelet_fields::{Derived, Row, merge, read_table, render};
    let derived = |rows: &[(&str, &str)]| -> Vec<Derived> {
        rows.iter()
            .map(|(path, ty)| Derived {
                path: path.to_string(),
                ty: ty.to_string(),
                external: (*ty == "external").then(|| "k8s.io/api/core/v1.Taint".to_string()),
            })
            .collect()
    };
    let committed = read_table(
        "# header\n\
         mode\tmode\tenum\ta|b\tThe mode.\n\
         port\tport\tint32\t\tThe port.\n\
         gone\tgone\tbool\t\tA field upstream dropped.\n\
         taints\ttaints\trefused\t\tKarpenter sets them.\n",
    )
    .expect("table");
    // Go order, our words and refinements, the dropped field gone.
    let rows = merge(
        &derived(&[("port", "int32"), ("mode", "string"), ("taints", "external")]),
        &committed,
    )
    .expect("merge");
    let paths: Vec<&str> = rows.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["port", "mode", "taints"]);
    assert_eq!(
        rows[1],
        Row {
            path: "mode".into(),
            name: "mode".into(),
            ty: "enum".into(),
            values: "a|b".into(),
            description: "The mode.".into(),
        }
    );
    // Refused, with what to do: a new field (the row to write), a Go type the row no longer
    // fits, a type in none of the files given (a file left out).
    for (fields, said) in [
        (
            &[("port", "int32"), ("maxOpenThings", "int64")][..],
            "maxOpenThings\tmax_open_things\tint64\t\t<description>",
        ),
        (
            &[("mode", "int32")],
            "mode: the row's type enum does not fit the Go type's (int32)",
        ),
        (
            &[("port", "external")],
            "port: its type, k8s.io/api/core/v1.Taint, is in none of the files given",
        ),
    ] {
        let e = merge(&derived(fields), &committed).expect_err(said).to_string();
        assert!(e.contains(said), "{e}");
    }
    // The text reads back to the same rows.
    assert_eq!(
        read_table(&render("v1.15", "v0.36.3", &rows)).expect("reads"),
        rows
    );
}

/// The committed kubelet table is in the generator's own form: its rows rendered again, with
/// the versions its header names, are the file.
#[test]
fn the_kubelet_table_is_the_generators() {
    let committed = read(&data_dir().join(super::KUBELET_FIELDS));
    let after = |marker: &str| -> String {
        let at = committed.find(marker).expect(marker) + marker.len();
        committed[at..]
            .split(|c: char| c == ',' || c.is_whitespace())
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let (kubelet, karpenter) = (
        after("k8s.io/kubelet/config/v1beta1 at "),
        after("version Karpenter "),
    );
    let rows = super::kubelet_fields::read_table(&committed).expect("the table reads");
    assert!(rows.len() > 150, "{} rows", rows.len());
    assert_eq!(
        super::kubelet_fields::render(&karpenter, &kubelet, &rows),
        committed,
        "data/karpenter/kubelet-fields.tsv is not in the generator's form: run scripts/karpenter-release.sh"
    );
    assert!(
        Args::parse(["--version", "v1.15", "--kubelet-types", "types.go"].map(String::from)).is_err(),
        "--kubelet-types needs --kubelet-version"
    );
}
