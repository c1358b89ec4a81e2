//! Opening and closing the device, the interface version, runtime registration, XNACK mode,
//! clocks, tile configuration and the trap handler.

use super::{OPEN, ensure_open};
use crate::boundary::{guard, out};
use crate::error::Error;
use crate::ffi::*;
use std::ffi::c_void;
use std::sync::atomic::Ordering;

/// The interface version reported: 1.8 (ROCR rejects 0.x below 99 and turns interrupts off
/// for 1.0).
const KFD_VERSION: (u32, u32) = (1, 8);

/// Opens the device (reference counted). No kernel driver is involved.
pub extern "C" fn hsaKmtOpenKFD() -> HSAKMT_STATUS {
    guard("hsaKmtOpenKFD", || {
        crate::init_logging();
        OPEN.fetch_add(1, Ordering::AcqRel);
        Ok(())
    })
}

/// Closes the device; the last close stops every queue and frees every event and allocation,
/// so a later open starts clean.
pub extern "C" fn hsaKmtCloseKFD() -> HSAKMT_STATUS {
    guard("hsaKmtCloseKFD", || {
        ensure_open()?;
        if OPEN.fetch_sub(1, Ordering::AcqRel) == 1 {
            crate::cp::destroy_all();
            crate::dispatch::clear();
            crate::events::clear();
            crate::vm::clear();
            crate::topology::release();
        }
        Ok(())
    })
}

/// The interface version.
///
/// # Safety
///
/// `info` is NULL or writable.
pub unsafe extern "C" fn hsaKmtGetVersion(info: *mut HsaVersionInfo) -> HSAKMT_STATUS {
    guard("hsaKmtGetVersion", || {
        ensure_open()?;
        // SAFETY: the caller's promise.
        let info = unsafe { out(info, "version info") }?;
        *info = HsaVersionInfo {
            KernelInterfaceMajorVersion: KFD_VERSION.0,
            KernelInterfaceMinorVersion: KFD_VERSION.1,
        };
        Ok(())
    })
}

/// Runtime registration for the debugger: not supported, which selects ROCR's non-debugger
/// path.
pub extern "C" fn hsaKmtRuntimeEnable(_r_debug: *mut c_void, _setup_ttmp: bool) -> HSAKMT_STATUS {
    guard("hsaKmtRuntimeEnable", || {
        ensure_open()?;
        Err(Error::NotSupported("debugger runtime registration"))
    })
}

/// Undoes `hsaKmtRuntimeEnable` (nothing to undo).
pub extern "C" fn hsaKmtRuntimeDisable() -> HSAKMT_STATUS {
    guard("hsaKmtRuntimeDisable", || {
        Err(Error::NotSupported("debugger runtime registration"))
    })
}

/// XNACK is off on every node.
///
/// # Safety
///
/// `mode` is NULL or writable.
pub unsafe extern "C" fn hsaKmtGetXNACKMode(mode: *mut HSAint32) -> HSAKMT_STATUS {
    guard("hsaKmtGetXNACKMode", || {
        // SAFETY: the caller's promise.
        *unsafe { out(mode, "XNACK mode") }? = 0;
        Ok(())
    })
}

/// XNACK cannot be switched on.
pub extern "C" fn hsaKmtSetXNACKMode(mode: HSAint32) -> HSAKMT_STATUS {
    guard("hsaKmtSetXNACKMode", || {
        if mode == 0 {
            Ok(())
        } else {
            Err(Error::NotSupported("XNACK"))
        }
    })
}

/// GPU, CPU and system counters: `CLOCK_MONOTONIC` nanoseconds at 1 GHz.
///
/// # Safety
///
/// `counters` is NULL or writable.
pub unsafe extern "C" fn hsaKmtGetClockCounters(
    node: HSAuint32,
    counters: *mut HsaClockCounters,
) -> HSAKMT_STATUS {
    guard("hsaKmtGetClockCounters", || {
        crate::topology::node(node)?;
        // SAFETY: the caller's promise.
        let c = unsafe { out(counters, "clock counters") }?;
        let now = crate::clock::now_ns();
        *c = HsaClockCounters {
            GPUClockCounter: now,
            CPUClockCounter: now,
            SystemClockCounter: now,
            SystemClockFrequencyHz: crate::clock::FREQUENCY_HZ,
        };
        Ok(())
    })
}

/// The address configuration gfx9 reports (the tile tables stay empty).
///
/// # Safety
///
/// `config` is NULL or writable.
pub unsafe extern "C" fn hsaKmtGetTileConfig(
    node: HSAuint32,
    config: *mut HsaGpuTileConfig,
) -> HSAKMT_STATUS {
    guard("hsaKmtGetTileConfig", || {
        crate::topology::node(node)?;
        // SAFETY: the caller's promise.
        let c = unsafe { out(config, "tile config") }?;
        c.NumTileConfigs = 0;
        c.NumMacroTileConfigs = 0;
        c.GbAddrConfig = 0x1000_0444;
        c.NumBanks = 16;
        c.NumRanks = 1;
        Ok(())
    })
}

/// Stores nothing: the emulator reports traps itself, without running the runtime's handler.
pub extern "C" fn hsaKmtSetTrapHandler(
    node: HSAuint32,
    _base: *mut c_void,
    _size: HSAuint64,
    _buffer: *mut c_void,
    _buffer_size: HSAuint64,
) -> HSAKMT_STATUS {
    guard("hsaKmtSetTrapHandler", || {
        crate::topology::node(node)?;
        Ok(())
    })
}
