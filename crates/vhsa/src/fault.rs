//! Fault injection, set through the `vhsa_fault_*` C calls or `VHSA_FAULTS` (read at the first
//! `hsa_init`): `pool_alloc=N;copy_after=A;copy_count=C;symbol_iter=1;symbol_info=1;handler_delay_ms=MS;hang_kernel=NAME`.
//!
//! For the loader: [`symbol_iteration_fails`] tells whether symbol iteration must fail.

use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

static POOL_ALLOC_COUNTDOWN: AtomicU64 = AtomicU64::new(0);
static COPIES: Mutex<(u64, u64)> = Mutex::new((0, 0));
static SYMBOL_ITER: AtomicBool = AtomicBool::new(false);
static SYMBOL_INFO: AtomicBool = AtomicBool::new(false);
static HANDLER_DELAY_MS: AtomicU64 = AtomicU64::new(0);
static HANG: Mutex<Option<String>> = Mutex::new(None);
static HANG_CV: Condvar = Condvar::new();

/// The nth pool allocation from now fails (1 = the next); 0 clears.
pub(crate) fn fail_pool_allocation(nth: u64) {
    POOL_ALLOC_COUNTDOWN.store(nth, Ordering::SeqCst);
}

/// True when this pool allocation must fail (consumes the countdown).
pub(crate) fn pool_allocation_fails() -> bool {
    let mut fail = false;
    let _ = POOL_ALLOC_COUNTDOWN.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
        fail = n == 1;
        if n == 0 { None } else { Some(n - 1) }
    });
    fail
}

/// After `after` more copies succeed, the next `count` copies fail; `count` 0 clears.
pub(crate) fn fail_copies(after: u64, count: u64) {
    *COPIES.lock() = if count == 0 { (0, 0) } else { (after, count) };
}

/// True when this copy must fail (consumes the counters).
pub(crate) fn copy_fails() -> bool {
    let mut c = COPIES.lock();
    if c.1 == 0 {
        return false;
    }
    if c.0 > 0 {
        c.0 -= 1;
        return false;
    }
    c.1 -= 1;
    true
}

/// Makes symbol iteration fail (or succeed again).
pub(crate) fn fail_symbol_iteration(on: bool) {
    SYMBOL_ITER.store(on, Ordering::SeqCst);
}

/// True when `hsa_executable_iterate_*symbols` and the loader's executable iteration must fail
/// with `HSA_STATUS_ERROR`.
pub(crate) fn symbol_iteration_fails() -> bool {
    SYMBOL_ITER.load(Ordering::SeqCst)
}

/// Makes variable address and size queries fail (or succeed again).
pub(crate) fn fail_symbol_info(on: bool) {
    SYMBOL_INFO.store(on, Ordering::SeqCst);
}

/// True when `hsa_executable_symbol_get_info` must fail with `HSA_STATUS_ERROR` for the
/// address and size of variable symbols.
pub(crate) fn symbol_info_fails() -> bool {
    SYMBOL_INFO.load(Ordering::SeqCst)
}

/// Delays each async-handler callback by `ms`; 0 clears.
pub(crate) fn delay_async_handlers(ms: u64) {
    HANDLER_DELAY_MS.store(ms, Ordering::SeqCst);
}

/// The current async-handler delay.
pub(crate) fn handler_delay() -> Duration {
    Duration::from_millis(HANDLER_DELAY_MS.load(Ordering::Relaxed))
}

/// Dispatches of kernel `name` never complete until cleared (`None`).
pub(crate) fn hang_kernel(name: Option<String>) {
    *HANG.lock() = name;
    HANG_CV.notify_all();
}

/// True when a hang is configured at all (fast check for the dispatch path).
static HANG_SET: AtomicBool = AtomicBool::new(false);

/// Blocks while `kernel` is the hung kernel; returns early when `stop()` becomes true.
pub(crate) fn hold_if_hung(kernel: &str, stop: impl Fn() -> bool) {
    if !HANG_SET.load(Ordering::Relaxed) {
        return;
    }
    let mut g = HANG.lock();
    while g.as_deref() == Some(kernel) && !stop() {
        HANG_CV.wait_for(&mut g, Duration::from_millis(50));
    }
}

