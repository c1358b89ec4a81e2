//! Checked conversions of raw pointers received from C. Every `&*ptr` of the C API is here.

use std::ffi::{CStr, c_char};

/// A NULL pointer where one is not allowed, or a struct whose `size` is too small.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PointerError {
    /// The argument was NULL.
    #[error("argument `{0}` is NULL")]
    Null(&'static str),
    /// A count whose byte size does not fit the address space.
    #[error("argument `{0}` has a count whose byte size overflows")]
    TooLarge(&'static str),
    /// The argument is not aligned for its type.
    #[error("argument `{0}` is not aligned for its type")]
    Misaligned(&'static str),
    /// A sized struct declares fewer bytes than the fields the tool reads.
    #[error("argument `{name}` declares size {declared}, at least {needed} is needed")]
    TooSmall {
        /// Argument name.
        name: &'static str,
        /// Its `size` field.
        declared: u64,
        /// Bytes the tool reads.
        needed: u64,
    },
}

/// `&T` from a pointer that must not be NULL.
///
/// # Safety
/// A non-NULL `p` must point to a valid `T` for the lifetime `'a`.
pub unsafe fn try_ref<'a, T>(p: *const T, name: &'static str) -> Result<&'a T, PointerError> {
    if !p.is_null() && !p.is_aligned() {
        return Err(PointerError::Misaligned(name));
    }
    // SAFETY: forwarded caller contract.
    unsafe { p.as_ref() }.ok_or(PointerError::Null(name))
}

/// `&mut T` from a pointer that must not be NULL.
///
/// # Safety
/// A non-NULL `p` must point to a valid, exclusively borrowed `T` for `'a`.
pub unsafe fn try_mut<'a, T>(p: *mut T, name: &'static str) -> Result<&'a mut T, PointerError> {
    if !p.is_null() && !p.is_aligned() {
        return Err(PointerError::Misaligned(name));
    }
    // SAFETY: forwarded caller contract.
    unsafe { p.as_mut() }.ok_or(PointerError::Null(name))
}

/// Reads the leading `u64 size` of a C struct that may grow, checking it covers `needed` bytes.
///
/// # Safety
/// A non-NULL `p` must point to at least 8 readable bytes.
pub unsafe fn declared_size<T>(
    p: *const T,
    name: &'static str,
    needed: usize,
) -> Result<u64, PointerError> {
    if p.is_null() {
        return Err(PointerError::Null(name));
    }
    if !p.is_aligned() {
        return Err(PointerError::Misaligned(name));
    }
    // SAFETY: non-NULL and, by contract, at least 8 readable bytes.
    let declared = unsafe { p.cast::<u64>().read_unaligned() };
    if declared < needed as u64 {
        return Err(PointerError::TooSmall {
            name,
            declared,
            needed: needed as u64,
        });
    }
    Ok(declared)
}

/// A slice from a pointer and a count; NULL is allowed only with count 0.
///
/// # Safety
/// A non-NULL `p` must point to `len` valid `T`s for `'a`.
pub unsafe fn try_slice<'a, T>(
    p: *const T,
    len: usize,
    name: &'static str,
) -> Result<&'a [T], PointerError> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(PointerError::Null(name));
    }
    if !p.is_aligned() {
        return Err(PointerError::Misaligned(name));
    }
    if len
        .checked_mul(std::mem::size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(PointerError::TooLarge(name));
    }
    // SAFETY: forwarded caller contract; the byte size fits `isize`.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Borrows a C string; NULL gives `None`.
///
/// # Safety
/// A non-NULL `p` must be NUL-terminated and live for `'a`.
pub unsafe fn opt_cstr<'a>(p: *const c_char) -> Option<&'a CStr> {
    // SAFETY: forwarded caller contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_and_small_sizes_are_refused() {
        // SAFETY: NULL and a valid local.
        unsafe {
            assert_eq!(
                try_ref::<u32>(std::ptr::null(), "x"),
                Err(PointerError::Null("x"))
            );
            let s: [u64; 2] = [8, 0];
            assert!(matches!(
                declared_size(s.as_ptr(), "s", 16),
                Err(PointerError::TooSmall { declared: 8, .. })
            ));
            assert_eq!(declared_size(s.as_ptr(), "s", 8), Ok(8));
            assert!(
                try_slice::<u8>(std::ptr::null(), 0, "p")
                    .unwrap()
                    .is_empty()
            );
            assert!(try_slice::<u8>(std::ptr::null(), 1, "p").is_err());
            let words = [0u64; 2];
            let odd = words.as_ptr().cast::<u8>().add(1).cast::<u64>();
            assert_eq!(try_ref(odd, "w"), Err(PointerError::Misaligned("w")));
            assert_eq!(
                declared_size(odd, "w", 8),
                Err(PointerError::Misaligned("w"))
            );
            assert_eq!(
                try_slice(words.as_ptr(), usize::MAX / 4, "w"),
                Err(PointerError::TooLarge("w"))
            );
        }
    }
}
