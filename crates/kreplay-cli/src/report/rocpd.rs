//! The rocpd database (`-f rocpd`): SQLite, with the table and column names of rocprofv3's
//! rocpd schema for what the records hold (node, process, thread, agent, queue, kernel symbol,
//! kernel dispatch), plus kreplay's own `kreplay_pass` and `kreplay_snapshot` tables.
//!
//! Dispatches are added in transactions, each dispatch whole inside one, so the file opens and
//! holds every dispatch committed so far whenever the writer stops, even by SIGKILL. During
//! `kreplay run` the database is filled while the application runs ([`crate::follow`]).
//!
//! Layout (documented in `docs/formats.md`): `rocpd_info_node.id` is 1, `rocpd_info_process.id`
//! is the OS process id and `rocpd_info_thread.id` the OS thread id, so the `pid`/`tid` columns
//! of the other tables read as ids and as OS ids alike. A kernel dispatch's `start`/`end` are
//! the times of the pass the application keeps (the last one).

use crate::exit_status::CliError;
use crate::records::Dispatch;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Version of kreplay's own tables, in `rocpd_metadata` as `kreplay_schema_version`.
pub const KREPLAY_SCHEMA_VERSION: u32 = 1;

const SCHEMA: &str = r#"
CREATE TABLE rocpd_metadata (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "tag" TEXT NOT NULL,
    "value" TEXT NOT NULL
);
CREATE TABLE rocpd_string (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT NOT NULL,
    "string" TEXT NOT NULL UNIQUE
);
CREATE TABLE rocpd_info_node (
    "id" INTEGER NOT NULL PRIMARY KEY,
    "guid" TEXT NOT NULL,
    "hash" BIGINT NOT NULL,
    "machine_id" TEXT NOT NULL,
    "name" TEXT,
    "system_name" TEXT,
    "hostname" TEXT,
    "release" TEXT,
    "version" TEXT,
    "hardware_name" TEXT,
    "domain_name" TEXT
);
CREATE TABLE rocpd_info_process (
    "id" INTEGER NOT NULL PRIMARY KEY,
    "guid" TEXT NOT NULL,
    "nid" INTEGER NOT NULL REFERENCES rocpd_info_node ("id"),
    "ppid" INTEGER,
    "pid" INTEGER NOT NULL,
    "name" TEXT,
    "init" BIGINT,
    "fini" BIGINT,
    "start" BIGINT,
    "end" BIGINT,
    "command" TEXT,
    "environment" JSONB DEFAULT '{}' NOT NULL,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);
CREATE TABLE rocpd_info_thread (
    "id" INTEGER NOT NULL PRIMARY KEY,
    "guid" TEXT NOT NULL,
    "nid" INTEGER NOT NULL REFERENCES rocpd_info_node ("id"),
    "ppid" INTEGER,
    "pid" INTEGER NOT NULL REFERENCES rocpd_info_process ("id"),
    "tid" INTEGER NOT NULL,
    "name" TEXT,
    "start" BIGINT,
    "end" BIGINT,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);
CREATE TABLE rocpd_info_agent (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT NOT NULL,
    "nid" INTEGER NOT NULL REFERENCES rocpd_info_node ("id"),
    "pid" INTEGER NOT NULL REFERENCES rocpd_info_process ("id"),
    "type" TEXT CHECK ("type" IN ('CPU', 'GPU')),
    "absolute_index" INTEGER,
    "logical_index" INTEGER,
    "type_index" INTEGER,
    "uuid" INTEGER,
    "name" TEXT,
    "generic_name" TEXT,
    "model_name" TEXT,
    "vendor_name" TEXT,
    "product_name" TEXT,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);
CREATE TABLE rocpd_info_queue (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT NOT NULL,
    "nid" INTEGER NOT NULL REFERENCES rocpd_info_node ("id"),
    "pid" INTEGER NOT NULL REFERENCES rocpd_info_process ("id"),
    "name" TEXT,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);
CREATE TABLE rocpd_info_stream (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT NOT NULL,
    "nid" INTEGER NOT NULL REFERENCES rocpd_info_node ("id"),
    "pid" INTEGER NOT NULL REFERENCES rocpd_info_process ("id"),
    "name" TEXT,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);
