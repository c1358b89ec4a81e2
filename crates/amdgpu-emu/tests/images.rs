//! Image instructions (gfx90a) on descriptors built in memory: loads, stores, samples and
//! size queries against CPU references, and the images and samplers the emulator refuses.
#![allow(clippy::needless_range_loop)]

mod common;
use amdgpu_emu::FaultKind;
use amdgpu_emu::Target;
use amdgpu_emu::resource::{
    ImageDescriptor, ImageKind, SWIZZLE_LINEAR, SamplerDescriptor, Wrap, border, filter, sel,
};
use common::{Arg, Bench, Rng};
use half::f16;

const T: Target = Target::Gfx90a;
/// Data formats (DFMT) and number formats (NFMT) used here.
const DF_8_8_8_8: u32 = 10;
const DF_32: u32 = 4;
const DF_16_16_16_16: u32 = 12;
const NF_UNORM: u32 = 0;
const NF_FLOAT: u32 = 7;

/// An image of `texels` (raw bytes, `bpe` per texel, rows of `pitch` texels) in a new buffer;
/// returns (buffer, descriptor buffer).
fn image(b: &mut Bench, d: ImageDescriptor, bytes: &[u8]) -> (usize, usize) {
    // The texels start on a 256-byte boundary inside their buffer.
    let mut padded = vec![0u8; 256];
    padded.extend_from_slice(bytes);
    let buf = b.buf(&padded);
    let base = (b.address(buf) + 255) & !255;
    let shift = (base - b.address(buf)) as usize;
    let mut content = vec![0u8; shift];
    content.extend_from_slice(bytes);
    content.resize(padded.len(), 0);
    b.mem.write(b.address(buf), &content);
    let desc = ImageDescriptor { base, ..d };
    let words = b.buf_of(&desc.encode());
    (buf, words)
}

fn descriptor(kind: ImageKind, df: u32, nf: u32, size: [u32; 3], pitch: u32) -> ImageDescriptor {
    ImageDescriptor {
        base: 0,
        data_format: df,
        num_format: nf,
        width: size[0],
        height: size[1],
        depth: size[2],
        pitch,
        dst_sel: [sel::X, sel::Y, sel::Z, sel::W],
        levels: (0, 0),
        swizzle_mode: SWIZZLE_LINEAR,
        kind,
    }
}

/// Every lane's four components of `image_sample_xyzw` at `coords` with `sampler` words.
fn sample(b: &mut Bench, rsrc: usize, sampler: [u32; 4], coords: &[[f32; 4]]) -> Vec<[f32; 4]> {
    let (s, cb) = (b.buf_of(&sampler), b.buf_of(coords));
    let out = b.zeros::<[f32; 4]>(64);
    b.run1(
        "image_sample_xyzw",
        64,
        64,
        &[Arg::Buf(rsrc), Arg::Buf(s), Arg::Buf(cb), Arg::Buf(out)],
    );
    b.read(out)
}

/// Every lane's four components of `image_load_xyzw` at `at`.
fn load(b: &mut Bench, rsrc: usize, at: &[[i32; 4]]) -> Vec<[f32; 4]> {
    let atb = b.buf_of(at);
    let out = b.zeros::<[f32; 4]>(64);
    b.run1(
        "image_load_xyzw",
        64,
        64,
        &[Arg::Buf(rsrc), Arg::Buf(atb), Arg::Buf(out)],
    );
    b.read(out)
}

fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.next() as u8).collect()
}

/// Coordinates of 64 lanes: in range, and some just outside each extent.
fn int_coords(size: [u32; 3], seed: u64) -> Vec<[i32; 4]> {
    let mut r = Rng(seed);
    (0..64)
        .map(|l| {
            let mut c = [0i32; 4];
            for k in 0..3 {
                let n = size[k] as i64;
                c[k] = match l % 9 {
                    7 if k == 0 => n as i32,
                    8 if k == 1 => -1,
                    _ => (r.next() as i64).rem_euclid(n) as i32,
                };
            }
            c
        })
        .collect()
}

