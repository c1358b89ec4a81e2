//! Plans of the floating-point compares (`v_cmp_*_f16/f32/f64` and their `v_cmpx` forms):
//! every lane's operands with their sign modifiers and the MODE's input denormal control,
//! classed as less, equal, greater or unordered, the compare being the set of classes that make
//! a lane true; and the class tests (`v_cmp_class_*`) of the first operand against the mask in
//! the second. The same results as the general path's lane functions, NaNs included.

use crate::decode::{Inst, Op, Op::*, Ty};
use crate::wave::{LANES, Wave};

use super::super::float::{self, Env};
use super::{
    Wide, WideLanes, compare_dst, lane_mask_of_bytes, wide_lanes, wide_source, write_compare,
    writes_exec,
};

/// The lane classes a compare can find, as bits of a [`Test::Relation`].
const LESS: u8 = 1;
const EQUAL: u8 = 2;
const GREATER: u8 = 4;
const UNORDERED: u8 = 8;

/// The width of a compare's operands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Width {
    Half,
    Single,
    Double,
}

impl Width {
    /// The sign bit, the exponent bits and the mantissa bits.
    fn fields(self) -> (u64, u64, u64) {
        match self {
            Width::Half => (0x8000, 0x7C00, 0x03FF),
            Width::Single => (1 << 31, 0x7F80_0000, 0x007F_FFFF),
            Width::Double => (1 << 63, 0x7FF0 << 48, (1 << 52) - 1),
        }
    }
}

/// What a [`FloatComparePlan`] asks of a lane's operands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Test {
    /// Whether they fall in one of these classes (bits [`LESS`], [`EQUAL`], [`GREATER`],
    /// [`UNORDERED`]).
    Relation(u8),
    /// Whether the first is of a kind (NaN, infinity, normal, ... of either sign) the mask in
    /// the second names.
    Class,
}

/// A floating-point compare writing a lane mask (and EXEC for `v_cmpx`).
pub(crate) struct FloatComparePlan {
    test: Test,
    /// The width of the first operand (and of the second, but for a class test's mask).
    width: Width,
    src: [Wide; 2],
    /// Per source, the sign bit cleared (abs) then flipped (neg).
    clear: [u64; 2],
    flip: [u64; 2],
    dst: u16,
    exec: bool,
}

/// What the float compare `op` tests; `None` for any other operation.
fn test(op: Op) -> Option<Test> {
    let class = matches!(
        op,
        v_cmp_class_f16
            | v_cmp_class_f32
            | v_cmp_class_f64
            | v_cmpx_class_f16
            | v_cmpx_class_f32
            | v_cmpx_class_f64
    );
    if class {
        return Some(Test::Class);
    }
    outcomes(op).map(Test::Relation)
}

/// Whether `op` is a float compare (or class test) this module plans.
pub(super) fn is_float_compare(op: Op) -> bool {
    test(op).is_some()
}

/// The classes that make the float compare `op` true; `None` for any other operation.
fn outcomes(op: Op) -> Option<u8> {
    let name = op.name();
    let rest = name
        .strip_prefix("v_cmpx_")
        .or_else(|| name.strip_prefix("v_cmp_"))?;
    let (relation, ty) = rest.split_once('_')?;
    if !matches!(ty, "f16" | "f32" | "f64") {
        return None;
    }
    Some(match relation {
        "f" => 0,
        "lt" => LESS,
        "eq" => EQUAL,
        "le" => LESS | EQUAL,
        "gt" => GREATER,
        "lg" => LESS | GREATER,
        "ge" => GREATER | EQUAL,
        "o" => LESS | EQUAL | GREATER,
        "u" => UNORDERED,
        "nge" => LESS | UNORDERED,
        "nlg" => EQUAL | UNORDERED,
        "ngt" => LESS | EQUAL | UNORDERED,
        "nle" => GREATER | UNORDERED,
        "neq" => LESS | GREATER | UNORDERED,
        "nlt" => EQUAL | GREATER | UNORDERED,
        "tru" => LESS | EQUAL | GREATER | UNORDERED,
        _ => return None,
    })
}

pub(super) fn float_compare_plan(inst: &Inst) -> Option<FloatComparePlan> {
    let test = test(inst.op)?;
    let width = match inst.op.types()[1] {
        Ty::F16 => Width::Half,
        Ty::F32 => Width::Single,
        Ty::F64 => Width::Double,
        _ => return None,
    };
    let (sign, ..) = width.fields();
    // A class test's mask is a 32-bit integer operand: its modifiers act on bit 31.
    let signs = [sign, if test == Test::Class { 1 << 31 } else { sign }];
    let modifier = |bits: u8, k: usize| if bits >> k & 1 != 0 { signs[k] } else { 0 };
    Some(FloatComparePlan {
        test,
        width,
        src: [wide_source(inst, 0)?, wide_source(inst, 1)?],
        clear: [modifier(inst.abs, 0), modifier(inst.abs, 1)],
        flip: [modifier(inst.neg, 0), modifier(inst.neg, 1)],
        dst: compare_dst(inst),
        exec: writes_exec(inst.op),
    })
}

