//! `scripts/release.sh` produces what a registry serves (zip, SHA256SUMS, manifest), and an
//! ordinary `terraform init` installs that zip from a filesystem mirror in the packed layout.
//! Terraform records only `h1:` hashes for mirrored packages by itself, so the test seeds
//! `.terraform.lock.hcl` with the SHA256SUMS entry as a `zh:` hash: `init` must accept the zip
//! against it (and refuse it against a wrong one) and keep it in the lock file; the data
//! source example then plans with the installed provider.
//!
//! The same `dist/` is a provider network mirror: served over HTTPS (a static file server in
//! the test, its certificate from a throw-away CA that `terraform` trusts through
//! `SSL_CERT_FILE`), `terraform init` installs the provider from it with the checksum of the
//! mirror's `<version>.json` verified, and fails when that checksum is another one.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use acceptance_tests::{Workdir, repo_file, workspace_root};

const NAME: &str = "terraform-provider-karpenter";

fn version() -> String {
    acceptance_tests::provider_version()
}

fn platform() -> String {
    let os = std::env::consts::OS;
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{os}_{arch}")
}

/// Runs the release script into `dist`, packaging the debug build.
fn release_into(dist: &Path) {
    let out = release_command(dist, &[])
        .output()
        .expect("run scripts/release.sh");
    assert!(
        out.status.success(),
        "release.sh failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The release script's command, packaging the debug build into `dist`, with `env` set.
fn release_command(dist: &Path, env: &[(&str, &OsStr)]) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg(workspace_root().join("scripts/release.sh"))
        .env("RELEASE_PROFILE", "debug")
        .env("DIST", dist)
        .env_remove("GPG_FINGERPRINT");
    for (key, value) in env {
        cmd.env(key, value);
    }
    cmd
}

/// `gpg` with its home in `home`, no terminal, no prompts.
fn gpg(home: &Path, args: &[&str]) -> std::process::Output {
    Command::new("gpg")
        .env("GNUPGHOME", home)
        .args(["--batch", "--no-tty"])
        .args(args)
        .output()
        .expect("run gpg")
}

/// A throw-away signing key in a fresh GnuPG home; returns its fingerprint.
fn throwaway_key(home: &Path) -> String {
    std::fs::set_permissions(home, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod GNUPGHOME");
    let made = gpg(
        home,
        &[
            "--passphrase",
            "",
            "--quick-gen-key",
            "Release Test <release-test@example.invalid>",
            "rsa2048",
            "sign",
            "never",
        ],
    );
    assert!(
        made.status.success(),
        "gpg key generation failed: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let listed = gpg(home, &["--with-colons", "--list-secret-keys"]);
    String::from_utf8_lossy(&listed.stdout)
        .lines()
        .find_map(|l| {
            l.strip_prefix("fpr:")
                .map(|rest| rest.trim_matches(':').to_string())
        })
        .expect("a fingerprint in gpg --list-secret-keys")
}

#[test]
fn sha256sums_are_signed_when_a_key_is_given_and_only_then() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let home = scratch.path().join("gnupg");
    std::fs::create_dir(&home).expect("mkdir GNUPGHOME");
    let fingerprint = throwaway_key(&home);
    let dist = scratch.path().join("dist");
    let sums = dist.join(format!("{NAME}_{}_SHA256SUMS", version()));
    let sig = sums.with_file_name(format!("{NAME}_{}_SHA256SUMS.sig", version()));

    // unsigned when no key is given
    release_into(&dist);
    assert!(sums.is_file());
    assert!(!sig.exists(), "a signature appeared although no key was given");

    // signed with the given key: a detached signature gpg verifies against SHA256SUMS
    let signed = release_command(
        &dist,
        &[
            ("GNUPGHOME", home.as_os_str()),
            ("GPG_FINGERPRINT", OsStr::new(&fingerprint)),
        ],
    )
    .output()
    .expect("run scripts/release.sh");
    assert!(
        signed.status.success(),
        "signed release failed: {}",
        String::from_utf8_lossy(&signed.stderr)
    );
    assert!(String::from_utf8_lossy(&signed.stdout).contains("SHA256SUMS.sig"));
    let verified = gpg(
        &home,
        &[
            "--status-fd",
            "1",
            "--verify",
            &sig.to_string_lossy(),
            &sums.to_string_lossy(),
        ],
    );
    assert!(
        verified.status.success(),
        "gpg --verify failed: {}",
        String::from_utf8_lossy(&verified.stderr)
    );
    assert!(
        String::from_utf8_lossy(&verified.stdout).contains(&format!("VALIDSIG {fingerprint}")),
        "not signed by the given key: {}",
        String::from_utf8_lossy(&verified.stdout)
    );

    // the signature covers the content: a changed SHA256SUMS no longer verifies
    let mut tampered = std::fs::read(&sums).expect("read SHA256SUMS");
    tampered.extend_from_slice(b"0000  extra.zip\n");
    std::fs::write(&sums, tampered).expect("write SHA256SUMS");
    let refused = gpg(
        &home,
        &["--verify", &sig.to_string_lossy(), &sums.to_string_lossy()],
    );
    assert!(!refused.status.success(), "a tampered SHA256SUMS still verified");

    // a key that cannot sign fails the release instead of shipping it unsigned
    let missing = release_command(
        &dist,
        &[
            ("GNUPGHOME", home.as_os_str()),
            ("GPG_FINGERPRINT", OsStr::new("0000000000000000DEADBEEF")),
        ],
    )
    .output()
    .expect("run scripts/release.sh");
    assert!(
        !missing.status.success(),
        "release succeeded with a key that does not exist"
    );
    assert!(String::from_utf8_lossy(&missing.stderr).contains("could not sign"));
    assert!(!sig.exists(), "a stale signature was left beside SHA256SUMS");

    let _ = Command::new("gpgconf")
        .env("GNUPGHOME", &home)
        .args(["--kill", "gpg-agent"])
        .status();
}

#[test]
fn release_output_installs_through_a_filesystem_mirror_with_matching_checksums() {
    let version = version();
    let platform = platform();
    let scratch = tempfile::tempdir().expect("tempdir");
    let dist = scratch.path().join("dist");
    release_into(&dist);

    let zip_name = format!("{NAME}_{version}_{platform}.zip");
    let zip_path = dist.join(&zip_name);
    assert!(zip_path.is_file(), "no {}", zip_path.display());

    // The manifest declares protocol 6.0.
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dist.join(format!("{NAME}_{version}_manifest.json"))).expect("manifest"),
    )
    .expect("manifest is JSON");
    assert_eq!(
        manifest,
        serde_json::json!({"version": 1, "metadata": {"protocol_versions": ["6.0"]}})
    );

    // The zip holds exactly the binary, under the name Terraform looks for.
    let listing = Command::new("unzip")
        .arg("-Z1")
        .arg(&zip_path)
        .output()
        .expect("unzip -Z1");
    assert!(listing.status.success());
    assert_eq!(
        String::from_utf8_lossy(&listing.stdout).trim(),
        format!("{NAME}_v{version}")
    );

    let sums =
        std::fs::read_to_string(dist.join(format!("{NAME}_{version}_SHA256SUMS"))).expect("SHA256SUMS");
    let zip_sum = sums
        .lines()
        .find_map(|l| {
            let (sum, file) = l.split_once("  ")?;
            (file == zip_name).then(|| sum.to_string())
        })
        .unwrap_or_else(|| panic!("no line for {zip_name} in SHA256SUMS:\n{sums}"));
    assert_eq!(zip_sum.len(), 64, "{zip_sum}");

    // A filesystem mirror in the packed layout, and a CLI config that installs only from it.
    let mirror = scratch.path().join("mirror");
    let packed = mirror.join("registry.terraform.io/karpenter/karpenter");
    std::fs::create_dir_all(&packed).expect("mirror dir");
    std::fs::copy(&zip_path, packed.join(&zip_name)).expect("copy zip into the mirror");

    let example = repo_file("examples/data-sources/karpenter_controller_policy/data-source.tf");
    let config = format!(
        "terraform {{\n  required_providers {{\n    karpenter = {{\n      source  = \"karpenter/karpenter\"\n      version = \"{version}\"\n    }}\n  }}\n}}\n\n{example}"
    );
    let work = Workdir::new(&config);
    work.write(
        "terraformrc",
        &format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path    = \"{}\"\n    include = [\"registry.terraform.io/karpenter/karpenter\"]\n  }}\n  direct {{\n    exclude = [\"registry.terraform.io/karpenter/karpenter\"]\n  }}\n}}\n",
            mirror.display()
        ),
    );
    // A filesystem mirror alone makes Terraform record only its own `h1:` hash; the `zh:` hash
    // is what a registry's SHA256SUMS vouches for. So the lock file starts out holding only
    // the SHA256SUMS entry, and `terraform init` must accept the mirrored zip against it...
    let lock_with = |zh: &str| {
        format!(
            "provider \"registry.terraform.io/karpenter/karpenter\" {{\n  version = \"{version}\"\n  hashes = [\n    \"zh:{zh}\",\n  ]\n}}\n"
        )
    };
    // ...and reject it when the recorded hash is another one (the control).
    let wrong: String = zip_sum
        .chars()
        .map(|c| if c == '0' { '1' } else { '0' })
        .collect();
    work.write(".terraform.lock.hcl", &lock_with(&wrong));
    let refused = work.terraform(&["init", "-no-color", "-input=false"]).failed();
    assert!(
        refused.text().contains("doesn't match any of the checksums"),
        "{}",
        refused.output()
    );
    let _ = std::fs::remove_dir_all(work.path().join(".terraform"));

    work.write(".terraform.lock.hcl", &lock_with(&zip_sum));
    work.terraform(&["init", "-no-color", "-input=false"]).ok();

    let lock = std::fs::read_to_string(work.path().join(".terraform.lock.hcl")).expect("lock file");
    assert!(
        lock.contains("provider \"registry.terraform.io/karpenter/karpenter\""),
        "{lock}"
    );
    let quoted = format!("\"{version}\"");
    assert!(
        lock.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["version", "=", quoted.as_str()]),
        "{lock}"
    );
    assert!(
        lock.contains(&format!("\"zh:{zip_sum}\"")),
        "the lock file does not record the SHA256SUMS hash zh:{zip_sum}:\n{lock}"
    );
    assert!(
        lock.contains("\"h1:"),
        "terraform added no h1: hash of the unpacked package:\n{lock}"
    );

    // The SHA256SUMS file itself checks out with the standard tool.
    let check = Command::new("sha256sum")
        .arg("-c")
        .arg(format!("{NAME}_{version}_SHA256SUMS"))
        .current_dir(&dist)
        .output()
        .expect("sha256sum -c");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );

    // The installed binary is the one from the zip and it serves the example.
    let installed = work
        .path()
        .join(".terraform/providers/registry.terraform.io/karpenter/karpenter")
        .join(&version)
        .join(&platform)
        .join(format!("{NAME}_v{version}"));
    assert!(installed.is_file(), "no {}", installed.display());
    let plan = work.plan().ok();
    assert!(
        plan.stdout.contains("controller_policy_json"),
        "{}",
        plan.output()
    );
}

