//! Memory shared with other processes and other APIs: IPC export and import
//! (`hsa_amd_ipc_memory_create` / `_attach` / `_detach`) and interop buffers
//! (`hsa_amd_interop_map_buffer` / `_unmap_buffer`).
//!
//! Device memory is anonymous host memory, which no other mapping can alias. Exporting an
//! allocation therefore moves it onto a memory file first: its bytes are copied into a new
//! memfd and the file is mapped over the same addresses (no running dispatch may hold the old
//! pages meanwhile). An IPC handle names the exporting process, its memfd and the size; an
//! importer maps the same file at a new address, in this process directly and in another one
//! through `/proc/<pid>/fd/<fd>`, so writes on either side are seen on the other, as on a GPU.
//! An interop handle is a file descriptor of shareable memory (a dma-buf on ROCm; any mappable
//! file, such as a memfd, here), mapped the same way.

use crate::error::{Error, Result};
use crate::memory::{self, Origin};
use crate::topology::GRANULE;
use hsa_abi::ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// First word of every vhsa IPC handle.
const MAGIC: u32 = 0x7648_4950;

/// Exported allocations: base -> (memfd, mapped length).
static EXPORTS: Mutex<BTreeMap<usize, (i32, usize)>> = Mutex::new(BTreeMap::new());

fn round_up(size: usize) -> usize {
    size.div_ceil(GRANULE) * GRANULE
}

fn os_error(what: &str) -> Error {
    Error::OutOfResources(format!("{what}: {}", std::io::Error::last_os_error()))
}

/// The IPC handle of the allocation at `ptr` (its base) for `len` bytes.
pub(crate) fn export(ptr: usize, len: usize) -> Result<[u32; 8]> {
    let (base, a) = memory::find(ptr).ok_or(Error::InvalidArgument(
        "ptr is not in an allocation of this runtime",
    ))?;
    if base != ptr || a.origin != Origin::Mapped || len == 0 || len > a.size {
        return Err(Error::InvalidArgument(
            "ptr must be the base of a pool allocation and len at most its size",
        ));
    }
    let mut exports = EXPORTS.lock();
    let (fd, mapped) = match exports.get(&base) {
        Some(e) => *e,
        None => {
            let e = move_onto_file(base, round_up(a.size))?;
            exports.insert(base, e);
            e
        }
    };
    let pid = std::process::id();
    let size = mapped as u64;
    Ok([
        MAGIC,
        pid,
        fd as u32,
        size as u32,
        (size >> 32) as u32,
        0,
        0,
        0,
    ])
}

/// Copies `len` mapped bytes at `base` into a new memfd and maps the file over them.
fn move_onto_file(base: usize, len: usize) -> Result<(i32, usize)> {
    memory::wait_for_views_to_end("hsa_amd_ipc_memory_create");
    // SAFETY: plain system calls on a new descriptor; `base..base + len` is this runtime's own
    // mapping (rounded to the granule it was mapped with).
    unsafe {
        let fd = libc::memfd_create(c"vhsa-ipc".as_ptr(), libc::MFD_CLOEXEC);
        if fd < 0 {
            return Err(os_error("memfd_create"));
        }
        let copied = libc::ftruncate(fd, len as libc::off_t) == 0
            && libc::pwrite(fd, base as *const libc::c_void, len, 0) == len as isize;
        let p = if copied {
            libc::mmap(
                base as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd,
                0,
            )
        } else {
            libc::MAP_FAILED
        };
        if p != base as *mut libc::c_void {
            let e = os_error("moving the allocation onto shareable memory");
            libc::close(fd);
            return Err(e);
        }
        Ok((fd, len))
    }
}

/// Forgets the export of the allocation at `base` (it was freed): its memfd is closed.
/// Importers keep their mappings.
pub(crate) fn forget_export(base: usize) {
    if let Some((fd, _)) = EXPORTS.lock().remove(&base) {
        // SAFETY: the descriptor was opened by `move_onto_file` and is closed once.
        unsafe { libc::close(fd) };
    }
}

/// Maps the memory an IPC handle names; returns its address here.
pub(crate) fn import(handle: &[u32; 8], len: usize, agent: u64) -> Result<usize> {
    if handle[0] != MAGIC {
        return Err(Error::InvalidArgument(
            "not an IPC handle of this runtime (made by hsa_amd_ipc_memory_create)",
        ));
    }
    let size = (handle[3] as u64 | (handle[4] as u64) << 32) as usize;
    // The whole exported allocation is mapped (and reported); `len` only has to fit in it.
    if len == 0 || len > size {
        return Err(Error::InvalidArgument(
            "len is 0 or larger than the exported allocation",
        ));
    }
    let (pid, fd) = (handle[1], handle[2] as i32);
    let own = pid == std::process::id();
    if own && !EXPORTS.lock().values().any(|e| e.0 == fd) {
        return Err(Error::InvalidArgument(
            "the IPC handle's allocation was freed",
        ));
    }
    let file = if own { fd } else { open_foreign(pid, fd)? };
    let mapped = map_file(file, size);
    if !own {
        // SAFETY: opened by `open_foreign`, closed once; the mapping keeps the pages.
        unsafe { libc::close(file) };
    }
    let va = mapped?;
    record(va, size, agent, Origin::Imported);
    Ok(va)
}

fn open_foreign(pid: u32, fd: i32) -> Result<i32> {
    let path = std::ffi::CString::new(format!("/proc/{pid}/fd/{fd}"))
        .map_err(|_| Error::InvalidArgument("bad IPC handle"))?;
    // SAFETY: a NUL-terminated path.
    let f = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if f < 0 {
        return Err(Error::InvalidArgument(
            "the IPC handle's process or memory is gone (or not reachable from this process)",
        ));
    }
    Ok(f)
}

fn map_file(fd: i32, len: usize) -> Result<usize> {
    // SAFETY: a new shared mapping of an open file; nothing existing is replaced.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            round_up(len),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(os_error("mapping shared memory"));
    }
    Ok(p as usize)
}

/// Records a shared mapping as coarse-grained device memory of `agent`.
fn record(va: usize, size: usize, agent: u64, origin: Origin) {
    let coarse = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
    memory::record(va as *mut u8, size, agent, coarse, true, origin);
}

/// Maps an interop buffer (a file descriptor of shareable memory); returns (address, size).
pub(crate) fn map_interop(fd: i32, agent: u64) -> Result<(usize, usize)> {
    // SAFETY: `st` is written by fstat on success only and read after.
    let size = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 || st.st_size <= 0 {
            return Err(Error::InvalidArgument(
                "interop_handle is not a file descriptor of mappable memory",
            ));
        }
        st.st_size as usize
    };
    let va = map_file(fd, size)?;
    record(va, size, agent, Origin::Interop);
    Ok((va, size))
}

/// Unmaps memory imported by [`import`] (`origin` Imported) or [`map_interop`] (Interop).
pub(crate) fn release(ptr: usize, origin: Origin) -> Result<()> {
    memory::release_shared(ptr, origin, round_up)
}
