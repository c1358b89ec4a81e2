//! Exit codes of `kreplay` and the errors that produce them.
//!
//! The application's own exit code passes through unchanged; an application killed by a signal
//! gives `128 + signal`. Errors of `kreplay` itself use the distinct codes below (64 and up, in
//! the spirit of `sysexits.h`), each with a message on stderr that starts with `kreplay: error:`.

use std::path::PathBuf;
use std::process::ExitCode;

/// Command-line misuse that the parser itself reports (unknown option, missing `--`).
pub const USAGE: u8 = 64;

/// The table printed in `--help`; `docs/user-guide.md` has the same table in Markdown.
pub const EXIT_CODE_TABLE: &str = "\
Exit codes:
  0-255  the application's own exit code, passed through
  128+N  the application was killed by signal N (the signal is named on stderr)
  64     command-line usage error (unknown option, missing application after --)
  65     invalid kernel regular expression
  66     unknown output format
  67     invalid pass count (--passes 0, above 10000, or not a number)
  68     invalid kernel iteration range
  69     application not found
  70     application not executable
  71     output directory not writable
  72     tool library libkreplay.so not found
  73     virtual runtime (vhsa) or virtual GPU thunk (vkfd) not found
  74     system HSA runtime not found (--runtime system)
  75     reading records or writing outputs failed
  76     the application could not be started
  77     querying the runtime failed (kreplay info)
  78     invalid output file name (-o)
  79     invalid virtual topology (--virtual-agents)
  80     counters that cannot be collected: unknown on an agent, or a group over a block's
         per-pass limit (--pmc, -i); checked before the application starts
  81     counter collection unavailable: no aqlprofile library and no AQL-profile extension
  82     invalid counter input (-i file unreadable or malformed, --pmc with pmc_groups)";

/// Errors of `kreplay` itself, each mapped to one exit code.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// `--kernel-include-regex` / `--kernel-exclude-regex` does not compile.
    #[error("{option} `{pattern}` is not a valid regular expression: {reason}")]
    BadRegex {
        /// The option name.
        option: &'static str,
        /// The pattern given.
        pattern: String,
        /// The regex compiler's message.
        reason: String,
    },
    /// `-f` names a format that is not supported.
    #[error("unknown output format `{0}`: use one or more of csv, json, pftrace")]
    UnknownFormat(String),
    /// `--passes` is 0, above the limit, or not a number.
    #[error("{0}")]
    BadPasses(String),
    /// `--kernel-iteration-range` does not parse.
    #[error(
        "invalid --kernel-iteration-range `{range}`: {reason}; expected `[a-b]`, `[a]` or `[a-b],[c-d]`"
    )]
    BadIterationRange {
        /// The text given.
        range: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The application is neither a path to a file nor found on `PATH`.
    #[error("application `{0}` not found: give a path to it or put its directory on PATH")]
    AppNotFound(String),
    /// The application exists but cannot be executed.
    #[error("application `{}` is not executable: {reason}", path.display())]
    AppNotExecutable {
        /// The resolved path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The output directory cannot be created or written.
    #[error("output directory `{}` is not writable: {reason}; choose another with -d/--output-directory", path.display())]
    OutputNotWritable {
        /// The directory.
        path: PathBuf,
        /// The system's reason.
        reason: String,
    },
    /// `-o` is not one plain file name or makes names too long.
    #[error("invalid output file name -o `{name}`: {reason}")]
    BadOutputName {
        /// The expanded base name.
        name: String,
        /// What is wrong and what to do.
        reason: String,
    },
    /// `--virtual-agents` is malformed, names unknown targets, or the runtime is not vhsa.
    #[error("--virtual-agents `{list}`: {reason}")]
    BadVirtualAgents {
        /// The list given.
        list: String,
        /// What is wrong and what to do.
        reason: String,
    },
    /// `libkreplay.so` is not where it should be.
    #[error(
        "tool library not found (looked for {looked}); build it with `cargo build -p kreplay` or set KREPLAY_TOOL_LIB to the path of libkreplay.so"
    )]
    ToolNotFound {
        /// The places searched.
        looked: String,
    },
    /// vhsa is not where it should be.
    #[error(
        "virtual runtime not found (looked for {looked}); build it with `cargo build -p vhsa` or set KREPLAY_VHSA_DIR to a directory holding libhsa-runtime64.so.1"
    )]
    VhsaNotFound {
        /// The places searched.
        looked: String,
    },
    /// vkfd is not where it should be (`--runtime system-on-vkfd`).
    #[error(
        "vkfd, the virtual GPU's thunk, not found (looked for {looked}); build it with `cargo build -p vkfd` or set KREPLAY_VKFD_DIR to a directory holding libhsakmt.so.1"
    )]
    VkfdNotFound {
        /// The places searched.
        looked: String,
    },
    /// `--runtime system` but no system runtime.
    #[error("--runtime system: {0}; use --runtime virtual to run on vhsa")]
    SystemRuntimeNotFound(String),
    /// Reading records or writing an output file failed.
    #[error("{what} `{}`: {reason}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The system's reason.
        reason: String,
    },
    /// Spawning the application failed.
    #[error("could not start `{}`: {reason}", path.display())]
    Launch {
        /// The application.
        path: PathBuf,
        /// The system's reason.
        reason: String,
    },
    /// Loading or querying the runtime failed (`kreplay info`).
    #[error("{0}")]
    RuntimeQuery(String),
    /// A counter group that cannot be collected in one pass on an agent, or a counter the
    /// agent does not have (the message names the group, agent, block, count and limit).
    #[error("{0}")]
    CounterGroup(String),
    /// Neither the aqlprofile library nor the runtime's AQL-profile extension is available.
    #[error("counter collection is unavailable on this runtime: {0}")]
    CountersUnavailable(String),
    /// `-i FILE` cannot be read or is malformed, or `--pmc` was combined with `pmc_groups`.
    #[error("{0}")]
    BadCounterInput(String),
}

