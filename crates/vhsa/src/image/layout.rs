//! Linear image layouts: geometries and their limits, row and slice pitches, and the bytes a
//! region of an image covers.
//!
//! Every image is linear: the rows of a slice one after another, `row_pitch` bytes apart, and
//! the slices (3D depth or array layers) `slice_pitch` bytes apart. The GFX9 image descriptor
//! has a row pitch (in texels) but no slice pitch: a slice starts `row_pitch * height` bytes
//! after the previous one (`row_pitch` for 1D arrays), so that is the only slice pitch an image
//! can have. The OPAQUE layout aligns the row pitch up to 256 bytes; the LINEAR layout takes
//! the caller's pitches (0: rows of `width * element size` bytes).

use crate::error::{Error, Result};
use amdgpu_emu::resource::ImageKind;
use hsa_abi::ffi::*;

/// Alignment of the image data's base, of the OPAQUE layout's row pitch, and of the LINEAR
/// layout's row pitch as agents report it (`HSA_EXT_AGENT_INFO_IMAGE_LINEAR_ROW_PITCH_ALIGNMENT`).
pub(crate) const ALIGNMENT: usize = 256;

/// Largest row pitch the descriptor's PITCH field holds, in texels.
const MAX_PITCH_TEXELS: usize = 1 << 16;

/// An image geometry (`hsa_ext_image_geometry_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Geometry {
    D1,
    D2,
    D3,
    D1Array,
    D2Array,
    /// A 1D image over a buffer, read by `buffer_load_format_*` through a buffer descriptor.
    D1Buffer,
    D2Depth,
    D2ArrayDepth,
}

impl Geometry {
    /// The geometry of an `hsa_ext_image_geometry_t`, `None` for an unknown value.
    pub(crate) fn from_hsa(g: hsa_ext_image_geometry_t) -> Option<Geometry> {
        Some(match g {
            HSA_EXT_IMAGE_GEOMETRY_1D => Geometry::D1,
            HSA_EXT_IMAGE_GEOMETRY_2D => Geometry::D2,
            HSA_EXT_IMAGE_GEOMETRY_3D => Geometry::D3,
            HSA_EXT_IMAGE_GEOMETRY_1DA => Geometry::D1Array,
            HSA_EXT_IMAGE_GEOMETRY_2DA => Geometry::D2Array,
            HSA_EXT_IMAGE_GEOMETRY_1DB => Geometry::D1Buffer,
            HSA_EXT_IMAGE_GEOMETRY_2DDEPTH => Geometry::D2Depth,
            HSA_EXT_IMAGE_GEOMETRY_2DADEPTH => Geometry::D2ArrayDepth,
            _ => return None,
        })
    }

    /// Whether the geometry holds depth images only.
    pub(crate) fn is_depth(self) -> bool {
        matches!(self, Geometry::D2Depth | Geometry::D2ArrayDepth)
    }

    fn is_array(self) -> bool {
        matches!(
            self,
            Geometry::D1Array | Geometry::D2Array | Geometry::D2ArrayDepth
        )
    }

    /// Whether a slice has rows (a height).
    fn has_rows(self) -> bool {
        !matches!(self, Geometry::D1 | Geometry::D1Array | Geometry::D1Buffer)
    }

    /// The descriptor's image kind; `None` for a buffer image (it has a buffer descriptor).
    pub(crate) fn kind(self) -> Option<ImageKind> {
        Some(match self {
            Geometry::D1 => ImageKind::D1,
            Geometry::D2 | Geometry::D2Depth => ImageKind::D2,
            Geometry::D3 => ImageKind::D3,
            Geometry::D1Array => ImageKind::D1Array,
            Geometry::D2Array | Geometry::D2ArrayDepth => ImageKind::D2Array,
            Geometry::D1Buffer => return None,
        })
    }

