//! The counter rows of the rocpd database: one `rocpd_info_pmc` row per process, agent and
//! counter (with the catalog's event code, block, description and, for a derived metric, its
//! expression), and per pass one row per counter and dimension instance on that pass's event.
//! A counter's rows of the first pass that collected it in a dispatch go to
//! `rocpd_pmc_event`, its rows of later passes to `rocpd_kreplay_pmc_event` (same columns):
//! every rocpd reader then finds each counter once per dispatch in rocpd's table, also those
//! whose `counters_collection` sums a dispatch's rows, and the file's own views read both
//! tables per event, one row per pass. Passes are never added together.

use super::{Database, to_i64};
use crate::run_records::{Dispatch, Pass};
use amdgpu_counters::Target;
use kreplay_records::CounterValue;
use rusqlite::params;
use serde_json::json;
use std::collections::HashSet;

/// What the catalog says of a counter on a target: event code, block, description,
/// expression.
fn catalog_entry(target: Option<Target>, name: &str) -> (Option<i64>, String, String, String) {
    let Some(target) = target else {
        return (None, String::new(), String::new(), String::new());
    };
    if let Some(c) = amdgpu_counters::find(target, name) {
        return (
            Some(i64::from(c.event)),
            c.block.name().to_owned(),
            c.description.to_owned(),
            String::new(),
        );
    }
    match amdgpu_counters::derived(target)
        .iter()
        .find(|d| d.name == name)
    {
        Some(d) => (
            None,
            String::new(),
            d.description.to_owned(),
            d.expression.to_owned(),
        ),
        None => (None, String::new(), String::new(), String::new()),
    }
}

impl Database {
    /// The `rocpd_info_pmc` row of counter `c` on agent row `agent_id` of `d`'s process.
    fn counter_info(
        &mut self,
        d: &Dispatch,
        agent_id: i64,
        c: &CounterValue,
    ) -> rusqlite::Result<i64> {
        let key = (d.pid, agent_id, c.name.clone());
        if let Some(&id) = self.counters.get(&key) {
            return Ok(id);
        }
        let u = &self.id.uuid;
        let (event, block, description, expression) =
            catalog_entry(Target::from_isa_name(&d.agent_name), &c.name);
        let extdata = json!({"exactness": c.exactness, "cross_pass": c.cross_pass});
        self.conn
            .prepare_cached(&format!(r#"INSERT INTO `rocpd_info_pmc{u}` ("nid", "pid", "agent_id", "target_arch", "event_code", "instance_id", "name", "symbol", "description",
                   "long_description", "component", "units", "value_type", "block", "expression", "is_constant", "is_derived", "extdata")
                   VALUES (?1, ?2, ?3, 'GPU', ?4, 0, ?5, ?5, ?6, '', 'rocm', '', 'ABS', ?7, ?8, 0, ?9, ?10)"#))?
            .execute(params![
                self.node,
                to_i64(d.pid),
                agent_id,
                event,
                c.name,
                description,
                block,
                expression,
                c.derived,
                extdata.to_string(),
            ])?;
        let id = self.conn.last_insert_rowid();
        self.counters.insert(key, id);
        Ok(id)
    }

    /// The `rocpd_pmc_event` rows of pass `p` of `d`, on its event `event`: one per counter
    /// and dimension instance (one per counter when the record holds no instances).
    /// `written` holds the counters of `d` already in `rocpd_pmc_event` (from earlier passes).
    pub(super) fn pass_counters(
        &mut self,
        d: &Dispatch,
        p: &Pass,
        event: i64,
        agent_id: i64,
        written: &mut HashSet<String>,
    ) -> rusqlite::Result<()> {
        for c in &p.counters {
            let pmc = self.counter_info(d, agent_id, c)?;
            let u = &self.id.uuid;
            let table = if written.insert(c.name.clone()) {
                "rocpd_pmc_event"
            } else {
                "rocpd_kreplay_pmc_event"
            };
            let mut stmt = self.conn.prepare_cached(&format!(
                r#"INSERT INTO `{table}{u}` ("event_id", "pmc_id", "value", "extdata") VALUES (?1, ?2, ?3, ?4)"#
            ))?;
            if c.instances.is_empty() {
                stmt.execute(params![
                    event,
                    pmc,
                    c.value,
                    json!({"replay_pass": p.pass}).to_string()
                ])?;
            }
            for (i, v) in c.instances.iter().enumerate() {
                stmt.execute(params![
                    event,
                    pmc,
                    v,
                    json!({"replay_pass": p.pass, "instance": i}).to_string()
                ])?;
            }
        }
        Ok(())
    }
}
