//! The few IR operations the pass needs, over LLVM's C API.
//!
//! Every reference handled here belongs to the one module the pass manager handed to
//! [`crate::sqtt_run_phase`] and stays valid for the duration of that call; the pass runs on
//! the compiler's thread and nothing else touches the module meanwhile. That invariant is what
//! the `// SAFETY:` notes below refer to as "live module reference".

use std::ffi::{CStr, CString, c_char, c_uint};

use llvm_sys::core::*;
use llvm_sys::debuginfo::*;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMOpcode, LLVMTypeKind};

/// `amdgpu_kernel` calling convention number.
pub const AMDGPU_KERNEL_CC: c_uint = 91;

fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).expect("NUL removed")
}

/// Copies a borrowed (pointer, length) string.
fn borrowed(ptr: *const c_char, len: usize) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: LLVM returns a pointer to `len` readable bytes owned by the IR object.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// The module's target triple.
pub fn target_triple(m: LLVMModuleRef) -> String {
    // SAFETY: live module reference; the returned C string is owned by the module.
    let p = unsafe { LLVMGetTarget(m) };
    if p.is_null() {
        return String::new();
    }
    // SAFETY: NUL-terminated string owned by the module.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// All functions of the module, in order.
pub fn functions(m: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    // SAFETY: live module reference; iteration uses LLVM's own list links.
    unsafe {
        let mut f = LLVMGetFirstFunction(m);
        while !f.is_null() {
            out.push(f);
            f = LLVMGetNextFunction(f);
        }
    }
    out
}

/// Whether `f` has a body.
pub fn is_definition(f: LLVMValueRef) -> bool {
    // SAFETY: live module reference.
    unsafe { LLVMIsDeclaration(f) == 0 }
}

/// Whether `f` is a kernel entry point.
pub fn is_kernel(f: LLVMValueRef) -> bool {
    // SAFETY: live module reference.
    unsafe { LLVMGetFunctionCallConv(f) == AMDGPU_KERNEL_CC }
}

/// The name of a value (empty when unnamed).
pub fn name(v: LLVMValueRef) -> String {
    let mut len = 0usize;
    // SAFETY: live module reference; the name is owned by the value.
    let p = unsafe { LLVMGetValueName2(v, &mut len) };
    borrowed(p, len)
}

/// A string function attribute (`target-cpu`, ...).
pub fn fn_attribute(f: LLVMValueRef, key: &str) -> Option<String> {
    // SAFETY: live module reference; key pointer/length describe a valid buffer.
    let a = unsafe {
        LLVMGetStringAttributeAtIndex(
            f,
            llvm_sys::LLVMAttributeFunctionIndex,
            key.as_ptr().cast(),
            key.len() as c_uint,
        )
    };
    if a.is_null() {
        return None;
    }
    let mut len: c_uint = 0;
    // SAFETY: `a` is a live string attribute.
    let p = unsafe { LLVMGetStringAttributeValue(a, &mut len) };
    Some(borrowed(p, len as usize))
}

/// Basic blocks of `f`, in order.
pub fn blocks(f: LLVMValueRef) -> Vec<LLVMBasicBlockRef> {
    let mut out = Vec::new();
    // SAFETY: live module reference.
    unsafe {
        let mut b = LLVMGetFirstBasicBlock(f);
        while !b.is_null() {
            out.push(b);
            b = LLVMGetNextBasicBlock(b);
        }
    }
    out
}

/// Instructions of `bb`, in order.
pub fn instructions(bb: LLVMBasicBlockRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    // SAFETY: live module reference.
    unsafe {
        let mut i = LLVMGetFirstInstruction(bb);
        while !i.is_null() {
            out.push(i);
            i = LLVMGetNextInstruction(i);
        }
    }
    out
}

/// The opcode of an instruction.
pub fn opcode(i: LLVMValueRef) -> LLVMOpcode {
    // SAFETY: live module reference to an instruction.
    unsafe { LLVMGetInstructionOpcode(i) }
}

/// The function directly called by a call instruction.
pub fn callee(i: LLVMValueRef) -> Option<LLVMValueRef> {
    if opcode(i) != LLVMOpcode::LLVMCall {
        return None;
    }
    // SAFETY: `i` is a call instruction of the live module.
    let v = unsafe { LLVMGetCalledValue(i) };
    // SAFETY: live value.
    let f = unsafe { LLVMIsAFunction(v) };
    (!f.is_null()).then_some(f)
}

/// The name of the function directly called by `i`, if any.
pub fn callee_name(i: LLVMValueRef) -> Option<String> {
    callee(i).map(name)
}

/// Operand `n` of a user.
pub fn operand(i: LLVMValueRef, n: u32) -> LLVMValueRef {
    // SAFETY: live module reference; callers only ask for operands that exist.
    unsafe { LLVMGetOperand(i, n) }
}

/// The value of an integer constant.
pub fn const_int(v: LLVMValueRef) -> Option<u64> {
    // SAFETY: live value; only queried after the ConstantInt check.
    unsafe { (!LLVMIsAConstantInt(v).is_null()).then(|| LLVMConstIntGetZExtValue(v)) }
}

/// The text of a constant C string, looking through casts and zero-offset GEPs
/// (`addrspacecast (ptr addrspace(4) @.str to ptr)`).
pub fn const_c_string(mut v: LLVMValueRef) -> Option<String> {
    for _ in 0..8 {
        // SAFETY: live values; each branch checks the kind before using kind-specific calls.
        unsafe {
            if !LLVMIsAGlobalVariable(v).is_null() {
                if LLVMIsGlobalConstant(v) == 0 {
                    return None;
                }
                let init = LLVMGetInitializer(v);
                if init.is_null()
                    || LLVMIsAConstantDataSequential(init).is_null()
                    || LLVMIsConstantString(init) == 0
                {
                    return None;
                }
                let mut len = 0usize;
                let p = LLVMGetAsString(init, &mut len);
                let s = borrowed(p, len);
                return Some(s.split('\0').next().unwrap_or_default().to_string());
            }
            if !LLVMIsAConstantExpr(v).is_null() {
                match LLVMGetConstOpcode(v) {
                    LLVMOpcode::LLVMAddrSpaceCast | LLVMOpcode::LLVMBitCast => {
                        v = LLVMGetOperand(v, 0)
                    }
                    LLVMOpcode::LLVMGetElementPtr => {
                        let n = LLVMGetNumOperands(v);
                        for k in 1..n {
                            if const_int(LLVMGetOperand(v, k as c_uint)) != Some(0) {
                                return None;
                            }
                        }
                        v = LLVMGetOperand(v, 0);
                    }
                    _ => return None,
                }
                continue;
            }
            if !LLVMIsAInstruction(v).is_null() {
                match LLVMGetInstructionOpcode(v) {
                    LLVMOpcode::LLVMAddrSpaceCast | LLVMOpcode::LLVMBitCast => {
                        v = LLVMGetOperand(v, 0);
                        continue;
                    }
                    _ => return None,
                }
            }
        }
        return None;
    }
    None
}

/// Address space of the pointer operand of a load (operand 0) or store (operand 1).
pub fn pointer_address_space(ptr: LLVMValueRef) -> u32 {
    // SAFETY: live value of pointer type.
    unsafe {
        let ty = LLVMTypeOf(ptr);
        if LLVMGetTypeKind(ty) != LLVMTypeKind::LLVMPointerTypeKind {
            return u32::MAX;
        }
        LLVMGetPointerAddressSpace(ty)
    }
}

/// Number of call sites that call `f` directly.
pub fn call_site_count(f: LLVMValueRef) -> u64 {
    let mut n = 0;
    // SAFETY: live module reference; use-list iteration.
    unsafe {
        let mut u = LLVMGetFirstUse(f);
        while !u.is_null() {
            let user = LLVMGetUser(u);
            if !LLVMIsACallInst(user).is_null() && LLVMGetCalledValue(user) == f {
                n += 1;
            }
            u = LLVMGetNextUse(u);
        }
    }
    n
}

/// Whether `v` has no uses.
pub fn unused(v: LLVMValueRef) -> bool {
    // SAFETY: live value.
    unsafe { LLVMGetFirstUse(v).is_null() }
}

/// Deletes an instruction (which must have no uses).
pub fn erase(i: LLVMValueRef) {
    // SAFETY: live instruction whose uses were removed by the caller.
    unsafe { LLVMInstructionEraseFromParent(i) }
}

/// Deletes a function declaration.
pub fn delete_function(f: LLVMValueRef) {
    // SAFETY: live function without uses.
    unsafe { LLVMDeleteFunction(f) }
}

fn di_file_of_scope(scope: LLVMMetadataRef) -> Option<String> {
    if scope.is_null() {
        return None;
    }
    // SAFETY: live scope metadata.
    let file = unsafe { LLVMDIScopeGetFile(scope) };
    if file.is_null() {
        return None;
    }
    let mut len: c_uint = 0;
    // SAFETY: live file metadata.
    let p = unsafe { LLVMDIFileGetFilename(file, &mut len) };
    let name = borrowed(p, len as usize);
    (!name.is_empty()).then_some(name)
}

/// The source chain of an instruction, innermost first: `file:line -> file:line` through
/// inlined call sites. `None` without debug locations.
pub fn source_chain(i: LLVMValueRef) -> Option<String> {
    // SAFETY: live instruction; the DILocation accessors are used on DILocation metadata only.
    let mut loc = unsafe { LLVMInstructionGetDebugLoc(i) };
    let mut parts = Vec::new();
    while !loc.is_null() && parts.len() < 32 {
        // SAFETY: `loc` is a DILocation.
        let (line, scope, next) = unsafe {
            (
                LLVMDILocationGetLine(loc),
                LLVMDILocationGetScope(loc),
                LLVMDILocationGetInlinedAt(loc),
            )
        };
        let file = di_file_of_scope(scope).unwrap_or_else(|| "?".into());
        parts.push(format!("{file}:{line}"));
        loc = next;
    }
    (!parts.is_empty()).then(|| parts.join(" -> "))
}

/// The declaration `file:line` of a function, from its subprogram.
pub fn function_source(f: LLVMValueRef) -> Option<String> {
    // SAFETY: live function.
    let sp = unsafe { LLVMGetSubprogram(f) };
    if sp.is_null() {
        return None;
    }
    let file = di_file_of_scope(sp)?;
    // SAFETY: `sp` is a DISubprogram.
    let line = unsafe { LLVMDISubprogramGetLine(sp) };
    Some(format!("{file}:{line}"))
}

/// A builder over the module's context plus the types the emitter uses.
pub struct Builder {
    /// The context of the module.
    pub ctx: LLVMContextRef,
    /// The module.
    pub module: LLVMModuleRef,
    /// The underlying IR builder.
    pub raw: LLVMBuilderRef,
    /// `i32`.
    pub i32: LLVMTypeRef,
    /// `i64`.
    pub i64: LLVMTypeRef,
    /// `void`.
    pub void: LLVMTypeRef,
}

impl Builder {
    /// A builder for `module`.
    pub fn new(module: LLVMModuleRef) -> Builder {
        // SAFETY: live module reference; the builder is disposed in Drop.
        unsafe {
            let ctx = LLVMGetModuleContext(module);
            Builder {
                ctx,
                module,
                raw: LLVMCreateBuilderInContext(ctx),
                i32: LLVMInt32TypeInContext(ctx),
                i64: LLVMInt64TypeInContext(ctx),
                void: LLVMVoidTypeInContext(ctx),
            }
        }
    }

    /// Places new instructions immediately before `i`.
    pub fn before(&self, i: LLVMValueRef) {
        // SAFETY: live builder and instruction.
        unsafe { LLVMPositionBuilderBefore(self.raw, i) }
    }

    /// Declaration of an overloaded intrinsic.
    pub fn intrinsic(&self, name: &str, overloads: &[LLVMTypeRef]) -> (LLVMValueRef, LLVMTypeRef) {
        // SAFETY: live module; name buffer valid for the call; overload array valid.
        unsafe {
            let id = LLVMLookupIntrinsicID(name.as_ptr().cast(), name.len());
            assert!(id != 0, "intrinsic {name} is not known to this LLVM");
            let mut tys = overloads.to_vec();
            let f = LLVMGetIntrinsicDeclaration(self.module, id, tys.as_mut_ptr(), tys.len());
            let fty = LLVMIntrinsicGetType(self.ctx, id, tys.as_mut_ptr(), tys.len());
            (f, fty)
        }
    }

    /// Calls `f` of type `fty` with `args` at the builder position.
    pub fn call(&self, fty: LLVMTypeRef, f: LLVMValueRef, args: &[LLVMValueRef]) -> LLVMValueRef {
        let mut args = args.to_vec();
        // SAFETY: live builder, function and argument values matching `fty`.
        unsafe {
            LLVMBuildCall2(
                self.raw,
                fty,
                f,
                args.as_mut_ptr(),
                args.len() as c_uint,
                c"".as_ptr(),
            )
        }
    }

    /// Emits a side-effecting, convergent inline asm call returning `ret` (void or i32).
    pub fn inline_asm(
        &self,
        ret: LLVMTypeRef,
        text: &str,
        constraints: &str,
        args: &[LLVMValueRef],
    ) -> LLVMValueRef {
        // SAFETY: live values; strings are valid for the duration of the calls.
        unsafe {
            let mut arg_tys: Vec<LLVMTypeRef> = args.iter().map(|a| LLVMTypeOf(*a)).collect();
            let fty = LLVMFunctionType(ret, arg_tys.as_mut_ptr(), arg_tys.len() as c_uint, 0);
            let asm = LLVMGetInlineAsm(
                fty,
                text.as_ptr().cast(),
                text.len(),
                constraints.as_ptr().cast(),
                constraints.len(),
                1,
                0,
                llvm_sys::LLVMInlineAsmDialect::LLVMInlineAsmDialectATT,
                0,
            );
            let call = self.call(fty, asm, args);
            let kind = LLVMGetEnumAttributeKindForName(c"convergent".as_ptr(), "convergent".len());
            let attr = LLVMCreateEnumAttribute(self.ctx, kind, 0);
            LLVMAddCallSiteAttribute(call, llvm_sys::LLVMAttributeFunctionIndex, attr);
            call
        }
    }

    /// `fence syncscope("workgroup") acq_rel` restricted to LDS (`!mmra` amdgpu-synchronize-as local).
    pub fn lds_workgroup_fence(&self) {
        // SAFETY: live builder and context; metadata strings are copied by LLVM.
        unsafe {
            let scope = "workgroup";
            let ssid = LLVMGetSyncScopeID(self.ctx, scope.as_ptr().cast(), scope.len());
            let fence = LLVMBuildFenceSyncScope(
                self.raw,
                llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingAcquireRelease,
                ssid,
                c"".as_ptr(),
            );
            let key = "amdgpu-synchronize-as";
            let val = "local";
            let mut ops = [
                LLVMMDStringInContext2(self.ctx, key.as_ptr().cast(), key.len()),
                LLVMMDStringInContext2(self.ctx, val.as_ptr().cast(), val.len()),
            ];
            let node = LLVMMDNodeInContext2(self.ctx, ops.as_mut_ptr(), ops.len());
            let kind_name = "mmra";
            let kind = LLVMGetMDKindIDInContext(
                self.ctx,
                kind_name.as_ptr().cast(),
                kind_name.len() as c_uint,
            );
            LLVMSetMetadata(fence, kind, LLVMMetadataAsValue(self.ctx, node));
        }
    }

    /// A literal struct type of `fields`.
    pub fn struct_of(&self, fields: &[LLVMTypeRef]) -> LLVMTypeRef {
        let mut f = fields.to_vec();
        // SAFETY: live context and types.
        unsafe { LLVMStructTypeInContext(self.ctx, f.as_mut_ptr(), f.len() as c_uint, 0) }
    }

    /// `ptrtoint` to `ty`.
    pub fn ptr_to_int(&self, v: LLVMValueRef, ty: LLVMTypeRef) -> LLVMValueRef {
        // SAFETY: live builder, pointer value.
        unsafe { LLVMBuildPtrToInt(self.raw, v, ty, c"".as_ptr()) }
    }

    /// Truncation or zero extension to `i32`.
    pub fn to_i32(&self, v: LLVMValueRef) -> LLVMValueRef {
        // SAFETY: live builder, integer value.
        unsafe {
            let ty = LLVMTypeOf(v);
            match LLVMGetTypeKind(ty) {
                LLVMTypeKind::LLVMIntegerTypeKind => {
                    let w = LLVMGetIntTypeWidth(ty);
                    if w == 32 {
                        v
                    } else if w > 32 {
                        LLVMBuildTrunc(self.raw, v, self.i32, c"".as_ptr())
                    } else {
                        LLVMBuildZExt(self.raw, v, self.i32, c"".as_ptr())
                    }
                }
                LLVMTypeKind::LLVMPointerTypeKind => {
                    let wide = LLVMBuildPtrToInt(self.raw, v, self.i64, c"".as_ptr());
                    LLVMBuildTrunc(self.raw, wide, self.i32, c"".as_ptr())
                }
                _ => LLVMBuildBitCast(self.raw, v, self.i32, c"".as_ptr()),
            }
        }
    }

    /// The 48-bit base address of a buffer resource (`<4 x i32>` or `ptr addrspace(8)`) as
    /// (low word, high 16 bits).
    pub fn descriptor_base(&self, rsrc: LLVMValueRef) -> (LLVMValueRef, LLVMValueRef) {
        // SAFETY: live builder and resource value of one of the two descriptor types.
        unsafe {
            let ty = LLVMTypeOf(rsrc);
            let (w0, w1) = if LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMPointerTypeKind {
                let i128 = LLVMIntTypeInContext(self.ctx, 128);
                let wide = LLVMBuildPtrToInt(self.raw, rsrc, i128, c"".as_ptr());
                let lo = LLVMBuildTrunc(self.raw, wide, self.i32, c"".as_ptr());
                let shifted =
                    LLVMBuildLShr(self.raw, wide, LLVMConstInt(i128, 32, 0), c"".as_ptr());
                (
                    lo,
                    LLVMBuildTrunc(self.raw, shifted, self.i32, c"".as_ptr()),
                )
            } else {
                (
                    LLVMBuildExtractElement(
                        self.raw,
                        rsrc,
                        LLVMConstInt(self.i32, 0, 0),
                        c"".as_ptr(),
                    ),
                    LLVMBuildExtractElement(
                        self.raw,
                        rsrc,
                        LLVMConstInt(self.i32, 1, 0),
                        c"".as_ptr(),
                    ),
                )
            };
            let hi = LLVMBuildAnd(
                self.raw,
                w1,
                LLVMConstInt(self.i32, 0xffff, 0),
                c"".as_ptr(),
            );
            (w0, hi)
        }
    }

    /// High 32 bits of an `i64`.
    pub fn high_i32(&self, v: LLVMValueRef) -> LLVMValueRef {
        // SAFETY: live builder, i64 value.
        unsafe {
            let s = LLVMBuildLShr(self.raw, v, LLVMConstInt(self.i64, 32, 0), c"".as_ptr());
            LLVMBuildTrunc(self.raw, s, self.i32, c"".as_ptr())
        }
    }

    /// Logical shift right of an `i64` by a constant.
    pub fn lshr_i64(&self, v: LLVMValueRef, by: u32) -> LLVMValueRef {
        // SAFETY: live builder, i64 value.
        unsafe {
            LLVMBuildLShr(
                self.raw,
                v,
                LLVMConstInt(self.i64, by as u64, 0),
                c"".as_ptr(),
            )
        }
    }

    /// Reads a module-level named metadata string (first operand's first string).
    pub fn named_string(&self, key: &str) -> Option<String> {
        let k = cstring(key);
        // SAFETY: live module; operands array sized by LLVMGetNamedMetadataNumOperands.
        unsafe {
            let n = LLVMGetNamedMetadataNumOperands(self.module, k.as_ptr());
            if n == 0 {
                return None;
            }
            let mut ops = vec![std::ptr::null_mut(); n as usize];
            LLVMGetNamedMetadataOperands(self.module, k.as_ptr(), ops.as_mut_ptr());
            let node = ops[0];
            if LLVMGetMDNodeNumOperands(node) == 0 {
                return None;
            }
            let mut inner = [std::ptr::null_mut()];
            LLVMGetMDNodeOperands(node, inner.as_mut_ptr());
            let mut len: c_uint = 0;
            let p = LLVMGetMDString(inner[0], &mut len);
            Some(borrowed(p, len as usize))
        }
    }

    /// Appends a string to module-level named metadata `key`.
    pub fn add_named_string(&self, key: &str, value: &str) {
        let k = cstring(key);
        // SAFETY: live module and context; LLVM copies the string.
        unsafe {
            let s = LLVMMDStringInContext2(self.ctx, value.as_ptr().cast(), value.len());
            let mut ops = [s];
            let node = LLVMMDNodeInContext2(self.ctx, ops.as_mut_ptr(), 1);
            LLVMAddNamedMetadataOperand(
                self.module,
                k.as_ptr(),
                LLVMMetadataAsValue(self.ctx, node),
            );
        }
    }

    /// Emits `bytes` as a constant global `name` in `section`, kept alive through
    /// `llvm.compiler.used`.
    pub fn section_global(&self, name: &str, section: &str, bytes: &[u8]) {
        let n = cstring(name);
        let sec = cstring(section);
        // SAFETY: live module/context; arrays and strings valid for the calls.
        unsafe {
            let data = LLVMConstStringInContext2(self.ctx, bytes.as_ptr().cast(), bytes.len(), 1);
            let ty = LLVMTypeOf(data);
            // Address space 1 (global) so the section is allocated in the code object.
            let g = LLVMAddGlobalInAddressSpace(self.module, ty, n.as_ptr(), 1);
            LLVMSetInitializer(g, data);
            LLVMSetGlobalConstant(g, 1);
            LLVMSetLinkage(g, llvm_sys::LLVMLinkage::LLVMInternalLinkage);
            LLVMSetSection(g, sec.as_ptr());
            LLVMSetAlignment(g, 1);

            let used_name = c"llvm.compiler.used";
            let old = LLVMGetNamedGlobal(self.module, used_name.as_ptr());
            let ptr_ty = LLVMPointerTypeInContext(self.ctx, 0);
            let mut elems = Vec::new();
            let mut used_as = 1;
            if !old.is_null() {
                used_as = LLVMGetPointerAddressSpace(LLVMTypeOf(old));
                let init = LLVMGetInitializer(old);
                if !init.is_null() {
                    for k in 0..LLVMGetNumOperands(init) {
                        elems.push(LLVMGetOperand(init, k as c_uint));
                    }
                }
                LLVMDeleteGlobal(old);
            }
            elems.push(LLVMConstAddrSpaceCast(g, ptr_ty));
            let arr = LLVMConstArray2(ptr_ty, elems.as_mut_ptr(), elems.len() as u64);
            let used = LLVMAddGlobalInAddressSpace(
                self.module,
                LLVMTypeOf(arr),
                used_name.as_ptr(),
                used_as,
            );
            LLVMSetInitializer(used, arr);
            LLVMSetLinkage(used, llvm_sys::LLVMLinkage::LLVMAppendingLinkage);
            LLVMSetSection(used, c"llvm.metadata".as_ptr());
        }
    }
}

impl Drop for Builder {
    fn drop(&mut self) {
        // SAFETY: the builder was created in `new` and is disposed once.
        unsafe { LLVMDisposeBuilder(self.raw) }
    }
}

/// Whether `i` is a `ret`.
pub fn is_return(i: LLVMValueRef) -> bool {
    opcode(i) == LLVMOpcode::LLVMRet
}
