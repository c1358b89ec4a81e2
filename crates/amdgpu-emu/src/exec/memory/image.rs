//! Image instructions (MIMG, gfx90a): `image_load`, `image_store` (and their `_mip` forms at
//! level 0), `image_sample` with point and bilinear filters, and `image_get_resinfo`, on
//! images of one mip level. Texels convert through the descriptor's formats
//! ([`crate::texel`]); loads and samples apply its DST_SEL. An image or sampler the emulator
//! cannot address exactly (mip chains, cube maps, anisotropic filters, minification and
//! magnification filters that differ) faults, named, rather than giving an approximation.
//!
//! Layout: texel (x, y, slice) lives at `((slice * height + y) * pitch + x) * bytes` from the
//! base, in every swizzle mode. For SW_MODE linear that is the GPU's layout. A tiled mode
//! (what ROCR gives an OPAQUE image on a discrete GPU) is an arrangement the HSA image API
//! keeps opaque: the runtimes write and read such images only through image instructions
//! (their blit kernels), and the tiled surface is at least `pitch * height * slices` texels, so
//! the row-major arrangement gives every image access the texel the GPU would; only the bytes'
//! order in memory differs from the hardware's.

use crate::decode::{Inst, Op, flags};
use crate::fault::FaultKind;
use crate::memory::{load_bytes, store_bytes};
use crate::resource::{ImageDescriptor, ImageKind, SamplerDescriptor, Wrap, border, filter};
use crate::texel::{self, Format};
use crate::wave::{LANES, Wave};

use super::super::{Ctx, Flow, Step, illegal};
use super::{global, put_half};

