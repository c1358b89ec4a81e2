//! `kreplay run`: configure the tool's built-in client through the environment, launch the
//! application with the tool loaded, forward signals to it, then turn the records it left into
//! the output files and the summary.

use crate::counters::groups::{self, CounterGroups};
use crate::descendants;
use crate::exit_status::{CliError, signal_name};
use crate::follow;
use crate::installation::{self, Runtime, RuntimeChoice};
use crate::kernel_selection;
use crate::output_path::{self, TemplateValues};
use crate::report::{self, Format, summary};
use crate::run_records;
use crate::virtual_topology;
use hsa_abi::tools_lib;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Everything `kreplay run` needs, already taken from the command line.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Passes per replayed dispatch (text, checked here); `None`: 5, or the number of counter
    /// groups.
    pub passes: Option<String>,
    /// `--pmc` flags, each one counter group (values as given, split here).
    pub pmc: Vec<Vec<String>>,
    /// `-i FILE`: counter groups from rocprofv3's input file.
    pub input: Option<PathBuf>,
    /// `--pmc-cross-pass`: derived metrics may combine passes.
    pub pmc_cross_pass: bool,
    /// `--pmc-auto-split`: groups that do not fit one pass are split into groups that do.
    pub pmc_auto_split: bool,
    /// Kernel include filter.
    pub include: Option<String>,
    /// Kernel exclude filter.
    pub exclude: Option<String>,
    /// Iteration range text.
    pub iteration_range: Option<String>,
    /// Output directory template.
    pub output_directory: String,
    /// Output file base-name template.
    pub output_file: String,
    /// Output formats (names, checked here).
    pub formats: Vec<String>,
    /// Write rocprofv3's statistics files (`--stats`) with the CSV output.
    pub stats: bool,
    /// Log filter for the tool library (`KREPLAY_LOG`).
    pub log_level: Option<String>,
    /// `KREPLAY_HOST_MEMORY` for the application (`None`: the caller's environment decides).
    pub host_memory: Option<String>,
    /// Which runtime the application uses.
    pub runtime: RuntimeChoice,
    /// The virtual runtime's GPU agents (`VHSA_AGENTS` syntax), checked here.
    pub virtual_agents: Option<String>,
    /// How long to wait, after the application exited, for the processes it started.
    pub wait_for_children: std::time::Duration,
    /// The application and its arguments.
    pub command: Vec<OsString>,
}

/// The new `HSA_TOOLS_LIB`: the existing value with `tool` appended, unless already listed.
pub fn tools_lib_value(existing: Option<&str>, tool: &str) -> String {
    match existing.map(str::trim).filter(|v| !v.is_empty()) {
        Some(v)
            if tools_lib::parse(v)
                .unwrap_or_default()
                .iter()
                .any(|n| n == tool) =>
        {
            v.to_owned()
        }
        Some(v) => format!("{v} {}", tools_lib::quote(tool)),
        None => tools_lib::quote(tool),
    }
}

