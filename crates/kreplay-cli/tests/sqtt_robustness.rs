//! Bad inputs to `kreplay sqtt`: clear messages naming the file, exit code 1, never a panic;
//! and property tests feeding arbitrary bytes to the parsers.

#[path = "sqtt/support.rs"]
mod support;

use kreplay_cli::sqtt::device_code;
use kreplay_cli::sqtt::funcmap::{Funcmap, render_section};
use proptest::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::os::unix::process::CommandExt;
use support::*;

/// The system allocator, noting the largest single request made by each thread.
struct Measured;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Measured {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LARGEST.try_with(|l| l.set(l.get().max(layout.size())));
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = LARGEST.try_with(|l| l.set(l.get().max(new_size)));
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Measured = Measured;

/// A `CCOB` header of `version` (1: u32 size; 2: u32 total and size; 3: u64 total and size)
/// claiming `uncompressed` bytes, followed by `payload`.
fn ccob(version: u16, method: u16, uncompressed: u64, payload: &[u8]) -> Vec<u8> {
    let mut b = b"CCOB".to_vec();
    b.extend(version.to_le_bytes());
    b.extend(method.to_le_bytes());
    let header =
        8 + match version {
            1 => 4,
            2 => 8,
            _ => 16,
        } + 8;
    let total = (header + payload.len()) as u64;
    match version {
        1 => b.extend((uncompressed as u32).to_le_bytes()),
        2 => {
            b.extend((total as u32).to_le_bytes());
            b.extend((uncompressed as u32).to_le_bytes());
        }
        _ => {
            b.extend(total.to_le_bytes());
            b.extend(uncompressed.to_le_bytes());
        }
    }
    b.extend(0u64.to_le_bytes());
    b.extend(payload);
    b
}

/// `kreplay sqtt funcmap <file>` with its address space limited to `bytes` (RLIMIT_AS).
fn funcmap_under_address_limit(file: &std::path::Path, bytes: u64) -> std::process::Output {
    let mut cmd = std::process::Command::new(test_support::kreplay_bin());
    cmd.args(["sqtt", "funcmap"]).arg(file);
    // SAFETY: the closure only calls setrlimit, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().expect("run kreplay")
}

#[test]
fn a_compressed_bundle_claiming_4_gib_is_refused_under_an_address_space_limit() {
    let dir = test_support::scratch_dir("sqtt-robust-claim");
    let limit = 512 << 20;
    for (version, method, claim) in [
        (3u16, 1u16, 4u64 << 30),
        (3, 0, 4 << 30),
        (2, 1, u64::from(u32::MAX)),
        (1, 0, 3 << 30),
    ] {
        let file = dir.join(format!("claim-v{version}-m{method}.hipfb"));
        std::fs::write(
            &file,
            ccob(
                version,
                method,
                claim,
                &[0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0],
            ),
        )
        .unwrap();
        let out = funcmap_under_address_limit(&file, limit);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "v{version} m{method}: {}\n{stderr}",
            out.status
        );
        assert!(stderr.contains(s(&file)), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "the header claims {claim} uncompressed bytes from 12 compressed bytes"
            )),
            "v{version} m{method}:\n{stderr}"
        );
    }
    // A real compressed bundle still decodes under the same limit.
    let co = build_kernels(&dir, "gfx942");
    let with = dir.join("with.co");
    with_funcmap(&co, b"K:reduce_sum\n\0", &with);
    let b = dir.join("real.hipfb");
    bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx942", &with)], &b, true);
    let out = funcmap_under_address_limit(&b, limit);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("reduce_sum"));
}

