//! Image formats: an HSA channel order and channel type as the element a GFX9 descriptor
//! describes (data format, number format and the DST_SEL of each read component).
//!
//! The pairs are those of ROCR's table for gfx9, with the components the HSA channel orders
//! give them: `A`, `R`, `RX`, `INTENSITY`, `LUMINANCE` and `DEPTH` have one component, `RG`,
//! `RGX` and `RA` two, `RGBA`, `BGRA`, `ARGB` and `ABGR` four (the `X` of `RX` and `RGX` names
//! the unused channel of a one- or two-channel element, as in OpenCL). Channel types are 8-, 16-
//! and 32-bit integers (normalized for 8 and 16 bits), half and single floats; `BGRA`, `ARGB`
//! and `ABGR` take the 8-bit types only, `INTENSITY` and `LUMINANCE` the normalized and float
//! types, `DEPTH` 16-bit unsigned normalized and float. Three-channel orders (`RGB`, `RGBX`,
//! the sRGB orders), the packed types (555, 565, 101010, 24-bit) and `DEPTH_STENCIL` are not
//! supported: their elements are not ones the emulator converts.

use amdgpu_emu::resource::sel;
use amdgpu_emu::texel;
use hsa_abi::ffi::*;

use super::layout::Geometry;

/// Read, write and read-write access (ROCR's capability of every supported pair but depth).
const READ_WRITE: u32 = HSA_EXT_IMAGE_CAPABILITY_READ_ONLY
    | HSA_EXT_IMAGE_CAPABILITY_WRITE_ONLY
    | HSA_EXT_IMAGE_CAPABILITY_READ_WRITE;
/// Read-only and write-only access (depth images).
const READ_OR_WRITE: u32 = HSA_EXT_IMAGE_CAPABILITY_READ_ONLY | HSA_EXT_IMAGE_CAPABILITY_WRITE_ONLY;

/// One image element as the descriptor and the CPU copies see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ElementFormat {
    /// GFX9 data format (DFMT numbering of `amdgpu_emu::texel`).
    pub(crate) data_format: u32,
    /// GFX9 number format.
    pub(crate) num_format: u32,
    /// DST_SEL of the R, G, B and A read components.
    pub(crate) dst_sel: [u32; 4],
    /// Bytes of one element.
    pub(crate) bytes: usize,
    /// Components of one element.
    pub(crate) components: usize,
    /// `hsa_ext_image_capability_t` bits.
    pub(crate) capability: u32,
    /// The element's conversion (clears pack their value with it).
    pub(crate) texel: texel::Format,
}

impl ElementFormat {
    /// Channels a clear value holds: one for depth, four otherwise.
    pub(crate) fn clear_channels(&self, order: u32) -> usize {
        if order == HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH {
            1
        } else {
            4
        }
    }

    /// The element bytes of the channel values `rgba` (float bits or integers): each element
    /// component takes the first channel that reads it.
    pub(crate) fn pack(&self, rgba: [u32; 4]) -> Vec<u8> {
        let mut regs = [0u32; 4];
        for (k, r) in regs.iter_mut().enumerate().take(self.components) {
            if let Some(c) = self.dst_sel.iter().position(|&s| s == sel::X + k as u32) {
                *r = rgba[c];
            }
        }
        self.texel.pack(&regs, 4)[..self.bytes].to_vec()
    }
}

/// Bits per component and number format of a channel type.
fn channel_type(ty: u32) -> Option<(u32, u32)> {
    Some(match ty {
        HSA_EXT_IMAGE_CHANNEL_TYPE_SNORM_INT8 => (8, texel::SNORM),
        HSA_EXT_IMAGE_CHANNEL_TYPE_SNORM_INT16 => (16, texel::SNORM),
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8 => (8, texel::UNORM),
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT16 => (16, texel::UNORM),
        HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT8 => (8, texel::SINT),
        HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT16 => (16, texel::SINT),
        HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT32 => (32, texel::SINT),
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8 => (8, texel::UINT),
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT16 => (16, texel::UINT),
        HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32 => (32, texel::UINT),
        HSA_EXT_IMAGE_CHANNEL_TYPE_HALF_FLOAT => (16, texel::FLOAT),
        HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT => (32, texel::FLOAT),
        _ => return None,
    })
}