#[test]
fn image_loads_convert_select_and_mask_components() {
    let mut b = Bench::new("images", T);
    let (w, h, pitch) = (5u32, 3u32, 8u32);
    let texels = random_bytes((pitch * h * 4) as usize, 11);
    let mut d = descriptor(ImageKind::D2, DF_8_8_8_8, NF_UNORM, [w, h, 1], pitch);
    // BGRA-like selection with a constant one in W.
    d.dst_sel = [sel::Z, sel::Y, sel::X, sel::ONE];
    let (_, rsrc) = image(&mut b, d, &texels);
    let at = int_coords([w, h, 1], 3);
    let got = load(&mut b, rsrc, &at);
    let atb = b.buf_of(&at);
    let masked = b.zeros::<[u32; 2]>(128);
    b.run1(
        "image_load_masked",
        64,
        64,
        &[Arg::Buf(rsrc), Arg::Buf(atb), Arg::Buf(masked)],
    );
    let got_masked: Vec<[u32; 2]> = b.read(masked);
    for l in 0..64 {
        let [x, y, _, _] = at[l];
        let want = if (0..w as i32).contains(&x) && (0..h as i32).contains(&y) {
            let o = ((y as u32 * pitch + x as u32) * 4) as usize;
            let c: Vec<f32> = texels[o..o + 4].iter().map(|&v| v as f32 / 255.0).collect();
            [c[2], c[1], c[0], 1.0]
        } else {
            [0.0; 4]
        };
        assert_eq!(got[l], want, "lane {l} at {:?}", at[l]);
        // dmask 0xa: Y then W; dmask 0x5 d16: X and Z as halves of one register.
        assert_eq!(
            got_masked[2 * l],
            [want[1].to_bits(), want[3].to_bits()],
            "lane {l}"
        );
        let halves = u32::from(f16::from_f32(want[0]).to_bits())
            | u32::from(f16::from_f32(want[2]).to_bits()) << 16;
        assert_eq!(got_masked[2 * l + 1][0], halves, "lane {l} d16");
    }
}

#[test]
fn image_loads_address_layers_of_an_array_in_every_layout_and_level_zero_only() {
    let mut b = Bench::new("images", T);
    let (w, h, layers, pitch) = (4u32, 2u32, 3u32, 6u32);
    let vals: Vec<f32> = (0..pitch * h * layers).map(|i| i as f32 * 0.5).collect();
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let texel = |[x, y, z, _]: [i32; 4]| {
        let inside = (0..w as i32).contains(&x)
            && (0..h as i32).contains(&y)
            && (0..layers as i32).contains(&z);
        inside.then(|| vals[((z as u32 * h + y as u32) * pitch + x as u32) as usize])
    };
    // Linear, and two of addrlib's tiled modes ROCR picks for OPAQUE images (4 KiB and
    // 64 KiB display tiles with XOR), which the emulator keeps row-major at the pitch.
    for swizzle_mode in [SWIZZLE_LINEAR, 22, 26] {
        let mut d = descriptor(ImageKind::D2Array, DF_32, NF_FLOAT, [w, h, layers], pitch);
        d.swizzle_mode = swizzle_mode;
        let (_, rsrc) = image(&mut b, d, &bytes);
        let at = int_coords([w, h, layers + 1], 5 + u64::from(swizzle_mode));
        let got = load(&mut b, rsrc, &at);
        for l in 0..64 {
            // One component: Y and Z read 0, W reads 1.0.
            let want = texel(at[l]).map_or([0.0; 4], |v| [v, 0.0, 0.0, 1.0]);
            assert_eq!(got[l], want, "mode {swizzle_mode}, lane {l} at {:?}", at[l]);
        }
    }
    // image_load_mip on a 2D image: (x, y, level); only level 0 exists.
    let d2 = descriptor(ImageKind::D2, DF_32, NF_FLOAT, [w, h, 1], pitch);
    let (_, rsrc2) = image(&mut b, d2, &bytes);
    let mip_at: Vec<[i32; 4]> = (0..64)
        .map(|l| [l % 4, (l / 4) % 2, (l / 8) % 2, 0])
        .collect();
    let mb = b.buf_of(&mip_at);
    let mout = b.zeros::<f32>(64);
    b.run1(
        "image_load_mip_x",
        64,
        64,
        &[Arg::Buf(rsrc2), Arg::Buf(mb), Arg::Buf(mout)],
    );
    let got: Vec<f32> = b.read(mout);
    for l in 0..64 {
        let [x, y, level, _] = mip_at[l];
        let want = if level == 0 {
            vals[(y as u32 * pitch + x as u32) as usize]
        } else {
            0.0
        };
        assert_eq!(got[l], want, "lane {l} at {:?}", mip_at[l]);
    }
}

