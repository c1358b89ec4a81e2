//! `ChangedChunks`: restore only the chunks a pass changed.
//!
//! Each region is cut into chunks (64 KiB by default). Their hashes are taken while the region
//! is captured and again after the first pass; the chunks whose hashes differ are the ones the
//! kernel wrote, and later restores write back only those. In verify mode the hashes are taken
//! after every pass: a chunk written outside the learned set makes the next restore complete
//! (and is reported, so the window can warn), and joins the set.
//!
//! Hashing goes through [`ChunkHasher`]. [`HostHasher`] reads host-accessible memory (vhsa,
//! APUs) with xxh3 on several threads; a region it cannot read is restored whole, every time.
//! [`super::DeviceHasher`] (the tool's own kernel on the agent) implements the same trait for
//! regions without a host address.

use super::{PassCheck, Region, RegionHold, RestoreScope};
use std::ops::Range;

/// Hashes the chunks of a region.
pub trait ChunkHasher: Send {
    /// One hash per `chunk` bytes of `region` (the last chunk may be shorter), or `None` when
    /// this hasher cannot read the region.
    fn hash(&self, region: &Region, chunk: usize) -> Option<Vec<u64>>;
}

/// Regions larger than this are hashed on several threads.
const PARALLEL_BYTES: usize = 8 << 20;

/// Hashes `bytes` in `chunk`-sized pieces into `out` (one per piece).
fn hash_slice(bytes: &[u8], chunk: usize, out: &mut [u64]) {
    for (h, piece) in out.iter_mut().zip(bytes.chunks(chunk)) {
        *h = xxhash_rust::xxh3::xxh3_64(piece);
    }
}

/// Where the host can read a region (`None`: not host-accessible).
type HostAddress = Box<dyn Fn(&Region) -> Option<usize> + Send>;

/// Hashes memory the host can read, where `host_address` says it is.
pub struct HostHasher {
    host_address: HostAddress,
    threads: usize,
}

impl HostHasher {
    /// A hasher reading each region at `host_address(region)` (`None`: not host-accessible).
    pub fn new(host_address: impl Fn(&Region) -> Option<usize> + Send + 'static) -> Self {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        Self {
            host_address: Box::new(host_address),
            threads,
        }
    }
}

impl ChunkHasher for HostHasher {
    fn hash(&self, region: &Region, chunk: usize) -> Option<Vec<u64>> {
        let addr = (self.host_address)(region)?;
        let n = region.size.div_ceil(chunk);
        let mut out = Vec::new();
        out.try_reserve_exact(n).ok()?;
        out.resize(n, 0);
        // SAFETY: `host_address` vouches that the region's `size` bytes are readable from the
        // host at `addr` for the duration of the call (the caller holds the replay window:
        // no kernel runs on the agent).
        let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, region.size) };
        let threads = if region.size >= PARALLEL_BYTES {
            self.threads
        } else {
            1
        };
        if threads <= 1 {
            hash_slice(bytes, chunk, &mut out);
        } else {
            let per = n.div_ceil(threads);
            std::thread::scope(|s| {
                for (i, hashes) in out.chunks_mut(per).enumerate() {
                    let from = i * per * chunk;
                    let to = (from + per * chunk).min(bytes.len());
                    let piece = &bytes[from..to];
                    s.spawn(move || hash_slice(piece, chunk, hashes));
                }
            });
        }
        Some(out)
    }
}

/// The chunks found written, per region.
#[derive(Clone, Debug, Default)]
struct Learned {
    /// Sorted chunk indices.
    chunks: Vec<u32>,
}

/// Restores only the chunks found changed after the first pass (see the module docs).
pub struct ChangedChunks {
    hasher: Box<dyn ChunkHasher>,
    chunk: usize,
    verify: bool,
    /// Per region: the hashes at capture (`None`: restored whole).
    captured: Vec<Option<Vec<u64>>>,
    /// Per region, once the first pass was compared.
    learned: Option<Vec<Learned>>,
    /// The next restore writes every byte.
    full: bool,
}

