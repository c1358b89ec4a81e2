//! `kreplay sqtt funcmap` on real code objects built with clang-22, with a `.sqtt_funcmap`
//! section injected by llvm-objcopy, alone, in offload bundles (plain and compressed) and in a
//! host ELF's `.hip_fatbin`.

#[path = "sqtt/support.rs"]
mod support;

use serde_json::Value;
use support::*;

const SAXPY: &str = "_Z5saxpyPfPKffi";
const SCALE: &str = "_Z5scaleff";
const CLAMP: &str = "_Z9clamp_addff";

fn section() -> Vec<u8> {
    format!(
        "K:{SAXPY}@kernels.hip:12\nK:reduce_sum@kernels.hip:17\nF:1:{SCALE}@kernels.hip:5\n\
         F:2:{CLAMP}@kernels.hip:7 -> kernels.hip:14\nU:3:load phase\nP:4:barrier\n\
         W:64\nP:5:addr_trace_load@kernels.hip:14\nR:5:extra_payload_count=130\n\
         P:6:value\nR:6:extra_payload_count=1\nF:7:_Z7missingv\n\0"
    )
    .into_bytes()
}

fn hex(v: u64) -> String {
    format!("0x{v:016x}")
}

#[test]
fn table_resolves_addresses_and_demangles() {
    let dir = test_support::scratch_dir("sqtt-funcmap-table");
    let co = build_kernels(&dir, "gfx942");
    let with = dir.join("kernels.co");
    with_funcmap(&co, &section(), &with);
    let syms = nm_functions(&co);

    let table = kreplay_sqtt_ok(&["funcmap", s(&with), "--demangle"]);
    let lines: Vec<&str> = table.lines().collect();
    let expected = [
        "  wave_size: 64".to_string(),
        "  Type        ID     Extra               Vaddr  Name".to_string(),
        "  ----       ---     -----               -----  ----".to_string(),
        format!(
            "kernel         -         0  {}  saxpy(float*, float const*, float, int)@kernels.hip:12",
            hex(syms[SAXPY])
        ),
        format!(
            "kernel         -         0  {}  reduce_sum@kernels.hip:17",
            hex(syms["reduce_sum"])
        ),
        format!(
            "  func         1         0  {}  scale(float, float)@kernels.hip:5",
            hex(syms[SCALE])
        ),
        format!(
            "  func         2         0  {}  clamp_add(float, float)@kernels.hip:7 -> kernels.hip:14",
            hex(syms[CLAMP])
        ),
        "  user         3         0                   -  load phase".to_string(),
        " point         4         0                   -  barrier".to_string(),
        " point         5       130                   -  addr_trace_load@kernels.hip:14"
            .to_string(),
        " point         6         1                   -  value".to_string(),
        "  func         7         0                   -  missing()".to_string(),
    ];
    assert_eq!(lines, expected, "full table:\n{table}");

    // Without --demangle the mangled names stay.
    let plain = kreplay_sqtt_ok(&["funcmap", s(&with)]);
    assert!(
        plain.contains(&format!("{}  {SCALE}@kernels.hip:5", hex(syms[SCALE]))),
        "{plain}"
    );
    assert!(
        !plain.contains("code object"),
        "a plain code object has no target heading:\n{plain}"
    );
}

