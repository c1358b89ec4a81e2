//! The host-memory snapshot of one replay window.
//!
//! Before the first pass every reachable allocation is copied (host to host: the memory is
//! host-accessible). After the first pass its result is copied too, and the chunks it changed
//! are the kernel's: only those are ever restored or checked. Before each later pass the
//! kernel's chunks that differ from the original are written back. After each later pass they
//! are compared with the first pass's result: a deterministic kernel on restored input writes
//! the same bytes, so a difference means someone other than the kernel wrote them during the
//! window (a host thread, another agent) or the kernel is not deterministic. Then the bytes the
//! restore had reverted are put back (three-way: a byte that the first pass changed and that is
//! back to the original now takes the first pass's value), nothing is restored any more, and the
//! caller stops the loop: no write is lost, and the allocation is remembered as shared with
//! another writer so later windows that reach it decline.
//!
//! Chunks the first pass left alone are never written, so what another writer puts there during
//! the window (the host filling the other half of a double buffer, or its heap around a small
//! buffer inside a larger lock) is neither reverted nor taken for a divergence.

use super::access;
use super::inventory::{HostAllocation, HostInventory};
use crate::sync::Mutex;

/// Chunk size of the restore: only chunks that changed are written back.
const CHUNK: usize = 64 << 10;

/// Why reachable memory cannot be captured.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CaptureRefused {
    /// The host cannot read it (fine-grained device memory without a host mapping).
    #[error(
        "the dispatch can reach {kind} memory at {base:#x} ({size} bytes) that the host cannot read, so it cannot be restored"
    )]
    NotHostAccessible {
        /// Kind name.
        kind: &'static str,
        /// Kernel address.
        base: usize,
        /// Size.
        size: usize,
    },
    /// Seen written by someone other than the kernel: during an earlier window, or between
    /// this window's capture and its first pass.
    #[error(
        "the dispatch can reach {kind} memory at {base:#x} ({size} bytes) that a host thread or another agent wrote {when}, \
         so restoring it could revert their writes"
    )]
    SharedWriter {
        /// Kind name.
        kind: &'static str,
        /// Kernel address.
        base: usize,
        /// Size.
        size: usize,
        /// When the write was seen.
        when: &'static str,
    },
    /// The copy buffers could not be allocated.
    #[error("allocating {bytes} bytes to keep reachable host memory failed")]
    Allocation {
        /// Bytes asked for.
        bytes: u64,
    },
}

impl CaptureRefused {
    /// `a` was seen written by another writer `when`.
    fn shared_writer(a: &HostAllocation, when: &'static str) -> Self {
        CaptureRefused::SharedWriter {
            kind: a.kind.name(),
            base: a.base,
            size: a.size,
            when,
        }
    }
}

/// Allocations (kernel address, serial) seen written by another writer during a window.
static SHARED_WRITERS: Mutex<Vec<(usize, u64)>> = Mutex::new(Vec::new());

/// Forgets the allocations marked shared (the runtime instance shut down).
pub fn forget_shared_writers() {
    SHARED_WRITERS.lock().clear();
}

/// True when `a` was seen written by another writer during a window.
pub fn has_shared_writer(a: &HostAllocation) -> bool {
    SHARED_WRITERS.lock().contains(&(a.base, a.serial))
}

/// Host bytes a capture of `allocations` keeps: the original, the first pass's result and one
/// scratch buffer of the largest.
pub fn bytes_needed(allocations: &[HostAllocation]) -> u64 {
    let sum: u64 = allocations.iter().map(|a| a.size as u64).sum();
    let largest = allocations.iter().map(|a| a.size as u64).max().unwrap_or(0);
    2 * sum + largest
}

/// An allocation whose bytes after a later pass differed from the first pass's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The allocation.
    pub allocation: HostAllocation,
    /// Bytes that differed.
    pub differing: u64,
    /// Bytes the restore had reverted and that were put back.
    pub recovered: u64,
}

struct Entry {
    allocation: HostAllocation,
    original: Vec<u8>,
    first: Vec<u8>,
    /// The chunks the first pass changed (the only ones restored and checked).
    written: Vec<bool>,
}

impl Entry {
    /// The byte ranges of the chunks the first pass changed.
    fn written_chunks(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let size = self.original.len();
        self.written
            .iter()
            .enumerate()
            .filter(|(_, w)| **w)
            .map(move |(i, _)| i * CHUNK..((i + 1) * CHUNK).min(size))
    }
}

/// The captured host memory of one window.
pub struct HostSnapshot {
    entries: Vec<Entry>,
    scratch: Vec<u8>,
}

fn buffer(size: usize) -> Result<Vec<u8>, CaptureRefused> {
    let mut v = Vec::new();
    v.try_reserve_exact(size)
        .map_err(|_| CaptureRefused::Allocation { bytes: size as u64 })?;
    v.resize(size, 0);
    Ok(v)
}

