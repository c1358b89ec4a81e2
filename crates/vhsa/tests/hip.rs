//! Debian's HIP 5.2 runtime (`libamdhip64`) on vhsa: HIP programs of our own
//! (`tests/hip/*.hip`, built with `hipcc --offload-arch=gfx90a`) check their own results and
//! print PASS. Every kernel runs on vhsa's emulator, with no native stand-in: the programs' own
//! kernels and ROCclr's blit kernels behind device-to-device copies, memsets and image copies
//! (compiled by comgr at run time).

mod c_programs;
use c_programs::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// Builds `tests/hip/<name>.hip` for gfx90a once per test binary (hipcc is slow).
fn hip_program(name: &str) -> PathBuf {
    hip_program_for(name, "gfx90a")
}

/// Builds `tests/hip/<name>.hip` for `arch` once per test binary; later calls reuse it.
fn hip_program_for(name: &str, arch: &str) -> PathBuf {
    type Builds = Mutex<HashMap<(String, String), Arc<OnceLock<PathBuf>>>>;
    static BUILT: OnceLock<Builds> = OnceLock::new();
    let key = (name.to_owned(), arch.to_owned());
    let cell = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(key)
        .or_default()
        .clone();
    cell.get_or_init(|| {
        let tag = arch.replace(':', "_");
        let dir = test_support::scratch_dir(&format!("vhsa-hip-{name}-{tag}"));
        let exe = dir.join(name);
        test_support::build_hip_program(name, arch, &exe);
        exe
    })
    .clone()
}

fn hip_command(exe: &Path, agents: &str) -> Command {
    let mut c = command(exe);
    c.env("VHSA_AGENTS", agents)
        .env("LD_LIBRARY_PATH", test_support::vhsa_lib_dir());
    c.env_remove("AMD_LOG_LEVEL")
        .env_remove("HIP_VISIBLE_DEVICES")
        .env_remove("ROCR_VISIBLE_DEVICES");
    c
}

fn passes(exe: &Path, agents: &str, extra_env: &[(&str, &str)]) -> String {
    let mut c = hip_command(exe, agents);
    for (k, v) in extra_env {
        c.env(k, v);
    }
    let out = stdout(&run_ok(c));
    assert!(out.lines().any(|l| l == "PASS"), "{out}");
    out
}

#[test]
fn device_count_and_properties_match_the_agent() {
    let exe = hip_program("device_props");
    let out = passes(&exe, "gfx90a", &[]);
    assert!(
        out.contains("device 0: AMD Instinct MI250X (virtual) gfx90a:sramecc+:xnack-"),
        "{out}"
    );
    // Every symbol HIP imports is bound at load time.
    passes(&exe, "gfx90a", &[("LD_BIND_NOW", "1")]);
    // Two agents: two devices.
    let out = passes(&exe, "gfx90a,gfx90a", &[]);
    assert!(out.contains("device 1: "), "{out}");
}

#[test]
fn hip_refuses_targets_it_does_not_support() {
    let exe = hip_program("device_props");
    let out = hip_command(&exe, "gfx942").output().expect("run");
    assert!(
        !out.status.success(),
        "HIP 5.2 accepts only gfx90a and gfx908:\n{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("hipGetDeviceCount(&count) failed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn memory_allocation_copies_memsets_and_symbols() {
    passes(&hip_program("memory"), "gfx90a", &[]);
}

#[test]
fn kernels_events_stream_ordered_allocation_and_graphs() {
    passes(&hip_program("streams"), "gfx90a", &[]);
}

#[test]
fn device_printf_through_the_hostcall_buffer() {
    let out = passes(&hip_program("printf"), "gfx90a", &[]);
    for i in 0..6 {
        let line = format!("item {i} of grid: {} {:.2}", 100 + i, 0.5 * i as f32);
        assert!(out.lines().any(|l| l == line), "no `{line}` in:\n{out}");
    }
}

/// Device `malloc`/`free`: the kernel writes memory HIP's host-call listener allocated while
/// the dispatch ran (it faulted as outside the dispatch's memory before).
#[test]
fn device_malloc_reaches_memory_allocated_while_the_kernel_runs() {
    passes(&hip_program("device_malloc"), "gfx90a", &[]);
}

/// AMD's libraries on the emulator, each result checked on the host: rocPRIM's reduce, scans and
/// radix sorts, rocRAND's generators (Philox bit-exact against the algorithm), rocSPARSE's
/// csrmv, csrsv, csrilu0, gtsv and csr2csc.
#[test]
fn amd_library_kernels_give_the_host_results() {
    let out = passes(&hip_program("libraries"), "gfx90a", &[]);
    assert!(
        out.contains("rocrand philox4x32_10 65536 values bit-exact: ok"),
        "{out}"
    );
}

/// The device math library (ocml) against the host's libm in higher precision, float and
/// double, over each function's domain and its special values; double sine and cosine of huge
/// arguments take the long argument reduction (`v_trig_preop_f64`).
#[test]
fn device_math_functions_stay_within_their_bounds() {
    let out = passes(&hip_program("math"), "gfx90a", &[]);
    let checked = out.lines().filter(|l| l.contains(" ulp (bound ")).count();
    assert!(checked >= 71, "{checked} functions checked:\n{out}");
    assert!(out.contains("integers 0 of 32768 results differ"), "{out}");
}

/// Pitched memory, arrays, texture and surface objects on vhsa's image extension: HIP reports
/// image support, ROCclr's image blit kernels fill and read the arrays, and the program's
/// kernels sample, fetch and store through MIMG and buffer-format instructions on the emulator.
#[test]
fn pitched_memory_arrays_textures_and_surfaces() {
    let out = passes(&hip_program("texture"), "gfx90a", &[]);
    assert!(
        out.contains("float array, linear filter, normalized coordinates, border: ok"),
        "{out}"
    );
}

#[test]
fn cooperative_launch_with_a_grid_wide_barrier() {
    passes(&hip_program("cooperative"), "gfx90a", &[]);
}

#[test]
fn work_groups_waiting_on_later_ones_in_an_ordinary_launch() {
    passes(&hip_program("co_resident"), "gfx90a", &[]);
}

#[test]
fn a_multi_device_cooperative_launch_with_a_multi_grid_barrier() {
    passes(&hip_program("multi_grid"), "gfx90a,gfx90a", &[]);
}

#[test]
fn two_devices_and_peer_copies() {
    passes(&hip_program("two_devices"), "gfx90a,gfx90a", &[]);
}

#[test]
fn code_objects_for_compatible_target_ids_are_found() {
    // The agent's ISA is gfx90a:sramecc+:xnack-: HIP finds a code object built for xnack off...
    passes(&hip_program_for("streams", "gfx90a:xnack-"), "gfx90a", &[]);
    // ...and none in a binary built only for xnack on.
    let out = hip_command(&hip_program_for("streams", "gfx90a:xnack+"), "gfx90a")
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("hipErrorNoBinaryForGpu"),
        "{}",
        stderr(&out)
    );
}
