// Weights and thresholds (ABI version 3, sampler/abi.h): the unit-level state the checks of every phase of the
// lowering (lower.h) read, and its emission once they are all made.
//
// Each site subtracts its weight, read from the unit's writable data (1 until a plan sets it at registration),
// and each amortized check compares with its threshold, read there too: its number of sites, or under a plan
// what the runtime computes from the plan's weights and what the threshold bounds (emit_thresholds()), and the
// fast sides subtract the weight of the sites they pass, read there too (subtract_passed()): docs/decisions.md,
// "Thresholds from the weights".
#include <algorithm>

#include "abi_ir.h"
#include "lower.h"
#include "sampler/abi.h"

namespace sampler::plugin::lowering {

// The unit's scheme table, which every marker must name, its weights (pass.cpp) and each scheme's first entry in
// them. No weights in a unit of the hand macros.
void Lowering::find_weights() {
  GlobalVariable* unit = m_.getGlobalVariable(kUnitName, /*AllowInternal=*/true);
  auto* fields = unit && unit->hasInitializer() ? dyn_cast<ConstantStruct>(unit->getInitializer()) : nullptr;
  if (!fields || fields->getNumOperands() <= static_cast<unsigned>(UnitField::schemes)) return;
  schemes_table_ = dyn_cast<GlobalVariable>(fields->getOperand(static_cast<unsigned>(UnitField::schemes)));
  if (!schemes_table_ || !schemes_table_->hasInitializer()) {
    schemes_table_ = nullptr;
    return;
  }
  // One unit a module: a marker naming another table (another unit's, in a module collected twice) would find
  // its weight at another site's place, and each unit's weights and thresholds are its own.
  const DataLayout& layout = m_.getDataLayout();
  for (const Point& p : points_) {
    APInt offset(layout.getIndexTypeSizeInBits(p.scheme->getType()), 0);
    auto* named = dyn_cast<GlobalVariable>(p.scheme->stripAndAccumulateConstantOffsets(layout, offset,
                                                                                  /*AllowNonInbounds=*/true));
    if (named && named != schemes_table_) {
      context_.emitError(Twine("sampler: ") + m_.getModuleIdentifier() + ": a site marker names @" +
                         named->getName() + ", not @" + schemes_table_->getName() + " of @" + kUnitName +
                         ": a module holds one unit");
      return;
    }
  }
  // The unit's weights, in a unit of this ABI's layout: one of an older version (the hand macros' version 2)
  // has neither weights nor the thresholds' fields that emit_thresholds() fills.
  if (fields->getNumOperands() != static_cast<unsigned>(UnitField::kCount)) return;
  weights_ = dyn_cast<GlobalVariable>(fields->getOperand(static_cast<unsigned>(UnitField::weights)));
  if (!weights_) return;
  Constant* table = schemes_table_->getInitializer();
  uint64_t base = 0;
  for (unsigned i = 0; i < cast<ArrayType>(table->getType())->getNumElements(); ++i) {
    scheme_bases_.push_back(base);
    auto* count = cast<ConstantInt>(table->getAggregateElement(i)->getAggregateElement(
        static_cast<unsigned>(SchemeField::site_count)));
    base += count->getZExtValue();
  }
}

// The weight of p's site, loaded from the unit's weights; null for a unit without weights.
Value* Lowering::site_weight(IRBuilder<>& b, const Point& p) {
  if (!weights_) return nullptr;
  return b.CreateLoad(Type::getInt64Ty(context_), b.CreateInBoundsGEP(Type::getInt64Ty(context_), weights_,
                                                                      weight_ordinal(b, p)),
                      "sampler.weight");
}

// The index of p's site in the unit's weights (a unit with weights).
Value* Lowering::weight_ordinal(IRBuilder<>& b, const Point& p) {
  Type* i64 = Type::getInt64Ty(context_);
  const DataLayout& layout = m_.getDataLayout();
  uint64_t size = layout.getTypeAllocSize(scheme_struct_type(context_, layout));
  Value* base = nullptr;
  APInt offset(layout.getIndexTypeSizeInBits(p.scheme->getType()), 0);
  if (isa<Constant>(p.scheme) &&
      p.scheme->stripAndAccumulateConstantOffsets(layout, offset, /*AllowNonInbounds=*/true) == schemes_table_ &&
      offset.getZExtValue() % size == 0 && offset.getZExtValue() / size < scheme_bases_.size()) {
    base = ConstantInt::get(i64, scheme_bases_[offset.getZExtValue() / size]);
  } else {  // a choice of entries: the scheme's index from the entry's address, its first entry from a table
    if (!bases_) {
      Constant* data = ConstantDataArray::get(context_, ArrayRef<uint64_t>(scheme_bases_));
      bases_ = new GlobalVariable(m_, data->getType(), true, GlobalValue::PrivateLinkage, data,
                                  "sampler.scheme_bases");
    }
    Value* offset_bytes = b.CreateSub(b.CreatePtrToInt(p.scheme, i64), b.CreatePtrToInt(schemes_table_, i64));
    Value* index = b.CreateExactUDiv(offset_bytes, ConstantInt::get(i64, size));
    base = b.CreateLoad(i64, b.CreateInBoundsGEP(i64, bases_, index));
  }
  return b.CreateAdd(base, b.CreateZExtOrTrunc(p.site, i64));
}

// A check's threshold: `k` (without weights: the immediate), or a load of a new entry of the unit's thresholds
// (initially k; under a plan computed from `bound`), whose index goes to `slot`.
Value* Lowering::threshold(IRBuilder<>& b, uint64_t k, size_t& slot, ThresholdBound bound) {
  if (!weights_) return ConstantInt::get(Type::getInt64Ty(context_), k);
  slot = new_threshold(k, std::move(bound));
  return load_threshold(b, slot);
}

size_t Lowering::new_threshold(uint64_t k, ThresholdBound bound) {
  if (!thresholds_placeholder_)
    thresholds_placeholder_ = new GlobalVariable(m_, ArrayType::get(Type::getInt64Ty(context_), 0), false,
                                                 GlobalValue::InternalLinkage, nullptr,
                                                 "sampler.thresholds.placeholder");
  threshold_values_.push_back(k);
  threshold_bounds_.push_back(std::move(bound));
  return threshold_values_.size() - 1;
}

Value* Lowering::load_threshold(IRBuilder<>& b, size_t slot) {
  Type* i64 = Type::getInt64Ty(context_);
  return b.CreateLoad(i64, b.CreateConstInBoundsGEP1_64(i64, thresholds_placeholder_, slot), "sampler.threshold");
}

// The weight ordinals p's site may have: one for a marker the optimiser left alone, each of a choice's otherwise
// (enough for a bound: their sum is at least the one taken); none if they cannot be told at compile time.
std::optional<std::vector<uint64_t>> Lowering::ordinals(const Point& p) {
  std::vector<Value*> schemes, sites;
  if (!choices(p.scheme, schemes) || !choices(p.site, sites) || schemes.size() * sites.size() > 64)
    return std::nullopt;
  const DataLayout& layout = m_.getDataLayout();
  uint64_t size = layout.getTypeAllocSize(scheme_struct_type(context_, layout));
  std::vector<uint64_t> result;
  for (Value* scheme : schemes) {
    APInt offset(layout.getIndexTypeSizeInBits(scheme->getType()), 0);
    if (scheme->stripAndAccumulateConstantOffsets(layout, offset, /*AllowNonInbounds=*/true) != schemes_table_ ||
        offset.getZExtValue() % size != 0 || offset.getZExtValue() / size >= scheme_bases_.size())
      return std::nullopt;
    for (Value* site : sites) {
      auto* number = dyn_cast<ConstantInt>(site);
      if (!number || number->getValue().getActiveBits() > 32) return std::nullopt;
      result.push_back(scheme_bases_[offset.getZExtValue() / size] + number->getZExtValue());
    }
  }
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

// The constants `v` may be, through phis and selects; false if it may be anything else.
bool Lowering::choices(Value* v, std::vector<Value*>& out, unsigned depth) {
  if (isa<Constant>(v)) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    return out.size() <= 64;
  }
  if (depth > 4) return false;
  if (auto* select = dyn_cast<SelectInst>(v))
    return choices(select->getTrueValue(), out, depth + 1) && choices(select->getFalseValue(), out, depth + 1);
  if (auto* phi = dyn_cast<PHINode>(v)) {
    for (Value* incoming : phi->incoming_values())
      if (incoming != phi && !choices(incoming, out, depth + 1)) return false;
    return true;
  }
  return false;
}

// p's sites in `bound`, `times` each.
void Lowering::bound_sites(ThresholdBound& bound, const Point& p, uint64_t times) {
  std::optional<std::vector<uint64_t>> known = ordinals(p);
  if (!known) {
    bound.unknown = true;
    return;
  }
  for (uint64_t ordinal : *known) bound.sites.emplace_back(ordinal, times);
}

// A stretch of sites passed without their checks (a region's or a loop's copy): the countdown drops by their
// weights. Without weights by their number, at each marker, as before; with weights, the sites whose weight is
// known at compile time in one subtraction per block, of an entry of the thresholds that is exactly their sum
// (their number without a plan: the same value as the immediate), each other site by its own weight loaded.
// `passed`: each point with its marker in the copy; `map`: the original's values to the copy's; `by_block`:
// without weights, one subtraction where each block begins (a loop's copy) rather than one a marker;
// `immediates`: the numbers of sites even with weights (a copy that only runs without a plan).
// `stretches`: a region's clone, whose blocks subtract per path (below); null for a loop's copy.
void Lowering::subtract_passed(const std::vector<std::pair<size_t, Instruction*>>& passed, AllocaInst* local,
                               ValueToValueMapTy& map, bool by_block, bool immediates,
                               const std::set<BasicBlock*>* stretches) {
  Type* i64 = Type::getInt64Ty(context_);
  auto subtract = [&](Instruction* at, Value* amount) {
    IRBuilder<> d(at);
    d.CreateStore(d.CreateSub(d.CreateLoad(i64, local), amount), local);
  };
  if (!weights_ || immediates) {
    std::vector<std::pair<Instruction*, uint64_t>> counts;  // where, how many
    for (auto [i, at] : passed) {
      Instruction* where = by_block ? &*at->getParent()->getFirstInsertionPt() : at;
      auto known = std::find_if(counts.begin(), counts.end(), [where](auto& c) { return c.first == where; });
      if (known == counts.end())
        counts.emplace_back(where, 1);
      else
        ++known->second;
    }
    for (auto [where, count] : counts) subtract(where, ConstantInt::get(i64, count));
    return;
  }
  std::map<BasicBlock*, std::pair<Instruction*, ThresholdBound>> blocks;  // the block's first marker, its sum
  std::vector<BasicBlock*> order;
  std::set<BasicBlock*> loaded;  // blocks that subtract a weight of their own (a choice's)
  for (auto [i, at] : passed) {
    Point copy = points_[i];
    for (Value** operand : {&copy.scheme, &copy.site})
      if (auto mapped = map.find(*operand); mapped != map.end()) *operand = mapped->second;
    std::optional<std::vector<uint64_t>> known = ordinals(copy);
    if (!known || known->size() != 1) {
      IRBuilder<> d(at);
      subtract(at, site_weight(d, copy));
      loaded.insert(at->getParent());
      continue;
    }
    auto [entry, added] = blocks.try_emplace(at->getParent(), at, ThresholdBound{});
    if (added) order.push_back(at->getParent());
    entry->second.second.sites.emplace_back(known->front(), 1);
  }
  // A region's clone subtracts per path: a block whose one predecessor is a block of the clone (without calls
  // or weights of its own) continues that block's stretch, and stores the countdown where the stretch began
  // minus one entry of the thresholds that is exactly the stretch's sites so far. On a path one subtraction
  // stays live; the earlier ones serve only the edges that leave, where instcombine sinks them. Two loaded
  // weights in a row cannot fold as two immediates did (bc's _bc_rec_mul: docs/performance.md).
  struct Stretch {
    Value* start = nullptr;  // the countdown where the stretch began
    ThresholdBound sum;      // its sites up to and including the block
  };
  std::map<BasicBlock*, Stretch> stretch;
  auto plain = [&](BasicBlock* block) {
    if (loaded.count(block)) return false;
    for (Instruction& inst : *block)
      if (cuts_region(inst)) return false;
    return true;
  };
  auto continues = [&](BasicBlock* block) {
    BasicBlock* before = block->getSinglePredecessor();
    return before && before != block && stretches->count(before) && plain(before) && plain(block);
  };
  auto stretch_of = [&](BasicBlock* block) -> Stretch& {
    // Up the single predecessors to a block whose stretch is known or which begins one, then back down.
    std::vector<BasicBlock*> chain{block};
    while (!stretch.count(chain.back()) && continues(chain.back()))
      chain.push_back(chain.back()->getSinglePredecessor());
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if (stretch.count(*it)) continue;
      Stretch here;
      if (continues(*it)) {
        here = stretch.at((*it)->getSinglePredecessor());
      } else {
        IRBuilder<> d(&*(*it)->getFirstInsertionPt());
        here.start = d.CreateLoad(i64, local);
      }
      if (auto own = blocks.find(*it); own != blocks.end())
        for (auto site : own->second.second.sites) here.sum.sites.push_back(site);
      stretch.emplace(*it, std::move(here));
    }
    return stretch.at(block);
  };
  for (BasicBlock* block : order) {
    auto& [at, sum] = blocks[block];
    if (stretches && plain(block)) {
      Stretch& s = stretch_of(block);
      size_t slot = new_threshold(s.sum.sites.size(), s.sum);
      IRBuilder<> d(at);
      d.CreateStore(d.CreateSub(s.start, load_threshold(d, slot)), local);
      continue;
    }
    uint64_t count = sum.sites.size();
    size_t slot = new_threshold(count, std::move(sum));
    IRBuilder<> d(at);
    subtract(at, load_threshold(d, slot));
  }
}