/// Resolves the application like `execvp`: a name with a `/` is a path, anything else is
/// searched on `path_var`.
pub fn resolve_app(app: &OsStr, path_var: Option<&OsStr>) -> Result<PathBuf, CliError> {
    let name = app.to_string_lossy().into_owned();
    if name.is_empty() {
        return Err(CliError::AppNotFound(name));
    }
    let candidate = if name.contains('/') {
        let p = PathBuf::from(app);
        if !p.exists() {
            return Err(CliError::AppNotFound(name));
        }
        p
    } else {
        let dirs: Vec<PathBuf> = path_var
            .map(|v| std::env::split_paths(v).collect())
            .unwrap_or_default();
        let found: Vec<PathBuf> = dirs
            .iter()
            .map(|d| d.join(app))
            .filter(|p| p.is_file())
            .collect();
        match found.iter().find(|p| is_executable(p)).or(found.first()) {
            Some(p) => p.clone(),
            None => return Err(CliError::AppNotFound(name)),
        }
    };
    if candidate.is_dir() {
        return Err(CliError::AppNotExecutable {
            path: candidate,
            reason: "it is a directory".into(),
        });
    }
    if !is_executable(&candidate) {
        return Err(CliError::AppNotExecutable {
            path: candidate,
            reason: "it has no execute permission (chmod +x)".into(),
        });
    }
    Ok(candidate)
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The checked configuration of one run.
struct Plan {
    passes: u32,
    formats: Vec<Format>,
    range: Option<String>,
    app: PathBuf,
    tool: PathBuf,
    runtime: Runtime,
    virtual_agents: Option<String>,
    counters: Option<CounterGroups>,
}

/// Passes when neither `--passes` nor counters say otherwise.
const DEFAULT_PASSES: &str = "5";

fn plan(opts: &RunOptions) -> Result<Plan, CliError> {
    let mut counters = CounterGroups::from_options(&opts.pmc, opts.input.as_deref())?;
    if (opts.pmc_cross_pass || opts.pmc_auto_split) && counters.is_none() {
        eprintln!(
            "kreplay: note: --pmc-cross-pass and --pmc-auto-split have no effect without counters (--pmc or -i)"
        );
    }
    let mut passes = match &counters {
        Some(groups) => groups.passes(opts.passes.as_deref())?,
        None => kernel_selection::check_passes(opts.passes.as_deref().unwrap_or(DEFAULT_PASSES))?,
    };
    if let Some(p) = &opts.include {
        kernel_selection::check_regex("--kernel-include-regex", p)?;
    }
    if let Some(p) = &opts.exclude {
        kernel_selection::check_regex("--kernel-exclude-regex", p)?;
    }
    let range = match &opts.iteration_range {
        Some(text) => Some(kernel_selection::format_iteration_range(
            &kernel_selection::parse_iteration_range(text)?,
        )),
        None => None,
    };
    let formats = Format::parse_list(&opts.formats)?;
    let app_name = opts
        .command
        .first()
        .ok_or_else(|| CliError::AppNotFound(String::new()))?;
    let app = resolve_app(app_name, std::env::var_os("PATH").as_deref())?;
    let tool = installation::tool_library()?;
    if let (Some(list), RuntimeChoice::System) = (&opts.virtual_agents, opts.runtime) {
        return Err(CliError::BadVirtualAgents {
            list: list.clone(),
            reason: "a virtual topology applies to the virtual runtime only, and --runtime system was given; use --runtime virtual, or drop --virtual-agents".into(),
        });
    }
    let runtime = installation::select(opts.runtime, true)?;
    let virtual_agents = match &opts.virtual_agents {
        Some(list) => {
            let kreplay = std::env::current_exe().map_err(|e| CliError::BadVirtualAgents {
                list: list.clone(),
                reason: format!(
                    "cannot find the kreplay executable to ask the virtual runtime ({e})"
                ),
            })?;
            Some(virtual_topology::check(list, &runtime, &kreplay)?.join(","))
        }
        None => None,
    };
    if let Some(groups) = counters.as_mut() {
        let (agents, collection) = counter_runtime(&runtime, virtual_agents.as_deref())?;
        if opts.pmc_auto_split {
            *groups = groups.split_to_fit(&agents)?;
            passes = groups.passes(opts.passes.as_deref())?;
            eprintln!(
                "kreplay: --pmc-auto-split: {} group{}: {}",
                groups.groups().len(),
                if groups.groups().len() == 1 { "" } else { "s" },
                groups.environment_value().trim_end().replace('\n', "; ")
            );
        }
        groups.check_runtime(&agents, &collection)?;
    }
    Ok(Plan {
        passes,
        formats,
        range,
        app,
        tool,
        runtime,
        virtual_agents,
        counters,
    })
}

/// The variable of `runtime` that carries a virtual topology.
fn topology_variable(runtime: &Runtime) -> &'static str {
    match runtime {
        Runtime::SystemOnVkfd { .. } => virtual_topology::VKFD_VARIABLE,
        _ => virtual_topology::VARIABLE,
    }
}

