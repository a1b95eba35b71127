//! The house rules of CONTRIBUTING.md, checked on the sources of every crate in the repository
//! (the provider, the Kubernetes API test server, the acceptance-test harness, the bench):
//!
//! - **no import circle**: the module graph is built from `crate::`/`super::`/`self::` paths,
//!   from paths through a module's own children (`pub use child::Thing;`), from paths that
//!   start with an imported module's name, and from globs (`use super::*;` uses the parent);
//!   test code is left out (every item marked `#[cfg(test)]`, and the modules so declared
//!   whatever their name). Two checks on it: no **parent↔child circle** (a module importing
//!   from an ancestor that imports from it), except the pairs of [`STILL_CIRCULAR`] (a list
//!   that may only shrink; an entry that no longer occurs fails the test), and, with those
//!   pairs' upward edges left out, no strongly connected component of more than one module;
//!   The crate root (`lib.rs`, or `main.rs` of a crate without a library) is a module like any
//!   other, `crate` in the messages: an item it defines and a child uses is an edge to it;
//!   a `main.rs` beside a `lib.rs` is a crate of its own and left out.
//! - **layers**: `src/terraform/` (the generic provider framework) imports nothing from the
//!   Karpenter side of `src/`, whose layers point downwards (settings, policy and the offline
//!   instance-type data, then aws, then
//!   k8s, then context, then the two resource families, which do not use each other, then the
//!   provider, then the crate root, which nothing imports from);
//! - **no non-test file over 800 lines** (a file under `tests/` or named `tests.rs` is a test
//!   file; elsewhere the lines of items marked `#[cfg(test)]` do not count, wherever they
//!   stand: `mod tests;`, `pub(crate) mod testing { … }` in the middle of a file);
//!   [`STILL_TOO_LONG`] is where a file that cannot be split at once would be listed, with a
//!   ceiling that may only go down (it is empty);
//! - **a `//!` header** on every module file.
//!
//! The stripping of test code and both circle checks have unit tests of their own here, on
//! text and on a small module tree written to a temporary directory.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

/// Files not yet split, each with the most lines it may have (none today). Shrink the number
/// when a file shrinks; delete the line when it is split.
const STILL_TOO_LONG: &[(&str, usize)] = &[];

/// Parent↔child import circles not yet taken apart, as `(ancestor, descendant)` module paths
/// of their crate: the descendant imports from the ancestor (by `super::`, a `crate::` path or
/// a glob) while the ancestor imports from it (typically a `pub use child::…` the child's
/// siblings then reach through the parent). Left to the rooms of #40 being refactored by
/// others; `src/terraform/` and `src/provider/` have none. The list may only shrink: the test
/// fails on a circle not listed here, and on a listed one that no longer occurs (delete its
/// line).
const STILL_CIRCULAR: &[(&str, &str)] = &[];

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