#[test]
fn image_stores_convert_mask_and_drop_outside() {
    let mut b = Bench::new("images", T);
    let (w, h, pitch) = (6u32, 4u32, 8u32);
    let sentinel = vec![0xA5u8; (pitch * h * 8) as usize];
    let d = descriptor(ImageKind::D2, DF_16_16_16_16, NF_FLOAT, [w, h, 1], pitch);
    let (buf, rsrc) = image(&mut b, d, &sentinel);
    // Lanes 0..24 write the 24 texels once each; the others are outside the image, past
    // its width or its height.
    let at: Vec<[i32; 4]> = (0..64)
        .map(|l| match l {
            0..24 => [l % 6, l / 6, 0, 0],
            _ if l % 2 == 0 => [w as i32 + 1, 0, 0, 0],
            _ => [0, h as i32, 0, 0],
        })
        .collect();
    let mut r = Rng(9);
    let data: Vec<[f32; 4]> = (0..64)
        .map(|_| [r.f32(), r.f32(), r.f32(), r.f32()])
        .collect();
    let full: Vec<i32> = (0..64).map(|l| i32::from(l % 3 != 0)).collect();
    let xz: Vec<[f32; 2]> = data.iter().map(|d| [d[0], d[2]]).collect();
    let (atb, db, xzb, fb) = (
        b.buf_of(&at),
        b.buf_of(&data),
        b.buf_of(&xz),
        b.buf_of(&full),
    );
    b.run1(
        "image_store_xyzw",
        64,
        64,
        &[
            Arg::Buf(rsrc),
            Arg::Buf(atb),
            Arg::Buf(db),
            Arg::Buf(xzb),
            Arg::Buf(fb),
        ],
    );
    let mem: Vec<u8> = b.read(buf);
    let base = ((b.address(buf) + 255) & !255) - b.address(buf);
    let mut want = sentinel.clone();
    for l in 0..24 {
        let [x, y, _, _] = at[l];
        let o = ((y as u32 * pitch + x as u32) * 8) as usize;
        for c in 0..4 {
            let stored = full[l] != 0 || c % 2 == 0;
            let v = if stored { data[l][c] } else { 0.0 };
            want[o + 2 * c..o + 2 * c + 2].copy_from_slice(&f16::from_f32(v).to_le_bytes());
        }
    }
    assert_eq!(&mem[base as usize..base as usize + want.len()], &want[..]);
}

/// The CPU reference of one axis: texel indices and weights (`None` = border).
fn reference_taps(u: f32, n: u32, wrap: Wrap, linear: bool) -> Vec<(Option<u32>, f32)> {
    let fix = |i: i64| -> Option<u32> {
        let n = n as i64;
        match wrap {
            Wrap::Repeat => Some((((i % n) + n) % n) as u32),
            Wrap::Mirror => {
                let period = i.div_euclid(n);
                let r = i.rem_euclid(n);
                Some(if period % 2 == 0 { r } else { n - 1 - r } as u32)
            }
            Wrap::ClampToEdge => Some(i.max(0).min(n - 1) as u32),
            _ => (i >= 0 && i < n).then_some(i as u32),
        }
    };
    if linear {
        // The position between texel centres has 8 fractional bits.
        let t = u - 0.5;
        let t = t.trunc() + ((t - t.trunc()) * 256.0).round() / 256.0;
        let i = t.floor();
        vec![(fix(i as i64), 1.0 - (t - i)), (fix(i as i64 + 1), t - i)]
    } else {
        vec![(fix(u.floor() as i64), 1.0)]
    }
}

fn sampler(wrap: Wrap, linear: bool, unnormalized: bool, border_color: u32) -> [u32; 4] {
    let f = if linear {
        filter::BILINEAR
    } else {
        filter::POINT
    };
    SamplerDescriptor {
        wrap: [wrap; 3],
        unnormalized,
        mag_filter: f,
        min_filter: f,
        border_color,
    }
    .encode()
}

