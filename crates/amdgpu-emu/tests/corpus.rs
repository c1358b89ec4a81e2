//! Corpus kernels built with clang-22 for gfx942 and gfx90a, run on the emulator and checked
//! against CPU references (bit-exact unless a bound is stated).

mod common;
#[allow(unused_imports)]
use common::{Arg, Bench, Rng, TARGETS};

#[test]
fn inc_adds_one_on_both_targets() {
    for t in TARGETS {
        let n = 1000u32;
        let x: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
        let mut b = Bench::new("stream", t);
        let xb = b.buf_of(&x);
        b.run1("inc", n, 256, &[Arg::Buf(xb), Arg::I32(n as i32)]);
        let got: Vec<i32> = b.read(xb);
        let want: Vec<i32> = x.iter().map(|v| v + 1).collect();
        assert_eq!(got, want, "{}", t.name());
    }
}
