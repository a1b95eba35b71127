//! The house rules of CONTRIBUTING.md, checked on the sources of every crate in the repository
//! (the provider, the Kubernetes API test server, the acceptance-test harness, the bench):
//!
//! - **no import circle**: the module graph, built from `crate::`/`super::`/`self::` paths and
//!   from paths that start with an imported module's name (test modules left out), has no
//!   strongly connected component of more than one module;
//! - **layers**: `src/terraform/` (the generic provider framework) imports nothing from the
//!   Karpenter side of `src/`, whose layers point downwards (settings, policy and the offline
//!   instance-type data, then aws, then
//!   k8s, then context, then the two resource families, which do not use each other, then the
//!   provider);
//! - **no non-test file over 800 lines** (a file under `tests/` or named `tests.rs` is a test
//!   file; lines of a trailing `#[cfg(test)]` module do not count); [`STILL_TOO_LONG`] is where
//!   a file that cannot be split at once would be listed, with a ceiling that may only go down
//!   (it is empty);
//! - **a `//!` header** on every module file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

/// Files not yet split, each with the most lines it may have (none today). Shrink the number
/// when a file shrinks; delete the line when it is split.
const STILL_TOO_LONG: &[(&str, usize)] = &[];

/// The source roots whose module graphs are checked.
const CRATES: &[&str] = &[
    "src",
    "acceptance-tests/kube-testserver/src",
    "acceptance-tests/src",
    "acceptance-tests/bench/src",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file below a crate root (`a/b/mod.rs` and `a/b.rs` are both `a::b`;
/// `lib.rs`/`main.rs` is the root, the empty path).
fn module_of(crate_root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(crate_root).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The code of a file without comments and without its test modules.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            // The item that follows is test code: skip it (one line, or a braced block).
            let mut depth = 0i32;
            let mut opened = false;
            for next in lines.by_ref() {
                depth += next.matches('{').count() as i32 - next.matches('}').count() as i32;
                opened |= next.contains('{');
                if (opened && depth <= 0) || (!opened && next.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        let code = line.split("//").next().unwrap_or_default();
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `a::b::c` path in `code` (identifiers joined by `::`), with `{…}` groups of `use`
/// expanded one level.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if is_ident(chars[i]) && (i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':')) {
            let mut segs = Vec::new();
            let mut j = i;
            loop {
                let start = j;
                while j < chars.len() && is_ident(chars[j]) {
                    j += 1;
                }
                segs.push(chars[start..j].iter().collect::<String>());
                if j + 2 < chars.len() && chars[j] == ':' && chars[j + 1] == ':' {
                    if is_ident(chars[j + 2]) {
                        j += 2;
                        continue;
                    }
                    if chars[j + 2] == '{' {
                        // a use group: each member, prefixed
                        let close = chars[j + 2..].iter().position(|&c| c == '}').map(|p| j + 2 + p);
                        if let Some(close) = close {
                            let inner: String = chars[j + 3..close].iter().collect();
                            for member in inner.split(',') {
                                let member = member.trim().split(" as ").next().unwrap_or_default();
                                let mut p = segs.clone();
                                p.extend(
                                    member
                                        .split("::")
                                        .map(|s| s.trim().to_string())
                                        .filter(|s| !s.is_empty()),
                                );
                                paths.push(p);
                            }
                        }
                    }
                }
                break;
            }
            if segs.len() > 1 {
                paths.push(segs);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    paths
}

/// The module graph of one crate: module → the modules it uses.
fn graph(crate_root: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(crate_root, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_of(crate_root, f), f.clone()))
        .collect();
    let mut edges = BTreeMap::new();
    for (module, file) in &modules {
        if module.last().is_some_and(|m| m == "tests") {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(file).unwrap_or_default());
        let paths = paths_in(&code);
        // names brought in by `use` that are modules: alias → full path
        let mut aliases: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let resolve = |path: &[String]| -> Option<Vec<String>> {
            let (mut base, rest): (Vec<String>, &[String]) = match path.first().map(String::as_str) {
                Some("crate") => (Vec::new(), &path[1..]),
                Some("self") => (module.clone(), &path[1..]),
                Some("super") => {
                    let mut b = module.clone();
                    b.pop();
                    let mut rest = &path[1..];
                    while rest.first().is_some_and(|s| s == "super") {
                        b.pop();
                        rest = &rest[1..];
                    }
                    (b, rest)
                }
                _ => return None,
            };
            base.extend(rest.iter().filter(|s| *s != "self").cloned());
            Some(base)
        };
        for path in &paths {
            if let Some(full) = resolve(path)
                && modules.contains_key(&full)
                && let Some(last) = path.last()
            {
                aliases.insert(last.clone(), full);
            }
        }
        let mut uses = BTreeSet::new();
        for path in &paths {
            let full = match resolve(path) {
                Some(full) => full,
                None => match aliases.get(&path[0]) {
                    Some(target) => target.iter().chain(&path[1..]).cloned().collect(),
                    None => continue,
                },
            };
            // the longest prefix that is a module
            for len in (1..=full.len()).rev() {
                if modules.contains_key(&full[..len]) {
                    let target = full[..len].to_vec();
                    if &target != module {
                        uses.insert(target);
                    }
                    break;
                }
            }
        }
        edges.insert(module.clone(), uses);
    }
    edges
}

/// Strongly connected components of more than one module (Tarjan).
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on_stack: BTreeSet<&'a Vec<String>>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a Vec<String>) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on_stack.insert(v);
        for t in w.edges.get(v).into_iter().flatten() {
            let Some((t, _)) = w.edges.get_key_value(t) else {
                continue;
            };
            if !w.index.contains_key(t) {
                visit(w, t);
                let low = w.low[v].min(w.low[t]);
                w.low.insert(v, low);
            } else if w.on_stack.contains(t) {
                let low = w.low[v].min(w.index[t]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut component = Vec::new();
            while let Some(m) = w.stack.pop() {
                w.on_stack.remove(m);
                component.push(m.join("::"));
                if m == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                w.found.push(component);
            }
        }
    }
    let mut w = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.found
}

#[test]
fn no_import_circle_in_any_crate() {
    let mut found = Vec::new();
    for krate in CRATES {
        for circle in circles(&graph(&root().join(krate))) {
            found.push(format!("{krate}: {}", circle.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn the_circle_check_sees_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.rs"), "//! x\nmod a;\nmod b;\n").unwrap();
    std::fs::write(
        dir.path().join("a.rs"),
        "//! a\nuse crate::b::B;\npub struct A;\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.rs"),
        "//! b\nuse super::a;\npub fn f() -> a::A { a::A }\n",
    )
    .unwrap();
    assert_eq!(
        circles(&graph(dir.path())),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
    // Test modules do not count.
    std::fs::write(
        dir.path().join("b.rs"),
        "//! b\n#[cfg(test)]\nmod tests {\n    use crate::a::A;\n}\n",
    )
    .unwrap();
    assert!(circles(&graph(dir.path())).is_empty());
}

#[test]
fn the_framework_layer_imports_nothing_from_karpenter() {
    let edges = graph(&root().join("src"));
    let mut found = Vec::new();
    for (module, uses) in &edges {
        if module.first().is_some_and(|m| m == "terraform") {
            for target in uses {
                if target.first().is_none_or(|t| t != "terraform") {
                    found.push(format!("{} uses {}", module.join("::"), target.join("::")));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "src/terraform/ must stay generic:\n{}",
        found.join("\n")
    );
}

/// The Karpenter side's layers, bottom up: a module may use its own layer and those below it,
/// and the two resource families do not use each other.
#[test]
fn the_karpenter_layers_point_downwards() {
    let edges = graph(&root().join("src"));
    let top = |m: &[String]| -> String {
        match (m.first().map(String::as_str), m.get(1).map(String::as_str)) {
            (Some("resources"), Some(family @ ("kube" | "aws"))) => format!("resources::{family}"),
            (Some(first), _) => first.to_string(),
            (None, _) => String::new(),
        }
    };
    // What each layer must not use.
    let forbidden: &[(&str, &[&str])] = &[
        (
            "settings",
            &[
                "aws",
                "k8s",
                "context",
                "resources::kube",
                "resources::aws",
                "provider",
            ],
        ),
        (
            "policy",
            &[
                "aws",
                "k8s",
                "context",
                "resources::kube",
                "resources::aws",
                "provider",
            ],
        ),
        (
            "instance_types",
            &[
                "aws",
                "k8s",
                "context",
                "resources::kube",
                "resources::aws",
                "provider",
            ],
        ),
        (
            "aws",
            &["k8s", "context", "resources::kube", "resources::aws", "provider"],
        ),
        (
            "k8s",
            &["context", "resources::kube", "resources::aws", "provider"],
        ),
        ("context", &["resources::kube", "resources::aws", "provider"]),
        ("resources::kube", &["resources::aws", "provider"]),
        ("resources::aws", &["resources::kube", "provider"]),
    ];
    let mut found = Vec::new();
    for (module, uses) in &edges {
        let from = top(module);
        let Some((_, banned)) = forbidden.iter().find(|(layer, _)| *layer == from) else {
            continue;
        };
        for target in uses {
            if banned.contains(&top(target).as_str()) {
                found.push(format!("{} uses {}", module.join("::"), target.join("::")));
            }
        }
    }
    assert!(
        found.is_empty(),
        "imports against the layering of CONTRIBUTING.md:\n{}",
        found.join("\n")
    );
}

/// Lines of a file that are not test code: all of them in a test file, else those before a
/// trailing `#[cfg(test)]` module.
fn non_test_lines(path: &Path, text: &str) -> usize {
    let rel = path.to_string_lossy();
    if rel.contains("/tests/") || rel.ends_with("/tests.rs") || rel.ends_with("_tests.rs") {
        return 0;
    }
    let lines: Vec<&str> = text.lines().collect();
    let tests = lines
        .iter()
        .position(|l| l.starts_with("#[cfg(test)]") && !l.contains("mod "))
        .filter(|&i| {
            lines
                .get(i + 1)
                .is_some_and(|n| n.starts_with("mod ") && n.ends_with('{'))
        });
    tests.unwrap_or(lines.len())
}

#[test]
fn no_non_test_file_over_800_lines() {
    let mut files = Vec::new();
    for krate in CRATES {
        rust_files(&root().join(krate), &mut files);
    }
    rust_files(&root().join("fuzz/src"), &mut files);
    let mut found = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(root())
            .unwrap_or(&file)
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let lines = non_test_lines(&file, &text);
        let limit = STILL_TOO_LONG
            .iter()
            .find(|(f, _)| *f == rel)
            .map_or(MAX_LINES, |(_, n)| *n);
        if lines > limit {
            found.push(format!("{rel}: {lines} lines (at most {limit})"));
        }
    }
    assert!(
        found.is_empty(),
        "split these by responsibility:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_module_file_says_what_it_is_for() {
    let mut files = Vec::new();
    for krate in CRATES {
        rust_files(&root().join(krate), &mut files);
    }
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("tests.rs"))
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.strip_prefix(root()).unwrap_or(f).to_string_lossy().into_owned())
        .collect();
    assert!(missing.is_empty(), "no //! header:\n{}", missing.join("\n"));
}
