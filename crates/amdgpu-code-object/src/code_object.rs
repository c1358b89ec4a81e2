//! Loadable code objects: [`CodeObject::parse`] checks that the bytes are an HSA code object
//! (ELF64, little endian, `EM_AMDGPU`, OS ABI `AMDGPU_HSA`, code-object v3 to v6), reads its
//! target, its `PT_LOAD` segments, the symbols a loader reports (kernel descriptors
//! `<name>.kd`, decoded, and data objects) and its dynamic relocations.
//! [`CodeObject::write_image`] then lays the loadable segments out in a buffer at a chosen base
//! address, zero-filling what the file does not hold (`.bss`), and applies the relocations.
//!
//! Layouts used here are the public ELF and AMDGPU ABI (LLVM's AMDGPUUsage): the `R_AMDGPU_*`
//! relocation numbers, the OS ABI and ABI-version values.

use object::LittleEndian as LE;
use object::elf;
use object::read::elf::{FileHeader, ProgramHeader, Rela, SectionHeader, Sym};

use crate::descriptor::{KERNEL_DESCRIPTOR_SIZE, KERNEL_DESCRIPTOR_SUFFIX, KernelDescriptor};
use crate::error::CodeObjectError;
use crate::target::{ELFABIVERSION_AMDGPU_HSA_V3, Target, decode_target};

/// `e_ident[EI_OSABI]` of HSA code objects.
pub(crate) const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// The newest code-object ABI version understood (v6).
const ELFABIVERSION_AMDGPU_HSA_V6: u8 = 4;

/// Dynamic relocation: symbol address + addend, 64 bits.
const R_AMDGPU_ABS64: u32 = 3;
/// Dynamic relocation: load delta + addend, 64 bits.
const R_AMDGPU_RELATIVE64: u32 = 13;
/// No relocation.
const R_AMDGPU_NONE: u32 = 0;
/// First reserved section index (`SHN_LORESERVE`).
const SHN_LORESERVE: u16 = 0xff00;

/// What a reported symbol is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A kernel: the symbol is its descriptor.
    Kernel(KernelDescriptor),
    /// A data object (`__device__` / `__constant__` variable).
    Variable {
        /// Alignment of the section holding it.
        alignment: u64,
        /// Whether its section is read-only.
        is_const: bool,
    },
}

/// A symbol a loader reports: kernel descriptors and global data objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeSymbol {
    /// The ELF name (`my_kernel.kd` for kernels, as the HSA runtime reports them).
    pub name: String,
    /// Virtual address in the code object.
    pub vaddr: u64,
    /// Size in bytes.
    pub size: u64,
    /// Global (program linkage) or local (module linkage).
    pub global: bool,
    /// Kernel or variable.
    pub kind: SymbolKind,
}

/// One `PT_LOAD` segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadSegment {
    /// Virtual address.
    pub vaddr: u64,
    /// File offset of its contents.
    pub file_offset: u64,
    /// Bytes present in the file.
    pub file_size: u64,
    /// Bytes in memory (the rest is zero).
    pub mem_size: u64,
}

/// A dynamic relocation to apply at load time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relocation {
    /// Virtual address patched (8 bytes).
    pub vaddr: u64,
    /// What is written.
    pub kind: RelocationKind,
}

/// The relocation kinds applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelocationKind {
    /// Load delta + addend.
    Relative {
        /// Added to the load delta.
        addend: i64,
    },
    /// Address of a symbol of this object (its virtual address) + addend.
    Absolute {
        /// The symbol's virtual address in the code object.
        symbol_vaddr: u64,
        /// Added to the symbol's loaded address.
        addend: i64,
    },
}

/// A parsed code object. Owns no bytes: loaders keep the file contents next to it.
#[derive(Clone, Debug)]
pub struct CodeObject {
    /// Processor and features.
    pub target: Target,
    /// Code-object version (3 to 6).
    pub version: u32,
    /// Loadable segments in file order.
    pub segments: Vec<LoadSegment>,
    /// Reported symbols in symbol-table order.
    pub symbols: Vec<CodeSymbol>,
    /// Dynamic relocations.
    pub relocations: Vec<Relocation>,
}