/// The GPU agents of `runtime` and how it would collect counters, asked before the
/// application starts in a separate process with the application's library path and topology.
fn counter_runtime(
    runtime: &Runtime,
    virtual_agents: Option<&str>,
) -> Result<
    (
        Vec<crate::counters::agent::GpuAgent>,
        crate::counters::collection::Collection,
    ),
    CliError,
> {
    let kreplay = std::env::current_exe().map_err(|e| {
        CliError::RuntimeQuery(format!(
            "cannot find the kreplay executable to ask the runtime about its counters ({e})"
        ))
    })?;
    let mut cmd = Command::new(&kreplay);
    cmd.arg("info").env_remove("HSA_TOOLS_LIB");
    match runtime {
        Runtime::System(_) => cmd.args(["--runtime", "system"]),
        Runtime::Virtual(dir) => cmd
            .args(["--runtime", "virtual"])
            .env("KREPLAY_VHSA_DIR", dir),
        Runtime::SystemOnVkfd { thunk_dir, .. } => cmd
            .args(["--runtime", "system-on-vkfd"])
            .env("KREPLAY_VKFD_DIR", thunk_dir),
    };
    if let Some(list) = virtual_agents {
        cmd.env(topology_variable(runtime), list);
    }
    cmd.env("LD_LIBRARY_PATH", library_path(runtime));
    let out = cmd.output().map_err(|e| {
        CliError::RuntimeQuery(format!(
            "could not ask the runtime about its counters ({}: {e})",
            kreplay.display()
        ))
    })?;
    if !out.status.success() {
        return Err(CliError::RuntimeQuery(format!(
            "the runtime could not be queried for its counters: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(crate::info::read_report(&String::from_utf8_lossy(
        &out.stdout,
    )))
}

/// The application's `LD_LIBRARY_PATH`: the runtime's directory first, then the caller's.
fn library_path(runtime: &Runtime) -> OsString {
    let mut paths: Vec<PathBuf> = runtime
        .library_dir()
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    if let Some(existing) = std::env::var_os("LD_LIBRARY_PATH") {
        paths.extend(std::env::split_paths(&existing));
    }
    std::env::join_paths(paths).unwrap_or_default()
}

/// The child's pid while it runs, for the signal handler.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// Set once the application has exited: a signal then ends the wait for its descendants.
static AFTER_APP: AtomicBool = AtomicBool::new(false);
/// A signal that arrived after the application exited (or could no longer be delivered to it):
/// it ends the wait for the application's descendants.
static STOP_WAITING: AtomicI32 = AtomicI32::new(0);
/// A signal that arrived before the child's pid was known, forwarded once it is.
static PENDING: AtomicI32 = AtomicI32::new(0);

/// Signals passed on to the application.
const FORWARDED: [i32; 6] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

extern "C" fn forward_signal(sig: i32, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Only async-signal-safe work here: an atomic load and kill(2). A signal from the terminal
    // (si_code > 0, sent by the kernel to the whole foreground process group) already reached
    // the application; a signal sent to kreplay alone (kill, si_code <= 0) is passed on.
    if AFTER_APP.load(Ordering::SeqCst) {
        STOP_WAITING.store(sig, Ordering::SeqCst);
        return;
    }
    // SAFETY: the kernel passes a valid siginfo_t for a handler installed with SA_SIGINFO.
    let from_process = info.is_null() || unsafe { (*info).si_code } <= 0;
    if !from_process {
        return;
    }
    let mut pid = CHILD.load(Ordering::SeqCst);
    if pid <= 0 {
        // Not started yet: leave the signal for the launcher, unless it started meanwhile.
        PENDING.store(sig, Ordering::SeqCst);
        pid = CHILD.load(Ordering::SeqCst);
        if pid <= 0 || PENDING.swap(0, Ordering::SeqCst) == 0 {
            return;
        }
    }
    // SAFETY: kill has no memory-safety requirements.
    if unsafe { libc::kill(pid, sig) } != 0 {
        // The application was reaped a moment ago: the signal is for the wait that follows.
        STOP_WAITING.store(sig, Ordering::SeqCst);
    }
}

fn install_forwarding() {
    for sig in FORWARDED {
        // SAFETY: a zeroed sigaction is a valid starting value; the handler only calls
        // async-signal-safe functions and never unwinds.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = forward_signal as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// What happened to the application.
#[derive(Debug)]
pub struct RunOutcome {
    /// The exit code `kreplay` returns.
    pub code: u8,
    /// The directory the outputs went to.
    pub output_dir: PathBuf,
    /// The files written.
    pub files: Vec<PathBuf>,
    /// The summary table.
    pub summary: String,
}

/// The suffixes of every file and directory written for `formats` after the `-o` base name.
fn output_suffixes(formats: &[Format]) -> Vec<String> {
    let mut suffixes: Vec<String> = formats.iter().flat_map(|f| f.file_names("")).collect();
    suffixes.push(SUMMARY_SUFFIX.to_owned());
    suffixes.push(RECORDS_SUFFIX.to_owned());
    suffixes
}

/// The summary file after the base name (as `report::write_outputs` names it).
const SUMMARY_SUFFIX: &str = "_summary.txt";
/// The raw records' directory after the base name.
const RECORDS_SUFFIX: &str = "_records";

/// Runs the application under replay and writes the outputs; the summary is printed on stderr
/// unless `quiet`.
pub fn run(opts: &RunOptions, quiet: bool) -> Result<RunOutcome, CliError> {
    let plan = plan(opts)?;
    let staging = Staging::prepare(opts, &plan)?;
    let cmd = application_command(opts, &plan, &staging.dir);
    let child = launch(cmd, &plan, &staging.dir)?;
    let child_pid = child.id();
    // The pid is known: create the final directory now, while the application runs, so that a
    // problem is known early; the records stay in the staging directory until the end.
    let values = TemplateValues::current(child_pid);
    let output_dir = PathBuf::from(output_path::expand(&opts.output_directory, &values));
    let base = output_path::expand(&opts.output_file, &values);
    let dir_ready = output_path::ensure_writable_dir(&output_dir);
    let run_info = report::rocpd::RunInfo {
        launcher_pid: std::process::id(),
        app: Some((child_pid, command_line(&opts.command))),
        passes: plan.passes,
        stats: opts.stats,
    };
    // The database fills while the application runs, so it holds what completed even if this
    // process is killed.
    let live = plan
        .formats
        .contains(&Format::Rocpd)
        .then(|| follow::open_live(&staging.dir, &output_dir, &base, &run_info))
        .flatten();
    let status = wait_for(child, &plan)?;
    // Without the subreaper (an old kernel), orphans go to init and only the record files'
    // writers can be waited for.
    let children = descendants::wait(opts.wait_for_children, &staging.dir, || {
        Some(STOP_WAITING.load(Ordering::SeqCst)).filter(|&s| s != 0)
    });
    // Processes that outlived the application have written their records now: close the
    // database, then write the other outputs from all the records.
    let live_db = live.and_then(follow::finish_live);
    let target = ReportTarget {
        output_dir: &output_dir,
        base: &base,
        run_info: &run_info,
    };
    let written = write_reports(&plan, &staging.dir, &target, live_db, dir_ready)
        .map_err(|e| keeping_records(e, &staging.dir, &staging.prefix, child_pid));
    let (collected, files) = written?;
    keep_records(
        &staging.dir,
        &output_dir.join(format!("{base}{RECORDS_SUFFIX}")),
    );
    let summary_text = summary::table(&summary::per_kernel(&collected.dispatches));
    if !quiet {
        eprint!("\n{summary_text}");
        for f in &files {
            eprintln!("kreplay: wrote {}", f.display());
        }
    }
    warn_about_records(&collected, &children, opts, &plan);
    Ok(RunOutcome {
        code: exit_code(status, collected.dispatches.len()),
        output_dir,
        files,
        summary: summary_text,
    })
}

/// Where the records go while the application runs, before its pid names the final directory.
struct Staging {
    /// Everything before the first `%pid%` component of the output directory.
    prefix: PathBuf,
    /// The staging directory inside it.
    dir: PathBuf,
}

impl Staging {
    /// Checks the output names and creates the staging directory.
    fn prepare(opts: &RunOptions, plan: &Plan) -> Result<Staging, CliError> {
        // The names are checked with the widest pid of this machine in place of %pid%, so that
        // whatever pid the application gets, its names fit.
        let early = TemplateValues::current(std::process::id());
        let widest = TemplateValues {
            pid: output_path::widest_pid(),
            ..early.clone()
        };
        let suffixes = output_suffixes(&plan.formats);
        let suffix_refs: Vec<&str> = suffixes.iter().map(String::as_str).collect();
        output_path::check_names(
            Path::new(&output_path::expand(&opts.output_directory, &widest)),
            &output_path::expand(&opts.output_file, &widest),
            &suffix_refs,
        )?;
        // Everything before the first `%pid%` component is known now: prove it writable and
        // keep the records there until the application's pid names the final directory.
        let prefix = PathBuf::from(output_path::expand(
            &output_path::fixed_prefix(&opts.output_directory).to_string_lossy(),
            &early,
        ));
        output_path::ensure_writable_dir(&prefix)?;
        let dir = prefix.join(format!(".kreplay-records-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| CliError::OutputNotWritable {
            path: dir.clone(),
            reason: e.to_string(),
        })?;
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        Ok(Staging { prefix, dir })
    }
}

/// The tool's fatal bound on a replay pass (milliseconds).
const DRAIN_TIMEOUT_VARIABLE: &str = "KREPLAY_DRAIN_TIMEOUT_MS";

/// The fatal bound a replay pass gets on the runtimes whose kernels run on the CPU emulator
/// (vhsa, and the system runtime on vkfd), where a kernel a GPU runs in a tenth of a second
/// can take minutes: 30 minutes rather than the tool's 60 s, unless the caller chose a bound.
fn emulated_drain_timeout(runtime: &Runtime, caller: Option<&OsStr>) -> Option<&'static str> {
    let emulated = !matches!(runtime, Runtime::System(_));
    (emulated && caller.is_none()).then_some("1800000")
}

/// The application's command with the tool, the replay settings and the runtime in its
/// environment.
fn application_command(opts: &RunOptions, plan: &Plan, staging: &Path) -> Command {
    let mut cmd = Command::new(&plan.app);
    cmd.args(&opts.command[1..]);
    let tool = plan.tool.to_string_lossy().into_owned();
    cmd.env(
        "HSA_TOOLS_LIB",
        tools_lib_value(std::env::var("HSA_TOOLS_LIB").ok().as_deref(), &tool),
    );
    // ROCR skips HSA_TOOLS_LIB once a rocprofiler-sdk tool (rocprofv3) has registered, unless
    // this is set: with it, replay keeps working under rocprofv3.
    cmd.env("HSA_TOOLS_ROCPROFILER_V1_TOOLS", "1");
    if std::env::var_os("HSA_TOOLS_REPORT_LOAD_FAILURE").is_none() {
        cmd.env("HSA_TOOLS_REPORT_LOAD_FAILURE", "1");
    }
    cmd.env("KREPLAY_PASSES", plan.passes.to_string());
    cmd.env("KREPLAY_OUTPUT_DIR", staging);
    // The reports have a row per pass of every dispatch, also those run once: time them too,
    // unless the caller decided otherwise.
    if std::env::var_os("KREPLAY_TIME_ALL").is_none() {
        cmd.env("KREPLAY_TIME_ALL", "1");
    }
    for (var, value) in [
        ("KREPLAY_KERNEL_INCLUDE", &opts.include),
        ("KREPLAY_KERNEL_EXCLUDE", &opts.exclude),
        ("KREPLAY_KERNEL_ITERATION_RANGE", &plan.range),
        ("KREPLAY_LOG", &opts.log_level),
    ] {
        match value {
            Some(v) => cmd.env(var, v),
            None => cmd.env_remove(var),
        };
    }
    if let Some(policy) = &opts.host_memory {
        cmd.env("KREPLAY_HOST_MEMORY", policy);
    }
    let caller_bound = std::env::var_os(DRAIN_TIMEOUT_VARIABLE);
    if let Some(bound) = emulated_drain_timeout(&plan.runtime, caller_bound.as_deref()) {
        cmd.env(DRAIN_TIMEOUT_VARIABLE, bound);
    }
    if let Some(list) = &plan.virtual_agents {
        cmd.env(topology_variable(&plan.runtime), list);
    }
    if plan.runtime.library_dir().is_some() {
        cmd.env("LD_LIBRARY_PATH", library_path(&plan.runtime));
    }
    counter_environment(&mut cmd, opts, plan);
    cmd
}

/// The counter groups and the cross-pass switch for the tool (removed when not asked for).
fn counter_environment(cmd: &mut Command, opts: &RunOptions, plan: &Plan) {
    match &plan.counters {
        Some(groups) => cmd.env(groups::VARIABLE, groups.environment_value()),
        None => cmd.env_remove(groups::VARIABLE),
    };
    if plan.counters.is_some() && opts.pmc_cross_pass {
        cmd.env(groups::CROSS_PASS_VARIABLE, "1");
    } else {
        cmd.env_remove(groups::CROSS_PASS_VARIABLE);
    }
}

/// Starts the application with signals forwarded to it and its orphans adopted.
fn launch(mut cmd: Command, plan: &Plan, staging: &Path) -> Result<std::process::Child, CliError> {
    install_forwarding();
    if !descendants::adopt_orphans() {
        eprintln!(
            "kreplay: warning: cannot become the subreaper of the application's processes ({}); processes it starts that outlive it are waited for only while they hold a record file open",
            std::io::Error::last_os_error()
        );
    }
    let child = cmd.spawn().map_err(|e| {
        let _ = std::fs::remove_dir_all(staging);
        CliError::Launch {
            path: plan.app.clone(),
            reason: e.to_string(),
        }
    })?;
    let child_pid = child.id();
    CHILD.store(child_pid as i32, Ordering::SeqCst);
    let early_signal = PENDING.swap(0, Ordering::SeqCst);
    if early_signal != 0 {
        // SAFETY: kill has no memory-safety requirements.
        unsafe { libc::kill(child_pid as i32, early_signal) };
    }
    Ok(child)
}

/// Waits for the application to end (retrying interrupted waits).
fn wait_for(
    mut child: std::process::Child,
    plan: &Plan,
) -> Result<std::process::ExitStatus, CliError> {
    let status = loop {
        match child.wait() {
            Ok(s) => break Ok(s),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => break Err(e),
        }
    };
    AFTER_APP.store(true, Ordering::SeqCst);
    CHILD.store(0, Ordering::SeqCst);
    status.map_err(|e| CliError::Launch {
        path: plan.app.clone(),
        reason: e.to_string(),
    })
}

/// Where the reports of a run go.
struct ReportTarget<'a> {
    output_dir: &'a Path,
    base: &'a str,
    run_info: &'a report::rocpd::RunInfo,
}

/// Reads the records and writes every output into the output directory once it is known to
/// be ready (the live database, when there is one, is already written and listed first).
fn write_reports(
    plan: &Plan,
    staging: &Path,
    target: &ReportTarget<'_>,
    live_db: Option<PathBuf>,
    output_dir_ready: Result<(), CliError>,
) -> Result<(run_records::Collected, Vec<PathBuf>), CliError> {
    let collected = run_records::collect(staging)?;
    output_dir_ready?;
    let app_label = plan
        .app
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let remaining: Vec<Format> = plan
        .formats
        .iter()
        .copied()
        .filter(|f| live_db.is_none() || *f != Format::Rocpd)
        .collect();
    let mut files = report::write_outputs(
        target.output_dir,
        target.base,
        &remaining,
        &collected.dispatches,
        &app_label,
        target.run_info,
    )?;
    if let Some(db) = live_db {
        files.insert(0, db);
    }
    Ok((collected, files))
}

/// Warns about malformed or incomplete records, processes left running, and a run without
/// dispatch records.
fn warn_about_records(
    collected: &run_records::Collected,
    children: &descendants::Outcome,
    opts: &RunOptions,
    plan: &Plan,
) {
    if collected.malformed_lines > 0 {
        eprintln!(
            "kreplay: warning: skipped {} malformed record lines",
            collected.malformed_lines
        );
    }
    report_descendants(
        children,
        collected.incomplete_passes,
        opts.wait_for_children,
    );
    if collected.dispatches.is_empty() {
        eprintln!(
            "kreplay: warning: no dispatch records: the application dispatched no kernels, or the tool library did not load ({})",
            plan.tool.display()
        );
        if matches!(plan.runtime, Runtime::Virtual(_))
            && let Some(note) =
                virtual_topology::no_device_note(&plan.app, plan.virtual_agents.as_deref())
        {
            eprintln!("{note}");
        }
    }
}

/// The exit code `kreplay` returns for the application's status (128 + signal when killed).
fn exit_code(status: std::process::ExitStatus, dispatches: usize) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(sig)) => {
            eprintln!(
                "kreplay: the application was killed by {} ({sig}){}; the outputs hold the {dispatches} dispatches completed before it",
                signal_name(sig),
                if status.core_dumped() {
                    ", core dumped"
                } else {
                    ""
                },
            );
            (128 + sig) as u8
        }
        (None, None) => 1,
    }
}