fn set_hang(name: Option<String>) {
    HANG_SET.store(name.is_some(), Ordering::Relaxed);
    hang_kernel(name);
}

/// Public entry for the C call: updates the fast flag too.
pub(crate) fn set_hang_kernel(name: Option<String>) {
    set_hang(name);
}

/// Why a `VHSA_FAULTS` item was rejected.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FaultSpecError {
    #[error(
        "VHSA_FAULTS: `{0}` is not `key=value`; expected items like pool_alloc=3;copy_count=1 separated by `;`"
    )]
    NotKeyValue(String),
    #[error("VHSA_FAULTS: `{key}` needs an unsigned integer, got `{value}`")]
    NotANumber { key: String, value: String },
    #[error(
        "VHSA_FAULTS: unknown key `{0}`; known keys: pool_alloc, copy_after, copy_count, symbol_iter, symbol_info, handler_delay_ms, hang_kernel"
    )]
    UnknownKey(String),
}

/// Parsed `VHSA_FAULTS`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct FaultSpec {
    pool_alloc: u64,
    copy_after: u64,
    copy_count: u64,
    symbol_iter: bool,
    symbol_info: bool,
    handler_delay_ms: u64,
    hang_kernel: Option<String>,
}

/// Parses a `VHSA_FAULTS` value.
pub(crate) fn parse_spec(value: &str) -> Result<FaultSpec, FaultSpecError> {
    let mut spec = FaultSpec::default();
    for item in value.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| FaultSpecError::NotKeyValue(item.into()))?;
        let (k, v) = (k.trim(), v.trim());
        let num = || {
            v.parse::<u64>().map_err(|_| FaultSpecError::NotANumber {
                key: k.into(),
                value: v.into(),
            })
        };
        match k {
            "pool_alloc" => spec.pool_alloc = num()?,
            "copy_after" => spec.copy_after = num()?,
            "copy_count" => spec.copy_count = num()?,
            "symbol_iter" => spec.symbol_iter = num()? != 0,
            "symbol_info" => spec.symbol_info = num()? != 0,
            "handler_delay_ms" => spec.handler_delay_ms = num()?,
            "hang_kernel" => spec.hang_kernel = Some(v.to_owned()).filter(|s| !s.is_empty()),
            _ => return Err(FaultSpecError::UnknownKey(k.into())),
        }
    }
    Ok(spec)
}

/// Applies `VHSA_FAULTS`, if set; an invalid value is reported once and ignored.
pub(crate) fn load_from_env() {
    let Ok(v) = std::env::var("VHSA_FAULTS") else {
        return;
    };
    match parse_spec(&v) {
        Ok(s) => {
            fail_pool_allocation(s.pool_alloc);
            fail_copies(s.copy_after, s.copy_count);
            fail_symbol_iteration(s.symbol_iter);
            fail_symbol_info(s.symbol_info);
            delay_async_handlers(s.handler_delay_ms);
            set_hang(s.hang_kernel);
        }
        Err(e) => eprintln!("vhsa: {e}. The variable is ignored."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key() {
        let s = parse_spec("pool_alloc=3; copy_after=2;copy_count=1;symbol_iter=1;symbol_info=1;handler_delay_ms=20;hang_kernel=k").unwrap();
        assert_eq!(
            s,
            FaultSpec {
                pool_alloc: 3,
                copy_after: 2,
                copy_count: 1,
                symbol_iter: true,
                symbol_info: true,
                handler_delay_ms: 20,
                hang_kernel: Some("k".into())
            }
        );
    }

    #[test]
    fn rejects_bad_items() {
        assert!(matches!(
            parse_spec("pool_alloc"),
            Err(FaultSpecError::NotKeyValue(_))
        ));
        assert!(matches!(
            parse_spec("pool_alloc=x"),
            Err(FaultSpecError::NotANumber { .. })
        ));
        assert!(matches!(
            parse_spec("bogus=1"),
            Err(FaultSpecError::UnknownKey(_))
        ));
    }

    #[test]
    fn copy_fault_window() {
        fail_copies(1, 2);
        assert!(!copy_fails());
        assert!(copy_fails());
        assert!(copy_fails());
        assert!(!copy_fails());
        fail_copies(0, 0);
    }
}
