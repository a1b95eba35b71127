//! `cargo run --bin docgen`: writes the registry docs (`docs/index.md`, `docs/resources/*.md`,
//! `docs/data-sources/*.md`, `docs/list-resources/*.md`) from the provider's schemas (resource,
//! identity and list schemas) and examples, removing generated pages of types that are gone. `cargo run --bin docgen -- --check` writes nothing and exits 1,
//! naming the files, when the docs on disk differ from what would be generated (for CI).
//!
//! The repository root is the crate directory, or `--root DIR`.

use std::path::PathBuf;
use std::process::ExitCode;

use terraform_provider_karpenter::provider::docs;

fn main() -> ExitCode {
    let mut check = false;
    let mut root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--root" => match args.next() {
                Some(dir) => root = PathBuf::from(dir),
                None => return usage("--root needs a directory"),
            },
            "-h" | "--help" => {
                println!("usage: docgen [--check] [--root DIR]");
                return ExitCode::SUCCESS;
            }
            other => return usage(&format!("unknown argument {other:?}")),
        }
    }
    let pages = match docs::generate(&root) {
        Ok(pages) => pages,
        Err(e) => {
            eprintln!("docgen: {e}");
            return ExitCode::from(2);
        }
    };
    let result = if check {
        docs::check(&root, &pages)
    } else {
        docs::write(&root, &pages)
    };
    let differences = match result {
        Ok(d) => d,
        Err(e) => {
            eprintln!("docgen: {e}");
            return ExitCode::from(2);
        }
    };
    if check {
        if differences.is_empty() {
            println!("docs are up to date ({} pages)", pages.len());
            return ExitCode::SUCCESS;
        }
        eprintln!(
            "docs are out of date; run `{}` and commit the result:",
            docs::FIX_COMMAND
        );
        for d in &differences {
            eprintln!("  {d}");
        }
        return ExitCode::from(1);
    }
    for d in &differences {
        match d {
            docs::Difference::Missing(path) => println!("created {}", path.display()),
            docs::Difference::Changed(path) => println!("updated {}", path.display()),
            docs::Difference::Stale(path) => println!("removed {}", path.display()),
        }
    }
    println!("{} pages, {} updated", pages.len(), differences.len());
    ExitCode::SUCCESS
}

fn usage(message: &str) -> ExitCode {
    eprintln!("docgen: {message}\nusage: docgen [--check] [--root DIR]");
    ExitCode::from(2)
}
