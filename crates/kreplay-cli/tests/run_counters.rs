//! Counters on the command line of the virtual runtime: groups that cannot be collected are
//! refused before the application starts (it leaves a marker file when it runs), input files
//! and option mistakes have their own exit codes, and the listing and check show each agent's
//! counters.

mod common;

use common::{kreplay, text};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

/// A script that leaves a file behind when it runs, to prove it was not started.
fn marker_app(dir: &Path) -> String {
    let app = dir.join("app.sh");
    std::fs::write(
        &app,
        format!("#!/bin/sh\ntouch '{}'\n", dir.join("ran").display()),
    )
    .unwrap();
    std::fs::set_permissions(&app, std::fs::Permissions::from_mode(0o755)).unwrap();
    app.display().to_string()
}

/// `kreplay run --runtime virtual` of the marker application with `options`; asserts it did
/// not start.
fn refused_run(dir: &Path, agents: &str, options: &[&str]) -> Output {
    let app = marker_app(dir);
    let out = kreplay()
        .args([
            "run",
            "--runtime",
            "virtual",
            "--virtual-agents",
            agents,
            "-d",
        ])
        .arg(dir.join("out"))
        .args(options)
        .arg("--")
        .arg(&app)
        .output()
        .unwrap();
    assert!(
        !dir.join("ran").exists(),
        "the application must not start: {}",
        text(&out.stderr)
    );
    out
}

fn expect(out: &Output, code: i32, needles: &[&str]) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    assert!(stderr.contains("kreplay: error: "), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "`{n}` missing from: {stderr}");
    }
}

/// Nine SQ counters of gfx90a (one more than a pass collects).
fn nine_sq_counters() -> Vec<String> {
    let names: Vec<String> = amdgpu_counters::counters(amdgpu_counters::Target::Gfx90a)
        .iter()
        .filter(|c| c.block == amdgpu_counters::Block::Sq && c.hardware)
        .filter(|c| amdgpu_counters::find(amdgpu_counters::Target::Gfx942, c.name).is_some())
        .take(9)
        .map(|c| c.name.to_owned())
        .collect();
    assert_eq!(names.len(), 9);
    names
}

#[test]
fn a_group_over_the_sq_limit_is_refused_before_the_application_starts() {
    let dir = test_support::scratch_dir("pmc-over-limit");
    let nine = nine_sq_counters();
    let mut options = vec!["--pmc", "SQ_WAVES", "--pmc"];
    options.extend(nine.iter().map(String::as_str));
    let out = refused_run(&dir, "gfx90a", &options);
    expect(
        &out,
        80,
        &[
            "counter group 2 of 2",
            "9 SQ counters",
            "at most 8",
            "gfx90a",
            &nine[0],
            &nine[8],
        ],
    );
    // Every agent of the runtime is checked: gfx942 as the second agent.
    let out = refused_run(&dir, "gfx90a,gfx942", &options);
    expect(&out, 80, &["9 SQ counters"]);
}

#[test]
fn unknown_counters_and_bad_inputs_are_refused_before_the_start() {
    let dir = test_support::scratch_dir("pmc-unknown");
    let out = refused_run(&dir, "gfx942", &["--pmc", "SQ_WAVES,NOT_A_COUNTER"]);
    expect(&out, 80, &["NOT_A_COUNTER", "gfx942", "kreplay info --pmc"]);

    let bad_yaml = dir.join("groups.yaml");
    std::fs::write(&bad_yaml, "jobs:\n  - pmc: [SQ_WAVES\n").unwrap();
    let out = refused_run(&dir, "gfx942", &["-i", bad_yaml.to_str().unwrap()]);
    expect(&out, 82, &["groups.yaml", "not valid YAML"]);

    let groups = dir.join("groups.json");
    std::fs::write(
        &groups,
        r#"{"jobs": [{"pmc_groups": [["SQ_WAVES"], ["GRBM_COUNT"]]}]}"#,
    )
    .unwrap();
    let out = refused_run(
        &dir,
        "gfx942",
        &["--pmc", "SQ_WAVES", "-i", groups.to_str().unwrap()],
    );
    expect(&out, 82, &["pmc_groups", "--pmc"]);

    let wrong = dir.join("groups.cfg");
    std::fs::write(&wrong, "pmc: SQ_WAVES\n").unwrap();
    let out = refused_run(&dir, "gfx942", &["-i", wrong.to_str().unwrap()]);
    expect(&out, 82, &[".txt", ".yaml", ".json"]);

    let out = refused_run(
        &dir,
        "gfx942",
        &["--pmc", "SQ_WAVES", "--pmc", "GRBM_COUNT", "--passes", "1"],
    );
    expect(&out, 67, &["--passes 1", "2 counter groups"]);

    // A text file's group over the limit is refused like a --pmc one.
    let txt = dir.join("groups.txt");
    std::fs::write(
        &txt,
        format!(
            "# one group too wide\npmc: {}\n",
            nine_sq_counters().join(" ")
        ),
    )
    .unwrap();
    let out = refused_run(&dir, "gfx942", &["-i", txt.to_str().unwrap()]);
    expect(&out, 80, &["9 SQ counters"]);
}