/// A module's name in messages and in [`STILL_CIRCULAR`]: its path, `crate` for the root.
fn name(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
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

/// The code of a file without comments and without its test code (see [`test_lines`]).
fn code_of(text: &str) -> String {
    let (test, _) = test_lines(text);
    let mut out = String::new();
    for (line, is_test) in text.lines().zip(test.iter().chain(std::iter::repeat(&false))) {
        if *is_test {
            continue;
        }
        let code = line.split("//").next().unwrap_or_default();
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// Where one `#[cfg(test)]` item ends: scans `text` from the end of the attribute, with
/// strings, character literals and comments skipped, to the `;` or the closing `}` of the item
/// (its byte offset just past that character; the end of `text` when it never ends).
fn end_of_item(text: &str, from: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = from;
    let mut depth = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(bytes.len(), |p| i + 2 + p + 2);
                continue;
            }
            b'r' if (bytes.get(i + 1) == Some(&b'"') || bytes.get(i + 1) == Some(&b'#'))
                && (i == 0 || !is_ident(bytes[i - 1] as char)) =>
            {
                // a raw string: r"…", r#"…"#
                let hashes = text[i + 1..].bytes().take_while(|&b| b == b'#').count();
                let open = i + 1 + hashes;
                if bytes.get(open) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    i = text[open + 1..]
                        .find(&close)
                        .map_or(bytes.len(), |p| open + 1 + p + close.len());
                    continue;
                }
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            // a character literal of a brace or a quote ('{', '}', '"', '\''), not a lifetime
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\\') && bytes.get(i + 3) == Some(&b'\'') => i += 3,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// The name of the module an item declares (`mod name;`, `pub(crate) mod name { … }`), after
/// its attributes and visibility; `None` for any other item.
fn declared_module(item: &str) -> Option<String> {
    let mut rest = item.trim_start();
    while let Some(attr) = rest.strip_prefix("#[") {
        let mut depth = 1usize;
        let close = attr.char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        })?;
        rest = attr[close + 1..].trim_start();
    }
    if let Some(vis) = rest.strip_prefix("pub") {
        rest = vis.trim_start();
        if let Some(scope) = rest.strip_prefix('(') {
            rest = scope[scope.find(')')? + 1..].trim_start();
        }
    }
    let name: String = rest
        .strip_prefix("mod")
        .filter(|r| r.starts_with(char::is_whitespace))?
        .trim_start()
        .chars()
        .take_while(|c| is_ident(*c))
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Which lines of a file are test code: the lines of every item marked `#[cfg(test)]`, the
/// attribute line included, wherever it stands (a `mod tests;` line, an inline
/// `pub(crate) mod testing { … }` in the middle of the file, a helper function), and the names
/// of the modules so declared (their files are test code too).
fn test_lines(text: &str) -> (Vec<bool>, Vec<String>) {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| i < text.len())
        .collect();
    let line_of = |offset: usize| starts.partition_point(|&s| s <= offset).saturating_sub(1);
    let mut test = vec![false; starts.len()];
    let mut modules = Vec::new();
    let mut line = 0;
    while line < starts.len() {
        let start = starts[line];
        let rest = &text[start..];
        let trimmed = rest.trim_start_matches([' ', '\t']);
        let Some(after) = trimmed.strip_prefix("#[cfg(test)]") else {
            line += 1;
            continue;
        };
        let from = text.len() - after.len();
        let end = end_of_item(text, from);
        let item = &text[from..end];
        if let Some(name) = declared_module(item) {
            modules.push(name);
        }
        let last = line_of(end.saturating_sub(1).max(from));
        for t in &mut test[line..=last] {
            *t = true;
        }
        line = last + 1;
    }
    (test, modules)
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `a::b::c` path in `code` (identifiers joined by `::`), with `{…}` groups of `use`
/// expanded one level, and the module of every glob (`a::b::*` gives `a::b`).
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
                    if chars[j + 2] == '*' {
                        // a glob (`use super::*`, `pub use child::*`): it uses the module itself
                        paths.push(segs.clone());
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

/// The module graph of one crate: module → the modules it uses. The root (`lib.rs`) is the
/// module with the empty path; a `main.rs` beside it is a binary crate of its own (it reaches
/// the library by the library's name) and is left out.
fn graph(crate_root: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(crate_root, &mut files);
    if crate_root.join("lib.rs").is_file() {
        files.retain(|f| *f != crate_root.join("main.rs"));
    }
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_of(crate_root, f), f.clone()))
        .collect();
    // Modules declared under `#[cfg(test)]` (whatever their name) and `tests` modules.
    let mut test_modules: BTreeSet<Vec<String>> = BTreeSet::new();
    for (module, file) in &modules {
        let (_, declared) = test_lines(&std::fs::read_to_string(file).unwrap_or_default());
        for name in declared {
            test_modules.insert(module.iter().cloned().chain([name]).collect());
        }
    }
    let is_test = |module: &[String]| {
        module.last().is_some_and(|m| m == "tests")
            || (1..=module.len()).any(|n| test_modules.contains(&module[..n]))
    };
    let mut edges = BTreeMap::new();
    for (module, file) in &modules {
        if is_test(module) {
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
                // A path relative to this module through one of its child modules
                // (`pub use child::Thing;`, `child::f()`).
                Some(first) if modules.contains_key(&[module.as_slice(), &[first.to_string()]].concat()) => {
                    (module.clone(), path)
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
            // the longest prefix that is a module (the root, at worst: `crate::Item`)
            for len in (0..=full.len()).rev() {
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
                component.push(name(m));
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

/// Every pair of a module and one of its descendants that import from each other: the
/// descendant by `super::`, a `crate::…` path or a glob, the ancestor by a path through its
/// children (`pub use child::Thing;`, `pub use child::*;`, `child::f()`), as
/// `(ancestor, descendant)`.
fn parent_child_circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (module, uses) in edges {
        for target in uses {
            if target.len() < module.len()
                && module.starts_with(target)
                && edges.get(target).is_some_and(|u| u.contains(module))
            {
                found.push((name(target), name(module)));
            }
        }
    }
    found
}

/// The circles of one crate: its parent↔child pairs not in `allowed`, then the strongly
/// connected components of the graph without the allowed pairs' upward edges; and the allowed
/// pairs that were found.
fn circles_of(
    mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    allowed: &[(&str, &str)],
) -> (Vec<String>, BTreeSet<(String, String)>) {
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for (ancestor, descendant) in parent_child_circles(&edges) {
        if allowed.contains(&(ancestor.as_str(), descendant.as_str())) {
            let split = |m: &str| -> Vec<String> {
                m.split("::")
                    .filter(|s| !s.is_empty() && *s != "crate")
                    .map(String::from)
                    .collect()
            };
            if let Some(uses) = edges.get_mut(&split(&descendant)) {
                uses.remove(&split(&ancestor));
            }
            seen.insert((ancestor, descendant));
        } else {
            found.push(format!(
                "{descendant} imports from its ancestor {ancestor}, which imports from it"
            ));
        }
    }
    for circle in circles(&edges) {
        found.push(circle.join(" <-> "));
    }
    (found, seen)
}

#[test]
fn no_import_circle_in_any_crate() {
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for krate in CRATES {
        let (circles, allowed) = circles_of(graph(&root().join(krate)), STILL_CIRCULAR);
        found.extend(circles.into_iter().map(|c| format!("{krate}: {c}")));
        seen.extend(allowed);
    }
    for (ancestor, descendant) in STILL_CIRCULAR {
        if !seen.contains(&(ancestor.to_string(), descendant.to_string())) {
            found.push(format!(
                "({ancestor:?}, {descendant:?}) is no longer a circle: delete its line in STILL_CIRCULAR"
            ));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn the_circle_check_sees_a_parent_child_circle() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "//! x\nmod a;\nmod b;\n");
    // a re-exports its child's function; the child takes a helper from a by a glob.
    write(
        "a/mod.rs",
        "//! a\nmod child;\npub use child::f;\nfn helper() {}\n",
    );
    write(
        "a/child.rs",
        "//! child\nuse super::*;\npub fn f() { helper() }\n",
    );
    // b uses its child, which uses a sibling of b, not b: no circle.
    write("b/mod.rs", "//! b\nmod child;\npub use child::g;\n");
    write("b/child.rs", "//! child\nuse crate::a::f;\npub fn g() { f() }\n");
    let edges = graph(dir.path());
    assert_eq!(
        parent_child_circles(&edges),
        [("a".to_string(), "a::child".to_string())]
    );
    let (found, _) = circles_of(edges.clone(), &[]);
    assert_eq!(
        found,
        [
            "a::child imports from its ancestor a, which imports from it",
            "a <-> a::child"
        ]
    );
    // Allowed, it is reported as seen and nothing else is found.
    let (found, seen) = circles_of(edges, &[("a", "a::child")]);
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(seen.len(), 1);
    // The same child reaching a by a `crate::` path is the same circle; a test module's
    // import of its parent is not one.
    write(
        "a/child.rs",
        "//! child\nuse crate::a::helper;\npub fn f() { helper() }\n",
    );
    assert_eq!(parent_child_circles(&graph(dir.path())).len(), 1);
    write(
        "a/child.rs",
        "//! child\npub fn f() {}\n#[cfg(test)]\npub(crate) mod checks {\n    use super::super::*;\n}\n",
    );
    assert!(parent_child_circles(&graph(dir.path())).is_empty());
    assert!(circles_of(graph(dir.path()), &[]).0.is_empty());
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
            "aws_names",
            &[
                "settings",
                "policy",
                "instance_types",
                "aws",
                "k8s",
                "context",
                "resources::kube",
                "resources::aws",
                "provider",
            ],
        ),
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
    found.extend(uses_of_the_root(&edges));
    assert!(
        found.is_empty(),
        "imports against the layering of CONTRIBUTING.md:\n{}",
        found.join("\n")
    );
}

/// The modules that import from the crate root: it wires the provider into the plugin, above
/// every layer, so in `src/` nothing may (an item every layer needs lives in the lowest layer
/// that needs it).
fn uses_of_the_root(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<String> {
    edges
        .iter()
        .filter(|(module, uses)| !module.is_empty() && uses.contains(&Vec::new()))
        .map(|(module, _)| {
            format!(
                "{} uses the crate root (lib.rs), which is above every layer",
                name(module)
            )
        })
        .collect()
}

#[test]
fn the_crate_root_is_a_module_too() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| std::fs::write(dir.path().join(path), text).unwrap();
    // A child takes an item of the root: an arrow up, whatever the root imports.
    write("lib.rs", "//! x\nmod a;\npub const ADDRESS: &str = \"x\";\n");
    write("a.rs", "//! a\npub fn f() -> &'static str { crate::ADDRESS }\n");
    // A main.rs beside the lib.rs is a crate of its own, not the root.
    write("main.rs", "//! bin\nfn main() { x::run() }\n");
    let edges = graph(dir.path());
    assert_eq!(
        uses_of_the_root(&edges),
        ["a uses the crate root (lib.rs), which is above every layer"]
    );
    assert!(parent_child_circles(&edges).is_empty());
    // The root re-exporting the child's function closes the circle.
    write(
        "lib.rs",
        "//! x\nmod a;\npub use a::f;\npub const ADDRESS: &str = \"x\";\n",
    );
    let edges = graph(dir.path());
    assert_eq!(
        parent_child_circles(&edges),
        [("crate".to_string(), "a".to_string())]
    );
    let (found, _) = circles_of(edges.clone(), &[]);
    assert_eq!(
        found,
        [
            "a imports from its ancestor crate, which imports from it",
            "a <-> crate"
        ]
    );
    let (found, seen) = circles_of(edges, &[("crate", "a")]);
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(seen.len(), 1);
    // The item moved down into the child: no arrow up.
    write("lib.rs", "//! x\nmod a;\npub use a::{ADDRESS, f};\n");
    write(
        "a.rs",
        "//! a\npub const ADDRESS: &str = \"x\";\npub fn f() -> &'static str { ADDRESS }\n",
    );
    let edges = graph(dir.path());
    assert!(uses_of_the_root(&edges).is_empty());
    assert!(circles_of(edges, &[]).0.is_empty());
}

/// Lines of a file that are not test code: none in a test file, else every line outside the
/// items marked `#[cfg(test)]` ([`test_lines`]).
fn non_test_lines(path: &Path, text: &str) -> usize {
    let rel = path.to_string_lossy();
    if rel.contains("/tests/") || rel.ends_with("/tests.rs") || rel.ends_with("_tests.rs") {
        return 0;
    }
    test_lines(text).0.iter().filter(|t| !**t).count()
}

#[test]
fn test_code_is_found_wherever_it_stands() {
    let text = "\
//! a module
pub fn a() {}

#[cfg(test)]
pub(crate) mod testing {
    pub fn brace_in_a_string() -> &'static str {
        \"}\"
    }
    pub const BRACE: char = '{';
}

pub fn b() {}
#[cfg(test)]
mod sensitive_tests;
#[cfg(test)] pub mod one_line { }
pub fn c() {
    // a comment with a brace }
}

#[cfg(test)]
#[allow(dead_code)]
mod tests {
    use super::*;
}
";
    let (test, modules) = test_lines(text);
    let kept: Vec<&str> = text
        .lines()
        .zip(&test)
        .filter(|(_, t)| !**t)
        .map(|(l, _)| l)
        .collect();
    assert_eq!(
        kept,
        [
            "//! a module",
            "pub fn a() {}",
            "",
            "",
            "pub fn b() {}",
            "pub fn c() {",
            "    // a comment with a brace }",
            "}",
            "",
        ]
    );
    assert_eq!(modules, ["testing", "sensitive_tests", "one_line", "tests"]);
    assert_eq!(non_test_lines(Path::new("src/a.rs"), text), 9);
    assert_eq!(non_test_lines(Path::new("src/a/tests.rs"), text), 0);
    // A file that ends inside a test module (no closing brace) loses only that module.
    assert_eq!(
        test_lines("fn a() {}\n#[cfg(test)]\nmod t {\n").0,
        [false, true, true]
    );
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
