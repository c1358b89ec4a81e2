//! The executor for code-object kernels: the AMDGPU emulator (`amdgpu-emu`).
//!
//! A dispatch whose kernel object is the descriptor of a loaded code object's kernel runs on the
//! emulator of its agent (one per GPU agent, gfx90a and gfx942; decoded code cached by the
//! emulator). The code range is the code object's `.text` as loaded. Memory is what the runtime
//! knows when the dispatch starts or learns while it runs ([`crate::memory::MemoryView`]: every
//! allocation, kernarg and loaded code object memory) plus the queue's `hsa_queue_t` and ring;
//! any other address ends the dispatch with a memory fault. Faults become queue errors:
//!
//! | emulator fault | queue error |
//! |---|---|
//! | memory, misaligned atomic | `HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION` |
//! | illegal instruction, bad jump | `HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION` |
//! | `s_trap` (`__builtin_trap()`) | `HSA_STATUS_ERROR_EXCEPTION` |
//! | time limit | `HSA_STATUS_ERROR` |
//! | cancelled (the queue is being destroyed) | none: the queue is going away |
//! | bad descriptor or packet | `HSA_STATUS_ERROR_INVALID_CODE_OBJECT` |
//!
//! Each dispatch's shader-data records are kept (the last [`KEPT_DISPATCHES`], by completion
//! signal) for `vhsa_dispatch_shader_data`, and written as JSON lines under `VHSA_SQTT_DIR` when
//! that variable names a directory.

use crate::executable::loader;
use crate::executor::{DeviceMemory, DispatchFault, DispatchRequest, Executor};
use amdgpu_emu::{DispatchSetup, Emulator, GlobalMemory, ShaderDataRecord, Target};
use hsa_abi::ffi::*;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many dispatches' shader-data records stay readable through the C extension.
pub(crate) const KEPT_DISPATCHES: usize = 256;

/// The environment variable naming a directory for each dispatch's shader-data records.
pub(crate) const SQTT_DIR_VARIABLE: &str = "VHSA_SQTT_DIR";

/// Runs code-object kernels on the emulator.
#[derive(Default)]
pub(crate) struct EmulatedExecutor {
    /// One emulator per GPU agent.
    emulators: Mutex<HashMap<u64, Arc<Emulator>>>,
    /// The loaded `.text` range of each loaded code object seen, by its handle.
    code: Mutex<HashMap<u64, Range<u64>>>,
}

/// The shader-data records of recent dispatches: (completion signal, records), newest last.
static RECORDS: Mutex<VecDeque<(u64, Arc<[ShaderDataRecord]>)>> = Mutex::new(VecDeque::new());
/// Emulated dispatches so far (numbers the record files).
static DISPATCH_SEQ: AtomicU64 = AtomicU64::new(0);

/// The records of the latest emulated dispatch whose completion signal is `signal`.
pub(crate) fn records_of(signal: u64) -> Option<Arc<[ShaderDataRecord]>> {
    RECORDS
        .lock()
        .iter()
        .rev()
        .find(|(s, _)| *s == signal)
        .map(|(_, r)| r.clone())
}

fn keep_records(signal: u64, records: Arc<[ShaderDataRecord]>) {
    let mut r = RECORDS.lock();
    if r.len() >= KEPT_DISPATCHES {
        r.pop_front();
    }
    r.push_back((signal, records));
}

/// The memory a dispatch may touch.
struct DispatchMemory {
    view: crate::memory::MemoryView,
    extra: [(u64, u64); 2],
}

// SAFETY: every pointer returned lies in a live allocation of the view (whose mappings stay
// mapped while the view lives, see `MemoryView`), in the queue's descriptor or ring, which
// outlive the packet processor running the dispatch, or in the `amd_signal_t` of a live signal
// (the signal region is never unmapped; its value is only accessed atomically). Device memory
// is host memory: device addresses are host addresses, but for locked memory, whose agent
// addresses `host_address` turns into the host addresses of the same bytes. Other host accesses
// during the dispatch are the application's (a GPU gives no stronger guarantee).
unsafe impl GlobalMemory for DispatchMemory {
    fn translate(&self, addr: u64, len: u64) -> Option<NonNull<u8>> {
        let inside = self.view.contains(addr, len)
            || crate::signal::is_device_range(addr, len)
            || self
                .extra
                .iter()
                .any(|&(b, l)| addr >= b && addr.checked_add(len).is_some_and(|e| e <= b + l));
        if inside {
            NonNull::new(crate::memory::host_address(addr as usize) as *mut u8)
        } else {
            None
        }
    }

