//! Device code of a file for the SQTT decoder: the code objects come from the workspace's one
//! container reader (`amdgpu_code_object::bundle`: plain code objects, offload bundles,
//! compressed bundles, host ELFs with `.hip_fatbin`); this module reads the parts of each code
//! object the decoder needs.

pub use amdgpu_code_object::bundle::{
    BundleError, BundledCodeObject, MAX_COMPRESSION_RATIO, code_objects,
};
use amdgpu_code_object::{AmdgpuElf, ElfSymbolKind};
use std::collections::HashMap;

/// The parts of a code object the decoder needs.
pub struct CodeObjectView {
    /// The `.sqtt_funcmap` section bytes, when present.
    pub funcmap: Option<Vec<u8>>,
    /// Function symbol values by name (`.symtab` first, then `.dynsym`).
    pub symbols: HashMap<String, u64>,
}

/// Reads the `.sqtt_funcmap` section and the symbol table of an AMDGPU code object.
pub fn inspect(image: &[u8]) -> Result<CodeObjectView, BundleError> {
    let elf = AmdgpuElf::parse(image).map_err(|e| BundleError::Elf(e.to_string()))?;
    let funcmap = elf
        .section(".sqtt_funcmap")
        .map_err(|e| BundleError::Elf(e.to_string()))?
        .map(|s| s.bytes.to_vec());
    let mut symbols = HashMap::new();
    for sym in elf.symbols().into_iter().chain(elf.dynamic_symbols()) {
        if sym.kind != ElfSymbolKind::Function || !sym.defined {
            continue;
        }
        symbols.entry(sym.name).or_insert(sym.vaddr);
    }
    Ok(CodeObjectView { funcmap, symbols })
}
