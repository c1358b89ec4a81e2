//! Finding AMDGPU code objects in a file's containers: a plain code object, a clang offload
//! bundle (uncompressed or `CCOB`-compressed), or a host ELF (a HIP executable or library) whose
//! `.hip_fatbin` section holds bundles. The one reader of these containers in the workspace.
//!
//! Every allocation is bounded by the input's real size: a compressed bundle's claimed size is
//! checked against the compressed bytes present, and output grows only as data decompresses.

use crate::elf::is_amdgpu_elf;
use object::read::elf::{ElfFile64, FileHeader};
use object::{Endianness, Object, ObjectSection};
use std::io::Read;

/// Magic of an uncompressed clang offload bundle.
pub const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Magic of a compressed clang offload bundle.
pub const COMPRESSED_MAGIC: &[u8] = b"CCOB";
/// Decompressed bundles larger than this are refused (a corrupt header, not a real bundle).
const MAX_DECOMPRESSED: u64 = 4 << 30;
/// A compressed bundle may claim at most this many uncompressed bytes per compressed byte.
/// Real code objects compress by a factor of 3 to 20 (alignment padding included); a header
/// claiming more is corrupt or hostile, and is refused before anything is allocated for it.
pub const MAX_COMPRESSION_RATIO: u64 = 1024;
/// The largest zstd window accepted without regard to the claimed size (zstd itself uses at
/// least 1 KiB; encoders size the window to the smallest power of two that holds the input).
const MIN_WINDOW_LIMIT: u64 = 1 << 20;

/// Why no code object could be taken from a file. Messages name what is wrong; the caller
/// prefixes the file name.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// Neither ELF nor an offload bundle.
    #[error(
        "not an ELF file or clang offload bundle (starts with {0}); pass an AMDGPU code object, \
         a HIP executable or object with a .hip_fatbin section, or an offload bundle"
    )]
    UnknownFormat(String),
    /// ELF that the reader rejects.
    #[error("malformed ELF: {0}")]
    Elf(String),
    /// A 32-bit ELF or an ELF for another machine without device code.
    #[error(
        "ELF for machine {0} without a .hip_fatbin section: no device code (build with \
         clang -x hip --offload-arch=..., or extract code objects with llvm-objdump --offloading)"
    )]
    NoDeviceCode(u16),
    /// Malformed offload bundle.
    #[error("offload bundle at offset {offset}: {detail}")]
    Bundle {
        /// Offset of the bundle in its container.
        offset: usize,
        /// What is wrong.
        detail: String,
    },
    /// A compressed bundle that could not be decompressed.
    #[error("compressed offload bundle (CCOB) at offset {offset}: {detail}")]
    Compressed {
        /// Offset of the bundle in its container.
        offset: usize,
        /// What is wrong.
        detail: String,
    },
    /// A container without any AMDGPU code object.
    #[error("no AMDGPU code object in the offload bundle(s)")]
    Empty,
}

/// One AMDGPU code object found in a file.
#[derive(Debug, Clone)]
pub struct BundledCodeObject {
    /// Bundle entry id (`hipv4-amdgcn-amd-amdhsa--gfx942`); `None` for a plain code object.
    pub target: Option<String>,
    /// The ELF image.
    pub image: Vec<u8>,
}

impl BundledCodeObject {
    /// The processor of the bundle entry id (`gfx90a` of `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`);
    /// `None` for a plain code object.
    pub fn processor(&self) -> Option<&str> {
        let id = self.target.as_deref()?;
        let target_id = id.rsplit_once("--").map_or(id, |(_, t)| t);
        target_id.split(':').next().filter(|p| !p.is_empty())
    }
}

/// Every AMDGPU code object in `data` (a code object, a bundle, or a host ELF with a
/// `.hip_fatbin` section).
pub fn code_objects(data: &[u8]) -> Result<Vec<BundledCodeObject>, BundleError> {
    if data.starts_with(BUNDLE_MAGIC) || data.starts_with(COMPRESSED_MAGIC) {
        return bundles_in(data);
    }
    if !data.starts_with(b"\x7fELF") {
        let shown: Vec<String> = data.iter().take(8).map(|b| format!("{b:02x}")).collect();
        let shown = if shown.is_empty() {
            "nothing: the file is empty".to_string()
        } else {
            shown.join(" ")
        };
        return Err(BundleError::UnknownFormat(shown));
    }
    let elf = parse_elf(data)?;
    let machine = elf.elf_header().e_machine(elf.endian()).0;
    if is_amdgpu_elf(data) {
        return Ok(vec![BundledCodeObject {
            target: None,
            image: data.to_vec(),
        }]);
    }
    match elf.section_by_name(".hip_fatbin") {
        Some(section) => {
            let bytes = section
                .data()
                .map_err(|e| BundleError::Elf(format!(".hip_fatbin: {e}")))?;
            bundles_in(bytes)
        }
        None => Err(BundleError::NoDeviceCode(machine)),
    }
}