    /// Largest width, height, depth and layers (ROCR's gfx9 limits; the descriptor's fields
    /// hold widths and heights up to 16384, depths and layers up to 8192). A buffer image's
    /// width is limited by its byte size instead (32 bits).
    pub(crate) fn limits(self) -> [u32; 4] {
        const W: u32 = 16384;
        const D: u32 = 8192;
        match self {
            Geometry::D1 => [W, 1, 1, 1],
            Geometry::D2 | Geometry::D2Depth => [W, W, 1, 1],
            Geometry::D3 => [W, W, D, 1],
            Geometry::D1Array => [W, 1, 1, D],
            Geometry::D2Array | Geometry::D2ArrayDepth => [W, W, 1, D],
            Geometry::D1Buffer => [u32::MAX, 1, 1, 1],
        }
    }

    /// Coordinates of the geometry (x; x, y; or x, y, z, the layer counting as one).
    fn coordinates(self) -> usize {
        match self {
            Geometry::D1 | Geometry::D1Buffer => 1,
            Geometry::D2 | Geometry::D2Depth | Geometry::D1Array => 2,
            Geometry::D3 | Geometry::D2Array | Geometry::D2ArrayDepth => 3,
        }
    }
}

/// How the image data is laid out (`hsa_ext_image_data_layout_t` with its pitches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataLayout {
    /// Rows aligned to [`ALIGNMENT`] bytes.
    Opaque,
    /// The caller's pitches, in bytes (0: the default).
    Linear {
        row_pitch: usize,
        slice_pitch: usize,
    },
}

/// Where an image's texels are, relative to its base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) geometry: Geometry,
    pub(crate) element_bytes: usize,
    /// Texels along a region's x, y and z: width, then height or (1D arrays) layers, then
    /// depth or (2D arrays) layers; 1 where the geometry has no such coordinate.
    pub(crate) extent: [usize; 3],
    /// The descriptor's width, height and depth (3D depth or layers; 1 otherwise).
    pub(crate) dims: [u32; 3],
    pub(crate) row_pitch: usize,
    pub(crate) slice_pitch: usize,
    /// Bytes of the image data (`hsa_ext_image_data_info_t::size`).
    pub(crate) size: usize,
}

fn size_error(what: &str, value: usize, max: u32, geometry: Geometry) -> Error {
    Error::ImageSizeUnsupported(format!(
        "{what} {value} is outside 1..={max} for a {geometry:?} image"
    ))
}

/// A non-zero size within `max`; a geometry without that size (`max` 1) takes 0 as 1.
fn dimension(value: usize, max: u32, what: &str, geometry: Geometry) -> Result<usize> {
    match value {
        0 if max == 1 => Ok(1),
        v if v >= 1 && v <= max as usize => Ok(v),
        v => Err(size_error(what, v, max, geometry)),
    }
}

