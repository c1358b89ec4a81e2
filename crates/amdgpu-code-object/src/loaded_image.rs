//! The writable parts of a loaded code object, read from the first bytes of its loaded image
//! (the ELF and program headers, which the first `PT_LOAD` segment maps): what a tool must
//! save and restore of a code object that is already in device memory, where the section
//! headers are not loaded.

use std::ops::Range;

/// Bytes to read from the start of a loaded code object to find its program headers.
pub const HEADER_PROBE_BYTES: usize = 4096;

/// ELF header, program header and dynamic-section fields used here.
const EM_AMDGPU: u16 = 224;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_NOTE: u32 = 4;
const PT_GNU_RELRO: u32 = 0x6474_e552;
const PF_W: u32 = 2;
const PF_X: u32 = 1;
const ELF_HEADER_BYTES: usize = 64;
const PROGRAM_HEADER_BYTES: usize = 56;
const DT_NULL: u64 = 0;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_STRSZ: u64 = 10;
const DT_SYMENT: u64 = 11;
/// A 64-bit ELF symbol: name offset, info, other, section, value, size.
const SYMBOL_BYTES: u64 = 24;

fn le_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// One program header of a loaded image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ProgramHeader {
    kind: u32,
    flags: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
    align: u64,
}

/// The program headers of a loaded image that starts with `image` (its first bytes), and the
/// virtual address of its lowest `PT_LOAD` (the image's start). `None` unless the image is a
/// 64-bit little-endian AMDGPU ELF whose lowest `PT_LOAD` maps file offset 0 and holds the
/// ELF and program headers, all within `image`.
fn program_headers(image: &[u8]) -> Option<(Vec<ProgramHeader>, u64)> {
    if image.get(..4)? != b"\x7fELF"
        || *image.get(4)? != 2
        || *image.get(5)? != 1
        || le_u16(image, 18)? != EM_AMDGPU
    {
        return None;
    }
    let phoff = usize::try_from(le_u64(image, 0x20)?).ok()?;
    let phentsize = usize::from(le_u16(image, 0x36)?);
    let phnum = usize::from(le_u16(image, 0x38)?);
    if phentsize != PROGRAM_HEADER_BYTES || phoff < ELF_HEADER_BYTES {
        return None;
    }
    let table_end = phoff.checked_add(phnum.checked_mul(phentsize)?)?;
    if table_end > image.len() {
        return None;
    }
    let mut phs = Vec::with_capacity(phnum);
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        phs.push(ProgramHeader {
            kind: le_u32(image, at)?,
            flags: le_u32(image, at + 4)?,
            offset: le_u64(image, at + 8)?,
            vaddr: le_u64(image, at + 16)?,
            filesz: le_u64(image, at + 32)?,
            memsz: le_u64(image, at + 40)?,
            align: le_u64(image, at + 48)?,
        });
    }
    let first = phs
        .iter()
        .filter(|p| p.kind == PT_LOAD)
        .min_by_key(|p| p.vaddr)?;
    if first.offset != 0 || first.filesz < table_end as u64 {
        return None;
    }
    let origin = first.vaddr;
    Some((phs, origin))
}

/// Where a loaded code object's parts lie, as offsets from the start of its loaded image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedLayout {
    /// Every `PT_LOAD` segment, from the image's start to the end of the highest one.
    pub extent: Range<u64>,
    /// The executable `PT_LOAD` segment (the code), when there is one.
    pub code: Option<Range<u64>>,
}

/// The extent and code segment of a code object whose loaded image starts with `image` (its
/// first bytes, [`HEADER_PROBE_BYTES`] or what is mapped); `None` as for [`writable_ranges`].
/// What a command processor needs to find a kernel's code from its kernel object.
pub fn loaded_layout(image: &[u8]) -> Option<LoadedLayout> {
    let (phs, origin) = program_headers(image)?;
    let loads = || phs.iter().filter(|p| p.kind == PT_LOAD);
    let end = loads()
        .map(|p| p.vaddr.saturating_add(p.memsz))
        .max()?
        .checked_sub(origin)?;
    let code = loads().find(|p| p.flags & PF_X != 0).and_then(|p| {
        let start = p.vaddr.checked_sub(origin)?;
        Some(start..start.checked_add(p.memsz)?)
    });
    Some(LoadedLayout {
        extent: 0..end,
        code,
    })
}

