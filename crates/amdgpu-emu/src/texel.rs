//! Texel formats: the data formats (DFMT) and number formats (NFMT) of typed buffer accesses
//! (`buffer_*_format_*` with the formats of the V#, `tbuffer_*` with the instruction's) and of
//! images (the formats of the image descriptor, the same numbers on GFX9), converted between
//! one memory element and 32-bit (or, for d16 forms, 16-bit) register components. A runtime
//! that fills or clears images converts with the same functions.

use half::f16;

/// The data formats (DFMT) by number, as the ISA and LLVM name them.
pub const DATA_FORMAT_NAMES: [&str; 16] = [
    "INVALID",
    "8",
    "16",
    "8_8",
    "32",
    "16_16",
    "10_11_11",
    "11_11_10",
    "10_10_10_2",
    "2_10_10_10",
    "8_8_8_8",
    "32_32",
    "16_16_16_16",
    "32_32_32",
    "32_32_32_32",
    "RESERVED_15",
];

/// The number formats (NFMT) by number.
pub const NUMBER_FORMAT_NAMES: [&str; 8] = [
    "UNORM",
    "SNORM",
    "USCALED",
    "SSCALED",
    "UINT",
    "SINT",
    "RESERVED_6",
    "FLOAT",
];

/// Number format (NFMT) UNORM: unsigned normalized to [0, 1].
pub const UNORM: u32 = 0;
/// Number format SNORM: signed normalized to [-1, 1].
pub const SNORM: u32 = 1;
/// Number format USCALED: an unsigned integer converted to float.
pub const USCALED: u32 = 2;
/// Number format SSCALED: a signed integer converted to float.
pub const SSCALED: u32 = 3;
/// Number format UINT: an unsigned integer.
pub const UINT: u32 = 4;
/// Number format SINT: a signed integer.
pub const SINT: u32 = 5;
/// Number format FLOAT: IEEE half or single precision (or the packed small floats).
pub const FLOAT: u32 = 7;

/// A resolved element format: component widths in bits from the lowest bit up (0 where the
/// format has no such component) and the number format.
#[derive(Clone, Copy, Debug)]
pub struct Format {
    bits: [u32; 4],
    nfmt: u32,
}

/// The element format of a DFMT/NFMT pair, or why it is not emulated (named by both fields).
pub fn format(dfmt: u32, nfmt: u32, write: bool) -> Result<Format, String> {
    let bits = match dfmt {
        1 => [8, 0, 0, 0],
        2 => [16, 0, 0, 0],
        3 => [8, 8, 0, 0],
        4 => [32, 0, 0, 0],
        5 => [16, 16, 0, 0],
        // Packed formats list their components from the lowest bit: 10_11_11 holds X in
        // bits 10:0, Y in 21:11 and Z in 31:22.
        6 => [11, 11, 10, 0],
        7 => [10, 11, 11, 0],
        8 => [2, 10, 10, 10],
        9 => [10, 10, 10, 2],
        10 => [8, 8, 8, 8],
        11 => [32, 32, 0, 0],
        12 => [16, 16, 16, 16],
        13 => [32, 32, 32, 0],
        14 => [32, 32, 32, 32],
        _ => [0; 4],
    };
    let named = || {
        format!(
            "data format {} (dfmt {dfmt}) with number format {} (nfmt {nfmt})",
            DATA_FORMAT_NAMES[dfmt as usize & 15],
            NUMBER_FORMAT_NAMES[nfmt as usize & 7]
        )
    };
    let widest = bits.iter().copied().max().unwrap_or(0);
    let packed_float = matches!(dfmt, 6 | 7);
    let ok = match nfmt {
        _ if widest == 0 => false,
        UNORM | SNORM => widest <= 16 && !packed_float,
        USCALED | SSCALED => widest <= 16 && !packed_float && !write,
        UINT | SINT => !packed_float,
        // Floats are 16 or 32 bits wide, or the unsigned 11- and 10-bit floats of the packed
        // formats (loads only).
        FLOAT => (widest >= 16 && !matches!(dfmt, 8 | 9)) || (packed_float && !write),
        _ => false,
    };
    if ok {
        Ok(Format { bits, nfmt })
    } else {
        Err(format!("{} is not emulated", named()))
    }
}

