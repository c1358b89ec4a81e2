//! Kernels built with the SQTT marker pass plugin run on the emulator: each wave in the
//! plugin's default scope (CUs 0 and 1) emits its marker sequence in order, other waves none.

use std::collections::BTreeMap;
use std::process::Command;

mod common;
use amdgpu_emu::code_object::CodeObject;
use amdgpu_emu::{ShaderDataRecord, Target};
use common::{Arg, Bench, TARGETS};

fn build(file: &str, t: Target, env: (&str, &str)) -> std::path::PathBuf {
    let out =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{file}-{}.co", t.name()));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let st = Command::new("clang-22")
        .args([
            "-x",
            "hip",
            &format!("--offload-arch={}", t.name()),
            "--cuda-device-only",
            "--no-gpu-bundle-output",
            "-nogpulib",
            "-nogpuinc",
            "-O2",
            "-DSQTT_ENABLED=1",
        ])
        .arg(format!(
            "-fpass-plugin={}",
            test_support::sqtt_pass_plugin().display()
        ))
        .arg(format!("-I{}", dir.join("../sqtt-pass/include").display()))
        .arg(dir.join(format!("tests/corpus/{file}.hip")))
        .arg("-o")
        .arg(&out)
        .env(env.0, env.1)
        .status()
        .expect("clang-22");
    assert!(st.success(), "building markers.hip with the plugin failed");
    out
}

fn funcmap(bytes: &[u8]) -> Vec<String> {
    let f = amdgpu_code_object::AmdgpuElf::parse(bytes).unwrap();
    let s = f
        .section(".sqtt_funcmap")
        .unwrap()
        .expect(".sqtt_funcmap section");
    String::from_utf8_lossy(s.bytes)
        .trim_end_matches('\0')
        .lines()
        .map(str::to_string)
        .collect()
}

fn id_of(map: &[String], kind: &str, name: &str) -> u64 {
    map.iter()
        .find_map(|row| {
            let mut p = row.splitn(3, ':');
            let (k, id, n) = (p.next()?, p.next()?, p.next()?);
            (k == kind && n.split('@').next() == Some(name)).then(|| id.parse().ok())?
        })
        .unwrap_or_else(|| panic!("no {kind} row for {name} in {map:?}"))
}

#[test]
fn marker_sequences_per_wave_and_scope() {
    for t in TARGETS {
        let bytes = std::fs::read(build("markers", t, ("SQTT_INSTRUMENT_FUNCTIONS", "1"))).unwrap();
        let map = funcmap(&bytes);
        let work = id_of(&map, "U", "work");
        let value = id_of(&map, "P", "work_value");
        // SQTT_INSTRUMENT_FUNCTIONS=1 instruments every device function, the header's small
        // index helpers included (before they are inlined).
        let func = |name: &str| -> u64 {
            map.iter()
                .find(|r| r.starts_with("F:") && r.contains(name))
                .map(|r| r.split(':').nth(1).unwrap().parse().unwrap())
                .unwrap_or_else(|| panic!("no F row for {name}"))
        };
        let enter = |id: u64| id << 2 | 2;
        let (gid, bid, bdim, pkt, tid, twice) = (
            func("gid_x"),
            func("bid_x"),
            func("bdim_x"),
            func("pkt16"),
            func("tid_x"),
            func("twice"),
        );
        let co = CodeObject::parse(&bytes).unwrap();
        let mut b = Bench::from_code_object(co, t, 2);
        let x: Vec<i32> = (0..512).collect();
        let xb = b.buf_of(&x);
        let out = b.run1("marked", 512, 64, &[Arg::Buf(xb), Arg::I32(512)]);
        assert_eq!(
            b.read::<i32>(xb),
            x.iter().map(|v| v * 2 + (v & 1)).collect::<Vec<_>>()
        );
        let mut waves: BTreeMap<(u8, u8, u8), Vec<ShaderDataRecord>> = BTreeMap::new();
        for r in &out.trace {
            waves.entry((r.cu, r.simd, r.wave_id)).or_default().push(*r);
        }
        // 8 work-groups of one wave on 4 CUs: groups 0, 1, 4, 5 are on CUs 0 and 1.
        assert_eq!(
            waves.keys().map(|k| k.0).collect::<Vec<_>>(),
            vec![0, 1],
            "{}: only CUs 0 and 1 emit",
            t.name()
        );
        for ((cu, _, _), recs) in &waves {
            // Two rounds (work-groups cu and cu + 4) share the slot; time orders them.
            assert!(recs.windows(2).all(|w| w[0].time < w[1].time));
            let values: Vec<u64> = recs.iter().map(|r| r.value).collect();
            let per_group = |g: u64| {
                vec![
                    // gid_x() = bid_x() * bdim_x() + tid_x(), bdim_x() reading pkt16()
                    enter(gid),
                    enter(bid),
                    1,
                    enter(bdim),
                    enter(pkt),
                    1,
                    1,
                    enter(tid),
                    1,
                    1,
                    enter(work),
                    enter(twice),
                    1,
                    // sqtt_marker_data("work_value", bid_x()): point marker, then the payload
                    enter(bid),
                    1,
                    value << 2,
                    g,
                    1,
                ]
            };
            let want: Vec<u64> = [*cu as u64, *cu as u64 + 4]
                .into_iter()
                .flat_map(per_group)
                .collect();
            assert_eq!(values, want, "{} cu {cu}: {map:?}", t.name());
        }
    }
}

