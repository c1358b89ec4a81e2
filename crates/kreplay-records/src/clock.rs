//! The records' clock: CLOCK_BOOTTIME, and the move from CLOCK_MONOTONIC.

/// The `clock` value of records in CLOCK_BOOTTIME nanoseconds.
pub const BOOTTIME: &str = "boottime";

fn now_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return 0;
    }
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

/// Now, in CLOCK_BOOTTIME nanoseconds.
pub fn now_boottime_ns() -> u64 {
    now_ns(libc::CLOCK_BOOTTIME)
}

/// How far CLOCK_BOOTTIME is ahead of CLOCK_MONOTONIC now (the time spent suspended since
/// boot), to the microsecond: add it to a monotonic time to get the boottime of the same
/// instant. The offset changes only when the machine suspends; reading the two clocks one after
/// the other only brackets it, so it is rounded to the microsecond, which keeps it exactly 0 on
/// a machine that never suspended (the usual case, where the two clocks agree to the ns).
pub fn boottime_minus_monotonic_ns() -> u64 {
    // The tightest of a few brackets: boottime read between two monotonic reads.
    let (mut low, mut high) = (0u64, u64::MAX);
    for _ in 0..5 {
        let m0 = now_ns(libc::CLOCK_MONOTONIC);
        let b = now_ns(libc::CLOCK_BOOTTIME);
        let m1 = now_ns(libc::CLOCK_MONOTONIC);
        low = low.max(b.saturating_sub(m1));
        high = high.min(b.saturating_sub(m0));
    }
    let middle = low / 2 + high.max(low) / 2;
    (middle + 500) / 1000 * 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boottime_is_monotonic_plus_the_offset() {
        let offset = boottime_minus_monotonic_ns();
        let m = now_ns(libc::CLOCK_MONOTONIC);
        let b = now_boottime_ns();
        assert!(b >= m, "boottime {b} is never behind monotonic {m}");
        // Read after `m`, `b` is at least `m + offset`, within the microsecond of rounding; the
        // offset changes only by a suspend.
        assert!(b + 1000 >= m + offset, "b={b} m={m} offset={offset}");
        assert_eq!(offset % 1000, 0);
    }
}
