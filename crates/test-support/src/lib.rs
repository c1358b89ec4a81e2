//! Helpers shared by the integration tests of every crate.
//!
//! Artifacts are found next to the running test binary, so any `CARGO_TARGET_DIR` works.
//! The test command builds the whole workspace first (`cargo build --workspace --all-targets`);
//! a missing artifact is reported with that instruction rather than rebuilt from inside a test.

pub mod instruction_count;
pub mod module_graph;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The profile directory (`target/debug`) holding the workspace's artifacts.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let mut dir = exe
        .parent()
        .expect("test binary has a parent")
        .to_path_buf();
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir.pop();
    }
    dir
}

fn artifact(name: &str) -> PathBuf {
    let p = profile_dir().join(name);
    assert!(
        p.exists(),
        "{} is missing: build the workspace first (`cargo build --workspace --all-targets`)",
        p.display()
    );
    p
}

/// A directory holding vhsa under the runtime's real file name `libhsa-runtime64.so.1`, for
/// `LD_LIBRARY_PATH`.
pub fn vhsa_lib_dir() -> PathBuf {
    let built = artifact("libhsa_runtime64.so");
    let dir = profile_dir().join("vhsa-runtime");
    std::fs::create_dir_all(&dir).expect("create vhsa-runtime dir");
    published(&dir.join("libhsa-runtime64.so.1"), |tmp| {
        std::os::unix::fs::symlink(&built, tmp).expect("symlink vhsa")
    });
    link_aqlprofile(&dir);
    dir
}

/// The built aqlprofile of the virtual GPUs (`crates/aqlprofile-so`).
pub const AQLPROFILE_BUILT: &str = "libhsa_amd_aqlprofile64.so";
/// The names it is loaded by: ROCR opens the first, a v2 caller the second.
pub const AQLPROFILE_NAMES: [&str; 2] =
    ["libhsa-amd-aqlprofile64.so", "libhsa-amd-aqlprofile64.so.1"];

/// Links the built aqlprofile into `dir` under both its names, when it is built.
fn link_aqlprofile(dir: &Path) {
    if profile_dir().join(AQLPROFILE_BUILT).exists() {
        for name in AQLPROFILE_NAMES {
            link_dir_in(dir, AQLPROFILE_BUILT, name);
        }
    }
}

/// A directory holding vkfd under the thunk's real file name `libhsakmt.so.1`: first on
/// `LD_LIBRARY_PATH`, it puts the system's real ROCR (Debian's `libhsa-runtime64-1`) on the
/// virtual GPU. Panics when vkfd is not built.
pub fn vkfd_lib_dir() -> PathBuf {
    let dir = link_dir("vkfd-thunk", "libvkfd.so", "libhsakmt.so.1");
    link_aqlprofile(&dir);
    dir
}

/// Links `profile_dir()/built` into `profile_dir()/dir/name`, replaced atomically (concurrent
/// tests never see a missing file; the temporary name is unique per call).
fn link_dir(dir: &str, built: &str, name: &str) -> PathBuf {
    let dir = profile_dir().join(dir);
    link_dir_in(&dir, built, name);
    dir
}

/// Links `profile_dir()/built` into `dir/name`, replaced atomically.
fn link_dir_in(dir: &Path, built: &str, name: &str) {
    let built = artifact(built);
    std::fs::create_dir_all(dir).expect("create the library directory");
    published(&dir.join(name), |tmp| {
        std::os::unix::fs::symlink(&built, tmp).expect("symlink the library")
    });
}

/// Runs `build` to write `out` under a temporary name beside it (unique per process and call:
/// the tests of one binary run on several threads), then renames it into place, so a test that
/// finds `out` never sees it missing or half-written.
fn published(out: &Path, build: impl FnOnce(&Path)) {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = std::ffi::OsString::from(".");
    name.push(out.file_name().expect("a file name"));
    name.push(format!(".{}.{call}", std::process::id()));
    let partial = out.with_file_name(name);
    let _ = std::fs::remove_file(&partial);
    build(&partial);
    std::fs::rename(&partial, out).expect("rename the built file into place");
}

/// The HSA runtime a test program runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// vhsa, our virtual runtime (`VHSA_AGENTS`).
    Vhsa,
    /// The system's real ROCR on vkfd, our user-space thunk (`VKFD_AGENTS`).
    RocrOnVkfd,
}

impl Runtime {
    /// Both runtimes.
    pub const ALL: [Runtime; 2] = [Runtime::Vhsa, Runtime::RocrOnVkfd];

