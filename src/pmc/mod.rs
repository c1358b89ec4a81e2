//! Hardware counters over replayed passes: the tool's counter path, the same code on every
//! runtime. The counters asked for come from the environment (`request`); aqlprofile is loaded
//! at run time (`library`: the v2 library, else the v1 extension table); each agent's groups
//! become packet sets (`collector`), attached for one pass each — group `p mod G` on pass `p` —
//! and read at PASS EXIT. The catalog of names, events and limits is `amdgpu_counters`.

pub mod collector;
pub mod library;
pub mod request;

pub use collector::{Collector, PassCounters};
pub use request::PmcRequest;
