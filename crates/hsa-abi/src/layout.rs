//! The AMD extension table of ROCm 5.x (major 1), mapped onto the modern layout.
//!
//! Before ROCm 6.0 entries were inserted in the middle of the AMD extension table between
//! releases, so a slot's offset depends on the release; the release is told by the table's size
//! (`minor_id`). The core table's 125 entries never moved. Layouts, checked entry by entry
//! against each release's `hsa_api_trace.h` (member numbers are 1-based):
//!
//! | release | entries (bytes) | modern member of legacy member `m` |
//! |---|---|---|
//! | 5.0-5.4 | 48 (400) | `m` for 1-16; `m + 2` for 17-47; 53 for 48 (the SPM trio, 50-52, and the copy-engine pair, 17-18, are missing) |
//! | 5.5 | 51 (424) | `m` for 1-16; `m + 2` for 17-51 (the copy-engine pair is missing) |
//! | 5.6-5.7 | 55 (456) | `m` (the first 55 modern entries) |
//!
//! Modern entries a release lacks (the copy-engine pair before 5.6, every entry after 55) map to
//! nothing; callers treat them as absent.

use crate::{ApiTableVersion, SlotError, member_offset};

/// A ROCm 5.x layout of the AMD extension table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AmdExtLayout {
    /// ROCm 5.0 to 5.4: 48 entries.
    Legacy48,
    /// ROCm 5.5: 51 entries.
    Legacy51,
    /// ROCm 5.6 and 5.7: 55 entries.
    Legacy55,
}

impl AmdExtLayout {
    /// The layout of a major-1 table of `minor_id` bytes.
    pub fn of(minor_id: u32) -> Option<AmdExtLayout> {
        match minor_id as usize {
            n if n == member_offset(48) + 8 => Some(AmdExtLayout::Legacy48),
            n if n == member_offset(51) + 8 => Some(AmdExtLayout::Legacy51),
            n if n == member_offset(55) + 8 => Some(AmdExtLayout::Legacy55),
            _ => None,
        }
    }

    /// The legacy member number of modern member `n` (1-based), if the release has it.
    pub fn member(self, n: usize) -> Option<usize> {
        match self {
            AmdExtLayout::Legacy48 => match n {
                1..=16 => Some(n),
                19..=49 => Some(n - 2),
                53 => Some(48),
                _ => None,
            },
            AmdExtLayout::Legacy51 => match n {
                1..=16 => Some(n),
                19..=53 => Some(n - 2),
                _ => None,
            },
            AmdExtLayout::Legacy55 => (1..=55).contains(&n).then_some(n),
        }
    }
}