impl ChangedChunks {
    /// A scope hashing `chunk`-byte pieces with `hasher`; `verify` hashes after every pass.
    pub fn new(hasher: Box<dyn ChunkHasher>, chunk: usize, verify: bool) -> Self {
        Self {
            hasher,
            chunk: chunk.max(1),
            verify,
            captured: Vec::new(),
            learned: None,
            full: false,
        }
    }

    /// Chunk indices of `region` whose hash now differs from the capture.
    fn changed(&self, index: usize, region: &Region) -> Option<Vec<u32>> {
        let before = self.captured.get(index)?.as_ref()?;
        let now = self.hasher.hash(region, self.chunk)?;
        Some(
            before
                .iter()
                .zip(&now)
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .map(|(i, _)| i as u32)
                .collect(),
        )
    }
}

impl RestoreScope for ChangedChunks {
    fn on_capture(&mut self, index: usize, region: &Region) {
        if self.captured.len() <= index {
            self.captured.resize(index + 1, None);
        }
        self.captured[index] = self.hasher.hash(region, self.chunk);
    }

    fn after_pass(&mut self, regions: &[Region], hold: RegionHold<'_>) -> PassCheck {
        let mut check = PassCheck {
            unexpected_chunks: 0,
            full: self.full,
        };
        // The chunks of region `i` changed since the capture, read while it is held: `None`
        // when it cannot be hashed, `Some(None)` when it was freed (the restore skips it).
        let changed = |this: &Self, i: usize, r: &Region| -> Option<Option<Vec<u32>>> {
            let mut out = None;
            hold(i, &mut || out = this.changed(i, r)).then_some(out)
        };
        match self.learned.take() {
            None => {
                let mut learned = Vec::with_capacity(regions.len());
                for (i, r) in regions.iter().enumerate() {
                    let chunks = match changed(self, i, r) {
                        None => Vec::new(),
                        Some(Some(c)) => c,
                        // A region that cannot be hashed again is restored whole (see `ranges`).
                        Some(None) => {
                            if let Some(c) = self.captured.get_mut(i) {
                                *c = None;
                            }
                            Vec::new()
                        }
                    };
                    learned.push(Learned { chunks });
                }
                self.learned = Some(learned);
            }
            Some(mut learned) => {
                if self.verify {
                    for (i, r) in regions.iter().enumerate() {
                        let Some(Some(now)) = changed(self, i, r) else {
                            continue;
                        };
                        let set = &mut learned[i].chunks;
                        let outside: Vec<u32> = now
                            .into_iter()
                            .filter(|c| set.binary_search(c).is_err())
                            .collect();
                        if !outside.is_empty() {
                            check.unexpected_chunks += outside.len() as u64;
                            set.extend(outside);
                            set.sort_unstable();
                        }
                    }
                    if check.unexpected_chunks > 0 {
                        self.full = true;
                        check.full = true;
                    }
                }
                self.learned = Some(learned);
            }
        }
        check
    }

    fn ranges(&self, index: usize, region: &Region) -> Vec<Range<usize>> {
        #[allow(clippy::single_range_in_vec_init)]
        let whole = || vec![0..region.size];
        if self.full || !self.captured.get(index).is_some_and(Option::is_some) {
            return whole();
        }
        let Some(learned) = self.learned.as_ref().and_then(|l| l.get(index)) else {
            return whole();
        };
        coalesce(&learned.chunks, self.chunk, region.size)
    }

    fn restored(&mut self, complete: bool) {
        // After a failed restore the device may differ anywhere: the next one is complete.
        self.full = !complete;
    }
}