// A region's check asks for more (look_ahead()): its threshold's initial value, or its immediate.
void Lowering::set_threshold(ICmpInst* check, size_t slot, uint64_t k) {
  if (weights_)
    threshold_values_.at(slot) = k;
  else
    check->setOperand(1, ConstantInt::get(check->getOperand(1)->getType(), k));
}

// A threshold's bound as (ordinal, times) pairs, the thresholds it refers to included, multiplied by their
// multipliers; none if unknown (then a plan sets the threshold to 2^62).
std::optional<std::map<uint64_t, uint64_t>> Lowering::flatten(size_t slot) {
  const ThresholdBound& bound = threshold_bounds_.at(slot);
  if (bound.unknown) return std::nullopt;
  std::map<uint64_t, uint64_t> sites;
  auto add = [&sites](uint64_t ordinal, uint64_t times) {
    uint64_t& t = sites[ordinal];
    t = t + times < t ? UINT64_MAX : t + times;
  };
  for (auto [ordinal, times] : bound.sites) add(ordinal, times);
  for (size_t other : bound.slots) {
    std::optional<std::map<uint64_t, uint64_t>> inner = flatten(other);
    if (!inner) return std::nullopt;
    uint64_t multiplier = threshold_bounds_[other].multiplier;
    for (auto [ordinal, times] : *inner) {
      if (multiplier != 0 && times > UINT64_MAX / multiplier) return std::nullopt;
      add(ordinal, times * multiplier);
    }
  }
  return sites;
}

