//! `HostStore`: one host buffer per region, pinned when the runtime can lock it, recycled
//! between snapshots.
//!
//! Fresh host memory costs a page fault per page on first touch, which dominates a capture;
//! buffers of finished snapshots are therefore kept, keyed by size (a `BTreeMap`: the lookup is
//! logarithmic in the number of idle buffers), and reused by the next capture. Buffers of 2 MiB
//! and more ask for transparent huge pages. Idle buffers are returned to the system after
//! [`super::IDLE_RETURN`] (see `snapshot::reaper`), not kept for the life of the process.

use super::{CaptureError, CopyFailed, DeviceCopy, Region, SnapshotStore};
use crate::sync::{Arc, Mutex};
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::{Duration, Instant};

/// Pins host memory for device transfers (`hsa_amd_memory_lock` in production).
pub trait HostPinning: Send + Sync {
    /// Pins `len` bytes at `ptr` and returns the address agents reach them at (a discrete GPU's
    /// runtime gives locked memory an address of its own), which copies then name; `None` when
    /// the runtime refused (the buffer stays pageable).
    fn pin(&self, ptr: *mut u8, len: usize) -> Option<*mut u8>;
    /// Unpins memory pinned by [`HostPinning::pin`].
    fn unpin(&self, ptr: *mut u8);
}

const HUGE_PAGE: usize = 2 << 20;
const PAGE: usize = 4096;

/// An anonymous host mapping of `cap` bytes, pinned or pageable.
pub(crate) struct HostBuffer {
    ptr: *mut u8,
    /// Where agents reach the buffer: the address pinning returned, else `ptr`.
    agent: *mut u8,
    cap: usize,
    pinned: Option<Arc<dyn HostPinning>>,
}

// SAFETY: the buffer owns its mapping; the pinning handle is `Send + Sync`.
unsafe impl Send for HostBuffer {}

impl HostBuffer {
    /// Maps at least `size` bytes (huge pages asked for from 2 MiB), pinned through `pinning`
    /// when given and accepted. `None` when the system has no memory for it.
    fn allocate(size: usize, pinning: Option<&Arc<dyn HostPinning>>) -> Option<Self> {
        let align = if size >= HUGE_PAGE { HUGE_PAGE } else { PAGE };
        let cap = size.max(1).checked_next_multiple_of(align)?;
        // SAFETY: an anonymous private mapping; no existing memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                cap,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        if cap >= HUGE_PAGE {
            // SAFETY: advice on the mapping just created; failure only loses the hint.
            unsafe { libc::madvise(p, cap, libc::MADV_HUGEPAGE) };
        }
        let ptr = p.cast::<u8>();
        let (agent, pinned) = match pinning.and_then(|pin| Some((pin.pin(ptr, cap)?, pin))) {
            Some((agent, pin)) => (agent, Some(pin.clone())),
            None => (ptr, None),
        };
        Some(Self {
            ptr,
            agent,
            cap,
            pinned,
        })
    }

    #[cfg(test)]
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The address copies to and from the buffer name (see [`HostPinning::pin`]).
    pub(crate) fn agent_ptr(&self) -> *mut u8 {
        self.agent
    }

    pub(crate) fn is_pinned(&self) -> bool {
        self.pinned.is_some()
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        if let Some(p) = &self.pinned {
            p.unpin(self.ptr);
        }
        // SAFETY: the mapping was created by `allocate` with this base and length.
        unsafe { libc::munmap(self.ptr.cast(), self.cap) };
    }
}

/// Idle buffers by capacity, each with the time it was given back.
struct Idle {
    by_size: BTreeMap<usize, Vec<(HostBuffer, Instant)>>,
    bytes: u64,
}

static IDLE: Mutex<Idle> = Mutex::new(Idle {
    by_size: BTreeMap::new(),
    bytes: 0,
});

/// Largest capacity reused for a request of `size` bytes (no more than a quarter wasted).
fn reuse_limit(size: usize) -> usize {
    size.saturating_add(size / 4).saturating_add(HUGE_PAGE)
}

/// An idle buffer for `size` bytes pinned the way `pinning` asks (through the same pinning, or
/// not at all), else a fresh one. `None` when the system has no memory.
pub(crate) fn host_buffer(
    size: usize,
    pinning: Option<&Arc<dyn HostPinning>>,
) -> Option<HostBuffer> {
    let same_pinning = |b: &HostBuffer| match (&b.pinned, pinning) {
        (None, None) => true,
        (Some(a), Some(b)) => std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b)),
        _ => false,
    };
    {
        let mut idle = IDLE.lock();
        let found = idle
            .by_size
            .range_mut(size.max(1)..=reuse_limit(size))
            .find_map(|(cap, list)| {
                let i = list.iter().rposition(|(b, _)| same_pinning(b))?;
                Some((*cap, list.remove(i).0))
            });
        if let Some((cap, b)) = found {
            if idle.by_size.get(&cap).is_some_and(Vec::is_empty) {
                idle.by_size.remove(&cap);
            }
            idle.bytes -= b.cap as u64;
            return Some(b);
        }
    }
    HostBuffer::allocate(size, pinning)
}

