//! The one place the emulator speaks to LLVM: a function of one region written through LLVM's
//! C API ([`Function`]), optimised for the host processor and compiled into the process by
//! one LLJIT shared by every emulator ([`compile`]). Nothing above this module touches an
//! LLVM handle.

use std::ffi::{CStr, CString, c_char};
use std::sync::{LazyLock, Mutex};

use llvm_sys::core::*;
use llvm_sys::error::*;
use llvm_sys::orc2::lljit::*;
use llvm_sys::orc2::*;
use llvm_sys::prelude::*;
use llvm_sys::target::*;
use llvm_sys::target_machine::*;
use llvm_sys::transforms::pass_builder::*;
use llvm_sys::{LLVMIntPredicate, LLVMRealPredicate};

pub(super) use llvm_sys::LLVMIntPredicate as Int;
pub(super) use llvm_sys::LLVMRealPredicate as Real;

/// An SSA value of the function being written.
pub(super) type Value = LLVMValueRef;
/// A basic block of the function being written.
pub(super) type Block = LLVMBasicBlockRef;

/// Lanes of a vector value (one wave).
pub(super) const LANES: u32 = 64;

/// The process's JIT: the LLJIT and the host's name and features the code is tuned for.
struct Jit {
    lljit: LLVMOrcLLJITRef,
    machine: LLVMTargetMachineRef,
    cpu: CString,
    features: CString,
    /// Functions compiled so far (their names are `region<n>`).
    compiled: u64,
}

// SAFETY: the LLJIT and the target machine are used only under the mutex that holds them.
unsafe impl Send for Jit {}

/// The JIT, made when the first region is compiled (`None`: LLVM could not be set up; the
/// emulator then interprets everything).
static JIT: LazyLock<Mutex<Option<Jit>>> = LazyLock::new(|| Mutex::new(Jit::new().ok()));

/// The message of an LLVM error (consumed).
fn message(err: LLVMErrorRef) -> String {
    // SAFETY: `err` is a live error; its message is copied, then both are disposed of.
    unsafe {
        let m = LLVMGetErrorMessage(err);
        let s = CStr::from_ptr(m).to_string_lossy().into_owned();
        LLVMDisposeErrorMessage(m);
        s
    }
}

/// An LLVM string as an owned C string (the LLVM copy disposed of).
fn owned(s: *mut c_char) -> CString {
    // SAFETY: `s` is a NUL-terminated string LLVM allocated; it is copied, then disposed of.
    unsafe {
        let c = CStr::from_ptr(s).to_owned();
        LLVMDisposeMessage(s);
        c
    }
}

impl Jit {
    fn new() -> Result<Jit, String> {
        // SAFETY: LLVM's documented set-up sequence; every handle made here is kept for the
        // life of the process.
        unsafe {
            LLVMInitializeX86TargetInfo();
            LLVMInitializeX86Target();
            LLVMInitializeX86TargetMC();
            LLVMInitializeX86AsmPrinter();
            let triple = owned(LLVMGetDefaultTargetTriple());
            let (cpu, features) = (owned(LLVMGetHostCPUName()), owned(LLVMGetHostCPUFeatures()));
            let mut target = std::ptr::null_mut();
            let mut err = std::ptr::null_mut();
            if LLVMGetTargetFromTriple(triple.as_ptr(), &mut target, &mut err) != 0 {
                return Err(owned(err).to_string_lossy().into_owned());
            }
            // One machine for the IR passes, one the JIT takes over for code generation.
            let machine = || {
                LLVMCreateTargetMachine(
                    target,
                    triple.as_ptr(),
                    cpu.as_ptr(),
                    features.as_ptr(),
                    LLVMCodeGenOptLevel::LLVMCodeGenLevelLess,
                    LLVMRelocMode::LLVMRelocDefault,
                    LLVMCodeModel::LLVMCodeModelJITDefault,
                )
            };
            let builder = LLVMOrcCreateLLJITBuilder();
            let tmb = LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(machine());
            LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, tmb);
            let mut lljit = std::ptr::null_mut();
            let e = LLVMOrcCreateLLJIT(&mut lljit, builder);
            if !e.is_null() {
                return Err(message(e));
            }
            Ok(Jit {
                lljit,
                machine: machine(),
                cpu,
                features,
                compiled: 0,
            })
        }
    }
}

