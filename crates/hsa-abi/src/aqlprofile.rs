//! The aqlprofile ABI: what the installed `hsa_ven_amd_aqlprofile.h` (ROCm 5.2) does not declare.
//!
//! Two interfaces reach the same library, `libhsa-amd-aqlprofile64.so`:
//!
//! - **v1**, the HSA vendor extension `HSA_EXTENSION_AMD_AQLPROFILE` (major 1). Its types come
//!   from the installed header through bindgen ([`crate::ffi`]: `hsa_ven_amd_aqlprofile_event_t`,
//!   `hsa_ven_amd_aqlprofile_profile_t`, `hsa_ext_amd_aql_pm4_packet_t`, ...). ROCm 6/7 append
//!   three slots to the same 1.00 table; [`AqlprofileV1Table`] is that longer table, and a
//!   provider copies only as many bytes as the caller's `table_length` asks for.
//! - **v2**, the plain library API `aqlprofile_*` (header `aqlprofile-sdk/aql_profile_v2.h`,
//!   not installed with ROCm 5.2): written here by hand as `#[repr(C)]` items with the C names,
//!   plus one function-pointer type per exported function for callers that `dlsym` them.
//!
//! Plus the packet every `start`/`read`/`stop` call fills: [`AqlPm4IbPacket`], the vendor-specific
//! AQL packet of format 1 that carries one PM4 `INDIRECT_BUFFER` command.
//!
//! All items are plain data. Unions of bit fields are represented by their `raw` word with
//! accessors. C enums are plain `u32` aliases with constants, so that a value received from C is
//! never an invalid Rust enum.

#![allow(non_camel_case_types)]

use crate::ffi::{
    hsa_agent_t, hsa_ext_amd_aql_pm4_packet_t, hsa_signal_t, hsa_status_t,
    hsa_ven_amd_aqlprofile_1_00_pfn_t, hsa_ven_amd_aqlprofile_block_name_t,
    hsa_ven_amd_aqlprofile_data_callback_t, hsa_ven_amd_aqlprofile_event_t,
    hsa_ven_amd_aqlprofile_info_type_t, hsa_ven_amd_aqlprofile_profile_t,
};
use std::ffi::{c_char, c_int, c_void};

/// The name ROCR dlopens to fill the v1 extension table (`kAqlProfileLib`, 64-bit model).
pub const AQLPROFILE_LIBRARY: &str = "libhsa-amd-aqlprofile64.so";
/// The versioned name a v2 caller dlopens.
pub const AQLPROFILE_LIBRARY_VERSIONED: &str = "libhsa-amd-aqlprofile64.so.1";
/// Major version of the v1 extension (`hsa_ven_amd_aqlprofile_VERSION_MAJOR`).
pub const AQLPROFILE_EXTENSION_MAJOR: u16 = 1;
/// What the library's `hsa_ven_amd_aqlprofile_version_major()` must return: ROCR refuses the
/// table unless it equals `HSA_AQLPROFILE_VERSION_MAJOR`.
pub const AQLPROFILE_LIBRARY_MAJOR: u32 = crate::ffi::HSA_AQLPROFILE_VERSION_MAJOR;
/// The library's minor version (`HSA_AQLPROFILE_VERSION_MINOR`).
pub const AQLPROFILE_LIBRARY_MINOR: u32 = crate::ffi::HSA_AQLPROFILE_VERSION_MINOR;

// ---------------------------------------------------------------------------------------------
// The PM4 indirect-buffer packet.

/// `pm4_ib_format` of an [`AqlPm4IbPacket`].
pub const AQL_PM4_IB_FORMAT: u16 = 1;
/// `dw_count_remain` of an [`AqlPm4IbPacket`]: the dwords after the IB command, up to the signal.
pub const AQL_PM4_IB_DW_COUNT_REMAIN: u32 = 10;

