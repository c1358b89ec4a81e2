//! An emulator of AMDGPU machine code for GFX9 compute targets (gfx90a, gfx942).
//!
//! It decodes a kernel's code once, runs its workgroups on a pool of host threads (the waves
//! of one workgroup together on one thread, 64 lanes each), and reaches global memory only
//! through a [`GlobalMemory`] implementation that checks every access. It knows nothing of HSA:
//! a runtime adapts its queues and memory to [`Emulator::dispatch`].
//!
//! Parts, from the entry down (a module imports only modules below it, never the crate root):
//! [`dispatch`] (the entry point and the work-group scheduler); `exec` (semantics),
//! `host_fp` (the host floating-point environment) and `launch` (a wave's starting
//! registers); `wave` (register state); [`decode`]
//! (table-driven decoder); [`memory`] (the memory interface and the generic-address
//! apertures), [`texel`] (element formats), [`resource`] (buffer, image and sampler
//! descriptors), [`trace`] (shader-data records), [`fault`], [`target`] (targets and encoding
//! families) at the bottom. [`code_object`] and [`descriptor`] read ELF code objects and
//! kernel descriptors.
#![deny(missing_docs)]
// Lane loops index several 64-lane arrays by the same lane number; NaN-aware compares are
// written as the hardware defines them (`!(a < b)` is true for unordered operands).
#![allow(
    clippy::needless_range_loop,
    clippy::neg_cmp_op_on_partial_ord,
    clippy::nonminimal_bool
)]

pub mod code_object;
pub mod counting;
pub mod decode;
pub mod descriptor;
pub mod dispatch;
mod exec;
pub mod fault;
mod host_fp;
mod launch;
pub mod memory;
mod pool;
pub mod resource;
pub mod target;
pub mod texel;
pub mod trace;
mod wave;

pub use counting::{CounterTotals, Quantity};
pub use dispatch::{DispatchOutcome, DispatchSetup, Emulator};
pub use fault::{Fault, FaultKind};
pub use memory::{Apertures, GlobalMemory, RegionMemory};
pub use target::{Family, Target};
pub use trace::ShaderDataRecord;