/// The writable ranges (ELF virtual addresses) of a code object whose loaded image starts
/// with `image` (its first bytes): every `PT_LOAD` with the write flag, less `PT_GNU_RELRO`
/// (read-only once relocated). `None` when the image does not start with the object's own ELF
/// and program headers (the lowest `PT_LOAD` must map file offset 0 and hold the headers), so
/// the caller falls back to the whole load range.
pub fn writable_ranges(image: &[u8]) -> Option<Vec<Range<u64>>> {
    let (phs, origin) = program_headers(image)?;
    let relro: Vec<Range<u64>> = phs
        .iter()
        .filter(|p| p.kind == PT_GNU_RELRO)
        .map(|p| p.vaddr..p.vaddr.saturating_add(p.memsz))
        .collect();
    let mut out = Vec::new();
    for p in phs
        .iter()
        .filter(|p| p.kind == PT_LOAD && p.flags & PF_W != 0 && p.memsz > 0)
    {
        let start = p.vaddr.checked_sub(origin)?;
        let mut pieces: Vec<Range<u64>> =
            std::iter::once(start..start.checked_add(p.memsz)?).collect();
        for r in &relro {
            let r = r.start.saturating_sub(origin)..r.end.saturating_sub(origin);
            pieces = pieces.into_iter().flat_map(|x| subtract(x, &r)).collect();
        }
        out.extend(pieces);
    }
    Some(out)
}

/// A `PT_NOTE` segment of a loaded image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteSegment {
    /// Its bytes, as offsets from the start of the loaded image.
    pub range: Range<u64>,
    /// Its `p_align`, which sets the padding of its notes
    /// ([`notes_in`](crate::elf::notes_in)).
    pub align: u64,
}

/// The `PT_NOTE` segments of a code object whose loaded image starts with `image` (its first
/// bytes) that a `PT_LOAD` segment maps, so the loaded image holds them (the metadata note of
/// an AMDGPU code object sits in its first, read-only segment). `None` as for
/// [`writable_ranges`].
pub fn note_segments(image: &[u8]) -> Option<Vec<NoteSegment>> {
    let (phs, origin) = program_headers(image)?;
    let loaded = |start: u64, end: u64| {
        phs.iter().any(|p| {
            p.kind == PT_LOAD && p.vaddr <= start && end <= p.vaddr.saturating_add(p.filesz)
        })
    };
    let mut out = Vec::new();
    for p in phs.iter().filter(|p| p.kind == PT_NOTE && p.filesz > 0) {
        let end = p.vaddr.checked_add(p.filesz)?;
        if loaded(p.vaddr, end) {
            out.push(NoteSegment {
                range: p.vaddr.checked_sub(origin)?..end.checked_sub(origin)?,
                align: p.align,
            });
        }
    }
    Some(out)
}