CREATE TABLE rocpd_info_kernel_symbol (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT NOT NULL,
    "nid" INTEGER NOT NULL REFERENCES rocpd_info_node ("id"),
    "pid" INTEGER NOT NULL REFERENCES rocpd_info_process ("id"),
    "code_object_id" INTEGER,
    "kernel_name" TEXT,
    "display_name" TEXT,
    "kernel_object" INTEGER,
    "kernarg_segment_size" INTEGER,
    "kernarg_segment_alignment" INTEGER,
    "group_segment_size" INTEGER,
    "private_segment_size" INTEGER,
    "sgpr_count" INTEGER,
    "arch_vgpr_count" INTEGER,
    "accum_vgpr_count" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);
CREATE TABLE rocpd_kernel_dispatch (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT NOT NULL,
    "nid" INTEGER NOT NULL REFERENCES rocpd_info_node ("id"),
    "pid" INTEGER NOT NULL REFERENCES rocpd_info_process ("id"),
    "tid" INTEGER REFERENCES rocpd_info_thread ("id"),
    "agent_id" INTEGER NOT NULL REFERENCES rocpd_info_agent ("id"),
    "kernel_id" INTEGER NOT NULL REFERENCES rocpd_info_kernel_symbol ("id"),
    "dispatch_id" INTEGER NOT NULL,
    "queue_id" INTEGER REFERENCES rocpd_info_queue ("id"),
    "stream_id" INTEGER REFERENCES rocpd_info_stream ("id"),
    "start" BIGINT NOT NULL,
    "end" BIGINT NOT NULL,
    "private_segment_size" INTEGER,
    "group_segment_size" INTEGER,
    "workgroup_size_x" INTEGER,
    "workgroup_size_y" INTEGER,
    "workgroup_size_z" INTEGER,
    "grid_size_x" INTEGER,
    "grid_size_y" INTEGER,
    "grid_size_z" INTEGER,
    "region_name_id" INTEGER REFERENCES rocpd_string ("id"),
    "event_id" INTEGER,
    "extdata" JSONB DEFAULT '{}' NOT NULL
);
CREATE TABLE kreplay_pass (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT NOT NULL,
    "kernel_dispatch_id" INTEGER NOT NULL REFERENCES rocpd_kernel_dispatch ("id"),
    "replay_pass" INTEGER NOT NULL,
    "start" BIGINT NOT NULL,
    "end" BIGINT NOT NULL,
    "restore_start" BIGINT,
    "restore_end" BIGINT,
    "restore_ns" BIGINT,
    "restore_bytes" BIGINT
);
CREATE TABLE kreplay_snapshot (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT NOT NULL,
    "kernel_dispatch_id" INTEGER NOT NULL UNIQUE REFERENCES rocpd_kernel_dispatch ("id"),
    "replayed" INTEGER NOT NULL,
    "passes" INTEGER NOT NULL,
    "skipped" TEXT,
    "declined_reason" TEXT,
    "store" TEXT,
    "regions" INTEGER,
    "bytes" BIGINT,
    "start" BIGINT,
    "end" BIGINT,
    "snapshot_ns" BIGINT,
    "restore_count" INTEGER,
    "restore_regions" INTEGER,
    "restore_bytes" BIGINT,
    "restore_skipped_regions" INTEGER,
    "restore_ns" BIGINT,
    "window_start" BIGINT NOT NULL,
    "window_end" BIGINT NOT NULL
);
CREATE INDEX kreplay_pass_dispatch_idx ON kreplay_pass ("kernel_dispatch_id");
CREATE INDEX rocpd_kernel_dispatch_start_idx ON rocpd_kernel_dispatch ("start");
CREATE VIEW kernels AS
    SELECT D."id", D."guid", D."pid", D."tid", D."dispatch_id", S."kernel_name",
           A."name" AS "agent_name", D."queue_id", D."start", D."end",
           D."end" - D."start" AS "duration", K."replayed", K."passes", K."skipped"
    FROM rocpd_kernel_dispatch D
    JOIN rocpd_info_kernel_symbol S ON S."id" = D."kernel_id"
    JOIN rocpd_info_agent A ON A."id" = D."agent_id"
    LEFT JOIN kreplay_snapshot K ON K."kernel_dispatch_id" = D."id";
"#;

