//! The loader's state: code-object readers, executables, loaded code objects and symbols.
//!
//! One process-wide [`Loader`] behind a read-write lock. Handles are opaque non-zero numbers
//! from one counter, so a handle of one kind never names an object of another kind. Entries
//! are `Arc`s: iteration copies the handles it will report and releases the lock before
//! calling back into the application, so callbacks may call any loader function.
//!
//! Loading lays a code object's `PT_LOAD` segments out in one block of the agent's memory
//! (allocated here, not through the API table), zero-fills `.bss`, applies the dynamic
//! relocations and creates one symbol per kernel descriptor and global data object. A kernel
//! symbol's kernel object is the address of its loaded descriptor, as on real hardware; the
//! packet processor finds the kernel again through [`kernel_by_object`].

use amdgpu_code_object::{
    CodeObject, CodeObjectError, KERNEL_DESCRIPTOR_SIZE, KERNEL_DESCRIPTOR_SUFFIX,
    KernelDescriptor, SymbolKind,
};
use hsa_abi::ffi::*;
use parking_lot::RwLock;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

/// Why a loader operation failed; mapped to the status ROCR returns in the same case.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoaderError {
    #[error("unknown executable handle {0:#x}")]
    InvalidExecutable(u64),
    #[error("unknown code object reader handle {0:#x}")]
    InvalidReader(u64),
    #[error("unknown executable symbol handle {0:#x}")]
    InvalidSymbol(u64),
    #[error("unknown loaded code object handle {0:#x}")]
    InvalidLoadedCodeObject(u64),
    #[error("executable {0:#x} is frozen: load code objects before hsa_executable_freeze")]
    Frozen(u64),
    #[error("code object {uri}: {source}")]
    InvalidCodeObject {
        uri: String,
        source: CodeObjectError,
    },
    #[error(
        "code object {uri} is built for {target}, which does not run on agent {agent:#x} ({agent_isa})"
    )]
    IncompatibleIsa {
        uri: String,
        target: String,
        agent: u64,
        agent_isa: String,
    },
    #[error(
        "symbol `{name}` is already defined for agent {agent:#x} in executable {executable:#x}"
    )]
    AlreadyDefined {
        name: String,
        agent: u64,
        executable: u64,
    },
    #[error("no symbol named `{0}`")]
    NoSuchSymbol(String),
    #[error("the built-in executable of native kernels cannot be {0}")]
    BuiltIn(&'static str),
    #[error("cannot allocate {size} bytes of agent memory for code object {uri}")]
    OutOfMemory { uri: String, size: u64 },
}

impl LoaderError {
    /// The status ROCR reports for this failure.
    pub(crate) fn status(&self) -> hsa_status_t {
        match self {
            LoaderError::InvalidExecutable(_) => HSA_STATUS_ERROR_INVALID_EXECUTABLE,
            LoaderError::InvalidReader(_) => HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER,
            LoaderError::InvalidSymbol(_) => HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL,
            LoaderError::InvalidLoadedCodeObject(_) => HSA_STATUS_ERROR_INVALID_ARGUMENT,
            LoaderError::Frozen(_) => HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
            LoaderError::InvalidCodeObject { .. } => HSA_STATUS_ERROR_INVALID_CODE_OBJECT,
            LoaderError::IncompatibleIsa { .. } => HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
            LoaderError::AlreadyDefined { .. } => HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED,
            LoaderError::NoSuchSymbol(_) => HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
            LoaderError::BuiltIn(_) => HSA_STATUS_ERROR_INVALID_EXECUTABLE,
            LoaderError::OutOfMemory { .. } => HSA_STATUS_ERROR_OUT_OF_RESOURCES,
        }
    }
}

/// Result of a loader operation.
pub(crate) type LoaderResult<T> = Result<T, LoaderError>;

/// Code-object bytes held by a reader (and shared with what is loaded from it).
pub(crate) struct Reader {
    /// The ELF file contents.
    pub bytes: Arc<[u8]>,
    /// Where they came from (`file://...` or `memory://...`).
    pub uri: String,
}

/// A block of agent memory holding a loaded code object's segments.
pub(crate) struct DeviceImage {
    /// Base address (device and host address alike: device memory is host memory).
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
}

