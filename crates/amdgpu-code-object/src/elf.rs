//! A read-only view of any 64-bit little-endian AMDGPU ELF file, for readers that take what
//! the file holds without the loader's checks: sections by name, symbol tables, the loadable
//! image, the processor named in `e_flags`, the notes.
//!
//! [`CodeObject`](crate::CodeObject) is the loader's stricter reading of the same bytes.

use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::{LittleEndian as LE, Object, ObjectSection, ObjectSegment, ObjectSymbol, elf};

use crate::error::CodeObjectError;
use crate::target::processor_name;

/// The largest image [`AmdgpuElf::load_image`] lays out (a larger one is a corrupt header).
const MAX_IMAGE: u64 = 1 << 30;

/// Whether `bytes` start like an AMDGPU ELF file: the ELF magic and `e_machine` `EM_AMDGPU`
/// (a quick test for containers that mix targets; [`AmdgpuElf::parse`] checks the rest).
pub fn is_amdgpu_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
        && bytes.len() > 20
        && u16::from_le_bytes([bytes[18], bytes[19]]) == elf::EM_AMDGPU.0
}

/// What a symbol names, by its ELF type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfSymbolKind {
    /// `STT_FUNC`: code.
    Function,
    /// `STT_OBJECT`: data (kernel descriptors are data objects).
    Object,
    /// Any other type (`STT_NOTYPE`, sections, files).
    Other,
}

/// One entry of a symbol table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfSymbol {
    /// The symbol's name.
    pub name: String,
    /// Its value: a virtual address for defined symbols.
    pub vaddr: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its ELF type.
    pub kind: ElfSymbolKind,
    /// Not `STB_LOCAL`.
    pub global: bool,
    /// Defined in this file (not undefined, not a section or file symbol).
    pub defined: bool,
}

/// A section found by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElfSection<'d> {
    /// Virtual address of the section.
    pub vaddr: u64,
    /// Size in memory.
    pub size: u64,
    /// The bytes the file holds for it (empty for `.bss`-like sections).
    pub bytes: &'d [u8],
}

/// One note of a `PT_NOTE` segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElfNote<'d> {
    /// The owner's name (`AMDGPU`), without padding.
    pub owner: &'d [u8],
    /// The note type (`n_type`).
    pub kind: u32,
    /// The descriptor bytes.
    pub desc: &'d [u8],
}

/// A parsed AMDGPU ELF file borrowing its bytes.
pub struct AmdgpuElf<'d> {
    file: ElfFile64<'d, LE>,
    data: &'d [u8],
}

impl<'d> AmdgpuElf<'d> {
    /// Reads `data` as a 64-bit little-endian ELF file for `EM_AMDGPU`.
    pub fn parse(data: &'d [u8]) -> Result<AmdgpuElf<'d>, CodeObjectError> {
        if data.len() < 4 || &data[..4] != b"\x7fELF" {
            return Err(CodeObjectError::NotElf { len: data.len() });
        }
        if data.get(4) == Some(&1) {
            return Err(CodeObjectError::NotAmdgpu(
                "32-bit ELF; AMDGPU code objects are 64-bit".into(),
            ));
        }
        if data.get(5) == Some(&2) {
            return Err(CodeObjectError::NotAmdgpu(
                "big-endian ELF; AMDGPU code objects are little-endian".into(),
            ));
        }
        let file = ElfFile64::<LE>::parse(data)?;
        let machine = file.elf_header().e_machine(LE);
        if machine != elf::EM_AMDGPU {
            return Err(CodeObjectError::NotAmdgpu(format!(
                "e_machine is {machine}, not EM_AMDGPU (224)"
            )));
        }
        Ok(AmdgpuElf { file, data })
    }

    /// The bytes this view reads.
    pub fn data(&self) -> &'d [u8] {
        self.data
    }

    /// The header's `e_flags`.
    pub fn e_flags(&self) -> u32 {
        self.file.elf_header().e_flags(LE).0
    }

