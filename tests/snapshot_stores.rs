//! The snapshot stores and the changed-chunk restore on vhsa, through the built-in client:
//! every pass sees the original input and memory ends as after one execution, whichever store
//! keeps the snapshot; only the written chunks are restored; verify mode catches a kernel whose
//! write set changes; an application allocation that needs the tool's idle buffers succeeds.

mod common;

use common::*;
use std::process::Command;

/// `APP copies h2d=.. d2h=.. d2d=..` of the run.
#[derive(Debug)]
struct Copies {
    h2d: u64,
    d2h: u64,
    d2d: u64,
}

fn copies(out: &std::process::Output) -> Copies {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("APP copies"))
        .expect("copy counters printed");
    let field = |k: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .expect("a counter")
    };
    Copies {
        h2d: field("h2d="),
        d2h: field("d2h="),
        d2d: field("d2d="),
    }
}

fn identical(out: &std::process::Output) -> bool {
    String::from_utf8_lossy(&out.stdout).contains("APP inputs identical=1")
}

/// `snapshot <passes> <buffers> <KiB> <pattern> [then-allocate KiB]` with replay configured.
fn snapshot_app(passes: u32, buffers: u32, kib: u32, pattern: &str) -> Command {
    let mut c = command(&app("snapshot", &[]), &[]);
    c.args([
        passes.to_string(),
        buffers.to_string(),
        kib.to_string(),
        pattern.to_owned(),
    ])
    .env("KREPLAY_PASSES", passes.to_string());
    c
}

fn dispatch_record(dir: &std::path::Path) -> serde_json::Value {
    records(dir)
        .into_iter()
        .find(|r| r["record"] == "dispatch")
        .expect("dispatch record")
}

const KIB: u64 = 1024;

#[test]
fn the_device_store_keeps_the_snapshot_on_the_agent() {
    let mut c = snapshot_app(4, 4, 256, "fixed");
    c.env("KREPLAY_SNAPSHOT", "device");
    let out = run_ok(c);
    assert!(identical(&out), "{}", String::from_utf8_lossy(&out.stdout));
    let k = copies(&out);
    assert_eq!(
        (k.h2d, k.d2h),
        (0, 0),
        "nothing crosses the host link: {k:?}"
    );
    assert!(
        k.d2d >= 4 * 256 * KIB,
        "the capture is a device-to-device copy: {k:?}"
    );
}

#[test]
fn the_host_store_and_the_full_copy_keep_the_snapshot_in_host_memory() {
    for mode in ["host", "host-full"] {
        let mut c = snapshot_app(4, 4, 256, "fixed");
        c.env("KREPLAY_SNAPSHOT", mode);
        let out = run_ok(c);
        assert!(identical(&out), "{mode}");
        let k = copies(&out);
        assert_eq!(k.d2d, 0, "{mode}: {k:?}");
        assert_eq!(k.d2h, 4 * 256 * KIB, "{mode}: captured once: {k:?}");
        if mode == "host-full" {
            assert_eq!(
                k.h2d,
                3 * 4 * 256 * KIB,
                "every byte restored between passes: {k:?}"
            );
        } else {
            assert_eq!(
                k.h2d,
                3 * 5 * 64 * KIB,
                "the five written chunks restored between passes: {k:?}"
            );
        }
    }
}

#[test]
fn under_a_small_reserve_regions_that_do_not_fit_fall_back_to_host_memory() {
    // 64 MiB of device memory, 32 MiB used by the application, 16 MiB reserved: room for two
    // of the four 8 MiB buffers.
    let mut c = snapshot_app(3, 4, 8 * 1024, "fixed");
    c.env("VHSA_DEVICE_MEMORY_MB", "64")
        .env("KREPLAY_DEVICE_RESERVE_MB", "16");
    let out = run_ok(c);
    assert!(identical(&out));
    let k = copies(&out);
    assert_eq!(
        k.d2h,
        2 * 8 * 1024 * KIB,
        "two regions captured to the host: {k:?}"
    );
    assert!(
        k.d2d >= 2 * 8 * 1024 * KIB,
        "two regions captured on the device: {k:?}"
    );
}

