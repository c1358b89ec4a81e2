//! Counter packets at the packet level, on vhsa and on ROCR over vkfd: a C program collects
//! counter groups around a dispatch through the v1 extension table or the v2 library and prints
//! every value. Groups collected one per pass equal the same counters collected at once with the
//! limits lifted; v1 and v2 agree; a group over a block's limit is refused; each window runs
//! exactly its own three packets; a dispatch on a second queue inside the window is counted;
//! instruction counters equal an independent count from the code object's disassembly.

mod common;

use amdgpu_counters::{Target, find};
use common::{Values, group, group_on, run, setup, setup_for, text};
use std::collections::BTreeMap;
use std::process::Output;
use test_support::Runtime;

fn values(o: &Output) -> Values {
    assert!(o.status.success(), "{}", text(o));
    let mut v = Values::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.first() == Some(&"value") {
            let n = |i: usize| w[i].parse::<u64>().unwrap();
            v.insert((n(1) as usize, n(2) as u32, n(3) as u32, n(4)), n(5));
        }
    }
    v
}

/// The packets each window executed: (start, read, stop) per group.
fn packets(o: &Output) -> Vec<(u64, u64, u64)> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("packets "))
        .map(|l| {
            let w: Vec<u64> = l
                .split_whitespace()
                .skip(2)
                .map(|x| x.parse().unwrap())
                .collect();
            (w[0], w[1], w[2])
        })
        .collect()
}

/// A counter's samples summed, in a group.
fn total(v: &Values, g: usize, name: &str) -> u64 {
    let c = find(Target::Gfx90a, name).unwrap();
    v.iter()
        .filter(|((gg, b, e, _), _)| *gg == g && *b == c.block.id() && *e == c.event)
        .map(|(_, x)| *x)
        .sum()
}

/// The values of one group keyed without the group number.
fn ungrouped(v: &Values) -> BTreeMap<(u32, u32, u64), u64> {
    v.iter()
        .map(|((_, b, e, s), x)| ((*b, *e, *s), *x))
        .collect()
}

fn groups() -> Vec<Vec<&'static str>> {
    vec![
        vec![
            "SQ_WAVES",
            "SQ_INSTS",
            "SQ_INSTS_VALU",
            "SQ_INSTS_SALU",
            "SQ_INSTS_SMEM",
        ],
        vec![
            "SQ_INSTS_VMEM_RD",
            "SQ_INSTS_VMEM_WR",
            "SQ_INSTS_LDS",
            "SQ_INSTS_BRANCH",
            "SQ_WAVES",
        ],
        vec![
            "SPI_CSN_WAVE",
            "SPI_CSN_NUM_THREADGROUPS",
            "GRBM_GUI_ACTIVE",
            "GRBM_COUNT",
        ],
        vec![
            "TA_FLAT_READ_WAVEFRONTS",
            "TA_FLAT_WRITE_WAVEFRONTS",
            "SQ_WAVES",
        ],
    ]
}

