//! Decoding machine code into a compact, target-independent instruction form.
//!
//! The decoder is table-driven: each encoding family (SOP1, VOP2, DS, ...) has a field layout
//! written here and an opcode table per target family in a sibling module (`gfx9` for gfx90a
//! and gfx942). A GFX11 decoder would add its own layouts and tables next to them and produce
//! the same [`Inst`] form.

mod gfx9;
pub mod ops;
mod print;

pub use ops::{Op, Ty};

use crate::target::Target;

/// The encoding family an instruction was decoded from.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enc {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    /// VOP3 encoding of an operation (native VOP3 or a promoted VOP1/VOP2/VOPC).
    Vop3,
    Vop3p,
    Ds,
    Flat,
    /// MUBUF, and MTBUF (the `tbuffer_*` operations, their formats in [`flags::FMT_SHIFT`]).
    Mubuf,
    /// MIMG: image loads, stores, samples and atomics (gfx90a).
    Mimg,
    /// An encoding the decoder does not know: executing it is an illegal instruction.
    Unknown,
}

/// How a VOP1/VOP2/VOPC instruction was extended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ext {
    /// No extension.
    None,
    /// DPP (src0 = 250): lane permutation of src0 with row/bank masks.
    Dpp,
    /// SDWA (src0 = 249): sub-dword selection of sources and destination.
    Sdwa,
}

/// Operand code: 0..=255 as the 9-bit GFX9 source encoding (SGPRs, special registers,
/// inline constants, 255 = literal), 256..=511 VGPRs, 512..=767 AGPRs.
pub type Operand = u16;

/// First VGPR operand code.
pub const VGPR: Operand = 256;
/// First AGPR operand code.
pub const AGPR: Operand = 512;
/// The literal-constant operand code.
pub const LITERAL: Operand = 255;
/// VCC_LO operand code.
pub const VCC: Operand = 106;
/// M0 operand code.
pub const M0: Operand = 124;
/// EXEC_LO operand code.
pub const EXEC: Operand = 126;
/// `off` / null operand in memory instructions (SGPR code 0x7F: EXEC_HI is never a base).
pub const OFF: Operand = 0x7F;

/// FLAT segment values (bits 15:14 of a FLAT instruction).
#[allow(missing_docs)]
pub mod seg {
    pub const FLAT: u8 = 0;
    pub const SCRATCH: u8 = 1;
    pub const GLOBAL: u8 = 2;
}

/// A decoded instruction. Field meaning depends on [`Enc`]:
///
/// | enc | dst | sdst | src | imm |
/// |---|---|---|---|---|
/// | SOP*/VOP* | destination | VOP3b carry/VOPC-e64 dest | sources | SOPK/SOPP simm16 |
/// | SMEM | sdata | soffset (or OFF) | [sbase, -, -] | offset |
/// | DS | vdst | - | [addr, data0, data1] | offset0 \| offset1 << 8 |
/// | FLAT | vdst | - | [addr, data, saddr] | offset |
/// | MUBUF, MTBUF | - | soffset | [vaddr, vdata, srsrc] | offset |
/// | MIMG | - | ssamp | [vaddr, vdata, srsrc] | dmask |
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inst {
    /// The operation.
    pub op: Op,
    /// Encoding family.
    pub enc: Enc,
    /// DPP/SDWA extension.
    pub ext: Ext,
    /// Length in bytes (4, 8 or 12).
    pub len: u8,
    /// Destination operand.
    pub dst: Operand,
    /// Second destination or scalar offset (see the table).
    pub sdst: Operand,
    /// Sources.
    pub src: [Operand; 3],
    /// The literal constant, when a source is [`LITERAL`] (or the K of `*mk`/`*ak`).
    pub lit: u32,
    /// Immediate field (see the table).
    pub imm: i32,
    /// VOP3 neg bits per source (VOP3P: neg_lo).
    pub neg: u8,
    /// VOP3 abs bits per source (VOP3P: neg_hi).
    pub abs: u8,
    /// VOP3 op_sel / VOP3P op_sel bits (bit 3 = destination).
    pub op_sel: u8,
    /// VOP3P op_sel_hi bits.
    pub op_sel_hi: u8,
    /// Clamp bit.
    pub clamp: bool,
    /// Output modifier (0 none, 1 *2, 2 *4, 3 /2).
    pub omod: u8,
    /// Extension word: the DPP or SDWA dword, memory flags (see [`flags`]), MFMA cbsz/abid/blgp.
    pub ctrl: u32,
    /// The instruction's counter class, set when the emulator classifies a decoded program
    /// (0 before).
    pub counter_class: u8,
}

/// Memory-instruction flag bits kept in [`Inst::ctrl`].
#[allow(missing_docs)]
pub mod flags {
    pub const GLC: u32 = 1;
    pub const SLC: u32 = 2;
    pub const SC1: u32 = 4;
    pub const LDS: u32 = 8;
    pub const OFFEN: u32 = 16;
    pub const IDXEN: u32 = 32;
    pub const GDS: u32 = 64;
    /// Scratch: the VGPR address is used (gfx942 SVE bit; gfx90a: saddr is off).
    pub const SVE: u32 = 128;
    /// SMEM: offset is an immediate.
    pub const IMM: u32 = 256;
    /// Data/destination registers are AGPRs (gfx90a acc bit).
    pub const ACC: u32 = 512;
    /// MIMG: coordinates are in texels (UNORM bit).
    pub const UNORM: u32 = 1 << 10;
    /// MIMG: the image is an array (DA bit).
    pub const DA: u32 = 1 << 11;
    /// MIMG: data components are 16 bits, two per register.
    pub const D16: u32 = 1 << 12;
    /// MIMG: address components are 16 bits.
    pub const A16: u32 = 1 << 13;
    /// MIMG: LOD warning enable (an extra status register).
    pub const LWE: u32 = 1 << 14;
    pub const SEG_SHIFT: u32 = 16;
    /// MTBUF: the data format (4 bits) at this shift, the number format (3 bits) above it.
    pub const FMT_SHIFT: u32 = 20;
}

