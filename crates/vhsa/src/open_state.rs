//! Whether the runtime is open: true between the first `hsa_init` and the last `hsa_shut_down`.
//!
//! Set by the lifecycle entries (`api::lifecycle`); every other entry checks it first with
//! [`ensure_open`]. It sits at the bottom so that any layer may read it without importing the
//! lifecycle; the domain modules do not need it.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};

static OPEN: AtomicBool = AtomicBool::new(false);

/// Ok when the runtime is open, `NotInitialized` otherwise.
#[inline]
pub(crate) fn ensure_open() -> Result<()> {
    if OPEN.load(Ordering::Acquire) {
        Ok(())
    } else {
        Err(Error::NotInitialized)
    }
}

/// Marks the runtime open or closed.
pub(crate) fn set_open(open: bool) {
    OPEN.store(open, Ordering::Release);
}