/// A function `void region(ptr frame)` being written: its module, builder and the types the
/// lowering uses.
pub(super) struct Function {
    ctx: LLVMContextRef,
    module: LLVMModuleRef,
    b: LLVMBuilderRef,
    func: Value,
    pub i1: LLVMTypeRef,
    pub i8: LLVMTypeRef,
    pub i32: LLVMTypeRef,
    pub i64: LLVMTypeRef,
    pub ptr: LLVMTypeRef,
    /// `<64 x i32>`, `<64 x i64>`, `<64 x float>`, `<64 x i1>`.
    pub v32: LLVMTypeRef,
    pub v64: LLVMTypeRef,
    pub vf32: LLVMTypeRef,
    pub vmask: LLVMTypeRef,
}

const EMPTY: *const c_char = c"".as_ptr();

impl Function {
    /// A new function, its builder at its entry block.
    pub fn new() -> Function {
        // SAFETY: a fresh context, module and builder, owned by the value (disposed of by
        // `compile` or `Drop`).
        unsafe {
            let ctx = LLVMContextCreate();
            let module = LLVMModuleCreateWithNameInContext(c"region".as_ptr(), ctx);
            let b = LLVMCreateBuilderInContext(ctx);
            let (i1, i8, i32, i64) = (
                LLVMInt1TypeInContext(ctx),
                LLVMInt8TypeInContext(ctx),
                LLVMInt32TypeInContext(ctx),
                LLVMInt64TypeInContext(ctx),
            );
            let ptr = LLVMPointerTypeInContext(ctx, 0);
            let void = LLVMVoidTypeInContext(ctx);
            let mut params = [ptr];
            let fty = LLVMFunctionType(void, params.as_mut_ptr(), 1, 0);
            let func = LLVMAddFunction(module, c"region".as_ptr(), fty);
            let entry = LLVMAppendBasicBlockInContext(ctx, func, EMPTY);
            LLVMPositionBuilderAtEnd(b, entry);
            Function {
                ctx,
                module,
                b,
                func,
                i1,
                i8,
                i32,
                i64,
                ptr,
                v32: LLVMVectorType(i32, LANES),
                v64: LLVMVectorType(i64, LANES),
                vf32: LLVMVectorType(LLVMFloatTypeInContext(ctx), LANES),
                vmask: LLVMVectorType(i1, LANES),
            }
        }
    }

    /// The frame pointer (the one parameter).
    pub fn frame(&self) -> Value {
        // SAFETY: the function has one parameter.
        unsafe { LLVMGetParam(self.func, 0) }
    }

    pub fn block(&self) -> Block {
        // SAFETY: appends to this function.
        unsafe { LLVMAppendBasicBlockInContext(self.ctx, self.func, EMPTY) }
    }

    /// The block the builder writes into.
    pub fn current(&self) -> Block {
        // SAFETY: the builder is positioned in this function.
        unsafe { LLVMGetInsertBlock(self.b) }
    }

    /// Each lane's element of `vty` loaded from its pointer (unaligned, volatile-free: the
    /// LDS is the work-group's own).
    pub fn gather(&self, vty: LLVMTypeRef, ptrs: Value) -> Value {
        // SAFETY: a call of the gather intrinsic with its documented operands.
        unsafe {
            let n = LLVMGetVectorSize(vty);
            let mask = self.splat_n(self.bool(true), LLVMVectorType(self.i1, n), n);
            let pty = LLVMTypeOf(ptrs);
            let call = self.intrinsic(
                "llvm.masked.gather",
                &[vty, pty],
                &[ptrs, mask, LLVMGetPoison(vty)],
            );
            self.unaligned_argument(call, 1);
            call
        }
    }

