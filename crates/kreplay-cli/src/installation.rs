//! Finding the pieces `kreplay` launches: the tool library, the virtual runtime (vhsa), the
//! system runtime and the bundled demo application.
//!
//! Pieces are looked up relative to the `kreplay` executable: next to it in a cargo build tree
//! (`target/<profile>/`), or in `<prefix>/lib/kreplay/` when installed as `<prefix>/bin/kreplay`.
//! `KREPLAY_TOOL_LIB` (a file), `KREPLAY_VHSA_DIR` (a directory holding
//! `libhsa-runtime64.so.1`) and `KREPLAY_VKFD_DIR` (a directory holding vkfd as
//! `libhsakmt.so.1`) override the lookup.

use crate::exit_status::CliError;
use std::path::{Path, PathBuf};

/// The runtime's file name as applications load it.
pub const RUNTIME_SONAME: &str = "libhsa-runtime64.so.1";
/// The file cargo builds vhsa as.
const VHSA_BUILT_NAME: &str = "libhsa_runtime64.so";
/// The thunk's file name as the runtime loads it.
pub const THUNK_SONAME: &str = "libhsakmt.so.1";
/// The file cargo builds vkfd as.
const VKFD_BUILT_NAME: &str = "libvkfd.so";
/// The file cargo builds the virtual GPUs' aqlprofile as.
const AQLPROFILE_BUILT_NAME: &str = "libhsa_amd_aqlprofile64.so";
/// The names aqlprofile is loaded by: ROCR opens the first for the v1 extension table, a v2
/// caller the second.
pub const AQLPROFILE_NAMES: [&str; 2] =
    ["libhsa-amd-aqlprofile64.so", "libhsa-amd-aqlprofile64.so.1"];
/// The tool library's file name.
pub const TOOL_LIB_NAME: &str = "libkreplay.so";
/// The bundled demo application's file name.
pub const DEMO_APP_NAME: &str = "kreplay-demo-app";

/// The directories searched for a piece: the executable's own directory, then the installed
/// layout's `../lib/kreplay`.
pub fn search_dirs() -> Vec<PathBuf> {
    let Ok(exe) = std::env::current_exe() else {
        return Vec::new();
    };
    let Some(dir) = exe.parent() else {
        return Vec::new();
    };
    let mut dirs = vec![dir.to_path_buf()];
    if let Some(prefix) = dir.parent() {
        dirs.push(prefix.join("lib").join("kreplay"));
    }
    dirs
}

fn looked_list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The tool library: `KREPLAY_TOOL_LIB`, else `libkreplay.so` in [`search_dirs`].
pub fn tool_library() -> Result<PathBuf, CliError> {
    find_file("KREPLAY_TOOL_LIB", TOOL_LIB_NAME).map_err(|looked| CliError::ToolNotFound { looked })
}

/// The demo application, found like the tool library.
pub fn demo_app() -> Result<PathBuf, String> {
    find_file("KREPLAY_DEMO_APP", DEMO_APP_NAME)
}

fn find_file(override_var: &str, name: &str) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(override_var).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(absolute(&path))
        } else {
            Err(format!("{} (from {override_var})", path.display()))
        };
    }
    let candidates: Vec<PathBuf> = search_dirs().into_iter().map(|d| d.join(name)).collect();
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| looked_list(&candidates))
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A directory holding vhsa as `libhsa-runtime64.so.1`, for `LD_LIBRARY_PATH`.
///
/// In a build tree cargo names the library `libhsa_runtime64.so`; a `vhsa-runtime/` directory
/// beside it gets a symbolic link under the runtime's name (replaced atomically).
pub fn vhsa_dir() -> Result<PathBuf, CliError> {
    if let Some(dir) = std::env::var_os("KREPLAY_VHSA_DIR").filter(|v| !v.is_empty()) {
        let dir = absolute(Path::new(&dir));
        let lib = dir.join(RUNTIME_SONAME);
        return if lib.is_file() {
            Ok(dir)
        } else {
            Err(CliError::VhsaNotFound {
                looked: format!("{} (from KREPLAY_VHSA_DIR)", lib.display()),
            })
        };
    }
    let mut looked = Vec::new();
    for dir in search_dirs() {
        let ready = dir.join("vhsa-runtime");
        let built = dir.join(VHSA_BUILT_NAME);
        if built.is_file() {
            link_runtime_name(&ready, &built)
                .and_then(|()| link_aqlprofile(&ready, &dir))
                .map_err(|e| CliError::io("preparing the vhsa directory", &ready, e))?;
            return Ok(ready);
        }
        looked.push(built);
        let installed = dir.join(RUNTIME_SONAME);
        if installed.is_file() {
            return Ok(dir);
        }
        looked.push(installed);
    }
    Err(CliError::VhsaNotFound {
        looked: looked_list(&looked),
    })
}

