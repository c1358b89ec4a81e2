//! Entries of the image extension (`hsa_ext_image_*`, `hsa_ext_sampler_*`) and its extension
//! table.
//!
//! Checks in ROCR's order: the runtime is open, the agent exists (`INVALID_AGENT`), pointers
//! are not NULL and enumerations hold a known value (`INVALID_ARGUMENT`); then the domain
//! module (`crate::image`) answers. Agents without images (the CPU, gfx942) report capability
//! 0 and refuse images with `HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED` and samplers with
//! `INVALID_AGENT`.

use crate::boundary::{read_in, status_call, write_out};
use crate::error::{Error, Result};
use crate::image::{DataLayout, Geometry};
use crate::open_state::ensure_open;
use crate::topology::{Agent, agent};
use hsa_abi::ImageExtTable;
use hsa_abi::ffi::*;
use std::ffi::c_void;

/// The runtime is open and `handle` names an agent.
fn open_agent(handle: hsa_agent_t) -> Result<&'static Agent> {
    ensure_open()?;
    agent(handle.handle)
}

fn geometry(g: hsa_ext_image_geometry_t) -> Result<Geometry> {
    Geometry::from_hsa(g).ok_or(Error::InvalidArgument("unknown image geometry"))
}

/// A LINEAR layout with its pitches (the `_with_layout` entries take no other).
fn linear(
    layout: hsa_ext_image_data_layout_t,
    row_pitch: usize,
    slice_pitch: usize,
) -> Result<DataLayout> {
    if layout != HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR {
        return Err(Error::InvalidArgument(
            "image_data_layout must be HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR (use the entry without a layout for OPAQUE)",
        ));
    }
    Ok(DataLayout::Linear {
        row_pitch,
        slice_pitch,
    })
}

fn access(permission: hsa_access_permission_t) -> Result<()> {
    match permission {
        HSA_ACCESS_PERMISSION_RO | HSA_ACCESS_PERMISSION_WO | HSA_ACCESS_PERMISSION_RW => Ok(()),
        _ => Err(Error::InvalidArgument("unknown access permission")),
    }
}

fn capability_of(
    agent_h: hsa_agent_t,
    g: hsa_ext_image_geometry_t,
    format: *const hsa_ext_image_format_t,
    layout: Option<hsa_ext_image_data_layout_t>,
    mask: *mut u32,
) -> Result<()> {
    let a = open_agent(agent_h)?;
    let format = read_in(format, "image_format is NULL")?;
    if mask.is_null() {
        return Err(Error::InvalidArgument("capability_mask is NULL"));
    }
    let g = geometry(g)?;
    if let Some(layout) = layout {
        linear(layout, 0, 0)?;
    }
    write_out(
        mask,
        crate::image::capability(a, g, format),
        "capability_mask is NULL",
    )
}

unsafe extern "C" fn image_get_capability(
    agent: hsa_agent_t,
    geometry: hsa_ext_image_geometry_t,
    format: *const hsa_ext_image_format_t,
    mask: *mut u32,
) -> hsa_status_t {
    status_call("hsa_ext_image_get_capability", || {
        capability_of(agent, geometry, format, None, mask)
    })
}

unsafe extern "C" fn image_get_capability_with_layout(
    agent: hsa_agent_t,
    geometry: hsa_ext_image_geometry_t,
    format: *const hsa_ext_image_format_t,
    layout: hsa_ext_image_data_layout_t,
    mask: *mut u32,
) -> hsa_status_t {
    status_call("hsa_ext_image_get_capability_with_layout", || {
        capability_of(agent, geometry, format, Some(layout), mask)
    })
}

fn data_info_of(
    agent_h: hsa_agent_t,
    descriptor: *const hsa_ext_image_descriptor_t,
    permission: hsa_access_permission_t,
    layout: impl FnOnce() -> Result<DataLayout>,
    info: *mut hsa_ext_image_data_info_t,
) -> Result<()> {
    let a = open_agent(agent_h)?;
    let desc = read_in(descriptor, "image_descriptor is NULL")?;
    if info.is_null() {
        return Err(Error::InvalidArgument("image_data_info is NULL"));
    }
    access(permission)?;
    let layout = layout()?;
    let (size, alignment) = crate::image::data_info(a, &desc, geometry(desc.geometry)?, layout)?;
    write_out(
        info,
        hsa_ext_image_data_info_t { size, alignment },
        "image_data_info is NULL",
    )
}

