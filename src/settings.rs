//! The replay engine's settings, which apply whichever client asks for a replay: the drain
//! bounds (`KREPLAY_DRAIN_TIMEOUT_MS`, `KREPLAY_DRAIN_DECLINE_MS`) and the snapshot engine
//! (`KREPLAY_SNAPSHOT`, `KREPLAY_DEVICE_RESERVE_MB`, `KREPLAY_CHUNK_KB`, `KREPLAY_VERIFY`).
//! Read from the environment once, at load ([`load`]); an invalid value is reported once and
//! declines every replay of the process (each dispatch runs once). Contract: `docs/formats.md`.

use crate::snapshot::settings::{SnapshotMode, SnapshotSettings};
use crate::sync::OnceLock;
use std::time::Duration;

/// An environment variable with a value the tool cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}={value:?} is invalid: {problem}; kreplay replays nothing until it is fixed")]
pub struct ConfigError {
    /// The variable.
    pub variable: &'static str,
    /// Its value.
    pub value: String,
    /// What is wrong and what is expected.
    pub problem: String,
}

/// Bound of every drain when `KREPLAY_DRAIN_TIMEOUT_MS` is unset.
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_millis(60_000);

/// Reads `KREPLAY_DRAIN_TIMEOUT_MS` through `get`: a positive integer of milliseconds; the
/// default when unset. An invalid value is an error (the tool then declines every replay).
pub fn drain_timeout(get: impl Fn(&str) -> Option<String>) -> Result<Duration, ConfigError> {
    let Some(v) = get("KREPLAY_DRAIN_TIMEOUT_MS") else {
        return Ok(DEFAULT_DRAIN_TIMEOUT);
    };
    match v.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
        _ => Err(ConfigError {
            variable: "KREPLAY_DRAIN_TIMEOUT_MS",
            value: v,
            problem: "expected a positive integer of milliseconds".into(),
        }),
    }
}

/// Default of `KREPLAY_DRAIN_DECLINE_MS`.
pub const DEFAULT_DRAIN_DECLINE_MS: u64 = 1000;

/// Reads `KREPLAY_DRAIN_DECLINE_MS` through `get`: how long a replay window waits for the queue
/// drain and the agent-wide drain together before it declines the replay (a positive integer of
/// milliseconds; default [`DEFAULT_DRAIN_DECLINE_MS`]). Applies to every client.
pub fn drain_decline_from_lookup(
    get: impl Fn(&str) -> Option<String>,
) -> Result<std::time::Duration, ConfigError> {
    let Some(v) = get("KREPLAY_DRAIN_DECLINE_MS") else {
        return Ok(std::time::Duration::from_millis(DEFAULT_DRAIN_DECLINE_MS));
    };
    match v.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(std::time::Duration::from_millis(ms)),
        _ => Err(ConfigError {
            variable: "KREPLAY_DRAIN_DECLINE_MS",
            value: v,
            problem: "expected a positive integer of milliseconds".into(),
        }),
    }
}

// ---- Snapshot engine variables --------------------------------------------------------------
//
// Read by every replay, whichever client asked for it: `KREPLAY_SNAPSHOT`,
// `KREPLAY_DEVICE_RESERVE_MB`, `KREPLAY_CHUNK_KB`, `KREPLAY_VERIFY`. An invalid value declines
// every replay of the process (each dispatch runs once).

/// Reads the snapshot engine's settings through `get` (the environment in production).
pub fn snapshot_from_lookup(
    get: impl Fn(&str) -> Option<String>,
) -> Result<SnapshotSettings, ConfigError> {
    let mut s = SnapshotSettings::default();
    if let Some(v) = get("KREPLAY_SNAPSHOT") {
        s.mode = SnapshotMode::parse(&v).ok_or_else(|| ConfigError {
            variable: "KREPLAY_SNAPSHOT",
            value: v.clone(),
            problem: format!("expected one of {}", SnapshotMode::NAMES.join(", ")),
        })?;
    }
    if let Some(v) = get("KREPLAY_DEVICE_RESERVE_MB") {
        let mb = v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|mb| mb.checked_mul(1 << 20).is_some())
            .ok_or_else(|| ConfigError {
                variable: "KREPLAY_DEVICE_RESERVE_MB",
                value: v.clone(),
                problem: "expected a whole number of MiB of device memory to keep free (0 or more)"
                    .into(),
            })?;
        s.device_reserve = Some(mb << 20);
    }
    if let Some(v) = get("KREPLAY_CHUNK_KB") {
        let kb = v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|kb| (4..=1 << 20).contains(kb) && kb % 4 == 0)
            .ok_or_else(|| ConfigError {
                variable: "KREPLAY_CHUNK_KB",
                value: v.clone(),
                problem: "expected a chunk size in KiB, a multiple of 4 from 4 to 1048576".into(),
            })?;
        s.chunk_bytes = kb << 10;
    }
    if let Some(v) = get("KREPLAY_VERIFY") {
        s.verify = match v.trim() {
            "1" => true,
            "0" => false,
            _ => {
                return Err(ConfigError {
                    variable: "KREPLAY_VERIFY",
                    value: v,
                    problem: "expected 0 or 1".into(),
                });
            }
        };
    }
    Ok(s)
}

static SNAPSHOT_SETTINGS: OnceLock<Result<SnapshotSettings, ConfigError>> = OnceLock::new();