impl Format {
    /// Bytes of one element.
    pub fn bytes(&self) -> u32 {
        self.bits.iter().sum::<u32>() / 8
    }

    fn is_float(&self) -> bool {
        !matches!(self.nfmt, UINT | SINT)
    }

    /// The register value of a component the element does not have: 0 for X, Y and Z, one
    /// (1.0 for the float number formats) for W.
    fn missing(&self, k: usize) -> u32 {
        match (k, self.is_float()) {
            (3, true) => 1f32.to_bits(),
            (3, false) => 1,
            _ => 0,
        }
    }

    /// The four 32-bit register components of the element `raw` (little-endian bytes).
    pub fn unpack(&self, raw: &[u8]) -> [u32; 4] {
        let mut all = [0u8; 16];
        all[..raw.len()].copy_from_slice(raw);
        let word = u128::from_le_bytes(all);
        let mut shift = 0;
        let mut out = [0u32; 4];
        for k in 0..4 {
            let n = self.bits[k];
            if n == 0 {
                out[k] = self.missing(k);
                continue;
            }
            let v = ((word >> shift) as u64 & ((1u64 << n) - 1)) as u32;
            shift += n;
            out[k] = self.reg_value(v, n);
        }
        out
    }

    fn reg_value(&self, v: u32, n: u32) -> u32 {
        let signed = || ((v as i64) << (64 - n) >> (64 - n)) as i32;
        let max = ((1u64 << n) - 1) as f32;
        match self.nfmt {
            UNORM => (v as f32 / max).to_bits(),
            // SNORM maps the most negative value and the one above it both to -1.
            SNORM => {
                let half = ((1u64 << (n - 1)) - 1) as f32;
                (signed() as f32 / half).max(-1.0).to_bits()
            }
            USCALED => (v as f32).to_bits(),
            SSCALED => (signed() as f32).to_bits(),
            UINT => v,
            SINT => signed() as u32,
            _ => match n {
                16 => f16::from_bits(v as u16).to_f32().to_bits(),
                11 | 10 => small_float(v, n - 5).to_bits(),
                _ => v,
            },
        }
    }

    /// A register component narrowed for a d16 load: f16 for the float number formats (to
    /// nearest even), the low 16 bits of the integer for UINT and SINT.
    pub fn narrow_d16(&self, reg: u32) -> u16 {
        if self.is_float() {
            f16::from_f32(f32::from_bits(reg)).to_bits()
        } else {
            reg as u16
        }
    }

    /// A d16 store's 16-bit register component widened to the 32-bit form `pack` takes.
    pub fn widen_d16(&self, h: u16) -> u32 {
        match self.nfmt {
            UINT => h as u32,
            SINT => h as i16 as i32 as u32,
            _ => f16::from_bits(h).to_f32().to_bits(),
        }
    }

    /// The element bytes holding the register components `regs` (the first `count` of them;
    /// the element's other components are written as zero).
    pub fn pack(&self, regs: &[u32; 4], count: usize) -> [u8; 16] {
        let mut word = 0u128;
        let mut shift = 0;
        for k in 0..4 {
            let n = self.bits[k];
            if n == 0 {
                continue;
            }
            let v = if k < count {
                self.field_value(regs[k], n)
            } else {
                0
            };
            word |= (v as u128) << shift;
            shift += n;
        }
        word.to_le_bytes()
    }

