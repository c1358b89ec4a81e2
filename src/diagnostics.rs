//! Logging set up from `KREPLAY_LOG`, and the fatal-error convention of bounded waits.

use std::io::Write as _;

/// Installs the `tracing` subscriber on stderr, filtered by `KREPLAY_LOG` (default `warn`).
/// Idempotent; a subscriber installed by the host process is left alone.
pub fn init_logging() {
    let filter = std::env::var("KREPLAY_LOG").unwrap_or_else(|_| "warn".to_owned());
    let filter = match tracing_subscriber::EnvFilter::try_new(&filter) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("kreplay: KREPLAY_LOG={filter:?} is not a valid log filter ({e}); using `warn`");
            tracing_subscriber::EnvFilter::new("warn")
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
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
