//! Entries of the image extension (`hsa_ext_image_*`, `hsa_ext_sampler_*`).
//!
//! No agent of vhsa supports images: `HSA_EXTENSION_IMAGES` is not in the extension masks, and
//! every entry answers `HSA_STATUS_ERROR_NOT_INITIALIZED`, as ROCR's entries do when its image
//! implementation is not loaded. They exist so that programs linked against them (HIP binds
//! them at load time with `LD_BIND_NOW=1`) start.

use crate::boundary::value_call;
use hsa_abi::ImageExtTable;
use hsa_abi::ffi::*;
use std::ffi::c_void;

macro_rules! unsupported {
    ($name:ident ( $($arg:ident : $ty:ty),* )) => {
        unsafe extern "C" fn $name($($arg: $ty),*) -> hsa_status_t {
            $(let _ = $arg;)*
            value_call(stringify!($name), HSA_STATUS_ERROR, || HSA_STATUS_ERROR_NOT_INITIALIZED)
        }
    };
}

unsupported!(image_get_capability(agent: hsa_agent_t, geometry: hsa_ext_image_geometry_t, format: *const hsa_ext_image_format_t, mask: *mut u32));
unsupported!(image_data_get_info(agent: hsa_agent_t, descriptor: *const hsa_ext_image_descriptor_t, access: hsa_access_permission_t, info: *mut hsa_ext_image_data_info_t));
unsupported!(image_create(agent: hsa_agent_t, descriptor: *const hsa_ext_image_descriptor_t, data: *const c_void, access: hsa_access_permission_t, image: *mut hsa_ext_image_t));
unsupported!(image_import(agent: hsa_agent_t, src: *const c_void, row_pitch: usize, slice_pitch: usize, image: hsa_ext_image_t, region: *const hsa_ext_image_region_t));
unsupported!(image_export(agent: hsa_agent_t, image: hsa_ext_image_t, dst: *mut c_void, row_pitch: usize, slice_pitch: usize, region: *const hsa_ext_image_region_t));
unsupported!(image_copy(agent: hsa_agent_t, src: hsa_ext_image_t, src_offset: *const hsa_dim3_t, dst: hsa_ext_image_t, dst_offset: *const hsa_dim3_t, range: *const hsa_dim3_t));
unsupported!(image_clear(agent: hsa_agent_t, image: hsa_ext_image_t, data: *const c_void, region: *const hsa_ext_image_region_t));
unsupported!(image_destroy(agent: hsa_agent_t, image: hsa_ext_image_t));
unsupported!(sampler_create(agent: hsa_agent_t, descriptor: *const hsa_ext_sampler_descriptor_t, sampler: *mut hsa_ext_sampler_t));
unsupported!(sampler_destroy(agent: hsa_agent_t, sampler: hsa_ext_sampler_t));
unsupported!(image_get_capability_with_layout(agent: hsa_agent_t, geometry: hsa_ext_image_geometry_t, format: *const hsa_ext_image_format_t, layout: hsa_ext_image_data_layout_t, mask: *mut u32));
unsupported!(image_data_get_info_with_layout(agent: hsa_agent_t, descriptor: *const hsa_ext_image_descriptor_t, access: hsa_access_permission_t, layout: hsa_ext_image_data_layout_t, row_pitch: usize, slice_pitch: usize, info: *mut hsa_ext_image_data_info_t));
unsupported!(image_create_with_layout(agent: hsa_agent_t, descriptor: *const hsa_ext_image_descriptor_t, data: *const c_void, access: hsa_access_permission_t, layout: hsa_ext_image_data_layout_t, row_pitch: usize, slice_pitch: usize, image: *mut hsa_ext_image_t));

/// Fills the image table.
pub(super) fn install(image: &mut ImageExtTable) {
    image.hsa_ext_image_get_capability_fn = Some(image_get_capability);
    image.hsa_ext_image_data_get_info_fn = Some(image_data_get_info);
    image.hsa_ext_image_create_fn = Some(image_create);
    image.hsa_ext_image_import_fn = Some(image_import);
    image.hsa_ext_image_export_fn = Some(image_export);
    image.hsa_ext_image_copy_fn = Some(image_copy);
    image.hsa_ext_image_clear_fn = Some(image_clear);
    image.hsa_ext_image_destroy_fn = Some(image_destroy);
    image.hsa_ext_sampler_create_fn = Some(sampler_create);
    image.hsa_ext_sampler_destroy_fn = Some(sampler_destroy);
    image.hsa_ext_image_get_capability_with_layout_fn = Some(image_get_capability_with_layout);
    image.hsa_ext_image_data_get_info_with_layout_fn = Some(image_data_get_info_with_layout);
    image.hsa_ext_image_create_with_layout_fn = Some(image_create_with_layout);
}
