//! The C edge: panic boundaries and checked conversions of raw pointers from C.
//!
//! Every function installed in the API table or exported by the extension runs its body through
//! [`status_call`] or [`value_call`], so a panic never unwinds into C, and reads its pointer
//! arguments through the helpers here (NULL becomes `HSA_STATUS_ERROR_INVALID_ARGUMENT`).

use crate::error::{Error, Result};
use hsa_abi::ffi::{HSA_STATUS_ERROR, HSA_STATUS_SUCCESS, hsa_status_t};
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `body` inside a panic boundary and maps its result to a status code.
pub(crate) fn status_call(api: &'static str, body: impl FnOnce() -> Result<()>) -> hsa_status_t {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => HSA_STATUS_SUCCESS,
        Ok(Err(e)) => {
            tracing::debug!("{api}: {e}");
            e.status()
        }
        Err(_) => {
            tracing::error!("{api}: internal panic caught at the C boundary");
            HSA_STATUS_ERROR
        }
    }
}

/// Runs `body` inside a panic boundary; `fallback` is returned if it panics.
pub(crate) fn value_call<T>(api: &'static str, fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        tracing::error!("{api}: internal panic caught at the C boundary");
        fallback
    })
}

/// Writes `value` through an out-pointer from C.
pub(crate) fn write_out<T>(ptr: *mut T, value: T, what: &'static str) -> Result<()> {
    if ptr.is_null() {
        return Err(Error::InvalidArgument(what));
    }
    // SAFETY: non-NULL; the C caller guarantees the pointer is valid for a `T` (unaligned
    // writes are tolerated).
    unsafe { ptr.write_unaligned(value) };
    Ok(())
}

/// Reads a `T` that C passed by pointer (an input struct).
pub(crate) fn read_in<T: Copy>(ptr: *const T, what: &'static str) -> Result<T> {
    if ptr.is_null() {
        return Err(Error::InvalidArgument(what));
    }
    // SAFETY: non-NULL; the C caller guarantees the pointer is valid for a `T` (unaligned reads
    // are tolerated).
    Ok(unsafe { ptr.read_unaligned() })
}

/// Borrows a NUL-terminated string from C.
pub(crate) fn c_str<'a>(ptr: *const c_char, what: &'static str) -> Result<&'a CStr> {
    if ptr.is_null() {
        return Err(Error::InvalidArgument(what));
    }
    // SAFETY: non-NULL; the C caller guarantees a NUL-terminated string that outlives the call.
    Ok(unsafe { CStr::from_ptr(ptr) })
}

/// Borrows `len` elements from C; a NULL pointer is accepted only when `len` is 0.
pub(crate) fn c_slice<'a, T>(ptr: *const T, len: usize, what: &'static str) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Error::InvalidArgument(what));
    }
    // SAFETY: non-NULL; the C caller guarantees `len` readable elements for the call.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// An attribute value written into a caller's buffer by the `*_get_info` functions.
pub(crate) enum InfoValue<'a> {
    U16(u16),
    U32(u32),
    U64(u64),
    Bool(bool),
    /// A string written as a fixed-size, NUL-padded `char[len]` field.
    Text(&'a str, usize),
    Bytes(Vec<u8>),
}

/// Writes an attribute value into the buffer `value` (checked for NULL).
pub(crate) fn write_info(value: *mut std::ffi::c_void, v: InfoValue<'_>) -> Result<()> {
    if value.is_null() {
        return Err(Error::InvalidArgument("value is NULL"));
    }
    let bytes: Vec<u8> = match v {
        InfoValue::U16(x) => x.to_ne_bytes().to_vec(),
        InfoValue::U32(x) => x.to_ne_bytes().to_vec(),
        InfoValue::U64(x) => x.to_ne_bytes().to_vec(),
        InfoValue::Bool(x) => vec![x as u8],
        InfoValue::Text(s, len) => {
            let mut b = vec![0u8; len];
            let n = s.len().min(len.saturating_sub(1));
            b[..n].copy_from_slice(&s.as_bytes()[..n]);
            b
        }
        InfoValue::Bytes(b) => b,
    };
    // SAFETY: non-NULL; the HSA contract sizes the caller's buffer for the attribute.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), value.cast::<u8>(), bytes.len()) };
    Ok(())
}
