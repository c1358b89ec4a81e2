//! vhsa's image extension, in process: the extension advertised for the gfx90a agent only, the
//! agents' image attributes, image data sizes and pitch checks, the image and sampler objects
//! decoded with the emulator's own descriptor decoders, imports, exports, copies and clears
//! over linear layouts (device memory and locked host memory at its agent address), and every
//! error status of the entries.
//!
//! The runtime runs with `VHSA_AGENTS=gfx942,gfx90a`: the CPU, a GPU without images and one
//! with them.

use amdgpu_emu::resource::{
    ImageDescriptor, ImageKind, SWIZZLE_LINEAR, SamplerDescriptor, Wrap, border, filter, sel,
};
use amdgpu_emu::texel;
use hsa_abi::ffi::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

mod in_process;
use in_process::agents;

/// The entry `$name` of vhsa, as its `$ty` (an `hsa-abi` `*_fn_t`).
macro_rules! entry {
    ($name:ident, $ty:ty) => {
        test_support::vhsa_symbol::<$ty>(stringify!($name)).expect(stringify!($name))
    };
}

const FORMAT_UNSUPPORTED: hsa_status_t = HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED;
const SIZE_UNSUPPORTED: hsa_status_t = HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED;
const PITCH_UNSUPPORTED: hsa_status_t = HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED;
const INVALID_ARGUMENT: hsa_status_t = HSA_STATUS_ERROR_INVALID_ARGUMENT;
const RW: hsa_access_permission_t = HSA_ACCESS_PERMISSION_RW;

/// Held by the tests that allocate memory: one of them frees memory under a live image, whose
/// range a concurrent allocation must not take over meanwhile.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn cpu() -> hsa_agent_t {
    agents()[0]
}
fn gfx942() -> hsa_agent_t {
    agents()[1]
}
fn gpu() -> hsa_agent_t {
    agents()[2]
}

fn format(order: u32, ty: u32) -> hsa_ext_image_format_t {
    hsa_ext_image_format_t {
        channel_type: ty,
        channel_order: order,
    }
}

fn desc(
    geometry: hsa_ext_image_geometry_t,
    [width, height, depth, array_size]: [usize; 4],
    format: hsa_ext_image_format_t,
) -> hsa_ext_image_descriptor_t {
    hsa_ext_image_descriptor_t {
        geometry,
        width,
        height,
        depth,
        array_size,
        format,
    }
}

fn rgba8() -> hsa_ext_image_format_t {
    format(
        HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8,
    )
}
fn r32f() -> hsa_ext_image_format_t {
    format(
        HSA_EXT_IMAGE_CHANNEL_ORDER_R,
        HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT,
    )
}
fn r32u() -> hsa_ext_image_format_t {
    format(
        HSA_EXT_IMAGE_CHANNEL_ORDER_R,
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32,
    )
}

fn dim3(x: u32, y: u32, z: u32) -> hsa_dim3_t {
    hsa_dim3_t { x, y, z }
}

fn region(offset: hsa_dim3_t, range: hsa_dim3_t) -> hsa_ext_image_region_t {
    hsa_ext_image_region_t { offset, range }
}

/// An image data layout: `None` for OPAQUE, LINEAR with its row and slice pitches.
type Layout = Option<(usize, usize)>;

/// `hsa_ext_image_data_get_info` (`layout` `None`) or `_with_layout` (LINEAR, the pitches).
fn data_info(
    agent: hsa_agent_t,
    d: &hsa_ext_image_descriptor_t,
    layout: Layout,
) -> Result<(usize, usize), hsa_status_t> {
    let mut info = hsa_ext_image_data_info_t {
        size: 7,
        alignment: 7,
    };
    // SAFETY: valid descriptor and out-pointer.
    let st = unsafe {
        match layout {
            None => entry!(
                hsa_ext_image_data_get_info,
                hsa_ext_image_data_get_info_fn_t
            )(agent, d, RW, &mut info),
            Some((row, slice)) => entry!(
                hsa_ext_image_data_get_info_with_layout,
                hsa_ext_image_data_get_info_with_layout_fn_t
            )(
                agent,
                d,
                RW,
                HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR,
                row,
                slice,
                &mut info,
            ),
        }
    };
    if st == HSA_STATUS_SUCCESS {
        Ok((info.size, info.alignment))
    } else {
        assert_eq!((info.size, info.alignment), (7, 7), "written on failure");
        Err(st)
    }
}

/// `hsa_ext_image_create` (`layout` `None`) or `_with_layout` (LINEAR, the pitches).
fn create(
    agent: hsa_agent_t,
    d: &hsa_ext_image_descriptor_t,
    data: usize,
    layout: Layout,
) -> Result<u64, hsa_status_t> {
    let mut image = hsa_ext_image_t { handle: 7 };
    let data = data as *const c_void;
    // SAFETY: valid descriptor and out-pointer; `data` is the caller's image memory.
    let st = unsafe {
        match layout {
            None => entry!(hsa_ext_image_create, hsa_ext_image_create_fn_t)(
                agent, d, data, RW, &mut image,
            ),
            Some((row, slice)) => entry!(
                hsa_ext_image_create_with_layout,
                hsa_ext_image_create_with_layout_fn_t
            )(
                agent,
                d,
                data,
                RW,
                HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR,
                row,
                slice,
                &mut image,
            ),
        }
    };
    if st == HSA_STATUS_SUCCESS {
        Ok(image.handle)
    } else {
        assert_eq!(image.handle, 7, "written on failure");
        Err(st)
    }
}

fn destroy(agent: hsa_agent_t, handle: u64) -> hsa_status_t {
    // SAFETY: plain runtime call with a handle by value.
    unsafe {
        entry!(hsa_ext_image_destroy, hsa_ext_image_destroy_fn_t)(agent, hsa_ext_image_t { handle })
    }
}

fn import(
    handle: u64,
    src: &[u8],
    row_pitch: usize,
    slice_pitch: usize,
    r: hsa_ext_image_region_t,
) -> hsa_status_t {
    // SAFETY: `src` holds the region's rows at the given pitches (the callers size it so).
    unsafe {
        entry!(hsa_ext_image_import, hsa_ext_image_import_fn_t)(
            gpu(),
            src.as_ptr().cast(),
            row_pitch,
            slice_pitch,
            hsa_ext_image_t { handle },
            &r,
        )
    }
}

fn export(
    handle: u64,
    dst: &mut [u8],
    row_pitch: usize,
    slice_pitch: usize,
    r: hsa_ext_image_region_t,
) -> hsa_status_t {
    // SAFETY: `dst` holds the region's rows at the given pitches (the callers size it so).
    unsafe {
        entry!(hsa_ext_image_export, hsa_ext_image_export_fn_t)(
            gpu(),
            hsa_ext_image_t { handle },
            dst.as_mut_ptr().cast(),
            row_pitch,
            slice_pitch,
            &r,
        )
    }
}