/// Runs `copy` on `a` while it is live (see [`HostInventory::with_same`]); `None` when `a` was
/// freed, or when the copy failed: then `a` is locked memory whose pages the application
/// unmapped without unlocking it (see [`access`]), and the inventory forgets it.
fn with_live<R>(
    inventory: &HostInventory,
    a: &HostAllocation,
    copy: impl FnOnce() -> Option<R>,
) -> Option<R> {
    let copied = inventory.with_same(a, copy)?;
    if copied.is_none() && inventory.forget_same(a) {
        tracing::debug!(
            "{}: its pages are no longer mapped (freed by the application while still locked); forgotten",
            a.describe()
        );
    }
    copied
}

/// Copies the live bytes of `a` into `out` (same size); false when `a` was freed or its pages
/// are gone.
fn read_live(inventory: &HostInventory, a: &HostAllocation, out: &mut [u8]) -> bool {
    with_live(inventory, a, || access::read(a, 0, out).then_some(())).is_some()
}

/// Writes `bytes` at `offset` of `a`; false when `a` was freed or its pages are gone.
fn write_live(inventory: &HostInventory, a: &HostAllocation, offset: usize, bytes: &[u8]) -> bool {
    with_live(inventory, a, || {
        access::write(a, offset, bytes).then_some(())
    })
    .is_some()
}

