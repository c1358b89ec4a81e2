//! What the AMD loader extension tells the tool: kernel names, what their code-object metadata
//! says a replay must respect, module-scope variables and the writable segments of loaded code
//! objects.
//!
//! Kernel object -> name is cached per agent and the cache is rebuilt on a miss, which is then
//! remembered until an executable is frozen or destroyed; the names of an executable are
//! forgotten when it is destroyed. Variables and segments are discovered at
//! snapshot time (constant memory may be filled after loading), each tagged with its executable
//! as the [`EXECUTABLES`] inventory knows it.

use crate::inventory::{ExecutableInventory, ExecutablesHeld};
use crate::runtime::{HsaError, Runtime};
use crate::snapshot::{ExecutableRef, Region, RegionKind};
use crate::sync::{Arc, AtomicU64, LazyLock, Mutex, Ordering};
use amdgpu_code_object::{
    HEADER_PROBE_BYTES, KERNEL_DESCRIPTOR_SUFFIX, Metadata, note_segments, notes_in,
    writable_ranges,
};
use hsa_abi::ffi::{
    self, hsa_agent_t, hsa_executable_symbol_t, hsa_executable_t, hsa_loaded_code_object_t,
    hsa_status_t,
};
use std::collections::{HashMap, HashSet};
use std::ffi::{CString, c_void};
use std::ops::Range;

/// Largest module-scope variable captured (a sanity cap).
pub const MAX_VARIABLE_BYTES: u64 = 1 << 30;

/// Executables the tool has seen; `hsa_executable_destroy` goes through it.
pub static EXECUTABLES: LazyLock<ExecutableInventory> = LazyLock::new(ExecutableInventory::new);

/// The loader extension's table, queried once per runtime instance (`None` inside: the
/// runtime has no such extension).
static TABLE: Mutex<Option<Option<ffi::hsa_ven_amd_loader_1_03_pfn_t>>> = Mutex::new(None);

/// The writable ranges of each agent's loaded code objects, by `(executable serial, load base,
/// load size)`. A loaded image's program headers do not change while it stays loaded, and on a
/// discrete GPU every read of them is a copy from device memory, so each image is read once;
/// every enumeration keeps only the code objects it found, so unloaded ones drop out.
static WRITABLE: LazyLock<Mutex<HashMap<u64, ImageRanges>>> = LazyLock::new(Default::default);

/// One agent's entry of [`WRITABLE`].
type ImageRanges = HashMap<(u64, u64, u64), Arc<[Range<u64>]>>;

/// Forgets what the previous runtime instance's loader said: its extension table and the
/// writable ranges of its code objects.
pub fn forget_extension() {
    *TABLE.lock() = None;
    WRITABLE.lock().clear();
}

fn loader_table(rt: Runtime) -> Option<ffi::hsa_ven_amd_loader_1_03_pfn_t> {
    *TABLE.lock().get_or_insert_with(|| {
        let mut table = ffi::hsa_ven_amd_loader_1_03_pfn_t::default();
        // SAFETY: the out-pointer is a table of the size passed.
        let st = unsafe {
            (rt.originals().system_get_major_extension_table)(
                ffi::HSA_EXTENSION_AMD_LOADER as u16,
                1,
                std::mem::size_of_val(&table),
                (&mut table as *mut ffi::hsa_ven_amd_loader_1_03_pfn_t).cast(),
            )
        };
        if st != ffi::HSA_STATUS_SUCCESS {
            tracing::warn!(
                "the runtime has no AMD loader extension 1.03 (status {st:#x}): kernel names, module-scope variables \
                 and code-object segments are unavailable"
            );
            return None;
        }
        Some(table)
    })
}