fn clear(handle: u64, value: [u32; 4], r: hsa_ext_image_region_t) -> hsa_status_t {
    // SAFETY: `value` is four 32-bit channels.
    unsafe {
        entry!(hsa_ext_image_clear, hsa_ext_image_clear_fn_t)(
            gpu(),
            hsa_ext_image_t { handle },
            value.as_ptr().cast(),
            &r,
        )
    }
}

/// The whole image of `dims` (x, y, z extents) exported tightly packed.
fn export_all(handle: u64, dims: [u32; 3], bytes: usize) -> Vec<u8> {
    let mut out = vec![0u8; dims.iter().product::<u32>() as usize * bytes];
    let st = export(
        handle,
        &mut out,
        0,
        0,
        region(dim3(0, 0, 0), dim3(dims[0], dims[1], dims[2])),
    );
    assert_eq!(st, HSA_STATUS_SUCCESS);
    out
}

unsafe extern "C" fn pick_coarse(pool: hsa_amd_memory_pool_t, data: *mut c_void) -> hsa_status_t {
    let mut flags = 0u32;
    // SAFETY: GLOBAL_FLAGS is a uint32_t.
    let st = unsafe {
        entry!(
            hsa_amd_memory_pool_get_info,
            hsa_amd_memory_pool_get_info_fn_t
        )(
            pool,
            HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
            (&raw mut flags).cast(),
        )
    };
    if st == HSA_STATUS_SUCCESS && flags == HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED {
        // SAFETY: `data` is the pool slot passed by `device_pool`.
        unsafe { *data.cast::<hsa_amd_memory_pool_t>() = pool };
        return HSA_STATUS_INFO_BREAK;
    }
    HSA_STATUS_SUCCESS
}

