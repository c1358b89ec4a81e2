//! Which dispatches are replayed: name filters, iteration ranges and the pass count, checked
//! here so that a mistake is reported before the application starts.

use crate::exit_status::CliError;

/// An inclusive range of per-kernel occurrences, counted from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occurrences {
    /// First occurrence selected.
    pub first: u64,
    /// Last occurrence selected (inclusive).
    pub last: u64,
}

/// Parses `[a-b]`, `[a]` or a comma-separated list of those (brackets optional, spaces allowed).
pub fn parse_iteration_range(text: &str) -> Result<Vec<Occurrences>, CliError> {
    let fail = |reason: &str| CliError::BadIterationRange {
        range: text.to_owned(),
        reason: reason.to_owned(),
    };
    let mut ranges = Vec::new();
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(fail("it is empty"));
    }
    while !rest.is_empty() {
        let (item, tail) = if let Some(inner) = rest.strip_prefix('[') {
            let close = inner
                .find(']')
                .ok_or_else(|| fail("a `[` has no matching `]`"))?;
            (&inner[..close], inner[close + 1..].trim_start())
        } else {
            match rest.find(',') {
                Some(comma) => (&rest[..comma], &rest[comma..]),
                None => (rest, ""),
            }
        };
        let number = |s: &str| -> Result<u64, CliError> {
            s.trim()
                .parse::<u64>()
                .map_err(|_| fail(&format!("`{}` is not a non-negative integer", s.trim())))
        };
        let range = match item.split_once('-') {
            Some((a, b)) => Occurrences {
                first: number(a)?,
                last: number(b)?,
            },
            None => {
                let n = number(item)?;
                Occurrences { first: n, last: n }
            }
        };
        if range.first > range.last {
            return Err(fail(&format!("{} is after {}", range.first, range.last)));
        }
        ranges.push(range);
        rest = match tail.strip_prefix(',') {
            Some(after) => {
                let after = after.trim_start();
                if after.is_empty() {
                    return Err(fail("it ends with a comma"));
                }
                after
            }
            None if tail.trim().is_empty() => "",
            None => return Err(fail(&format!("unexpected `{}`", tail.trim()))),
        };
    }
    Ok(ranges)
}

/// The canonical `[a-b],[c]` spelling handed to the tool library.
pub fn format_iteration_range(ranges: &[Occurrences]) -> String {
    ranges
        .iter()
        .map(|r| {
            if r.first == r.last {
                format!("[{}]", r.first)
            } else {
                format!("[{}-{}]", r.first, r.last)
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether occurrence `n` of a kernel is inside one of `ranges`.
#[cfg(test)]
pub fn selects(ranges: &[Occurrences], n: u64) -> bool {
    ranges.iter().any(|r| (r.first..=r.last).contains(&n))
}

/// Checks a kernel-name regular expression with the same engine the tool library uses.
pub fn check_regex(option: &'static str, pattern: &str) -> Result<(), CliError> {
    regex::Regex::new(pattern)
        .map(|_| ())
        .map_err(|e| CliError::BadRegex {
            option,
            pattern: pattern.to_owned(),
            reason: e.to_string(),
        })
}

/// The most passes one dispatch may run. Each pass re-runs the kernel and restores memory, so
/// a few thousand passes already take the application far beyond any profiling need; a larger
/// number is almost always a typo (`--passes 4294967295` would keep the application running for
/// days). The tool library applies the same bound to `KREPLAY_PASSES`.
pub const MAX_PASSES: u32 = 10_000;

/// Checks `--passes`: the built-in client has no continue callback, so unbounded replay (0)
/// is refused, and so is anything above [`MAX_PASSES`].
pub fn check_passes(text: &str) -> Result<u32, CliError> {
    let range = format!("give --passes N with 1 <= N <= {MAX_PASSES}");
    match text.trim().parse::<u64>() {
        Ok(0) => Err(CliError::BadPasses(format!(
            "--passes 0 asks for unbounded replay, which needs a continue callback that the command line does not have; {range}"
        ))),
        Ok(n) if n <= u64::from(MAX_PASSES) => Ok(n as u32),
        Ok(n) => Err(CliError::BadPasses(format!(
            "--passes {n} is above the limit of {MAX_PASSES} passes per dispatch; {range}"
        ))),
        Err(_) => Err(CliError::BadPasses(format!(
            "--passes `{text}` is not a positive integer; {range}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(first: u64, last: u64) -> Occurrences {
        Occurrences { first, last }
    }

    #[test]
    fn parses_the_documented_forms() {
        assert_eq!(parse_iteration_range("[1-3]").unwrap(), vec![r(1, 3)]);
        assert_eq!(parse_iteration_range("[4]").unwrap(), vec![r(4, 4)]);
        assert_eq!(
            parse_iteration_range("[0-1],[5-6]").unwrap(),
            vec![r(0, 1), r(5, 6)]
        );
        assert_eq!(
            parse_iteration_range(" [ 2 - 3 ] , [7] ").unwrap(),
            vec![r(2, 3), r(7, 7)]
        );
        assert_eq!(
            parse_iteration_range("2-3,7").unwrap(),
            vec![r(2, 3), r(7, 7)]
        );
    }

    #[test]
    fn rejects_malformed_ranges_with_the_reason() {
        for (bad, why) in [
            ("", "empty"),
            ("[3-1]", "after"),
            ("[a-2]", "`a`"),
            ("[1-2", "matching"),
            ("[1],", "comma"),
            ("[1] x", "unexpected"),
            ("[-1]", "``"),
        ] {
            let err = parse_iteration_range(bad).unwrap_err();
            assert_eq!(err.exit_code(), 68);
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn canonical_form_round_trips() {
        let ranges = parse_iteration_range("0-1, 5").unwrap();
        assert_eq!(format_iteration_range(&ranges), "[0-1],[5]");
        assert_eq!(
            parse_iteration_range(&format_iteration_range(&ranges)).unwrap(),
            ranges
        );
        assert!(selects(&ranges, 0) && selects(&ranges, 1) && selects(&ranges, 5));
        assert!(!selects(&ranges, 2) && !selects(&ranges, 6));
    }

    #[test]
    fn passes_zero_and_garbage_are_refused() {
        assert_eq!(check_passes("5").unwrap(), 5);
        let zero = check_passes("0").unwrap_err();
        assert_eq!(zero.exit_code(), 67);
        assert!(zero.to_string().contains("unbounded"));
        assert_eq!(check_passes("10000").unwrap(), MAX_PASSES);
        for big in ["10001", "4294967295", "4294967296", "99999999999999999999"] {
            let err = check_passes(big).unwrap_err();
            assert_eq!(err.exit_code(), 67, "{big}");
            let text = err.to_string();
            assert!(
                text.contains("10000") && text.contains("--passes"),
                "{big}: {text}"
            );
        }
        assert!(
            check_passes("many")
                .unwrap_err()
                .to_string()
                .contains("`many`")
        );
    }

    #[test]
    fn regex_errors_name_the_option_and_pattern() {
        assert!(check_regex("--kernel-include-regex", "^vec.*add$").is_ok());
        let err = check_regex("--kernel-include-regex", "vec(").unwrap_err();
        assert_eq!(err.exit_code(), 65);
        let text = err.to_string();
        assert!(
            text.contains("--kernel-include-regex") && text.contains("`vec(`"),
            "{text}"
        );
    }
}