#[test]
fn funcmap_errors_name_the_file_and_the_problem() {
    let dir = test_support::scratch_dir("sqtt-robust-funcmap");
    let co = build_kernels(&dir, "gfx942");
    let cases: [(&str, &[u8], &str); 6] = [
        (
            "truncated",
            b"K:reduce_sum\nF:1:_Z5sca",
            "truncated: the section does not end with a NUL terminator",
        ),
        (
            "garbage",
            b"\x13\x37\xca\xfe\0",
            "line 1: byte 0x13 at offset 0 is not printable ASCII",
        ),
        (
            "unknown-row",
            b"K:reduce_sum\nQ:1:x\n\0",
            "line 2: unknown row tag",
        ),
        (
            "bad-id",
            b"F:x:f\n\0",
            "line 1: id `x` is not a decimal number",
        ),
        (
            "dangling-r",
            b"R:5:extra_payload_count=2\n\0",
            "R row for id 5, which no F/U/P row defines",
        ),
        ("empty", b"", "the section is empty"),
    ];
    for (name, bytes, want) in cases {
        let file = dir.join(format!("{name}.co"));
        with_funcmap(&co, bytes, &file);
        let err = kreplay_sqtt_err(&["funcmap", s(&file)]);
        assert!(
            err.contains(s(&file)),
            "{name}: the message names the file:\n{err}"
        );
        assert!(
            err.contains("invalid .sqtt_funcmap section"),
            "{name}:\n{err}"
        );
        assert!(err.contains(want), "{name}: expected `{want}` in:\n{err}");
        // memtrace reads the same map and fails the same way.
        let records = dir.join("r.csv");
        std::fs::write(&records, "time,value,cu,simd,wave_id\n").unwrap();
        let err = kreplay_sqtt_err(&["memtrace", s(&records), "--funcmap", s(&file)]);
        assert!(err.contains(want), "{name} (memtrace):\n{err}");
    }
}

#[test]
fn missing_section_non_elf_and_unreadable_files() {
    let dir = test_support::scratch_dir("sqtt-robust-files");
    let co = build_kernels(&dir, "gfx942");
    let err = kreplay_sqtt_err(&["funcmap", s(&co)]);
    assert!(
        err.contains(&format!("{}: no .sqtt_funcmap section", s(&co))),
        "{err}"
    );
    assert!(err.contains("-fpass-plugin"), "says how to get one:\n{err}");

    let text = dir.join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    let err = kreplay_sqtt_err(&["funcmap", s(&text)]);
    assert!(
        err.contains(&format!(
            "{}: not an ELF file or clang offload bundle (starts with 68 65 6c 6c 6f)",
            s(&text)
        )),
        "{err}"
    );

    let empty = dir.join("empty");
    std::fs::write(&empty, "").unwrap();
    let err = kreplay_sqtt_err(&["funcmap", s(&empty)]);
    assert!(err.contains("the file is empty"), "{err}");

    let missing = dir.join("does-not-exist");
    let err = kreplay_sqtt_err(&["funcmap", s(&missing)]);
    assert!(
        err.contains(&format!("cannot read {}", s(&missing))),
        "{err}"
    );
    let err = kreplay_sqtt_err(&["funcmap", s(&dir)]);
    assert!(
        err.contains(&format!("cannot read {}", s(&dir))),
        "a directory:\n{err}"
    );

    // A host ELF without device code.
    let host = dir.join("host");
    std::fs::write(dir.join("h.c"), "int main(void) { return 0; }\n").unwrap();
    run_tool(
        std::process::Command::new("cc")
            .arg(dir.join("h.c"))
            .arg("-o")
            .arg(&host),
    );
    let err = kreplay_sqtt_err(&["funcmap", s(&host)]);
    assert!(err.contains("without a .hip_fatbin section"), "{err}");

    // A truncated ELF.
    let bytes = std::fs::read(&co).unwrap();
    let cut = dir.join("cut.co");
    std::fs::write(&cut, &bytes[..100]).unwrap();
    let err = kreplay_sqtt_err(&["funcmap", s(&cut)]);
    assert!(err.contains("malformed ELF"), "{err}");
}

