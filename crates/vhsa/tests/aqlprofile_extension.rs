//! vhsa's aqlprofile extension, in process: the major-1 query, the table copied to the caller's
//! length (a ROCm 5.2 caller's 10 slots, ROCm 6/7's 13), the extension bit of the system and
//! the GPU agents, `NUM_XCC`, and the table's functions answering for the agents.
//!
//! The runtime runs with `VHSA_AGENTS=gfx942,gfx90a`.

use hsa_abi::aqlprofile::{AQLPROFILE_LIBRARY_MAJOR, AqlprofileV1Table};
use hsa_abi::ffi::*;

mod in_process;
use in_process::agents;

fn table(length: usize) -> (hsa_status_t, AqlprofileV1Table) {
    agents();
    let get: hsa_system_get_major_extension_table_fn_t =
        test_support::vhsa_symbol("hsa_system_get_major_extension_table");
    let mut t = AqlprofileV1Table::default();
    // SAFETY: `t` holds at least `length` bytes (callers ask for at most its size).
    let st = unsafe {
        get.unwrap()(
            HSA_EXTENSION_AMD_AQLPROFILE as u16,
            1,
            length,
            (&raw mut t).cast(),
        )
    };
    (st, t)
}

#[test]
fn major_one_is_supported_and_the_extension_bit_is_set() {
    let a = agents();
    let supported: hsa_system_major_extension_supported_fn_t =
        test_support::vhsa_symbol("hsa_system_major_extension_supported");
    let (mut minor, mut ok) = (99u16, false);
    // SAFETY: valid out-pointers.
    let st =
        unsafe { supported.unwrap()(HSA_EXTENSION_AMD_AQLPROFILE as u16, 1, &mut minor, &mut ok) };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert!(ok);
    assert_eq!(minor, 0);
    // SAFETY: as above.
    let st =
        unsafe { supported.unwrap()(HSA_EXTENSION_AMD_AQLPROFILE as u16, 2, &mut minor, &mut ok) };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert!(!ok, "major 2 does not exist");
    let info: hsa_agent_get_info_fn_t = test_support::vhsa_symbol("hsa_agent_get_info");
    let bit = HSA_EXTENSION_AMD_AQLPROFILE as usize;
    for gpu in &a[1..] {
        let mut mask = [0u8; 128];
        // SAFETY: the extension mask is 128 bytes.
        let st =
            unsafe { info.unwrap()(*gpu, HSA_AGENT_INFO_EXTENSIONS, mask.as_mut_ptr().cast()) };
        assert_eq!(st, HSA_STATUS_SUCCESS);
        assert_ne!(mask[bit / 8] & (1 << (bit % 8)), 0);
    }
    // NUM_XCC: 8 on gfx942 (MI300X), 1 on gfx90a.
    for (gpu, xcc) in [(a[1], 8u32), (a[2], 1)] {
        let mut v = 0u32;
        // SAFETY: NUM_XCC is a uint32_t.
        let st = unsafe {
            info.unwrap()(
                gpu,
                hsa_abi::modern::HSA_AMD_AGENT_INFO_NUM_XCC,
                (&raw mut v).cast(),
            )
        };
        assert_eq!(st, HSA_STATUS_SUCCESS);
        assert_eq!(v, xcc);
    }
}

#[test]
fn the_table_is_copied_to_the_callers_length() {
    let full = std::mem::size_of::<AqlprofileV1Table>();
    let legacy = std::mem::size_of::<hsa_ven_amd_aqlprofile_1_00_pfn_t>();
    let (st, t) = table(full);
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert!(t.iterate_event_coord.is_some() && t.att_marker.is_some());
    // SAFETY: the table's own functions.
    assert_eq!(
        unsafe { t.base.hsa_ven_amd_aqlprofile_version_major.unwrap()() },
        AQLPROFILE_LIBRARY_MAJOR
    );
    // A ROCm 5.2 caller's 10 slots: the ROCm 6/7 slots after them stay untouched.
    let (st, t) = table(legacy);
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert!(t.base.hsa_ven_amd_aqlprofile_iterate_data.is_some());
    assert!(t.iterate_event_ids.is_none() && t.att_marker.is_none());
    let (_, t) = table(8);
    assert!(t.base.hsa_ven_amd_aqlprofile_version_major.is_some());
    assert!(t.base.hsa_ven_amd_aqlprofile_version_minor.is_none());
}

#[test]
fn the_tables_functions_answer_for_the_agents() {
    let a = agents();
    let (_, t) = table(std::mem::size_of::<AqlprofileV1Table>());
    let validate = t.base.hsa_ven_amd_aqlprofile_validate_event.unwrap();
    let sq_waves = hsa_ven_amd_aqlprofile_event_t {
        block_name: HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_SQ,
        block_index: 0,
        counter_id: 4,
    };
    // TCC_HIT: a cache counter, not offered.
    let tcc_hit = hsa_ven_amd_aqlprofile_event_t {
        block_name: HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_TCC,
        block_index: 0,
        counter_id: 17,
    };
    for (gpu, e, want) in [
        (a[1], sq_waves, true),
        (a[2], sq_waves, true),
        (a[1], tcc_hit, false),
    ] {
        let mut ok = !want;
        // SAFETY: valid event and out-pointer.
        assert_eq!(unsafe { validate(gpu, &e, &mut ok) }, HSA_STATUS_SUCCESS);
        assert_eq!(ok, want);
    }
    // A profile's buffer sizes: SQ_WAVES has one sample per shader engine (32 on gfx942).
    let mut p = hsa_ven_amd_aqlprofile_profile_t {
        agent: a[1],
        type_: HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC,
        events: &sq_waves,
        event_count: 1,
        ..Default::default()
    };
    // SAFETY: a valid profile; NULL asks for the sizes.
    let st = unsafe { t.base.hsa_ven_amd_aqlprofile_start.unwrap()(&mut p, std::ptr::null_mut()) };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert!(p.output_buffer.size as usize >= 16 + 32 * 8);
    assert!(p.command_buffer.size > 0);
    // The per-pass limit of SQ.
    let mut n = 0u32;
    // SAFETY: BLOCK_COUNTERS writes a uint32_t.
    let st = unsafe {
        t.base.hsa_ven_amd_aqlprofile_get_info.unwrap()(
            &p,
            HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_COUNTERS,
            (&raw mut n).cast(),
        )
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert_eq!(n, 8);
}
