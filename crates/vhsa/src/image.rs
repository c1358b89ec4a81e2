//! The image extension: images and samplers of the agents whose code has image instructions
//! the emulator runs (gfx90a), in linear layouts, and the CPU copies over those layouts.
//!
//! An image handle is the agent address of a 48-byte object in the agent's memory (allocated
//! here, freed by [`destroy`]), laid out as ROCR's: dwords 0-7 the GFX9 image descriptor
//! ([`amdgpu_emu::resource::ImageDescriptor`]; for a buffer image, dwords 0-3 a buffer
//! descriptor as `buffer_load_format_*` reads it), dword 8 the channel type, 9 the channel
//! order, 10 the width, 11 zero. Kernels load it by that address (HIP copies the 12 dwords into
//! its texture objects, on the host: the object is host memory too). A sampler handle is the
//! agent address of a 32-byte object: the 4-dword sampler descriptor, then zeros.
//!
//! The data of an image is the caller's memory, at the agent address given to [`create`]
//! (256-byte aligned). [`import`], [`export`], [`copy`] and [`clear`] reach it through the
//! memory module as `hsa_memory_copy` does (locked memory at its agent address included) after
//! checking the region against the image and the image against the allocation holding it.

mod format;
mod layout;

pub(crate) use layout::{DataLayout, Geometry};

use crate::error::{Error, Result};
use crate::topology::{Agent, AgentKind};
use amdgpu_emu::resource::{
    BufferDescriptor, ImageDescriptor, SWIZZLE_LINEAR, SamplerDescriptor, Wrap, border, filter,
};
use format::ElementFormat;
use hsa_abi::ffi::*;
use layout::{ALIGNMENT, Layout};
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// Dwords of an image object.
const IMAGE_OBJECT_DWORDS: usize = 12;
/// Bytes of a sampler object.
const SAMPLER_OBJECT_BYTES: usize = 32;

/// Whether `agent` has images: a gfx90a GPU (gfx942 has no image instructions, and the
/// emulator runs no other target).
pub(crate) fn agent_has_images(agent: &Agent) -> bool {
    agent.kind() == AgentKind::Gpu && agent.name == "gfx90a"
}

/// Whether some agent of the system has images (the system then supports the extension).
pub(crate) fn system_has_images() -> bool {
    crate::topology::system()
        .agents
        .iter()
        .any(agent_has_images)
}

/// The value of an image attribute of `hsa_agent_get_info` (`HSA_EXT_AGENT_INFO_*`) as 32-bit
/// words, ROCR's values for a gfx9 GPU, zeros for an agent without images; `None` for an
/// attribute that is not an image attribute.
pub(crate) fn agent_attribute(agent: &Agent, attribute: u32) -> Option<Vec<u32>> {
    let limits = |g: Geometry, n: usize| g.limits()[..n].to_vec();
    let values = match attribute {
        HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS => limits(Geometry::D1, 1),
        HSA_EXT_AGENT_INFO_IMAGE_1DA_MAX_ELEMENTS => limits(Geometry::D1Array, 1),
        HSA_EXT_AGENT_INFO_IMAGE_1DB_MAX_ELEMENTS => limits(Geometry::D1Buffer, 1),
        HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS => limits(Geometry::D2, 2),
        HSA_EXT_AGENT_INFO_IMAGE_2DA_MAX_ELEMENTS => limits(Geometry::D2Array, 2),
        HSA_EXT_AGENT_INFO_IMAGE_2DDEPTH_MAX_ELEMENTS => limits(Geometry::D2Depth, 2),
        HSA_EXT_AGENT_INFO_IMAGE_2DADEPTH_MAX_ELEMENTS => limits(Geometry::D2ArrayDepth, 2),
        HSA_EXT_AGENT_INFO_IMAGE_3D_MAX_ELEMENTS => limits(Geometry::D3, 3),
        HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS => vec![Geometry::D2Array.limits()[3]],
        HSA_EXT_AGENT_INFO_MAX_IMAGE_RD_HANDLES => vec![128],
        HSA_EXT_AGENT_INFO_MAX_IMAGE_RORW_HANDLES => vec![64],
        HSA_EXT_AGENT_INFO_MAX_SAMPLER_HANDLERS => vec![16],
        HSA_EXT_AGENT_INFO_IMAGE_LINEAR_ROW_PITCH_ALIGNMENT => vec![ALIGNMENT as u32],
        _ => return None,
    };
    Some(if agent_has_images(agent) {
        values
    } else {
        vec![0; values.len()]
    })
}

