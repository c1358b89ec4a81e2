//! vkfd's C extension: statistics of the virtual GPU, for tests that check that work really
//! ran on it. `vkfd_stats` fills the same view as vhsa's `vhsa_stats` (so one test header reads
//! either): `size` (set by the caller, at least 8), then the counters
//! `bytes_host_to_device`, `bytes_device_to_host`, `bytes_device_to_device`,
//! `bytes_host_to_host` and `copies` (always 0: under ROCR copies are blit-kernel dispatches),
//! `dispatches` and `barrier_packets`. Fields beyond `size` are not written.
//! `vkfd_pmc_packets_executed` counts the counter packets the command processors executed (as
//! vhsa's `vhsa_pmc_packets_executed`).

use std::sync::atomic::Ordering;

/// `HSA_STATUS_SUCCESS`.
const SUCCESS: u32 = 0;
/// `HSA_STATUS_ERROR_INVALID_ARGUMENT`.
const INVALID_ARGUMENT: u32 = 0x1001;

/// Fills `view` (a `vhsa_stats_view_t`-shaped struct whose first `u64` is its size).
///
/// # Safety
///
/// `view` is NULL or points to `view->size` writable bytes.
pub unsafe extern "C" fn vkfd_stats(view: *mut u64) -> u32 {
    let r = std::panic::catch_unwind(|| {
        if view.is_null() {
            return INVALID_ARGUMENT;
        }
        // SAFETY: the caller's promise: the first field is readable.
        let size = unsafe { view.read() } as usize;
        if size < 8 {
            return INVALID_ARGUMENT;
        }
        let values = [
            0,
            0,
            0,
            0,
            0,
            crate::stats::DISPATCHES.load(Ordering::Relaxed),
            crate::stats::BARRIERS.load(Ordering::Relaxed),
        ];
        for (i, v) in values.iter().enumerate() {
            if (i + 2) * 8 <= size {
                // SAFETY: inside the caller's `size` bytes.
                unsafe { view.add(i + 1).write_unaligned(*v) };
            }
        }
        SUCCESS
    });
    r.unwrap_or(1)
}

/// Counter packets (aqlprofile start, read and stop packets of the virtual GPU's counter
/// payload) executed so far in this process; each pointer may be NULL.
///
/// # Safety
///
/// Each pointer is NULL or points to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn vkfd_pmc_packets_executed(
    start: *mut u64,
    read: *mut u64,
    stop: *mut u64,
) {
    let _ = std::panic::catch_unwind(|| {
        let (s, r, t) = vgpu::pmc::packets_executed();
        for (p, v) in [(start, s), (read, r), (stop, t)] {
            if !p.is_null() {
                // SAFETY: non-NULL; the caller's writable `uint64_t`.
                unsafe { p.write_unaligned(v) };
            }
        }
    });
}
