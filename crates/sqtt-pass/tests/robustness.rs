//! Failure handling: host modules untouched, internal errors and bad marker names become
//! compiler errors with a message, never a crash. Build the workspace first.

mod common;

use std::process::Command;

use common::*;

#[test]
fn host_modules_are_untouched() {
    let dir = test_support::scratch_dir("sqtt-host");
    let build = |plugin: bool, out: &str| {
        let mut cmd = Command::new(test_support::device_clang());
        cmd.args(["-c", "-O2"])
            .arg(kernel("host.c"))
            .arg("-o")
            .arg(dir.join(out));
        if plugin {
            cmd.arg(format!(
                "-fpass-plugin={}",
                test_support::sqtt_pass_plugin().display()
            ));
        }
        for v in OPTION_VARS {
            cmd.env_remove(v);
        }
        // Options that would instrument (or be rejected) on a device module.
        cmd.env("SQTT_INSTRUMENT_FUNCTIONS", "1")
            .env("SQTT_INSTRUMENT_MEMORY", "1:0")
            .env("SQTT_SCOPE_CU", "not-hex");
        let o = cmd.output().expect("run clang");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(dir.join(out)).unwrap()
    };
    assert_eq!(build(true, "with.o"), build(false, "without.o"));
}

#[test]
fn internal_errors_become_one_compiler_error() {
    let err = Compile::new("named.hip", "gfx942")
        .env("SQTT_PASS_TEST_PANIC", "1")
        .try_build("panic")
        .unwrap_err();
    assert!(
        err.contains("error: sqtt-pass: internal error: SQTT_PASS_TEST_PANIC is set"),
        "{err}"
    );
    assert_eq!(err.matches("error: sqtt-pass").count(), 1, "{err}");
    assert!(
        !err.contains("PLEASE submit a bug report"),
        "clang must not crash: {err}"
    );
}

#[test]
fn marker_names_must_be_constant() {
    let err = Compile::new("bad_name.hip", "gfx1100")
        .try_build("bad-name")
        .unwrap_err();
    assert!(
        err.contains(
            "the name passed to sqtt_marker_point in _Z15bad_name_kernelPfi is not a string literal"
        ),
        "{err}"
    );
}

#[test]
fn errors_name_the_variable_and_the_fix() {
    let err = Compile::new("named.hip", "gfx942")
        .env("SQTT_SCOPE_CU", "0")
        .try_build("zero-mask")
        .unwrap_err();
    assert!(
        err.contains("SQTT_SCOPE_CU=\"0\" is invalid") && err.contains("use -1 for all"),
        "{err}"
    );
}
