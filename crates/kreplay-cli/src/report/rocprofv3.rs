//! The files rocprofv3 writes for kernel dispatches, from kreplay's records: the
//! `kernel_trace.csv` (one row per dispatch, the kept pass), the `kernel_stats.csv` of
//! `--stats`, and the tool JSON (`rocprofiler-sdk-tool`) with kreplay's pass data under its own
//! key. Columns, names and order are rocprofv3's (`docs/formats.md`).

use super::kernel_name::{display_name, truncated_name};
use super::rocpd::agent_json;
use crate::run_records::{Dispatch, Pass};
use kreplay_records::CounterValue;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt::Write as _;

/// rocprofv3's `kernel_trace.csv` columns, in order.
pub const KERNEL_TRACE_COLUMNS: [&str; 22] = [
    "Kind",
    "Agent_Id",
    "Queue_Id",
    "Stream_Id",
    "Thread_Id",
    "Dispatch_Id",
    "Kernel_Id",
    "Kernel_Name",
    "Correlation_Id",
    "Start_Timestamp",
    "End_Timestamp",
    "LDS_Block_Size",
    "Scratch_Size",
    "VGPR_Count",
    "Accum_VGPR_Count",
    "SGPR_Count",
    "Workgroup_Size_X",
    "Workgroup_Size_Y",
    "Workgroup_Size_Z",
    "Grid_Size_X",
    "Grid_Size_Y",
    "Grid_Size_Z",
];

/// rocprofv3's `*_stats.csv` columns, in order.
pub const STATS_COLUMNS: [&str; 8] = [
    "Name",
    "Calls",
    "TotalDurationNs",
    "AverageNs",
    "Percentage",
    "MinNs",
    "MaxNs",
    "StdDev",
];

/// LDS is allocated in blocks of this many bytes; `LDS_Block_Size` is rounded up to it.
pub(crate) const LDS_BLOCK: u64 = 128 * 4;

/// A GPU agent of a process: its handle, node index and name.
type Gpu = (u64, u64, String);

/// The ids rocprofv3 gives what the records name by handle or name, per process: agents by
/// node index (the CPU is 0, GPUs from 1 in the order the process first dispatched to them),
/// kernels from 1 in order of first dispatch.
#[derive(Debug, Default)]
pub struct Identities {
    agents: HashMap<(u64, u64), u64>,
    kernels: HashMap<(u64, String), u64>,
    /// Per process: its GPUs.
    processes: Vec<(u64, Vec<Gpu>)>,
    /// Kernels per process so far.
    kernel_count: HashMap<u64, u64>,
}

impl Identities {
    /// The ids of `dispatches` (ordered by process, then dispatch id).
    pub fn of(dispatches: &[Dispatch]) -> Identities {
        let mut ids = Identities::default();
        for d in dispatches {
            if ids.processes.last().map(|p| p.0) != Some(d.pid) {
                ids.processes.push((d.pid, Vec::new()));
            }
            let process = ids.processes.last_mut().expect("pushed above");
            let gpus = process.1.len() as u64;
            ids.agents.entry((d.pid, d.agent)).or_insert_with(|| {
                process.1.push((d.agent, gpus + 1, d.agent_name.clone()));
                gpus + 1
            });
            let count = ids.kernel_count.entry(d.pid).or_default();
            ids.kernels
                .entry((d.pid, d.kernel_name().to_owned()))
                .or_insert_with(|| {
                    *count += 1;
                    *count
                });
        }
        ids
    }

    /// The node index of `d`'s agent.
    pub fn agent(&self, d: &Dispatch) -> u64 {
        self.agents.get(&(d.pid, d.agent)).copied().unwrap_or(0)
    }

    /// The kernel id of `d`'s kernel.
    pub fn kernel(&self, d: &Dispatch) -> u64 {
        self.kernels
            .get(&(d.pid, d.kernel_name().to_owned()))
            .copied()
            .unwrap_or(0)
    }
}

/// A CSV text field, quoted as rocprofv3 quotes strings.
pub(crate) fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The registers and static LDS of `d`'s kernel: `(lds, vgpr, accum_vgpr, sgpr)`, from the
/// kernel descriptor when recorded, else the packet's LDS size and no registers.
pub(crate) fn kernel_resources(d: &Dispatch) -> (u64, u64, u64, u64) {
    let packet_lds = d.launch.as_ref().map_or(0, |l| l.group_segment_size);
    match &d.symbol {
        Some(s) => (
            s.group_segment_size,
            s.arch_vgpr_count,
            s.accum_vgpr_count,
            s.sgpr_count,
        ),
        None => (packet_lds, 0, 0, 0),
    }
}