/// A hash of the live bytes of `a` (read in 1 MiB pieces); `None` when it cannot be read or was
/// freed.
pub fn fingerprint(inventory: &HostInventory, a: &HostAllocation) -> Option<u64> {
    if a.host == 0 {
        return None;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut piece = vec![0u8; a.size.min(1 << 20)];
    with_live(inventory, a, || {
        let mut at = 0;
        while at < a.size {
            let n = piece.len().min(a.size - at);
            if !access::read(a, at, &mut piece[..n]) {
                return None;
            }
            h.update(&piece[..n]);
            at += n;
        }
        Some(h.digest())
    })
}

impl HostSnapshot {
    /// Captures `allocations` (all host-accessible, none shared with another writer).
    pub fn capture(
        inventory: &HostInventory,
        allocations: &[HostAllocation],
    ) -> Result<Self, CaptureRefused> {
        for a in allocations {
            if a.host == 0 {
                return Err(CaptureRefused::NotHostAccessible {
                    kind: a.kind.name(),
                    base: a.base,
                    size: a.size,
                });
            }
            if has_shared_writer(a) {
                return Err(CaptureRefused::shared_writer(
                    a,
                    "during an earlier replay window",
                ));
            }
        }
        let largest = allocations.iter().map(|a| a.size).max().unwrap_or(0);
        let mut entries = Vec::with_capacity(allocations.len());
        for a in allocations {
            let mut original = buffer(a.size)?;
            if !read_live(inventory, a, &mut original) {
                continue; // freed meanwhile: nothing left to restore
            }
            entries.push(Entry {
                allocation: *a,
                original,
                first: Vec::new(),
                written: Vec::new(),
            });
        }
        Ok(Self {
            entries,
            scratch: buffer(largest)?,
        })
    }

    /// Bytes captured (the originals).
    pub fn saved_bytes(&self) -> u64 {
        self.entries.iter().map(|e| e.original.len() as u64).sum()
    }

    /// Number of allocations captured.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing was captured.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Checks, before the first pass, that every captured allocation still holds what was
    /// captured. One that changed has another writer at work (a host thread using the heap
    /// around a small buffer inside a larger lock, another agent): restoring it could revert
    /// that writer's stores, so it is remembered as shared and refused.
    pub fn unchanged_since_capture(
        &mut self,
        inventory: &HostInventory,
    ) -> Result<(), CaptureRefused> {
        for e in &self.entries {
            let a = e.allocation;
            let live = &mut self.scratch[..a.size];
            if read_live(inventory, &a, live) && live[..] != e.original[..] {
                SHARED_WRITERS.lock().push((a.base, a.serial));
                return Err(CaptureRefused::shared_writer(
                    &a,
                    "while the replay was prepared",
                ));
            }
        }
        Ok(())
    }

    /// After pass `pass` completed. Pass 0 keeps its result and the chunks it changed (an
    /// allocation it left alone is dropped: nothing to restore); a later pass is compared with
    /// it in those chunks, and every allocation that differs there is merged (see the module
    /// documentation) and returned.
    pub fn after_pass(&mut self, inventory: &HostInventory, pass: u32) -> Vec<Divergence> {
        let mut out = Vec::new();
        if pass == 0 {
            for e in &mut self.entries {
                if let Some(d) = keep_first(inventory, e) {
                    out.push(d);
                }
            }
            self.entries.retain(|e| e.written.contains(&true));
        } else {
            for e in &self.entries {
                let a = e.allocation;
                let live = &mut self.scratch[..a.size];
                if !read_live(inventory, &a, live)
                    || e.written_chunks().all(|r| live[r.clone()] == e.first[r])
                {
                    continue;
                }
                out.push(merge(inventory, e, live));
            }
        }
        if !out.is_empty() {
            let mut shared = SHARED_WRITERS.lock();
            shared.extend(out.iter().map(|d| (d.allocation.base, d.allocation.serial)));
        }
        out
    }

    /// Writes back every chunk of the first pass's that differs from the original; returns the
    /// bytes written.
    pub fn restore(&mut self, inventory: &HostInventory) -> u64 {
        let mut written = 0u64;
        for e in &self.entries {
            let a = e.allocation;
            let live = &mut self.scratch[..a.size];
            if !read_live(inventory, &a, live) {
                continue;
            }
            for r in e.written_chunks() {
                let was = &e.original[r.clone()];
                if live[r.clone()] != *was && write_live(inventory, &a, r.start, was) {
                    written += was.len() as u64;
                }
            }
        }
        written
    }
}

/// Keeps the first pass's result of `e` and the chunks it changed. Without that result a
/// divergence could not be repaired: the allocation is returned as diverged, so nothing is
/// restored over it.
fn keep_first(inventory: &HostInventory, e: &mut Entry) -> Option<Divergence> {
    let a = e.allocation;
    let kept = buffer(a.size)
        .ok()
        .and_then(|mut first| read_live(inventory, &a, &mut first).then_some(first));
    let Some(first) = kept else {
        return Some(Divergence {
            allocation: a,
            differing: 0,
            recovered: 0,
        });
    };
    e.written = first
        .chunks(CHUNK)
        .zip(e.original.chunks(CHUNK))
        .map(|(now, was)| now != was)
        .collect();
    e.first = first;
    None
}

/// Puts back the bytes of `e` that the first pass changed and that are original again in `live`.
fn merge(inventory: &HostInventory, e: &Entry, live: &[u8]) -> Divergence {
    let mut d = Divergence {
        allocation: e.allocation,
        differing: 0,
        recovered: 0,
    };
    for r in e.written_chunks() {
        merge_range(inventory, e, live, r, &mut d);
    }
    d
}

/// [`merge`] over the bytes `r` of `e`.
fn merge_range(
    inventory: &HostInventory,
    e: &Entry,
    live: &[u8],
    r: std::ops::Range<usize>,
    d: &mut Divergence,
) {
    let mut i = r.start;
    while i < r.end {
        if live[i] == e.first[i] {
            i += 1;
            continue;
        }
        d.differing += 1;
        if live[i] == e.original[i] && e.first[i] != e.original[i] {
            let start = i;
            while i < r.end
                && live[i] != e.first[i]
                && live[i] == e.original[i]
                && e.first[i] != e.original[i]
            {
                i += 1;
            }
            if write_live(inventory, &e.allocation, start, &e.first[start..i]) {
                d.recovered += (i - start) as u64;
            }
            d.differing += (i - start - 1) as u64;
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_memory::MemoryKind;

    fn alloc(inv: &HostInventory, buf: &mut [u8]) -> HostAllocation {
        let p = buf.as_mut_ptr() as usize;
        inv.record(p, p, buf.len(), MemoryKind::FineGrainedSystem, 1)
    }

    #[test]
    fn locked_memory_unmapped_without_an_unlock_is_skipped_and_forgotten() {
        // A fresh mapping in a region of its own, unmapped below as the application would free
        // it.
        let (p, page) = access::tests::mapping(2);
        let inv = HostInventory::new();
        let a = inv.record(p, p, 2 * page, MemoryKind::Locked, 0);
        let mut kept = vec![3u8; 4096];
        let b = alloc(&inv, &mut kept);
        // SAFETY: our mapping.
        assert_eq!(unsafe { libc::munmap(p as *mut libc::c_void, 2 * page) }, 0);
        assert_eq!(fingerprint(&inv, &a), None);
        let a = inv.record(p, p, 2 * page, MemoryKind::Locked, 0);
        let snap = HostSnapshot::capture(&inv, &[a, b]).unwrap();
        assert_eq!(snap.len(), 1, "only the mapped allocation is captured");
        assert_eq!(snap.saved_bytes(), 4096);
        assert_eq!(inv.all(), vec![b], "the unmapped lock is forgotten");
    }

    #[test]
    fn a_deterministic_kernel_sees_the_original_at_every_pass() {
        let inv = HostInventory::new();
        let mut buf = vec![1u8; 3 * CHUNK];
        let a = alloc(&inv, &mut buf);
        let mut snap = HostSnapshot::capture(&inv, &[a]).unwrap();
        assert_eq!(snap.saved_bytes(), buf.len() as u64);
        for pass in 0..3 {
            // The "kernel": doubles the byte at 0 and at CHUNK + 5.
            let p = a.host as *mut u8;
            // SAFETY: test buffer.
            unsafe {
                assert_eq!(*p, 1, "pass {pass} saw the original");
                *p *= 2;
                *p.add(CHUNK + 5) *= 2;
            }
            assert!(snap.after_pass(&inv, pass).is_empty());
            if pass < 2 {
                assert_eq!(snap.restore(&inv), 2 * CHUNK as u64, "two chunks changed");
            }
        }
        assert_eq!((buf[0], buf[CHUNK + 5], buf[1]), (2, 2, 1));
    }

    #[test]
    fn a_write_by_another_writer_during_the_first_pass_is_put_back_and_detected() {
        let inv = HostInventory::new();
        let mut buf = vec![0u8; 64];
        let a = alloc(&inv, &mut buf);
        let mut snap = HostSnapshot::capture(&inv, &[a]).unwrap();
        let p = a.host as *mut u8;
        // SAFETY: test buffer.
        unsafe {
            *p = 7; // the kernel
            *p.add(40) = 9; // a host thread, during the first pass
        }
        assert!(snap.after_pass(&inv, 0).is_empty());
        snap.restore(&inv);
        // SAFETY: test buffer.
        unsafe { *p = 7 };
        let d = snap.after_pass(&inv, 1);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].differing, d[0].recovered), (1, 1));
        assert_eq!(
            (buf[0], buf[40]),
            (7, 9),
            "kernel result and host write both kept"
        );
        assert!(has_shared_writer(&a));
        assert!(matches!(
            HostSnapshot::capture(&inv, &[a]),
            Err(CaptureRefused::SharedWriter { .. })
        ));
    }

    #[test]
    fn writes_by_another_writer_to_chunks_the_kernel_leaves_alone_are_kept_without_a_divergence() {
        let inv = HostInventory::new();
        let mut buf = vec![0u8; 3 * CHUNK];
        let a = alloc(&inv, &mut buf);
        let mut untouched = vec![5u8; 64];
        let b = alloc(&inv, &mut untouched);
        let mut snap = HostSnapshot::capture(&inv, &[a, b]).unwrap();
        let p = a.host as *mut u8;
        for pass in 0..3u8 {
            // SAFETY: test buffers. The kernel writes chunk 0; a host thread writes chunk 2
            // during every pass after the first, and `b` during the second.
            unsafe {
                assert_eq!(*p, 0, "pass {pass} saw the original");
                *p = 7;
                if pass > 0 {
                    *p.add(2 * CHUNK + 1) = 10 + pass;
                }
                if pass == 1 {
                    *(b.host as *mut u8) = 9;
                }
            }
            assert!(snap.after_pass(&inv, pass.into()).is_empty(), "pass {pass}");
            if pass < 2 {
                assert_eq!(snap.restore(&inv), CHUNK as u64, "only the kernel's chunk");
            }
        }
        assert_eq!((buf[0], buf[2 * CHUNK + 1], untouched[0]), (7, 12, 9));
        assert!(!has_shared_writer(&a) && !has_shared_writer(&b));
    }

    #[test]
    fn memory_written_between_the_capture_and_the_first_pass_is_refused() {
        let inv = HostInventory::new();
        let mut buf = vec![0u8; 256];
        let a = alloc(&inv, &mut buf);
        let mut snap = HostSnapshot::capture(&inv, &[a]).unwrap();
        assert_eq!(snap.unchanged_since_capture(&inv), Ok(()));
        // SAFETY: test buffer; a host thread's store while the device snapshot was taken.
        unsafe { *(a.host as *mut u8).add(200) = 1 };
        let e = snap.unchanged_since_capture(&inv).unwrap_err();
        assert!(
            e.to_string().contains("while the replay was prepared"),
            "{e}"
        );
        assert_eq!(buf[200], 1, "nothing reverted");
        assert!(matches!(
            HostSnapshot::capture(&inv, &[a]),
            Err(CaptureRefused::SharedWriter { .. })
        ));
    }

    #[test]
    fn memory_the_host_cannot_read_is_refused() {
        let inv = HostInventory::new();
        let a = inv.record(0x1000, 0, 64, MemoryKind::FineGrainedDevice, 2);
        let e = HostSnapshot::capture(&inv, &[a]).err().unwrap();
        assert!(
            e.to_string()
                .contains("fine-grained device memory at 0x1000"),
            "{e}"
        );
        assert_eq!(bytes_needed(&[a, a]), 2 * 128 + 64);
    }
}
