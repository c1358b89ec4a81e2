//! aqlprofile, loaded at run time and never linked: the v2 library
//! `libhsa-amd-aqlprofile64.so.1` when it loads and exports `aqlprofile_pmc_create_packets`
//! (what rocprofiler-sdk uses), otherwise the v1 table of the HSA vendor extension
//! `HSA_EXTENSION_AMD_AQLPROFILE` (through the runtime's original
//! `hsa_system_get_major_extension_table`). Both build the same three vendor packets per packet
//! set (`start`, `read`, `stop`) and report one value per event and sample.
//!
//! Memory the library needs (command and output buffers) is the tool's own: host-visible system
//! memory allocated through the runtime's original entries (never in the allocation inventory,
//! so never in a snapshot), made accessible to the agent and also excluded from snapshots by
//! range for as long as the packet set lives.

use crate::runtime::Runtime;
use hsa_abi::aqlprofile::{
    self as aql, aqlprofile_agent_handle_t, aqlprofile_agent_info_t,
    aqlprofile_buffer_desc_flags_t, aqlprofile_handle_t, aqlprofile_pmc_aql_packets_t,
    aqlprofile_pmc_event_t, aqlprofile_pmc_profile_t, v2_fn,
};
use hsa_abi::ffi::{
    self, hsa_agent_t, hsa_ext_amd_aql_pm4_packet_t, hsa_status_t,
    hsa_ven_amd_aqlprofile_1_00_pfn_t, hsa_ven_amd_aqlprofile_event_t,
    hsa_ven_amd_aqlprofile_info_data_t, hsa_ven_amd_aqlprofile_profile_t,
};
use std::ffi::{CString, c_void};

/// One hardware counter of one block instance: `(block id, instance, event select)`. Block ids
/// are `hsa_ven_amd_aqlprofile_block_name_t` values in both interfaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Event {
    /// Block id.
    pub block: u32,
    /// Block instance.
    pub index: u32,
    /// Event select value.
    pub id: u32,
}

/// The interface found.
pub enum Library {
    /// `aqlprofile_*` of `libhsa-amd-aqlprofile64.so.1`.
    V2(V2),
    /// The vendor extension's table.
    V1(V1),
}

/// The v2 entry points.
pub struct V2 {
    /// The library's last error, when it exports the v1 `error_string` too (ROCm's does).
    error_string: Option<aql::v1_fn::error_string_t>,
    register_agent: v2_fn::register_agent_t,
    validate: v2_fn::validate_pmc_event_t,
    get_info: v2_fn::get_pmc_info_t,
    create: v2_fn::pmc_create_packets_t,
    iterate: v2_fn::pmc_iterate_data_t,
}

/// The v1 table (the ten slots of the 1.00 table this process's header declares).
pub struct V1 {
    table: hsa_ven_amd_aqlprofile_1_00_pfn_t,
}

/// An agent as the library knows it.
#[derive(Clone, Copy, Debug)]
pub struct LibraryAgent {
    /// The runtime's agent.
    pub hsa: hsa_agent_t,
    /// Its v2 registration (v1 uses the runtime's agent).
    v2: aqlprofile_agent_handle_t,
}

/// The three packets of one counter group on one agent, and what reads their results.
pub struct PacketSet {
    /// Starts counting; goes before the dispatch (vendor-specific header, no barrier bit).
    pub start: [u8; 64],
    /// Copies the counters to the output buffer; goes after the dispatch (barrier bit set).
    pub read: [u8; 64],
    /// Stops counting; goes after `read` (barrier bit set).
    pub stop: [u8; 64],
    results: Results,
    /// The tool's buffers, kept (and excluded from snapshots) while the set lives.
    _buffers: Vec<SharedBuffer>,
}

// SAFETY: the raw pointers in a packet set point to the tool's own buffers and to profile data
// owned by the set; the library's calls on one set are serialised by its owner (one window at a
// time per agent).
unsafe impl Send for PacketSet {}
// SAFETY: as above; shared references only read.
unsafe impl Sync for PacketSet {}

