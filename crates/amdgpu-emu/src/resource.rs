//! The GFX9 resource descriptors: the 4-dword buffer descriptor (V#) of MUBUF/MTBUF
//! instructions, the 8-dword image descriptor of MIMG instructions and the 4-dword sampler
//! descriptor (S#), encoded by a runtime that creates buffer views, images and samplers and
//! decoded by the emulator that runs the instructions. Field positions are those of the GFX9
//! SQ_BUF_RSRC, SQ_IMG_RSRC and SQ_IMG_SAMP registers; fields the emulator has no use for
//! (cache policy, LOD clamps, metadata, compression) are written as zero and ignored when read.

/// A buffer descriptor's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferDescriptor {
    /// Address of byte 0 (48 bits).
    pub base: u64,
    /// Bytes from one indexed record to the next (14 bits; 0 for a raw buffer).
    pub stride: u32,
    /// Records (with a stride) or bytes in range.
    pub num_records: u32,
    /// The value of each destination component of a typed load, as [`sel`] codes.
    pub dst_sel: [u32; 4],
    /// Number format of typed accesses (NFMT numbering of [`crate::texel`]).
    pub num_format: u32,
    /// Data format of typed accesses (DFMT numbering).
    pub data_format: u32,
    /// ADD_TID_ENABLE: the lane number adds to the index.
    pub add_tid: bool,
}

impl BufferDescriptor {
    /// The four descriptor dwords.
    pub fn encode(&self) -> [u32; 4] {
        let [x, y, z, w] = self.dst_sel;
        [
            self.base as u32,
            (self.base >> 32) as u32 & 0xFFFF | (self.stride & 0x3FFF) << 16,
            self.num_records,
            x & 7
                | (y & 7) << 3
                | (z & 7) << 6
                | (w & 7) << 9
                | (self.num_format & 7) << 12
                | (self.data_format & 0xF) << 15
                | u32::from(self.add_tid) << 23,
        ]
    }

    /// The fields of four descriptor dwords.
    pub fn decode(w: &[u32; 4]) -> BufferDescriptor {
        BufferDescriptor {
            base: u64::from(w[0]) | u64::from(w[1] & 0xFFFF) << 32,
            stride: (w[1] >> 16) & 0x3FFF,
            num_records: w[2],
            dst_sel: [0, 3, 6, 9].map(|lo| (w[3] >> lo) & 7),
            num_format: (w[3] >> 12) & 7,
            data_format: (w[3] >> 15) & 0xF,
            add_tid: (w[3] >> 23) & 1 != 0,
        }
    }
}

/// The image kinds of the descriptor's TYPE field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// A 1D image (TYPE 8).
    D1,
    /// A 2D image (TYPE 9).
    D2,
    /// A 3D image (TYPE 10).
    D3,
    /// A cube map (TYPE 11).
    Cube,
    /// An array of 1D images (TYPE 12).
    D1Array,
    /// An array of 2D images (TYPE 13).
    D2Array,
    /// A multisampled 2D image or array (TYPE 14, 15).
    Msaa,
    /// A TYPE that names no image (0 to 7: a buffer descriptor read as an image).
    NotAnImage,
}

impl ImageKind {
    fn code(self) -> u32 {
        match self {
            ImageKind::D1 => 8,
            ImageKind::D2 => 9,
            ImageKind::D3 => 10,
            ImageKind::Cube => 11,
            ImageKind::D1Array => 12,
            ImageKind::D2Array => 13,
            ImageKind::Msaa => 14,
            ImageKind::NotAnImage => 0,
        }
    }

    fn from_code(code: u32) -> ImageKind {
        match code {
            8 => ImageKind::D1,
            9 => ImageKind::D2,
            10 => ImageKind::D3,
            11 => ImageKind::Cube,
            12 => ImageKind::D1Array,
            13 => ImageKind::D2Array,
            14 | 15 => ImageKind::Msaa,
            _ => ImageKind::NotAnImage,
        }
    }

    /// Whether the third extent counts array layers rather than depth.
    pub fn is_array(self) -> bool {
        matches!(self, ImageKind::D1Array | ImageKind::D2Array)
    }
}

