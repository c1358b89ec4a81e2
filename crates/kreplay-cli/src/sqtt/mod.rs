//! `kreplay sqtt ...`: function-map decoding and address-trace analysis.

use clap::Args;
use std::process::ExitCode;

/// Arguments of `kreplay sqtt`.
#[derive(Args)]
pub struct SqttArgs {}

/// Runs `kreplay sqtt`.
pub fn run(_args: SqttArgs) -> ExitCode {
    ExitCode::FAILURE
}
