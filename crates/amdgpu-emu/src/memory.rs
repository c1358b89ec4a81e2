//! The memory interface: how the emulator reaches global memory.
//!
//! The emulator never dereferences a device address itself. Each access (a lane's load,
//! store or atomic, a scalar load, the kernel descriptor and code reads) first asks the
//! [`GlobalMemory`] implementation to translate the whole byte range; a range it does not
//! vouch for ends the dispatch with a memory fault naming the address, the instruction and
//! the lane. Accesses through translated pointers are relaxed atomics of the access width
//! (bytes when unaligned), so racing workgroups never make the host program undefined.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

/// The generic-address apertures of LDS and private memory (the values kernels read through
/// `src_shared_base` / `src_private_base`). Each covers 4 GiB from its base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Apertures {
    /// Base of the shared (LDS) aperture.
    pub shared_base: u64,
    /// Base of the private (scratch) aperture.
    pub private_base: u64,
}

impl Default for Apertures {
    /// The GFX9 Linux values: shared 1 << 48, private 2 << 48.
    fn default() -> Apertures {
        Apertures {
            shared_base: 1 << 48,
            private_base: 2 << 48,
        }
    }
}

/// Device memory the emulator may access, as host pointers.
///
/// # Safety
///
/// An implementation promises that a pointer returned by [`GlobalMemory::translate`] is valid
/// for reads and writes of `len` bytes for as long as the dispatch that asked runs, and that
/// any other access to those bytes during the dispatch is atomic (or absent): the emulator
/// reads and writes them from several threads with relaxed atomic operations.
pub unsafe trait GlobalMemory: Sync {
    /// The host address of the `len` bytes at device address `addr`, if the whole range lies
    /// in memory the dispatch may access; `None` otherwise.
    fn translate(&self, addr: u64, len: u64) -> Option<NonNull<u8>>;

    /// The span of device memory around `addr` that translates linearly, as
    /// `(device base, length, host pointer of the base)`: for every range `a..a + l` inside
    /// it, [`GlobalMemory::translate`] would return `host + (a - base)`, with the same
    /// validity. The emulator keeps a few spans per thread for the length of one dispatch and
    /// translates accesses inside them without asking again. `None` (the default): every
    /// access is translated on its own.
    fn span(&self, addr: u64) -> Option<(u64, u64, NonNull<u8>)> {
        let _ = addr;
        None
    }
}

/// Spans a thread keeps: more than a kernel's usual buffers, kernel arguments and dispatch
/// packet (a kernel cycling through more spans than are kept finds none of them kept).
pub(crate) const KEPT_SPANS: usize = 8;

/// The spans ([`GlobalMemory::span`]) one host thread used last in a dispatch; emptied
/// before every dispatch, since the memory's spans may change between dispatches. Span `j`
/// is `base[j]..base[j] + len[j]` at `host[j]`, the most recently added first; a span of
/// length 0 holds nothing. (A fixed C layout: compiled regions read it.)
#[repr(C)]
pub(crate) struct Spans {
    pub base: [u64; KEPT_SPANS],
    pub len: [u64; KEPT_SPANS],
    pub host: [*mut u8; KEPT_SPANS],
}

impl Default for Spans {
    fn default() -> Spans {
        Spans {
            base: [0; KEPT_SPANS],
            len: [0; KEPT_SPANS],
            host: [std::ptr::null_mut(); KEPT_SPANS],
        }
    }
}

// SAFETY: the kept pointers are only dereferenced by the dispatch that translated them (the
// kept spans are emptied before every dispatch), on the thread that owns this value; they
// are plain addresses otherwise.
unsafe impl Send for Spans {}

impl Spans {
    /// Forget every span (a new dispatch).
    pub(crate) fn clear(&mut self) {
        *self = Spans::default();
    }

    /// [`GlobalMemory::translate`] of `addr..addr + len`, from a kept span when one covers
    /// the range, else through the memory's span of `addr` (kept) or its translation.
    #[inline]
    pub(crate) fn translate(
        &mut self,
        mem: &dyn GlobalMemory,
        addr: u64,
        len: u64,
    ) -> Option<NonNull<u8>> {
        for j in 0..KEPT_SPANS {
            let off = addr.wrapping_sub(self.base[j]);
            if off < self.len[j] && len <= self.len[j] - off {
                // SAFETY: `off + len <= len[j]`: inside the span the memory vouched for.
                return NonNull::new(unsafe { self.host[j].add(off as usize) });
            }
        }
        match mem.span(addr) {
            Some((base, span_len, host))
                if addr >= base && addr - base < span_len && len <= span_len - (addr - base) =>
            {
                self.base.rotate_right(1);
                self.len.rotate_right(1);
                self.host.rotate_right(1);
                (self.base[0], self.len[0], self.host[0]) = (base, span_len, host.as_ptr());
                // SAFETY: inside the span the memory vouched for (checked just above).
                Some(unsafe { host.add((addr - base) as usize) })
            }
            _ => mem.translate(addr, len),
        }
    }
}