    /// The processor named by `e_flags` (`gfx90a`), when it is a known AMDGCN processor.
    pub fn processor(&self) -> Option<&'static str> {
        processor_name(self.e_flags())
    }

    /// The section called `name`, if the file has one.
    pub fn section(&self, name: &str) -> Result<Option<ElfSection<'d>>, CodeObjectError> {
        let Some(s) = self.file.section_by_name(name) else {
            return Ok(None);
        };
        let bytes = s
            .data()
            .map_err(|e| CodeObjectError::Malformed(format!("{name}: {e}")))?;
        Ok(Some(ElfSection {
            vaddr: s.address(),
            size: s.size(),
            bytes,
        }))
    }

    /// The full symbol table (`.symtab`), in table order, the null symbol left out.
    pub fn symbols(&self) -> Vec<ElfSymbol> {
        self.file.symbols().filter_map(symbol).collect()
    }

    /// The dynamic symbol table (`.dynsym`), in table order, the null symbol left out.
    pub fn dynamic_symbols(&self) -> Vec<ElfSymbol> {
        self.file.dynamic_symbols().filter_map(symbol).collect()
    }

    /// The file laid out as a loader places it at address 0: every `PT_LOAD` segment at its
    /// virtual address, zero elsewhere, up to the end of the highest segment. Relocations are
    /// not applied.
    pub fn load_image(&self) -> Result<Vec<u8>, CodeObjectError> {
        let size = self
            .file
            .segments()
            .map(|s| s.address().saturating_add(s.size()))
            .max()
            .unwrap_or(0);
        if size == 0 {
            return Err(CodeObjectError::NoLoadSegment);
        }
        if size > MAX_IMAGE {
            return Err(CodeObjectError::Malformed(format!(
                "loadable segments end at {size:#x}, beyond {MAX_IMAGE:#x}"
            )));
        }
        let mut image = vec![0u8; size as usize];
        for seg in self.file.segments() {
            let data = seg
                .data()
                .map_err(|e| CodeObjectError::Malformed(format!("unreadable segment: {e}")))?;
            let at = seg.address() as usize;
            image[at..at + data.len()].copy_from_slice(data);
        }
        Ok(image)
    }

    /// The notes of every `PT_NOTE` segment.
    pub fn notes(&self) -> Result<Vec<ElfNote<'d>>, CodeObjectError> {
        let header = self.file.elf_header();
        let mut out = Vec::new();
        for ph in header.program_headers(LE, self.data)? {
            if ph.p_type(LE) == elf::PT_NOTE {
                let bytes = ph.data(LE, self.data).map_err(|()| {
                    CodeObjectError::Malformed("a PT_NOTE segment lies outside the file".into())
                })?;
                out.extend(notes_in(bytes, ph.p_align(LE))?);
            }
        }
        Ok(out)
    }
}

/// The notes in `bytes`, the contents of one `PT_NOTE` segment whose `p_align` is `align` (a
/// segment read from a loaded image rather than from a file).
pub fn notes_in(bytes: &[u8], align: u64) -> Result<Vec<ElfNote<'_>>, CodeObjectError> {
    let mut notes =
        object::read::elf::NoteIterator::<elf::FileHeader64<LE>>::new(LE, align, bytes)?;
    let mut out = Vec::new();
    while let Some(note) = notes.next()? {
        out.push(ElfNote {
            owner: note.name(),
            kind: note.n_type(LE).0,
            desc: note.desc(),
        });
    }
    Ok(out)
}

fn symbol(s: object::read::elf::ElfSymbol64<'_, '_, LE>) -> Option<ElfSymbol> {
    let name = s.name().ok()?;
    if name.is_empty() && s.address() == 0 && s.index().0 == 0 {
        return None;
    }
    let kind = match s.kind() {
        object::SymbolKind::Text => ElfSymbolKind::Function,
        object::SymbolKind::Data => ElfSymbolKind::Object,
        _ => ElfSymbolKind::Other,
    };
    Some(ElfSymbol {
        name: name.to_owned(),
        vaddr: s.address(),
        size: s.size(),
        kind,
        global: s.is_global(),
        defined: s.is_definition(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_files_are_named() {
        let mut amdgpu = b"\x7fELF\x02\x01\x01".to_vec();
        amdgpu.resize(64, 0);
        amdgpu[18] = 224;
        assert!(is_amdgpu_elf(&amdgpu));
        amdgpu[18] = 62;
        assert!(!is_amdgpu_elf(&amdgpu));
        assert!(!is_amdgpu_elf(b"\x7fELF"));
        assert!(matches!(
            AmdgpuElf::parse(b"MZ\x90\x00").err(),
            Some(CodeObjectError::NotElf { len: 4 })
        ));
        let mut elf32 = b"\x7fELF\x01\x01\x01".to_vec();
        elf32.resize(64, 0);
        let err = AmdgpuElf::parse(&elf32).err().unwrap().to_string();
        assert!(err.contains("32-bit"), "{err}");
        // The running test binary is an x86-64 ELF file.
        let host = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let err = AmdgpuElf::parse(&host).err().unwrap().to_string();
        assert!(err.contains("EM_AMDGPU"), "{err}");
    }
}