/// A code object loaded into an executable for one agent.
pub(crate) struct LoadedCodeObject {
    pub handle: u64,
    pub executable: u64,
    pub agent: hsa_agent_t,
    /// The ELF file the segments were loaded from (kept for the loader extension).
    pub bytes: Arc<[u8]>,
    pub uri: String,
    pub code: CodeObject,
    pub image: DeviceImage,
}

impl LoadedCodeObject {
    /// Load address minus the ELF's lowest loaded virtual address.
    pub fn delta(&self) -> i64 {
        self.image.base.wrapping_sub(self.code.load_vaddr()) as i64
    }

    /// Whether `address` falls inside the loaded segments.
    pub fn contains(&self, address: u64) -> bool {
        address >= self.image.base && address - self.image.base < self.image.size
    }
}

impl Drop for LoadedCodeObject {
    fn drop(&mut self) {
        release_image(&self.image);
    }
}

/// What a symbol names.
#[derive(Clone, Debug)]
pub(crate) enum SymbolDetail {
    /// A kernel with its descriptor fields and the object to put in dispatch packets.
    Kernel {
        descriptor: KernelDescriptor,
        kernel_object: u64,
        descriptor_size: u64,
    },
    /// A variable with its storage in agent memory.
    Variable {
        address: u64,
        size: u64,
        alignment: u64,
        is_const: bool,
    },
}

/// An executable symbol.
#[derive(Clone, Debug)]
pub(crate) struct Symbol {
    pub handle: u64,
    pub agent: hsa_agent_t,
    /// The name reported (`kernel.kd` for kernels).
    pub name: String,
    /// Program (global binding) or module (local) linkage.
    pub program_linkage: bool,
    pub detail: SymbolDetail,
}

impl Symbol {
    /// The kernel name without `.kd`, for kernels.
    pub fn kernel_name(&self) -> Option<&str> {
        match self.detail {
            SymbolDetail::Kernel { .. } => Some(
                self.name
                    .strip_suffix(KERNEL_DESCRIPTOR_SUFFIX)
                    .unwrap_or(&self.name),
            ),
            SymbolDetail::Variable { .. } => None,
        }
    }
}

/// An executable.
pub(crate) struct Executable {
    pub profile: hsa_profile_t,
    pub rounding: hsa_default_float_rounding_mode_t,
    pub frozen: bool,
    pub loaded: Vec<Arc<LoadedCodeObject>>,
    pub symbols: Vec<Arc<Symbol>>,
}

/// All loader state.
#[derive(Default)]
pub(crate) struct Loader {
    readers: HashMap<u64, Arc<Reader>>,
    executables: BTreeMap<u64, Executable>,
    symbols: HashMap<u64, Arc<Symbol>>,
    loaded: HashMap<u64, Arc<LoadedCodeObject>>,
    /// Kernel symbols by kernel object, for the packet processor.
    kernels: HashMap<u64, Arc<Symbol>>,
    /// Symbols of the built-in executable, by (native kernel object, agent).
    native_symbols: HashMap<(u64, u64), Arc<Symbol>>,
}

static LOADER: LazyLock<RwLock<Loader>> = LazyLock::new(|| RwLock::new(Loader::default()));
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);
/// Handle of the built-in executable that holds the registered native kernels.
pub(crate) const BUILTIN_EXECUTABLE: u64 = 0x7668_7361_0000_0001;

fn next_handle() -> u64 {
    // Spread handles out so that a stray small integer is never a valid handle.
    0x7668_7361_0000_0000 | (NEXT_HANDLE.fetch_add(1, Ordering::Relaxed) << 4)
}

fn read<T>(f: impl FnOnce(&Loader) -> T) -> T {
    f(&LOADER.read())
}

fn write<T>(f: impl FnOnce(&mut Loader) -> T) -> T {
    f(&mut LOADER.write())
}

// ---------------------------------------------------------------- readers

/// Registers code-object bytes; returns the reader handle.
pub(crate) fn create_reader(bytes: Vec<u8>, uri: String) -> u64 {
    let handle = next_handle();
    let reader = Arc::new(Reader {
        bytes: bytes.into(),
        uri,
    });
    write(|l| l.readers.insert(handle, reader));
    handle
}

/// Forgets a reader (loaded code objects keep their own reference to the bytes).
pub(crate) fn destroy_reader(handle: u64) -> LoaderResult<()> {
    write(|l| l.readers.remove(&handle))
        .map(|_| ())
        .ok_or(LoaderError::InvalidReader(handle))
}

