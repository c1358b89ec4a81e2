//! Hardware counters over replayed passes, end to end on vhsa: the built-in client collects
//! `KREPLAY_PMC_GROUPS` through the tool's counter path (`src/pmc/`) and the runtime's aqlprofile
//! (the drop-in v2 library, or vhsa's v1 table), on the code-object kernels of
//! `tests/apps/counters.hip` run by the emulator. A C tool (`tests/apps/pmc_tool.c`) reads the
//! same counters through each interface.

mod common;

use amdgpu_counters::{Target, find};
use common::*;
use kreplay_records::{CounterValue, Dispatch};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// `scale` over 4096 work-items in work-groups of 64: 64 work-groups of one wave each.
const N: &str = "4096";
const WG: &str = "64";
const WAVES: f64 = 64.0;

/// Counters of several blocks, more SQ ones than one pass can collect (8).
const MANY: [&str; 11] = [
    "SQ_WAVES",
    "SQ_INSTS",
    "SQ_INSTS_VALU",
    "SQ_INSTS_SALU",
    "SQ_INSTS_SMEM",
    "SQ_INSTS_VMEM_RD",
    "SQ_INSTS_VMEM_WR",
    "SQ_INSTS_BRANCH",
    "SQ_WAVES_EQ_64",
    "SPI_CSN_WAVE",
    "SPI_CSN_NUM_THREADGROUPS",
];

/// The virtual runtime's aqlprofile (`crates/aqlprofile-so`) must be built for these tests.
fn require_aqlprofile() {
    let lib = test_support::vhsa_lib_dir().join("libhsa-amd-aqlprofile64.so.1");
    assert!(
        lib.exists(),
        "{} is missing: build the workspace first (`cargo build --workspace`), which builds crates/aqlprofile-so",
        lib.display()
    );
}

fn scale_command(mode: &str, out_dir: &Path, groups: &[&[&str]]) -> Command {
    scale_command_with(mode, &code_object("counters"), out_dir, groups)
}

/// [`scale_command`] with the code object `co`.
fn scale_command_with(mode: &str, co: &Path, out_dir: &Path, groups: &[&[&str]]) -> Command {
    require_aqlprofile();
    let mut c = command(&app("counters", &[]), &[]);
    c.args([mode, co.to_str().unwrap(), N, WG])
        .env("KREPLAY_PMC_GROUPS", pmc_lines(groups))
        .env("KREPLAY_KERNEL_INCLUDE", "^scale")
        .env("KREPLAY_OUTPUT_DIR", out_dir);
    c
}

fn pmc_lines(groups: &[&[&str]]) -> String {
    groups
        .iter()
        .map(|g| format!("pmc: {}\n", g.join(" ")))
        .collect()
}

/// The records of the `scale` dispatch.
fn scale_dispatch(out_dir: &Path) -> Dispatch {
    let mut all = scale_dispatches(out_dir);
    assert_eq!(all.len(), 1, "one scale dispatch recorded");
    all.remove(0)
}

/// The records of every `scale` dispatch, in dispatch order.
fn scale_dispatches(out_dir: &Path) -> Vec<Dispatch> {
    let texts: Vec<String> = std::fs::read_dir(out_dir)
        .expect("records directory")
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    let collected = kreplay_records::parse(texts.iter().map(String::as_str));
    let mut scale: Vec<Dispatch> = collected
        .dispatches
        .into_iter()
        .filter(|d| d.kernel.as_deref().is_some_and(|k| k.starts_with("scale")))
        .collect();
    scale.sort_by_key(|d| d.dispatch_id);
    scale
}

/// Every counter of every pass: name -> (value, instances), the first pass that read it.
fn by_name(d: &Dispatch) -> BTreeMap<String, CounterValue> {
    let mut out = BTreeMap::new();
    for p in &d.passes {
        for c in &p.counters {
            out.entry(c.name.clone()).or_insert_with(|| c.clone());
        }
    }
    out
}

fn run(c: Command) -> String {
    let o = run_ok(c);
    stderr(&o)
}