    /// The queue's descriptor or ring (every wave of a HIP kernel reads its work-group size
    /// from the dispatch packet), or an allocation of the view: their agent addresses map to
    /// host addresses by one offset (none, or the alias of locked memory), so each translates
    /// linearly.
    fn span(&self, addr: u64) -> Option<(u64, u64, NonNull<u8>)> {
        let (base, size) = self
            .extra
            .into_iter()
            .find(|&(b, l)| addr.wrapping_sub(b) < l)
            .or_else(|| self.view.allocation_at(addr))?;
        let host = NonNull::new(crate::memory::host_address(base as usize) as *mut u8)?;
        Some((base, size, host))
    }
}

fn fault(status: hsa_status_t, message: String) -> DispatchFault {
    DispatchFault::Fault { status, message }
}

impl EmulatedExecutor {
    fn emulator(&self, agent: u64, target: Target) -> Arc<Emulator> {
        self.emulators
            .lock()
            .entry(agent)
            .or_insert_with(|| {
                let cus = crate::topology::agent(agent)
                    .ok()
                    .and_then(|a| a.model)
                    .map_or(4, |m| m.compute_units);
                Arc::new(Emulator::new(target, 0).with_compute_units(cus))
            })
            .clone()
    }

    /// The loaded `.text` of the code object holding `object`. A code object seen for the first
    /// time also makes the emulators forget the code of code objects no longer loaded.
    fn code_range(&self, object: u64) -> Result<Range<u64>, String> {
        let lco = loader::loaded_code_object_at(object)
            .ok_or_else(|| format!("kernel object {object:#x} lies in no loaded code object"))?;
        let mut code = self.code.lock();
        if let Some(r) = code.get(&lco.handle) {
            return Ok(r.clone());
        }
        let parsed = amdgpu_emu::code_object::CodeObject::parse(&lco.bytes)
            .map_err(|e| format!("code object {}: {e}", lco.uri))?;
        let delta = lco.delta();
        let range = parsed.text.start.wrapping_add_signed(delta)
            ..parsed.text.end.wrapping_add_signed(delta);
        let gone: Vec<u64> = code
            .keys()
            .copied()
            .filter(|h| loader::loaded_code_object(*h).is_err())
            .collect();
        for h in gone {
            if let Some(r) = code.remove(&h) {
                for e in self.emulators.lock().values() {
                    e.forget_code(r.clone());
                }
            }
        }
        code.insert(lco.handle, range.clone());
        Ok(range)
    }
}

