//! Helpers shared by the integration tests of every crate.
//!
//! Artifacts are found next to the running test binary, so any `CARGO_TARGET_DIR` works.
//! The test command builds the whole workspace first (`cargo build --workspace --all-targets`);
//! a missing artifact is reported with that instruction rather than rebuilt from inside a test.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The profile directory (`target/debug`) holding the workspace's artifacts.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let mut dir = exe.parent().expect("test binary has a parent").to_path_buf();
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir.pop();
    }
    dir
}

fn artifact(name: &str) -> PathBuf {
    let p = profile_dir().join(name);
    assert!(
        p.exists(),
        "{} is missing: build the workspace first (`cargo build --workspace --all-targets`)",
        p.display()
    );
    p
}

/// A directory holding vhsa under the runtime's real file name `libhsa-runtime64.so.1`, for
/// `LD_LIBRARY_PATH`.
pub fn vhsa_lib_dir() -> PathBuf {
    let built = artifact("libhsa_runtime64.so");
    let dir = profile_dir().join("vhsa-runtime");
    std::fs::create_dir_all(&dir).expect("create vhsa-runtime dir");
    let link = dir.join("libhsa-runtime64.so.1");
    // Replace atomically so concurrently running tests never see a missing file.
    let tmp = dir.join(format!(".libhsa-runtime64.so.1.{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(&built, &tmp).expect("symlink vhsa");
    std::fs::rename(&tmp, &link).expect("rename vhsa symlink");
    dir
}

/// The kreplay tool library (`libkreplay.so`).
pub fn tool_lib() -> PathBuf {
    artifact("libkreplay.so")
}

/// The `kreplay` command-line binary.
pub fn kreplay_bin() -> PathBuf {
    artifact("kreplay")
}

/// A fresh scratch directory under the profile directory, unique to this process and `tag`.
pub fn scratch_dir(tag: &str) -> PathBuf {
    let dir = profile_dir().join("test-scratch").join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Compiles a C program with the system compiler against the installed HSA headers and links
/// it with vhsa (`-lhsa-runtime64` resolved through [`vhsa_lib_dir`]).
pub fn compile_c(src: &Path, out: &Path, extra: &[&str]) {
    let lib = vhsa_lib_dir();
    let status = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-pthread"])
        .arg(src)
        .arg("-o")
        .arg(out)
        .arg(format!("-L{}", lib.display()))
        .arg("-l:libhsa-runtime64.so.1")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(extra)
        .status()
        .expect("run cc");
    assert!(status.success(), "cc failed on {}", src.display());
}
