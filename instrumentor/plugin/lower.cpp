// The plugin's lowering pass (site_marker.h): at the end of the optimisation pipeline, it replaces each site
// marker by the fast path on the thread's countdown (docs/instrumenting.md section 4), per site or, by default,
// per acyclic region (the original sampler's amortized countdown), and by the scheme's slow path.
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Verifier.h>

#include <algorithm>
#include <cstdlib>

#include "lower.h"
#include "sampler/abi.h"

namespace sampler::plugin::lowering {

bool Lowering::run() {
  for (Function& f : m_)
    if (auto kind = site_marker_kind(f)) {
      for (User* user : f.users())
        if (auto* call = dyn_cast<CallInst>(user); call && call->getCalledFunction() == &f)
          read(call, kind->first, kind->second);
    }
  if (markers_.empty()) return false;
  forget_inaccessible_only();
  if (!points_.empty()) {
    countdown_ = m_.getGlobalVariable(abi::sampler_countdown);
    unit_countdown_ = countdown_ != nullptr;
    if (!countdown_)
      countdown_ = new GlobalVariable(m_, Type::getInt64Ty(context_), false, GlobalValue::ExternalLinkage,
                                      nullptr, abi::sampler_countdown, nullptr, GlobalValue::InitialExecTLSModel);
    find_weights();
    copy_functions();
    for (size_t i = 0, end; i < points_.size(); i = end) {  // each function's largest group of pairs
      for (end = i + 1; end < points_.size() && points_[end].before == points_[i].before;) ++end;
      if (points_[i].kind == Point::Pair) {
        uint64_t& most = most_pairs_[points_[i].before->getFunction()];
        most = std::max<uint64_t>(most, end - i);
      }
    }
    for (size_t i = 0; i < points_.size();) {
      // The pairs of one assignment share their marker: one check for all of them.
      size_t end = i + 1;
      while (end < points_.size() && points_[end].before == points_[i].before) ++end;
      if (end - i > 1)
        instrument_group(i, end);
      else
        instrument(points_[i]);
      i = end;
    }
  }
  for (CallInst* marker : markers_) {
    with_sites_.insert(marker->getFunction());
    marker->eraseFromParent();
  }
  emit_thresholds();
  if (getenv("SAMPLER_PASS_VERIFY") && verifyModule(m_, &errs())) report_fatal_error("sampler: broken module");
  return true;
}

// The optimiser inferred from the markers that functions with sites (and their callers) touch no memory the
// program can reach; lowered, they write the thread's countdown, so the clean-up after the lowering (GVN) must
// not forward a countdown stored before such a call to a load after it.
void Lowering::forget_inaccessible_only() {
  auto pretends = [](MemoryEffects effects) {
    return isModSet(effects.getModRef(IRMemLocation::InaccessibleMem)) && effects != MemoryEffects::unknown();
  };
  for (Function& f : m_) {
    if (pretends(f.getMemoryEffects())) f.removeFnAttr(Attribute::Memory);
    for (Instruction& inst : instructions(f))
      if (auto* call = dyn_cast<CallBase>(&inst); call && pretends(call->getAttributes().getMemoryEffects()))
        call->removeFnAttr(Attribute::Memory);
  }
}

// site_marker.h: (scheme, value, site [, other] [, site, other]...).
void Lowering::read(CallInst* call, SiteKind kind, bool is_signed) {
  markers_.push_back(call);
  Point p{kind, call->getArgOperand(0), nullptr, call, call->getArgOperand(1), is_signed};
  unsigned step = kind == Point::Pair ? 2 : 1;
  for (unsigned i = 2; i + step <= call->arg_size(); i += step) {
    p.site = call->getArgOperand(i);
    if (step == 2) p.other = call->getArgOperand(i + 1);
    points_.push_back(p);
  }
}

// The functions whose sites were lowered, and their twins.
void Lowering::functions(std::vector<Function*>& with_sites, std::vector<Function*>& twins,
                         std::vector<Function*>& counted) const {
  for (Function& f : m_) {  // in the module's order, as copy_functions()
    if (with_sites_.count(&f)) with_sites.push_back(&f);
    if (counted_.count(&f)) counted.push_back(&f);
    if (auto twin = twins_.find(&f); twin != twins_.end()) twins.push_back(twin->second);
  }
}

}  // namespace sampler::plugin::lowering

namespace sampler::plugin {

using namespace llvm;

LoweredSites lower_sites(Module& module, bool amortized, bool inline_counters) {
  lowering::Lowering lowering(module, amortized, inline_counters);
  LoweredSites result;
  result.changed = lowering.run();
  lowering.functions(result.with_sites, result.twins, result.counted);
  return result;
}

}  // namespace sampler::plugin
