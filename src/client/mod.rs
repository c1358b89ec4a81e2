//! The built-in client: configured from the environment when no other client registered by
//! the first dispatch; appends JSON-lines records (see `docs/formats.md`).

pub mod config;
pub mod counters;
pub mod jsonl;
pub mod kernel_descriptor;

use crate::abi::{kreplay_dispatch_info_t, kreplay_event_t};
use crate::replay::contract::{self, ClientOwner, DispatchSummary, ReplayClient};
use crate::sync::{Arc, Mutex, OnceLock};
use config::BuiltinConfig;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write as _;

/// The built-in client's selection from the environment, read and validated once per process.
static SELECTION: OnceLock<Result<Option<BuiltinConfig>, String>> = OnceLock::new();

fn env_config() -> &'static Result<Option<BuiltinConfig>, String> {
    SELECTION.get_or_init(|| {
        config::from_lookup(|k| std::env::var(k).ok()).map_err(|e| {
            eprintln!("kreplay: {e}");
            e.to_string()
        })
    })
}

static TIME_ALL: OnceLock<Result<bool, String>> = OnceLock::new();

/// `KREPLAY_TIME_ALL`, read once.
fn time_all() -> &'static Result<bool, String> {
    TIME_ALL.get_or_init(|| {
        config::time_all_from_lookup(|k| std::env::var(k).ok()).map_err(|e| {
            eprintln!("kreplay: {e}");
            e.to_string()
        })
    })
}

/// Reads and validates the environment once (at `OnLoad`), so an invalid value is reported
/// early, exactly once.
pub fn check_env() {
    let _ = env_config();
    if let Ok(Some(cfg)) = env_config() {
        let _ = time_all();
        if let Some(pmc) = cfg
            .pmc
            .as_ref()
            .filter(|p| p.groups.len() > cfg.passes as usize)
        {
            eprintln!(
                "kreplay: KREPLAY_PASSES={} with {} counter groups: pass p collects group p mod {}, so groups {}..{} are \
                 never collected (each dispatch's record lists them as missing); set KREPLAY_PASSES to at least {}",
                cfg.passes,
                pmc.groups.len(),
                pmc.groups.len(),
                cfg.passes,
                pmc.groups.len() - 1,
                pmc.groups.len()
            );
        }
    }
}

/// Registers the built-in client when `KREPLAY_PASSES` is set and valid and no client exists.
/// One built-in client serves every runtime instance of the process (its occurrence counts and
/// records file continue across `hsa_shut_down`/`hsa_init`).
pub fn install_from_env() {
    if let (Ok(Some(cfg)), Ok(time_all)) = (env_config(), time_all()) {
        let client = BUILTIN
            .get_or_init(|| {
                let mut client = BuiltinClient::new(cfg.clone());
                client.time_all = *time_all;
                Arc::new(client)
            })
            .clone();
        let _ = contract::register_as(client, ClientOwner::Builtin);
    }
}

static BUILTIN: OnceLock<Arc<BuiltinClient>> = OnceLock::new();

/// The runtime instance ends (`OnUnload`): the built-in client gives back what it holds of it
/// (the counter packet sets and their buffers).
pub fn end_runtime_instance() {
    if let Some(counters) = BUILTIN.get().and_then(|c| c.counters.as_ref()) {
        counters.end_runtime_instance();
    }
}

/// Flushes the built-in client's records (at `OnUnload`).
pub fn flush() {
    if let Some(c) = BUILTIN.get()
        && let Some(f) = c.out.lock().as_mut()
    {
        let _ = f.sync_data();
    }
}

/// The environment-configured client.
pub struct BuiltinClient {
    cfg: BuiltinConfig,
    occurrences: Mutex<HashMap<String, u64>>,
    filtered: Mutex<HashSet<u64>>,
    launches: Mutex<HashMap<u64, jsonl::Launch>>,
    /// Kernel descriptor facts per (agent, kernel object), read once each.
    symbols: Mutex<HashMap<(u64, u64), Option<kreplay_records::KernelSymbol>>>,
    out: Mutex<Option<File>>,
    out_failed: crate::sync::OnceFlag,
    /// `KREPLAY_TIME_ALL=1`: dispatches not replayed are timed.
    pub time_all: bool,
    /// Hardware counters (`KREPLAY_PMC_GROUPS`).
    counters: Option<counters::ClientCounters>,
}

impl BuiltinClient {
    /// A client with `cfg`.
    pub fn new(cfg: BuiltinConfig) -> Self {
        Self {
            counters: cfg.pmc.clone().map(counters::ClientCounters::new),
            cfg,
            occurrences: Mutex::default(),
            filtered: Mutex::default(),
            launches: Mutex::default(),
            symbols: Mutex::default(),
            out: Mutex::new(None),
            out_failed: crate::sync::OnceFlag::new(),
            time_all: false,
        }
    }