fn parse_elf(data: &[u8]) -> Result<ElfFile64<'_, Endianness>, BundleError> {
    if data.get(4) == Some(&1) {
        return Err(BundleError::Elf(
            "32-bit ELF; AMDGPU code objects and HIP hosts are 64-bit".into(),
        ));
    }
    ElfFile64::<Endianness>::parse(data).map_err(|e| BundleError::Elf(e.to_string()))
}

/// Code objects of all bundles in a `.hip_fatbin` section or bundle file. Bundles follow each
/// other, separated by alignment padding.
fn bundles_in(data: &[u8]) -> Result<Vec<BundledCodeObject>, BundleError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(start) = next_magic(data, pos) {
        let rest = &data[start..];
        let len = if rest.starts_with(COMPRESSED_MAGIC) {
            let (decompressed, len) = decompress(rest, start)?;
            out.extend(parse_bundle(&decompressed, start)?.0);
            len
        } else {
            let (objects, len) = parse_bundle(rest, start)?;
            out.extend(objects);
            len
        };
        pos = start + len.max(1);
    }
    if out.is_empty() {
        return Err(BundleError::Empty);
    }
    Ok(out)
}

fn next_magic(data: &[u8], from: usize) -> Option<usize> {
    let hay = data.get(from..)?;
    let find = |magic: &[u8]| memchr::memmem::find(hay, magic);
    match (find(BUNDLE_MAGIC), find(COMPRESSED_MAGIC)) {
        (Some(a), Some(b)) => Some(from + a.min(b)),
        (Some(a), None) | (None, Some(a)) => Some(from + a),
        (None, None) => None,
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    origin: usize,
}

impl Cursor<'_> {
    fn u64(&mut self, what: &str) -> Result<u64, BundleError> {
        let bytes = self.bytes(8, what)?;
        Ok(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }
    fn u32(&mut self, what: &str) -> Result<u32, BundleError> {
        let bytes = self.bytes(4, what)?;
        Ok(u32::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }
    fn u16(&mut self, what: &str) -> Result<u16, BundleError> {
        let bytes = self.bytes(2, what)?;
        Ok(u16::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }
    fn bytes(&mut self, n: usize, what: &str) -> Result<&[u8], BundleError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| BundleError::Bundle {
                offset: self.origin,
                detail: format!("truncated while reading {what} at byte {}", self.pos),
            })?;
        let slice = &self.data[self.pos..end];
        self.pos = end;
        Ok(slice)
    }
}

/// Parses one uncompressed bundle at the start of `data`; returns its AMDGPU code objects
/// and its length (end of the last entry).
fn parse_bundle(
    data: &[u8],
    origin: usize,
) -> Result<(Vec<BundledCodeObject>, usize), BundleError> {
    let bad = |detail: String| BundleError::Bundle {
        offset: origin,
        detail,
    };
    if !data.starts_with(BUNDLE_MAGIC) {
        return Err(bad("missing __CLANG_OFFLOAD_BUNDLE__ magic".into()));
    }
    let mut cur = Cursor {
        data,
        pos: BUNDLE_MAGIC.len(),
        origin,
    };
    let count = cur.u64("the entry count")?;
    // Each entry header takes at least 24 bytes.
    if count > (data.len() as u64) / 24 {
        return Err(bad(format!(
            "entry count {count} does not fit in {} bytes",
            data.len()
        )));
    }
    let mut end = cur.pos;
    let mut objects = Vec::new();
    for index in 0..count {
        let offset = cur.u64("an entry offset")?;
        let size = cur.u64("an entry size")?;
        let id_len = cur.u64("an entry id length")?;
        let id_len = usize::try_from(id_len)
            .map_err(|_| bad(format!("entry {index}: id length {id_len}")))?;
        let id = String::from_utf8_lossy(cur.bytes(id_len, "an entry id")?).into_owned();
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, s)| Some(o..o.checked_add(s)?))
            .filter(|r| r.end <= data.len())
            .ok_or_else(|| {
                bad(format!(
                    "entry {index} ({id}): bytes {offset}..+{size} lie outside the {} byte bundle",
                    data.len()
                ))
            })?;
        end = end.max(cur.pos).max(range.end);
        let image = &data[range];
        if is_amdgpu_elf(image) {
            objects.push(BundledCodeObject {
                target: Some(id),
                image: image.to_vec(),
            });
        }
    }
    Ok((objects, end))
}