enum Results {
    V2(aqlprofile_handle_t),
    V1 {
        profile: Box<hsa_ven_amd_aqlprofile_profile_t>,
        _events: Box<[hsa_ven_amd_aqlprofile_event_t]>,
    },
}

/// A buffer of the tool in system memory that the agent may access.
struct SharedBuffer {
    ptr: *mut u8,
    size: usize,
}

impl SharedBuffer {
    fn new(rt: Runtime, agent: hsa_agent_t, size: usize) -> Result<Self, String> {
        let pool = rt
            .kernarg_pool()
            .ok_or("no system memory pool for the counter buffers")?;
        let ptr = rt.alloc_shared(pool, agent, size)?;
        // SAFETY: the tool's own new allocation of at least `size` bytes.
        unsafe { std::ptr::write_bytes(ptr, 0, size) };
        let size = size.max(64);
        // Never in the inventory (original entries); excluded by range as well, so no snapshot
        // ever holds it whatever tracks the memory.
        let _ = crate::snapshot::ranges::CLIENT_RANGES
            .lock()
            .exclude(ptr as usize, size);
        Ok(Self { ptr, size })
    }
}

impl Drop for SharedBuffer {
    fn drop(&mut self) {
        let _ = crate::snapshot::ranges::CLIENT_RANGES
            .lock()
            .remove_excluded(self.ptr as usize, self.size);
        if let Some(rt) = Runtime::get() {
            // SAFETY: allocated by `alloc_shared` through the original pool entry.
            let _ = unsafe { (rt.originals().pool_free)(self.ptr.cast()) };
        }
    }
}

fn check(st: hsa_status_t, what: &str) -> Result<(), String> {
    if st == ffi::HSA_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} returned HSA status {st:#x}"))
    }
}

fn packet_bytes(p: &hsa_ext_amd_aql_pm4_packet_t, barrier: bool) -> [u8; 64] {
    let mut p = *p;
    p.header = (ffi::HSA_PACKET_TYPE_VENDOR_SPECIFIC as u16) << ffi::HSA_PACKET_HEADER_TYPE
        | u16::from(barrier) << ffi::HSA_PACKET_HEADER_BARRIER
        | (ffi::HSA_FENCE_SCOPE_SYSTEM as u16) << ffi::HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE
        | (ffi::HSA_FENCE_SCOPE_SYSTEM as u16) << ffi::HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
    p.completion_signal = ffi::hsa_signal_t { handle: 0 };
    let mut out = [0u8; 64];
    // SAFETY: a 64-byte plain-data packet (layout tests of hsa-abi pin the size).
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&raw const p).cast::<u8>(),
            out.as_mut_ptr(),
            std::mem::size_of::<hsa_ext_amd_aql_pm4_packet_t>().min(64),
        )
    };
    out
}

impl Library {
    /// Loads aqlprofile: v2 first, then the v1 table. The error says what was tried.
    pub fn load(rt: Runtime) -> Result<Self, String> {
        let v2 = V2::open();
        match v2 {
            Ok(v2) => Ok(Library::V2(v2)),
            Err(why_v2) => V1::open(rt).map(Library::V1).map_err(|why_v1| {
                format!(
                    "counter collection is unavailable: {why_v2}, and {why_v1}. Install ROCm's aqlprofile \
                     (libhsa-amd-aqlprofile64.so.1), or run on kreplay's virtual runtimes, which provide it"
                )
            }),
        }
    }

