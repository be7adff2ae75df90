// LLVM's demangler (libLLVMDemangle, linked statically): the spelling llvm-symbolizer prints, for tools that must
// print the same names without depending on libLLVM at run time (resolve-backtrace --symbols).
#pragma once

#include <string>
#include <string_view>

namespace sampler::symbols {

/// `name` demangled as llvm::demangle does (Itanium, with clone suffixes as " (.isra.0)"); unchanged if it is
/// not a mangled name.
std::string llvm_demangle(std::string_view name);

}  // namespace sampler::symbols
