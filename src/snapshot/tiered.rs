//! `TieredStore`: each region in a buffer of the replaying agent's own memory while the device
//! budget allows, in a host buffer otherwise.
//!
//! Device buffers come from [`AgentBuffers`], one per agent, which allocates through
//! [`DeviceMemory`] (the runtime's original pool entries in production: the buffers are never
//! tracked as the application's), keeps the buffers of finished snapshots for reuse, keyed by
//! size, and releases idle ones when an application allocation fails for lack of memory or
//! after [`super::IDLE_RETURN`]. Captures and restores of device slots are device-to-device
//! copies ([`DeviceCopy::copy_on_device`]), several in flight.

use super::host::{HostBuffer, HostPinning, capture_into, give_back, host_buffer, put_back_from};
use super::{CaptureError, CopyFailed, CopyOp, DeviceCopy, Region, SnapshotStore};
use crate::sync::{Arc, Mutex};
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::{Duration, Instant};

/// Allocates and frees device memory of one agent for snapshot buffers.
pub trait DeviceMemory: Send + Sync {
    /// `size` bytes of the agent's memory; `None` when the runtime refused.
    fn allocate(&self, size: usize) -> Option<usize>;
    /// Frees a buffer from [`DeviceMemory::allocate`].
    fn free(&self, ptr: usize);
}

/// One device buffer of [`AgentBuffers`].
#[derive(Debug)]
pub(crate) struct DeviceBuffer {
    pub(crate) ptr: usize,
    cap: usize,
}

#[derive(Default)]
struct Held {
    /// Idle buffers by capacity, each with the time it was given back.
    idle: BTreeMap<usize, Vec<(usize, Instant)>>,
    /// Bytes allocated by the tool on the agent, idle or in use.
    total: u64,
    /// Bytes of idle buffers.
    idle_bytes: u64,
}

/// The snapshot buffers of one agent.
pub struct AgentBuffers {
    memory: Box<dyn DeviceMemory>,
    held: Mutex<Held>,
}

/// Largest capacity reused for a request of `size` bytes.
fn reuse_limit(size: usize) -> usize {
    size.saturating_add(size / 8).saturating_add(64 << 10)
}

impl AgentBuffers {
    /// Buffers allocated through `memory`.
    pub fn new(memory: Box<dyn DeviceMemory>) -> Self {
        Self {
            memory,
            held: Mutex::new(Held::default()),
        }
    }

    /// Bytes the tool holds on the agent (idle or in use).
    pub fn held_bytes(&self) -> u64 {
        self.held.lock().total
    }

    /// Bytes of idle buffers.
    pub fn idle_bytes(&self) -> u64 {
        self.held.lock().idle_bytes
    }

    /// A buffer of at least `size` bytes while the tool's total on the agent stays within
    /// `budget`; idle buffers are reused first, and freed to make room.
    pub(crate) fn take(&self, size: usize, budget: u64) -> Option<DeviceBuffer> {
        let mut h = self.held.lock();
        let fit = h
            .idle
            .range_mut(size.max(1)..=reuse_limit(size))
            .next()
            .and_then(|(cap, list)| list.pop().map(|(p, _)| (*cap, p)));
        if let Some((cap, ptr)) = fit {
            if h.idle.get(&cap).is_some_and(Vec::is_empty) {
                h.idle.remove(&cap);
            }
            h.idle_bytes -= cap as u64;
            return Some(DeviceBuffer { ptr, cap });
        }
        // Make room from idle buffers that do not fit this request, largest first.
        while h.total + size as u64 > budget {
            let Some(mut last) = h.idle.last_entry() else {
                break;
            };
            let cap = *last.key();
            let (ptr, _) = last.get_mut().pop().expect("no empty lists are kept");
            if last.get().is_empty() {
                last.remove();
            }
            self.memory.free(ptr);
            h.total -= cap as u64;
            h.idle_bytes -= cap as u64;
        }
        if h.total + size as u64 > budget {
            return None;
        }
        let ptr = match self.memory.allocate(size) {
            Some(p) => p,
            None if h.idle_bytes > 0 => {
                // The runtime is short of memory: idle buffers go first, then one more try.
                for (cap, list) in std::mem::take(&mut h.idle) {
                    for (p, _) in list {
                        self.memory.free(p);
                        h.total -= cap as u64;
                    }
                }
                h.idle_bytes = 0;
                self.memory.allocate(size)?
            }
            None => return None,
        };
        h.total += size as u64;
        Some(DeviceBuffer { ptr, cap: size })
    }