#[test]
fn list_avail_shows_every_agents_counters() {
    let out = kreplay()
        .args(["run", "-L", "--runtime", "virtual"])
        .env("VHSA_AGENTS", "gfx90a,gfx942")
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stdout.starts_with("counter collection: "), "{stdout}");
    let gfx90a = stdout
        .split("Name:gfx90a\n")
        .nth(1)
        .and_then(|rest| rest.split("\nGPU:").next())
        .expect("a gfx90a agent");
    let gfx942 = stdout
        .split("Name:gfx942\n")
        .nth(1)
        .expect("a gfx942 agent");
    // Event ids differ between the targets (SQ_INSTS_VMEM_WR: 53 on gfx90a, 57 on gfx942).
    let block_of = |listing: &str, name: &str| -> String {
        listing
            .split("\n\n")
            .find(|b| b.contains(&format!("Counter_Name        :\t{name}\n")))
            .unwrap_or_else(|| panic!("{name} not listed"))
            .to_owned()
    };
    for (listing, event) in [(gfx90a, "53"), (gfx942, "57")] {
        let block = block_of(listing, "SQ_INSTS_VMEM_WR");
        assert!(
            block.contains(&format!("Event               :\t{event}")),
            "{block}"
        );
        assert!(block.contains("Per_pass_limit      :\tSQ 8"), "{block}");
        assert!(block.contains("Exactness           :\texact"), "{block}");
        assert!(block.contains("Block               :\tSQ"), "{block}");
        assert!(block.contains("Description         :\t"), "{block}");
        assert!(
            block.contains("Dimensions          :\tDIMENSION_"),
            "{block}"
        );
    }
    let info = kreplay()
        .args(["info", "--pmc", "--runtime", "virtual"])
        .env("VHSA_AGENTS", "gfx90a,gfx942")
        .output()
        .unwrap();
    assert_eq!(text(&info.stdout), stdout, "info --pmc is the same listing");
    let one = kreplay()
        .args([
            "run",
            "-L",
            "--runtime",
            "virtual",
            "--virtual-agents",
            "gfx90a",
        ])
        .output()
        .unwrap();
    let one = text(&one.stdout);
    assert!(
        one.contains("Name:gfx90a\n") && !one.contains("Name:gfx942"),
        "-L lists the agents of --virtual-agents: {one}"
    );
}

#[test]
fn pmc_check_tells_whether_a_set_fits_one_pass() {
    let out = kreplay()
        .args([
            "info",
            "--runtime",
            "virtual",
            "--pmc-check",
            "SQ_WAVES",
            "SQ_INSTS_VALU,GRBM_COUNT",
        ])
        .env("VHSA_AGENTS", "gfx942")
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "(gfx942): SQ_WAVES SQ_INSTS_VALU GRBM_COUNT fit in one pass (GRBM 1/2, SQ 2/8)"
        ),
        "{stdout}"
    );
    let nine = nine_sq_counters();
    let out = kreplay()
        .args(["info", "--runtime", "virtual", "--pmc-check"])
        .args(&nine)
        .env("VHSA_AGENTS", "gfx942")
        .output()
        .unwrap();
    expect(&out, 80, &["9 SQ counters", "at most 8"]);
}

#[test]
fn a_runtime_that_cannot_collect_counters_is_refused_with_the_remedy() {
    // The real ROCR on a vkfd directory without the drop-in aqlprofile library: neither the v2
    // library nor ROCR's v1 table (which loads the same library) is available.
    let dir = test_support::scratch_dir("pmc-unavailable");
    test_support::vkfd_lib_dir();
    let thunk = dir.join("thunk");
    std::fs::create_dir_all(&thunk).unwrap();
    std::os::unix::fs::symlink(
        test_support::profile_dir().join("libvkfd.so"),
        thunk.join("libhsakmt.so.1"),
    )
    .unwrap();
    let app = marker_app(&dir);
    let out = kreplay()
        .args([
            "run",
            "--runtime",
            "system-on-vkfd",
            "--virtual-agents",
            "gfx90a",
        ])
        .args(["--pmc", "SQ_WAVES", "-d"])
        .arg(dir.join("out"))
        .arg("--")
        .arg(&app)
        .env("KREPLAY_VKFD_DIR", &thunk)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(!dir.join("ran").exists(), "the application must not start");
    expect(
        &out,
        81,
        &[
            "counter collection is unavailable",
            "libhsa-amd-aqlprofile64.so.1",
            "--runtime virtual",
        ],
    );
    // The listing says so too, with the remedy, and exits normally.
    let listing = kreplay()
        .args(["run", "-L", "--runtime", "system-on-vkfd"])
        .env("KREPLAY_VKFD_DIR", &thunk)
        .env("VKFD_AGENTS", "gfx90a")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    let stdout = text(&listing.stdout);
    assert_eq!(listing.status.code(), Some(0), "{}", text(&listing.stderr));
    assert!(
        stdout.starts_with("counter collection: unavailable")
            && stdout.contains("to collect counters: install"),
        "{stdout}"
    );
}
