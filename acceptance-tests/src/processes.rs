//! The processes a `terraform` run started, read from /proc, and SIGKILL: what the tests that
//! kill the provider plugin mid-operation (killed.rs, teardown.rs) use to find and stop it.

/// (parent pid, name, state) of a process from /proc.
pub fn proc_stat(pid: u32) -> Option<(u32, String, char)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text[open + 1..close].to_string();
    let mut rest = text[close + 1..].split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((ppid, name, state))
}

/// The provider plugin processes terraform `parent` started (zombies excluded).
pub fn provider_children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            proc_stat(*pid).is_some_and(|(ppid, name, state)| {
                ppid == parent && name.starts_with("terraform-prov") && state != 'Z'
            })
        })
        .collect()
}

/// Whether `pid` runs (exists and is not a zombie).
pub fn alive(pid: u32) -> bool {
    proc_stat(pid).is_some_and(|(_, _, state)| state != 'Z')
}

/// Sends SIGKILL to `pid`; panics when `kill` fails (a test that cannot kill proves nothing).
pub fn sigkill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap_or_else(|e| panic!("kill: {e}"));
    assert!(status.success(), "kill -KILL {pid} failed");
}
