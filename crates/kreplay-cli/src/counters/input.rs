//! `-i FILE`: rocprofv3's counter input files.
//!
//! - `.txt`: every line holding `pmc:` is one group, `#` starts a comment (the grammar of
//!   `KREPLAY_PMC_GROUPS`, read by the counter catalog);
//! - `.yaml`/`.yml` and `.json`: `{"jobs": [{"pmc": [...]}, ...]}`, each job's `pmc` one group;
//!   a job's (or the document's) `pmc_groups: [[...], ...]`, rocprofv3's multiplexing form,
//!   gives its groups in order. kreplay collects every group on every replayed dispatch, one
//!   per pass, so `pmc_group_interval` has nothing to rotate and is ignored; so are a job's
//!   other options, each named in a note.

use crate::exit_status::CliError;
use amdgpu_counters::group;
use serde_json::Value;
use std::path::Path;

/// The counter groups of an input file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterInput {
    /// The groups in file order, each a list of counter names.
    pub groups: Vec<Vec<String>>,
    /// Some groups came from `pmc_groups` (which rocprofv3 refuses beside `--pmc`).
    pub from_pmc_groups: bool,
    /// Keys of the file that kreplay does not use (`jobs[0].kernel_include_regex`).
    pub ignored: Vec<String>,
}

/// The kinds of input file, by extension as rocprofv3 decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// `.txt`: `pmc:` lines.
    Text,
    /// `.yaml` / `.yml`.
    Yaml,
    /// `.json`.
    Json,
}

impl InputKind {
    /// The kind of `path` from its extension.
    pub fn of(path: &Path) -> Result<InputKind, CliError> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("txt") => Ok(InputKind::Text),
            Some("yaml" | "yml") => Ok(InputKind::Yaml),
            Some("json") => Ok(InputKind::Json),
            _ => Err(CliError::BadCounterInput(format!(
                "-i `{}`: the input file needs one of the extensions .txt (pmc: lines), .yaml, .yml or .json (rocprofv3's jobs)",
                path.display()
            ))),
        }
    }
}

/// Reads and parses the input file at `path`.
pub fn read(path: &Path) -> Result<CounterInput, CliError> {
    let kind = InputKind::of(path)?;
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::BadCounterInput(format!("-i `{}`: cannot read it: {e}", path.display()))
    })?;
    parse(kind, &text)
        .map_err(|reason| CliError::BadCounterInput(format!("-i `{}`: {reason}", path.display())))
}

/// Parses the text of an input file of `kind`.
pub fn parse(kind: InputKind, text: &str) -> Result<CounterInput, String> {
    let input = match kind {
        InputKind::Text => CounterInput {
            groups: group::parse_lines(text),
            ..CounterInput::default()
        },
        InputKind::Yaml => {
            let value: Value =
                serde_norway::from_str(text).map_err(|e| format!("not valid YAML: {e}"))?;
            from_document(&value)?
        }
        InputKind::Json => {
            let value: Value =
                serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
            from_document(&value)?
        }
    };
    if input.groups.is_empty() {
        return Err(match kind {
            InputKind::Text => "no counter group in it: write one `pmc: A B C` line per group".into(),
            _ => "no counter group in it: give `jobs: [{pmc: [A, B]}, {pmc: [C]}]` (one group per job) or `pmc_groups: [[A, B], [C]]`".into(),
        });
    }
    Ok(input)
}

/// The names of one group entry: a list of names, or one string of names separated as
/// rocprofv3 separates them.
fn names(value: &Value, at: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    match value {
        Value::String(s) => out.extend(group::parse_names(s)),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => out.extend(group::parse_names(s)),
                    other => {
                        return Err(format!(
                            "{at}[{i}] is {other}, not a counter name; write names as strings"
                        ));
                    }
                }
            }
        }
        other => {
            return Err(format!("{at} is {other}: expected a list of counter names"));
        }
    }
    if out.is_empty() {
        return Err(format!("{at} is an empty counter group"));
    }
    Ok(out)
}

