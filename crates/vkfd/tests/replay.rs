//! kreplay on both runtimes, from one test definition each: vhsa, and Debian's real ROCR 5.2 on
//! vkfd (which loads the tool through `HSA_TOOLS_LIB` with ROCm 5.x's tables). The same
//! application, inputs and checks run on both:
//!
//! - `kreplay run --passes 3` on vhsa's HIP programs: every dispatch replayed three times, the
//!   programs' own result checks pass; a kernel calling device `printf` declined, its lines
//!   printed once;
//! - the tool crate's `tests/apps/emulated.c` with the tool loaded directly: identical inputs in
//!   every pass, a `__device__` variable restored between passes, faults ending their dispatch
//!   with the same queue errors, a queue destroyed under a kernel that never ends;
//! - a client of the C API (`tests/c/client.c`): its events over a replay, a decline with its
//!   reason, and replay across an executable destroyed and loaded again.

mod common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// `kreplay run --passes 3 -f json` of `app` on `runtime` with `gpus`; asserts exit 0 and the
/// program's PASS; returns its stdout and the dispatches (id -> (kernel, agent, rows)), each
/// replayed three times.
fn kreplay_run(
    app: &Path,
    runtime: Runtime,
    gpus: &str,
) -> (String, BTreeMap<u64, (String, u64, usize)>) {
    let (stdout, _, doc) = kreplay_run_json(app, runtime, gpus);
    let mut dispatches: BTreeMap<u64, (String, u64, usize)> = BTreeMap::new();
    for r in doc["rows"].as_array().unwrap() {
        assert_eq!(r["replayed"], true, "{}: {r}", runtime.name());
        assert_eq!(r["passes"], 3, "{r}");
        assert_eq!(r["agent_name"], "gfx90a", "{r}");
        let kernel = r["kernel"]
            .as_str()
            .unwrap()
            .trim_end_matches(".kd")
            .to_owned();
        dispatches
            .entry(r["dispatch_id"].as_u64().unwrap())
            .or_insert((kernel, r["agent"].as_u64().unwrap(), 0))
            .2 += 1;
    }
    assert!(
        dispatches.values().all(|d| d.2 == 3),
        "one row per pass: {dispatches:?}"
    );
    (stdout, dispatches)
}

/// `kreplay run --passes 3 -f json` of `app` on `runtime` with `gpus`; asserts exit 0 and the
/// program's PASS; returns its stdout, its stderr and the results document.
fn kreplay_run_json(
    app: &Path,
    runtime: Runtime,
    gpus: &str,
) -> (String, String, serde_json::Value) {
    kreplay_run_with(app, runtime, gpus, &["--passes", "3"])
}

/// [`kreplay_run_json`] with `selection` (`--passes 3`, `--pmc ...`) as the replay options.
fn kreplay_run_with(
    app: &Path,
    runtime: Runtime,
    gpus: &str,
    selection: &[&str],
) -> (String, String, serde_json::Value) {
    test_support::tool_lib();
    let out_dir = test_support::scratch_dir(&format!(
        "vkfd-replay-{}-{:?}",
        app.file_name().unwrap().to_string_lossy(),
        runtime
    ));
    let mut cmd = Command::new(test_support::kreplay_bin());
    for v in [
        "HSA_TOOLS_LIB",
        "KREPLAY_TOOL_LIB",
        "KREPLAY_VHSA_DIR",
        "KREPLAY_VKFD_DIR",
        "KREPLAY_PASSES",
        "AMD_LOG_LEVEL",
        "VHSA_FAULTS",
    ] {
        cmd.env_remove(v);
    }
    let choice = match runtime {
        Runtime::Vhsa => "virtual",
        Runtime::RocrOnVkfd => "system-on-vkfd",
    };
    // The CLI finds vhsa and vkfd itself; the agent lists reach them through the environment.
    test_support::vkfd_lib_dir();
    test_support::vhsa_lib_dir();
    let out = cmd
        .env("VHSA_AGENTS", gpus)
        .env("VKFD_AGENTS", gpus)
        .args(["run", "-f", "json", "--runtime", choice])
        .args(selection)
        .arg("-d")
        .arg(&out_dir)
        .arg("--")
        .arg(app)
        .output()
        .expect("run kreplay");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}:\n{stdout}\n{stderr}",
        runtime.name()
    );
    assert!(
        stdout.lines().any(|l| l == "PASS"),
        "{}: the program's own checks failed under replay:\n{stdout}\n{stderr}",
        runtime.name()
    );
    let doc: serde_json::Value = serde_json::from_slice::<serde_json::Value>(
        &std::fs::read(out_dir.join("kreplay_results.json")).unwrap(),
    )
    .unwrap()["kreplay"]
        .take();
    (stdout, stderr, doc)
}

