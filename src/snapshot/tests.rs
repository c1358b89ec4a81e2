use super::*;
use crate::inventory::{Allocation, ExecutableInventory};
use crate::sync::Arc;
use std::cell::Cell;

/// Copies with `memcpy` and fails the copies whose ordinal is in `fail`.
struct FakeCopy {
    n: Cell<usize>,
    fail: Vec<usize>,
}

impl FakeCopy {
    fn new(fail: Vec<usize>) -> Self {
        Self {
            n: Cell::new(0),
            fail,
        }
    }
}

impl DeviceCopy for FakeCopy {
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<(), CopyFailed> {
        let i = self.n.get();
        self.n.set(i + 1);
        if self.fail.contains(&i) {
            return Err(CopyFailed {
                len,
                detail: "injected".into(),
            });
        }
        // SAFETY: the test passes valid, non-overlapping ranges.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        Ok(())
    }
}

/// An executable inventory for one test (leaked: snapshots keep a `'static` reference).
fn executables() -> &'static ExecutableInventory {
    Box::leak(Box::new(ExecutableInventory::new()))
}

fn alloc_region(buf: &[u8]) -> Region {
    Region {
        kind: RegionKind::Allocation {
            base: buf.as_ptr() as usize,
        },
        device: buf.as_ptr() as usize,
        size: buf.len(),
    }
}

#[test]
fn restore_brings_back_every_byte() {
    let mut a = vec![1u8; 100];
    let mut v = vec![7u8; 8];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: 100,
        agent: 1,
    });
    let regions = vec![
        alloc_region(&a),
        Region {
            kind: RegionKind::ModuleVariable {
                name: "g".into(),
                executable: None,
            },
            device: v.as_ptr() as usize,
            size: 8,
        },
    ];
    let copier = FakeCopy::new(vec![]);
    let mut snap = Snapshot::capture(
        regions,
        Box::new(HostStore::new()),
        Box::new(RestoreAll),
        &copier,
    )
    .unwrap();
    assert_eq!(snap.stats().regions, 2);
    assert_eq!(snap.stats().bytes, 108);
    a.iter_mut().for_each(|x| *x += 1);
    v[3] = 0;
    let rep = snap.restore(&inv, &copier);
    assert_eq!(
        (rep.regions, rep.bytes, rep.skipped, rep.failure),
        (2, 108, 0, None)
    );
    assert!(a.iter().all(|&x| x == 1));
    assert_eq!(v, vec![7u8; 8]);
}

#[test]
fn a_failed_copy_makes_the_capture_incomplete() {
    let a = vec![1u8; 10];
    let b = vec![2u8; 10];
    let copier = FakeCopy::new(vec![1]);
    let err = Snapshot::capture(
        vec![alloc_region(&a), alloc_region(&b)],
        Box::new(HostStore::new()),
        Box::new(RestoreAll),
        &copier,
    )
    .unwrap_err();
    assert!(matches!(err, CaptureError::Copy { device, .. } if device == b.as_ptr() as usize));
    assert_eq!(err.tag(), "copy");
}

#[test]
fn a_huge_region_fails_as_host_allocation() {
    let copier = FakeCopy::new(vec![]);
    let huge = Region {
        kind: RegionKind::Allocation { base: 0x1000 },
        device: 0x1000,
        size: usize::MAX / 2,
    };
    let err = Snapshot::capture(
        vec![huge],
        Box::new(HostStore::new()),
        Box::new(RestoreAll),
        &copier,
    )
    .unwrap_err();
    assert!(
        matches!(err, CaptureError::HostAllocation { device: 0x1000, .. }),
        "{err}"
    );
}

