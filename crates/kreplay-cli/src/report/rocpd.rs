//! The rocpd database (`-f rocpd`), laid out as rocprofv3 writes it ([`super::rocpd_schema`]):
//! uuid-suffixed tables, the unsuffixed views inside the file, the `schema_version`, `uuid` and
//! `guid` metadata rows, one `KERNEL_DISPATCH` event per dispatch, a "Default Stream" per
//! process, a CPU agent and the GPU agents per process, and kreplay's per-pass and per-dispatch
//! rows in `rocpd_kreplay_pass` and `rocpd_kreplay_dispatch`.
//!
//! Dispatches are added in transactions, each dispatch whole inside one, so the file opens and
//! holds every dispatch committed so far whenever the writer stops, even by SIGKILL. During
//! `kreplay run` the database is filled while the application runs ([`crate::follow`]).
//!
//! Ids (documented in `docs/formats.md`): `rocpd_info_process.id` is the OS process id and
//! `rocpd_info_thread.id` the OS thread id; a kernel dispatch's `start`/`end` are the times of
//! the pass the application keeps (the last one), in CLOCK_BOOTTIME nanoseconds.

mod pmc;

use super::kernel_name::{display_name, truncated_name};
use super::rocpd_schema::{self, KREPLAY_SCHEMA_VERSION, ROCPD_SCHEMA_VERSION};
use crate::exit_status::CliError;
use crate::run_records::{Dispatch, Pass};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The event category of kernel dispatches (a `rocpd_string` row).
pub const KERNEL_DISPATCH: &str = "KERNEL_DISPATCH";

/// What the database says about the run beyond the records.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// The launcher's process id (the application's parent).
    pub launcher_pid: u32,
    /// The application started by the launcher, and its command line.
    pub app: Option<(u32, String)>,
    /// Passes per replayed dispatch, as requested.
    pub passes: u32,
    /// `--stats`: write rocprofv3's statistics files too.
    pub stats: bool,
}

/// The run's identity: a UUIDv7 in its hyphenated (`guid`) and table-suffix (`uuid`) forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunId {
    /// `xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx`.
    pub guid: String,
    /// `_` followed by the guid with `_` for `-`.
    pub uuid: String,
}

impl RunId {
    /// A fresh UUIDv7: 48 bits of Unix milliseconds, the version, then random bits.
    pub fn new() -> RunId {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let mut random = [0u8; 10];
        let filled = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut random))
            .is_ok();
        if !filled {
            let seed = now.as_nanos() ^ (u128::from(std::process::id()) << 64);
            random.copy_from_slice(&seed.to_le_bytes()[..10]);
        }
        let ms = u64::try_from(now.as_millis()).unwrap_or(u64::MAX) & 0xffff_ffff_ffff;
        let rand_a = (u16::from(random[0]) << 8 | u16::from(random[1])) & 0x0fff;
        let rand_b = (u16::from(random[2]) << 8 | u16::from(random[3])) & 0x3fff;
        let tail: String = random[4..].iter().map(|b| format!("{b:02x}")).collect();
        let guid = format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{tail}",
            ms >> 16,
            ms & 0xffff,
            0x7000 | rand_a,
            0x8000 | rand_b
        );
        RunId {
            uuid: format!("_{}", guid.replace('-', "_")),
            guid,
        }
    }
}

impl Default for RunId {
    fn default() -> Self {
        RunId::new()
    }
}

/// The host facts the node and CPU agent rows hold.
struct Host {
    hostname: String,
    machine_id: String,
    uname: [String; 4],
    cpu_model: String,
    cpu_vendor: String,
    cpu_cores: u64,
}

impl Host {
    fn current() -> Host {
        let hostname = crate::output_path::hostname();
        let machine_id = std::fs::read_to_string("/etc/machine-id")
            .map(|s| s.trim().to_owned())
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| hostname.clone());
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |key: &str| {
            cpuinfo
                .lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(key))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
                .unwrap_or_default()
        };
        Host {
            cpu_model: field("model name"),
            cpu_vendor: field("vendor_id"),
            cpu_cores: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
            uname: uname(),
            hostname,
            machine_id,
        }
    }
}