unsafe extern "C" fn image_data_get_info(
    agent: hsa_agent_t,
    descriptor: *const hsa_ext_image_descriptor_t,
    access: hsa_access_permission_t,
    info: *mut hsa_ext_image_data_info_t,
) -> hsa_status_t {
    status_call("hsa_ext_image_data_get_info", || {
        data_info_of(agent, descriptor, access, || Ok(DataLayout::Opaque), info)
    })
}

unsafe extern "C" fn image_data_get_info_with_layout(
    agent: hsa_agent_t,
    descriptor: *const hsa_ext_image_descriptor_t,
    access: hsa_access_permission_t,
    layout: hsa_ext_image_data_layout_t,
    row_pitch: usize,
    slice_pitch: usize,
    info: *mut hsa_ext_image_data_info_t,
) -> hsa_status_t {
    status_call("hsa_ext_image_data_get_info_with_layout", || {
        data_info_of(
            agent,
            descriptor,
            access,
            || linear(layout, row_pitch, slice_pitch),
            info,
        )
    })
}

fn create_of(
    agent_h: hsa_agent_t,
    descriptor: *const hsa_ext_image_descriptor_t,
    data: *const c_void,
    permission: hsa_access_permission_t,
    layout: impl FnOnce() -> Result<DataLayout>,
    image: *mut hsa_ext_image_t,
) -> Result<()> {
    let a = open_agent(agent_h)?;
    let desc = read_in(descriptor, "image_descriptor is NULL")?;
    if data.is_null() || image.is_null() {
        return Err(Error::InvalidArgument("image_data or image is NULL"));
    }
    access(permission)?;
    let layout = layout()?;
    let handle = crate::image::create(a, &desc, geometry(desc.geometry)?, data as usize, layout)?;
    write_out(image, hsa_ext_image_t { handle }, "image is NULL")
}

unsafe extern "C" fn image_create(
    agent: hsa_agent_t,
    descriptor: *const hsa_ext_image_descriptor_t,
    data: *const c_void,
    access: hsa_access_permission_t,
    image: *mut hsa_ext_image_t,
) -> hsa_status_t {
    status_call("hsa_ext_image_create", || {
        create_of(
            agent,
            descriptor,
            data,
            access,
            || Ok(DataLayout::Opaque),
            image,
        )
    })
}

unsafe extern "C" fn image_create_with_layout(
    agent: hsa_agent_t,
    descriptor: *const hsa_ext_image_descriptor_t,
    data: *const c_void,
    access: hsa_access_permission_t,
    layout: hsa_ext_image_data_layout_t,
    row_pitch: usize,
    slice_pitch: usize,
    image: *mut hsa_ext_image_t,
) -> hsa_status_t {
    status_call("hsa_ext_image_create_with_layout", || {
        create_of(
            agent,
            descriptor,
            data,
            access,
            || linear(layout, row_pitch, slice_pitch),
            image,
        )
    })
}

unsafe extern "C" fn image_destroy(agent: hsa_agent_t, image: hsa_ext_image_t) -> hsa_status_t {
    status_call("hsa_ext_image_destroy", || {
        open_agent(agent)?;
        crate::image::destroy(image.handle)
    })
}

unsafe extern "C" fn image_import(
    agent: hsa_agent_t,
    src: *const c_void,
    row_pitch: usize,
    slice_pitch: usize,
    image: hsa_ext_image_t,
    region: *const hsa_ext_image_region_t,
) -> hsa_status_t {
    status_call("hsa_ext_image_import", || {
        open_agent(agent)?;
        if src.is_null() {
            return Err(Error::InvalidArgument("src_memory is NULL"));
        }
        let r = read_in(region, "image_region is NULL")?;
        crate::image::import(
            image.handle,
            src as usize,
            row_pitch,
            slice_pitch,
            r.offset,
            r.range,
        )
    })
}

unsafe extern "C" fn image_export(
    agent: hsa_agent_t,
    image: hsa_ext_image_t,
    dst: *mut c_void,
    row_pitch: usize,
    slice_pitch: usize,
    region: *const hsa_ext_image_region_t,
) -> hsa_status_t {
    status_call("hsa_ext_image_export", || {
        open_agent(agent)?;
        if dst.is_null() {
            return Err(Error::InvalidArgument("dst_memory is NULL"));
        }
        let r = read_in(region, "image_region is NULL")?;
        crate::image::export(
            image.handle,
            dst as usize,
            row_pitch,
            slice_pitch,
            r.offset,
            r.range,
        )
    })
}