impl CliError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::BadRegex { .. } => 65,
            CliError::UnknownFormat(_) => 66,
            CliError::BadPasses(_) => 67,
            CliError::BadIterationRange { .. } => 68,
            CliError::AppNotFound(_) => 69,
            CliError::AppNotExecutable { .. } => 70,
            CliError::OutputNotWritable { .. } => 71,
            CliError::ToolNotFound { .. } => 72,
            CliError::VhsaNotFound { .. } | CliError::VkfdNotFound { .. } => 73,
            CliError::SystemRuntimeNotFound(_) => 74,
            CliError::Io { .. } => 75,
            CliError::Launch { .. } => 76,
            CliError::RuntimeQuery(_) => 77,
            CliError::BadOutputName { .. } => 78,
            CliError::BadVirtualAgents { .. } => 79,
            CliError::CounterGroup(_) => 80,
            CliError::CountersUnavailable(_) => 81,
            CliError::BadCounterInput(_) => 82,
        }
    }

    /// Shorthand for an [`CliError::Io`] error.
    pub fn io(what: &'static str, path: impl Into<PathBuf>, err: impl std::fmt::Display) -> Self {
        CliError::Io {
            what,
            path: path.into(),
            reason: err.to_string(),
        }
    }

    /// Prints the error on stderr and returns its exit code.
    pub fn report(&self) -> ExitCode {
        eprintln!("kreplay: error: {self}");
        ExitCode::from(self.exit_code())
    }
}

/// The conventional name of a signal (`SIGSEGV`), or `signal N` for one without a name here.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("signal {sig}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_its_own_code_and_the_table_lists_it() {
        let errors = [
            CliError::BadRegex {
                option: "x",
                pattern: "(".into(),
                reason: "r".into(),
            },
            CliError::UnknownFormat("otf2".into()),
            CliError::BadPasses("p".into()),
            CliError::BadIterationRange {
                range: "x".into(),
                reason: "r".into(),
            },
            CliError::AppNotFound("a".into()),
            CliError::AppNotExecutable {
                path: "a".into(),
                reason: "r".into(),
            },
            CliError::OutputNotWritable {
                path: "d".into(),
                reason: "r".into(),
            },
            CliError::ToolNotFound { looked: "l".into() },
            CliError::VhsaNotFound { looked: "l".into() },
            CliError::SystemRuntimeNotFound("s".into()),
            CliError::io("reading", "f", "e"),
            CliError::Launch {
                path: "a".into(),
                reason: "r".into(),
            },
            CliError::RuntimeQuery("q".into()),
            CliError::BadOutputName {
                name: "n".into(),
                reason: "r".into(),
            },
            CliError::BadVirtualAgents {
                list: "l".into(),
                reason: "r".into(),
            },
            CliError::CounterGroup("g".into()),
            CliError::CountersUnavailable("u".into()),
            CliError::BadCounterInput("i".into()),
        ];
        let mut codes: Vec<u8> = errors.iter().map(CliError::exit_code).collect();
        for code in &codes {
            assert!(*code > USAGE && *code < 128);
            assert!(
                EXIT_CODE_TABLE.contains(&format!("  {code}  ")),
                "code {code} missing from the table"
            );
        }
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), errors.len(), "exit codes must be distinct");
    }

    #[test]
    fn signals_are_named() {
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(63), "signal 63");
    }
}