/// An open rocpd database being filled.
pub struct Database {
    conn: Connection,
    path: PathBuf,
    id: RunId,
    run: RunInfo,
    node: i64,
    host: Host,
    strings: HashMap<String, i64>,
    processes: HashMap<u64, ProcessIds>,
    threads: HashMap<u64, ()>,
    agents: HashMap<(u64, u64), i64>,
    queues: HashMap<(u64, u64), i64>,
    kernels: HashMap<(u64, String), i64>,
    /// `rocpd_info_pmc` rows by process, agent row and counter name.
    counters: HashMap<(u64, i64, String), i64>,
    dispatches: u64,
}

/// The rows a dispatch's `rocpd_kernel_dispatch` rows point at.
struct DispatchRows {
    tid: u64,
    agent_id: i64,
    queue_id: i64,
    kernel_id: i64,
    stream: i64,
}

/// Rows made once per process.
#[derive(Clone, Debug)]
struct ProcessIds {
    stream: i64,
    gpus: i64,
    queues: i64,
    code_objects: HashMap<u64, i64>,
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

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The `rocprofiler_agent_v0_t` of an agent as JSON, every member present (zero where the
/// records do not know it): rocpd's converters load agents from it.
pub fn agent_json(
    gpu: bool,
    node_id: i64,
    type_index: i64,
    name: &str,
    vendor: &str,
    cpu_cores: u64,
) -> Value {
    let dim = json!({"x": 0, "y": 0, "z": 0});
    let mut m = serde_json::Map::new();
    m.insert("size".into(), json!(0));
    m.insert("id".into(), json!({"handle": node_id}));
    m.insert("type".into(), json!(if gpu { 2 } else { 1 }));
    for key in [
        "cpu_cores_count",
        "simd_count",
        "mem_banks_count",
        "caches_count",
        "io_links_count",
        "cpu_core_id_base",
        "simd_id_base",
        "max_waves_per_simd",
        "lds_size_in_kb",
        "gds_size_in_kb",
        "num_gws",
        "wave_front_size",
        "num_xcc",
        "cu_count",
        "array_count",
        "num_shader_banks",
        "simd_arrays_per_engine",
        "cu_per_simd_array",
        "simd_per_cu",
        "max_slots_scratch_cu",
        "gfx_target_version",
        "vendor_id",
        "device_id",
        "location_id",
        "domain",
        "drm_render_minor",
        "num_sdma_engines",
        "num_sdma_xgmi_engines",
        "num_sdma_queues_per_engine",
        "num_cp_queues",
        "max_engine_clk_ccompute",
        "max_engine_clk_fcompute",
    ] {
        m.insert(key.into(), json!(0));
    }
    m.insert(
        "sdma_fw_version".into(),
        json!({"uCodeSDMA": 0, "uCodeRes": 0}),
    );
    m.insert(
        "fw_version".into(),
        json!({"uCode": 0, "Major": 0, "Minor": 0, "Stepping": 0}),
    );
    let capability: serde_json::Map<String, Value> = [
        "HotPluggable",
        "HSAMMUPresent",
        "SharedWithGraphics",
        "QueueSizePowerOfTwo",
        "QueueSize32bit",
        "QueueIdleEvent",
        "VALimit",
        "WatchPointsSupported",
        "WatchPointsTotalBits",
        "DoorbellType",
        "AQLQueueDoubleMap",
        "DebugTrapSupported",
        "WaveLaunchTrapOverrideSupported",
        "WaveLaunchModeSupported",
        "PreciseMemoryOperationsSupported",
        "DEPRECATED_SRAM_EDCSupport",
        "Mem_EDCSupport",
        "RASEventNotify",
        "ASICRevision",
        "SRAM_EDCSupport",
        "SVMAPISupported",
        "CoherentHostAccess",
        "DebugSupportedFirmware",
    ]
    .into_iter()
    .map(|k| (k.to_owned(), json!(0)))
    .collect();
    m.insert("capability".into(), Value::Object(capability));
    for key in [
        "cu_per_engine",
        "max_waves_per_cu",
        "family_id",
        "workgroup_max_size",
        "grid_max_size",
        "local_mem_size",
        "hive_id",
        "gpu_id",
    ] {
        m.insert(key.into(), json!(0));
    }
    m.insert("workgroup_max_dim".into(), dim.clone());
    m.insert("grid_max_dim".into(), dim);
    m.insert("name".into(), json!(name));
    m.insert("vendor_name".into(), json!(vendor));
    m.insert("product_name".into(), json!(name));
    m.insert("model_name".into(), json!(name));
    m.insert("node_id".into(), json!(node_id));
    m.insert("logical_node_id".into(), json!(node_id));
    m.insert("logical_node_type_id".into(), json!(type_index));
    m.insert(
        "runtime_visibility".into(),
        json!({"hsa": 1, "hip": u8::from(gpu), "rccl": 0, "rocdecode": 0}),
    );
    m.insert("uuid".into(), json!({"bytes": vec![0u8; 16]}));
    m.insert("mem_banks".into(), json!([]));
    m.insert("caches".into(), json!([]));
    m.insert("io_links".into(), json!([]));
    if !gpu {
        m.insert("cpu_cores_count".into(), json!(cpu_cores));
    } else {
        m.insert("wave_front_size".into(), json!(64));
    }
    Value::Object(m)
}

impl Database {
    /// Creates the database at `path` (replacing a file of that name) with the schema, the
    /// metadata and string rows and the node row.
    pub fn create(path: &Path, run: RunInfo) -> Result<Database, CliError> {
        Database::create_with_id(path, run, RunId::new())
    }

    /// [`Database::create`] with a given run id.
    pub fn create_with_id(path: &Path, run: RunInfo, id: RunId) -> Result<Database, CliError> {
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
        let host = Host::current();
        let hash = hash63(&host.machine_id);
        let node = hash % i64::from(u32::MAX);
        let u = &id.uuid;
        let tx = conn.unchecked_transaction().map_err(&err)?;
        tx.execute_batch(&rocpd_schema::script(u, &id.guid))
            .map_err(&err)?;
        let [system, release, version, machine] = &host.uname;
        tx.execute(
            &format!(r#"INSERT INTO `rocpd_info_node{u}` ("id", "hash", "machine_id", "system_name", "hostname", "release", "version", "hardware_name", "domain_name")
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)"#),
            params![node, hash, host.machine_id, system, host.hostname, release, version, machine],
        )
        .map_err(&err)?;
        for (tag, value) in [
            ("schema_version", ROCPD_SCHEMA_VERSION.to_string()),
            ("uuid", u.clone()),
            ("guid", id.guid.clone()),
            ("kreplay_version", env!("CARGO_PKG_VERSION").to_owned()),
            ("kreplay_schema_version", KREPLAY_SCHEMA_VERSION.to_string()),
            ("passes", run.passes.to_string()),
            ("clock", "CLOCK_BOOTTIME".to_owned()),
        ] {
            tx.execute(
                &format!(r#"INSERT INTO `rocpd_metadata{u}` ("tag", "value") VALUES (?1, ?2)"#),
                params![tag, value],
            )
            .map_err(&err)?;
        }
        let mut strings = HashMap::new();
        for s in ["", KERNEL_DISPATCH] {
            tx.execute(
                &format!(r#"INSERT INTO `rocpd_string{u}` ("string") VALUES (?1)"#),
                params![s],
            )
            .map_err(&err)?;
            strings.insert(s.to_owned(), tx.last_insert_rowid());
        }
        tx.commit().map_err(&err)?;
        Ok(Database {
            conn,
            path: path.to_owned(),
            id,
            run,
            node,
            host,
            strings,
            processes: HashMap::new(),
            threads: HashMap::new(),
            agents: HashMap::new(),
            queues: HashMap::new(),
            kernels: HashMap::new(),
            counters: HashMap::new(),
            dispatches: 0,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The run's guid and uuid.
    pub fn id(&self) -> &RunId {
        &self.id
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
            self.counters.clone(),
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
                    self.counters,
                ) = saved;
                Err(err(e))
            }
        }
    }

    /// The process rows of `pid` (process, CPU agent, default stream), made on first use;
    /// its start and end widened to `span`.
    fn process(&mut self, pid: u64, span: (u64, u64)) -> rusqlite::Result<()> {
        let u = &self.id.uuid;
        if !self.processes.contains_key(&pid) {
            let (ppid, command) = match &self.run.app {
                Some((app_pid, command)) if u64::from(*app_pid) == pid => {
                    (Some(self.run.launcher_pid), Some(command.clone()))
                }
                _ => (None, None),
            };
            let c = &self.conn;
            c.prepare_cached(&format!(r#"INSERT INTO `rocpd_info_process{u}` ("id", "nid", "ppid", "pid", "init", "fini", "start", "end", "command")
                   VALUES (?1, ?2, ?3, ?1, ?4, ?5, ?4, ?5, ?6)"#))?
                .execute(params![to_i64(pid), self.node, ppid, to_i64(span.0), to_i64(span.1), command])?;
            let cpu = agent_json(
                false,
                0,
                0,
                &self.host.cpu_model,
                &self.host.cpu_vendor,
                self.host.cpu_cores,
            );
            c.prepare_cached(&format!(r#"INSERT INTO `rocpd_info_agent{u}` ("nid", "pid", "type", "absolute_index", "logical_index", "type_index", "uuid", "name", "model_name", "vendor_name", "product_name", "user_name", "extdata")
                   VALUES (?1, ?2, 'CPU', 0, 0, 0, 0, ?3, ?3, ?4, ?3, ?3, ?5)"#))?
                .execute(params![self.node, to_i64(pid), self.host.cpu_model, self.host.cpu_vendor, cpu.to_string()])?;
            // The first process's default stream is id 0, as rocprofv3 numbers it.
            let stream = self.processes.len() as i64;
            c.prepare_cached(&format!(
                r#"INSERT INTO `rocpd_info_stream{u}` ("id", "nid", "pid", "name") VALUES (?1, ?2, ?3, 'Default Stream')"#
            ))?
            .execute(params![stream, self.node, to_i64(pid)])?;
            self.processes.insert(
                pid,
                ProcessIds {
                    stream,
                    gpus: 0,
                    queues: 0,
                    code_objects: HashMap::new(),
                },
            );
        } else {
            self.conn
                .prepare_cached(&format!(r#"UPDATE `rocpd_info_process{u}` SET "start" = MIN("start", ?2), "init" = MIN("init", ?2), "end" = MAX("end", ?3), "fini" = MAX("fini", ?3) WHERE "id" = ?1"#))?
                .execute(params![to_i64(pid), to_i64(span.0), to_i64(span.1)])?;
        }
        Ok(())
    }

    /// The thread row of `tid` in `pid`, made on first use, its end widened to `end`.
    fn thread(&mut self, pid: u64, tid: u64, start: u64, end: u64) -> rusqlite::Result<()> {
        let u = &self.id.uuid;
        if !self.threads.contains_key(&tid) {
            self.conn
                .prepare_cached(&format!(r#"INSERT OR IGNORE INTO `rocpd_info_thread{u}` ("id", "nid", "ppid", "pid", "tid", "name", "start", "end")
                   VALUES (?1, ?2, ?3, ?4, ?1, ?5, ?6, ?7)"#))?
                .execute(params![to_i64(tid), self.node, self.run.launcher_pid, to_i64(pid), (tid == pid).then_some("main"), to_i64(start), to_i64(end)])?;
            self.threads.insert(tid, ());
        } else {
            self.conn
                .prepare_cached(&format!(r#"UPDATE `rocpd_info_thread{u}` SET "end" = MAX(COALESCE("end", 0), ?2) WHERE "id" = ?1"#))?
                .execute(params![to_i64(tid), to_i64(end)])?;
        }
        Ok(())
    }

    /// The GPU agent row of `d`'s agent in its process: absolute index 1 + its order among the
    /// GPUs the process dispatched to (the CPU agent is 0).
    fn agent(&mut self, d: &Dispatch) -> rusqlite::Result<i64> {
        if let Some(&id) = self.agents.get(&(d.pid, d.agent)) {
            return Ok(id);
        }
        let u = &self.id.uuid;
        let p = self
            .processes
            .get_mut(&d.pid)
            .expect("process row made first");
        let type_index = p.gpus;
        p.gpus += 1;
        let node_id = type_index + 1;
        let extdata = agent_json(true, node_id, type_index, &d.agent_name, "AMD", 0);
        self.conn
            .prepare_cached(&format!(r#"INSERT INTO `rocpd_info_agent{u}` ("nid", "pid", "type", "absolute_index", "logical_index", "type_index", "uuid", "name", "model_name", "vendor_name", "product_name", "user_name", "extdata")
                   VALUES (?1, ?2, 'GPU', ?3, ?3, ?4, 0, ?5, ?5, 'AMD', ?5, ?5, ?6)"#))?
            .execute(params![self.node, to_i64(d.pid), node_id, type_index, d.agent_name, extdata.to_string()])?;
        let id = self.conn.last_insert_rowid();
        self.agents.insert((d.pid, d.agent), id);
        Ok(id)
    }

    fn queue(&mut self, d: &Dispatch, agent_id: i64) -> rusqlite::Result<i64> {
        if let Some(&id) = self.queues.get(&(d.pid, d.queue_id)) {
            return Ok(id);
        }
        let u = &self.id.uuid;
        let p = self
            .processes
            .get_mut(&d.pid)
            .expect("process row made first");
        let n = p.queues;
        p.queues += 1;
        self.conn
            .prepare_cached(&format!(
                r#"INSERT INTO `rocpd_info_queue{u}` ("nid", "pid", "name", "extdata") VALUES (?1, ?2, ?3, ?4)"#
            ))?
            .execute(params![
                self.node,
                to_i64(d.pid),
                format!("Queue {n}"),
                json!({"hsa_queue_id": d.queue_id, "agent_id": agent_id}).to_string()
            ])?;
        let id = self.conn.last_insert_rowid();
        self.queues.insert((d.pid, d.queue_id), id);
        Ok(id)
    }

    /// The code object row of the kernels of `agent_id` in `pid`: the records do not name the
    /// code object, so each process and agent has one (`uri` NULL, storage `MEMORY`).
    fn code_object(&mut self, pid: u64, agent_id: i64) -> rusqlite::Result<i64> {
        let u = &self.id.uuid;
        let p = self
            .processes
            .get_mut(&pid)
            .expect("process row made first");
        if let Some(&id) = p.code_objects.get(&(agent_id as u64)) {
            return Ok(id);
        }
        self.conn
            .prepare_cached(&format!(r#"INSERT INTO `rocpd_info_code_object{u}` ("nid", "pid", "agent_id", "uri", "load_base", "load_size", "load_delta", "storage_type", "extdata")
                   VALUES (?1, ?2, ?3, NULL, 0, 0, 0, 'MEMORY', ?4)"#))?
            .execute(params![self.node, to_i64(pid), agent_id, json!({"size": 0, "storage_type": 2, "memory_base": 0, "memory_size": 0}).to_string()])?;
        let id = self.conn.last_insert_rowid();
        p.code_objects.insert(agent_id as u64, id);
        Ok(id)
    }

    fn kernel_symbol(&mut self, d: &Dispatch, agent_id: i64) -> rusqlite::Result<i64> {
        let name = d.kernel_name().to_owned();
        if let Some(&id) = self.kernels.get(&(d.pid, name.clone())) {
            return Ok(id);
        }
        let code_object = self.code_object(d.pid, agent_id)?;
        let u = &self.id.uuid;
        let launch = d.launch.clone().unwrap_or_default();
        let known = d.launch.is_some();
        let display = display_name(&name);
        let symbol = d.symbol.as_ref();
        let c = &self.conn;
        c.prepare_cached(&format!(r#"INSERT INTO `rocpd_info_kernel_symbol{u}` ("nid", "pid", "code_object_id", "kernel_name", "display_name", "kernel_object", "kernarg_segment_size", "kernarg_segment_alignment",
                   "group_segment_size", "private_segment_size", "sgpr_count", "arch_vgpr_count", "accum_vgpr_count")
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"#))?
            .execute(params![
                self.node,
                to_i64(d.pid),
                code_object,
                name,
                display,
                known.then(|| to_i64(launch.kernel_object)),
                symbol.map(|s| to_i64(s.kernarg_segment_size)),
                symbol.and_then(|s| s.kernarg_segment_alignment).map(to_i64),
                symbol.map_or(known.then(|| to_i64(launch.group_segment_size)), |s| Some(to_i64(s.group_segment_size))),
                symbol.map_or(known.then(|| to_i64(launch.private_segment_size)), |s| Some(to_i64(s.private_segment_size))),
                symbol.map(|s| to_i64(s.sgpr_count)),
                symbol.map(|s| to_i64(s.arch_vgpr_count)),
                symbol.map(|s| to_i64(s.accum_vgpr_count)),
            ])?;
        let id = c.last_insert_rowid();
        let extdata = json!({
            "size": 0,
            "kernel_id": id,
            "kernel_code_entry_byte_offset": 0,
            "formatted_kernel_name": display,
            "demangled_kernel_name": display,
            "truncated_kernel_name": truncated_name(&display),
            "kernel_address": {"handle": launch.kernel_object},
        });
        c.prepare_cached(&format!(
            r#"UPDATE `rocpd_info_kernel_symbol{u}` SET "extdata" = ?2 WHERE "id" = ?1"#
        ))?
        .execute(params![id, extdata.to_string()])?;
        self.kernels.insert((d.pid, name), id);
        Ok(id)
    }

    fn insert(&mut self, d: &Dispatch) -> rusqlite::Result<()> {
        let pid = d.pid;
        let span = d.span();
        self.process(pid, span)?;
        // A dispatch whose thread is not recorded is the process's main thread's.
        let tid = d
            .launch
            .as_ref()
            .map(|l| l.tid)
            .filter(|&t| t > 0)
            .unwrap_or(pid);
        self.thread(pid, tid, span.0, span.1)?;
        let agent_id = self.agent(d)?;
        let rows = DispatchRows {
            tid,
            agent_id,
            queue_id: self.queue(d, agent_id)?,
            kernel_id: self.kernel_symbol(d, agent_id)?,
            stream: self.processes[&pid].stream,
        };
        // With counters, each pass is a dispatch row of its own (rocpd's per-pass shape), its
        // counters on its event; otherwise one row, the kept pass.
        if super::counters::any(std::slice::from_ref(d)) && !d.passes.is_empty() {
            let mut pass_rows = Vec::with_capacity(d.passes.len());
            let mut written = std::collections::HashSet::new();
            for p in &d.passes {
                let (event, row) = self.dispatch_row(d, &rows, Some(p))?;
                self.pass_counters(d, p, event, agent_id, &mut written)?;
                pass_rows.push(row);
            }
            let kept = *pass_rows.last().expect("passes are not empty");
            self.replay_rows(d, kept, &pass_rows)
        } else {
            let (_, row) = self.dispatch_row(d, &rows, None)?;
            self.replay_rows(d, row, &vec![row; d.passes.len()])
        }
    }

    /// One `rocpd_event` and `rocpd_kernel_dispatch` row of `d`: of pass `pass`, or of the
    /// dispatch as the application saw it (the kept pass). Returns the event and row ids.
    fn dispatch_row(
        &mut self,
        d: &Dispatch,
        ids: &DispatchRows,
        pass: Option<&Pass>,
    ) -> rusqlite::Result<(i64, i64)> {
        let u = &self.id.uuid;
        let c = &self.conn;
        let kept = d.visible_pass().map(|p| p.pass);
        let pass_data = pass.map(|p| {
            json!({"replay_pass": p.pass, "counter_group": p.group, "kept": Some(p.pass) == kept})
        });
        c.prepare_cached(&format!(r#"INSERT INTO `rocpd_event{u}` ("category_id", "stack_id", "parent_stack_id", "correlation_id", "extdata") VALUES (?1, ?2, ?2, 0, ?3)"#))?
            .execute(params![self.strings[KERNEL_DISPATCH], to_i64(d.dispatch_id), pass_data.as_ref().map_or_else(|| "{}".to_owned(), Value::to_string)])?;
        let event = c.last_insert_rowid();
        let (start, end) = pass.map_or_else(|| d.kernel_time(), |p| (p.start_ns, p.end_ns));
        let launch = d.launch.clone().unwrap_or_default();
        let mut extdata = json!({"hsa_queue_id": d.queue_id, "agent_handle": d.agent, "passes": d.passes.len(), "replayed": d.replayed});
        if let (Some(Value::Object(extra)), Value::Object(map)) = (pass_data, &mut extdata) {
            map.extend(extra);
        }
        c.prepare_cached(&format!(r#"INSERT INTO `rocpd_kernel_dispatch{u}` ("nid", "pid", "tid", "agent_id", "kernel_id", "dispatch_id", "queue_id", "stream_id", "start", "end",
                   "private_segment_size", "group_segment_size", "workgroup_size_x", "workgroup_size_y", "workgroup_size_z",
                   "grid_size_x", "grid_size_y", "grid_size_z", "region_name_id", "event_id", "extdata")
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)"#))?
            .execute(params![
                self.node,
                to_i64(d.pid),
                to_i64(ids.tid),
                ids.agent_id,
                ids.kernel_id,
                to_i64(d.dispatch_id),
                ids.queue_id,
                ids.stream,
                to_i64(start),
                to_i64(end),
                to_i64(launch.private_segment_size),
                to_i64(launch.group_segment_size),
                to_i64(launch.workgroup_size[0]),
                to_i64(launch.workgroup_size[1]),
                to_i64(launch.workgroup_size[2]),
                to_i64(launch.grid_size[0]),
                to_i64(launch.grid_size[1]),
                to_i64(launch.grid_size[2]),
                self.strings[""],
                event,
                extdata.to_string(),
            ])?;
        Ok((event, c.last_insert_rowid()))
    }

    /// kreplay's rows of `d`: one per pass (pointing at `pass_rows`, the pass's dispatch
    /// row), and its replay totals (pointing at `row`, the kept one).
    fn replay_rows(&self, d: &Dispatch, row: i64, pass_rows: &[i64]) -> rusqlite::Result<()> {
        let u = &self.id.uuid;
        let c = &self.conn;
        // The records carry restore byte totals per dispatch; each restore between passes gets
        // its share.
        let per_restore = d
            .restore
            .as_ref()
            .filter(|r| r.count > 0)
            .map(|r| r.bytes / r.count);
        let kept = d.visible_pass().map(|p| p.pass);
        let mut pass_stmt = c.prepare_cached(&format!(r#"INSERT INTO `rocpd_kreplay_pass{u}` ("kernel_dispatch_id", "replay_pass", "kept", "start", "end", "restore_start", "restore_end", "restore_ns", "restore_bytes")
                   VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"#))?;
        for (p, pass_row) in d.passes.iter().zip(pass_rows) {
            pass_stmt.execute(params![
                pass_row,
                to_i64(p.pass),
                Some(p.pass) == kept,
                to_i64(p.start_ns),
                to_i64(p.end_ns),
                p.restore.map(|r| to_i64(r.0)),
                p.restore.map(|r| to_i64(r.1)),
                p.restore.map(|r| to_i64(r.1.saturating_sub(r.0))),
                p.restore.and(per_restore).map(to_i64),
            ])?;
        }
        let snap = d.snapshot.as_ref();
        let rest = d.restore.as_ref();
        let pmc = d.pmc.as_ref();
        c.prepare_cached(&format!(r#"INSERT INTO `rocpd_kreplay_dispatch{u}` ("kernel_dispatch_id", "replayed", "passes", "skipped", "declined_reason", "store", "regions", "bytes", "start", "end",
                   "snapshot_ns", "restore_count", "restore_regions", "restore_bytes", "restore_skipped_regions", "restore_ns", "window_start", "window_end",
                   "pmc_groups", "pmc_collected", "pmc_missing", "pmc_error")
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)"#))?
            .execute(params![
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
                pmc.map(|p| to_i64(p.groups)),
                pmc.map(|p| super::counters::group_list(&p.collected)),
                pmc.map(|p| super::counters::group_list(&p.missing)),
                pmc.and_then(|p| p.error.clone()),
            ])?;
        Ok(())
    }

    /// Whether dispatch `dispatch_id` of `pid` is already in the database (to skip it when
    /// records are read again).
    pub fn has_dispatch(&self, pid: u64, dispatch_id: u64) -> bool {
        let u = &self.id.uuid;
        self.conn
            .query_row(
                &format!(r#"SELECT 1 FROM `rocpd_kernel_dispatch{u}` WHERE "pid" = ?1 AND "dispatch_id" = ?2"#),
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
    use crate::run_records::{parse, tests::replayed_lines};

    #[test]
    fn a_failed_batch_leaves_nothing_and_known_dispatches_are_found() {
        let dir = std::env::temp_dir().join(format!("kreplay-rocpd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.db");
        let text =
            replayed_lines(10, 1, "_Z3addPii", 3, 1000) + &replayed_lines(10, 2, "scale", 1, 9000);
        let mut db = Database::create(
            &path,
            RunInfo {
                launcher_pid: 9,
                app: Some((10, "app -x".into())),
                passes: 3,
                stats: false,
            },
        )
        .unwrap();
        db.add(&parse([text.as_str()]).dispatches).unwrap();
        assert!(db.has_dispatch(10, 2) && !db.has_dispatch(10, 3));
        let count = |db: &Database, table: &str| -> i64 {
            db.conn
                .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(count(&db, "rocpd_kernel_dispatch"), 2);
        assert_eq!(count(&db, "rocpd_kreplay_pass"), 4);
        assert_eq!(count(&db, "rocpd_event"), 2);
        let enforced: i64 = db
            .conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(enforced, 1, "references are checked on insert");
        let (name, display): (String, String) = db
            .conn
            .query_row(r#"SELECT "kernel_name", "display_name" FROM rocpd_info_kernel_symbol ORDER BY "id" LIMIT 1"#, [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!(
            (name.as_str(), display.as_str()),
            ("_Z3addPii", "add(int*, int)")
        );
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
        let u = db.id().uuid.clone();
        db.conn.execute_batch(&format!("CREATE TRIGGER fail_second BEFORE INSERT ON `rocpd_kreplay_pass{u}` WHEN NEW.replay_pass = 1 BEGIN SELECT RAISE(ABORT, 'refused'); END;")).unwrap();
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
        assert_eq!(count(&db, "rocpd_event"), 2);
        assert_eq!(count(&db, "rocpd_info_kernel_symbol"), 2);
        assert_eq!(db.dispatch_count(), 2);
        // The ids forgotten with the rollback are made again by the next batch.
        db.conn.execute_batch("DROP TRIGGER fail_second").unwrap();
        db.add(&more).unwrap();
        assert_eq!(count(&db, "rocpd_info_kernel_symbol"), 3);
        assert_eq!(count(&db, "kernels"), 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn run_ids_are_uuid_v7() {
        let a = RunId::new();
        let b = RunId::new();
        assert_ne!(a, b);
        assert_eq!(a.guid.len(), 36);
        assert_eq!(a.guid.as_bytes()[14], b'7');
        assert!(matches!(a.guid.as_bytes()[19], b'8' | b'9' | b'a' | b'b'));
        assert_eq!(a.uuid, format!("_{}", a.guid.replace('-', "_")));
    }
}
