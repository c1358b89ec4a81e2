//! Whether a host snapshot fits in the memory the process can still use.
//!
//! Before capturing, the bytes the snapshot would allocate are compared with the tightest of:
//! the memory cgroup's limit minus its usage (v2 `memory.max` - `memory.current`, v1
//! `memory.limit_in_bytes` - `memory.usage_in_bytes`, for the process's cgroup and each
//! ancestor up to the hierarchy's root), the system's `MemAvailable`, and the address-space limit
//! (`RLIMIT_AS`) minus the process's current size. A snapshot that does not fit with a margin
//! is declined: capturing it would get the application killed by the kernel's OOM killer.

use super::CaptureError;
use std::path::{Path, PathBuf};

/// Head room kept on top of the snapshot: a quarter of it, at least 64 MiB.
pub fn margin(needed: u64) -> u64 {
    (needed / 4).max(64 << 20)
}

/// One limit the process is under: bytes still usable and where that comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Headroom {
    /// Bytes the process can still allocate under this limit.
    pub bytes: u64,
    /// The limit, for messages (`memory cgroup v2 /sys/fs/cgroup/x`).
    pub source: String,
}

/// Declines when `needed` bytes (plus [`margin`]) do not fit under the tightest limit.
pub fn check(needed: u64) -> Result<(), CaptureError> {
    if needed == 0 {
        return Ok(());
    }
    let Some(tightest) = limits(&SystemFiles).into_iter().min_by_key(|h| h.bytes) else {
        return Ok(());
    };
    let margin = margin(needed);
    if needed.saturating_add(margin) > tightest.bytes {
        return Err(CaptureError::HostMemory {
            needed,
            available: tightest.bytes,
            limit: tightest.source,
            margin,
        });
    }
    Ok(())
}

/// Where the limits are read from (the real files; a fake directory in unit tests).
pub trait LimitFiles {
    /// Contents of a file, `None` when unreadable.
    fn read(&self, path: &Path) -> Option<String>;
    /// The cgroup v2 and v1 mount points.
    fn cgroup_roots(&self) -> (PathBuf, PathBuf);
    /// `RLIMIT_AS` soft limit, `None` when unlimited.
    fn address_space_limit(&self) -> Option<u64>;
}

/// The running system.
pub struct SystemFiles;

impl LimitFiles for SystemFiles {
    fn read(&self, path: &Path) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }
    fn cgroup_roots(&self) -> (PathBuf, PathBuf) {
        let v2 = if Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
            PathBuf::from("/sys/fs/cgroup")
        } else {
            PathBuf::from("/sys/fs/cgroup/unified")
        };
        (v2, PathBuf::from("/sys/fs/cgroup/memory"))
    }
    fn address_space_limit(&self) -> Option<u64> {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: out-pointer to a local.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0
            || r.rlim_cur == libc::RLIM_INFINITY
        {
            return None;
        }
        Some(r.rlim_cur)
    }
}

fn number(text: Option<String>) -> Option<u64> {
    text?.trim().parse::<u64>().ok()
}

/// `limit - usage` of `dir` and each ancestor up to `root`, for the given file names.
fn cgroup_headroom(
    files: &dyn LimitFiles,
    root: &Path,
    rel: &str,
    limit: &str,
    usage: &str,
    label: &str,
) -> Vec<Headroom> {
    let mut out = Vec::new();
    let mut dir = root.join(rel.trim_start_matches('/'));
    loop {
        // "max" (v2) and huge values (v1 without a limit) do not parse or exceed memory: skipped.
        if let (Some(l), Some(u)) = (
            number(files.read(&dir.join(limit))),
            number(files.read(&dir.join(usage))),
        ) && l < (1u64 << 62)
        {
            out.push(Headroom {
                bytes: l.saturating_sub(u),
                source: format!("{label} {}", dir.display()),
            });
        }
        if dir == root || !dir.pop() || !dir.starts_with(root) {
            break;
        }
    }
    out
}

