//! Why bytes are not a usable code object: one error for every reader of the crate.

/// Why bytes are not a loadable code object. Every message names what is wrong.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CodeObjectError {
    /// The bytes do not start with the ELF magic.
    #[error(
        "not an ELF file ({len} bytes, no \\x7fELF magic): pass an AMDGPU code object built with clang --offload-arch"
    )]
    NotElf {
        /// Length of the input.
        len: usize,
    },
    /// An ELF file, but not a 64-bit little-endian AMDGPU HSA one.
    #[error("not an AMDGPU HSA code object: {0}")]
    NotAmdgpu(String),
    /// The ELF structure is cut short or inconsistent (a truncated file, for example).
    #[error("malformed or truncated code object: {0}")]
    Malformed(String),
    /// A code-object version this loader does not understand.
    #[error(
        "unsupported code object ABI version {0} (v3 to v6 are supported: ABI versions 1 to 4)"
    )]
    UnsupportedVersion(u8),
    /// An `EF_AMDGPU_MACH` value that is not a known AMDGCN processor.
    #[error("unknown AMDGPU processor in e_flags (EF_AMDGPU_MACH = {0:#x})")]
    UnknownProcessor(u32),
    /// The file has nothing to load.
    #[error("code object has no PT_LOAD segment")]
    NoLoadSegment,
    /// A relocation kind the loader does not apply.
    #[error("unsupported dynamic relocation type {kind} at offset {offset:#x}")]
    UnsupportedRelocation {
        /// `R_AMDGPU_*` number.
        kind: u32,
        /// Virtual address it patches.
        offset: u64,
    },
    /// A relocation against a symbol the code object does not define.
    #[error("relocation against undefined symbol `{0}`")]
    UndefinedSymbol(String),
}

impl From<object::read::Error> for CodeObjectError {
    fn from(e: object::read::Error) -> Self {
        CodeObjectError::Malformed(e.to_string())
    }
}
