//! `ROCR_VISIBLE_DEVICES`: which GPUs the runtime shows, and in what order, as ROCR reads it.
//!
//! The value is a comma-separated list; each entry names a GPU by its enumeration index (a C
//! integer: decimal, `0x` hexadecimal or `0` octal) or by its UUID (`GPU-` and the 16 hex digits
//! of [`crate::topology::Agent::uuid`], or a prefix of them that only one GPU has, any case).
//! The GPUs are shown in the order of the list. The list ends at the first entry that names no
//! GPU, names one already listed, or matches several; entries past the number of GPUs are not
//! read. Set but empty (or `-1`) shows no GPU; unset shows every GPU. The CPU agent is always
//! shown. (ROCR aborts on an empty entry such as the middle of `1,,0`; here it ends the list.)

/// The variable's name.
pub(crate) const VARIABLE: &str = "ROCR_VISIBLE_DEVICES";

/// The indices of the GPUs to show, in order, for the variable's `value` (`None`: unset) among
/// GPUs whose UUID strings (`GPU-...`) are `uuids`, in enumeration order.
pub(crate) fn select(value: Option<&str>, uuids: &[String]) -> Vec<usize> {
    let Some(value) = value else {
        return (0..uuids.len()).collect();
    };
    // An empty value is one empty entry, which names no GPU.
    let mut shown: Vec<usize> = Vec::new();
    for entry in value.split(',').take(uuids.len()) {
        let entry = entry.trim().to_ascii_uppercase();
        let named = if entry.starts_with('G') {
            by_uuid(&entry, uuids)
        } else {
            by_index(&entry, uuids.len())
        };
        match named {
            Some(i) if !shown.contains(&i) => shown.push(i),
            _ => break,
        }
    }
    shown
}

/// The one GPU whose UUID starts with `entry` (upper case), if exactly one does.
fn by_uuid(entry: &str, uuids: &[String]) -> Option<usize> {
    if !(5..=20).contains(&entry.len()) {
        return None;
    }
    let mut matching = uuids
        .iter()
        .enumerate()
        .filter(|(_, u)| u.to_ascii_uppercase().starts_with(entry));
    let (first, _) = matching.next()?;
    matching.next().is_none().then_some(first)
}

/// The GPU an enumeration index names, when `entry` is a whole C integer below `gpus`.
fn by_index(entry: &str, gpus: usize) -> Option<usize> {
    let (negative, digits) = match entry.as_bytes().first() {
        Some(b'-') => (true, &entry[1..]),
        Some(b'+') => (false, &entry[1..]),
        _ => (false, entry),
    };
    let (radix, digits) = if let Some(hex) = digits.strip_prefix("0X") {
        (16, hex)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let value = u64::from_str_radix(digits, radix).ok()?;
    let index = usize::try_from(value).ok()?;
    (index < gpus && (!negative || index == 0)).then_some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uuids(n: u64) -> Vec<String> {
        (1..=n)
            .map(|i| format!("GPU-{:016x}", 0xabcd_0000_0000_0000 | i))
            .collect()
    }

    #[test]
    fn unset_shows_every_gpu_and_empty_or_minus_one_shows_none() {
        assert_eq!(select(None, &uuids(3)), [0, 1, 2]);
        assert_eq!(select(Some(""), &uuids(3)), [] as [usize; 0]);
        assert_eq!(select(Some("-1"), &uuids(3)), [] as [usize; 0]);
        assert_eq!(select(Some("GPU-XX"), &uuids(3)), [] as [usize; 0]);
    }

    #[test]
    fn indices_select_and_order_and_the_first_bad_entry_ends_the_list() {
        let u = uuids(4);
        assert_eq!(select(Some("3,0"), &u), [3, 0]);
        assert_eq!(select(Some(" 2 , 1 "), &u), [2, 1]);
        assert_eq!(select(Some("1,4,0"), &u), [1], "out of range ends the list");
        assert_eq!(select(Some("1,1,0"), &u), [1], "a repeat ends the list");
        assert_eq!(select(Some("1,x,0"), &u), [1], "not a number ends the list");
        assert_eq!(
            select(Some("1,,0"), &u),
            [1],
            "an empty entry ends the list"
        );
        assert_eq!(
            select(Some("0x3,02,+1,-0"), &u),
            [3, 2, 1, 0],
            "C integer forms"
        );
        assert_eq!(
            select(Some("08"), &u),
            [] as [usize; 0],
            "8 is not an octal digit"
        );
        assert_eq!(
            select(Some("1,0,2"), &uuids(2)),
            [1, 0],
            "entries past the GPU count are not read"
        );
    }

    #[test]
    fn uuids_and_unique_prefixes_select_in_any_case() {
        let u = uuids(3);
        assert_eq!(select(Some("gpu-abcd000000000003,0"), &u), [2, 0]);
        assert_eq!(select(Some("GPU-ABCD000000000002"), &u), [1]);
        assert_eq!(
            select(Some("1,GPU-ABCD"), &u),
            [1],
            "a prefix several GPUs share ends the list"
        );
        assert_eq!(
            select(Some("GPU-ABCD0000000000031"), &u),
            [] as [usize; 0],
            "too long"
        );
        assert_eq!(select(Some("GPU-"), &u), [] as [usize; 0], "too short");
    }
}
