// A nest bounded by the induction that each of its cycles passes (docs/decisions.md, "Fast sides: a nest bounded
// by its induction"): part of the loops phase (lower_loops.cpp), for a loop around loops whose trips SCEV cannot
// count, such as bzip2's partition loops (`while (True) { if (unLo > unHi) break; ... unLo++; }`, its swaps
// separated by the optimiser into a loop around the loop of its other iterations).
//
// The nest qualifies when one block V of it lies on every cycle inside it, an integer phi X of V moves by at least
// one, in one direction, from each visit of V to the next (each value coming back to X is X of the last visit, or
// of the nest's entry, through additions of constants without wrap, casts that keep the value, and phis of the
// nest), and each path from V back to V passes an exit of the nest that leaves unless X (plus a constant of the
// same sign) is at most (at least) a value the nest does not change. Then X at the n-th visit is at least its
// entry value X0 plus n - 1, and each visit but the last saw X <= B, so V runs at most B - X0 + 2 times and the
// nest is at most that many paths plus one, none through V, each of at most w sites (the most on a path of the
// nest without V's incoming edges, which has no cycle). version_loop() guards it as a loop of that many trips.
#include <llvm/IR/CFG.h>
#include <llvm/IR/Operator.h>

#include <algorithm>

#include "lower.h"