/// The element of `format` in images of `geometry` on `agent`, or `IMAGE_FORMAT_UNSUPPORTED`.
fn element(
    agent: &Agent,
    geometry: Geometry,
    format: hsa_ext_image_format_t,
) -> Result<ElementFormat> {
    if !agent_has_images(agent) {
        return Err(Error::ImageFormatUnsupported(format!(
            "agent {} has no images",
            agent.name
        )));
    }
    format::element_format(format.channel_order, format.channel_type, geometry).ok_or_else(|| {
        Error::ImageFormatUnsupported(format!(
            "channel order {} with channel type {} in a {geometry:?} image",
            format.channel_order, format.channel_type
        ))
    })
}

/// The `hsa_ext_image_capability_t` bits of `format` in images of `geometry` on `agent` (0:
/// not supported). The same for both layouts.
pub(crate) fn capability(agent: &Agent, geometry: Geometry, format: hsa_ext_image_format_t) -> u32 {
    element(agent, geometry, format).map_or(0, |e| e.capability)
}

/// The element and layout of an image of `desc` on `agent`.
fn describe(
    agent: &Agent,
    desc: &hsa_ext_image_descriptor_t,
    geometry: Geometry,
    data_layout: DataLayout,
) -> Result<(ElementFormat, Layout)> {
    let element = element(agent, geometry, desc.format)?;
    let layout = Layout::new(desc, geometry, element.bytes, data_layout)?;
    Ok((element, layout))
}

/// Size and alignment of the data of an image of `desc` (`hsa_ext_image_data_info_t`).
pub(crate) fn data_info(
    agent: &Agent,
    desc: &hsa_ext_image_descriptor_t,
    geometry: Geometry,
    data_layout: DataLayout,
) -> Result<(usize, usize)> {
    let (_, layout) = describe(agent, desc, geometry, data_layout)?;
    Ok((layout.size, ALIGNMENT))
}

/// A live image.
#[derive(Clone, Copy, Debug)]
struct Image {
    agent: u64,
    format: hsa_ext_image_format_t,
    element: ElementFormat,
    layout: Layout,
    /// Agent address of the data.
    data: usize,
}

/// Live images and samplers by handle, with their agent.
static IMAGES: Mutex<BTreeMap<u64, Image>> = Mutex::new(BTreeMap::new());
static SAMPLERS: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

/// The buffer descriptor (V#) of a buffer image, as `buffer_load_format_*` reads it: the
/// element size as the stride and the byte size as NUM_RECORDS (ROCR's values).
fn buffer_descriptor(data: usize, element: &ElementFormat, layout: &Layout) -> [u32; 4] {
    BufferDescriptor {
        base: data as u64,
        stride: element.bytes as u32,
        num_records: (layout.dims[0] as usize * element.bytes) as u32,
        dst_sel: element.dst_sel,
        num_format: element.num_format,
        data_format: element.data_format,
        add_tid: false,
    }
    .encode()
}

/// The 12 dwords of an image object.
fn image_object(image: &Image) -> [u32; IMAGE_OBJECT_DWORDS] {
    let (e, l) = (&image.element, &image.layout);
    let mut words = [0u32; IMAGE_OBJECT_DWORDS];
    match l.geometry.kind() {
        Some(kind) => {
            let d = ImageDescriptor {
                base: image.data as u64,
                data_format: e.data_format,
                num_format: e.num_format,
                width: l.dims[0],
                height: l.dims[1],
                depth: l.dims[2],
                pitch: (l.row_pitch / e.bytes) as u32,
                dst_sel: e.dst_sel,
                levels: (0, 0),
                swizzle_mode: SWIZZLE_LINEAR,
                kind,
            };
            words[..8].copy_from_slice(&d.encode());
        }
        None => words[..4].copy_from_slice(&buffer_descriptor(image.data, e, l)),
    }
    words[8] = image.format.channel_type;
    words[9] = image.format.channel_order;
    words[10] = l.dims[0];
    words
}

/// Allocates an object of `bytes` in `agent`'s memory holding `words`; returns its address.
fn place_object(agent: u64, bytes: usize, words: &[u32]) -> Result<u64> {
    let p = crate::memory::allocate_device(agent, bytes)?;
    debug_assert!(words.len() * 4 <= bytes);
    // SAFETY: `p` is a fresh mapping of at least `bytes` writable bytes (device memory is host
    // memory at the same address), zero-filled; `words` fits in it.
    unsafe { std::ptr::copy_nonoverlapping(words.as_ptr().cast::<u8>(), p, words.len() * 4) };
    Ok(p as u64)
}