impl Executor for EmulatedExecutor {
    fn execute(
        &self,
        d: &DispatchRequest<'_>,
        _memory: &dyn DeviceMemory,
    ) -> Result<(), DispatchFault> {
        let object = d.kernel_object;
        let Some(symbol) = loader::kernel_by_object(object) else {
            return Err(DispatchFault::NoImplementation);
        };
        let name = symbol.kernel_name().unwrap_or(&symbol.name).to_owned();
        let Some(target) =
            Target::from_name(d.agent.isa_name).or_else(|| Target::from_name(d.agent.target))
        else {
            return Err(fault(
                HSA_STATUS_ERROR_INVALID_ISA,
                format!(
                    "kernel `{name}` cannot run on agent {}: the emulator runs gfx90a and gfx942 code only (dispatch it on a gfx90a or gfx942 agent, or register a native kernel named `{name}`)",
                    d.agent.target
                ),
            ));
        };
        let code_range = self.code_range(object).map_err(|m| {
            fault(
                HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
                format!("kernel `{name}`: {m}"),
            )
        })?;
        let p = d.packet;
        let setup = DispatchSetup {
            kernel_object: object,
            kernel_name: Some(&name),
            code_range,
            grid: [p.grid_size_x, p.grid_size_y, p.grid_size_z].map(|v| v.max(1)),
            workgroup: [p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z]
                .map(|v| u32::from(v).max(1)),
            kernarg_address: d.kernarg_address,
            group_segment_size: p.group_segment_size,
            private_segment_size: p.private_segment_size,
            dispatch_packet_address: d.packet_address,
            queue_address: d.queue_address,
            dispatch_id: DISPATCH_SEQ.fetch_add(1, Ordering::Relaxed),
            apertures: amdgpu_emu::Apertures::default(),
        };
        let memory = DispatchMemory {
            view: crate::memory::MemoryView::take(),
            extra: [
                (d.queue_address, std::mem::size_of::<hsa_queue_t>() as u64),
                d.ring,
            ],
        };
        let emu = self.emulator(d.agent.handle, target);
        let outcome = emu
            .dispatch_cancellable(&setup, &memory, d.abandon)
            .map_err(|f| {
                fault(
                    vgpu::fault::queue_status(&f.kind),
                    format!("kernel `{name}` on agent {}: {f}", d.agent.target),
                )
            })?;
        drop(memory);
        // Counters are agent-wide: the dispatch's counts go to its agent's counter file before
        // its completion is signalled.
        if let Some(file) = crate::topology::agent(d.agent.handle)
            .ok()
            .and_then(|a| a.counters.as_ref())
        {
            file.add_dispatch(&outcome.counters.per_cu);
        }
        let signal = p.completion_signal.handle;
        let records: Arc<[ShaderDataRecord]> = outcome.trace.into();
        if !records.is_empty() {
            write_record_file(setup.dispatch_id + 1, &name, &records);
        }
        keep_records(signal, records);
        Ok(())
    }
}

/// Writes a dispatch's records under `VHSA_SQTT_DIR` as `<pid>-<n>-<kernel>.jsonl`, one JSON
/// object per record in the form `kreplay sqtt` reads.
fn write_record_file(seq: u64, kernel: &str, records: &[ShaderDataRecord]) {
    let Some(dir) = std::env::var_os(SQTT_DIR_VARIABLE) else {
        return;
    };
    let safe: String = kernel
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    let path =
        std::path::Path::new(&dir).join(format!("{}-{seq}-{safe}.jsonl", std::process::id()));
    let mut text = String::with_capacity(records.len() * 80);
    for r in records {
        text.push_str(&format!(
            "{{\"time\":{},\"value\":{},\"se\":0,\"cu\":{},\"simd\":{},\"wave_id\":{},\"flags\":{}}}\n",
            r.time, r.value, r.cu, r.simd, r.wave_id, r.flags
        ));
    }
    if let Err(e) = std::fs::write(&path, text) {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            tracing::warn!(
                "{SQTT_DIR_VARIABLE}: cannot write {}: {e} (set it to a writable directory)",
                path.display()
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The queue's descriptor and ring are spans of their own (kept by the emulator's threads
    /// like any allocation), answering what a translation of their bytes answers; an address
    /// in neither, nor in any allocation, has none.
    #[test]
    fn the_queue_and_its_ring_are_spans_of_a_dispatch() {
        let (queue, ring) = (vec![0u8; 64], vec![0u8; 4096]);
        let (q, r) = (queue.as_ptr() as u64, ring.as_ptr() as u64);
        let memory = DispatchMemory {
            view: crate::memory::MemoryView::take(),
            extra: [(q, 64), (r, 4096)],
        };
        for (base, len) in [(q, 64), (r, 4096)] {
            for at in [base, base + len / 2, base + len - 1] {
                let (b, l, host) = memory.span(at).expect("a span");
                assert_eq!((b, l), (base, len), "{at:#x}");
                let off = (at - base) as usize;
                // SAFETY: `off < len`: inside the span.
                let inside = unsafe { host.add(off) };
                assert_eq!(Some(inside), memory.translate(at, 1), "{at:#x}");
            }
            assert_eq!(memory.translate(base + len - 1, 2), None);
        }
        // The first page: no allocation, no queue.
        assert!(memory.span(16).is_none());
        assert!(memory.translate(16, 4).is_none());
    }
}