// ---------------------------------------------------------------- executables

/// Creates an empty, unfrozen executable.
pub(crate) fn create_executable(
    profile: hsa_profile_t,
    rounding: hsa_default_float_rounding_mode_t,
) -> u64 {
    let handle = next_handle();
    write(|l| {
        l.executables.insert(
            handle,
            Executable {
                profile,
                rounding,
                frozen: false,
                loaded: Vec::new(),
                symbols: Vec::new(),
            },
        )
    });
    handle
}

/// Destroys an executable, its symbols and the agent memory of its code objects.
pub(crate) fn destroy_executable(handle: u64) -> LoaderResult<()> {
    if handle == BUILTIN_EXECUTABLE {
        return Err(LoaderError::BuiltIn("destroyed"));
    }
    // Memory is released when the last reference to each loaded code object goes, outside
    // the lock.
    let removed = write(|l| {
        let exec = l
            .executables
            .remove(&handle)
            .ok_or(LoaderError::InvalidExecutable(handle))?;
        for s in &exec.symbols {
            l.symbols.remove(&s.handle);
            if let SymbolDetail::Kernel { kernel_object, .. } = s.detail {
                l.kernels.remove(&kernel_object);
            }
        }
        for lco in &exec.loaded {
            l.loaded.remove(&lco.handle);
        }
        Ok::<_, LoaderError>(exec)
    })?;
    drop(removed);
    Ok(())
}

/// Freezes an executable; freezing twice is an error, as in ROCR.
pub(crate) fn freeze(handle: u64) -> LoaderResult<()> {
    if handle == BUILTIN_EXECUTABLE {
        return Err(LoaderError::Frozen(handle));
    }
    write(|l| {
        let exec = l
            .executables
            .get_mut(&handle)
            .ok_or(LoaderError::InvalidExecutable(handle))?;
        if exec.frozen {
            return Err(LoaderError::Frozen(handle));
        }
        exec.frozen = true;
        Ok(())
    })
}

/// Profile, frozen state and rounding mode of an executable.
pub(crate) fn executable_state(
    handle: u64,
) -> LoaderResult<(hsa_profile_t, bool, hsa_default_float_rounding_mode_t)> {
    if handle == BUILTIN_EXECUTABLE {
        return Ok((
            HSA_PROFILE_FULL,
            true,
            HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
        ));
    }
    read(|l| {
        l.executables
            .get(&handle)
            .map(|e| (e.profile, e.frozen, e.rounding))
            .ok_or(LoaderError::InvalidExecutable(handle))
    })
}

/// Handles of every executable, the built-in one first.
pub(crate) fn executables() -> Vec<u64> {
    let mut v = vec![BUILTIN_EXECUTABLE];
    read(|l| v.extend(l.executables.keys().copied()));
    v
}

/// Loads the code object held by `reader` into `executable` for `agent`, whose ISA name is
/// `agent_isa` (`None` for an agent without an ISA, such as a CPU).
pub(crate) fn load(
    executable: u64,
    agent: hsa_agent_t,
    agent_isa: Option<&str>,
    reader: u64,
) -> LoaderResult<u64> {
    if executable == BUILTIN_EXECUTABLE {
        return Err(LoaderError::BuiltIn("loaded into"));
    }
    let reader = read(|l| {
        let exec = l
            .executables
            .get(&executable)
            .ok_or(LoaderError::InvalidExecutable(executable))?;
        if exec.frozen {
            return Err(LoaderError::Frozen(executable));
        }
        l.readers
            .get(&reader)
            .cloned()
            .ok_or(LoaderError::InvalidReader(reader))
    })?;
    let code = code_object_for(&reader, agent, agent_isa)?;
    let lco = place(executable, agent, &reader, code)?;
    let symbols = symbols_of(&lco);
    publish(executable, agent, lco, symbols)
}

/// The reader's code object, checked to run on `agent` (ISA `agent_isa`).
fn code_object_for(
    reader: &Reader,
    agent: hsa_agent_t,
    agent_isa: Option<&str>,
) -> LoaderResult<CodeObject> {
    let code =
        CodeObject::parse(&reader.bytes).map_err(|source| LoaderError::InvalidCodeObject {
            uri: reader.uri.clone(),
            source,
        })?;
    if !agent_isa.is_some_and(|isa| code.target.runs_on(isa)) {
        return Err(LoaderError::IncompatibleIsa {
            uri: reader.uri.clone(),
            target: code.target.to_string(),
            agent: agent.handle,
            agent_isa: agent_isa.unwrap_or("no ISA: not a kernel agent").to_owned(),
        });
    }
    Ok(code)
}