#[test]
fn freed_or_shrunk_allocations_are_skipped() {
    let mut a = vec![1u8; 16];
    let mut c = vec![3u8; 16];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: 16,
        agent: 1,
    });
    inv.record(Allocation {
        base: c.as_ptr() as usize,
        size: 16,
        agent: 1,
    });
    let copier = FakeCopy::new(vec![]);
    let regions = vec![alloc_region(&a), alloc_region(&c)];
    let mut snap = Snapshot::capture(
        regions,
        Box::new(HostStore::new()),
        Box::new(RestoreAll),
        &copier,
    )
    .unwrap();
    a.fill(9);
    c.fill(9);
    inv.forget(a.as_ptr() as usize); // freed
    let rep = snap.restore(&inv, &copier);
    assert_eq!(
        (rep.regions, rep.skipped, rep.failure.is_none()),
        (1, 1, true)
    );
    assert!(
        a.iter().all(|&x| x == 9),
        "nothing is written to a freed allocation"
    );
    assert!(c.iter().all(|&x| x == 3));
    // Shrunk: re-recorded smaller than captured.
    inv.record(Allocation {
        base: c.as_ptr() as usize,
        size: 8,
        agent: 1,
    });
    c.fill(9);
    let rep = snap.restore(&inv, &copier);
    assert_eq!(rep.skipped, 2);
    assert!(c.iter().all(|&x| x == 9));
}

#[test]
fn a_transient_restore_failure_is_retried() {
    let mut a = vec![1u8; 16];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: 16,
        agent: 1,
    });
    let copier = FakeCopy::new(vec![1, 2]); // capture is copy 0; the restore's first two attempts fail
    let mut snap = Snapshot::capture(
        vec![alloc_region(&a)],
        Box::new(HostStore::new()),
        Box::new(RestoreAll),
        &copier,
    )
    .unwrap();
    a.fill(9);
    let rep = snap.restore(&inv, &copier);
    assert_eq!((rep.regions, rep.failure), (1, None));
    assert!(a.iter().all(|&x| x == 1));
}

#[test]
fn a_persistent_restore_failure_stops_the_restore_and_says_whether_memory_is_mixed() {
    let mut a = vec![1u8; 16];
    let mut b = vec![2u8; 16];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: 16,
        agent: 1,
    });
    inv.record(Allocation {
        base: b.as_ptr() as usize,
        size: 16,
        agent: 1,
    });
    // Capture: copies 0 and 1. First restore: `a` fails three times (2, 3, 4): nothing written.
    let copier = FakeCopy::new(vec![2, 3, 4, 6, 7, 8]);
    let mut snap = Snapshot::capture(
        vec![alloc_region(&a), alloc_region(&b)],
        Box::new(HostStore::new()),
        Box::new(RestoreAll),
        &copier,
    )
    .unwrap();
    a.fill(9);
    b.fill(9);
    let rep = snap.restore(&inv, &copier);
    let f = rep.failure.expect("a failure");
    assert_eq!(
        (f.device, f.nothing_written, rep.regions),
        (a.as_ptr() as usize, true, 0)
    );
    assert!(
        a.iter().chain(b.iter()).all(|&x| x == 9),
        "memory is still as the pass left it"
    );
    assert_eq!(
        copier.n.get(),
        5,
        "the restore stopped at the failing region"
    );
    assert!(f.to_string().contains("failed 3 times"), "{f}");
    // Second restore: `a` is copy 5 (succeeds), `b` fails three times (6, 7, 8): mixed.
    let rep = snap.restore(&inv, &copier);
    let f = rep.failure.expect("a failure");
    assert_eq!(
        (f.device, f.nothing_written, rep.regions),
        (b.as_ptr() as usize, false, 1)
    );
}

/// A scope that restores only the first half of each region: proves the engine honours the
/// ranges a scope returns (the shape a written-subset scope needs).
struct FirstHalf;
impl RestoreScope for FirstHalf {
    fn after_pass(&mut self, _: &[Region], _: super::RegionHold<'_>) -> PassCheck {
        PassCheck::default()
    }
    #[allow(clippy::single_range_in_vec_init)]
    fn ranges(&self, _: usize, r: &Region) -> Vec<Range<usize>> {
        vec![0..r.size / 2]
    }
}