type Header = elf::FileHeader64<LE>;

impl CodeObject {
    /// Parses and validates `data`.
    pub fn parse(data: &[u8]) -> Result<CodeObject, CodeObjectError> {
        let (header, abi, target) = check_header(data)?;
        let endian = LE;
        let segments = load_segments(header, data)?;
        let sections = header.sections(endian, data)?;
        let symbols = reported_symbols(&sections, data)?;
        let relocations = parse_relocations(&sections, endian, data)?;
        Ok(CodeObject {
            target,
            version: u32::from(abi) + 2,
            segments,
            symbols,
            relocations,
        })
    }

    /// Lowest virtual address loaded.
    pub fn load_vaddr(&self) -> u64 {
        self.segments.iter().map(|s| s.vaddr).min().unwrap_or(0)
    }

    /// Bytes from the lowest to the highest loaded address.
    pub fn load_size(&self) -> u64 {
        let end = self
            .segments
            .iter()
            .map(|s| s.vaddr + s.mem_size)
            .max()
            .unwrap_or(0);
        end - self.load_vaddr()
    }

    /// File offset of the first loaded segment.
    pub fn storage_offset(&self) -> u64 {
        self.segments
            .iter()
            .min_by_key(|s| s.vaddr)
            .map_or(0, |s| s.file_offset)
    }

    /// Fills `image` (exactly [`load_size`](Self::load_size) bytes, to live at address `base`)
    /// with the loadable segments of `data` (the bytes this object was parsed from), zero
    /// elsewhere, then applies the dynamic relocations for that base.
    pub fn write_image(&self, data: &[u8], image: &mut [u8], base: u64) {
        assert_eq!(
            image.len() as u64,
            self.load_size(),
            "image buffer must be load_size() bytes"
        );
        image.fill(0);
        let origin = self.load_vaddr();
        for s in &self.segments {
            let at = (s.vaddr - origin) as usize;
            let src = &data[s.file_offset as usize..(s.file_offset + s.file_size) as usize];
            image[at..at + src.len()].copy_from_slice(src);
        }
        let delta = base.wrapping_sub(origin);
        for r in &self.relocations {
            let value = match r.kind {
                RelocationKind::Relative { addend } => delta.wrapping_add_signed(addend),
                RelocationKind::Absolute {
                    symbol_vaddr,
                    addend,
                } => delta.wrapping_add(symbol_vaddr).wrapping_add_signed(addend),
            };
            let at = (r.vaddr - origin) as usize;
            image[at..at + 8].copy_from_slice(&value.to_le_bytes());
        }
    }
}

/// The ELF header of an HSA code object, its ABI version and its target.
fn check_header(data: &[u8]) -> Result<(&Header, u8, Target), CodeObjectError> {
    if data.len() < 4 || &data[..4] != b"\x7fELF" {
        return Err(CodeObjectError::NotElf { len: data.len() });
    }
    if data.len() < 16 {
        return Err(CodeObjectError::Malformed(format!(
            "ELF identification cut short at {} bytes",
            data.len()
        )));
    }
    // e_ident[EI_CLASS] == ELFCLASS64, e_ident[EI_DATA] == ELFDATA2LSB.
    if data[4] != 2 || data[5] != 1 {
        return Err(CodeObjectError::NotAmdgpu(
            "not a 64-bit little-endian ELF file".into(),
        ));
    }
    let header = Header::parse(data)?;
    let endian = header.endian()?;
    let machine = header.e_machine(endian);
    if machine != elf::EM_AMDGPU {
        return Err(CodeObjectError::NotAmdgpu(format!(
            "e_machine is {machine:?}, not EM_AMDGPU (224)"
        )));
    }
    let osabi = header.e_ident().os_abi.0;
    if osabi != ELFOSABI_AMDGPU_HSA {
        return Err(CodeObjectError::NotAmdgpu(format!(
            "OS ABI is {osabi}, not AMDGPU_HSA (64)"
        )));
    }
    let abi = header.e_ident().abi_version;
    if !(ELFABIVERSION_AMDGPU_HSA_V3..=ELFABIVERSION_AMDGPU_HSA_V6).contains(&abi) {
        return Err(CodeObjectError::UnsupportedVersion(abi));
    }
    let target = decode_target(header.e_flags(endian).0, abi)?;

    Ok((header, abi, target))
}

