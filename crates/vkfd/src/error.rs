//! The thunk's one error type and its mapping to `HSAKMT_STATUS`, done once at the entry edge.

use crate::ffi::*;

/// Why a thunk call failed.
#[derive(Debug)]
pub(crate) enum Error {
    /// A NULL or out-of-range argument.
    InvalidParameter(&'static str),
    /// An unknown event, queue or memory handle.
    InvalidHandle(String),
    /// A node that does not exist.
    InvalidNode(u32),
    /// Host memory or address space ran out.
    NoMemory(String),
    /// Not provided by the virtual GPU (and not needed by ROCR 5.2).
    NotSupported(&'static str),
    /// The device was not opened (`hsaKmtOpenKFD`).
    NotOpen,
    /// A wait ended without its events being signalled.
    Timeout,
    /// Memory already registered at this address.
    AlreadyRegistered(u64),
    /// Memory never registered at this address.
    NotRegistered(u64),
}

/// The thunk's result.
pub(crate) type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The status the real thunk returns for this kind of failure.
    pub(crate) fn status(&self) -> HSAKMT_STATUS {
        match self {
            Error::InvalidParameter(_) => HSAKMT_STATUS_INVALID_PARAMETER,
            Error::InvalidHandle(_) => HSAKMT_STATUS_INVALID_HANDLE,
            Error::InvalidNode(_) => HSAKMT_STATUS_INVALID_NODE_UNIT,
            Error::NoMemory(_) => HSAKMT_STATUS_NO_MEMORY,
            Error::NotSupported(_) => HSAKMT_STATUS_NOT_SUPPORTED,
            Error::NotOpen => HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED,
            Error::Timeout => HSAKMT_STATUS_WAIT_TIMEOUT,
            Error::AlreadyRegistered(_) => HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED,
            Error::NotRegistered(_) => HSAKMT_STATUS_MEMORY_NOT_REGISTERED,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::InvalidParameter(what) => write!(f, "invalid parameter: {what}"),
            Error::InvalidHandle(what) => write!(f, "invalid handle: {what}"),
            Error::InvalidNode(n) => write!(f, "no node {n} in the virtual topology"),
            Error::NoMemory(what) => write!(f, "out of memory: {what}"),
            Error::NotSupported(what) => write!(f, "not supported by the virtual GPU: {what}"),
            Error::NotOpen => write!(f, "the device is not open (hsaKmtOpenKFD)"),
            Error::Timeout => write!(f, "wait timed out"),
            Error::AlreadyRegistered(a) => write!(f, "memory at {a:#x} is already registered"),
            Error::NotRegistered(a) => write!(f, "no memory registered at {a:#x}"),
        }
    }
}
