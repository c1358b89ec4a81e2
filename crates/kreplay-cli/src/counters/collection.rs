//! Whether counters can be collected on a runtime, found the way the tool finds it: the
//! aqlprofile v2 library (`libhsa-amd-aqlprofile64.so.1` exporting
//! `aqlprofile_pmc_create_packets`), else the runtime's AQL-profile extension table (v1).

use std::path::{Path, PathBuf};

/// The library the tool loads for the v2 interface.
pub const LIBRARY: &str = "libhsa-amd-aqlprofile64.so.1";
/// The v2 entry the tool needs from it.
pub const V2_ENTRY: &str = "aqlprofile_pmc_create_packets";

/// How counters would be collected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Collection {
    /// Through the aqlprofile v2 library at this path.
    Library(PathBuf),
    /// Through the runtime's v1 extension table (`HSA_EXTENSION_AMD_AQLPROFILE`).
    ExtensionTable,
    /// Neither is available.
    Unavailable,
}

/// The prefix of the `kreplay info` line that states the collection path.
pub const INFO_PREFIX: &str = "counter collection: ";

impl Collection {
    /// The `kreplay info` line (without its prefix).
    pub fn describe(&self) -> String {
        match self {
            Collection::Library(p) => format!("aqlprofile v2 library {}", p.display()),
            Collection::ExtensionTable => {
                "the runtime's AQL-profile extension table (aqlprofile v1)".to_owned()
            }
            Collection::Unavailable => format!(
                "unavailable (no {LIBRARY} exporting {V2_ENTRY}, and the runtime gives no AQL-profile extension table)"
            ),
        }
    }

    /// Reads [`Collection::describe`]'s text back.
    pub fn from_description(text: &str) -> Collection {
        if let Some(path) = text.strip_prefix("aqlprofile v2 library ") {
            Collection::Library(PathBuf::from(path))
        } else if text.starts_with("the runtime's AQL-profile extension table") {
            Collection::ExtensionTable
        } else {
            Collection::Unavailable
        }
    }

    /// What to do when collection is unavailable (the text of exit code 81).
    pub fn remedy() -> String {
        format!(
            "install ROCm's aqlprofile ({LIBRARY}, package hsa-amd-aqlprofile) where the dynamic loader finds it (LD_LIBRARY_PATH), or run on a virtual GPU (--runtime virtual or --runtime system-on-vkfd), where kreplay's drop-in {LIBRARY} beside the virtual runtime counts on the emulator"
        )
    }
}

/// The v2 library as the application would load it: beside the runtime first (`runtime_dir`
/// is put first on the application's `LD_LIBRARY_PATH`), then by the dynamic loader's search;
/// `None` when no candidate exports [`V2_ENTRY`]. A library found stays loaded.
pub fn find_library(runtime_dir: Option<&Path>) -> Option<PathBuf> {
    let beside = runtime_dir.map(|d| d.join(LIBRARY)).filter(|p| p.exists());
    let candidates = beside
        .into_iter()
        .chain(std::iter::once(PathBuf::from(LIBRARY)));
    for candidate in candidates {
        // SAFETY: loading a shared library runs its initialisers; the aqlprofile library has
        // none beyond its own state.
        let Ok(lib) = (unsafe { libloading::Library::new(&candidate) }) else {
            continue;
        };
        // SAFETY: only the symbol's presence is checked; it is not called.
        let has_entry = unsafe { lib.get::<*const ()>(V2_ENTRY.as_bytes()) }.is_ok();
        if has_entry {
            let path = loaded_path(&lib).unwrap_or(candidate);
            std::mem::forget(lib);
            return Some(path);
        }
    }
    None
}

/// The file the dynamic loader loaded for `lib`.
fn loaded_path(lib: &libloading::Library) -> Option<PathBuf> {
    // SAFETY: the symbol is only used as an address for dladdr.
    let sym = unsafe { lib.get::<*const ()>(V2_ENTRY.as_bytes()) }.ok()?;
    let address = *sym as *const libc::c_void;
    // SAFETY: dladdr reads the loader's tables; `info` is plain data it fills.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(address, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        let name = std::ffi::CStr::from_ptr(info.dli_fname).to_string_lossy();
        Some(PathBuf::from(name.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_read_back() {
        for c in [
            Collection::Library("/x/libhsa-amd-aqlprofile64.so.1".into()),
            Collection::ExtensionTable,
            Collection::Unavailable,
        ] {
            assert_eq!(Collection::from_description(&c.describe()), c);
        }
        assert!(Collection::remedy().contains("--runtime virtual"));
    }

    #[test]
    fn a_directory_without_the_library_finds_none_there() {
        let dir = std::env::temp_dir();
        let found = find_library(Some(&dir));
        assert!(
            found.as_ref().is_none_or(|p| !p.starts_with(&dir)),
            "{found:?}"
        );
    }
}