/// The host address of the loaded copy of `device` (an address inside a loaded code object's
/// segment, such as a kernel descriptor), from the loader extension; `None` when the loader
/// does not know it.
pub fn host_address(rt: Runtime, device: u64) -> Option<u64> {
    let query = loader_table(rt)?.hsa_ven_amd_loader_query_host_address?;
    let mut host: *const c_void = std::ptr::null();
    // SAFETY: `host` is a valid out-pointer for the call; the address is only a value.
    let st = unsafe { query(device as *const c_void, &mut host) };
    (st == ffi::HSA_STATUS_SUCCESS && !host.is_null()).then_some(host as u64)
}

fn executables(rt: Runtime) -> Result<Vec<hsa_executable_t>, HsaError> {
    let missing = HsaError {
        call: "hsa_ven_amd_loader_iterate_executables",
        status: ffi::HSA_STATUS_ERROR,
    };
    let iterate = loader_table(rt)
        .and_then(|t| t.hsa_ven_amd_loader_iterate_executables)
        .ok_or(missing)?;
    unsafe extern "C" fn collect(exe: hsa_executable_t, data: *mut c_void) -> hsa_status_t {
        // ROCm 5.x's loader lists a destroyed executable as a NULL handle (its slot in the
        // loader's list is cleared, not removed); it has nothing to capture, nor has the tool's
        // own.
        if exe.handle == 0 || crate::inventory::OWN_EXECUTABLES.contains(exe.handle) {
            return ffi::HSA_STATUS_SUCCESS;
        }
        // SAFETY: `data` is the Vec passed below, alive for the call.
        let v = unsafe { &mut *data.cast::<Vec<hsa_executable_t>>() };
        v.push(exe);
        ffi::HSA_STATUS_SUCCESS
    }
    let mut v: Vec<hsa_executable_t> = Vec::new();
    // SAFETY: the callback only pushes into `v`, which outlives the call.
    let st = unsafe { iterate(Some(collect), (&mut v as *mut Vec<hsa_executable_t>).cast()) };
    if st != ffi::HSA_STATUS_SUCCESS {
        return Err(HsaError {
            call: "hsa_ven_amd_loader_iterate_executables",
            status: st,
        });
    }
    Ok(v)
}

fn loaded_code_objects(
    rt: Runtime,
    exe: hsa_executable_t,
) -> Result<Vec<hsa_loaded_code_object_t>, HsaError> {
    const CALL: &str = "hsa_ven_amd_loader_executable_iterate_loaded_code_objects";
    let iterate = loader_table(rt)
        .and_then(|t| t.hsa_ven_amd_loader_executable_iterate_loaded_code_objects)
        .ok_or(HsaError {
            call: CALL,
            status: ffi::HSA_STATUS_ERROR,
        })?;
    unsafe extern "C" fn collect(
        _: hsa_executable_t,
        lco: hsa_loaded_code_object_t,
        data: *mut c_void,
    ) -> hsa_status_t {
        // SAFETY: `data` is the Vec passed below, alive for the call.
        let v = unsafe { &mut *data.cast::<Vec<hsa_loaded_code_object_t>>() };
        v.push(lco);
        ffi::HSA_STATUS_SUCCESS
    }
    let mut v: Vec<hsa_loaded_code_object_t> = Vec::new();
    // SAFETY: the callback only pushes into `v`, which outlives the call.
    let st = unsafe {
        iterate(
            exe,
            Some(collect),
            (&mut v as *mut Vec<hsa_loaded_code_object_t>).cast(),
        )
    };
    if st != ffi::HSA_STATUS_SUCCESS {
        return Err(HsaError {
            call: CALL,
            status: st,
        });
    }
    Ok(v)
}

