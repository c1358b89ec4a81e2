//! Test harness: builds the corpus with clang once per test binary, loads code objects into
//! a `RegionMemory` and runs kernels with typed arguments.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use amdgpu_emu::code_object::CodeObject;
use amdgpu_emu::{
    Apertures, DispatchOutcome, DispatchSetup, Emulator, Fault, RegionMemory, Target,
};

pub const TARGETS: [Target; 2] = [Target::Gfx942, Target::Gfx90a];

/// Corpus sources and their extra compiler options.
pub const SOURCES: &[(&str, &[&str])] = &[
    ("stream", &[]),
    ("reduce", &[]),
    ("atomics", &[]),
    ("control", &[]),
    ("numeric", &[]),
    ("xlane", &[]),
    ("dpp", &["-mllvm", "-amdgpu-atomic-optimizer-strategy=DPP"]),
    ("ftz", &["-fgpu-flush-denormals-to-zero"]),
    ("mfma", &[]),
    ("special", &[]),
    ("preload", &["-mllvm", "-amdgpu-kernarg-preload-count=3"]),
    ("library_ops", &[]),
    ("mfma_shapes", &[]),
    ("grid_sync", &[]),
    ("co_resident", &[]),
    ("counters", &[]),
    ("valu_more", &[]),
    ("images", &[]),
    ("folded", &[]),
    // Without SRAM ECC the d16 loads keep the other half of their register, so clang emits
    // them (the memory_more tests need them).
    (
        "memory_more",
        &["-Xclang", "-target-feature", "-Xclang", "-sramecc"],
    ),
];

/// Sources also built at -O0 (as `<name>_o0`): the same tests run on both builds.
pub const UNOPTIMIZED: &[&str] = &[
    "stream", "reduce", "atomics", "control", "numeric", "xlane", "mfma",
];

thread_local! {
    /// The build variant `Bench::new` loads: "" (-O3) or "_o0".
    pub static VARIANT: std::cell::Cell<&'static str> = const { std::cell::Cell::new("") };
}