/// Warns about processes of the application still running when `kreplay` stopped waiting, and
/// about pass records whose dispatch record never came.
fn report_descendants(
    children: &descendants::Outcome,
    incomplete_passes: usize,
    bound: std::time::Duration,
) {
    let running = &children.still_running;
    if !running.is_empty() {
        let pids = running
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let why = match children.interrupted_by {
            Some(sig) => format!("when {} stopped the wait", signal_name(sig)),
            None => format!(
                "after waiting {} s (--wait-for-children)",
                bound.as_secs_f64()
            ),
        };
        eprintln!(
            "kreplay: warning: {} process{} started by the application still run{} {why} (pid {pids}); the outputs hold only the records written so far, and records written later are missing from them; give --wait-for-children with more seconds to wait longer",
            running.len(),
            if running.len() == 1 { "" } else { "es" },
            if running.len() == 1 { "s" } else { "" },
        );
    }
    if incomplete_passes > 0 {
        eprintln!(
            "kreplay: warning: {incomplete_passes} pass record{} belong to dispatches whose dispatch record is missing (a process ended or was still running in the middle of a dispatch); they are left out of the outputs",
            if incomplete_passes == 1 { "" } else { "s" }
        );
    }
}

/// After a failure to write the outputs: the records must not stay hidden. The staging
/// directory is renamed to a visible `kreplay-records-<app pid>` beside it, and the error says
/// where the records are.
fn keeping_records(error: CliError, staging: &Path, prefix: &Path, app_pid: u32) -> CliError {
    let visible = prefix.join(format!("kreplay-records-{app_pid}"));
    let kept = match std::fs::rename(staging, &visible) {
        Ok(()) => std::path::absolute(&visible).unwrap_or(visible),
        Err(_) => staging.to_owned(),
    };
    let note = format!(
        "; the records of this run are kept in {} (kreplay-<pid>.jsonl files, see formats.md)",
        kept.display()
    );
    match error {
        CliError::Io { what, path, reason } => CliError::Io {
            what,
            path,
            reason: reason + &note,
        },
        CliError::OutputNotWritable { path, reason } => CliError::OutputNotWritable {
            path,
            reason: reason + &note,
        },
        other => CliError::Io {
            what: "writing the outputs",
            path: kept,
            reason: format!("{other}{note}"),
        },
    }
}

