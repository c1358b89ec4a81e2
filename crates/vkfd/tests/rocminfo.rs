//! Debian's `rocminfo` on the real ROCR with vkfd lists the CPU and every configured GPU agent
//! with their pools, and describes a GPU as vhsa does for the same topology. The differences
//! (the CPU agent's third pool, names) are listed in `docs/limitations.md`.

mod common;
use common::*;

/// Agent blocks: (name, block text).
fn agents(out: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    for block in out.split("*******").skip(1).collect::<Vec<_>>().chunks(2) {
        if let [_, body] = block {
            let name = body
                .lines()
                .map(str::trim)
                .find_map(|l| l.strip_prefix("Name:"))
                .unwrap_or("")
                .trim()
                .to_owned();
            v.push((name, (*body).to_owned()));
        }
    }
    v
}

/// The pool flags lines of an agent block, in order.
fn pools(block: &str) -> Vec<String> {
    block
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("Segment:"))
        .map(|s| s.trim().to_owned())
        .collect()
}

/// The value of a `Key:` line of an agent block.
fn field<'a>(block: &'a str, key: &str) -> &'a str {
    block
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no `{key}` in\n{block}"))
}

#[test]
fn the_real_rocminfo_lists_the_gfx90a_agent_and_its_pools() {
    let dir = test_support::scratch_dir("vkfd-rocminfo");
    let out = run_rocminfo(&dir, Runtime::RocrOnVkfd, "gfx90a");
    let a = agents(&out);
    assert_eq!(a.len(), 2, "{out}");
    assert_eq!(a[1].0, "gfx90a", "{out}");
    assert_eq!(
        field(&a[1].1, "Marketing Name"),
        "AMD Instinct MI250X (virtual)"
    );
    assert_eq!(field(&a[1].1, "Compute Unit"), "110");
    assert!(
        out.contains("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
        "{out}"
    );
    // The real runtime gives the CPU three pools on a discrete-GPU system.
    assert_eq!(
        pools(&a[0].1),
        [
            "GLOBAL; FLAGS: FINE GRAINED",
            "GLOBAL; FLAGS: KERNARG, FINE GRAINED",
            "GLOBAL; FLAGS: COARSE GRAINED"
        ],
        "{}",
        a[0].1
    );
    assert_eq!(
        pools(&a[1].1),
        ["GLOBAL; FLAGS: COARSE GRAINED", "GROUP"],
        "{}",
        a[1].1
    );
}

#[test]
fn two_gpus_are_two_agents() {
    let dir = test_support::scratch_dir("vkfd-rocminfo-two");
    let out = run_rocminfo(&dir, Runtime::RocrOnVkfd, "gfx90a,gfx908");
    let names: Vec<String> = agents(&out).into_iter().skip(1).map(|a| a.0).collect();
    assert_eq!(names, ["gfx90a", "gfx908"], "{out}");
}

#[test]
fn a_gpu_reads_the_same_on_rocr_with_vkfd_and_on_vhsa() {
    let dir = test_support::scratch_dir("vkfd-rocminfo-parity");
    // ROCR exposes a GPU's memory fine-grained too in an XGMI hive or on request
    // (`HSA_FORCE_FINE_GRAIN_PCIE=1`); vhsa always does.
    let real = run_rocminfo_with(
        &dir,
        Runtime::RocrOnVkfd,
        "gfx90a",
        &[("HSA_FORCE_FINE_GRAIN_PCIE", "1")],
    );
    let ours = run_rocminfo(&dir, Runtime::Vhsa, "gfx90a");
    let (real, ours) = (agents(&real), agents(&ours));
    let (r, o) = (&real[1].1, &ours[1].1);
    for key in [
        "Name",
        "Marketing Name",
        "Vendor Name",
        "Feature",
        "Profile",
        "Compute Unit",
        "SIMDs per CU",
        "Shader Engines",
        "Chip ID",
        "Wavefront Size",
        "Workgroup Max Size",
        "Max Waves Per CU",
        "Queue Min Size",
        "Queue Max Size",
    ] {
        assert_eq!(
            field(r, key),
            field(o, key),
            "`{key}` differs:\nROCR:\n{r}\nvhsa:\n{o}"
        );
    }
    assert_eq!(
        pools(r),
        pools(o),
        "GPU pools differ:\nROCR:\n{r}\nvhsa:\n{o}"
    );
}

/// The GPU names `rocminfo` lists on `runtime` with `ROCR_VISIBLE_DEVICES=value` (`None`: unset)
/// over the GPUs `gfx90a,gfx908`, and each GPU's `Uuid` line.
fn visible_gpus(
    dir: &std::path::Path,
    runtime: Runtime,
    value: Option<&str>,
) -> Vec<(String, String)> {
    let env: Vec<(&str, &str)> = value
        .map(|v| ("ROCR_VISIBLE_DEVICES", v))
        .into_iter()
        .collect();
    let out = run_rocminfo_with(dir, runtime, "gfx90a,gfx908", &env);
    let listed = agents(&out);
    assert_eq!(
        listed.first().map(|a| field(&a.1, "Device Type")),
        Some("CPU"),
        "{out}"
    );
    listed
        .into_iter()
        .skip(1)
        .map(|(name, block)| (name, field(&block, "Uuid").to_owned()))
        .collect()
}

#[test]
fn rocr_visible_devices_selects_and_orders_the_gpus_alike_on_both_runtimes() {
    let dir = test_support::scratch_dir("vkfd-rocminfo-visible");
    for runtime in Runtime::ALL {
        let all = visible_gpus(&dir, runtime, None);
        let names: Vec<&str> = all.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(names, ["gfx90a", "gfx908"], "{}", runtime.name());
        let second = &all[1].1;
        let cases: Vec<(String, Vec<&str>)> = vec![
            ("1,0".into(), vec!["gfx908", "gfx90a"]),
            ("1".into(), vec!["gfx908"]),
            ("0x1, 0".into(), vec!["gfx908", "gfx90a"]),
            ("".into(), vec![]),
            ("-1".into(), vec![]),
            ("2,0".into(), vec![]),
            ("0,0,1".into(), vec!["gfx90a"]),
            ("1,junk,0".into(), vec!["gfx908"]),
            (second.to_lowercase(), vec!["gfx908"]),
            (format!("{second},0"), vec!["gfx908", "gfx90a"]),
            ("GPU-XX,0".into(), vec![]),
        ];
        for (value, want) in cases {
            let got = visible_gpus(&dir, runtime, Some(&value));
            let got_names: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
            assert_eq!(
                got_names,
                want,
                "{} with ROCR_VISIBLE_DEVICES=`{value}`",
                runtime.name()
            );
            for gpu in &got {
                assert!(
                    all.contains(gpu),
                    "{}: a shown GPU keeps its UUID: {gpu:?} not in {all:?}",
                    runtime.name()
                );
            }
        }
    }
}