/// One attribute of a loaded code object whose value is at most 8 bytes.
fn code_object_info(
    rt: Runtime,
    lco: hsa_loaded_code_object_t,
    attr: ffi::hsa_ven_amd_loader_loaded_code_object_info_t,
    call: &'static str,
) -> Result<u64, HsaError> {
    let get = loader_table(rt)
        .and_then(|t| t.hsa_ven_amd_loader_loaded_code_object_get_info)
        .ok_or(HsaError {
            call,
            status: ffi::HSA_STATUS_ERROR,
        })?;
    let mut v = 0u64;
    // SAFETY: every attribute asked here has a value of at most 8 bytes, written into a zeroed
    // u64 (little-endian: a narrower value lands in the low bytes).
    let st = unsafe { get(lco, attr, (&mut v as *mut u64).cast()) };
    if st == ffi::HSA_STATUS_SUCCESS {
        Ok(v)
    } else {
        Err(HsaError { call, status: st })
    }
}

/// The load base and size of `lco` when it is a code object loaded for `agent` (not a
/// program-wide one, and not empty).
fn agent_image(
    rt: Runtime,
    lco: hsa_loaded_code_object_t,
    agent: hsa_agent_t,
) -> Result<Option<(u64, u64)>, HsaError> {
    use ffi::*;
    let kind = code_object_info(
        rt,
        lco,
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND,
        "hsa_ven_amd_loader_loaded_code_object_get_info(KIND)",
    )?;
    let owner = code_object_info(
        rt,
        lco,
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT,
        "hsa_ven_amd_loader_loaded_code_object_get_info(AGENT)",
    )?;
    if kind != u64::from(HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT) || owner != agent.handle
    {
        return Ok(None);
    }
    let base = code_object_info(
        rt,
        lco,
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE,
        "hsa_ven_amd_loader_loaded_code_object_get_info(LOAD_BASE)",
    )?;
    let size = code_object_info(
        rt,
        lco,
        HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE,
        "hsa_ven_amd_loader_loaded_code_object_get_info(LOAD_SIZE)",
    )?;
    Ok((base != 0 && size != 0).then_some((base, size)))
}

/// `len` bytes of a loaded image from `at`, which must lie in a code object that cannot be
/// unloaded while the caller holds [`EXECUTABLES`]; `None` when the copy fails.
fn read_image(rt: Runtime, at: u64, len: usize) -> Option<Vec<u8>> {
    let mut bytes = vec![0u8; len];
    // SAFETY: `bytes` holds its length; the source lies in a loaded image the caller keeps loaded.
    let read = unsafe { rt.copy(bytes.as_mut_ptr().cast(), at as *const c_void, len) };
    read.ok().map(|()| bytes)
}

/// What a kernel's code-object metadata says that a replay must respect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayTraits {
    /// It may call the host through the hostcall buffer (device `printf`, `malloc`).
    pub calls_host: bool,
    /// The kernarg offset of its cooperative-launch argument, when it may have one.
    pub multigrid_sync: Option<u64>,
}

/// The kernels of one code object with any [`ReplayTraits`], by name.
type TraitsOfCodeObject = Arc<HashMap<String, ReplayTraits>>;

/// The kernels of the code object loaded at `base` (`size` bytes) with any replay trait, by
/// name (their descriptor symbol without `.kd`), from the metadata note its image holds;
/// `None` when the image holds no readable metadata note.
fn traits_of(rt: Runtime, base: u64, size: u64) -> Option<HashMap<String, ReplayTraits>> {
    let probe = read_image(rt, base, HEADER_PROBE_BYTES.min(size as usize))?;
    for segment in note_segments(&probe)? {
        if segment.range.end > size {
            continue;
        }
        let len = (segment.range.end - segment.range.start) as usize;
        let bytes = read_image(rt, base + segment.range.start, len)?;
        let Ok(Some(metadata)) = notes_in(&bytes, segment.align).and_then(|n| Metadata::among(&n))
        else {
            continue;
        };
        let mut out = HashMap::new();
        for k in &metadata.kernels {
            let traits = ReplayTraits {
                calls_host: k.calls_host(),
                multigrid_sync: k.multigrid_sync_offset(),
            };
            if traits != ReplayTraits::default() {
                let name = k.symbol.strip_suffix(KERNEL_DESCRIPTOR_SUFFIX);
                out.insert(name.unwrap_or(&k.symbol).to_owned(), traits);
            }
        }
        return Some(out);
    }
    None
}

