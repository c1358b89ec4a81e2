//! Calls the virtual GPU does not provide: the debugger, performance counters, SPM, IPC and
//! graphics interop, SVM and process-VM access. ROCR 5.2 makes these only for features it
//! then reports as unavailable. Each answers `HSAKMT_STATUS_NOT_SUPPORTED`.

use crate::boundary::guard;
use crate::error::Error;
use crate::ffi::*;
use std::ffi::{c_uint, c_void};

macro_rules! not_supported {
    ($( $(#[$doc:meta])* $name:ident ( $($arg:ident : $ty:ty),* ) => $what:literal; )*) => {
        $(
            $(#[$doc])*
            pub extern "C" fn $name($($arg: $ty),*) -> HSAKMT_STATUS {
                $( let _ = $arg; )*
                guard(stringify!($name), || Err(Error::NotSupported($what)))
            }
        )*
    };
}

not_supported! {
    /// Debugger: not provided.
    hsaKmtDbgRegister(_node: HSAuint32) => "debugger";
    /// Debugger: not provided.
    hsaKmtDbgUnregister(_node: HSAuint32) => "debugger";
    /// Debugger: not provided.
    hsaKmtDbgWavefrontControl(_node: HSAuint32, _op: HSA_DBG_WAVEOP, _mode: HSA_DBG_WAVEMODE, _trap: HSAuint32, _msg: *mut HsaDbgWaveMessage) => "debugger";
    /// Debugger: not provided.
    hsaKmtDbgAddressWatch(_node: HSAuint32, _n: HSAuint32, _mode: *mut HSA_DBG_WATCH_MODE, _address: *mut *mut c_void, _mask: *mut HSAuint64, _event: *mut *mut HsaEvent) => "debugger";
    /// Debugger: not provided.
    hsaKmtGetKernelDebugTrapVersionInfo(_major: *mut HSAuint32, _minor: *mut HSAuint32) => "debugger";
    /// Queue debug info: not provided.
    hsaKmtGetQueueInfo(_q: HSA_QUEUEID, _info: *mut HsaQueueInfo) => "queue info";
    /// Graphics interop: not provided.
    hsaKmtMapGraphicHandle(_node: HSAuint32, _device: HSAuint64, _context: HSAuint64, _handle: HSAuint64, _flags: HSAuint64, _va: *mut HSAuint64) => "graphics interop";
    /// Graphics interop: not provided.
    hsaKmtUnmapGraphicHandle(_node: HSAuint32, _va: HSAuint64, _size: HSAuint64) => "graphics interop";
    /// Graphics interop: not provided.
    hsaKmtRegisterGraphicsHandleToNodes(_handle: HSAuint64, _info: *mut HsaGraphicsResourceInfo, _n: HSAuint64, _nodes: *mut HSAuint32) => "graphics interop";
    /// Performance counters: not provided.
    hsaKmtPmcGetCounterProperties(_node: HSAuint32, _props: *mut *mut HsaCounterProperties) => "performance counters";
    /// Performance counters: not provided.
    hsaKmtPmcRegisterTrace(_node: HSAuint32, _n: HSAuint32, _counters: *mut HsaCounter, _root: *mut HsaPmcTraceRoot) => "performance counters";
    /// Performance counters: not provided.
    hsaKmtPmcUnregisterTrace(_node: HSAuint32, _trace: HSATraceId) => "performance counters";
    /// Performance counters: not provided.
    hsaKmtPmcAcquireTraceAccess(_node: HSAuint32, _trace: HSATraceId) => "performance counters";
    /// Performance counters: not provided.
    hsaKmtPmcReleaseTraceAccess(_node: HSAuint32, _trace: HSATraceId) => "performance counters";
    /// Performance counters: not provided.
    hsaKmtPmcStartTrace(_trace: HSATraceId, _buffer: *mut c_void, _size: HSAuint64) => "performance counters";
    /// Performance counters: not provided.
    hsaKmtPmcQueryTrace(_trace: HSATraceId) => "performance counters";
    /// Performance counters: not provided.
    hsaKmtPmcStopTrace(_trace: HSATraceId) => "performance counters";
    /// Cross-process memory access: not provided.
    hsaKmtProcessVMRead(_pid: HSAuint32, _local: *mut HsaMemoryRange, _nl: HSAuint64, _remote: *mut HsaMemoryRange, _nr: HSAuint64, _copied: *mut HSAuint64) => "process VM access";
    /// Cross-process memory access: not provided.
    hsaKmtProcessVMWrite(_pid: HSAuint32, _local: *mut HsaMemoryRange, _nl: HSAuint64, _remote: *mut HsaMemoryRange, _nr: HSAuint64, _copied: *mut HSAuint64) => "process VM access";
    /// IPC: not provided.
    hsaKmtShareMemory(_address: *mut c_void, _size: HSAuint64, _handle: *mut HsaSharedMemoryHandle) => "IPC";
    /// IPC: not provided.
    hsaKmtRegisterSharedHandle(_handle: *const HsaSharedMemoryHandle, _address: *mut *mut c_void, _size: *mut HSAuint64) => "IPC";
    /// IPC: not provided.
    hsaKmtRegisterSharedHandleToNodes(_handle: *const HsaSharedMemoryHandle, _address: *mut *mut c_void, _size: *mut HSAuint64, _n: HSAuint64, _nodes: *mut HSAuint32) => "IPC";
    /// SPM: not provided.
    hsaKmtSPMAcquire(_node: HSAuint32) => "SPM";
    /// SPM: not provided.
    hsaKmtSPMRelease(_node: HSAuint32) => "SPM";
    /// SPM: not provided.
    hsaKmtSPMSetDestBuffer(_node: HSAuint32, _size: HSAuint32, _timeout: *mut HSAuint32, _copied: *mut HSAuint32, _buffer: *mut c_void, _lost: *mut bool) => "SPM";
    /// SVM: not provided.
    hsaKmtSVMSetAttr(_start: *mut c_void, _size: HSAuint64, _n: c_uint, _attrs: *mut HSA_SVM_ATTRIBUTE) => "SVM";
    /// SVM: not provided.
    hsaKmtSVMGetAttr(_start: *mut c_void, _size: HSAuint64, _n: c_uint, _attrs: *mut HSA_SVM_ATTRIBUTE) => "SVM";
}
