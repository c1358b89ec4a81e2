//! Device memory in one aperture: where device allocations are placed.
//!
//! On a GPU, device allocations share one virtual address space: ROCR hands out small ones as
//! fragments of 2 MiB blocks, and the driver places blocks next to one another. A kernel that
//! reads or writes past the end of a buffer therefore touches other mapped memory instead of
//! faulting, and some of AMD's library kernels do so on arguments their own tests pass
//! (rocSPARSE's `csrmv` of a transposed matrix with no rows scales all `n` entries of a `y`
//! that holds 100). vhsa keeps device memory in one aperture mapped whole (untouched pages cost
//! nothing) and places allocations in it first fit from its bottom, page-aligned (2 MiB aligned
//! from 2 MiB up, as the driver aligns large blocks); a kernel reaches every byte of the
//! aperture, and an address outside it still faults.
//!
//! This module is the bookkeeping of the aperture's free ranges; `memory` maps the aperture.

use parking_lot::Mutex;
use std::collections::BTreeMap;

/// The placement unit.
pub(crate) const PAGE: usize = 4096;

/// Allocations of this size and more are aligned to it.
pub(crate) const LARGE: usize = 2 << 20;

/// An aperture of `len` bytes at `base` and its free ranges by address (never adjacent).
pub(crate) struct Aperture {
    base: usize,
    len: usize,
    free: Mutex<BTreeMap<usize, usize>>,
}

impl Aperture {
    /// An aperture with every byte free. `base` is `LARGE`-aligned.
    pub(crate) fn new(base: usize, len: usize) -> Aperture {
        Aperture {
            base,
            len,
            free: Mutex::new(BTreeMap::from([(base, len)])),
        }
    }

    /// `size` bytes (a page multiple) at the lowest suitably aligned free address.
    pub(crate) fn take(&self, size: usize) -> Option<usize> {
        let align = if size >= LARGE { LARGE } else { PAGE };
        let mut free = self.free.lock();
        let (start, len, at) = free.iter().find_map(|(&start, &len)| {
            let at = start.next_multiple_of(align);
            (at + size <= start + len).then_some((start, len, at))
        })?;
        free.remove(&start);
        if at > start {
            free.insert(start, at - start);
        }
        if at + size < start + len {
            free.insert(at + size, start + len - at - size);
        }
        Some(at)
    }

    /// Gives back the `size` bytes at `addr` that [`Aperture::take`] gave.
    pub(crate) fn give_back(&self, addr: usize, size: usize) {
        let mut free = self.free.lock();
        let (mut start, mut len) = (addr, size);
        if let Some((&s, &l)) = free.range(..start).next_back()
            && s + l == start
        {
            free.remove(&s);
            (start, len) = (s, l + len);
        }
        if let Some(l) = free.remove(&(start + len)) {
            len += l;
        }
        free.insert(start, len);
    }

    /// The aperture: (base, length).
    pub(crate) fn range(&self) -> (usize, usize) {
        (self.base, self.len)
    }

    /// Whether `addr` lies in the aperture.
    pub(crate) fn holds(&self, addr: usize) -> bool {
        addr.wrapping_sub(self.base) < self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_placed_first_fit_from_the_bottom_and_large_ones_aligned() {
        let base = 1 << 32;
        let a = Aperture::new(base, 64 * LARGE);
        let b = a.take(2 * PAGE).unwrap();
        let c = a.take(PAGE).unwrap();
        assert_eq!((b, c), (base, base + 2 * PAGE), "side by side");
        let large = a.take(LARGE + PAGE).unwrap();
        assert_eq!(large, base + LARGE, "2 MiB aligned");
        let d = a.take(PAGE).unwrap();
        assert_eq!(
            d,
            base + 3 * PAGE,
            "below the large one, in the gap its alignment left"
        );
        a.give_back(b, 2 * PAGE);
        assert_eq!(a.take(PAGE), Some(base), "the lowest hole first");
        a.give_back(base, PAGE);
        a.give_back(c, PAGE);
        assert_eq!(
            a.take(3 * PAGE),
            Some(base),
            "b and c merged into one hole of three pages"
        );
        assert!(a.holds(base + 64 * LARGE - 1) && !a.holds(base + 64 * LARGE));
        assert!(!a.holds(base - 1));
        assert_eq!(a.take(64 * LARGE), None, "no room for the whole aperture");
        a.give_back(large, LARGE + PAGE);
        a.give_back(d, PAGE);
        a.give_back(base, 3 * PAGE);
        assert_eq!(a.take(64 * LARGE), Some(base), "everything merged back");
    }
}