/// Which channel types an order takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Types {
    /// Every type of [`channel_type`].
    All,
    /// The 8-bit types.
    Bytes,
    /// Normalized and float types.
    NormalizedOrFloat,
    /// 16-bit unsigned normalized and float.
    Depth,
}

/// Components, DST_SEL and accepted types of a channel order.
fn channel_order(order: u32) -> Option<(usize, [u32; 4], Types)> {
    use sel::{ONE, W, X, Y, Z, ZERO};
    Some(match order {
        HSA_EXT_IMAGE_CHANNEL_ORDER_A => (1, [ZERO, ZERO, ZERO, X], Types::All),
        HSA_EXT_IMAGE_CHANNEL_ORDER_R | HSA_EXT_IMAGE_CHANNEL_ORDER_RX => {
            (1, [X, ZERO, ZERO, ONE], Types::All)
        }
        HSA_EXT_IMAGE_CHANNEL_ORDER_RG | HSA_EXT_IMAGE_CHANNEL_ORDER_RGX => {
            (2, [X, Y, ZERO, ONE], Types::All)
        }
        HSA_EXT_IMAGE_CHANNEL_ORDER_RA => (2, [X, ZERO, ZERO, Y], Types::All),
        HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA => (4, [X, Y, Z, W], Types::All),
        HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA => (4, [Z, Y, X, W], Types::Bytes),
        HSA_EXT_IMAGE_CHANNEL_ORDER_ARGB => (4, [Y, Z, W, X], Types::Bytes),
        HSA_EXT_IMAGE_CHANNEL_ORDER_ABGR => (4, [W, Z, Y, X], Types::Bytes),
        HSA_EXT_IMAGE_CHANNEL_ORDER_INTENSITY => (1, [X, X, X, X], Types::NormalizedOrFloat),
        HSA_EXT_IMAGE_CHANNEL_ORDER_LUMINANCE => (1, [X, X, X, ONE], Types::NormalizedOrFloat),
        HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH => (1, [X, ZERO, ZERO, ZERO], Types::Depth),
        _ => return None,
    })
}

/// GFX9 data format of `components` components of `bits` bits.
fn data_format(components: usize, bits: u32) -> Option<u32> {
    Some(match (components, bits) {
        (1, 8) => 1,
        (1, 16) => 2,
        (1, 32) => 4,
        (2, 8) => 3,
        (2, 16) => 5,
        (2, 32) => 11,
        (4, 8) => 10,
        (4, 16) => 12,
        (4, 32) => 14,
        _ => return None,
    })
}