/// The name of the kernel whose descriptor lies `kd` bytes from the start of a loaded image
/// that starts with `image` (its first bytes), from the image's dynamic symbols (the `.kd`
/// symbol at that address, its suffix dropped). `read(offset, len)` reads `len` bytes of the
/// loaded image from `offset`. `None` when the image is not parsed (as for
/// [`writable_ranges`]), has no dynamic symbol table with a SysV hash (which counts the
/// symbols), or no `.kd` symbol lies at `kd`.
pub fn kernel_name(
    image: &[u8],
    read: impl Fn(u64, u64) -> Option<Vec<u8>>,
    kd: u64,
) -> Option<String> {
    let (phs, origin) = program_headers(image)?;
    let dynamic = phs.iter().find(|p| p.kind == PT_DYNAMIC)?;
    let entries = read(dynamic.vaddr.checked_sub(origin)?, dynamic.filesz)?;
    let tag = |want: u64| {
        entries
            .chunks_exact(16)
            .map(|e| (le_u64(e, 0), le_u64(e, 8)))
            .take_while(|(t, _)| *t != Some(DT_NULL))
            .find(|(t, _)| *t == Some(want))
            .and_then(|(_, v)| v)
    };
    let at = |vaddr: u64| vaddr.checked_sub(origin);
    let symbols = le_u32(&read(at(tag(DT_HASH)?)?.checked_add(4)?, 4)?, 0)?;
    let entry = tag(DT_SYMENT).unwrap_or(SYMBOL_BYTES);
    if entry < SYMBOL_BYTES {
        return None;
    }
    let table = read(at(tag(DT_SYMTAB)?)?, u64::from(symbols).checked_mul(entry)?)?;
    let strings = read(at(tag(DT_STRTAB)?)?, tag(DT_STRSZ)?)?;
    let kd_vaddr = kd.checked_add(origin)?;
    table.chunks_exact(entry as usize).find_map(|sym| {
        if le_u64(sym, 8)? != kd_vaddr {
            return None;
        }
        let from = usize::try_from(le_u32(sym, 0)?).ok()?;
        let name = strings.get(from..)?.split(|&b| b == 0).next()?;
        let name = std::str::from_utf8(name).ok()?;
        name.strip_suffix(crate::KERNEL_DESCRIPTOR_SUFFIX)
            .map(str::to_string)
    })
}

