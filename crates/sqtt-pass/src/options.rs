//! Compile-time options read from the environment of the compiler process.
//!
//! Every variable is parsed and cross-checked before the module is touched, so a bad value is a
//! compile error naming the variable and never a half-instrumented module.

use thiserror::Error;

/// A rejected option value or combination.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum OptionsError {
    /// A variable holds a value outside its documented format.
    #[error("{var}={value:?} is invalid: {expected}")]
    Invalid {
        /// The environment variable.
        var: &'static str,
        /// The value found.
        value: String,
        /// What the variable accepts.
        expected: &'static str,
    },
    /// Two options that cannot be combined are both set.
    #[error("{first} and {second} cannot be combined: {reason}")]
    Conflict {
        /// The first variable, as set.
        first: String,
        /// The second variable, as set.
        second: String,
        /// Why, and what to do.
        reason: &'static str,
    },
}

/// How device functions are selected for entry/exit markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionThreshold {
    /// Functions with more than this many IR instructions.
    Count(u64),
    /// Functions whose weighted cost exceeds this.
    Cost(u64),
}

/// Grouping of memory operations into point markers (`SQTT_INSTRUMENT_MEMORY=N:M`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryGrouping {
    /// Operations per marker (N).
    pub ops_per_marker: u32,
    /// Largest instruction gap that keeps two operations in one sequence (M).
    pub max_gap: u32,
}

/// Which operations get per-lane address tracing (`SQTT_TRACE_ADDRESSES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AddressTracing {
    /// Flat and global loads/stores (address spaces 0 and 1).
    pub memory: bool,
    /// LDS loads/stores (address space 3).
    pub lds: bool,
}

impl AddressTracing {
    /// Whether any address tracing is requested.
    pub fn any(&self) -> bool {
        self.memory || self.lds
    }
}

/// The reordering boundary planted around every marker (`SQTT_MEM_BARRIER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemBarrier {
    /// No boundary.
    None,
    /// An empty inline asm with a memory clobber (no machine code).
    Asm,
    /// A workgroup-scope acq_rel fence restricted to LDS synchronisation.
    Fence,
}

/// Shader-clock packing into the marker header (`SQTT_SHADER_CLOCK_BITS/SHIFT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockPacking {
    /// Number of top header bits that carry the clock sample (nonzero).
    pub bits: u32,
    /// Source bit offset in the shader-clock low word.
    pub shift: u32,
}

/// Scope masks: which hardware slots emit markers. `u32::MAX` means all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopeMasks {
    /// Wave slots (bit N = wave N).
    pub wave: u32,
    /// SIMDs.
    pub simd: u32,
    /// CUs (GFX9) or WGPs (GFX10 and later).
    pub cu: u32,
    /// Workgroup slots.
    pub wg: u32,
}

/// All options of the plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Scope filtering.
    pub scope: ScopeMasks,
    /// Automatic function instrumentation.
    pub functions: Option<FunctionThreshold>,
    /// Automatic barrier instrumentation.
    pub barriers: bool,
    /// Memory-operation grouping.
    pub memory: Option<MemoryGrouping>,
    /// Address tracing.
    pub addresses: AddressTracing,
    /// Reordering boundary around markers.
    pub mem_barrier: MemBarrier,
    /// Clock packing, when enabled.
    pub clock: Option<ClockPacking>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scope: ScopeMasks {
                wave: u32::MAX,
                simd: 0xF,
                cu: 0x3,
                wg: u32::MAX,
            },
            functions: None,
            barriers: false,
            memory: None,
            addresses: AddressTracing::default(),
            mem_barrier: MemBarrier::Fence,
            clock: None,
        }
    }
}

fn invalid(var: &'static str, value: &str, expected: &'static str) -> OptionsError {
    OptionsError::Invalid {
        var,
        value: value.to_string(),
        expected,
    }
}

fn parse_mask(var: &'static str, value: &str) -> Result<u32, OptionsError> {
    const EXPECTED: &str =
        "expected a hexadecimal bit mask such as 0x3 (the 0x is optional), or -1 for all";
    let v = value.trim();
    if v == "-1" {
        return Ok(u32::MAX);
    }
    let digits = v
        .strip_prefix("0x")
        .or_else(|| v.strip_prefix("0X"))
        .unwrap_or(v);
    if digits.is_empty() {
        return Err(invalid(var, value, EXPECTED));
    }
    let mask = u32::from_str_radix(digits, 16).map_err(|_| invalid(var, value, EXPECTED))?;
    if mask == 0 {
        return Err(invalid(
            var,
            value,
            "a zero mask selects nothing, so no marker would ever be emitted; use -1 for all",
        ));
    }
    Ok(mask)
}

