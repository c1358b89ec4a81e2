//! The executor vhsa installs: native kernels.
//!
//! A dispatch runs the native kernel whose kernel object it names, or, for the kernel object of
//! a loaded code object's kernel, the native kernel registered under that kernel's name
//! (without `.kd`), whenever it was registered. Other kernel objects have no implementation.

use crate::executor::{DeviceMemory, DispatchFault, DispatchRequest, Executor};
use crate::native::NativeKernel;
use std::cell::Cell;
use std::ffi::c_void;

/// Runs native kernels.
pub(crate) struct NativeExecutor;

thread_local! {
    /// The last kernel object this packet processor resolved, and its kernel.
    static LAST: Cell<Option<(u64, &'static NativeKernel)>> = const { Cell::new(None) };
}

fn resolve(object: u64) -> Option<&'static NativeKernel> {
    if let Some((o, k)) = LAST.get()
        && o == object
    {
        return Some(k);
    }
    let k = crate::native::by_object(object).or_else(|| {
        let sym = crate::executable::kernel_name_of(object)?;
        crate::native::by_object(crate::native::lookup_by_name(&sym)?)
    })?;
    LAST.set(Some((object, k)));
    Some(k)
}

impl Executor for NativeExecutor {
    fn execute(
        &self,
        dispatch: &DispatchRequest<'_>,
        _memory: &dyn DeviceMemory,
    ) -> Result<(), DispatchFault> {
        let k = resolve(dispatch.kernel_object).ok_or(DispatchFault::NoImplementation)?;
        crate::fault::hold_if_hung(&k.name, || dispatch.abandoned());
        let packet: *const _ = dispatch.packet;
        // SAFETY: the registered native function with its own user data and a packet that
        // outlives the call.
        if std::panic::catch_unwind(|| unsafe { (k.function)(packet, k.user_data as *mut c_void) })
            .is_err()
        {
            tracing::error!(
                "native kernel `{}` panicked; the dispatch completes",
                k.name
            );
        }
        Ok(())
    }
}
