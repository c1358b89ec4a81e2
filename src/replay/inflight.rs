//! `InFlightWork`: what a snapshot of an agent must wait for, as signals.
//!
//! Every packet the tool submits outside a window carries (or is followed by) a tool signal, and
//! every asynchronous copy into an agent's tracked memory carries the application's completion
//! signal. Each is recorded here with the agent it belongs to. The agent-wide drain waits until
//! every entry of its agent is done, reading the signals through the runtime's original entries:
//! it never depends on the runtime's async-handler thread, so a slow or blocked application
//! handler cannot delay or deadlock it.
//!
//! An entry is done when its signal's value is below `below` (1 for a tool signal; for the
//! application's copy signal, the value it had when the copy was submitted minus the copies
//! already counted on that signal). Done entries are dropped by the next drain or insertion;
//! tool signals of entries marked `recycle` go back to the signal pool then.
//!
//! Submissions that are not replayed are not entries: each queue has one counting signal (see
//! [`InFlightWork::add_counter`]), raised by one per submission and lowered by the barrier packet
//! the tool puts after it. The drain waits until the counters of its agent are zero too.

use crate::runtime::Runtime;
use crate::sync::{AtomicU64, Mutex, Ordering};
use hsa_abi::ffi::hsa_signal_t;
use std::time::{Duration, Instant};

/// What an entry stands for, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A packet submitted on a queue (queue id).
    Queue(u64),
    /// Submissions counted by a queue's counting signal (queue id, how many).
    Submissions(u64, i64),
    /// An asynchronous copy or fill of the application into the agent's memory.
    Copy,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    id: u64,
    agent: u64,
    signal: hsa_signal_t,
    below: i64,
    recycle: bool,
    origin: Origin,
}

/// The in-flight work of every agent. The list lock is held only for bookkeeping and signal
/// loads, never across a wait.
#[derive(Debug, Default)]
pub struct InFlightWork {
    entries: Mutex<Vec<Entry>>,
    next_id: AtomicU64,
    /// How many entries are copies, so a signal store can skip the list when there are none.
    copies: AtomicU64,
    /// `(agent, queue id, counting signal)` of every live queue of the tool.
    counters: Mutex<Vec<(u64, u64, hsa_signal_t)>>,
}

/// Reads a signal's value (the runtime's original entry; a fake in unit tests).
pub trait SignalValues {
    /// Current value of `s`.
    fn value(&self, s: hsa_signal_t) -> i64;
    /// Hands a tool signal back to the pool.
    fn recycle(&self, s: hsa_signal_t);
}

/// The runtime's signals and the tool's signal pool.
pub struct RuntimeSignals(pub Runtime);

impl SignalValues for RuntimeSignals {
    fn value(&self, s: hsa_signal_t) -> i64 {
        self.0.signal_load(s)
    }
    fn recycle(&self, s: hsa_signal_t) {
        super::SIGNALS.give_back(s);
    }
}

impl InFlightWork {
    /// Empty.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a tool signal of a packet submitted on queue `queue_id` of `agent`; done when its
    /// value drops below 1. With `recycle`, the drain that sees it done returns it to the pool
    /// (nobody else does); otherwise its completion handler does, after [`InFlightWork::finish`].
    pub fn add_tool_signal(
        &self,
        sig: &dyn SignalValues,
        agent: u64,
        signal: hsa_signal_t,
        queue_id: u64,
        recycle: bool,
    ) -> u64 {
        self.insert(
            sig,
            Entry {
                id: 0,
                agent,
                signal,
                below: 1,
                recycle,
                origin: Origin::Queue(queue_id),
            },
        )
    }

    /// Records an asynchronous copy of the application into `agent`'s memory that completes on
    /// the application's `signal`, whose value was `value_at_submit` just before the copy was
    /// submitted.
    pub fn add_copy(
        &self,
        sig: &dyn SignalValues,
        agent: u64,
        signal: hsa_signal_t,
        value_at_submit: i64,
    ) -> u64 {
        self.insert(
            sig,
            Entry {
                id: 0,
                agent,
                signal,
                below: value_at_submit,
                recycle: false,
                origin: Origin::Copy,
            },
        )
    }