/// Byte ranges of sorted chunk indices, adjacent chunks merged, clipped to `size`.
fn coalesce(chunks: &[u32], chunk: usize, size: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for &c in chunks {
        let start = c as usize * chunk;
        let end = (start + chunk).min(size);
        match out.last_mut() {
            Some(last) if last.end == start => last.end = end,
            _ => out.push(start..end),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{RegionKind, always_held};

    fn region(buf: &[u8]) -> Region {
        Region {
            kind: RegionKind::Allocation {
                base: buf.as_ptr() as usize,
            },
            device: buf.as_ptr() as usize,
            size: buf.len(),
        }
    }

    #[test]
    fn coalesce_merges_neighbours_and_clips_the_tail() {
        assert_eq!(
            coalesce(&[0, 1, 3, 4, 5, 9], 10, 95),
            vec![0..20, 30..60, 90..95]
        );
        assert!(coalesce(&[], 10, 95).is_empty());
    }

    #[test]
    fn only_changed_chunks_are_restored_and_verify_catches_new_writes() {
        let mut buf = vec![0u8; 1000];
        let r = region(&buf);
        let regions = vec![r.clone()];
        let mut scope = ChangedChunks::new(
            Box::new(HostHasher::new(|r: &Region| Some(r.device))),
            100,
            true,
        );
        scope.on_capture(0, &r);
        buf[150] = 1;
        buf[999] = 1;
        let check = scope.after_pass(&regions, &always_held);
        assert_eq!(
            check,
            PassCheck {
                unexpected_chunks: 0,
                full: false
            }
        );
        assert_eq!(scope.ranges(0, &r), vec![100..200, 900..1000]);
        buf[150] = 0;
        buf[999] = 0;
        scope.restored(true);
        // The second pass writes a chunk outside the learned set.
        buf[150] = 2;
        buf[420] = 2;
        let check = scope.after_pass(&regions, &always_held);
        assert_eq!(
            check,
            PassCheck {
                unexpected_chunks: 1,
                full: true
            }
        );
        assert_eq!(scope.ranges(0, &r), vec![0..1000]);
        scope.restored(true);
        buf[150] = 0;
        buf[420] = 0;
        // Learned now: 1, 4, 9.
        buf[420] = 3;
        let check = scope.after_pass(&regions, &always_held);
        assert_eq!(
            check,
            PassCheck {
                unexpected_chunks: 0,
                full: false
            }
        );
        assert_eq!(scope.ranges(0, &r), vec![100..200, 400..500, 900..1000]);
    }

    #[test]
    fn a_region_the_hasher_cannot_read_is_restored_whole() {
        let buf = vec![0u8; 64];
        let r = region(&buf);
        let mut scope = ChangedChunks::new(Box::new(HostHasher::new(|_: &Region| None)), 16, false);
        scope.on_capture(0, &r);
        scope.after_pass(std::slice::from_ref(&r), &always_held);
        assert_eq!(scope.ranges(0, &r), vec![0..64]);
    }

    #[test]
    fn a_failed_restore_makes_the_next_one_complete() {
        let mut buf = vec![0u8; 64];
        let r = region(&buf);
        let mut scope = ChangedChunks::new(
            Box::new(HostHasher::new(|r: &Region| Some(r.device))),
            16,
            false,
        );
        scope.on_capture(0, &r);
        buf[0] = 1;
        scope.after_pass(std::slice::from_ref(&r), &always_held);
        assert_eq!(scope.ranges(0, &r), vec![0..16]);
        scope.restored(false);
        assert!(
            scope
                .after_pass(std::slice::from_ref(&r), &always_held)
                .full
        );
        assert_eq!(scope.ranges(0, &r), vec![0..64]);
        scope.restored(true);
        assert_eq!(scope.ranges(0, &r), vec![0..16]);
    }

    #[test]
    fn parallel_hashing_matches_serial_hashing() {
        let buf: Vec<u8> = (0..(PARALLEL_BYTES + 12345))
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let r = region(&buf);
        let mut serial = vec![0u64; buf.len().div_ceil(4096)];
        hash_slice(&buf, 4096, &mut serial);
        let mut h = HostHasher::new(|r: &Region| Some(r.device));
        h.threads = 3;
        assert_eq!(h.hash(&r, 4096).unwrap(), serial);
    }
}
