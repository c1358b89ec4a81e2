//! Output locations: `%pid%`, `%hostname%` and `%rank%` expansion in `-d` and `-o`, and the
//! checks done before the application starts: the base name is one plain file name, every
//! final name fits `NAME_MAX` and every path `PATH_MAX`, and the directory can be written.

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

/// Longest file name on Linux file systems, in bytes.
pub const NAME_MAX: usize = libc::NAME_MAX as usize;
/// Longest path the kernel accepts, in bytes, including the terminating NUL.
pub const PATH_MAX: usize = libc::PATH_MAX as usize;

/// The widest process id of this machine (`/proc/sys/kernel/pid_max` minus one), for checking
/// names before the application's pid is known.
pub fn widest_pid() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .filter(|&m| m > 1)
        .map_or(4_194_303, |m| {
            let digits = (m - 1).to_string().len() as u32;
            10u32.checked_pow(digits).map_or(u32::MAX, |p| p - 1)
        })
}

/// Checks, before the application starts, the expanded `-o` base name `base` and the expanded
/// `-d` directory `dir` (with the widest pid in place of `%pid%`): `base` is one plain name
/// (no `/`, not `.` or `..`, not empty), each `base + suffix` fits [`NAME_MAX`], and the
/// longest path written below `dir` (a record file inside `<base>_records/`) fits [`PATH_MAX`].
pub fn check_names(dir: &Path, base: &str, suffixes: &[&str]) -> Result<(), CliError> {
    let bad = |reason: String| CliError::BadOutputName {
        name: base.to_owned(),
        reason,
    };
    if base.is_empty() {
        return Err(bad(
            "it is empty; give a base name such as -o kreplay".into()
        ));
    }
    if base.contains('/') {
        return Err(bad(
            "it contains a path separator `/`; -o names files inside -d/--output-directory, so put directories in -d"
                .into(),
        ));
    }
    if base == "." || base == ".." {
        return Err(bad(
            "`.` and `..` name directories, not files; choose a file base name and put directories in -d".into(),
        ));
    }
    if base.contains('\0') {
        return Err(bad("it contains a NUL byte".into()));
    }
    if let Some(longest) = suffixes
        .iter()
        .map(|s| format!("{base}{s}"))
        .max_by_key(String::len)
        && longest.len() > NAME_MAX
    {
        return Err(bad(format!(
            "the output file name `{longest}` is {} bytes, longer than the file system limit of {NAME_MAX} bytes (NAME_MAX); shorten -o by at least {} bytes",
            longest.len(),
            longest.len() - NAME_MAX
        )));
    }
    let dir_problem = |reason: String| CliError::OutputNotWritable {
        path: dir.to_owned(),
        reason,
    };
    if let Some(c) = dir
        .components()
        .map(|c| c.as_os_str().len())
        .find(|&n| n > NAME_MAX)
    {
        return Err(dir_problem(format!(
            "one of its components is {c} bytes, longer than the limit of {NAME_MAX} bytes (NAME_MAX)"
        )));
    }
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    let record = format!("kreplay-{}.jsonl", widest_pid());
    let deepest = suffixes
        .iter()
        .map(|s| s.len())
        .max()
        .unwrap_or(0)
        .max("_records".len())
        + base.len()
        + 1
        + record.len();
    let total = absolute.as_os_str().len() + 1 + deepest;
    if total >= PATH_MAX {
        return Err(dir_problem(format!(
            "the outputs below it would have paths of up to {total} bytes, over the limit of {} bytes (PATH_MAX); choose a shorter -d or -o",
            PATH_MAX - 1
        )));
    }
    Ok(())
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
    fn output_names_are_plain_and_fit_the_limits() {
        let dir = Path::new("out");
        let suffixes = ["_passes.csv", "_summary.txt", "_records"];
        assert!(check_names(dir, "kreplay", &suffixes).is_ok());
        assert!(check_names(dir, "run..1", &suffixes).is_ok());
        for (base, why) in [
            ("../escape", "path separator"),
            ("nosuch/x", "path separator"),
            ("..", "`..`"),
            (".", "`.`"),
            ("", "empty"),
        ] {
            let err = check_names(dir, base, &suffixes).unwrap_err();
            assert_eq!(err.exit_code(), 78, "{base}");
            let text = err.to_string();
            assert!(text.contains(why) && text.contains("-o"), "{base}: {text}");
        }
        let fits = "x".repeat(NAME_MAX - "_summary.txt".len());
        assert!(check_names(dir, &fits, &suffixes).is_ok());
        let long = format!("{fits}y");
        let text = check_names(dir, &long, &suffixes).unwrap_err().to_string();
        assert!(
            text.contains("256 bytes")
                && text.contains("NAME_MAX")
                && text.contains("by at least 1 bytes"),
            "{text}"
        );
        let deep: PathBuf = (0..20).map(|_| "d".repeat(250)).collect();
        let err = check_names(&deep, "kreplay", &suffixes).unwrap_err();
        assert_eq!(err.exit_code(), 71);
        assert!(err.to_string().contains("PATH_MAX"), "{err}");
        let wide = PathBuf::from("d".repeat(NAME_MAX + 1));
        assert!(
            check_names(&wide, "kreplay", &suffixes)
                .unwrap_err()
                .to_string()
                .contains("NAME_MAX")
        );
    }

    #[test]
    fn the_widest_pid_has_the_digits_of_pid_max() {
        let pid = widest_pid();
        assert!(pid >= std::process::id(), "{pid}");
        assert!(pid.to_string().chars().all(|c| c == '9'), "{pid}");
    }

    #[test]
    fn hostname_is_not_empty() {
        assert!(!hostname().is_empty());
    }
}
