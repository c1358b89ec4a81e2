//! The end-to-end C program `tests/c/e2e.c`, compiled by the system C compiler against the
//! installed HSA headers and `include/vhsa.h`, linked with vhsa, and run on a code object that
//! clang builds from `tests/device/counter.hip`. The program checks every result itself and
//! exits non-zero on the first mismatch (its stderr names it). It runs twice: as built with
//! warnings as errors, and under AddressSanitizer and UndefinedBehaviorSanitizer.

use std::path::Path;
use std::process::Command;

fn run_e2e(tag: &str, extra_cflags: &[&str], env: &[(&str, &str)]) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = test_support::scratch_dir(tag);
    let co = dir.join("counter-gfx942.co");
    test_support::build_code_object(&manifest.join("tests/device/counter.hip"), "gfx942", &co);

    let exe = dir.join("e2e");
    let include = format!("-I{}", manifest.join("include").display());
    let mut flags = vec![include.as_str(), "-Wpedantic"];
    flags.extend_from_slice(extra_cflags);
    test_support::compile_c(&manifest.join("tests/c/e2e.c"), &exe, &flags);

    let out = Command::new(&exe)
        .arg(&co)
        .env_remove("VHSA_AGENTS")
        .env_remove("VHSA_FAULTS")
        .env_remove("HSA_TOOLS_LIB")
        .envs(env.iter().copied())
        .output()
        .expect("run the e2e program");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "e2e ({tag}) failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("e2e: all checks passed"),
        "{stdout}\n{stderr}"
    );
}

#[test]
fn e2e_c_program_runs_on_vhsa() {
    run_e2e("vhsa-e2e", &[], &[]);
}

#[test]
fn e2e_c_program_is_clean_under_sanitizers() {
    // Leak checking is off: the runtime keeps process-lifetime records (native kernels) on
    // purpose; this run is about invalid accesses and undefined behaviour.
    run_e2e(
        "vhsa-e2e-sanitized",
        &["-fsanitize=address,undefined", "-fno-sanitize-recover=all"],
        &[("ASAN_OPTIONS", "detect_leaks=0")],
    );
}
