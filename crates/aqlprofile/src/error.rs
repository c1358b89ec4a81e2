//! The last error (`hsa_ven_amd_aqlprofile_error_string`) and the one panic boundary of every
//! entry.

use hsa_abi::ffi::{HSA_STATUS_ERROR, HSA_STATUS_SUCCESS, hsa_status_t};
use std::cell::RefCell;
use std::ffi::{CString, c_char};

/// Why an entry failed: the status it returns and the message the error string gives.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Returned to the caller.
    pub status: hsa_status_t,
    /// Kept as the last error.
    pub message: String,
}

impl Failure {
    /// A failure with `HSA_STATUS_ERROR`.
    pub fn error(message: impl Into<String>) -> Failure {
        Failure {
            status: HSA_STATUS_ERROR,
            message: message.into(),
        }
    }

    /// A failure with `HSA_STATUS_ERROR_INVALID_ARGUMENT`.
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            status: hsa_abi::ffi::HSA_STATUS_ERROR_INVALID_ARGUMENT,
            message: message.into(),
        }
    }
}

thread_local! {
    static LAST: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's last error.
pub fn set_last(message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST.with(|l| *l.borrow_mut() = text);
}

/// This thread's last error; the pointer stays valid until its next failing call.
pub fn last() -> *const c_char {
    LAST.with(|l| l.borrow().as_ptr())
}

/// Runs an entry's body: a failure (or a panic, which never crosses into C) becomes a status
/// and the last error.
pub fn guard(what: &str, body: impl FnOnce() -> Result<(), Failure>) -> hsa_status_t {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(())) => HSA_STATUS_SUCCESS,
        Ok(Err(f)) => {
            set_last(&format!("{what}: {}", f.message));
            f.status
        }
        Err(_) => {
            set_last(&format!("{what}: internal error (panic)"));
            HSA_STATUS_ERROR
        }
    }
}

/// A `&T` from a C pointer that may be NULL.
///
/// # Safety
///
/// A non-null `p` points to a valid `T` for the returned lifetime.
pub unsafe fn arg<'a, T>(p: *const T, name: &str) -> Result<&'a T, Failure> {
    // SAFETY: the caller's promise.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::invalid(format!("{name} is NULL")))
}
