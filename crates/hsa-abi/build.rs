//! Generates two things into `OUT_DIR`:
//!
//! - `ffi.rs`: bindgen output over the installed HSA C headers (types, enums, packet structs),
//!   plus one function-pointer typedef per table slot whose function the headers declare;
//! - `tables.rs`: the modern API-table structs, one field per slot, in the order given by the
//!   slot lists in `slots/`.
//!
//! The headers' own `hsa_api_trace.h` is deliberately not used: its table layout is the one of
//! the release that shipped the headers, not the modern ABI.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// How a slot's function-pointer type is obtained.
enum SlotKind {
    /// Declared by the installed headers: a typedef is generated with bindgen.
    Header,
    /// Newer than the installed headers: typed by hand in `src/modern.rs`.
    Modern,
    /// Not used by this project: kept as an untyped pointer to hold its place.
    Opaque,
}

struct Slot {
    name: String,
    kind: SlotKind,
}

/// The tables in root-table order, with the struct name each one gets.
const TABLES: &[(&str, &str, &str)] = &[
    ("core", "CoreApiTable", "Core runtime functions (`hsa.h`)."),
    (
        "amd_ext",
        "AmdExtTable",
        "AMD extension functions (`hsa_ext_amd.h`).",
    ),
    (
        "finalizer",
        "FinalizerExtTable",
        "Finalizer extension functions.",
    ),
    ("image", "ImageExtTable", "Image extension functions."),
    ("tools", "ToolsApiTable", "Tool event callbacks."),
    (
        "pc_sampling",
        "PcSamplingExtTable",
        "PC sampling extension functions.",
    ),
];

fn read_slots(dir: &Path, table: &str) -> Vec<Slot> {
    let path = dir.join(format!("{table}.txt"));
    println!("cargo:rerun-if-changed={}", path.display());
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next().unwrap().to_owned();
            let kind = match words.next() {
                None => SlotKind::Header,
                Some("modern") => SlotKind::Modern,
                Some("opaque") => SlotKind::Opaque,
                Some(other) => panic!("{}: unknown slot kind `{other}` for {name}", path.display()),
            };
            Slot { name, kind }
        })
        .collect()
}

fn header_dir() -> PathBuf {
    println!("cargo:rerun-if-env-changed=HSA_INCLUDE_DIR");
    let dir = env::var_os("HSA_INCLUDE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/include/hsa"));
    if !dir.join("hsa.h").is_file() {
        panic!(
            "hsa-abi: no hsa.h in {} . Install the HSA headers (Debian: `apt-get install \
             libhsa-runtime-dev`, or run scripts/install-deps.sh) or point HSA_INCLUDE_DIR at \
             the directory holding hsa.h.",
            dir.display()
        );
    }
    dir
}

/// The C headers the bindings cover, in include order.
const HEADERS: &[&str] = &[
    "hsa.h",
    "hsa_ext_amd.h",
    "hsa_ext_image.h",
    "hsa_ext_finalize.h",
    "hsa_ven_amd_loader.h",
    "hsa_ven_amd_aqlprofile.h",
    "amd_hsa_queue.h",
    "amd_hsa_signal.h",
];

/// One table: its slot-list file stem, struct name, doc line and slots.
type Table = (&'static str, &'static str, &'static str, Vec<Slot>);

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let slots_dir = manifest.join("slots");
    let hdr = header_dir();

    let tables: Vec<Table> = TABLES
        .iter()
        .map(|(file, name, doc)| (*file, *name, *doc, read_slots(&slots_dir, file)))
        .collect();

    let wrapper_path = out.join("hsa_wrapper.h");
    fs::write(&wrapper_path, wrapper_header(&hdr, &tables)).unwrap();
    generate_ffi(&wrapper_path, &hdr, &out.join("ffi.rs"));

    let mut rs = String::new();
    for table in &tables {
        write_table_struct(&mut rs, table);
    }
    fs::write(out.join("tables.rs"), rs).unwrap();
    println!("cargo:rerun-if-changed=build.rs");
}