pub(super) fn run_float_compare(w: &mut Wave, p: &FloatComparePlan) {
    let env = Env::from_mode(w.mode);
    let keep = match p.width {
        Width::Single => env.keep_in32,
        // f16 denormals follow the f64 control.
        Width::Half | Width::Double => env.keep_in64,
    };
    let half = |x: u64| half::f16::from_bits(x as u16);
    let lanes = match (p.test, p.width) {
        (Test::Class, Width::Half) => each(w, p, keep, |a, m| float::class16(half(a), m as u32)),
        (Test::Class, Width::Single) => each(w, p, keep, |a, m| {
            float::class32(f32::from_bits(a as u32), m as u32)
        }),
        (Test::Class, Width::Double) => each(w, p, keep, |a, m| {
            float::class64(f64::from_bits(a), m as u32)
        }),
        (Test::Relation(o), Width::Half) => each(w, p, keep, |a, b| {
            holds(o, half(a).to_f64(), half(b).to_f64())
        }),
        (Test::Relation(o), Width::Single) => each(w, p, keep, |a, b| {
            let f = |x: u64| f64::from(f32::from_bits(x as u32));
            holds(o, f(a), f(b))
        }),
        (Test::Relation(o), Width::Double) => each(w, p, keep, |a, b| {
            holds(o, f64::from_bits(a), f64::from_bits(b))
        }),
    };
    write_compare(w, p.dst, p.exec, lanes);
}

/// Whether `x` and `y` fall in one of the classes `outcomes`.
#[inline(always)]
fn holds(outcomes: u8, x: f64, y: f64) -> bool {
    let class = if x < y {
        LESS
    } else if x == y {
        EQUAL
    } else if x > y {
        GREATER
    } else {
        UNORDERED
    };
    outcomes & class != 0
}

