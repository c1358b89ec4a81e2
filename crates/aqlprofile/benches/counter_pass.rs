//! A counter pass's overhead over a plain pass on vhsa: the packet-level C program times a plain
//! dispatch (submit, wait) against a counter window of the same dispatch (start, dispatch, read,
//! stop through the v2 library's packets, the values read back), alternating, fastest of each.
//!
//! `cargo bench -p aqlprofile --bench counter_pass`

#[path = "../tests/common/mod.rs"]
mod common;

use common::{group, run, setup, text};
use test_support::Runtime;

fn main() {
    let s = setup("bench");
    let g = vec![group(&[
        "SQ_WAVES",
        "SQ_INSTS",
        "SQ_INSTS_VALU",
        "SPI_CSN_WAVE",
    ])];
    for (kernel, grid) in [
        ("straight", 256u32),
        ("straight", 256 * 64),
        ("looped", 256 * 16),
    ] {
        let o = run(
            &s,
            Runtime::Vhsa,
            "v2",
            kernel,
            grid,
            &g,
            &[("PMC_BENCH", "200")],
        );
        assert!(o.status.success(), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        let line = out
            .lines()
            .find(|l| l.starts_with("bench "))
            .expect("a bench line");
        let w: Vec<f64> = line
            .split_whitespace()
            .skip(2)
            .map(|x| x.parse().unwrap())
            .collect();
        println!(
            "counter pass / plain pass, {kernel} over {grid} work-items on vhsa: {:.2} (plain {:.1} us, counter pass {:.1} us, fastest of 200 alternating)",
            w[1] / w[0],
            w[0] / 1e3,
            w[1] / 1e3
        );
    }
}
