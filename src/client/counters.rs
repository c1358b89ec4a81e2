//! The built-in client's hardware counters (`KREPLAY_PMC_GROUPS`): which dispatches collect,
//! what each pass read, and the record fields they fill (each pass's `group` and `counters`,
//! the dispatch's `pmc`). Collection itself is `crate::pmc`.

use crate::abi::{kreplay_dispatch_info_t, kreplay_event_kind_t, kreplay_event_t};
use crate::pmc::{Collector, PassCounters, PmcRequest};
use crate::sync::{Arc, Mutex};
use kreplay_records::{DispatchRecord, PmcStatus};
use std::collections::HashMap;

/// Counter collection of the built-in client.
pub struct ClientCounters {
    request: PmcRequest,
    /// Loaded at the first selected dispatch of a runtime instance (the runtime is active
    /// then), dropped at its end (its packet sets hold that instance's memory).
    collector: Mutex<Option<Arc<Result<Collector, String>>>>,
    dispatches: Mutex<HashMap<u64, DispatchCounters>>,
}

/// What one dispatch's passes collected so far.
#[derive(Default)]
struct DispatchCounters {
    agent: u64,
    /// The pass whose PASS ENTER attached packets, and the group or why not.
    pending: Option<(u32, Result<u64, String>)>,
    /// Per pass run: what it read, or why it read nothing.
    passes: Vec<(u32, Result<PassCounters, String>)>,
}

impl ClientCounters {
    /// Collection of `request`.
    pub fn new(request: PmcRequest) -> Self {
        Self {
            request,
            collector: Mutex::new(None),
            dispatches: Mutex::new(HashMap::new()),
        }
    }

    fn collector(&self) -> Arc<Result<Collector, String>> {
        self.collector
            .lock()
            .get_or_insert_with(|| {
                let c = Collector::load(self.request.clone());
                match &c {
                    Ok(c) => tracing::debug!("counters are read through {}", c.describe()),
                    Err(e) => eprintln!("kreplay: {e}"),
                }
                Arc::new(c)
            })
            .clone()
    }

    /// The collector of this runtime instance, if it was loaded (never loads it).
    fn loaded(&self) -> Option<Arc<Result<Collector, String>>> {
        self.collector.lock().clone()
    }

    /// The runtime instance ends (`OnUnload`, no window open): its packet sets and their
    /// buffers are given back now, while the runtime still runs; the next instance loads
    /// aqlprofile and builds its packets again.
    pub fn end_runtime_instance(&self) {
        let ended = self.collector.lock().take();
        drop(ended);
    }

    /// Counters are collected for `d` (a dispatch the client selected).
    pub fn select(&self, d: &kreplay_dispatch_info_t) {
        let _ = self.collector();
        self.dispatches.lock().insert(
            d.dispatch_id,
            DispatchCounters {
                agent: d.agent_handle,
                ..Default::default()
            },
        );
    }

    /// Whether `d` collects counters (selected, and aqlprofile was found).
    pub fn selected(&self, d: &kreplay_dispatch_info_t) -> bool {
        self.loaded().is_some_and(|c| c.is_ok())
            && self.dispatches.lock().contains_key(&d.dispatch_id)
    }

    /// PASS ENTER attaches the pass's group; PASS EXIT reads it; LOOP STOPPED forgets a pass
    /// that attached and never completed.
    pub fn on_event(&self, e: &kreplay_event_t) {
        // SAFETY: the engine's event; its dispatch pointer is valid during the callback.
        let Some(d) = (unsafe { e.dispatch.as_ref() }) else {
            return;
        };
        let agent = match self.dispatches.lock().get(&d.dispatch_id) {
            Some(dc) => dc.agent,
            None => return,
        };
        let Some(collector) = self.loaded() else {
            return;
        };
        let Ok(collector) = collector.as_ref() else {
            return;
        };
        match e.kind {
            kreplay_event_kind_t::KREPLAY_EVENT_PASS_ENTER => {
                let attached = collector.attach(agent, e.pass);
                if let Some(dc) = self.dispatches.lock().get_mut(&d.dispatch_id) {
                    dc.pending = Some((e.pass, attached));
                }
            }
            kreplay_event_kind_t::KREPLAY_EVENT_PASS_EXIT => {
                let pending = self
                    .dispatches
                    .lock()
                    .get_mut(&d.dispatch_id)
                    .and_then(|dc| dc.pending.take());
                let Some((pass, attached)) = pending.filter(|(p, _)| *p == e.pass) else {
                    return;
                };
                let read = attached.and_then(|g| collector.read(agent, g));
                if let Some(dc) = self.dispatches.lock().get_mut(&d.dispatch_id) {
                    dc.passes.push((pass, read));
                }
            }
            kreplay_event_kind_t::KREPLAY_EVENT_LOOP_STOPPED => {
                if let Some(dc) = self.dispatches.lock().get_mut(&d.dispatch_id) {
                    dc.pending = None;
                }
            }
            _ => {}
        }
    }