pub(super) fn exec(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Step {
    let name = inst.op.name();
    if inst.ctrl & (flags::A16 | flags::LWE) != 0 {
        return Err(illegal(format!(
            "{name} with 16-bit addresses (a16) or an LOD warning (lwe) is not emulated"
        )));
    }
    match inst.op {
        Op::image_load | Op::image_load_mip => load(w, ctx, inst),
        Op::image_store | Op::image_store_mip => store(w, ctx, inst),
        Op::image_sample => sample(w, ctx, inst),
        Op::image_get_resinfo => resinfo(w, inst),
        _ => Err(illegal(format!(
            "{name} is not emulated (image atomics and the packed forms are not)"
        ))),
    }?;
    w.lane_insts += w.exec().count_ones() as u64;
    Ok(Flow::Next)
}

/// An image as one instruction sees it.
struct Image {
    d: ImageDescriptor,
    fmt: Format,
    /// Bytes per texel.
    bpe: u64,
    /// Coordinates before the layer: 1 to 3.
    dims: usize,
    /// Layers of an array (1 otherwise).
    layers: u32,
}

impl Image {
    /// The image of the instruction's resource registers, or why it cannot be addressed.
    fn of(w: &Wave, inst: &Inst, write: bool) -> Result<Image, FaultKind> {
        let r = inst.src[2] as usize & 127;
        let words: [u32; 8] = std::array::from_fn(|k| w.s[(r + k) & 127]);
        let d = ImageDescriptor::decode(&words);
        let name = inst.op.name();
        let not = |what: String| illegal(format!("{name} on s[{r}:{}]: {what}", r + 7));
        let (dims, layers) = match d.kind {
            ImageKind::D1 => (1, 1),
            ImageKind::D2 => (2, 1),
            ImageKind::D3 => (3, 1),
            ImageKind::D1Array => (1, d.depth),
            ImageKind::D2Array => (2, d.depth),
            ImageKind::NotAnImage => {
                return Err(not(format!(
                    "the descriptor's TYPE ({}) is not an image type",
                    words[3] >> 28
                )));
            }
            other => return Err(not(format!("{other:?} images are not emulated"))),
        };
        if d.levels.1 > d.levels.0 {
            return Err(not(format!(
                "mip levels {} to {}: mipmapped images are not emulated",
                d.levels.0, d.levels.1
            )));
        }
        let fmt = texel::format(d.data_format, d.num_format, write).map_err(not)?;
        Ok(Image {
            bpe: u64::from(fmt.bytes()),
            d,
            fmt,
            dims,
            layers,
        })
    }

    /// Rows in one slice (1 for 1D kinds).
    fn rows(&self) -> u64 {
        if self.dims >= 2 {
            u64::from(self.d.height)
        } else {
            1
        }
    }

    /// Extent of coordinate `k` (< dims).
    fn extent(&self, k: usize) -> u32 {
        [self.d.width, self.d.height, self.d.depth][k]
    }

    /// The address of texel `t` (x, y, z or layer), or `None` outside the image.
    fn texel_address(&self, t: [u32; 3]) -> Option<u64> {
        // Below three dimensions the next coordinate is the layer (0 without an array).
        let inside = (0..self.dims).all(|k| t[k] < self.extent(k))
            && (self.dims == 3 || t[self.dims] < self.layers);
        if !inside {
            return None;
        }
        let slice = if self.dims == 3 { t[2] } else { t[self.dims] };
        let (x, y) = (
            u64::from(t[0]),
            if self.dims >= 2 { u64::from(t[1]) } else { 0 },
        );
        let row = u64::from(slice) * self.rows() + y;
        Some(self.d.base + (row * u64::from(self.d.pitch) + x) * self.bpe)
    }

    /// The four components of texel `t` after DST_SEL (zeros outside the image).
    fn read(&self, ctx: &mut Ctx<'_>, lane: usize, t: [u32; 3]) -> Result<[u32; 4], FaultKind> {
        let Some(a) = self.texel_address(t) else {
            return Ok([0; 4]);
        };
        let mut raw = [0u8; 16];
        let n = self.bpe as usize;
        let p = global(ctx, a, self.bpe as u32, lane, false)?;
        load_bytes(p, &mut raw[..n]);
        let comps = self.fmt.unpack(&raw[..n]);
        Ok(self
            .d
            .dst_sel
            .map(|sel| texel::dst_sel(sel, &comps, self.fmt.one())))
    }
}

/// The integer coordinates of lane `l` (x, y, z or layer) and, for `_mip` forms, its level.
fn int_coords(w: &Wave, inst: &Inst, img: &Image, l: usize) -> ([u32; 3], u32) {
    let base = Wave::vslot(inst.src[0]);
    let n = img.dims + usize::from(img.d.kind.is_array());
    let mut t = [0u32; 3];
    for (k, c) in t.iter_mut().enumerate().take(n) {
        *c = w.v[(base + k) & 511][l];
    }
    let mip = matches!(inst.op, Op::image_load_mip | Op::image_store_mip)
        .then(|| w.v[(base + n) & 511][l])
        .unwrap_or(0);
    (t, mip)
}

/// Write the DMASK-enabled components of `comps` to lane `l`'s data registers, packed (two
/// halves per register with D16).
fn put_components(w: &mut Wave, inst: &Inst, img_fmt: Option<&Format>, l: usize, comps: [u32; 4]) {
    let base = Wave::vslot(inst.src[1]);
    let d16 = inst.ctrl & flags::D16 != 0;
    let mut k = 0;
    for (c, &v) in comps.iter().enumerate() {
        if inst.imm >> c & 1 == 0 {
            continue;
        }
        if d16 {
            let h = img_fmt.map_or(v as u16, |f| f.narrow_d16(v));
            put_half(w, (base + k / 2) & 511, l, k % 2 == 1, h);
        } else {
            w.v[(base + k) & 511][l] = v;
        }
        k += 1;
    }
}

fn load(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Result<(), FaultKind> {
    let img = Image::of(w, inst, false)?;
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let (t, mip) = int_coords(w, inst, &img, l);
        let comps = if mip == 0 {
            img.read(ctx, l, t)?
        } else {
            [0; 4]
        };
        put_components(w, inst, Some(&img.fmt), l, comps);
    }
    Ok(())
}

fn store(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Result<(), FaultKind> {
    let img = Image::of(w, inst, true)?;
    let base = Wave::vslot(inst.src[1]);
    let d16 = inst.ctrl & flags::D16 != 0;
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let (t, mip) = int_coords(w, inst, &img, l);
        let Some(a) = img.texel_address(t).filter(|_| mip == 0) else {
            continue;
        };
        // The enabled components come packed from the data registers; the others store 0.
        let mut regs = [0u32; 4];
        let mut k = 0;
        for (c, r) in regs.iter_mut().enumerate() {
            if inst.imm >> c & 1 == 0 {
                continue;
            }
            *r = if d16 {
                let v = w.v[(base + k / 2) & 511][l];
                img.fmt.widen_d16((v >> (16 * (k % 2))) as u16)
            } else {
                w.v[(base + k) & 511][l]
            };
            k += 1;
        }
        let bytes = img.fmt.pack(&regs, 4);
        let p = global(ctx, a, img.bpe as u32, l, true)?;
        store_bytes(p, &bytes[..img.bpe as usize]);
    }
    Ok(())
}

/// A texel index along one axis after the sampler's wrap, or `None` for the border.
fn wrap(i: i64, size: u32, mode: Wrap) -> Option<u32> {
    let n = i64::from(size);
    let j = match mode {
        Wrap::Repeat => i.rem_euclid(n),
        Wrap::Mirror => {
            let m = i.rem_euclid(2 * n);
            if m >= n { 2 * n - 1 - m } else { m }
        }
        Wrap::ClampToEdge => i.clamp(0, n - 1),
        Wrap::Border | Wrap::Other(_) => {
            if !(0..n).contains(&i) {
                return None;
            }
            i
        }
    };
    Some(j as u32)
}

/// The texels along one axis and their weights: one for a point filter, two for bilinear. The
/// filter's position between texel centres is rounded to 8 fractional bits, as the texture
/// unit's fixed-point weights are (AMD's HIP texture tests model the same rounding).
fn taps(u: f32, size: u32, mode: Wrap, bilinear: bool) -> [(Option<u32>, f32); 2] {
    // A NaN coordinate takes texel 0; an enormous one is far outside either way.
    let u = if u.is_nan() { 0.0 } else { u.clamp(-1e9, 1e9) };
    if bilinear {
        let t = ((u - 0.5) * 256.0).round() / 256.0;
        let i0 = t.floor();
        let f = t - i0;
        let i0 = i0 as i64;
        [
            (wrap(i0, size, mode), 1.0 - f),
            (wrap(i0 + 1, size, mode), f),
        ]
    } else {
        [(wrap(u.floor() as i64, size, mode), 1.0), (None, 0.0)]
    }
}

/// The sampler of the instruction's sampler registers, checked for what the emulator filters.
fn sampler(w: &Wave, inst: &Inst) -> Result<SamplerDescriptor, FaultKind> {
    let r = inst.sdst as usize & 127;
    let s = SamplerDescriptor::decode(&std::array::from_fn(|k| w.s[(r + k) & 127]));
    let not = |what: String| {
        illegal(format!(
            "image_sample with the sampler in s[{r}:{}]: {what}",
            r + 3
        ))
    };
    if s.mag_filter != s.min_filter {
        return Err(not(format!(
            "minification filter {} differs from magnification filter {}; the emulator \
             does not compute a level of detail",
            s.min_filter, s.mag_filter
        )));
    }
    if s.mag_filter > filter::BILINEAR {
        return Err(not(format!(
            "anisotropic filter {} is not emulated",
            s.mag_filter
        )));
    }
    if let Some(Wrap::Other(c)) = s.wrap.iter().find(|m| matches!(m, Wrap::Other(_))) {
        return Err(not(format!(
            "wrap mode {c} (mirror-once or half-border) is not emulated"
        )));
    }
    if s.border_color > border::OPAQUE_WHITE {
        return Err(not("a border colour table is not emulated".into()));
    }
    Ok(s)
}

/// One `image_sample`'s image and sampler, resolved for its lanes.
struct Sampling {
    img: Image,
    wrap: [Wrap; 3],
    bilinear: bool,
    normalized: bool,
    border_color: [u32; 4],
}

impl Sampling {
    fn of(w: &Wave, inst: &Inst) -> Result<Sampling, FaultKind> {
        let img = Image::of(w, inst, false)?;
        let s = sampler(w, inst)?;
        let integer = matches!(img.d.num_format, texel::UINT | texel::SINT);
        let one = img.fmt.one();
        Ok(Sampling {
            wrap: s.wrap,
            // Integer texels are never blended: they take the nearest texel.
            bilinear: s.mag_filter == filter::BILINEAR && !integer,
            normalized: inst.ctrl & flags::UNORM == 0 && !s.unnormalized,
            border_color: match s.border_color {
                border::TRANSPARENT_BLACK => [0; 4],
                border::OPAQUE_BLACK => [0, 0, 0, one],
                _ => [one; 4],
            },
            img,
        })
    }

    /// The filtered components at coordinates `c` (x, y, z or layer) of lane `l`.
    fn at(&self, ctx: &mut Ctx<'_>, l: usize, c: [f32; 3]) -> Result<[u32; 4], FaultKind> {
        let img = &self.img;
        let mut axes = [[(Some(0u32), 1.0f32), (None, 0.0)]; 3];
        for (k, axis) in axes.iter_mut().enumerate().take(img.dims) {
            let size = img.extent(k);
            let u = if self.normalized {
                c[k] * size as f32
            } else {
                c[k]
            };
            *axis = taps(u, size, self.wrap[k], self.bilinear);
        }
        // An array layer is never blended: the nearest one, clamped.
        let layer = if img.dims < 3 {
            let max = (img.layers - 1) as f32;
            c[img.dims].round_ties_even().clamp(0.0, max) as u32
        } else {
            0
        };
        let mut acc = [0f32; 4];
        let mut nearest = [0u32; 4];
        for &(z, wz) in &axes[2] {
            for &(y, wy) in &axes[1] {
                for &(x, wx) in &axes[0] {
                    let weight = wx * wy * wz;
                    if weight == 0.0 {
                        continue;
                    }
                    let comps = match (x, y, z) {
                        // The layer follows the last coordinate, as in the registers.
                        (Some(x), Some(y), Some(z)) => match img.dims {
                            1 => img.read(ctx, l, [x, layer, 0])?,
                            2 => img.read(ctx, l, [x, y, layer])?,
                            _ => img.read(ctx, l, [x, y, z])?,
                        },
                        _ => self.border_color,
                    };
                    nearest = comps;
                    for k in 0..4 {
                        acc[k] += weight * f32::from_bits(comps[k]);
                    }
                }
            }
        }
        Ok(if self.bilinear {
            acc.map(f32::to_bits)
        } else {
            nearest
        })
    }
}

fn sample(w: &mut Wave, ctx: &mut Ctx<'_>, inst: &Inst) -> Result<(), FaultKind> {
    let sampling = Sampling::of(w, inst)?;
    let base = Wave::vslot(inst.src[0]);
    let exec = w.exec();
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let c = std::array::from_fn(|k| f32::from_bits(w.v[(base + k) & 511][l]));
        let out = sampling.at(ctx, l, c)?;
        put_components(w, inst, Some(&sampling.img.fmt), l, out);
    }
    Ok(())
}