    pub(crate) fn give_back(&self, buffers: impl IntoIterator<Item = DeviceBuffer>) {
        let now = Instant::now();
        let mut h = self.held.lock();
        for b in buffers {
            h.idle_bytes += b.cap as u64;
            h.idle.entry(b.cap).or_default().push((b.ptr, now));
        }
        drop(h);
        super::start_reaper();
    }

    /// Drops the idle buffers without freeing them (the runtime that owned them ended).
    fn forget_idle(&self) {
        let mut h = self.held.lock();
        h.total -= h.idle_bytes;
        h.idle_bytes = 0;
        h.idle.clear();
    }

    /// Frees idle buffers given back at least `older_than` ago; the bytes released.
    pub fn release_idle(&self, older_than: Duration) -> u64 {
        let now = Instant::now();
        let mut h = self.held.lock();
        let mut released = 0u64;
        let memory = &self.memory;
        h.idle.retain(|cap, list| {
            list.retain(|(ptr, t)| {
                let old = now.duration_since(*t) >= older_than;
                if old {
                    memory.free(*ptr);
                    released += *cap as u64;
                }
                !old
            });
            !list.is_empty()
        });
        h.total -= released;
        h.idle_bytes -= released;
        released
    }
}

static AGENTS: Mutex<Vec<(u64, Arc<AgentBuffers>)>> = Mutex::new(Vec::new());

/// The buffers of `agent`, made by `make` the first time (`None`: no device store there).
pub fn agent_buffers(
    agent: u64,
    make: impl FnOnce() -> Option<AgentBuffers>,
) -> Option<Arc<AgentBuffers>> {
    let mut v = AGENTS.lock();
    if let Some((_, b)) = v.iter().find(|(a, _)| *a == agent) {
        return Some(b.clone());
    }
    let b = Arc::new(make()?);
    v.push((agent, b.clone()));
    Some(b)
}

/// Forgets the buffers of every agent (their runtime instance ended): buffers still idle are
/// not freed through it, and the next capture makes new pools.
pub(crate) fn forget_agents() {
    let gone = std::mem::take(&mut *AGENTS.lock());
    for (_, b) in &gone {
        b.forget_idle();
    }
}

/// Frees idle device buffers of every agent given back at least `older_than` ago.
pub fn release_idle_device_buffers(older_than: Duration) -> u64 {
    let all: Vec<Arc<AgentBuffers>> = AGENTS.lock().iter().map(|(_, b)| b.clone()).collect();
    all.iter().map(|b| b.release_idle(older_than)).sum()
}

/// Bytes of idle device buffers of every agent.
pub(crate) fn idle_device_bytes() -> u64 {
    AGENTS.lock().iter().map(|(_, b)| b.idle_bytes()).sum()
}

enum Slot {
    Device(DeviceBuffer),
    Host(HostBuffer),
}

/// Device buffers first, host buffers for what does not fit (see the module docs).
pub struct TieredStore {
    device: Option<(Arc<AgentBuffers>, u64)>,
    device_only: bool,
    pinning: Option<Arc<dyn HostPinning>>,
    slots: Vec<Slot>,
    bytes: u64,
    device_bytes: u64,
}

/// Capture and restore copies are cut into pieces of this size, so several are in flight.
const PIECE: usize = 16 << 20;

fn pieces(dst: usize, src: usize, len: usize, out: &mut Vec<CopyOp>) {
    let mut off = 0;
    while off < len {
        let n = PIECE.min(len - off);
        out.push(CopyOp {
            dst: dst + off,
            src: src + off,
            len: n,
        });
        off += n;
    }
}

impl TieredStore {
    /// A store placing regions in `buffers` while the tool's bytes on the agent stay within
    /// `budget`, the rest in host buffers (pinned through `pinning` when given). With
    /// `device_only`, a region that does not fit declines the capture instead.
    pub fn new(
        buffers: Option<Arc<AgentBuffers>>,
        budget: u64,
        device_only: bool,
        pinning: Option<Arc<dyn HostPinning>>,
    ) -> Self {
        Self {
            device: buffers.map(|b| (b, budget)),
            device_only,
            pinning,
            slots: Vec::new(),
            bytes: 0,
            device_bytes: 0,
        }
    }
}