#[test]
fn restore_scope_decides_the_bytes_written_back() {
    let mut a = vec![1u8; 8];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: 8,
        agent: 1,
    });
    let copier = FakeCopy::new(vec![]);
    let mut snap = Snapshot::capture(
        vec![alloc_region(&a)],
        Box::new(HostStore::new()),
        Box::new(FirstHalf),
        &copier,
    )
    .unwrap();
    a.fill(5);
    let rep = snap.restore(&inv, &copier);
    assert_eq!(rep.bytes, 4);
    assert_eq!(a, vec![1, 1, 1, 1, 5, 5, 5, 5]);
}

#[test]
fn a_tracked_capture_leaves_out_an_allocation_freed_after_listing() {
    let a = vec![1u8; 16];
    let b = vec![2u8; 16];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: 16,
        agent: 1,
    });
    inv.record(Allocation {
        base: b.as_ptr() as usize,
        size: 16,
        agent: 1,
    });
    let regions = vec![alloc_region(&a), alloc_region(&b)];
    // Freed between the listing of the agent's allocations and the copy: copying it would read
    // memory the runtime may already have unmapped.
    inv.forget(a.as_ptr() as usize);
    let copier = FakeCopy::new(vec![]);
    let snap = Snapshot::capture_tracked(
        regions,
        Box::new(HostStore::new()),
        Box::new(RestoreAll),
        &copier,
        &inv,
        &executables().hold(),
    )
    .unwrap();
    assert_eq!(copier.n.get(), 1, "only the live allocation is copied");
    assert_eq!(snap.regions(), &[alloc_region(&b)][..]);
    assert_eq!((snap.stats().regions, snap.stats().bytes), (1, 16));
}

#[test]
fn a_new_allocation_at_a_captured_address_is_not_restored_over() {
    let mut a = vec![1u8; 16];
    let mut v = vec![7u8; 4];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: 16,
        agent: 1,
    });
    let regions = vec![
        alloc_region(&a),
        Region {
            kind: RegionKind::ModuleVariable {
                name: "g".into(),
                executable: None,
            },
            device: v.as_ptr() as usize,
            size: 4,
        },
    ];
    let copier = FakeCopy::new(vec![]);
    let mut snap = Snapshot::capture_tracked(
        regions,
        Box::new(HostStore::new()),
        Box::new(RestoreAll),
        &copier,
        &inv,
        &executables().hold(),
    )
    .unwrap();
    a.fill(5);
    v.fill(0);
    let rep = snap.restore(&inv, &copier);
    assert_eq!(
        (rep.regions, rep.skipped),
        (2, 0),
        "the captured allocation itself is restored"
    );
    assert!(a.iter().all(|&x| x == 1));
    // Freed, and a new allocation of the same size made at the same address.
    inv.forget(a.as_ptr() as usize);
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: 16,
        agent: 1,
    });
    a.fill(5);
    v.fill(0);
    let rep = snap.restore(&inv, &copier);
    assert_eq!((rep.regions, rep.skipped), (1, 1));
    assert!(
        a.iter().all(|&x| x == 5),
        "the new allocation keeps its contents"
    );
    assert_eq!(v, vec![7u8; 4], "module variables are still restored");
}

/// Device memory of a fake agent: host allocations, counted, with a capacity.
struct FakeDevice {
    live: crate::sync::Mutex<Vec<Vec<u8>>>,
    capacity: usize,
}

impl FakeDevice {
    fn new(capacity: usize) -> Self {
        Self {
            live: crate::sync::Mutex::new(Vec::new()),
            capacity,
        }
    }
}

impl DeviceMemory for FakeDevice {
    fn allocate(&self, size: usize) -> Option<usize> {
        let mut live = self.live.lock();
        if live.iter().map(Vec::len).sum::<usize>() + size > self.capacity {
            return None;
        }
        let b = vec![0u8; size];
        let p = b.as_ptr() as usize;
        live.push(b);
        Some(p)
    }
    fn free(&self, ptr: usize) {
        self.live.lock().retain(|b| b.as_ptr() as usize != ptr);
    }
}