// The unit's thresholds, with their values under uniform sampling, and what each bounds (sampler/abi.h,
// `threshold_bounds`), in its descriptor.
void Lowering::emit_thresholds() {
  if (!thresholds_placeholder_) return;
  Type* i64 = Type::getInt64Ty(context_);
  std::vector<uint32_t> words;
  for (size_t slot = 0; slot < threshold_bounds_.size(); ++slot) {
    const ThresholdBound& bound = threshold_bounds_[slot];
    std::optional<std::map<uint64_t, uint64_t>> sites = flatten(slot);
    uint64_t multiplier = bound.multiplier;
    if (sites)
      for (auto [ordinal, times] : *sites)
        if (times >= SAMPLER_THRESHOLD_RUN || ordinal > UINT32_MAX) sites.reset();
    // Pairs that name entries, not sites (sampler/abi.h, SAMPLER_THRESHOLD_DISPATCH): a counted copy's B names its
    // dispatch; a dispatch its callees' dispatches, and a site it cannot name as an entry past the thresholds.
    std::vector<std::pair<uint32_t, uint32_t>> entries;
    if (bound.below_unsampled) {
      sites.emplace();
      multiplier = SAMPLER_THRESHOLD_BELOW_UNSAMPLED;
      if (bound.dispatch) entries.emplace_back(static_cast<uint32_t>(*bound.dispatch), SAMPLER_THRESHOLD_CALLEE);
    } else if (bound.dispatch) {
      multiplier = SAMPLER_THRESHOLD_DISPATCH;
      for (size_t callee : bound.callees) entries.emplace_back(static_cast<uint32_t>(callee), SAMPLER_THRESHOLD_CALLEE);
      if (!sites) {
        sites.emplace();
        entries.emplace_back(UINT32_MAX, SAMPLER_THRESHOLD_CALLEE);
      }
    } else if (!sites) {
      sites.emplace();
      // 2^62 under any plan; a shift of 63 (w of 0)
      multiplier = multiplier & SAMPLER_THRESHOLD_SHIFT ? SAMPLER_THRESHOLD_SHIFT : UINT64_MAX;
    }
    // Sites counted once each that follow one another (a group's pairs, a block's sites of one scheme) as runs.
    constexpr uint32_t kRun = SAMPLER_THRESHOLD_RUN;
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (auto [ordinal, times] : *sites) {
      if (times == 1 && !pairs.empty() && (pairs.back().second & kRun) && pairs.back().second + 1 != 0 &&
          pairs.back().first + (pairs.back().second & ~kRun) == ordinal)
        ++pairs.back().second;
      else
        pairs.emplace_back(static_cast<uint32_t>(ordinal), times == 1 ? kRun | 1 : static_cast<uint32_t>(times));
    }
    pairs.insert(pairs.end(), entries.begin(), entries.end());
    words.push_back(static_cast<uint32_t>(pairs.size()));
    words.push_back(static_cast<uint32_t>(multiplier));
    words.push_back(static_cast<uint32_t>(multiplier >> 32));
    for (auto [first, second] : pairs) {
      words.push_back(first);
      words.push_back(second);
    }
  }
  Constant* bounds_data = ConstantDataArray::get(context_, ArrayRef<uint32_t>(words));
  auto* bounds = new GlobalVariable(m_, bounds_data->getType(), true, GlobalValue::PrivateLinkage, bounds_data,
                                    "__sampler_threshold_bounds");
  Constant* data = ConstantDataArray::get(context_, ArrayRef<uint64_t>(threshold_values_));
  auto* thresholds = new GlobalVariable(m_, data->getType(), false, GlobalValue::InternalLinkage, data,
                                        "__sampler_thresholds");
  thresholds_placeholder_->replaceAllUsesWith(thresholds);
  thresholds_placeholder_->eraseFromParent();
  thresholds_placeholder_ = nullptr;
  GlobalVariable* unit = m_.getGlobalVariable(kUnitName, /*AllowInternal=*/true);
  auto* fields = cast<ConstantStruct>(unit->getInitializer());
  std::vector<Constant*> values;
  for (unsigned i = 0; i < fields->getNumOperands(); ++i) values.push_back(fields->getOperand(i));
  values[static_cast<unsigned>(UnitField::thresholds)] = thresholds;
  values[static_cast<unsigned>(UnitField::threshold_count)] =
      ConstantInt::get(Type::getInt32Ty(context_), threshold_values_.size());
  values[static_cast<unsigned>(UnitField::threshold_bounds)] = bounds;
  values[static_cast<unsigned>(UnitField::threshold_bounds_size)] =
      ConstantInt::get(Type::getInt32Ty(context_), words.size());
  unit->setInitializer(ConstantStruct::get(fields->getType(), values));
  (void)i64;
}

}  // namespace sampler::plugin::lowering
