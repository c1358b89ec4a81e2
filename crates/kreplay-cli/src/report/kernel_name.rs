//! Kernel names as a person reads them in every output.

/// The name a person reads: demangled when it is a C++ symbol, without the `.kd` suffix.
pub fn display_name(kernel: &str) -> String {
    let base = kernel.strip_suffix(".kd").unwrap_or(kernel);
    cpp_demangle::Symbol::new(base)
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| base.to_owned())
}

/// The demangled name without its parameter list (rocprofv3's truncated kernel name).
pub fn truncated_name(display: &str) -> String {
    display
        .split_once('(')
        .map_or(display, |(head, _)| head)
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_demangled_and_truncated_at_the_parameters() {
        assert_eq!(display_name("_Z3addPfS_i.kd"), "add(float*, float*, int)");
        assert_eq!(display_name("plain"), "plain");
        assert_eq!(truncated_name("f(int, float)"), "f");
    }
}