fn parse_u32(var: &'static str, value: &str, expected: &'static str) -> Result<u32, OptionsError> {
    value
        .trim()
        .parse::<u32>()
        .map_err(|_| invalid(var, value, expected))
}

fn parse_bool(var: &'static str, value: &str) -> Result<bool, OptionsError> {
    match value.trim() {
        "0" | "" => Ok(false),
        "1" => Ok(true),
        _ => Err(invalid(var, value, "expected 0 or 1")),
    }
}

impl Options {
    /// Reads the options from the process environment.
    pub fn from_env() -> Result<Options, OptionsError> {
        Options::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the options through `lookup` (variable name to value).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Options, OptionsError> {
        let mut o = Options::default();
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());

        if let Some(v) = get("SQTT_SCOPE_WAVE") {
            o.scope.wave = parse_mask("SQTT_SCOPE_WAVE", &v)?;
        }
        if let Some(v) = get("SQTT_SCOPE_SIMD") {
            o.scope.simd = parse_mask("SQTT_SCOPE_SIMD", &v)?;
        }
        if let Some(v) = get("SQTT_SCOPE_CU") {
            o.scope.cu = parse_mask("SQTT_SCOPE_CU", &v)?;
        }
        if let Some(v) = get("SQTT_SCOPE_WG") {
            o.scope.wg = parse_mask("SQTT_SCOPE_WG", &v)?;
        }
        if let Some(v) = get("SQTT_INSTRUMENT_FUNCTIONS") {
            o.functions = parse_functions(&v)?;
        }
        if let Some(v) = get("SQTT_INSTRUMENT_BARRIERS") {
            o.barriers = parse_bool("SQTT_INSTRUMENT_BARRIERS", &v)?;
        }
        let memory_var = get("SQTT_INSTRUMENT_MEMORY");
        if let Some(v) = &memory_var {
            o.memory = parse_memory(v)?;
        }
        let addresses_var = get("SQTT_TRACE_ADDRESSES");
        if let Some(v) = &addresses_var {
            o.addresses = parse_addresses(v)?;
        }
        if let Some(v) = get("SQTT_MEM_BARRIER") {
            o.mem_barrier = parse_mem_barrier(&v)?;
        }
        let bits_var = get("SQTT_SHADER_CLOCK_BITS");
        o.clock = parse_clock(
            bits_var.as_deref(),
            get("SQTT_SHADER_CLOCK_SHIFT").as_deref(),
        )?;
        check_conflicts(&o, memory_var, addresses_var, bits_var)?;
        Ok(o)
    }
}

/// `SQTT_INSTRUMENT_FUNCTIONS`: `N` (instruction count), `cost:N` (weighted cost), `0` off.
fn parse_functions(v: &str) -> Result<Option<FunctionThreshold>, OptionsError> {
    const EXPECTED: &str = "expected N (instruction count above N) or cost:N (weighted cost above N), N a non-negative integer, or 0 to disable";
    let t = v.trim();
    if let Some(n) = t.strip_prefix("cost:") {
        return Ok(Some(FunctionThreshold::Cost(n.parse().map_err(|_| {
            invalid("SQTT_INSTRUMENT_FUNCTIONS", v, EXPECTED)
        })?)));
    }
    match t.parse::<u64>() {
        Ok(0) => Ok(None),
        Ok(n) => Ok(Some(FunctionThreshold::Count(n))),
        Err(_) => Err(invalid("SQTT_INSTRUMENT_FUNCTIONS", v, EXPECTED)),
    }
}

/// `SQTT_INSTRUMENT_MEMORY`: `N:M` (N >= 1 operations per marker, M the largest gap), `0` off.
fn parse_memory(v: &str) -> Result<Option<MemoryGrouping>, OptionsError> {
    const EXPECTED: &str = "expected N:M (N >= 1 memory operations per marker, M = largest instruction gap inside a sequence), e.g. 2:5, or 0 to disable";
    let t = v.trim();
    if t == "0" {
        return Ok(None);
    }
    let bad = || invalid("SQTT_INSTRUMENT_MEMORY", v, EXPECTED);
    let (n, m) = t.split_once(':').ok_or_else(bad)?;
    let n: u32 = n.trim().parse().map_err(|_| bad())?;
    let m: u32 = m.trim().parse().map_err(|_| bad())?;
    if n == 0 {
        return Err(bad());
    }
    Ok(Some(MemoryGrouping {
        ops_per_marker: n,
        max_gap: m,
    }))
}