/// Writes the code object's image into memory of `agent`: the loaded code object, with a new
/// handle.
fn place(
    executable: u64,
    agent: hsa_agent_t,
    reader: &Reader,
    code: CodeObject,
) -> LoaderResult<Arc<LoadedCodeObject>> {
    let uri = reader.uri.clone();
    let size = code.load_size();
    let image = acquire_image(agent, size).ok_or_else(|| LoaderError::OutOfMemory {
        uri: uri.clone(),
        size,
    })?;
    {
        // SAFETY: `acquire_image` returned `size` writable bytes at `base`, owned by this
        // loader until `release_image`; nothing else refers to them yet.
        let buf = unsafe { std::slice::from_raw_parts_mut(image.base as *mut u8, size as usize) };
        code.write_image(&reader.bytes, buf, image.base);
    }
    tracing::debug!(
        "loading {uri} (code object v{}, {}) for agent {:#x} at {:#x}, {size} bytes",
        code.version,
        code.target,
        agent.handle,
        image.base
    );
    Ok(Arc::new(LoadedCodeObject {
        handle: next_handle(),
        executable,
        agent,
        bytes: reader.bytes.clone(),
        uri,
        code,
        image,
    }))
}

/// The symbols a loaded code object defines, at their loaded addresses.
fn symbols_of(lco: &LoadedCodeObject) -> Vec<Arc<Symbol>> {
    let origin = lco.code.load_vaddr();
    let mut symbols = Vec::new();
    for s in &lco.code.symbols {
        let address = lco.image.base + (s.vaddr - origin);
        let detail = match &s.kind {
            SymbolKind::Kernel(descriptor) => SymbolDetail::Kernel {
                descriptor: *descriptor,
                kernel_object: address,
                descriptor_size: s.size,
            },
            SymbolKind::Variable {
                alignment,
                is_const,
            } => SymbolDetail::Variable {
                address,
                size: s.size,
                alignment: *alignment,
                is_const: *is_const,
            },
        };
        symbols.push(Arc::new(Symbol {
            handle: next_handle(),
            agent: lco.agent,
            name: s.name.clone(),
            program_linkage: s.global,
            detail,
        }));
    }
    symbols
}

/// Adds the loaded code object and its symbols to `executable` (still unfrozen, with no
/// symbol of the same name for `agent`); returns the loaded code object's handle.
fn publish(
    executable: u64,
    agent: hsa_agent_t,
    lco: Arc<LoadedCodeObject>,
    symbols: Vec<Arc<Symbol>>,
) -> LoaderResult<u64> {
    let handle = lco.handle;
    write(|l| {
        let exec = l
            .executables
            .get_mut(&executable)
            .ok_or(LoaderError::InvalidExecutable(executable))?;
        if exec.frozen {
            return Err(LoaderError::Frozen(executable));
        }
        for s in &symbols {
            if exec
                .symbols
                .iter()
                .any(|o| o.agent.handle == agent.handle && o.name == s.name)
            {
                return Err(LoaderError::AlreadyDefined {
                    name: s.name.clone(),
                    agent: agent.handle,
                    executable,
                });
            }
        }
        exec.loaded.push(lco.clone());
        exec.symbols.extend(symbols.iter().cloned());
        l.loaded.insert(handle, lco);
        for s in symbols {
            if let SymbolDetail::Kernel { kernel_object, .. } = s.detail {
                l.kernels.insert(kernel_object, s.clone());
            }
            l.symbols.insert(s.handle, s);
        }
        Ok(handle)
    })
}

// ---------------------------------------------------------------- symbols

/// Symbols of an executable: all of them (`agent == None`) or those of one agent.
pub(crate) fn symbols(executable: u64, agent: Option<u64>) -> LoaderResult<Vec<Arc<Symbol>>> {
    if executable == BUILTIN_EXECUTABLE {
        return Ok(native_symbols(agent));
    }
    read(|l| {
        let exec = l
            .executables
            .get(&executable)
            .ok_or(LoaderError::InvalidExecutable(executable))?;
        Ok(exec
            .symbols
            .iter()
            .filter(|s| agent.is_none_or(|a| s.agent.handle == a))
            .cloned()
            .collect())
    })
}