/// The vendor-specific AQL packet (64 bytes) that carries one PM4 command, as aqlprofile fills
/// it: the same bytes as [`hsa_ext_amd_aql_pm4_packet_t`], seen with its fields named.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct AqlPm4IbPacket {
    /// AQL header; type `HSA_PACKET_TYPE_VENDOR_SPECIFIC` (set by the caller).
    pub header: u16,
    /// [`AQL_PM4_IB_FORMAT`].
    pub pm4_ib_format: u16,
    /// One PM4 type-3 `INDIRECT_BUFFER` command (header, base low, base high, control).
    pub pm4_ib_command: [u32; 4],
    /// [`AQL_PM4_IB_DW_COUNT_REMAIN`].
    pub dw_count_remain: u32,
    /// Zero.
    pub reserved: [u32; 8],
    /// Completion signal (set by the caller).
    pub completion_signal: hsa_signal_t,
}

impl AqlPm4IbPacket {
    /// The packet seen through the header's type.
    pub fn to_pm4_packet(&self) -> hsa_ext_amd_aql_pm4_packet_t {
        // SAFETY: both types are 64-byte `repr(C)` plain-data structs (layout tests pin this).
        unsafe { std::mem::transmute::<Self, hsa_ext_amd_aql_pm4_packet_t>(*self) }
    }

    /// The header's type seen with its fields named.
    pub fn from_pm4_packet(p: &hsa_ext_amd_aql_pm4_packet_t) -> Self {
        // SAFETY: as in `to_pm4_packet`; every bit pattern is a valid value of either type.
        unsafe { std::mem::transmute::<hsa_ext_amd_aql_pm4_packet_t, Self>(*p) }
    }
}

// ---------------------------------------------------------------------------------------------
// v1 additions of ROCm 6/7.

/// `hsa_ven_amd_aqlprofile_eventname_callback_t` (ROCm 6/7): one coordinate dimension.
pub type hsa_ven_amd_aqlprofile_eventname_callback_t =
    Option<unsafe extern "C" fn(id: c_int, name: *const c_char) -> hsa_status_t>;

/// `hsa_ven_amd_aqlprofile_coordinate_callback_t` (ROCm 6/7): one coordinate of a sample.
pub type hsa_ven_amd_aqlprofile_coordinate_callback_t = Option<
    unsafe extern "C" fn(
        position: c_int,
        id: c_int,
        extent: c_int,
        coordinate: c_int,
        name: *const c_char,
        userdata: *mut c_void,
    ) -> hsa_status_t,
>;

/// `hsa_ven_amd_aqlprofile_att_marker_channel_t` (ROCm 6/7), received as an integer.
pub type hsa_ven_amd_aqlprofile_att_marker_channel_t = u32;

/// Slot `iterate_event_ids` (ROCm 6/7).
pub type hsa_ven_amd_aqlprofile_iterate_event_ids_fn_t =
    Option<unsafe extern "C" fn(cb: hsa_ven_amd_aqlprofile_eventname_callback_t) -> hsa_status_t>;

/// Slot `iterate_event_coord` (ROCm 6/7).
pub type hsa_ven_amd_aqlprofile_iterate_event_coord_fn_t = Option<
    unsafe extern "C" fn(
        agent: hsa_agent_t,
        event: hsa_ven_amd_aqlprofile_event_t,
        sample_id: u32,
        callback: hsa_ven_amd_aqlprofile_coordinate_callback_t,
        userdata: *mut c_void,
    ) -> hsa_status_t,
>;

/// Slot `att_marker` (ROCm 6/7).
pub type hsa_ven_amd_aqlprofile_att_marker_fn_t = Option<
    unsafe extern "C" fn(
        profile: *mut hsa_ven_amd_aqlprofile_profile_t,
        packet: *mut hsa_ext_amd_aql_pm4_packet_t,
        data: u32,
        channel: hsa_ven_amd_aqlprofile_att_marker_channel_t,
    ) -> hsa_status_t,
>;