/// Bit `l`: `decide` of lane `l`'s operand bits, with their modifiers and the float ones'
/// denormals flushed unless `keep` (every lane).
#[inline(always)]
fn each(w: &Wave, p: &FloatComparePlan, keep: bool, decide: impl Fn(u64, u64) -> bool) -> u64 {
    let (sign, exponent, mantissa) = p.width.fields();
    let operand = |src: WideLanes<'_>, k: usize, l: usize| {
        // Bits above the width are left for `decide` to drop (an f16 reads the low half).
        let x = (src.lane(l) & !p.clear[k]) ^ p.flip[k];
        let float = k == 0 || p.test != Test::Class;
        let denormal = x & exponent == 0 && x & mantissa != 0;
        if float && denormal && !keep {
            x & sign
        } else {
            x
        }
    };
    let (a, b) = (wide_lanes(w, &p.src[0]), wide_lanes(w, &p.src[1]));
    let mut bits = [0u8; LANES];
    for (l, bit) in bits.iter_mut().enumerate() {
        *bit = decide(operand(a, 0, l), operand(b, 1, l)) as u8;
    }
    lane_mask_of_bytes(&bits)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{MASKS, Parts, against_reference, waves};
    use super::super::{Plan, inst_plan};
    use super::{Test, is_float_compare, test};
    use crate::decode::{LITERAL, Op, Program, Ty, VGPR};
    use crate::memory::RegionMemory;
    use crate::target::Target;
    use crate::wave::{LANES, Wave};

    /// Eight operands of each width: both zeros, a denormal of each sign, 1.0, -inf, a quiet
    /// NaN and the largest finite value.
    const SPECIAL16: [u64; 8] = [0, 0x8000, 0x0001, 0x83FF, 0x3C00, 0xFC00, 0x7E01, 0x7BFF];
    const SPECIAL32: [u64; 8] = [
        0,
        1 << 31,
        1,
        0x807F_FFFF,
        0x3F80_0000,
        0xFF80_0000,
        0x7FC0_1234,
        0x7F7F_FFFF,
    ];
    const SPECIAL64: [u64; 8] = [
        0,
        1 << 63,
        1,
        0x800F_FFFF_FFFF_FFFF,
        0x3FF0 << 48,
        0xFFF0 << 48,
        0x7FF8_0000_0000_1234,
        0x7FEF_FFFF_FFFF_FFFF,
    ];

    /// Lane `l` compares special operand `l % 8` (in v[0:1]) with special operand `l / 8` (in
    /// v[2:3]), so that every pair of them meets; v4 and v6 hold the same with the high halves of
    /// the dwords set (an f16 compare reads only the low half). The SGPR pair s[10:11] holds a
    /// denormal.
    fn every_pair(w: &mut Wave, special: &[u64; 8]) {
        for l in 0..LANES {
            for (row, x) in [(0, special[l % 8]), (2, special[l / 8])] {
                (w.v[row][l], w.v[row + 1][l]) = (x as u32, (x >> 32) as u32);
                w.v[row + 4][l] = x as u32 | 0xABCD_0000;
            }
        }
        w.set_sgpr64(10, special[2]);
    }

    /// Class masks in v2 and v6 (with bits above the ten classes in some lanes): lanes `8j` to
    /// `8j + 7` ask for classes `j` and `j + 5` (modulo 10), so that each special operand
    /// meets every class.
    fn class_masks(w: &mut Wave) {
        for l in 0..LANES {
            let j = l / 8;
            let mask = 1 << j | 1 << ((j + 5) % 10) | (l as u32 % 3) << 10;
            (w.v[2][l], w.v[6][l]) = (mask, mask);
        }
    }

    /// Every f16, f32 and f64 compare and class test and its `v_cmpx` form, VOPC and VOP3
    /// (with abs and neg choices), over VGPR, SGPR, inline-constant and literal operands, every pair of zeros,
    /// denormals, infinities and NaNs, each denormal mode and every EXEC class: the plan against
    /// the per-lane reference.
    #[test]
    fn float_compares_match_the_per_lane_reference() {
        let t = Target::Gfx942;
        let prog = Program::decode(t, 0x1000, &[]);
        let mut parts = Parts::new(RegionMemory::new());
        // v_cmp_eq_f32_e32 vcc, -1.0, v4 ; v_cmp_neq_f32_e64 s[0:1], -1.0, v4
        let vopc = crate::decode::decode(t, &[0x7C84_08F3]);
        let vop3 = crate::decode::decode(t, &[0xD04D_0000, 0x0002_08F3]);
        assert_eq!((vopc.op, vop3.op), (Op::v_cmp_eq_f32, Op::v_cmp_neq_f32));
        let ops: Vec<Op> = Op::ALL
            .iter()
            .copied()
            .filter(|&op| is_float_compare(op))
            .collect();
        // 16 relations and the class test x 3 widths, cmp and cmpx.
        assert_eq!(ops.len(), 102, "float compares");
        let modes = [0xF0, 0x00, 0x30, 0xC0];
        let mut r = 0xF10A_7C0B_0000_0001u64;
        let mut ran = 0;
        for &op in &ops {
            let ty = op.types()[1];
            let special = match ty {
                Ty::F16 => &SPECIAL16,
                Ty::F32 => &SPECIAL32,
                _ => &SPECIAL64,
            };
            let (row, second) = if ty == Ty::F16 {
                (VGPR + 4, VGPR + 6)
            } else {
                (VGPR, VGPR + 2)
            };
            // First operands: the special rows, an SGPR (pair), 0, -1.0, 0.5 and a literal.
            let firsts = [row, 10, 128, 243, 240, LITERAL];
            for (round, &exec) in MASKS.iter().enumerate() {
                for &mode in &modes {
                    for (f, &x) in firsts.iter().enumerate() {
                        let vop3_form = (round + f) % 2 == 1;
                        let mut inst = if vop3_form { vop3 } else { vopc };
                        inst.op = op;
                        inst.src = [x, second, 0];
                        inst.lit = special[(round + f) % 8] as u32;
                        if vop3_form {
                            (inst.dst, inst.abs, inst.neg) = (30, f as u8 & 3, round as u8 & 3);
                        }
                        let plan = inst_plan(&inst).expect("a float compare plan");
                        assert!(matches!(plan, Plan::FloatCompare(_)), "{op:?}");
                        let [mut a, mut b] = waves(&mut r, exec, mode);
                        for w in [&mut a, &mut b] {
                            every_pair(w, special);
                            if test(op) == Some(Test::Class) {
                                class_masks(w);
                            }
                        }
                        let what = format!("{} mode {mode:x} exec {exec:x}", inst.disassemble(t));
                        let waves = [&mut a, &mut b];
                        ran +=
                            against_reference(&mut parts, &prog, Some(&plan), &inst, waves, &what)
                                as usize;
                    }
                }
            }
        }
        assert_eq!(
            ran,
            ops.len() * MASKS.len() * modes.len() * 6,
            "every compare ran on its plan"
        );
    }
}