/// A directory holding vkfd, the virtual GPU's user-space thunk, as `libhsakmt.so.1`, for
/// `LD_LIBRARY_PATH`: `KREPLAY_VKFD_DIR`, else a `vkfd-thunk/` directory beside the built
/// `libvkfd.so` (a symbolic link under the thunk's name), else `vkfd/` of the installed layout.
pub fn vkfd_dir() -> Result<PathBuf, CliError> {
    if let Some(dir) = std::env::var_os("KREPLAY_VKFD_DIR").filter(|v| !v.is_empty()) {
        let dir = absolute(Path::new(&dir));
        let lib = dir.join(THUNK_SONAME);
        return if lib.is_file() {
            Ok(dir)
        } else {
            Err(CliError::VkfdNotFound {
                looked: format!("{} (from KREPLAY_VKFD_DIR)", lib.display()),
            })
        };
    }
    let mut looked = Vec::new();
    for dir in search_dirs() {
        let built = dir.join(VKFD_BUILT_NAME);
        if built.is_file() {
            let ready = dir.join("vkfd-thunk");
            link_name(&ready, THUNK_SONAME, &built)
                .and_then(|()| link_aqlprofile(&ready, &dir))
                .map_err(|e| CliError::io("preparing the vkfd directory", &ready, e))?;
            return Ok(ready);
        }
        looked.push(built);
        let installed = dir.join("vkfd").join(THUNK_SONAME);
        if installed.is_file() {
            return Ok(dir.join("vkfd"));
        }
        looked.push(installed);
    }
    Err(CliError::VkfdNotFound {
        looked: looked_list(&looked),
    })
}

/// Links the built aqlprofile of `built_dir` into `dir` under both its names (the runtime on
/// `LD_LIBRARY_PATH` finds it there), when it is built.
fn link_aqlprofile(dir: &Path, built_dir: &Path) -> std::io::Result<()> {
    let built = built_dir.join(AQLPROFILE_BUILT_NAME);
    if !built.is_file() {
        return Ok(());
    }
    for name in AQLPROFILE_NAMES {
        link_name(dir, name, &built)?;
    }
    Ok(())
}

fn link_runtime_name(dir: &Path, target: &Path) -> std::io::Result<()> {
    link_name(dir, RUNTIME_SONAME, target)
}

fn link_name(dir: &Path, name: &str, target: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let link = dir.join(name);
    if std::fs::read_link(&link).is_ok_and(|t| t == target) {
        return Ok(());
    }
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)?;
    std::fs::rename(&tmp, &link)
}

