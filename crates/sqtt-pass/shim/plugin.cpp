// Plugin entry point and pass registration. Everything that touches the IR lives in the Rust
// half of the plugin; this file only connects the two pipeline positions to it and turns an
// error reported by Rust into a compiler diagnostic.

#if __has_include("llvm/Plugins/PassPlugin.h")
#include "llvm/Plugins/PassPlugin.h"
#else
#include "llvm/Passes/PassPlugin.h"
#endif
#include "llvm-c/Types.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"

#include <string>

extern "C" {
// Implemented in Rust (src/lib.rs). Returns NULL on success, or an error message that must be
// released with sqtt_message_free. Never unwinds.
char *sqtt_run_phase(LLVMModuleRef module, unsigned phase);
void sqtt_message_free(char *message);
}

namespace {

// Phase numbers shared with src/lib.rs (`PassPhase`).
constexpr unsigned kEarlyPhase = 0;
constexpr unsigned kLatePhase = 1;

class SqttPhasePass : public llvm::PassInfoMixin<SqttPhasePass> {
public:
  explicit SqttPhasePass(unsigned Phase) : Phase(Phase) {}

  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    char *Error = sqtt_run_phase(llvm::wrap(&M), Phase);
    if (Error == nullptr)
      return llvm::PreservedAnalyses::none();
    std::string Message = std::string("sqtt-pass: ") + Error;
    sqtt_message_free(Error);
    M.getContext().diagnose(llvm::DiagnosticInfoGeneric(Message, llvm::DS_Error));
    return llvm::PreservedAnalyses::none();
  }

  static bool isRequired() { return true; }

private:
  unsigned Phase;
};

void registerCallbacks(llvm::PassBuilder &PB) {
  PB.registerPipelineEarlySimplificationEPCallback(
      [](llvm::ModulePassManager &MPM, llvm::OptimizationLevel, llvm::ThinOrFullLTOPhase) {
        MPM.addPass(SqttPhasePass(kEarlyPhase));
      });
  PB.registerOptimizerLastEPCallback(
      [](llvm::ModulePassManager &MPM, llvm::OptimizationLevel, llvm::ThinOrFullLTOPhase) {
        MPM.addPass(SqttPhasePass(kLatePhase));
      });
  PB.registerPipelineParsingCallback(
      [](llvm::StringRef Name, llvm::ModulePassManager &MPM,
         llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
        if (Name == "sqtt-early") {
          MPM.addPass(SqttPhasePass(kEarlyPhase));
          return true;
        }
        if (Name == "sqtt-late") {
          MPM.addPass(SqttPhasePass(kLatePhase));
          return true;
        }
        return false;
      });
}

} // namespace

// The exported llvmGetPassPluginInfo is defined in Rust (src/lib.rs), because only symbols
// defined there are exported from the shared object; it returns this.
extern "C" ::llvm::PassPluginLibraryInfo sqtt_plugin_info() {
  return {LLVM_PLUGIN_API_VERSION, "SqttInstrumentPass", "0.1", registerCallbacks};
}