fn kernels(d: &BTreeMap<u64, (String, u64, usize)>) -> BTreeMap<String, usize> {
    let mut k = BTreeMap::new();
    for (name, _, _) in d.values() {
        *k.entry(name.clone()).or_default() += 1;
    }
    k
}

#[test]
fn kernels_events_and_graphs_are_replayed_on_both_runtimes() {
    let dir = test_support::scratch_dir("vkfd-replay-streams");
    let app = hip_program(&dir, "streams");
    for rt in Runtime::ALL {
        let (out, d) = kreplay_run(&app, rt, "gfx90a");
        let want: BTreeMap<String, usize> = [
            ("__amd_rocclr_copyBuffer", 1),
            ("add_scalar", 6),
            ("busy_wait", 1),
        ]
        .map(|(k, n)| (k.to_owned(), n))
        .into();
        assert_eq!(kernels(&d), want, "{}: {out}", rt.name());
    }
}

#[test]
fn copies_memsets_and_symbols_are_replayed_on_both_runtimes() {
    let dir = test_support::scratch_dir("vkfd-replay-memory");
    let app = hip_program(&dir, "memory");
    for rt in Runtime::ALL {
        let (out, d) = kreplay_run(&app, rt, "gfx90a");
        let names: BTreeSet<String> = kernels(&d).into_keys().collect();
        // `add_index` writes registered host memory through its device pointer; `scale` runs
        // past the end of its buffer.
        let want: BTreeSet<String> = [
            "_Z5scalePdid",
            "_Z9add_indexPii",
            "__amd_rocclr_copyBuffer",
            "__amd_rocclr_copyBufferRect",
            "__amd_rocclr_copyBufferRectAligned",
            "__amd_rocclr_fillBufferAligned",
        ]
        .map(str::to_owned)
        .into();
        assert_eq!(names, want, "{}: {out}", rt.name());
        let printed: usize = out
            .lines()
            .find_map(|l| l.strip_prefix("blit dispatches: "))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{out}"));
        // Each replayed dispatch ran three times; under ROCR its own blit kernels (host-device
        // copies on internal queues, not the application's) run as well.
        match rt {
            Runtime::Vhsa => assert_eq!(printed, 3 * d.len(), "{out}"),
            Runtime::RocrOnVkfd => assert!(printed > 3 * d.len(), "{out}"),
        }
    }
}

/// AMD's library kernels (rocPRIM, rocRAND, rocSPARSE) replayed with their results checked. HIP
/// locks the program's pageable buffers for copies and never unlocks them, so freed buffers
/// leave stale locks whose ranges later device allocations reuse: the replay must neither read
/// their unmapped pages nor take the new allocations for them.
#[test]
fn amd_library_kernels_are_replayed_on_both_runtimes() {
    let dir = test_support::scratch_dir("vkfd-replay-libraries");
    let app = hip_program(&dir, "libraries");
    for rt in Runtime::ALL {
        let (out, d) = kreplay_run(&app, rt, "gfx90a");
        let names = kernels(&d);
        for family in ["rocprim", "rocrand", "rocsparse"] {
            assert!(
                names.keys().any(|k| k.contains(family)),
                "{}: no {family} kernel replayed: {names:?}\n{out}",
                rt.name()
            );
        }
    }
}

#[test]
fn a_program_without_dispatches_runs_unchanged_on_both_runtimes() {
    let dir = test_support::scratch_dir("vkfd-replay-props");
    let app = hip_program(&dir, "device_props");
    for rt in Runtime::ALL {
        let (out, d) = kreplay_run(&app, rt, "gfx90a");
        assert!(d.is_empty(), "{}: {d:?}\n{out}", rt.name());
    }
}