/// The v1 extension table as ROCm 6/7 define it: the installed 5.2 table
/// ([`hsa_ven_amd_aqlprofile_1_00_pfn_t`], 10 slots) followed by three slots. A provider copies
/// `min(size_of::<Self>(), table_length)` bytes, so a 5.2 caller gets exactly its 10 slots.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct AqlprofileV1Table {
    /// The ten slots of the installed header.
    pub base: hsa_ven_amd_aqlprofile_1_00_pfn_t,
    /// `hsa_ven_amd_aqlprofile_iterate_event_ids`.
    pub iterate_event_ids: hsa_ven_amd_aqlprofile_iterate_event_ids_fn_t,
    /// `hsa_ven_amd_aqlprofile_iterate_event_coord`.
    pub iterate_event_coord: hsa_ven_amd_aqlprofile_iterate_event_coord_fn_t,
    /// `hsa_ven_amd_aqlprofile_att_marker`.
    pub att_marker: hsa_ven_amd_aqlprofile_att_marker_fn_t,
}

/// Function types of the v1 exports, for callers that `dlsym` them.
pub mod v1_fn {
    use super::*;
    /// `hsa_ven_amd_aqlprofile_version_major` / `_minor`.
    pub type version_t = unsafe extern "C" fn() -> u32;
    /// `hsa_ven_amd_aqlprofile_error_string`.
    pub type error_string_t = unsafe extern "C" fn(*mut *const c_char) -> hsa_status_t;
    /// `hsa_ven_amd_aqlprofile_validate_event`.
    pub type validate_event_t = unsafe extern "C" fn(
        hsa_agent_t,
        *const hsa_ven_amd_aqlprofile_event_t,
        *mut bool,
    ) -> hsa_status_t;
    /// `hsa_ven_amd_aqlprofile_start`.
    pub type start_t = unsafe extern "C" fn(
        *mut hsa_ven_amd_aqlprofile_profile_t,
        *mut hsa_ext_amd_aql_pm4_packet_t,
    ) -> hsa_status_t;
    /// `hsa_ven_amd_aqlprofile_stop` / `_read`.
    pub type stop_t = unsafe extern "C" fn(
        *const hsa_ven_amd_aqlprofile_profile_t,
        *mut hsa_ext_amd_aql_pm4_packet_t,
    ) -> hsa_status_t;
    /// `hsa_ven_amd_aqlprofile_get_info`.
    pub type get_info_t = unsafe extern "C" fn(
        *const hsa_ven_amd_aqlprofile_profile_t,
        hsa_ven_amd_aqlprofile_info_type_t,
        *mut c_void,
    ) -> hsa_status_t;
    /// `hsa_ven_amd_aqlprofile_iterate_data`.
    pub type iterate_data_t = unsafe extern "C" fn(
        *const hsa_ven_amd_aqlprofile_profile_t,
        hsa_ven_amd_aqlprofile_data_callback_t,
        *mut c_void,
    ) -> hsa_status_t;
}

// ---------------------------------------------------------------------------------------------
// v2: `aqlprofile_*`.

/// `aqlprofile_handle_t`: one packet set (PMC) made by `aqlprofile_pmc_create_packets`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct aqlprofile_handle_t {
    /// Opaque to the caller; zero is never a valid handle.
    pub handle: u64,
}

/// `aqlprofile_agent_handle_t`: an agent registered with `aqlprofile_register_agent`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct aqlprofile_agent_handle_t {
    /// Opaque to the caller.
    pub handle: u64,
}

/// `aqlprofile_memory_hint_t`, received as an integer.
pub type aqlprofile_memory_hint_t = u32;
/// No placement preference.
pub const AQLPROFILE_MEMORY_HINT_NONE: aqlprofile_memory_hint_t = 0;
/// Host memory.
pub const AQLPROFILE_MEMORY_HINT_HOST: aqlprofile_memory_hint_t = 1;
/// Device memory, uncached (the counter output buffers).
pub const AQLPROFILE_MEMORY_HINT_DEVICE_UNCACHED: aqlprofile_memory_hint_t = 2;
/// Device memory, coherent.
pub const AQLPROFILE_MEMORY_HINT_DEVICE_COHERENT: aqlprofile_memory_hint_t = 3;
/// Device memory, non-coherent.
pub const AQLPROFILE_MEMORY_HINT_DEVICE_NONCOHERENT: aqlprofile_memory_hint_t = 4;
/// One past the last hint.
pub const AQLPROFILE_MEMORY_HINT_LAST: aqlprofile_memory_hint_t = 5;