/// Where a system runtime is looked for: `KREPLAY_SYSTEM_RUNTIME` (a file) alone when set, else
/// the `LD_LIBRARY_PATH` directories, `$ROCM_PATH/lib`, then the usual system directories.
pub fn system_runtime_candidates() -> Vec<PathBuf> {
    if let Some(file) = std::env::var_os("KREPLAY_SYSTEM_RUNTIME").filter(|v| !v.is_empty()) {
        return vec![PathBuf::from(file)];
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    if let Some(rocm) = std::env::var_os("ROCM_PATH") {
        dirs.push(PathBuf::from(rocm).join("lib"));
    }
    for d in [
        "/opt/rocm/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs.into_iter()
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(RUNTIME_SONAME))
        .collect()
}

/// The runtime the application will use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// The installed ROCm runtime at this path.
    System(PathBuf),
    /// vhsa, from this directory.
    Virtual(PathBuf),
    /// The installed ROCm runtime at `library` on vkfd, the virtual GPU's thunk, from
    /// `thunk_dir`.
    SystemOnVkfd {
        /// The system runtime.
        library: PathBuf,
        /// The directory holding vkfd as `libhsakmt.so.1`.
        thunk_dir: PathBuf,
    },
}

impl Runtime {
    /// The runtime library file.
    pub fn library(&self) -> PathBuf {
        match self {
            Runtime::System(p) => p.clone(),
            Runtime::Virtual(d) => d.join(RUNTIME_SONAME),
            Runtime::SystemOnVkfd { library, .. } => library.clone(),
        }
    }

    /// The directory to put first on the application's `LD_LIBRARY_PATH`, if any.
    pub fn library_dir(&self) -> Option<&Path> {
        match self {
            Runtime::System(_) => None,
            Runtime::Virtual(d) => Some(d),
            Runtime::SystemOnVkfd { thunk_dir, .. } => Some(thunk_dir),
        }
    }
}

/// `--runtime` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RuntimeChoice {
    /// The system runtime when a GPU driver (`/dev/kfd`) and the runtime are present, else vhsa.
    Auto,
    /// The installed ROCm runtime.
    System,
    /// vhsa, the virtual runtime.
    Virtual,
    /// The installed ROCm runtime (Debian 12's ROCR 5.2) on vkfd, the virtual GPU's user-space
    /// thunk: the real runtime, no GPU or driver needed (GPUs from VKFD_AGENTS).
    SystemOnVkfd,
}

/// What [`decide`] chose and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Use the system runtime.
    System,
    /// Use vhsa.
    Virtual,
    /// Use the system runtime on vkfd.
    SystemOnVkfd,
}

/// The selection rule, apart from the file system: `kfd` is whether `/dev/kfd` exists,
/// `system_found` whether a system runtime library was found. Returns the decision and the
/// reason printed on stderr, or the error message for `--runtime system` without a runtime.
pub fn decide(
    choice: RuntimeChoice,
    kfd: bool,
    system_found: bool,
) -> Result<(Decision, &'static str), String> {
    match choice {
        RuntimeChoice::Virtual => Ok((Decision::Virtual, "--runtime virtual")),
        RuntimeChoice::System if system_found => Ok((Decision::System, "--runtime system")),
        RuntimeChoice::System => Err(format!("no system {RUNTIME_SONAME} found")),
        RuntimeChoice::SystemOnVkfd if system_found => {
            Ok((Decision::SystemOnVkfd, "--runtime system-on-vkfd"))
        }
        RuntimeChoice::SystemOnVkfd => Err(format!(
            "no system {RUNTIME_SONAME} found to run on vkfd (Debian: install libhsa-runtime64-1)"
        )),
        RuntimeChoice::Auto => match (kfd, system_found) {
            (true, true) => Ok((
                Decision::System,
                "auto: /dev/kfd and a system runtime are present",
            )),
            (false, _) => Ok((
                Decision::Virtual,
                "auto: /dev/kfd not found (no GPU driver)",
            )),
            (true, false) => Ok((Decision::Virtual, "auto: no system runtime found")),
        },
    }
}