#[test]
fn image_samples_filter_wrap_and_pick_layers() {
    let mut b = Bench::new("images", T);
    let (w, h, pitch) = (5u32, 3u32, 8u32);
    let mut r = Rng(21);
    let vals: Vec<f32> = (0..pitch * h).map(|_| r.f32()).collect();
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let d = descriptor(ImageKind::D2, DF_32, NF_FLOAT, [w, h, 1], pitch);
    let (_, rsrc) = image(&mut b, d, &bytes);
    let coords: Vec<[f32; 4]> = (0..64)
        .map(|_| {
            let mut c = || (r.next() % 4000) as f32 / 1000.0 - 1.5;
            [c(), c(), 0.0, 0.0]
        })
        .collect();
    let cb = b.buf_of(&coords);
    for (wrap, linear, unnormalized, bc) in [
        (Wrap::ClampToEdge, false, false, border::TRANSPARENT_BLACK),
        (Wrap::ClampToEdge, true, false, border::TRANSPARENT_BLACK),
        (Wrap::Repeat, true, false, border::TRANSPARENT_BLACK),
        (Wrap::Repeat, false, false, border::TRANSPARENT_BLACK),
        (Wrap::Mirror, false, false, border::TRANSPARENT_BLACK),
        (Wrap::Mirror, true, false, border::TRANSPARENT_BLACK),
        (Wrap::Border, true, false, border::OPAQUE_WHITE),
        (Wrap::Border, false, true, border::OPAQUE_BLACK),
        (Wrap::ClampToEdge, true, true, border::TRANSPARENT_BLACK),
    ] {
        let got = sample(
            &mut b,
            rsrc,
            sampler(wrap, linear, unnormalized, bc),
            &coords,
        );
        let bcol = match bc {
            border::TRANSPARENT_BLACK => [0.0; 4],
            border::OPAQUE_BLACK => [0.0, 0.0, 0.0, 1.0],
            _ => [1.0; 4],
        };
        for l in 0..64 {
            let scale = |c: f32, n: u32| if unnormalized { c } else { c * n as f32 };
            let xs = reference_taps(scale(coords[l][0], w), w, wrap, linear);
            let ys = reference_taps(scale(coords[l][1], h), h, wrap, linear);
            let mut want = [0f64; 4];
            for &(y, wy) in &ys {
                for &(x, wx) in &xs {
                    let texel = match (x, y) {
                        (Some(x), Some(y)) => [vals[(y * pitch + x) as usize], 0.0, 0.0, 1.0],
                        _ => bcol,
                    };
                    for c in 0..4 {
                        want[c] += f64::from(wx * wy) * f64::from(texel[c]);
                    }
                }
            }
            for c in 0..4 {
                let close = if linear {
                    (f64::from(got[l][c]) - want[c]).abs() <= 1e-5 * (1.0 + want[c].abs())
                } else {
                    f64::from(got[l][c]) == want[c]
                };
                assert!(
                    close,
                    "{wrap:?} linear {linear} unnormalized {unnormalized}: lane {l} at {:?} \
                     component {c}: got {} want {}",
                    coords[l], got[l][c], want[c]
                );
            }
        }
    }
    // The instruction's UNORM bit: coordinates in texels with a normalizing sampler.
    let s = b.buf_of(&sampler(Wrap::ClampToEdge, false, false, 0));
    let out = b.zeros::<f32>(64);
    b.run1(
        "image_sample_unorm_x",
        64,
        64,
        &[Arg::Buf(rsrc), Arg::Buf(s), Arg::Buf(cb), Arg::Buf(out)],
    );
    let got: Vec<f32> = b.read(out);
    for l in 0..64 {
        let x = (coords[l][0].floor() as i64).clamp(0, w as i64 - 1) as u32;
        let y = (coords[l][1].floor() as i64).clamp(0, h as i64 - 1) as u32;
        assert_eq!(got[l], vals[(y * pitch + x) as usize], "lane {l}");
    }
    // A 2D array: the layer coordinate is rounded to nearest even and clamped, never blended.
    let layers = 3u32;
    let avals: Vec<f32> = (0..pitch * h * layers).map(|i| i as f32).collect();
    let abytes: Vec<u8> = avals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let ad = descriptor(ImageKind::D2Array, DF_32, NF_FLOAT, [w, h, layers], pitch);
    let (_, arsrc) = image(&mut b, ad, &abytes);
    let layer_of = [-0.7f32, 0.5, 1.5, 2.49, 7.0, 1.0];
    let acoords: Vec<[f32; 4]> = (0..64)
        .map(|l| [2.5, 1.5, layer_of[l % layer_of.len()], 0.0])
        .collect();
    let got = sample(
        &mut b,
        arsrc,
        sampler(Wrap::ClampToEdge, false, true, 0),
        &acoords,
    );
    for l in 0..64 {
        let z = [0u32, 0, 2, 2, 2, 1][l % layer_of.len()];
        assert_eq!(
            got[l][0],
            avals[((z * h + 1) * pitch + 2) as usize],
            "lane {l}"
        );
    }
}