/// Decompresses a `CCOB` bundle at the start of `data`; returns the inner bundle and the
/// length of the compressed bundle.
fn decompress(data: &[u8], origin: usize) -> Result<(Vec<u8>, usize), BundleError> {
    let bad = |detail: String| BundleError::Compressed {
        offset: origin,
        detail,
    };
    let mut cur = Cursor {
        data,
        pos: COMPRESSED_MAGIC.len(),
        origin,
    };
    let version = cur.u16("the version")?;
    let method = cur.u16("the compression method")?;
    let (total, uncompressed) = match version {
        1 => (None, u64::from(cur.u32("the uncompressed size")?)),
        2 => (
            Some(u64::from(cur.u32("the total size")?)),
            u64::from(cur.u32("the uncompressed size")?),
        ),
        3 => (
            Some(cur.u64("the total size")?),
            cur.u64("the uncompressed size")?,
        ),
        v => {
            return Err(bad(format!(
                "unsupported format version {v} (known: 1, 2, 3)"
            )));
        }
    };
    let _hash = cur.u64("the hash")?;
    let header = cur.pos;
    let end = match total {
        Some(t) => usize::try_from(t)
            .ok()
            .filter(|&t| t >= header && t <= data.len())
            .ok_or_else(|| {
                bad(format!(
                    "total size {t} does not fit the {} available bytes",
                    data.len()
                ))
            })?,
        None => data.len(),
    };
    let payload = &data[header..end];
    // Every allocation below is bounded by the input's real size: the claim is checked against
    // the compressed bytes that are really there, and the output grows only as data really
    // decompresses (never reserved from the claim).
    let limit = (payload.len() as u64)
        .saturating_mul(MAX_COMPRESSION_RATIO)
        .min(MAX_DECOMPRESSED);
    if uncompressed > limit {
        return Err(bad(format!(
            "the header claims {uncompressed} uncompressed bytes from {} compressed bytes, more than \
             {MAX_COMPRESSION_RATIO} times the input (at most {limit} bytes are accepted); the bundle is \
             corrupt: rebuild it, or unbundle it with clang-offload-bundler --unbundle",
            payload.len()
        )));
    }
    let mut out = Vec::new();
    match method {
        0 => {
            out = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(
                payload,
                uncompressed as usize,
            )
            .map_err(|e| bad(format!("zlib stream is corrupt: {e:?}")))?;
        }
        1 => {
            let window_limit = uncompressed.saturating_mul(2).max(MIN_WINDOW_LIMIT);
            if let Some(window) = zstd_window_size(payload)
                && window > window_limit
            {
                return Err(bad(format!(
                    "the zstd frame asks for a {window} byte window to produce {uncompressed} bytes \
                     (at most {window_limit} accepted); the bundle is corrupt"
                )));
            }
            let mut reader = payload;
            let decoder = ruzstd::decoding::StreamingDecoder::new(&mut reader)
                .map_err(|e| bad(format!("zstd stream is corrupt: {e}")))?;
            decoder
                .take(uncompressed + 1)
                .read_to_end(&mut out)
                .map_err(|e| bad(format!("zstd stream is corrupt: {e}")))?;
        }
        m => {
            return Err(bad(format!(
                "unknown compression method {m} (known: 0 zlib, 1 zstd); decompress it with \
                 clang-offload-bundler --unbundle or llvm-objdump --offloading"
            )));
        }
    }
    if out.len() as u64 != uncompressed {
        return Err(bad(format!(
            "decompressed to {} bytes, header says {uncompressed}",
            out.len()
        )));
    }
    Ok((out, end))
}

