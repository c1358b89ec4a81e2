//! Every fault-injection path, through the C calls and through `VHSA_FAULTS`.

mod c_programs;
use c_programs::*;

#[test]
fn injected_faults_through_the_c_calls() {
    let dir = test_support::scratch_dir("vhsa-faults");
    let exe = program(&dir, "faults");
    let out = run_ok(command(&exe));
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
}

#[test]
fn injected_faults_through_the_environment() {
    let dir = test_support::scratch_dir("vhsa-faults-env");
    let exe = program(&dir, "faults");
    let mut cmd = command(&exe);
    cmd.arg("env")
        .env("VHSA_FAULTS", "pool_alloc=2;copy_after=1;copy_count=1");
    let out = run_ok(cmd);
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
}

#[test]
fn invalid_fault_variable_is_reported_and_ignored() {
    let dir = test_support::scratch_dir("vhsa-faults-bad");
    let exe = program(&dir, "faults");
    let mut cmd = command(&exe);
    cmd.arg("ignored")
        .env("VHSA_FAULTS", "pool_alloc=1;bogus=3");
    let out = run_ok(cmd);
    assert!(stdout(&out).contains("PASS"), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("VHSA_FAULTS: unknown key `bogus`"), "{err}");
    assert_eq!(
        err.matches("VHSA_FAULTS").count(),
        1,
        "reported once:\n{err}"
    );
}
