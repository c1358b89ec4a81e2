//! `KREPLAY_HOST_MEMORY`: what a replay does with host memory its dispatch can reach.

use crate::sync::{AtomicU8, LazyLock, Ordering};

/// What a replay does with reachable host and fine-grained memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum HostMemoryPolicy {
    /// Capture it and restore it between passes when that is safe (it fits the process's memory
    /// limits and no writer other than the kernel was seen on it); otherwise decline.
    #[default]
    Snapshot,
    /// Decline every dispatch that can reach host memory.
    Decline,
    /// Replay without restoring it: every pass writes it again. Warned about in the outputs.
    Ignore,
}

impl HostMemoryPolicy {
    /// The names `KREPLAY_HOST_MEMORY` accepts, in order.
    pub const NAMES: [&'static str; 3] = ["snapshot", "decline", "ignore"];

    /// Parses one of [`HostMemoryPolicy::NAMES`].
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "snapshot" => Some(Self::Snapshot),
            "decline" => Some(Self::Decline),
            "ignore" => Some(Self::Ignore),
            _ => None,
        }
    }

    /// The name, as `KREPLAY_HOST_MEMORY` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Snapshot => "snapshot",
            Self::Decline => "decline",
            Self::Ignore => "ignore",
        }
    }
}

/// The policy read from `value` (the variable's value, if set).
pub fn from_env_value(value: Option<&str>) -> Result<HostMemoryPolicy, String> {
    match value {
        None => Ok(HostMemoryPolicy::default()),
        Some(v) => HostMemoryPolicy::parse(v).ok_or_else(|| {
            format!(
                "KREPLAY_HOST_MEMORY={v:?} is not one of {}",
                HostMemoryPolicy::NAMES.join(", ")
            )
        }),
    }
}

/// The process's policy, read once from `KREPLAY_HOST_MEMORY`.
/// An invalid value is reported once on stderr; every replay that meets host memory is then
/// declined with the same message.
pub static POLICY: LazyLock<Result<HostMemoryPolicy, String>> = LazyLock::new(|| {
    let p = from_env_value(std::env::var("KREPLAY_HOST_MEMORY").ok().as_deref());
    if let Err(e) = &p {
        eprintln!("kreplay: {e}");
    }
    p
});

/// The policy chosen through the C API (`kreplay_set_host_memory_policy`): 0 none, else the
/// policy's index in [`HostMemoryPolicy::NAMES`] plus one.
static API_POLICY: AtomicU8 = AtomicU8::new(0);

/// Chooses the policy for replays that start afterwards, over `KREPLAY_HOST_MEMORY` (an
/// invalid value of the variable included).
pub fn set_api(policy: HostMemoryPolicy) {
    let index = HostMemoryPolicy::NAMES
        .iter()
        .position(|n| *n == policy.name())
        .unwrap_or(0);
    API_POLICY.store(index as u8 + 1, Ordering::Relaxed);
}

/// The policy a replay starting now applies: the C API's choice, else the environment's.
pub fn current() -> Result<HostMemoryPolicy, String> {
    match API_POLICY.load(Ordering::Relaxed) {
        0 => POLICY.clone(),
        n => Ok(HostMemoryPolicy::NAMES
            .get(usize::from(n) - 1)
            .and_then(|name| HostMemoryPolicy::parse(name))
            .unwrap_or_default()),
    }
}

/// Where the policy in force was chosen, with its value, as messages name it:
/// `KREPLAY_HOST_MEMORY=decline`, or `kreplay_set_host_memory_policy(KREPLAY_HOST_MEMORY_DECLINE)`.
pub fn setting(policy: HostMemoryPolicy) -> String {
    if API_POLICY.load(Ordering::Relaxed) == 0 {
        format!("KREPLAY_HOST_MEMORY={}", policy.name())
    } else {
        format!(
            "kreplay_set_host_memory_policy(KREPLAY_HOST_MEMORY_{})",
            policy.name().to_uppercase()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_is_the_default_and_bad_values_are_named() {
        assert_eq!(from_env_value(None), Ok(HostMemoryPolicy::Snapshot));
        assert_eq!(
            from_env_value(Some(" ignore ")),
            Ok(HostMemoryPolicy::Ignore)
        );
        assert_eq!(
            from_env_value(Some("decline")),
            Ok(HostMemoryPolicy::Decline)
        );
        let e = from_env_value(Some("all")).unwrap_err();
        assert!(
            e.contains("\"all\"") && e.contains("snapshot, decline, ignore"),
            "{e}"
        );
        for n in HostMemoryPolicy::NAMES {
            assert_eq!(HostMemoryPolicy::parse(n).unwrap().name(), n);
        }
    }
}
