//! Builds the C++ plugin shim against LLVM 22 and links the plugin with the shared libLLVM that
//! clang itself loads, so the plugin and the compiler share one copy of LLVM.
//!
//! `SQTT_LLVM_CONFIG` names the `llvm-config` to use (for example a ROCm LLVM); otherwise
//! `llvm-config-22` and then `llvm-config` are looked up on `PATH`.

use std::process::Command;

const REQUIRED_MAJOR: u32 = 22;

fn run(config: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(config)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run `{config}`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{config} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn major_of(version: &str) -> Option<u32> {
    version.split('.').next()?.trim().parse().ok()
}

/// Finds the llvm-config to build against, or explains what is wrong.
fn find_llvm_config() -> Result<(String, String), String> {
    if let Some(explicit) = std::env::var_os("SQTT_LLVM_CONFIG") {
        let explicit = explicit.to_string_lossy().into_owned();
        let version = run(&explicit, &["--version"]).map_err(|e| {
            format!("SQTT_LLVM_CONFIG={explicit} is not a usable llvm-config ({e}); point it at the llvm-config of an LLVM {REQUIRED_MAJOR} installation")
        })?;
        return match major_of(&version) {
            Some(REQUIRED_MAJOR) => Ok((explicit, version)),
            _ => Err(format!(
                "SQTT_LLVM_CONFIG={explicit} reports LLVM {version}, but the plugin needs LLVM {REQUIRED_MAJOR}.x; point SQTT_LLVM_CONFIG at an LLVM {REQUIRED_MAJOR} llvm-config"
            )),
        };
    }
    let mut seen = Vec::new();
    for candidate in [
        format!("llvm-config-{REQUIRED_MAJOR}"),
        "llvm-config".to_string(),
    ] {
        match run(&candidate, &["--version"]) {
            Ok(version) if major_of(&version) == Some(REQUIRED_MAJOR) => {
                return Ok((candidate, version));
            }
            Ok(version) => seen.push(format!("{candidate} is LLVM {version}")),
            Err(_) => seen.push(format!("{candidate} not found")),
        }
    }
    Err(format!(
        "no LLVM {REQUIRED_MAJOR} llvm-config found ({}); install llvm-{REQUIRED_MAJOR}-dev (Debian) or set SQTT_LLVM_CONFIG to the llvm-config of an LLVM {REQUIRED_MAJOR} installation",
        seen.join(", ")
    ))
}

fn main() {
    println!("cargo:rerun-if-env-changed=SQTT_LLVM_CONFIG");
    println!("cargo:rerun-if-env-changed=PATH");
    println!("cargo:rerun-if-changed=shim/plugin.cpp");

    let (config, version) = match find_llvm_config() {
        Ok(found) => found,
        Err(message) => panic!("sqtt-pass: {message}"),
    };
    let fail = |e: String| -> ! { panic!("sqtt-pass: {e}") };
    let cxxflags = run(&config, &["--cxxflags"]).unwrap_or_else(|e| fail(e));
    let libdir = run(&config, &["--libdir"]).unwrap_or_else(|e| fail(e));
    let libs = run(&config, &["--libs", "--link-shared"]).unwrap_or_else(|e| {
        fail(format!(
            "{e}; the plugin links the shared libLLVM, so the installation must provide it"
        ))
    });

    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file("shim/plugin.cpp")
        .warnings(true)
        .flag_if_supported("-Wno-unused-parameter");
    for flag in cxxflags.split_whitespace() {
        // The LLVM build's own warning and optimisation choices do not apply to the shim.
        if flag.starts_with("-W") || flag.starts_with("-O") || flag.starts_with("-g") {
            continue;
        }
        build.flag(flag);
    }
    build.compile("sqtt_plugin_shim");

    println!("cargo:rustc-link-search=native={libdir}");
    for lib in libs.split_whitespace() {
        if let Some(name) = lib.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={name}");
        }
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{libdir}");
    println!("cargo:rustc-env=SQTT_LLVM_VERSION={version}");
}
