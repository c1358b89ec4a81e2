//! `kreplay info --runtime system-on-vkfd` queries the real ROCR on vkfd and says which runtime
//! and which thunk it used; `--runtime virtual` has no thunk.

use std::process::Command;

fn info(runtime: &str) -> String {
    test_support::vkfd_lib_dir();
    test_support::vhsa_lib_dir();
    let out = Command::new(test_support::kreplay_bin())
        .args(["info", "--runtime", runtime])
        .env("VKFD_AGENTS", "gfx90a")
        .env("VHSA_AGENTS", "gfx90a")
        .env_remove("KREPLAY_VKFD_DIR")
        .env_remove("KREPLAY_VHSA_DIR")
        .env_remove("HSA_TOOLS_LIB")
        .output()
        .expect("run kreplay info");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn info_names_the_real_runtime_and_the_vkfd_thunk() {
    let text = info("system-on-vkfd");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("runtime: system on vkfd (virtual GPU) /"),
        "{text}"
    );
    assert!(lines[0].ends_with("libhsa-runtime64.so.1"), "{text}");
    assert!(
        lines[1].starts_with("thunk: vkfd (virtual GPU) /"),
        "{text}"
    );
    assert!(lines[1].ends_with("libvkfd.so"), "{text}");
    assert!(
        text.contains("isa: amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
        "{text}"
    );
    // The real runtime's CPU agent has three pools.
    assert!(text.contains("  pool 2: GLOBAL coarse-grained"), "{text}");
}

#[test]
fn info_on_vhsa_reports_no_thunk() {
    let text = info("virtual");
    assert!(text.starts_with("runtime: virtual (vhsa) /"), "{text}");
    assert!(
        text.lines().nth(1) == Some("thunk: none (the runtime does not use libhsakmt)"),
        "{text}"
    );
}