thread_local! {
    /// Whether `Bench::run` also runs each dispatch on both engines and compares them (on
    /// unless a test turns it off for a kernel whose results depend on time or on races).
    pub static COMPARE_ENGINES: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Sources built with Debian's `hipcc` against the HIP headers and device libraries, for
/// gfx90a only (those libraries have no gfx942 code).
pub const HIP_SOURCES: &[&str] = &["hip_kernels"];

/// Whether `dst` is newer than `src` and the test header (then it is not rebuilt).
fn fresh(dst: &Path, src: &Path) -> bool {
    let m = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    // Compare with the newest source of the corpus (a changed header rebuilds everything).
    let newest = std::fs::read_dir(corpus_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| m(&e.path()))
        .max();
    match (m(dst), m(src), newest) {
        (Some(d), Some(s), Some(n)) => d > s && d >= n,
        _ => false,
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Build every corpus source for both targets (once per test binary); returns the paths.
pub fn corpus() -> &'static HashMap<(String, Target), PathBuf> {
    static BUILT: OnceLock<HashMap<(String, Target), PathBuf>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("amdgpu-emu-corpus");
        std::fs::create_dir_all(&out).expect("create corpus output directory");
        let mut children = Vec::new();
        let mut map = HashMap::new();
        for (name, extra) in SOURCES {
            for t in TARGETS {
                let src = corpus_dir().join(format!("{name}.hip"));
                let dst = out.join(format!("{name}-{}.co", t.name()));
                if fresh(&dst, &src) {
                    map.insert((name.to_string(), t), dst);
                    continue;
                }
                let child = Command::new("clang-22")
                    .args([
                        "-x",
                        "hip",
                        &format!("--offload-arch={}", t.name()),
                        "--cuda-device-only",
                        "--no-gpu-bundle-output",
                        "-nogpulib",
                        "-nogpuinc",
                        "-O3",
                    ])
                    .args(*extra)
                    .arg(&src)
                    .arg("-o")
                    .arg(&dst)
                    .spawn()
                    .expect("clang-22 must be installed (scripts/install-deps.sh)");
                children.push((child, src.clone()));
                map.insert((name.to_string(), t), dst);
            }
        }
        for name in UNOPTIMIZED {
            for t in TARGETS {
                let src = corpus_dir().join(format!("{name}.hip"));
                let dst = out.join(format!("{name}_o0-{}.co", t.name()));
                map.insert((format!("{name}_o0"), t), dst.clone());
                if fresh(&dst, &src) {
                    continue;
                }
                let child = Command::new("clang-22")
                    .args([
                        "-x",
                        "hip",
                        &format!("--offload-arch={}", t.name()),
                        "--cuda-device-only",
                        "--no-gpu-bundle-output",
                        "-nogpulib",
                        "-nogpuinc",
                        "-O0",
                    ])
                    .arg(&src)
                    .arg("-o")
                    .arg(&dst)
                    .spawn()
                    .expect("clang-22 must be installed (scripts/install-deps.sh)");
                children.push((child, src.clone()));
            }
        }
        for name in HIP_SOURCES {
            let t = Target::Gfx90a;
            let src = corpus_dir().join(format!("{name}.hip"));
            let dst = out.join(format!("{name}-{}.co", t.name()));
            if fresh(&dst, &src) {
                map.insert((name.to_string(), t), dst);
                continue;
            }
            let child = test_support::hipcc()
                .args([
                    "--offload-arch=gfx90a",
                    "--cuda-device-only",
                    "--no-gpu-bundle-output",
                    "-O3",
                    "-c",
                ])
                .arg(&src)
                .arg("-o")
                .arg(&dst)
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("hipcc must be installed (scripts/install-deps.sh)");
            children.push((child, src.clone()));
            map.insert((name.to_string(), t), dst);
        }
        for (mut c, src) in children {
            let st = c.wait().expect("wait for clang-22");
            assert!(st.success(), "clang-22 failed on {}", src.display());
        }
        map
    })
}

pub fn code_object(name: &str, t: Target) -> CodeObject {
    let path = &corpus()[&(name.to_string(), t)];
    CodeObject::parse(&std::fs::read(path).expect("read code object")).expect("parse code object")
}

const CODE_BASE: u64 = 0x1000_0000;
const PACKET: u64 = 0x0F00_0000;
const KERNARG: u64 = 0x0F10_0000;
const BUFFERS: u64 = 0x4000_0000;

/// A kernel argument.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    Buf(usize),
    I32(i32),
    U32(u32),
    F32(f32),
    F64(f64),
}

/// A loaded code object with buffers.
pub struct Bench {
    pub target: Target,
    pub co: CodeObject,
    pub mem: RegionMemory,
    bufs: Vec<(u64, usize)>,
    next: u64,
    pub emu: Emulator,
}

impl Bench {
    pub fn new(file: &str, target: Target) -> Bench {
        Bench::with_threads(file, target, 2)
    }

    pub fn with_threads(file: &str, target: Target, threads: usize) -> Bench {
        let variant = VARIANT.with(|v| v.get());
        let key = if variant.is_empty() || !UNOPTIMIZED.contains(&file) {
            file.to_string()
        } else {
            format!("{file}{variant}")
        };
        Bench::from_code_object(code_object(&key, target), target, threads)
    }

    pub fn from_code_object(co: CodeObject, target: Target, threads: usize) -> Bench {
        assert_eq!(co.target, Some(target));
        let mut mem = RegionMemory::new();
        mem.add(CODE_BASE, co.image.len().next_multiple_of(8) as u64);
        mem.write(CODE_BASE, &co.image);
        mem.add(PACKET, 64);
        mem.add(KERNARG, 4096);
        Bench {
            target,
            co,
            mem,
            bufs: Vec::new(),
            next: BUFFERS,
            emu: Emulator::new(target, threads),
        }
    }