/// `a` less `b`: zero, one or two ranges.
fn subtract(a: Range<u64>, b: &Range<u64>) -> Vec<Range<u64>> {
    if b.end <= a.start || b.start >= a.end {
        return vec![a];
    }
    let mut v = Vec::new();
    if b.start > a.start {
        v.push(a.start..b.start);
    }
    if b.end < a.end {
        v.push(b.end..a.end);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An AMDGPU ELF image: header, program headers at 64, and `phs` as
    /// `(type, flags, offset, vaddr, filesz, memsz)`.
    fn image(phs: &[(u32, u32, u64, u64, u64, u64)]) -> Vec<u8> {
        let mut b = vec![0u8; 1024];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[18..20].copy_from_slice(&(EM_AMDGPU).to_le_bytes());
        b[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        b[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        b[0x38..0x3a].copy_from_slice(&(phs.len() as u16).to_le_bytes());
        for (i, &(t, f, off, va, fs, ms)) in phs.iter().enumerate() {
            let at = 64 + i * 56;
            b[at..at + 4].copy_from_slice(&t.to_le_bytes());
            b[at + 4..at + 8].copy_from_slice(&f.to_le_bytes());
            b[at + 8..at + 16].copy_from_slice(&off.to_le_bytes());
            b[at + 16..at + 24].copy_from_slice(&va.to_le_bytes());
            b[at + 32..at + 40].copy_from_slice(&fs.to_le_bytes());
            b[at + 40..at + 48].copy_from_slice(&ms.to_le_bytes());
        }
        b
    }

    /// Every kernel of a clang code object, loaded at a base, is named from its descriptor's
    /// address; other addresses name none, and a reader that fails gives up.
    #[test]
    fn kernels_are_named_from_the_dynamic_symbols_of_a_loaded_image() {
        let data = crate::symbols_code_object("loaded-image-names", "gfx90a");
        let co = crate::CodeObject::parse(&data).unwrap();
        let mut image = vec![0u8; co.load_size() as usize];
        co.write_image(&data, &mut image, 0x7000_0000_0000);
        let read = |at: u64, len: u64| {
            let at = usize::try_from(at).ok()?;
            image
                .get(at..at.checked_add(usize::try_from(len).ok()?)?)
                .map(<[u8]>::to_vec)
        };
        let kd =
            |n: &str| co.symbols.iter().find(|s| s.name == n).expect(n).vaddr - co.load_vaddr();
        for name in ["count", "scatter"] {
            let at = kd(&format!("{name}.kd"));
            assert_eq!(kernel_name(&image, read, at).as_deref(), Some(name));
            assert_eq!(kernel_name(&image, read, at + 8), None, "{name}.kd + 8");
        }
        assert_eq!(kernel_name(&image, read, kd("counter")), None, "a variable");
        assert_eq!(kernel_name(&image, |_, _| None, kd("count.kd")), None);
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn writable_segments_less_relro_as_clang_lays_them_out() {
        // The layout of a clang-22 code object: R headers+rodata, R E text, RW .dynamic under
        // RELRO, RW .data/.bss.
        let img = image(&[
            (6, 4, 0x40, 0x40, 0x1f8, 0x1f8),
            (PT_LOAD, 4, 0, 0, 0x5c0, 0x5c0),
            (PT_LOAD, 5, 0x600, 0x1600, 0x480, 0x480),
            (PT_LOAD, 6, 0xa80, 0x2a80, 0xb0, 0x580),
            (PT_LOAD, 6, 0xb30, 0x3b30, 0x10, 0x19),
            (PT_GNU_RELRO, 4, 0xa80, 0x2a80, 0xb0, 0x580),
        ]);
        assert_eq!(writable_ranges(&img), Some(vec![0x3b30..0x3b49]));
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn images_without_their_headers_are_not_parsed() {
        let no_headers = image(&[
            (PT_LOAD, 4, 0x1000, 0, 0x100, 0x100),
            (PT_LOAD, 6, 0x2000, 0x1000, 8, 8),
        ]);
        assert_eq!(
            writable_ranges(&no_headers),
            None,
            "the lowest segment does not map the headers"
        );
        let mut not_elf = image(&[(PT_LOAD, 6, 0, 0, 0x400, 0x400)]);
        assert_eq!(writable_ranges(&not_elf), Some(vec![0..0x400]));
        not_elf[0] = 0;
        assert_eq!(writable_ranges(&not_elf), None);
        let mut truncated = image(&[(PT_LOAD, 6, 0, 0, 0x400, 0x400)]);
        truncated[0x38..0x3a].copy_from_slice(&200u16.to_le_bytes());
        assert_eq!(
            writable_ranges(&truncated),
            None,
            "program headers past the bytes read"
        );
        assert_eq!(writable_ranges(&[]), None);
    }

    #[test]
    fn the_layout_names_the_extent_and_the_code_segment() {
        let img = image(&[
            (PT_LOAD, 4, 0, 0x1000, 0x5c0, 0x5c0),
            (PT_LOAD, 5, 0x600, 0x2600, 0x480, 0x480),
            (PT_LOAD, 6, 0xa80, 0x3a80, 0xb0, 0x580),
        ]);
        assert_eq!(
            loaded_layout(&img),
            Some(LoadedLayout {
                extent: 0..0x3000,
                code: Some(0x1600..0x1a80),
            })
        );
        let data_only = image(&[(PT_LOAD, 6, 0, 0, 0x400, 0x400)]);
        assert_eq!(loaded_layout(&data_only).map(|l| l.code), Some(None));
        assert_eq!(loaded_layout(&img[..100]), None, "program headers cut off");
    }

    #[test]
    fn note_segments_are_found_where_a_load_segment_maps_them() {
        let img = image(&[
            (PT_NOTE, 4, 0x200, 0x1200, 0x80, 0x80),
            (PT_LOAD, 4, 0, 0x1000, 0x5c0, 0x5c0),
            (PT_NOTE, 4, 0x5a0, 0x15a0, 0x40, 0x40),
            (PT_LOAD, 6, 0xa80, 0x3a80, 0xb0, 0x580),
        ]);
        assert_eq!(
            note_segments(&img),
            Some(vec![NoteSegment {
                range: 0x200..0x280,
                align: 0
            }]),
            "the second note runs past the bytes its load segment maps"
        );
        assert_eq!(note_segments(&img[..100]), None, "program headers cut off");
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn subtracting_ranges() {
        assert_eq!(subtract(0..10, &(3..5)), vec![0..3, 5..10]);
        assert_eq!(subtract(0..10, &(0..10)), Vec::<Range<u64>>::new());
        assert_eq!(subtract(0..10, &(10..20)), vec![0..10]);
        assert_eq!(subtract(5..10, &(0..7)), vec![7..10]);
    }
}