/// DST_SEL codes: the value a destination component takes.
pub mod sel {
    /// Zero.
    pub const ZERO: u32 = 0;
    /// One (1.0 for float formats).
    pub const ONE: u32 = 1;
    /// The element's X component.
    pub const X: u32 = 4;
    /// The element's Y component.
    pub const Y: u32 = 5;
    /// The element's Z component.
    pub const Z: u32 = 6;
    /// The element's W component.
    pub const W: u32 = 7;
}

/// SW_MODE 0: rows of texels one after another (the only layout the emulator addresses).
pub const SWIZZLE_LINEAR: u32 = 0;

/// An image descriptor's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageDescriptor {
    /// Address of texel (0, 0, 0); a multiple of 256.
    pub base: u64,
    /// Data format (DFMT numbering, see [`crate::texel`]).
    pub data_format: u32,
    /// Number format (NFMT numbering).
    pub num_format: u32,
    /// Width in texels (1 to 16384).
    pub width: u32,
    /// Height in texels (1 to 16384; 1 for 1D kinds).
    pub height: u32,
    /// Depth of a 3D image or layers of an array (1 to 8192; 1 otherwise).
    pub depth: u32,
    /// Texels from one row to the next (1 to 65536).
    pub pitch: u32,
    /// The value of each destination component (X, Y, Z, W), as [`sel`] codes.
    pub dst_sel: [u32; 4],
    /// The first and last mip level.
    pub levels: (u32, u32),
    /// The memory layout (SW_MODE; [`SWIZZLE_LINEAR`] or a tiled mode).
    pub swizzle_mode: u32,
    /// The image kind.
    pub kind: ImageKind,
}

impl ImageDescriptor {
    /// The eight descriptor dwords.
    pub fn encode(&self) -> [u32; 8] {
        let addr = self.base >> 8;
        let [x, y, z, w] = self.dst_sel;
        [
            addr as u32,
            (addr >> 32) as u32 & 0xFF
                | (self.data_format & 0x3F) << 20
                | (self.num_format & 0xF) << 26,
            (self.width - 1) & 0x3FFF | ((self.height - 1) & 0x3FFF) << 14,
            x & 7
                | (y & 7) << 3
                | (z & 7) << 6
                | (w & 7) << 9
                | (self.levels.0 & 0xF) << 12
                | (self.levels.1 & 0xF) << 16
                | (self.swizzle_mode & 0x1F) << 20
                | self.kind.code() << 28,
            (self.depth - 1) & 0x1FFF | ((self.pitch - 1) & 0xFFFF) << 13,
            0,
            0,
            0,
        ]
    }

    /// The fields of eight descriptor dwords.
    pub fn decode(w: &[u32; 8]) -> ImageDescriptor {
        let field = |word: u32, lo: u32, n: u32| (word >> lo) & ((1u32 << n) - 1);
        ImageDescriptor {
            base: (u64::from(w[0]) | u64::from(w[1] & 0xFF) << 32) << 8,
            data_format: field(w[1], 20, 6),
            num_format: field(w[1], 26, 4),
            width: field(w[2], 0, 14) + 1,
            height: field(w[2], 14, 14) + 1,
            depth: field(w[4], 0, 13) + 1,
            pitch: field(w[4], 13, 16) + 1,
            dst_sel: [
                field(w[3], 0, 3),
                field(w[3], 3, 3),
                field(w[3], 6, 3),
                field(w[3], 9, 3),
            ],
            levels: (field(w[3], 12, 4), field(w[3], 16, 4)),
            swizzle_mode: field(w[3], 20, 5),
            kind: ImageKind::from_code(field(w[3], 28, 4)),
        }
    }
}

/// How a coordinate outside the image is brought back (the S# CLAMP_X/Y/Z codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    /// Repeat the image (SQ_TEX_WRAP, 0).
    Repeat,
    /// Repeat it mirrored every other time (SQ_TEX_MIRROR, 1).
    Mirror,
    /// The nearest edge texel (SQ_TEX_CLAMP_LAST_TEXEL, 2).
    ClampToEdge,
    /// The border colour (SQ_TEX_CLAMP_BORDER, 6).
    Border,
    /// Another code (3, 4, 5, 7: mirror-once and half-border modes).
    Other(u32),
}

