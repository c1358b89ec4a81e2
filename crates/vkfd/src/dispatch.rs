//! Kernel dispatches on the emulator (`amdgpu-emu`), one emulator per GPU node.
//!
//! Under ROCR the thunk only sees the packet's kernel object, so the code range is found from
//! memory:
//! - a kernel of a code object: ROCR's loader copies the code object's segments into one
//!   block, the first of which starts with the ELF header and program headers. The thunk looks
//!   for that header on the page boundaries below the kernel object (inside the allocation
//!   holding it) and takes the executable `PT_LOAD` segment of the first image that contains
//!   the kernel object, and the kernel's name from the image's dynamic symbols (for fault
//!   messages);
//! - ROCR's own blit kernels have no ELF image: their `amd_kernel_code_t` header is followed by
//!   the code at the header's entry offset; the range runs from there to the end of the
//!   allocation (at most 64 KiB).
//!
//! Memory is the thunk's map ([`crate::vm`]) when the dispatch starts and what is added to it
//! while the dispatch runs. Emulator faults become queue errors with the statuses vhsa uses; the
//! address of a memory fault is kept for the page-fault report.

use amdgpu_code_object::{HEADER_PROBE_BYTES, KernelDescriptor, kernel_name, loaded_layout};
use amdgpu_emu::{DispatchSetup, Emulator, GlobalMemory, Target};
use hsa_abi::ffi::*;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use vgpu::aql::DispatchError;

const PAGE: u64 = 4096;
/// How far below a kernel object its ELF header is looked for.
const ELF_SEARCH_BYTES: u64 = 64 << 20;
/// Longest code range of a kernel without an ELF image.
const BLIT_CODE_BYTES: u64 = 64 << 10;

static EMULATORS: Mutex<Option<HashMap<u32, Arc<Emulator>>>> = Mutex::new(None);
/// Code found, by kernel object (forgotten when the instruction cache is invalidated).
static KERNELS: Mutex<Option<HashMap<u64, KernelCode>>> = Mutex::new(None);

/// What the thunk found of a kernel in memory.
#[derive(Clone)]
struct KernelCode {
    /// The code range.
    code: Range<u64>,
    /// The kernel's name, when its image has dynamic symbols (not ROCR's blit kernels).
    name: Option<Arc<str>>,
}

/// The address of each queue's last memory fault.
static FAULTS: Mutex<Option<HashMap<u64, u64>>> = Mutex::new(None);
static DISPATCH_SEQ: AtomicU64 = AtomicU64::new(0);

/// The address of the last memory fault on queue `queue`.
pub(crate) fn last_fault_address(queue: u64) -> Option<u64> {
    FAULTS.lock().as_ref().and_then(|m| m.get(&queue).copied())
}

/// The instruction cache of `node` is invalidated: decoded code is dropped.
pub(crate) fn invalidate_code(node: u32) {
    KERNELS.lock().take();
    if let Some(e) = EMULATORS
        .lock()
        .as_ref()
        .and_then(|m| m.get(&node).cloned())
    {
        e.forget_code(0..u64::MAX);
    }
}

/// Drops every emulator (the device is closed).
pub(crate) fn clear() {
    EMULATORS.lock().take();
    KERNELS.lock().take();
    FAULTS.lock().take();
}

fn emulator(node: u32, target: Target, compute_units: u32) -> Arc<Emulator> {
    EMULATORS
        .lock()
        .get_or_insert_with(HashMap::new)
        .entry(node)
        .or_insert_with(|| Arc::new(Emulator::new(target, 0).with_compute_units(compute_units)))
        .clone()
}

struct DispatchMemory(crate::vm::DispatchGuard);

// SAFETY: every pointer returned lies in an entry of the thunk's map when the dispatch started
// or added while it runs (the guard keeps freed entries mapped until the dispatch ends), or in
// the events' mailbox slots, which live as long as the process. Device addresses are host addresses, but for
// registered memory's, which `vgpu::user_memory::host_address` turns into the host addresses of the same
// bytes. Other accesses during the dispatch are the runtime's (no stronger guarantee than a
// GPU gives).
unsafe impl GlobalMemory for DispatchMemory {
    fn translate(&self, addr: u64, len: u64) -> Option<NonNull<u8>> {
        if self.0.snapshot.contains(addr, len) {
            NonNull::new(vgpu::user_memory::host_address(addr) as *mut u8)
        } else if crate::events::mailbox_contains(addr, len) {
            NonNull::new(addr as *mut u8)
        } else {
            None
        }
    }

