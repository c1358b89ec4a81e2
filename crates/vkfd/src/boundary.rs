//! The C edge: one panic boundary for every export and the checked conversions of C pointers.

use crate::error::{Error, Result};
use crate::ffi::*;

/// Runs an export's body: a panic never unwinds into the runtime (it is logged and becomes
/// `HSAKMT_STATUS_ERROR`); an error becomes its status, logged at debug level.
pub(crate) fn guard(name: &str, body: impl FnOnce() -> Result<()>) -> HSAKMT_STATUS {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(())) => HSAKMT_STATUS_SUCCESS,
        Ok(Err(e)) => {
            tracing::debug!("{name}: {e}");
            e.status()
        }
        Err(_) => {
            tracing::error!("{name}: internal error (panic); the call fails");
            HSAKMT_STATUS_ERROR
        }
    }
}

/// An out-parameter: NULL is an invalid parameter.
///
/// # Safety
///
/// A non-NULL `p` points to a writable `T` for the duration of the call.
pub(crate) unsafe fn out<'a, T>(p: *mut T, what: &'static str) -> Result<&'a mut T> {
    // SAFETY: the caller's promise.
    unsafe { p.as_mut() }.ok_or(Error::InvalidParameter(what))
}

/// An input parameter: NULL is an invalid parameter.
///
/// # Safety
///
/// A non-NULL `p` points to a readable `T` for the duration of the call.
pub(crate) unsafe fn input<'a, T>(p: *const T, what: &'static str) -> Result<&'a T> {
    // SAFETY: the caller's promise.
    unsafe { p.as_ref() }.ok_or(Error::InvalidParameter(what))
}

/// An input array of `n` elements: NULL with `n > 0` is an invalid parameter.
///
/// # Safety
///
/// A non-NULL `p` points to `n` readable elements for the duration of the call.
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize, what: &'static str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::InvalidParameter(what));
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}