#[test]
fn groups_over_passes_equal_all_counters_in_one_pass_bit_for_bit() {
    let split: [&[&str]; 2] = [&MANY[..6], &MANY[6..]];
    let dir_split = test_support::scratch_dir("counters-split");
    run(scale_command("scale", &dir_split, &split));
    let dir_one = test_support::scratch_dir("counters-one");
    let mut one = scale_command("scale", &dir_one, &[&MANY]);
    one.env("VHSA_PMC_LIMITS", "off");
    run(one);
    let (s, o) = (scale_dispatch(&dir_split), scale_dispatch(&dir_one));
    assert_eq!(s.passes.len(), 2, "one pass per group by default");
    assert_eq!(
        s.passes.iter().map(|p| p.group).collect::<Vec<_>>(),
        [Some(0), Some(1)]
    );
    assert_eq!(o.passes.len(), 1);
    let (s, o) = (by_name(&s), by_name(&o));
    assert_eq!(s.len(), MANY.len(), "{s:?}");
    for name in MANY {
        let (a, b) = (&s[name], &o[name]);
        assert_eq!(
            a.value.to_bits(),
            b.value.to_bits(),
            "{name}: {a:?} vs {b:?}"
        );
        assert_eq!(a.instances, b.instances, "{name}");
    }
    assert_eq!(s["SQ_WAVES"].value, WAVES, "work-groups x waves per group");
    assert_eq!(s["SPI_CSN_NUM_THREADGROUPS"].value, WAVES);
    assert!(s["SQ_INSTS_VALU"].value > 0.0);
}

#[test]
fn sq_waves_in_three_groups_reads_the_true_value_in_every_pass() {
    let dir = test_support::scratch_dir("counters-three");
    let groups: [&[&str]; 3] = [
        &["SQ_WAVES", "SQ_INSTS_VALU"],
        &["SQ_WAVES", "SQ_INSTS_SALU"],
        &["SQ_WAVES", "SQ_INSTS_SMEM"],
    ];
    run(scale_command("scale", &dir, &groups));
    let d = scale_dispatch(&dir);
    assert_eq!(d.passes.len(), 3);
    for (p, pass) in d.passes.iter().enumerate() {
        assert_eq!(pass.group, Some(p as u64));
        let waves = pass.counters.iter().find(|c| c.name == "SQ_WAVES").unwrap();
        assert_eq!(waves.value, WAVES, "pass {p}: {waves:?}");
        assert_eq!(waves.exactness, "exact");
    }
    let pmc = d.pmc.expect("pmc status");
    assert_eq!(pmc.groups, 3);
    assert_eq!(pmc.collected, [0, 1, 2]);
    assert!(pmc.missing.is_empty() && pmc.error.is_none(), "{pmc:?}");
}

#[test]
fn a_single_group_collects_on_a_dispatch_that_runs_once() {
    let dir = test_support::scratch_dir("counters-single");
    run(scale_command("scale", &dir, &[&["SQ_WAVES", "VALUInsts"]]));
    let d = scale_dispatch(&dir);
    assert_eq!(d.passes.len(), 1);
    assert_eq!(d.passes[0].group, Some(0));
    let c = by_name(&d);
    assert_eq!(c["SQ_WAVES"].value, WAVES);
    let derived = &c["VALUInsts"];
    assert!(derived.derived && !derived.cross_pass, "{derived:?}");
    assert!(d.pmc.unwrap().missing.is_empty());
}

#[test]
fn a_declined_replay_collects_group_zero_and_names_the_missing_groups() {
    let dir = test_support::scratch_dir("counters-declined");
    let mut c = scale_command(
        "scale",
        &dir,
        &[&["SQ_WAVES"], &["SQ_INSTS_VALU"], &["SQ_INSTS_SALU"]],
    );
    c.arg("fine").env("KREPLAY_HOST_MEMORY", "decline");
    run(c);
    let d = scale_dispatch(&dir);
    assert!(
        d.skipped.as_deref().is_some_and(|s| s.contains("declined")),
        "{d:?}"
    );
    assert_eq!(d.passes.len(), 1);
    assert_eq!(d.passes[0].group, Some(0));
    assert_eq!(by_name(&d)["SQ_WAVES"].value, WAVES);
    let pmc = d.pmc.unwrap();
    assert_eq!((pmc.collected, pmc.missing), (vec![0], vec![1, 2]));
}

#[test]
fn a_dispatch_on_a_second_queue_during_the_window_adds_nothing() {
    let groups: [&[&str]; 2] = [&MANY[..6], &MANY[6..]];
    let quiet = test_support::scratch_dir("counters-quiet");
    run(scale_command("scale", &quiet, &groups));
    let busy = test_support::scratch_dir("counters-busy");
    let o = run_ok(scale_command("busy", &busy, &groups));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("APP busy_dispatches="), "{out}");
    let (q, b) = (
        by_name(&scale_dispatch(&quiet)),
        by_name(&scale_dispatch(&busy)),
    );
    for name in MANY {
        assert_eq!(q[name].value, b[name].value, "{name}");
        assert_eq!(q[name].instances, b[name].instances, "{name}");
    }
}

