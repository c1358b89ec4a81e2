//! The device clock: `CLOCK_MONOTONIC` in nanoseconds, also the GPU and system counters
//! (`hsaKmtGetClockCounters` reports 1 GHz, so ROCR's time translation is the identity).

/// Current `CLOCK_MONOTONIC` time in nanoseconds.
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The counters' frequency.
pub(crate) const FREQUENCY_HZ: u64 = 1_000_000_000;