/// The command line as one string, each argument quoted when it needs it.
fn command_line(command: &[OsString]) -> String {
    command
        .iter()
        .map(|a| tools_lib::quote(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Moves the raw record files next to the outputs (`<base>_records/`); on failure they stay
/// where they are and the place is printed.
fn keep_records(staging: &Path, dest: &Path) {
    let moved = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(dest)?;
        for file in std::fs::read_dir(staging)? {
            let file = file?.path();
            if let Some(name) = file.file_name() {
                let target = dest.join(name);
                if std::fs::rename(&file, &target).is_err() {
                    std::fs::copy(&file, &target)?;
                    std::fs::remove_file(&file)?;
                }
            }
        }
        std::fs::remove_dir(staging)
    })();
    if let Err(e) = moved {
        eprintln!(
            "kreplay: warning: the raw records stay in {} ({e})",
            staging.display()
        );
    }
}

/// `kreplay run` as a command: the exit code of the application or of the error.
pub fn command(opts: &RunOptions) -> ExitCode {
    match run(opts, false) {
        Ok(outcome) => ExitCode::from(outcome.code),
        Err(e) => e.report(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hsa_tools_lib_appends_once() {
        assert_eq!(tools_lib_value(None, "/k/lib.so"), "/k/lib.so");
        assert_eq!(tools_lib_value(Some("  "), "/k/lib.so"), "/k/lib.so");
        assert_eq!(
            tools_lib_value(Some("librocprofiler-sdk-tool.so"), "/my k/lib.so"),
            "librocprofiler-sdk-tool.so \"/my k/lib.so\""
        );
        assert_eq!(
            tools_lib_value(Some("a.so \"/my k/lib.so\""), "/my k/lib.so"),
            "a.so \"/my k/lib.so\""
        );
        assert_eq!(
            tools_lib::parse("a.so  b\\ c.so \"d e.so\"").unwrap(),
            vec!["a.so", "b c.so", "d e.so"]
        );
    }

    #[test]
    fn emulated_runtimes_get_a_longer_pass_bound_unless_the_caller_set_one() {
        let virt = Runtime::Virtual(PathBuf::from("v"));
        let on_vkfd = Runtime::SystemOnVkfd {
            library: PathBuf::from("r"),
            thunk_dir: PathBuf::from("t"),
        };
        assert_eq!(emulated_drain_timeout(&virt, None), Some("1800000"));
        assert_eq!(emulated_drain_timeout(&on_vkfd, None), Some("1800000"));
        assert_eq!(
            emulated_drain_timeout(&virt, Some(OsStr::new("5000"))),
            None
        );
        let system = Runtime::System(PathBuf::from("r"));
        assert_eq!(emulated_drain_timeout(&system, None), None);
    }

    #[test]
    fn applications_resolve_like_execvp() {
        let dir = std::env::temp_dir().join(format!("kreplay-resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("tool-app");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let plain = dir.join("plain-file");
        std::fs::write(&plain, "").unwrap();
        let path_var = dir.as_os_str();
        assert_eq!(
            resolve_app(OsStr::new("tool-app"), Some(path_var)).unwrap(),
            exe
        );
        assert_eq!(resolve_app(exe.as_os_str(), None).unwrap(), exe);
        assert_eq!(
            resolve_app(OsStr::new("missing-app"), Some(path_var))
                .unwrap_err()
                .exit_code(),
            69
        );
        assert_eq!(
            resolve_app(dir.join("nope").as_os_str(), None)
                .unwrap_err()
                .exit_code(),
            69
        );
        let err = resolve_app(plain.as_os_str(), None).unwrap_err();
        assert_eq!(err.exit_code(), 70);
        assert!(err.to_string().contains("execute permission"));
        assert_eq!(
            resolve_app(dir.as_os_str(), None).unwrap_err().exit_code(),
            70
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
