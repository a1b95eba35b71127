//! `cpu_wrapper`: stands in a provider directory as `terraform-provider-<name>` (a symbolic link)
//! for the bench's figure 11, runs the real plugin binary (`BENCH_CPU_EXEC`) with the same
//! arguments and standard streams, waits for it and appends one line to `BENCH_CPU_OUT`:
//! the plugin's user and system CPU in microseconds (`getrusage(RUSAGE_CHILDREN)`: the plugin
//! and whatever it waited for), then its exit status is passed on. Terraform's own CPU is
//! then the CPU of the whole `terraform` command (its children included) minus these lines.

use std::io::Write;
use std::process::{Command, ExitCode};

/// User and system CPU, in microseconds, of the children this process has waited for.
fn children_cpu_us() -> (i64, i64) {
    // SAFETY: getrusage only writes into the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage that lives for the call.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    if rc != 0 {
        return (0, 0);
    }
    let us = |t: libc::timeval| t.tv_sec * 1_000_000 + t.tv_usec;
    (us(usage.ru_utime), us(usage.ru_stime))
}

fn main() -> ExitCode {
    let (Some(exec), Some(out)) = (
        std::env::var_os("BENCH_CPU_EXEC"),
        std::env::var_os("BENCH_CPU_OUT"),
    ) else {
        eprintln!("cpu_wrapper: BENCH_CPU_EXEC (the plugin) and BENCH_CPU_OUT (the record) must be set");
        return ExitCode::from(2);
    };
    let status = match Command::new(&exec).args(std::env::args_os().skip(1)).status() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cpu_wrapper: starting {}: {e}", exec.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    let (user, system) = children_cpu_us();
    let record = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out)
        .and_then(|mut f| writeln!(f, "{user} {system}"));
    if let Err(e) = record {
        eprintln!("cpu_wrapper: writing {}: {e}", out.to_string_lossy());
    }
    ExitCode::from(status.code().and_then(|c| u8::try_from(c).ok()).unwrap_or(1))
}
