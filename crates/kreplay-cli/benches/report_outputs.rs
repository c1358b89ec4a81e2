//! How fast `kreplay run` turns records into outputs once the application has exited:
//! parsing the JSON lines, then each writer, for 10 000 dispatches of 5 passes.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kreplay_cli::report::{self, chrome, pftrace, rocpd, rocprofv3, summary};
use kreplay_cli::run_records;
use std::hint::black_box;

const DISPATCHES: u64 = 10_000;
const PASSES: u64 = 5;

/// Record lines in the format of docs/formats.md: 4 kernels, each dispatch replayed.
fn record_text() -> String {
    let kernels = ["gemm_tile", "vector_add", "reduce_sum", "scale_in_place"];
    let mut out = String::new();
    let mut t = 1_000_000u64;
    for id in 1..=DISPATCHES {
        let k = kernels[(id % 4) as usize];
        let start = t;
        t += 200;
        for p in 0..PASSES {
            let last = p + 1 == PASSES;
            let (rs, re) = if last {
                ("null".to_owned(), "null".to_owned())
            } else {
                ((t + 900).to_string(), (t + 1000).to_string())
            };
            out += &format!(
                "{{\"record\":\"pass\",\"pid\":77,\"dispatch_id\":{id},\"kernel\":\"{k}\",\"agent\":4,\"agent_name\":\"gfx942\",\"queue_id\":1,\"pass\":{p},\"start_ns\":{t},\"end_ns\":{},\"restore_start_ns\":{rs},\"restore_end_ns\":{re}}}\n",
                t + 800 + p
            );
            t += 1000;
        }
        out += &format!(
            "{{\"record\":\"dispatch\",\"pid\":77,\"dispatch_id\":{id},\"kernel\":\"{k}\",\"agent\":4,\"agent_name\":\"gfx942\",\"queue_id\":1,\"replayed\":true,\"passes\":{PASSES},\"skipped\":null,\"window_start_ns\":{start},\"window_end_ns\":{t},\"snapshot\":{{\"regions\":3,\"bytes\":3145728,\"start_ns\":{start},\"end_ns\":{}}},\"restore\":{{\"count\":{},\"regions\":4,\"bytes\":4194304,\"skipped_regions\":8,\"ns\":400}}}}\n",
            start + 150,
            PASSES - 1
        );
        t += 500;
    }
    out
}

fn outputs(c: &mut Criterion) {
    let text = record_text();
    let dispatches = run_records::parse([text.as_str()]).dispatches;
    assert_eq!(dispatches.len() as u64, DISPATCHES);
    let mut group = c.benchmark_group("report_10k_dispatches_5_passes");
    group.sample_size(10);
    group.throughput(Throughput::Elements(DISPATCHES * PASSES));
    group.bench_function("parse_records", |b| {
        b.iter(|| run_records::parse([black_box(text.as_str())]))
    });
    group.bench_function("csv", |b| b.iter(|| report::csv(black_box(&dispatches))));
    group.bench_function("kernel_trace_csv", |b| {
        b.iter(|| rocprofv3::kernel_trace(black_box(&dispatches)))
    });
    group.bench_function("kernel_stats_csv", |b| {
        b.iter(|| rocprofv3::kernel_stats(black_box(&dispatches)))
    });
    group.bench_function("json", |b| {
        b.iter(|| report::json_document(black_box(&dispatches), None))
    });
    group.bench_function("chrome", |b| {
        b.iter(|| chrome::trace(black_box(&dispatches), "app"))
    });
    group.bench_function("pftrace", |b| {
        b.iter(|| pftrace::trace(black_box(&dispatches), "app"))
    });
    let db = std::env::temp_dir().join(format!("kreplay-bench-{}.db", std::process::id()));
    group.bench_function("rocpd", |b| {
        b.iter(|| rocpd::write(&db, black_box(&dispatches), rocpd::RunInfo::default()).unwrap())
    });
    let _ = std::fs::remove_file(&db);
    group.bench_function("summary", |b| {
        b.iter(|| summary::table(&summary::per_kernel(black_box(&dispatches))))
    });
    group.finish();
}

criterion_group!(benches, outputs);
criterion_main!(benches);
