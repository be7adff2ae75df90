// The site marker: how the plugin's two LLVM passes hand each other the sites of a unit.
//
// The collecting pass (pass.cpp) runs at the start of the optimisation pipeline, where clang's code is still
// as written: it numbers the sites, emits the unit, and puts one call of the marker at each site. The lowering
// pass (lower.cpp) runs at its end, after inlining and LICM, and replaces the markers by the countdown's fast
// paths and slow paths. In between, the optimiser sees a marker as a call that reads and writes only memory the
// program cannot reach: the program's own loads, stores and pure calls move across it freely (a loop whose pure
// call LLVM hoists stays hoisted; a store to the countdown would have kept it in the loop), and no marker is
// removed, merged or made to run more often than the code it stands for. A unit that reads or writes the
// countdown itself (the hand-instrumentation macros of <sampler/unit.h>, a test) must see each marker write it:
// there the markers may touch any memory.
#pragma once

#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>

#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "abi_ir.h"

namespace sampler::plugin {

/// `void __sampler.site.KIND[.signed](ptr scheme, value, i32 site [, other] [, i32 site, other]...)`: `scheme` is
/// the scheme's entry in the unit's table, `value` what the slow path classifies (a placeholder for the kinds
/// without one), `.signed` whether it is classified as signed. A pair marker carries the pairs of one assignment,
/// each site with its other operand. Only the kind and the sign are in the name: the optimiser may sink the
/// markers of two arms into one whose scheme, site and operands are selected (LLVM replaces any call operand
/// by a phi or select when it sinks), and the lowering takes them as they come.
enum class SiteKind : unsigned { Entry, Branch, Return, Pair, Assigned, Atom, Unref };
inline constexpr const char* kSiteKindNames[] = {"entry", "branch", "return", "pair", "assigned", "atom", "unref"};
inline constexpr llvm::StringLiteral kSiteMarkerPrefix = "__sampler.site.";
/// The unit's descriptor (struct sampler_unit) and its sites' weights (ABI version 3), as the collector names them:
/// the lowering finds them to add its thresholds and to read each site's weight.
inline constexpr const char* kUnitName = "__sampler_unit";
inline constexpr const char* kWeightsName = "__sampler_weights";

inline llvm::FunctionCallee site_marker(llvm::Module& m, SiteKind kind, bool is_signed) {
  std::string name = std::string(kSiteMarkerPrefix) + kSiteKindNames[static_cast<unsigned>(kind)];
  if (is_signed) name += ".signed";
  llvm::LLVMContext& context = m.getContext();
  llvm::FunctionCallee callee =
      m.getOrInsertFunction(name, llvm::FunctionType::get(llvm::Type::getVoidTy(context), true));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    bool program_uses_countdown = m.getGlobalVariable(abi::sampler_countdown) != nullptr;
    f->setMemoryEffects(program_uses_countdown ? llvm::MemoryEffects::unknown()
                                               : llvm::MemoryEffects::inaccessibleMemOnly());
    f->setDoesNotThrow();
    f->setWillReturn();
    f->setNoSync();
    f->setDoesNotFreeMemory();
    f->addFnAttr(llvm::Attribute::NoCallback);
  }
  return callee;
}

/// The kind and sign of a site marker's function; nothing for any other function.
inline std::optional<std::pair<SiteKind, bool>> site_marker_kind(const llvm::Function& f) {
  llvm::StringRef name = f.getName();
  if (!name.consume_front(kSiteMarkerPrefix)) return std::nullopt;
  bool is_signed = name.consume_back(".signed");
  for (unsigned i = 0; i < std::size(kSiteKindNames); ++i)
    if (name == kSiteKindNames[i]) return std::make_pair(static_cast<SiteKind>(i), is_signed);
  return std::nullopt;
}

/// What the lowering changed: the functions whose markers it lowered, and the twins without sites it made.
struct LoweredSites {
  bool changed = false;  // false when there was no marker
  std::vector<llvm::Function*> with_sites;
  std::vector<llvm::Function*> twins;
  std::vector<llvm::Function*> counted;  // leaf functions' counted copies, also in with_sites
};

/// The lowering (lower.cpp): every marker of `module` becomes its fast and slow paths, per acyclic region when
/// `amortized`, else per site.
LoweredSites lower_sites(llvm::Module& module, bool amortized, bool inline_counters);

}  // namespace sampler::plugin