/// Where the slot at modern byte `offset` lies in a major-1 AMD extension table.
pub fn amd_ext_offset(
    version: &ApiTableVersion,
    offset: usize,
) -> Result<Option<usize>, SlotError> {
    let layout = AmdExtLayout::of(version.minor_id).ok_or(SlotError::UnknownLayout {
        table: "amd_ext",
        minor_id: version.minor_id,
    })?;
    if offset < member_offset(1) || !(offset - member_offset(0)).is_multiple_of(8) {
        return Ok(None);
    }
    let n = (offset - member_offset(0)) / 8;
    Ok(layout.member(n).map(member_offset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AmdExtTable, CoreApiTable, TablePtr};
    use std::mem::offset_of;

    /// A fake major-1 AMD extension table of `entries` members whose member `m` holds `m`.
    fn legacy_table(entries: usize) -> Vec<u64> {
        let mut t = vec![0u64; 2 + entries];
        t[0] = 1 | ((member_offset(entries) as u64 + 8) << 32);
        for (m, slot) in t.iter_mut().enumerate().skip(2) {
            *slot = (m - 1) as u64;
        }
        t
    }

    fn member_at(t: &[u64], legacy: usize) -> u64 {
        t[legacy + 1]
    }

    #[test]
    fn rocm_5_2_tables_map_the_entries_kreplay_uses() {
        let mut t = legacy_table(48);
        // SAFETY: a live, writable table of 48 members.
        let amd = unsafe { TablePtr::new(t.as_mut_ptr().cast::<AmdExtTable>()) }.unwrap();
        amd.check_major(crate::AMD_EXT_MAJOR).unwrap();
        let read = |offset: usize| {
            // SAFETY: every slot is a pointer-sized field.
            unsafe { amd.read_at(offset, |x: &AmdExtTable| &x.hsa_amd_pointer_info_fn) }
                .map(|f| f.map(|f| f as usize))
        };
        // Facts from ROCm 5.2's header (modern / 5.2 member): pointer_info 29/27,
        // intercept_create 38/36, intercept_register 39/37, signal_create 34/32, memory_fill
        // 25/23, queue_cu_get_mask 53/48; the first 16 are in place.
        for (modern, legacy) in [
            (29, 27),
            (38, 36),
            (39, 37),
            (34, 32),
            (25, 23),
            (53, 48),
            (16, 16),
            (8, 8),
        ] {
            assert_eq!(
                read(member_offset(modern)),
                Ok(Some(legacy)),
                "modern member {modern}"
            );
        }
        // The copy-engine pair and the SPM trio do not exist in 5.2; nor does anything past 53.
        for absent in [17, 18, 50, 51, 52, 56] {
            assert_eq!(
                read(member_offset(absent)),
                Err(SlotError::Absent {
                    table: "amd_ext",
                    offset: member_offset(absent)
                })
            );
        }
        let f: crate::ffi::hsa_amd_pointer_info_fn_t = None;
        let at = offset_of!(AmdExtTable, hsa_amd_pointer_info_fn);
        // SAFETY: the offset and the type of the same field.
        unsafe { amd.write_at(at, |x: &AmdExtTable| &x.hsa_amd_pointer_info_fn, f) }.unwrap();
        assert_eq!(
            member_at(&t, 27),
            0,
            "the write went to 5.2's pointer_info slot"
        );
        assert_eq!(member_at(&t, 29), 29, "not to the modern offset");
    }

    fn intercept_create(amd: TablePtr<AmdExtTable>) -> Option<usize> {
        let at = offset_of!(AmdExtTable, hsa_amd_queue_intercept_create_fn);
        // SAFETY: the offset and the type of the same field.
        unsafe { amd.read_at(at, |x: &AmdExtTable| &x.hsa_amd_queue_intercept_create_fn) }
            .unwrap()
            .map(|f| f as usize)
    }

    #[test]
    fn rocm_5_5_and_5_7_layouts() {
        let mut t = legacy_table(51);
        // SAFETY: a live table of 51 members.
        let amd = unsafe { TablePtr::new(t.as_mut_ptr().cast::<AmdExtTable>()) }.unwrap();
        assert_eq!(intercept_create(amd), Some(36));
        let mut t = legacy_table(55);
        // SAFETY: a live table of 55 members.
        let amd = unsafe { TablePtr::new(t.as_mut_ptr().cast::<AmdExtTable>()) }.unwrap();
        assert_eq!(intercept_create(amd), Some(38));
    }

    #[test]
    fn unknown_legacy_sizes_and_majors_are_refused_clearly() {
        let mut t = legacy_table(50);
        // SAFETY: a live table of 50 members.
        let amd = unsafe { TablePtr::new(t.as_mut_ptr().cast::<AmdExtTable>()) }.unwrap();
        let e = amd.check_major(crate::AMD_EXT_MAJOR).unwrap_err();
        assert_eq!(
            e,
            SlotError::UnknownLayout {
                table: "amd_ext",
                minor_id: 416
            }
        );
        assert!(e.to_string().contains("5.0-5.4: 400 bytes"), "{e}");
        // Major 4 is no layout this build knows.
        t[0] = 4 | (416 << 32);
        assert!(matches!(
            amd.check_major(crate::AMD_EXT_MAJOR),
            Err(SlotError::WrongMajor { found: 4, .. })
        ));
    }

    #[test]
    fn the_core_table_keeps_its_layout_in_rocm_5() {
        let mut t = vec![0u64; 2 + 125];
        t[0] = 1 | ((member_offset(125) as u64 + 8) << 32);
        t[2 + 7] = 8; // member 8: hsa_queue_create
        // SAFETY: a live table of 125 members.
        let core = unsafe { TablePtr::new(t.as_mut_ptr().cast::<CoreApiTable>()) }.unwrap();
        core.check_major(crate::CORE_MAJOR).unwrap();
        let at = offset_of!(CoreApiTable, hsa_queue_create_fn);
        // SAFETY: the offset and the type of the same field.
        let got = unsafe { core.read_at(at, |x: &CoreApiTable| &x.hsa_queue_create_fn) }.unwrap();
        assert_eq!(got.map(|f| f as usize), Some(8));
    }
}