#[test]
fn damaged_bundles() {
    let dir = test_support::scratch_dir("sqtt-robust-bundle");
    let co = build_kernels(&dir, "gfx942");
    let with = dir.join("with.co");
    with_funcmap(&co, b"K:reduce_sum\n\0", &with);
    for compress in [false, true] {
        let b = dir.join(format!("b-{compress}.hipfb"));
        bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx942", &with)], &b, compress);
        let bytes = std::fs::read(&b).unwrap();
        let cut = dir.join(format!("cut-{compress}.hipfb"));
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let err = kreplay_sqtt_err(&["funcmap", s(&cut)]);
        let want = if compress {
            "compressed offload bundle (CCOB)"
        } else {
            "offload bundle at offset 0"
        };
        assert!(err.contains(want), "compress={compress}:\n{err}");
        assert!(err.contains(s(&cut)), "{err}");
    }
    // An unknown compression method is reported as such.
    let b = dir.join("b-true.hipfb");
    let mut bytes = std::fs::read(&b).unwrap();
    bytes[6] = 7;
    let odd = dir.join("odd.hipfb");
    std::fs::write(&odd, &bytes).unwrap();
    let err = kreplay_sqtt_err(&["funcmap", s(&odd)]);
    assert!(err.contains("unknown compression method 7"), "{err}");
}

#[test]
fn bad_record_files() {
    let dir = test_support::scratch_dir("sqtt-robust-records");
    let co = build_kernels(&dir, "gfx942");
    let with = dir.join("with.co");
    with_funcmap(
        &co,
        b"W:64\nP:1:addr_trace_load\nR:1:extra_payload_count=130\n\0",
        &with,
    );
    let cases = [
        (
            "a.csv",
            "time,value,cu,simd\n1,2,3,4\n",
            "has no `wave_id` column",
        ),
        (
            "b.csv",
            "time,value,cu,simd,wave_id\n1,2,3,4,5\n1,2,3\n",
            "line 3: 3 fields, the header has 5",
        ),
        (
            "c.jsonl",
            "{\"time\": 1, \"value\": 2, \"cu\": 0, \"simd\": 0, \"wave_id\": 0}\n{\"time\": 1}\n",
            "line 2:",
        ),
        (
            "d.json",
            "[{\"time\": 1, \"value\": \"zz\", \"cu\": 0, \"simd\": 0, \"wave_id\": 0}]",
            "`zz` is not an unsigned integer",
        ),
    ];
    for (name, text, want) in cases {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        let err = kreplay_sqtt_err(&["memtrace", s(&f), "--funcmap", s(&with)]);
        assert!(
            err.contains(s(&f)) && err.contains(want),
            "{name}: expected `{want}`:\n{err}"
        );
    }
    let binary = dir.join("e.bin");
    std::fs::write(&binary, [0xffu8, 0xfe, 0x00]).unwrap();
    let err = kreplay_sqtt_err(&["memtrace", s(&binary), "--funcmap", s(&with)]);
    assert!(err.contains("not UTF-8 text"), "{err}");

    // A map without W: cannot size address blocks.
    let no_w = dir.join("no-w.co");
    with_funcmap(&co, b"K:reduce_sum\n\0", &no_w);
    let ok_records = dir.join("a.csv");
    let err = kreplay_sqtt_err(&["memtrace", s(&ok_records), "--funcmap", s(&no_w)]);
    assert!(err.contains("no W: (wave size) row"), "{err}");
}

