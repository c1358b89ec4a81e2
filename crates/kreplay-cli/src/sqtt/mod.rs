//! `kreplay sqtt ...`: function-map decoding and address-trace analysis.
//!
//! `funcmap` prints the `.sqtt_funcmap` table of a code object, bundle or HIP executable;
//! `memtrace` analyses per-lane address traces in shaderdata records; `timeline` and `flame`
//! draw the marker scopes of shaderdata records as a Perfetto trace and a flame graph; `decode`
//! prints each wave's marker sequence. Formats are described in `docs/sqtt.md` ("Decoding").

pub mod address_trace;
pub mod decode;
pub mod device_code;
pub mod flame;
pub mod funcmap;
pub mod report;
pub mod scopes;
pub mod shaderdata;
pub mod timeline;
mod views;

use address_trace::Geometry;
use clap::{Args, Subcommand};
use device_code::{BundleError, BundledCodeObject};
use funcmap::{Funcmap, FuncmapError};
use report::{MemtraceContext, ResolvedMap};
use shaderdata::{RecordError, RecordFormat};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `kreplay sqtt`.
#[derive(Args, Debug)]
pub struct SqttArgs {
    #[command(subcommand)]
    command: SqttCommand,
}

#[derive(Subcommand, Debug)]
enum SqttCommand {
    /// Print the `.sqtt_funcmap` table of a code object, offload bundle or HIP executable.
    Funcmap(FuncmapArgs),
    /// Analyse per-lane address traces in shaderdata records.
    Memtrace(MemtraceArgs),
    /// Write the marker scopes of shaderdata records as a Perfetto trace (one track per CU,
    /// SIMD and wave).
    Timeline(views::TimelineArgs),
    /// Write folded stacks and an SVG flame graph of the marker scopes, weighted by cycles.
    Flame(views::FlameArgs),
    /// Print each wave's marker sequence (enter, exit, point, data) with names, nesting and
    /// scope durations, as text or JSON.
    Decode(decode::DecodeArgs),
}

#[derive(Args, Debug)]
struct FuncmapArgs {
    /// AMDGPU code object, HIP executable/object (`.hip_fatbin`), or offload bundle.
    file: PathBuf,
    /// Demangle function and kernel names (Itanium ABI).
    #[arg(long)]
    demangle: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct MemtraceArgs {
    /// Shaderdata records: JSON array, JSON lines or CSV.
    records: PathBuf,
    /// Code object, HIP executable or bundle holding the `.sqtt_funcmap` of the traced code.
    #[arg(long)]
    funcmap: PathBuf,
    /// Choose the code object whose bundle entry id contains this text.
    #[arg(long)]
    target: Option<String>,
    /// Record file form.
    #[arg(long, value_enum, default_value = "auto")]
    format: RecordFormat,
    /// Cache line size in bytes.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    line_size: u64,
    /// Assumed bytes accessed by each active lane.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=4096))]
    access_size: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Everything that makes a `kreplay sqtt` command fail. Messages name the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum SqttError {
    /// A file that cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// No device code could be found.
    #[error("{path}: {source}")]
    DeviceCode {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: BundleError,
    },
    /// Code objects without a `.sqtt_funcmap` section.
    #[error(
        "{path}: no .sqtt_funcmap section{what}; build the device code with the marker pass \
         (clang -fpass-plugin=libsqttinstrumentpass.so -DSQTT_ENABLED=1)"
    )]
    MissingFuncmap {
        /// The file.
        path: PathBuf,
        /// Which code objects, when from a bundle.
        what: String,
    },
    /// A malformed `.sqtt_funcmap`.
    #[error("{path}{target}: invalid .sqtt_funcmap section: {source}")]
    Funcmap {
        /// The file.
        path: PathBuf,
        /// ` (code object <id>)` when from a bundle.
        target: String,
        /// What is wrong.
        source: FuncmapError,
    },
    /// Several candidate maps and no `--target`, or a `--target` that matches none.
    #[error("{path}: {detail}")]
    Target {
        /// The file.
        path: PathBuf,
        /// What is wrong and which targets exist.
        detail: String,
    },
    /// The map has no `W:` row, so address blocks cannot be sized.
    #[error(
        "{path}: the .sqtt_funcmap has no W: (wave size) row: the code was not built with \
         address tracing (SQTT_TRACE_ADDRESSES=memory and/or lds)"
    )]
    NoWaveSize {
        /// The file.
        path: PathBuf,
    },
    /// A malformed record file.
    #[error("{path}: {source}")]
    Records {
        /// The file.
        path: PathBuf,
        /// Line and reason.
        source: RecordError,
    },
    /// Output could not be written.
    #[error("cannot write the output: {0}")]
    Output(std::io::Error),
    /// Records that give no cycles: nothing for a flame graph.
    #[error("{path}: no cycles to draw: every wave has a single record (or none)")]
    NoCycles {
        /// The records file.
        path: PathBuf,
    },
    /// An output file could not be written.
    #[error("cannot write {path}: {source}; check that its directory exists and is writable")]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// Runs `kreplay sqtt`. Never panics: an internal error is reported like any other.
