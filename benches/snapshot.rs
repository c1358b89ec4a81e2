//! Inventory record+free with 100,000 live allocations, and snapshot+restore throughput next
//! to `memcpy` of the same bytes (same run, same buffers).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use kreplay::inventory::{Allocation, AllocationInventory};
use kreplay::snapshot::{CopyFailed, DeviceCopy, HostStore, Region, RegionKind, RestoreAll, Snapshot};
use std::hint::black_box;

/// "Device" memory is host memory here: the copy is `memcpy`.
struct Memcpy;

impl DeviceCopy for Memcpy {
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<(), CopyFailed> {
        // SAFETY: the benchmark passes valid, non-overlapping ranges.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        Ok(())
    }
}

fn inventory(c: &mut Criterion) {
    let inv = AllocationInventory::new();
    for i in 0..100_000usize {
        inv.record(Allocation { base: 0x1000_0000 + i * 4096, size: 4096, agent: 1 });
    }
    let mut next = 0usize;
    c.bench_function("inventory record+free, 100000 live", |b| {
        b.iter(|| {
            let base = 0x9000_0000 + (next % 1024) * 4096;
            next += 1;
            inv.record(Allocation { base, size: 4096, agent: 1 });
            black_box(inv.forget(black_box(base)));
        })
    });
}

fn snapshot_restore(c: &mut Criterion) {
    const REGIONS: usize = 16;
    const REGION_BYTES: usize = 4 << 20;
    let mut device: Vec<Vec<u8>> = (0..REGIONS).map(|i| vec![i as u8; REGION_BYTES]).collect();
    let inv = AllocationInventory::new();
    let regions: Vec<Region> = device
        .iter()
        .map(|d| {
            inv.record(Allocation { base: d.as_ptr() as usize, size: d.len(), agent: 1 });
            Region { kind: RegionKind::Allocation { base: d.as_ptr() as usize }, device: d.as_ptr() as usize, size: d.len() }
        })
        .collect();
    let footprint = (REGIONS * REGION_BYTES) as u64;
    let mut g = c.benchmark_group("snapshot+restore vs memcpy");
    // Both sides move the footprint twice: device -> host, then host -> device.
    g.throughput(Throughput::Bytes(2 * footprint));
    g.sample_size(20);
    g.bench_function(BenchmarkId::new("snapshot+restore", "64MiB/16 regions"), |b| {
        b.iter(|| {
            let mut s = Snapshot::capture(regions.clone(), Box::new(HostStore::new()), Box::new(RestoreAll), &Memcpy).unwrap();
            black_box(s.restore(&inv, &Memcpy));
        })
    });
    let mut host: Vec<Vec<u8>> = (0..REGIONS).map(|_| vec![0u8; REGION_BYTES]).collect();
    g.bench_function(BenchmarkId::new("memcpy", "64MiB/16 regions"), |b| {
        b.iter(|| {
            for (h, d) in host.iter_mut().zip(device.iter()) {
                h.copy_from_slice(d);
            }
            for (h, d) in host.iter().zip(device.iter_mut()) {
                d.copy_from_slice(h);
            }
            black_box(&device);
        })
    });
    g.finish();
}

criterion_group!(benches, inventory, snapshot_restore);
criterion_main!(benches);
