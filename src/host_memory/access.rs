//! Copies to and from the application's host allocations.
//!
//! Memory the runtime allocated (system pools, fine-grained device memory) is freed only through
//! calls the tool intercepts, so it is read and written directly while the inventory holds off
//! its free. Memory the application *locked* is its own: it can be unmapped without an unlock
//! the tool would see (HIP 5.2 pins pageable buffers for copies and never releases those pins,
//! so an application that frees such a buffer leaves a lock whose pages are gone, and the
//! address range may since hold something else). Locked memory is therefore copied with
//! `process_vm_readv`/`process_vm_writev` on the tool's own process, which fail on an unmapped
//! page instead of faulting. Where the kernel refuses those calls (a seccomp filter), the range
//! is checked with `mincore` (which fails on unmapped pages) before a direct copy.

use super::inventory::{HostAllocation, MemoryKind};
use crate::sync::{AtomicU8, Ordering};

/// Whether `process_vm_readv`/`writev` work in this process: unknown, yes, no.
static VM_CALLS: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const WORKING: u8 = 1;
const REFUSED: u8 = 2;

/// Copies `out.len()` bytes at `offset` of `a` into `out`; false when they cannot be read (the
/// pages of locked memory are gone).
pub fn read(a: &HostAllocation, offset: usize, out: &mut [u8]) -> bool {
    copy(
        a,
        offset,
        out.as_mut_ptr() as usize,
        out.len(),
        Direction::FromApplication,
    )
}

/// Writes `bytes` at `offset` of `a`; false when they cannot be written.
pub fn write(a: &HostAllocation, offset: usize, bytes: &[u8]) -> bool {
    copy(
        a,
        offset,
        bytes.as_ptr() as usize,
        bytes.len(),
        Direction::ToApplication,
    )
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    FromApplication,
    ToApplication,
}

/// Moves `len` bytes between `offset` of `a` and the tool's buffer at `ours`: directly for
/// runtime-allocated memory, without faulting on unmapped pages for locked memory.
fn copy(a: &HostAllocation, offset: usize, ours: usize, len: usize, dir: Direction) -> bool {
    debug_assert!(offset + len <= a.size);
    let app = a.host + offset;
    if a.kind != MemoryKind::Locked {
        // SAFETY: runtime-allocated, host-accessible memory the caller holds live (the read
        // side of the inventory holds off its free); the range lies inside it; `ours` is the
        // caller's own buffer of `len` bytes.
        unsafe { direct(app, ours, len, dir) };
        return true;
    }
    if len == 0 {
        return true;
    }
    if VM_CALLS.load(Ordering::Relaxed) != REFUSED {
        match vm_copy(app, ours, len, dir) {
            Ok(done) => {
                VM_CALLS.store(WORKING, Ordering::Relaxed);
                return done;
            }
            Err(errno) => {
                tracing::debug!(
                    "process_vm_readv/writev refused (errno {errno}): locked host memory is checked with mincore before it is copied"
                );
                VM_CALLS.store(REFUSED, Ordering::Relaxed);
            }
        }
    }
    if !mapped(app, len) {
        return false;
    }
    // SAFETY: every page of the application range is mapped (just checked); `ours` is the
    // caller's own buffer of `len` bytes.
    unsafe { direct(app, ours, len, dir) };
    true
}

/// A plain copy between the application's `app` and the tool's `ours`.
///
/// # Safety
///
/// Both ranges are valid for `len` bytes and do not overlap.
unsafe fn direct(app: usize, ours: usize, len: usize, dir: Direction) {
    let (src, dst) = match dir {
        Direction::FromApplication => (app, ours),
        Direction::ToApplication => (ours, app),
    };
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, len) };
}

