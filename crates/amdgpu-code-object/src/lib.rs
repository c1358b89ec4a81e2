//! AMDGPU code objects, read in one place for the whole workspace: the virtual runtime's loader,
//! the emulator, the command line's SQTT decoder and the tool's snapshot of loaded code objects.
//!
//! Parts, bottom up: [`target`] (the processor and feature modes in `e_flags`), [`descriptor`]
//! (the 64-byte kernel descriptor, decoded once), [`elf`] (any AMDGPU ELF file as it is:
//! sections, symbol tables, the loadable image, notes), [`metadata`] (the MessagePack metadata
//! note: kernels, kernarg sizes, register counts, arguments), [`code_object`] (what a loader
//! needs, checked: an HSA code object's segments, reported symbols and relocations, and its image
//! at a chosen base), [`loaded_image`] (the extent, code, writable ranges, notes and kernel names of a
//! code object already in memory, from its first bytes), [`bundle`] (the containers code objects
//! travel in: clang offload bundles, compressed or not, and host ELFs' `.hip_fatbin` sections).
//!
//! Layouts follow the public ELF specification and LLVM's AMDGPUUsage document. Nothing here
//! keeps state or does I/O; every error names what is wrong.
#![deny(missing_docs)]

pub mod bundle;
pub mod code_object;
pub mod descriptor;
pub mod elf;
mod error;
pub mod loaded_image;
pub mod metadata;
pub mod target;

pub use code_object::{
    CodeObject, CodeSymbol, LoadSegment, Relocation, RelocationKind, SymbolKind,
};
pub use descriptor::{KERNEL_DESCRIPTOR_SIZE, KERNEL_DESCRIPTOR_SUFFIX, KernelDescriptor};
pub use elf::{AmdgpuElf, ElfNote, ElfSection, ElfSymbol, ElfSymbolKind, is_amdgpu_elf, notes_in};
pub use error::CodeObjectError;
pub use loaded_image::{
    HEADER_PROBE_BYTES, LoadedLayout, NoteSegment, kernel_name, loaded_layout, note_segments,
    writable_ranges,
};
pub use metadata::{HOSTCALL_BUFFER, KernelArgument, KernelMetadata, MULTIGRID_SYNC_ARG, Metadata};
pub use target::{FeatureMode, Target, processor_name};

/// The test code object `tests/device/symbols.hip` built for `target` in the scratch folder
/// `scratch`, as bytes.
#[cfg(test)]
fn symbols_code_object(scratch: &str, target: &str) -> Vec<u8> {
    let dir = test_support::scratch_dir(scratch);
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/device/symbols.hip");
    let out = dir.join("symbols.co");
    test_support::build_code_object(&src, target, &out);
    std::fs::read(&out).unwrap()
}
