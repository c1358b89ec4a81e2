use super::*;
use crate::inventory::{Allocation, ExecutableInventory};
use std::cell::Cell;

/// Copies with `memcpy` and fails the copies whose ordinal is in `fail`.
struct FakeCopy {
    n: Cell<usize>,
    fail: Vec<usize>,
}

impl FakeCopy {
    fn new(fail: Vec<usize>) -> Self {
        Self { n: Cell::new(0), fail }
    }
}

impl DeviceCopy for FakeCopy {
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<(), CopyFailed> {
        let i = self.n.get();
        self.n.set(i + 1);
        if self.fail.contains(&i) {
            return Err(CopyFailed { len, detail: "injected".into() });
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
    Region { kind: RegionKind::Allocation { base: buf.as_ptr() as usize }, device: buf.as_ptr() as usize, size: buf.len() }
}

#[test]
fn restore_brings_back_every_byte() {
    let mut a = vec![1u8; 100];
    let mut v = vec![7u8; 8];
    let inv = AllocationInventory::new();
    inv.record(Allocation { base: a.as_ptr() as usize, size: 100, agent: 1 });
    let regions = vec![
        alloc_region(&a),
        Region { kind: RegionKind::ModuleVariable { name: "g".into(), executable: None }, device: v.as_ptr() as usize, size: 8 },
    ];
    let copier = FakeCopy::new(vec![]);
    let mut snap = Snapshot::capture(regions, Box::new(HostStore::new()), Box::new(RestoreAll), &copier).unwrap();
    assert_eq!(snap.stats().regions, 2);
    assert_eq!(snap.stats().bytes, 108);
    a.iter_mut().for_each(|x| *x += 1);
    v[3] = 0;
    let rep = snap.restore(&inv, &copier);
    assert_eq!((rep.regions, rep.bytes, rep.skipped, rep.failure), (2, 108, 0, None));
    assert!(a.iter().all(|&x| x == 1));
    assert_eq!(v, vec![7u8; 8]);
}

#[test]
fn a_failed_copy_makes_the_capture_incomplete() {
    let a = vec![1u8; 10];
    let b = vec![2u8; 10];
    let copier = FakeCopy::new(vec![1]);
    let err = Snapshot::capture(vec![alloc_region(&a), alloc_region(&b)], Box::new(HostStore::new()), Box::new(RestoreAll), &copier)
        .unwrap_err();
    assert!(matches!(err, DeclineReason::Copy { device, .. } if device == b.as_ptr() as usize));
    assert_eq!(err.tag(), "copy");
}

#[test]
fn a_huge_region_fails_as_host_allocation() {
    let copier = FakeCopy::new(vec![]);
    let huge = Region { kind: RegionKind::Allocation { base: 0x1000 }, device: 0x1000, size: usize::MAX / 2 };
    let err = Snapshot::capture(vec![huge], Box::new(HostStore::new()), Box::new(RestoreAll), &copier).unwrap_err();
    assert!(matches!(err, DeclineReason::HostAllocation { device: 0x1000, .. }), "{err}");
}

#[test]
fn freed_or_shrunk_allocations_are_skipped() {
    let mut a = vec![1u8; 16];
    let mut c = vec![3u8; 16];
    let inv = AllocationInventory::new();
    inv.record(Allocation { base: a.as_ptr() as usize, size: 16, agent: 1 });
    inv.record(Allocation { base: c.as_ptr() as usize, size: 16, agent: 1 });
    let copier = FakeCopy::new(vec![]);
    let regions = vec![alloc_region(&a), alloc_region(&c)];
    let mut snap = Snapshot::capture(regions, Box::new(HostStore::new()), Box::new(RestoreAll), &copier).unwrap();
    a.fill(9);
    c.fill(9);
    inv.forget(a.as_ptr() as usize); // freed
    let rep = snap.restore(&inv, &copier);
    assert_eq!((rep.regions, rep.skipped, rep.failure.is_none()), (1, 1, true));
    assert!(a.iter().all(|&x| x == 9), "nothing is written to a freed allocation");
    assert!(c.iter().all(|&x| x == 3));
    // Shrunk: re-recorded smaller than captured.
    inv.record(Allocation { base: c.as_ptr() as usize, size: 8, agent: 1 });
    c.fill(9);
    let rep = snap.restore(&inv, &copier);
    assert_eq!(rep.skipped, 2);
    assert!(c.iter().all(|&x| x == 9));
}

#[test]
fn a_transient_restore_failure_is_retried() {
    let mut a = vec![1u8; 16];
    let inv = AllocationInventory::new();
    inv.record(Allocation { base: a.as_ptr() as usize, size: 16, agent: 1 });
    let copier = FakeCopy::new(vec![1, 2]); // capture is copy 0; the restore's first two attempts fail
    let mut snap = Snapshot::capture(vec![alloc_region(&a)], Box::new(HostStore::new()), Box::new(RestoreAll), &copier).unwrap();
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
    inv.record(Allocation { base: a.as_ptr() as usize, size: 16, agent: 1 });
    inv.record(Allocation { base: b.as_ptr() as usize, size: 16, agent: 1 });
    // Capture: copies 0 and 1. First restore: `a` fails three times (2, 3, 4): nothing written.
    let copier = FakeCopy::new(vec![2, 3, 4, 6, 7, 8]);
    let mut snap =
        Snapshot::capture(vec![alloc_region(&a), alloc_region(&b)], Box::new(HostStore::new()), Box::new(RestoreAll), &copier).unwrap();
    a.fill(9);
    b.fill(9);
    let rep = snap.restore(&inv, &copier);
    let f = rep.failure.expect("a failure");
    assert_eq!((f.device, f.nothing_written, rep.regions), (a.as_ptr() as usize, true, 0));
    assert!(a.iter().chain(b.iter()).all(|&x| x == 9), "memory is still as the pass left it");
    assert_eq!(copier.n.get(), 5, "the restore stopped at the failing region");
    assert!(f.to_string().contains("failed 3 times"), "{f}");
    // Second restore: `a` is copy 5 (succeeds), `b` fails three times (6, 7, 8): mixed.
    let rep = snap.restore(&inv, &copier);
    let f = rep.failure.expect("a failure");
    assert_eq!((f.device, f.nothing_written, rep.regions), (b.as_ptr() as usize, false, 1));
}

/// A scope that restores only the first half of each region: proves the engine honours the
/// ranges a scope returns (the shape a written-subset scope needs).
struct FirstHalf;
impl RestoreScope for FirstHalf {
    fn after_pass(&mut self, _: &[Region], _: &dyn SnapshotStore, _: &dyn DeviceCopy) {}
    #[allow(clippy::single_range_in_vec_init)]
    fn ranges(&self, _: usize, r: &Region) -> Vec<Range<usize>> {
        vec![0..r.size / 2]
    }
}

#[test]
fn restore_scope_decides_the_bytes_written_back() {
    let mut a = vec![1u8; 8];
    let inv = AllocationInventory::new();
    inv.record(Allocation { base: a.as_ptr() as usize, size: 8, agent: 1 });
    let copier = FakeCopy::new(vec![]);
    let mut snap = Snapshot::capture(vec![alloc_region(&a)], Box::new(HostStore::new()), Box::new(FirstHalf), &copier).unwrap();
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
    inv.record(Allocation { base: a.as_ptr() as usize, size: 16, agent: 1 });
    inv.record(Allocation { base: b.as_ptr() as usize, size: 16, agent: 1 });
    let regions = vec![alloc_region(&a), alloc_region(&b)];
    // Freed between the listing of the agent's allocations and the copy: copying it would read
    // memory the runtime may already have unmapped.
    inv.forget(a.as_ptr() as usize);
    let copier = FakeCopy::new(vec![]);
    let snap = Snapshot::capture_tracked(regions, Box::new(HostStore::new()), Box::new(RestoreAll), &copier, &inv, &executables().hold()).unwrap();
    assert_eq!(copier.n.get(), 1, "only the live allocation is copied");
    assert_eq!(snap.regions(), &[alloc_region(&b)][..]);
    assert_eq!((snap.stats().regions, snap.stats().bytes), (1, 16));
}

#[test]
fn a_new_allocation_at_a_captured_address_is_not_restored_over() {
    let mut a = vec![1u8; 16];
    let mut v = vec![7u8; 4];
    let inv = AllocationInventory::new();
    inv.record(Allocation { base: a.as_ptr() as usize, size: 16, agent: 1 });
    let regions = vec![
        alloc_region(&a),
        Region { kind: RegionKind::ModuleVariable { name: "g".into(), executable: None }, device: v.as_ptr() as usize, size: 4 },
    ];
    let copier = FakeCopy::new(vec![]);
    let mut snap = Snapshot::capture_tracked(regions, Box::new(HostStore::new()), Box::new(RestoreAll), &copier, &inv, &executables().hold()).unwrap();
    a.fill(5);
    v.fill(0);
    let rep = snap.restore(&inv, &copier);
    assert_eq!((rep.regions, rep.skipped), (2, 0), "the captured allocation itself is restored");
    assert!(a.iter().all(|&x| x == 1));
    // Freed, and a new allocation of the same size made at the same address.
    inv.forget(a.as_ptr() as usize);
    inv.record(Allocation { base: a.as_ptr() as usize, size: 16, agent: 1 });
    a.fill(5);
    v.fill(0);
    let rep = snap.restore(&inv, &copier);
    assert_eq!((rep.regions, rep.skipped), (1, 1));
    assert!(a.iter().all(|&x| x == 5), "the new allocation keeps its contents");
    assert_eq!(v, vec![7u8; 4], "module variables are still restored");
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
    let a = ExecutableRef { handle: 0xa, serial: live };
    let regions = vec![
        Region { kind: RegionKind::CodeObjectSegment { executable: a }, device: seg.as_ptr() as usize, size: 32 },
        Region { kind: RegionKind::ModuleVariable { name: "v".into(), executable: Some(a) }, device: var.as_ptr() as usize, size: 8 },
        Region {
            kind: RegionKind::CodeObjectSegment { executable: ExecutableRef { handle: 0xb, serial: dead } },
            device: gone.as_ptr() as usize,
            size: 8,
        },
    ];
    let inv = AllocationInventory::new();
    let copier = FakeCopy::new(vec![]);
    let mut snap = Snapshot::capture_tracked(regions, Box::new(HostStore::new()), Box::new(RestoreAll), &copier, &inv, &exes.hold()).unwrap();
    assert_eq!(snap.stats().regions, 2, "the destroyed executable's segment is left out");
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
    assert_eq!((rep.regions, rep.skipped), (0, 2), "nothing is written into another executable's memory");
    assert!(seg.iter().chain(var.iter()).all(|&x| x == 0));
}

#[test]
fn part_of_an_allocation_is_validated_against_the_whole_allocation() {
    let mut a = [1u8; 64];
    let base = a.as_ptr() as usize;
    let inv = AllocationInventory::new();
    inv.record(Allocation { base, size: 64, agent: 1 });
    let tail = Region { kind: RegionKind::Allocation { base }, device: base + 48, size: 16 };
    let copier = FakeCopy::new(vec![]);
    let mut snap = Snapshot::capture_tracked(vec![tail], Box::new(HostStore::new()), Box::new(RestoreAll), &copier, &inv, &executables().hold()).unwrap();
    a.fill(2);
    assert_eq!(snap.restore(&inv, &copier).regions, 1);
    assert_eq!((a[47], a[48], a[63]), (2, 1, 1), "only the captured part is written back");
    inv.record(Allocation { base, size: 56, agent: 1 });
    assert_eq!(snap.restore(&inv, &copier).skipped, 1, "an allocation that no longer covers the part is skipped");
}