/// `image_get_resinfo`: width, height, depth (3D) or layers, and the number of mip levels at
/// the level each lane's address register names, as integers.
fn resinfo(w: &mut Wave, inst: &Inst) -> Result<(), FaultKind> {
    let r = inst.src[2] as usize & 127;
    let d = ImageDescriptor::decode(&std::array::from_fn(|k| w.s[(r + k) & 127]));
    let base = Wave::vslot(inst.src[0]);
    let exec = w.exec();
    let levels = d.levels.1.saturating_sub(d.levels.0) + 1;
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let mip = w.v[base][l];
        let at = |n: u32| if mip >= 32 { 1 } else { (n >> mip).max(1) };
        let comps = match d.kind {
            ImageKind::D1 => [at(d.width), 1, 1, levels],
            ImageKind::D1Array => [at(d.width), d.depth, 1, levels],
            ImageKind::D2Array => [at(d.width), at(d.height), d.depth, levels],
            ImageKind::D3 => [at(d.width), at(d.height), at(d.depth), levels],
            _ => [at(d.width), at(d.height), 1, levels],
        };
        put_components(w, inst, None, l, comps);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_that_are_not_numbers_or_enormous_pick_texels_inside_the_wrap() {
        for u in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3e38, -3e38] {
            for mode in [Wrap::Repeat, Wrap::Mirror, Wrap::ClampToEdge] {
                for bilinear in [false, true] {
                    for (texel, _) in taps(u, 5, mode, bilinear) {
                        assert!(texel.is_none_or(|t| t < 5), "{u} {mode:?}: {texel:?}");
                    }
                }
            }
            assert_eq!(taps(u, 5, Wrap::Border, false)[0].0.is_none(), !u.is_nan());
        }
        assert_eq!(taps(f32::NAN, 5, Wrap::Repeat, false)[0].0, Some(0));
    }

    #[test]
    fn mirror_repeats_the_image_reversed_every_other_time() {
        let at = |i: i64| wrap(i, 3, Wrap::Mirror).unwrap();
        let got: Vec<u32> = (-4..8).map(at).collect();
        assert_eq!(got, [2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0, 1]);
    }
}
