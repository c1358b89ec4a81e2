//! `kreplay`: the command line.
//!
//! - `kreplay run [options] -- <app> [args...]`: run an application with the tool library
//!   loaded, replaying kernel dispatches, and write the rocpd database (or CSV / JSON / Perfetto
//!   / Chrome outputs) and a summary;
//! - `kreplay info`: agents, ISAs and pools of the selected runtime;
//! - `kreplay demo`: the bundled example application under replay on the virtual runtime;
//! - `kreplay sqtt ...`: SQTT marker tools.

use clap::{ArgAction, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use kreplay_cli::{
    demo, exit_status, info, installation, kernel_selection, launch, sqtt, virtual_topology,
};

use installation::RuntimeChoice;
use kreplay_cli::report::Format;

const RUN_EXAMPLES: &str = "\
Examples:
  kreplay run --passes 5 -- ./my_app --size 1024
  kreplay run --kernel-include-regex '^gemm' --kernel-iteration-range '[2-4]' -- ./my_app
  kreplay run -d 'out/%hostname%/%pid%' -o 'rank%rank%' -f rocpd csv pftrace -- ./my_app
  kreplay run --runtime virtual --log-level debug -- ./my_app
  kreplay run --runtime virtual --virtual-agents gfx90a -- ./my_hip52_app
  kreplay run --pmc SQ_WAVES SQ_INSTS_VALU --pmc SQ_WAVES GRBM_COUNT -f csv -- ./my_app
  kreplay run -i counters.yaml -- ./my_app
  kreplay run --pmc-auto-split --pmc SQ_WAVES SQ_INSTS SQ_INSTS_VALU SQ_INSTS_SALU SQ_INSTS_SMEM SQ_INSTS_LDS SQ_INSTS_FLAT SQ_INSTS_BRANCH SQ_INSTS_VMEM_RD -- ./my_app
  kreplay run -L --runtime virtual

Outputs (in -d, base name from -o): <name>_results.db (rocpd, the default, as rocprofv3 writes
it), <name>_kernel_trace.csv and <name>_passes.csv (csv; <name>_kernel_stats.csv with --stats;
<name>_counter_collection.csv and <name>_counters.csv with counters),
<name>_results.json (json, rocprofv3's tool JSON), <name>_results.pftrace (pftrace, Perfetto
protobuf), <name>_trace.json (chrome, Chrome trace-event JSON), always <name>_summary.txt, and
the raw records in <name>_records/.
%pid% is the application's process id, %hostname% the host name, %rank% the first of
OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID that is set (0 otherwise).";

/// Kernel replay for AMD GPU profilers.
#[derive(Parser)]
#[command(name = "kreplay", version, about, after_help = concat!(
    "Examples:\n  kreplay demo\n  kreplay info --runtime virtual\n  kreplay run --passes 5 -- ./my_app\n\n",
    "Run `kreplay run --help` for the run options and the exit codes."
))]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an application with kernel replay and write the outputs.
    #[command(after_help = format!("{RUN_EXAMPLES}\n\n{}", exit_status::EXIT_CODE_TABLE))]
    Run(RunArgs),
    /// Show the agents, ISAs and memory pools of the selected runtime, or its counters.
    #[command(
        after_help = "Examples:\n  kreplay info\n  VHSA_AGENTS=gfx942,gfx90a kreplay info --runtime virtual\n  kreplay info --pmc --runtime virtual\n  kreplay info --pmc-check SQ_WAVES SQ_INSTS_VALU GRBM_COUNT"
    )]
    Info {
        /// Which HSA runtime to query.
        #[arg(long, value_enum, default_value = "auto")]
        runtime: RuntimeChoice,
        /// List every GPU agent's hardware counters (rocprofv3-avail's `info --pmc` layout,
        /// with the event id, per-pass limit and exactness of each).
        #[arg(long)]
        pmc: bool,
        /// Tell whether these counters can be collected together in one pass on every GPU
        /// agent, and which block overflows if not (exit code 80).
        #[arg(long, num_args = 1.., value_name = "COUNTER")]
        pmc_check: Option<Vec<String>>,
    },
    /// Run the bundled example application on the virtual runtime under replay.
    #[command(after_help = "Examples:\n  kreplay demo\n  kreplay demo -d demo-out --passes 3")]
    Demo {
        /// Where the outputs go (a new temporary directory by default).
        #[arg(short = 'd', long = "output-directory")]
        output_directory: Option<PathBuf>,
        /// Passes per replayed dispatch (1 to 10000).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=i64::from(kernel_selection::MAX_PASSES)))]
        passes: u32,
    },
    /// SQTT marker tools: decode function maps, analyse address traces.
    Sqtt(sqtt::SqttArgs),
}

