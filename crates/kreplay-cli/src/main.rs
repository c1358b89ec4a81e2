//! `kreplay`: the command line.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod sqtt;

/// Kernel replay for AMD GPU profilers.
#[derive(Parser)]
#[command(name = "kreplay", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// SQTT marker tools: decode function maps, analyse address traces.
    Sqtt(sqtt::SqttArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Sqtt(args) => sqtt::run(args),
    }
}
