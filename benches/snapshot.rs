//! Inventory record+free with 100,000 live allocations, snapshot+restore throughput next to
//! `memcpy` of the same bytes (same run, same buffers), chunk hashing next to `memcpy`, and
//! 10,000 small regions against one region of the same total.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use kreplay::inventory::{Allocation, AllocationInventory};
use kreplay::snapshot::{
    ChunkHasher, CopyFailed, DeviceCopy, HostHasher, HostStore, Region, RegionKind, RestoreAll,
    Snapshot,
};
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
        inv.record(Allocation {
            base: 0x1000_0000 + i * 4096,
            size: 4096,
            agent: 1,
        });
    }
    let mut next = 0usize;
    c.bench_function("inventory record+free, 100000 live", |b| {
        b.iter(|| {
            let base = 0x9000_0000 + (next % 1024) * 4096;
            next += 1;
            inv.record(Allocation {
                base,
                size: 4096,
                agent: 1,
            });
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
            inv.record(Allocation {
                base: d.as_ptr() as usize,
                size: d.len(),
                agent: 1,
            });
            Region {
                kind: RegionKind::Allocation {
                    base: d.as_ptr() as usize,
                },
                device: d.as_ptr() as usize,
                size: d.len(),
            }
        })
        .collect();
    let footprint = (REGIONS * REGION_BYTES) as u64;
    let mut g = c.benchmark_group("snapshot+restore vs memcpy");
    // Both sides move the footprint twice: device -> host, then host -> device.
    g.throughput(Throughput::Bytes(2 * footprint));
    g.sample_size(20);
    g.bench_function(
        BenchmarkId::new("snapshot+restore", "64MiB/16 regions"),
        |b| {
            b.iter(|| {
                let mut s = Snapshot::capture(
                    regions.clone(),
                    Box::new(HostStore::new()),
                    Box::new(RestoreAll),
                    &Memcpy,
                )
                .unwrap();
                black_box(s.restore(&inv, &Memcpy));
            })
        },
    );
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

fn hashing(c: &mut Criterion) {
    const BYTES: usize = 64 << 20;
    let src: Vec<u8> = (0..BYTES).map(|i| (i * 31 % 251) as u8).collect();
    let mut dst = vec![0u8; BYTES];
    let region = Region {
        kind: RegionKind::Allocation {
            base: src.as_ptr() as usize,
        },
        device: src.as_ptr() as usize,
        size: BYTES,
    };
    let hasher = HostHasher::new(|r: &Region| Some(r.device));
    let mut g = c.benchmark_group("chunk hashing vs memcpy");
    g.throughput(Throughput::Bytes(BYTES as u64));
    g.sample_size(20);
    g.bench_function(BenchmarkId::new("xxh3 per 64 KiB chunk", "64MiB"), |b| {
        b.iter(|| black_box(hasher.hash(&region, 64 << 10)))
    });
    g.bench_function(BenchmarkId::new("memcpy", "64MiB"), |b| {
        b.iter(|| {
            dst.copy_from_slice(&src);
            black_box(&dst);
        })
    });
    g.finish();
}

fn many_regions(c: &mut Criterion) {
    const TOTAL: usize = 40 << 20;
    let inv = AllocationInventory::new();
    let mut g = c.benchmark_group("snapshot+restore, 10000 regions vs 1");
    g.throughput(Throughput::Bytes(2 * TOTAL as u64));
    g.sample_size(10);
    for count in [1usize, 10_000] {
        let size = TOTAL / count;
        let device: Vec<Vec<u8>> = (0..count).map(|i| vec![i as u8; size]).collect();
        let regions: Vec<Region> = device
            .iter()
            .map(|d| {
                inv.record(Allocation {
                    base: d.as_ptr() as usize,
                    size,
                    agent: 1,
                });
                Region {
                    kind: RegionKind::Allocation {
                        base: d.as_ptr() as usize,
                    },
                    device: d.as_ptr() as usize,
                    size,
                }
            })
            .collect();
        g.bench_function(
            BenchmarkId::new("host store, restore all", format!("{count} x {size} B")),
            |b| {
                b.iter(|| {
                    let mut s = Snapshot::capture(
                        regions.clone(),
                        Box::new(HostStore::new()),
                        Box::new(RestoreAll),
                        &Memcpy,
                    )
                    .unwrap();
                    black_box(s.restore(&inv, &Memcpy));
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, inventory, snapshot_restore, hashing, many_regions);
criterion_main!(benches);
