//! Generates the exported `hsa_*` entry points and links the library as the HSA runtime.
//!
//! - `exports.rs` (in `OUT_DIR`): one `entry_point!` line per slot of the core, AMD extension
//!   and image tables, read from the slot lists of `hsa-abi`, so every function that has a table
//!   slot is exported and forwards through the live table;
//! - a linker version script that gives those symbols the `ROCR_1` version node;
//! - the soname `libhsa-runtime64.so.1`.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

/// Slot lists and the table each one describes: (file, static holding the live table, struct).
const TABLES: &[(&str, &str, &str)] = &[
    ("core", "CORE", "CoreApiTable"),
    ("amd_ext", "AMD_EXT", "AmdExtTable"),
    ("image", "IMAGE", "ImageExtTable"),
];

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let slots_dir = manifest.join("..").join("hsa-abi").join("slots");

    let mut exports = String::new();
    let mut names = Vec::new();
    for (file, table, ty) in TABLES {
        let path = slots_dir.join(format!("{file}.txt"));
        println!("cargo:rerun-if-changed={}", path.display());
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("vhsa: cannot read the slot list {}: {e}", path.display()));
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let name = line.split_whitespace().next().unwrap();
            writeln!(exports, "entry_point!({table}, {ty}, {name}, {name}_fn);").unwrap();
            names.push(name.to_owned());
        }
    }
    fs::write(out.join("exports.rs"), exports).unwrap();

    let mut script = String::from("ROCR_1 {\n  global:\n");
    for n in &names {
        writeln!(script, "    {n};").unwrap();
    }
    script.push_str("  local:\n    *;\n};\n");
    let script_path = out.join("rocr.map");
    fs::write(&script_path, script).unwrap();

    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        script_path.display()
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsa-runtime64.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
