//! Whether the host can back a large allocation now. Both back ends' device memory is host
//! memory mapped without reserving it (pages are filled on first touch), so an allocation the
//! host cannot back would succeed and later get the process killed by the kernel's OOM killer.
//! A large one is refused instead, as a GPU refuses an allocation its memory cannot hold, when
//! it would not leave some memory available (`MemAvailable` of `/proc/meminfo`) beside it:
//! the caller sees an out-of-memory status (a tool falls back or declines; an application's
//! `hipMalloc` fails) instead of a kill. Memory the back end handed out earlier and nobody has
//! touched yet is not in `MemAvailable`'s count, so the caller also passes those bytes
//! ([`untouched_bytes`] of its large allocations): a tool's several snapshot buffers, allocated
//! before any is filled, are counted together.

/// A field (`MemTotal:`, `MemAvailable:`) of `/proc/meminfo` text, in bytes.
pub fn meminfo_bytes(meminfo: &str, key: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb << 10)
}

/// Allocations below this size are not checked against the available memory.
const CHECKED_FROM: u64 = 64 << 20;

/// Memory kept free beside a checked allocation.
const HEAD_ROOM: u64 = 256 << 20;

/// Whether an allocation of `size` bytes is large enough to be checked.
pub fn is_checked(size: u64) -> bool {
    size >= CHECKED_FROM
}

/// Why an allocation of `size` bytes cannot be backed when the host has `available` bytes
/// available and `promised` bytes of earlier allocations are still untouched, or `None` when
/// it can.
fn refusal_for(size: u64, available: u64, promised: u64) -> Option<String> {
    let free = available.saturating_sub(promised);
    (is_checked(size) && size.saturating_add(HEAD_ROOM) > free).then(|| {
        format!(
            "the host has {} MiB available (MemAvailable, less {} MiB allocated and not yet \
             touched) and {} MiB more would not leave {} MiB free: the virtual GPU's memory is \
             the host's",
            free >> 20,
            promised >> 20,
            size >> 20,
            HEAD_ROOM >> 20
        )
    })
}

/// Why the host cannot back an allocation of `size` bytes now, with `promised` bytes of the
/// back end's earlier allocations not yet touched, or `None` when it can (or the available
/// memory is unknown).
pub fn refusal(size: u64, promised: u64) -> Option<String> {
    if !is_checked(size) {
        return None;
    }
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| meminfo_bytes(&t, "MemAvailable:"))?;
    refusal_for(size, available, promised)
}

/// Bytes of the mappings `ranges` (page-aligned base and length) that are not resident yet
/// (`mincore`); a range the kernel cannot report counts as resident.
pub fn untouched_bytes(ranges: impl Iterator<Item = (usize, usize)>) -> u64 {
    let page = 4096usize;
    let mut vec = Vec::new();
    let mut untouched = 0u64;
    for (base, len) in ranges {
        let pages = len.div_ceil(page);
        vec.clear();
        vec.resize(pages, 0u8);
        // SAFETY: `vec` has one byte per page of the range; mincore only writes those bytes
        // and reads no memory of the range.
        let rc = unsafe { libc::mincore(base as *mut libc::c_void, len, vec.as_mut_ptr()) };
        if rc == 0 {
            untouched += vec.iter().filter(|&&b| b & 1 == 0).count() as u64 * page as u64;
        }
    }
    untouched
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_are_read_in_bytes() {
        let meminfo = "MemTotal:       24576000 kB\nMemFree: 1 kB\nMemAvailable: 2048 kB\n";
        assert_eq!(meminfo_bytes(meminfo, "MemTotal:"), Some(24576000 << 10));
        assert_eq!(meminfo_bytes(meminfo, "MemAvailable:"), Some(2 << 20));
        assert_eq!(meminfo_bytes(meminfo, "SwapTotal:"), None);
    }

    #[test]
    fn large_allocations_need_the_available_memory_and_head_room() {
        let gib = 1u64 << 30;
        assert!(refusal_for(10 * gib, 12 * gib, 0).is_none());
        let why = refusal_for(10 * gib, 2 * gib, 0).expect("10 GiB do not fit in 2 GiB");
        assert!(why.contains("2048 MiB available"), "{why}");
        let why = refusal_for(4 * gib, 6 * gib, 3 * gib).expect("3 GiB promised already");
        assert!(why.contains("3072 MiB allocated and not yet"), "{why}");
        assert!(
            refusal_for(gib, gib + HEAD_ROOM / 2, 0).is_some(),
            "no head room left"
        );
        assert!(
            refusal_for(CHECKED_FROM - 1, 0, 0).is_none(),
            "small ones are not checked"
        );
    }

    #[test]
    fn untouched_pages_are_counted_until_written() {
        let len = 64usize << 20;
        // SAFETY: a fresh anonymous mapping, unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        let ranges = || std::iter::once((p as usize, len));
        assert_eq!(untouched_bytes(ranges()), len as u64);
        // SAFETY: the first half of the mapping made above.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), 1, len / 2) };
        assert_eq!(untouched_bytes(ranges()), (len / 2) as u64);
        // SAFETY: the mapping made above, no longer used.
        unsafe { libc::munmap(p, len) };
    }
}
