//! `kreplay run --virtual-agents LIST`: the GPU agents of the virtual runtime, in `VHSA_AGENTS`
//! syntax (`gfx90a`, `gfx942,gfx90a`), checked before the application starts.
//!
//! The list is checked twice: its spelling here, then against the virtual runtime itself, by
//! running `kreplay info --runtime virtual` with the list in a separate process and comparing
//! the GPU agents it reports with the list (vhsa skips a target it does not know, with a note
//! naming the ones it knows). A HIP application that recorded no dispatch on agents Debian's
//! HIP 5.2 does not know (vhsa's default `gfx942`) is told why afterwards.

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

/// The virtual runtime's GPU when no list is given (vhsa's default).
const DEFAULT_TARGET: &str = "gfx942";

/// Targets Debian's HIP 5.2 does not know: a HIP application sees no device on them.
const UNKNOWN_TO_HIP_5_2: [&str; 1] = ["gfx942"];

/// A note for a run of `app` on the virtual runtime that recorded no dispatch: when every agent
/// of the topology (`list`, else `VHSA_AGENTS` of the environment, else vhsa's default) is a
/// target HIP 5.2 does not know and `app` links HIP, the application saw no device.
pub fn no_device_note(app: &Path, list: Option<&str>) -> Option<String> {
    let from_env = std::env::var(VARIABLE).ok();
    let list = list
        .or(from_env.as_deref())
        .filter(|l| !l.trim().is_empty())
        .unwrap_or(DEFAULT_TARGET);
    let all_unknown = list
        .split(',')
        .all(|t| UNKNOWN_TO_HIP_5_2.contains(&t.trim()));
    (all_unknown && links_hip(app)).then(|| {
        format!(
            "kreplay: note: the virtual runtime's agents are {list}, a target Debian's HIP 5.2 does not know, so this HIP \
             application found no device; run it with --virtual-agents gfx90a (and build it with --offload-arch=gfx90a)"
        )
    })
}

/// True when the executable at `app` names HIP's runtime library among its dependencies.
fn links_hip(app: &Path) -> bool {
    std::fs::read(app).is_ok_and(|bytes| memchr::memmem::find(&bytes, b"libamdhip64.so").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hip_application_on_gfx942_agents_only_is_told_it_found_no_device() {
        let dir = std::env::temp_dir().join(format!("kreplay-no-device-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (hip, plain) = (dir.join("hip_app"), dir.join("plain_app"));
        std::fs::write(&hip, b"\x7fELF...libamdhip64.so.5\0...").unwrap();
        std::fs::write(&plain, b"\x7fELF...libhsa-runtime64.so.1\0...").unwrap();
        let note = no_device_note(&hip, Some("gfx942")).expect("a note");
        assert!(note.contains("--virtual-agents gfx90a"), "{note}");
        assert!(no_device_note(&hip, Some("gfx942,gfx942")).is_some());
        assert_eq!(no_device_note(&hip, Some("gfx942,gfx90a")), None);
        assert_eq!(no_device_note(&hip, Some("gfx90a")), None);
        assert_eq!(no_device_note(&plain, Some("gfx942")), None);
        assert_eq!(no_device_note(&dir.join("missing"), Some("gfx942")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