/// `SQTT_TRACE_ADDRESSES`: `memory`, `lds` or both, comma-separated.
fn parse_addresses(v: &str) -> Result<AddressTracing, OptionsError> {
    let mut a = AddressTracing::default();
    for part in v.split(',') {
        match part.trim() {
            "memory" => a.memory = true,
            "lds" => a.lds = true,
            _ => {
                return Err(invalid(
                    "SQTT_TRACE_ADDRESSES",
                    v,
                    "expected memory, lds, or memory,lds",
                ));
            }
        }
    }
    Ok(a)
}

/// `SQTT_MEM_BARRIER`: `none`, `asm` or `fence` (or 0, 1, 2).
fn parse_mem_barrier(v: &str) -> Result<MemBarrier, OptionsError> {
    match v.trim() {
        "none" | "0" => Ok(MemBarrier::None),
        "asm" | "1" => Ok(MemBarrier::Asm),
        "fence" | "2" => Ok(MemBarrier::Fence),
        _ => Err(invalid(
            "SQTT_MEM_BARRIER",
            v,
            "expected none, asm or fence (or 0, 1, 2)",
        )),
    }
}

/// `SQTT_SHADER_CLOCK_BITS` and `SQTT_SHADER_CLOCK_SHIFT` (default 4): clock packing, `None`
/// with 0 bits.
fn parse_clock(
    bits_var: Option<&str>,
    shift_var: Option<&str>,
) -> Result<Option<ClockPacking>, OptionsError> {
    let bits = match bits_var {
        Some(v) => parse_u32(
            "SQTT_SHADER_CLOCK_BITS",
            v,
            "expected an unsigned integer from 0 to 28",
        )?,
        None => 0,
    };
    if bits > 28 {
        return Err(invalid(
            "SQTT_SHADER_CLOCK_BITS",
            bits_var.unwrap_or_default(),
            "at most 28 bits can carry the clock: the two flag bits and at least two ID bits must remain",
        ));
    }
    let shift = match shift_var {
        Some(v) => parse_u32(
            "SQTT_SHADER_CLOCK_SHIFT",
            v,
            "expected an unsigned integer from 0 to 31",
        )?,
        None => 4,
    };
    if bits == 0 {
        return Ok(None);
    }
    if shift + bits > 32 {
        return Err(invalid(
            "SQTT_SHADER_CLOCK_SHIFT",
            shift_var.unwrap_or("4"),
            "SQTT_SHADER_CLOCK_SHIFT + SQTT_SHADER_CLOCK_BITS must not exceed 32 (the field is taken from the 32-bit low clock word)",
        ));
    }
    Ok(Some(ClockPacking { bits, shift }))
}

