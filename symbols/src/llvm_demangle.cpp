// LLVM's demangler behind our own header (symbols/llvm_demangle.h).
#include "symbols/llvm_demangle.h"

#include <llvm/Demangle/Demangle.h>

namespace sampler::symbols {

std::string llvm_demangle(std::string_view name) { return llvm::demangle(name); }

}  // namespace sampler::symbols
