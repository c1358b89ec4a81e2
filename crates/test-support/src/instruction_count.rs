//! An independent instruction count: `llvm-objdump` disassembles a code object, each mnemonic is
//! classified by its prefix alone, and the classes are multiplied by the waves and by the trip
//! count of the kernel's one loop. Tests compare hardware-counter values (named as the counters:
//! `SQ_INSTS`, `SQ_INSTS_SALU`, ...) with it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// One disassembled instruction: address, mnemonic, branch target.
pub struct Line {
    /// Address.
    pub addr: u64,
    /// Mnemonic (`s_load_dwordx4`).
    pub mnemonic: String,
    /// A branch's target address.
    pub target: Option<u64>,
}

/// The instructions of `kernel` in the code object at `path`, up to its first `s_endpgm`, from
/// `llvm-objdump-22 -d --mcpu=<target>`.
pub fn disassemble(path: &Path, target: &str, kernel: &str) -> Vec<Line> {
    let out = Command::new("llvm-objdump-22")
        .args(["-d", &format!("--mcpu={target}")])
        .arg(path)
        .output()
        .expect("llvm-objdump-22 must be installed (scripts/install-deps.sh)");
    assert!(
        out.status.success(),
        "llvm-objdump-22 failed on {}",
        path.display()
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines: Vec<Line> = Vec::new();
    let mut inside = false;
    for l in text.lines() {
        if l.ends_with(&format!("<{kernel}>:")) {
            inside = true;
            continue;
        }
        let (true, Some((code, comment))) = (inside, l.split_once("//")) else {
            continue;
        };
        let mnemonic = code.split_whitespace().next().unwrap_or("").to_string();
        let addr = u64::from_str_radix(comment.trim().split(':').next().unwrap().trim(), 16)
            .expect("address in the comment");
        // A branch's target is printed as `<kernel+0x..>`.
        let target = comment
            .split_once(&format!("<{kernel}+0x"))
            .map(|(_, rest)| {
                let base = lines.first().map_or(addr, |f| f.addr);
                base + u64::from_str_radix(rest.trim_end_matches('>'), 16).unwrap()
            });
        let end = mnemonic == "s_endpgm";
        lines.push(Line {
            addr,
            mnemonic,
            target,
        });
        if end {
            break;
        }
    }
    assert!(!lines.is_empty(), "{kernel} not found in the disassembly");
    lines
}

/// SOPP instructions that are neither branches nor messages.
const SOPP_OTHER: &[&str] = &[
    "s_nop",
    "s_endpgm",
    "s_waitcnt",
    "s_barrier",
    "s_setprio",
    "s_sleep",
    "s_trap",
    "s_icache_inv",
    "s_set_gpr_idx_off",
    "s_set_gpr_idx_mode",
    "s_setkill",
    "s_sethalt",
];

/// The counters one issue of a mnemonic adds to, by prefix alone.
pub fn counters_of(m: &str) -> Vec<&'static str> {
    let mut q = vec!["SQ_INSTS"];
    let branch =
        m.starts_with("s_cbranch") || ["s_branch", "s_setpc_b64", "s_swappc_b64"].contains(&m);
    let smem = [
        "s_load",
        "s_store",
        "s_buffer",
        "s_dcache",
        "s_memtime",
        "s_memrealtime",
    ]
    .iter()
    .any(|p| m.starts_with(p));
    let vmem = ["global_", "flat_", "buffer_", "scratch_"]
        .iter()
        .any(|p| m.starts_with(p));
    if branch {
        q.push("SQ_INSTS_BRANCH");
    } else if smem {
        q.push("SQ_INSTS_SMEM");
    } else if m.starts_with("s_sendmsg") {
        q.push("SQ_INSTS_SENDMSG");
    } else if SOPP_OTHER.contains(&m) {
    } else if m.starts_with("s_") {
        q.push("SQ_INSTS_SALU");
    } else if m.starts_with("v_mfma") {
        q.extend(["SQ_INSTS_VALU", "SQ_INSTS_MFMA"]);
    } else if m.starts_with("v_") {
        q.push("SQ_INSTS_VALU");
    } else if vmem {
        q.push(if m.contains("store") {
            "SQ_INSTS_VMEM_WR"
        } else {
            "SQ_INSTS_VMEM_RD"
        });
    } else if m.starts_with("ds_") {
        q.push("SQ_INSTS_LDS");
    }
    q
}

/// The counters [`counters_of`] classifies into.
pub const COUNTED: [&str; 10] = [
    "SQ_INSTS",
    "SQ_INSTS_SALU",
    "SQ_INSTS_SMEM",
    "SQ_INSTS_BRANCH",
    "SQ_INSTS_VALU",
    "SQ_INSTS_MFMA",
    "SQ_INSTS_VMEM_RD",
    "SQ_INSTS_VMEM_WR",
    "SQ_INSTS_LDS",
    "SQ_INSTS_SENDMSG",
];

/// The expected totals of [`COUNTED`]: each instruction's counters, times `trips` inside the one
/// backward branch's loop (once elsewhere), times the waves.
pub fn expected(lines: &[Line], trips: u64, waves: u64) -> BTreeMap<&'static str, u64> {
    let back: Vec<&Line> = lines
        .iter()
        .filter(|l| l.target.is_some_and(|t| t < l.addr))
        .collect();
    assert!(back.len() <= 1, "one loop at most");
    let body = back.first().map(|b| b.target.unwrap()..=b.addr);
    let mut counts: BTreeMap<&'static str, u64> = COUNTED.iter().map(|c| (*c, 0)).collect();
    for l in lines {
        let times = match &body {
            Some(r) if r.contains(&l.addr) => trips,
            _ => 1,
        };
        for c in counters_of(&l.mnemonic) {
            *counts.entry(c).or_insert(0) += times * waves;
        }
    }
    counts
}