/// A device copier counting the device-to-device copies.
struct CountingCopy {
    inner: FakeCopy,
    on_device: Cell<usize>,
}

impl DeviceCopy for CountingCopy {
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<(), CopyFailed> {
        // SAFETY: forwarded.
        unsafe { self.inner.copy(dst, src, len) }
    }
    unsafe fn copy_on_device(
        &self,
        ops: &[CopyOp],
        during: &mut dyn FnMut(),
    ) -> Result<(), CopyFailed> {
        self.on_device.set(self.on_device.get() + ops.len());
        for op in ops {
            // SAFETY: forwarded.
            unsafe {
                self.inner
                    .copy(op.dst as *mut u8, op.src as *const u8, op.len)?
            };
        }
        during();
        Ok(())
    }
}

#[test]
fn a_tiered_store_keeps_what_fits_on_the_device_and_the_rest_on_the_host() {
    let mut a = vec![1u8; 4096];
    let mut b = vec![2u8; 8192];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: a.len(),
        agent: 1,
    });
    inv.record(Allocation {
        base: b.as_ptr() as usize,
        size: b.len(),
        agent: 1,
    });
    let buffers = Arc::new(AgentBuffers::new(Box::new(FakeDevice::new(1 << 20))));
    let copier = CountingCopy {
        inner: FakeCopy::new(vec![]),
        on_device: Cell::new(0),
    };
    // Budget 6000 bytes: `a` fits on the device, `b` goes to the host.
    let store = TieredStore::new(Some(buffers.clone()), 6000, false, None);
    let mut snap = Snapshot::capture(
        vec![alloc_region(&a), alloc_region(&b)],
        Box::new(store),
        Box::new(RestoreAll),
        &copier,
    )
    .unwrap();
    assert_eq!(snap.device_bytes(), 4096);
    assert_eq!(snap.stats().store_kind(), "mixed");
    assert_eq!(copier.on_device.get(), 1);
    a.fill(9);
    b.fill(9);
    let rep = snap.restore(&inv, &copier);
    assert_eq!(
        (rep.regions, rep.bytes, rep.failure),
        (2, 4096 + 8192, None)
    );
    assert!(a.iter().all(|&x| x == 1) && b.iter().all(|&x| x == 2));
    assert_eq!(
        copier.on_device.get(),
        2,
        "the device slot is restored device to device"
    );
    drop(snap);
    assert_eq!(
        buffers.idle_bytes(),
        4096,
        "the device buffer is kept for the next capture"
    );
    // Device only: the region that does not fit declines.
    let store = TieredStore::new(Some(buffers.clone()), 6000, true, None);
    let err = Snapshot::capture(
        vec![alloc_region(&a), alloc_region(&b)],
        Box::new(store),
        Box::new(RestoreAll),
        &copier,
    )
    .unwrap_err();
    assert!(
        matches!(err, CaptureError::DeviceRoom { size: 8192, .. }),
        "{err}"
    );
    assert_eq!(err.tag(), "device memory");
    assert_eq!(buffers.release_idle(std::time::Duration::ZERO), 4096);
    assert_eq!(buffers.held_bytes(), 0);
}

#[test]
fn a_region_the_device_refuses_needs_room_in_host_memory() {
    // The device budget has room, but the runtime refuses the buffer (its memory ran out):
    // the region would go to host memory, which cannot hold it, so the capture declines
    // before anything is allocated or copied.
    let buffers = Arc::new(AgentBuffers::new(Box::new(FakeDevice::new(0))));
    let store = TieredStore::new(Some(buffers), u64::MAX, false, None);
    let huge = Region {
        kind: RegionKind::Allocation { base: 0x1000 },
        device: 0x1000,
        size: 1 << 60,
    };
    let copier = FakeCopy::new(vec![]);
    let err =
        Snapshot::capture(vec![huge], Box::new(store), Box::new(RestoreAll), &copier).unwrap_err();
    assert!(
        matches!(err, CaptureError::HostMemory { needed, .. } if needed == 1 << 60),
        "{err}"
    );
    assert_eq!(err.tag(), "host memory");
}