/// What the database says about the run beyond the records.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// The launcher's process id (the application's parent).
    pub launcher_pid: u32,
    /// The application started by the launcher, and its command line.
    pub app: Option<(u32, String)>,
    /// Passes per replayed dispatch, as requested.
    pub passes: u32,
}

/// An open rocpd database being filled.
pub struct Database {
    conn: Connection,
    path: PathBuf,
    guid: String,
    run: RunInfo,
    processes: HashMap<u64, ()>,
    threads: HashMap<u64, ()>,
    agents: HashMap<(u64, u64), i64>,
    queues: HashMap<(u64, u64), i64>,
    kernels: HashMap<(u64, String), i64>,
    dispatches: u64,
}

fn sql_error(path: &Path) -> impl Fn(rusqlite::Error) -> CliError + '_ {
    move |e| CliError::io("writing the rocpd database", path, e)
}

/// `uname(2)` fields: system, release, version, machine; empty when it fails.
fn uname() -> [String; 4] {
    // SAFETY: utsname is plain data; uname fills it and NUL-terminates each field on success.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return Default::default();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    [
        field(&u.sysname),
        field(&u.release),
        field(&u.version),
        field(&u.machine),
    ]
}

/// FNV-1a of `text`, kept within SQLite's signed 64-bit integers.
fn hash63(text: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    (h >> 1) as i64
}

/// A run identifier in UUID form, from the host, the launcher pid and the clock.
fn run_guid(hostname: &str, launcher_pid: u32) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let a = hash63(&format!("{hostname}/{launcher_pid}/{now}")) as u64;
    let b = hash63(&format!("{now}/{launcher_pid}/{hostname}/kreplay")) as u64;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// The name a person reads: demangled when it is a C++ symbol, without the `.kd` suffix.