#[derive(Args)]
struct RunArgs {
    /// Passes per replayed dispatch, 1 <= N <= 10000 (1 runs each dispatch once). Default 5;
    /// with counters, the number of counter groups (at least that many; pass p collects group
    /// p mod G).
    #[arg(long, value_name = "N")]
    passes: Option<String>,
    /// Hardware counters to collect, as rocprofv3 takes them: each --pmc is one group,
    /// collected in one pass of every replayed dispatch; names separated by spaces or commas.
    /// Groups are checked against every GPU agent's per-pass limits before the application
    /// starts.
    #[arg(long, num_args = 1.., action = ArgAction::Append, value_name = "COUNTER")]
    pmc: Vec<String>,
    /// The `--pmc` values grouped per flag (filled from the matches, see [`parse_args`]).
    #[arg(skip)]
    pmc_groups: Vec<Vec<String>>,
    /// Counter groups from a file, after the --pmc groups: .txt (one `pmc: A B` line per
    /// group) or .yaml/.yml/.json (rocprofv3's `jobs: [{pmc: [A, B]}, ...]`, or `pmc_groups`).
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    input: Option<PathBuf>,
    /// Let derived metrics combine inputs collected in different passes (labelled
    /// cross_pass); by default a derived metric uses inputs of one pass only.
    #[arg(long)]
    pmc_cross_pass: bool,
    /// Split a counter group that does not fit one pass on every GPU agent into groups that
    /// do (a derived metric kept with its inputs), instead of refusing it; the groups used
    /// are printed.
    #[arg(long)]
    pmc_auto_split: bool,
    /// List the hardware counters of every GPU agent of the selected runtime and exit
    /// (as `kreplay info --pmc`).
    #[arg(short = 'L', long = "list-avail")]
    list_avail: bool,
    /// Replay only kernels whose name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    kernel_include_regex: Option<String>,
    /// Do not replay kernels whose name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    kernel_exclude_regex: Option<String>,
    /// Replay only these occurrences of each kernel, counted from 0: "[a-b]", "[a]", "[a-b],[c-d]".
    #[arg(long, value_name = "RANGES")]
    kernel_iteration_range: Option<String>,
    /// Output directory; %pid%, %hostname% and %rank% are expanded.
    #[arg(
        short = 'd',
        long,
        default_value = "kreplay-output/%pid%",
        value_name = "DIR"
    )]
    output_directory: String,
    /// Base name of the output files; %pid%, %hostname% and %rank% are expanded.
    #[arg(short = 'o', long, default_value = "kreplay", value_name = "NAME")]
    output_file: String,
    /// Output formats, several at once: rocpd csv json pftrace chrome (`perfetto` = pftrace).
    #[arg(short = 'f', long, num_args = 1.., default_values = Format::DEFAULT, value_name = "FORMAT")]
    output_format: Vec<String>,
    /// With the csv format, also write rocprofv3's `<name>_kernel_stats.csv`.
    #[arg(long)]
    stats: bool,
    /// Log level of the tool library (error, warn, info, debug, trace; or a KREPLAY_LOG filter).
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<String>,
    /// Host and fine-grained memory a replayed kernel can reach: snapshot (restore it between
    /// passes when safe, else decline the replay), decline (never replay such a dispatch) or
    /// ignore (replay without restoring it; warned about in the outputs). Sets
    /// KREPLAY_HOST_MEMORY; default snapshot.
    #[arg(long, value_name = "POLICY", value_parser = ["snapshot", "decline", "ignore"])]
    host_memory: Option<String>,
    /// Which HSA runtime the application uses: auto picks the system runtime when /dev/kfd and
    /// libhsa-runtime64.so.1 exist, else the virtual runtime (vhsa).
    #[arg(long, value_enum, default_value = "auto")]
    runtime: RuntimeChoice,
    /// GPU agents of the virtual runtime, in VHSA_AGENTS syntax (gfx90a, or gfx942,gfx90a);
    /// checked before the application starts; virtual runtime only.
    #[arg(long, value_name = "LIST")]
    virtual_agents: Option<String>,
    /// After the application exits, wait up to this many seconds for the processes it started
    /// that still run, so that their records are complete (0: do not wait).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS", value_parser = parse_seconds)]
    wait_for_children: f64,
    /// The application and its arguments, after `--`.
    #[arg(
        last = true,
        required_unless_present = "list_avail",
        value_name = "APP"
    )]
    command: Vec<OsString>,
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=86_400.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "`{text}` is not a number of seconds from 0 to 86400"
        )),
    }
}

