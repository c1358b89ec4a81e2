//! Links the emulator with the shared libLLVM of LLVM 22 (its compiled blocks use LLVM's C API
//! through llvm-sys, which links nothing itself). `AMDGPU_EMU_LLVM_CONFIG` names the
//! `llvm-config` to ask; otherwise `llvm-config-22`, then `llvm-config`, on `PATH`.

use std::process::Command;

const MAJOR: &str = "22";

/// What `config` prints for `args`, if it runs.
fn ask(config: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(config).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=AMDGPU_EMU_LLVM_CONFIG");
    println!("cargo:rerun-if-env-changed=PATH");
    let candidates = match std::env::var("AMDGPU_EMU_LLVM_CONFIG") {
        Ok(c) => vec![c],
        Err(_) => vec![format!("llvm-config-{MAJOR}"), "llvm-config".into()],
    };
    let Some(config) = candidates
        .iter()
        .find(|c| ask(c, &["--version"]).is_some_and(|v| v.split('.').next() == Some(MAJOR)))
    else {
        panic!(
            "amdgpu-emu: no LLVM {MAJOR} llvm-config found (tried {}); install llvm-{MAJOR}-dev \
             (Debian) or set AMDGPU_EMU_LLVM_CONFIG to the llvm-config of an LLVM {MAJOR} \
             installation",
            candidates.join(", ")
        );
    };
    let libdir = ask(config, &["--libdir"]).unwrap_or_default();
    let Some(libs) = ask(config, &["--libs", "--link-shared"]) else {
        panic!("amdgpu-emu: `{config} --libs --link-shared` failed: the shared libLLVM is needed");
    };
    println!("cargo:rustc-link-search=native={libdir}");
    for lib in libs.split_whitespace() {
        if let Some(name) = lib.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={name}");
        }
    }
    println!("cargo:rustc-link-arg=-Wl,-rpath,{libdir}");
}