/// `aqlprofile_agent_version_t`, received as an integer.
pub type aqlprofile_agent_version_t = u32;
/// Invalid.
pub const AQLPROFILE_AGENT_VERSION_NONE: aqlprofile_agent_version_t = 0;
/// [`aqlprofile_agent_info_t`].
pub const AQLPROFILE_AGENT_VERSION_V0: aqlprofile_agent_version_t = 1;
/// [`aqlprofile_agent_info_v1_t`].
pub const AQLPROFILE_AGENT_VERSION_V1: aqlprofile_agent_version_t = 2;

/// `aqlprofile_block_name_t`: v2 block ids continue after `HSA_VEN_AMD_AQLPROFILE_BLOCKS_NUMBER`
/// (six reserved ids, then CPG, RLC, the gfx12 blocks, four reserved ids).
pub type aqlprofile_block_name_t = u32;
/// CPG.
pub const AQLPROFILE_BLOCK_NAME_CPG: aqlprofile_block_name_t =
    crate::ffi::HSA_VEN_AMD_AQLPROFILE_BLOCKS_NUMBER + 6;
/// RLC.
pub const AQLPROFILE_BLOCK_NAME_RLC: aqlprofile_block_name_t = AQLPROFILE_BLOCK_NAME_CPG + 1;
/// One past the last v2 block id.
pub const AQLPROFILE_BLOCKS_NUMBER: aqlprofile_block_name_t =
    AQLPROFILE_BLOCK_NAME_RLC + 1 + 12 + 4;

/// `aqlprofile_buffer_desc_flags_t`: who accesses a buffer the library asks for.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct aqlprofile_buffer_desc_flags_t {
    /// Bit 0 device access, bit 1 host access, bits 2..8 an [`aqlprofile_memory_hint_t`].
    pub raw: u32,
}

impl aqlprofile_buffer_desc_flags_t {
    /// Flags from their parts.
    pub fn new(device_access: bool, host_access: bool, hint: aqlprofile_memory_hint_t) -> Self {
        Self {
            raw: u32::from(device_access) | (u32::from(host_access) << 1) | ((hint & 0x3F) << 2),
        }
    }
    /// The GPU reads or writes the buffer.
    pub fn device_access(self) -> bool {
        self.raw & 1 != 0
    }
    /// The host reads or writes the buffer.
    pub fn host_access(self) -> bool {
        self.raw & 2 != 0
    }
    /// The placement hint.
    pub fn memory_hint(self) -> aqlprofile_memory_hint_t {
        (self.raw >> 2) & 0x3F
    }
}

/// `aqlprofile_memory_alloc_callback_t`: writes `*ptr` with at least `size` bytes.
pub type aqlprofile_memory_alloc_callback_t = Option<
    unsafe extern "C" fn(
        ptr: *mut *mut c_void,
        size: u64,
        flags: aqlprofile_buffer_desc_flags_t,
        userdata: *mut c_void,
    ) -> hsa_status_t,
>;

/// `aqlprofile_memory_dealloc_callback_t`.
pub type aqlprofile_memory_dealloc_callback_t =
    Option<unsafe extern "C" fn(ptr: *mut c_void, userdata: *mut c_void)>;

/// `aqlprofile_memory_copy_t`.
pub type aqlprofile_memory_copy_t = Option<
    unsafe extern "C" fn(
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        userdata: *mut c_void,
    ) -> hsa_status_t,
>;

/// `aqlprofile_accumulation_type_t`, received as an integer.
pub type aqlprofile_accumulation_type_t = u32;
/// Plain event.
pub const AQLPROFILE_ACCUMULATION_NONE: aqlprofile_accumulation_type_t = 0;
/// Integrated over quad-cycles.
pub const AQLPROFILE_ACCUMULATION_LO_RES: aqlprofile_accumulation_type_t = 1;
/// Integrated every cycle.
pub const AQLPROFILE_ACCUMULATION_HI_RES: aqlprofile_accumulation_type_t = 2;

