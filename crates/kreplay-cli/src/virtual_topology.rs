//! `kreplay run --virtual-agents LIST`: the GPU agents of the virtual runtime, in `VHSA_AGENTS`
//! syntax (`gfx90a`, `gfx942,gfx90a`), checked before the application starts.
//!
//! The list is checked twice: its spelling here, then against the virtual runtime itself, by
//! running `kreplay info --runtime virtual` with the list in a separate process and comparing
//! the GPU agents it reports with the list (vhsa skips a target it does not know, with a note
//! naming the ones it knows).

use crate::exit_status::CliError;
use crate::installation::Runtime;
use std::path::Path;
use std::process::Command;

/// The environment variable vhsa reads its topology from.
pub const VARIABLE: &str = "VHSA_AGENTS";
/// The variable that carries the list to vkfd (`--runtime system-on-vkfd`).
pub const VKFD_VARIABLE: &str = "VKFD_AGENTS";

/// The targets of `list`, in order, when it is spelled like `gfx942,gfx90a`.
pub fn parse(list: &str) -> Result<Vec<String>, CliError> {
    let bad = |reason: String| CliError::BadVirtualAgents {
        list: list.to_owned(),
        reason,
    };
    let targets: Vec<String> = list.split(',').map(|t| t.trim().to_owned()).collect();
    if list.trim().is_empty() {
        return Err(bad(
            "the list is empty; give GPU targets separated by commas, for example --virtual-agents gfx942,gfx90a"
                .into(),
        ));
    }
    for (i, t) in targets.iter().enumerate() {
        if t.is_empty() {
            return Err(bad(format!(
                "entry {} is empty; separate GPU targets by single commas, for example gfx942,gfx90a",
                i + 1
            )));
        }
        let well_formed = t.starts_with("gfx")
            && t.len() > 3
            && t[3..]
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !well_formed {
            return Err(bad(format!(
                "`{t}` is not a GPU target name (gfx followed by hexadecimal digits, for example gfx90a)"
            )));
        }
    }
    Ok(targets)
}

/// GPU agent names in the output of `kreplay info` (`agent 1: gfx942 (GPU, vendor AMD)`).
pub fn gpu_agents(info_output: &str) -> Vec<String> {
    info_output
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("agent ")?;
            let (_, rest) = rest.split_once(": ")?;
            let (name, kind) = rest.split_once(" (")?;
            kind.starts_with("GPU").then(|| name.to_owned())
        })
        .collect()
}

/// Checks `list` for `runtime`: it must be the virtual runtime and know every target.
/// `kreplay` is the `kreplay` executable used to ask the runtime.
pub fn check(list: &str, runtime: &Runtime, kreplay: &Path) -> Result<Vec<String>, CliError> {
    let bad = |reason: String| CliError::BadVirtualAgents {
        list: list.to_owned(),
        reason,
    };
    let dir = match runtime {
        Runtime::Virtual(dir) => dir,
        // vkfd describes the same GPU models; the real runtime decides which it supports.
        Runtime::SystemOnVkfd { .. } => return parse(list),
        Runtime::System(path) => {
            return Err(bad(format!(
                "a virtual topology applies to the virtual runtime only, and this run uses the system runtime ({}); add --runtime virtual, or drop --virtual-agents",
                path.display()
            )));
        }
    };
    let targets = parse(list)?;
    let out = Command::new(kreplay)
        .args(["info", "--runtime", "virtual"])
        .env(VARIABLE, targets.join(","))
        .env("KREPLAY_VHSA_DIR", dir)
        .env_remove("HSA_TOOLS_LIB")
        .env_remove("VHSA_FAULTS")
        .output()
        .map_err(|e| {
            bad(format!(
                "could not ask the virtual runtime about it ({}: {e})",
                kreplay.display()
            ))
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(bad(format!(
            "the virtual runtime could not be queried with it: {}",
            stderr.trim()
        )));
    }
    let reported = gpu_agents(&stdout);
    if reported != targets {
        let unknown: Vec<&str> = targets
            .iter()
            .filter(|t| !reported.contains(t))
            .map(String::as_str)
            .collect();
        let known = stderr
            .lines()
            .find_map(|l| {
                l.split_once("Known targets: ")
                    .map(|(_, k)| k.trim().to_owned())
            })
            .map(|k| format!(" (it knows {k})"))
            .unwrap_or_default();
        return Err(bad(format!(
            "the virtual runtime does not know {}{known}; it would create the GPU agents [{}] instead",
            unknown
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", "),
            reported.join(", ")
        )));
    }
    Ok(targets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_spelled_like_vhsa_agents() {
        assert_eq!(parse("gfx90a").unwrap(), vec!["gfx90a"]);
        assert_eq!(parse(" gfx942 , gfx90a").unwrap(), vec!["gfx942", "gfx90a"]);
        for (bad, why) in [
            ("", "empty"),
            ("gfx942,,gfx90a", "entry 2 is empty"),
            ("gfx942,", "entry 2 is empty"),
            ("mi300", "`mi300` is not a GPU target"),
            ("gfx", "`gfx` is not"),
            ("gfx90a;gfx942", "`gfx90a;gfx942`"),
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.exit_code(), 79, "{bad}");
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn gpu_agents_are_read_from_the_info_listing() {
        let text = "runtime: virtual\nagents: 3\nagent 0: CPU (CPU, vendor CPU)\n  isa: none\n\
                    agent 1: gfx942 (GPU, vendor AMD)\n  pool 0: x\nagent 2: gfx90a (GPU, vendor AMD)\n";
        assert_eq!(gpu_agents(text), vec!["gfx942", "gfx90a"]);
    }

    #[test]
    fn the_system_runtime_refuses_a_virtual_topology() {
        let err = check(
            "gfx90a",
            &Runtime::System("/lib/libhsa-runtime64.so.1".into()),
            Path::new("kreplay"),
        )
        .unwrap_err();
        assert_eq!(err.exit_code(), 79);
        assert!(err.to_string().contains("--runtime virtual"), "{err}");
    }
}
