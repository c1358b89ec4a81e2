//! What the snapshot engine is told: the store (`KREPLAY_SNAPSHOT`), the device reserve, the
//! chunk size and verify mode (parsed in `crate::settings`; contract: `docs/formats.md`).

use crate::sync::{AtomicBool, Ordering};

/// `KREPLAY_SNAPSHOT`: where snapshots are kept and how much is restored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SnapshotMode {
    /// Device memory of the replaying agent while the budget allows, host memory for the rest;
    /// only changed chunks restored.
    #[default]
    Auto,
    /// Device memory only (a region that does not fit declines the replay); changed chunks.
    Device,
    /// Host memory only (pinned when possible); changed chunks.
    Host,
    /// Host memory, every byte restored between passes (the original engine).
    HostFull,
}

impl SnapshotMode {
    /// The names `KREPLAY_SNAPSHOT` accepts, in order.
    pub const NAMES: [&'static str; 4] = ["auto", "device", "host", "host-full"];

    /// Parses one of [`SnapshotMode::NAMES`].
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "auto" => Some(Self::Auto),
            "device" => Some(Self::Device),
            "host" => Some(Self::Host),
            "host-full" => Some(Self::HostFull),
            _ => None,
        }
    }
}

/// Default chunk size of the changed-chunk restore.
pub const DEFAULT_CHUNK_BYTES: usize = 64 << 10;

/// The engine's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotSettings {
    /// Store and scope.
    pub mode: SnapshotMode,
    /// Device memory kept free for the application; `None` = the default for the pool size
    /// ([`default_reserve`]).
    pub device_reserve: Option<u64>,
    /// Chunk size in bytes.
    pub chunk_bytes: usize,
    /// `KREPLAY_VERIFY=1`: hash after every pass.
    pub verify: bool,
}

impl Default for SnapshotSettings {
    fn default() -> Self {
        Self {
            mode: SnapshotMode::Auto,
            device_reserve: None,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            verify: false,
        }
    }
}

/// Device memory left free by default: an eighth of the pool, at least 1 GiB (never more
/// than the pool).
pub fn default_reserve(pool_bytes: u64) -> u64 {
    (pool_bytes / 8).max(1 << 30).min(pool_bytes)
}

static API_VERIFY: AtomicBool = AtomicBool::new(false);

/// Verify mode set through the C API (`kreplay_set_verify`).
pub fn set_api_verify(on: bool) {
    API_VERIFY.store(on, Ordering::Relaxed);
}

/// True when the C API turned verify mode on.
pub fn api_verify() -> bool {
    API_VERIFY.load(Ordering::Relaxed)
}