    /// Adds `e` with a fresh id. A copy's `below` arrives as the signal's value at submission and
    /// is lowered by the copies already counted on the same signal for the same agent (a copy
    /// into memory that several agents' snapshots hold is counted once per agent).
    fn insert(&self, sig: &dyn SignalValues, mut e: Entry) -> u64 {
        e.id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut list = self.entries.lock();
        prune(&mut list, sig, None);
        if e.origin == Origin::Copy {
            let counted = list
                .iter()
                .filter(|o| {
                    o.signal.handle == e.signal.handle
                        && o.origin == Origin::Copy
                        && o.agent == e.agent
                })
                .count() as i64;
            // At the latest a copy is done when its signal dropped below 1 (the completion value of
            // HSA signals): an entry left counted because the application reset the signal
            // before a drain saw it drop must not push the new one below every reachable value.
            e.below = e.below.saturating_sub(counted).max(1);
        }
        list.push(e);
        self.count_copies(&list);
        e.id
    }

    fn count_copies(&self, list: &[Entry]) {
        self.copies.store(
            list.iter().filter(|e| e.origin == Origin::Copy).count() as u64,
            Ordering::Relaxed,
        );
    }

    /// Forgets every entry (the runtime instance whose signals they name shut down).
    pub fn forget_all(&self) {
        let mut list = self.entries.lock();
        list.clear();
        self.count_copies(&list);
        self.counters.lock().clear();
    }

    /// Registers the counting signal of queue `queue_id` of `agent`: its value is the number of
    /// the queue's submissions whose closing barrier packet has not completed.
    pub fn add_counter(&self, agent: u64, queue_id: u64, signal: hsa_signal_t) {
        self.counters.lock().push((agent, queue_id, signal));
    }

    /// Forgets the counting signal of a queue being destroyed.
    pub fn remove_counter(&self, signal: hsa_signal_t) {
        self.counters
            .lock()
            .retain(|(_, _, s)| s.handle != signal.handle);
    }

    /// Forgets entry `id` (its completion handler ran). Harmless when a drain dropped it.
    pub fn finish(&self, id: u64) {
        let mut list = self.entries.lock();
        list.retain(|e| e.id != id);
        self.count_copies(&list);
    }

    /// Forgets every copy counted on the application's `signal`: it is being destroyed, or the
    /// application stores a new value into it to use it again, which it does only once it saw
    /// the copies complete (the value they would have lowered is gone, so waiting for it would
    /// wait for nothing).
    pub fn forget_signal(&self, signal: hsa_signal_t) {
        if self.copies.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut list = self.entries.lock();
        list.retain(|e| e.origin != Origin::Copy || e.signal.handle != signal.handle);
        self.count_copies(&list);
    }

    /// Entries of `agent` not done yet (dropping the done ones).
    pub fn outstanding(&self, sig: &dyn SignalValues, agent: u64) -> Vec<Origin> {
        self.outstanding_except(sig, agent, &|_| false)
    }

    /// [`InFlightWork::outstanding`], leaving out the counted submissions of the queues for
    /// which `waits_on_window(queue id)` is true (their work cannot start before the window
    /// ends).
    pub fn outstanding_except(
        &self,
        sig: &dyn SignalValues,
        agent: u64,
        waits_on_window: &dyn Fn(u64) -> bool,
    ) -> Vec<Origin> {
        let mut left: Vec<Origin> = {
            let mut list = self.entries.lock();
            prune(&mut list, sig, Some(agent));
            self.count_copies(&list);
            list.iter()
                .filter(|e| e.agent == agent)
                .map(|e| e.origin)
                .collect()
        };
        for (a, queue, s) in self.counters.lock().iter() {
            if *a != agent || waits_on_window(*queue) {
                continue;
            }
            let n = sig.value(*s);
            if n > 0 {
                left.push(Origin::Submissions(*queue, n));
            }
        }
        left
    }