/// Applies [`decide`] to this machine; prints the choice on stderr when `announce` is set.
pub fn select(choice: RuntimeChoice, announce: bool) -> Result<Runtime, CliError> {
    let kfd = Path::new("/dev/kfd").exists();
    let system = system_runtime_candidates()
        .into_iter()
        .find(|p| p.is_file());
    let (decision, reason) =
        decide(choice, kfd, system.is_some()).map_err(CliError::SystemRuntimeNotFound)?;
    let runtime = match (decision, system) {
        (Decision::System, Some(path)) => Runtime::System(path),
        (Decision::SystemOnVkfd, Some(library)) => Runtime::SystemOnVkfd {
            library,
            thunk_dir: vkfd_dir()?,
        },
        _ => Runtime::Virtual(vhsa_dir()?),
    };
    if announce {
        let what = match &runtime {
            Runtime::System(p) => format!("system ({})", p.display()),
            Runtime::Virtual(d) => format!("virtual (vhsa, {})", d.join(RUNTIME_SONAME).display()),
            Runtime::SystemOnVkfd { library, thunk_dir } => format!(
                "system ({}) on vkfd ({})",
                library.display(),
                thunk_dir.join(THUNK_SONAME).display()
            ),
        };
        eprintln!("kreplay: runtime: {what} [{reason}]");
    }
    Ok(runtime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_aqlprofile_is_linked_under_both_names_beside_the_runtime() {
        let root =
            std::env::temp_dir().join(format!("kreplay-aqlprofile-link-{}", std::process::id()));
        let (built_dir, ready) = (root.join("built"), root.join("ready"));
        std::fs::create_dir_all(&built_dir).unwrap();
        // Nothing built: nothing linked, no error.
        link_aqlprofile(&ready, &built_dir).unwrap();
        assert!(!ready.join(AQLPROFILE_NAMES[0]).exists());
        std::fs::write(built_dir.join(AQLPROFILE_BUILT_NAME), b"elf").unwrap();
        link_aqlprofile(&ready, &built_dir).unwrap();
        for name in AQLPROFILE_NAMES {
            assert_eq!(
                std::fs::read_link(ready.join(name)).unwrap(),
                built_dir.join(AQLPROFILE_BUILT_NAME)
            );
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_system_runtime_on_vkfd_needs_no_driver_but_a_system_runtime() {
        for kfd in [false, true] {
            assert_eq!(
                decide(RuntimeChoice::SystemOnVkfd, kfd, true).unwrap().0,
                Decision::SystemOnVkfd
            );
            let e = decide(RuntimeChoice::SystemOnVkfd, kfd, false).unwrap_err();
            assert!(e.contains("libhsa-runtime64-1"), "{e}");
        }
    }

    #[test]
    fn auto_prefers_the_system_runtime_only_with_a_driver() {
        assert_eq!(
            decide(RuntimeChoice::Auto, true, true).unwrap().0,
            Decision::System
        );
        assert_eq!(
            decide(RuntimeChoice::Auto, false, true).unwrap().0,
            Decision::Virtual
        );
        assert_eq!(
            decide(RuntimeChoice::Auto, true, false).unwrap().0,
            Decision::Virtual
        );
        assert_eq!(
            decide(RuntimeChoice::Auto, false, false).unwrap().0,
            Decision::Virtual
        );
        assert!(
            decide(RuntimeChoice::Auto, false, true)
                .unwrap()
                .1
                .contains("/dev/kfd")
        );
    }

    #[test]
    fn explicit_choices_are_obeyed() {
        assert_eq!(
            decide(RuntimeChoice::Virtual, true, true).unwrap().0,
            Decision::Virtual
        );
        assert_eq!(
            decide(RuntimeChoice::System, false, true).unwrap().0,
            Decision::System
        );
        assert!(
            decide(RuntimeChoice::System, true, false)
                .unwrap_err()
                .contains(RUNTIME_SONAME)
        );
    }

    #[test]
    fn runtime_library_names() {
        assert_eq!(
            Runtime::Virtual(PathBuf::from("d")).library(),
            PathBuf::from("d").join(RUNTIME_SONAME)
        );
        assert_eq!(
            Runtime::System(PathBuf::from("x.so")).library(),
            PathBuf::from("x.so")
        );
    }
}
