//! The kernels of an AMDGPU code object as the emulator runs them: the loaded image, the kernel
//! descriptors (`<name>.kd` symbols) and the code range. The file is read by the workspace's
//! code-object reader (`amdgpu-code-object`); this module only picks what a dispatch needs.

use std::ops::Range;

use amdgpu_code_object::{AmdgpuElf, KERNEL_DESCRIPTOR_SUFFIX};

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
        let elf = AmdgpuElf::parse(bytes).map_err(|e| format!("not an ELF code object: {e}"))?;
        let image = elf.load_image().map_err(|e| e.to_string())?;
        let text = elf
            .section(".text")
            .map_err(|e| e.to_string())?
            .map(|s| s.vaddr..s.vaddr + s.size)
            .ok_or("the code object has no .text section")?;
        let mut kernels = Vec::new();
        let mut symbols = Vec::new();
        for sym in elf.symbols() {
            if let Some(k) = sym.name.strip_suffix(KERNEL_DESCRIPTOR_SUFFIX) {
                kernels.push(KernelSymbol {
                    name: k.to_string(),
                    descriptor: sym.vaddr,
                });
            } else if sym.global && sym.defined {
                symbols.push((sym.name, sym.vaddr));
            }
        }
        let target = elf.processor().and_then(Target::from_name);
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