/// The window size a zstd frame header at the start of `data` asks for, when it is a standard
/// frame whose header is complete (the decoder reserves that much before decoding).
fn zstd_window_size(data: &[u8]) -> Option<u64> {
    const ZSTD_MAGIC: u32 = 0xFD2F_B528;
    let magic = u32::from_le_bytes(data.get(..4)?.try_into().ok()?);
    if magic != ZSTD_MAGIC {
        return None;
    }
    let descriptor = *data.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    if !single_segment {
        let wd = *data.get(5)?;
        let log = 10 + u32::from(wd >> 3);
        let base = 1u64.checked_shl(log)?;
        return Some(base + (base / 8) * u64::from(wd & 7));
    }
    // Single segment: the window is the frame content size, after the dictionary id.
    let dict_bytes = [0usize, 1, 2, 4][usize::from(descriptor & 3)];
    let fcs_bytes = [1usize, 2, 4, 8][usize::from(descriptor >> 6)];
    let at = 5 + dict_bytes;
    let field = data.get(at..at + fcs_bytes)?;
    let mut bytes = [0u8; 8];
    bytes[..fcs_bytes].copy_from_slice(field);
    let size = u64::from_le_bytes(bytes);
    Some(if fcs_bytes == 2 { size + 256 } else { size })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_processor_comes_from_the_entry_id() {
        let entry = |target: Option<&str>| BundledCodeObject {
            target: target.map(str::to_string),
            image: Vec::new(),
        };
        assert_eq!(
            entry(Some("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+")).processor(),
            Some("gfx90a")
        );
        assert_eq!(
            entry(Some("hipv4-amdgcn-amd-amdhsa--gfx942")).processor(),
            Some("gfx942")
        );
        assert_eq!(entry(Some("host-x86_64-unknown-linux--")).processor(), None);
        assert_eq!(entry(None).processor(), None);
    }

    /// A version-3 `CCOB` header (u64 total and uncompressed sizes) followed by `payload`.
    fn ccob_v3(method: u16, uncompressed: u64, payload: &[u8]) -> Vec<u8> {
        let mut b = COMPRESSED_MAGIC.to_vec();
        b.extend(3u16.to_le_bytes());
        b.extend(method.to_le_bytes());
        let total = (COMPRESSED_MAGIC.len() + 4 + 8 + 8 + 8 + payload.len()) as u64;
        b.extend(total.to_le_bytes());
        b.extend(uncompressed.to_le_bytes());
        b.extend(0u64.to_le_bytes());
        b.extend(payload);
        b
    }

    #[test]
    fn a_claim_beyond_the_input_is_refused_before_allocating() {
        for method in [0u16, 1] {
            let err = code_objects(&ccob_v3(method, 4 << 30, &[0u8; 64]))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("claims 4294967296 uncompressed bytes from 64 compressed bytes")
                    && err.contains("1024 times")
                    && err.contains("corrupt"),
                "{err}"
            );
        }
        // Within the ratio, the claim is accepted and the stream itself is found corrupt.
        let err = code_objects(&ccob_v3(0, 64 * 1024, &[0u8; 64]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("zlib stream is corrupt"), "{err}");
    }

    #[test]
    fn a_zstd_window_beyond_the_claim_is_refused() {
        // A standard frame header, not single-segment, window descriptor 0x78: 2^25 = 32 MiB.
        let mut frame = 0xFD2F_B528u32.to_le_bytes().to_vec();
        frame.extend([0x00, 0x78]);
        frame.resize(64, 0);
        assert_eq!(zstd_window_size(&frame), Some(32 << 20));
        let err = code_objects(&ccob_v3(1, 4096, &frame))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("asks for a 33554432 byte window to produce 4096 bytes"),
            "{err}"
        );
        // Single segment with a 4-byte content size of 70000: the window is that size.
        let mut single = 0xFD2F_B528u32.to_le_bytes().to_vec();
        single.push(0xa0);
        single.extend(70_000u32.to_le_bytes());
        assert_eq!(zstd_window_size(&single), Some(70_000));
        // A 2-byte content size counts from 256.
        let mut two = 0xFD2F_B528u32.to_le_bytes().to_vec();
        two.push(0x60);
        two.extend(10u16.to_le_bytes());
        assert_eq!(zstd_window_size(&two), Some(266));
        assert_eq!(zstd_window_size(b"\x28\xb5\x2f"), None);
        assert_eq!(zstd_window_size(b"not zstd"), None);
    }
}