#[test]
fn a_group_over_a_block_limit_collects_nothing_and_says_why() {
    let dir = test_support::scratch_dir("counters-over");
    let err = run(scale_command("scale", &dir, &[&MANY]));
    assert!(err.contains("SQ") && err.contains("at most 8"), "{err}");
    let d = scale_dispatch(&dir);
    assert!(d.passes.iter().all(|p| p.counters.is_empty()));
    let pmc = d.pmc.unwrap();
    assert!(
        pmc.error.as_deref().is_some_and(|e| e.contains("SQ")),
        "{pmc:?}"
    );
    assert_eq!(pmc.missing, [0]);
}

/// `block:event` of each counter on `target`.
fn pmc_tool_events(target: Target, names: &[&str]) -> String {
    names
        .iter()
        .map(|n| {
            let c = find(target, n).unwrap();
            format!("{}:{}", c.block.id(), c.event)
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs the C tool with `api` for two passes, on vhsa's default gfx942 agent or, with
/// `runtime`, on one gfx90a agent of that runtime; returns its stderr.
fn pmc_tool_run(api: &str, runtime: Option<test_support::Runtime>) -> String {
    require_aqlprofile();
    let tool = c_tool("pmc_tool", &[]);
    let (mut c, co, target) = match runtime {
        None => (
            command(&app("counters", &[]), &[&tool]),
            code_object("counters"),
            Target::Gfx942,
        ),
        Some(_) => (
            command(&app_for_any_runtime("counters"), &[&tool]),
            code_object_gfx90a_v4(),
            Target::Gfx90a,
        ),
    };
    if let Some(rt) = runtime {
        rt.apply(&mut c, "gfx90a");
    }
    c.args(["scale", co.to_str().unwrap(), N, WG])
        .env("PMC_TOOL_API", api)
        .env("PMC_TOOL_PASSES", "2")
        .env("PMC_TOOL_EVENTS", pmc_tool_events(target, &MANY[..6]));
    let err = run(c);
    assert!(err.contains("TOOL OK"), "{err}");
    err
}

fn pmc_tool_values(api: &str, runtime: Option<test_support::Runtime>) -> Vec<String> {
    let err = pmc_tool_run(api, runtime);
    let mut v: Vec<String> = err
        .lines()
        .filter(|l| l.starts_with("TOOL value "))
        .map(str::to_owned)
        .collect();
    v.sort();
    v
}

#[test]
fn a_c_tool_gets_identical_values_through_the_v1_table_and_the_v2_library() {
    let (v1, v2) = (pmc_tool_values("v1", None), pmc_tool_values("v2", None));
    assert!(!v1.is_empty(), "no value read");
    assert_eq!(v1, v2);
    let waves = find(Target::Gfx942, "SQ_WAVES").unwrap();
    let sum: u64 = v1
        .iter()
        .filter(|l| {
            l.contains("pass=1 ")
                && l.contains(&format!(
                    "block={} index=0 event={} ",
                    waves.block.id(),
                    waves.event
                ))
        })
        .map(|l| l.rsplit("value=").next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum as f64, WAVES, "{v1:?}");
}

#[test]
fn derived_metrics_cross_passes_only_when_asked_and_say_so() {
    let groups: [&[&str]; 2] = [&["SQ_INSTS_VALU"], &["VALUInsts"]];
    let same = test_support::scratch_dir("counters-same-pass");
    run(scale_command("scale", &same, &groups));
    let cross = test_support::scratch_dir("counters-cross-pass");
    let mut c = scale_command("scale", &cross, &groups);
    c.env("KREPLAY_PMC_CROSS_PASS", "1");
    run(c);
    let (s, x) = (scale_dispatch(&same), scale_dispatch(&cross));
    let valu_insts = |d: &Dispatch| {
        let v: Vec<&CounterValue> = d.passes[1]
            .counters
            .iter()
            .filter(|c| c.name == "VALUInsts")
            .collect();
        assert_eq!(v.len(), 1, "{d:?}");
        v[0].clone()
    };
    let (a, b) = (valu_insts(&s), valu_insts(&x));
    assert!(a.derived && !a.cross_pass, "{a:?}");
    assert!(b.derived && b.cross_pass, "{b:?}");
    assert_eq!(a.value, b.value, "deterministic inputs give the same ratio");
    let insts = by_name(&s)["SQ_INSTS_VALU"].value;
    assert_eq!(a.value, insts / WAVES);
}

#[test]
fn the_counter_packets_of_a_pass_run_in_that_pass_only() {
    for api in ["v1", "v2"] {
        let err = pmc_tool_run(api, None);
        for pass in 0..2 {
            assert!(
                err.contains(&format!("TOOL packets pass={pass} start=1 read=1 stop=1\n")),
                "{api}: {err}"
            );
        }
    }
}

/// `counters.hip` for gfx90a as code object version 4 (what ROCR 5.2's loader reads).
fn code_object_gfx90a_v4() -> std::path::PathBuf {
    static BUILT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = test_support::scratch_dir("counters-gfx90a").join("counters-gfx90a-v4.co");
            test_support::build_code_object_with(
                &common::apps_dir().join("counters.hip"),
                "gfx90a",
                &out,
                &["-mcode-object-version=4"],
            );
            out
        })
        .clone()
}

/// The `scale` dispatch's counters on `runtime` (one gfx90a agent), by name.
fn on_runtime(
    runtime: test_support::Runtime,
    tag: &str,
    groups: &[&[&str]],
    lifted: bool,
) -> (Dispatch, BTreeMap<String, CounterValue>) {
    let dir = test_support::scratch_dir(tag);
    let c = scale_command_with("scale", &code_object_gfx90a_v4(), &dir, groups);
    let mut c = {
        // The same arguments and environment, on an application whose runtime LD_LIBRARY_PATH
        // chooses.
        let mut any = Command::new(app_for_any_runtime("counters"));
        any.args(c.get_args());
        for (k, v) in c.get_envs() {
            match v {
                Some(v) => any.env(k, v),
                None => any.env_remove(k),
            };
        }
        any
    };
    runtime.apply(&mut c, "gfx90a");
    if lifted {
        c.env("VHSA_PMC_LIMITS", "off");
    }
    run(c);
    let d = scale_dispatch(&dir);
    let by = by_name(&d);
    (d, by)
}

#[test]
fn rocr_over_vkfd_collects_the_same_counters_as_vhsa_and_groups_equal_one_pass() {
    use test_support::Runtime::{RocrOnVkfd, Vhsa};
    let split: [&[&str]; 2] = [&MANY[..6], &MANY[6..]];
    let (rocr_d, rocr) = on_runtime(RocrOnVkfd, "counters-rocr-split", &split, false);
    let (_, rocr_one) = on_runtime(RocrOnVkfd, "counters-rocr-one", &[&MANY], true);
    let (_, vhsa) = on_runtime(Vhsa, "counters-vhsa-gfx90a", &split, false);
    assert_eq!(rocr_d.passes.len(), 2);
    assert_eq!(rocr.len(), MANY.len(), "{rocr:?}");
    for name in MANY {
        assert_eq!(
            rocr[name].value.to_bits(),
            rocr_one[name].value.to_bits(),
            "{name}"
        );
        assert_eq!(rocr[name].instances, rocr_one[name].instances, "{name}");
        assert_eq!(
            rocr[name].value.to_bits(),
            vhsa[name].value.to_bits(),
            "{name}"
        );
    }
    assert_eq!(rocr["SQ_WAVES"].value, WAVES);
}

#[test]
fn on_rocr_over_vkfd_the_v1_table_and_the_v2_library_give_identical_values() {
    let rocr = Some(test_support::Runtime::RocrOnVkfd);
    let (v1, v2) = (pmc_tool_values("v1", rocr), pmc_tool_values("v2", rocr));
    assert!(!v1.is_empty(), "no value read");
    assert_eq!(v1, v2);
    let vhsa = pmc_tool_values("v1", Some(test_support::Runtime::Vhsa));
    assert_eq!(v1, vhsa, "ROCR over vkfd and vhsa count the same");
}

#[test]
fn more_passes_than_groups_collect_group_p_mod_g_and_repeat_its_values() {
    let dir = test_support::scratch_dir("counters-twice");
    let groups: [&[&str]; 2] = [&MANY[..6], &MANY[6..]];
    let mut c = scale_command("scale", &dir, &groups);
    c.env("KREPLAY_PASSES", "4");
    run(c);
    let d = scale_dispatch(&dir);
    let seen: Vec<Option<u64>> = d.passes.iter().map(|p| p.group).collect();
    assert_eq!(seen, [Some(0), Some(1), Some(0), Some(1)]);
    for (a, b) in [(0, 2), (1, 3)] {
        assert_eq!(
            d.passes[a].counters, d.passes[b].counters,
            "passes {a} and {b}"
        );
    }
    assert!(d.pmc.unwrap().missing.is_empty());
}

#[test]
fn a_second_runtime_instance_builds_its_own_counter_packets() {
    let dir = test_support::scratch_dir("counters-twice-runtime");
    let groups: [&[&str]; 2] = [&MANY[..6], &MANY[6..]];
    run(scale_command("twice", &dir, &groups));
    let both = scale_dispatches(&dir);
    assert_eq!(both.len(), 2, "{both:?}");
    let (a, b) = (by_name(&both[0]), by_name(&both[1]));
    assert_eq!(a["SQ_WAVES"].value, WAVES);
    for name in MANY {
        assert_eq!(a[name].value, b[name].value, "{name}");
    }
}
