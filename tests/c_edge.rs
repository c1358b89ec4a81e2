//! Every bad input of the C API, driven from C (`tests/apps/c_edge.c`, linked with kreplay,
//! built with `-Wall -Wextra -Wpedantic -Werror`) under AddressSanitizer and
//! UndefinedBehaviorSanitizer, on vhsa.

mod common;

use common::*;
use std::process::Command;

const SANITIZERS: &[&str] = &[
    "-Wpedantic",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
];

fn sanitized(c: &mut Command) -> &mut Command {
    c.env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
}

fn assert_clean(err: &str) {
    assert!(
        !err.contains("AddressSanitizer") && !err.contains("runtime error:"),
        "a sanitizer reported an error: {err}"
    );
    assert!(!err.contains("APP FAIL"), "{err}");
}

#[test]
fn bad_values_pointers_sizes_and_counts_are_refused_without_undefined_behaviour() {
    let mut c = command(&app_linked_with("c_edge", SANITIZERS), &[]);
    c.arg("edge");
    sanitized(&mut c);
    let o = run_ok(c);
    let err = stderr(&o);
    assert_clean(&err);
    assert!(
        err.contains("do not fit the replayed queue of 64 packets"),
        "the refused attach is explained once: {err}"
    );
}

#[test]
fn a_library_that_is_only_linked_refuses_registration_as_not_loaded() {
    let mut c = command(&app_linked_with("c_edge", SANITIZERS), &[]);
    c.arg("not-loaded").env_remove("HSA_TOOLS_LIB");
    sanitized(&mut c);
    let err = stderr(&run_ok(c));
    assert_clean(&err);
    assert!(
        err.contains(
            "APP register: this copy of libkreplay.so is not the HSA runtime's active tool"
        ),
        "{err}"
    );
}

#[test]
fn a_client_linked_with_another_copy_than_hsa_tools_lib_names_is_refused_as_not_loaded() {
    let dir = test_support::scratch_dir("c-edge-other-copy");
    let copy = dir.join("libkreplay.so");
    std::fs::copy(test_support::tool_lib(), &copy).expect("copy libkreplay.so");
    let mut c = command(&app_linked_with("c_edge", SANITIZERS), &[]);
    // The runtime loads the copy as its tool; the application calls the copy it linked.
    c.arg("not-loaded").env("HSA_TOOLS_LIB", &copy);
    sanitized(&mut c);
    let err = stderr(&run_ok(c));
    assert_clean(&err);
    assert!(
        err.contains(
            "APP register: this copy of libkreplay.so is not the HSA runtime's active tool"
        ),
        "{err}"
    );
}