/// The wrapper header: the C headers plus one typedef per header-declared slot.
fn wrapper_header(hdr: &Path, tables: &[Table]) -> String {
    let mut wrapper = String::new();
    for h in HEADERS {
        writeln!(wrapper, "#include \"{}\"", hdr.join(h).display()).unwrap();
    }
    for (_, _, _, slots) in tables {
        for s in slots.iter().filter(|s| matches!(s.kind, SlotKind::Header)) {
            writeln!(wrapper, "typedef __typeof__({0}) *{0}_fn_t;", s.name).unwrap();
        }
    }
    wrapper
}

/// Runs bindgen over the wrapper header and writes the types and constants to `ffi_path`.
fn generate_ffi(wrapper_path: &Path, hdr: &Path, ffi_path: &Path) {
    let bindings = bindgen::Builder::default()
        .header(wrapper_path.to_string_lossy())
        .clang_arg(format!("-I{}", hdr.display()))
        .clang_arg("-xc")
        .allowlist_type("hsa_.*|amd_.*|HSA_.*|AMD_.*")
        .allowlist_var("HSA_.*|AMD_.*")
        .with_codegen_config(bindgen::CodegenConfig::TYPES | bindgen::CodegenConfig::VARS)
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .derive_debug(true)
        .layout_tests(false)
        .generate_comments(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate()
        .unwrap_or_else(|e| {
            panic!("hsa-abi: bindgen failed on {}: {e}. libclang is needed (Debian: libclang-22-dev; set LIBCLANG_PATH if several are installed).", hdr.display())
        });
    bindings.write_to_file(ffi_path).unwrap();
}

/// Appends one table's struct, its `SLOT_NAMES` and its `ApiTable` impl to `rs`.
fn write_table_struct(rs: &mut String, (file, name, doc, slots): &Table) {
    writeln!(
        rs,
        "/// {doc}\n///\n/// Slot order follows the modern runtime ABI (list `slots/{file}.txt`)."
    )
    .unwrap();
    writeln!(
        rs,
        "#[repr(C)]\n#[derive(Clone, Copy)]\npub struct {name} {{"
    )
    .unwrap();
    writeln!(
        rs,
        "    /// Version header; `minor_id` is the table's size in bytes."
    )
    .unwrap();
    writeln!(rs, "    pub version: ApiTableVersion,").unwrap();
    for s in slots {
        writeln!(
            rs,
            "    /// Slot for `{}`.\n    pub {}_fn: {},",
            s.name,
            s.name,
            slot_type(s)
        )
        .unwrap();
    }
    writeln!(rs, "}}\n").unwrap();
    writeln!(rs, "impl {name} {{").unwrap();
    writeln!(
        rs,
        "    /// Slot names in order; entry `i` is member `i + 1`."
    )
    .unwrap();
    write!(rs, "    pub const SLOT_NAMES: &'static [&'static str] = &[").unwrap();
    for s in slots {
        write!(rs, "\"{}\", ", s.name).unwrap();
    }
    writeln!(rs, "];\n}}\n").unwrap();
    writeln!(
        rs,
        "// SAFETY: every field after the version is a nullable function pointer."
    )
    .unwrap();
    let legacy = legacy_layout_items(file);
    writeln!(rs, "unsafe impl ApiTable for {name} {{\n    const NAME: &'static str = \"{file}\";\n    fn version(&self) -> &ApiTableVersion {{ &self.version }}{legacy}\n}}\n").unwrap();
}

/// The Rust type of a slot's field, by where its function-pointer type comes from.
fn slot_type(s: &Slot) -> String {
    match s.kind {
        SlotKind::Header => format!("crate::ffi::{}_fn_t", s.name),
        SlotKind::Modern => format!("crate::modern::{}_fn_t", s.name),
        SlotKind::Opaque => "Slot".to_owned(),
    }
}

/// Extra `ApiTable` items describing a table's ROCm 5.x (major 1) layout, if it had one.
///
/// ROCm 5.x laid out the core and image tables as today and the AMD extension table
/// differently; `layout` maps modern offsets onto those layouts.
fn legacy_layout_items(file: &str) -> &'static str {
    match file {
        "core" | "image" => "\n    const LEGACY_MAJOR: Option<u32> = Some(1);",
        "amd_ext" => {
            "\n    const LEGACY_MAJOR: Option<u32> = Some(1);\n    fn layout_offset(version: &ApiTableVersion, offset: usize) -> Result<Option<usize>, SlotError> {\n        crate::layout::amd_ext_offset(version, offset)\n    }"
        }
        _ => "",
    }
}