/// Creates an image of `desc` over the data at agent address `data`; returns its handle.
pub(crate) fn create(
    agent: &Agent,
    desc: &hsa_ext_image_descriptor_t,
    geometry: Geometry,
    data: usize,
    data_layout: DataLayout,
) -> Result<u64> {
    let (element, layout) = describe(agent, desc, geometry, data_layout)?;
    if !data.is_multiple_of(ALIGNMENT) {
        return Err(Error::InvalidArgument(
            "image data must be aligned to 256 bytes (hsa_ext_image_data_get_info's alignment)",
        ));
    }
    let image = Image {
        agent: agent.handle,
        format: desc.format,
        element,
        layout,
        data,
    };
    let handle = place_object(agent.handle, IMAGE_OBJECT_DWORDS * 4, &image_object(&image))?;
    tracing::debug!(
        "image {handle:#x}: {geometry:?} {:?}, channel order {} type {} (data format {}, number format {}), row pitch {}, data at {data:#x}",
        layout.dims,
        desc.format.channel_order,
        desc.format.channel_type,
        element.data_format,
        element.num_format,
        layout.row_pitch
    );
    IMAGES.lock().insert(handle, image);
    Ok(handle)
}

/// Destroys an image: its object is freed, its data is the caller's.
pub(crate) fn destroy(handle: u64) -> Result<()> {
    IMAGES.lock().remove(&handle).ok_or(Error::InvalidArgument(
        "not an image handle of this runtime",
    ))?;
    crate::memory::free_device(handle as *mut u8)
}

/// A live image by handle.
fn live(handle: u64) -> Result<Image> {
    IMAGES
        .lock()
        .get(&handle)
        .copied()
        .ok_or(Error::InvalidArgument(
            "not an image handle of this runtime",
        ))
}

/// A live image by handle, its data checked to lie in one allocation of this runtime.
fn image(handle: u64) -> Result<Image> {
    let image = live(handle)?;
    crate::memory::host_range(image.data, image.layout.span()).ok_or(Error::InvalidArgument(
        "the image's data does not lie in memory of this runtime (freed?)",
    ))?;
    Ok(image)
}

/// The row copies between image `handle`'s `region` and linear memory at `linear` (rows
/// `row_pitch`, slices `slice_pitch` bytes apart; smaller pitches count as packed), into the
/// image (`import`) or out of it.
fn linear_copy(
    handle: u64,
    linear: usize,
    (row_pitch, slice_pitch): (usize, usize),
    (offset, range): (hsa_dim3_t, hsa_dim3_t),
    import: bool,
) -> Result<()> {
    let img = image(handle)?;
    let region = img.layout.region(offset, range)?;
    if region.is_empty() {
        return Ok(());
    }
    let n = region.row_bytes(&img.layout);
    let segments: Vec<crate::memory::Segment> = img
        .layout
        .rows(&region)
        .into_iter()
        .zip(img.layout.memory_rows(&region, row_pitch, slice_pitch))
        .map(|(i, m)| {
            let (texels, memory) = (img.data + i, linear + m);
            if import {
                (texels, memory, n)
            } else {
                (memory, texels, n)
            }
        })
        .collect();
    crate::memory::copy_segments(&segments);
    Ok(())
}

/// Copies `region` of image `handle` from linear memory at `src` (pitches as in
/// [`linear_copy`]).
pub(crate) fn import(
    handle: u64,
    src: usize,
    row_pitch: usize,
    slice_pitch: usize,
    offset: hsa_dim3_t,
    range: hsa_dim3_t,
) -> Result<()> {
    linear_copy(handle, src, (row_pitch, slice_pitch), (offset, range), true)
}

/// Copies `region` of image `handle` to linear memory at `dst` (pitches as in
/// [`linear_copy`]).
pub(crate) fn export(
    handle: u64,
    dst: usize,
    row_pitch: usize,
    slice_pitch: usize,
    offset: hsa_dim3_t,
    range: hsa_dim3_t,
) -> Result<()> {
    linear_copy(
        handle,
        dst,
        (row_pitch, slice_pitch),
        (offset, range),
        false,
    )
}