/// A set of owned, zero-initialised byte regions at chosen device addresses: a simple
/// [`GlobalMemory`] for tests, benchmarks and tools. Thread-safe; regions are never moved
/// or freed while the value lives.
#[derive(Default)]
pub struct RegionMemory {
    regions: Vec<(u64, Box<[AtomicU64]>, u64)>,
}

impl RegionMemory {
    /// An empty memory.
    pub fn new() -> RegionMemory {
        RegionMemory::default()
    }

    /// Add a zeroed region of `len` bytes at device address `base` (8-byte aligned).
    /// Panics if it overlaps an existing region or `base` is unaligned.
    pub fn add(&mut self, base: u64, len: u64) {
        assert!(
            base.is_multiple_of(8),
            "region base 0x{base:x} must be 8-byte aligned"
        );
        for (b, _, l) in &self.regions {
            assert!(
                base + len <= *b || *b + *l <= base,
                "region 0x{base:x}+{len} overlaps 0x{b:x}+{l}"
            );
        }
        let words = len.div_ceil(8) as usize;
        let data: Box<[AtomicU64]> = (0..words).map(|_| AtomicU64::new(0)).collect();
        self.regions.push((base, data, len));
        self.regions.sort_by_key(|r| r.0);
    }

    /// Copy `bytes` into memory at `addr`. Panics if the range is not inside one region.
    pub fn write(&self, addr: u64, bytes: &[u8]) {
        let p = self
            .translate(addr, bytes.len() as u64)
            .unwrap_or_else(|| panic!("write outside regions at 0x{addr:x}"));
        store_bytes(p, bytes);
    }

    /// The regions as (device address, contents).
    pub fn regions(&self) -> impl Iterator<Item = (u64, Vec<u8>)> + '_ {
        self.regions
            .iter()
            .map(|(base, _, len)| (*base, self.read(*base, *len as usize)))
    }

    /// Read `len` bytes at `addr`. Panics if the range is not inside one region.
    pub fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        let p = self
            .translate(addr, len as u64)
            .unwrap_or_else(|| panic!("read outside regions at 0x{addr:x}"));
        let mut out = vec![0; len];
        load_bytes(p, &mut out);
        out
    }
}

/// A copy of every region (read with relaxed loads: copy while no dispatch writes).
impl Clone for RegionMemory {
    fn clone(&self) -> RegionMemory {
        let mut copy = RegionMemory::new();
        for (base, bytes) in self.regions() {
            copy.add(base, bytes.len() as u64);
            copy.write(base, &bytes);
        }
        copy
    }
}

/// The same regions at the same addresses with the same bytes.
impl PartialEq for RegionMemory {
    fn eq(&self, other: &RegionMemory) -> bool {
        self.regions().eq(other.regions())
    }
}

// SAFETY: every returned pointer points into a region owned by `self` (boxed, never moved or
// freed while `self` lives) and covers `len` bytes inside it; the regions are atomics.
unsafe impl GlobalMemory for RegionMemory {
    fn translate(&self, addr: u64, len: u64) -> Option<NonNull<u8>> {
        let i = self
            .regions
            .partition_point(|r| r.0 <= addr)
            .checked_sub(1)?;
        let (base, data, rlen) = &self.regions[i];
        let off = addr - base;
        if off.checked_add(len)? > *rlen {
            return None;
        }
        NonNull::new(data.as_ptr() as *mut u8).map(|p| {
            // SAFETY: `off + len <= rlen` bytes of the region's allocation.
            unsafe { p.add(off as usize) }
        })
    }

    fn span(&self, addr: u64) -> Option<(u64, u64, NonNull<u8>)> {
        let i = self
            .regions
            .partition_point(|r| r.0 <= addr)
            .checked_sub(1)?;
        let (base, data, len) = &self.regions[i];
        if addr - base >= *len {
            return None;
        }
        Some((*base, *len, NonNull::new(data.as_ptr() as *mut u8)?))
    }
}

