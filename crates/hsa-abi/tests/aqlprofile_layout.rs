//! Pins the aqlprofile v1 and v2 layouts: packet and event sizes, field offsets, the v1 table's
//! slot offsets (5.2 length and ROCm 6/7 length), and the bit fields' positions.

use hsa_abi::aqlprofile::*;
use hsa_abi::ffi::*;
use std::mem::{align_of, offset_of, size_of};

#[test]
fn pm4_packet_is_64_bytes_with_the_ib_command_after_the_format() {
    assert_eq!(size_of::<hsa_ext_amd_aql_pm4_packet_t>(), 64);
    assert_eq!(size_of::<AqlPm4IbPacket>(), 64);
    assert_eq!(offset_of!(AqlPm4IbPacket, pm4_ib_format), 2);
    assert_eq!(offset_of!(AqlPm4IbPacket, pm4_ib_command), 4);
    assert_eq!(offset_of!(AqlPm4IbPacket, dw_count_remain), 20);
    assert_eq!(offset_of!(AqlPm4IbPacket, reserved), 24);
    assert_eq!(offset_of!(AqlPm4IbPacket, completion_signal), 56);
    assert_eq!(
        offset_of!(hsa_ext_amd_aql_pm4_packet_t, completion_signal),
        56
    );
    // dw_count_remain counts the dwords from itself up to the signal.
    assert_eq!((56 - 20) / 4, AQL_PM4_IB_DW_COUNT_REMAIN as usize - 1);
}

#[test]
fn pm4_packet_views_agree() {
    let p = AqlPm4IbPacket {
        header: 0x1203,
        pm4_ib_format: AQL_PM4_IB_FORMAT,
        pm4_ib_command: [0xC002_3F00, 0x1000, 0x7f, 4 | (1 << 23)],
        dw_count_remain: AQL_PM4_IB_DW_COUNT_REMAIN,
        reserved: [0; 8],
        completion_signal: hsa_signal_t { handle: 42 },
    };
    let raw = p.to_pm4_packet();
    assert_eq!(raw.header, 0x1203);
    assert_eq!(raw.pm4_command[0], 1);
    assert_eq!(raw.pm4_command[1], 0x3F00);
    assert_eq!(raw.pm4_command[2], 0xC002);
    assert_eq!(raw.completion_signal.handle, 42);
    let back = AqlPm4IbPacket::from_pm4_packet(&raw);
    assert_eq!(back.pm4_ib_command, p.pm4_ib_command);
    assert_eq!(back.dw_count_remain, AQL_PM4_IB_DW_COUNT_REMAIN);
    assert_eq!(back.completion_signal.handle, 42);
}

#[test]
fn v1_types_have_the_header_layout() {
    assert_eq!(size_of::<hsa_ven_amd_aqlprofile_event_t>(), 12);
    assert_eq!(size_of::<hsa_ven_amd_aqlprofile_descriptor_t>(), 16);
    assert_eq!(size_of::<hsa_ven_amd_aqlprofile_profile_t>(), 80);
    assert_eq!(offset_of!(hsa_ven_amd_aqlprofile_profile_t, events), 16);
    assert_eq!(offset_of!(hsa_ven_amd_aqlprofile_profile_t, parameters), 32);
    assert_eq!(
        offset_of!(hsa_ven_amd_aqlprofile_profile_t, output_buffer),
        48
    );
    assert_eq!(
        offset_of!(hsa_ven_amd_aqlprofile_profile_t, command_buffer),
        64
    );
    assert_eq!(size_of::<hsa_ven_amd_aqlprofile_info_data_t>(), 32);
    assert_eq!(size_of::<hsa_ven_amd_aqlprofile_id_query_t>(), 16);
    assert_eq!(HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_SQ, 6);
    assert_eq!(HSA_VEN_AMD_AQLPROFILE_BLOCKS_NUMBER, 32);
    assert_eq!(HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_COUNTERS, 4);
    assert_eq!(AQLPROFILE_LIBRARY_MAJOR, 2);
}

#[test]
fn v1_table_keeps_the_installed_slots_first() {
    assert_eq!(size_of::<hsa_ven_amd_aqlprofile_1_00_pfn_t>(), 80);
    assert_eq!(size_of::<AqlprofileV1Table>(), 104);
    assert_eq!(offset_of!(AqlprofileV1Table, iterate_event_ids), 80);
    assert_eq!(offset_of!(AqlprofileV1Table, iterate_event_coord), 88);
    assert_eq!(offset_of!(AqlprofileV1Table, att_marker), 96);
    assert_eq!(
        offset_of!(
            hsa_ven_amd_aqlprofile_1_00_pfn_t,
            hsa_ven_amd_aqlprofile_iterate_data
        ),
        72
    );
}

#[test]
fn v2_event_is_16_bytes_and_packets_192() {
    assert_eq!(size_of::<aqlprofile_pmc_event_t>(), 16);
    assert_eq!(offset_of!(aqlprofile_pmc_event_t, event_id), 4);
    assert_eq!(offset_of!(aqlprofile_pmc_event_t, flags), 8);
    assert_eq!(offset_of!(aqlprofile_pmc_event_t, block_name), 12);
    assert_eq!(size_of::<aqlprofile_pmc_aql_packets_t>(), 192);
    assert_eq!(offset_of!(aqlprofile_pmc_aql_packets_t, stop_packet), 64);
    assert_eq!(offset_of!(aqlprofile_pmc_aql_packets_t, read_packet), 128);
    assert_eq!(size_of::<aqlprofile_handle_t>(), 8);
    assert_eq!(size_of::<aqlprofile_agent_handle_t>(), 8);
}

#[test]
fn v2_agent_info_and_profile_layouts() {
    assert_eq!(size_of::<aqlprofile_agent_info_t>(), 24);
    assert_eq!(offset_of!(aqlprofile_agent_info_t, xcc_num), 8);
    assert_eq!(
        offset_of!(aqlprofile_agent_info_t, shader_arrays_per_se),
        20
    );
    assert_eq!(size_of::<aqlprofile_agent_info_v1_t>(), 32);
    assert_eq!(offset_of!(aqlprofile_agent_info_v1_t, location_id), 28);
    assert_eq!(size_of::<aqlprofile_pmc_profile_t>(), 24);
    assert_eq!(offset_of!(aqlprofile_pmc_profile_t, events), 8);
    assert_eq!(offset_of!(aqlprofile_pmc_profile_t, event_count), 16);
    assert_eq!(align_of::<aqlprofile_pmc_profile_t>(), 8);
}

#[test]
fn v2_bit_fields() {
    let f = aqlprofile_buffer_desc_flags_t::new(true, true, AQLPROFILE_MEMORY_HINT_DEVICE_UNCACHED);
    assert_eq!(f.raw, 0b1011);
    assert!(f.device_access() && f.host_access());
    assert_eq!(f.memory_hint(), AQLPROFILE_MEMORY_HINT_DEVICE_UNCACHED);
    let host_only = aqlprofile_buffer_desc_flags_t::new(false, true, AQLPROFILE_MEMORY_HINT_HOST);
    assert!(!host_only.device_access());
    assert_eq!(size_of::<aqlprofile_buffer_desc_flags_t>(), 4);
    let e = aqlprofile_pmc_event_flags_t { raw: 0xFFFF_FFF2 };
    assert_eq!(e.accum(), AQLPROFILE_ACCUMULATION_HI_RES);
    assert_eq!(AQLPROFILE_BLOCK_NAME_CPG, 38);
    assert_eq!(AQLPROFILE_BLOCKS_NUMBER, 56);
}
