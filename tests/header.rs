//! The committed C header `include/kreplay.h` matches what cbindgen generates from `src/abi.rs` (types) and `src/api.rs` (functions).

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("read cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(root)
        .with_config(config)
        .generate()
        .expect("cbindgen failed to generate the header from src/abi.rs and src/api.rs");
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let path = root.join("include/kreplay.h");
    if std::env::var_os("KREPLAY_REGENERATE_HEADER").is_some() {
        std::fs::write(&path, &fresh).expect("write include/kreplay.h");
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/kreplay.h is stale: regenerate it with `KREPLAY_REGENERATE_HEADER=1 cargo test -p kreplay --test header` and commit it"
    );
}

#[test]
fn header_compiles_cleanly_as_c_and_as_cpp() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = test_support::scratch_dir("header-compile");
    let src = dir.join("use_header.c");
    std::fs::write(
        &src,
        "#include \"kreplay.h\"\nint main(void) { kreplay_stats_t s = {sizeof s, 0, 0, 0, 0, 0, 0, 0, 0}; \
         return kreplay_status_string(KREPLAY_STATUS_SUCCESS) == 0 && s.size == 0; }\n",
    )
    .unwrap();
    for (compiler, lang, std) in [("cc", "c", "-std=c11"), ("c++", "c++", "-std=c++17")] {
        let out = std::process::Command::new(compiler)
            .args([
                "-x",
                lang,
                std,
                "-Wall",
                "-Wextra",
                "-Wpedantic",
                "-Werror",
                "-fsyntax-only",
            ])
            .arg(format!("-I{}", root.join("include").display()))
            .arg(&src)
            .output()
            .expect("run the system compiler");
        assert!(
            out.status.success(),
            "{compiler} rejects include/kreplay.h:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
