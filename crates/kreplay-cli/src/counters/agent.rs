//! The GPU agents counter groups are checked for and listed.

/// A GPU agent as `kreplay info` reports it: its index among all agents, name and topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuAgent {
    /// Index among the runtime's agents (the CPU is usually 0).
    pub index: usize,
    /// Agent name (`gfx90a`).
    pub name: String,
    /// Compute units, shader engines and XCCs, when reported.
    pub topology: Option<[u32; 3]>,
}