/// Texture and surface kernels and ROCclr's image blits replayed on both runtimes (vhsa's
/// images are linear; ROCR tiles arrays), with the program's own checks passing. Every
/// dispatch runs its three passes: the blits copy through the pages HIP locked around the
/// program's pageable vectors, where HIP's threads keep their heap, and those pages are not
/// captured (a copy writes its destination without reading it), so no store of theirs is
/// reverted and none stops a loop.
#[test]
fn texture_surface_and_image_blit_kernels_are_replayed_on_both_runtimes() {
    let dir = test_support::scratch_dir("vkfd-replay-texture");
    let app = hip_program(&dir, "texture");
    for rt in Runtime::ALL {
        let (out, _, doc) = kreplay_run_with(&app, rt, "gfx90a", &["--passes", "3"]);
        let rows = doc["rows"].as_array().unwrap();
        let name = |r: &serde_json::Value| r["kernel"].as_str().unwrap().to_owned();
        let names: BTreeSet<String> = rows.iter().map(name).collect();
        for k in [
            "__amd_rocclr_copyBufferToImage",
            "__amd_rocclr_copyImageToBuffer",
        ] {
            assert!(
                names.iter().any(|n| n.starts_with(k)),
                "{}: {k} missing: {names:?}\n{out}",
                rt.name()
            );
        }
        let kinds: BTreeSet<&String> = names
            .iter()
            .filter(|n| n.contains("hip_texture") || n.contains("hip_surface"))
            .collect();
        assert!(kinds.len() >= 4, "{}: {kinds:?}", rt.name());
        for r in rows {
            assert_eq!(
                (&r["replayed"], &r["passes"]),
                (&true.into(), &3.into()),
                "{}: {r}",
                rt.name()
            );
        }
    }
}

#[test]
fn dispatches_on_two_devices_are_replayed_on_their_agents_on_both_runtimes() {
    let dir = test_support::scratch_dir("vkfd-replay-two");
    let app = hip_program(&dir, "two_devices");
    for rt in Runtime::ALL {
        let (_, d) = kreplay_run(&app, rt, "gfx90a,gfx90a");
        let agents: BTreeSet<u64> = d.values().map(|(_, a, _)| *a).collect();
        assert_eq!(agents.len(), 2, "{}: {d:?}", rt.name());
    }
}

#[test]
fn a_kernel_calling_device_printf_runs_once_and_prints_once_on_both_runtimes() {
    let dir = test_support::scratch_dir("vkfd-replay-printf");
    let app = hip_program(&dir, "printf");
    for rt in Runtime::ALL {
        let (out, err, doc) = kreplay_run_json(&app, rt, "gfx90a");
        // Each work-item's line once: the kernel is declined before its first pass.
        for i in 0..6 {
            let line = format!("item {i} of grid: {} {:.2}", 100 + i, 0.5 * i as f32);
            let n = out.lines().filter(|l| *l == line).count();
            assert_eq!(n, 1, "{}: `{line}` printed {n} times:\n{out}", rt.name());
        }
        let rows = doc["rows"].as_array().unwrap();
        let say: Vec<&serde_json::Value> = rows
            .iter()
            .filter(|r| r["kernel"].as_str().unwrap().contains("say"))
            .collect();
        assert_eq!(say.len(), 1, "{}: one row, one pass: {say:?}", rt.name());
        assert_eq!(say[0]["replayed"], false, "{}", say[0]);
        let skipped = say[0]["skipped"].as_str().unwrap_or_default();
        assert!(skipped.contains("hostcall buffer"), "{skipped}");
        // Every other dispatch (ROCR's own blit kernels) is replayed as usual.
        for r in rows
            .iter()
            .filter(|r| !r["kernel"].as_str().unwrap().contains("say"))
        {
            assert_eq!(r["replayed"], true, "{}: {r}", rt.name());
        }
        let warnings = err
            .lines()
            .filter(|l| l.contains("not replayed") && l.contains("hostcall buffer"))
            .count();
        assert_eq!(
            warnings,
            1,
            "{}: the reason is logged once:\n{err}",
            rt.name()
        );
    }
}

