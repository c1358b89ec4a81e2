//! Binds the installed thunk header (`hsakmt.h`, Debian's `libhsakmt-dev`) and links the library
//! as the thunk:
//!
//! - `ffi.rs` (in `OUT_DIR`): bindgen output over `hsakmt.h` (types, enums, constants) plus one
//!   function-pointer typedef per exported function;
//! - `exports.rs`: per export, a constant that only compiles when the Rust function's type is
//!   the header's, and an `export!` line (the exported symbol, a jump to the Rust function);
//! - a linker version script giving every name of `exports.txt` the `HSAKMT_1` version node;
//! - the soname `libhsakmt.so.1`.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

fn header() -> PathBuf {
    println!("cargo:rerun-if-env-changed=HSAKMT_INCLUDE_DIR");
    let dir = env::var_os("HSAKMT_INCLUDE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/include"));
    let h = dir.join("hsakmt.h");
    if !h.is_file() {
        panic!(
            "vkfd: no hsakmt.h in {} . Install the thunk headers (Debian: `apt-get install \
             libhsakmt-dev`, or run scripts/install-deps.sh) or point HSAKMT_INCLUDE_DIR at the \
             directory holding hsakmt.h.",
            dir.display()
        );
    }
    h
}

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let list = manifest.join("exports.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    let names: Vec<String> = fs::read_to_string(&list)
        .unwrap_or_else(|e| panic!("vkfd: cannot read {}: {e}", list.display()))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();

    let hdr = header();
    let mut wrapper = format!("#include \"{}\"\n", hdr.display());
    for n in &names {
        writeln!(wrapper, "typedef __typeof__({n}) *{n}_fn_t;").unwrap();
    }
    let wrapper_path = out.join("hsakmt_wrapper.h");
    fs::write(&wrapper_path, wrapper).unwrap();
    let bindings = bindgen::Builder::default()
        .header(wrapper_path.to_string_lossy())
        .clang_arg("-xc")
        .allowlist_type("Hsa.*|HSA.*|_Hsa.*|hsaKmt.*_fn_t|HSAKMT_STATUS|HSAuint.*|HSAint.*")
        .allowlist_var("HSA.*")
        .with_codegen_config(bindgen::CodegenConfig::TYPES | bindgen::CodegenConfig::VARS)
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate()
        .unwrap_or_else(|e| {
            panic!("vkfd: bindgen failed on {}: {e}. libclang is needed (Debian: libclang-22-dev; set LIBCLANG_PATH if several are installed).", hdr.display())
        });
    // The header packs its structs to 4 bytes; bindgen marks the bitfield structs inside them
    // `align(4)`, which Rust refuses inside a packed struct. Their storage is bytes, and every
    // one of them sits at a 4-byte offset, so dropping the attribute keeps the C layout.
    let text = bindings.to_string().replace("#[repr(align(4))]\n", "");
    fs::write(out.join("ffi.rs"), text).unwrap();

    let mut checks = String::new();
    for n in &names {
        writeln!(checks, "const _: crate::ffi::{n}_fn_t = Some({n});").unwrap();
        writeln!(checks, "export!({n});").unwrap();
    }
    fs::write(out.join("exports.rs"), checks).unwrap();

    let mut script = String::from("HSAKMT_1 {\n  global:\n");
    for n in &names {
        writeln!(script, "    {n};").unwrap();
    }
    script.push_str("  local:\n    *;\n};\n");
    // vkfd's own C extension (see `src/ext.rs`), under its own version node.
    script.push_str("VKFD_1 {\n  global:\n    vkfd_stats;\n    vkfd_pmc_packets_executed;\n};\n");
    let script_path = out.join("hsakmt.map");
    fs::write(&script_path, script).unwrap();
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        script_path.display()
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsakmt.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