#[test]
fn json_schema() {
    let dir = test_support::scratch_dir("sqtt-funcmap-json");
    let co = build_kernels(&dir, "gfx942");
    let with = dir.join("kernels.co");
    with_funcmap(&co, &section(), &with);
    let syms = nm_functions(&co);

    let doc: Value = serde_json::from_str(&kreplay_sqtt_ok(&[
        "funcmap",
        s(&with),
        "--json",
        "--demangle",
    ]))
    .unwrap();
    assert_eq!(doc["file"], s(&with));
    let objects = doc["code_objects"].as_array().unwrap();
    assert_eq!(objects.len(), 1);
    let o = &objects[0];
    assert_eq!(o["target"], Value::Null);
    assert_eq!(o["wave_size"], 64);
    assert_eq!(o["shader_clock"], Value::Null);
    let entries = o["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 9);
    let saxpy = &entries[0];
    assert_eq!(saxpy["type"], "kernel");
    assert_eq!(saxpy["id"], Value::Null);
    assert_eq!(saxpy["vaddr"], syms[SAXPY]);
    assert_eq!(saxpy["name"], "saxpy(float*, float const*, float, int)");
    assert_eq!(saxpy["symbol"], SAXPY);
    assert_eq!(saxpy["source"], "kernels.hip:12");
    let clamp = &entries[3];
    assert_eq!(
        (clamp["type"].as_str(), clamp["id"].as_u64()),
        (Some("func"), Some(2))
    );
    assert_eq!(clamp["vaddr"], syms[CLAMP]);
    assert_eq!(clamp["source"], "kernels.hip:7 -> kernels.hip:14");
    let addr = &entries[6];
    assert_eq!(addr["extra_payload_count"], 130);
    assert_eq!(addr["vaddr"], Value::Null);
    assert_eq!(
        entries[8]["vaddr"],
        Value::Null,
        "a function without a symbol has no address"
    );
}

#[test]
fn clock_layout_is_reported() {
    let dir = test_support::scratch_dir("sqtt-funcmap-clock");
    let co = build_kernels(&dir, "gfx942");
    let with = dir.join("kernels.co");
    with_funcmap(
        &co,
        b"M:shader_clock_bits=12;shader_clock_shift=4\nK:reduce_sum\nU:1:phase\n\0",
        &with,
    );
    let table = kreplay_sqtt_ok(&["funcmap", s(&with)]);
    assert!(
        table.starts_with("  shader_clock: bits=12 shift=4\n"),
        "{table}"
    );
    let doc: Value =
        serde_json::from_str(&kreplay_sqtt_ok(&["funcmap", s(&with), "--json"])).unwrap();
    assert_eq!(
        doc["code_objects"][0]["shader_clock"],
        serde_json::json!({"bits": 12, "shift": 4})
    );
    assert_eq!(doc["code_objects"][0]["wave_size"], Value::Null);
}

/// Two code objects (different maps) in one bundle: one table each, headed by the target id,
/// whether the bundle is a file, compressed, or the `.hip_fatbin` of a host executable.
#[test]
fn offload_bundles_plain_compressed_and_in_a_host_elf() {
    let dir = test_support::scratch_dir("sqtt-funcmap-bundle");
    let a = build_kernels(&dir, "gfx942");
    let b = build_kernels(&dir, "gfx90a");
    let a_fm = dir.join("a.co");
    let b_fm = dir.join("b.co");
    with_funcmap(&a, format!("K:{SAXPY}\nF:1:{SCALE}\n\0").as_bytes(), &a_fm);
    with_funcmap(
        &b,
        format!("W:64\nK:reduce_sum\nF:1:{CLAMP}\nU:2:only on gfx90a\n\0").as_bytes(),
        &b_fm,
    );
    let (sa, sb) = (nm_functions(&a), nm_functions(&b));
    let t942 = "hipv4-amdgcn-amd-amdhsa--gfx942";
    let t90a = "hipv4-amdgcn-amd-amdhsa--gfx90a";

    let expected = format!(
        "code object {t942}:\n\
         \x20 Type        ID     Extra               Vaddr  Name\n\
         \x20 ----       ---     -----               -----  ----\n\
         kernel         -         0  {}  saxpy(float*, float const*, float, int)\n\
         \x20 func         1         0  {}  scale(float, float)\n\
         \n\
         code object {t90a}:\n\
         \x20 wave_size: 64\n\
         \x20 Type        ID     Extra               Vaddr  Name\n\
         \x20 ----       ---     -----               -----  ----\n\
         kernel         -         0  {}  reduce_sum\n\
         \x20 func         1         0  {}  clamp_add(float, float)\n\
         \x20 user         2         0                   -  only on gfx90a\n",
        hex(sa[SAXPY]),
        hex(sa[SCALE]),
        hex(sb["reduce_sum"]),
        hex(sb[CLAMP]),
    );

    for compress in [false, true] {
        let bundle_file = dir.join(format!("k-{compress}.hipfb"));
        bundle(&[(t942, &a_fm), (t90a, &b_fm)], &bundle_file, compress);
        let magic = std::fs::read(&bundle_file).unwrap();
        let want_magic: &[u8] = if compress {
            b"CCOB"
        } else {
            b"__CLANG_OFFLOAD_BUNDLE__"
        };
        assert!(
            magic.starts_with(want_magic),
            "bundler did not produce the expected format"
        );
        assert_eq!(
            kreplay_sqtt_ok(&["funcmap", s(&bundle_file), "--demangle"]),
            expected,
            "bundle file, compress={compress}"
        );

        let host = dir.join(format!("app-{compress}"));
        host_with_fatbin(&dir, &bundle_file, &host);
        assert_eq!(
            kreplay_sqtt_ok(&["funcmap", s(&host), "--demangle"]),
            expected,
            "host ELF, compress={compress}"
        );

        let doc: Value =
            serde_json::from_str(&kreplay_sqtt_ok(&["funcmap", s(&host), "--json"])).unwrap();
        let targets: Vec<&str> = doc["code_objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["target"].as_str().unwrap())
            .collect();
        assert_eq!(targets, [t942, t90a]);
    }
}

/// A host object produced by clang's HIP driver carries the real `.hip_fatbin` layout; its
/// code objects have no map, and the error names them.
#[test]
fn clang_hip_host_object_without_maps() {
    let dir = test_support::scratch_dir("sqtt-funcmap-hip-host");
    let src = dir.join("app.hip");
    std::fs::write(
        &src,
        "#include \"kernels.h\"\nstruct dim3 { unsigned x, y, z; };\ntypedef struct ihipStream_t *hipStream_t;\n\
         extern \"C\" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);\n\
         __global__ void k(float *p) { p[thread_idx_x()] = 1.0f; }\n",
    )
    .unwrap();
    let obj = dir.join("app.o");
    run_tool(
        std::process::Command::new(test_support::device_clang())
            .args([
                "-x",
                "hip",
                "--offload-arch=gfx942",
                "--offload-arch=gfx1100",
                "-nogpulib",
                "-nogpuinc",
                "-c",
            ])
            .arg("-I")
            .arg(test_support::device_include_dir())
            .arg(&src)
            .arg("-o")
            .arg(&obj),
    );
    let err = kreplay_sqtt_err(&["funcmap", s(&obj)]);
    assert!(
        err.contains("no .sqtt_funcmap section in hipv4-amdgcn-amd-amdhsa--gfx"),
        "{err}"
    );
    assert!(err.contains("hipv4-amdgcn-amd-amdhsa--gfx942"), "{err}");
    assert!(err.contains("hipv4-amdgcn-amd-amdhsa--gfx1100"), "{err}");
    assert!(err.contains(s(&obj)), "{err}");
}

/// One code object of a bundle without a map: the other is printed, the missing one noted.
#[test]
fn bundle_with_one_map_missing() {
    let dir = test_support::scratch_dir("sqtt-funcmap-partial");
    let a = build_kernels(&dir, "gfx942");
    let b = build_kernels(&dir, "gfx90a");
    let a_fm = dir.join("a.co");
    with_funcmap(&a, b"K:reduce_sum\n\0", &a_fm);
    let bundle_file = dir.join("k.hipfb");
    bundle(
        &[
            ("hipv4-amdgcn-amd-amdhsa--gfx942", &a_fm),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", &b),
        ],
        &bundle_file,
        false,
    );
    let out = kreplay_sqtt(&["funcmap", s(&bundle_file)]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.starts_with("code object hipv4-amdgcn-amd-amdhsa--gfx942:\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("gfx90a"), "{stdout}");
    assert!(
        stderr.contains("no .sqtt_funcmap section in hipv4-amdgcn-amd-amdhsa--gfx90a"),
        "{stderr}"
    );
}