#[test]
fn device_buffers_are_reused_and_idle_ones_make_room() {
    let buffers = AgentBuffers::new(Box::new(FakeDevice::new(1 << 20)));
    let a = buffers.take(1000, 10_000).unwrap();
    let pa = a.ptr;
    buffers.give_back([a]);
    let again = buffers.take(1000, 10_000).unwrap();
    assert_eq!(again.ptr, pa, "an idle buffer of the size is reused");
    buffers.give_back([again]);
    // A larger request that only fits once the idle buffer is freed.
    let big = buffers.take(9500, 10_000).unwrap();
    assert_eq!(buffers.held_bytes(), 9500);
    assert!(buffers.take(1000, 10_000).is_none(), "over budget");
    buffers.give_back([big]);
}

#[test]
fn host_buffers_are_recycled_by_size() {
    let a = host::host_buffer(300_000, None).unwrap();
    let pa = a.ptr() as usize;
    host::give_back([a]);
    let b = host::host_buffer(299_000, None).unwrap();
    assert_eq!(
        b.ptr() as usize,
        pa,
        "an idle buffer within the size limit is reused"
    );
    let c = host::host_buffer(300_000, None).unwrap();
    assert_ne!(c.ptr() as usize, pa);
    host::give_back([b, c]);
    assert!(release_idle_host_buffers(std::time::Duration::ZERO) >= 600_000);
}

#[test]
fn changed_chunks_restore_only_what_the_pass_wrote() {
    let mut a = vec![0u8; 64 << 10];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: a.len(),
        agent: 1,
    });
    let copier = FakeCopy::new(vec![]);
    let scope = ChangedChunks::new(
        Box::new(HostHasher::new(|r: &Region| Some(r.device))),
        4096,
        false,
    );
    let mut snap = Snapshot::capture(
        vec![alloc_region(&a)],
        Box::new(HostStore::new()),
        Box::new(scope),
        &copier,
    )
    .unwrap();
    for pass in 0..3u8 {
        a[5000] = pass + 1;
        a[40_000] = pass + 1;
        let rep = snap.restore(&inv, &copier);
        assert_eq!((rep.bytes, rep.full), (2 * 4096, false), "pass {pass}");
        assert!(a.iter().all(|&x| x == 0));
    }
}

#[test]
fn regions_of_a_destroyed_executable_are_neither_captured_nor_restored() {
    let mut seg = [4u8; 32];
    let mut var = [6u8; 8];
    let gone = [8u8; 8];
    let exes = executables();
    let (live, dead) = {
        let held = exes.hold();
        (held.observe(0xa), held.observe(0xb))
    };
    exes.destroying(0xb, || ());
    let a = ExecutableRef {
        handle: 0xa,
        serial: live,
    };
    let regions = vec![
        Region {
            kind: RegionKind::CodeObjectSegment { executable: a },
            device: seg.as_ptr() as usize,
            size: 32,
        },
        Region {
            kind: RegionKind::ModuleVariable {
                name: "v".into(),
                executable: Some(a),
            },
            device: var.as_ptr() as usize,
            size: 8,
        },
        Region {
            kind: RegionKind::CodeObjectSegment {
                executable: ExecutableRef {
                    handle: 0xb,
                    serial: dead,
                },
            },
            device: gone.as_ptr() as usize,
            size: 8,
        },
    ];
    let inv = AllocationInventory::new();
    let copier = FakeCopy::new(vec![]);
    let mut snap = Snapshot::capture_tracked(
        regions,
        Box::new(HostStore::new()),
        Box::new(RestoreAll),
        &copier,
        &inv,
        &exes.hold(),
    )
    .unwrap();
    assert_eq!(
        snap.stats().regions,
        2,
        "the destroyed executable's segment is left out"
    );
    seg.fill(0);
    var.fill(0);
    let rep = snap.restore(&inv, &copier);
    assert_eq!((rep.regions, rep.skipped), (2, 0));
    assert_eq!((seg[31], var[7]), (4, 6));
    // Destroyed after the capture, then a new executable got the same handle.
    exes.destroying(0xa, || ());
    exes.hold().observe(0xa);
    seg.fill(0);
    var.fill(0);
    let rep = snap.restore(&inv, &copier);
    assert_eq!(
        (rep.regions, rep.skipped),
        (0, 2),
        "nothing is written into another executable's memory"
    );
    assert!(seg.iter().chain(var.iter()).all(|&x| x == 0));
}