/// The SHA-256 SHA256SUMS gives `zip_name`.
fn listed_sum(dist: &Path, zip_name: &str) -> String {
    let sums =
        std::fs::read_to_string(dist.join(format!("{NAME}_{}_SHA256SUMS", version()))).expect("SHA256SUMS");
    sums.lines()
        .find_map(|l| {
            let (sum, file) = l.split_once("  ")?;
            (file == zip_name).then(|| sum.to_string())
        })
        .unwrap_or_else(|| panic!("no line for {zip_name} in SHA256SUMS:\n{sums}"))
}

/// A static file server for `root` on 127.0.0.1 over HTTPS, as a team's web server for `dist/`
/// would be, until the test ends. Its certificate (for 127.0.0.1 and localhost) is signed by a
/// throw-away CA: [`StaticHttps::ca_pem`] is what a client must trust.
struct StaticHttps {
    port: u16,
    ca_pem: String,
    /// The requests served, as `METHOD /path STATUS`.
    log: Arc<Mutex<Vec<String>>>,
}

impl StaticHttps {
    fn start(root: PathBuf) -> Self {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let certs = kube_testserver::tls::generate().expect("certificates");
        let config = kube_testserver::tls::server_config(&certs).expect("TLS configuration");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let served = log.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (config, root, served) = (config.clone(), root.clone(), served.clone());
                std::thread::spawn(move || {
                    let Ok(conn) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    let _ = serve_one(rustls::StreamOwned::new(conn, stream), &root, &served);
                });
            }
        });
        StaticHttps {
            port,
            ca_pem: certs.ca_pem,
            log,
        }
    }

    fn requests(&self) -> Vec<String> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

