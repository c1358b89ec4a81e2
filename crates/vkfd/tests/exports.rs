//! vkfd exports exactly the functions of Debian's `libhsakmt.so.1`, each under the version node
//! `HSAKMT_1`, with the same soname, so ROCR binds it in place of the real thunk.

use std::path::PathBuf;
use std::process::Command;

/// `(name, version)` of every defined dynamic symbol of a library, sorted.
fn exports(lib: &std::path::Path) -> Vec<(String, String)> {
    let out = Command::new("nm")
        .args(["-D", "--with-symbol-versions", "--defined-only"])
        .arg(lib)
        .output()
        .expect("run nm");
    assert!(out.status.success(), "nm failed on {}", lib.display());
    let mut v: Vec<(String, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter_map(|s| s.split_once("@@").or_else(|| s.split_once('@')))
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
    v.sort();
    v
}

/// Debian's thunk, as the dynamic loader's cache finds it.
fn debian_thunk() -> PathBuf {
    let out = Command::new("ldconfig")
        .arg("-p")
        .output()
        .expect("run ldconfig -p");
    let text = String::from_utf8_lossy(&out.stdout);
    let path = text
        .lines()
        .find(|l| l.trim_start().starts_with("libhsakmt.so.1 ") && l.contains("x86-64"))
        .and_then(|l| l.split("=>").nth(1))
        .map(|p| PathBuf::from(p.trim()));
    path.unwrap_or_else(|| {
        panic!(
            "Debian's libhsakmt.so.1 is not installed: install libhsakmt1 (scripts/install-deps.sh)"
        )
    })
}

#[test]
fn every_export_of_debians_thunk_under_the_same_version() {
    let ours = test_support::vkfd_lib_dir().join("libhsakmt.so.1");
    let theirs = debian_thunk();
    let mut ours = exports(&ours);
    let theirs = exports(&theirs);
    assert_eq!(
        theirs.len(),
        67,
        "Debian 12's thunk exports 67 functions: {theirs:?}"
    );
    // vkfd's own extension is the one addition.
    assert!(ours.contains(&("vkfd_stats".to_owned(), "VKFD_1".to_owned())));
    ours.retain(|(n, _)| n != "vkfd_stats");
    assert_eq!(ours, theirs);
}

#[test]
fn the_library_carries_the_thunks_soname() {
    let lib = test_support::vkfd_lib_dir().join("libhsakmt.so.1");
    let out = Command::new("readelf")
        .arg("-d")
        .arg(&lib)
        .output()
        .expect("run readelf");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Library soname: [libhsakmt.so.1]"), "{text}");
}