    /// How the counters are read, for messages and records.
    pub fn describe(&self) -> &'static str {
        match self {
            Library::V2(_) => "aqlprofile v2 (libhsa-amd-aqlprofile64.so.1)",
            Library::V1(_) => "aqlprofile v1 (HSA_EXTENSION_AMD_AQLPROFILE table)",
        }
    }

    /// The agent as the library knows it (v2 registers its topology).
    pub fn agent(&self, rt: Runtime, hsa: hsa_agent_t) -> Result<LibraryAgent, String> {
        let v2 = match self {
            Library::V2(l) => l.register(rt, hsa)?,
            Library::V1(_) => aqlprofile_agent_handle_t::default(),
        };
        Ok(LibraryAgent { hsa, v2 })
    }

    /// Instances of `block` on the agent (block id query); 1 when the library does not say.
    pub fn instances(&self, agent: &LibraryAgent, block: u32, block_name: &str) -> u32 {
        let Ok(name) = CString::new(block_name) else {
            return 1;
        };
        let mut q = ffi::hsa_ven_amd_aqlprofile_id_query_t {
            name: name.as_ptr(),
            id: 0,
            instance_count: 0,
        };
        let st = self.info(
            agent,
            &[],
            aql::AQLPROFILE_INFO_BLOCK_ID,
            (&raw mut q).cast(),
        );
        if st == ffi::HSA_STATUS_SUCCESS && q.id == block && q.instance_count > 0 {
            q.instance_count
        } else {
            1
        }
    }

    /// Counters `event`'s block can count in one pass, when the library says.
    pub fn block_counters(&self, agent: &LibraryAgent, event: Event) -> Option<u32> {
        let mut n: u32 = 0;
        let st = self.info(
            agent,
            &[event],
            aql::AQLPROFILE_INFO_BLOCK_COUNTERS,
            (&raw mut n).cast(),
        );
        (st == ffi::HSA_STATUS_SUCCESS).then_some(n)
    }

    /// Whether the agent can count `event`.
    pub fn validate(&self, agent: &LibraryAgent, event: Event) -> bool {
        let mut ok = false;
        let st = match self {
            Library::V2(l) => {
                let e = v2_event(event);
                // SAFETY: a registered agent, a valid event and out-pointer.
                unsafe { (l.validate)(agent.v2, &e, &mut ok) }
            }
            Library::V1(l) => {
                let e = v1_event(event);
                match l.table.hsa_ven_amd_aqlprofile_validate_event {
                    // SAFETY: as above, through the table the runtime filled.
                    Some(f) => unsafe { f(agent.hsa, &e, &mut ok) },
                    None => ffi::HSA_STATUS_ERROR,
                }
            }
        };
        st == ffi::HSA_STATUS_SUCCESS && ok
    }

    /// `get_info` of a profile holding `events` (v1 `get_info`, v2 `aqlprofile_get_pmc_info`).
    fn info(
        &self,
        agent: &LibraryAgent,
        events: &[Event],
        attribute: u32,
        value: *mut c_void,
    ) -> hsa_status_t {
        match self {
            Library::V2(l) => {
                let ev: Vec<aqlprofile_pmc_event_t> = events.iter().map(|e| v2_event(*e)).collect();
                let profile = aqlprofile_pmc_profile_t {
                    agent: agent.v2,
                    events: ev.as_ptr(),
                    event_count: ev.len() as u32,
                };
                // SAFETY: the profile points to `ev`, alive for the call; `value` is the
                // attribute's type, supplied by the caller.
                unsafe { (l.get_info)(&profile, attribute, value) }
            }
            Library::V1(l) => {
                let ev: Vec<hsa_ven_amd_aqlprofile_event_t> =
                    events.iter().map(|e| v1_event(*e)).collect();
                let profile = hsa_ven_amd_aqlprofile_profile_t {
                    agent: agent.hsa,
                    type_: ffi::HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC,
                    events: ev.as_ptr(),
                    event_count: ev.len() as u32,
                    ..Default::default()
                };
                match l.table.hsa_ven_amd_aqlprofile_get_info {
                    // SAFETY: as above.
                    Some(f) => unsafe { f(&profile, attribute, value) },
                    None => ffi::HSA_STATUS_ERROR,
                }
            }
        }
    }

    /// The library's description of its last error, when it has one.
    fn last_error(&self) -> Option<String> {
        let f = match self {
            Library::V2(l) => l.error_string?,
            Library::V1(l) => l.table.hsa_ven_amd_aqlprofile_error_string?,
        };
        let mut text: *const std::ffi::c_char = std::ptr::null();
        // SAFETY: out-pointer to a local; the library returns a NUL-terminated string it owns.
        let st = unsafe { f(&mut text) };
        if st != ffi::HSA_STATUS_SUCCESS || text.is_null() {
            return None;
        }
        // SAFETY: checked non-NULL; NUL-terminated, valid until the library's next call.
        let t = unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy();
        (!t.trim().is_empty()).then(|| t.into_owned())
    }

    /// `e` with the library's own description of its last error appended.
    fn explained(&self, e: String) -> String {
        match self.last_error() {
            Some(why) => format!("{e}: {why}"),
            None => e,
        }
    }

    /// Builds the packet set of `events` on the agent.
    pub fn create(
        &self,
        rt: Runtime,
        agent: &LibraryAgent,
        events: &[Event],
    ) -> Result<PacketSet, String> {
        match self {
            Library::V2(l) => l.create(rt, agent, events),
            Library::V1(l) => l.create(rt, agent, events),
        }
        .map_err(|e| self.explained(e))
    }

    /// The results of the last `read` of `set`: one value per event and sample, in the order
    /// the library gives them.
    pub fn read(&self, set: &PacketSet) -> Result<Vec<(Event, u64)>, String> {
        let mut out: Vec<(Event, u64)> = Vec::new();
        let st = match (&set.results, self) {
            (Results::V2(h), Library::V2(l)) => {
                // SAFETY: a live handle; the callback receives `out` for this call only.
                unsafe { (l.iterate)(*h, Some(v2_value), (&raw mut out).cast()) }
            }
            (Results::V1 { profile, .. }, Library::V1(l)) => {
                match l.table.hsa_ven_amd_aqlprofile_iterate_data {
                    // SAFETY: the profile and its buffers live in the set; as above.
                    Some(f) => unsafe { f(&**profile, Some(v1_value), (&raw mut out).cast()) },
                    None => ffi::HSA_STATUS_ERROR,
                }
            }
            _ => return Err("a packet set read through the other aqlprofile interface".into()),
        };
        check(st, "reading the counters (iterate_data)").map_err(|e| self.explained(e))?;
        Ok(out)
    }
}

