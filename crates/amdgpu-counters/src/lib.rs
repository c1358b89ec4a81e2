//! The one catalog of AMDGPU hardware counters that kreplay knows: which counters a target
//! offers, in which block and under which event id, how many of a block fit one pass, the
//! derived metrics built from them, and the `pmc:` groups users write.
//!
//! Used by every side of counter collection: the emulator counts [`Quantity`]s, the virtual
//! GPUs and the drop-in aqlprofile library map `(block, event)` to them, the tool resolves the
//! names in `KREPLAY_PMC_GROUPS`, the command line lists counters and refuses groups before the
//! application starts. Nobody else knows event ids or limits.
//!
//! Layering (no module imports one above it):
//! - [`group`]: `pmc:` lines and the per-pass check of a group;
//! - [`catalog`]: counters and derived metrics per target;
//! - [`expression`]: the derived-metric expression language;
//! - [`target`], [`block`], [`quantity`]: the bottom, plain enums.

#![deny(missing_docs)]

pub mod block;
pub mod catalog;
pub mod expression;
pub mod group;
pub mod quantity;
pub mod target;

pub use block::Block;
pub use catalog::{
    Counter, Derived, Dimension, Exactness, by_event, counters, derived, find, find_derived,
};
pub use expression::{Expr, Reduction};
pub use group::{Group, GroupError, Limits};
pub use quantity::Quantity;
pub use target::Target;