/// `<name>_kernel_trace.csv`: one row per dispatch, with the kept pass's times.
pub fn kernel_trace(dispatches: &[Dispatch]) -> String {
    let ids = Identities::of(dispatches);
    let mut out = KERNEL_TRACE_COLUMNS.map(quoted).join(",");
    out.push('\n');
    for d in dispatches {
        let launch = d.launch.clone().unwrap_or_default();
        let (start, end) = d.kernel_time();
        let (lds, vgpr, accum, sgpr) = kernel_resources(d);
        let _ = writeln!(
            out,
            "{},{},{},0,{},{},{},{},{},{start},{end},{},{},{vgpr},{accum},{sgpr},{},{},{},{},{},{}",
            quoted("KERNEL_DISPATCH"),
            quoted(&format!("Agent {}", ids.agent(d))),
            d.queue_id,
            launch.tid,
            d.dispatch_id,
            ids.kernel(d),
            quoted(&display_name(d.kernel_name())),
            d.dispatch_id,
            lds.div_ceil(LDS_BLOCK) * LDS_BLOCK,
            launch.private_segment_size,
            launch.workgroup_size[0],
            launch.workgroup_size[1],
            launch.workgroup_size[2],
            launch.grid_size[0],
            launch.grid_size[1],
            launch.grid_size[2],
        );
    }
    out
}

/// Per kernel name: the kept passes' durations, in order of first dispatch.
fn durations(dispatches: &[Dispatch]) -> Vec<(String, Vec<u64>)> {
    let mut order: Vec<(String, Vec<u64>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for d in dispatches {
        let name = display_name(d.kernel_name());
        let (start, end) = d.kernel_time();
        let i = *index.entry(name.clone()).or_insert_with(|| {
            order.push((name, Vec::new()));
            order.len() - 1
        });
        order[i].1.push(end.saturating_sub(start));
    }
    order
}

/// `<name>_kernel_stats.csv`: per kernel, rocprofv3's statistics of the kept passes' durations,
/// the largest total first (the standard deviation is the sample one, 0 for one call).
pub fn kernel_stats(dispatches: &[Dispatch]) -> String {
    let mut rows = durations(dispatches);
    rows.sort_by_key(|(_, v)| std::cmp::Reverse(v.iter().sum::<u64>()));
    let total: u64 = rows.iter().flat_map(|(_, v)| v).sum();
    let mut out = STATS_COLUMNS.map(quoted).join(",");
    out.push('\n');
    for (name, v) in rows {
        let n = v.len() as f64;
        let sum: u64 = v.iter().sum();
        let mean = sum as f64 / n;
        let var = if v.len() < 2 {
            0.0
        } else {
            v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0)
        };
        let percent = if total == 0 {
            0.0
        } else {
            sum as f64 * 100.0 / total as f64
        };
        let _ = writeln!(
            out,
            "{},{},{sum},{mean},{percent},{},{},{}",
            quoted(&name),
            v.len(),
            v.iter().min().unwrap_or(&0),
            v.iter().max().unwrap_or(&0),
            var.sqrt()
        );
    }
    out
}

/// The tool JSON's `counters` (one entry per agent and counter, ids from 1 per process) and
/// `callback_records.counter_collection` (one record per pass that collected counters, with
/// its `replay_pass`) of one process.
fn counter_json(dispatches: &[&Dispatch], ids: &Identities) -> (Vec<Value>, Vec<Value>) {
    let mut info: Vec<Value> = Vec::new();
    let mut id_of: HashMap<(u64, String), u64> = HashMap::new();
    let mut records = Vec::new();
    for d in dispatches {
        let agent = ids.agent(d);
        let launch = d.launch.clone().unwrap_or_default();
        for p in d.passes.iter().filter(|p| !p.counters.is_empty()) {
            let mut values = Vec::new();
            for c in &p.counters {
                let next = id_of.len() as u64 + 1;
                let id = *id_of.entry((agent, c.name.clone())).or_insert_with(|| {
                    info.push(json!({
                        "agent_id": {"handle": agent},
                        "id": {"handle": next},
                        "is_constant": 0,
                        "is_derived": u8::from(c.derived),
                        "name": c.name,
                        "exactness": c.exactness,
                        "dimensions": [],
                    }));
                    next
                });
                values.push(json!({"counter_id": {"handle": id}, "value": c.value}));
            }
            let [wx, wy, wz] = launch.workgroup_size;
            let [gx, gy, gz] = launch.grid_size;
            records.push(json!({
                "thread_id": launch.tid,
                "dispatch_data": {
                    "size": 0,
                    "correlation_id": {"internal": d.dispatch_id, "external": 0},
                    "start_timestamp": p.start_ns,
                    "end_timestamp": p.end_ns,
                    "dispatch_info": {
                        "size": 0,
                        "agent_id": {"handle": agent},
                        "queue_id": {"handle": d.queue_id},
                        "kernel_id": ids.kernel(d),
                        "dispatch_id": d.dispatch_id,
                        "private_segment_size": launch.private_segment_size,
                        "group_segment_size": launch.group_segment_size,
                        "workgroup_size": {"x": wx, "y": wy, "z": wz},
                        "grid_size": {"x": gx, "y": gy, "z": gz},
                    },
                },
                "records": values,
                "stream_id": {"handle": 0},
                "replay_pass": p.pass,
                "counter_group": p.group,
            }));
        }
    }
    (info, records)
}