/// Load `out.len()` bytes from a translated pointer: each naturally aligned 8 or 4 bytes in one
/// access, as a GPU reads them whole (a 64-bit value another thread stores meanwhile is never
/// seen half old, half new).
pub(crate) fn load_bytes(p: NonNull<u8>, out: &mut [u8]) {
    let base = p.as_ptr();
    let mut i = 0;
    while i < out.len() {
        // SAFETY: `base..base+out.len()` was vouched for by `GlobalMemory::translate`.
        let q = unsafe { base.add(i) };
        if out.len() - i >= 8 && (q as usize).is_multiple_of(8) {
            // SAFETY: aligned, in range, accessed only atomically (trait contract).
            let v = unsafe { AtomicU64::from_ptr(q as *mut u64) }.load(Ordering::Relaxed);
            out[i..i + 8].copy_from_slice(&v.to_le_bytes());
            i += 8;
        } else if out.len() - i >= 4 && (q as usize).is_multiple_of(4) {
            // SAFETY: aligned, in range, accessed only atomically (trait contract).
            let v = unsafe { AtomicU32::from_ptr(q as *mut u32) }.load(Ordering::Relaxed);
            out[i..i + 4].copy_from_slice(&v.to_le_bytes());
            i += 4;
        } else {
            // SAFETY: in range, accessed only atomically (trait contract).
            out[i] = unsafe { AtomicU8::from_ptr(q) }.load(Ordering::Relaxed);
            i += 1;
        }
    }
}

/// Store `data` through a translated pointer, each naturally aligned 8 or 4 bytes in one access
/// (as [`load_bytes`] reads them).
pub(crate) fn store_bytes(p: NonNull<u8>, data: &[u8]) {
    let base = p.as_ptr();
    let mut i = 0;
    while i < data.len() {
        // SAFETY: `base..base+data.len()` was vouched for by `GlobalMemory::translate`.
        let q = unsafe { base.add(i) };
        if data.len() - i >= 8 && (q as usize).is_multiple_of(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(&data[i..i + 8]);
            // SAFETY: aligned, in range, accessed only atomically (trait contract).
            unsafe { AtomicU64::from_ptr(q as *mut u64) }
                .store(u64::from_le_bytes(b), Ordering::Relaxed);
            i += 8;
        } else if data.len() - i >= 4 && (q as usize).is_multiple_of(4) {
            let v = u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
            // SAFETY: aligned, in range, accessed only atomically (trait contract).
            unsafe { AtomicU32::from_ptr(q as *mut u32) }.store(v, Ordering::Relaxed);
            i += 4;
        } else {
            // SAFETY: in range, accessed only atomically (trait contract).
            unsafe { AtomicU8::from_ptr(q) }.store(data[i], Ordering::Relaxed);
            i += 1;
        }
    }
}

/// An atomic read-modify-write of 4 bytes at an aligned translated pointer: `f(old) -> new`,
/// retried until it lands; returns the old value.
pub(crate) fn rmw32(p: NonNull<u8>, mut f: impl FnMut(u32) -> u32) -> u32 {
    // SAFETY: the caller checked 4-byte alignment; in range and atomic (trait contract).
    let a = unsafe { AtomicU32::from_ptr(p.as_ptr() as *mut u32) };
    let mut old = a.load(Ordering::Relaxed);
    loop {
        match a.compare_exchange_weak(old, f(old), Ordering::SeqCst, Ordering::Relaxed) {
            Ok(v) => return v,
            Err(v) => old = v,
        }
    }
}

/// [`rmw32`] for 8 bytes at an 8-byte aligned pointer.
pub(crate) fn rmw64(p: NonNull<u8>, mut f: impl FnMut(u64) -> u64) -> u64 {
    // SAFETY: the caller checked 8-byte alignment; in range and atomic (trait contract).
    let a = unsafe { AtomicU64::from_ptr(p.as_ptr() as *mut u64) };
    let mut old = a.load(Ordering::Relaxed);
    loop {
        match a.compare_exchange_weak(old, f(old), Ordering::SeqCst, Ordering::Relaxed) {
            Ok(v) => return v,
            Err(v) => old = v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kept spans translate every range inside them to the pointer the memory's own
    /// translation gives, refuse what the memory refuses, and are forgotten when cleared.
    #[test]
    fn spans_translate_as_the_memory_does() {
        let mut mem = RegionMemory::new();
        mem.add(0x1000, 256);
        mem.add(0x8000, 64);
        let mut spans = Spans::default();
        let ranges = [
            (0x1000, 4),
            (0x10FC, 4),
            (0x1000, 256),
            (0x10FC, 8),
            (0x1100, 4),
            (0x8000, 64),
            (0x8010, 16),
            (0x803F, 2),
            (0x0FFC, 8),
            (0x9000, 4),
            (0x1004, u64::MAX),
        ];
        for round in 0..3 {
            for &(addr, len) in &ranges {
                assert_eq!(
                    spans.translate(&mem, addr, len),
                    mem.translate(addr, len),
                    "0x{addr:x}+{len} in round {round}"
                );
            }
            if round == 1 {
                spans.clear();
                assert!(spans.len.iter().all(|&l| l == 0));
            }
        }
    }
}