#[test]
fn image_sample_blends_normalized_texels_per_component() {
    let mut b = Bench::new("images", T);
    let (w, h) = (4u32, 4u32);
    let texels = random_bytes((w * h * 4) as usize, 33);
    let d = descriptor(ImageKind::D2, DF_8_8_8_8, NF_UNORM, [w, h, 1], w);
    let (_, rsrc) = image(&mut b, d, &texels);
    let coords: Vec<[f32; 4]> = (0..64)
        .map(|l| {
            [
                (l % 8) as f32 / 8.0 + 0.03,
                (l / 8) as f32 / 8.0 + 0.01,
                0.0,
                0.0,
            ]
        })
        .collect();
    let got = sample(&mut b, rsrc, sampler(Wrap::Repeat, true, false, 0), &coords);
    for l in 0..64 {
        let xs = reference_taps(coords[l][0] * w as f32, w, Wrap::Repeat, true);
        let ys = reference_taps(coords[l][1] * h as f32, h, Wrap::Repeat, true);
        for c in 0..4 {
            let mut want = 0f64;
            for &(y, wy) in &ys {
                for &(x, wx) in &xs {
                    let o = ((y.unwrap() * w + x.unwrap()) * 4) as usize + c;
                    want += f64::from(wx * wy) * f64::from(texels[o]) / 255.0;
                }
            }
            assert!(
                (f64::from(got[l][c]) - want).abs() < 1e-5,
                "lane {l} component {c}: got {} want {want}",
                got[l][c]
            );
        }
    }
}

#[test]
fn image_resinfo_reports_the_size_at_each_level() {
    let mut b = Bench::new("images", T);
    let d = descriptor(ImageKind::D2Array, DF_32, NF_FLOAT, [7, 5, 3], 8);
    let (_, rsrc) = image(&mut b, d, &[0u8; 8 * 5 * 3 * 4]);
    let mips: Vec<i32> = (0..64).map(|l| l % 4).collect();
    let mb = b.buf_of(&mips);
    let out = b.zeros::<[i32; 4]>(64);
    b.run1(
        "image_resinfo",
        64,
        64,
        &[Arg::Buf(rsrc), Arg::Buf(mb), Arg::Buf(out)],
    );
    let got: Vec<[i32; 4]> = b.read(out);
    for l in 0..64 {
        let m = mips[l];
        assert_eq!(got[l], [(7 >> m).max(1), (5 >> m).max(1), 3, 1], "lane {l}");
    }
}

fn illegal_reason(b: &Bench, kernel: &str, args: &[Arg]) -> String {
    match b.run(kernel, [64, 1, 1], [64, 1, 1], args, 0) {
        Err(f) => match f.kind {
            FaultKind::IllegalInstruction { reason } => reason,
            other => panic!("{kernel}: expected an illegal instruction, got {other:?}"),
        },
        Ok(_) => panic!("{kernel} ran"),
    }
}