pub fn display_name(kernel: &str) -> String {
    let base = kernel.strip_suffix(".kd").unwrap_or(kernel);
    cpp_demangle::Symbol::new(base)
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| base.to_owned())
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Database {
    /// Creates the database at `path` (replacing a file of that name) with the schema and the
    /// node row.
    pub fn create(path: &Path, run: RunInfo) -> Result<Database, CliError> {
        let err = sql_error(path);
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
        let conn = Connection::open(path).map_err(&err)?;
        // A rollback journal keeps everything in the one file once a transaction commits.
        conn.execute_batch(
            "PRAGMA journal_mode = DELETE; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;",
        )
        .map_err(&err)?;
        let hostname = crate::output_path::hostname();
        let guid = run_guid(&hostname, run.launcher_pid);
        let machine_id = std::fs::read_to_string("/etc/machine-id")
            .map(|s| s.trim().to_owned())
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| hostname.clone());
        let [system, release, version, machine] = uname();
        let tx = conn.unchecked_transaction().map_err(&err)?;
        tx.execute_batch(SCHEMA).map_err(&err)?;
        tx.execute(
            r#"INSERT INTO rocpd_info_node ("id", "guid", "hash", "machine_id", "system_name", "hostname", "release", "version", "hardware_name", "domain_name")
               VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)"#,
            params![guid, hash63(&machine_id), machine_id, system, hostname, release, version, machine],
        )
        .map_err(&err)?;
        for (tag, value) in [
            ("guid", guid.clone()),
            ("kreplay_version", env!("CARGO_PKG_VERSION").to_owned()),
            ("kreplay_schema_version", KREPLAY_SCHEMA_VERSION.to_string()),
            ("passes", run.passes.to_string()),
            ("time_domain", "CLOCK_MONOTONIC ns".to_owned()),
        ] {
            tx.execute(
                r#"INSERT INTO rocpd_metadata ("tag", "value") VALUES (?1, ?2)"#,
                params![tag, value],
            )
            .map_err(&err)?;
        }
        tx.commit().map_err(&err)?;
        Ok(Database {
            conn,
            path: path.to_owned(),
            guid,
            run,
            processes: HashMap::new(),
            threads: HashMap::new(),
            agents: HashMap::new(),
            queues: HashMap::new(),
            kernels: HashMap::new(),
            dispatches: 0,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Dispatches added so far.
    pub fn dispatch_count(&self) -> u64 {
        self.dispatches
    }

    /// Adds `dispatches` in one transaction: all of them or, on an error, none.
    pub fn add(&mut self, dispatches: &[Dispatch]) -> Result<(), CliError> {
        if dispatches.is_empty() {
            return Ok(());
        }
        let path = self.path.clone();
        let err = sql_error(&path);
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(&err)?;
        // Ids created in this transaction, forgotten again if it fails.
        let saved = (
            self.processes.clone(),
            self.threads.clone(),
            self.agents.clone(),
            self.queues.clone(),
            self.kernels.clone(),
        );
        let result = dispatches.iter().try_for_each(|d| self.insert(d));
        match result.and_then(|()| self.conn.execute_batch("COMMIT")) {
            Ok(()) => {
                self.dispatches += dispatches.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                (
                    self.processes,
                    self.threads,
                    self.agents,
                    self.queues,
                    self.kernels,
                ) = saved;
                Err(err(e))
            }
        }
    }

    fn insert(&mut self, d: &Dispatch) -> rusqlite::Result<()> {
        let c = &self.conn;
        let guid = &self.guid;
        let pid = d.pid;
        let (span_start, span_end) = d.span();
        if !self.processes.contains_key(&pid) {
            let (ppid, command) = match &self.run.app {
                Some((app_pid, command)) if u64::from(*app_pid) == pid => {
                    (Some(self.run.launcher_pid), Some(command.clone()))
                }
                _ => (None, None),
            };
            c.prepare_cached(r#"INSERT OR IGNORE INTO rocpd_info_process ("id", "guid", "nid", "ppid", "pid", "init", "start", "end", "command")
                   VALUES (?1, ?2, 1, ?3, ?1, ?4, ?4, ?5, ?6)"#)?.execute(params![to_i64(pid), guid, ppid, to_i64(span_start), to_i64(span_end), command],
            )?;
            self.processes.insert(pid, ());
        }
        c.prepare_cached(r#"UPDATE rocpd_info_process SET "start" = MIN("start", ?2), "end" = MAX("end", ?3), "fini" = MAX("end", ?3) WHERE "id" = ?1"#)?.execute(params![to_i64(pid), to_i64(span_start), to_i64(span_end)],
        )?;
        let tid = d.launch.as_ref().map(|l| l.tid).filter(|&t| t > 0);
        if let Some(tid) = tid
            && !self.threads.contains_key(&tid)
        {
            c.prepare_cached(r#"INSERT OR IGNORE INTO rocpd_info_thread ("id", "guid", "nid", "ppid", "pid", "tid", "start")
                   VALUES (?1, ?2, 1, ?3, ?4, ?1, ?5)"#)?.execute(params![to_i64(tid), guid, self.run.launcher_pid, to_i64(pid), to_i64(span_start)],
            )?;
            self.threads.insert(tid, ());
        }
        if let Some(tid) = tid {
            c.prepare_cached(r#"UPDATE rocpd_info_thread SET "end" = MAX(COALESCE("end", 0), ?2) WHERE "id" = ?1"#)?.execute(params![to_i64(tid), to_i64(span_end)],
            )?;
        }
        let agent_id = match self.agents.get(&(pid, d.agent)) {
            Some(&id) => id,
            None => {
                let index = self.agents.keys().filter(|(p, _)| *p == pid).count() as i64;
                c.prepare_cached(r#"INSERT INTO rocpd_info_agent ("guid", "nid", "pid", "type", "logical_index", "type_index", "name", "model_name", "vendor_name", "extdata")
                       VALUES (?1, 1, ?2, 'GPU', ?3, ?3, ?4, ?4, 'AMD', ?5)"#)?.execute(params![guid, to_i64(pid), index, d.agent_name, json!({"handle": d.agent}).to_string()],
                )?;
                let id = c.last_insert_rowid();
                self.agents.insert((pid, d.agent), id);
                id
            }
        };
        let queue_id = match self.queues.get(&(pid, d.queue_id)) {
            Some(&id) => id,
            None => {
                c.prepare_cached(r#"INSERT INTO rocpd_info_queue ("guid", "nid", "pid", "name", "extdata") VALUES (?1, 1, ?2, ?3, ?4)"#)?.execute(params![
                        guid,
                        to_i64(pid),
                        format!("queue {} ({})", d.queue_id, d.agent_name),
                        json!({"hsa_queue_id": d.queue_id, "agent_id": agent_id}).to_string()
                    ],
                )?;
                let id = c.last_insert_rowid();
                self.queues.insert((pid, d.queue_id), id);
                id
            }
        };
        let name = d.kernel_name().to_owned();
        let launch = d.launch.clone().unwrap_or_default();
        let has_launch = d.launch.is_some();
        let kernel_id = match self.kernels.get(&(pid, name.clone())) {
            Some(&id) => id,
            None => {
                c.prepare_cached(r#"INSERT INTO rocpd_info_kernel_symbol ("guid", "nid", "pid", "kernel_name", "display_name", "kernel_object", "group_segment_size", "private_segment_size")
                       VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7)"#)?.execute(params![
                        guid,
                        to_i64(pid),
                        name,
                        display_name(&name),
                        has_launch.then(|| to_i64(launch.kernel_object)),
                        has_launch.then(|| to_i64(launch.group_segment_size)),
                        has_launch.then(|| to_i64(launch.private_segment_size)),
                    ],
                )?;
                let id = c.last_insert_rowid();
                self.kernels.insert((pid, name), id);
                id
            }
        };
        let (start, end) = d
            .visible_pass()
            .map_or((d.window_start_ns, d.window_end_ns), |p| {
                (p.start_ns, p.end_ns)
            });
        let geometry = |v: u64| has_launch.then(|| to_i64(v));
        c.prepare_cached(r#"INSERT INTO rocpd_kernel_dispatch ("guid", "nid", "pid", "tid", "agent_id", "kernel_id", "dispatch_id", "queue_id", "stream_id", "start", "end",
                   "private_segment_size", "group_segment_size", "workgroup_size_x", "workgroup_size_y", "workgroup_size_z",
                   "grid_size_x", "grid_size_y", "grid_size_z", "region_name_id", "event_id", "extdata")
               VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, NULL, NULL, ?18)"#)?.execute(params![
                guid,
                to_i64(pid),
                tid.map(to_i64),
                agent_id,
                kernel_id,
                to_i64(d.dispatch_id),
                queue_id,
                to_i64(start),
                to_i64(end),
                geometry(launch.private_segment_size),
                geometry(launch.group_segment_size),
                geometry(launch.workgroup_size[0]),
                geometry(launch.workgroup_size[1]),
                geometry(launch.workgroup_size[2]),
                geometry(launch.grid_size[0]),
                geometry(launch.grid_size[1]),
                geometry(launch.grid_size[2]),
                json!({"hsa_queue_id": d.queue_id, "agent_handle": d.agent, "passes": d.passes.len(), "replayed": d.replayed}).to_string(),
            ],
        )?;
        let row = c.last_insert_rowid();
        // The records carry restore byte totals per dispatch; each restore between passes gets
        // its share.
        let per_restore = d
            .restore
            .as_ref()
            .filter(|r| r.count > 0)
            .map(|r| r.bytes / r.count);
        for p in &d.passes {
            c.prepare_cached(r#"INSERT INTO kreplay_pass ("guid", "kernel_dispatch_id", "replay_pass", "start", "end", "restore_start", "restore_end", "restore_ns", "restore_bytes")
                   VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"#)?.execute(params![
                    guid,
                    row,
                    to_i64(p.pass),
                    to_i64(p.start_ns),
                    to_i64(p.end_ns),
                    p.restore.map(|r| to_i64(r.0)),
                    p.restore.map(|r| to_i64(r.1)),
                    p.restore.map(|r| to_i64(r.1.saturating_sub(r.0))),
                    p.restore.and(per_restore).map(to_i64),
                ],
            )?;
        }
        let snap = d.snapshot.as_ref();
        let rest = d.restore.as_ref();
        c.prepare_cached(r#"INSERT INTO kreplay_snapshot ("guid", "kernel_dispatch_id", "replayed", "passes", "skipped", "declined_reason", "store", "regions", "bytes", "start", "end",
                   "snapshot_ns", "restore_count", "restore_regions", "restore_bytes", "restore_skipped_regions", "restore_ns", "window_start", "window_end")
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"#)?.execute(params![
                guid,
                row,
                d.replayed,
                d.passes.len() as i64,
                d.skipped,
                d.declined_reason(),
                snap.map(|s| if s.store.is_empty() { "host".to_owned() } else { s.store.clone() }),
                snap.map(|s| to_i64(s.regions)),
                snap.map(|s| to_i64(s.bytes)),
                snap.map(|s| to_i64(s.start_ns)),
                snap.map(|s| to_i64(s.end_ns)),
                snap.map(|s| to_i64(s.end_ns.saturating_sub(s.start_ns))),
                rest.map(|r| to_i64(r.count)),
                rest.map(|r| to_i64(r.regions)),
                rest.map(|r| to_i64(r.bytes)),
                rest.map(|r| to_i64(r.skipped_regions)),
                rest.map(|r| to_i64(r.ns)),
                to_i64(d.window_start_ns),
                to_i64(d.window_end_ns),
            ],
        )?;
        Ok(())
    }

    /// Dispatch ids already in the database for `pid` (to skip them when records are read again).
    pub fn has_dispatch(&self, pid: u64, dispatch_id: u64) -> bool {
        self.conn
            .query_row(
                r#"SELECT 1 FROM rocpd_kernel_dispatch WHERE "pid" = ?1 AND "dispatch_id" = ?2"#,
                params![to_i64(pid), to_i64(dispatch_id)],
                |_| Ok(()),
            )
            .optional()
            .ok()
            .flatten()
            .is_some()
    }
}

