//! `ReplayGate`: the per-agent reader/writer lock around replay windows.
//!
//! A replay holds the writer side for its whole window; ordinary dispatches hold the reader
//! side for their submit while a replay service is active. Different agents have different
//! locks, so replays on different GPUs run concurrently.

use crate::sync::RwLock;
use crate::sync::protocol::{self, GateLock};
use std::collections::HashMap;

/// The lock of one agent.
pub type AgentLock = GateLock;
/// Held by a replay window.
pub type WindowGuard = protocol::WriteGuard;
/// Held by an ordinary submit.
pub type SubmitGuard = protocol::ReadGuard;

/// Per-agent locks, created on first use. Thread-safe.
#[derive(Debug, Default)]
pub struct ReplayGate {
    agents: RwLock<HashMap<u64, AgentLock>>,
}

impl ReplayGate {
    /// No agents yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The lock of `agent` (created on first use). Queues keep it so submits skip the map.
    pub fn agent(&self, agent: u64) -> AgentLock {
        if let Some(l) = self.agents.read().get(&agent) {
            return l.clone();
        }
        self.agents
            .write()
            .entry(agent)
            .or_insert_with(protocol::new_gate_lock)
            .clone()
    }

    /// Enters a replay window on `lock` (waits for in-flight submits, blocks new ones).
    pub fn window(lock: &AgentLock) -> WindowGuard {
        protocol::write(lock)
    }

    /// Enters an ordinary submit on `lock`.
    pub fn submit(lock: &AgentLock) -> SubmitGuard {
        protocol::read(lock)
    }

    /// Enters a replay window on `lock`, giving up after `bound` (`None`).
    pub fn window_for(lock: &AgentLock, bound: std::time::Duration) -> Option<WindowGuard> {
        protocol::write_for(lock, bound)
    }

    /// Enters an ordinary submit on `lock`, giving up after `bound` (`None`).
    pub fn submit_for(lock: &AgentLock, bound: std::time::Duration) -> Option<SubmitGuard> {
        protocol::read_for(lock, bound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{Arc, AtomicBool, Ordering};
    use std::time::Duration;

    #[test]
    fn a_window_excludes_submits_on_its_agent_only() {
        let gate = ReplayGate::new();
        let a = gate.agent(1);
        let b = gate.agent(2);
        assert!(Arc::ptr_eq(&a, &gate.agent(1)));
        let w = ReplayGate::window(&a);
        assert!(
            a.try_read().is_none(),
            "a submit on the replaying agent waits"
        );
        assert!(
            b.try_write().is_some(),
            "another agent's replay is not blocked"
        );
        let entered = Arc::new(AtomicBool::new(false));
        let t = {
            let (a, entered) = (a.clone(), entered.clone());
            std::thread::spawn(move || {
                let _s = ReplayGate::submit(&a);
                entered.store(true, Ordering::SeqCst);
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        assert!(!entered.load(Ordering::SeqCst));
        drop(w);
        t.join().unwrap();
        assert!(entered.load(Ordering::SeqCst));
        let _s1 = ReplayGate::submit(&a);
        let _s2 = ReplayGate::submit(&a);
        assert!(
            a.try_write().is_none(),
            "a pending window waits for in-flight submits"
        );
    }
}