/// The symbol named `name` for `agent` (`None`: a program symbol, which code objects v3+
/// never define).
pub(crate) fn symbol_by_name(
    executable: u64,
    name: &str,
    agent: Option<u64>,
) -> LoaderResult<Arc<Symbol>> {
    let Some(agent) = agent else {
        // Validate the executable first so a bad handle is reported as such.
        executable_state(executable)?;
        return Err(LoaderError::NoSuchSymbol(name.to_owned()));
    };
    let all = symbols(executable, Some(agent))?;
    all.into_iter()
        .find(|s| {
            s.name == name || (executable == BUILTIN_EXECUTABLE && s.kernel_name() == Some(name))
        })
        .ok_or_else(|| LoaderError::NoSuchSymbol(name.to_owned()))
}

/// A symbol by handle.
pub(crate) fn symbol(handle: u64) -> LoaderResult<Arc<Symbol>> {
    read(|l| l.symbols.get(&handle).cloned()).ok_or(LoaderError::InvalidSymbol(handle))
}

/// The kernel symbol whose kernel object is `object`, if a loaded code object defines it.
pub(crate) fn kernel_by_object(object: u64) -> Option<Arc<Symbol>> {
    read(|l| l.kernels.get(&object).cloned())
}

/// The built-in executable's symbols: one per registered native kernel and GPU agent.
fn native_symbols(agent: Option<u64>) -> Vec<Arc<Symbol>> {
    let kernels = super::native_kernels();
    let agents: Vec<u64> = super::kernel_agents()
        .into_iter()
        .filter(|a| agent.is_none_or(|x| x == *a))
        .collect();
    write(|l| {
        let mut out = Vec::new();
        for k in &kernels {
            for &a in &agents {
                let s = l
                    .native_symbols
                    .entry((k.object, a))
                    .or_insert_with(|| {
                        Arc::new(Symbol {
                            handle: next_handle(),
                            agent: hsa_agent_t { handle: a },
                            name: format!("{}{KERNEL_DESCRIPTOR_SUFFIX}", k.name),
                            program_linkage: true,
                            detail: SymbolDetail::Kernel {
                                descriptor: KernelDescriptor::default(),
                                kernel_object: k.object,
                                descriptor_size: KERNEL_DESCRIPTOR_SIZE as u64,
                            },
                        })
                    })
                    .clone();
                l.symbols.entry(s.handle).or_insert_with(|| s.clone());
                out.push(s);
            }
        }
        out
    })
}

// ---------------------------------------------------------------- loaded code objects

/// Loaded code objects of an executable, in load order.
pub(crate) fn loaded_code_objects(executable: u64) -> LoaderResult<Vec<Arc<LoadedCodeObject>>> {
    if executable == BUILTIN_EXECUTABLE {
        return Ok(Vec::new());
    }
    read(|l| {
        l.executables
            .get(&executable)
            .map(|e| e.loaded.clone())
            .ok_or(LoaderError::InvalidExecutable(executable))
    })
}

/// A loaded code object by handle.
pub(crate) fn loaded_code_object(handle: u64) -> LoaderResult<Arc<LoadedCodeObject>> {
    read(|l| l.loaded.get(&handle).cloned()).ok_or(LoaderError::InvalidLoadedCodeObject(handle))
}

/// Every loaded code object, ordered by executable then load order.
pub(crate) fn all_loaded_code_objects() -> Vec<Arc<LoadedCodeObject>> {
    read(|l| {
        l.executables
            .values()
            .flat_map(|e| e.loaded.iter().cloned())
            .collect()
    })
}

/// The loaded code object whose segments contain `address`.
pub(crate) fn loaded_code_object_at(address: u64) -> Option<Arc<LoadedCodeObject>> {
    read(|l| l.loaded.values().find(|c| c.contains(address)).cloned())
}

// ---------------------------------------------------------------- agent memory

fn acquire_image(agent: hsa_agent_t, size: u64) -> Option<DeviceImage> {
    let base = super::allocate_agent_memory(agent, size.max(1))?;
    Some(DeviceImage { base, size })
}

fn release_image(image: &DeviceImage) {
    super::free_agent_memory(image.base, image.size.max(1));
}
