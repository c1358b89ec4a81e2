//! The live API tables and the exported entry points.
//!
//! Each exported `hsa_*` function is a four-instruction trampoline that loads its slot from the
//! live table and jumps to it, as the real runtime's exports call through its own table: a tool
//! that rewrites an entry (in `OnLoad`) intercepts the application's calls. A NULL slot makes the
//! call return `HSA_STATUS_ERROR_NOT_INITIALIZED`. The trampolines are generated from the slot
//! lists of `hsa-abi`, so every core and AMD extension function that has a slot is exported.
//!
//! The entry layer builds the tables once, when the library is loaded ([`make_live`]); the last
//! `hsa_shut_down` puts that first version back ([`reset`]), undoing the rewrites of tools.
//! This module sits at the bottom: it knows no entry.

use hsa_abi::*;
use std::mem::{MaybeUninit, size_of};

macro_rules! zeroed_table {
    ($ty:ty) => {
        // SAFETY: every table is a version header plus nullable function pointers; all-zero is a
        // valid value (version 0, every slot NULL).
        unsafe { MaybeUninit::<$ty>::zeroed().assume_init() }
    };
}

/// The root table handed to tools.
pub(crate) static mut ROOT: HsaApiTable = zeroed_table!(HsaApiTable);
/// Core functions; read by the exported trampolines.
pub(crate) static mut CORE: CoreApiTable = zeroed_table!(CoreApiTable);
/// AMD extension functions; read by the exported trampolines.
pub(crate) static mut AMD_EXT: AmdExtTable = zeroed_table!(AmdExtTable);
static mut FINALIZER: FinalizerExtTable = zeroed_table!(FinalizerExtTable);
/// Image extension functions; read by the exported trampolines.
pub(crate) static mut IMAGE: ImageExtTable = zeroed_table!(ImageExtTable);
static mut TOOLS: ToolsApiTable = zeroed_table!(ToolsApiTable);
static mut PC_SAMPLING: PcSamplingExtTable = zeroed_table!(PcSamplingExtTable);

macro_rules! entry_point {
    ($table:ident, $ty:ident, $name:ident, $field:ident) => {
        core::arch::global_asm!(
            ".pushsection .text.vhsa_entry,\"ax\",@progbits",
            concat!(".globl ", stringify!($name)),
            concat!(".type ", stringify!($name), ",@function"),
            ".p2align 4",
            concat!(stringify!($name), ":"),
            "mov rax, qword ptr [rip + {table} + {offset}]",
            "test rax, rax",
            "jz 2f",
            "jmp rax",
            "2:",
            "mov eax, {not_initialized}",
            "ret",
            concat!(".size ", stringify!($name), ", . - ", stringify!($name)),
            ".popsection",
            table = sym $table,
            offset = const core::mem::offset_of!($ty, $field),
            not_initialized = const hsa_abi::ffi::HSA_STATUS_ERROR_NOT_INITIALIZED,
        );
    };
}

include!(concat!(env!("OUT_DIR"), "/exports.rs"));

fn version(major: u32, size: usize, step: u32) -> ApiTableVersion {
    ApiTableVersion {
        major_id: major,
        minor_id: size as u32,
        step_id: step,
        reserved: 0,
    }
}

/// The tables as the entry layer built them.
#[derive(Clone, Copy)]
pub(crate) struct Tables {
    pub(crate) core: CoreApiTable,
    pub(crate) amd: AmdExtTable,
    pub(crate) image: ImageExtTable,
}

impl Tables {
    /// Empty tables with their version headers.
    pub(crate) fn empty() -> Self {
        let mut core = zeroed_table!(CoreApiTable);
        core.version = version(CORE_MAJOR, size_of::<CoreApiTable>(), 0);
        let mut amd = zeroed_table!(AmdExtTable);
        amd.version = version(AMD_EXT_MAJOR, size_of::<AmdExtTable>(), AMD_EXT_STEP);
        let mut image = zeroed_table!(ImageExtTable);
        image.version = version(IMAGE_MAJOR, size_of::<ImageExtTable>(), 0);
        Tables { core, amd, image }
    }
}

static PRISTINE: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();

// SAFETY: the tables hold only function pointers and version numbers.
unsafe impl Send for Tables {}
// SAFETY: as above.
unsafe impl Sync for Tables {}

/// Makes `tables` live and remembers them for [`reset`]. Called once, at load time.
pub(crate) fn make_live(tables: Tables) {
    let _ = PRISTINE.set(tables);
    reset();
}

/// Puts the tables built at load time back (the last `hsa_shut_down`).
///
/// No other thread is expected to call through the table at that moment.
pub(crate) fn reset() {
    let Some(t) = PRISTINE.get().copied() else {
        return;
    };
    let mut finalizer = zeroed_table!(FinalizerExtTable);
    finalizer.version = version(FINALIZER_MAJOR, size_of::<FinalizerExtTable>(), 0);
    let mut tools = zeroed_table!(ToolsApiTable);
    tools.version = version(TOOLS_MAJOR, size_of::<ToolsApiTable>(), 0);
    let mut pcs = zeroed_table!(PcSamplingExtTable);
    pcs.version = version(PC_SAMPLING_MAJOR, size_of::<PcSamplingExtTable>(), 0);

    // SAFETY: the statics are only written here, at load time or on the last shutdown; the
    // writes are volatile so the trampolines' plain loads see whole entries.
    unsafe {
        std::ptr::write_volatile(&raw mut CORE, t.core);
        std::ptr::write_volatile(&raw mut AMD_EXT, t.amd);
        std::ptr::write_volatile(&raw mut FINALIZER, finalizer);
        std::ptr::write_volatile(&raw mut IMAGE, t.image);
        std::ptr::write_volatile(&raw mut TOOLS, tools);
        std::ptr::write_volatile(&raw mut PC_SAMPLING, pcs);
        let root = HsaApiTable {
            version: version(ROOT_MAJOR, size_of::<HsaApiTable>(), ROOT_STEP),
            core_: &raw mut CORE,
            amd_ext_: &raw mut AMD_EXT,
            finalizer_ext_: &raw mut FINALIZER,
            image_ext_: &raw mut IMAGE,
            tools_: &raw mut TOOLS,
            pc_sampling_ext_: &raw mut PC_SAMPLING,
        };
        std::ptr::write_volatile(&raw mut ROOT, root);
    }
}

/// The root table, as handed to a tool's `OnLoad`.
pub(crate) fn root() -> *mut HsaApiTable {
    &raw mut ROOT
}