/// One process's part of the tool JSON.
fn process_json(
    pid: u64,
    dispatches: &[&Dispatch],
    ids: &Identities,
    command: &str,
    host: &str,
) -> String {
    let agents = agents_json(pid, ids);
    let kernel_symbols = kernel_symbols_json(dispatches, ids);
    let (init, fini) = dispatches.iter().fold((u64::MAX, 0), |(a, b), d| {
        let (s, e) = d.span();
        (a.min(s), b.max(e))
    });
    let (counters, counter_records) = counter_json(dispatches, ids);
    let head = json!({
        "metadata": {
            "pid": pid,
            "init_time": if init == u64::MAX { 0 } else { init },
            "fini_time": fini,
            "node": {"hostname": host},
            "command": command.split_whitespace().collect::<Vec<_>>(),
            "config": {"kernel_trace": true},
        },
        "agents": agents,
        "counters": counters,
        "strings": {"buffer_records": [{"kind": "KERNEL_DISPATCH", "operations": ["KERNEL_DISPATCH_NONE", "KERNEL_DISPATCH_ENQUEUE", "KERNEL_DISPATCH_COMPLETE"]}]},
        "code_objects": [],
        "kernel_symbols": kernel_symbols,
        "host_functions": [],
        "callback_records": {"counter_collection": counter_records},
    })
    .to_string();
    let mut out = head[..head.len() - 1].to_owned();
    out.push_str(",\n\"buffer_records\":{\"kernel_dispatch\":[");
    write_dispatch_records(&mut out, dispatches, ids);
    out.push_str("],\"hip_api\":[],\"hsa_api\":[],\"marker_api\":[],\"memory_copy\":[]}}");
    out
}

/// The process's agents as `rocprofiler_agent_v0_t` JSON: the CPU, then its GPUs.
fn agents_json(pid: u64, ids: &Identities) -> Vec<Value> {
    let mut agents = vec![agent_json(false, 0, 0, "CPU", "CPU", 0)];
    if let Some((_, gpus)) = ids.processes.iter().find(|p| p.0 == pid) {
        for (i, (_, node, name)) in gpus.iter().enumerate() {
            agents.push(agent_json(true, *node as i64, i as i64, name, "AMD", 0));
        }
    }
    agents
}

/// One kernel symbol per kernel the process dispatched, as rocprofv3 lists them.
fn kernel_symbols_json(dispatches: &[&Dispatch], ids: &Identities) -> Vec<Value> {
    let mut kernel_symbols = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for d in dispatches.iter().filter(|d| seen.insert(ids.kernel(d))) {
        let launch = d.launch.clone().unwrap_or_default();
        let symbol = d.symbol.unwrap_or_default();
        let display = display_name(d.kernel_name());
        kernel_symbols.push(json!({
            "size": 0,
            "kernel_id": ids.kernel(d),
            "code_object_id": ids.agent(d),
            "kernel_name": d.kernel_name(),
            "kernel_object": launch.kernel_object,
            "kernarg_segment_size": symbol.kernarg_segment_size,
            "kernarg_segment_alignment": symbol.kernarg_segment_alignment,
            "group_segment_size": symbol.group_segment_size,
            "private_segment_size": symbol.private_segment_size,
            "sgpr_count": symbol.sgpr_count,
            "arch_vgpr_count": symbol.arch_vgpr_count,
            "accum_vgpr_count": symbol.accum_vgpr_count,
            "formatted_kernel_name": display,
            "demangled_kernel_name": display,
            "truncated_kernel_name": truncated_name(&display),
        }));
    }
    kernel_symbols
}