/// The element of channel order `order` and channel type `ty` in images of `geometry`, or
/// `None` when the pair is not supported there (depth geometries take the depth order only).
pub(crate) fn element_format(order: u32, ty: u32, geometry: Geometry) -> Option<ElementFormat> {
    let (components, dst_sel, types) = channel_order(order)?;
    let (bits, num_format) = channel_type(ty)?;
    let depth_order = order == HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH;
    if geometry.is_depth() && !depth_order {
        return None;
    }
    let accepted = match types {
        Types::All => true,
        Types::Bytes => bits == 8,
        Types::NormalizedOrFloat => !matches!(num_format, texel::UINT | texel::SINT),
        Types::Depth => {
            ty == HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT16 || ty == HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT
        }
    };
    if !accepted {
        return None;
    }
    let data_format = data_format(components, bits)?;
    // Loads and stores convert the same pairs; a pair the emulator does not convert is not
    // offered (none of the table, which the unit tests check).
    let texel = texel::format(data_format, num_format, true).ok()?;
    Some(ElementFormat {
        data_format,
        num_format,
        dst_sel,
        bytes: texel.bytes() as usize,
        components,
        capability: if depth_order {
            READ_OR_WRITE
        } else {
            READ_WRITE
        },
        texel,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORDERS: std::ops::Range<u32> = 0..20;
    const TYPES: std::ops::Range<u32> = 0..16;

    #[test]
    fn element_sizes_follow_components_and_channel_width() {
        let f = |o, t| element_format(o, t, Geometry::D2).map(|e| (e.bytes, e.data_format));
        use hsa_abi::ffi::*;
        assert_eq!(
            f(
                HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8
            ),
            Some((4, 10))
        );
        assert_eq!(
            f(
                HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
                HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT
            ),
            Some((16, 14))
        );
        assert_eq!(
            f(
                HSA_EXT_IMAGE_CHANNEL_ORDER_RG,
                HSA_EXT_IMAGE_CHANNEL_TYPE_HALF_FLOAT
            ),
            Some((4, 5))
        );
        assert_eq!(
            f(
                HSA_EXT_IMAGE_CHANNEL_ORDER_R,
                HSA_EXT_IMAGE_CHANNEL_TYPE_SIGNED_INT32
            ),
            Some((4, 4))
        );
        assert_eq!(
            f(
                HSA_EXT_IMAGE_CHANNEL_ORDER_RGX,
                HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT32
            ),
            Some((8, 11))
        );
        // Wider than 8 bits: not a BGRA type; three channels: not an element the emulator has.
        assert!(
            f(
                HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA,
                HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT16
            )
            .is_none()
        );
        assert!(
            f(
                HSA_EXT_IMAGE_CHANNEL_ORDER_RGB,
                HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565
            )
            .is_none()
        );
        assert!(
            f(
                HSA_EXT_IMAGE_CHANNEL_ORDER_LUMINANCE,
                HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8
            )
            .is_none()
        );
    }

    #[test]
    fn every_supported_pair_is_one_the_emulator_converts() {
        let mut supported = 0;
        for o in ORDERS {
            for t in TYPES {
                if let Some(e) = element_format(o, t, Geometry::D2) {
                    supported += 1;
                    assert!(texel::format(e.data_format, e.num_format, false).is_ok());
                    assert_eq!(e.bytes % e.components, 0);
                    assert!(matches!(e.bytes, 1 | 2 | 4 | 8 | 16));
                }
            }
        }
        // A, R, RX, RG, RGX, RA, RGBA: 12 types each; BGRA, ARGB, ABGR: 4; INTENSITY and
        // LUMINANCE: 6; DEPTH: 2.
        assert_eq!(supported, 7 * 12 + 3 * 4 + 2 * 6 + 2);
    }

    #[test]
    fn depth_geometries_take_the_depth_order_only() {
        use hsa_abi::ffi::*;
        for g in [Geometry::D2Depth, Geometry::D2ArrayDepth] {
            assert!(
                element_format(
                    HSA_EXT_IMAGE_CHANNEL_ORDER_R,
                    HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT,
                    g
                )
                .is_none()
            );
            let d = element_format(
                HSA_EXT_IMAGE_CHANNEL_ORDER_DEPTH,
                HSA_EXT_IMAGE_CHANNEL_TYPE_FLOAT,
                g,
            )
            .unwrap();
            assert_eq!(d.capability, READ_OR_WRITE);
        }
    }

    #[test]
    fn clear_values_land_in_the_components_that_read_them() {
        use hsa_abi::ffi::*;
        let rgba = [0x10, 0x20, 0x30, 0x40];
        let packed = |o| {
            element_format(o, HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8, Geometry::D2)
                .unwrap()
                .pack(rgba)
        };
        assert_eq!(
            packed(HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA),
            [0x10, 0x20, 0x30, 0x40]
        );
        assert_eq!(
            packed(HSA_EXT_IMAGE_CHANNEL_ORDER_BGRA),
            [0x30, 0x20, 0x10, 0x40]
        );
        assert_eq!(
            packed(HSA_EXT_IMAGE_CHANNEL_ORDER_ARGB),
            [0x40, 0x10, 0x20, 0x30]
        );
        assert_eq!(
            packed(HSA_EXT_IMAGE_CHANNEL_ORDER_ABGR),
            [0x40, 0x30, 0x20, 0x10]
        );
        assert_eq!(packed(HSA_EXT_IMAGE_CHANNEL_ORDER_A), [0x40]);
        assert_eq!(packed(HSA_EXT_IMAGE_CHANNEL_ORDER_RA), [0x10, 0x40]);
        let unorm = element_format(
            HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA,
            HSA_EXT_IMAGE_CHANNEL_TYPE_UNORM_INT8,
            Geometry::D2,
        )
        .unwrap();
        assert_eq!(
            unorm.pack([0.0f32, 1.0, 0.5, 2.0].map(f32::to_bits)),
            [0, 255, 128, 255]
        );
    }
}
