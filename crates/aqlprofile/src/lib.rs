//! aqlprofile for the virtual GPUs (vhsa, and ROCR on vkfd): the counter half of AMD's
//! `libhsa-amd-aqlprofile64.so`, behind the same two interfaces.
//!
//! - [`v1`]: the functions of the HSA vendor extension `HSA_EXTENSION_AMD_AQLPROFILE`
//!   (`hsa_ven_amd_aqlprofile_*`, a profile described by `hsa_ven_amd_aqlprofile_profile_t`,
//!   the caller's command and output buffers), and [`v1::table`], the extension table;
//! - [`v2`]: the `aqlprofile_*` library API (agents registered by topology, packets created with
//!   the caller's allocation callbacks, results by callback).
//!
//! Both build the packets aqlprofile builds (a vendor-specific AQL packet of format 1 whose PM4
//! `INDIRECT_BUFFER` jumps to a command buffer), with a command buffer holding the private
//! payload of `vgpu::pmc` instead of register writes. The virtual GPU's AQL processor runs them
//! on the agent's counter file. The cdylib `crates/aqlprofile-so` exports these functions under
//! their C names; vhsa links this crate for its extension table.
//!
//! Layers: the entries ([`v1`], [`v2`]) above `profile` (events, samples, buffers, packets,
//! results) and `agents` (what an agent is: target and topology), above `error` (the last
//! error, the panic boundary). Every entry runs inside [`error::guard`]; out-parameters are
//! written only on success.

#![deny(missing_docs)]

mod agents;
pub mod error;
mod profile;
pub mod v1;
pub mod v2;