#[test]
fn part_of_an_allocation_is_validated_against_the_whole_allocation() {
    let mut a = [1u8; 64];
    let base = a.as_ptr() as usize;
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base,
        size: 64,
        agent: 1,
    });
    let tail = Region {
        kind: RegionKind::Allocation { base },
        device: base + 48,
        size: 16,
    };
    let copier = FakeCopy::new(vec![]);
    let mut snap = Snapshot::capture_tracked(
        vec![tail],
        Box::new(HostStore::new()),
        Box::new(RestoreAll),
        &copier,
        &inv,
        &executables().hold(),
    )
    .unwrap();
    a.fill(2);
    assert_eq!(snap.restore(&inv, &copier).regions, 1);
    assert_eq!(
        (a[47], a[48], a[63]),
        (2, 1, 1),
        "only the captured part is written back"
    );
    inv.record(Allocation {
        base,
        size: 56,
        agent: 1,
    });
    assert_eq!(
        snap.restore(&inv, &copier).skipped,
        1,
        "an allocation that no longer covers the part is skipped"
    );
}

#[test]
fn the_host_budget_counts_only_what_the_store_keeps_in_host_memory() {
    let a = vec![1u8; 4096];
    let b = vec![2u8; 8192];
    let regions = vec![alloc_region(&a), alloc_region(&b)];
    assert_eq!(HostStore::new().host_bound(&regions), 4096 + 8192);
    let buffers = Arc::new(AgentBuffers::new(Box::new(FakeDevice::new(1 << 20))));
    // Budget 6000 bytes: `a` goes to the device, `b` to the host.
    assert_eq!(
        TieredStore::new(Some(buffers.clone()), 6000, false, None).host_bound(&regions),
        8192
    );
    assert_eq!(
        TieredStore::new(Some(buffers.clone()), 1 << 20, false, None).host_bound(&regions),
        0
    );
    assert_eq!(
        TieredStore::new(None, 0, false, None).host_bound(&regions),
        4096 + 8192,
        "no device pool: all on the host"
    );
    assert_eq!(
        TieredStore::new(Some(buffers.clone()), 6000, true, None).host_bound(&regions),
        0,
        "device only never uses the host"
    );
    // A buffer in use counts against the device budget; an idle one can be freed for room.
    let held = buffers.take(4096, 1 << 20).unwrap();
    assert_eq!(
        TieredStore::new(Some(buffers.clone()), 6000, false, None).host_bound(&regions),
        4096 + 8192
    );
    buffers.give_back([held]);
    assert_eq!(
        TieredStore::new(Some(buffers.clone()), 6000, false, None).host_bound(&regions),
        8192
    );
    buffers.release_idle(std::time::Duration::ZERO);
}

#[test]
fn a_snapshot_says_where_it_is_kept() {
    let stats = |bytes, device_bytes| CaptureStats {
        bytes,
        device_bytes,
        ..Default::default()
    };
    assert_eq!(
        (stats(0, 0).store_kind(), stats(10, 0).store_kind()),
        ("host", "host")
    );
    assert_eq!(
        (stats(10, 10).store_kind(), stats(10, 4).store_kind()),
        ("device", "mixed")
    );
}

