//! Debian's HIP 5.2 on Debian's real ROCR 5.2 on vkfd: vhsa's HIP test programs
//! (`crates/vhsa/tests/hip`) check their own results and print PASS. Every kernel runs on the
//! emulator beneath the real runtime: the programs' kernels, ROCclr's blit kernels and ROCR's
//! own copy and fill shaders (host-device copies too: there is no SDMA engine, so ROCR copies
//! with its blit kernels). Device `printf` goes through HIP's hostcall buffer and its doorbell,
//! an interrupt signal whose event mailbox the kernel writes.

mod common;
use common::*;
use std::path::Path;

fn passes(exe: &Path, gpus: &str) -> String {
    let out = stdout(&run_ok(command(exe, Runtime::RocrOnVkfd, gpus)));
    assert!(out.lines().any(|l| l == "PASS"), "{out}");
    out
}

#[test]
fn device_count_and_properties_match_the_agent() {
    let dir = test_support::scratch_dir("vkfd-hip-props");
    let exe = hip_program(&dir, "device_props");
    let out = passes(&exe, "gfx90a");
    assert!(
        out.contains("device 0: AMD Instinct MI250X (virtual) gfx90a:sramecc+:xnack-"),
        "{out}"
    );
    let out = passes(&exe, "gfx90a,gfx90a");
    assert!(out.contains("device 1: "), "{out}");
}

#[test]
fn memory_allocation_copies_memsets_and_symbols() {
    let dir = test_support::scratch_dir("vkfd-hip-memory");
    let out = passes(&hip_program(&dir, "memory"), "gfx90a");
    // Host-device copies are blit-kernel dispatches under ROCR without SDMA.
    let blits: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("blit dispatches: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(blits >= 100, "{out}");
}

#[test]
fn kernels_events_stream_ordered_allocation_and_graphs() {
    let dir = test_support::scratch_dir("vkfd-hip-streams");
    passes(&hip_program(&dir, "streams"), "gfx90a");
}

#[test]
fn two_devices_and_peer_copies() {
    let dir = test_support::scratch_dir("vkfd-hip-two");
    passes(&hip_program(&dir, "two_devices"), "gfx90a,gfx90a");
}

#[test]
fn device_printf_reaches_stdout() {
    let dir = test_support::scratch_dir("vkfd-hip-printf");
    let out = passes(&hip_program(&dir, "printf"), "gfx90a");
    for i in 0..6 {
        let line = format!("item {i} of grid: {} {:.2}", 100 + i, 0.5 * i as f32);
        assert!(out.lines().any(|l| l == line), "missing `{line}`:\n{out}");
    }
}

/// Device `malloc`/`free` under ROCR: the memory HIP's host-call listener allocates while the
/// kernel runs is reached by that kernel.
#[test]
fn device_malloc_reaches_memory_allocated_while_the_kernel_runs() {
    let dir = test_support::scratch_dir("vkfd-hip-device-malloc");
    passes(&hip_program(&dir, "device_malloc"), "gfx90a");
}

/// Cooperative launches under ROCR: the node's GWS entries make ROCR offer a cooperative queue,
/// HIP reports the device attribute, and work-groups meet at a grid-wide barrier.
#[test]
fn cooperative_launch_with_a_grid_wide_barrier() {
    let dir = test_support::scratch_dir("vkfd-hip-cooperative");
    passes(&hip_program(&dir, "cooperative"), "gfx90a");
}

/// Images under ROCR: textures over linear memory (a buffer image, a pitched 2D texture),
/// pitched allocations, and arrays, which ROCR lays out tiled for a discrete GPU (ROCclr's
/// blit kernels store into them, the program's kernels sample and write them as surfaces).
#[test]
fn textures_surfaces_and_tiled_arrays_work() {
    let dir = test_support::scratch_dir("vkfd-hip-texture");
    let exe = hip_program(&dir, "texture");
    let out = passes(&exe, "gfx90a");
    assert!(out.lines().any(|l| l == "PASS"), "{out}");
}