    /// Add a buffer holding `bytes`; returns its index.
    pub fn buf(&mut self, bytes: &[u8]) -> usize {
        let len = bytes.len().max(8).next_multiple_of(8);
        self.mem.add(self.next, len as u64);
        self.mem.write(self.next, bytes);
        self.bufs.push((self.next, bytes.len()));
        // Leave an unmapped gap after each buffer so overruns fault.
        self.next += (len as u64).next_multiple_of(0x10000) + 0x10000;
        self.bufs.len() - 1
    }

    pub fn buf_of<T: Copy>(&mut self, v: &[T]) -> usize {
        // SAFETY: plain-old-data test values viewed as bytes.
        let b = unsafe {
            std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v))
        };
        self.buf(b)
    }

    pub fn zeros<T: Copy + Default>(&mut self, n: usize) -> usize {
        self.buf_of(&vec![T::default(); n])
    }

    pub fn read<T: Copy + Default>(&self, b: usize) -> Vec<T> {
        let (a, len) = self.bufs[b];
        let bytes = self.mem.read(a, len);
        let n = len / std::mem::size_of::<T>();
        let mut out = vec![T::default(); n];
        // SAFETY: copying `n * size_of::<T>()` bytes into a vector of plain-old-data values.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                out.as_mut_ptr() as *mut u8,
                n * std::mem::size_of::<T>(),
            )
        };
        out
    }

    pub fn address(&self, b: usize) -> u64 {
        self.bufs[b].0
    }

    pub fn symbol_address(&self, name: &str) -> u64 {
        CODE_BASE
            + self
                .co
                .symbol(name)
                .unwrap_or_else(|| panic!("no symbol {name}"))
    }

    pub fn run(
        &self,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[Arg],
        lds: u32,
    ) -> Result<DispatchOutcome, Fault> {
        let kd = self
            .co
            .kernel(kernel)
            .unwrap_or_else(|| panic!("no kernel {kernel}"));
        let mut ka = Vec::<u8>::new();
        for a in args {
            let (bytes, align): (Vec<u8>, usize) = match *a {
                Arg::Buf(b) => (self.address(b).to_le_bytes().to_vec(), 8),
                Arg::I32(v) => (v.to_le_bytes().to_vec(), 4),
                Arg::U32(v) => (v.to_le_bytes().to_vec(), 4),
                Arg::F32(v) => (v.to_le_bytes().to_vec(), 4),
                Arg::F64(v) => (v.to_le_bytes().to_vec(), 8),
            };
            while !ka.len().is_multiple_of(align) {
                ka.push(0);
            }
            ka.extend(bytes);
        }
        ka.resize(4096, 0);
        self.mem.write(KERNARG, &ka);
        let mut pkt = [0u8; 64];
        for d in 0..3 {
            pkt[4 + 2 * d..6 + 2 * d].copy_from_slice(&(block[d] as u16).to_le_bytes());
            pkt[12 + 4 * d..16 + 4 * d].copy_from_slice(&grid[d].to_le_bytes());
        }
        let kdb = &self.co.image[kd as usize..kd as usize + 64];
        let private = u32::from_le_bytes(kdb[4..8].try_into().unwrap());
        let group = u32::from_le_bytes(kdb[0..4].try_into().unwrap()) + lds;
        pkt[24..28].copy_from_slice(&private.to_le_bytes());
        pkt[28..32].copy_from_slice(&group.to_le_bytes());
        pkt[32..40].copy_from_slice(&(CODE_BASE + kd).to_le_bytes());
        pkt[40..48].copy_from_slice(&KERNARG.to_le_bytes());
        self.mem.write(PACKET, &pkt);
        let setup = DispatchSetup {
            kernel_object: CODE_BASE + kd,
            kernel_name: Some(kernel),
            code_range: CODE_BASE + self.co.text.start..CODE_BASE + self.co.text.end,
            grid,
            workgroup: block,
            kernarg_address: KERNARG,
            group_segment_size: group,
            private_segment_size: private,
            dispatch_packet_address: PACKET,
            queue_address: 0,
            dispatch_id: 0,
            apertures: Apertures::default(),
        };
        if COMPARE_ENGINES.with(|c| c.get()) {
            self.engines_agree(&setup);
        }
        self.emu.dispatch(&setup, &self.mem)
    }

    /// Run the dispatch on copies of the memory with the fast paths (once with every block
    /// compiled to host code at its first entry, once interpreted) and with the per-lane
    /// reference (the fast paths off), one host thread each so that work-groups run in the
    /// same order, and assert the same outcome and bit-identical memory afterwards.
    fn engines_agree(&self, setup: &DispatchSetup<'_>) {
        let run = |fast: bool, compiled: Option<u32>| {
            let mem = self.mem.clone();
            let emu = Emulator::new(self.target, 1)
                .with_fast_paths(fast)
                .with_compiled_regions(compiled)
                .with_time_limit(std::time::Duration::from_secs(120));
            let out = emu.dispatch(setup, &mem);
            (out, mem)
        };
        let (reference, reference_mem) = run(false, None);
        for (engine, compiled) in [("compiled", Some(1)), ("fast", None)] {
            let (fast, fast_mem) = run(true, compiled);
            self.agree(
                setup,
                engine,
                (&fast, &fast_mem),
                (&reference, &reference_mem),
            );
        }
    }

    /// Assert that `engine`'s outcome and memory are the reference's.
    fn agree(
        &self,
        setup: &DispatchSetup<'_>,
        engine: &str,
        (fast, fast_mem): (&Result<DispatchOutcome, Fault>, &RegionMemory),
        (reference, reference_mem): (&Result<DispatchOutcome, Fault>, &RegionMemory),
    ) {
        let name = setup.kernel_name.unwrap_or("?");
        let t = self.target.name();
        match (fast, reference) {
            (Ok(a), Ok(b)) => {
                assert_eq!(
                    a.lane_instructions, b.lane_instructions,
                    "{name} on {t}, {engine}"
                );
                assert_eq!(
                    a.wave_instructions, b.wave_instructions,
                    "{name} on {t}, {engine}"
                );
                assert_eq!(a.counters, b.counters, "{name} on {t}, {engine}: counters");
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{name} on {t}, {engine}: faults"),
            _ => panic!("{name} on {t}: {engine} {fast:?}, reference {reference:?}"),
        }
        if fast_mem != reference_mem {
            let regions = fast_mem.regions().zip(reference_mem.regions());
            for ((base, a), (_, b)) in regions {
                if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
                    panic!(
                        "{name} on {t}: memory differs at 0x{:x} ({engine} {:#x}, reference {:#x})",
                        base + i as u64,
                        a[i],
                        b[i]
                    );
                }
            }
        }
    }

    pub fn run1(&self, kernel: &str, n: u32, block: u32, args: &[Arg]) -> DispatchOutcome {
        match self.run(kernel, [n, 1, 1], [block, 1, 1], args, 0) {
            Ok(o) => o,
            Err(f) => panic!("{} on {}: {f}", kernel, self.target.name()),
        }
    }
}

/// Assert that a corpus code object holds each of `ops` (so a test of them cannot pass by the
/// compiler choosing other instructions).
pub fn assert_uses(b: &Bench, ops: &[&str]) {
    let text = &b.co.image[b.co.text.start as usize..b.co.text.end as usize];
    let prog = amdgpu_emu::decode::Program::decode(b.target, b.co.text.start, text);
    for op in ops {
        assert!(
            prog.insts.iter().any(|i| i.op.name() == *op),
            "{}: the corpus code has no {op}",
            b.target.name()
        );
    }
}

/// A small deterministic generator for test inputs.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn f32(&mut self) -> f32 {
        (self.next() % 20000) as f32 / 1000.0 - 10.0
    }
}
