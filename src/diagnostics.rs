//! Logging set up from `KREPLAY_LOG`, and the fatal-error convention of bounded waits.

use std::io::Write as _;

/// The filter when `KREPLAY_LOG` is unset or unusable.
pub const DEFAULT_LOG_FILTER: &str = "warn";

const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];

/// Checks a `KREPLAY_LOG` value: comma-separated directives, each a level (`warn`), a target
/// of this library (`kreplay`, `kreplay::replay`) or `target=level`. `tracing` itself would take
/// any bare word as a target name (`dbug` would enable nothing but a target that does not exist
/// and hide every warning), so a bare word that is not a level or one of ours is refused.
pub fn log_filter(value: &str) -> Result<tracing_subscriber::EnvFilter, String> {
    let directives: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .collect();
    for &directive in &directives {
        let bare = !directive.contains(['=', '[', '{']);
        let ours = directive == "kreplay" || directive.starts_with("kreplay::");
        if bare && !ours && !LEVELS.iter().any(|l| l.eq_ignore_ascii_case(directive)) {
            return Err(format!(
                "`{directive}` is neither a level ({}) nor `target=level`",
                LEVELS.join(", ")
            ));
        }
    }
    tracing_subscriber::EnvFilter::builder()
        .with_regex(false)
        .parse(directives.join(","))
        .map_err(|e| e.to_string())
}

/// Installs the `tracing` subscriber on stderr, filtered by `KREPLAY_LOG` (default `warn`). An
/// unusable value is reported on stderr and the default kept. Runs once per process (each
/// runtime instance's `OnLoad` calls it); a subscriber installed by the host process is left
/// alone.
pub fn init_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let filter = match std::env::var("KREPLAY_LOG") {
            Err(_) => tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER),
            Ok(v) if v.trim().is_empty() => tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER),
            Ok(v) => log_filter(&v).unwrap_or_else(|e| {
                eprintln!("kreplay: KREPLAY_LOG={v:?} is not a valid log filter ({e}); using the default `{DEFAULT_LOG_FILTER}`");
                tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER)
            }),
        };
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_target(false)
            .without_time()
            .try_init();
    });
}

/// Prints a fatal message on stderr and aborts the process.
///
/// Used when a bounded wait inside a replay window expires: continuing would snapshot or restore
/// memory that is still being written.
pub fn fatal(message: &str) -> ! {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "kreplay: fatal: {message}");
    let _ = err.flush();
    std::process::abort()
}

/// The tool's one panic boundary: runs `body`; a panic is caught, logged once as "a panic in
/// `what` was caught", and `on_panic` gives the result instead. Every entry from C (the
/// exports, the interceptors, the runtime's callbacks) runs under it, so no panic crosses an
/// `extern "C"` boundary; client callbacks run under `replay::contract::call_client`, which
/// adds what follows from each callback's panic.
pub fn panic_boundary<R>(what: &str, body: impl FnOnce() -> R, on_panic: impl FnOnce() -> R) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(_) => {
            tracing::error!("a panic in {what} was caught");
            on_panic()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_filters_are_levels_or_directives_and_typos_are_refused() {
        for good in [
            "warn",
            "DEBUG",
            "off",
            "warn,kreplay=debug",
            "kreplay",
            "kreplay::replay=trace",
            "info, kreplay=warn",
        ] {
            assert!(log_filter(good).is_ok(), "{good}");
        }
        for bad in ["dbug", "warn,verbose", "kreplay=dbug", "kreplay=loud"] {
            let e = log_filter(bad).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(log_filter("dbug").unwrap_err().contains("`dbug`"));
    }
}