    /// Each lane's element of `v` stored to its pointer, in lane order where they meet.
    pub fn scatter(&self, v: Value, ptrs: Value) {
        // SAFETY: a call of the scatter intrinsic with its documented operands.
        unsafe {
            let vty = LLVMTypeOf(v);
            let n = LLVMGetVectorSize(vty);
            let mask = self.splat_n(self.bool(true), LLVMVectorType(self.i1, n), n);
            let pty = LLVMTypeOf(ptrs);
            let call = self.intrinsic("llvm.masked.scatter", &[vty, pty], &[v, ptrs, mask]);
            self.unaligned_argument(call, 2);
        }
    }

    /// Mark argument `k` (from 1) of `call`, a vector of pointers, as aligned to 1 byte.
    fn unaligned_argument(&self, call: Value, k: u32) {
        // SAFETY: an enum attribute of this context added to a call this function built.
        unsafe {
            let kind = LLVMGetEnumAttributeKindForName(c"align".as_ptr(), 5);
            let a = LLVMCreateEnumAttribute(self.ctx, kind, 1);
            LLVMAddCallSiteAttribute(call, k, a);
        }
    }

    /// A phi of `ty` over `(value, predecessor)` pairs.
    pub fn phi(&self, ty: LLVMTypeRef, incoming: &[(Value, Block)]) -> Value {
        // SAFETY: built at the start of the current block, its predecessors given.
        unsafe {
            let p = LLVMBuildPhi(self.b, ty, EMPTY);
            let (mut vs, mut bs): (Vec<Value>, Vec<Block>) = incoming.iter().copied().unzip();
            LLVMAddIncoming(p, vs.as_mut_ptr(), bs.as_mut_ptr(), vs.len() as u32);
            p
        }
    }

    pub fn at(&self, bb: Block) {
        // SAFETY: `bb` belongs to this function.
        unsafe { LLVMPositionBuilderAtEnd(self.b, bb) }
    }

    pub fn c32(&self, x: u32) -> Value {
        // SAFETY: a constant of this context.
        unsafe { LLVMConstInt(self.i32, x as u64, 0) }
    }

    pub fn c64(&self, x: u64) -> Value {
        // SAFETY: a constant of this context.
        unsafe { LLVMConstInt(self.i64, x, 0) }
    }

    pub fn bool(&self, x: bool) -> Value {
        // SAFETY: a constant of this context.
        unsafe { LLVMConstInt(self.i1, x as u64, 0) }
    }

    /// `<0, step, 2 * step, ...>` of 64 lanes of `i64`.
    pub fn steps64(&self, step: u64) -> Value {
        let mut lanes: Vec<Value> = (0..LANES as u64)
            .map(|l| self.c64(l.wrapping_mul(step)))
            .collect();
        // SAFETY: 64 constants of the element type.
        unsafe { LLVMConstVector(lanes.as_mut_ptr(), LANES) }
    }

    /// The type `<n x elem>`.
    pub fn vector(&self, elem: LLVMTypeRef, n: u32) -> LLVMTypeRef {
        // SAFETY: a type of this context.
        unsafe { LLVMVectorType(elem, n) }
    }

    /// A constant shuffle mask.
    fn mask(&self, lanes: &[u32]) -> Value {
        let mut v: Vec<Value> = lanes.iter().map(|&l| self.c32(l)).collect();
        // SAFETY: constants of the element type.
        unsafe { LLVMConstVector(v.as_mut_ptr(), v.len() as u32) }
    }

    /// Byte `off` from pointer `p`.
    pub fn offset(&self, p: Value, off: Value) -> Value {
        let mut idx = [off];
        // SAFETY: an i8 GEP of a pointer value of this function.
        unsafe { LLVMBuildGEP2(self.b, self.i8, p, idx.as_mut_ptr(), 1, EMPTY) }
    }

    pub fn load(&self, ty: LLVMTypeRef, p: Value, align: u32) -> Value {
        // SAFETY: builds a load at the builder's position.
        unsafe {
            let v = LLVMBuildLoad2(self.b, ty, p, EMPTY);
            LLVMSetAlignment(v, align);
            v
        }
    }

    pub fn store(&self, v: Value, p: Value, align: u32) {
        // SAFETY: builds a store at the builder's position.
        unsafe {
            let s = LLVMBuildStore(self.b, v, p);
            LLVMSetAlignment(s, align);
        }
    }