    fn field_value(&self, r: u32, n: u32) -> u64 {
        let mask = (1u64 << n) - 1;
        let x = f32::from_bits(r);
        // Float to normalized integer: clamped (NaN to 0), scaled and rounded to nearest even.
        let norm = |lo: f32, scale: f32| {
            let c = if x.is_nan() { 0.0 } else { x.clamp(lo, 1.0) };
            (c * scale).round_ties_even() as i64 as u64 & mask
        };
        match self.nfmt {
            UNORM => norm(0.0, mask as f32),
            SNORM => norm(-1.0, ((1u64 << (n - 1)) - 1) as f32),
            // Integers keep their low bits.
            UINT | SINT => r as u64 & mask,
            _ => match n {
                16 => f16::from_f32(x).to_bits() as u64,
                _ => r as u64 & mask,
            },
        }
    }
}

/// An unsigned float of 5 exponent bits (bias 15) and `m` mantissa bits, as the 10- and 11-bit
/// components of the packed float formats hold.
fn small_float(v: u32, m: u32) -> f32 {
    let e = (v >> m) & 31;
    let f = v & ((1 << m) - 1);
    let frac = f as f32 / (1u32 << m) as f32;
    match e {
        0 => frac * 2f32.powi(-14),
        31 if f == 0 => f32::INFINITY,
        31 => f32::NAN,
        _ => (1.0 + frac) * 2f32.powi(e as i32 - 15),
    }
}

/// The V# DST_SEL field of one destination component applied to the unpacked components:
/// 0 gives zero, 1 gives one, 4 to 7 select X to W (other codes are reserved and give zero).
pub fn dst_sel(sel: u32, comps: &[u32; 4], one: u32) -> u32 {
    match sel {
        1 => one,
        4..=7 => comps[(sel - 4) as usize],
        _ => 0,
    }
}

impl Format {
    /// The value DST_SEL 1 selects: 1.0 for the float number formats, 1 for the integer ones.
    pub fn one(&self) -> u32 {
        self.missing(3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_convert_by_number_format() {
        let f = format(10, UNORM, false).unwrap();
        let c = f.unpack(&[0, 255, 51, 128]);
        assert_eq!(c.map(f32::from_bits), [0.0, 1.0, 0.2, 128.0 / 255.0]);
        let s = format(3, SNORM, false).unwrap();
        assert_eq!(
            s.unpack(&[0x80, 0x81]).map(f32::from_bits)[..2],
            [-1.0, -1.0]
        );
        let i = format(5, SINT, false).unwrap();
        assert_eq!(i.unpack(&[0xFF, 0xFF, 2, 0]), [u32::MAX, 2, 0, 1]);
        let p = format(9, UINT, false).unwrap();
        let w = 5u32 | 6 << 10 | 7 << 20 | 3 << 30;
        assert_eq!(p.unpack(&w.to_le_bytes()), [5, 6, 7, 3]);
        let pf = format(6, FLOAT, false).unwrap();
        // 11-bit 1.0 (exponent 15) in X, 10-bit 2.0 (exponent 16) in Z.
        let w = (15u32 << 6) | (16u32 << 5) << 22;
        assert_eq!(
            pf.unpack(&w.to_le_bytes()).map(f32::from_bits),
            [1.0, 0.0, 2.0, 1.0]
        );
    }

    #[test]
    fn stores_round_and_clamp() {
        let f = format(10, UNORM, true).unwrap();
        let regs = [0.5f32, 2.0, -1.0, f32::NAN].map(f32::to_bits);
        assert_eq!(&f.pack(&regs, 4)[..4], &[128, 255, 0, 0]);
        let s = format(5, SNORM, true).unwrap();
        let regs = [(-1.0f32).to_bits(), 0.5f32.to_bits(), 0, 0];
        assert_eq!(&s.pack(&regs, 2)[..4], &[0x01, 0x80, 0x00, 0x40]);
        assert!(format(6, FLOAT, true).is_err());
        assert!(format(1, FLOAT, false).unwrap_err().contains("nfmt 7"));
    }
}
