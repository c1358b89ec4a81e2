//! Compiling the test kernels with the real clang and the plugin, and reading the results.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every option variable the plugin reads; cleared before each compile so the test
/// environment cannot leak into a build.
pub const OPTION_VARS: &[&str] = &[
    "SQTT_SCOPE_WAVE",
    "SQTT_SCOPE_SIMD",
    "SQTT_SCOPE_CU",
    "SQTT_SCOPE_WG",
    "SQTT_INSTRUMENT_FUNCTIONS",
    "SQTT_INSTRUMENT_BARRIERS",
    "SQTT_INSTRUMENT_MEMORY",
    "SQTT_TRACE_ADDRESSES",
    "SQTT_MEM_BARRIER",
    "SQTT_SHADER_CLOCK_BITS",
    "SQTT_SHADER_CLOCK_SHIFT",
    "SQTT_PASS_TEST_PANIC",
];

pub fn kernel(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels")
        .join(name)
}

pub fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// An LLVM tool of the installed LLVM 22 (`SQTT_LLVM_BINDIR` overrides the lookup).
pub fn llvm_tool(name: &str) -> PathBuf {
    match std::env::var_os("SQTT_LLVM_BINDIR") {
        Some(dir) => PathBuf::from(dir).join(name),
        None => PathBuf::from(format!("{name}-22")),
    }
}

/// How to compile one kernel.
pub struct Compile<'a> {
    pub source: &'a str,
    pub arch: &'a str,
    pub plugin: bool,
    pub enabled: bool,
    pub env: Vec<(&'a str, &'a str)>,
    pub extra: Vec<&'a str>,
}

impl<'a> Compile<'a> {
    pub fn new(source: &'a str, arch: &'a str) -> Self {
        Compile {
            source,
            arch,
            plugin: true,
            enabled: true,
            env: Vec::new(),
            extra: Vec::new(),
        }
    }
    pub fn env(mut self, k: &'a str, v: &'a str) -> Self {
        self.env.push((k, v));
        self
    }
    pub fn no_plugin(mut self) -> Self {
        self.plugin = false;
        self
    }
    pub fn disabled(mut self) -> Self {
        self.enabled = false;
        self
    }
    pub fn arg(mut self, a: &'a str) -> Self {
        self.extra.push(a);
        self
    }

