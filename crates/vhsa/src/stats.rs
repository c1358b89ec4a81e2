//! Process-wide counters read through `vhsa_stats`.

use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) static BYTES_H2D: AtomicU64 = AtomicU64::new(0);
pub(crate) static BYTES_D2H: AtomicU64 = AtomicU64::new(0);
pub(crate) static BYTES_D2D: AtomicU64 = AtomicU64::new(0);
pub(crate) static BYTES_H2H: AtomicU64 = AtomicU64::new(0);
pub(crate) static COPIES: AtomicU64 = AtomicU64::new(0);
pub(crate) static DISPATCHES: AtomicU64 = AtomicU64::new(0);
pub(crate) static BARRIERS: AtomicU64 = AtomicU64::new(0);

/// Direction of a copy, from where its source and destination live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    HostToHost,
}

impl Direction {
    /// From "is the source on a device" and "is the destination on a device".
    pub(crate) fn of(src_device: bool, dst_device: bool) -> Self {
        match (src_device, dst_device) {
            (false, true) => Direction::HostToDevice,
            (true, false) => Direction::DeviceToHost,
            (true, true) => Direction::DeviceToDevice,
            (false, false) => Direction::HostToHost,
        }
    }
}

/// Counts one copy that moved `bytes`.
pub(crate) fn count_copy(dir: Direction, bytes: u64) {
    let c = match dir {
        Direction::HostToDevice => &BYTES_H2D,
        Direction::DeviceToHost => &BYTES_D2H,
        Direction::DeviceToDevice => &BYTES_D2D,
        Direction::HostToHost => &BYTES_H2H,
    };
    c.fetch_add(bytes, Ordering::Relaxed);
    COPIES.fetch_add(1, Ordering::Relaxed);
}

/// Resets every counter to zero.
pub(crate) fn reset() {
    for c in [
        &BYTES_H2D,
        &BYTES_D2H,
        &BYTES_D2D,
        &BYTES_H2H,
        &COPIES,
        &DISPATCHES,
        &BARRIERS,
    ] {
        c.store(0, Ordering::Relaxed);
    }
}