#[test]
fn address_trace_rows_carry_the_addresses_touched() {
    for t in TARGETS {
        let bytes =
            std::fs::read(build("addr_trace", t, ("SQTT_TRACE_ADDRESSES", "memory"))).unwrap();
        let map = funcmap(&bytes);
        let (load, store) = (
            id_of(&map, "P", "addr_trace_load"),
            id_of(&map, "P", "addr_trace_store"),
        );
        assert!(
            map.contains(&format!("R:{load}:extra_payload_count=130")),
            "{map:?}"
        );
        let co = CodeObject::parse(&bytes).unwrap();
        let mut b = Bench::from_code_object(co, t, 2);
        let n = 200usize;
        let x: Vec<i32> = (0..n as i32).collect();
        let xb = b.buf_of(&x);
        let base = b.address(xb);
        // 4 work-groups of 64: groups 0 and 1 run on CUs 0 and 1 (traced), 2 and 3 do not.
        let out = b.run1("addr_traced", 256, 64, &[Arg::Buf(xb), Arg::I32(n as i32)]);
        assert_eq!(
            b.read::<i32>(xb),
            x.iter().map(|v| v + 3).collect::<Vec<_>>()
        );
        let mut waves: BTreeMap<(u8, u8, u8), Vec<u64>> = BTreeMap::new();
        for r in &out.trace {
            waves
                .entry((r.cu, r.simd, r.wave_id))
                .or_default()
                .push(r.value);
        }
        assert_eq!(waves.len(), 2, "{}", t.name());
        for ((cu, _, _), v) in &waves {
            let g = *cu as u64;
            assert_eq!(v.len(), 2 * 131, "{} cu {cu}", t.name());
            for (k, id) in [load, store].into_iter().enumerate() {
                let blk = &v[131 * k..131 * (k + 1)];
                assert_eq!(blk[0], id << 2);
                let exec = blk[1] | blk[2] << 32;
                assert_eq!(exec, u64::MAX, "every lane of groups 0 and 1 is in range");
                for lane in 0..64u64 {
                    let a = blk[3 + 2 * lane as usize] | blk[4 + 2 * lane as usize] << 32;
                    assert_eq!(
                        a,
                        base + 4 * (g * 64 + lane),
                        "{} cu {cu} lane {lane}",
                        t.name()
                    );
                }
            }
        }
    }
}
