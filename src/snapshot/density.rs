//! Kernels that rewrite most of their footprint: hashing their chunks only costs time (every
//! chunk is restored anyway), so their next replays restore everything without hashing. The
//! decision is learned again every [`RELEARN_EVERY`] replays of the kernel, so one whose write
//! set shrinks gets the changed-chunk restore back.

use crate::sync::Mutex;
use std::collections::HashMap;

/// A kernel whose average restore moved at least this share of its snapshot is a dense writer.
const DENSE_SHARE: f64 = 0.5;

/// Replays of a dense writer between two that learn with hashes again.
pub const RELEARN_EVERY: u32 = 16;

/// Per kernel: replays since its write density was last learned (`None`: not dense).
static DENSE: Mutex<Option<HashMap<String, u32>>> = Mutex::new(None);

/// True when the next replay of `kernel` should restore everything without hashing (counts
/// the replay).
pub fn restores_whole(kernel: &str) -> bool {
    let mut g = DENSE.lock();
    let Some(n) = g.as_mut().and_then(|m| m.get_mut(kernel)) else {
        return false;
    };
    *n += 1;
    if *n >= RELEARN_EVERY {
        g.as_mut().map(|m| m.remove(kernel));
        return false;
    }
    true
}

/// Records what a replay of `kernel` that learned with hashes restored: `restores` restores
/// of `restored` bytes in total, of a snapshot of `snapshot` bytes.
pub fn learned(kernel: &str, snapshot: u64, restores: u64, restored: u64) {
    if restores == 0 || snapshot == 0 {
        return;
    }
    let dense = restored as f64 / restores as f64 >= DENSE_SHARE * snapshot as f64;
    let mut g = DENSE.lock();
    let m = g.get_or_insert_with(HashMap::new);
    if dense {
        m.insert(kernel.to_owned(), 0);
    } else {
        m.remove(kernel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dense_writer_skips_hashing_until_it_is_learned_again() {
        let k = "density-test-kernel";
        assert!(!restores_whole(k));
        learned(k, 1000, 3, 900); // 300 per restore: sparse
        assert!(!restores_whole(k));
        learned(k, 1000, 3, 3000);
        let whole = (0..RELEARN_EVERY).filter(|_| restores_whole(k)).count();
        assert_eq!(
            whole as u32,
            RELEARN_EVERY - 1,
            "then learned again with hashes"
        );
        assert!(!restores_whole(k));
    }
}