/// The `PT_LOAD` segments, each checked to lie in the file and not to overflow.
fn load_segments(header: &Header, data: &[u8]) -> Result<Vec<LoadSegment>, CodeObjectError> {
    let endian = LE;
    let segments: Vec<LoadSegment> = header
        .program_headers(endian, data)?
        .iter()
        .filter(|ph| ph.p_type(endian) == elf::PT_LOAD)
        .map(|ph| LoadSegment {
            vaddr: ph.p_vaddr(endian),
            file_offset: ph.p_offset(endian),
            file_size: ph.p_filesz(endian),
            mem_size: ph.p_memsz(endian),
        })
        .collect();
    if segments.is_empty() {
        return Err(CodeObjectError::NoLoadSegment);
    }
    for s in &segments {
        let end = s.file_offset.checked_add(s.file_size);
        if end.is_none_or(|e| e > data.len() as u64) || s.file_size > s.mem_size {
            return Err(CodeObjectError::Malformed(format!(
                "PT_LOAD segment at vaddr {:#x} needs file bytes {:#x}..{:#x}, the file has {:#x}",
                s.vaddr,
                s.file_offset,
                s.file_offset.saturating_add(s.file_size),
                data.len()
            )));
        }
        if s.vaddr.checked_add(s.mem_size).is_none() {
            return Err(CodeObjectError::Malformed(format!(
                "PT_LOAD segment at {:#x} overflows",
                s.vaddr
            )));
        }
    }

    Ok(segments)
}

/// The symbols a loader reports: defined, non-local data objects (kernel descriptors decoded).
fn reported_symbols(
    sections: &object::read::elf::SectionTable<'_, Header>,
    data: &[u8],
) -> Result<Vec<CodeSymbol>, CodeObjectError> {
    let endian = LE;
    // The full symbol table when present, else the dynamic one (a stripped object).
    let mut symtab = sections.symbols(endian, data, elf::SHT_SYMTAB)?;
    if symtab.is_empty() {
        symtab = sections.symbols(endian, data, elf::SHT_DYNSYM)?;
    }
    let mut symbols = Vec::new();
    for sym in symtab.iter() {
        if sym.st_type() != elf::STT_OBJECT || sym.st_bind() == elf::STB_LOCAL {
            continue;
        }
        let shndx = sym.st_shndx(endian);
        if shndx == elf::SHN_UNDEF || shndx.0 >= SHN_LORESERVE {
            continue;
        }
        let name = String::from_utf8_lossy(symtab.symbol_name(endian, sym)?).into_owned();
        let section = sections.section(object::SectionIndex(usize::from(shndx.0)))?;
        let vaddr = sym.st_value(endian);
        let size = sym.st_size(endian);
        let kind = if name.ends_with(KERNEL_DESCRIPTOR_SUFFIX) {
            let bytes =
                section_bytes_at(section, endian, data, vaddr, KERNEL_DESCRIPTOR_SIZE).ok_or_else(|| {
                    CodeObjectError::Malformed(format!(
                        "kernel descriptor `{name}` at {vaddr:#x} lies outside its section's file data"
                    ))
                })?;
            SymbolKind::Kernel(KernelDescriptor::parse(
                bytes.try_into().expect("descriptor size"),
            ))
        } else {
            SymbolKind::Variable {
                alignment: section.sh_addralign(endian).max(1),
                is_const: !section.sh_flags(endian).contains(elf::SHF_WRITE),
            }
        };
        symbols.push(CodeSymbol {
            name,
            vaddr,
            size,
            global: sym.st_bind() != elf::STB_LOCAL,
            kind,
        });
    }

    Ok(symbols)
}