impl Layout {
    /// The layout of an image of `desc` with elements of `element_bytes` bytes: its sizes are
    /// checked against the geometry's limits (`IMAGE_SIZE_UNSUPPORTED`), a LINEAR layout's
    /// pitches against the element size and the width (`IMAGE_PITCH_UNSUPPORTED`).
    pub(crate) fn new(
        desc: &hsa_ext_image_descriptor_t,
        geometry: Geometry,
        element_bytes: usize,
        layout: DataLayout,
    ) -> Result<Layout> {
        let [max_w, max_h, max_d, max_l] = geometry.limits();
        let width = dimension(desc.width, max_w, "width", geometry)?;
        let height = dimension(desc.height, max_h, "height", geometry)?;
        let depth = dimension(desc.depth, max_d, "depth", geometry)?;
        // ROCR counts an array of 0 layers as one layer.
        let layers = dimension(desc.array_size.max(1), max_l, "array_size", geometry)?;
        let tight = width * element_bytes;
        if geometry == Geometry::D1Buffer && tight > u32::MAX as usize {
            return Err(Error::ImageSizeUnsupported(format!(
                "a buffer image of {width} elements of {element_bytes} bytes exceeds 4 GiB"
            )));
        }
        let rows = if geometry.has_rows() { height } else { 1 };
        let slices = if geometry.is_array() { layers } else { depth };
        let row_pitch = match layout {
            DataLayout::Opaque => tight.next_multiple_of(ALIGNMENT),
            DataLayout::Linear { row_pitch: 0, .. } => tight,
            DataLayout::Linear { row_pitch, .. } => {
                if row_pitch < tight || !row_pitch.is_multiple_of(element_bytes) {
                    return Err(Error::ImagePitchUnsupported(format!(
                        "row pitch {row_pitch} is not a multiple of the element size \
                         {element_bytes} at least width * element size ({tight})"
                    )));
                }
                row_pitch
            }
        };
        if geometry != Geometry::D1Buffer && row_pitch / element_bytes > MAX_PITCH_TEXELS {
            return Err(Error::ImagePitchUnsupported(format!(
                "row pitch {row_pitch} is more than the descriptor's {MAX_PITCH_TEXELS} texels"
            )));
        }
        let slice_pitch = row_pitch * rows;
        if let DataLayout::Linear {
            slice_pitch: asked @ 1..,
            ..
        } = layout
            && asked != slice_pitch
        {
            return Err(Error::ImagePitchUnsupported(format!(
                "slice pitch {asked}: the descriptor places slices row pitch * height = \
                 {slice_pitch} bytes apart, the only slice pitch an image can have"
            )));
        }
        let extent = match geometry {
            Geometry::D1Array => [width, layers, 1],
            _ => [width, rows, slices],
        };
        let dims = [width as u32, rows as u32, slices as u32];
        Ok(Layout {
            geometry,
            element_bytes,
            extent,
            dims,
            row_pitch,
            slice_pitch,
            size: slice_pitch * slices,
        })
    }

    /// Bytes from one region row (y + 1) and one region slice (z + 1) to the next.
    fn strides(&self) -> (usize, usize) {
        match self.geometry {
            // The layers of a 1D array are its slices, addressed by y.
            Geometry::D1Array => (self.slice_pitch, self.slice_pitch),
            _ => (self.row_pitch, self.slice_pitch),
        }
    }

    /// Bytes from the base to the end of the last texel.
    pub(crate) fn span(&self) -> usize {
        let (ys, zs) = self.strides();
        (self.extent[2] - 1) * zs + (self.extent[1] - 1) * ys + self.extent[0] * self.element_bytes
    }

    /// `offset` and `range` (in texels) as a region of this image. A coordinate the geometry
    /// does not have takes range 0 as 1. A region reaching outside the image is
    /// `INVALID_ARGUMENT`.
    pub(crate) fn region(&self, offset: hsa_dim3_t, range: hsa_dim3_t) -> Result<Region> {
        let offset = [offset.x, offset.y, offset.z].map(|v| v as usize);
        let mut range = [range.x, range.y, range.z].map(|v| v as usize);
        for (k, r) in range.iter_mut().enumerate() {
            if k >= self.geometry.coordinates() && *r == 0 {
                *r = 1;
            }
            if offset[k] + *r > self.extent[k] {
                return Err(Error::InvalidArgument(
                    "the region reaches outside the image (offset + range exceeds its size)",
                ));
            }
        }
        Ok(Region { offset, range })
    }

    /// The byte offsets (from the image's base) of the rows of `region`, slice by slice, each
    /// `region.row_bytes(self)` long.
    pub(crate) fn rows(&self, region: &Region) -> Vec<usize> {
        let (ys, zs) = self.strides();
        let [x, y0, z0] = region.offset;
        let mut out = Vec::with_capacity(region.range[1] * region.range[2]);
        for z in z0..z0 + region.range[2] {
            for y in y0..y0 + region.range[1] {
                out.push(z * zs + y * ys + x * self.element_bytes);
            }
        }
        out
    }