/// Every limit that applies to this process.
pub fn limits(files: &dyn LimitFiles) -> Vec<Headroom> {
    let mut out = Vec::new();
    let (v2_root, v1_root) = files.cgroup_roots();
    for line in files
        .read(Path::new("/proc/self/cgroup"))
        .unwrap_or_default()
        .lines()
    {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            out.extend(cgroup_headroom(
                files,
                &v2_root,
                path,
                "memory.max",
                "memory.current",
                "memory cgroup v2",
            ));
        } else if controllers.split(',').any(|c| c == "memory") {
            out.extend(cgroup_headroom(
                files,
                &v1_root,
                path,
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                "memory cgroup v1",
            ));
        }
    }
    let meminfo = files.read(Path::new("/proc/meminfo")).unwrap_or_default();
    if let Some(kb) = field_kib(&meminfo, "MemAvailable:") {
        out.push(Headroom {
            bytes: kb.saturating_mul(1024),
            source: "MemAvailable in /proc/meminfo".to_owned(),
        });
    }
    if let Some(limit) = files.address_space_limit() {
        let status = files
            .read(Path::new("/proc/self/status"))
            .unwrap_or_default();
        let size = field_kib(&status, "VmSize:")
            .unwrap_or(0)
            .saturating_mul(1024);
        out.push(Headroom {
            bytes: limit.saturating_sub(size),
            source: format!("RLIMIT_AS of {limit} bytes"),
        });
    }
    out
}

/// The number of kB on the line starting with `key` (`/proc/meminfo` style).
fn field_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Fake {
        files: HashMap<PathBuf, String>,
        rlimit: Option<u64>,
    }

    impl LimitFiles for Fake {
        fn read(&self, path: &Path) -> Option<String> {
            self.files.get(path).cloned()
        }
        fn cgroup_roots(&self) -> (PathBuf, PathBuf) {
            (PathBuf::from("/v2"), PathBuf::from("/v1"))
        }
        fn address_space_limit(&self) -> Option<u64> {
            self.rlimit
        }
    }

    fn fake(pairs: &[(&str, &str)], rlimit: Option<u64>) -> Fake {
        Fake {
            files: pairs
                .iter()
                .map(|(p, v)| (PathBuf::from(p), v.to_string()))
                .collect(),
            rlimit,
        }
    }

    #[test]
    fn every_kind_of_limit_is_read() {
        let f = fake(
            &[
                ("/proc/self/cgroup", "4:memory:/jobs/a\n0::/svc\n"),
                ("/v1/jobs/a/memory.limit_in_bytes", "1000\n"),
                ("/v1/jobs/a/memory.usage_in_bytes", "400\n"),
                ("/v1/jobs/memory.limit_in_bytes", "9223372036854771712\n"),
                ("/v1/jobs/memory.usage_in_bytes", "400\n"),
                ("/v2/svc/memory.max", "max\n"),
                ("/v2/svc/memory.current", "5\n"),
                ("/v2/memory.max", "3000\n"),
                ("/v2/memory.current", "1000\n"),
                ("/proc/meminfo", "MemTotal: 10 kB\nMemAvailable:    8 kB\n"),
                ("/proc/self/status", "VmSize:\t   2 kB\n"),
            ],
            Some(10_000),
        );
        let got: Vec<(u64, String)> = limits(&f)
            .into_iter()
            .map(|h| (h.bytes, h.source))
            .collect();
        assert_eq!(
            got,
            vec![
                (600, "memory cgroup v1 /v1/jobs/a".to_owned()),
                (2000, "memory cgroup v2 /v2".to_owned()),
                (8192, "MemAvailable in /proc/meminfo".to_owned()),
                (10_000 - 2048, "RLIMIT_AS of 10000 bytes".to_owned()),
            ],
            "unlimited levels are skipped, ancestors are read"
        );
    }

    #[test]
    fn nothing_readable_means_no_limit() {
        assert!(limits(&fake(&[], None)).is_empty());
    }

    #[test]
    fn the_margin_is_a_quarter_and_at_least_64_mib() {
        assert_eq!(margin(1 << 30), 1 << 28);
        assert_eq!(margin(1), 64 << 20);
    }
}