impl Wrap {
    fn code(self) -> u32 {
        match self {
            Wrap::Repeat => 0,
            Wrap::Mirror => 1,
            Wrap::ClampToEdge => 2,
            Wrap::Border => 6,
            Wrap::Other(c) => c & 7,
        }
    }

    fn from_code(code: u32) -> Wrap {
        match code {
            0 => Wrap::Repeat,
            1 => Wrap::Mirror,
            2 => Wrap::ClampToEdge,
            6 => Wrap::Border,
            c => Wrap::Other(c),
        }
    }
}

/// Texel filters of the S# (XY_MAG_FILTER, XY_MIN_FILTER codes).
pub mod filter {
    /// The nearest texel.
    pub const POINT: u32 = 0;
    /// The weighted four (1D: two, 3D: eight) nearest texels.
    pub const BILINEAR: u32 = 1;
}

/// Border colours of the S# (BORDER_COLOR_TYPE codes).
pub mod border {
    /// (0, 0, 0, 0).
    pub const TRANSPARENT_BLACK: u32 = 0;
    /// (0, 0, 0, 1).
    pub const OPAQUE_BLACK: u32 = 1;
    /// (1, 1, 1, 1).
    pub const OPAQUE_WHITE: u32 = 2;
}

/// A sampler descriptor's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplerDescriptor {
    /// Wrap of the X, Y and Z coordinates.
    pub wrap: [Wrap; 3],
    /// Coordinates are in texels, not in [0, 1) (FORCE_UNNORMALIZED).
    pub unnormalized: bool,
    /// Filter when magnifying ([`filter`] codes).
    pub mag_filter: u32,
    /// Filter when minifying.
    pub min_filter: u32,
    /// Border colour ([`border`] codes; 3 is a colour table the emulator does not read).
    pub border_color: u32,
}

impl SamplerDescriptor {
    /// The four descriptor dwords (MAX_LOD at its largest, no mip filter).
    pub fn encode(&self) -> [u32; 4] {
        let [x, y, z] = self.wrap.map(Wrap::code);
        [
            x | y << 3 | z << 6 | u32::from(self.unnormalized) << 15,
            4095 << 12,
            (self.mag_filter & 3) << 20 | (self.min_filter & 3) << 22,
            (self.border_color & 3) << 30,
        ]
    }

    /// The fields of four descriptor dwords.
    pub fn decode(w: &[u32; 4]) -> SamplerDescriptor {
        SamplerDescriptor {
            wrap: [0, 3, 6].map(|lo| Wrap::from_code((w[0] >> lo) & 7)),
            unnormalized: (w[0] >> 15) & 1 != 0,
            mag_filter: (w[2] >> 20) & 3,
            min_filter: (w[2] >> 22) & 3,
            border_color: w[3] >> 30,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_decode_as_they_were_encoded() {
        let image = ImageDescriptor {
            base: 0x7F12_3456_7800,
            data_format: 10,
            num_format: 7,
            width: 16384,
            height: 3,
            depth: 8192,
            pitch: 65536,
            dst_sel: [sel::Z, sel::Y, sel::X, sel::ONE],
            levels: (0, 0),
            swizzle_mode: SWIZZLE_LINEAR,
            kind: ImageKind::D2Array,
        };
        assert_eq!(ImageDescriptor::decode(&image.encode()), image);
        // HIP's device code reads the height from dword 2 bits 27:14.
        assert_eq!((image.encode()[2] >> 14) & 0x3FFF, 2);
        let sampler = SamplerDescriptor {
            wrap: [Wrap::Border, Wrap::Mirror, Wrap::ClampToEdge],
            unnormalized: true,
            mag_filter: filter::BILINEAR,
            min_filter: filter::POINT,
            border_color: border::OPAQUE_WHITE,
        };
        assert_eq!(SamplerDescriptor::decode(&sampler.encode()), sampler);
        let buffer = BufferDescriptor {
            base: 0xFFFF_1234_5678,
            stride: 0x3FFF,
            num_records: 0xFFFF_FFFF,
            dst_sel: [sel::X, sel::ZERO, sel::ZERO, sel::ONE],
            num_format: 7,
            data_format: 14,
            add_tid: true,
        };
        assert_eq!(BufferDescriptor::decode(&buffer.encode()), buffer);
        assert_eq!(sampler.encode()[0] >> 15 & 1, 1);
    }
}