#[test]
fn target_selection() {
    let dir = test_support::scratch_dir("sqtt-robust-target");
    let a = build_kernels(&dir, "gfx942");
    let b = build_kernels(&dir, "gfx90a");
    let (a2, b2) = (dir.join("a.co"), dir.join("b.co"));
    with_funcmap(
        &a,
        b"W:64\nP:1:addr_trace_load\nR:1:extra_payload_count=130\n\0",
        &a2,
    );
    with_funcmap(
        &b,
        b"W:64\nP:1:addr_trace_lds_load\nR:1:extra_payload_count=66\n\0",
        &b2,
    );
    let fb = dir.join("ab.hipfb");
    bundle(
        &[
            ("hipv4-amdgcn-amd-amdhsa--gfx942", &a2),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", &b2),
        ],
        &fb,
        false,
    );
    let records = dir.join("r.csv");
    let mut csv = String::from("time,value,cu,simd,wave_id\n4,4,0,0,0\n");
    csv.push_str("5,1,0,0,0\n6,0,0,0,0\n");
    for lane in 0..64 {
        csv.push_str(&format!("{},{},0,0,0\n", 7 + lane, 8 * lane));
    }
    std::fs::write(&records, csv).unwrap();
    let err = kreplay_sqtt_err(&["memtrace", s(&records), "--funcmap", s(&fb)]);
    assert!(
        err.contains("choose one with --target")
            && err.contains("gfx90a")
            && err.contains("gfx942"),
        "{err}"
    );
    let err = kreplay_sqtt_err(&[
        "memtrace",
        s(&records),
        "--funcmap",
        s(&fb),
        "--target",
        "gfx1100",
    ]);
    assert!(
        err.contains("no code object with a .sqtt_funcmap matches --target gfx1100"),
        "{err}"
    );
    // gfx90a's map makes the block an LDS block: 64 payload words after EXEC would be a
    // mismatch for gfx942's 64-bit layout.
    let out = kreplay_sqtt_ok(&[
        "memtrace",
        s(&records),
        "--funcmap",
        s(&fb),
        "--target",
        "gfx90a",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["target"], "hipv4-amdgcn-amd-amdhsa--gfx90a");
    assert_eq!(doc["operations"][0]["name"], "addr_trace_lds_load");
    assert_eq!(doc["operations"][0]["lanes_active"]["max"], 1);
    let out = kreplay_sqtt_ok(&[
        "memtrace",
        s(&records),
        "--funcmap",
        s(&fb),
        "--target",
        "gfx942",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["summary"]["incomplete_blocks"], 1);
}

fn row() -> impl Strategy<Value = String> {
    let name = "[a-zA-Z_][a-zA-Z0-9_ .:]{0,12}";
    prop_oneof![
        (name).prop_map(|n| format!("K:{n}")),
        (
            1u32..50,
            name,
            proptest::option::of("[a-z]{1,5}\\.hip:[0-9]{1,3}")
        )
            .prop_map(|(i, n, src)| format!(
                "F:{i}:{n}{}",
                src.map(|s| format!("@{s}")).unwrap_or_default()
            )),
        (1u32..50, name).prop_map(|(i, n)| format!("U:{i}:{n}")),
        (1u32..50, name).prop_map(|(i, n)| format!("P:{i}:{n}")),
        prop_oneof![Just("W:32".to_string()), Just("W:64".to_string())],
        (1u32..50, 0u32..200).prop_map(|(i, n)| format!("R:{i}:extra_payload_count={n}")),
        (0u32..40, 0u32..40)
            .prop_map(|(b, s)| format!("M:shader_clock_bits={b};shader_clock_shift={s}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any bytes: an answer, never a panic.
    #[test]
    fn funcmap_parser_takes_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = Funcmap::parse(&bytes);
    }

    /// Row-shaped input (often invalid): never a panic, and whatever parses renders back to
    /// an equal map; every id lookup and id extraction is total.
    #[test]
    fn funcmap_rows_round_trip(rows in proptest::collection::vec(row(), 0..24), word in any::<u32>()) {
        let mut text = rows.join("\n").into_bytes();
        text.push(0);
        if let Ok(map) = Funcmap::parse(&text) {
            let again = Funcmap::parse(&render_section(&map)).expect("rendered map parses");
            prop_assert_eq!(&again, &map);
            let id = map.marker_id(word);
            let _ = (map.entry(id), map.extra_payload_count(id));
        }
    }

    /// Any `CCOB` header (any version, method and claimed size) over any payload, a zstd frame
    /// header often in front: no single allocation beyond what the input's real size allows
    /// (the claim is bounded by 1024 bytes per compressed byte, a zstd window by twice the
    /// claim or 1 MiB; vectors may double once past that), never a panic.
    #[test]
    fn compressed_bundles_allocate_within_the_input_size(
        version in 1u16..=3,
        method in 0u16..=1,
        claim in prop_oneof![any::<u64>(), 0u64..1 << 20, Just(4u64 << 30), Just(u64::from(u32::MAX))],
        zstd_header in proptest::option::of((any::<u8>(), any::<u8>(), any::<u32>())),
        tail in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut payload = Vec::new();
        if let Some((descriptor, window, size)) = zstd_header {
            payload.extend(0xFD2F_B528u32.to_le_bytes());
            payload.extend([descriptor, window]);
            payload.extend(size.to_le_bytes());
        }
        payload.extend(tail);
        let bytes = ccob(version, method, claim, &payload);
        LARGEST.with(|l| l.set(0));
        let _ = device_code::code_objects(&bytes);
        let largest = LARGEST.with(Cell::get) as u64;
        let allowed = 4 * (payload.len() as u64 * device_code::MAX_COMPRESSION_RATIO).max(2 << 20);
        prop_assert!(largest <= allowed, "{largest} bytes allocated for a {} byte input (allowed {allowed})", bytes.len());
    }

    /// Record files of any shape (CSV rows of arbitrary numbers, marker headers and payload
    /// words mixed): parsing and address analysis allocate in proportion to the text, never
    /// from a number read in it.
    #[test]
    fn records_and_analysis_allocate_within_the_input_size(
        rows in proptest::collection::vec(
            (any::<i64>(), prop_oneof![any::<u64>(), 0u64..8, Just(1u64 << 2)], 0u32..4, 0u32..4, 0u32..4),
            0..200,
        ),
        line_size in 1u64..=4096,
        access_size in 1u64..=64,
    ) {
        let mut text = String::from("time,value,cu,simd,wave_id\n");
        for (t, v, cu, simd, w) in &rows {
            text.push_str(&format!("{t},{v},{cu},{simd},{w}\n"));
        }
        let map = Funcmap::parse(b"W:64\nP:1:addr_trace_load\nR:1:extra_payload_count=130\n\0").unwrap();
        LARGEST.with(|l| l.set(0));
        if let Ok(records) = kreplay_cli::sqtt::shaderdata::parse(&text, kreplay_cli::sqtt::shaderdata::RecordFormat::Auto) {
            let geometry = kreplay_cli::sqtt::address_trace::Geometry { wave_size: 64, line_size, access_size };
            let _ = kreplay_cli::sqtt::address_trace::analyse(&records, &map, geometry);
        }
        let largest = LARGEST.with(Cell::get) as u64;
        // Per lane at most access_size lines of 8 bytes, 64 lanes per block; the rest is the text.
        let allowed = 64 * text.len() as u64 + 64 * (access_size + 1) * 8 * 2 + (64 << 10);
        prop_assert!(largest <= allowed, "{largest} bytes allocated for {} bytes of records", text.len());
    }

    /// Any bytes behind a bundle magic or an ELF header: an error or code objects, never a panic.
    #[test]
    fn container_parser_takes_any_bytes(
        prefix in prop_oneof![Just(&b"__CLANG_OFFLOAD_BUNDLE__"[..]), Just(&b"CCOB"[..]), Just(&b"\x7fELF\x02\x01\x01"[..])],
        tail in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut bytes = prefix.to_vec();
        bytes.extend(tail);
        if let Ok(objects) = device_code::code_objects(&bytes) {
            for o in objects {
                let _ = device_code::inspect(&o.image);
            }
        }
    }
}