    /// The byte offsets of the rows of `region` in linear memory with the caller's pitches:
    /// a row pitch below the region's row bytes counts as that (rows packed), a slice pitch
    /// below the rows of a slice as those (layers of a 1D array are a row apart), as the HSA
    /// import and export functions define them.
    pub(crate) fn memory_rows(
        &self,
        region: &Region,
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Vec<usize> {
        let row = row_pitch.max(region.row_bytes(self));
        let (ys, zs) = match self.geometry {
            Geometry::D1Array => {
                let layer = slice_pitch.max(row);
                (layer, layer)
            }
            _ => (row, slice_pitch.max(row * region.range[1])),
        };
        let mut out = Vec::with_capacity(region.range[1] * region.range[2]);
        for z in 0..region.range[2] {
            for y in 0..region.range[1] {
                out.push(z * zs + y * ys);
            }
        }
        out
    }
}

/// A region of an image, checked against its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    pub(crate) offset: [usize; 3],
    pub(crate) range: [usize; 3],
}

impl Region {
    /// Whether the region holds no texel.
    pub(crate) fn is_empty(&self) -> bool {
        self.range.contains(&0)
    }

    /// Bytes of one row of the region.
    pub(crate) fn row_bytes(&self, layout: &Layout) -> usize {
        self.range[0] * layout.element_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(
        g: hsa_ext_image_geometry_t,
        w: usize,
        h: usize,
        d: usize,
        a: usize,
    ) -> hsa_ext_image_descriptor_t {
        hsa_ext_image_descriptor_t {
            geometry: g,
            width: w,
            height: h,
            depth: d,
            array_size: a,
            format: hsa_ext_image_format_t {
                channel_type: HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT,
                channel_order: HSA_EXT_IMAGE_CHANNEL_ORDER_R,
            },
        }
    }

    fn layout(d: hsa_ext_image_descriptor_t, bytes: usize, l: DataLayout) -> Result<Layout> {
        Layout::new(&d, Geometry::from_hsa(d.geometry).unwrap(), bytes, l)
    }

    fn dim3(x: u32, y: u32, z: u32) -> hsa_dim3_t {
        hsa_dim3_t { x, y, z }
    }

    #[test]
    fn opaque_rows_are_aligned_and_slices_follow_the_rows() {
        let l = layout(
            desc(HSA_EXT_IMAGE_GEOMETRY_3D, 10, 3, 4, 0),
            4,
            DataLayout::Opaque,
        )
        .unwrap();
        assert_eq!((l.row_pitch, l.slice_pitch, l.size), (256, 768, 3072));
        assert_eq!(l.dims, [10, 3, 4]);
        let a = layout(
            desc(HSA_EXT_IMAGE_GEOMETRY_1DA, 100, 0, 0, 5),
            8,
            DataLayout::Opaque,
        )
        .unwrap();
        assert_eq!((a.row_pitch, a.slice_pitch, a.size), (1024, 1024, 5120));
        assert_eq!((a.extent, a.dims), ([100, 5, 1], [100, 1, 5]));
        // ROCclr passes 0 for the sizes a geometry does not have.
        let one = layout(
            desc(HSA_EXT_IMAGE_GEOMETRY_1D, 64, 0, 0, 0),
            1,
            DataLayout::Opaque,
        )
        .unwrap();
        assert_eq!((one.size, one.dims), (256, [64, 1, 1]));
    }

    #[test]
    fn linear_pitches_are_the_callers_or_tight() {
        let d = desc(HSA_EXT_IMAGE_GEOMETRY_2DA, 10, 3, 0, 2);
        let tight = layout(
            d,
            4,
            DataLayout::Linear {
                row_pitch: 0,
                slice_pitch: 0,
            },
        )
        .unwrap();
        assert_eq!(
            (tight.row_pitch, tight.slice_pitch, tight.size),
            (40, 120, 240)
        );
        let wide = layout(
            d,
            4,
            DataLayout::Linear {
                row_pitch: 64,
                slice_pitch: 192,
            },
        )
        .unwrap();
        assert_eq!((wide.row_pitch, wide.size), (64, 384));
        for (row_pitch, slice_pitch) in [(36, 0), (42, 0), (64, 200), (64, 128)] {
            assert!(matches!(
                layout(
                    d,
                    4,
                    DataLayout::Linear {
                        row_pitch,
                        slice_pitch
                    }
                ),
                Err(Error::ImagePitchUnsupported(_))
            ));
        }
        // A row of more texels than the descriptor's pitch field holds.
        let d = desc(HSA_EXT_IMAGE_GEOMETRY_2D, 16, 2, 0, 0);
        assert!(matches!(
            layout(
                d,
                1,
                DataLayout::Linear {
                    row_pitch: (1 << 16) + 1,
                    slice_pitch: 0
                }
            ),
            Err(Error::ImagePitchUnsupported(_))
        ));
    }

    #[test]
    fn sizes_outside_the_limits_are_refused() {
        for d in [
            desc(HSA_EXT_IMAGE_GEOMETRY_2D, 0, 4, 0, 0),
            desc(HSA_EXT_IMAGE_GEOMETRY_2D, 16385, 4, 0, 0),
            desc(HSA_EXT_IMAGE_GEOMETRY_2D, 4, 0, 0, 0),
            desc(HSA_EXT_IMAGE_GEOMETRY_1D, 4, 2, 0, 0),
            desc(HSA_EXT_IMAGE_GEOMETRY_3D, 4, 4, 8193, 0),
            desc(HSA_EXT_IMAGE_GEOMETRY_2DA, 4, 4, 0, 8193),
        ] {
            assert!(
                matches!(
                    layout(d, 4, DataLayout::Opaque),
                    Err(Error::ImageSizeUnsupported(_))
                ),
                "{d:?}"
            );
        }
        assert!(
            layout(
                desc(HSA_EXT_IMAGE_GEOMETRY_2D, 16384, 16384, 0, 0),
                1,
                DataLayout::Opaque
            )
            .is_ok()
        );
    }

    #[test]
    fn regions_address_rows_and_slices_and_stay_inside() {
        let l = layout(
            desc(HSA_EXT_IMAGE_GEOMETRY_3D, 8, 4, 3, 0),
            2,
            DataLayout::Opaque,
        )
        .unwrap();
        let r = l.region(dim3(1, 2, 1), dim3(3, 2, 2)).unwrap();
        assert_eq!(
            l.rows(&r),
            [
                256 * 4 + 512 + 2,
                256 * 4 + 768 + 2,
                2048 + 512 + 2,
                2048 + 768 + 2
            ]
        );
        assert_eq!(l.memory_rows(&r, 0, 0), [0, 6, 12, 18]);
        assert_eq!(l.memory_rows(&r, 10, 100), [0, 10, 100, 110]);
        assert!(l.region(dim3(6, 0, 0), dim3(3, 1, 1)).is_err());
        assert!(l.region(dim3(0, 0, 3), dim3(1, 1, 1)).is_err());
        assert!(
            l.region(dim3(u32::MAX, 0, 0), dim3(u32::MAX, 1, 1))
                .is_err()
        );
        assert!(l.region(dim3(0, 0, 0), dim3(8, 0, 3)).unwrap().is_empty());
        // A 1D array addresses layers with y.
        let a = layout(
            desc(HSA_EXT_IMAGE_GEOMETRY_1DA, 8, 0, 0, 4),
            4,
            DataLayout::Opaque,
        )
        .unwrap();
        let r = a.region(dim3(2, 1, 0), dim3(2, 2, 0)).unwrap();
        assert_eq!(r.range, [2, 2, 1]);
        assert_eq!(a.rows(&r), [256 + 8, 512 + 8]);
        assert_eq!(a.memory_rows(&r, 0, 0), [0, 8]);
        assert_eq!(a.memory_rows(&r, 0, 32), [0, 32]);
        assert_eq!(a.span(), 3 * 256 + 32);
    }
}