/// Parses the command line; each `--pmc` flag's values become one group.
fn parse_args<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let matches = Cli::command().try_get_matches_from(args)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    if let (Command::Run(a), Some(("run", run))) = (&mut cli.command, matches.subcommand()) {
        a.pmc_groups = pmc_groups(run);
    }
    Ok(cli)
}

/// The values of each `--pmc` occurrence, one group per flag.
fn pmc_groups(run: &ArgMatches) -> Vec<Vec<String>> {
    run.get_occurrences::<String>("pmc")
        .map(|occurrences| {
            occurrences
                .map(|values| values.cloned().collect())
                .collect()
        })
        .unwrap_or_default()
}

/// `kreplay run -L`: the counter listing of the runtime `run` would use, with its
/// `--virtual-agents`.
fn list_avail(a: &RunArgs) -> Result<(), exit_status::CliError> {
    if let Some(list) = &a.virtual_agents {
        let targets = virtual_topology::parse(list)?;
        let variable = match a.runtime {
            RuntimeChoice::SystemOnVkfd => virtual_topology::VKFD_VARIABLE,
            _ => virtual_topology::VARIABLE,
        };
        // SAFETY: the command line has not started any thread yet; nothing reads the
        // environment concurrently.
        unsafe { std::env::set_var(variable, targets.join(",")) };
    }
    info::run(
        a.runtime,
        &info::InfoRequest {
            pmc: true,
            pmc_check: None,
        },
    )
}