fn v2_event(e: Event) -> aqlprofile_pmc_event_t {
    aqlprofile_pmc_event_t {
        block_index: e.index,
        event_id: e.id,
        flags: Default::default(),
        block_name: e.block,
    }
}

fn v1_event(e: Event) -> hsa_ven_amd_aqlprofile_event_t {
    hsa_ven_amd_aqlprofile_event_t {
        block_name: e.block,
        block_index: e.index,
        counter_id: e.id,
    }
}

unsafe extern "C" fn v2_value(
    event: aqlprofile_pmc_event_t,
    _counter_id: u64,
    value: u64,
    data: *mut c_void,
) -> hsa_status_t {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: `data` is the `Vec` of `Library::read`, alive during the iteration.
        let out = unsafe { &mut *data.cast::<Vec<(Event, u64)>>() };
        let e = Event {
            block: event.block_name,
            index: event.block_index,
            id: event.event_id,
        };
        out.push((e, value));
    });
    if r.is_ok() {
        ffi::HSA_STATUS_SUCCESS
    } else {
        ffi::HSA_STATUS_ERROR
    }
}

unsafe extern "C" fn v1_value(
    info_type: u32,
    info: *mut hsa_ven_amd_aqlprofile_info_data_t,
    data: *mut c_void,
) -> hsa_status_t {
    let r = std::panic::catch_unwind(|| {
        if info_type != ffi::HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA || info.is_null() {
            return;
        }
        // SAFETY: the library passes one PMC sample for the call; `data` as in `v2_value`.
        let (pmc, out) = unsafe {
            (
                (*info).__bindgen_anon_1.pmc_data,
                &mut *data.cast::<Vec<(Event, u64)>>(),
            )
        };
        let e = Event {
            block: pmc.event.block_name,
            index: pmc.event.block_index,
            id: pmc.event.counter_id,
        };
        out.push((e, pmc.result));
    });
    if r.is_ok() {
        ffi::HSA_STATUS_SUCCESS
    } else {
        ffi::HSA_STATUS_ERROR
    }
}

