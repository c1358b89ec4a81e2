//! The committed C header `include/vhsa.h` is what cbindgen generates from `src/ext.rs`, and it
//! compiles cleanly as C (pedantic) and as C++.
//! Regenerate with `VHSA_BLESS=1 cargo test -p vhsa --test header`.

use std::path::PathBuf;
use std::process::Command;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generate() -> String {
    let config =
        cbindgen::Config::from_file(manifest().join("cbindgen.toml")).expect("read cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(manifest().join("src").join("ext.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn header_is_current() {
    let path = manifest().join("include").join("vhsa.h");
    let fresh = generate();
    if std::env::var_os("VHSA_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "{} is stale: regenerate it with `VHSA_BLESS=1 cargo test -p vhsa --test header` and commit it",
        path.display()
    );
    for f in [
        "vhsa_native_kernel_create",
        "vhsa_stats",
        "vhsa_stats_reset",
        "vhsa_fault_fail_pool_allocation",
        "vhsa_fault_fail_copies",
        "vhsa_fault_fail_symbol_iteration",
        "vhsa_fault_delay_async_handlers",
        "vhsa_fault_hang_kernel",
    ] {
        assert!(fresh.contains(&format!("{f}(")), "the header lacks {f}");
    }
}

#[test]
fn header_compiles_as_c_and_cpp() {
    let dir = test_support::scratch_dir("vhsa-header");
    let src = dir.join("use.c");
    std::fs::write(
        &src,
        "#include \"vhsa.h\"\n#include <string.h>\nint main(void) { vhsa_stats_t s; memset(&s, 0, sizeof s); s.size = sizeof s; return vhsa_stats(&s) == HSA_STATUS_SUCCESS ? 0 : 1; }\n",
    )
    .unwrap();
    let include = manifest().join("include");
    for (compiler, extra) in [
        ("cc", vec!["-std=c11"]),
        ("c++", vec!["-x", "c++", "-std=c++17"]),
    ] {
        let status = Command::new(compiler)
            .args(&extra)
            .args(["-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fsyntax-only"])
            .arg(format!("-I{}", include.display()))
            .arg(&src)
            .status()
            .expect("run the compiler");
        assert!(status.success(), "{compiler} rejects include/vhsa.h");
    }
}