    /// Points `cmd` at this runtime with the GPU agents `gpus` (`gfx90a,gfx90a`): sets
    /// `LD_LIBRARY_PATH` and the agent list, and clears the other runtime's variables.
    pub fn apply(self, cmd: &mut Command, gpus: &str) {
        match self {
            Runtime::Vhsa => {
                cmd.env("LD_LIBRARY_PATH", vhsa_lib_dir())
                    .env("VHSA_AGENTS", gpus)
                    .env_remove("VKFD_AGENTS");
            }
            Runtime::RocrOnVkfd => {
                cmd.env("LD_LIBRARY_PATH", vkfd_lib_dir())
                    .env("VKFD_AGENTS", gpus)
                    .env_remove("VHSA_AGENTS");
            }
        }
    }

    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Vhsa => "vhsa",
            Runtime::RocrOnVkfd => "ROCR on vkfd",
        }
    }
}

/// The kreplay tool library (`libkreplay.so`).
pub fn tool_lib() -> PathBuf {
    artifact("libkreplay.so")
}

/// The SQTT marker pass plugin (`libsqttinstrumentpass.so`), for `clang -fpass-plugin=`.
pub fn sqtt_pass_plugin() -> PathBuf {
    artifact("libsqttinstrumentpass.so")
}

/// The `kreplay` command-line binary.
pub fn kreplay_bin() -> PathBuf {
    artifact("kreplay")
}

/// A fresh scratch directory under the profile directory, unique to this process and `tag`.
pub fn scratch_dir(tag: &str) -> PathBuf {
    let dir = profile_dir()
        .join("test-scratch")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// The headers shared by the C test programs of every crate (`aql_submit.h`: writing an AQL
/// packet to a queue); [`compile_c`] puts it on the include path.
pub fn host_include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("host")
}

/// Compiles a C program with the system compiler against the installed HSA headers and links
/// it with vhsa (`-lhsa-runtime64` resolved through [`vhsa_lib_dir`]). [`host_include_dir`] is
/// on the include path, so programs can `#include "aql_submit.h"`.
pub fn compile_c(src: &Path, out: &Path, extra: &[&str]) {
    let lib = vhsa_lib_dir();
    published(out, |partial| {
        let status = Command::new("cc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-pthread"])
            .arg(format!("-I{}", host_include_dir().display()))
            .arg(src)
            .arg("-o")
            .arg(partial)
            .arg(format!("-L{}", lib.display()))
            .arg("-l:libhsa-runtime64.so.1")
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .args(extra)
            .status()
            .expect("run cc");
        assert!(status.success(), "cc failed on {}", src.display());
    });
}

/// The directory holding `kernels.h`, the device-code header for test kernels (HIP attribute
/// spellings, work-item builtins and atomics without HIP headers).
pub fn device_include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("device")
}

/// The clang used for device code: `KREPLAY_CLANG` when set, else `clang-22`.
pub fn device_clang() -> PathBuf {
    std::env::var_os("KREPLAY_CLANG")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("clang-22"))
}

/// Compiles a HIP-dialect device source into a real AMDGPU code object for `arch` (`gfx942`,
/// `gfx90a`, ...) with no HIP headers or device libraries; [`device_include_dir`] is on the
/// include path, so sources can `#include "kernels.h"`. Kernels declared with `KERNEL` get
/// unmangled names. Panics with the compiler's message when compilation fails.
pub fn build_code_object(src: &Path, arch: &str, out: &Path) {
    build_code_object_with(src, arch, out, &[]);
}

/// [`build_code_object`] with extra compiler flags, e.g. `-mcode-object-version=4` for ROCm
/// 5.x's loader (which loads code objects up to version 4).
pub fn build_code_object_with(src: &Path, arch: &str, out: &Path, extra: &[&str]) {
    published(out, |partial| {
        build_code_object_into(src, arch, partial, extra)
    });
}

fn build_code_object_into(src: &Path, arch: &str, out: &Path, extra: &[&str]) {
    let clang = device_clang();
    let output = Command::new(&clang)
        .args(["-x", "hip"])
        .arg(format!("--offload-arch={arch}"))
        .args(["--cuda-device-only", "--no-gpu-bundle-output", "-nogpulib", "-nogpuinc", "-O2"])
        .arg("-I")
        .arg(device_include_dir())
        .args(extra)
        .arg(src)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} ({e}): install clang-22 (scripts/install-deps.sh) or set KREPLAY_CLANG \
                 to a clang with the AMDGPU target",
                clang.display()
            )
        });
    assert!(
        output.status.success(),
        "{} failed to build {} for {arch}:\n{}",
        clang.display(),
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The HIP test programs of vhsa (`crates/vhsa/tests/hip`, with their header `hip_test.h`).
pub fn hip_programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("vhsa")
        .join("tests")
        .join("hip")
}