/// Options that cannot be combined.
fn check_conflicts(
    o: &Options,
    memory_var: Option<String>,
    addresses_var: Option<String>,
    bits_var: Option<String>,
) -> Result<(), OptionsError> {
    if let (Some(m), Some(a)) = (&memory_var, &addresses_var)
        && o.memory.is_some()
        && o.addresses.any()
    {
        return Err(OptionsError::Conflict {
            first: format!("SQTT_INSTRUMENT_MEMORY={m}"),
            second: format!("SQTT_TRACE_ADDRESSES={a}"),
            reason: "address tracing already emits a header marker for every memory operation; unset one of them",
        });
    }
    if let (Some(b), Some(a)) = (&bits_var, &addresses_var)
        && o.clock.is_some()
        && o.addresses.any()
    {
        return Err(OptionsError::Conflict {
            first: format!("SQTT_SHADER_CLOCK_BITS={b}"),
            second: format!("SQTT_TRACE_ADDRESSES={a}"),
            reason: "address-trace markers carry payload records, which require SQTT_SHADER_CLOCK_BITS=0",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> Result<Options, OptionsError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        Options::from_lookup(move |n| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
    }

    #[test]
    fn defaults_match_the_specification() {
        let o = parse(&[]).unwrap();
        assert_eq!(
            o.scope,
            ScopeMasks {
                wave: u32::MAX,
                simd: 0xF,
                cu: 0x3,
                wg: u32::MAX
            }
        );
        assert_eq!(o.mem_barrier, MemBarrier::Fence);
        assert_eq!(o.functions, None);
        assert!(!o.barriers && o.memory.is_none() && !o.addresses.any() && o.clock.is_none());
    }

    #[test]
    fn masks_are_hexadecimal() {
        let o = parse(&[
            ("SQTT_SCOPE_CU", "0x10"),
            ("SQTT_SCOPE_SIMD", "3"),
            ("SQTT_SCOPE_WG", "-1"),
        ])
        .unwrap();
        assert_eq!(
            (o.scope.cu, o.scope.simd, o.scope.wg),
            (0x10, 0x3, u32::MAX)
        );
        let e = parse(&[("SQTT_SCOPE_CU", "0xZZ")]).unwrap_err();
        assert!(e.to_string().contains("SQTT_SCOPE_CU"), "{e}");
        assert!(
            parse(&[("SQTT_SCOPE_WAVE", "0")])
                .unwrap_err()
                .to_string()
                .contains("SQTT_SCOPE_WAVE")
        );
    }

    #[test]
    fn function_thresholds() {
        assert_eq!(
            parse(&[("SQTT_INSTRUMENT_FUNCTIONS", "10")])
                .unwrap()
                .functions,
            Some(FunctionThreshold::Count(10))
        );
        assert_eq!(
            parse(&[("SQTT_INSTRUMENT_FUNCTIONS", "cost:50")])
                .unwrap()
                .functions,
            Some(FunctionThreshold::Cost(50))
        );
        assert_eq!(
            parse(&[("SQTT_INSTRUMENT_FUNCTIONS", "0")])
                .unwrap()
                .functions,
            None
        );
        assert!(
            parse(&[("SQTT_INSTRUMENT_FUNCTIONS", "cost:")])
                .unwrap_err()
                .to_string()
                .contains("SQTT_INSTRUMENT_FUNCTIONS")
        );
        assert!(parse(&[("SQTT_INSTRUMENT_FUNCTIONS", "many")]).is_err());
    }

    #[test]
    fn memory_grouping_format() {
        let o = parse(&[("SQTT_INSTRUMENT_MEMORY", "2:5")]).unwrap();
        assert_eq!(
            o.memory,
            Some(MemoryGrouping {
                ops_per_marker: 2,
                max_gap: 5
            })
        );
        for bad in ["2", "0:5", "a:b", "2:"] {
            let e = parse(&[("SQTT_INSTRUMENT_MEMORY", bad)]).unwrap_err();
            assert!(
                e.to_string().contains("SQTT_INSTRUMENT_MEMORY"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn address_modes() {
        let o = parse(&[("SQTT_TRACE_ADDRESSES", "memory,lds")]).unwrap();
        assert_eq!(
            o.addresses,
            AddressTracing {
                memory: true,
                lds: true
            }
        );
        assert!(
            parse(&[("SQTT_TRACE_ADDRESSES", "global")])
                .unwrap_err()
                .to_string()
                .contains("SQTT_TRACE_ADDRESSES")
        );
    }

    #[test]
    fn forbidden_combinations_name_both_variables() {
        let e = parse(&[
            ("SQTT_INSTRUMENT_MEMORY", "2:5"),
            ("SQTT_TRACE_ADDRESSES", "memory"),
        ])
        .unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("SQTT_INSTRUMENT_MEMORY=2:5") && s.contains("SQTT_TRACE_ADDRESSES=memory"),
            "{s}"
        );
        let e = parse(&[
            ("SQTT_SHADER_CLOCK_BITS", "12"),
            ("SQTT_TRACE_ADDRESSES", "lds"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("SQTT_SHADER_CLOCK_BITS=12"), "{e}");
    }

    #[test]
    fn clock_packing_bounds() {
        let o = parse(&[("SQTT_SHADER_CLOCK_BITS", "12")]).unwrap();
        assert_eq!(o.clock, Some(ClockPacking { bits: 12, shift: 4 }));
        assert!(
            parse(&[("SQTT_SHADER_CLOCK_BITS", "0")])
                .unwrap()
                .clock
                .is_none()
        );
        assert!(parse(&[("SQTT_SHADER_CLOCK_BITS", "29")]).is_err());
        let e = parse(&[
            ("SQTT_SHADER_CLOCK_BITS", "12"),
            ("SQTT_SHADER_CLOCK_SHIFT", "24"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("SQTT_SHADER_CLOCK_SHIFT"), "{e}");
    }

    #[test]
    fn mem_barrier_aliases() {
        assert_eq!(
            parse(&[("SQTT_MEM_BARRIER", "0")]).unwrap().mem_barrier,
            MemBarrier::None
        );
        assert_eq!(
            parse(&[("SQTT_MEM_BARRIER", "asm")]).unwrap().mem_barrier,
            MemBarrier::Asm
        );
        assert!(
            parse(&[("SQTT_MEM_BARRIER", "full")])
                .unwrap_err()
                .to_string()
                .contains("SQTT_MEM_BARRIER")
        );
    }
}
