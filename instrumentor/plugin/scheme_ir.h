// IR-level pieces of the schemes whose sites or slow paths need more than a runtime call (pass.cpp uses them):
// the basic blocks of the source for coverage, the g-object-unref classification, the float-kinds entry points.
#pragma once

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <utility>
#include <vector>

namespace sampler::plugin {

/// coverage: the blocks of `f` that come from the source, in order, each with its first source location. Not
/// the blocks only exception handling reaches (landing pads, their cleanups), nor blocks without code of their
/// own (only jumps, locals' lifetimes and clang's cleanup bookkeeping, which differ between -O0 and -O1+: so
/// that a function has the same sites at every -O level, in C and C++), nor blocks without any source line.
std::vector<std::pair<llvm::BasicBlock*, const llvm::DILocation*>> source_blocks(llvm::Function& f);

/// g-object-unref: emits at `b` the column of sampler_classify_g_object_unref for `object`, computed as GLib
/// does: G_IS_OBJECT (g_type_check_instance_is_fundamentally_a(object, G_TYPE_OBJECT)), and only then the
/// reference count. Splits `b`'s block; `b` then inserts after the classification.
llvm::Value* g_object_unref_column(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* object);

/// float-kinds: the runtime's entry point for a value of this floating type (float, double, long double).
const char* float_kind_function(const llvm::Type* type);

}  // namespace sampler::plugin