/// The writable segments of the code objects loaded for `agent`, as snapshot regions tagged
/// with their executable. Each loaded code object's headers are read from its loaded image
/// once ([`WRITABLE`]); when they cannot be found there the whole load range is captured. Any
/// enumeration or query failure is an error (memory never discovered is never restored).
pub fn code_object_segments(
    rt: Runtime,
    agent: hsa_agent_t,
    held: &ExecutablesHeld<'_>,
) -> Result<Vec<Region>, HsaError> {
    // Taken out while the enumeration runs; an enumeration that fails reads every image again.
    let known = WRITABLE.lock().remove(&agent.handle).unwrap_or_default();
    let mut found = ImageRanges::new();
    let mut out = Vec::new();
    for exe in executables(rt)? {
        let lcos = loaded_code_objects(rt, exe)?;
        if lcos.is_empty() {
            continue;
        }
        let executable = ExecutableRef {
            handle: exe.handle,
            serial: held.observe(exe.handle),
        };
        for lco in lcos {
            let Some((base, size)) = agent_image(rt, lco, agent)? else {
                continue;
            };
            let key = (executable.serial, base, size);
            let read = known
                .get(&key)
                .cloned()
                .or_else(|| image_writable_ranges(rt, base, size));
            // An image that could not be read is captured whole, and read again next time.
            let ranges = read.clone().unwrap_or_else(|| whole_image(size));
            for r in ranges.iter() {
                let end = r.end.min(size);
                if r.start >= end {
                    continue;
                }
                out.push(Region {
                    kind: RegionKind::CodeObjectSegment { executable },
                    device: (base + r.start) as usize,
                    size: (end - r.start) as usize,
                });
            }
            if let Some(ranges) = read {
                found.insert(key, ranges);
            }
        }
    }
    WRITABLE.lock().insert(agent.handle, found);
    Ok(out)
}

/// The writable ranges of the image loaded at `base` (`size` bytes), from its program headers,
/// or the whole load range when it holds none; `None` when the image cannot be read.
fn image_writable_ranges(rt: Runtime, base: u64, size: u64) -> Option<Arc<[Range<u64>]>> {
    let probe = read_image(rt, base, HEADER_PROBE_BYTES.min(size as usize))?;
    Some(writable_ranges(&probe).map_or_else(
        || {
            tracing::debug!(
                "code object at {base:#x}: no program headers in its image; capturing its whole load range"
            );
            whole_image(size)
        },
        Arc::from,
    ))
}

/// The whole load range of an image of `size` bytes.
fn whole_image(size: u64) -> Arc<[Range<u64>]> {
    #[allow(clippy::single_range_in_vec_init)]
    Arc::new([0..size])
}

fn symbols(
    rt: Runtime,
    exe: hsa_executable_t,
    agent: hsa_agent_t,
) -> Result<Vec<hsa_executable_symbol_t>, HsaError> {
    unsafe extern "C" fn collect(
        _: hsa_executable_t,
        _: hsa_agent_t,
        s: hsa_executable_symbol_t,
        data: *mut c_void,
    ) -> hsa_status_t {
        // SAFETY: `data` is the Vec passed below, alive for the call.
        let v = unsafe { &mut *data.cast::<Vec<hsa_executable_symbol_t>>() };
        v.push(s);
        ffi::HSA_STATUS_SUCCESS
    }
    let mut v: Vec<hsa_executable_symbol_t> = Vec::new();
    // SAFETY: the callback only pushes into `v`, which outlives the call.
    let st = unsafe {
        (rt.originals().executable_iterate_agent_symbols)(
            exe,
            agent,
            Some(collect),
            (&mut v as *mut Vec<hsa_executable_symbol_t>).cast(),
        )
    };
    if st != ffi::HSA_STATUS_SUCCESS {
        return Err(HsaError {
            call: "hsa_executable_iterate_agent_symbols",
            status: st,
        });
    }
    Ok(v)
}