impl V2 {
    /// dlopens the versioned library and resolves its PMC entries.
    fn open() -> Result<Self, String> {
        let name = CString::new(aql::AQLPROFILE_LIBRARY_VERSIONED).expect("no NUL in the name");
        // SAFETY: a NUL-terminated name; the library stays loaded for the process.
        let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if h.is_null() {
            return Err(format!(
                "{} could not be loaded",
                aql::AQLPROFILE_LIBRARY_VERSIONED
            ));
        }
        let sym = |s: &std::ffi::CStr| {
            // SAFETY: a live handle and a NUL-terminated symbol name.
            let p = unsafe { libc::dlsym(h, s.as_ptr()) };
            (!p.is_null()).then_some(p).ok_or_else(|| {
                format!(
                    "{} has no {}",
                    aql::AQLPROFILE_LIBRARY_VERSIONED,
                    s.to_string_lossy()
                )
            })
        };
        let create = sym(c"aqlprofile_pmc_create_packets")?;
        let register_agent = sym(c"aqlprofile_register_agent")?;
        let validate = sym(c"aqlprofile_validate_pmc_event")?;
        let get_info = sym(c"aqlprofile_get_pmc_info")?;
        let iterate = sym(c"aqlprofile_pmc_iterate_data")?;
        let error_string = sym(c"hsa_ven_amd_aqlprofile_error_string").ok();
        // SAFETY: each symbol is the exported function of that name, whose C type is the one
        // named here (aqlprofile-sdk/aql_profile_v2.h, hsa_ven_amd_aqlprofile.h).
        unsafe {
            Ok(V2 {
                error_string: error_string
                    .map(|p| std::mem::transmute::<*mut c_void, aql::v1_fn::error_string_t>(p)),
                register_agent: std::mem::transmute::<*mut c_void, v2_fn::register_agent_t>(
                    register_agent,
                ),
                validate: std::mem::transmute::<*mut c_void, v2_fn::validate_pmc_event_t>(validate),
                get_info: std::mem::transmute::<*mut c_void, v2_fn::get_pmc_info_t>(get_info),
                create: std::mem::transmute::<*mut c_void, v2_fn::pmc_create_packets_t>(create),
                iterate: std::mem::transmute::<*mut c_void, v2_fn::pmc_iterate_data_t>(iterate),
            })
        }
    }

    /// Registers the agent's topology.
    fn register(&self, rt: Runtime, hsa: hsa_agent_t) -> Result<aqlprofile_agent_handle_t, String> {
        let name = CString::new(rt.agent_name(hsa)).unwrap_or_default();
        let u = |attr: u32| rt.agent_u32(hsa, attr);
        let info = aqlprofile_agent_info_t {
            agent_gfxip: name.as_ptr(),
            xcc_num: u(hsa_abi::modern::HSA_AMD_AGENT_INFO_NUM_XCC)
                .unwrap_or(1)
                .max(1),
            se_num: u(ffi::HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES).unwrap_or(1),
            cu_num: u(ffi::HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT).unwrap_or(1),
            shader_arrays_per_se: u(ffi::HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE).unwrap_or(1),
        };
        let mut h = aqlprofile_agent_handle_t::default();
        // SAFETY: `info` and its name live for the call; out-pointer to a local.
        check(
            unsafe { (self.register_agent)(&mut h, &info) },
            "aqlprofile_register_agent",
        )?;
        Ok(h)
    }

