//! Library side of the `kreplay` command line: the parts reachable from tests, benchmarks and
//! fuzz targets.
//!
//! - [`launch`]: `kreplay run` (environment, child process, signals, outputs);
//! - [`counters`]: `--pmc`, `-i`, the counter listing and the check before the start;
//! - [`run_records`]: finding and reading the record files a run leaves;
//! - [`follow`]: reading them while the application runs, into the rocpd database;
//! - [`report`]: the rocpd database, CSV / JSON rows, the Perfetto and Chrome traces, the
//!   summary table;
//! - [`kernel_selection`], [`output_path`]: option checks, `%pid%`-style expansion, name limits;
//! - [`descendants`]: waiting for the processes the application started;
//! - [`virtual_topology`]: the `--virtual-agents` list;
//! - [`installation`]: finding the tool library and the runtimes, runtime selection;
//! - [`info`], [`demo`]: `kreplay info` and `kreplay demo`;
//! - [`exit_status`]: exit codes and errors;
//! - [`sqtt`]: `kreplay sqtt`.
//!
//! Everything here is meant for one command-line process: functions print to stderr and may
//! change process-wide state (signal dispositions in [`launch`], the environment in [`info`]).
#![deny(missing_docs)]

pub mod counters;
pub mod demo;
pub mod descendants;
pub mod exit_status;
pub mod follow;
pub mod info;
pub mod installation;
pub mod kernel_selection;
pub mod launch;
pub mod output_path;
pub mod report;
pub mod run_records;
pub mod sqtt;
pub mod virtual_topology;