fn info<T: Default>(
    rt: Runtime,
    s: hsa_executable_symbol_t,
    attr: ffi::hsa_executable_symbol_info_t,
) -> Option<T> {
    let mut v = T::default();
    // SAFETY: `attr` is one whose value has type `T` (checked at each call site).
    let st =
        unsafe { (rt.originals().executable_symbol_get_info)(s, attr, (&mut v as *mut T).cast()) };
    (st == ffi::HSA_STATUS_SUCCESS).then_some(v)
}

fn symbol_name(rt: Runtime, s: hsa_executable_symbol_t) -> Option<String> {
    let len: u32 = info(rt, s, ffi::HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH)?;
    let mut buf = vec![0u8; len as usize + 1];
    // SAFETY: the buffer holds NAME_LENGTH bytes plus one.
    let st = unsafe {
        (rt.originals().executable_symbol_get_info)(
            s,
            ffi::HSA_EXECUTABLE_SYMBOL_INFO_NAME,
            buf.as_mut_ptr().cast(),
        )
    };
    if st != ffi::HSA_STATUS_SUCCESS {
        return None;
    }
    buf.truncate(len as usize);
    if let Some(end) = buf.iter().position(|&b| b == 0) {
        buf.truncate(end);
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Module-scope variables visible to `agent`, as snapshot regions tagged with their executable.
/// Any enumeration or query failure is an error (a variable never discovered is never restored).
pub fn module_variables(
    rt: Runtime,
    agent: hsa_agent_t,
    held: &ExecutablesHeld<'_>,
) -> Result<Vec<Region>, HsaError> {
    let query = |s, attr, call| -> Result<u64, HsaError> {
        let mut v = 0u64;
        // SAFETY: every attribute queried here has a value of at most 8 bytes, written into a
        // zeroed u64 (little-endian: a narrower value lands in the low bytes).
        let st = unsafe {
            (rt.originals().executable_symbol_get_info)(s, attr, (&mut v as *mut u64).cast())
        };
        if st == ffi::HSA_STATUS_SUCCESS {
            Ok(v)
        } else {
            Err(HsaError { call, status: st })
        }
    };
    let mut out = Vec::new();
    for exe in executables(rt)? {
        let mut executable = None;
        for s in symbols(rt, exe, agent)? {
            let kind = query(
                s,
                ffi::HSA_EXECUTABLE_SYMBOL_INFO_TYPE,
                "hsa_executable_symbol_get_info(TYPE)",
            )?;
            if kind != u64::from(ffi::HSA_SYMBOL_KIND_VARIABLE) {
                continue;
            }
            let addr = query(
                s,
                ffi::HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS,
                "hsa_executable_symbol_get_info(VARIABLE_ADDRESS)",
            )?;
            let size = query(
                s,
                ffi::HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE,
                "hsa_executable_symbol_get_info(VARIABLE_SIZE)",
            )?;
            let size = size & u64::from(u32::MAX);
            if addr == 0 || size == 0 || size > MAX_VARIABLE_BYTES {
                continue;
            }
            let name = symbol_name(rt, s).unwrap_or_default();
            let executable = *executable.get_or_insert_with(|| ExecutableRef {
                handle: exe.handle,
                serial: held.observe(exe.handle),
            });
            out.push(Region {
                kind: RegionKind::ModuleVariable {
                    name,
                    executable: Some(executable),
                },
                device: addr as usize,
                size: size as usize,
            });
        }
    }
    Ok(out)
}

/// Kernel object -> (executable, name), per agent, cached and rebuilt on a miss. Scans run
/// while [`EXECUTABLES`] holds off destruction, and a destroyed executable's names are dropped
/// ([`KernelNames::forget_executable`]), so a kernel object reused by a later executable is
/// never reported under a stale name.
///
/// A kernel object the scan did not find is remembered as a miss, so its next dispatches do not
/// rescan every executable; the misses are forgotten when an executable is frozen (its kernels
/// become dispatchable, [`KernelNames::executables_changed`]) or destroyed.
#[derive(Default)]
pub struct KernelNames {
    by_agent: Mutex<HashMap<u64, NamesOfAgent>>,
    /// `(agent, kernel object)` pairs the last scans did not find.
    misses: Mutex<HashSet<(u64, u64)>>,
    /// Bumped at every freeze or destruction; a scan started before a bump records no miss.
    generation: AtomicU64,
    /// The kernels with replay traits, per loaded code object `(executable, load base)`;
    /// `None` when its image holds no readable metadata note.
    traits: Mutex<HashMap<(u64, u64), Option<TraitsOfCodeObject>>>,
}

/// The last name resolved on a queue: `(generation, kernel object, name)`.
pub type LastName = Option<(u64, u64, Option<Arc<CString>>)>;

/// Most misses remembered; beyond, the set starts over (each miss costs one more scan).
const MAX_MISSES: usize = 4096;

/// Kernel object -> (executable handle, name, kernarg segment size in bytes; 0 when the loader
/// does not say).
type NamesOfAgent = HashMap<u64, (u64, Arc<CString>, u32)>;

impl KernelNames {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every name (the executables of the previous runtime instance are gone).
    pub fn forget_all(&self) {
        self.by_agent.lock().clear();
        self.traits.lock().clear();
        self.executables_changed();
    }

    /// The name of `kernel_object` on `agent`; `None` when the loader does not know it.
    pub fn resolve(
        &self,
        rt: Runtime,
        agent: hsa_agent_t,
        kernel_object: u64,
    ) -> Option<Arc<CString>> {
        if let Some((_, n, _)) = self
            .by_agent
            .lock()
            .get(&agent.handle)
            .and_then(|m| m.get(&kernel_object))
        {
            return Some(n.clone());
        }
        if self.misses.lock().contains(&(agent.handle, kernel_object)) {
            return None;
        }
        let generation = self.generation.load(Ordering::Acquire);
        // No executable is destroyed between the scan and the cache update.
        let _held = EXECUTABLES.hold();
        let fresh = Self::scan(rt, agent);
        let mut map = self.by_agent.lock();
        let entry = map.entry(agent.handle).or_default();
        entry.extend(fresh);
        let found = entry.get(&kernel_object).map(|(_, n, _)| n.clone());
        drop(map);
        if found.is_none() {
            let mut misses = self.misses.lock();
            // Checked under the lock `executables_changed` clears under: a freeze during the
            // scan leaves no stale miss.
            if self.generation.load(Ordering::Acquire) == generation {
                if misses.len() >= MAX_MISSES {
                    misses.clear();
                }
                misses.insert((agent.handle, kernel_object));
            }
        }
        found
    }

    /// [`KernelNames::resolve`] through `last`, the last answer on one queue: a queue that
    /// dispatches the same kernel again skips the shared maps. The answer is reused only while no
    /// executable was frozen or destroyed since.
    pub fn resolve_through(
        &self,
        rt: Runtime,
        agent: hsa_agent_t,
        kernel_object: u64,
        last: &Mutex<LastName>,
    ) -> Option<Arc<CString>> {
        let generation = self.generation.load(Ordering::Acquire);
        {
            let l = last.lock();
            if let Some((g, k, name)) = l.as_ref()
                && *g == generation
                && *k == kernel_object
            {
                return name.clone();
            }
        }
        let name = self.resolve(rt, agent, kernel_object);
        *last.lock() = Some((generation, kernel_object, name.clone()));
        name
    }

    /// The kernarg segment size the loader gave for `kernel_object` on `agent`, when its name was
    /// resolved and the size is known (not 0).
    pub fn kernarg_size(&self, agent: hsa_agent_t, kernel_object: u64) -> Option<u32> {
        self.by_agent
            .lock()
            .get(&agent.handle)
            .and_then(|m| m.get(&kernel_object))
            .map(|(_, _, k)| *k)
            .filter(|&k| k > 0)
    }

    /// The replay traits of the kernel of `kernel_object` on `agent`, as the metadata note of
    /// its loaded code object says; `None` when its name was not resolved or the note cannot be
    /// read. Each code object's note is read once.
    pub fn replay_traits(
        &self,
        rt: Runtime,
        agent: hsa_agent_t,
        kernel_object: u64,
    ) -> Option<ReplayTraits> {
        // Names are forgotten under the destruction barrier: a name found under it belongs
        // to a live executable.
        let _held = EXECUTABLES.hold();
        let (exe, name) = {
            let names = self.by_agent.lock();
            let (exe, name, _) = names.get(&agent.handle)?.get(&kernel_object)?;
            (*exe, name.clone())
        };
        let lcos = loaded_code_objects(rt, hsa_executable_t { handle: exe }).ok()?;
        let (base, size) = lcos.into_iter().find_map(|lco| {
            let (base, size) = agent_image(rt, lco, agent).ok()??;
            (base..base.saturating_add(size))
                .contains(&kernel_object)
                .then_some((base, size))
        })?;
        let known = self.traits.lock().get(&(exe, base)).cloned();
        let kernels = known.unwrap_or_else(|| {
            let found = traits_of(rt, base, size).map(Arc::new);
            if found.is_none() {
                tracing::debug!(
                    "code object at {base:#x}: no metadata note in its image; its kernels' host calls and cooperative launches are unknown"
                );
            }
            self.traits.lock().insert((exe, base), found.clone());
            found
        })?;
        Some(
            kernels
                .get(name.to_str().ok()?)
                .copied()
                .unwrap_or_default(),
        )
    }

    /// An executable was frozen or destroyed: kernel objects not found so far may resolve now.
    pub fn executables_changed(&self) {
        let mut misses = self.misses.lock();
        self.generation.fetch_add(1, Ordering::AcqRel);
        misses.clear();
    }

    /// Drops the names of the kernels of a destroyed executable.
    pub fn forget_executable(&self, executable: u64) {
        for names in self.by_agent.lock().values_mut() {
            names.retain(|_, (exe, _, _)| *exe != executable);
        }
        self.traits.lock().retain(|&(exe, _), _| exe != executable);
        self.executables_changed();
    }

    fn scan(rt: Runtime, agent: hsa_agent_t) -> NamesOfAgent {
        let mut out = HashMap::new();
        let Ok(exes) = executables(rt) else {
            return out;
        };
        for exe in exes {
            let Ok(syms) = symbols(rt, exe, agent) else {
                continue;
            };
            for s in syms {
                let kind: Option<ffi::hsa_symbol_kind_t> =
                    info(rt, s, ffi::HSA_EXECUTABLE_SYMBOL_INFO_TYPE);
                if kind != Some(ffi::HSA_SYMBOL_KIND_KERNEL) {
                    continue;
                }
                let Some(obj) = info::<u64>(rt, s, ffi::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT)
                else {
                    continue;
                };
                let Some(name) = symbol_name(rt, s) else {
                    continue;
                };
                // Code-object kernel symbols name the kernel descriptor (`<kernel>.kd`).
                let name = name.strip_suffix(KERNEL_DESCRIPTOR_SUFFIX).unwrap_or(&name);
                let kernarg: u32 = info(
                    rt,
                    s,
                    ffi::HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                )
                .unwrap_or(0);
                if let Ok(c) = CString::new(name) {
                    out.insert(obj, (exe.handle, Arc::new(c), kernarg));
                }
            }
        }
        out
    }
}
