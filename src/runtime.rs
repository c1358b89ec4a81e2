//! The runtime's original entries, saved from the API table at `OnLoad`.
//!
//! The tool's own HSA calls go through [`Runtime`], never through the (wrapped) table, so they
//! never re-enter the interceptors. Each method turns an HSA status into [`HsaError`]. Every
//! `OnLoad` (one per runtime instance: `hsa_init` after `hsa_shut_down` loads the tool again)
//! saves the entries of its table.

use crate::sync::{AtomicPtr, LazyLock, Mutex, Ordering, RwLock};
use hsa_abi::ffi::{self, hsa_agent_t, hsa_queue_t, hsa_signal_t, hsa_status_t};
use hsa_abi::{AmdExtTable, CoreApiTable, ImageExtTable, SlotError, TablePtr, read_slot};
use std::collections::HashMap;
use std::ffi::c_void;

/// An HSA call that returned an error status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} returned HSA status {status:#x}")]
pub struct HsaError {
    /// The HSA function.
    pub call: &'static str,
    /// Its status.
    pub status: hsa_status_t,
}

fn check(call: &'static str, status: hsa_status_t) -> Result<(), HsaError> {
    if status == ffi::HSA_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(HsaError { call, status })
    }
}

/// Why the API table cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// A table the tool needs is absent.
    #[error("the runtime's API table has no {0} table")]
    Missing(&'static str),
    /// Major mismatch or slot past the end.
    #[error(transparent)]
    Slot(#[from] SlotError),
    /// The slot exists but is NULL.
    #[error("the runtime's {0} entry is NULL")]
    NullEntry(&'static str),
}

macro_rules! required {
    ($table:expr, $ty:ty, $field:ident) => {
        read_slot!($table, $ty, $field)?.ok_or(TableError::NullEntry(stringify!($field)))?
    };
}

/// Typed original entries. Plain function pointers: `Copy`, `Send`, `Sync`.
#[allow(missing_docs)]
#[derive(Clone, Copy)]
pub struct Originals {
    pub queue_create: unsafe extern "C" fn(
        hsa_agent_t,
        u32,
        ffi::hsa_queue_type32_t,
        Option<unsafe extern "C" fn(hsa_status_t, *mut hsa_queue_t, *mut c_void)>,
        *mut c_void,
        u32,
        u32,
        *mut *mut hsa_queue_t,
    ) -> hsa_status_t,
    pub queue_destroy: unsafe extern "C" fn(*mut hsa_queue_t) -> hsa_status_t,
    pub memory_allocate:
        unsafe extern "C" fn(ffi::hsa_region_t, usize, *mut *mut c_void) -> hsa_status_t,
    pub memory_free: unsafe extern "C" fn(*mut c_void) -> hsa_status_t,
    pub memory_copy: unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> hsa_status_t,
    pub signal_destroy: unsafe extern "C" fn(hsa_signal_t) -> hsa_status_t,
    pub signal_load_scacquire: unsafe extern "C" fn(hsa_signal_t) -> ffi::hsa_signal_value_t,
    pub signal_store_relaxed: unsafe extern "C" fn(hsa_signal_t, ffi::hsa_signal_value_t),
    pub signal_store_screlease: unsafe extern "C" fn(hsa_signal_t, ffi::hsa_signal_value_t),
    pub signal_silent_store_relaxed: unsafe extern "C" fn(hsa_signal_t, ffi::hsa_signal_value_t),
    pub signal_silent_store_screlease: unsafe extern "C" fn(hsa_signal_t, ffi::hsa_signal_value_t),
    pub signal_add_screlease: unsafe extern "C" fn(hsa_signal_t, ffi::hsa_signal_value_t),
    pub signal_subtract_screlease: unsafe extern "C" fn(hsa_signal_t, ffi::hsa_signal_value_t),
    pub signal_wait_scacquire: unsafe extern "C" fn(
        hsa_signal_t,
        ffi::hsa_signal_condition_t,
        ffi::hsa_signal_value_t,
        u64,
        ffi::hsa_wait_state_t,
    ) -> ffi::hsa_signal_value_t,
    pub agent_get_info:
        unsafe extern "C" fn(hsa_agent_t, ffi::hsa_agent_info_t, *mut c_void) -> hsa_status_t,
    pub executable_iterate_agent_symbols: unsafe extern "C" fn(
        ffi::hsa_executable_t,
        hsa_agent_t,
        Option<
            unsafe extern "C" fn(
                ffi::hsa_executable_t,
                hsa_agent_t,
                ffi::hsa_executable_symbol_t,
                *mut c_void,
            ) -> hsa_status_t,
        >,
        *mut c_void,
    ) -> hsa_status_t,
    pub executable_symbol_get_info: unsafe extern "C" fn(
        ffi::hsa_executable_symbol_t,
        ffi::hsa_executable_symbol_info_t,
        *mut c_void,
    ) -> hsa_status_t,
    pub system_get_major_extension_table:
        unsafe extern "C" fn(u16, u16, usize, *mut c_void) -> hsa_status_t,
    // Snapshot coverage: executable lifetimes and peer access.
    pub executable_destroy: unsafe extern "C" fn(ffi::hsa_executable_t) -> hsa_status_t,
    pub executable_freeze:
        unsafe extern "C" fn(ffi::hsa_executable_t, *const std::ffi::c_char) -> hsa_status_t,
    pub agents_allow_access:
        unsafe extern "C" fn(u32, *const hsa_agent_t, *const u32, *const c_void) -> hsa_status_t,
    pub pool_allocate: unsafe extern "C" fn(
        ffi::hsa_amd_memory_pool_t,
        usize,
        u32,
        *mut *mut c_void,
    ) -> hsa_status_t,
    pub pool_free: unsafe extern "C" fn(*mut c_void) -> hsa_status_t,
    pub pointer_info: unsafe extern "C" fn(
        *const c_void,
        *mut ffi::hsa_amd_pointer_info_t,
        Option<unsafe extern "C" fn(usize) -> *mut c_void>,
        *mut u32,
        *mut *mut hsa_agent_t,
    ) -> hsa_status_t,
    pub amd_signal_create: unsafe extern "C" fn(
        ffi::hsa_signal_value_t,
        u32,
        *const hsa_agent_t,
        u64,
        *mut hsa_signal_t,
    ) -> hsa_status_t,
    pub signal_async_handler: unsafe extern "C" fn(
        hsa_signal_t,
        ffi::hsa_signal_condition_t,
        ffi::hsa_signal_value_t,
        ffi::hsa_amd_signal_handler,
        *mut c_void,
    ) -> hsa_status_t,
    pub intercept_create: unsafe extern "C" fn(
        hsa_agent_t,
        u32,
        ffi::hsa_queue_type32_t,
        hsa_abi::modern::hsa_queue_error_callback,
        *mut c_void,
        u32,
        u32,
        *mut *mut hsa_queue_t,
    ) -> hsa_status_t,
    pub intercept_register: unsafe extern "C" fn(
        *mut hsa_queue_t,
        hsa_abi::modern::hsa_amd_queue_intercept_handler,
        *mut c_void,
    ) -> hsa_status_t,
    pub profiler_enable: unsafe extern "C" fn(*mut hsa_queue_t, i32) -> hsa_status_t,
    pub dispatch_time: unsafe extern "C" fn(
        hsa_agent_t,
        hsa_signal_t,
        *mut ffi::hsa_amd_profiling_dispatch_time_t,
    ) -> hsa_status_t,
    pub tick_to_system: unsafe extern "C" fn(hsa_agent_t, u64, *mut u64) -> hsa_status_t,
    // Entries of the snapshot stores: optional (absent or NULL in the table: the store that
    // needs one is not used; device copies use `host_writes.async_copy`).
    pub memory_lock: ffi::hsa_amd_memory_lock_fn_t,
    pub memory_unlock: ffi::hsa_amd_memory_unlock_fn_t,
    pub memory_lock_to_pool: ffi::hsa_amd_memory_lock_to_pool_fn_t,
    pub agent_iterate_memory_pools: ffi::hsa_amd_agent_iterate_memory_pools_fn_t,
    pub memory_pool_get_info: ffi::hsa_amd_memory_pool_get_info_fn_t,
    /// Host writes into device memory, wrapped when the table has them.
    pub host_writes: HostWriteEntries,
    /// Loading and dispatching the tool's own kernel, and listing agents (each optional).
    pub kernel: KernelEntries,
    /// Virtual-memory entries, wrapped when the table has them.
    pub vmem: VmemEntries,
    /// Entries that map memory shared with other processes or APIs, wrapped when present.
    pub shared: SharedMemoryEntries,
    /// Image entries that create images or write their texels from the host, wrapped when the
    /// runtime has the image extension.
    pub images: ImageEntries,
}

/// The runtime's entries that map memory another process or API also writes: IPC import and
/// interop buffers (each optional).
#[allow(missing_docs)]
#[derive(Clone, Copy, Default)]
pub struct SharedMemoryEntries {
    pub ipc_attach: ffi::hsa_amd_ipc_memory_attach_fn_t,
    pub ipc_detach: ffi::hsa_amd_ipc_memory_detach_fn_t,
    pub interop_map: ffi::hsa_amd_interop_map_buffer_fn_t,
    pub interop_unmap: ffi::hsa_amd_interop_unmap_buffer_fn_t,
}

impl SharedMemoryEntries {
    fn read(amd: TablePtr<AmdExtTable>) -> Self {
        Self {
            ipc_attach: read_slot!(amd, AmdExtTable, hsa_amd_ipc_memory_attach_fn)
                .ok()
                .flatten(),
            ipc_detach: read_slot!(amd, AmdExtTable, hsa_amd_ipc_memory_detach_fn)
                .ok()
                .flatten(),
            interop_map: read_slot!(amd, AmdExtTable, hsa_amd_interop_map_buffer_fn)
                .ok()
                .flatten(),
            interop_unmap: read_slot!(amd, AmdExtTable, hsa_amd_interop_unmap_buffer_fn)
                .ok()
                .flatten(),
        }
    }
}

/// The runtime's entries that load and dispatch the tool's own kernel, and `hsa_iterate_agents`
/// (also used to find the agent owning a virtual-memory handle's pool). Each optional: absent or
/// NULL, the device hashing is not used and such regions are restored whole.
#[allow(missing_docs)]
#[derive(Clone, Copy, Default)]
pub struct KernelEntries {
    pub iterate_agents: ffi::hsa_iterate_agents_fn_t,
    pub reader_create_from_memory: ffi::hsa_code_object_reader_create_from_memory_fn_t,
    pub reader_destroy: ffi::hsa_code_object_reader_destroy_fn_t,
    pub executable_create_alt: ffi::hsa_executable_create_alt_fn_t,
    pub load_agent_code_object: ffi::hsa_executable_load_agent_code_object_fn_t,
    pub get_symbol_by_name: ffi::hsa_executable_get_symbol_by_name_fn_t,
    pub add_write_index: ffi::hsa_queue_add_write_index_scacq_screl_fn_t,
    pub load_read_index: ffi::hsa_queue_load_read_index_scacquire_fn_t,
}

/// The runtime's virtual-memory entries the tool wraps (each optional).
#[allow(missing_docs)]
#[derive(Clone, Copy, Default)]
pub struct VmemEntries {
    pub handle_create: hsa_abi::modern::hsa_amd_vmem_handle_create_fn_t,
    pub handle_release: hsa_abi::modern::hsa_amd_vmem_handle_release_fn_t,
    pub map: hsa_abi::modern::hsa_amd_vmem_map_fn_t,
    pub unmap: hsa_abi::modern::hsa_amd_vmem_unmap_fn_t,
    pub set_access: hsa_abi::modern::hsa_amd_vmem_set_access_fn_t,
}

/// The image extension's entries the tool wraps (each optional; all absent without the
/// extension): creation and destruction, to know where each image's texels are, and the host
/// writes into them.
#[allow(missing_docs)]
#[derive(Clone, Copy, Default)]
pub struct ImageEntries {
    pub create: ffi::hsa_ext_image_create_fn_t,
    pub create_with_layout: ffi::hsa_ext_image_create_with_layout_fn_t,
    pub destroy: ffi::hsa_ext_image_destroy_fn_t,
    pub import: ffi::hsa_ext_image_import_fn_t,
    pub copy: ffi::hsa_ext_image_copy_fn_t,
    pub clear: ffi::hsa_ext_image_clear_fn_t,
}

impl ImageEntries {
    /// The entries of the runtime's image table, if it has one of the expected major.
    pub fn read(image: Option<TablePtr<ImageExtTable>>) -> Self {
        let Some(t) = image.filter(|t| t.check_major(hsa_abi::IMAGE_MAJOR).is_ok()) else {
            return Self::default();
        };
        Self {
            create: read_slot!(t, ImageExtTable, hsa_ext_image_create_fn)
                .ok()
                .flatten(),
            create_with_layout: read_slot!(t, ImageExtTable, hsa_ext_image_create_with_layout_fn)
                .ok()
                .flatten(),
            destroy: read_slot!(t, ImageExtTable, hsa_ext_image_destroy_fn)
                .ok()
                .flatten(),
            import: read_slot!(t, ImageExtTable, hsa_ext_image_import_fn)
                .ok()
                .flatten(),
            copy: read_slot!(t, ImageExtTable, hsa_ext_image_copy_fn)
                .ok()
                .flatten(),
            clear: read_slot!(t, ImageExtTable, hsa_ext_image_clear_fn)
                .ok()
                .flatten(),
        }
    }
}

/// The runtime's entries that write device memory from the host (each optional).
#[allow(missing_docs)]
#[derive(Clone, Copy, Default)]
pub struct HostWriteEntries {
    pub memory_fill: ffi::hsa_amd_memory_fill_fn_t,
    pub async_copy: ffi::hsa_amd_memory_async_copy_fn_t,
    pub async_copy_on_engine: hsa_abi::modern::hsa_amd_memory_async_copy_on_engine_fn_t,
    pub async_copy_rect: ffi::hsa_amd_memory_async_copy_rect_fn_t,
}

impl Originals {
    /// Reads every entry the tool uses, checking majors and slot coverage.
    pub fn read(
        core: TablePtr<CoreApiTable>,
        amd: TablePtr<AmdExtTable>,
    ) -> Result<Self, TableError> {
        core.check_major(hsa_abi::CORE_MAJOR)?;
        amd.check_major(hsa_abi::AMD_EXT_MAJOR)?;
        Ok(Self {
            queue_create: required!(core, CoreApiTable, hsa_queue_create_fn),
            queue_destroy: required!(core, CoreApiTable, hsa_queue_destroy_fn),
            memory_allocate: required!(core, CoreApiTable, hsa_memory_allocate_fn),
            memory_free: required!(core, CoreApiTable, hsa_memory_free_fn),
            memory_copy: required!(core, CoreApiTable, hsa_memory_copy_fn),
            signal_destroy: required!(core, CoreApiTable, hsa_signal_destroy_fn),
            signal_load_scacquire: required!(core, CoreApiTable, hsa_signal_load_scacquire_fn),
            signal_store_relaxed: required!(core, CoreApiTable, hsa_signal_store_relaxed_fn),
            signal_store_screlease: required!(core, CoreApiTable, hsa_signal_store_screlease_fn),
            signal_silent_store_relaxed: required!(
                core,
                CoreApiTable,
                hsa_signal_silent_store_relaxed_fn
            ),
            signal_silent_store_screlease: required!(
                core,
                CoreApiTable,
                hsa_signal_silent_store_screlease_fn
            ),
            signal_add_screlease: required!(core, CoreApiTable, hsa_signal_add_screlease_fn),
            signal_subtract_screlease: required!(
                core,
                CoreApiTable,
                hsa_signal_subtract_screlease_fn
            ),
            signal_wait_scacquire: required!(core, CoreApiTable, hsa_signal_wait_scacquire_fn),
            agent_get_info: required!(core, CoreApiTable, hsa_agent_get_info_fn),
            executable_iterate_agent_symbols: required!(
                core,
                CoreApiTable,
                hsa_executable_iterate_agent_symbols_fn
            ),
            executable_symbol_get_info: required!(
                core,
                CoreApiTable,
                hsa_executable_symbol_get_info_fn
            ),
            system_get_major_extension_table: required!(
                core,
                CoreApiTable,
                hsa_system_get_major_extension_table_fn
            ),
            executable_destroy: required!(core, CoreApiTable, hsa_executable_destroy_fn),
            executable_freeze: required!(core, CoreApiTable, hsa_executable_freeze_fn),
            agents_allow_access: required!(amd, AmdExtTable, hsa_amd_agents_allow_access_fn),
            pool_allocate: required!(amd, AmdExtTable, hsa_amd_memory_pool_allocate_fn),
            pool_free: required!(amd, AmdExtTable, hsa_amd_memory_pool_free_fn),
            pointer_info: required!(amd, AmdExtTable, hsa_amd_pointer_info_fn),
            amd_signal_create: required!(amd, AmdExtTable, hsa_amd_signal_create_fn),
            signal_async_handler: required!(amd, AmdExtTable, hsa_amd_signal_async_handler_fn),
            intercept_create: required!(amd, AmdExtTable, hsa_amd_queue_intercept_create_fn),
            intercept_register: required!(amd, AmdExtTable, hsa_amd_queue_intercept_register_fn),
            profiler_enable: required!(amd, AmdExtTable, hsa_amd_profiling_set_profiler_enabled_fn),
            dispatch_time: required!(amd, AmdExtTable, hsa_amd_profiling_get_dispatch_time_fn),
            tick_to_system: required!(
                amd,
                AmdExtTable,
                hsa_amd_profiling_convert_tick_to_system_domain_fn
            ),
            memory_lock: read_slot!(amd, AmdExtTable, hsa_amd_memory_lock_fn)
                .ok()
                .flatten(),
            memory_unlock: read_slot!(amd, AmdExtTable, hsa_amd_memory_unlock_fn)
                .ok()
                .flatten(),
            memory_lock_to_pool: read_slot!(amd, AmdExtTable, hsa_amd_memory_lock_to_pool_fn)
                .ok()
                .flatten(),
            agent_iterate_memory_pools: read_slot!(
                amd,
                AmdExtTable,
                hsa_amd_agent_iterate_memory_pools_fn
            )
            .ok()
            .flatten(),
            memory_pool_get_info: read_slot!(amd, AmdExtTable, hsa_amd_memory_pool_get_info_fn)
                .ok()
                .flatten(),
            host_writes: HostWriteEntries {
                memory_fill: read_slot!(amd, AmdExtTable, hsa_amd_memory_fill_fn)
                    .ok()
                    .flatten(),
                async_copy: read_slot!(amd, AmdExtTable, hsa_amd_memory_async_copy_fn)
                    .ok()
                    .flatten(),
                async_copy_on_engine: read_slot!(
                    amd,
                    AmdExtTable,
                    hsa_amd_memory_async_copy_on_engine_fn
                )
                .ok()
                .flatten(),
                async_copy_rect: read_slot!(amd, AmdExtTable, hsa_amd_memory_async_copy_rect_fn)
                    .ok()
                    .flatten(),
            },
            kernel: KernelEntries {
                iterate_agents: read_slot!(core, CoreApiTable, hsa_iterate_agents_fn)
                    .ok()
                    .flatten(),
                reader_create_from_memory: read_slot!(
                    core,
                    CoreApiTable,
                    hsa_code_object_reader_create_from_memory_fn
                )
                .ok()
                .flatten(),
                reader_destroy: read_slot!(core, CoreApiTable, hsa_code_object_reader_destroy_fn)
                    .ok()
                    .flatten(),
                executable_create_alt: read_slot!(core, CoreApiTable, hsa_executable_create_alt_fn)
                    .ok()
                    .flatten(),
                load_agent_code_object: read_slot!(
                    core,
                    CoreApiTable,
                    hsa_executable_load_agent_code_object_fn
                )
                .ok()
                .flatten(),
                get_symbol_by_name: read_slot!(
                    core,
                    CoreApiTable,
                    hsa_executable_get_symbol_by_name_fn
                )
                .ok()
                .flatten(),
                add_write_index: read_slot!(
                    core,
                    CoreApiTable,
                    hsa_queue_add_write_index_scacq_screl_fn
                )
                .ok()
                .flatten(),
                load_read_index: read_slot!(
                    core,
                    CoreApiTable,
                    hsa_queue_load_read_index_scacquire_fn
                )
                .ok()
                .flatten(),
            },
            vmem: VmemEntries {
                handle_create: read_slot!(amd, AmdExtTable, hsa_amd_vmem_handle_create_fn)
                    .ok()
                    .flatten(),
                handle_release: read_slot!(amd, AmdExtTable, hsa_amd_vmem_handle_release_fn)
                    .ok()
                    .flatten(),
                map: read_slot!(amd, AmdExtTable, hsa_amd_vmem_map_fn)
                    .ok()
                    .flatten(),
                unmap: read_slot!(amd, AmdExtTable, hsa_amd_vmem_unmap_fn)
                    .ok()
                    .flatten(),
                set_access: read_slot!(amd, AmdExtTable, hsa_amd_vmem_set_access_fn)
                    .ok()
                    .flatten(),
            },
            shared: SharedMemoryEntries::read(amd),
            images: ImageEntries::default(),
        })
    }
}

/// The originals of the latest `OnLoad`; points into [`SAVED`].
static ORIGINALS: AtomicPtr<Originals> = AtomicPtr::new(std::ptr::null_mut());

/// Every set of originals saved in the process (one per runtime instance, a few hundred bytes
/// each), never freed: a thread still inside an interceptor of the previous instance may hold
/// its set.
#[allow(clippy::vec_box)] // each box keeps its address when the Vec grows
static SAVED: Mutex<Vec<Box<Originals>>> = Mutex::new(Vec::new());

/// Agent handle -> "is a GPU", filled by [`Runtime::agent_is_gpu`]; emptied by a new runtime
/// instance, whose handles may name other agents.
static AGENT_KINDS: LazyLock<RwLock<HashMap<u64, bool>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// Saves the originals of a new runtime instance.
pub fn install(o: Originals) {
    AGENT_KINDS.write().clear();
    let mut saved = SAVED.lock();
    saved.push(Box::new(o));
    let current: *const Originals = &**saved.last().expect("just pushed");
    ORIGINALS.store(current.cast_mut(), Ordering::Release);
}

/// The saved originals, once `OnLoad` succeeded.
#[inline]
pub fn originals() -> Option<&'static Originals> {
    // SAFETY: a non-NULL pointer points into a box of `SAVED`, never freed or moved.
    unsafe { ORIGINALS.load(Ordering::Acquire).as_ref() }
}

/// Safe wrappers over the originals used by the tool itself.
#[derive(Clone, Copy)]
pub struct Runtime(&'static Originals);

/// What the runtime knows about a pointer (`hsa_amd_pointer_info`).
#[derive(Clone, Debug)]
pub struct PointerInfo {
    /// `HSA_EXT_POINTER_TYPE_*`.
    pub pointer_type: u32,
    /// First byte of the allocation as agents address it (0 when unknown).
    pub agent_base: usize,
    /// First byte of the allocation as the host addresses it (0 when not host-accessible).
    pub host_base: usize,
    /// Size of the allocation.
    pub size: usize,
    /// Owning agent.
    pub owner: hsa_agent_t,
    /// Global flags of its pool.
    pub global_flags: u32,
    /// Agents that may access it.
    pub access: Vec<u64>,
}

impl Runtime {
    /// The runtime, once `OnLoad` succeeded.
    pub fn get() -> Option<Self> {
        originals().map(Runtime)
    }

    /// The originals.
    pub fn originals(self) -> &'static Originals {
        self.0
    }

    /// `hsa_memory_copy` through the original entry.
    ///
    /// # Safety
    /// `dst` and `src` must be valid for `len` bytes in the runtime's address space.
    pub unsafe fn copy(
        self,
        dst: *mut c_void,
        src: *const c_void,
        len: usize,
    ) -> Result<(), HsaError> {
        // SAFETY: forwarded caller contract.
        check("hsa_memory_copy", unsafe {
            (self.0.memory_copy)(dst, src, len)
        })
    }

    /// Creates a signal with `value`, usable by any agent.
    pub fn signal_create(self, value: i64) -> Result<hsa_signal_t, HsaError> {
        let mut s = hsa_signal_t { handle: 0 };
        // SAFETY: out-pointer to a local; zero consumers means every agent.
        check("hsa_amd_signal_create", unsafe {
            (self.0.amd_signal_create)(value, 0, std::ptr::null(), 0, &mut s)
        })?;
        Ok(s)
    }

    /// Destroys a signal created by [`Runtime::signal_create`].
    pub fn signal_destroy(self, s: hsa_signal_t) {
        // SAFETY: the signal was created by the tool and is no longer waited on.
        let _ = unsafe { (self.0.signal_destroy)(s) };
    }

    /// Current value of a signal.
    pub fn signal_load(self, s: hsa_signal_t) -> i64 {
        // SAFETY: a live signal handle.
        unsafe { (self.0.signal_load_scacquire)(s) }
    }

    /// Adds `v` to a signal (release).
    pub fn signal_add(self, s: hsa_signal_t, v: i64) {
        // SAFETY: a live signal handle.
        unsafe { (self.0.signal_add_screlease)(s, v) }
    }

    /// Subtracts `v` from a signal (release).
    pub fn signal_subtract(self, s: hsa_signal_t, v: i64) {
        // SAFETY: a live signal handle.
        unsafe { (self.0.signal_subtract_screlease)(s, v) }
    }

    /// Waits until `s` < 1 or `timeout_ns` passes (a hint); returns the observed value.
    pub fn signal_wait_lt_one(self, s: hsa_signal_t, timeout_ns: u64) -> i64 {
        // SAFETY: a live signal handle.
        unsafe {
            (self.0.signal_wait_scacquire)(
                s,
                ffi::HSA_SIGNAL_CONDITION_LT,
                1,
                timeout_ns,
                ffi::HSA_WAIT_STATE_BLOCKED,
            )
        }
    }

    /// The agent's name (`gfx942`).
    pub fn agent_name(self, agent: hsa_agent_t) -> String {
        let mut buf = [0u8; 64];
        // SAFETY: HSA_AGENT_INFO_NAME writes at most 64 bytes.
        let st = unsafe {
            (self.0.agent_get_info)(agent, ffi::HSA_AGENT_INFO_NAME, buf.as_mut_ptr().cast())
        };
        if st != ffi::HSA_STATUS_SUCCESS {
            return format!("agent {:#x}", agent.handle);
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    }

    /// What `hsa_amd_pointer_info` says about the address `addr` (through the original entry),
    /// with the agents that may access it; `None` when the call fails. The runtime only looks the
    /// address up; it never dereferences it.
    pub fn pointer_info(self, addr: usize) -> Option<PointerInfo> {
        let ptr = addr as *const c_void;
        unsafe extern "C" fn malloc_for_runtime(size: usize) -> *mut c_void {
            // SAFETY: plain allocation; freed with `libc::free` below.
            unsafe { libc::malloc(size) }
        }
        let mut info = ffi::hsa_amd_pointer_info_t {
            size: std::mem::size_of::<ffi::hsa_amd_pointer_info_t>() as u32,
            ..Default::default()
        };
        let mut count: u32 = 0;
        let mut list: *mut hsa_agent_t = std::ptr::null_mut();
        // SAFETY: `info.size` is set; the runtime allocates the accessible-agent list with
        // `malloc_for_runtime` and writes `count` entries.
        let st = unsafe {
            (self.0.pointer_info)(
                ptr,
                &mut info,
                Some(malloc_for_runtime),
                &mut count,
                &mut list,
            )
        };
        let access: Vec<u64> = if !list.is_null() {
            let v = if st == ffi::HSA_STATUS_SUCCESS {
                // SAFETY: the runtime wrote `count` agents into the list it allocated.
                unsafe { std::slice::from_raw_parts(list, count as usize) }
                    .iter()
                    .map(|a| a.handle)
                    .collect()
            } else {
                Vec::new()
            };
            // SAFETY: allocated by `malloc_for_runtime`.
            unsafe { libc::free(list.cast()) };
            v
        } else {
            Vec::new()
        };
        (st == ffi::HSA_STATUS_SUCCESS).then_some(PointerInfo {
            pointer_type: info.type_,
            agent_base: info.agentBaseAddress as usize,
            host_base: info.hostBaseAddress as usize,
            size: info.sizeInBytes,
            owner: info.agentOwner,
            global_flags: info.global_flags,
            access,
        })
    }

    /// Allocates `size` bytes in `pool` through the original entry, accessible by `agent`.
    pub fn alloc_shared(
        self,
        pool: ffi::hsa_amd_memory_pool_t,
        agent: hsa_agent_t,
        size: usize,
    ) -> Result<*mut u8, String> {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; the original entry, so the buffer is not tracked.
        let st = unsafe { (self.originals().pool_allocate)(pool, size.max(64), 0, &mut p) };
        if st != ffi::HSA_STATUS_SUCCESS || p.is_null() {
            return Err(format!(
                "allocating {size} bytes in the system kernarg pool returned HSA status {st:#x}"
            ));
        }
        // SAFETY: `p` is the tool's own live allocation; one agent.
        let st = unsafe { (self.originals().agents_allow_access)(1, &agent, std::ptr::null(), p) };
        if st != ffi::HSA_STATUS_SUCCESS {
            // SAFETY: allocated above.
            let _ = unsafe { (self.originals().pool_free)(p) };
            return Err(format!(
                "hsa_amd_agents_allow_access returned HSA status {st:#x}"
            ));
        }
        Ok(p.cast())
    }

    /// The first system pool with the kernarg flag (of a CPU agent).
    pub fn kernarg_pool(self) -> Option<ffi::hsa_amd_memory_pool_t> {
        let iterate_agents = self.originals().kernel.iterate_agents?;
        struct Search {
            rt: Runtime,
            found: Option<ffi::hsa_amd_memory_pool_t>,
        }
        unsafe extern "C" fn pool_visit(
            pool: ffi::hsa_amd_memory_pool_t,
            data: *mut c_void,
        ) -> ffi::hsa_status_t {
            std::panic::catch_unwind(|| {
                // SAFETY: `data` is the `Search` of `kernarg_pool`, alive during the iteration.
                let s = unsafe { &mut *data.cast::<Search>() };
                let Some(info) = s.rt.originals().memory_pool_get_info else {
                    return ffi::HSA_STATUS_INFO_BREAK;
                };
                let (mut segment, mut flags): (ffi::hsa_amd_segment_t, u32) = (0, 0);
                // SAFETY: each attribute writes the type named in the HSA specification.
                let ok = unsafe {
                    info(
                        pool,
                        ffi::HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                        (&raw mut segment).cast(),
                    ) == ffi::HSA_STATUS_SUCCESS
                        && info(
                            pool,
                            ffi::HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                            (&raw mut flags).cast(),
                        ) == ffi::HSA_STATUS_SUCCESS
                };
                if ok
                    && segment == ffi::HSA_AMD_SEGMENT_GLOBAL
                    && flags & ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT != 0
                {
                    s.found = Some(pool);
                    return ffi::HSA_STATUS_INFO_BREAK;
                }
                ffi::HSA_STATUS_SUCCESS
            })
            .unwrap_or(ffi::HSA_STATUS_INFO_BREAK)
        }
        unsafe extern "C" fn agent_visit(
            agent: hsa_agent_t,
            data: *mut c_void,
        ) -> ffi::hsa_status_t {
            std::panic::catch_unwind(|| {
                // SAFETY: as in `pool_visit`.
                let s = unsafe { &mut *data.cast::<Search>() };
                if s.rt.agent_is_gpu(agent) {
                    return ffi::HSA_STATUS_SUCCESS;
                }
                let Some(iterate) = s.rt.originals().agent_iterate_memory_pools else {
                    return ffi::HSA_STATUS_INFO_BREAK;
                };
                // SAFETY: `data` outlives the iteration; the callback catches panics.
                unsafe { iterate(agent, Some(pool_visit), data) };
                if s.found.is_some() {
                    ffi::HSA_STATUS_INFO_BREAK
                } else {
                    ffi::HSA_STATUS_SUCCESS
                }
            })
            .unwrap_or(ffi::HSA_STATUS_INFO_BREAK)
        }
        let mut s = Search {
            rt: self,
            found: None,
        };
        // SAFETY: `s` outlives the iteration; the callbacks catch panics.
        unsafe { iterate_agents(Some(agent_visit), (&raw mut s).cast()) };
        s.found
    }

    /// A `u32` attribute of `agent` (`hsa_agent_get_info`), `None` when the runtime refuses it.
    pub fn agent_u32(self, agent: hsa_agent_t, attribute: u32) -> Option<u32> {
        let mut v: u32 = 0;
        // SAFETY: the attributes asked for through this method each write one `uint32_t`.
        let st = unsafe { (self.0.agent_get_info)(agent, attribute, (&raw mut v).cast()) };
        (st == ffi::HSA_STATUS_SUCCESS).then_some(v)
    }

    /// True when the agent is a GPU. Asked of the runtime once per agent (agents and their
    /// device types are fixed for the life of the runtime), then answered from [`AGENT_KINDS`].
    pub fn agent_is_gpu(self, agent: hsa_agent_t) -> bool {
        if let Some(&gpu) = AGENT_KINDS.read().get(&agent.handle) {
            return gpu;
        }
        let mut dev: ffi::hsa_device_type_t = 0;
        // SAFETY: HSA_AGENT_INFO_DEVICE writes one hsa_device_type_t.
        let st = unsafe {
            (self.0.agent_get_info)(
                agent,
                ffi::HSA_AGENT_INFO_DEVICE,
                (&mut dev as *mut ffi::hsa_device_type_t).cast(),
            )
        };
        if st != ffi::HSA_STATUS_SUCCESS {
            // Not cached: an unknown handle (a pointer without an owner) stays unknown.
            return false;
        }
        let gpu = dev == ffi::HSA_DEVICE_TYPE_GPU;
        AGENT_KINDS.write().insert(agent.handle, gpu);
        gpu
    }

    /// Dispatch start/end of a completed dispatch, converted to the system (host) domain.
    pub fn dispatch_times(
        self,
        agent: hsa_agent_t,
        s: hsa_signal_t,
    ) -> Result<(u64, u64), HsaError> {
        let mut t = ffi::hsa_amd_profiling_dispatch_time_t::default();
        // SAFETY: out-pointer to a local.
        check("hsa_amd_profiling_get_dispatch_time", unsafe {
            (self.0.dispatch_time)(agent, s, &mut t)
        })?;
        let (mut a, mut b) = (0u64, 0u64);
        // SAFETY: out-pointers to locals.
        unsafe {
            check(
                "hsa_amd_profiling_convert_tick_to_system_domain",
                (self.0.tick_to_system)(agent, t.start, &mut a),
            )?;
            check(
                "hsa_amd_profiling_convert_tick_to_system_domain",
                (self.0.tick_to_system)(agent, t.end, &mut b),
            )?;
        }
        Ok((a, b))
    }
}

/// Host `CLOCK_MONOTONIC` in nanoseconds (the domain of every time the tool reports).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: out-pointer to a local.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
