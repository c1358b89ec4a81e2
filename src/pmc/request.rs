//! The counters asked for, from the environment: `KREPLAY_PMC_GROUPS` (one `pmc:` line per
//! group, the grammar of rocprofv3's text input, `amdgpu_counters::group::parse_lines`) and
//! `KREPLAY_PMC_CROSS_PASS`. Names are checked against the catalog here, before any dispatch;
//! each agent's own check (its target, its library's limits) comes when it is first used.

use crate::settings::ConfigError;
use amdgpu_counters::{Target, group};

/// What the environment asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmcRequest {
    /// The groups, in order; pass `p` collects group `p mod G`.
    pub groups: Vec<Vec<String>>,
    /// `KREPLAY_PMC_CROSS_PASS=1`: a derived metric may take inputs another group collects
    /// (evaluated from several passes, labelled `cross_pass`).
    pub cross_pass: bool,
}

/// Reads the request through `get` (the environment in production). `Ok(None)` when
/// `KREPLAY_PMC_GROUPS` is unset or blank. An error names the variable and what is wrong.
pub fn from_lookup(
    get: impl Fn(&str) -> Option<String>,
) -> Result<Option<PmcRequest>, ConfigError> {
    let Some(text) = get("KREPLAY_PMC_GROUPS").filter(|t| !t.trim().is_empty()) else {
        return Ok(None);
    };
    let error = |problem: String| ConfigError {
        variable: "KREPLAY_PMC_GROUPS",
        value: text.clone(),
        problem,
    };
    let groups = group::parse_lines(&text);
    if groups.is_empty() {
        return Err(error(
            "it holds no group: expected one `pmc: COUNTER ...` line per group".into(),
        ));
    }
    for name in groups.iter().flatten() {
        let known = Target::ALL.iter().any(|t| {
            amdgpu_counters::find(*t, name).is_some()
                || amdgpu_counters::find_derived(*t, name).is_some()
        });
        if !known {
            return Err(error(format!(
                "counter `{name}` is not offered on any supported target (`kreplay info --pmc` lists each \
                 agent's counters); no counter is collected"
            )));
        }
    }
    let cross_pass = match get("KREPLAY_PMC_CROSS_PASS").as_deref().map(str::trim) {
        None | Some("") | Some("0") => false,
        Some("1") => true,
        Some(other) => {
            return Err(ConfigError {
                variable: "KREPLAY_PMC_CROSS_PASS",
                value: other.to_owned(),
                problem: "expected 0 or 1".into(),
            });
        }
    };
    Ok(Some(PmcRequest { groups, cross_pass }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(pairs: &[(&str, &str)]) -> Result<Option<PmcRequest>, String> {
        let m: HashMap<&str, &str> = pairs.iter().copied().collect();
        from_lookup(|k| m.get(k).map(|v| v.to_string())).map_err(|e| e.to_string())
    }

    #[test]
    fn one_group_per_pmc_line() {
        let r = read(&[(
            "KREPLAY_PMC_GROUPS",
            "pmc: SQ_WAVES SQ_INSTS_VALU\npmc: SQ_WAVES,GRBM_COUNT\n",
        )])
        .unwrap()
        .unwrap();
        assert_eq!(r.groups.len(), 2);
        assert_eq!(r.groups[1], ["SQ_WAVES", "GRBM_COUNT"]);
        assert!(!r.cross_pass);
        assert_eq!(read(&[]).unwrap(), None);
    }

    #[test]
    fn unknown_names_and_bad_values_are_refused_naming_them() {
        let e = read(&[("KREPLAY_PMC_GROUPS", "pmc: SQ_WAVES NOT_A_COUNTER")]).unwrap_err();
        assert!(e.contains("NOT_A_COUNTER"), "{e}");
        let e = read(&[("KREPLAY_PMC_GROUPS", "SQ_WAVES")]).unwrap_err();
        assert!(e.contains("no group"), "{e}");
        let e = read(&[
            ("KREPLAY_PMC_GROUPS", "pmc: SQ_WAVES"),
            ("KREPLAY_PMC_CROSS_PASS", "yes"),
        ])
        .unwrap_err();
        assert!(e.contains("KREPLAY_PMC_CROSS_PASS"), "{e}");
    }
}