    /// An entry of the map: its GPU addresses map to host addresses by one offset (none, or
    /// the alias of registered memory), so the whole entry translates linearly.
    fn span(&self, addr: u64) -> Option<(u64, u64, NonNull<u8>)> {
        let (start, end) = self.0.snapshot.entry_at(addr)?;
        let host = NonNull::new(vgpu::user_memory::host_address(start) as *mut u8)?;
        Some((start, end - start, host))
    }
}

fn read<const N: usize>(mem: &DispatchMemory, address: u64) -> Option<[u8; N]> {
    read_bytes(mem, address, N as u64)?.try_into().ok()
}

/// The executable segment of the loaded ELF image at `base` and the kernel's name, if the
/// image holds `object` (`end` bounds the memory readable from `base`).
fn elf_code(mem: &DispatchMemory, base: u64, end: u64, object: u64) -> Option<KernelCode> {
    // Most pages are not an image's start: look at the magic before reading the headers.
    let magic: [u8; 4] = read(mem, base)?;
    if magic != *b"\x7fELF" {
        return None;
    }
    let len = (HEADER_PROBE_BYTES as u64).min(end.checked_sub(base)?);
    let probe = read_bytes(mem, base, len)?;
    let layout = loaded_layout(&probe)?;
    if object < base || object >= base.wrapping_add(layout.extent.end) {
        return None;
    }
    let code = layout
        .code
        .map(|c| base.wrapping_add(c.start)..base.wrapping_add(c.end))?;
    let image = |at: u64, len: u64| read_bytes(mem, base.checked_add(at)?, len);
    let name = kernel_name(&probe, image, object - base).map(Arc::from);
    Some(KernelCode { code, name })
}

/// `len` bytes of translated memory from `address`, copied.
fn read_bytes(mem: &DispatchMemory, address: u64, len: u64) -> Option<Vec<u8>> {
    let p = mem.translate(address, len)?;
    // SAFETY: `len` readable bytes of translated memory, copied before use.
    Some(unsafe { std::slice::from_raw_parts(p.as_ptr(), usize::try_from(len).ok()?) }.to_vec())
}

/// The code (and name) of the kernel at `object`.
fn kernel_code(mem: &DispatchMemory, object: u64) -> Result<KernelCode, String> {
    if let Some(k) = KERNELS
        .lock()
        .as_ref()
        .and_then(|m| m.get(&object).cloned())
    {
        return Ok(k);
    }
    let (start, size) = crate::vm::range_of(object)
        .ok_or_else(|| format!("kernel object {object:#x} is not memory of the thunk"))?;
    let lowest = start.max(object.saturating_sub(ELF_SEARCH_BYTES));
    let mut page = object & !(PAGE - 1);
    let mut found = None;
    while page >= lowest {
        if let Some(k) = elf_code(mem, page, start + size, object) {
            found = Some(k);
            break;
        }
        if page < PAGE {
            break;
        }
        page -= PAGE;
    }
    let kernel = match found {
        Some(k) => k,
        None => {
            let kd: [u8; 64] = read(mem, object)
                .ok_or_else(|| format!("kernel object {object:#x} is not readable"))?;
            let entry = object.wrapping_add_signed(KernelDescriptor::parse(&kd).entry_offset);
            let end = (start + size).min(entry.saturating_add(BLIT_CODE_BYTES));
            if entry < start || entry >= end {
                return Err(format!(
                    "kernel object {object:#x}: entry {entry:#x} lies outside its allocation"
                ));
            }
            KernelCode {
                code: entry..end,
                name: None,
            }
        }
    };
    KERNELS
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(object, kernel.clone());
    Ok(kernel)
}

/// The queue a dispatch comes from, as the dispatch needs it.
pub(crate) struct DispatchQueue {
    /// Queue id.
    pub(crate) id: u64,
    /// Node of the queue's GPU.
    pub(crate) node: u32,
    /// Address of the queue's `amd_queue_t` (what a kernel's queue pointer points at).
    pub(crate) amd_queue: u64,
}