/// Copies `range` texels from `src_offset` of image `src` to `dst_offset` of image `dst`. The
/// images must be of one agent and one format; their geometries may differ (a 2D region into a
/// slice of a 3D image).
pub(crate) fn copy(
    src: u64,
    src_offset: hsa_dim3_t,
    dst: u64,
    dst_offset: hsa_dim3_t,
    range: hsa_dim3_t,
) -> Result<()> {
    let (s, d) = (image(src)?, image(dst)?);
    if s.agent != d.agent {
        return Err(Error::InvalidArgument(
            "the source and destination images belong to different agents",
        ));
    }
    if (s.format.channel_order, s.format.channel_type)
        != (d.format.channel_order, d.format.channel_type)
    {
        return Err(Error::InvalidArgument(
            "the source and destination images have different formats",
        ));
    }
    let (sr, dr) = (
        s.layout.region(src_offset, range)?,
        d.layout.region(dst_offset, range)?,
    );
    if sr.is_empty() || dr.is_empty() {
        return Ok(());
    }
    let (src_rows, dst_rows) = (s.layout.rows(&sr), d.layout.rows(&dr));
    if src_rows.len() != dst_rows.len() {
        return Err(Error::InvalidArgument(
            "the range covers different numbers of rows in the two images",
        ));
    }
    let n = sr.row_bytes(&s.layout);
    let segments: Vec<crate::memory::Segment> = dst_rows
        .into_iter()
        .zip(src_rows)
        .map(|(dr, sr)| (d.data + dr, s.data + sr, n))
        .collect();
    crate::memory::copy_segments(&segments);
    Ok(())
}

/// Channels of the clear value of image `handle` (one for depth images, four otherwise).
pub(crate) fn clear_channels(handle: u64) -> Result<usize> {
    let img = live(handle)?;
    Ok(img.element.clear_channels(img.format.channel_order))
}

/// Sets every texel of `offset`/`range` of image `handle` to `rgba`: the R, G, B and A values,
/// float bits for normalized and float channel types, integers for integer types, converted as
/// a store converts them.
pub(crate) fn clear(
    handle: u64,
    rgba: [u32; 4],
    offset: hsa_dim3_t,
    range: hsa_dim3_t,
) -> Result<()> {
    let img = image(handle)?;
    let region = img.layout.region(offset, range)?;
    if region.is_empty() {
        return Ok(());
    }
    let row = img.element.pack(rgba).repeat(region.range[0]);
    let segments: Vec<crate::memory::Segment> = img
        .layout
        .rows(&region)
        .into_iter()
        .map(|i| (img.data + i, row.as_ptr() as usize, row.len()))
        .collect();
    crate::memory::copy_segments(&segments);
    Ok(())
}

/// The sampler descriptor of an `hsa_ext_sampler_descriptor_t`, as ROCR's gfx9 sampler (one
/// addressing mode for every coordinate, one filter for magnification and minification, a
/// transparent black border); `None` for a value outside its enumeration.
pub(crate) fn sampler_descriptor(desc: &hsa_ext_sampler_descriptor_t) -> Option<SamplerDescriptor> {
    let wrap = match desc.address_mode {
        HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_EDGE => Wrap::ClampToEdge,
        HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_BORDER => Wrap::Border,
        HSA_EXT_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT => Wrap::Mirror,
        HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT | HSA_EXT_SAMPLER_ADDRESSING_MODE_UNDEFINED => {
            Wrap::Repeat
        }
        _ => return None,
    };
    let unnormalized = match desc.coordinate_mode {
        HSA_EXT_SAMPLER_COORDINATE_MODE_UNNORMALIZED => true,
        HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED => false,
        _ => return None,
    };
    let xy_filter = match desc.filter_mode {
        HSA_EXT_SAMPLER_FILTER_MODE_NEAREST => filter::POINT,
        HSA_EXT_SAMPLER_FILTER_MODE_LINEAR => filter::BILINEAR,
        _ => return None,
    };
    Some(SamplerDescriptor {
        wrap: [wrap; 3],
        unnormalized,
        mag_filter: xy_filter,
        min_filter: xy_filter,
        border_color: border::TRANSPARENT_BLACK,
    })
}

/// Creates a sampler on `agent` (`INVALID_AGENT` for an agent without images); returns its
/// handle.
pub(crate) fn sampler_create(agent: &Agent, sampler: SamplerDescriptor) -> Result<u64> {
    if !agent_has_images(agent) {
        return Err(Error::InvalidAgent(agent.handle));
    }
    let handle = place_object(agent.handle, SAMPLER_OBJECT_BYTES, &sampler.encode())?;
    SAMPLERS.lock().insert(handle, agent.handle);
    Ok(handle)
}

