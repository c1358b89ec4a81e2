//! Code generation for one marker site: the scope check, the marker word, payload records and
//! the reordering boundary around them.
//!
//! A site becomes one side-effecting, convergent inline asm statement, so the instruction
//! sequence is exactly the documented one on every target and the scope check, header and
//! payload stay together:
//!
//! ```text
//! s_getreg_b32   sN, hwreg(HW_ID.., off, size)   ; one per filtered field
//! s_bitcmp1_b32  <mask>, sN                       ; SCC = mask bit for this slot
//! s_cbranch_scc0 skip                             ; not in scope: skip the marker
//! s_ttracedata_imm <word>                         ; word < 256, GFX10+, no clock packing
//!   or  s_mov_b32 m0, <word>; s_nop 0; s_ttracedata
//! (payload records: s_mov_b32 m0, <value>; s_nop 0; s_ttracedata)
//! skip:
//! ```

use std::fmt::Write as _;

use llvm_sys::prelude::*;

use crate::ir::Builder;
use crate::options::{ClockPacking, MemBarrier, Options, ScopeMasks};
use crate::sites::AddressSource;
use crate::target::{ClockSource, GpuTarget};

/// Marker word flag: exit the previous scope.
pub const EXIT_PREV: u32 = 1;
/// Marker word flag: enter a scope.
pub const ENTER: u32 = 2;

/// The marker word `(id << 2) | flags`.
pub fn marker_word(id: u32, flags: u32) -> u32 {
    (id << 2) | flags
}

/// Whether a header is packed with the shader clock (when packing is on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// Generated headers: clock in the top bits when packing is active.
    Packed,
    /// Numeric point/enter markers from the header keep their legacy value.
    Legacy,
}

/// Records that follow a header.
#[derive(Debug, Clone, Copy)]
pub enum Payload {
    /// None.
    None,
    /// One 32-bit value (made wave-uniform with `readfirstlane`).
    Value(LLVMValueRef),
    /// EXEC mask, then the addresses of every lane (see [`address_payload_count`]).
    Addresses(AddressSource),
}

/// Number of payload records an address block carries: the EXEC mask (2 words on wave64, 1 on
/// wave32), then per lane the low and high address words (flat/global) or one word (LDS); raw
/// buffer accesses carry the descriptor base (2 words) and `soffset` before one `voffset` per
/// lane.
pub fn address_payload_count(wave_size: u32, source: &AddressSource) -> u32 {
    let exec_words = if wave_size == 64 { 2 } else { 1 };
    exec_words
        + match source {
            AddressSource::Flat(_) => 2 * wave_size,
            AddressSource::Lds(_) => wave_size,
            AddressSource::RawBuffer { .. } => 3 + wave_size,
        }
}

/// The header word of a site, before clock packing.
#[derive(Debug, Clone, Copy)]
pub enum Word {
    /// A known value.
    Const(u32),
    /// A value computed at run time (numeric markers with a variable ID).
    Dynamic(LLVMValueRef),
}

/// Builds marker code for one module.
pub struct Emitter<'a> {
    /// IR builder.
    pub b: &'a Builder,
    /// The module's target.
    pub target: &'a GpuTarget,
    scope: ScopeMasks,
    mem_barrier: MemBarrier,
    clock: Option<ClockPacking>,
    sites: std::cell::Cell<usize>,
}

/// One `s_mov_b32 m0 / s_nop 0 / s_ttracedata` record from an asm operand or literal.
fn m0_record(asm: &mut String, source: &str) {
    // `source` is a literal or an operand placeholder.
    let _ = write!(asm, "s_mov_b32 m0, {source}\n\ts_nop 0\n\ts_ttracedata\n\t");
}

