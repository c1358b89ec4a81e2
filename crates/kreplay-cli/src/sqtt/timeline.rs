//! `kreplay sqtt timeline`: marker scopes as a Perfetto protobuf trace.
//!
//! Tracks: a root track named after the kernel; under it one track per compute unit (`CU c`,
//! `SE s CU c` when the shader engine is not 0), under each one per SIMD (`SIMD s`), under
//! each one per wave slot (`wave w`). On a wave track the wave itself is a slice named after
//! the kernel (first to last record), each marker scope a slice nested by its enter/exit
//! order, and each point an instant event with its payload words as arguments. Trace time is
//! the records' time (cycles), shown as nanoseconds, shifted so the earliest record is at 0
//! when some time is negative.

use super::scopes::MarkerScopes;
use crate::report::perfetto_proto::{DebugAnnotation as Arg, TraceBuilder};
use std::collections::BTreeMap;

/// Payload words shown as arguments of a point; longer payloads (address traces) show the
/// first ones and their count.
pub const SHOWN_PAYLOAD_WORDS: usize = 8;

/// The encoded trace of `scopes` for `kernel`.
pub fn trace(scopes: &MarkerScopes, kernel: &str) -> Vec<u8> {
    let min = scopes.waves.iter().map(|w| w.start).min().unwrap_or(0);
    let shift = if min < 0 { min.unsigned_abs() } else { 0 };
    let ts = |t: i64| (t.max(min) as i128 + i128::from(shift)) as u64;
    let mut b = TraceBuilder::new();
    let root = b.track(None, kernel);
    let mut cus = BTreeMap::new();
    let mut simds = BTreeMap::new();
    for w in &scopes.waves {
        let s = w.slot;
        let cu = *cus.entry((s.se, s.cu)).or_insert_with(|| {
            let name = if s.se == 0 {
                format!("CU {}", s.cu)
            } else {
                format!("SE {} CU {}", s.se, s.cu)
            };
            b.track(Some(root), &name)
        });
        let simd = *simds
            .entry((s.se, s.cu, s.simd))
            .or_insert_with(|| b.track(Some(cu), &format!("SIMD {}", s.simd)));
        let wave = b.track(Some(simd), &format!("wave {}", s.wave_id));
        b.slice(
            wave,
            (ts(w.start), ts(w.end)),
            kernel,
            "wave",
            vec![
                Arg::uint("se", u64::from(s.se)),
                Arg::uint("cu", u64::from(s.cu)),
                Arg::uint("simd", u64::from(s.simd)),
                Arg::uint("wave_id", u64::from(s.wave_id)),
            ],
        );
        for c in &w.scopes {
            let mut args = vec![
                Arg::uint("id", u64::from(c.id)),
                Arg::text("kind", c.kind),
                Arg::uint("cycles", u64::try_from(c.end - c.start).unwrap_or(0)),
            ];
            if !c.exited {
                args.push(Arg::flag("exited", false));
            }
            b.slice(wave, (ts(c.start), ts(c.end)), &c.name, "scope", args);
        }
        for p in &w.points {
            let mut args = vec![Arg::uint("id", u64::from(p.id))];
            if !p.payload.is_empty() {
                args.push(Arg::uint("payload_count", p.payload.len() as u64));
            }
            for (i, v) in p.payload.iter().take(SHOWN_PAYLOAD_WORDS).enumerate() {
                args.push(Arg::uint(&format!("payload_{i}"), u64::from(*v)));
            }
            b.instant(wave, ts(p.time), &p.name, "point", args);
        }
    }
    b.encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::perfetto_proto::{TYPE_INSTANT, TYPE_SLICE_BEGIN, Trace};
    use crate::sqtt::funcmap::Funcmap;
    use crate::sqtt::scopes;
    use crate::sqtt::shaderdata::Record;
    use prost::Message;

    #[test]
    fn one_track_per_cu_simd_and_wave_with_scopes_and_points() {
        let map = Funcmap::parse(b"U:1:outer\nP:2:value\nR:2:extra_payload_count=1\n\0").unwrap();
        let rec = |time, value: u32, se, cu, simd, wave_id| Record {
            time,
            value: u64::from(value),
            se,
            cu,
            simd,
            wave_id,
            flags: 0,
        };
        let records = [
            rec(-4, 6, 0, 0, 0, 0),
            rec(0, 8, 0, 0, 0, 0),
            rec(1, 77, 0, 0, 0, 0),
            rec(6, 1, 0, 0, 0, 0),
            rec(3, 6, 1, 2, 1, 5),
            rec(9, 1, 1, 2, 1, 5),
        ];
        let s = scopes::build(&records, &map);
        let t = Trace::decode(trace(&s, "k").as_slice()).unwrap();
        let names: Vec<String> = t
            .packet
            .iter()
            .filter_map(|p| p.track_descriptor.as_ref()?.name.clone())
            .collect();
        assert_eq!(
            names,
            [
                "k",
                "CU 0",
                "SIMD 0",
                "wave 0",
                "SE 1 CU 2",
                "SIMD 1",
                "wave 5"
            ]
        );
        let events: Vec<(u64, i32, Option<String>)> = t
            .packet
            .iter()
            .filter_map(|p| {
                Some((
                    p.timestamp?,
                    p.track_event.as_ref()?.r#type?,
                    p.track_event.as_ref()?.name.clone(),
                ))
            })
            .filter(|e| e.1 == TYPE_SLICE_BEGIN || e.1 == TYPE_INSTANT)
            .collect();
        // Shifted by 4: the earliest record (-4) is at 0.
        assert!(events.contains(&(0, TYPE_SLICE_BEGIN, Some("outer".into()))));
        assert!(events.contains(&(4, TYPE_INSTANT, Some("value".into()))));
        assert!(events.contains(&(7, TYPE_SLICE_BEGIN, Some("outer".into()))));
        let point = t
            .packet
            .iter()
            .filter_map(|p| p.track_event.as_ref())
            .find(|e| e.r#type == Some(TYPE_INSTANT))
            .unwrap();
        assert!(
            point
                .debug_annotations
                .iter()
                .any(|a| a.name.as_deref() == Some("payload_0") && a.uint_value == Some(77))
        );
    }
}
