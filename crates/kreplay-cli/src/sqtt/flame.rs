//! `kreplay sqtt flame`: folded stacks and an SVG flame graph of marker scopes, rooted at the
//! kernel and weighted by cycles (the time between a wave's consecutive records, summed over
//! every wave).

use super::scopes::MarkerScopes;

/// A frame name safe in the folded format, where `;` separates frames and the count follows
/// the last space.
fn frame(name: &str) -> String {
    name.replace(';', ",").replace(['\n', '\r'], " ")
}

/// The folded stacks (`kernel;outer;inner cycles`), one line per stack with a non-zero count,
/// sorted.
pub fn folded(scopes: &MarkerScopes, kernel: &str) -> String {
    let mut lines: Vec<String> = scopes
        .cycles()
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(stack, n)| {
            let mut frames = vec![frame(kernel)];
            frames.extend(stack.iter().map(|s| frame(s)));
            format!("{} {n}", frames.join(";"))
        })
        .collect();
    lines.sort();
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// The SVG flame graph of `folded` stacks. Every frame is drawn, however narrow, and carries
/// its name in its `<title>`.
pub fn svg(folded: &str, kernel: &str) -> std::io::Result<Vec<u8>> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = format!("{kernel}: marker scopes");
    options.count_name = "cycles".to_owned();
    options.min_width = 0.0;
    options.hash = true;
    options.deterministic = true;
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqtt::funcmap::Funcmap;
    use crate::sqtt::scopes;
    use crate::sqtt::shaderdata::Record;

    #[test]
    fn folded_lines_and_an_svg_naming_each_frame() {
        let map = Funcmap::parse(b"U:1:a;b\nU:2:inner\n\0").unwrap();
        let rec = |time, value: u32| Record {
            time,
            value: u64::from(value),
            se: 0,
            cu: 0,
            simd: 0,
            wave_id: 0,
            flags: 0,
        };
        let records = [rec(0, 6), rec(10, 10), rec(13, 1), rec(20, 1), rec(21, 6)];
        let s = scopes::build(&records, &map);
        let text = folded(&s, "kern");
        assert_eq!(text, "kern 1\nkern;a,b 17\nkern;a,b;inner 3\n");
        let svg = String::from_utf8(svg(&text, "kern").unwrap()).unwrap();
        assert!(svg.starts_with("<?xml"));
        for name in ["kern", "a,b", "inner"] {
            assert!(svg.contains(&format!("<title>{name} (")), "{name} missing");
        }
    }
}