/// Gives buffers back for reuse (returned to the system once idle for a while).
pub(crate) fn give_back(buffers: impl IntoIterator<Item = HostBuffer>) {
    let now = Instant::now();
    let mut any = false;
    {
        let mut idle = IDLE.lock();
        for b in buffers {
            idle.bytes += b.cap as u64;
            idle.by_size.entry(b.cap).or_default().push((b, now));
            any = true;
        }
    }
    if any {
        super::start_reaper();
    }
}

/// Returns idle host buffers given back at least `older_than` ago (all with `Duration::ZERO`)
/// to the system; the bytes released.
pub fn release_idle_host_buffers(older_than: Duration) -> u64 {
    let now = Instant::now();
    let mut freed = Vec::new();
    {
        let mut idle = IDLE.lock();
        let mut released = 0u64;
        idle.by_size.retain(|_, list| {
            let (old, keep): (Vec<_>, Vec<_>) = std::mem::take(list)
                .into_iter()
                .partition(|(_, t)| now.duration_since(*t) >= older_than);
            *list = keep;
            for (b, _) in old {
                released += b.cap as u64;
                freed.push(b);
            }
            !list.is_empty()
        });
        idle.bytes -= released;
    }
    let n = freed.iter().map(|b| b.cap as u64).sum();
    drop(freed);
    n
}

/// Drops every idle host buffer without unpinning it through the runtime (its instance ended,
/// and its locks with it): the mappings are unmapped.
pub(crate) fn forget_idle() {
    let gone = {
        let mut idle = IDLE.lock();
        idle.bytes = 0;
        std::mem::take(&mut idle.by_size)
    };
    for (_, list) in gone {
        for (mut b, _) in list {
            let _unpinned_by_the_ended_runtime = b.pinned.take();
        }
    }
}

/// Bytes of idle host buffers.
pub(crate) fn idle_host_bytes() -> u64 {
    IDLE.lock().bytes
}

/// Keeps each region in its own host buffer. Allocation failures are reported, not aborted on.
#[derive(Default)]
pub struct HostStore {
    buffers: Vec<HostBuffer>,
    bytes: u64,
    pinning: Option<Arc<dyn HostPinning>>,
}

impl std::fmt::Debug for HostStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostStore")
            .field("buffers", &self.buffers.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl HostStore {
    /// An empty store of pageable buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store whose fresh buffers are pinned through `pinning` when it accepts.
    pub fn pinned(pinning: Arc<dyn HostPinning>) -> Self {
        Self {
            buffers: Vec::new(),
            bytes: 0,
            pinning: Some(pinning),
        }
    }

    /// Bytes of the store held in pinned buffers.
    pub fn pinned_bytes(&self) -> u64 {
        self.buffers
            .iter()
            .filter(|b| b.is_pinned())
            .map(|b| b.cap as u64)
            .sum()
    }

    /// Bytes of idle buffers a new capture may reuse instead of allocating.
    pub fn reusable_bytes() -> u64 {
        idle_host_bytes()
    }
}

impl Drop for HostStore {
    fn drop(&mut self) {
        give_back(std::mem::take(&mut self.buffers));
    }
}

/// Copies region `region` into `buf` (device -> host), then runs `during`.
pub(crate) fn capture_into(
    buf: &HostBuffer,
    region: &Region,
    copier: &dyn DeviceCopy,
    during: &mut dyn FnMut(),
) -> Result<(), CaptureError> {
    // SAFETY: the buffer holds at least `size` bytes; the region is valid device memory for
    // its size (the caller holds it under the inventory lock or it is a module variable).
    unsafe { copier.copy(buf.agent_ptr(), region.device as *const u8, region.size) }.map_err(
        |source| CaptureError::Copy {
            device: region.device,
            source,
        },
    )?;
    during();
    Ok(())
}

/// Writes `ranges` of `buf` back to `region` (host -> device).
pub(crate) fn put_back_from(
    buf: &HostBuffer,
    region: &Region,
    ranges: &[Range<usize>],
    copier: &dyn DeviceCopy,
) -> Result<(), CopyFailed> {
    for r in ranges {
        debug_assert!(r.end <= region.size);
        // SAFETY: the destination is the captured region (re-validated by the caller) and
        // `r` lies within it and within the buffer.
        unsafe {
            copier.copy(
                (region.device + r.start) as *mut u8,
                buf.agent_ptr().add(r.start),
                r.len(),
            )?
        };
    }
    Ok(())
}

impl SnapshotStore for HostStore {
    fn reserve(&mut self, regions: &[Region]) -> Result<(), CaptureError> {
        self.buffers
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
        debug_assert_eq!(index, self.buffers.len());
        let buf = host_buffer(region.size, self.pinning.as_ref()).ok_or(
            CaptureError::HostAllocation {
                device: region.device,
                size: region.size,
            },
        )?;
        let kept = capture_into(&buf, region, copier, during);
        if kept.is_err() {
            give_back([buf]);
            return kept;
        }
        self.bytes += region.size as u64;
        self.buffers.push(buf);
        Ok(())
    }

    fn put_back(
        &self,
        index: usize,
        region: &Region,
        ranges: &[Range<usize>],
        copier: &dyn DeviceCopy,
    ) -> Result<(), CopyFailed> {
        put_back_from(&self.buffers[index], region, ranges, copier)
    }

    fn bytes_held(&self) -> u64 {
        self.bytes
    }
}
