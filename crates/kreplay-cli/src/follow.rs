//! Following the record files while the application runs: complete lines are read as the tool
//! appends them, and the dispatches they complete go into the rocpd database at once, one
//! transaction per look, so the database holds every completed dispatch even if `kreplay`
//! itself is killed.

use crate::exit_status::CliError;
use crate::report::rocpd::Database;
use crate::run_records::{self, Dispatch, Joiner};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the record directory is looked at.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// Where one record file has been read up to.
#[derive(Default)]
struct Tail {
    offset: u64,
    partial: Vec<u8>,
    joiner: Joiner,
}

/// Reads the record files of a directory incrementally.
#[derive(Default)]
pub struct Follower {
    files: HashMap<PathBuf, Tail>,
}

impl Follower {
    /// The dispatches completed by the lines appended since the last call, in file order.
    /// Files that cannot be read now are tried again next time.
    pub fn poll(&mut self, dir: &Path) -> Vec<Dispatch> {
        let mut done = Vec::new();
        let Ok(files) = run_records::record_files(dir) else {
            return done;
        };
        for file in files {
            let tail = self.files.entry(file.clone()).or_default();
            let mut fresh = Vec::new();
            let read = std::fs::File::open(&file).and_then(|mut f| {
                f.seek(SeekFrom::Start(tail.offset))?;
                f.read_to_end(&mut fresh)
            });
            let Ok(n) = read else { continue };
            tail.offset += n as u64;
            tail.partial.extend_from_slice(&fresh);
            let Some(end) = tail.partial.iter().rposition(|&b| b == b'\n') else {
                continue;
            };
            let complete: Vec<u8> = tail.partial.drain(..=end).collect();
            let text = String::from_utf8_lossy(&complete);
            done.extend(text.lines().filter_map(|l| tail.joiner.line(l)));
        }
        done
    }
}

/// A database being filled from the record directory by a thread.
pub struct Live {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<Result<Database, Box<(CliError, Database)>>>,
}

/// Starts following `dir` into `db`.
pub fn start(dir: PathBuf, mut db: Database) -> Live {
    let (stop, stopped) = mpsc::channel::<()>();
    let handle = std::thread::spawn(move || {
        let mut follower = Follower::default();
        loop {
            let last = !matches!(
                stopped.recv_timeout(INTERVAL),
                Err(mpsc::RecvTimeoutError::Timeout)
            );
            let batch = follower.poll(&dir);
            if let Err(e) = db.add(&batch) {
                return Err(Box::new((e, db)));
            }
            if last {
                return Ok(db);
            }
        }
    });
    Live { stop, handle }
}

impl Live {
    /// Reads what is left and closes the database; returns its path and dispatch count. On a
    /// database error the error is returned with the path, so the caller can write the file
    /// again from the whole records.
    pub fn finish(self) -> Result<(PathBuf, u64), (CliError, PathBuf)> {
        let _ = self.stop.send(());
        match self.handle.join() {
            Ok(Ok(db)) => Ok((db.path().to_owned(), db.dispatch_count())),
            Ok(Err(failed)) => {
                let (e, db) = *failed;
                Err((e, db.path().to_owned()))
            }
            Err(_) => Err((
                CliError::io(
                    "writing the rocpd database",
                    PathBuf::new(),
                    "the writer thread panicked",
                ),
                PathBuf::new(),
            )),
        }
    }
}

/// Creates the output directory and the database `<base>_results.db` in it, and starts
/// following `staging` into it. `None` when either cannot be made: the directory error is
/// reported after the run, a database error now, and the database is then written from the
/// whole records at the end.
pub fn open_live(
    staging: &Path,
    output_dir: &Path,
    base: &str,
    run: &crate::report::rocpd::RunInfo,
) -> Option<Live> {
    crate::output_path::ensure_writable_dir(output_dir).ok()?;
    let path = output_dir.join(crate::report::Format::Rocpd.file_name(base));
    match Database::create(&path, run.clone()) {
        Ok(db) => Some(start(staging.to_owned(), db)),
        Err(e) => {
            eprintln!("kreplay: warning: {e}; the database is written after the run instead");
            None
        }
    }
}

/// Stops following and returns the database file, or `None` after saying why (the caller then
/// writes it again from the whole records).
pub fn finish_live(live: Live) -> Option<PathBuf> {
    match live.finish() {
        Ok((path, _)) => Some(path),
        Err((e, _)) => {
            eprintln!("kreplay: warning: {e}; writing the database again from the records");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_records::tests::replayed_lines;
    use std::io::Write;

    #[test]
    fn lines_are_read_as_they_are_appended_and_a_partial_line_waits() {
        let dir = std::env::temp_dir().join(format!("kreplay-follow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kreplay-10.jsonl");
        let mut f = std::fs::File::create(&path).unwrap();
        let mut follower = Follower::default();
        assert!(follower.poll(&dir).is_empty());
        let one = replayed_lines(10, 1, "k", 2, 0);
        let two = replayed_lines(10, 2, "k", 3, 5000);
        f.write_all(one.as_bytes()).unwrap();
        let cut = two.len() - 10;
        f.write_all(&two.as_bytes()[..cut]).unwrap();
        let got = follower.poll(&dir);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].dispatch_id, got[0].passes.len()), (1, 2));
        f.write_all(&two.as_bytes()[cut..]).unwrap();
        let got = follower.poll(&dir);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].dispatch_id, got[0].passes.len()), (2, 3));
        assert!(follower.poll(&dir).is_empty());
        // A second process's file appearing later is read from its start; other files in the
        // directory are not records.
        std::fs::write(
            dir.join("kreplay-11.jsonl"),
            replayed_lines(11, 1, "k", 1, 0),
        )
        .unwrap();
        std::fs::write(dir.join("notes.txt"), "{}\n").unwrap();
        f.write_all(replayed_lines(10, 3, "k", 1, 9000).as_bytes())
            .unwrap();
        let got: Vec<(u64, u64)> = follower
            .poll(&dir)
            .iter()
            .map(|d| (d.pid, d.dispatch_id))
            .collect();
        assert_eq!(got, [(10, 3), (11, 1)]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