namespace sampler::plugin::lowering {

namespace {

constexpr int64_t kMaxRankedStep = int64_t{1} << 32;  // steps and offsets beyond are not read (no overflow)

// A cast that keeps the value: a trunc without signed wrap, a sext, a zext of a non-negative value.
bool keeps_value(const Value* value) {
  auto* cast = dyn_cast<CastInst>(value);
  return cast && cast->getSrcTy()->isIntegerTy() &&
         (isa<SExtInst>(cast) || (isa<TruncInst>(cast) && cast->hasNoSignedWrap()) ||
          (isa<ZExtInst>(cast) && cast->hasNonNeg()));
}

// `value` as an addition without signed wrap of a constant to another value: that value and the constant.
std::optional<std::pair<Value*, int64_t>> plus_constant(Value* value) {
  auto* op = dyn_cast<OverflowingBinaryOperator>(value);
  if (!op || !op->hasNoSignedWrap() || (op->getOpcode() != Instruction::Add && op->getOpcode() != Instruction::Sub))
    return std::nullopt;
  auto* constant = dyn_cast<ConstantInt>(op->getOperand(1));
  Value* other = op->getOperand(0);
  if (!constant && op->getOpcode() == Instruction::Add) {
    constant = dyn_cast<ConstantInt>(op->getOperand(0));
    other = op->getOperand(1);
  }
  if (!constant || constant->getValue().getSignificantBits() > 33) return std::nullopt;
  int64_t c = constant->getSExtValue();
  return std::make_pair(other, op->getOpcode() == Instruction::Add ? c : -c);
}

}  // namespace

// The trips (as version_loop() takes them: the nest's paths minus one) of a loop around loops that qualifies, as
// an i64 SCEV computed before it; v's blocks and w filled in. Null if it does not.
const SCEV* Lowering::ranked_nest(Loop& loop, const std::unordered_map<const BasicBlock*, uint64_t>& sites,
                                  const std::unordered_map<const BasicBlock*, size_t>& order,
                                  ScalarEvolution& evolution, VersionedLoop& v) {
  if (loop.getNumBlocks() > kMaxVersionedLoopSites) return nullptr;
  v.blocks.assign(loop.block_begin(), loop.block_end());
  for (BasicBlock* block : v.blocks)
    if (!order.count(block)) return nullptr;
  std::sort(v.blocks.begin(), v.blocks.end(),
            [&](BasicBlock* a, BasicBlock* b) { return order.at(a) < order.at(b); });
  if (v.blocks[0] != loop.getHeader()) return nullptr;
  for (BasicBlock* visit : v.blocks) {
    std::optional<uint64_t> w = acyclic_without(loop, visit, sites);
    if (!w || *w < 1) continue;
    for (PHINode& induction : visit->phis()) {
      if (!induction.getType()->isIntegerTy() || induction.getType()->getIntegerBitWidth() > 64) continue;
      for (int direction : {1, -1})
        if (const SCEV* trips = ranked_by(loop, induction, direction, evolution)) {
          v.per_iteration = *w;
          return trips;
        }
    }
  }
  return nullptr;
}

// The most sites on a path of the loop's blocks that does not enter `visit`, if those paths have no cycle.
std::optional<uint64_t> Lowering::acyclic_without(const Loop& loop, const BasicBlock* visit,
                                                  const std::unordered_map<const BasicBlock*, uint64_t>& sites) {
  std::unordered_map<const BasicBlock*, unsigned> incoming;  // edges not yet taken, Kahn's order
  for (BasicBlock* block : loop.blocks())
    for (BasicBlock* next : successors(block))
      if (next != visit && loop.contains(next)) ++incoming[next];
  std::vector<const BasicBlock*> ready;
  for (BasicBlock* block : loop.blocks())
    if (!incoming[block]) ready.push_back(block);
  std::unordered_map<const BasicBlock*, uint64_t> most;  // the most sites on a path ending in the block
  size_t done = 0;
  uint64_t w = 0;
  while (!ready.empty()) {
    const BasicBlock* block = ready.back();
    ready.pop_back();
    ++done;
    if (auto here = sites.find(block); here != sites.end()) most[block] += here->second;
    if (most[block] > kMaxLoopSitesBound) return std::nullopt;
    w = std::max(w, most[block]);
    for (const BasicBlock* next : successors(block)) {
      if (next == visit || !loop.contains(next)) continue;
      most[next] = std::max(most[next], most[block]);
      if (--incoming[next] == 0) ready.push_back(next);
    }
  }
  if (done != loop.getNumBlocks()) return std::nullopt;  // a cycle that does not pass `visit`
  return w;
}

// Whether `induction` ranks the loop in `direction` (+1 up to a bound, -1 down to one): the trips if so.
const SCEV* Lowering::ranked_by(const Loop& loop, PHINode& induction, int direction, ScalarEvolution& evolution) {
  BasicBlock* visit = induction.getParent();
  // Each value coming back to the induction has moved since the last visit; the first, since the entry.
  Value* entry = nullptr;
  for (unsigned i = 0; i < induction.getNumIncomingValues(); ++i) {
    std::optional<Ranked> step;
    if (!loop.contains(induction.getIncomingBlock(i))) {
      step = Ranked{std::nullopt, 0, induction.getIncomingValue(i)};
    } else {
      std::set<const PHINode*> seen;
      step = ranked_step(loop, induction, induction.getIncomingValue(i), induction.getIncomingBlock(i), direction,
                         seen);
    }
    if (!step || (step->after_visit && *step->after_visit < 1) || (step->from_entry && *step->from_entry < 0))
      return nullptr;
    if (step->entry && entry && step->entry != entry) return nullptr;
    if (step->entry) entry = step->entry;
  }
  if (!entry) return nullptr;
  // The exits that test it against a value the loop does not change, each one's bound.
  Type* i64 = Type::getInt64Ty(induction.getContext());
  std::set<const BasicBlock*> tests;
  const SCEV* bound = nullptr;
  for (BasicBlock* block : loop.blocks()) {
    auto* branch = dyn_cast<BranchInst>(block->getTerminator());
    auto* compare = branch && branch->isConditional() ? dyn_cast<ICmpInst>(branch->getCondition()) : nullptr;
    if (!compare || compare->getParent() != block || !compare->isSigned() ||
        loop.contains(branch->getSuccessor(0)) == loop.contains(branch->getSuccessor(1)))
      continue;
    // The predicate under which it stays in the loop, the induction's side first.
    CmpInst::Predicate stays =
        loop.contains(branch->getSuccessor(0)) ? compare->getPredicate() : compare->getInversePredicate();
    Value* ranked = compare->getOperand(0);
    Value* other = compare->getOperand(1);
    if (!offset_in(ranked, induction, block, direction)) {
      std::swap(ranked, other);
      stays = CmpInst::getSwappedPredicate(stays);
    }
    std::optional<int64_t> offset = offset_in(ranked, induction, block, direction);
    bool up = stays == CmpInst::ICMP_SLT || stays == CmpInst::ICMP_SLE;
    bool down = stays == CmpInst::ICMP_SGT || stays == CmpInst::ICMP_SGE;
    if (!offset || *offset < 0 || !(direction > 0 ? up : down)) continue;
    const SCEV* limit = evolution.getSCEV(other);
    if (!limit->getType()->isIntegerTy() || limit->getType()->getIntegerBitWidth() > 64 ||
        !evolution.isLoopInvariant(limit, &loop))
      continue;
    limit = evolution.getSignExtendExpr(limit, i64);
    bound = !bound ? limit : direction > 0 ? evolution.getSMaxExpr(bound, limit) : evolution.getSMinExpr(bound, limit);
    tests.insert(block);
  }
  if (!bound) return nullptr;
  // Each path from the visit back to it passes one of those exits.
  if (!tests.count(visit)) {
    std::vector<const BasicBlock*> work;
    std::set<const BasicBlock*> reached;
    for (const BasicBlock* next : successors(visit)) work.push_back(next);
    while (!work.empty()) {
      const BasicBlock* block = work.back();
      work.pop_back();
      if (!loop.contains(block) || tests.count(block) || !reached.insert(block).second) continue;
      if (block == visit) return nullptr;
      for (const BasicBlock* next : successors(block)) work.push_back(next);
    }
  }
  // At most (bound - entry) * direction + 2 visits, each value of 63 bits at most so that nothing wraps.
  const SCEV* start = evolution.getSCEV(entry);
  if (!start->getType()->isIntegerTy() || start->getType()->getIntegerBitWidth() > 64) return nullptr;
  start = evolution.getSignExtendExpr(start, i64);
  if (evolution.getSignedRange(start).getMinSignedBits() > 62 ||
      evolution.getSignedRange(bound).getMinSignedBits() > 62)
    return nullptr;
  const SCEV* span = direction > 0 ? evolution.getMinusSCEV(bound, start) : evolution.getMinusSCEV(start, bound);
  return evolution.getSMaxExpr(evolution.getAddExpr(span, evolution.getConstant(i64, 2)),
                               evolution.getConstant(i64, 1));
}

// How far `value`, taken at the end of `at` to a phi on the way back to the induction, has moved in `direction`
// since the induction's last visit and since the loop's entry (the least over the phis' paths). Its chain is read
// only in `at` and through phis at its start (a phi of the induction's block apart), so that it is never a value of
// an earlier visit.
std::optional<Lowering::Ranked> Lowering::ranked_step(const Loop& loop, PHINode& induction, Value* value,
                                                      const BasicBlock* at, int direction,
                                                      std::set<const PHINode*>& seen) {
  if (value == &induction) return Ranked{0, std::nullopt, nullptr};
  auto* inst = dyn_cast<Instruction>(value);
  if (!inst || inst->getParent() != at) return std::nullopt;
  if (keeps_value(inst)) return ranked_step(loop, induction, inst->getOperand(0), at, direction, seen);
  if (auto sum = plus_constant(inst)) {
    std::optional<Ranked> step = ranked_step(loop, induction, sum->first, at, direction, seen);
    if (!step) return std::nullopt;
    if (step->after_visit) *step->after_visit += direction * sum->second;
    if (step->from_entry) *step->from_entry += direction * sum->second;
    return step;
  }
  auto* phi = dyn_cast<PHINode>(inst);
  if (!phi || at == induction.getParent() || !seen.insert(phi).second) return std::nullopt;
  Ranked merged;
  for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
    BasicBlock* from = phi->getIncomingBlock(i);
    std::optional<Ranked> step;
    if (!loop.contains(from)) {  // the loop's entry: only into its header
      if (at != loop.getHeader()) return std::nullopt;
      step = Ranked{std::nullopt, 0, phi->getIncomingValue(i)};
    } else {
      step = ranked_step(loop, induction, phi->getIncomingValue(i), from, direction, seen);
    }
    if (!step || (step->entry && merged.entry && step->entry != merged.entry)) return std::nullopt;
    for (auto [into, taken] : {std::pair{&merged.after_visit, &step->after_visit},
                               std::pair{&merged.from_entry, &step->from_entry}})
      if (*taken) *into = *into ? std::min(**into, **taken) : **taken;
    if (step->entry) merged.entry = step->entry;
    if ((merged.after_visit && std::abs(*merged.after_visit) > kMaxRankedStep) ||
        (merged.from_entry && std::abs(*merged.from_entry) > kMaxRankedStep))
      return std::nullopt;
  }
  return merged;
}

// `value`, tested in `block`, as the induction of its last visit plus a constant of the direction's sign (the
// constant times the direction), reading only instructions of `block`, so that none is of an earlier visit.
std::optional<int64_t> Lowering::offset_in(Value* value, const PHINode& induction, const BasicBlock* block,
                                           int direction) {
  int64_t offset = 0;
  for (;;) {
    if (value == &induction) return offset;
    auto* inst = dyn_cast<Instruction>(value);
    if (!inst || inst->getParent() != block) return std::nullopt;
    if (keeps_value(value)) {
      value = inst->getOperand(0);
      continue;
    }
    std::optional<std::pair<Value*, int64_t>> sum = plus_constant(value);
    if (!sum) return std::nullopt;
    offset += direction * sum->second;
    if (std::abs(offset) > kMaxRankedStep) return std::nullopt;
    value = sum->first;
  }
}

}  // namespace sampler::plugin::lowering