/// The kernel-dispatch buffer records, one object per dispatch, written as text (building
/// values costs more than the rest of the document).
fn write_dispatch_records(out: &mut String, dispatches: &[&Dispatch], ids: &Identities) {
    for (i, d) in dispatches.iter().enumerate() {
        let launch = d.launch.clone().unwrap_or_default();
        let (start, end) = d.kernel_time();
        let [wx, wy, wz] = launch.workgroup_size;
        let [gx, gy, gz] = launch.grid_size;
        let _ = write!(
            out,
            "{}\n{{\"size\":0,\"kind\":\"KERNEL_DISPATCH\",\"operation\":\"KERNEL_DISPATCH_COMPLETE\",\"thread_id\":{},\
             \"correlation_id\":{{\"internal\":{},\"external\":0}},\"start_timestamp\":{start},\"end_timestamp\":{end},\
             \"stream_id\":{{\"handle\":0}},\"dispatch_info\":{{\"size\":0,\"agent_id\":{{\"handle\":{}}},\
             \"queue_id\":{{\"handle\":{}}},\"kernel_id\":{},\"dispatch_id\":{},\"private_segment_size\":{},\
             \"group_segment_size\":{},\"workgroup_size\":{{\"x\":{wx},\"y\":{wy},\"z\":{wz}}},\
             \"grid_size\":{{\"x\":{gx},\"y\":{gy},\"z\":{gz}}}}}}}",
            if i == 0 { "" } else { "," },
            launch.tid,
            d.dispatch_id,
            ids.agent(d),
            d.queue_id,
            ids.kernel(d),
            d.dispatch_id,
            launch.private_segment_size,
            launch.group_segment_size,
        );
    }
}

/// The `rocprofiler-sdk-tool` array of the tool JSON: one entry per process. `app` is the
/// application's pid and command line, when known.
pub fn tool_processes(dispatches: &[Dispatch], app: Option<&(u32, String)>) -> String {
    let ids = Identities::of(dispatches);
    let host = crate::output_path::hostname();
    let processes: Vec<String> = dispatches
        .chunk_by(|a, b| a.pid == b.pid)
        .map(|own| {
            let pid = own[0].pid;
            let command = app
                .filter(|(p, _)| u64::from(*p) == pid)
                .map_or("", |(_, c)| c.as_str());
            let own: Vec<&Dispatch> = own.iter().collect();
            process_json(pid, &own, &ids, command, &host)
        })
        .collect();
    format!("[{}]", processes.join(",\n"))
}

/// rocprofv3's `counter_collection.csv` columns, then kreplay's pass, group and exactness.
pub const COUNTER_COLLECTION_COLUMNS: [&str; 22] = [
    "Correlation_Id",
    "Dispatch_Id",
    "Agent_Id",
    "Queue_Id",
    "Process_Id",
    "Thread_Id",
    "Grid_Size",
    "Kernel_Id",
    "Kernel_Name",
    "Workgroup_Size",
    "LDS_Block_Size",
    "Scratch_Size",
    "VGPR_Count",
    "Accum_VGPR_Count",
    "SGPR_Count",
    "Counter_Name",
    "Counter_Value",
    "Start_Timestamp",
    "End_Timestamp",
    "Replay_Pass",
    "Counter_Group",
    "Exactness",
];

/// The group a pass collected, as text (empty when it collected none).
fn group_text(p: &Pass) -> String {
    p.group.map(|g| g.to_string()).unwrap_or_default()
}

/// One `counter_collection.csv` row.
fn collection_row(out: &mut String, d: &Dispatch, p: &Pass, c: &CounterValue, ids: &Identities) {
    let launch = d.launch.clone().unwrap_or_default();
    let (lds, vgpr, accum, sgpr) = kernel_resources(d);
    let grid: u64 = launch.grid_size.iter().product();
    let workgroup: u64 = launch.workgroup_size.iter().product();
    let _ = writeln!(
        out,
        "{id},{id},{},{},{},{},{grid},{},{},{workgroup},{},{},{vgpr},{accum},{sgpr},{},{:.6},{},{},{},{},{}",
        quoted(&format!("Agent {}", ids.agent(d))),
        d.queue_id,
        d.pid,
        launch.tid,
        ids.kernel(d),
        quoted(&display_name(d.kernel_name())),
        lds.div_ceil(LDS_BLOCK) * LDS_BLOCK,
        launch.private_segment_size,
        quoted(&c.name),
        c.value,
        p.start_ns,
        p.end_ns,
        p.pass,
        group_text(p),
        quoted(&c.exactness),
        id = d.dispatch_id,
    );
}

/// `<name>_counter_collection.csv`: one row per dispatch, pass and counter (instances
/// summed), with the times of that pass.
pub fn counter_collection(dispatches: &[Dispatch]) -> String {
    let ids = Identities::of(dispatches);
    let mut out = COUNTER_COLLECTION_COLUMNS.map(quoted).join(",");
    out.push('\n');
    for d in dispatches {
        for p in &d.passes {
            for c in &p.counters {
                collection_row(&mut out, d, p, c, &ids);
            }
        }
    }
    out
}