    /// Fills the record of a finished dispatch: each pass's group and counters, and `pmc`
    /// (groups collected and missing, and why nothing was collected). Forgets the dispatch.
    /// A dispatch that was not selected is left as it is.
    pub fn finish(&self, record: &mut DispatchRecord) {
        let Some(dc) = self.dispatches.lock().remove(&record.dispatch_id) else {
            return;
        };
        let groups = self.request.groups.len() as u64;
        let mut status = PmcStatus {
            groups,
            ..Default::default()
        };
        let mut collected: Vec<PassCounters> = Vec::new();
        for (pass, read) in dc.passes {
            match read {
                Ok(pc) => {
                    if let Some(p) = record.passes.get_mut(pass as usize) {
                        p.group = Some(pc.group);
                        p.counters = pc.values.clone();
                    }
                    collected.push(pc);
                }
                Err(e) => {
                    status.error.get_or_insert(format!("pass {pass}: {e}"));
                }
            }
        }
        let collector = self.loaded();
        if let Some(Ok(c)) = collector.as_deref() {
            for (g, value) in c.cross_pass(dc.agent, &collected) {
                let last = (0..record.passes.len())
                    .rev()
                    .find(|&i| record.passes[i].group == Some(g));
                if let Some(i) = last {
                    record.passes[i].counters.push(value);
                }
            }
        }
        status.collected = collected.iter().map(|p| p.group).collect();
        status.collected.sort_unstable();
        status.collected.dedup();
        status.missing = (0..groups)
            .filter(|g| !status.collected.contains(g))
            .collect();
        if let Some(Err(e)) = collector.as_deref() {
            status.error = Some(e.clone());
        } else if status.collected.is_empty() && status.error.is_none() {
            status.error = Some(match &record.skipped {
                Some(why) => format!("no pass collected counters ({why})"),
                None => "no pass collected counters".to_owned(),
            });
        }
        record.pmc = Some(status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kreplay_records::{CounterValue, PassRecord};

    fn waves(v: f64) -> CounterValue {
        CounterValue {
            name: "SQ_WAVES".into(),
            value: v,
            instances: vec![v / 2.0, v / 2.0],
            exactness: "exact".into(),
            ..Default::default()
        }
    }

    /// Counters of three groups, with the passes of one dispatch as the engine reported them.
    fn finished(passes: Vec<(u32, Result<PassCounters, String>)>, ran: usize) -> DispatchRecord {
        let request = PmcRequest {
            groups: vec![vec!["SQ_WAVES".into()]; 3],
            cross_pass: false,
        };
        let c = ClientCounters::new(request);
        *c.collector.lock() = Some(Arc::new(Err("no library in unit tests".into())));
        c.dispatches.lock().insert(
            7,
            DispatchCounters {
                agent: 1,
                pending: None,
                passes,
            },
        );
        let mut record = DispatchRecord {
            dispatch_id: 7,
            passes: vec![PassRecord::default(); ran],
            ..Default::default()
        };
        c.finish(&mut record);
        assert!(c.dispatches.lock().is_empty(), "the dispatch is forgotten");
        record
    }

    fn pass(group: u64, value: f64) -> Result<PassCounters, String> {
        Ok(PassCounters {
            group,
            values: vec![waves(value)],
            raw: HashMap::new(),
        })
    }

    #[test]
    fn each_pass_keeps_its_own_values_never_a_sum() {
        let r = finished(
            vec![
                (0, pass(0, 512.0)),
                (1, pass(1, 512.0)),
                (2, pass(2, 512.0)),
            ],
            3,
        );
        for (i, p) in r.passes.iter().enumerate() {
            assert_eq!(p.group, Some(i as u64));
            assert_eq!(p.counters, vec![waves(512.0)], "pass {i}");
        }
        let pmc = r.pmc.unwrap();
        assert_eq!(
            (pmc.groups, pmc.collected, pmc.missing),
            (3, vec![0, 1, 2], vec![])
        );
    }

    #[test]
    fn a_dispatch_that_ran_once_names_the_groups_it_missed() {
        let r = finished(vec![(0, pass(0, 64.0))], 1);
        assert_eq!(r.passes[0].group, Some(0));
        let pmc = r.pmc.unwrap();
        assert_eq!((pmc.collected, pmc.missing), (vec![0], vec![1, 2]));
    }

    #[test]
    fn a_pass_that_read_nothing_says_why() {
        let r = finished(vec![(0, Err("the group needs 9 SQ counters".into()))], 1);
        assert!(r.passes[0].counters.is_empty() && r.passes[0].group.is_none());
        let pmc = r.pmc.unwrap();
        assert_eq!(pmc.missing, [0, 1, 2]);
        assert!(pmc.error.is_some());
    }
}