/// Writes a complete database of `dispatches` at `path` in one go (when the records were not
/// followed during the run).
pub fn write(path: &Path, dispatches: &[Dispatch], run: RunInfo) -> Result<(), CliError> {
    let mut db = Database::create(path, run)?;
    db.add(dispatches)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{parse, tests::replayed_lines};

    #[test]
    fn rows_match_the_dispatches_and_a_failed_batch_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("kreplay-rocpd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.db");
        let text =
            replayed_lines(10, 1, "_Z3addPii", 3, 1000) + &replayed_lines(10, 2, "scale", 1, 9000);
        let dispatches = parse([text.as_str()]).dispatches;
        let mut db = Database::create(
            &path,
            RunInfo {
                launcher_pid: 9,
                app: Some((10, "app -x".into())),
                passes: 3,
            },
        )
        .unwrap();
        db.add(&dispatches).unwrap();
        assert!(db.has_dispatch(10, 2) && !db.has_dispatch(10, 3));
        let count = |db: &Database, table: &str| -> i64 {
            db.conn
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(count(&db, "rocpd_kernel_dispatch"), 2);
        assert_eq!(count(&db, "kreplay_pass"), 4);
        let enforced: i64 = db
            .conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(enforced, 1, "references are checked on insert");
        assert_eq!(count(&db, "rocpd_info_kernel_symbol"), 2);
        assert_eq!(count(&db, "rocpd_info_agent"), 1);
        let (name, display): (String, String) = db
            .conn
            .query_row(r#"SELECT "kernel_name", "display_name" FROM rocpd_info_kernel_symbol ORDER BY "id" LIMIT 1"#, [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!(
            (name.as_str(), display.as_str()),
            ("_Z3addPii", "add(int*, int)")
        );
        let (start, end, grid, tid): (i64, i64, i64, i64) = db
            .conn
            .query_row(r#"SELECT "start", "end", "grid_size_x", "tid" FROM rocpd_kernel_dispatch WHERE "dispatch_id" = 1"#, [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap();
        let last = dispatches[0].passes.last().unwrap();
        assert_eq!((start, end), (last.start_ns as i64, last.end_ns as i64));
        assert_eq!((grid, tid), (4096, 11));
        let ppid: i64 = db
            .conn
            .query_row(
                r#"SELECT "ppid" FROM rocpd_info_process WHERE "id" = 10"#,
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(ppid, 9);
        // A batch whose second dispatch fails leaves neither of its dispatches.
        db.conn.execute_batch("CREATE TRIGGER fail_second BEFORE INSERT ON kreplay_pass WHEN NEW.replay_pass = 1 BEGIN SELECT RAISE(ABORT, 'refused'); END;").unwrap();
        let more = parse([
            replayed_lines(10, 3, "scale", 1, 20_000).as_str(),
            replayed_lines(10, 4, "other", 2, 30_000).as_str(),
        ])
        .dispatches;
        let err = db.add(&more).unwrap_err();
        assert!(err.to_string().contains("rocpd database"), "{err}");
        assert_eq!(
            count(&db, "rocpd_kernel_dispatch"),
            2,
            "the failed batch left nothing"
        );
        assert_eq!(count(&db, "rocpd_info_kernel_symbol"), 2);
        assert_eq!(db.dispatch_count(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
