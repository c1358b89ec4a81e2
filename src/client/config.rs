//! The built-in client's own selection from the environment: passes, kernel filters, occurrence
//! ranges, output (contract: `docs/formats.md`). The engine's settings, which apply to every
//! client, are read by `crate::settings`.

pub use crate::settings::ConfigError;
use regex::Regex;
use std::path::PathBuf;

/// Most passes one dispatch may run (`KREPLAY_PASSES`; the command line's `--passes` has the
/// same bound). Far more than any profiling session needs, small enough that a typo cannot
/// keep the application replaying for days.
pub const MAX_PASSES: u32 = 10_000;

/// Inclusive occurrence ranges of `KREPLAY_KERNEL_ITERATION_RANGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IterationRanges(pub Vec<(u64, u64)>);

impl IterationRanges {
    /// Parses `[a-b]`, `[a]` or `[a-b],[c-d]`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("expected `[a-b]`, `[a]` or `[a-b],[c-d]`".into());
        }
        let mut out = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            let inner = part
                .strip_prefix('[')
                .and_then(|p| p.strip_suffix(']'))
                .ok_or_else(|| format!("`{part}` is not in brackets; expected `[a-b]` or `[a]`"))?;
            let num = |t: &str| {
                t.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("`{t}` in `{part}` is not a non-negative integer"))
            };
            let (a, b) = match inner.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => {
                    let a = num(inner)?;
                    (a, a)
                }
            };
            if a > b {
                return Err(format!("`{part}` ends before it starts"));
            }
            out.push((a, b));
        }
        Ok(Self(out))
    }

    /// True when occurrence `n` (from 0) is in a range.
    pub fn contains(&self, n: u64) -> bool {
        self.0.iter().any(|&(a, b)| (a..=b).contains(&n))
    }
}

/// The built-in client's settings.
#[derive(Debug, Clone)]
pub struct BuiltinConfig {
    /// Passes per replayed dispatch (>= 1).
    pub passes: u32,
    /// Only kernels matching are replayed.
    pub include: Option<Regex>,
    /// Kernels matching are not replayed.
    pub exclude: Option<Regex>,
    /// Occurrences replayed, per kernel name.
    pub ranges: Option<IterationRanges>,
    /// Where records go.
    pub output_dir: Option<PathBuf>,
    /// Hardware counters to collect (`KREPLAY_PMC_GROUPS`): pass `p` collects group `p mod G`.
    pub pmc: Option<crate::pmc::PmcRequest>,
}

fn regex(variable: &'static str, value: Option<String>) -> Result<Option<Regex>, ConfigError> {
    value
        .map(|v| {
            Regex::new(&v).map_err(|e| ConfigError {
                variable,
                value: v.clone(),
                problem: format!("not a regular expression ({e})"),
            })
        })
        .transpose()
}

/// Reads the configuration through `get` (the environment in production). `Ok(None)` when
/// neither `KREPLAY_PASSES` nor `KREPLAY_PMC_GROUPS` is set (the built-in client is inactive);
/// with counter groups and no `KREPLAY_PASSES`, a dispatch runs one pass per group.
pub fn from_lookup(
    get: impl Fn(&str) -> Option<String>,
) -> Result<Option<BuiltinConfig>, ConfigError> {
    let pmc = crate::pmc::request::from_lookup(&get)?;
    let Some(p) =
        get("KREPLAY_PASSES").or_else(|| pmc.as_ref().map(|r| r.groups.len().to_string()))
    else {
        return Ok(None);
    };
    let passes = match p.trim().parse::<u64>() {
        Ok(n) if (1..=u64::from(MAX_PASSES)).contains(&n) => n as u32,
        _ => {
            return Err(ConfigError {
                variable: "KREPLAY_PASSES",
                value: p,
                problem: format!(
                    "expected an integer from 1 to {MAX_PASSES} (1 = no replay; {MAX_PASSES} is the upper bound)"
                ),
            });
        }
    };
    let include = regex("KREPLAY_KERNEL_INCLUDE", get("KREPLAY_KERNEL_INCLUDE"))?;
    let exclude = regex("KREPLAY_KERNEL_EXCLUDE", get("KREPLAY_KERNEL_EXCLUDE"))?;
    let ranges = get("KREPLAY_KERNEL_ITERATION_RANGE")
        .map(|v| {
            IterationRanges::parse(&v).map_err(|problem| ConfigError {
                variable: "KREPLAY_KERNEL_ITERATION_RANGE",
                value: v.clone(),
                problem,
            })
        })
        .transpose()?;
    let output_dir = match get("KREPLAY_OUTPUT_DIR") {
        Some(d) if d.trim().is_empty() => {
            return Err(ConfigError {
                variable: "KREPLAY_OUTPUT_DIR",
                value: d,
                problem: "expected a directory path".into(),
            });
        }
        other => other.map(PathBuf::from),
    };
    Ok(Some(BuiltinConfig {
        passes,
        include,
        exclude,
        ranges,
        output_dir,
        pmc,
    }))
}

