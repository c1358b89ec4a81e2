//! Pins the modern table ABI: every offset listed in the runtime facts, the table sizes, and the
//! checked accessor's refusal to read past a short table.

use hsa_abi::*;
use std::mem::{offset_of, size_of};

#[test]
fn root_table_offsets() {
    assert_eq!(size_of::<ApiTableVersion>(), 16);
    assert_eq!(offset_of!(HsaApiTable, core_), 16);
    assert_eq!(offset_of!(HsaApiTable, amd_ext_), 24);
    assert_eq!(offset_of!(HsaApiTable, finalizer_ext_), 32);
    assert_eq!(offset_of!(HsaApiTable, image_ext_), 40);
    assert_eq!(offset_of!(HsaApiTable, tools_), 48);
    assert_eq!(offset_of!(HsaApiTable, pc_sampling_ext_), 56);
    assert_eq!(size_of::<HsaApiTable>(), 64);
}

#[test]
fn core_slot_offsets() {
    assert_eq!(offset_of!(CoreApiTable, hsa_init_fn), member_offset(1));
    assert_eq!(offset_of!(CoreApiTable, hsa_queue_create_fn), 72);
    assert_eq!(offset_of!(CoreApiTable, hsa_queue_destroy_fn), 88);
    assert_eq!(offset_of!(CoreApiTable, hsa_memory_allocate_fn), 280);
    assert_eq!(offset_of!(CoreApiTable, hsa_memory_free_fn), 288);
    assert_eq!(offset_of!(CoreApiTable, hsa_memory_copy_fn), 296);
    assert_eq!(offset_of!(CoreApiTable, hsa_signal_create_fn), 312);
    assert_eq!(
        offset_of!(CoreApiTable, hsa_executable_iterate_agent_symbols_fn),
        1000
    );
    assert_eq!(CoreApiTable::SLOT_NAMES.len(), 125);
    assert_eq!(size_of::<CoreApiTable>(), 1016);
}

#[test]
fn amd_ext_slot_offsets() {
    assert_eq!(offset_of!(AmdExtTable, hsa_amd_signal_async_handler_fn), 72);
    assert_eq!(
        offset_of!(AmdExtTable, hsa_amd_memory_pool_allocate_fn),
        120
    );
    assert_eq!(offset_of!(AmdExtTable, hsa_amd_memory_pool_free_fn), 128);
    assert_eq!(offset_of!(AmdExtTable, hsa_amd_memory_async_copy_fn), 136);
    assert_eq!(offset_of!(AmdExtTable, hsa_amd_pointer_info_fn), 240);
    assert_eq!(offset_of!(AmdExtTable, hsa_amd_signal_create_fn), 280);
    assert_eq!(
        offset_of!(AmdExtTable, hsa_amd_queue_intercept_create_fn),
        312
    );
    assert_eq!(
        offset_of!(AmdExtTable, hsa_amd_queue_intercept_register_fn),
        320
    );
    assert_eq!(
        offset_of!(AmdExtTable, hsa_amd_vmem_address_reserve_fn),
        456
    );
    assert_eq!(
        offset_of!(
            AmdExtTable,
            hsa_amd_vmem_get_alloc_properties_from_handle_fn
        ),
        544
    );
    assert_eq!(
        offset_of!(AmdExtTable, hsa_amd_vmem_address_reserve_align_fn),
        568
    );
    assert_eq!(
        offset_of!(AmdExtTable, hsa_amd_memory_async_batch_copy_fn),
        640
    );
    // step 0x00 (ROCm 6.0) ends at member 67; step 0x0D at member 82.
    assert_eq!(
        offset_of!(
            AmdExtTable,
            hsa_amd_vmem_get_alloc_properties_from_handle_fn
        ) + 8,
        552
    );
    assert_eq!(AmdExtTable::SLOT_NAMES.len(), 82);
    assert_eq!(size_of::<AmdExtTable>(), 672);
}

#[test]
fn checked_access_respects_minor_id() {
    // A step-0x00 table (552 bytes) in a buffer the size of the modern struct.
    let mut buf = vec![0u8; size_of::<AmdExtTable>()];
    let v = ApiTableVersion {
        major_id: AMD_EXT_MAJOR,
        minor_id: 552,
        step_id: 0,
        reserved: 0,
    };
    // SAFETY: the buffer is large enough for the header.
    unsafe {
        buf.as_mut_ptr()
            .cast::<ApiTableVersion>()
            .write_unaligned(v)
    };
    // SAFETY: header readable, buffer as long as `minor_id` claims.
    let t = unsafe { TablePtr::new(buf.as_mut_ptr().cast::<AmdExtTable>()) }.unwrap();
    assert!(t.check_major(AMD_EXT_MAJOR).is_ok());
    assert!(read_slot!(t, AmdExtTable, hsa_amd_pointer_info_fn).is_ok());
    assert!(
        read_slot!(
            t,
            AmdExtTable,
            hsa_amd_vmem_get_alloc_properties_from_handle_fn
        )
        .is_ok()
    );
    let err = read_slot!(t, AmdExtTable, hsa_amd_vmem_address_reserve_align_fn).unwrap_err();
    assert_eq!(
        err,
        SlotError::NotCovered {
            table: "amd_ext",
            offset: 568,
            minor_id: 552
        }
    );
    assert!(err.to_string().contains("568"));
    assert!(write_slot!(t, AmdExtTable, hsa_amd_memory_async_batch_copy_fn, None).is_err());
    assert_eq!(
        t.check_major(1),
        Err(SlotError::WrongMajor {
            table: "amd_ext",
            found: 2,
            expected: 1
        })
    );
}

#[test]
fn ffi_types_are_bound() {
    // Packet layout is fixed by the AQL spec: 64 bytes.
    assert_eq!(size_of::<ffi::hsa_kernel_dispatch_packet_t>(), 64);
    assert_eq!(size_of::<ffi::hsa_barrier_and_packet_t>(), 64);
    assert_eq!(ffi::HSA_PACKET_TYPE_KERNEL_DISPATCH, 2);
    assert_eq!(ffi::HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, 4);
}