    /// A load of device memory (4-byte aligned): volatile, so that each one the program
    /// makes is made, in order (a spin on a flag another work-group writes sees the write).
    pub fn load_memory(&self, ty: LLVMTypeRef, p: Value) -> Value {
        let v = self.load(ty, p, 4);
        // SAFETY: `v` is the load just built.
        unsafe { LLVMSetVolatile(v, 1) };
        v
    }

    /// A store to device memory (4-byte aligned), volatile as [`Function::load_memory`].
    pub fn store_memory(&self, v: Value, p: Value) {
        // SAFETY: builds a store at the builder's position.
        unsafe {
            let s = LLVMBuildStore(self.b, v, p);
            LLVMSetAlignment(s, 4);
            LLVMSetVolatile(s, 1);
        }
    }

    /// Every lane of a vector of 64 `ty` elements set to the scalar `x`.
    pub fn splat(&self, x: Value, vty: LLVMTypeRef) -> Value {
        self.splat_n(x, vty, LANES)
    }

    /// Every lane of the `n`-lane vector type `vty` set to the scalar `x`.
    pub fn splat_n(&self, x: Value, vty: LLVMTypeRef, n: u32) -> Value {
        // SAFETY: insertelement + zero shuffle at the builder's position.
        unsafe {
            let one = LLVMBuildInsertElement(self.b, LLVMGetPoison(vty), x, self.c32(0), EMPTY);
            let zeros = LLVMConstNull(LLVMVectorType(self.i32, n));
            LLVMBuildShuffleVector(self.b, one, LLVMGetPoison(vty), zeros, EMPTY)
        }
    }

    /// The integer type as wide as `n` bits.
    pub fn int(&self, n: u32) -> LLVMTypeRef {
        // SAFETY: a type of this context.
        unsafe { LLVMIntTypeInContext(self.ctx, n) }
    }

    pub fn extract(&self, v: Value, lane: u32) -> Value {
        // SAFETY: a lane below the vector's length (the callers' lanes are < 64).
        unsafe { LLVMBuildExtractElement(self.b, v, self.c32(lane), EMPTY) }
    }

    /// `lanes` of the concatenation of `a` and `b`.
    pub fn shuffle(&self, a: Value, b: Value, lanes: &[u32]) -> Value {
        // SAFETY: a constant mask within the two operands' lanes.
        unsafe { LLVMBuildShuffleVector(self.b, a, b, self.mask(lanes), EMPTY) }
    }