// ------------------------------------------------------------------------------------------
// Timing of dispatches that are not replayed (`KREPLAY_TIME_ALL`).
// ------------------------------------------------------------------------------------------

/// Reads `KREPLAY_TIME_ALL` through `get`: `1` times every dispatch the built-in client does not
/// replay (a tool signal and a completion handler each; their records get a `pass` line with
/// device times), `0` or unset does not (their records are untimed).
pub fn time_all_from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<bool, ConfigError> {
    match get("KREPLAY_TIME_ALL") {
        None => Ok(false),
        Some(v) => match v.trim() {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(ConfigError {
                variable: "KREPLAY_TIME_ALL",
                value: v,
                problem: "expected 0 or 1".into(),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> Result<Option<BuiltinConfig>, ConfigError> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        from_lookup(|k| m.get(k).cloned())
    }

    #[test]
    fn passes_are_bounded_and_the_message_names_the_bound() {
        assert_eq!(
            cfg(&[("KREPLAY_PASSES", "10000")]).unwrap().unwrap().passes,
            MAX_PASSES
        );
        let e = cfg(&[("KREPLAY_PASSES", "10001")]).unwrap_err();
        assert!(e.to_string().contains("10000"), "{e}");
    }

    #[test]
    fn ranges_parse_and_match() {
        let r = IterationRanges::parse("[1-3],[7]").unwrap();
        assert_eq!(r.0, vec![(1, 3), (7, 7)]);
        assert!(
            !r.contains(0) && r.contains(1) && r.contains(3) && !r.contains(4) && r.contains(7)
        );
        for bad in ["", "1-3", "[3-1]", "[a]", "[1-]", "[1-3],"] {
            assert!(IterationRanges::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn time_all_is_off_by_default_and_validated() {
        let get = |v: &'static str| move |k: &str| (k == "KREPLAY_TIME_ALL").then(|| v.to_owned());
        assert_eq!(time_all_from_lookup(|_| None), Ok(false));
        assert_eq!(time_all_from_lookup(get("1")), Ok(true));
        assert_eq!(time_all_from_lookup(get(" 0 ")), Ok(false));
        for bad in ["yes", "2", ""] {
            let e = time_all_from_lookup(get(bad)).unwrap_err();
            assert_eq!(e.variable, "KREPLAY_TIME_ALL");
            assert!(e.to_string().contains("expected 0 or 1"), "{e}");
        }
    }

    #[test]
    fn unset_passes_means_inactive() {
        assert!(cfg(&[("KREPLAY_KERNEL_INCLUDE", "x")]).unwrap().is_none());
    }

    #[test]
    fn valid_configuration() {
        let c = cfg(&[
            ("KREPLAY_PASSES", "4"),
            ("KREPLAY_KERNEL_INCLUDE", "^inc"),
            ("KREPLAY_KERNEL_ITERATION_RANGE", "[0-1]"),
            ("KREPLAY_OUTPUT_DIR", "out"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(c.passes, 4);
        assert!(c.include.unwrap().is_match("increment"));
        assert!(c.exclude.is_none());
        assert_eq!(c.output_dir.unwrap(), PathBuf::from("out"));
    }

    #[test]
    fn invalid_values_name_the_variable() {
        for (k, v) in [
            ("KREPLAY_PASSES", "0"),
            ("KREPLAY_PASSES", "three"),
            ("KREPLAY_PASSES", "10001"),
            ("KREPLAY_PASSES", "4294967295"),
            ("KREPLAY_PASSES", "4294967296"),
            ("KREPLAY_KERNEL_INCLUDE", "("),
            ("KREPLAY_KERNEL_EXCLUDE", "[z-a]"),
            ("KREPLAY_KERNEL_ITERATION_RANGE", "5"),
            ("KREPLAY_OUTPUT_DIR", " "),
        ] {
            let mut pairs = vec![(k, v)];
            if k != "KREPLAY_PASSES" {
                pairs.push(("KREPLAY_PASSES", "2"));
            }
            let e = cfg(&pairs).unwrap_err();
            assert_eq!(e.variable, k);
            assert!(
                e.to_string().contains(k) && e.to_string().contains(v),
                "{e}"
            );
        }
    }
}
