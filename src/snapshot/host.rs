//! `HostStore`: one host buffer per region, recycled between snapshots.
//!
//! Fresh host memory costs a page fault per page on first touch, which dominates a capture;
//! buffers of finished snapshots are therefore kept (up to [`RECYCLE_LIMIT_BYTES`]) and reused
//! by the next capture.

use super::{CopyFailed, DeclineReason, DeviceCopy, Region, SnapshotStore};
use crate::sync::Mutex;
use std::ops::Range;

/// Most bytes kept for reuse after snapshots end.
pub const RECYCLE_LIMIT_BYTES: usize = 1 << 30;

static RECYCLED: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// A buffer of capacity >= `size` from the recycled ones (smallest that fits), emptied.
fn reuse(size: usize) -> Option<Vec<u8>> {
    let mut pool = RECYCLED.lock();
    let best = pool
        .iter()
        .enumerate()
        .filter(|(_, b)| b.capacity() >= size && b.capacity() <= size.saturating_mul(2).max(4096))
        .min_by_key(|(_, b)| b.capacity())
        .map(|(i, _)| i)?;
    let mut b = pool.swap_remove(best);
    b.clear();
    Some(b)
}

fn recycle(buffers: Vec<Vec<u8>>) {
    let mut pool = RECYCLED.lock();
    let mut held: usize = pool.iter().map(Vec::capacity).sum();
    for b in buffers {
        if held + b.capacity() <= RECYCLE_LIMIT_BYTES {
            held += b.capacity();
            pool.push(b);
        }
    }
}

/// Keeps each region in its own host buffer. Allocation failures are reported, not aborted on.
#[derive(Debug, Default)]
pub struct HostStore {
    buffers: Vec<Vec<u8>>,
    bytes: u64,
}

impl HostStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of recycled buffers a new capture may reuse instead of allocating.
    pub fn reusable_bytes() -> u64 {
        RECYCLED.lock().iter().map(|b| b.capacity() as u64).sum()
    }
}

impl Drop for HostStore {
    fn drop(&mut self) {
        recycle(std::mem::take(&mut self.buffers));
    }
}

impl SnapshotStore for HostStore {
    fn reserve(&mut self, regions: &[Region]) -> Result<(), DeclineReason> {
        self.buffers.try_reserve_exact(regions.len()).map_err(|_| DeclineReason::Metadata { regions: regions.len() })
    }

    fn keep(&mut self, index: usize, region: &Region, copier: &dyn DeviceCopy) -> Result<(), DeclineReason> {
        debug_assert_eq!(index, self.buffers.len());
        let mut buf = match reuse(region.size) {
            Some(b) => b,
            None => {
                let mut b = Vec::new();
                b.try_reserve_exact(region.size)
                    .map_err(|_| DeclineReason::HostAllocation { device: region.device, size: region.size })?;
                b
            }
        };
        // SAFETY: the buffer's capacity is at least `size`; the copy initialises all `size`
        // bytes before `set_len` exposes them.
        unsafe {
            copier
                .copy(buf.as_mut_ptr(), region.device as *const u8, region.size)
                .map_err(|source| DeclineReason::Copy { device: region.device, source })?;
            buf.set_len(region.size);
        }
        self.bytes += region.size as u64;
        self.buffers.push(buf);
        Ok(())
    }

    fn put_back(&self, index: usize, region: &Region, range: Range<usize>, copier: &dyn DeviceCopy) -> Result<(), CopyFailed> {
        let buf = &self.buffers[index];
        let src = &buf[range.clone()];
        // SAFETY: the destination is the captured region (re-validated by the caller), `range`
        // lies within it; the source slice is in bounds.
        unsafe { copier.copy((region.device + range.start) as *mut u8, src.as_ptr(), src.len()) }
    }

    fn bytes_held(&self) -> u64 {
        self.bytes
    }
}