/// `bytes` of the gfx90a's coarse-grained device memory.
fn alloc(bytes: usize) -> usize {
    let mut pool = hsa_amd_memory_pool_t { handle: 0 };
    // SAFETY: the callback writes `pool`, which outlives the call.
    unsafe {
        entry!(
            hsa_amd_agent_iterate_memory_pools,
            hsa_amd_agent_iterate_memory_pools_fn_t
        )(gpu(), Some(pick_coarse), (&raw mut pool).cast())
    };
    assert_ne!(pool.handle, 0);
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    let st = unsafe {
        entry!(
            hsa_amd_memory_pool_allocate,
            hsa_amd_memory_pool_allocate_fn_t
        )(pool, bytes, 0, &mut p)
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    p as usize
}

fn free(p: usize) {
    // SAFETY: a pointer `alloc` returned.
    let st = unsafe {
        entry!(hsa_amd_memory_pool_free, hsa_amd_memory_pool_free_fn_t)(p as *mut c_void)
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
}

/// `N` dwords at agent address `addr`, read with `hsa_memory_copy`.
fn words<const N: usize>(addr: u64) -> [u32; N] {
    let mut w = [0u32; N];
    // SAFETY: `w` holds N dwords; `addr` is memory of the runtime (checked by the copy).
    let st = unsafe {
        entry!(hsa_memory_copy, hsa_memory_copy_fn_t)(
            w.as_mut_ptr().cast(),
            addr as *const c_void,
            N * 4,
        )
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    w
}

fn bit_set(mask: &[u8; 128], bit: u32) -> bool {
    mask[(bit / 8) as usize] & (1 << (bit % 8)) != 0
}

#[test]
fn the_extension_is_advertised_for_the_gfx90a_agent_only() {
    agents();
    let (mut ok, mut minor) = (false, 99u16);
    // SAFETY: valid out-pointers.
    let st = unsafe {
        entry!(
            hsa_system_extension_supported,
            hsa_system_extension_supported_fn_t
        )(HSA_EXTENSION_IMAGES as u16, 1, 0, &mut ok)
    };
    assert_eq!((st, ok), (HSA_STATUS_SUCCESS, true));
    // SAFETY: as above.
    let st = unsafe {
        entry!(
            hsa_system_major_extension_supported,
            hsa_system_major_extension_supported_fn_t
        )(HSA_EXTENSION_IMAGES as u16, 1, &mut minor, &mut ok)
    };
    assert_eq!((st, ok, minor), (HSA_STATUS_SUCCESS, true, 0));
    // SAFETY: as above.
    let st = unsafe {
        entry!(
            hsa_system_extension_supported,
            hsa_system_extension_supported_fn_t
        )(HSA_EXTENSION_IMAGES as u16, 1, 1, &mut ok)
    };
    assert_eq!(
        (st, ok),
        (HSA_STATUS_SUCCESS, false),
        "version 1.1 does not exist"
    );
    let info = entry!(hsa_agent_get_info, hsa_agent_get_info_fn_t);
    let supported = entry!(
        hsa_agent_extension_supported,
        hsa_agent_extension_supported_fn_t
    );
    for (agent, images) in [(cpu(), false), (gfx942(), false), (gpu(), true)] {
        let mut ok = !images;
        // SAFETY: valid out-pointer.
        let st = unsafe { supported(HSA_EXTENSION_IMAGES as u16, agent, 1, 0, &mut ok) };
        assert_eq!((st, ok), (HSA_STATUS_SUCCESS, images));
        let mut mask = [0u8; 128];
        // SAFETY: the extension mask is 128 bytes.
        let st = unsafe { info(agent, HSA_AGENT_INFO_EXTENSIONS, mask.as_mut_ptr().cast()) };
        assert_eq!(st, HSA_STATUS_SUCCESS);
        assert_eq!(bit_set(&mask, HSA_EXTENSION_IMAGES), images);
        assert!(bit_set(&mask, HSA_EXTENSION_AMD_LOADER));
    }
    let mut mask = [0u8; 128];
    // SAFETY: the extension mask is 128 bytes.
    let st = unsafe {
        entry!(hsa_system_get_info, hsa_system_get_info_fn_t)(
            HSA_SYSTEM_INFO_EXTENSIONS,
            mask.as_mut_ptr().cast(),
        )
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert!(bit_set(&mask, HSA_EXTENSION_IMAGES));
}

#[test]
fn the_extension_table_holds_the_entries() {
    agents();
    let get = entry!(
        hsa_system_get_major_extension_table,
        hsa_system_get_major_extension_table_fn_t
    );
    let mut t = hsa_ext_images_1_pfn_t::default();
    // SAFETY: `t` holds the whole table.
    let st = unsafe {
        get(
            HSA_EXTENSION_IMAGES as u16,
            1,
            size_of_val(&t),
            (&raw mut t).cast(),
        )
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert!(t.hsa_ext_image_create_with_layout.is_some() && t.hsa_ext_sampler_destroy.is_some());
    let mut caps = 0u32;
    let f = rgba8();
    // SAFETY: the table's own function, valid pointers.
    let st = unsafe {
        t.hsa_ext_image_get_capability.unwrap()(gpu(), HSA_EXT_IMAGE_GEOMETRY_2D, &f, &mut caps)
    };
    assert_eq!((st, caps), (HSA_STATUS_SUCCESS, 7));
    // The 1.00 table through the older query: ten entries, nothing written after them.
    let mut t = hsa_ext_images_1_pfn_t::default();
    // SAFETY: `t` holds more than the 1.00 table.
    let st = unsafe {
        entry!(
            hsa_system_get_extension_table,
            hsa_system_get_extension_table_fn_t
        )(HSA_EXTENSION_IMAGES as u16, 1, 0, (&raw mut t).cast())
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert!(t.hsa_ext_sampler_destroy.is_some());
    assert!(t.hsa_ext_image_get_capability_with_layout.is_none());
    // SAFETY: as above.
    let st = unsafe {
        get(
            HSA_EXTENSION_IMAGES as u16,
            2,
            size_of_val(&t),
            (&raw mut t).cast(),
        )
    };
    assert_eq!(st, INVALID_ARGUMENT, "major 2 does not exist");
}

#[test]
fn agents_report_rocr_image_limits() {
    let info = entry!(hsa_agent_get_info, hsa_agent_get_info_fn_t);
    let attr = |agent, attribute, n: usize| {
        let mut v = [0xAAAA_AAAAu32; 4];
        // SAFETY: every image attribute is at most three uint32_t.
        let st = unsafe { info(agent, attribute, v.as_mut_ptr().cast()) };
        assert_eq!(st, HSA_STATUS_SUCCESS, "attribute {attribute:#x}");
        assert_eq!(
            v[n], 0xAAAA_AAAA,
            "attribute {attribute:#x} writes {n} words"
        );
        v[..n].to_vec()
    };
    let expected: [(u32, &[u32]); 13] = [
        (HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS, &[16384]),
        (HSA_EXT_AGENT_INFO_IMAGE_1DA_MAX_ELEMENTS, &[16384]),
        (HSA_EXT_AGENT_INFO_IMAGE_1DB_MAX_ELEMENTS, &[u32::MAX]),
        (HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS, &[16384, 16384]),
        (HSA_EXT_AGENT_INFO_IMAGE_2DA_MAX_ELEMENTS, &[16384, 16384]),
        (
            HSA_EXT_AGENT_INFO_IMAGE_2DDEPTH_MAX_ELEMENTS,
            &[16384, 16384],
        ),
        (
            HSA_EXT_AGENT_INFO_IMAGE_2DADEPTH_MAX_ELEMENTS,
            &[16384, 16384],
        ),
        (
            HSA_EXT_AGENT_INFO_IMAGE_3D_MAX_ELEMENTS,
            &[16384, 16384, 8192],
        ),
        (HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS, &[8192]),
        (HSA_EXT_AGENT_INFO_MAX_IMAGE_RD_HANDLES, &[128]),
        (HSA_EXT_AGENT_INFO_MAX_IMAGE_RORW_HANDLES, &[64]),
        (HSA_EXT_AGENT_INFO_MAX_SAMPLER_HANDLERS, &[16]),
        (HSA_EXT_AGENT_INFO_IMAGE_LINEAR_ROW_PITCH_ALIGNMENT, &[256]),
    ];
    for (attribute, want) in expected {
        assert_eq!(attr(gpu(), attribute, want.len()), want, "{attribute:#x}");
        for agent in [cpu(), gfx942()] {
            assert_eq!(attr(agent, attribute, want.len()), vec![0; want.len()]);
        }
    }
}

#[test]
fn capabilities_follow_format_geometry_and_agent() {
    let caps = |agent, geometry, f: hsa_ext_image_format_t, layout: Option<u32>| {
        let mut c = 0xFFu32;
        // SAFETY: valid pointers.
        let st = unsafe {
            match layout {
                None => entry!(
                    hsa_ext_image_get_capability,
                    hsa_ext_image_get_capability_fn_t
                )(agent, geometry, &f, &mut c),
                Some(l) => entry!(
                    hsa_ext_image_get_capability_with_layout,
                    hsa_ext_image_get_capability_with_layout_fn_t
                )(agent, geometry, &f, l, &mut c),
            }
        };
        (st, c)
    };
    let ok = HSA_STATUS_SUCCESS;
    assert_eq!(
        caps(gpu(), HSA_EXT_IMAGE_GEOMETRY_2D, rgba8(), None),
        (ok, 7)
    );
    assert_eq!(
        caps(
            gpu(),
            HSA_EXT_IMAGE_GEOMETRY_3D,
            rgba8(),
            Some(HSA_EXT_IMAGE_DATA_LAYOUT_LINEAR)
        ),
        (ok, 7)
    );
    let rgb = format(
        HSA_EXT_IMAGE_CHANNEL_ORDER_RGB,
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565,
    );
    assert_eq!(caps(gpu(), HSA_EXT_IMAGE_GEOMETRY_2D, rgb, None), (ok, 0));
    let depth = format(
        HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH,
        HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT,
    );
    assert_eq!(
        caps(gpu(), HSA_EXT_IMAGE_GEOMETRY_2DDEPTH, depth, None),
        (ok, 3)
    );
    assert_eq!(
        caps(gpu(), HSA_EXT_IMAGE_GEOMETRY_2DDEPTH, r32f(), None),
        (ok, 0)
    );
    assert_eq!(
        caps(gfx942(), HSA_EXT_IMAGE_GEOMETRY_2D, rgba8(), None),
        (ok, 0)
    );
    assert_eq!(
        caps(cpu(), HSA_EXT_IMAGE_GEOMETRY_2D, rgba8(), None),
        (ok, 0)
    );
    // Errors: the OPAQUE layout with the layout entry, an unknown geometry, NULL pointers, an
    // unknown agent; nothing is written.
    assert_eq!(
        caps(
            gpu(),
            HSA_EXT_IMAGE_GEOMETRY_2D,
            rgba8(),
            Some(HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE)
        ),
        (INVALID_ARGUMENT, 0xFF)
    );
    assert_eq!(caps(gpu(), 8, rgba8(), None), (INVALID_ARGUMENT, 0xFF));
    let get = entry!(
        hsa_ext_image_get_capability,
        hsa_ext_image_get_capability_fn_t
    );
    let mut c = 0u32;
    // SAFETY: NULL pointers are what is checked.
    unsafe {
        assert_eq!(get(gpu(), 1, null(), &mut c), INVALID_ARGUMENT);
        assert_eq!(get(gpu(), 1, &rgba8(), null_mut()), INVALID_ARGUMENT);
        assert_eq!(
            get(hsa_agent_t { handle: 42 }, 1, &rgba8(), &mut c),
            HSA_STATUS_ERROR_INVALID_AGENT
        );
    }
}

#[test]
fn data_sizes_alignments_and_pitch_errors() {
    let g = gpu();
    let d2 = desc(HSA_EXT_IMAGE_GEOMETRY_2D, [100, 7, 0, 0], rgba8());
    assert_eq!(
        data_info(g, &d2, None),
        Ok((512 * 7, 256)),
        "rows aligned to 256 bytes"
    );
    assert_eq!(
        data_info(g, &d2, Some((0, 0))),
        Ok((400 * 7, 256)),
        "linear: tight rows"
    );
    assert_eq!(data_info(g, &d2, Some((1024, 0))), Ok((1024 * 7, 256)));
    assert_eq!(data_info(g, &d2, Some((1024, 7168))), Ok((1024 * 7, 256)));
    let d3 = desc(HSA_EXT_IMAGE_GEOMETRY_3D, [10, 3, 4, 0], r32f());
    assert_eq!(data_info(g, &d3, Some((0, 0))), Ok((480, 256)));
    assert_eq!(data_info(g, &d3, Some((64, 192))), Ok((768, 256)));
    let a1 = desc(HSA_EXT_IMAGE_GEOMETRY_1DA, [100, 0, 0, 5], rgba8());
    assert_eq!(data_info(g, &a1, None), Ok((512 * 5, 256)));
    let b = desc(
        HSA_EXT_IMAGE_GEOMETRY_1DB,
        [1000, 0, 0, 0],
        format(
            HSA_EXT_IMAGE_CHANNEL_ORDER_RG,
            HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT,
        ),
    );
    assert_eq!(data_info(g, &b, None), Ok((8192, 256)));
    // A row pitch below the width or not a multiple of the element; a slice pitch other than
    // rows * row pitch (the descriptor has none of its own); more texels than the pitch field.
    for pitches in [(36, 0), (42, 0), (64, 100), (64, 256)] {
        assert_eq!(
            data_info(g, &d3, Some(pitches)),
            Err(PITCH_UNSUPPORTED),
            "{pitches:?}"
        );
    }
    let wide = desc(HSA_EXT_IMAGE_GEOMETRY_2D, [16, 2, 0, 0], rgba8());
    assert_eq!(
        data_info(g, &wide, Some((4 << 16 | 4, 0))),
        Err(PITCH_UNSUPPORTED)
    );
    // Formats, sizes and agents.
    for f in [
        format(
            HSA_EXT_IMAGE_CHANNEL_ORDER_RGB,
            HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8,
        ),
        format(
            HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA,
            HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT16,
        ),
        format(99, HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8),
        format(HSA_EXT_IMAGE_CHANNEL_ORDER_R, 99),
    ] {
        let d = desc(HSA_EXT_IMAGE_GEOMETRY_2D, [8, 8, 0, 0], f);
        assert_eq!(data_info(g, &d, None), Err(FORMAT_UNSUPPORTED), "{f:?}");
    }
    for dims in [
        [0, 8, 0, 0],
        [16385, 8, 0, 0],
        [8, 0, 0, 0],
        [8, 16385, 0, 0],
        [8, 8, 2, 0],
    ] {
        let d = desc(HSA_EXT_IMAGE_GEOMETRY_2D, dims, rgba8());
        assert_eq!(data_info(g, &d, None), Err(SIZE_UNSUPPORTED), "{dims:?}");
    }
    let deep = desc(HSA_EXT_IMAGE_GEOMETRY_3D, [8, 8, 8193, 0], rgba8());
    assert_eq!(data_info(g, &deep, None), Err(SIZE_UNSUPPORTED));
    let layers = desc(HSA_EXT_IMAGE_GEOMETRY_2DA, [8, 8, 0, 8193], rgba8());
    assert_eq!(data_info(g, &layers, None), Err(SIZE_UNSUPPORTED));
    assert_eq!(data_info(gfx942(), &d2, None), Err(FORMAT_UNSUPPORTED));
    assert_eq!(data_info(cpu(), &d2, None), Err(FORMAT_UNSUPPORTED));
    assert_eq!(
        data_info(hsa_agent_t { handle: 0 }, &d2, None),
        Err(HSA_STATUS_ERROR_INVALID_AGENT)
    );
    let bad_geometry = desc(8, [8, 8, 0, 0], rgba8());
    assert_eq!(data_info(g, &bad_geometry, None), Err(INVALID_ARGUMENT));
    let info = entry!(
        hsa_ext_image_data_get_info,
        hsa_ext_image_data_get_info_fn_t
    );
    let with_layout = entry!(
        hsa_ext_image_data_get_info_with_layout,
        hsa_ext_image_data_get_info_with_layout_fn_t
    );
    let mut out = hsa_ext_image_data_info_t::default();
    // SAFETY: NULL pointers and bad enumerations are what is checked.
    unsafe {
        assert_eq!(info(g, null(), RW, &mut out), INVALID_ARGUMENT);
        assert_eq!(info(g, &d2, RW, null_mut()), INVALID_ARGUMENT);
        assert_eq!(info(g, &d2, 0, &mut out), INVALID_ARGUMENT);
        assert_eq!(info(g, &d2, 4, &mut out), INVALID_ARGUMENT);
        assert_eq!(
            with_layout(g, &d2, RW, HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE, 0, 0, &mut out),
            INVALID_ARGUMENT
        );
        assert_eq!(with_layout(g, &d2, RW, 2, 0, 0, &mut out), INVALID_ARGUMENT);
    }
}

#[test]
fn an_image_object_holds_rocrs_descriptor() {
    let _serial = serial();
    let g = gpu();
    let data = alloc(64 << 10);
    let bgra = format(
        HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA,
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8,
    );
    let d = desc(HSA_EXT_IMAGE_GEOMETRY_2DA, [100, 7, 0, 3], bgra);
    let image = create(g, &d, data, None).unwrap();
    assert_eq!(image % 16, 0);
    let w = words::<12>(image);
    let id = ImageDescriptor::decode(w[..8].try_into().unwrap());
    assert_eq!(
        id,
        ImageDescriptor {
            base: data as u64,
            data_format: 10,
            num_format: texel::UNORM,
            width: 100,
            height: 7,
            depth: 3,
            pitch: 128,
            dst_sel: [sel::Z, sel::Y, sel::X, sel::W],
            levels: (0, 0),
            swizzle_mode: SWIZZLE_LINEAR,
            kind: ImageKind::D2Array,
        }
    );
    assert_eq!(
        w[8..],
        [
            HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8,
            HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA,
            100,
            0
        ]
    );
    assert_eq!(destroy(g, image), HSA_STATUS_SUCCESS);
    assert_eq!(destroy(g, image), INVALID_ARGUMENT, "destroyed once");
    // Every geometry's kind, size and pitch; the caller's linear row pitch.
    let cases = [
        (
            HSA_EXT_IMAGE_GEOMETRY_1D,
            [50, 0, 0, 0],
            None,
            ImageKind::D1,
            [50, 1, 1, 64],
        ),
        (
            HSA_EXT_IMAGE_GEOMETRY_2D,
            [50, 9, 0, 0],
            Some((640, 0)),
            ImageKind::D2,
            [50, 9, 1, 160],
        ),
        (
            HSA_EXT_IMAGE_GEOMETRY_3D,
            [50, 9, 4, 0],
            None,
            ImageKind::D3,
            [50, 9, 4, 64],
        ),
        (
            HSA_EXT_IMAGE_GEOMETRY_1DA,
            [50, 0, 0, 6],
            Some((0, 0)),
            ImageKind::D1Array,
            [50, 1, 6, 50],
        ),
        (
            HSA_EXT_IMAGE_GEOMETRY_2DDEPTH,
            [50, 9, 0, 0],
            None,
            ImageKind::D2,
            [50, 9, 1, 64],
        ),
        (
            HSA_EXT_IMAGE_GEOMETRY_2DADEPTH,
            [50, 9, 0, 2],
            None,
            ImageKind::D2Array,
            [50, 9, 2, 64],
        ),
    ];
    for (geometry, dims, layout, kind, [wd, h, dp, pitch]) in cases {
        let f = if geometry >= HSA_EXT_IMAGE_GEOMETRY_2DDEPTH {
            format(
                HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH,
                HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT,
            )
        } else {
            r32f()
        };
        let image = create(g, &desc(geometry, dims, f), data, layout).unwrap();
        let id = ImageDescriptor::decode(&words::<8>(image));
        assert_eq!(id.kind, kind, "geometry {geometry}");
        assert_eq!(
            (id.width, id.height, id.depth, id.pitch),
            (wd, h, dp, pitch),
            "geometry {geometry}"
        );
        assert_eq!((id.data_format, id.num_format), (4, texel::FLOAT));
        assert_eq!(id.base, data as u64);
        assert_eq!(destroy(g, image), HSA_STATUS_SUCCESS);
    }
    // A buffer image: a buffer descriptor as buffer_load_format_* reads it.
    let rg16 = format(
        HSA_EXT_IMAGE_CHANNEL_ORDER_RG,
        HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT16,
    );
    let b = create(
        g,
        &desc(HSA_EXT_IMAGE_GEOMETRY_1DB, [1000, 0, 0, 0], rg16),
        data,
        Some((0, 0)),
    )
    .unwrap();
    let w = words::<12>(b);
    assert_eq!(w[0], data as u32);
    assert_eq!(
        w[1],
        (data >> 32) as u32 & 0xFFFF | 4 << 16,
        "base 47:32, stride 4"
    );
    assert_eq!(w[2], 4000, "NUM_RECORDS: the bytes");
    assert_eq!(
        w[3] & 0xFFF,
        sel::X | sel::Y << 3 | sel::ONE << 9,
        "DST_SEL X, Y, 0, 1"
    );
    assert_eq!((w[3] >> 12 & 7, w[3] >> 15 & 15), (texel::SINT, 5));
    assert_eq!(w[4..8], [0; 4]);
    assert_eq!(
        w[8..],
        [
            HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT16,
            HSA_EXT_IMAGE_CHANNEL_ORDER_RG,
            1000,
            0
        ]
    );
    assert_eq!(destroy(g, b), HSA_STATUS_SUCCESS);
    free(data);
}

#[test]
fn creation_errors() {
    let _serial = serial();
    let g = gpu();
    let data = alloc(64 << 10);
    let d = desc(HSA_EXT_IMAGE_GEOMETRY_2D, [16, 16, 0, 0], rgba8());
    assert_eq!(
        create(g, &d, data + 16, None),
        Err(INVALID_ARGUMENT),
        "base not 256-aligned"
    );
    assert_eq!(
        create(g, &d, data + 256, None).map(|h| destroy(g, h)),
        Ok(HSA_STATUS_SUCCESS)
    );
    assert_eq!(create(g, &d, data, Some((60, 0))), Err(PITCH_UNSUPPORTED));
    assert_eq!(create(gfx942(), &d, data, None), Err(FORMAT_UNSUPPORTED));
    assert_eq!(create(cpu(), &d, data, None), Err(FORMAT_UNSUPPORTED));
    assert_eq!(
        create(hsa_agent_t { handle: 3 }, &d, data, None),
        Err(HSA_STATUS_ERROR_INVALID_AGENT)
    );
    let rgb = desc(
        HSA_EXT_IMAGE_GEOMETRY_2D,
        [16, 16, 0, 0],
        format(
            HSA_EXT_IMAGE_CHANNEL_ORDER_RGB,
            HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT,
        ),
    );
    assert_eq!(create(g, &rgb, data, None), Err(FORMAT_UNSUPPORTED));
    let huge = desc(HSA_EXT_IMAGE_GEOMETRY_1D, [16385, 0, 0, 0], rgba8());
    assert_eq!(create(g, &huge, data, None), Err(SIZE_UNSUPPORTED));
    assert_eq!(
        create(g, &desc(9, [16, 16, 0, 0], rgba8()), data, None),
        Err(INVALID_ARGUMENT)
    );
    let c = entry!(hsa_ext_image_create, hsa_ext_image_create_fn_t);
    let cl = entry!(
        hsa_ext_image_create_with_layout,
        hsa_ext_image_create_with_layout_fn_t
    );
    let mut image = hsa_ext_image_t { handle: 7 };
    let p = data as *const c_void;
    // SAFETY: NULL pointers and bad enumerations are what is checked.
    unsafe {
        assert_eq!(c(g, null(), p, RW, &mut image), INVALID_ARGUMENT);
        assert_eq!(c(g, &d, null(), RW, &mut image), INVALID_ARGUMENT);
        assert_eq!(c(g, &d, p, RW, null_mut()), INVALID_ARGUMENT);
        assert_eq!(c(g, &d, p, 7, &mut image), INVALID_ARGUMENT);
        assert_eq!(
            cl(
                g,
                &d,
                p,
                RW,
                HSA_EXT_IMAGE_DATA_LAYOUT_OPAQUE,
                0,
                0,
                &mut image
            ),
            INVALID_ARGUMENT
        );
    }
    assert_eq!(image.handle, 7, "nothing written on failure");
    assert_eq!(destroy(g, 0), INVALID_ARGUMENT);
    assert_eq!(destroy(g, data as u64), INVALID_ARGUMENT, "not an image");
    assert_eq!(
        destroy(hsa_agent_t { handle: 1 }, 0),
        HSA_STATUS_ERROR_INVALID_AGENT
    );
    free(data);
}

#[test]
fn import_then_export_round_trips_a_sub_region() {
    let _serial = serial();
    let g = gpu();
    let data = alloc(64 << 10);
    let f = format(
        HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8,
    );
    // 16 x 8 x 3 texels of 4 bytes, rows 256 bytes apart (OPAQUE), slices 2 KiB apart.
    let image = create(
        g,
        &desc(HSA_EXT_IMAGE_GEOMETRY_3D, [16, 8, 3, 0], f),
        data,
        None,
    )
    .unwrap();
    // A 5 x 4 x 2 box at (3, 2, 1), from host rows 32 bytes apart and slices 160 apart.
    let src: Vec<u8> = (0..320).map(|i| (i * 7 + 1) as u8).collect();
    let r = region(dim3(3, 2, 1), dim3(5, 4, 2));
    assert_eq!(import(image, &src, 32, 160, r), HSA_STATUS_SUCCESS);
    // The image memory is linear as its descriptor says: texel (x, y, z) at z*2048 + y*256 + 4x.
    let mut mem = vec![0u8; 3 * 2048];
    // SAFETY: `mem` holds the image data's bytes.
    let st = unsafe {
        entry!(hsa_memory_copy, hsa_memory_copy_fn_t)(
            mem.as_mut_ptr().cast(),
            data as *const c_void,
            mem.len(),
        )
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    for z in 0..3usize {
        for y in 0..8usize {
            for x in 0..16usize {
                let inside = (3..8).contains(&x) && (2..6).contains(&y) && (1..3).contains(&z);
                let at = z * 2048 + y * 256 + 4 * x;
                let want: [u8; 4] = if inside {
                    let s = (z - 1) * 160 + (y - 2) * 32 + (x - 3) * 4;
                    src[s..s + 4].try_into().unwrap()
                } else {
                    [0; 4]
                };
                assert_eq!(mem[at..at + 4], want, "texel ({x}, {y}, {z})");
            }
        }
    }
    // Exported packed (pitches 0, and pitches below the packed ones count as packed), then at
    // the source's pitches: the same bytes.
    for (rp, sp) in [(0, 0), (4, 8)] {
        let mut back = vec![0u8; 5 * 4 * 2 * 4];
        assert_eq!(export(image, &mut back, rp, sp, r), HSA_STATUS_SUCCESS);
        for (i, chunk) in back.chunks(20).enumerate() {
            let (z, y) = (i / 4, i % 4);
            assert_eq!(
                chunk,
                &src[z * 160 + y * 32..][..20],
                "row {y} of slice {z}"
            );
        }
    }
    let mut back = vec![0u8; 320];
    assert_eq!(export(image, &mut back, 32, 160, r), HSA_STATUS_SUCCESS);
    for i in 0..320 {
        if i % 160 < 128 && i % 32 < 20 {
            assert_eq!(back[i], src[i], "byte {i}");
        }
    }
    // Regions outside the image are refused, not copied.
    let mut big = vec![0u8; 1 << 16];
    for bad in [
        region(dim3(12, 0, 0), dim3(5, 1, 1)),
        region(dim3(0, 7, 0), dim3(1, 2, 1)),
        region(dim3(0, 0, 3), dim3(1, 1, 1)),
        region(dim3(u32::MAX, 0, 0), dim3(2, 1, 1)),
    ] {
        assert_eq!(import(image, &big, 0, 0, bad), INVALID_ARGUMENT);
        assert_eq!(export(image, &mut big, 0, 0, bad), INVALID_ARGUMENT);
    }
    assert!(big.iter().all(|&b| b == 0));
    // NULL pointers, unknown images, an unknown agent.
    let imp = entry!(hsa_ext_image_import, hsa_ext_image_import_fn_t);
    let exp = entry!(hsa_ext_image_export, hsa_ext_image_export_fn_t);
    let h = hsa_ext_image_t { handle: image };
    // SAFETY: NULL pointers and bad handles are what is checked.
    unsafe {
        assert_eq!(imp(g, null(), 0, 0, h, &r), INVALID_ARGUMENT);
        assert_eq!(
            imp(g, src.as_ptr().cast(), 0, 0, h, null()),
            INVALID_ARGUMENT
        );
        assert_eq!(exp(g, h, null_mut(), 0, 0, &r), INVALID_ARGUMENT);
        assert_eq!(
            exp(g, h, back.as_mut_ptr().cast(), 0, 0, null()),
            INVALID_ARGUMENT
        );
        let unknown = hsa_ext_image_t {
            handle: data as u64,
        };
        assert_eq!(
            imp(g, src.as_ptr().cast(), 0, 0, unknown, &r),
            INVALID_ARGUMENT
        );
        assert_eq!(
            imp(hsa_agent_t { handle: 5 }, src.as_ptr().cast(), 0, 0, h, &r),
            HSA_STATUS_ERROR_INVALID_AGENT
        );
    }
    assert_eq!(destroy(g, image), HSA_STATUS_SUCCESS);
    // An image whose memory was freed: refused, never a crash.
    let gone = alloc(4096);
    let image = create(
        g,
        &desc(HSA_EXT_IMAGE_GEOMETRY_2D, [8, 8, 0, 0], f),
        gone,
        None,
    )
    .unwrap();
    free(gone);
    let one = region(dim3(0, 0, 0), dim3(1, 1, 1));
    assert_eq!(import(image, &src, 0, 0, one), INVALID_ARGUMENT);
    assert_eq!(export(image, &mut back, 0, 0, one), INVALID_ARGUMENT);
    assert_eq!(destroy(g, image), HSA_STATUS_SUCCESS);
    free(data);
}

#[test]
fn images_over_locked_host_memory_reach_it_at_its_agent_address() {
    let _serial = serial();
    let g = gpu();
    let mut host = vec![0u8; 4096 + 256];
    let start = host.as_ptr().align_offset(256);
    let bytes = &mut host[start..start + 4096];
    let mut agent_ptr = null_mut();
    // SAFETY: `bytes` stays alive and unmoved until the unlock.
    let st = unsafe {
        entry!(hsa_amd_memory_lock, hsa_amd_memory_lock_fn_t)(
            bytes.as_mut_ptr().cast(),
            4096,
            null_mut(),
            0,
            &mut agent_ptr,
        )
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    assert_ne!(
        agent_ptr,
        bytes.as_mut_ptr().cast(),
        "locked memory has an agent address of its own"
    );
    // 8 x 4 uint32 texels, rows 64 bytes apart.
    let d = desc(HSA_EXT_IMAGE_GEOMETRY_2D, [8, 4, 0, 0], r32u());
    let image = create(g, &d, agent_ptr as usize, Some((64, 0))).unwrap();
    assert_eq!(
        ImageDescriptor::decode(&words::<8>(image)).base,
        agent_ptr as u64
    );
    let src: Vec<u8> = (0..24u32).flat_map(|v| (v + 100).to_le_bytes()).collect();
    assert_eq!(
        import(image, &src, 0, 0, region(dim3(2, 1, 0), dim3(3, 2, 1))),
        HSA_STATUS_SUCCESS
    );
    for y in 0..4usize {
        for x in 0..8usize {
            let v = u32::from_le_bytes(bytes[y * 64 + 4 * x..][..4].try_into().unwrap());
            let want = if (2..5).contains(&x) && (1..3).contains(&y) {
                100 + ((y - 1) * 3 + x - 2) as u32
            } else {
                0
            };
            assert_eq!(v, want, "host bytes of texel ({x}, {y})");
        }
    }
    bytes[3 * 64 + 28..3 * 64 + 32].copy_from_slice(&77u32.to_le_bytes());
    let all = export_all(image, [8, 4, 1], 4);
    assert_eq!(
        u32::from_le_bytes(all[(3 * 8 + 7) * 4..][..4].try_into().unwrap()),
        77
    );
    assert_eq!(destroy(g, image), HSA_STATUS_SUCCESS);
    // SAFETY: the pointer locked above.
    let st = unsafe {
        entry!(hsa_amd_memory_unlock, hsa_amd_memory_unlock_fn_t)(bytes.as_mut_ptr().cast())
    };
    assert_eq!(st, HSA_STATUS_SUCCESS);
}

#[test]
fn clears_convert_the_value_to_the_format() {
    let _serial = serial();
    let g = gpu();
    let data = alloc(64 << 10);
    let whole = |x, y| region(dim3(0, 0, 0), dim3(x, y, 1));
    // RGBA8 UNORM: floats to bytes, rounded.
    let image = create(
        g,
        &desc(HSA_EXT_IMAGE_GEOMETRY_2D, [8, 4, 0, 0], rgba8()),
        data,
        None,
    )
    .unwrap();
    let value = [1.0f32, 0.5, 0.0, 0.25].map(f32::to_bits);
    assert_eq!(
        clear(image, value, region(dim3(2, 1, 0), dim3(4, 2, 1))),
        HSA_STATUS_SUCCESS
    );
    let all = export_all(image, [8, 4, 1], 4);
    for y in 0..4usize {
        for x in 0..8usize {
            let inside = (2..6).contains(&x) && (1..3).contains(&y);
            let want: [u8; 4] = if inside { [255, 128, 0, 64] } else { [0; 4] };
            assert_eq!(all[(y * 8 + x) * 4..][..4], want, "texel ({x}, {y})");
        }
    }
    // The same value into BGRA: the bytes in memory order B, G, R, A.
    let bgra = format(
        HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA,
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8,
    );
    let view = create(
        g,
        &desc(HSA_EXT_IMAGE_GEOMETRY_2D, [8, 4, 0, 0], bgra),
        data,
        None,
    )
    .unwrap();
    assert_eq!(clear(view, value, whole(1, 1)), HSA_STATUS_SUCCESS);
    assert_eq!(export_all(image, [8, 4, 1], 4)[..4], [0, 128, 255, 64]);
    assert_eq!(destroy(g, view), HSA_STATUS_SUCCESS);
    assert_eq!(destroy(g, image), HSA_STATUS_SUCCESS);
    // R32F: the float itself.
    let image = create(
        g,
        &desc(HSA_EXT_IMAGE_GEOMETRY_2D, [5, 3, 0, 0], r32f()),
        data,
        None,
    )
    .unwrap();
    assert_eq!(
        clear(image, [3.5f32.to_bits(), 0, 0, 0], whole(5, 3)),
        HSA_STATUS_SUCCESS
    );
    let all = export_all(image, [5, 3, 1], 4);
    assert!(
        all.chunks(4)
            .all(|c| f32::from_le_bytes(c.try_into().unwrap()) == 3.5)
    );
    // Integer images take integers (low bits kept); a region outside is refused.
    let i8s = format(
        HSA_EXT_IMAGE_CHANNEL_ORDER_RG,
        HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT8,
    );
    let small = create(
        g,
        &desc(HSA_EXT_IMAGE_GEOMETRY_1D, [4, 0, 0, 0], i8s),
        data,
        None,
    )
    .unwrap();
    assert_eq!(
        clear(
            small,
            [(-3i32) as u32, 5, 9, 9],
            region(dim3(0, 0, 0), dim3(4, 0, 0))
        ),
        HSA_STATUS_SUCCESS
    );
    assert_eq!(export_all(small, [4, 1, 1], 2), [253, 5].repeat(4));
    assert_eq!(
        clear(small, value, region(dim3(3, 0, 0), dim3(2, 1, 1))),
        INVALID_ARGUMENT
    );
    let c = entry!(hsa_ext_image_clear, hsa_ext_image_clear_fn_t);
    let r = whole(1, 1);
    // SAFETY: NULL pointers are what is checked.
    unsafe {
        assert_eq!(
            c(g, hsa_ext_image_t { handle: image }, null(), &r),
            INVALID_ARGUMENT
        );
        assert_eq!(
            c(
                g,
                hsa_ext_image_t { handle: image },
                value.as_ptr().cast(),
                null()
            ),
            INVALID_ARGUMENT
        );
    }
    for h in [small, image] {
        assert_eq!(destroy(g, h), HSA_STATUS_SUCCESS);
    }
    free(data);
}

#[test]
fn copies_move_regions_between_images_of_one_format() {
    let _serial = serial();
    let g = gpu();
    let (a, b) = (alloc(64 << 10), alloc(64 << 10));
    let src = create(
        g,
        &desc(HSA_EXT_IMAGE_GEOMETRY_2D, [8, 4, 0, 0], r32u()),
        a,
        None,
    )
    .unwrap();
    let dst = create(
        g,
        &desc(HSA_EXT_IMAGE_GEOMETRY_3D, [8, 4, 2, 0], r32u()),
        b,
        None,
    )
    .unwrap();
    let values: Vec<u8> = (0..32u32).flat_map(|v| (v + 1).to_le_bytes()).collect();
    assert_eq!(
        import(src, &values, 0, 0, region(dim3(0, 0, 0), dim3(8, 4, 1))),
        HSA_STATUS_SUCCESS
    );
    let copy = entry!(hsa_ext_image_copy, hsa_ext_image_copy_fn_t);
    let (s, d) = (
        hsa_ext_image_t { handle: src },
        hsa_ext_image_t { handle: dst },
    );
    // A 3 x 2 rectangle of the 2D image into slice 1 of the 3D one.
    // SAFETY: valid pointers.
    let st = unsafe { copy(g, s, &dim3(1, 1, 0), d, &dim3(2, 0, 1), &dim3(3, 2, 1)) };
    assert_eq!(st, HSA_STATUS_SUCCESS);
    let all = export_all(dst, [8, 4, 2], 4);
    for z in 0..2u32 {
        for y in 0..4u32 {
            for x in 0..8u32 {
                let v = u32::from_le_bytes(
                    all[(((z * 4 + y) * 8 + x) * 4) as usize..][..4]
                        .try_into()
                        .unwrap(),
                );
                let want = if z == 1 && (2..5).contains(&x) && y < 2 {
                    (y + 1) * 8 + (x - 1) + 1
                } else {
                    0
                };
                assert_eq!(v, want, "texel ({x}, {y}, {z})");
            }
        }
    }
    let other = create(
        g,
        &desc(HSA_EXT_IMAGE_GEOMETRY_2D, [8, 4, 0, 0], r32f()),
        b,
        None,
    )
    .unwrap();
    let o = hsa_ext_image_t { handle: other };
    // SAFETY: valid pointers; the errors are what is checked.
    unsafe {
        assert_eq!(
            copy(g, s, &dim3(0, 0, 0), o, &dim3(0, 0, 0), &dim3(1, 1, 1)),
            INVALID_ARGUMENT,
            "formats differ"
        );
        assert_eq!(
            copy(g, s, &dim3(6, 0, 0), d, &dim3(0, 0, 0), &dim3(3, 1, 1)),
            INVALID_ARGUMENT,
            "outside the source"
        );
        assert_eq!(
            copy(g, s, &dim3(0, 0, 0), d, &dim3(0, 0, 2), &dim3(1, 1, 1)),
            INVALID_ARGUMENT,
            "outside the destination"
        );
        assert_eq!(
            copy(g, s, null(), d, &dim3(0, 0, 0), &dim3(1, 1, 1)),
            INVALID_ARGUMENT
        );
        assert_eq!(
            copy(g, s, &dim3(0, 0, 0), d, null(), &dim3(1, 1, 1)),
            INVALID_ARGUMENT
        );
        assert_eq!(
            copy(g, s, &dim3(0, 0, 0), d, &dim3(0, 0, 0), null()),
            INVALID_ARGUMENT
        );
    }
    for h in [src, dst, other] {
        assert_eq!(destroy(g, h), HSA_STATUS_SUCCESS);
    }
    free(a);
    free(b);
}

#[test]
fn a_sampler_object_holds_rocrs_sampler_descriptor() {
    let _serial = serial();
    let create = entry!(hsa_ext_sampler_create, hsa_ext_sampler_create_fn_t);
    let destroy = entry!(hsa_ext_sampler_destroy, hsa_ext_sampler_destroy_fn_t);
    let make = |agent, address_mode, coordinate_mode, filter_mode| {
        let d = hsa_ext_sampler_descriptor_t {
            coordinate_mode,
            filter_mode,
            address_mode,
        };
        let mut s = hsa_ext_sampler_t { handle: 7 };
        // SAFETY: valid pointers.
        let st = unsafe { create(agent, &d, &mut s) };
        if st != HSA_STATUS_SUCCESS {
            assert_eq!(s.handle, 7, "written on failure");
        }
        (st, s)
    };
    let cases = [
        (
            HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_EDGE,
            Wrap::ClampToEdge,
        ),
        (
            HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_BORDER,
            Wrap::Border,
        ),
        (
            HSA_EXT_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT,
            Wrap::Mirror,
        ),
        (HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT, Wrap::Repeat),
        (HSA_EXT_SAMPLER_ADDRESSING_MODE_UNDEFINED, Wrap::Repeat),
    ];
    for (i, (mode, wrap)) in cases.into_iter().enumerate() {
        let normalized = i % 2;
        let linear = (i / 2) % 2;
        let (st, s) = make(gpu(), mode, normalized as u32, linear as u32);
        assert_eq!(st, HSA_STATUS_SUCCESS);
        let w = words::<8>(s.handle);
        let sd = SamplerDescriptor::decode(w[..4].try_into().unwrap());
        let f = if linear == 1 {
            filter::BILINEAR
        } else {
            filter::POINT
        };
        assert_eq!(
            sd,
            SamplerDescriptor {
                wrap: [wrap; 3],
                unnormalized: normalized == 0,
                mag_filter: f,
                min_filter: f,
                border_color: border::TRANSPARENT_BLACK,
            }
        );
        assert_eq!(w[4..], [0; 4]);
        // SAFETY: the sampler created above.
        assert_eq!(unsafe { destroy(gpu(), s) }, HSA_STATUS_SUCCESS);
        // SAFETY: as above, destroyed once already.
        assert_eq!(unsafe { destroy(gpu(), s) }, INVALID_ARGUMENT);
    }
    assert_eq!(make(gpu(), 5, 0, 0).0, INVALID_ARGUMENT);
    assert_eq!(make(gpu(), 0, 2, 0).0, INVALID_ARGUMENT);
    assert_eq!(make(gpu(), 0, 0, 2).0, INVALID_ARGUMENT);
    assert_eq!(make(cpu(), 0, 0, 0).0, HSA_STATUS_ERROR_INVALID_AGENT);
    assert_eq!(make(gfx942(), 0, 0, 0).0, HSA_STATUS_ERROR_INVALID_AGENT);
    let mut s = hsa_ext_sampler_t { handle: 0 };
    // SAFETY: NULL pointers are what is checked.
    unsafe {
        assert_eq!(create(gpu(), null(), &mut s), INVALID_ARGUMENT);
        let d = hsa_ext_sampler_descriptor_t::default();
        assert_eq!(create(gpu(), &d, null_mut()), INVALID_ARGUMENT);
        assert_eq!(
            destroy(gpu(), hsa_ext_sampler_t { handle: 0 }),
            INVALID_ARGUMENT
        );
    }
}
