//! Native kernels: host functions that stand in for device code until an ISA emulator exists.
//!
//! A native kernel's kernel object is the address of a leaked, 64-byte aligned record whose first
//! 64 bytes are a zeroed kernel descriptor, so tools that read a descriptor find one.
//!
//! For the loader: [`lookup_by_name`] gives the kernel object of a registered name and
//! [`for_each`] enumerates them (the built-in executable's KERNEL symbols).

use hsa_abi::ffi::hsa_kernel_dispatch_packet_t;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::ffi::c_void;

/// The C signature of a native kernel.
pub type NativeKernelFn =
    unsafe extern "C" fn(packet: *const hsa_kernel_dispatch_packet_t, user_data: *mut c_void);

/// A registered native kernel.
#[repr(C, align(64))]
pub(crate) struct NativeKernel {
    descriptor: [u8; 64],
    pub(crate) function: NativeKernelFn,
    pub(crate) user_data: usize,
    pub(crate) name: String,
}

struct Registry {
    by_object: HashMap<u64, &'static NativeKernel>,
    by_name: HashMap<String, &'static NativeKernel>,
    order: Vec<&'static NativeKernel>,
}

static REGISTRY: RwLock<Option<Registry>> = RwLock::new(None);

/// Registers a kernel; a second registration of a name replaces the first for name lookups.
pub(crate) fn register(name: &str, function: NativeKernelFn, user_data: *mut c_void) -> u64 {
    let k: &'static NativeKernel = Box::leak(Box::new(NativeKernel {
        descriptor: [0; 64],
        function,
        user_data: user_data as usize,
        name: name.to_owned(),
    }));
    let object = k as *const NativeKernel as u64;
    let mut r = REGISTRY.write();
    let r = r.get_or_insert_with(|| Registry {
        by_object: HashMap::new(),
        by_name: HashMap::new(),
        order: Vec::new(),
    });
    r.by_object.insert(object, k);
    r.by_name.insert(name.to_owned(), k);
    r.order.retain(|o| o.name != name);
    r.order.push(k);
    let _ = k.descriptor;
    object
}

/// The native kernel of a kernel object, if it is one.
pub(crate) fn by_object(object: u64) -> Option<&'static NativeKernel> {
    REGISTRY.read().as_ref()?.by_object.get(&object).copied()
}

/// The kernel object of the native kernel registered under `name`.
pub(crate) fn lookup_by_name(name: &str) -> Option<u64> {
    REGISTRY
        .read()
        .as_ref()?
        .by_name
        .get(name)
        .map(|k| *k as *const NativeKernel as u64)
}

/// Calls `f(name, kernel_object)` for every registered kernel, in registration order.
pub(crate) fn for_each(mut f: impl FnMut(&str, u64)) {
    let list: Vec<&'static NativeKernel> = REGISTRY
        .read()
        .as_ref()
        .map(|r| r.order.clone())
        .unwrap_or_default();
    for k in list {
        f(&k.name, k as *const NativeKernel as u64);
    }
}