#[test]
fn images_and_samplers_the_emulator_cannot_address_fault_by_name() {
    let mut b = Bench::new("images", T);
    let at = b.buf_of(&vec![[0i32; 4]; 64]);
    let out = b.zeros::<[f32; 4]>(64);
    let mut mipped = descriptor(ImageKind::D2, DF_32, NF_FLOAT, [4, 4, 1], 4);
    mipped.levels = (0, 2);
    let (_, rsrc) = image(&mut b, mipped, &[0u8; 64]);
    let why = illegal_reason(
        &b,
        "image_load_xyzw",
        &[Arg::Buf(rsrc), Arg::Buf(at), Arg::Buf(out)],
    );
    assert!(why.contains("mipmapped"), "{why}");
    let plain = descriptor(ImageKind::D2, DF_32, NF_FLOAT, [4, 4, 1], 4);
    let (_, rsrc) = image(&mut b, plain, &[0u8; 64]);
    let mut mixed = SamplerDescriptor::decode(&sampler(Wrap::Repeat, true, false, 0));
    mixed.min_filter = filter::POINT;
    let s = b.buf_of(&mixed.encode());
    let why = illegal_reason(
        &b,
        "image_sample_xyzw",
        &[Arg::Buf(rsrc), Arg::Buf(s), Arg::Buf(at), Arg::Buf(out)],
    );
    assert!(why.contains("minification filter"), "{why}");
    // A buffer descriptor (TYPE 0) where an image belongs.
    let words = b.buf_of(&[0u32; 8]);
    let why = illegal_reason(
        &b,
        "image_load_xyzw",
        &[Arg::Buf(words), Arg::Buf(at), Arg::Buf(out)],
    );
    assert!(why.contains("not an image type"), "{why}");
}

#[test]
fn image_samples_of_1d_arrays_and_3d_images_use_their_own_coordinates() {
    let mut b = Bench::new("images", T);
    // A 1D array: (x, layer); each layer holds its own values.
    let (w, layers) = (5u32, 3u32);
    let vals: Vec<f32> = (0..w * layers).map(|i| i as f32 * 1.5).collect();
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let d = descriptor(ImageKind::D1Array, DF_32, NF_FLOAT, [w, 1, layers], w);
    let (_, rsrc) = image(&mut b, d, &bytes);
    let coords: Vec<[f32; 4]> = (0..64)
        .map(|l| [(l % 7) as f32 - 0.5, (l / 7 % 4) as f32, 0.0, 0.0])
        .collect();
    let got = sample(
        &mut b,
        rsrc,
        sampler(Wrap::ClampToEdge, false, true, 0),
        &coords,
    );
    for l in 0..64 {
        let x = (coords[l][0].floor() as i64).clamp(0, w as i64 - 1) as u32;
        let layer = (coords[l][1] as u32).min(layers - 1);
        assert_eq!(got[l][0], vals[(layer * w + x) as usize], "lane {l}");
    }
    // A 3D image, filtered in all three directions.
    let n = 3u32;
    let vals: Vec<f32> = (0..n * n * n).map(|i| (i * i % 17) as f32).collect();
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let d = descriptor(ImageKind::D3, DF_32, NF_FLOAT, [n, n, n], n);
    let (_, rsrc) = image(&mut b, d, &bytes);
    let mut r = Rng(77);
    let coords: Vec<[f32; 4]> = (0..64)
        .map(|_| {
            let mut c = || (r.next() % 1000) as f32 / 1000.0;
            [c(), c(), c(), 0.0]
        })
        .collect();
    let got = sample(
        &mut b,
        rsrc,
        sampler(Wrap::ClampToEdge, true, false, 0),
        &coords,
    );
    for l in 0..64 {
        let taps: Vec<_> = (0..3)
            .map(|k| reference_taps(coords[l][k] * n as f32, n, Wrap::ClampToEdge, true))
            .collect();
        let mut want = 0f64;
        for &(z, wz) in &taps[2] {
            for &(y, wy) in &taps[1] {
                for &(x, wx) in &taps[0] {
                    let v = vals[((z.unwrap() * n + y.unwrap()) * n + x.unwrap()) as usize];
                    want += f64::from(wx * wy * wz) * f64::from(v);
                }
            }
        }
        assert!(
            (f64::from(got[l][0]) - want).abs() <= 1e-5 * (1.0 + want.abs()),
            "lane {l} at {:?}: got {} want {want}",
            coords[l],
            got[l][0]
        );
    }
}