#[test]
fn a_multi_device_cooperative_launch_runs_once_instead_of_waiting_for_itself() {
    // Only vhsa advertises multi-device cooperative launches (ROCR wants the driver's
    // cooperative queue, which vkfd does not offer).
    let dir = test_support::scratch_dir("vkfd-replay-multi-grid");
    let app = hip_program(&dir, "multi_grid");
    let rt = Runtime::Vhsa;
    // A replay of one grid would wait for the other grid, which the same thread submits next.
    let (out, err, doc) = kreplay_run_json(&app, rt, "gfx90a,gfx90a");
    let rows = doc["rows"].as_array().unwrap();
    let grids: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["kernel"].as_str().unwrap().contains("exchange"))
        .collect();
    assert_eq!(
        grids.len(),
        2,
        "one row per grid, one pass each: {grids:?}\n{out}"
    );
    for r in &grids {
        assert_eq!(r["replayed"], false, "{r}");
        let skipped = r["skipped"].as_str().unwrap_or_default();
        assert!(
            skipped.contains("multi-device cooperative launch of 2 grids"),
            "{skipped}"
        );
    }
    for r in rows
        .iter()
        .filter(|r| !r["kernel"].as_str().unwrap().contains("exchange"))
    {
        assert_eq!(r["replayed"], true, "{r}");
    }
    assert!(err.contains("multi-device cooperative launch"), "{err}");
    // A counter pass isolates its dispatch in a window too: not this one.
    let (_, err, _) = kreplay_run_with(&app, rt, "gfx90a,gfx90a", &["--pmc", "SQ_WAVES"]);
    assert!(
        err.contains("lack counter groups") && err.contains("multi-device cooperative launch"),
        "{err}"
    );
}

fn emulated(runtime: Runtime, args: &[&str], passes: &str, code_object: &Path) -> Output {
    run_ok(emulated_command(runtime, args, passes, code_object))
}

fn emulated_command(runtime: Runtime, args: &[&str], passes: &str, code_object: &Path) -> Command {
    let dir = code_object.parent().unwrap();
    let mut c = command(&dir.join("emulated"), runtime, "gfx90a");
    c.args(args)
        .arg(code_object)
        .env("HSA_TOOLS_LIB", test_support::tool_lib())
        .env("HSA_TOOLS_REPORT_LOAD_FAILURE", "1")
        .env("KREPLAY_PASSES", passes)
        // The application counts passes in fine-grained memory: kept unrestored, so the count
        // shows every pass ran.
        .env("KREPLAY_HOST_MEMORY", "ignore")
        .env("VKFD_VM_FAULT", "queue-error");
    c
}

/// The emulated test program's code object, built once per test into `dir`.
fn emulated_code_object(dir_name: &str) -> std::path::PathBuf {
    let dir = test_support::scratch_dir(dir_name);
    emulated_app(&dir);
    let co = dir.join("emulated.co");
    // Code object version 4: ROCm 5.2's loader reads no later version.
    test_support::build_code_object_with(
        &workspace_root().join("tests/apps/emulated.hip"),
        "gfx90a",
        &co,
        &["-mcode-object-version=4"],
    );
    co
}

#[test]
fn rocm5_side_queues_of_the_tool_are_released() {
    // Under ROCm 5.x every replay write after the first of a handler call goes to a side queue
    // of the tool; it and its fence are released when the application's queue is destroyed or
    // the tool unloads.
    let co = emulated_code_object("vkfd-replay-side-queues");
    let mut c = emulated_command(Runtime::RocrOnVkfd, &["inc", "4"], "4", &co);
    c.env("KREPLAY_LOG", "kreplay=debug");
    let o = run_ok(c);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(out.contains("APP OK"), "{out}");
    let created = err
        .matches("created a side queue for the replay writes of queue")
        .count();
    let released = err
        .matches("released the replay-write fence and side queue of queue")
        .count();
    assert!(created >= 1, "the replay used no side queue: {err}");
    assert_eq!(created, released, "every side queue released: {err}");
    assert!(!err.contains("still held replay writes"), "{err}");
}
use std::process::Output;