    /// Waits until every entry of `agent` is done or `deadline` passed. On expiry returns what
    /// is still in flight, as text.
    pub fn drain(
        &self,
        sig: &dyn SignalValues,
        agent: u64,
        deadline: Instant,
    ) -> Result<(), String> {
        self.drain_except(sig, agent, deadline, &|_| false)
    }

    /// [`InFlightWork::drain`] without the queues that wait on the window (see
    /// [`InFlightWork::outstanding_except`]).
    pub fn drain_except(
        &self,
        sig: &dyn SignalValues,
        agent: u64,
        deadline: Instant,
        waits_on_window: &dyn Fn(u64) -> bool,
    ) -> Result<(), String> {
        loop {
            let left = self.outstanding_except(sig, agent, waits_on_window);
            if left.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(describe(&left));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// Drops done entries (of `agent` only, when given), recycling their tool signals.
fn prune(list: &mut Vec<Entry>, sig: &dyn SignalValues, agent: Option<u64>) {
    list.retain(|e| {
        if agent.is_some_and(|a| a != e.agent) || sig.value(e.signal) >= e.below {
            return true;
        }
        if e.recycle {
            sig.recycle(e.signal);
        }
        false
    });
}

/// "queue 3: 2 packet(s), 1 asynchronous copy(ies)".
pub fn describe(left: &[Origin]) -> String {
    let mut queues: Vec<(u64, usize, i64)> = Vec::new();
    let mut copies = 0;
    for o in left {
        let (id, packets, submissions) = match o {
            Origin::Queue(id) => (*id, 1, 0),
            Origin::Submissions(id, n) => (*id, 0, *n),
            Origin::Copy => {
                copies += 1;
                continue;
            }
        };
        match queues.iter_mut().find(|(q, _, _)| *q == id) {
            Some((_, p, s)) => {
                *p += packets;
                *s += submissions;
            }
            None => queues.push((id, packets, submissions)),
        }
    }
    let mut parts: Vec<String> = queues
        .iter()
        .map(|(q, p, s)| match (p, s) {
            (_, 0) => format!("queue {q}: {p} packet(s)"),
            (0, _) => format!("queue {q}: {s} submission(s)"),
            _ => format!("queue {q}: {p} packet(s), {s} submission(s)"),
        })
        .collect();
    if copies > 0 {
        parts.push(format!("{copies} asynchronous copy(ies) or fill(s)"));
    }
    if parts.is_empty() {
        "nothing".to_owned()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[derive(Default)]
    struct Fake {
        values: Mutex<HashMap<u64, i64>>,
        recycled: Mutex<Vec<u64>>,
    }

    impl Fake {
        fn set(&self, h: u64, v: i64) {
            self.values.lock().insert(h, v);
        }
    }

    impl SignalValues for Fake {
        fn value(&self, s: hsa_signal_t) -> i64 {
            self.values.lock().get(&s.handle).copied().unwrap_or(0)
        }
        fn recycle(&self, s: hsa_signal_t) {
            self.recycled.lock().push(s.handle);
        }
    }

    fn sig(h: u64) -> hsa_signal_t {
        hsa_signal_t { handle: h }
    }

    #[test]
    fn a_drain_waits_for_its_agent_only_and_recycles_fences() {
        let f = Fake::default();
        let w = InFlightWork::new();
        f.set(1, 1);
        f.set(2, 1);
        f.set(3, 1);
        w.add_tool_signal(&f, 10, sig(1), 7, true);
        let handled = w.add_tool_signal(&f, 10, sig(2), 7, false);
        w.add_tool_signal(&f, 20, sig(3), 8, false);
        let soon = Instant::now() + Duration::from_millis(5);
        let e = w.drain(&f, 10, soon).unwrap_err();
        assert_eq!(e, "queue 7: 2 packet(s)");
        f.set(1, 0);
        f.set(2, 0);
        assert_eq!(
            w.drain(&f, 10, Instant::now()),
            Ok(()),
            "agent 20's work does not hold agent 10"
        );
        assert_eq!(
            *f.recycled.lock(),
            vec![1],
            "only the drain-owned fence is recycled"
        );
        w.finish(handled);
        assert_eq!(w.outstanding(&f, 20), vec![Origin::Queue(8)]);
    }

    #[test]
    fn copies_sharing_a_signal_are_done_only_when_all_completed() {
        let f = Fake::default();
        let w = InFlightWork::new();
        f.set(5, 2);
        w.add_copy(&f, 1, sig(5), 2);
        w.add_copy(&f, 1, sig(5), 2);
        f.set(5, 1);
        assert_eq!(
            w.outstanding(&f, 1),
            vec![Origin::Copy],
            "one of two copies completed"
        );
        f.set(5, 0);
        assert!(w.outstanding(&f, 1).is_empty());
        // The application waited for a copy, then reset the signal to 1 for the next one before
        // any drain pruned the first: both are done when the second completes.
        f.set(7, 1);
        w.add_copy(&f, 1, sig(7), 1);
        f.set(7, 0);
        f.set(7, 1);
        w.add_copy(&f, 1, sig(7), 1);
        assert_eq!(w.outstanding(&f, 1), vec![Origin::Copy, Origin::Copy]);
        f.set(7, 0);
        assert!(
            w.outstanding(&f, 1).is_empty(),
            "a reset signal does not keep a copy counted forever"
        );
        f.set(6, 1);
        w.add_copy(&f, 1, sig(6), 1);
        w.forget_signal(sig(6));
        assert!(
            w.outstanding(&f, 1).is_empty(),
            "a destroyed signal is never read again"
        );
        assert_eq!(
            describe(&[Origin::Copy, Origin::Queue(2)]),
            "queue 2: 1 packet(s), 1 asynchronous copy(ies) or fill(s)"
        );
    }

    #[test]
    fn a_copy_counted_on_several_agents_completes_on_each() {
        let f = Fake::default();
        let w = InFlightWork::new();
        // A copy into memory that agents 1 and 2 both snapshot: counted once per agent.
        f.set(7, 1);
        w.add_copy(&f, 1, sig(7), 1);
        w.add_copy(&f, 2, sig(7), 1);
        f.set(7, 0);
        assert!(w.outstanding(&f, 1).is_empty());
        assert!(w.outstanding(&f, 2).is_empty());
        // The application stores into its signal to use it again: what was counted is done.
        f.set(8, 1);
        w.add_copy(&f, 1, sig(8), 1);
        w.forget_signal(sig(8));
        assert!(w.outstanding(&f, 1).is_empty());
    }

    #[test]
    fn a_drain_waits_for_the_counting_signals_of_its_agent() {
        let f = Fake::default();
        let w = InFlightWork::new();
        f.set(40, 2);
        f.set(41, 1);
        w.add_counter(10, 3, sig(40));
        w.add_counter(20, 4, sig(41));
        assert_eq!(
            w.drain(&f, 10, Instant::now()).unwrap_err(),
            "queue 3: 2 submission(s)"
        );
        f.set(40, 0);
        assert_eq!(
            w.drain(&f, 10, Instant::now()),
            Ok(()),
            "agent 20's counter does not hold agent 10"
        );
        assert_eq!(w.outstanding(&f, 20), vec![Origin::Submissions(4, 1)]);
        w.remove_counter(sig(41));
        assert!(
            w.outstanding(&f, 20).is_empty(),
            "a destroyed queue's counter is never read again"
        );
        f.set(1, 1);
        w.add_tool_signal(&f, 10, sig(1), 3, true);
        f.set(40, 5);
        assert_eq!(
            w.drain(&f, 10, Instant::now()).unwrap_err(),
            "queue 3: 1 packet(s), 5 submission(s)"
        );
    }
}
