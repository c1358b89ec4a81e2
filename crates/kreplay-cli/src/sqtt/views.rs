//! The `timeline` and `flame` commands: shaderdata records and a function map in, marker scopes
//! out as a Perfetto trace, folded stacks or an SVG flame graph.

use super::shaderdata::RecordFormat;
use super::{SqttError, choose_map, flame, load_maps, read_records, scopes, timeline, write_out};
use clap::Args;
use std::path::{Path, PathBuf};

/// The inputs both commands read.
#[derive(Args, Debug)]
pub struct MarkerInput {
    /// Shaderdata records of one dispatch: JSON array, JSON lines or CSV.
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
    /// Name of the traced kernel (default: the map's only `K:` row).
    #[arg(long)]
    kernel: Option<String>,
}

/// Arguments of `kreplay sqtt timeline`.
#[derive(Args, Debug)]
pub struct TimelineArgs {
    #[command(flatten)]
    input: MarkerInput,
    /// The trace file to write (default: the records file with the extension `.pftrace`).
    #[arg(short = 'o', long)]
    output: Option<PathBuf>,
}

/// Arguments of `kreplay sqtt flame`.
#[derive(Args, Debug)]
pub struct FlameArgs {
    #[command(flatten)]
    input: MarkerInput,
    /// Write the SVG flame graph here.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Write the folded stacks here (printed on stdout when neither --svg nor --folded is given).
    #[arg(long)]
    folded: Option<PathBuf>,
}

/// The scopes of the records and the kernel name.
fn load(input: &MarkerInput) -> Result<(scopes::MarkerScopes, String), SqttError> {
    let maps = load_maps(&input.funcmap)?;
    let chosen = choose_map(&maps, &input.target, &input.funcmap)?;
    let records = read_records(&input.records, input.format)?;
    let s = scopes::build(&records, &chosen.map);
    if s.unmatched_exits + s.unknown_ids + s.incomplete_payloads > 0 {
        eprintln!(
            "kreplay sqtt: note: {}: {} exits without an open scope, {} markers the map does not define, {} payloads cut short",
            input.records.display(),
            s.unmatched_exits,
            s.unknown_ids,
            s.incomplete_payloads
        );
    }
    Ok((s, scopes::kernel_name(&chosen.map, input.kernel.as_deref())))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), SqttError> {
    std::fs::write(path, bytes).map_err(|source| SqttError::WriteFile {
        path: path.to_path_buf(),
        source,
    })
}

/// `kreplay sqtt timeline`.
pub fn run_timeline(args: &TimelineArgs) -> Result<(), SqttError> {
    let (s, kernel) = load(&args.input)?;
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| args.input.records.with_extension("pftrace"));
    write_file(&path, &timeline::trace(&s, &kernel))?;
    let scope_count: usize = s.waves.iter().map(|w| w.scopes.len()).sum();
    eprintln!(
        "kreplay sqtt: wrote {} ({} waves, {scope_count} scopes of {kernel})",
        path.display(),
        s.waves.len()
    );
    Ok(())
}

/// `kreplay sqtt flame`.
pub fn run_flame(args: &FlameArgs) -> Result<(), SqttError> {
    let (s, kernel) = load(&args.input)?;
    let folded = flame::folded(&s, &kernel);
    if let Some(path) = &args.folded {
        write_file(path, folded.as_bytes())?;
        eprintln!("kreplay sqtt: wrote {}", path.display());
    }
    if let Some(path) = &args.svg {
        if folded.is_empty() {
            return Err(SqttError::NoCycles {
                path: args.input.records.clone(),
            });
        }
        let svg = flame::svg(&folded, &kernel).map_err(SqttError::Output)?;
        write_file(path, &svg)?;
        eprintln!("kreplay sqtt: wrote {}", path.display());
    }
    if args.folded.is_none() && args.svg.is_none() {
        write_out(&folded)?;
    }
    Ok(())
}