/// `Ok(true)` when all `len` bytes moved, `Ok(false)` when an application page is not mapped (or
/// not writable), `Err(errno)` when the calls themselves are refused.
fn vm_copy(app: usize, ours: usize, len: usize, dir: Direction) -> Result<bool, i32> {
    let mut done = 0;
    while done < len {
        let local = libc::iovec {
            iov_base: (ours + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        let remote = libc::iovec {
            iov_base: (app + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: `local` is the tool's own buffer of `len - done` bytes; the remote side is
        // checked by the kernel, which fails instead of faulting on an unmapped page.
        let n = unsafe {
            let pid = libc::getpid();
            match dir {
                Direction::FromApplication => libc::process_vm_readv(pid, &local, 1, &remote, 1, 0),
                Direction::ToApplication => libc::process_vm_writev(pid, &local, 1, &remote, 1, 0),
            }
        };
        if n > 0 {
            done += n as usize;
            continue;
        }
        if n == 0 {
            return Ok(false);
        }
        // EFAULT: an application page is not mapped (or not writable).
        return match std::io::Error::last_os_error().raw_os_error().unwrap_or(0) {
            errno @ (libc::ENOSYS | libc::EPERM) => Err(errno),
            _ => Ok(false),
        };
    }
    Ok(true)
}

/// Whether every page of `addr..addr + len` is mapped (`mincore` fails with ENOMEM otherwise).
fn mapped(addr: usize, len: usize) -> bool {
    // SAFETY: sysconf has no preconditions.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => 4096,
    };
    let start = addr & !(page - 1);
    let span = addr + len - start;
    let mut residency = vec![0u8; span.div_ceil(page)];
    // SAFETY: `residency` has one byte per page of the span; mincore only reports on the range.
    unsafe {
        libc::mincore(
            start as *mut libc::c_void,
            span,
            residency.as_mut_ptr().cast(),
        ) == 0
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn locked(host: usize, size: usize) -> HostAllocation {
        HostAllocation {
            base: host,
            host,
            size,
            kind: MemoryKind::Locked,
            owner: 0,
            serial: 0,
        }
    }

    /// An anonymous mapping of `pages` pages, and the page size. Each call asks for its own
    /// 1 GiB region far below where the kernel places other mappings, so that pages a test
    /// unmaps stay unmapped: a concurrent test's (or the allocator's) small mapping could
    /// otherwise land in the hole.
    pub(in crate::host_memory) fn mapping(pages: usize) -> (usize, usize) {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let region = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let hint = (0x1000_0000_0000 + (region << 30)) as *mut libc::c_void;
        // SAFETY: sysconf and a fresh anonymous mapping (the address only a hint); checked
        // below.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
            let p = libc::mmap(
                hint,
                pages * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            (p as usize, page)
        }
    }

    #[test]
    fn locked_memory_is_copied_while_mapped_and_refused_once_unmapped() {
        let (p, page) = mapping(3);
        let a = locked(p + 16, 2 * page);
        assert!(write(&a, 8, b"replayed"));
        let mut out = [0u8; 8];
        assert!(read(&a, 8, &mut out));
        assert_eq!(&out, b"replayed");
        // The application frees the middle page without unlocking: the copies fail, no fault.
        // SAFETY: our own mapping.
        assert_eq!(
            unsafe { libc::munmap((p + page) as *mut libc::c_void, page) },
            0
        );
        let mut whole = vec![0u8; a.size];
        assert!(!read(&a, 0, &mut whole));
        assert!(!write(&a, 0, &whole));
        // The first page is still there.
        assert!(read(&a, 8, &mut out));
        assert_eq!(&out, b"replayed");
        // SAFETY: the remaining pages of our mapping.
        unsafe {
            libc::munmap(p as *mut libc::c_void, page);
            libc::munmap((p + 2 * page) as *mut libc::c_void, page);
        }
    }

    #[test]
    fn the_mincore_check_sees_unmapped_pages() {
        let (p, page) = mapping(2);
        assert!(mapped(p + 1, 2 * page - 2));
        // SAFETY: our own mapping.
        assert_eq!(
            unsafe { libc::munmap((p + page) as *mut libc::c_void, page) },
            0
        );
        assert!(mapped(p, page));
        assert!(!mapped(p + 1, 2 * page - 2));
        // SAFETY: the remaining page.
        unsafe { libc::munmap(p as *mut libc::c_void, page) };
    }
}