pub fn run(args: SqttArgs) -> ExitCode {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match args.command {
        SqttCommand::Funcmap(a) => run_funcmap(&a),
        SqttCommand::Memtrace(a) => run_memtrace(&a),
        SqttCommand::Timeline(a) => views::run_timeline(&a),
        SqttCommand::Flame(a) => views::run_flame(&a),
        SqttCommand::Decode(a) => decode::run_decode(&a),
    }));
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(SqttError::Output(e))) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            eprintln!("kreplay sqtt: error: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("kreplay sqtt: internal error (a bug): the input could not be processed");
            ExitCode::from(70)
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, SqttError> {
    std::fs::read(path).map_err(|source| SqttError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn target_suffix(target: &Option<String>) -> String {
    target
        .as_ref()
        .map(|t| format!(" (code object {t})"))
        .unwrap_or_default()
}

/// Decodes the maps of every code object in `path`. Code objects without a map are skipped
/// with a note on stderr unless none has one.
fn load_maps(path: &Path) -> Result<Vec<ResolvedMap>, SqttError> {
    let data = read(path)?;
    let device_err = |source| SqttError::DeviceCode {
        path: path.to_path_buf(),
        source,
    };
    let objects = device_code::code_objects(&data).map_err(device_err)?;
    let mut maps = Vec::new();
    let mut missing = Vec::new();
    for BundledCodeObject { target, image } in objects {
        let view = device_code::inspect(&image).map_err(device_err)?;
        let Some(section) = view.funcmap else {
            missing.push(target);
            continue;
        };
        let map = Funcmap::parse(&section).map_err(|source| SqttError::Funcmap {
            path: path.to_path_buf(),
            target: target_suffix(&target),
            source,
        })?;
        tracing::debug!(target = ?target, entries = map.entries().len(), "decoded .sqtt_funcmap");
        maps.push(ResolvedMap {
            target,
            map,
            symbols: view.symbols,
        });
    }
    let names = |list: &[Option<String>]| {
        list.iter()
            .map(|t| t.clone().unwrap_or_else(|| "code object".into()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if maps.is_empty() {
        let what = if missing.iter().any(Option::is_some) {
            format!(" in {}", names(&missing))
        } else {
            String::new()
        };
        return Err(SqttError::MissingFuncmap {
            path: path.to_path_buf(),
            what,
        });
    }
    if !missing.is_empty() {
        eprintln!(
            "kreplay sqtt: note: {}: no .sqtt_funcmap section in {}",
            path.display(),
            names(&missing)
        );
    }
    Ok(maps)
}

fn write_out(text: &str) -> Result<(), SqttError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
        .map_err(SqttError::Output)
}

fn run_funcmap(args: &FuncmapArgs) -> Result<(), SqttError> {
    let maps = load_maps(&args.file)?;
    if args.json {
        let doc = report::funcmap_json(&args.file.display().to_string(), &maps, args.demangle);
        write_out(&format!("{doc:#}\n"))
    } else {
        write_out(&report::funcmap_table(&maps, args.demangle))
    }
}

/// The map of `maps` (decoded from `path`) that `target` names, or the only one.
fn choose_map<'a>(
    maps: &'a [ResolvedMap],
    target: &Option<String>,
    path: &Path,
) -> Result<&'a ResolvedMap, SqttError> {
    let target_err = |detail: String| SqttError::Target {
        path: path.to_path_buf(),
        detail,
    };
    let available = || {
        maps.iter()
            .map(|m| {
                m.target
                    .clone()
                    .unwrap_or_else(|| "(plain code object)".into())
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    match target {
        Some(want) => {
            let hits: Vec<&ResolvedMap> = maps
                .iter()
                .filter(|m| {
                    m.target
                        .as_deref()
                        .is_some_and(|t| t.contains(want.as_str()))
                })
                .collect();
            match hits.as_slice() {
                [one] => Ok(*one),
                [] => Err(target_err(format!(
                    "no code object with a .sqtt_funcmap matches --target {want}; available: {}",
                    available()
                ))),
                _ => Err(target_err(format!(
                    "--target {want} matches several code objects: {}",
                    available()
                ))),
            }
        }
        None if maps.len() == 1 => Ok(&maps[0]),
        None => Err(target_err(format!(
            "several code objects carry a .sqtt_funcmap ({}); choose one with --target",
            available()
        ))),
    }
}

/// Reads and parses a shaderdata record file.
fn read_records(path: &Path, format: RecordFormat) -> Result<Vec<shaderdata::Record>, SqttError> {
    let bytes = read(path)?;
    let text = String::from_utf8(bytes).map_err(|e| SqttError::Records {
        path: path.to_path_buf(),
        source: RecordError {
            line: 0,
            detail: format!("not UTF-8 text ({e}); expected JSON or CSV records"),
        },
    })?;
    shaderdata::parse(&text, format).map_err(|source| SqttError::Records {
        path: path.to_path_buf(),
        source,
    })
}

fn run_memtrace(args: &MemtraceArgs) -> Result<(), SqttError> {
    let maps = load_maps(&args.funcmap)?;
    let chosen = choose_map(&maps, &args.target, &args.funcmap)?;
    let wave_size = chosen
        .map
        .wave_size()
        .ok_or_else(|| SqttError::NoWaveSize {
            path: args.funcmap.clone(),
        })?;
    let records = read_records(&args.records, args.format)?;
    let geometry = Geometry {
        wave_size,
        line_size: args.line_size,
        access_size: args.access_size,
    };
    let analysis = address_trace::analyse(&records, &chosen.map, geometry);
    let records_name = args.records.display().to_string();
    let funcmap_name = args.funcmap.display().to_string();
    let ctx = MemtraceContext {
        records: &records_name,
        funcmap: &funcmap_name,
        target: chosen.target.as_deref(),
        geometry,
    };
    if args.json {
        write_out(&format!(
            "{:#}\n",
            report::memtrace_json(&ctx, &chosen.map, &analysis)
        ))
    } else {
        write_out(&report::memtrace_table(&ctx, &chosen.map, &analysis))
    }
}