/// Runs one dispatch of `cp`'s queue.
pub(crate) fn run(
    cp: &DispatchQueue,
    abandon: &AtomicBool,
    packet_address: u64,
    p: &hsa_kernel_dispatch_packet_t,
) -> Result<(), DispatchError> {
    let failed = |status, message| Err(DispatchError::Failed(status, message));
    let Some(model) = crate::topology::gpu_model(cp.node) else {
        return failed(
            HSA_STATUS_ERROR_INVALID_AGENT,
            format!("node {} is no GPU", cp.node),
        );
    };
    let Some(target) = Target::from_name(model.target) else {
        return failed(
            HSA_STATUS_ERROR_INVALID_ISA,
            format!("the emulator does not run {} code", model.target),
        );
    };
    let memory = DispatchMemory(crate::vm::DispatchGuard::begin());
    let object = p.kernel_object;
    let kernel = match kernel_code(&memory, object) {
        Ok(k) => k,
        Err(m) => return failed(HSA_STATUS_ERROR_INVALID_CODE_OBJECT, m),
    };
    let setup = DispatchSetup {
        kernel_object: object,
        kernel_name: kernel.name.as_deref(),
        code_range: kernel.code,
        grid: [p.grid_size_x, p.grid_size_y, p.grid_size_z].map(|v| v.max(1)),
        workgroup: [p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z]
            .map(|v| u32::from(v).max(1)),
        kernarg_address: p.kernarg_address as u64,
        group_segment_size: p.group_segment_size,
        private_segment_size: p.private_segment_size,
        dispatch_packet_address: packet_address,
        queue_address: cp.amd_queue,
        dispatch_id: DISPATCH_SEQ.fetch_add(1, Ordering::Relaxed),
        apertures: amdgpu_emu::Apertures {
            shared_base: crate::topology::LDS_APERTURE,
            private_base: crate::topology::SCRATCH_APERTURE,
        },
    };
    let emu = emulator(cp.node, target, model.compute_units);
    match emu.dispatch_cancellable(&setup, &memory, abandon) {
        Ok(outcome) => {
            // Counters are agent-wide: the counts go to the node's counter file before the
            // dispatch's completion is signalled.
            if let Some(file) = counter_file(cp.node) {
                file.add_dispatch(&outcome.counters.per_cu);
            }
            Ok(())
        }
        Err(_) if abandon.load(Ordering::Acquire) => Err(DispatchError::Abandoned),
        Err(f) => {
            if let Some(a) = vgpu::fault::fault_address(&f.kind) {
                FAULTS
                    .lock()
                    .get_or_insert_with(HashMap::new)
                    .insert(cp.id, a);
            }
            failed(
                vgpu::fault::queue_status(&f.kind),
                format!("kernel object {object:#x} on {}: {f}", model.target),
            )
        }
    }
}

/// The counter file of a GPU node (created on first use, kept for the process).
pub(crate) fn counter_file(node: u32) -> Option<&'static vgpu::pmc::CounterFile> {
    static FILES: parking_lot::Mutex<Vec<(u32, &'static vgpu::pmc::CounterFile)>> =
        parking_lot::Mutex::new(Vec::new());
    let mut files = FILES.lock();
    if let Some((_, f)) = files.iter().find(|(n, _)| *n == node) {
        return Some(f);
    }
    let model = crate::topology::gpu_model(node)?;
    let file: &'static vgpu::pmc::CounterFile =
        Box::leak(Box::new(vgpu::pmc::counter_file_for(model)?));
    files.push((node, file));
    Some(file)
}

/// Code in `range` was freed: decoded code and found ranges in it are dropped.
pub(crate) fn forget(range: Range<u64>) {
    if let Some(m) = KERNELS.lock().as_mut() {
        m.retain(|k, c| {
            !range.contains(k) && (c.code.end <= range.start || c.code.start >= range.end)
        });
    }
    if let Some(m) = EMULATORS.lock().as_ref() {
        for e in m.values() {
            e.forget_code(range.clone());
        }
    }
}
