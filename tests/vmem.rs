//! Virtual memory (`hsa_amd_vmem_*`): mapped ranges of a GPU's device pool are tracked as that
//! GPU's memory and restored between passes, for native and emulated kernels; an unmapped range
//! is forgotten.

mod common;

use common::*;

#[test]
fn mapped_virtual_memory_is_restored_between_passes() {
    let out_dir = test_support::scratch_dir("replay-vmem-records");
    let mut c = command(&app("vmem", &[]), &[]);
    c.arg("4")
        .env("KREPLAY_PASSES", "4")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    // `run_ok` also checks that the application printed "APP OK".
    run_ok(c);
    let recs = records(&out_dir);
    let dispatch: Vec<_> = recs.iter().filter(|r| r["record"] == "dispatch").collect();
    assert_eq!(dispatch.len(), 2, "{recs:#?}");
    for d in dispatch {
        assert_eq!(d["kernel"], "vinc");
        assert_eq!(d["replayed"], true, "{d:#}");
        assert_eq!(d["passes"], 4);
        // Only the live mapping: the first one left the inventory at its unmap.
        assert_eq!(d["snapshot"]["regions"], 1, "{d:#}");
        assert_eq!(d["snapshot"]["bytes"], 64 * 1024, "{d:#}");
    }
}

#[test]
fn one_pass_runs_the_kernel_once_on_mapped_memory() {
    let mut c = command(&app("vmem", &[]), &[]);
    c.arg("1");
    let err = stderr(&run_ok(c));
    assert!(!err.contains("not replayed"), "{err}");
}

#[test]
fn an_emulated_kernel_writing_mapped_memory_is_replayed() {
    let out_dir = test_support::scratch_dir("replay-vmem-emulated");
    let co = code_object("emulated");
    let mut c = command(&app("vmem", &[]), &[]);
    c.arg("3")
        .arg(&co)
        .env("KREPLAY_PASSES", "3")
        // The pass counters live in fine-grained memory: left unrestored so they count every pass.
        .env("KREPLAY_HOST_MEMORY", "ignore")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    run_ok(c);
    let recs = records(&out_dir);
    let d = recs
        .iter()
        .find(|r| r["record"] == "dispatch")
        .expect("a dispatch record");
    assert_eq!(d["kernel"], "inc");
    assert_eq!(d["replayed"], true, "{d:#}");
    // The mapping and the code object's writable segment.
    assert_eq!(d["snapshot"]["regions"], 2, "{d:#}");
    assert!(
        d["snapshot"]["bytes"].as_u64().unwrap() >= 64 * 1024,
        "{d:#}"
    );
}

#[test]
fn a_mapping_given_access_to_another_gpu_is_restored_for_its_replays() {
    let out_dir = test_support::scratch_dir("replay-vmem-peer");
    let mut c = command(&app("vmem", &[]), &[]);
    c.args(["3", "peer"])
        .env("VHSA_AGENTS", "gfx942,gfx942")
        .env("KREPLAY_PASSES", "3")
        .env("KREPLAY_OUTPUT_DIR", &out_dir);
    run_ok(c);
    let recs = records(&out_dir);
    let d = recs
        .iter()
        .find(|r| r["record"] == "dispatch")
        .expect("a dispatch record");
    assert_eq!(d["replayed"], true, "{d:#}");
    assert_eq!(d["snapshot"]["regions"], 1, "{d:#}");
    assert_eq!(d["snapshot"]["bytes"], 64 * 1024, "{d:#}");
}
