//! The changed-chunk restore where device memory is not host-accessible: vhsa reports no host
//! address for device memory (`VHSA_DEVICE_MEMORY_HOST_ACCESSIBLE=0`), so the chunks are hashed
//! on the agent by the tool's own kernel (run by vhsa's emulator). Restores still write back
//! exactly the written chunks, and every pass sees the original input.

mod common;

use common::*;
use std::process::Command;

const KIB: u64 = 1024;

fn identical(out: &std::process::Output) -> bool {
    String::from_utf8_lossy(&out.stdout).contains("APP inputs identical=1")
}

/// `snapshot <passes> <buffers> <KiB> <pattern>`, replayed, device memory not host-readable.
fn snapshot_app(passes: u32, buffers: u32, kib: u32, pattern: &str) -> Command {
    let mut c = command(&app("snapshot", &[]), &[]);
    c.args([
        passes.to_string(),
        buffers.to_string(),
        kib.to_string(),
        pattern.to_owned(),
    ])
    .env("KREPLAY_PASSES", passes.to_string())
    .env("VHSA_DEVICE_MEMORY_HOST_ACCESSIBLE", "0");
    c
}

fn dispatch_record(dir: &std::path::Path) -> serde_json::Value {
    records(dir)
        .into_iter()
        .find(|r| r["record"] == "dispatch")
        .expect("dispatch record")
}

#[test]
fn device_hashing_restores_only_the_written_chunks() {
    let dir = test_support::scratch_dir("device-hash-written-subset");
    for (mode, chunk_kb, written) in [
        ("device", None, 4 * 64 * KIB),
        ("host", None, 4 * 64 * KIB),
        ("device", Some("4"), 4 * 4 * KIB),
    ] {
        let mut c = snapshot_app(4, 3, 256, "fixed");
        c.env("KREPLAY_OUTPUT_DIR", &dir)
            .env("KREPLAY_SNAPSHOT", mode)
            .env("KREPLAY_LOG", "debug");
        if let Some(kb) = chunk_kb {
            c.env("KREPLAY_CHUNK_KB", kb);
        }
        let _ = std::fs::remove_dir_all(&dir);
        let out = run_ok(c);
        assert!(
            identical(&out),
            "{mode} {chunk_kb:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let err = stderr(&out);
        assert!(
            !err.contains("device-side chunk hashing"),
            "the device path worked: {err}"
        );
        assert!(
            err.contains("chunk hashing kernel loaded"),
            "hashed on the device: {err}"
        );
        let d = dispatch_record(&dir);
        assert_eq!(d["snapshot"]["bytes"], 3 * 256 * KIB);
        assert_eq!(d["restore"]["count"], 3);
        // Bytes 0..99 of each buffer and one byte in the middle of the first: four chunks,
        // restored before each of the three later passes.
        assert_eq!(
            d["restore"]["bytes"],
            3 * written,
            "{mode} chunk {chunk_kb:?}: {d:#}"
        );
    }
}

#[test]
fn host_readable_device_memory_is_hashed_on_the_host() {
    let mut c = snapshot_app(3, 2, 256, "fixed");
    c.env("VHSA_DEVICE_MEMORY_HOST_ACCESSIBLE", "1")
        .env("KREPLAY_LOG", "debug");
    let out = run_ok(c);
    assert!(identical(&out));
    assert!(
        !stderr(&out).contains("chunk hashing kernel loaded"),
        "no kernel needed: {}",
        stderr(&out)
    );
}

#[test]
fn verify_mode_with_device_hashing_catches_a_moving_write() {
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
    // Without verify mode the learned set misses the moving write: proof the hashes compared.
    let out = run_ok(snapshot_app(4, 2, 1024, "moving"));
    assert!(!identical(&out));
}

#[test]
fn without_a_code_object_for_the_target_regions_are_restored_whole_with_one_warning() {
    let dir = test_support::scratch_dir("device-hash-no-target");
    let _ = std::fs::remove_dir_all(&dir);
    // gfx908: the kernel is built for gfx90a and gfx942 only.
    let mut c = snapshot_app(4, 3, 256, "fixed");
    c.env("VHSA_AGENTS", "gfx908")
        .env("KREPLAY_OUTPUT_DIR", &dir);
    let out = run_ok(c);
    assert!(identical(&out), "{}", String::from_utf8_lossy(&out.stdout));
    let err = stderr(&out);
    assert_eq!(
        err.matches("device-side chunk hashing").count(),
        1,
        "warned once: {err}"
    );
    assert!(err.contains("no code object for gfx908"), "{err}");
    let d = dispatch_record(&dir);
    assert_eq!(
        d["restore"]["bytes"],
        3 * 3 * 256 * KIB,
        "every byte restored before each later pass: {d:#}"
    );
}

#[test]
fn the_hashing_kernel_is_loaded_once_for_many_replayed_dispatches() {
    let dir = test_support::scratch_dir("device-hash-kept-kernel");
    let _ = std::fs::remove_dir_all(&dir);
    let co = code_object("hidden");
    let mut c = command(&app_linked("coverage"), &[]);
    c.args(["repeat", "6", "3"])
        .arg(&co)
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_OUTPUT_DIR", &dir)
        .env("VHSA_DEVICE_MEMORY_HOST_ACCESSIBLE", "0")
        .env("KREPLAY_LOG", "debug");
    let out = run_ok(c);
    let err = stderr(&out);
    assert!(
        !err.contains("device-side chunk hashing"),
        "the device path worked: {err}"
    );
    assert_eq!(
        err.matches("chunk hashing kernel loaded").count(),
        1,
        "six replayed dispatches share one load: {err}"
    );
    // The kept kernel's executable is the tool's: no later snapshot captures its memory.
    let snapshots: Vec<_> = records(&dir)
        .into_iter()
        .filter(|r| r["record"] == "dispatch")
        .map(|d| {
            let s = &d["snapshot"];
            (s["regions"].clone(), s["bytes"].clone(), s["store"].clone())
        })
        .collect();
    assert_eq!(snapshots.len(), 6, "{snapshots:#?}");
    assert!(
        snapshots.iter().all(|s| s == &snapshots[0]),
        "every dispatch captured the same regions: {snapshots:#?}"
    );
}