    pub fn add(&self, a: Value, b: Value) -> Value {
        // SAFETY: builds at the builder's position (operands of one type).
        unsafe { LLVMBuildAdd(self.b, a, b, EMPTY) }
    }
    pub fn sub(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildSub(self.b, a, b, EMPTY) }
    }
    pub fn mul(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildMul(self.b, a, b, EMPTY) }
    }
    pub fn and(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildAnd(self.b, a, b, EMPTY) }
    }
    pub fn or(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildOr(self.b, a, b, EMPTY) }
    }
    pub fn xor(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildXor(self.b, a, b, EMPTY) }
    }
    pub fn shl(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `add` (callers mask the shift below the width).
        unsafe { LLVMBuildShl(self.b, a, b, EMPTY) }
    }
    pub fn lshr(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `shl`.
        unsafe { LLVMBuildLShr(self.b, a, b, EMPTY) }
    }
    pub fn ashr(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `shl`.
        unsafe { LLVMBuildAShr(self.b, a, b, EMPTY) }
    }
    pub fn fadd(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildFAdd(self.b, a, b, EMPTY) }
    }
    pub fn fsub(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildFSub(self.b, a, b, EMPTY) }
    }
    pub fn fmul(&self, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildFMul(self.b, a, b, EMPTY) }
    }
    pub fn icmp(&self, p: LLVMIntPredicate, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildICmp(self.b, p, a, b, EMPTY) }
    }
    pub fn fcmp(&self, p: LLVMRealPredicate, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildFCmp(self.b, p, a, b, EMPTY) }
    }
    pub fn select(&self, c: Value, a: Value, b: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildSelect(self.b, c, a, b, EMPTY) }
    }
    pub fn zext(&self, v: Value, ty: LLVMTypeRef) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildZExt(self.b, v, ty, EMPTY) }
    }
    pub fn sext(&self, v: Value, ty: LLVMTypeRef) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildSExt(self.b, v, ty, EMPTY) }
    }
    pub fn uitofp(&self, v: Value, ty: LLVMTypeRef) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildUIToFP(self.b, v, ty, EMPTY) }
    }
    pub fn sitofp(&self, v: Value, ty: LLVMTypeRef) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildSIToFP(self.b, v, ty, EMPTY) }
    }
    pub fn trunc(&self, v: Value, ty: LLVMTypeRef) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildTrunc(self.b, v, ty, EMPTY) }
    }
    pub fn bitcast(&self, v: Value, ty: LLVMTypeRef) -> Value {
        // SAFETY: as `add` (same-size types).
        unsafe { LLVMBuildBitCast(self.b, v, ty, EMPTY) }
    }
    pub fn ptr_to_int(&self, v: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildPtrToInt(self.b, v, self.i64, EMPTY) }
    }
    pub fn is_null(&self, v: Value) -> Value {
        // SAFETY: as `add`.
        unsafe { LLVMBuildIsNull(self.b, v, EMPTY) }
    }

    /// A call of the intrinsic `name` overloaded on `tys`.
    pub fn intrinsic(&self, name: &str, tys: &[LLVMTypeRef], args: &[Value]) -> Value {
        // SAFETY: an intrinsic of this module, called with arguments of its signature.
        unsafe {
            let id = LLVMLookupIntrinsicID(name.as_ptr() as *const c_char, name.len());
            let mut tys = tys.to_vec();
            let f = LLVMGetIntrinsicDeclaration(self.module, id, tys.as_mut_ptr(), tys.len());
            let fty = LLVMIntrinsicGetType(self.ctx, id, tys.as_mut_ptr(), tys.len());
            let mut args = args.to_vec();
            LLVMBuildCall2(self.b, fty, f, args.as_mut_ptr(), args.len() as u32, EMPTY)
        }
    }

    /// A call through the function pointer `f` of type `ret (params...)`.
    pub fn call(
        &self,
        f: Value,
        ret: LLVMTypeRef,
        params: &[LLVMTypeRef],
        args: &[Value],
    ) -> Value {
        // SAFETY: the caller's `f` has this signature.
        unsafe {
            let mut params = params.to_vec();
            let fty = LLVMFunctionType(ret, params.as_mut_ptr(), params.len() as u32, 0);
            let mut args = args.to_vec();
            LLVMBuildCall2(self.b, fty, f, args.as_mut_ptr(), args.len() as u32, EMPTY)
        }
    }

    pub fn br(&self, to: Block) {
        // SAFETY: ends the current block.
        unsafe { LLVMBuildBr(self.b, to) };
    }

    pub fn cond_br(&self, c: Value, yes: Block, no: Block) {
        // SAFETY: ends the current block.
        unsafe { LLVMBuildCondBr(self.b, c, yes, no) };
    }

    /// Branch expected not to be taken to `cold`: its weight tells LLVM to lay it out of line.
    pub fn unlikely_br(&self, c: Value, cold: Block, hot: Block) {
        // SAFETY: ends the current block; the weights are metadata of the branch.
        unsafe {
            let br = LLVMBuildCondBr(self.b, c, cold, hot);
            let kind = LLVMGetMDKindIDInContext(self.ctx, c"prof".as_ptr(), 4);
            let mut ops = [
                LLVMMDStringInContext2(self.ctx, c"branch_weights".as_ptr(), 14),
                LLVMValueAsMetadata(LLVMConstInt(self.i32, 1, 0)),
                LLVMValueAsMetadata(LLVMConstInt(self.i32, 1 << 20, 0)),
            ];
            let node = LLVMMDNodeInContext2(self.ctx, ops.as_mut_ptr(), 3);
            LLVMSetMetadata(br, kind, LLVMMetadataAsValue(self.ctx, node));
        }
    }

    pub fn ret(&self) {
        // SAFETY: ends the current block.
        unsafe { LLVMBuildRetVoid(self.b) };
    }
}