#[test]
fn groups_one_per_pass_equal_all_at_once_on_both_runtimes_and_both_interfaces() {
    let s = setup("equivalence");
    let per_pass: Vec<String> = groups().iter().map(|g| group(g)).collect();
    let mut all: Vec<&str> = groups().concat();
    all.sort();
    all.dedup();
    let at_once = vec![group(&all)];
    let (wg_groups, grid) = (6u64, 6 * 256);
    for runtime in Runtime::ALL {
        let mut seen = Vec::new();
        for mode in ["v1", "v2"] {
            let o = run(&s, runtime, mode, "straight", grid, &per_pass, &[]);
            let split = values(&o);
            assert_eq!(packets(&o), vec![(1, 1, 1); per_pass.len()], "{}", text(&o));
            let lifted = run(
                &s,
                runtime,
                mode,
                "straight",
                grid,
                &at_once,
                &[("VHSA_PMC_LIMITS", "off")],
            );
            let once = ungrouped(&values(&lifted));
            // Every group's every sample equals the one-pass value, bit for bit.
            for (g, names) in groups().iter().enumerate() {
                let mine: Values = split
                    .iter()
                    .filter(|(k, _)| k.0 == g)
                    .map(|(k, v)| (*k, *v))
                    .collect();
                assert!(
                    !mine.is_empty(),
                    "{} {mode}: group {g} has no values",
                    runtime.name()
                );
                for ((_, b, e, smp), v) in &mine {
                    assert_eq!(
                        once.get(&(*b, *e, *smp)),
                        Some(v),
                        "{} {mode}: {names:?}",
                        runtime.name()
                    );
                }
                // SQ_WAVES is the true wave count in every group holding it, never a multiple.
                if names.contains(&"SQ_WAVES") {
                    assert_eq!(
                        total(&split, g, "SQ_WAVES"),
                        wg_groups * 4,
                        "{} {mode}",
                        runtime.name()
                    );
                }
            }
            assert_eq!(total(&split, 2, "SPI_CSN_NUM_THREADGROUPS"), wg_groups);
            assert_eq!(total(&split, 2, "SPI_CSN_WAVE"), wg_groups * 4);
            // One global load and one store per wave.
            assert_eq!(total(&split, 3, "TA_FLAT_READ_WAVEFRONTS"), wg_groups * 4);
            assert_eq!(total(&split, 3, "TA_FLAT_WRITE_WAVEFRONTS"), wg_groups * 4);
            assert!(total(&split, 1, "SQ_INSTS_LDS") >= 2 * wg_groups * 4);
            seen.push(split);
        }
        // A C tool on the v1 table and one on the v2 library read identical values.
        assert_eq!(seen[0], seen[1], "{}: v1 and v2 differ", runtime.name());
        // A loop kernel (5 trips): per-group values equal the one-pass values as well.
        let split = values(&run(&s, runtime, "v2", "looped", 1024, &per_pass, &[]));
        let once = ungrouped(&values(&run(
            &s,
            runtime,
            "v2",
            "looped",
            1024,
            &at_once,
            &[("VHSA_PMC_LIMITS", "off")],
        )));
        for ((_, b, e, smp), v) in &split {
            assert_eq!(
                once.get(&(*b, *e, *smp)),
                Some(v),
                "looped on {}",
                runtime.name()
            );
        }
        assert_eq!(total(&split, 0, "SQ_WAVES"), 16);
    }
}

#[test]
fn a_group_over_a_block_limit_is_refused_and_lifting_the_limit_accepts_it() {
    let s = setup("limits");
    let nine = group(&[
        "SQ_WAVES",
        "SQ_INSTS",
        "SQ_INSTS_VALU",
        "SQ_INSTS_SALU",
        "SQ_INSTS_SMEM",
        "SQ_INSTS_VMEM_RD",
        "SQ_INSTS_VMEM_WR",
        "SQ_INSTS_LDS",
        "SQ_INSTS_BRANCH",
    ]);
    for runtime in Runtime::ALL {
        for mode in ["v1", "v2"] {
            let o = run(
                &s,
                runtime,
                mode,
                "straight",
                256,
                std::slice::from_ref(&nine),
                &[],
            );
            assert_eq!(o.status.code(), Some(3), "{}", text(&o));
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(
                out.contains("9 counters of block SQ") && out.contains("8 per pass"),
                "{out}"
            );
            assert_eq!(packets(&o), vec![(0, 0, 0)], "nothing ran: {out}");
            let o = run(
                &s,
                runtime,
                mode,
                "straight",
                256,
                std::slice::from_ref(&nine),
                &[("VHSA_PMC_LIMITS", "off")],
            );
            assert_eq!(total(&values(&o), 0, "SQ_WAVES"), 4);
        }
    }
}

#[test]
fn a_dispatch_on_a_second_queue_inside_the_window_is_counted() {
    let s = setup("second-queue");
    let g = vec![group(&["SQ_WAVES", "SPI_CSN_NUM_THREADGROUPS"])];
    for runtime in Runtime::ALL {
        let alone = values(&run(&s, runtime, "v2", "looped", 512, &g, &[]));
        let shared = values(&run(
            &s,
            runtime,
            "v2",
            "looped",
            512,
            &g,
            &[("PMC_SECOND_QUEUE", "1")],
        ));
        assert_eq!(total(&alone, 0, "SQ_WAVES"), 8);
        // Counters are agent-wide: without isolation the other queue's waves are in them.
        assert_eq!(total(&shared, 0, "SQ_WAVES"), 16, "{}", runtime.name());
        assert_eq!(total(&shared, 0, "SPI_CSN_NUM_THREADGROUPS"), 4);
    }
}