/// One request on one connection (answered with `Connection: close`): GET or HEAD of a file
/// under `root`, JSON as `application/json` (the protocol asks for it), anything else 404.
fn serve_one(
    stream: rustls::StreamOwned<rustls::ServerConnection, std::net::TcpStream>,
    root: &Path,
    log: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
    }
    let mut parts = request.split_whitespace();
    let (method, path) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
    let relative = path.trim_start_matches('/');
    let file = root.join(relative);
    let body = if relative.split('/').any(|p| p == "..") {
        None
    } else {
        std::fs::read(&file).ok()
    };
    let (status, kind, body) = match body {
        Some(body) if file.is_file() => {
            let kind = match file.extension().and_then(OsStr::to_str) {
                Some("json") => "application/json",
                Some("zip") => "application/zip",
                _ => "application/octet-stream",
            };
            ("200 OK", kind, body)
        }
        _ => ("404 Not Found", "text/plain", b"not found\n".to_vec()),
    };
    if let Ok(mut log) = log.lock() {
        log.push(format!("{method} {path} {}", &status[..3]));
    }
    let stream = reader.get_mut();
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != "HEAD" {
        stream.write_all(&body)?;
    }
    stream.flush()?;
    stream.conn.send_close_notify();
    stream.flush()
}

#[test]
fn release_output_is_a_network_mirror_terraform_installs_from_over_https() {
    let version = version();
    let platform = platform();
    let scratch = tempfile::tempdir().expect("tempdir");
    let dist = scratch.path().join("dist");
    release_into(&dist);
    let zip_name = format!("{NAME}_{version}_{platform}.zip");
    let zip_sum = listed_sum(&dist, &zip_name);

    // The mirror's two documents, as the provider network mirror protocol has them: the
    // versions, then per version one archive per platform, its URL relative to the document
    // and its zh: hash (the zip's SHA-256, as SHA256SUMS has it).
    let mirror = dist.join("registry.terraform.io/karpenter/karpenter");
    let read_json = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(mirror.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}\n{text}"))
    };
    assert_eq!(
        read_json("index.json"),
        serde_json::json!({"versions": {version.as_str(): {}}})
    );
    let archives = read_json(&format!("{version}.json"));
    assert_eq!(
        archives,
        serde_json::json!({"archives": {platform.as_str(): {
            "url": format!("../../../{zip_name}"),
            "hashes": [format!("zh:{zip_sum}")],
        }}})
    );

    // Served over HTTPS, with terraform trusting the server's CA and installing this provider
    // from the mirror alone.
    let server = StaticHttps::start(dist.clone());
    let ca = scratch.path().join("mirror-ca.pem");
    std::fs::write(&ca, &server.ca_pem).expect("write the CA");
    let example = repo_file("examples/data-sources/karpenter_controller_policy/data-source.tf");
    let config = format!(
        "terraform {{\n  required_providers {{\n    karpenter = {{\n      source  = \"karpenter/karpenter\"\n      version = \"{version}\"\n    }}\n  }}\n}}\n\n{example}"
    );
    let mut work = Workdir::new(&config);
    work.write(
        "terraformrc",
        &format!(
            "provider_installation {{\n  network_mirror {{\n    url     = \"https://127.0.0.1:{}/\"\n    include = [\"registry.terraform.io/karpenter/karpenter\"]\n  }}\n  direct {{\n    exclude = [\"registry.terraform.io/karpenter/karpenter\"]\n  }}\n}}\n",
            server.port
        ),
    );
    work.env("SSL_CERT_FILE", &ca.to_string_lossy());
    let init = work.terraform(&["init", "-no-color", "-input=false"]).ok();
    // "verified checksum": the zip matched the mirror's zh: hash (a mirror without hashes
    // installs "unauthenticated").
    assert!(
        init.text().contains(&format!(
            "Installed karpenter/karpenter v{version} (verified checksum)"
        )),
        "{}",
        init.output()
    );
    let requests = server.requests();
    for wanted in [
        "GET /registry.terraform.io/karpenter/karpenter/index.json 200".to_string(),
        format!("GET /registry.terraform.io/karpenter/karpenter/{version}.json 200"),
        format!("GET /{zip_name} 200"),
    ] {
        assert!(requests.contains(&wanted), "no {wanted:?} in {requests:?}");
    }
    let plan = work.plan().ok();
    assert!(
        plan.stdout.contains("controller_policy_json"),
        "{}",
        plan.output()
    );

    // Terraform records the h1: hash it computes; a lock file that holds the SHA256SUMS entry
    // (zh:) installs from the mirror too, and keeps it.
    let lock = std::fs::read_to_string(work.path().join(".terraform.lock.hcl")).expect("lock file");
    assert!(lock.contains("\"h1:"), "{lock}");
    let _ = std::fs::remove_dir_all(work.path().join(".terraform"));
    work.write(
        ".terraform.lock.hcl",
        &format!(
            "provider \"registry.terraform.io/karpenter/karpenter\" {{\n  version = \"{version}\"\n  hashes = [\n    \"zh:{zip_sum}\",\n  ]\n}}\n"
        ),
    );
    work.terraform(&["init", "-no-color", "-input=false"]).ok();
    let lock = std::fs::read_to_string(work.path().join(".terraform.lock.hcl")).expect("lock file");
    assert!(lock.contains(&format!("\"zh:{zip_sum}\"")), "{lock}");

    // The control: a mirror whose document gives another hash fails the install.
    let wrong: String = zip_sum
        .chars()
        .map(|c| if c == '0' { '1' } else { '0' })
        .collect();
    let document = mirror.join(format!("{version}.json"));
    let text = std::fs::read_to_string(&document).expect("read the mirror document");
    std::fs::write(&document, text.replace(&zip_sum, &wrong)).expect("write the mirror document");
    let _ = std::fs::remove_dir_all(work.path().join(".terraform"));
    let _ = std::fs::remove_file(work.path().join(".terraform.lock.hcl"));
    let refused = work.terraform(&["init", "-no-color", "-input=false"]).failed();
    assert!(
        refused.text().contains("doesn't match the expected checksum"),
        "{}",
        refused.output()
    );
}