/// `aqlprofile_pmc_event_flags_t`: bits 0..3 are the SQ accumulation type.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct aqlprofile_pmc_event_flags_t {
    /// The whole word.
    pub raw: u32,
}

impl aqlprofile_pmc_event_flags_t {
    /// `sq_flags.accum`.
    pub fn accum(self) -> aqlprofile_accumulation_type_t {
        self.raw & 7
    }
}

/// `aqlprofile_pmc_event_t` (16 bytes): one hardware counter of one block instance.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct aqlprofile_pmc_event_t {
    /// Block instance.
    pub block_index: u32,
    /// Hardware select value.
    pub event_id: u32,
    /// Accumulation flags.
    pub flags: aqlprofile_pmc_event_flags_t,
    /// `hsa_ven_amd_aqlprofile_block_name_t`.
    pub block_name: hsa_ven_amd_aqlprofile_block_name_t,
}

/// `aqlprofile_agent_info_t`: an agent described by its topology.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct aqlprofile_agent_info_t {
    /// GFX IP name (`HSA_AGENT_INFO_NAME`), NUL-terminated.
    pub agent_gfxip: *const c_char,
    /// XCCs (`HSA_AMD_AGENT_INFO_NUM_XCC`).
    pub xcc_num: u32,
    /// Shader engines.
    pub se_num: u32,
    /// Compute units.
    pub cu_num: u32,
    /// Shader arrays per shader engine.
    pub shader_arrays_per_se: u32,
}

/// `aqlprofile_agent_info_v1_t`: [`aqlprofile_agent_info_t`] plus the PCI location.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct aqlprofile_agent_info_v1_t {
    /// GFX IP name, NUL-terminated.
    pub agent_gfxip: *const c_char,
    /// XCCs.
    pub xcc_num: u32,
    /// Shader engines.
    pub se_num: u32,
    /// Compute units.
    pub cu_num: u32,
    /// Shader arrays per shader engine.
    pub shader_arrays_per_se: u32,
    /// PCI domain.
    pub domain: u32,
    /// Bus/device/function.
    pub location_id: u32,
}

/// `aqlprofile_pmc_profile_t`: the events of one packet set (passed by value).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct aqlprofile_pmc_profile_t {
    /// The registered agent.
    pub agent: aqlprofile_agent_handle_t,
    /// `event_count` events.
    pub events: *const aqlprofile_pmc_event_t,
    /// Number of events.
    pub event_count: u32,
}

/// `aqlprofile_pmc_info_type_t`, received as an integer.
pub type aqlprofile_pmc_info_type_t = u32;
/// `uint32_t` command buffer size.
pub const AQLPROFILE_INFO_COMMAND_BUFFER_SIZE: aqlprofile_pmc_info_type_t = 0;
/// `uint32_t` output buffer size.
pub const AQLPROFILE_INFO_PMC_DATA_SIZE: aqlprofile_pmc_info_type_t = 1;
/// PMC data.
pub const AQLPROFILE_INFO_PMC_DATA: aqlprofile_pmc_info_type_t = 2;
/// `uint32_t` counters per pass of the first event's block.
pub const AQLPROFILE_INFO_BLOCK_COUNTERS: aqlprofile_pmc_info_type_t = 4;
/// Block id and instance count by name (`hsa_ven_amd_aqlprofile_id_query_t`).
pub const AQLPROFILE_INFO_BLOCK_ID: aqlprofile_pmc_info_type_t = 5;
/// Enable command.
pub const AQLPROFILE_INFO_ENABLE_CMD: aqlprofile_pmc_info_type_t = 6;
/// Disable command.
pub const AQLPROFILE_INFO_DISABLE_CMD: aqlprofile_pmc_info_type_t = 7;

/// `aqlprofile_pmc_data_callback_t`: one value per event and coordinate.
pub type aqlprofile_pmc_data_callback_t = Option<
    unsafe extern "C" fn(
        event: aqlprofile_pmc_event_t,
        counter_id: u64,
        counter_value: u64,
        userdata: *mut c_void,
    ) -> hsa_status_t,