#[test]
fn instruction_counters_equal_the_disassembly_times_waves_and_trips_on_both_runtimes() {
    let s = setup("disassembly");
    let (first, second) = test_support::instruction_count::COUNTED.split_at(5);
    let g = vec![group(first), group(second)];
    // `looped` runs b[0] = 5 trips (the program fills b with 5.0); one wave per 64 work-items.
    for (kernel, grid, waves, trips) in [("straight", 4 * 256, 16, 1), ("looped", 256, 4, 5)] {
        let lines = test_support::instruction_count::disassemble(&s.code_object, "gfx90a", kernel);
        let want = test_support::instruction_count::expected(&lines, trips, waves);
        for runtime in Runtime::ALL {
            let v = values(&run(&s, runtime, "v1", kernel, grid, &g, &[]));
            for (k, name) in test_support::instruction_count::COUNTED.iter().enumerate() {
                let got = total(&v, k / 5, name);
                assert_eq!(got, want[name], "{kernel} on {}: {name}", runtime.name());
            }
        }
    }
}

#[test]
fn a_real_aqlprofiles_register_writes_are_a_queue_error_on_both_runtimes() {
    let s = setup("foreign");
    for runtime in Runtime::ALL {
        let o = run(&s, runtime, "foreign", "straight", 256, &[], &[]);
        assert_eq!(o.status.code(), Some(4), "{}: {}", runtime.name(), text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        let want = format!(
            "queue-error {:#x}",
            hsa_abi::ffi::HSA_STATUS_ERROR_INVALID_PACKET_FORMAT
        );
        assert!(out.contains(&want), "{}: {out}", runtime.name());
    }
}

#[test]
fn on_gfx942_vhsa_reports_one_sample_per_shader_engine_and_groups_equal_one_pass() {
    let s = setup_for("gfx942", Target::Gfx942);
    let names = [
        vec!["SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_VMEM_RD"],
        vec!["SQ_WAVES", "SQ_INSTS_SALU", "SPI_CSN_NUM_THREADGROUPS"],
    ];
    let per_pass: Vec<String> = names.iter().map(|g| group_on(Target::Gfx942, g)).collect();
    let mut all: Vec<&str> = names.concat();
    all.sort();
    all.dedup();
    let at_once = vec![group_on(Target::Gfx942, &all)];
    // 40 work-groups of 256 on gfx942's 32 shader engines.
    let grid = 40 * 256;
    let split = values(&run(
        &s,
        Runtime::Vhsa,
        "v2",
        "straight",
        grid,
        &per_pass,
        &[],
    ));
    let once = ungrouped(&values(&run(
        &s,
        Runtime::Vhsa,
        "v1",
        "straight",
        grid,
        &at_once,
        &[("VHSA_PMC_LIMITS", "off")],
    )));
    for ((_, b, e, smp), v) in &split {
        assert_eq!(once.get(&(*b, *e, *smp)), Some(v));
    }
    let waves = find(Target::Gfx942, "SQ_WAVES").unwrap();
    let samples: Vec<u64> = split
        .iter()
        .filter(|((g, b, e, _), _)| *g == 0 && *b == waves.block.id() && *e == waves.event)
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(samples.len(), 32, "one sample per shader engine");
    assert_eq!(samples.iter().sum::<u64>(), 40 * 4);
    assert_eq!(
        total_on(&split, 1, Target::Gfx942, "SPI_CSN_NUM_THREADGROUPS"),
        40
    );
}

fn total_on(v: &Values, g: usize, target: Target, name: &str) -> u64 {
    let c = find(target, name).unwrap();
    v.iter()
        .filter(|((gg, b, e, _), _)| *gg == g && *b == c.block.id() && *e == c.event)
        .map(|(_, x)| *x)
        .sum()
}

#[test]
fn a_read_the_counter_file_refuses_reports_why_and_the_queue_runs_on() {
    let s = setup("refused-read");
    let g = vec![group(&["SQ_WAVES"])];
    for runtime in Runtime::ALL {
        for mode in ["v1", "v2"] {
            let o = run(
                &s,
                runtime,
                mode,
                "straight",
                256,
                &g,
                &[("PMC_SKIP_START", "1")],
            );
            assert_eq!(o.status.code(), Some(5), "{}", text(&o));
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(
                out.contains("iterate-failed 0") && out.contains("no start programmed"),
                "{} {mode}: {out}",
                runtime.name()
            );
            // The read and the stop completed (the stop's signal ended the window).
            assert_eq!(packets(&o), vec![(0, 0, 1)], "{out}");
        }
    }
}