impl Drop for Function {
    fn drop(&mut self) {
        // SAFETY: the builder is ours; the module and context are ours unless `compile`
        // handed them to the JIT (it nulls them then).
        unsafe {
            LLVMDisposeBuilder(self.b);
            if !self.module.is_null() {
                LLVMDisposeModule(self.module);
            }
            if !self.ctx.is_null() {
                LLVMContextDispose(self.ctx);
            }
        }
    }
}

/// The IR passes a region gets: the lowering writes SSA form with its registers held as
/// values already, so folding (the 64-bit joins and splits of 32-bit rows above all) and
/// tidying the branches is what is left; a full optimisation pipeline costs far more
/// compile time on large unrolled kernels than it gives back.
const PASSES: &std::ffi::CStr = c"function(instcombine<no-verify-fixpoint>,simplifycfg)";

/// The compiled entry of a region: `frame` is its frame (see the lowering).
pub(super) type Entry = unsafe extern "C" fn(frame: *mut u8);

/// Optimise `f` for the host and compile it into the process; its code lives as long as the
/// process. Err: why not (the region is then interpreted).
pub(super) fn compile(mut f: Function) -> Result<Entry, String> {
    let mut jit = JIT.lock().unwrap_or_else(|e| e.into_inner());
    let Some(jit) = jit.as_mut() else {
        return Err("LLVM's JIT could not be set up on this host".into());
    };
    jit.compiled += 1;
    let name = CString::new(format!("region{}", jit.compiled)).unwrap_or_default();
    // SAFETY: the function, module and context are live and ours; the module goes to the
    // JIT (with its context), after which `f` no longer disposes of them.
    unsafe {
        LLVMSetValueName2(f.func, name.as_ptr(), name.as_bytes().len());
        for (key, value) in [
            (c"target-cpu", &jit.cpu),
            (c"target-features", &jit.features),
        ] {
            let a = LLVMCreateStringAttribute(
                f.ctx,
                key.as_ptr(),
                key.to_bytes().len() as u32,
                value.as_ptr(),
                value.as_bytes().len() as u32,
            );
            LLVMAddAttributeAtIndex(f.func, llvm_sys::LLVMAttributeFunctionIndex, a);
        }
        let mut err = std::ptr::null_mut();
        if module_is_broken(f.module, &mut err) {
            return Err(owned(err).to_string_lossy().into_owned());
        }
        let opts = LLVMCreatePassBuilderOptions();
        let e = LLVMRunPasses(f.module, PASSES.as_ptr(), jit.machine, opts);
        LLVMDisposePassBuilderOptions(opts);
        if !e.is_null() {
            return Err(message(e));
        }
        let tsctx = LLVMOrcCreateNewThreadSafeContextFromLLVMContext(f.ctx);
        let tsm = LLVMOrcCreateNewThreadSafeModule(f.module, tsctx);
        LLVMOrcDisposeThreadSafeContext(tsctx);
        (f.module, f.ctx) = (std::ptr::null_mut(), std::ptr::null_mut());
        let dylib = LLVMOrcLLJITGetMainJITDylib(jit.lljit);
        let e = LLVMOrcLLJITAddLLVMIRModule(jit.lljit, dylib, tsm);
        if !e.is_null() {
            return Err(message(e));
        }
        let mut addr = 0;
        let e = LLVMOrcLLJITLookup(jit.lljit, &mut addr, name.as_ptr());
        if !e.is_null() {
            return Err(message(e));
        }
        if addr == 0 {
            return Err("the JIT returned no address".into());
        }
        // SAFETY: the address of the compiled `void (ptr)` function just added.
        Ok(std::mem::transmute::<usize, Entry>(addr as usize))
    }
}

/// Whether LLVM's verifier finds module `m` broken (its message in `err`).
///
/// # Safety
///
/// `m` is a live module.
unsafe fn module_is_broken(m: LLVMModuleRef, err: &mut *mut c_char) -> bool {
    use llvm_sys::analysis::{LLVMVerifierFailureAction, LLVMVerifyModule};
    // SAFETY: passed on from the caller.
    unsafe { LLVMVerifyModule(m, LLVMVerifierFailureAction::LLVMReturnStatusAction, err) != 0 }
}