/// Destroys a sampler.
pub(crate) fn sampler_destroy(handle: u64) -> Result<()> {
    SAMPLERS
        .lock()
        .remove(&handle)
        .ok_or(Error::InvalidArgument(
            "not a sampler handle of this runtime",
        ))?;
    crate::memory::free_device(handle as *mut u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use amdgpu_emu::resource::{ImageKind, sel};

    fn image(geometry: Geometry, order: u32, ty: u32, dims: [usize; 4]) -> Image {
        let format = hsa_ext_image_format_t {
            channel_type: ty,
            channel_order: order,
        };
        let desc = hsa_ext_image_descriptor_t {
            geometry: 0,
            width: dims[0],
            height: dims[1],
            depth: dims[2],
            array_size: dims[3],
            format,
        };
        let element = format::element_format(order, ty, geometry).unwrap();
        let layout = Layout::new(&desc, geometry, element.bytes, DataLayout::Opaque).unwrap();
        Image {
            agent: 1,
            format,
            element,
            layout,
            data: 0x7F12_3456_7800,
        }
    }

    #[test]
    fn an_image_object_holds_the_descriptor_then_type_order_and_width() {
        let img = image(
            Geometry::D2Array,
            HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA,
            HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8,
            [100, 7, 0, 3],
        );
        let words = image_object(&img);
        let d = ImageDescriptor::decode(words[..8].try_into().unwrap());
        assert_eq!(d.base, 0x7F12_3456_7800);
        assert_eq!(
            (d.data_format, d.num_format),
            (10, amdgpu_emu::texel::UNORM)
        );
        assert_eq!((d.width, d.height, d.depth, d.pitch), (100, 7, 3, 128));
        assert_eq!(d.dst_sel, [sel::Z, sel::Y, sel::X, sel::W]);
        assert_eq!(
            (d.kind, d.swizzle_mode, d.levels),
            (ImageKind::D2Array, SWIZZLE_LINEAR, (0, 0))
        );
        assert_eq!(
            words[8..],
            [
                HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8,
                HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA,
                100,
                0
            ]
        );
    }

    #[test]
    fn a_buffer_image_has_a_buffer_descriptor() {
        let img = image(
            Geometry::D1Buffer,
            HSA_EXT_IMAGE_CHANNEL_ORDER_RG,
            HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT,
            [1000, 0, 0, 0],
        );
        let w = image_object(&img);
        assert_eq!(w[0], 0x3456_7800);
        assert_eq!(w[1], 0x7F12 | 8 << 16);
        assert_eq!(w[2], 8000);
        // DST_SEL X, Y, 0, 1; NUM_FORMAT FLOAT; DATA_FORMAT 32_32.
        assert_eq!(w[3], 4 | 5 << 3 | 1 << 9 | 7 << 12 | 11 << 15);
        assert_eq!(w[4..8], [0; 4]);
        assert_eq!(w[10], 1000);
    }

    #[test]
    fn samplers_map_the_hsa_modes() {
        let d = |address_mode, coordinate_mode, filter_mode| hsa_ext_sampler_descriptor_t {
            coordinate_mode,
            filter_mode,
            address_mode,
        };
        let s = sampler_descriptor(&d(
            HSA_EXT_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT,
            HSA_EXT_SAMPLER_COORDINATE_MODE_UNNORMALIZED,
            HSA_EXT_SAMPLER_FILTER_MODE_LINEAR,
        ))
        .unwrap();
        assert_eq!(s.wrap, [Wrap::Mirror; 3]);
        assert!(s.unnormalized);
        assert_eq!(
            (s.mag_filter, s.min_filter),
            (filter::BILINEAR, filter::BILINEAR)
        );
        let s = sampler_descriptor(&d(
            HSA_EXT_SAMPLER_ADDRESSING_MODE_UNDEFINED,
            HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED,
            HSA_EXT_SAMPLER_FILTER_MODE_NEAREST,
        ))
        .unwrap();
        assert_eq!(
            (s.wrap[0], s.unnormalized, s.mag_filter),
            (Wrap::Repeat, false, filter::POINT)
        );
        assert!(sampler_descriptor(&d(5, 0, 0)).is_none());
        assert!(sampler_descriptor(&d(0, 2, 0)).is_none());
        assert!(sampler_descriptor(&d(0, 0, 2)).is_none());
    }
}