#[test]
fn a_batch_of_chunks_is_retried_whole_and_a_failed_batch_counts_as_written() {
    let mut a = vec![0u8; 16 << 10];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: a.len(),
        agent: 1,
    });
    // Capture: copy 0. First restore (two separate chunks): copy 1 fails, the retry writes
    // both (2, 3). Second restore: the first chunk is written (4), the second fails on every
    // attempt (5, then 6 7 and 8 9 for the retried batch).
    let copier = FakeCopy::new(vec![1, 5, 7, 9]);
    let scope = ChangedChunks::new(
        Box::new(HostHasher::new(|r: &Region| Some(r.device))),
        4096,
        false,
    );
    let mut snap = Snapshot::capture(
        vec![alloc_region(&a)],
        Box::new(HostStore::new()),
        Box::new(scope),
        &copier,
    )
    .unwrap();
    a[100] = 1;
    a[9000] = 1;
    let rep = snap.restore(&inv, &copier);
    assert_eq!(
        (rep.failure.as_ref(), rep.bytes),
        (None, 2 * 4096),
        "the transient failure was retried"
    );
    assert!(a.iter().all(|&x| x == 0));
    a[100] = 2;
    a[9000] = 2;
    let rep = snap.restore(&inv, &copier);
    let f = rep.failure.expect("a failure");
    assert!(
        !f.nothing_written,
        "part of the batch may have been written"
    );
    assert_eq!(
        (a[100], a[9000]),
        (0, 2),
        "the first chunk was written back before the failure"
    );
}

/// Agent addresses of pinned memory in these tests: the host address plus this offset.
const AGENT_OFFSET: usize = 1 << 47;

/// Pins every buffer at an agent address of its own, as a discrete GPU's runtime does.
struct AliasPinning;

impl HostPinning for AliasPinning {
    fn pin(&self, ptr: *mut u8, _len: usize) -> Option<*mut u8> {
        Some((ptr as usize + AGENT_OFFSET) as *mut u8)
    }
    fn unpin(&self, _ptr: *mut u8) {}
}

/// Copies as [`FakeCopy`] after turning agent addresses of pinned memory into host addresses,
/// and counts the copies that named pinned memory by its agent address.
struct AliasCopy {
    inner: FakeCopy,
    by_agent_address: Cell<usize>,
}

impl DeviceCopy for AliasCopy {
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<(), CopyFailed> {
        let host = |p: usize| {
            if p >= AGENT_OFFSET {
                self.by_agent_address.set(self.by_agent_address.get() + 1);
                p - AGENT_OFFSET
            } else {
                p
            }
        };
        let (dst, src) = (host(dst as usize), host(src as usize));
        // SAFETY: forwarded, with agent addresses turned into the host addresses of the bytes.
        unsafe { self.inner.copy(dst as *mut u8, src as *const u8, len) }
    }
}

#[test]
fn pinned_host_buffers_are_copied_at_the_agent_address_the_lock_returned() {
    let mut a = vec![5u8; 4096];
    let inv = AllocationInventory::new();
    inv.record(Allocation {
        base: a.as_ptr() as usize,
        size: a.len(),
        agent: 1,
    });
    let pinning = Arc::new(AliasPinning);
    let copier = AliasCopy {
        inner: FakeCopy::new(vec![]),
        by_agent_address: Cell::new(0),
    };
    let store = HostStore::pinned(pinning);
    let mut snap = Snapshot::capture(
        vec![alloc_region(&a)],
        Box::new(store),
        Box::new(RestoreAll),
        &copier,
    )
    .unwrap();
    assert_eq!(copier.by_agent_address.get(), 1, "the capture");
    a.iter_mut().for_each(|x| *x = 9);
    let rep = snap.restore(&inv, &copier);
    assert_eq!(rep.failure, None);
    assert!(a.iter().all(|&x| x == 5));
    assert_eq!(copier.by_agent_address.get(), 2, "and the restore");
}
