//! The runtime's error type and its mapping to HSA status codes.

use hsa_abi::ffi::*;

/// Why an API call failed. Mapped to a status code once, at the C edge.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error("the HSA runtime is not initialized: call hsa_init first")]
    NotInitialized,
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    #[error("unknown agent handle {0:#x}")]
    InvalidAgent(u64),
    #[error("unknown region handle {0:#x}")]
    InvalidRegion(u64),
    #[error("unknown memory pool handle {0:#x}")]
    InvalidPool(u64),
    #[error("unknown signal handle {0:#x}")]
    InvalidSignal(u64),
    #[error("unknown ISA handle {0:#x}")]
    InvalidIsa(u64),
    #[error("unknown queue {0:#x}")]
    InvalidQueue(usize),
    #[error("invalid queue creation: {0}")]
    InvalidQueueCreation(&'static str),
    #[error("invalid allocation: {0}")]
    InvalidAllocation(&'static str),
    #[error("out of resources: {0}")]
    OutOfResources(String),
    #[error("image format not supported: {0}")]
    ImageFormatUnsupported(String),
    #[error("image size not supported: {0}")]
    ImageSizeUnsupported(String),
    #[error("image pitch not supported: {0}")]
    ImagePitchUnsupported(String),
    #[error("{0}")]
    Failed(String),
    #[error("operation failed with status {0:#x}")]
    Status(hsa_status_t),
}

impl Error {
    /// The HSA status code the real runtime returns for this failure.
    pub(crate) fn status(&self) -> hsa_status_t {
        match self {
            Error::NotInitialized => HSA_STATUS_ERROR_NOT_INITIALIZED,
            Error::InvalidArgument(_) => HSA_STATUS_ERROR_INVALID_ARGUMENT,
            Error::InvalidAgent(_) => HSA_STATUS_ERROR_INVALID_AGENT,
            Error::InvalidRegion(_) => HSA_STATUS_ERROR_INVALID_REGION,
            Error::InvalidPool(_) => HSA_STATUS_ERROR_INVALID_MEMORY_POOL,
            Error::InvalidSignal(_) => HSA_STATUS_ERROR_INVALID_SIGNAL,
            Error::InvalidIsa(_) => HSA_STATUS_ERROR_INVALID_ISA,
            Error::InvalidQueue(_) => HSA_STATUS_ERROR_INVALID_QUEUE,
            Error::InvalidQueueCreation(_) => HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
            Error::InvalidAllocation(_) => HSA_STATUS_ERROR_INVALID_ALLOCATION,
            Error::OutOfResources(_) => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
            Error::ImageFormatUnsupported(_) => HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED,
            Error::ImageSizeUnsupported(_) => HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED,
            Error::ImagePitchUnsupported(_) => HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED,
            Error::Failed(_) => HSA_STATUS_ERROR,
            Error::Status(s) => *s,
        }
    }
}

/// Result of an internal runtime operation.
pub(crate) type Result<T> = std::result::Result<T, Error>;