#[test]
fn only_the_written_chunks_are_restored() {
    let dir = test_support::scratch_dir("snapshot-written-subset");
    for (chunk_kb, written) in [(None, 5 * 64 * KIB), (Some("4"), 5 * 4 * KIB)] {
        let mut c = snapshot_app(5, 4, 256, "fixed");
        c.env("KREPLAY_OUTPUT_DIR", &dir);
        if let Some(kb) = chunk_kb {
            c.env("KREPLAY_CHUNK_KB", kb);
        }
        let _ = std::fs::remove_dir_all(&dir);
        let out = run_ok(c);
        assert!(identical(&out));
        let d = dispatch_record(&dir);
        assert_eq!(d["snapshot"]["bytes"], 4 * 256 * KIB);
        assert_eq!(d["restore"]["count"], 4);
        // Bytes 0..99 of each buffer and one byte in the middle of the first: five chunks.
        assert_eq!(
            d["restore"]["bytes"],
            4 * written,
            "chunk {chunk_kb:?}: {d:#}"
        );
    }
}

#[test]
fn verify_mode_catches_a_kernel_whose_write_set_changes() {
    // Without verify mode the chunk written only in pass 1 is not restored: pass 2 sees it.
    let out = run_ok(snapshot_app(4, 2, 1024, "moving"));
    assert!(
        !identical(&out),
        "the learned set misses the moving write without verify mode"
    );
    let mut c = snapshot_app(4, 2, 1024, "moving");
    c.env("KREPLAY_VERIFY", "1");
    let out = run_ok(c);
    assert!(
        identical(&out),
        "verify mode restores completely after an unexpected write"
    );
    let err = stderr(&out);
    assert_eq!(
        err.matches("that it did not write in the first pass")
            .count(),
        1,
        "warned once per kernel: {err}"
    );
    assert!(err.contains("kernel touch"), "{err}");
    // The same through the C API.
    let mut c = snapshot_app(4, 2, 1024, "moving");
    c.env("SNAPSHOT_SET_VERIFY", test_support::tool_lib());
    let out = run_ok(c);
    assert!(
        identical(&out),
        "kreplay_set_verify(1) turns verify mode on"
    );
    assert_eq!(
        stderr(&out)
            .matches("that it did not write in the first pass")
            .count(),
        1
    );
}

#[test]
fn an_application_allocation_succeeds_after_the_tool_frees_its_idle_buffers() {
    // 16 MiB of device memory: the application holds 4 MiB, the tool's idle snapshot buffers
    // another 4 MiB; 10 MiB more fit only once the tool let go of them.
    let mut c = snapshot_app(3, 4, 1024, "fixed");
    c.arg((10 * 1024).to_string())
        .env("VHSA_DEVICE_MEMORY_MB", "16")
        .env("KREPLAY_DEVICE_RESERVE_MB", "0");
    let out = run_ok(c);
    assert!(identical(&out));
    assert!(
        copies(&out).d2d >= 4 * 1024 * KIB,
        "the snapshot was on the device"
    );
    // The same allocation fails without the tool's help: the pool really was too small.
    let mut c = snapshot_app(1, 4, 1024, "fixed");
    c.arg((13 * 1024).to_string())
        .env("VHSA_DEVICE_MEMORY_MB", "16");
    let out = c.output().unwrap();
    assert!(
        !out.status.success()
            && stderr(&out).contains("allocating 13631488 bytes after the replay returned"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_invalid_snapshot_variable_declines_every_replay() {
    let mut c = snapshot_app(3, 1, 64, "fixed");
    c.env("KREPLAY_SNAPSHOT", "gpu");
    let out = c.output().unwrap();
    let err = stderr(&out);
    assert_eq!(
        err.matches("kreplay: KREPLAY_SNAPSHOT=\"gpu\" is invalid")
            .count(),
        1,
        "reported once: {err}"
    );
    assert!(err.contains("host-full"), "the choices are named: {err}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("touch ran 1 times, expected 3"),
        "the dispatch ran once: {err}"
    );
}
