//! Links the library under the soname a v2 caller opens, `libhsa-amd-aqlprofile64.so.1`.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsa-amd-aqlprofile64.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
