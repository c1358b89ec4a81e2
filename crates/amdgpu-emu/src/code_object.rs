//! Reading kernels out of an AMDGPU code object (an ELF shared object): the loaded image,
//! the kernel descriptors (`<name>.kd` symbols) and the code range.

use std::ops::Range;

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol};

use crate::Target;

/// A kernel of a code object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSymbol {
    /// The kernel's name (the `.kd` symbol without its suffix).
    pub name: String,
    /// Offset of its descriptor in the loaded image.
    pub descriptor: u64,
}

/// A code object laid out as a loader would place it at offset 0.
#[derive(Clone, Debug)]
pub struct CodeObject {
    /// The loaded image: every PT_LOAD segment at its virtual address, zero-filled between.
    pub image: Vec<u8>,
    /// Kernels by descriptor.
    pub kernels: Vec<KernelSymbol>,
    /// The `.text` section's range in the image.
    pub text: Range<u64>,
    /// Offsets of global symbols (device variables, functions) in the image.
    pub symbols: Vec<(String, u64)>,
    /// The processor the ELF header names, when the emulator knows it.
    pub target: Option<Target>,
}

impl CodeObject {
    /// Parse an AMDGPU ELF. Errors name what is missing.
    pub fn parse(bytes: &[u8]) -> Result<CodeObject, String> {
        let file =
            object::File::parse(bytes).map_err(|e| format!("not an ELF code object: {e}"))?;
        let mut size = 0u64;
        for seg in file.segments() {
            size = size.max(seg.address() + seg.size());
        }
        if size == 0 || size > 1 << 30 {
            return Err("the code object has no loadable segments".into());
        }
        let mut image = vec![0u8; size as usize];
        for seg in file.segments() {
            let data = seg.data().map_err(|e| format!("unreadable segment: {e}"))?;
            let a = seg.address() as usize;
            image[a..a + data.len()].copy_from_slice(data);
        }
        let text = file
            .section_by_name(".text")
            .map(|s| s.address()..s.address() + s.size())
            .ok_or("the code object has no .text section")?;
        let mut kernels = Vec::new();
        let mut symbols = Vec::new();
        for sym in file.symbols() {
            let Ok(name) = sym.name() else { continue };
            if let Some(k) = name.strip_suffix(".kd") {
                kernels.push(KernelSymbol {
                    name: k.to_string(),
                    descriptor: sym.address(),
                });
            } else if sym.is_global() && sym.is_definition() {
                symbols.push((name.to_string(), sym.address()));
            }
        }
        // ELF64 header: e_flags at byte 48.
        let flags = bytes
            .get(48..52)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .unwrap_or(0);
        let target = match flags & 0xFF {
            0x3F => Some(Target::Gfx90a),
            0x4C => Some(Target::Gfx942),
            _ => None,
        };
        Ok(CodeObject {
            image,
            kernels,
            text,
            symbols,
            target,
        })
    }

    /// The descriptor offset of kernel `name`.
    pub fn kernel(&self, name: &str) -> Option<u64> {
        self.kernels
            .iter()
            .find(|k| k.name == name)
            .map(|k| k.descriptor)
    }

    /// The offset of global symbol `name`.
    pub fn symbol(&self, name: &str) -> Option<u64> {
        self.symbols.iter().find(|s| s.0 == name).map(|s| s.1)
    }
}