/// The snapshot engine's settings from the environment, read once; the error is printed once.
pub fn snapshot_settings() -> &'static Result<SnapshotSettings, ConfigError> {
    SNAPSHOT_SETTINGS.get_or_init(|| {
        snapshot_from_lookup(|k| std::env::var(k).ok()).inspect_err(|e| eprintln!("kreplay: {e}"))
    })
}

/// `KREPLAY_DRAIN_TIMEOUT_MS` as read once: the bound, or the reported error.
static DRAIN_TIMEOUT: OnceLock<Result<Duration, String>> = OnceLock::new();

fn drain_timeout_setting() -> &'static Result<Duration, String> {
    DRAIN_TIMEOUT.get_or_init(|| {
        drain_timeout(|k| std::env::var(k).ok()).map_err(|e| {
            eprintln!("kreplay: {e}");
            e.to_string()
        })
    })
}

/// Reads and validates every engine setting now (at `OnLoad`), so an invalid value is reported
/// early, exactly once.
pub fn load() {
    let _ = drain_timeout_setting();
    let _ = snapshot_settings();
}

/// The bound of every drain (`KREPLAY_DRAIN_TIMEOUT_MS`); the default when the value is invalid
/// (then nothing is replayed, see [`replay_refused`]).
pub fn drain_timeout_bound() -> Duration {
    drain_timeout_setting()
        .clone()
        .unwrap_or(DEFAULT_DRAIN_TIMEOUT)
}

/// Why no dispatch may be replayed in this process, whoever the client: a variable that
/// concerns every replay (`KREPLAY_DRAIN_TIMEOUT_MS`) has an invalid value.
pub fn replay_refused() -> Option<&'static str> {
    drain_timeout_setting().as_ref().err().map(String::as_str)
}

#[cfg(test)]
mod snapshot_tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(pairs: &[(&str, &str)]) -> Result<SnapshotSettings, ConfigError> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        snapshot_from_lookup(|k| m.get(k).cloned())
    }

    #[test]
    fn defaults_and_valid_values() {
        assert_eq!(parse(&[]).unwrap(), SnapshotSettings::default());
        let s = parse(&[
            ("KREPLAY_SNAPSHOT", "host-full"),
            ("KREPLAY_DEVICE_RESERVE_MB", "0"),
            ("KREPLAY_CHUNK_KB", "4"),
            ("KREPLAY_VERIFY", "1"),
        ])
        .unwrap();
        assert_eq!(
            s,
            SnapshotSettings {
                mode: SnapshotMode::HostFull,
                device_reserve: Some(0),
                chunk_bytes: 4096,
                verify: true
            }
        );
        for (name, mode) in [
            ("auto", SnapshotMode::Auto),
            ("device", SnapshotMode::Device),
            ("host", SnapshotMode::Host),
        ] {
            assert_eq!(parse(&[("KREPLAY_SNAPSHOT", name)]).unwrap().mode, mode);
        }
    }

    #[test]
    fn invalid_values_name_the_variable_and_the_choices() {
        for (k, v) in [
            ("KREPLAY_SNAPSHOT", "gpu"),
            ("KREPLAY_DEVICE_RESERVE_MB", "-1"),
            ("KREPLAY_DEVICE_RESERVE_MB", "lots"),
            ("KREPLAY_CHUNK_KB", "6"),
            ("KREPLAY_CHUNK_KB", "0"),
            ("KREPLAY_VERIFY", "yes"),
        ] {
            let e = parse(&[(k, v)]).unwrap_err();
            assert_eq!(e.variable, k);
            assert!(
                e.to_string().contains(k) && e.to_string().contains(v),
                "{e}"
            );
        }
        let e = parse(&[("KREPLAY_SNAPSHOT", "gpu")])
            .unwrap_err()
            .to_string();
        assert!(SnapshotMode::NAMES.iter().all(|n| e.contains(n)), "{e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_timeout_is_positive_milliseconds_or_an_error() {
        let get = |v: &'static str| {
            move |k: &str| (k == "KREPLAY_DRAIN_TIMEOUT_MS").then(|| v.to_owned())
        };
        assert_eq!(drain_timeout(|_| None), Ok(DEFAULT_DRAIN_TIMEOUT));
        assert_eq!(drain_timeout(get("250")), Ok(Duration::from_millis(250)));
        for bad in ["0", "-1", "abc", "", "1.5"] {
            let e = drain_timeout(get(bad)).unwrap_err();
            assert_eq!(e.variable, "KREPLAY_DRAIN_TIMEOUT_MS");
            assert!(
                e.to_string()
                    .contains(&format!("KREPLAY_DRAIN_TIMEOUT_MS={bad:?}")),
                "{e}"
            );
        }
    }

    #[test]
    fn drain_decline_bound() {
        let get = |v: &'static str| {
            move |k: &str| (k == "KREPLAY_DRAIN_DECLINE_MS").then(|| v.to_owned())
        };
        assert_eq!(
            drain_decline_from_lookup(|_| None),
            Ok(std::time::Duration::from_millis(DEFAULT_DRAIN_DECLINE_MS))
        );
        assert_eq!(
            drain_decline_from_lookup(get("250")),
            Ok(std::time::Duration::from_millis(250))
        );
        for bad in ["0", "-5", "soon", ""] {
            let e = drain_decline_from_lookup(get(bad)).unwrap_err();
            assert_eq!(e.variable, "KREPLAY_DRAIN_DECLINE_MS");
            assert!(e.to_string().contains("replays nothing"), "{e}");
        }
    }
}