impl Inst {
    fn new(op: Op, enc: Enc, len: u8) -> Inst {
        Inst {
            op,
            enc,
            ext: Ext::None,
            len,
            dst: 0,
            sdst: 0,
            src: [0; 3],
            lit: 0,
            imm: 0,
            neg: 0,
            abs: 0,
            op_sel: 0,
            op_sel_hi: 0,
            clamp: false,
            omod: 0,
            ctrl: 0,
            counter_class: 0,
        }
    }

    /// The FLAT segment (see [`seg`]).
    pub fn segment(&self) -> u8 {
        ((self.ctrl >> flags::SEG_SHIFT) & 3) as u8
    }

    /// Whether a source operand reads the literal dword.
    pub fn uses_literal(&self) -> bool {
        self.src.contains(&LITERAL)
    }

    /// For an [`Enc::Unknown`] instruction, the encoding family and opcode it carries.
    pub fn unknown_encoding(&self, target: Target) -> Option<UnknownEncoding> {
        (self.enc == Enc::Unknown).then(|| identify(target, self.lit))
    }

    /// LLVM-style assembly text of the instruction (the syntax `llvm-objdump` prints).
    pub fn disassemble(&self, target: Target) -> String {
        print::disassemble(self, target)
    }
}

/// Why a word sequence could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undecodable {
    /// The first dword.
    pub word: u32,
}

/// Decode one instruction from `words` (the first is the instruction's first dword).
/// Returns an [`Enc::Unknown`]/[`Op::invalid`] instruction of length 4 when the encoding or
/// opcode is not in the tables, so a linear sweep can continue.
pub fn decode(target: Target, words: &[u32]) -> Inst {
    let w0 = words.first().copied().unwrap_or(0);
    let w1 = words.get(1).copied().unwrap_or(0);
    let w2 = words.get(2).copied().unwrap_or(0);
    match target.family() {
        crate::target::Family::Gfx9 => gfx9::decode(target, w0, w1, w2),
    }
}

/// An encoding the decoder does not know, named by its encoding family and opcode field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UnknownEncoding {
    /// The encoding family the word's fixed bits select (`VOPC`, `DS`, `MUBUF`, ...).
    pub family: &'static str,
    /// The opcode field of that family.
    pub opcode: u32,
}

impl std::fmt::Display for UnknownEncoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} opcode {} (0x{:x})",
            self.family, self.opcode, self.opcode
        )
    }
}

/// The encoding family and opcode of an instruction's first dword, read from its fields.
pub fn identify(target: Target, word: u32) -> UnknownEncoding {
    let (family, opcode) = match target.family() {
        crate::target::Family::Gfx9 => gfx9::identify(word),
    };
    UnknownEncoding { family, opcode }
}

/// Every opcode-table row of `target`: (encoding, opcode, operation).
pub fn table_rows(target: Target) -> Vec<(Enc, u16, Op)> {
    match target.family() {
        crate::target::Family::Gfx9 => gfx9::rows(target),
    }
}

/// A decoded code range: instructions in address order and an address index.
#[derive(Debug)]
pub struct Program {
    /// Device address of the first byte.
    pub base: u64,
    /// Decoded instructions.
    pub insts: Vec<Inst>,
    /// Byte offset (from `base`) of each instruction.
    pub offsets: Vec<u32>,
    /// For each dword of the range, the index of the instruction starting there, or u32::MAX.
    index: Vec<u32>,
    /// Whether the code holds a grid-wide barrier (`ds_gws_barrier`): its kernels run their
    /// work-groups co-resident.
    pub grid_sync: bool,
}

impl Program {
    /// Decode `bytes` (a code range at device address `base`) by a linear sweep.
    pub fn decode(target: Target, base: u64, bytes: &[u8]) -> Program {
        let words: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let mut insts = Vec::new();
        let mut offsets = Vec::new();
        let mut index = vec![u32::MAX; words.len()];
        let mut i = 0;
        while i < words.len() {
            let inst = decode(target, &words[i..]);
            let len = (inst.len as usize / 4).max(1);
            if i + len > words.len() {
                break;
            }
            index[i] = insts.len() as u32;
            insts.push(inst);
            offsets.push((i * 4) as u32);
            i += len;
        }
        let grid_sync = insts.iter().any(|i| i.op == Op::ds_gws_barrier);
        Program {
            base,
            insts,
            offsets,
            index,
            grid_sync,
        }
    }

    /// The index of the instruction starting at device address `addr`.
    pub fn index_of(&self, addr: u64) -> Option<usize> {
        let off = addr.checked_sub(self.base)?;
        if off % 4 != 0 {
            return None;
        }
        match self.index.get((off / 4) as usize) {
            Some(&i) if i != u32::MAX => Some(i as usize),
            _ => None,
        }
    }

    /// The device address of instruction `i`.
    pub fn address_of(&self, i: usize) -> u64 {
        self.base + self.offsets[i] as u64
    }
}