    fn create(
        &self,
        rt: Runtime,
        agent: &LibraryAgent,
        events: &[Event],
    ) -> Result<PacketSet, String> {
        let ev: Vec<aqlprofile_pmc_event_t> = events.iter().map(|e| v2_event(*e)).collect();
        let profile = aqlprofile_pmc_profile_t {
            agent: agent.v2,
            events: ev.as_ptr(),
            event_count: ev.len() as u32,
        };
        let mut alloc = Allocations {
            rt,
            agent: agent.hsa,
            buffers: Vec::new(),
            error: None,
        };
        let mut handle = aqlprofile_handle_t::default();
        let mut packets = aqlprofile_pmc_aql_packets_t::default();
        // SAFETY: the profile's events live for the call; the callbacks receive `alloc`, alive
        // for the call (the library asks for its buffers during it).
        let st = unsafe {
            (self.create)(
                &mut handle,
                &mut packets,
                profile,
                Some(v2_alloc),
                Some(v2_dealloc),
                Some(v2_copy),
                (&raw mut alloc).cast(),
            )
        };
        if let Some(e) = alloc.error {
            return Err(e);
        }
        check(st, "aqlprofile_pmc_create_packets")?;
        Ok(PacketSet {
            start: packet_bytes(&packets.start_packet, false),
            read: packet_bytes(&packets.read_packet, true),
            stop: packet_bytes(&packets.stop_packet, true),
            results: Results::V2(handle),
            _buffers: alloc.buffers,
        })
    }
}

/// What the v2 allocation callbacks work with during `aqlprofile_pmc_create_packets`.
struct Allocations {
    rt: Runtime,
    agent: hsa_agent_t,
    buffers: Vec<SharedBuffer>,
    error: Option<String>,
}

unsafe extern "C" fn v2_alloc(
    ptr: *mut *mut c_void,
    size: u64,
    _flags: aqlprofile_buffer_desc_flags_t,
    data: *mut c_void,
) -> hsa_status_t {
    let r = std::panic::catch_unwind(|| {
        // SAFETY: `data` is the `Allocations` of `V2::create`, alive during the call.
        let a = unsafe { &mut *data.cast::<Allocations>() };
        if ptr.is_null() {
            return ffi::HSA_STATUS_ERROR_INVALID_ARGUMENT;
        }
        // Host-visible memory for every buffer: the packets are built and the results read by
        // the host, the counters written by the device.
        match SharedBuffer::new(a.rt, a.agent, usize::try_from(size).unwrap_or(usize::MAX)) {
            Ok(b) => {
                // SAFETY: checked non-NULL; the library's out-pointer.
                unsafe { *ptr = b.ptr.cast() };
                a.buffers.push(b);
                ffi::HSA_STATUS_SUCCESS
            }
            Err(e) => {
                a.error = Some(format!("a counter buffer of {size} bytes: {e}"));
                ffi::HSA_STATUS_ERROR_OUT_OF_RESOURCES
            }
        }
    });
    r.unwrap_or(ffi::HSA_STATUS_ERROR)
}

unsafe extern "C" fn v2_dealloc(ptr: *mut c_void, data: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: as in `v2_alloc`.
        let a = unsafe { &mut *data.cast::<Allocations>() };
        a.buffers.retain(|b| b.ptr.cast::<c_void>() != ptr);
    });
}

