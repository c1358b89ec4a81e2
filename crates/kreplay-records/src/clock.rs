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
/// boot): add it to a monotonic time to get the boottime of the same instant.
pub fn boottime_minus_monotonic_ns() -> u64 {
    // The smallest difference over a few tries, read in both orders around each other, is the
    // one least disturbed by a preemption between the two reads.
    (0..3)
        .map(|_| {
            let m0 = now_ns(libc::CLOCK_MONOTONIC);
            let b = now_ns(libc::CLOCK_BOOTTIME);
            let m1 = now_ns(libc::CLOCK_MONOTONIC);
            b.saturating_sub(m0 / 2 + m1 / 2)
        })
        .min()
        .unwrap_or(0)
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
        // Read after `m`, `b` is at least `m + offset`; the offset changes only by a suspend.
        assert!(b + 1 >= m + offset, "b={b} m={m} offset={offset}");
    }
}