/// The groups of a `pmc_groups` value: a list of groups.
fn group_list(value: &Value, at: &str) -> Result<Vec<Vec<String>>, String> {
    let Value::Array(items) = value else {
        return Err(format!(
            "{at} must be a list of groups, each a list of counter names: [[A, B], [C]]"
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, g)| names(g, &format!("{at}[{i}]")))
        .collect()
}

/// The groups of one object (the document or one job): its `pmc`, or its `pmc_groups`.
fn object_groups(
    object: &serde_json::Map<String, Value>,
    at: &str,
    input: &mut CounterInput,
    ignore_other_keys: bool,
) -> Result<(), String> {
    let prefix = if at.is_empty() {
        String::new()
    } else {
        format!("{at}.")
    };
    if object.contains_key("pmc") && object.contains_key("pmc_groups") {
        return Err(format!(
            "{prefix}pmc and {prefix}pmc_groups are both given: rocprofv3 refuses pmc beside pmc_groups; keep one"
        ));
    }
    for (key, value) in object {
        let here = format!("{prefix}{key}");
        match key.as_str() {
            "pmc" => input.groups.push(names(value, &here)?),
            "pmc_groups" => {
                input.groups.extend(group_list(value, &here)?);
                input.from_pmc_groups = true;
            }
            "jobs" if at.is_empty() => {}
            _ if ignore_other_keys => input.ignored.push(here),
            _ => {}
        }
    }
    Ok(())
}

/// The groups of a YAML or JSON document.
fn from_document(value: &Value) -> Result<CounterInput, String> {
    let Value::Object(top) = value else {
        return Err(
            "the document must be a mapping with `jobs` (rocprofv3's input) or `pmc_groups`".into(),
        );
    };
    let mut input = CounterInput::default();
    object_groups(top, "", &mut input, true)?;
    match top.get("jobs") {
        None => {}
        Some(Value::Array(jobs)) => {
            for (i, job) in jobs.iter().enumerate() {
                let at = format!("jobs[{i}]");
                let Value::Object(job) = job else {
                    return Err(format!("{at} must be a mapping such as {{pmc: [A, B]}}"));
                };
                object_groups(job, &at, &mut input, true)?;
            }
        }
        Some(_) => return Err("`jobs` must be a list of mappings such as {pmc: [A, B]}".into()),
    }
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(kind: InputKind, text: &str) -> Vec<Vec<String>> {
        parse(kind, text).unwrap().groups
    }

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn text_files_have_one_group_per_pmc_line() {
        let text = "# groups\npmc: SQ_WAVES SQ_INSTS_VALU\n\nnot a group\npmc: GRBM_COUNT, SQ_WAVES # again\n";
        assert_eq!(
            groups(InputKind::Text, text),
            vec![
                v(&["SQ_WAVES", "SQ_INSTS_VALU"]),
                v(&["GRBM_COUNT", "SQ_WAVES"])
            ]
        );
        let err = parse(InputKind::Text, "# nothing\n").unwrap_err();
        assert!(err.contains("pmc: A B C"), "{err}");
    }

    #[test]
    fn yaml_and_json_jobs_are_one_group_each() {
        let yaml = "jobs:\n  - pmc: [SQ_WAVES, SQ_INSTS_SALU]\n  - pmc:\n      - SQ_WAVES\n      - GRBM_COUNT\n    kernel_include_regex: gemm\n";
        let input = parse(InputKind::Yaml, yaml).unwrap();
        assert_eq!(
            input.groups,
            vec![
                v(&["SQ_WAVES", "SQ_INSTS_SALU"]),
                v(&["SQ_WAVES", "GRBM_COUNT"])
            ]
        );
        assert!(!input.from_pmc_groups);
        assert_eq!(input.ignored, vec!["jobs[1].kernel_include_regex"]);
        let json =
            r#"{"jobs": [{"pmc": ["SQ_WAVES SQ_INSTS_SALU"]}, {"pmc": "GRBM_COUNT,SQ_WAVES"}]}"#;
        assert_eq!(
            groups(InputKind::Json, json),
            vec![
                v(&["SQ_WAVES", "SQ_INSTS_SALU"]),
                v(&["GRBM_COUNT", "SQ_WAVES"])
            ]
        );
    }

    #[test]
    fn pmc_groups_give_their_groups_in_order() {
        let json = r#"{"jobs": [{"pmc_groups": [["SQ_WAVES", "SQ_INSTS_VALU"], ["GRBM_COUNT"]], "pmc_group_interval": 4}]}"#;
        let input = parse(InputKind::Json, json).unwrap();
        assert_eq!(
            input.groups,
            vec![v(&["SQ_WAVES", "SQ_INSTS_VALU"]), v(&["GRBM_COUNT"])]
        );
        assert!(input.from_pmc_groups);
        assert_eq!(input.ignored, vec!["jobs[0].pmc_group_interval"]);
        let yaml = "pmc_groups:\n  - [SQ_WAVES]\n  - SQ_INSTS_SALU SQ_INSTS_SMEM\n";
        let input = parse(InputKind::Yaml, yaml).unwrap();
        assert_eq!(
            input.groups,
            vec![v(&["SQ_WAVES"]), v(&["SQ_INSTS_SALU", "SQ_INSTS_SMEM"])]
        );
        assert!(input.from_pmc_groups);
    }

    #[test]
    fn malformed_documents_are_refused_with_the_place() {
        for (kind, text, expected) in [
            (InputKind::Json, "{", "not valid JSON"),
            (InputKind::Yaml, "jobs: [", "not valid YAML"),
            (InputKind::Json, "[1]", "must be a mapping"),
            (
                InputKind::Json,
                r#"{"jobs": {"pmc": ["A"]}}"#,
                "`jobs` must be a list",
            ),
            (
                InputKind::Json,
                r#"{"jobs": [{"pmc": [1]}]}"#,
                "jobs[0].pmc[0] is 1",
            ),
            (
                InputKind::Json,
                r#"{"jobs": [{"pmc": []}]}"#,
                "jobs[0].pmc is an empty",
            ),
            (
                InputKind::Yaml,
                "jobs:\n  - pmc: [A]\n    pmc_groups: [[B]]\n",
                "both given",
            ),
            (
                InputKind::Yaml,
                "pmc_groups: A\n",
                "pmc_groups must be a list",
            ),
            (
                InputKind::Yaml,
                "jobs:\n  - kernel_include_regex: x\n",
                "no counter group",
            ),
        ] {
            let err = parse(kind, text).unwrap_err();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn files_are_kinded_by_extension() {
        assert_eq!(InputKind::of(Path::new("a.txt")).unwrap(), InputKind::Text);
        assert_eq!(InputKind::of(Path::new("a.yml")).unwrap(), InputKind::Yaml);
        assert_eq!(InputKind::of(Path::new("a.yaml")).unwrap(), InputKind::Yaml);
        assert_eq!(InputKind::of(Path::new("a.json")).unwrap(), InputKind::Json);
        let err = InputKind::of(Path::new("a.cfg")).unwrap_err();
        assert_eq!(err.exit_code(), 82);
        assert!(err.to_string().contains(".yaml"), "{err}");
        let err = read(Path::new("no-such-directory/groups.txt")).unwrap_err();
        assert_eq!(err.exit_code(), 82);
        assert!(err.to_string().contains("cannot read"), "{err}");
    }
}
