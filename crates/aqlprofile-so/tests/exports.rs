//! The built library exports every v1 and v2 function under its C name, carries the soname a v2
//! caller opens, and reports the library major ROCR requires.

use std::ffi::{CString, c_void};

const V1: [&str; 13] = [
    "hsa_ven_amd_aqlprofile_version_major",
    "hsa_ven_amd_aqlprofile_version_minor",
    "hsa_ven_amd_aqlprofile_error_string",
    "hsa_ven_amd_aqlprofile_validate_event",
    "hsa_ven_amd_aqlprofile_start",
    "hsa_ven_amd_aqlprofile_stop",
    "hsa_ven_amd_aqlprofile_read",
    "hsa_ven_amd_aqlprofile_legacy_get_pm4",
    "hsa_ven_amd_aqlprofile_get_info",
    "hsa_ven_amd_aqlprofile_iterate_data",
    "hsa_ven_amd_aqlprofile_iterate_event_ids",
    "hsa_ven_amd_aqlprofile_iterate_event_coord",
    "hsa_ven_amd_aqlprofile_att_marker",
];

const V2: [&str; 10] = [
    "aqlprofile_get_version",
    "aqlprofile_register_agent",
    "aqlprofile_register_agent_info",
    "aqlprofile_validate_pmc_event",
    "aqlprofile_get_pmc_info",
    "aqlprofile_pmc_create_packets",
    "aqlprofile_pmc_delete_packets",
    "aqlprofile_pmc_iterate_data",
    "aqlprofile_iterate_event_ids",
    "aqlprofile_iterate_event_coord",
];

fn open() -> *mut c_void {
    let path = test_support::profile_dir().join("libhsa_amd_aqlprofile64.so");
    assert!(
        path.exists(),
        "{} is missing: build the workspace first (`cargo build --workspace --all-targets`)",
        path.display()
    );
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: dlopen with a NUL-terminated path.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    assert!(!h.is_null(), "cannot load {}", path.display());
    h
}

fn sym(h: *mut c_void, name: &str) -> *mut c_void {
    let c = CString::new(name).unwrap();
    // SAFETY: a live handle and a NUL-terminated name.
    unsafe { libc::dlsym(h, c.as_ptr()) }
}

#[test]
fn every_function_is_exported_and_the_major_is_two() {
    let h = open();
    for name in V1.iter().chain(V2.iter()) {
        assert!(!sym(h, name).is_null(), "{name} is not exported");
    }
    let major = sym(h, "hsa_ven_amd_aqlprofile_version_major");
    // SAFETY: the export has this signature (`crates/aqlprofile/src/v1.rs`).
    let major: extern "C" fn() -> u32 = unsafe { std::mem::transmute(major) };
    assert_eq!(major(), 2);
    let version = sym(h, "aqlprofile_get_version");
    // SAFETY: as above.
    let version: unsafe extern "C" fn(*mut u32, *mut u32, *mut u32, *mut u32) -> u32 =
        unsafe { std::mem::transmute(version) };
    let (mut a, mut b, mut c, mut d) = (9, 9, 9, 9);
    // SAFETY: four writable u32.
    assert_eq!(unsafe { version(&mut a, &mut b, &mut c, &mut d) }, 0);
    assert_eq!((a, d), (1, 0));
}

#[test]
fn the_soname_is_the_versioned_name() {
    let path = test_support::profile_dir().join("libhsa_amd_aqlprofile64.so");
    let out = std::process::Command::new("readelf")
        .arg("-d")
        .arg(&path)
        .output()
        .expect("readelf (binutils) is installed");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Library soname: [libhsa-amd-aqlprofile64.so.1]"),
        "{text}"
    );
}
