//! What an emulated dispatch counts: the quantities behind the catalog's counters.
//!
//! The emulator keeps one `[u64; Quantity::COUNT]` per counting unit, indexed by
//! `quantity as usize`, and decides which instruction adds to which quantity (its rules are
//! in the emulator's documentation). A quantity means what the counter of the same name means
//! on hardware; the `Bytes*` quantities have no hardware counter and are offered under
//! kreplay's own names.

macro_rules! quantities {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// A quantity the emulator counts.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(usize)]
        pub enum Quantity {
            $($(#[$doc])* $name,)*
        }

        impl Quantity {
            /// Every quantity, in index order.
            pub const ALL: &'static [Quantity] = &[$(Quantity::$name,)*];
            /// How many quantities there are (the length of a counting array).
            pub const COUNT: usize = Quantity::ALL.len();

            /// The quantity's name, as in the emulator's documentation.
            pub fn name(self) -> &'static str {
                match self {
                    $(Quantity::$name => stringify!($name),)*
                }
            }
        }
    };
}

quantities! {
    /// Waves launched.
    Waves,
    /// Waves launched with all 64 lanes active.
    Waves64,
    /// Work-groups launched.
    Workgroups,
    /// Instructions issued, every kind.
    Insts,
    /// VALU instructions issued (MFMA included).
    InstsValu,
    /// VALU add/subtract on f16.
    ValuAddF16,
    /// VALU multiply on f16.
    ValuMulF16,
    /// VALU fused or unfused multiply-add on f16.
    ValuFmaF16,
    /// VALU transcendental on f16.
    ValuTransF16,
    /// VALU add/subtract on f32.
    ValuAddF32,
    /// VALU multiply on f32.
    ValuMulF32,
    /// VALU fused or unfused multiply-add on f32.
    ValuFmaF32,
    /// VALU transcendental on f32.
    ValuTransF32,
    /// VALU add/subtract on f64.
    ValuAddF64,
    /// VALU multiply on f64.
    ValuMulF64,
    /// VALU fused multiply-add on f64.
    ValuFmaF64,
    /// VALU transcendental on f64.
    ValuTransF64,
    /// VALU 32-bit integer operations.
    ValuInt32,
    /// VALU 64-bit integer operations.
    ValuInt64,
    /// VALU conversions.
    ValuCvt,
    /// MFMA instructions on i8 inputs.
    MfmaI8,
    /// MFMA instructions on f16 inputs.
    MfmaF16,
    /// MFMA instructions on bf16 inputs.
    MfmaBf16,
    /// MFMA instructions on f32 inputs.
    MfmaF32,
    /// MFMA instructions on f64 inputs.
    MfmaF64,
    /// MFMA math operations on i8 inputs, in units of 512.
    MfmaMopsI8,
    /// MFMA math operations on f16 inputs, in units of 512.
    MfmaMopsF16,
    /// MFMA math operations on bf16 inputs, in units of 512.
    MfmaMopsBf16,
    /// MFMA math operations on f32 inputs, in units of 512.
    MfmaMopsF32,
    /// MFMA math operations on f64 inputs, in units of 512.
    MfmaMopsF64,
    /// MFMA instructions, every type.
    InstsMfma,
    /// Vector memory instructions (buffer, global, flat, scratch).
    InstsVmem,
    /// Vector memory reads.
    InstsVmemRd,
    /// Vector memory writes.
    InstsVmemWr,
    /// Scalar ALU instructions.
    InstsSalu,
    /// Scalar memory instructions.
    InstsSmem,
    /// FLAT-encoded instructions (flat, global, scratch).
    InstsFlat,
    /// FLAT instructions whose every active address was in LDS.
    InstsFlatLdsOnly,
    /// LDS instructions (FLAT instructions to LDS included).
    InstsLds,
    /// GDS instructions.
    InstsGds,
    /// Branch instructions.
    InstsBranch,
    /// `s_sendmsg` instructions.
    InstsSendmsg,
    /// Flat/global read instructions reaching the address unit.
    FlatReadWaves,
    /// Flat/global write instructions reaching the address unit.
    FlatWriteWaves,
    /// Buffer read instructions reaching the address unit.
    BufferReadWaves,
    /// Buffer write instructions reaching the address unit.
    BufferWriteWaves,
    /// Cycles of resident waves, from the emulator's cost model.
    WaveCycles,
    /// Cycles the agent was busy with the dispatch, from the cost model.
    BusyCycles,
    /// Cycles between counter start and read, from the cost model.
    ElapsedCycles,
    /// Bytes vector memory instructions of active lanes read.
    BytesRead,
    /// Bytes vector memory instructions of active lanes wrote.
    BytesWritten,
    /// Bytes LDS instructions of active lanes read or wrote.
    BytesLds,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_follow_the_declaration() {
        for (i, q) in Quantity::ALL.iter().enumerate() {
            assert_eq!(*q as usize, i, "{}", q.name());
        }
        assert_eq!(Quantity::COUNT, Quantity::ALL.len());
    }
}
