//! How much memory the host can really give the process: vhsa's pools are host memory, so a
//! pool larger than that would invite allocations the host cannot back (an OOM kill instead of
//! `OUT_OF_RESOURCES`). The answer is the smallest of the machine's `MemTotal` and the memory
//! limits of the process's cgroup and its ancestors (v2 `memory.max`, v1
//! `memory.limit_in_bytes`), read once when the topology is built.
//!
//! Pools reserve no memory when they allocate (the mappings are filled on first touch), so a
//! large allocation is also checked against the memory the host has available at that moment
//! ([`vgpu::host_memory::refusal`]).

use std::path::{Path, PathBuf};
use vgpu::host_memory::meminfo_bytes;

/// A limit file's value (`max` and absurd values are no limit).
fn limit(text: &str) -> Option<u64> {
    let v: u64 = text.trim().parse().ok()?;
    (v < (1 << 60)).then_some(v)
}

/// The smallest limit among `file` in `dir` and each of its ancestors up to `root`.
fn smallest_up(root: &Path, cgroup: &str, file: &str) -> Option<u64> {
    let mut dir: PathBuf = root.join(cgroup.trim_start_matches('/'));
    let mut best: Option<u64> = None;
    loop {
        if let Some(v) = std::fs::read_to_string(dir.join(file))
            .ok()
            .and_then(|t| limit(&t))
        {
            best = Some(best.map_or(v, |b| b.min(v)));
        }
        if dir == root || !dir.pop() || !dir.starts_with(root) {
            return best;
        }
    }
}

/// The memory limit of the process's cgroup (`/proc/self/cgroup` text), v2 or v1.
fn cgroup_limit(self_cgroup: &str) -> Option<u64> {
    let mut best: Option<u64> = None;
    for line in self_cgroup.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        let found = if controllers.is_empty() {
            smallest_up(Path::new("/sys/fs/cgroup"), path, "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            smallest_up(
                Path::new("/sys/fs/cgroup/memory"),
                path,
                "memory.limit_in_bytes",
            )
        } else {
            None
        };
        if let Some(v) = found {
            best = Some(best.map_or(v, |b| b.min(v)));
        }
    }
    best
}

/// The bytes the host can back for this process, when known.
pub(crate) fn backable_bytes() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| meminfo_bytes(&t, "MemTotal:"));
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| cgroup_limit(&t));
    match (total, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_and_limit_files_are_read() {
        assert_eq!(limit("1610612736\n"), Some(1610612736));
        assert_eq!(limit("max\n"), None);
        assert_eq!(limit("9223372036854771712"), None, "v1's unlimited");
    }

    #[test]
    fn the_smallest_limit_up_the_hierarchy_wins() {
        let root = std::env::temp_dir().join(format!("vhsa-backing-{}", std::process::id()));
        let leaf = root.join("a/b");
        std::fs::create_dir_all(&leaf).unwrap();
        std::fs::write(root.join("a/memory.max"), "1000\n").unwrap();
        std::fs::write(leaf.join("memory.max"), "max\n").unwrap();
        assert_eq!(smallest_up(&root, "/a/b", "memory.max"), Some(1000));
        std::fs::write(leaf.join("memory.max"), "500\n").unwrap();
        assert_eq!(smallest_up(&root, "/a/b", "memory.max"), Some(500));
        let _ = std::fs::remove_dir_all(&root);
    }
}
