//! Builds the tool's own device kernel (`src/snapshot/device_hash.hip`) for the supported
//! targets with clang-22 (or `KREPLAY_CLANG`); the code objects are embedded in the library.

use std::path::PathBuf;
use std::process::Command;

const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];

fn main() {
    let src = PathBuf::from("src/snapshot/device_hash.hip");
    println!("cargo:rerun-if-changed={}", src.display());
    println!("cargo:rerun-if-env-changed=KREPLAY_CLANG");
    let clang = std::env::var_os("KREPLAY_CLANG")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("clang-22"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for arch in TARGETS {
        let out = out_dir.join(format!("device_hash-{arch}.co"));
        let result = Command::new(&clang)
            .args(["-x", "hip"])
            .arg(format!("--offload-arch={arch}"))
            .args([
                "--cuda-device-only",
                "--no-gpu-bundle-output",
                "-nogpulib",
                "-nogpuinc",
                "-O3",
            ])
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .output();
        match result {
            Err(e) => panic!(
                "cannot run {} ({e}): the device hashing kernel is built with clang-22 and its AMDGPU target; \
                 install it (scripts/install-deps.sh) or set KREPLAY_CLANG to such a clang",
                clang.display()
            ),
            Ok(o) if !o.status.success() => panic!(
                "{} failed to build {} for {arch}:\n{}",
                clang.display(),
                src.display(),
                String::from_utf8_lossy(&o.stderr)
            ),
            Ok(_) => {}
        }
    }
}