unsafe extern "C" fn image_copy(
    agent: hsa_agent_t,
    src: hsa_ext_image_t,
    src_offset: *const hsa_dim3_t,
    dst: hsa_ext_image_t,
    dst_offset: *const hsa_dim3_t,
    range: *const hsa_dim3_t,
) -> hsa_status_t {
    status_call("hsa_ext_image_copy", || {
        open_agent(agent)?;
        let src_offset = read_in(src_offset, "src_offset is NULL")?;
        let dst_offset = read_in(dst_offset, "dst_offset is NULL")?;
        let range = read_in(range, "range is NULL")?;
        crate::image::copy(src.handle, src_offset, dst.handle, dst_offset, range)
    })
}

unsafe extern "C" fn image_clear(
    agent: hsa_agent_t,
    image: hsa_ext_image_t,
    data: *const c_void,
    region: *const hsa_ext_image_region_t,
) -> hsa_status_t {
    status_call("hsa_ext_image_clear", || {
        open_agent(agent)?;
        let r = read_in(region, "image_region is NULL")?;
        if data.is_null() {
            return Err(Error::InvalidArgument("data is NULL"));
        }
        // The value has one 32-bit channel per access component of the image's channel order.
        let value = match crate::image::clear_channels(image.handle)? {
            1 => [read_in(data.cast::<u32>(), "data is NULL")?, 0, 0, 0],
            _ => read_in(data.cast::<[u32; 4]>(), "data is NULL")?,
        };
        crate::image::clear(image.handle, value, r.offset, r.range)
    })
}

unsafe extern "C" fn sampler_create(
    agent: hsa_agent_t,
    descriptor: *const hsa_ext_sampler_descriptor_t,
    sampler: *mut hsa_ext_sampler_t,
) -> hsa_status_t {
    status_call("hsa_ext_sampler_create", || {
        let a = open_agent(agent)?;
        let desc = read_in(descriptor, "sampler_descriptor is NULL")?;
        if sampler.is_null() {
            return Err(Error::InvalidArgument("sampler is NULL"));
        }
        let s = crate::image::sampler_descriptor(&desc).ok_or(Error::InvalidArgument(
            "unknown addressing, coordinate or filter mode",
        ))?;
        let handle = crate::image::sampler_create(a, s)?;
        write_out(sampler, hsa_ext_sampler_t { handle }, "sampler is NULL")
    })
}

unsafe extern "C" fn sampler_destroy(
    agent: hsa_agent_t,
    sampler: hsa_ext_sampler_t,
) -> hsa_status_t {
    status_call("hsa_ext_sampler_destroy", || {
        open_agent(agent)?;
        crate::image::sampler_destroy(sampler.handle)
    })
}

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

/// The images extension table (`hsa_ext_images_1_pfn_t`, major version 1) for
/// `hsa_system_get_major_extension_table`: its first `length` bytes (the 1.00 table of ten
/// entries is its prefix), filled from [`install`]'s functions.
pub(super) fn extension_table(version_major: u16, length: usize, table: *mut c_void) -> Result<()> {
    if !crate::image::system_has_images() {
        return Err(Error::InvalidArgument(
            "no agent of this system supports images",
        ));
    }
    if version_major != 1 {
        return Err(Error::InvalidArgument(
            "the images extension has major version 1 only",
        ));
    }
    let mut t = crate::table::Tables::empty().image;
    install(&mut t);
    let full = hsa_ext_images_1_pfn_t {
        hsa_ext_image_get_capability: t.hsa_ext_image_get_capability_fn,
        hsa_ext_image_data_get_info: t.hsa_ext_image_data_get_info_fn,
        hsa_ext_image_create: t.hsa_ext_image_create_fn,
        hsa_ext_image_destroy: t.hsa_ext_image_destroy_fn,
        hsa_ext_image_copy: t.hsa_ext_image_copy_fn,
        hsa_ext_image_import: t.hsa_ext_image_import_fn,
        hsa_ext_image_export: t.hsa_ext_image_export_fn,
        hsa_ext_image_clear: t.hsa_ext_image_clear_fn,
        hsa_ext_sampler_create: t.hsa_ext_sampler_create_fn,
        hsa_ext_sampler_destroy: t.hsa_ext_sampler_destroy_fn,
        hsa_ext_image_get_capability_with_layout: t.hsa_ext_image_get_capability_with_layout_fn,
        hsa_ext_image_data_get_info_with_layout: t.hsa_ext_image_data_get_info_with_layout_fn,
        hsa_ext_image_create_with_layout: t.hsa_ext_image_create_with_layout_fn,
    };
    let n = length.min(std::mem::size_of_val(&full));
    // SAFETY: the caller's table holds `length` >= `n` writable bytes; `full` is plain data.
    unsafe { std::ptr::copy_nonoverlapping((&raw const full).cast::<u8>(), table.cast(), n) };
    Ok(())
}