impl<'a> Emitter<'a> {
    /// An emitter for `target` with the scope, boundary and clock options of `options`.
    pub fn new(b: &'a Builder, target: &'a GpuTarget, options: &Options) -> Emitter<'a> {
        Emitter {
            b,
            target,
            scope: options.scope,
            mem_barrier: options.mem_barrier,
            clock: options.clock,
            sites: Default::default(),
        }
    }

    /// Marker sites emitted so far.
    pub fn sites(&self) -> usize {
        self.sites.get()
    }

    fn boundary(&self) {
        match self.mem_barrier {
            MemBarrier::None => {}
            MemBarrier::Asm => {
                self.b.inline_asm(self.b.void, "", "~{memory}", &[]);
            }
            MemBarrier::Fence => self.b.lds_workgroup_fence(),
        }
    }

    fn readfirstlane(&self, v: LLVMValueRef) -> LLVMValueRef {
        let v = self.b.to_i32(v);
        if crate::ir::const_int(v).is_some() {
            return v;
        }
        let (f, fty) = self.b.intrinsic("llvm.amdgcn.readfirstlane", &[self.b.i32]);
        self.b.call(fty, f, &[v])
    }

    /// Emits a marker (and its payload) immediately before instruction `at`.
    pub fn emit_before(&self, at: LLVMValueRef, word: Word, packing: Packing, payload: Payload) {
        self.sites.set(self.sites.get() + 1);
        self.b.before(at);
        let pack = match (self.clock, packing) {
            (Some(c), Packing::Packed) => Some(c),
            _ => None,
        };
        let ops = self.operands(word, pack, payload);
        let mut site = SiteAsm::default();
        let any_check = self.scope_check(&mut site);
        self.header(&mut site, word, pack, &ops);
        self.payload_records(&mut site, payload, &ops.payload);
        if any_check {
            site.asm.push_str(".Lsqtt_skip_${:uid}:\n\t");
        }
        self.boundary();
        self.inline_asm(site, &ops.inputs);
        self.boundary();
    }

    /// The values the asm statement reads, computed in IR before it, and where each is.
    fn operands(&self, word: Word, pack: Option<ClockPacking>, payload: Payload) -> Operands {
        let mut inputs: Vec<(LLVMValueRef, &'static str)> = Vec::new();
        let header = match word {
            Word::Dynamic(v) => {
                inputs.push((self.readfirstlane(v), "s"));
                Some(inputs.len())
            }
            Word::Const(_) => None,
        };
        let clock = match (pack, self.target.clock_source()) {
            (Some(c), Some(ClockSource::ShaderCycles64)) => {
                let (f, fty) = self.b.intrinsic("llvm.readcyclecounter", &[]);
                let cycles = self.b.call(fty, f, &[]);
                let shifted = self.b.lshr_i64(cycles, c.shift);
                inputs.push((self.b.to_i32(shifted), "s"));
                Some(inputs.len())
            }
            _ => None,
        };
        let payload = self.payload_operands(payload, &mut inputs);
        Operands {
            inputs,
            header,
            clock,
            payload,
        }
    }

    /// Pushes the payload's values onto `inputs`; returns their operand numbers.
    fn payload_operands(
        &self,
        payload: Payload,
        inputs: &mut Vec<(LLVMValueRef, &'static str)>,
    ) -> Vec<usize> {
        match payload {
            Payload::None => Vec::new(),
            Payload::Value(v) => {
                inputs.push((self.readfirstlane(v), "s"));
                vec![inputs.len()]
            }
            Payload::Addresses(AddressSource::Lds(ptr)) => {
                inputs.push((self.b.to_i32(ptr), "v"));
                vec![inputs.len()]
            }
            Payload::Addresses(AddressSource::Flat(ptr)) => {
                let wide = self.b.ptr_to_int(ptr, self.b.i64);
                inputs.push((self.b.to_i32(wide), "v"));
                inputs.push((self.b.high_i32(wide), "v"));
                vec![inputs.len() - 1, inputs.len()]
            }
            Payload::Addresses(AddressSource::RawBuffer {
                rsrc,
                voffset,
                soffset,
            }) => {
                let (lo, hi) = self.b.descriptor_base(rsrc);
                inputs.push((self.readfirstlane(lo), "s"));
                inputs.push((self.readfirstlane(hi), "s"));
                inputs.push((self.readfirstlane(soffset), "s"));
                inputs.push((self.b.to_i32(voffset), "v"));
                vec![
                    inputs.len() - 3,
                    inputs.len() - 2,
                    inputs.len() - 1,
                    inputs.len(),
                ]
            }
        }
    }

    /// The scope check: for every hardware-id field the scope filters, skip the marker when
    /// this wave's slot is not in the mask. Returns whether any check was written.
    fn scope_check(&self, site: &mut SiteAsm) -> bool {
        let fields = self.target.scope_fields();
        let checks = [
            (fields.wave, self.scope.wave),
            (fields.simd, self.scope.simd),
            (fields.cu, self.scope.cu),
            (fields.wg, self.scope.wg),
        ];
        let mut any_check = false;
        for (field, mask) in checks {
            if field.covered_by(mask) {
                continue;
            }
            any_check = true;
            site.uses_scratch = true;
            let _ = write!(
                site.asm,
                "s_getreg_b32 @S, hwreg({}, {}, {})\n\ts_bitcmp1_b32 {:#x}, @S\n\ts_cbranch_scc0 .Lsqtt_skip_${{:uid}}\n\t",
                field.reg, field.offset, field.size, mask
            );
        }
        any_check
    }

    /// The header record: the marker word, with the shader clock in its top bits when packed.
    fn header(&self, site: &mut SiteAsm, word: Word, pack: Option<ClockPacking>, ops: &Operands) {
        let asm = &mut site.asm;
        match (word, pack) {
            (Word::Const(w), Some(c)) => {
                site.uses_scratch = true;
                match ops.clock {
                    Some(op) => {
                        let _ = write!(asm, "s_lshl_b32 @S, @I{op}, {}\n\t", 32 - c.bits);
                    }
                    None => {
                        let _ = write!(
                            asm,
                            "s_getreg_b32 @S, hwreg(HW_REG_SHADER_CYCLES_LO, {}, {})\n\ts_lshl_b32 @S, @S, {}\n\t",
                            c.shift,
                            c.bits,
                            32 - c.bits
                        );
                    }
                }
                let _ = write!(asm, "s_or_b32 @S, @S, {w:#x}\n\t");
                m0_record(asm, "@S");
            }
            (Word::Const(w), None) => {
                if w <= 0xff && self.target.has_ttracedata_imm() && self.clock.is_none() {
                    let _ = write!(asm, "s_ttracedata_imm {w:#x}\n\t");
                } else {
                    m0_record(asm, &format!("{w:#x}"));
                }
            }
            (Word::Dynamic(_), _) => {
                let op = ops.header.expect("dynamic header has an operand");
                m0_record(asm, &format!("@I{op}"));
            }
        }
    }

    /// The payload records after the header.
    fn payload_records(&self, site: &mut SiteAsm, payload: Payload, operands: &[usize]) {
        let asm = &mut site.asm;
        match payload {
            Payload::None => {}
            Payload::Value(_) => m0_record(asm, &format!("@I{}", operands[0])),
            Payload::Addresses(source) => {
                site.uses_scratch = true;
                m0_record(asm, "exec_lo");
                if self.target.wave_size == 64 {
                    m0_record(asm, "exec_hi");
                }
                let per_lane: &[usize] = match source {
                    AddressSource::RawBuffer { .. } => {
                        for op in &operands[..3] {
                            m0_record(asm, &format!("@I{op}"));
                        }
                        &operands[3..]
                    }
                    _ => operands,
                };
                for lane in 0..self.target.wave_size {
                    for op in per_lane {
                        let _ = write!(asm, "v_readlane_b32 @S, @I{op}, {lane}\n\t");
                        m0_record(asm, "@S");
                    }
                }
            }
        }
    }

    /// Writes the site's asm statement with its operands.
    fn inline_asm(&self, site: SiteAsm, inputs: &[(LLVMValueRef, &'static str)]) {
        // Outputs first (the scratch SGPR, then M0 so the compiler knows it is overwritten),
        // then the inputs.
        let uses_m0 = site.asm.contains("m0");
        let mut constraints: Vec<String> = Vec::new();
        let mut out_tys = Vec::new();
        if site.uses_scratch {
            constraints.push("=&s".into());
            out_tys.push(self.b.i32);
        }
        if uses_m0 {
            constraints.push("={m0}".into());
            out_tys.push(self.b.i32);
        }
        let asm = resolve_operands(&site.asm, out_tys.len(), inputs.len());
        constraints.extend(inputs.iter().map(|(_, c)| c.to_string()));
        constraints.push("~{scc}".into());
        let args: Vec<LLVMValueRef> = inputs.iter().map(|(v, _)| *v).collect();
        let ret = match out_tys.len() {
            0 => self.b.void,
            1 => self.b.i32,
            _ => self.b.struct_of(&out_tys),
        };
        self.b
            .inline_asm(ret, asm.trim_end(), &constraints.join(","), &args);
    }
}

/// The asm text of one site as it is built, and whether it needs the scratch SGPR.
#[derive(Default)]
struct SiteAsm {
    asm: String,
    uses_scratch: bool,
}

/// The IR values one site's asm reads (`inputs`, with their constraints) and the operand
/// numbers (from 1) of the dynamic header word, the clock value and the payload values.
struct Operands {
    inputs: Vec<(LLVMValueRef, &'static str)>,
    header: Option<usize>,
    clock: Option<usize>,
    payload: Vec<usize>,
}

/// Replaces the placeholders `@S` (scratch, operand 0) and `@I1..@In` (inputs, numbered after
/// the `outputs` outputs) with asm operand references.
fn resolve_operands(asm: &str, outputs: usize, inputs: usize) -> String {
    let mut out = asm.to_string();
    for k in (1..=inputs).rev() {
        out = out.replace(&format!("@I{k}"), &format!("${}", outputs + k - 1));
    }
    out.replace("@S", "$0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_words() {
        assert_eq!(marker_word(5, ENTER), 0x16);
        assert_eq!(marker_word(5, ENTER | EXIT_PREV), 0x17);
        assert_eq!(marker_word(5, 0), 0x14);
        assert_eq!(marker_word(0, EXIT_PREV), 1);
    }

    #[test]
    fn payload_counts() {
        let v = std::ptr::null_mut();
        assert_eq!(address_payload_count(64, &AddressSource::Flat(v)), 130);
        assert_eq!(address_payload_count(32, &AddressSource::Flat(v)), 65);
        assert_eq!(address_payload_count(64, &AddressSource::Lds(v)), 66);
        assert_eq!(address_payload_count(32, &AddressSource::Lds(v)), 33);
        let buffer = AddressSource::RawBuffer {
            rsrc: v,
            voffset: v,
            soffset: v,
        };
        assert_eq!(address_payload_count(64, &buffer), 69);
        assert_eq!(address_payload_count(32, &buffer), 36);
    }

    #[test]
    fn operand_placeholders() {
        assert_eq!(
            resolve_operands("s_lshl_b32 @S, @I1, 20", 2, 1),
            "s_lshl_b32 $0, $2, 20"
        );
        assert_eq!(
            resolve_operands("s_mov_b32 m0, @I1", 1, 1),
            "s_mov_b32 m0, $1"
        );
        assert_eq!(
            resolve_operands("v_readlane_b32 @S, @I2, 3", 2, 2),
            "v_readlane_b32 $0, $3, 3"
        );
    }
}