/// `len` file bytes at virtual address `vaddr` of `section`, when they are in the file.
fn section_bytes_at<'d>(
    section: &elf::SectionHeader64<LE>,
    endian: LE,
    data: &'d [u8],
    vaddr: u64,
    len: usize,
) -> Option<&'d [u8]> {
    if section.sh_type(endian) == elf::SHT_NOBITS {
        return None;
    }
    let within = vaddr.checked_sub(section.sh_addr(endian))?;
    if within.checked_add(len as u64)? > section.sh_size(endian) {
        return None;
    }
    let start = section.sh_offset(endian).checked_add(within)? as usize;
    data.get(start..start.checked_add(len)?)
}

fn parse_relocations(
    sections: &object::read::elf::SectionTable<'_, Header>,
    endian: LE,
    data: &[u8],
) -> Result<Vec<Relocation>, CodeObjectError> {
    let mut out = Vec::new();
    for section in sections.iter() {
        // Dynamic relocations live in allocated RELA sections; link-time ones are ignored.
        if section.sh_type(endian) != elf::SHT_RELA
            || !section.sh_flags(endian).contains(elf::SHF_ALLOC)
        {
            continue;
        }
        let (relas, link) = section
            .rela(endian, data)?
            .ok_or_else(|| CodeObjectError::Malformed("RELA section without entries".into()))?;
        let symbols = sections.symbol_table_by_index(endian, data, link)?;
        for rela in relas {
            let kind = rela.r_type(endian, false).0;
            let vaddr = rela.r_offset(endian);
            let addend = rela.r_addend(endian);
            let kind = match kind {
                R_AMDGPU_NONE => continue,
                R_AMDGPU_RELATIVE64 => RelocationKind::Relative { addend },
                R_AMDGPU_ABS64 => {
                    let index = rela.r_sym(endian, false);
                    let sym = symbols.symbol(object::SymbolIndex(index as usize))?;
                    if sym.st_shndx(endian) == elf::SHN_UNDEF {
                        let name =
                            String::from_utf8_lossy(symbols.symbol_name(endian, sym)?).into_owned();
                        return Err(CodeObjectError::UndefinedSymbol(name));
                    }
                    RelocationKind::Absolute {
                        symbol_vaddr: sym.st_value(endian),
                        addend,
                    }
                }
                other => {
                    return Err(CodeObjectError::UnsupportedRelocation {
                        kind: other,
                        offset: vaddr,
                    });
                }
            };
            out.push(Relocation { vaddr, kind });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clang_code_object_symbols_and_image() {
        let data = crate::symbols_code_object("code-object-unit", "gfx90a");
        let co = CodeObject::parse(&data).unwrap();
        assert_eq!(co.target.processor, "gfx90a");
        assert!((4..=6).contains(&co.version));

        let find = |n: &str| {
            co.symbols
                .iter()
                .find(|s| s.name == n)
                .unwrap_or_else(|| panic!("no {n}"))
        };
        let SymbolKind::Kernel(kd) = find("count.kd").kind else {
            panic!("increment.kd is a kernel")
        };
        assert_eq!((kd.group_segment_fixed_size, kd.kernarg_size), (256, 12));
        let counter = find("counter");
        assert_eq!(counter.size, 4);
        assert!(matches!(
            counter.kind,
            SymbolKind::Variable {
                is_const: false,
                ..
            }
        ));
        assert!(matches!(
            find("lookup").kind,
            SymbolKind::Variable { is_const: true, .. }
        ));
        // Device functions (STT_FUNC) and local symbols are not reported.
        assert!(co.symbols.iter().all(|s| s.name != "count" && s.global));

        // `counter_address = &counter` needs one relative relocation.
        let pointer = find("counter_address");
        assert_eq!(
            co.relocations,
            vec![Relocation {
                vaddr: pointer.vaddr,
                kind: RelocationKind::Relative {
                    addend: counter.vaddr as i64
                }
            }]
        );
        let base = 0x7000_0000_0000u64;
        let mut image = vec![0xffu8; co.load_size() as usize];
        co.write_image(&data, &mut image, base);
        let at = |v: u64, n: usize| &image[(v - co.load_vaddr()) as usize..][..n];
        assert_eq!(at(counter.vaddr, 4), 7u32.to_le_bytes());
        assert_eq!(at(pointer.vaddr, 8), (base + counter.vaddr).to_le_bytes());
        assert!(
            at(find("histogram").vaddr, 128).iter().all(|&b| b == 0),
            ".bss is zero"
        );
    }

    #[test]
    fn clang_code_object_as_elf_and_metadata() {
        let data = crate::symbols_code_object("code-object-metadata-unit", "gfx942");
        let elf = crate::AmdgpuElf::parse(&data).unwrap();
        assert_eq!(elf.processor(), Some("gfx942"));
        let text = elf.section(".text").unwrap().expect(".text");
        assert!(text.size > 0 && text.bytes.len() as u64 == text.size);
        let symbols = elf.symbols();
        let count = symbols.iter().find(|s| s.name == "count").expect("count");
        assert_eq!(count.kind, crate::ElfSymbolKind::Function);
        assert!((text.vaddr..text.vaddr + text.size).contains(&count.vaddr));
        let kd = symbols
            .iter()
            .find(|s| s.name == "count.kd")
            .expect("count.kd");
        assert_eq!(kd.kind, crate::ElfSymbolKind::Object);
        let image = elf.load_image().unwrap();
        let descriptor = KernelDescriptor::parse(
            image[kd.vaddr as usize..][..KERNEL_DESCRIPTOR_SIZE]
                .try_into()
                .unwrap(),
        );
        assert_eq!(descriptor.group_segment_fixed_size, 256);
        assert_eq!(
            kd.vaddr.wrapping_add_signed(descriptor.entry_offset),
            count.vaddr,
            "the descriptor's entry offset points at the kernel's code"
        );

        let meta = crate::Metadata::of(&elf).unwrap().expect("metadata note");
        assert_eq!(meta.version.0, 1);
        let k = meta
            .kernels
            .iter()
            .find(|k| k.name == "count")
            .expect("count in metadata");
        assert_eq!(k.symbol, "count.kd");
        assert_eq!(k.group_segment_fixed_size, 256);
        assert_eq!(k.kernarg_segment_size, u64::from(descriptor.kernarg_size));
        assert_eq!(k.wavefront_size, 64);
        assert!(k.vgpr_count > 0 && k.sgpr_count > 0);
        assert_eq!(
            k.args[..2]
                .iter()
                .map(|a| (a.offset, a.size, a.value_kind.as_str()))
                .collect::<Vec<_>>(),
            [(0, 8, "global_buffer"), (8, 4, "by_value")]
        );
        let scatter = meta.kernels.iter().find(|k| k.name == "scatter").unwrap();
        assert_eq!((scatter.args[2].offset, scatter.args[2].size), (16, 8));
    }

    #[test]
    fn rejects_non_elf_and_foreign_elf() {
        assert_eq!(
            CodeObject::parse(b"hello").unwrap_err(),
            CodeObjectError::NotElf { len: 5 }
        );
        assert!(matches!(
            CodeObject::parse(b"\x7fELF\x02\x01").unwrap_err(),
            CodeObjectError::Malformed(_)
        ));
        // The running test binary is an x86-64 ELF file.
        let host = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let err = CodeObject::parse(&host).unwrap_err();
        assert!(
            matches!(err, CodeObjectError::NotAmdgpu(ref m) if m.contains("EM_AMDGPU")),
            "{err}"
        );
    }
}
