//! Which host and fine-grained allocations a dispatch can reach.
//!
//! A kernel reaches memory through addresses. The tool reads every 8-byte-aligned value of the
//! dispatch's kernel-argument segment (pointer arguments, and pointers inside structures passed
//! by value, which the ABI aligns to 8) and keeps the allocations those values point into. Host
//! memory found that way is host-readable, so the pointers stored in it are followed too (up to
//! [`SCAN_ONE`] bytes per allocation and [`SCAN_BUDGET`] bytes per dispatch). What cannot be
//! known: pointers stored in device memory, pointers computed by the kernel (an offset from an
//! unrelated base), and memory the runtime did not allocate or lock (plain `malloc` memory given
//! to a kernel on a system with unified memory). `docs/limitations.md` lists them.

use super::access;
use super::inventory::{HostAllocation, HostInventory};
use crate::runtime::Runtime;

/// Largest host allocation whose contents are scanned for further pointers.
pub const SCAN_ONE: usize = 1 << 20;
/// Most bytes of host memory scanned for pointers per dispatch.
pub const SCAN_BUDGET: usize = 16 << 20;

/// Bytes read from a kernel-argument segment whose size the loader does not give.
pub const UNKNOWN_KERNARG_BYTES: usize = 4096;

/// The kernel-argument segment at `address`: `size` bytes when the loader gave the size,
/// otherwise up to [`UNKNOWN_KERNARG_BYTES`], never past the end of the allocation holding it.
/// `None` when the host cannot read it (the runtime does not know the address, or it has no
/// host mapping). An empty segment (no address) reaches nothing.
pub fn kernel_arguments(rt: Runtime, address: usize, size: Option<usize>) -> Option<Vec<u8>> {
    if address == 0 {
        return Some(Vec::new());
    }
    let info = rt.pointer_info(address)?;
    if info.host_base == 0 || info.agent_base == 0 || address < info.agent_base {
        return None;
    }
    let offset = address - info.agent_base;
    let left = info.size.checked_sub(offset)?;
    let len = size.unwrap_or(UNKNOWN_KERNARG_BYTES).min(left) & !7;
    let mut out = vec![0u8; len];
    // SAFETY: `host_base + offset .. + len` lies inside the allocation holding the kernel
    // arguments, which the runtime reports host-accessible; the dispatch using it is being
    // submitted, so the application has not released it.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (info.host_base + offset) as *const u8,
            out.as_mut_ptr(),
            len,
        )
    };
    Some(out)
}

/// Every 8-byte-aligned value of `bytes`, read as an address.
pub fn words(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])) as usize)
}

/// The allocations of `inventory` that the kernel arguments `kernarg` reach, directly or through
/// pointers stored in reached host memory, in the order found.
pub fn reachable(inventory: &HostInventory, kernarg: &[u8]) -> Vec<HostAllocation> {
    let mut found: Vec<HostAllocation> = Vec::new();
    let mut to_scan: Vec<HostAllocation> = Vec::new();
    let note = |addr: usize, found: &mut Vec<HostAllocation>, to_scan: &mut Vec<HostAllocation>| {
        if addr == 0 {
            return;
        }
        if let Some(a) = inventory.containing(addr)
            && !found.iter().any(|f| f.base == a.base)
        {
            found.push(a);
            to_scan.push(a);
        }
    };
    for w in words(kernarg) {
        note(w, &mut found, &mut to_scan);
    }
    let mut budget = SCAN_BUDGET;
    while let Some(a) = to_scan.pop() {
        if a.host == 0 || a.size > SCAN_ONE || a.size > budget {
            continue;
        }
        budget -= a.size;
        let stored = inventory
            .with_same(&a, || stored_words(&a))
            .unwrap_or_default();
        // One inventory lock for the whole allocation's words.
        for b in inventory.containing_each(&stored) {
            if !found.iter().any(|f| f.base == b.base) {
                found.push(b);
                to_scan.push(b);
            }
        }
    }
    found
}

/// The 8-byte-aligned values stored in `a`, which is live (the caller holds off its free); none
/// when its bytes cannot be read (locked memory whose pages are gone).
fn stored_words(a: &HostAllocation) -> Vec<usize> {
    let mut bytes = vec![0u8; a.size & !7];
    if !access::read(a, 0, &mut bytes) {
        return Vec::new();
    }
    words(&bytes).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_memory::MemoryKind;

    fn args(values: &[u64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn pointer_arguments_and_pointers_inside_by_value_structs_reach_their_allocations() {
        let inv = HostInventory::new();
        let a = inv.record(0x10_0000, 0, 0x1000, MemoryKind::FineGrainedSystem, 1);
        let b = inv.record(0x20_0000, 0, 0x1000, MemoryKind::Locked, 1);
        inv.record(0x30_0000, 0, 0x1000, MemoryKind::CoarseSystem, 1);
        // An int pair, then a struct {n, ptr into b}, then a pointer to a's base.
        let k = args(&[0x0000_0002_0000_0001, 7, 0x20_0010, 0x10_0000]);
        let got: Vec<usize> = reachable(&inv, &k).iter().map(|x| x.base).collect();
        assert_eq!(got, vec![b.base, a.base]);
        assert!(
            reachable(&inv, &args(&[0x30_1000, 0])).is_empty(),
            "one past the end"
        );
    }

    #[test]
    fn pointers_stored_in_reached_host_memory_are_followed() {
        let inv = HostInventory::new();
        let mut table = vec![0u64; 4];
        let mut data = vec![0u64; 4];
        let d = inv.record(
            data.as_mut_ptr() as usize,
            data.as_mut_ptr() as usize,
            32,
            MemoryKind::FineGrainedSystem,
            1,
        );
        table[2] = d.base as u64 + 8;
        let t = inv.record(
            table.as_mut_ptr() as usize,
            table.as_mut_ptr() as usize,
            32,
            MemoryKind::FineGrainedSystem,
            1,
        );
        let got: Vec<usize> = reachable(&inv, &args(&[t.base as u64]))
            .iter()
            .map(|x| x.base)
            .collect();
        assert_eq!(got, vec![t.base, d.base]);
    }
}
