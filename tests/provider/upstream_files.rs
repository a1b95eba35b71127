//! What the tests need from outside the repository is listed in one place,
//! `acceptance-tests/upstream-files.tsv`, and checked: the files beside the clone match the
//! list's checksums; `scripts/upstream-files.sh fetch` takes each file from its repository at
//! its ref and refuses one whose checksum differs; and no test reaches `../shared` but through
//! the list (`kube_testserver::upstream::path`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn script(args: &[&str], envs: &[(&str, &Path)]) -> (bool, String) {
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/upstream-files.sh")).args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run scripts/upstream-files.sh");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The list's rows: (local path, sha256, repository, ref, upstream path).
fn rows() -> Vec<[String; 5]> {
    let text = std::fs::read_to_string(root().join(kube_testserver::upstream::LIST)).expect("the list");
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(
                f.len(),
                5,
                "{l:?}: <path> <sha256> <repository> <ref> <path in the repository>"
            );
            [f[0], f[1], f[2], f[3], f[4]].map(str::to_string)
        })
        .collect()
}

#[test]
fn the_files_beside_the_clone_are_the_listed_ones() {
    let (ok, text) = script(&["check"], &[]);
    assert!(ok, "{text}");
    assert!(text.contains(&format!("all {} ", rows().len())), "{text}");
}

#[test]
fn every_row_names_a_release_tag_or_a_commit() {
    for [path, sum, repo, reference, upstream] in rows() {
        assert!(
            sum.len() == 64 && sum.chars().all(|c| c.is_ascii_hexdigit()),
            "{path}: {sum}"
        );
        assert!(repo.split('/').count() == 2, "{path}: {repo}");
        let tag = reference.starts_with('v') && reference[1..].split('.').all(|p| p.parse::<u32>().is_ok());
        let commit = reference.len() == 40 && reference.chars().all(|c| c.is_ascii_hexdigit());
        assert!(
            tag || commit,
            "{path}: {reference} is neither a release tag nor a commit"
        );
        assert!(
            !upstream.starts_with('/') && !upstream.contains(".."),
            "{path}: {upstream}"
        );
    }
}

/// A stand-in for GitHub's raw file service: `<base>/<repository>/<ref>/<path>`, filled from the
/// files at hand.
fn mirror(base: &Path) {
    for [path, _, repo, reference, upstream] in rows() {
        let to = base.join(&repo).join(&reference).join(&upstream);
        std::fs::create_dir_all(to.parent().expect("a parent")).expect("mkdir");
        std::fs::copy(kube_testserver::upstream::root().join(&path), &to).expect("copy");
    }
}

#[test]
fn fetch_takes_each_file_from_its_ref_and_refuses_a_changed_one() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (base, dest) = (tmp.path().join("github"), tmp.path().join("shared"));
    mirror(&base);
    let base_url = PathBuf::from(format!("file://{}", base.display()));
    let envs = [("UPSTREAM_BASE", base_url.as_path()), ("SHARED", dest.as_path())];
    let (ok, text) = script(&["fetch"], &envs);
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!("{} fetched, 0 already", rows().len())),
        "{text}"
    );
    let (ok, text) = script(&["check"], &envs);
    assert!(ok, "{text}");

    // upstream changed under the same ref: refused, and nothing is written in its place
    let [path, _, repo, reference, upstream] = rows().remove(0);
    std::fs::write(base.join(&repo).join(&reference).join(&upstream), "changed\n").expect("write");
    std::fs::remove_file(dest.join(&path)).expect("remove");
    let (ok, text) = script(&["fetch"], &envs);
    assert!(!ok && text.contains("nothing written"), "{text}");
    assert!(!dest.join(&path).exists(), "{path} was written");
    let (ok, text) = script(&["check"], &envs);
    assert!(
        !ok && text.contains(&format!("missing: {}", dest.join(&path).display())),
        "{text}"
    );
}

/// The `.rs` files of the workspace (not `target/`).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != ".git" {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_test_reaches_the_shared_folder_but_through_the_list() {
    let mut files = Vec::new();
    sources(root(), &mut files);
    let accessor = root().join("acceptance-tests/kube-testserver/src/upstream.rs");
    let this = root().join("tests/provider/upstream_files.rs");
    let mut offenders = Vec::new();
    for file in files.iter().filter(|f| **f != accessor && **f != this) {
        let text = std::fs::read_to_string(file).expect("read");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if code.contains("shared/karpenter") || code.contains("../shared") {
                offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "read upstream files through kube_testserver::upstream::path (the list in {}):\n{}",
        kube_testserver::upstream::LIST,
        offenders.join("\n")
    );
}
