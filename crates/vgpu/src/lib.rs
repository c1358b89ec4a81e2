//! The virtual GPU that both back ends present: vhsa (a virtual HSA runtime) and vkfd (a
//! user-space thunk beneath the real ROCm runtime).
//!
//! - [`model`]: the GPU models (`gfx942`, `gfx90a`, ...) and how a target list such as
//!   `VHSA_AGENTS` selects them, so both back ends describe the same devices;
//! - [`fault`]: the queue error each emulator fault becomes, on both back ends;
//! - [`aql`]: the in-order AQL packet processor, generic over how a back end reaches its ring,
//!   signals and kernels ([`aql::QueueBackend`]);
//! - [`host_memory`]: whether the host can back a large allocation of device memory now;
//! - [`pmc`]: an agent's performance-counter file and the private PM4 payload of the counter
//!   packets the processor executes;
//! - [`user_memory`]: the agent addresses of locked host memory.

#![deny(missing_docs)]

pub mod aql;
pub mod fault;
pub mod host_memory;
pub mod model;
pub mod pmc;
pub mod user_memory;