#[test]
fn the_tools_replay_tests_pass_on_both_runtimes() {
    let co = emulated_code_object("vkfd-replay-emulated");
    for rt in Runtime::ALL {
        // x[i] += 1 over 5 passes: every pass sees the original input.
        let o = emulated(rt, &["inc", "5"], "5", &co);
        assert!(
            stdout(&o).contains("APP OK"),
            "{}: {}",
            rt.name(),
            stdout(&o)
        );
        // A __device__ counter is restored between passes.
        let o = emulated(rt, &["devvar", "3"], "3", &co);
        assert!(
            stdout(&o).contains("APP OK"),
            "{}: {}",
            rt.name(),
            stdout(&o)
        );
        // A queue destroyed under a kernel that never ends: the destroy returns.
        let o = emulated(rt, &["abandon"], "1", &co);
        assert!(
            stdout(&o).contains("APP OK"),
            "{}: {}",
            rt.name(),
            stdout(&o)
        );
        // Faults end their dispatch with the same queue errors; the process lives on, and nothing
        // the tool wrote after the faulting dispatch runs (under ROCm 5.x the tool's later writes
        // wait on a fence of the suspended queue).
        let o = emulated(rt, &["faults"], "1", &co);
        let out = stdout(&o);
        for line in [
            "APP fault kernel=oob_store status=0x29",
            "APP fault kernel=trap status=0x1016",
            "APP fault kernel=unknown_op status=0x2a",
        ] {
            assert!(
                out.lines().any(|l| l == line),
                "{}: expected `{line}`:\n{out}\n{}",
                rt.name(),
                stderr(&o)
            );
        }
    }
}

fn client(runtime: Runtime, exe: &Path, mode: &str, host_memory: &str, co: &Path) -> Output {
    let mut c = command(exe, runtime, "gfx90a");
    c.args([mode, "3"])
        .arg(co)
        .env("HSA_TOOLS_LIB", test_support::tool_lib())
        .env("HSA_TOOLS_REPORT_LOAD_FAILURE", "1")
        .env("KREPLAY_HOST_MEMORY", host_memory);
    run_ok(c)
}

#[test]
fn the_c_api_client_declines_and_executable_reload_on_both_runtimes() {
    let co = emulated_code_object("vkfd-replay-client");
    let exe = client_app(co.parent().unwrap());
    for rt in Runtime::ALL {
        // Events of a replay through the C API: 3 timed passes, identical inputs.
        let o = client(rt, &exe, "replay", "ignore", &co);
        assert!(
            stdout(&o).contains("APP OK"),
            "{}: {}",
            rt.name(),
            stderr(&o)
        );
        // A decline reaches the client with its reason; the dispatch runs once.
        let o = client(rt, &exe, "decline", "decline", &co);
        let out = stdout(&o);
        assert!(out.contains("APP OK"), "{}: {}", rt.name(), stderr(&o));
        let reason = out
            .lines()
            .find_map(|l| l.strip_prefix("APP declined: "))
            .unwrap_or_default();
        assert!(
            reason.contains("KREPLAY_HOST_MEMORY"),
            "{}: the reason names the policy: {out}",
            rt.name()
        );
        // The same decline chosen through the C API, over the environment's `ignore`.
        let o = client(rt, &exe, "decline-api", "ignore", &co);
        let out = stdout(&o);
        assert!(out.contains("APP OK"), "{}: {}", rt.name(), stderr(&o));
        assert!(
            out.contains("APP declined: ")
                && out.contains("kreplay_set_host_memory_policy(KREPLAY_HOST_MEMORY_DECLINE)")
                && !out.contains("KREPLAY_HOST_MEMORY=decline"),
            "{}: the reason names the C API's choice, not the environment's: {out}",
            rt.name()
        );
        // An executable destroyed and loaded again: its variable is restored both times.
        let o = client(rt, &exe, "reload", "ignore", &co);
        assert!(
            stdout(&o).contains("APP OK"),
            "{}: {}",
            rt.name(),
            stderr(&o)
        );
    }
}
