//! A snapshot that would not fit in the memory the process may still use is declined, with a
//! message, instead of getting the application OOM-killed: the application (1 GiB of tracked,
//! resident device memory on vhsa) runs in a memory cgroup limited to 1.5 GiB that the test
//! creates and removes (v2 or v1, whichever is mounted; needs root). Where no cgroup can be
//! created, the test says so and uses the address-space limit (`RLIMIT_AS`) instead.

mod common;

use common::*;
use std::path::{Path, PathBuf};

const LIMIT_MIB: u64 = 1536;

/// A memory cgroup made for one test and removed afterwards.
struct MemoryCgroup {
    dir: PathBuf,
}

impl MemoryCgroup {
    /// Creates `kreplay-test-<pid>` with a memory limit of `LIMIT_MIB`, under the v2 hierarchy
    /// when it has the memory controller, else under the v1 memory hierarchy.
    fn create() -> Result<Self, String> {
        let name = format!("kreplay-test-{}", std::process::id());
        let v2 = mount_point("cgroup2", None);
        if let Some(root) = v2.filter(|r| {
            std::fs::read_to_string(r.join("cgroup.controllers"))
                .is_ok_and(|c| c.contains("memory"))
        }) {
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+memory");
            let dir = root.join(&name);
            std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
            let cg = MemoryCgroup { dir };
            cg.set("memory.max", &format!("{}", LIMIT_MIB << 20))?;
            let _ = cg.set("memory.swap.max", "0");
            return Ok(cg);
        }
        let root =
            mount_point("cgroup", Some("memory")).ok_or("no memory cgroup hierarchy is mounted")?;
        let dir = root.join(&name);
        std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let cg = MemoryCgroup { dir };
        cg.set("memory.limit_in_bytes", &format!("{}", LIMIT_MIB << 20))?;
        Ok(cg)
    }

    fn set(&self, file: &str, value: &str) -> Result<(), String> {
        std::fs::write(self.dir.join(file), value)
            .map_err(|e| format!("writing {value} to {}: {e}", self.dir.join(file).display()))
    }

    /// `exe args...` started inside the cgroup (a shell moves itself in, then execs).
    fn command(&self, exe: &Path) -> std::process::Command {
        let mut c = command(Path::new("/bin/sh"), &[]);
        c.arg("-c")
            .arg(format!(
                "echo $$ > '{}' && exec \"$0\" \"$@\"",
                self.dir.join("cgroup.procs").display()
            ))
            .arg(exe);
        c
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!("could not remove the test cgroup {}", self.dir.display());
    }
}

/// Mount point of a filesystem of type `fstype` (with `option` among its mount options).
fn mount_point(fstype: &str, option: Option<&str>) -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 4 && f[2] == fstype && option.is_none_or(|o| f[3].split(',').any(|x| x == o)))
            .then(|| PathBuf::from(f[1]))
    })
}

/// The 1 GiB snapshot beside the 1 GiB footprint, kept in host memory (`KREPLAY_SNAPSHOT=host`,
/// or `auto` with a device pool too small for it: vhsa's device memory is host memory too, so a
/// snapshot placed there would be as fatal, and only the host-bound part is counted), is
/// declined: one execution. With `auto` and vhsa's default pool size, the device pool reports
/// only what the host can back (the cgroup's limit here), so the snapshot does not go to
/// "device" memory the host cannot hold.
#[test]
fn a_snapshot_that_does_not_fit_the_memory_limit_is_declined_not_oom_killed() {
    let exe = app("replay", &[]);
    let cgroup = MemoryCgroup::create();
    for (mode, device_mb) in [("host", None), ("auto", Some("1100")), ("auto", None)] {
        let mut c = match &cgroup {
            Ok(cg) => cg.command(&exe),
            Err(why) => {
                eprintln!(
                    "no memory cgroup could be created ({why}); falling back to RLIMIT_AS of the process size + {LIMIT_MIB} MiB"
                );
                let mut c = command(&exe, &[]);
                c.env("KREPLAY_TEST_RLIMIT_AS", LIMIT_MIB.to_string());
                c
            }
        };
        c.args(["big", "1"])
            .env("KREPLAY_PASSES", "2")
            .env("KREPLAY_SNAPSHOT", mode);
        if let Some(mb) = device_mb {
            c.env("VHSA_DEVICE_MEMORY_MB", mb);
        }
        let out = c.output().unwrap();
        let err = stderr(&out);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            None,
            "{mode}: killed (out of memory?): {err}"
        );
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("APP OK"),
            "{mode}: {err}"
        );
        assert!(
            err.contains("not replayed") && err.contains("bytes of host memory"),
            "{mode}: {err}"
        );
        let limit = if cgroup.is_ok() {
            "memory cgroup"
        } else {
            "RLIMIT_AS"
        };
        assert!(
            err.contains(limit),
            "{mode}: the message names the limit ({limit}): {err}"
        );
    }
}
