//! Output locations: `%pid%`, `%hostname%` and `%rank%` expansion in `-d` and `-o`, and the
//! writability check done before the application starts.

use crate::exit_status::CliError;
use std::path::{Path, PathBuf};

/// Environment variables that carry the MPI rank, in the order they are consulted.
pub const RANK_VARIABLES: [&str; 3] = ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"];

/// The values substituted into output templates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateValues {
    /// The application's process id.
    pub pid: u32,
    /// The machine's host name.
    pub hostname: String,
    /// The MPI rank, `0` when no rank variable is set.
    pub rank: String,
}

impl TemplateValues {
    /// Values for this machine and environment, with `pid` as the process id.
    pub fn current(pid: u32) -> Self {
        TemplateValues {
            pid,
            hostname: hostname(),
            rank: rank_from(|k| std::env::var(k).ok()),
        }
    }
}

/// Replaces every `%pid%`, `%hostname%` and `%rank%` in `template`; other text is kept as is.
pub fn expand(template: &str, values: &TemplateValues) -> String {
    template
        .replace("%pid%", &values.pid.to_string())
        .replace("%hostname%", &values.hostname)
        .replace("%rank%", &values.rank)
}

/// The rank from the first of [`RANK_VARIABLES`] that `lookup` finds non-empty, else `0`.
pub fn rank_from(lookup: impl Fn(&str) -> Option<String>) -> String {
    RANK_VARIABLES
        .iter()
        .filter_map(|k| lookup(k))
        .map(|v| v.trim().to_owned())
        .find(|v| !v.is_empty())
        .unwrap_or_else(|| "0".to_owned())
}

/// The host name from `gethostname`, `localhost` when it cannot be read.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for writes of its length; gethostname NUL-terminates within it
    // on success (a truncated name is cut at the first NUL below either way).
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) };
    if rc != 0 {
        return "localhost".to_owned();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The part of a directory template that is known before the application starts: the leading
/// path components that contain no `%pid%`.
pub fn fixed_prefix(template: &str) -> PathBuf {
    let mut prefix = PathBuf::new();
    for component in Path::new(template).components() {
        if component.as_os_str().to_string_lossy().contains("%pid%") {
            break;
        }
        prefix.push(component);
    }
    if prefix.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        prefix
    }
}

/// Creates `dir` (and its parents) and proves it writable by creating and removing a file.
pub fn ensure_writable_dir(dir: &Path) -> Result<(), CliError> {
    let fail = |reason: String| CliError::OutputNotWritable {
        path: dir.to_owned(),
        reason,
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
    let probe = dir.join(format!(".kreplay-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| fail(e.to_string()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> TemplateValues {
        TemplateValues {
            pid: 4242,
            hostname: "node7".into(),
            rank: "3".into(),
        }
    }

    #[test]
    fn expands_every_key_and_repeats() {
        assert_eq!(
            expand("out/%hostname%/%pid%-%rank%", &values()),
            "out/node7/4242-3"
        );
        assert_eq!(expand("%pid%_%pid%", &values()), "4242_4242");
        assert_eq!(expand("plain/%other%", &values()), "plain/%other%");
    }

    #[test]
    fn rank_comes_from_the_first_set_variable() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(rank_from(env(&[])), "0");
        assert_eq!(rank_from(env(&[("SLURM_PROCID", "5")])), "5");
        assert_eq!(
            rank_from(env(&[("PMI_RANK", "2"), ("SLURM_PROCID", "5")])),
            "2"
        );
        assert_eq!(
            rank_from(env(&[("OMPI_COMM_WORLD_RANK", "1"), ("PMI_RANK", "2")])),
            "1"
        );
        assert_eq!(
            rank_from(env(&[("OMPI_COMM_WORLD_RANK", ""), ("PMI_RANK", "2")])),
            "2"
        );
    }

    #[test]
    fn fixed_prefix_stops_at_the_pid_component() {
        assert_eq!(
            fixed_prefix("out/%hostname%/%pid%"),
            PathBuf::from("out/%hostname%")
        );
        assert_eq!(fixed_prefix("out/run-%pid%/x"), PathBuf::from("out"));
        assert_eq!(fixed_prefix("%pid%"), PathBuf::from("."));
        assert_eq!(fixed_prefix("/abs/dir"), PathBuf::from("/abs/dir"));
    }

    #[test]
    fn hostname_is_not_empty() {
        assert!(!hostname().is_empty());
    }
}