    fn command(&self, out: &Path, emit_ir: bool) -> Command {
        let mut cmd = Command::new(test_support::device_clang());
        cmd.args(["-x", "hip"])
            .arg(format!("--offload-arch={}", self.arch))
            .args([
                "--cuda-device-only",
                "--no-gpu-bundle-output",
                "-nogpulib",
                "-nogpuinc",
                "-O2",
                "-cuid=sqtt-test",
            ])
            .arg("-I")
            .arg(include_dir())
            .arg("-I")
            .arg(kernel(""));
        if self.enabled {
            cmd.arg("-DSQTT_ENABLED=1");
        }
        if self.plugin {
            cmd.arg(format!(
                "-fpass-plugin={}",
                test_support::sqtt_pass_plugin().display()
            ));
        }
        if emit_ir {
            cmd.args(["-S", "-emit-llvm"]);
        }
        cmd.args(&self.extra)
            .arg(kernel(self.source))
            .arg("-o")
            .arg(out);
        for v in OPTION_VARS {
            cmd.env_remove(v);
        }
        cmd.env_remove("KREPLAY_LOG");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Compiles; returns the code object or the compiler's stderr.
    pub fn try_build(&self, tag: &str) -> Result<PathBuf, String> {
        let dir = test_support::scratch_dir(&format!("sqtt-{tag}-{}", self.arch));
        let out = dir.join("k.co");
        let o = self.command(&out, false).output().expect("run clang");
        if o.status.success() {
            Ok(out)
        } else {
            Err(String::from_utf8_lossy(&o.stderr).into_owned())
        }
    }

    pub fn build(&self, tag: &str) -> PathBuf {
        self.try_build(tag)
            .unwrap_or_else(|e| panic!("compiling {} for {} failed:\n{e}", self.source, self.arch))
    }

    /// The optimised device IR as text.
    pub fn ir(&self, tag: &str) -> String {
        let dir = test_support::scratch_dir(&format!("sqtt-ir-{tag}-{}", self.arch));
        let out = dir.join("k.ll");
        let o = self.command(&out, true).output().expect("run clang");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(out).expect("read IR")
    }
}

/// The disassembly of a code object, function by function: (symbol, instructions).
pub fn disassemble(co: &Path) -> Vec<(String, Vec<String>)> {
    let o = Command::new(llvm_tool("llvm-objdump"))
        .arg("-d")
        .arg(co)
        .output()
        .expect("run llvm-objdump");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let mut funcs: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_suffix(">:") {
            let name = rest.rsplit_once('<').map(|(_, n)| n).unwrap_or(rest);
            funcs.push((name.to_string(), Vec::new()));
        } else if line.starts_with('\t') || line.starts_with(' ') {
            let inst = line.split("//").next().unwrap_or("").trim();
            if !inst.is_empty()
                && let Some(f) = funcs.last_mut()
            {
                f.1.push(inst.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
    }
    funcs
}

/// Instructions of one function.
pub fn function<'f>(funcs: &'f [(String, Vec<String>)], name: &str) -> &'f [String] {
    &funcs
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| {
            panic!(
                "no function {name} in {:?}",
                funcs.iter().map(|f| &f.0).collect::<Vec<_>>()
            )
        })
        .1
}

/// All instructions of all functions.
pub fn all(funcs: &[(String, Vec<String>)]) -> Vec<String> {
    funcs.iter().flat_map(|(_, i)| i.iter().cloned()).collect()
}

/// The `.sqtt_funcmap` rows, or `None` without the section.
pub fn funcmap(co: &Path) -> Option<Vec<String>> {
    let dir = co.parent().expect("parent");
    let dump = dir.join("funcmap.bin");
    let _ = std::fs::remove_file(&dump);
    let o = Command::new(llvm_tool("llvm-objcopy"))
        .arg(format!("--dump-section=.sqtt_funcmap={}", dump.display()))
        .arg(co)
        .arg(dir.join("objcopy.out"))
        .output()
        .expect("run llvm-objcopy");
    if !o.status.success() {
        return None;
    }
    let bytes = std::fs::read(&dump).ok()?;
    assert_eq!(bytes.last(), Some(&0), "the section is NUL-terminated");
    let text = String::from_utf8(bytes[..bytes.len() - 1].to_vec()).expect("ASCII rows");
    Some(text.lines().map(str::to_string).collect())
}

/// Marker words emitted: `s_ttracedata_imm V` gives V; `s_mov_b32 m0, V` directly followed by
/// `s_nop 0` and `s_ttracedata` gives V (as text, may be a register).
pub fn markers(insts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, i) in insts.iter().enumerate() {
        if let Some(v) = i.strip_prefix("s_ttracedata_imm ") {
            out.push(v.to_string());
        } else if let Some(v) = i.strip_prefix("s_mov_b32 m0, ")
            && insts.get(k + 1).map(String::as_str) == Some("s_nop 0")
            && insts.get(k + 2).map(String::as_str) == Some("s_ttracedata")
        {
            out.push(v.to_string());
        }
    }
    out
}

/// Parses an immediate as printed by the disassembler (decimal, or 0x hex).
pub fn imm(v: &str) -> Option<u32> {
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Number of `s_ttracedata` + `s_ttracedata_imm` instructions.
pub fn trace_instruction_count(insts: &[String]) -> usize {
    insts
        .iter()
        .filter(|i| *i == "s_ttracedata" || i.starts_with("s_ttracedata_imm"))
        .count()
}
