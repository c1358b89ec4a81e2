//! Where agents reach host memory the runtime locks (`hsa_amd_memory_lock`, HIP's registered
//! memory): at an address of its own, as a discrete GPU maps user pages at a GPU address apart
//! from the CPU's. HIP keeps a record per address of a registered buffer (`hipHostRegister`
//! enters the agent address and the host address, `hipHostUnregister` removes both), so the two
//! must differ. The agent address is the host address plus [`ALIAS`]: inside the GPU's 48-bit
//! address space, and not canonical on x86-64, so host code that dereferences one by mistake
//! faults instead of reading other memory.

/// The offset from a locked byte's host address to its agent address.
pub const ALIAS: u64 = 1 << 47;

/// The agent address of the locked byte at host address `host`.
pub fn agent_address(host: u64) -> u64 {
    host + ALIAS
}

/// Whether `addr` lies where the agent addresses of locked memory do (whether a lock holds it
/// is the caller's to know).
pub fn is_agent_address(addr: u64) -> bool {
    (ALIAS..2 * ALIAS).contains(&addr)
}

/// The host address of `addr`, an address agents use inside live memory: locked memory's agent
/// addresses lead back to its host bytes; every other address is its own host address.
pub fn host_address(addr: u64) -> u64 {
    if is_agent_address(addr) {
        addr - ALIAS
    } else {
        addr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_addresses_lead_back_to_their_host_bytes() {
        let host = 0x7f12_3456_7000;
        assert!(is_agent_address(agent_address(host)) && !is_agent_address(host));
        assert_eq!(host_address(agent_address(host) + 8), host + 8);
        assert_eq!(host_address(host), host);
    }
}