    /// The descriptor facts of `kernel_object` on `agent`, read from the loader once.
    fn symbol(&self, agent: u64, kernel_object: u64) -> Option<kreplay_records::KernelSymbol> {
        if let Some(known) = self.symbols.lock().get(&(agent, kernel_object)) {
            return *known;
        }
        let read = crate::runtime::Runtime::get()
            .and_then(|rt| kernel_descriptor::read(rt, agent, kernel_object));
        self.symbols.lock().insert((agent, kernel_object), read);
        read
    }

    /// Whether the kernel's occurrence is replayed (advances the per-name counter).
    pub fn selects(&self, name: Option<&str>) -> bool {
        let n = name.unwrap_or("");
        if let Some(inc) = &self.cfg.include
            && (name.is_none() || !inc.is_match(n))
        {
            return false;
        }
        if let Some(exc) = &self.cfg.exclude
            && name.is_some()
            && exc.is_match(n)
        {
            return false;
        }
        let mut occ = self.occurrences.lock();
        let c = occ.entry(n.to_owned()).or_insert(0);
        let k = *c;
        *c += 1;
        self.cfg.ranges.as_ref().is_none_or(|r| r.contains(k))
    }

    fn append(&self, text: &str) {
        let Some(dir) = &self.cfg.output_dir else {
            return;
        };
        let mut out = self.out.lock();
        if out.is_none() {
            let path = dir.join(format!("kreplay-{}.jsonl", std::process::id()));
            let opened = std::fs::create_dir_all(dir).and_then(|_| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
            });
            match opened {
                Ok(f) => *out = Some(f),
                Err(e) => {
                    if self.out_failed.first() {
                        eprintln!(
                            "kreplay: cannot open {} for records ({e}); check KREPLAY_OUTPUT_DIR",
                            path.display()
                        );
                    }
                    return;
                }
            }
        }
        if let Some(f) = out.as_mut()
            && let Err(e) = f.write_all(text.as_bytes()).and_then(|_| f.sync_data())
            && self.out_failed.first()
        {
            eprintln!("kreplay: writing records failed ({e}); check KREPLAY_OUTPUT_DIR");
        }
    }
}

impl ReplayClient for BuiltinClient {
    fn pass_count(&self, d: &kreplay_dispatch_info_t) -> u32 {
        if self.cfg.output_dir.is_some() {
            let launch = jsonl::Launch {
                symbol: self.symbol(d.agent_handle, d.kernel_object),
                ..jsonl::Launch::of(d)
            };
            self.launches.lock().insert(d.dispatch_id, launch);
        }
        // SAFETY: the tool's own dispatch info; the name is NUL-terminated or NULL.
        let name = unsafe { crate::ffi::opt_cstr(d.kernel_name) }.map(|c| c.to_string_lossy());
        if self.selects(name.as_deref()) {
            if let Some(c) = &self.counters {
                c.select(d);
            }
            self.cfg.passes
        } else {
            if self.cfg.output_dir.is_some() {
                self.filtered.lock().insert(d.dispatch_id);
            }
            1
        }
    }

    fn reads_summaries(&self) -> bool {
        self.cfg.output_dir.is_some()
    }

    fn has_events(&self) -> bool {
        self.counters.is_some()
    }

    fn on_event(&self, e: &kreplay_event_t) {
        if let Some(c) = &self.counters {
            c.on_event(e);
        }
    }

    /// A selected dispatch collects counters even when it runs once.
    fn pass_events_always(&self, d: &kreplay_dispatch_info_t) -> bool {
        self.counters.as_ref().is_some_and(|c| c.selected(d))
    }

    fn times_ordinary_dispatches(&self) -> bool {
        self.time_all
    }

    fn dispatch_done(&self, s: &DispatchSummary) {
        let filtered = self.filtered.lock().remove(&s.dispatch_id);
        let launch = self.launches.lock().remove(&s.dispatch_id);
        let mut record = jsonl::dispatch_record(std::process::id(), s, filtered, launch.as_ref());
        if let Some(c) = &self.counters {
            c.finish(&mut record);
        }
        if self.cfg.output_dir.is_some() {
            self.append(&record.lines());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(pairs: &[(&str, &str)]) -> BuiltinClient {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        BuiltinClient::new(config::from_lookup(|k| m.get(k).cloned()).unwrap().unwrap())
    }

    #[test]
    fn filters_then_counts_occurrences_per_kernel() {
        let c = client(&[
            ("KREPLAY_PASSES", "3"),
            ("KREPLAY_KERNEL_INCLUDE", "^inc"),
            ("KREPLAY_KERNEL_EXCLUDE", "skip"),
            ("KREPLAY_KERNEL_ITERATION_RANGE", "[1-2]"),
        ]);
        let seq = ["inc", "inc", "other", "inc_skip", "inc", "inc", "inc2"];
        let got: Vec<bool> = seq.iter().map(|n| c.selects(Some(n))).collect();
        assert_eq!(got, vec![false, true, false, false, true, false, false]);
        assert!(
            !c.selects(None),
            "an unknown name never matches an include filter"
        );
    }
}