/// Builds the HIP test program `<name>.hip` of [`hip_programs_dir`] into `out` with Debian's
/// `hipcc` for `arch` (`gfx90a`, the target HIP 5.2 accepts on vhsa, or a target ID such as
/// `gfx90a:xnack-`). The program links the HSA runtime (vhsa at run time, through
/// `LD_LIBRARY_PATH`); a first line `// hipcc flags: ...` adds compiler and linker flags (a
/// language standard, AMD's libraries). Panics with the compiler's message on failure.
pub fn build_hip_program(name: &str, arch: &str, out: &Path) {
    published(out, |partial| build_hip_program_into(name, arch, partial));
}

/// Debian's `hipcc` (or `$HIPCC`), as a command whose temporary files go under the profile
/// directory: the HIP 5.2 compiler leaves two empty directories in the temporary directory
/// per compilation, which would otherwise pile up in the machine's `/tmp`.
pub fn hipcc() -> Command {
    let program = std::env::var_os("HIPCC").unwrap_or_else(|| "hipcc".into());
    let temp = profile_dir().join("test-scratch").join("hipcc-temp");
    std::fs::create_dir_all(&temp).expect("create the compiler's temporary directory");
    let mut cmd = Command::new(program);
    cmd.env("TMPDIR", temp);
    cmd
}

fn build_hip_program_into(name: &str, arch: &str, out: &Path) {
    let mut hipcc = hipcc();
    let src = hip_programs_dir().join(format!("{name}.hip"));
    let text = std::fs::read_to_string(&src)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", src.display()));
    let flags = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// hipcc flags:"))
        .unwrap_or("")
        .split_whitespace();
    let output = hipcc
        .arg(format!("--offload-arch={arch}"))
        .arg("-I")
        .arg(hip_programs_dir())
        .arg(&src)
        .arg("-o")
        .arg(out)
        .args(["-lhsa-runtime64", "-ldl"])
        .args(flags)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} ({e}): install hipcc and libamdhip64-dev (scripts/install-deps.sh) or set HIPCC",
                hipcc.get_program().display()
            )
        });
    assert!(
        output.status.success(),
        "{} failed to build {}:\n{}",
        hipcc.get_program().display(),
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Looks up `name` in vhsa, loaded once per process with `dlopen(RTLD_NOW | RTLD_GLOBAL)` from
/// [`vhsa_lib_dir`] under the runtime's real file name, as an application loads the runtime.
/// `F` is the function-pointer type of the symbol (an `Option<unsafe extern "C" fn ...>`, such
/// as the `*_fn_t` typedefs of `hsa-abi`). Panics when the library or the symbol is missing.
pub fn vhsa_symbol<F: Copy>(name: &str) -> F {
    use std::ffi::{CString, c_char, c_int, c_void};
    use std::sync::OnceLock;
    unsafe extern "C" {
        fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
        fn dlerror() -> *const c_char;
    }
    const RTLD_NOW: c_int = 2;
    const RTLD_GLOBAL: c_int = 0x100;
    static LIB: OnceLock<usize> = OnceLock::new();

    fn last_error() -> String {
        // SAFETY: dlerror returns NULL or a NUL-terminated message owned by libc.
        let e = unsafe { dlerror() };
        if e.is_null() {
            "unknown error".to_owned()
        } else {
            // SAFETY: non-NULL, NUL-terminated (see above).
            unsafe { std::ffi::CStr::from_ptr(e) }
                .to_string_lossy()
                .into_owned()
        }
    }

    assert_eq!(
        std::mem::size_of::<F>(),
        std::mem::size_of::<*mut c_void>(),
        "F must be a function pointer"
    );
    let lib = *LIB.get_or_init(|| {
        let path = vhsa_lib_dir().join("libhsa-runtime64.so.1");
        let c = CString::new(path.as_os_str().as_encoded_bytes()).expect("path without NUL");
        // SAFETY: dlopen with a NUL-terminated path.
        let h = unsafe { dlopen(c.as_ptr(), RTLD_NOW | RTLD_GLOBAL) };
        assert!(
            !h.is_null(),
            "dlopen {} failed: {}",
            path.display(),
            last_error()
        );
        h as usize
    });
    let c = CString::new(name).expect("symbol name without NUL");
    // SAFETY: `lib` is a live handle from dlopen; the name is NUL-terminated.
    let p = unsafe { dlsym(lib as *mut c_void, c.as_ptr()) };
    assert!(
        !p.is_null(),
        "vhsa does not export {name}: {}",
        last_error()
    );
    // SAFETY: `F` is pointer-sized (checked above) and, by this function's contract, the type of
    // the exported function.
    unsafe { std::mem::transmute_copy(&p) }
}
