//! Shader-data records: what `s_ttracedata` writes into a thread trace.

/// One shader-data record, as a thread-trace decoder reports it.
///
/// `time` is the issuing wave's cycle count in the emulator's cost model (one cycle per
/// instruction, counted from the wave's start); `cu`, `simd` and `wave_id` are the wave's
/// place (see `docs/emulator.md`, wave placement), the same values `s_getreg` of HW_ID gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ShaderDataRecord {
    /// Cycle count of the wave when the instruction issued.
    pub time: i64,
    /// The value written (M0 for `s_ttracedata`).
    pub value: u64,
    /// Compute unit.
    pub cu: u8,
    /// SIMD within the CU.
    pub simd: u8,
    /// Wave slot within the SIMD.
    pub wave_id: u8,
    /// Bit 0: immediate form (`s_ttracedata_imm`); bit 1: privileged.
    pub flags: u8,
}
