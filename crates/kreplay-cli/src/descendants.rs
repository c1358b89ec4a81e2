//! Processes the application started that outlive it.
//!
//! `kreplay run` makes itself the child subreaper of the application's process tree
//! (`PR_SET_CHILD_SUBREAPER`): a process whose parent exits is re-parented to `kreplay`, not to
//! init. When the application exits, `kreplay` waits, up to a bound, until no such process is
//! left, so that their record files are complete before the outputs are written. Processes
//! still running at the bound are named in a warning and left running.
//!
//! A process outside the tree (re-parented to another subreaper) that still holds one of the
//! record files open is waited for and named the same way: it is found through
//! `/proc/<pid>/fd` from the pid in the record file's name.

use std::path::Path;
use std::time::{Duration, Instant};

/// Makes this process the subreaper of its descendants; `false` when the kernel refused.
pub fn adopt_orphans() -> bool {
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) takes integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
}

/// Reaps every exited child without blocking; `true` when children remain.
fn reap_exited() -> bool {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status into a valid local.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        match pid {
            p if p > 0 => continue,
            0 => return true,
            _ => {
                let err = std::io::Error::last_os_error();
                if err.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // ECHILD: no children at all.
                return false;
            }
        }
    }
}

/// `(ppid, state)` of process `pid` from `/proc/<pid>/stat`.
fn parent_and_state(proc_dir: &Path, pid: u32) -> Option<(u32, char)> {
    let stat = std::fs::read_to_string(proc_dir.join(pid.to_string()).join("stat")).ok()?;
    // The command name is in parentheses and may itself hold spaces or parentheses.
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((ppid, state))
}

/// Live (not zombie) descendants of `root`, sorted, from the process table in `proc_dir`.
pub fn live_descendants(proc_dir: &Path, root: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(proc_dir) else {
        return Vec::new();
    };
    let table: Vec<(u32, u32, char)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| parent_and_state(proc_dir, pid).map(|(ppid, st)| (pid, ppid, st)))
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for &(pid, ppid, _) in &table {
            if ppid == parent && !found.contains(&pid) {
                found.push(pid);
            }
        }
        i += 1;
    }
    let mut live: Vec<u32> = table
        .iter()
        .filter(|(pid, _, st)| *pid != root && *st != 'Z' && found.contains(pid))
        .map(|(pid, _, _)| *pid)
        .collect();
    live.sort_unstable();
    live
}

/// How waiting for the application's descendants ended.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Descendants still running when the wait ended, sorted by pid.
    pub still_running: Vec<u32>,
    /// Whether there were any to wait for.
    pub waited: bool,
    /// The signal that ended the wait early, if any.
    pub interrupted_by: Option<i32>,
}

/// Processes that hold a record file (`kreplay-<pid>.jsonl`) of `records` open for writing:
/// the pid in the file's name, when `/proc/<pid>/fd` has a link to that file.
pub fn record_writers(records: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(records) else {
        return Vec::new();
    };
    let mut writers: Vec<u32> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let pid: u32 = name
                .strip_prefix("kreplay-")?
                .strip_suffix(".jsonl")?
                .parse()
                .ok()?;
            let file = std::fs::canonicalize(e.path()).ok()?;
            let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
            fds.filter_map(Result::ok)
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == file))
                .then_some(pid)
        })
        .collect();
    writers.sort_unstable();
    writers
}

/// Waits until this process has no children left (the application has been waited for
/// already, so the remaining ones are its re-parented descendants) and no other process holds
/// a record file of `records` open, at most `bound`, or until `interrupted` returns a signal
/// number.
pub fn wait(bound: Duration, records: &Path, interrupted: impl Fn() -> Option<i32>) -> Outcome {
    let deadline = Instant::now() + bound;
    let mut outcome = Outcome::default();
    let me = std::process::id();
    let others = || {
        record_writers(records)
            .into_iter()
            .filter(|&p| p != me)
            .count()
            > 0
    };
    while reap_exited() | others() {
        outcome.waited = true;
        if let Some(sig) = interrupted() {
            outcome.interrupted_by = Some(sig);
            break;
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if outcome.waited {
        let mut running = live_descendants(Path::new("/proc"), me);
        running.extend(record_writers(records).into_iter().filter(|&p| p != me));
        running.sort_unstable();
        running.dedup();
        outcome.still_running = running;
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_proc(dir: &Path, rows: &[(u32, &str, char, u32)]) {
        for (pid, comm, state, ppid) in rows {
            let d = dir.join(pid.to_string());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("stat"),
                format!("{pid} ({comm}) {state} {ppid} 1 1 0 -1\n"),
            )
            .unwrap();
        }
        std::fs::create_dir_all(dir.join("self")).unwrap();
    }

    #[test]
    fn descendants_are_followed_through_the_tree_and_zombies_left_out() {
        let dir = std::env::temp_dir().join(format!("kreplay-proc-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        fake_proc(
            &dir,
            &[
                (1, "init", 'S', 0),
                (100, "kreplay", 'S', 1),
                (200, "app (worker) x", 'R', 100),
                (300, "grandchild", 'S', 200),
                (301, "dead", 'Z', 200),
                (400, "unrelated", 'S', 1),
            ],
        );
        assert_eq!(live_descendants(&dir, 100), vec![200, 300]);
        assert_eq!(live_descendants(&dir, 200), vec![300]);
        assert!(live_descendants(&dir, 400).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_process_holding_a_record_file_is_a_writer() {
        let dir = std::env::temp_dir().join(format!("kreplay-writers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let me = std::process::id();
        std::fs::write(dir.join("kreplay-1.jsonl"), "").unwrap();
        std::fs::write(dir.join("notes.txt"), "").unwrap();
        let own = dir.join(format!("kreplay-{me}.jsonl"));
        let open = std::fs::File::create(&own).unwrap();
        assert_eq!(record_writers(&dir), vec![me]);
        drop(open);
        assert!(record_writers(&dir).is_empty());
        assert!(record_writers(&dir.join("missing")).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_stat_line_is_read_after_the_command_name() {
        let dir = std::env::temp_dir().join(format!("kreplay-stat-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        fake_proc(&dir, &[(7, "a) S 99 (b", 'R', 3)]);
        assert_eq!(parent_and_state(&dir, 7), Some((3, 'R')));
        assert_eq!(parent_and_state(&dir, 8), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
