//! `kreplay demo`: runs the bundled example application on vhsa under replay and prints what
//! came out. Nothing is built at run time: the application is the `kreplay-demo-app` binary
//! installed beside `kreplay`.

use crate::exit_status::CliError;
use crate::installation::{self, RuntimeChoice};
use crate::launch::{self, RunOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs the demo into `output_dir` (a fresh temporary directory when `None`).
pub fn run(output_dir: Option<PathBuf>, passes: u32) -> ExitCode {
    let app = match installation::demo_app() {
        Ok(p) => p,
        Err(looked) => {
            eprintln!(
                "kreplay: error: the demo application was not found (looked for {looked}); build it with `cargo build -p kreplay-cli`"
            );
            return ExitCode::from(69);
        }
    };
    let dir = output_dir.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("kreplay-demo-{}", std::process::id()))
    });
    println!(
        "kreplay demo: running {} on the virtual runtime with {passes} passes per dispatch",
        app.display()
    );
    let opts = RunOptions {
        passes: Some(passes.to_string()),
        pmc: Vec::new(),
        input: None,
        pmc_cross_pass: false,
        pmc_auto_split: false,
        include: None,
        exclude: None,
        iteration_range: None,
        output_directory: dir.to_string_lossy().into_owned(),
        output_file: "kreplay".to_owned(),
        formats: vec!["rocpd".into(), "pftrace".into(), "csv".into()],
        stats: false,
        log_level: None,
        host_memory: None,
        runtime: RuntimeChoice::Virtual,
        virtual_agents: None,
        wait_for_children: std::time::Duration::from_secs(30),
        command: vec![app.into_os_string()],
    };
    match launch::run(&opts, true) {
        Ok(outcome) => {
            println!();
            print!("{}", outcome.summary);
            if outcome.code == 0 {
                println!(
                    "Each dispatch ran {passes} times on the same memory: kreplay saved what the kernel could write \
                     before the first pass and restored it before each later pass, so the application's results stayed right."
                );
            }
            println!();
            println!("Outputs in {}:", outcome.output_dir.display());
            for f in &outcome.files {
                println!("  {}", f.display());
            }
            let named = |suffix: &str| {
                outcome
                    .files
                    .iter()
                    .find(|f| f.to_string_lossy().ends_with(suffix))
                    .map(|f| f.display().to_string())
                    .unwrap_or_default()
            };
            println!(
                "Open {} in https://ui.perfetto.dev to see each dispatch with its passes, snapshot and restores.",
                named(".pftrace")
            );
            println!(
                "Query {} with sqlite3 or rocpd (rocpd's views kernels, top_kernels, busy; kreplay's kreplay_kernels, kreplay_passes).",
                named("_results.db")
            );
            ExitCode::from(outcome.code)
        }
        Err(e) => CliError::report(&e),
    }
}