/// `CHANGELOG.md` in keep-a-changelog's shape (#40): `## [Unreleased]` first, then one
/// `## [x.y.z] - YYYY-MM-DD` section per release, newest first, no version twice; inside each,
/// the standard headings only, each at most once.
#[test]
fn the_changelog_has_one_section_per_release_and_each_heading_once() {
    const HEADINGS: [&str; 6] = ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"];
    let text = repo_file("CHANGELOG.md");
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            sections.push((title.to_string(), Vec::new()));
        } else if let Some(heading) = line.strip_prefix("### ") {
            let (section, headings) = sections
                .last_mut()
                .unwrap_or_else(|| panic!("### {heading} before any release section"));
            assert!(
                HEADINGS.contains(&heading),
                "{section}: {heading:?} is not one of keep-a-changelog's headings {HEADINGS:?}"
            );
            assert!(
                !headings.iter().any(|h| h == heading),
                "{section}: ### {heading} appears twice"
            );
            headings.push(heading.to_string());
        }
    }
    assert_eq!(
        sections.first().map(|(t, _)| t.as_str()),
        Some("[Unreleased]"),
        "the first section is [Unreleased]"
    );
    let mut versions: Vec<Vec<u64>> = Vec::new();
    for (title, _) in sections.iter().skip(1) {
        let (version, date) = title
            .strip_prefix('[')
            .and_then(|t| t.split_once("] - "))
            .unwrap_or_else(|| panic!("{title:?} is not `[x.y.z] - YYYY-MM-DD`"));
        let parts: Vec<u64> = version
            .split('.')
            .map(|p| {
                p.parse()
                    .unwrap_or_else(|_| panic!("{title:?}: {version} is not x.y.z"))
            })
            .collect();
        assert_eq!(parts.len(), 3, "{title:?}: {version} is not x.y.z");
        let date_ok = date.len() == 10
            && date.char_indices().all(|(i, c)| {
                if i == 4 || i == 7 {
                    c == '-'
                } else {
                    c.is_ascii_digit()
                }
            });
        assert!(date_ok, "{title:?}: {date} is not YYYY-MM-DD");
        if let Some(newer) = versions.last() {
            assert!(&parts < newer, "{title:?} is not older than the section above it");
        }
        versions.push(parts);
    }
}