unsafe extern "C" fn v2_copy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    _data: *mut c_void,
) -> hsa_status_t {
    if size > 0 && (dst.is_null() || src.is_null()) {
        return ffi::HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    // SAFETY: host-visible buffers of the tool and the library's own data, `size` bytes each
    // (the library's contract); a plain copy keeps the runtime out of it while a window holds
    // the agent's lock.
    unsafe { std::ptr::copy_nonoverlapping(src.cast::<u8>(), dst.cast::<u8>(), size) };
    ffi::HSA_STATUS_SUCCESS
}

impl V1 {
    /// Asks the runtime for the extension's table.
    fn open(rt: Runtime) -> Result<Self, String> {
        let mut table = hsa_ven_amd_aqlprofile_1_00_pfn_t::default();
        // SAFETY: out-pointer to a local of the length given; the original entry.
        let st = unsafe {
            (rt.originals().system_get_major_extension_table)(
                ffi::HSA_EXTENSION_AMD_AQLPROFILE as u16,
                aql::AQLPROFILE_EXTENSION_MAJOR,
                std::mem::size_of::<hsa_ven_amd_aqlprofile_1_00_pfn_t>(),
                (&raw mut table).cast(),
            )
        };
        if st != ffi::HSA_STATUS_SUCCESS {
            return Err(format!(
                "the runtime has no HSA_EXTENSION_AMD_AQLPROFILE table (status {st:#x})"
            ));
        }
        let t = &table;
        if t.hsa_ven_amd_aqlprofile_start.is_none()
            || t.hsa_ven_amd_aqlprofile_read.is_none()
            || t.hsa_ven_amd_aqlprofile_stop.is_none()
            || t.hsa_ven_amd_aqlprofile_iterate_data.is_none()
        {
            return Err(
                "the HSA_EXTENSION_AMD_AQLPROFILE table lacks start/read/stop/iterate_data".into(),
            );
        }
        Ok(V1 { table })
    }

    fn create(
        &self,
        rt: Runtime,
        agent: &LibraryAgent,
        events: &[Event],
    ) -> Result<PacketSet, String> {
        let t = &self.table;
        let (Some(start), Some(read), Some(stop)) = (
            t.hsa_ven_amd_aqlprofile_start,
            t.hsa_ven_amd_aqlprofile_read,
            t.hsa_ven_amd_aqlprofile_stop,
        ) else {
            return Err("the aqlprofile table lacks start/read/stop".into());
        };
        let ev: Box<[hsa_ven_amd_aqlprofile_event_t]> =
            events.iter().map(|e| v1_event(*e)).collect();
        let mut profile = Box::new(hsa_ven_amd_aqlprofile_profile_t {
            agent: agent.hsa,
            type_: ffi::HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC,
            events: ev.as_ptr(),
            event_count: ev.len() as u32,
            ..Default::default()
        });
        // Sizing: `start` without a packet fills in the buffer sizes.
        // SAFETY: the profile points to `ev`, owned by the set; NULL asks for the sizes.
        check(
            unsafe { start(&mut *profile, std::ptr::null_mut()) },
            "hsa_ven_amd_aqlprofile_start (sizing)",
        )?;
        let cmd = SharedBuffer::new(rt, agent.hsa, profile.command_buffer.size as usize)?;
        let out = SharedBuffer::new(rt, agent.hsa, profile.output_buffer.size as usize)?;
        profile.command_buffer.ptr = cmd.ptr.cast();
        profile.output_buffer.ptr = out.ptr.cast();
        let mut p = [hsa_ext_amd_aql_pm4_packet_t::default(); 3];
        // SAFETY: the profile and its buffers live in the set; out-pointers to locals.
        unsafe {
            check(
                start(&mut *profile, &mut p[0]),
                "hsa_ven_amd_aqlprofile_start",
            )?;
            check(read(&*profile, &mut p[1]), "hsa_ven_amd_aqlprofile_read")?;
            check(stop(&*profile, &mut p[2]), "hsa_ven_amd_aqlprofile_stop")?;
        }
        Ok(PacketSet {
            start: packet_bytes(&p[0], false),
            read: packet_bytes(&p[1], true),
            stop: packet_bytes(&p[2], true),
            results: Results::V1 {
                profile,
                _events: ev,
            },
            _buffers: vec![cmd, out],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_packets_get_their_header_and_no_signal() {
        let mut raw = hsa_ext_amd_aql_pm4_packet_t::default();
        raw.pm4_command[0] = 1;
        raw.completion_signal.handle = 0x55;
        let start = packet_bytes(&raw, false);
        let read = packet_bytes(&raw, true);
        let h = |p: &[u8; 64]| u16::from_le_bytes([p[0], p[1]]);
        assert_eq!(
            u32::from(h(&start) & 0xff),
            ffi::HSA_PACKET_TYPE_VENDOR_SPECIFIC
        );
        assert_eq!(h(&start) & (1 << 8), 0, "start: no barrier bit");
        assert_ne!(h(&read) & (1 << 8), 0, "read: barrier bit");
        assert_eq!(&start[2..4], &[1, 0], "the PM4 part is kept");
        assert_eq!(&start[56..64], &[0; 8], "no completion signal");
    }
}