fn main() -> ExitCode {
    let cli = match parse_args(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit_status::USAGE
            } else {
                0
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Run(a) if a.list_avail => match list_avail(&a) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => e.report(),
        },
        Command::Run(a) => launch::command(&launch::RunOptions {
            passes: a.passes,
            pmc: a.pmc_groups,
            input: a.input,
            pmc_cross_pass: a.pmc_cross_pass,
            pmc_auto_split: a.pmc_auto_split,
            include: a.kernel_include_regex,
            exclude: a.kernel_exclude_regex,
            iteration_range: a.kernel_iteration_range,
            output_directory: a.output_directory,
            output_file: a.output_file,
            formats: a.output_format,
            stats: a.stats,
            log_level: a.log_level,
            host_memory: a.host_memory,
            runtime: a.runtime,
            virtual_agents: a.virtual_agents,
            wait_for_children: std::time::Duration::from_secs_f64(a.wait_for_children),
            command: a.command,
        }),
        Command::Info {
            runtime,
            pmc,
            pmc_check,
        } => match info::run(runtime, &info::InfoRequest { pmc, pmc_check }) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => e.report(),
        },
        Command::Demo {
            output_directory,
            passes,
        } => demo::run(output_directory, passes),
        Command::Sqtt(args) => sqtt::run(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        parse_args(std::iter::once("kreplay").chain(args.iter().copied()))
    }

    #[test]
    fn run_takes_options_in_rocprofv3_style() {
        let cli = parse(&[
            "run",
            "--passes",
            "3",
            "--kernel-include-regex",
            "^a",
            "--kernel-exclude-regex",
            "b$",
            "--kernel-iteration-range",
            "[1-2]",
            "-d",
            "out/%pid%",
            "-o",
            "x",
            "-f",
            "csv",
            "pftrace",
            "--log-level",
            "debug",
            "--runtime",
            "virtual",
            "--",
            "./app",
            "--flag",
            "v",
        ])
        .unwrap();
        let Command::Run(a) = cli.command else {
            panic!("not run")
        };
        assert_eq!(a.passes.as_deref(), Some("3"));
        assert_eq!(a.kernel_include_regex.as_deref(), Some("^a"));
        assert_eq!(a.kernel_exclude_regex.as_deref(), Some("b$"));
        assert_eq!(a.kernel_iteration_range.as_deref(), Some("[1-2]"));
        assert_eq!(
            (a.output_directory.as_str(), a.output_file.as_str()),
            ("out/%pid%", "x")
        );
        assert_eq!(a.output_format, vec!["csv", "pftrace"]);
        assert_eq!(a.runtime, RuntimeChoice::Virtual);
        assert_eq!(
            a.command,
            vec![OsString::from("./app"), "--flag".into(), "v".into()]
        );
    }

    #[test]
    fn run_defaults_and_required_app() {
        let Command::Run(a) = parse(&["run", "--", "app"]).unwrap().command else {
            panic!("not run")
        };
        assert_eq!(a.passes, None);
        assert!(a.pmc.is_empty() && a.input.is_none() && !a.list_avail);
        assert_eq!(a.output_format, vec!["rocpd"]);
        assert_eq!(a.runtime, RuntimeChoice::Auto);
        assert_eq!(a.wait_for_children, 30.0);
        assert_eq!(a.virtual_agents, None);
        assert!(parse(&["run"]).is_err());
        assert!(parse(&["run", "--wait-for-children", "-1", "--", "app"]).is_err());
        assert!(parse(&["run", "--wait-for-children", "nan", "--", "app"]).is_err());
        let Command::Run(a) = parse(&[
            "run",
            "--wait-for-children",
            "0.5",
            "--virtual-agents",
            "gfx90a",
            "--",
            "app",
        ])
        .unwrap()
        .command
        else {
            panic!("not run")
        };
        assert_eq!(
            (a.wait_for_children, a.virtual_agents.as_deref()),
            (0.5, Some("gfx90a"))
        );
        assert!(parse(&["demo", "--passes", "10000"]).is_ok());
        let err = parse(&["demo", "--passes", "10001"])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("10001") && err.contains("10000"), "{err}");
        assert!(parse(&["run", "--passes", "2"]).is_err());
    }

    #[test]
    fn pmc_flags_are_groups_and_list_avail_needs_no_application() {
        let Command::Run(a) = parse(&[
            "run",
            "--pmc",
            "SQ_WAVES",
            "SQ_INSTS_VALU",
            "--pmc",
            "GRBM_COUNT,SQ_WAVES",
            "-i",
            "groups.yaml",
            "--pmc-cross-pass",
            "--",
            "app",
        ])
        .unwrap()
        .command
        else {
            panic!("not run")
        };
        assert_eq!(
            a.pmc_groups,
            vec![
                vec!["SQ_WAVES".to_owned(), "SQ_INSTS_VALU".to_owned()],
                vec!["GRBM_COUNT,SQ_WAVES".to_owned()]
            ]
        );
        assert_eq!(a.input, Some(PathBuf::from("groups.yaml")));
        assert!(a.pmc_cross_pass);
        assert_eq!(a.command, vec![OsString::from("app")]);
        for list in [
            &["run", "-L"][..],
            &["run", "--list-avail", "--runtime", "virtual"],
        ] {
            let Command::Run(a) = parse(list).unwrap().command else {
                panic!("not run")
            };
            assert!(a.list_avail && a.command.is_empty());
        }
        assert!(
            parse(&["run", "--pmc", "--", "app"]).is_err(),
            "a --pmc needs a counter"
        );
        let Command::Info { pmc, pmc_check, .. } =
            parse(&["info", "--pmc-check", "SQ_WAVES", "GRBM_COUNT"])
                .unwrap()
                .command
        else {
            panic!("not info")
        };
        assert!(!pmc);
        assert_eq!(
            pmc_check,
            Some(vec!["SQ_WAVES".to_owned(), "GRBM_COUNT".to_owned()])
        );
    }

    #[test]
    fn help_has_examples_and_exit_codes() {
        let mut cmd = Cli::command();
        let help = cmd
            .find_subcommand_mut("run")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(help.contains("kreplay run --passes 5 -- ./my_app"));
        assert!(help.contains("71     output directory not writable"));
        cmd.debug_assert();
    }
}
