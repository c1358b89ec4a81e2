//! The 64-byte kernel descriptor, decoded by the workspace's code-object reader (one decoding
//! for the runtime that reports its sizes and the emulator that starts waves from it).

pub use amdgpu_code_object::KernelDescriptor;