>;

/// `aqlprofile_pmc_aql_packets_t` (192 bytes): the packets `aqlprofile_pmc_create_packets` fills.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct aqlprofile_pmc_aql_packets_t {
    /// Resets the counters and starts counting; goes before the dispatch.
    pub start_packet: hsa_ext_amd_aql_pm4_packet_t,
    /// Stops counting.
    pub stop_packet: hsa_ext_amd_aql_pm4_packet_t,
    /// Copies the values to the output buffer.
    pub read_packet: hsa_ext_amd_aql_pm4_packet_t,
}

/// `aqlprofile_eventname_callback_t` (v2): one coordinate dimension.
pub type aqlprofile_eventname_callback_t =
    Option<unsafe extern "C" fn(id: c_int, name: *const c_char, data: *mut c_void) -> hsa_status_t>;

/// `aqlprofile_coordinate_callback_t` (v2), the same shape as the v1 one.
pub type aqlprofile_coordinate_callback_t = hsa_ven_amd_aqlprofile_coordinate_callback_t;

/// Function types of the v2 exports, for callers that `dlsym` them.
pub mod v2_fn {
    use super::*;
    /// `aqlprofile_get_version(major, minor, patch, npi)`.
    pub type get_version_t =
        unsafe extern "C" fn(*mut u32, *mut u32, *mut u32, *mut u32) -> hsa_status_t;
    /// `aqlprofile_register_agent`.
    pub type register_agent_t = unsafe extern "C" fn(
        *mut aqlprofile_agent_handle_t,
        *const aqlprofile_agent_info_t,
    ) -> hsa_status_t;
    /// `aqlprofile_register_agent_info`.
    pub type register_agent_info_t = unsafe extern "C" fn(
        *mut aqlprofile_agent_handle_t,
        *const c_void,
        aqlprofile_agent_version_t,
    ) -> hsa_status_t;
    /// `aqlprofile_validate_pmc_event`.
    pub type validate_pmc_event_t = unsafe extern "C" fn(
        aqlprofile_agent_handle_t,
        *const aqlprofile_pmc_event_t,
        *mut bool,
    ) -> hsa_status_t;
    /// `aqlprofile_get_pmc_info`.
    pub type get_pmc_info_t = unsafe extern "C" fn(
        *const aqlprofile_pmc_profile_t,
        aqlprofile_pmc_info_type_t,
        *mut c_void,
    ) -> hsa_status_t;
    /// `aqlprofile_pmc_create_packets`.
    pub type pmc_create_packets_t = unsafe extern "C" fn(
        *mut aqlprofile_handle_t,
        *mut aqlprofile_pmc_aql_packets_t,
        aqlprofile_pmc_profile_t,
        aqlprofile_memory_alloc_callback_t,
        aqlprofile_memory_dealloc_callback_t,
        aqlprofile_memory_copy_t,
        *mut c_void,
    ) -> hsa_status_t;
    /// `aqlprofile_pmc_delete_packets`.
    pub type pmc_delete_packets_t = unsafe extern "C" fn(aqlprofile_handle_t);
    /// `aqlprofile_pmc_iterate_data`.
    pub type pmc_iterate_data_t = unsafe extern "C" fn(
        aqlprofile_handle_t,
        aqlprofile_pmc_data_callback_t,
        *mut c_void,
    ) -> hsa_status_t;
    /// `aqlprofile_iterate_event_ids`.
    pub type iterate_event_ids_t =
        unsafe extern "C" fn(aqlprofile_eventname_callback_t, *mut c_void) -> hsa_status_t;
    /// `aqlprofile_iterate_event_coord`.
    pub type iterate_event_coord_t = unsafe extern "C" fn(
        aqlprofile_agent_handle_t,
        aqlprofile_pmc_event_t,
        u64,
        aqlprofile_coordinate_callback_t,
        *mut c_void,
    ) -> hsa_status_t;
}
