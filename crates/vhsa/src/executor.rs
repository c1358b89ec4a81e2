//! The seam between a queue's packet processor and whatever runs a kernel.
//!
//! When a kernel-dispatch packet reaches the head of a queue, the packet processor builds a
//! [`DispatchRequest`] (the packet, its kernel object and kernarg address, the agent) and hands
//! it to the queue's [`Executor`]. The executor runs the whole grid and returns; the processor
//! then records the times and completes the packet's signal. Nothing else of the runtime is
//! visible to an executor: memory is reached through [`DeviceMemory`].
//!
//! Native kernels (host functions registered through `vhsa_native_kernel_create`) are the
//! executor vhsa installs; an ISA emulator implements the same trait from another crate.
//!
//! Outcomes:
//! - `Ok(())`: the dispatch ran; the processor completes it.
//! - `Err(DispatchFault::NoImplementation)`: this executor cannot run the kernel; in an
//!   [`ExecutorChain`] the next executor tries. When no executor runs it, the processor ends the
//!   dispatch with a queue error (`HSA_STATUS_ERROR_INVALID_CODE_OBJECT`): a dispatch never
//!   completes without running.
//! - `Err(DispatchFault::Fault { status, message })`: the kernel faulted, as a GPU would report
//!   a memory violation or an illegal instruction; the queue is suspended and its error
//!   callback receives `status` (for example `HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION` or
//!   `HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION`); `message` is logged.

use hsa_abi::ffi::{hsa_kernel_dispatch_packet_t, hsa_status_t};
use std::sync::atomic::{AtomicBool, Ordering};

/// One kernel dispatch, as the packet processor found it.
#[derive(Clone, Copy)]
pub struct DispatchRequest<'a> {
    /// A copy of the dispatch packet (grid, workgroup, segment sizes, kernel object, kernarg
    /// address, completion signal).
    pub packet: &'a hsa_kernel_dispatch_packet_t,
    /// The packet's kernel object: the address of a kernel descriptor (`amd_kernel_code_t` /
    /// `llvm.amdgcn.kernel.descriptor`) in a loaded code object, or a native kernel object.
    pub kernel_object: u64,
    /// The packet's kernel-argument address.
    pub kernarg_address: u64,
    /// The agent of the queue.
    pub agent: AgentDescription<'a>,
    /// The queue's id (`hsa_queue_t::id`).
    pub queue_id: u64,
    /// Address of the packet's slot in the queue's ring (what the dispatch pointer points at).
    pub packet_address: u64,
    /// Address of the queue's `hsa_queue_t` (what the queue pointer points at).
    pub queue_address: u64,
    /// The queue's ring: (base address, bytes).
    pub ring: (u64, u64),
    /// Set when the queue is being destroyed: a long-running executor should give up.
    pub abandon: &'a AtomicBool,
}

impl DispatchRequest<'_> {
    /// True once the queue is being destroyed.
    pub fn abandoned(&self) -> bool {
        self.abandon.load(Ordering::Acquire)
    }
}

/// What an executor may know about the agent that runs the dispatch.
#[derive(Clone, Copy, Debug)]
pub struct AgentDescription<'a> {
    /// The agent handle (`hsa_agent_t::handle`).
    pub handle: u64,
    /// The GPU target, e.g. `gfx90a`.
    pub target: &'a str,
    /// The full ISA name, e.g. `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`.
    pub isa_name: &'a str,
    /// Wavefront size, as `HSA_AGENT_INFO_WAVEFRONT_SIZE` reports it.
    pub wavefront_size: u32,
}

/// Why a dispatch did not run normally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DispatchFault {
    /// This executor has no implementation for the kernel object.
    NoImplementation,
    /// The kernel faulted: the queue is suspended and its error callback gets `status`.
    Fault {
        /// The queue error status (`hsa_status_t`).
        status: hsa_status_t,
        /// What went wrong, for the log.
        message: String,
    },
}

impl std::fmt::Display for DispatchFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DispatchFault::NoImplementation => write!(f, "no implementation for the kernel object"),
            DispatchFault::Fault { status, message } => {
                write!(f, "kernel fault (status {status:#x}): {message}")
            }
        }
    }
}

impl std::error::Error for DispatchFault {}

/// An access outside every allocation the runtime knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryFault {
    /// First byte of the rejected access.
    pub address: u64,
    /// Its length in bytes.
    pub len: usize,
}

/// The agent's view of memory: device memory, host memory allocated or locked through the
/// runtime, loaded code objects. Device memory is host memory in vhsa, so addresses are host
/// addresses.
pub trait DeviceMemory {
    /// Reads `out.len()` bytes at `address`.
    fn read(&self, address: u64, out: &mut [u8]) -> Result<(), MemoryFault>;
    /// Writes `bytes` at `address`.
    fn write(&self, address: u64, bytes: &[u8]) -> Result<(), MemoryFault>;
}

/// Runs kernel dispatches. Called on the queue's packet-processor thread, one dispatch at a time
/// per queue (different queues call it concurrently).
pub trait Executor: Send + Sync {
    /// Runs the whole grid of one dispatch.
    fn execute(
        &self,
        dispatch: &DispatchRequest<'_>,
        memory: &dyn DeviceMemory,
    ) -> Result<(), DispatchFault>;
}

/// Tries each executor in order; the first one that has an implementation runs the dispatch.
pub struct ExecutorChain(pub Vec<std::sync::Arc<dyn Executor>>);

impl Executor for ExecutorChain {
    fn execute(
        &self,
        dispatch: &DispatchRequest<'_>,
        memory: &dyn DeviceMemory,
    ) -> Result<(), DispatchFault> {
        for e in &self.0 {
            match e.execute(dispatch, memory) {
                Err(DispatchFault::NoImplementation) => continue,
                other => return other,
            }
        }
        Err(DispatchFault::NoImplementation)
    }
}