impl Drop for TieredStore {
    fn drop(&mut self) {
        let mut device = Vec::new();
        let mut host = Vec::new();
        for s in self.slots.drain(..) {
            match s {
                Slot::Device(b) => device.push(b),
                Slot::Host(b) => host.push(b),
            }
        }
        if let Some((buffers, _)) = &self.device
            && !device.is_empty()
        {
            buffers.give_back(device);
        }
        give_back(host);
    }
}

impl SnapshotStore for TieredStore {
    fn reserve(&mut self, regions: &[Region]) -> Result<(), CaptureError> {
        self.slots
            .try_reserve_exact(regions.len())
            .map_err(|_| CaptureError::Metadata {
                regions: regions.len(),
            })
    }

    fn keep(
        &mut self,
        index: usize,
        region: &Region,
        copier: &dyn DeviceCopy,
        during: &mut dyn FnMut(),
    ) -> Result<(), CaptureError> {
        debug_assert_eq!(index, self.slots.len());
        let on_device = self
            .device
            .as_ref()
            .and_then(|(b, budget)| b.take(region.size, *budget));
        match on_device {
            Some(buf) => {
                let mut ops = Vec::new();
                pieces(buf.ptr, region.device, region.size, &mut ops);
                // SAFETY: the buffer holds at least `size` bytes of the agent's memory; the
                // region is valid device memory for its size (held by the caller).
                let copied = unsafe { copier.copy_on_device(&ops, during) };
                if let Err(source) = copied {
                    if let Some((b, _)) = &self.device {
                        b.give_back([buf]);
                    }
                    return Err(CaptureError::Copy {
                        device: region.device,
                        source,
                    });
                }
                self.device_bytes += region.size as u64;
                self.slots.push(Slot::Device(buf));
            }
            None if self.device_only => {
                return Err(CaptureError::DeviceRoom {
                    device: region.device,
                    size: region.size,
                });
            }
            None => {
                // The budget asked before the capture may have counted this region as device
                // memory that the runtime then refused: the host must have room for it now.
                if self.device.is_some() {
                    super::budget::check(region.size as u64)?;
                }
                let buf = host_buffer(region.size, self.pinning.as_ref()).ok_or(
                    CaptureError::HostAllocation {
                        device: region.device,
                        size: region.size,
                    },
                )?;
                if let Err(e) = capture_into(&buf, region, copier, during) {
                    give_back([buf]);
                    return Err(e);
                }
                self.slots.push(Slot::Host(buf));
            }
        }
        self.bytes += region.size as u64;
        Ok(())
    }

    fn put_back(
        &self,
        index: usize,
        region: &Region,
        ranges: &[Range<usize>],
        copier: &dyn DeviceCopy,
    ) -> Result<(), CopyFailed> {
        match &self.slots[index] {
            Slot::Device(buf) => {
                let mut ops = Vec::with_capacity(ranges.len());
                for r in ranges {
                    debug_assert!(r.end <= region.size);
                    pieces(
                        region.device + r.start,
                        buf.ptr + r.start,
                        r.len(),
                        &mut ops,
                    );
                }
                // SAFETY: both sides are the agent's memory: the captured region (re-validated
                // by the caller) and its buffer, `ranges` within both.
                unsafe { copier.copy_on_device(&ops, &mut || {}) }
            }
            Slot::Host(buf) => put_back_from(buf, region, ranges, copier),
        }
    }

    fn bytes_held(&self) -> u64 {
        self.bytes
    }

    fn device_bytes(&self) -> u64 {
        self.device_bytes
    }

    fn host_bound(&self, regions: &[Region]) -> u64 {
        let Some((buffers, budget)) = &self.device else {
            return regions.iter().map(|r| r.size as u64).sum();
        };
        if self.device_only {
            // What does not fit declines the capture instead of going to host memory.
            return 0;
        }
        // Idle buffers are freed to make room, so only the buffers in use count.
        let (held, idle) = (buffers.held_bytes(), buffers.idle_bytes());
        let mut room = budget.saturating_sub(held.saturating_sub(idle));
        let mut host = 0u64;
        for r in regions {
            let size = r.size as u64;
            if size <= room {
                room -= size;
            } else {
                host += size;
            }
        }
        host
    }

    fn one_copy(&self, index: usize, range: &Range<usize>) -> bool {
        match &self.slots[index] {
            Slot::Device(_) => range.len() <= PIECE,
            Slot::Host(_) => true,
        }
    }
}
