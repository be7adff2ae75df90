// A leaf function's counted copy: a phase of the lowering (lower.h), beside the twins.
//
// A function with loops that calls nothing (bzip2's mainGtU, gzip's longest_match) gets a third copy, f.counted:
// its code without checks, its countdown in a local that drops by the sites each block passes (a loop's blocks
// that every iteration passes counted by its iterations: subtract_by_iterations()), stored back at each return.
// The dispatch runs it when the countdown is above B, the most sites one call can pass: the sites outside loops
// plus, for each outermost loop, (its trips + 1) times its most per iteration (most_per_iteration()), its trips
// SCEV's constant maximum, or else its exact count or symbolic maximum expanded from the arguments alone. No site
// can then reach 0 and the countdown drops by exactly the sites passed: the same sites sample as in f.sampled.
// The copy has its own registers: no slow side's prologue, no globals loaded for the slow sides' pairs
// (docs/decisions.md, "Fast sides: a leaf function's counted copy").
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/Analysis/CFG.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>

#include <algorithm>

#include "lower.h"

namespace sampler::plugin::lowering {

namespace {

// Whether the iterations that leave `loop` pass `block` only where it dominates the block they leave from: no
// path from it within the iteration (not through the header) reaches another exiting block.
bool passed_only_where_dominating(Loop& loop, BasicBlock* block,
                                  const SmallVectorImpl<std::pair<BasicBlock*, BasicBlock*>>& exits,
                                  DominatorTree& tree) {
  std::set<BasicBlock*> reached{block};
  std::vector<BasicBlock*> work{block};
  while (!work.empty()) {
    BasicBlock* at = work.back();
    work.pop_back();
    for (BasicBlock* next : successors(at))
      if (next != loop.getHeader() && loop.contains(next) && reached.insert(next).second) work.push_back(next);
  }
  return none_of(exits, [&](auto& e) { return reached.count(e.first) && !tree.dominates(block, e.first); });
}

}  // namespace

std::optional<Lowering::CountedCopy> Lowering::counted_copy(Function& f, const std::vector<size_t>& indices) {
  if (!amortized_ || unit_countdown_ || f.hasOptNone() || indices.size() > kMaxAmortizedSites) return {};
  for (Instruction& inst : instructions(f))
    if (cuts_region(inst) || inst.getType()->isTokenTy() || inst.isEHPad()) return {};
  ValueToValueMapTy map;
  CountedCopy c;
  c.copy = CloneFunction(&f, map);
  make_local(*c.copy, f, ".counted");
  std::vector<std::pair<size_t, Instruction*>> passed;
  for (size_t i : indices) passed.emplace_back(i, cast<Instruction>(map[points_[i].before]));
  if (!call_bound(c, passed)) {
    c.copy->eraseFromParent();
    return {};
  }
  // A new entry: the local and its first value, before any block's subtraction; the allocas move with it.
  BasicBlock* old_entry = &c.copy->getEntryBlock();
  BasicBlock* entry = BasicBlock::Create(context_, "sampler.counted", c.copy, old_entry);
  IRBuilder<> b(entry);
  Type* i64 = Type::getInt64Ty(context_);
  AllocaInst* local = b.CreateAlloca(i64, nullptr, "sampler.call_countdown");
  b.CreateStore(b.CreateLoad(i64, b.CreateThreadLocalAddress(countdown_)), local);
  b.CreateBr(old_entry);
  for (Instruction& inst : make_early_inc_range(*old_entry))
    if (auto* alloca = dyn_cast<AllocaInst>(&inst); alloca && alloca->isStaticAlloca()) alloca->moveBefore(local);
  subtract_by_iterations(*c.copy, passed, local);
  std::vector<BasicBlock*> blocks;
  for (BasicBlock& block : *c.copy) {
    blocks.push_back(&block);
    if (auto* ret = dyn_cast<ReturnInst>(block.getTerminator())) {
      IRBuilder<> r(ret);
      r.CreateStore(r.CreateLoad(i64, local), r.CreateThreadLocalAddress(countdown_));
    }
  }
  erase_markers(blocks);
  with_sites_.insert(c.copy);  // the lowering's clean-up: mem2reg, indvars, the vectorizer
  counted_.insert(c.copy);
  return c;
}

// The copy's subtractions: each block's sites, as subtract_passed()'s by_block would place them, except in a loop
// the blocks every iteration passes (its own blocks that dominate its one latch). Their sum w is counted by
// iterations: where the loop has an induction variable of constant step (a power of two) that cannot wrap within
// its constant maximum of trips, each exit edge subtracts w times the iterations completed before the last
// ((the variable's value in the last - its start) / step) plus the sites of those blocks that dominate the block
// it leaves from, and the loop's own path subtracts nothing (gzip's longest_match: its hottest path is plain's);
// else the latch subtracts w and the exit edges before it the blocks that dominate them. Exact: a completed
// iteration passes each such block once (the blocks of inner loops are not among them), and the last one those
// that dominate its exit; a block that may be passed on the way to an exit without dominating it keeps its own
// subtraction (docs/decisions.md, "Fast sides: a leaf function's counted copy").
void Lowering::subtract_by_iterations(Function& copy, const std::vector<std::pair<size_t, Instruction*>>& passed,
                                      AllocaInst* local) {
  std::map<BasicBlock*, uint64_t> sites;
  for (auto [i, at] : passed) ++sites[at->getParent()];
  std::map<BasicBlock*, uint64_t> at_block = sites;
  // Each exit edge's sites and iterations, in the order found (the blocks made for them come out in that order).
  std::vector<std::pair<std::pair<BasicBlock*, BasicBlock*>, std::pair<uint64_t, std::vector<Iterations>>>> edges;
  std::map<std::pair<BasicBlock*, BasicBlock*>, size_t> edge_index;
  auto at_edge = [&](BasicBlock* from, BasicBlock* to) -> std::pair<uint64_t, std::vector<Iterations>>& {
    auto [found, added] = edge_index.try_emplace({from, to}, edges.size());
    if (added) edges.emplace_back(std::pair{from, to}, std::pair<uint64_t, std::vector<Iterations>>{});
    return edges[found->second].second;
  };
  DominatorTree tree(copy);
  LoopInfo info(tree);
  TargetLibraryInfoImpl library_impl{Triple(m_.getTargetTriple())};
  TargetLibraryInfo library(library_impl, &copy);
  AssumptionCache assumptions(copy);
  ScalarEvolution evolution(copy, library, assumptions, tree, info);
  for (Loop* loop : info.getLoopsInPreorder()) {
    BasicBlock* latch = loop->getLoopLatch();
    if (!latch || info.getLoopFor(latch) != loop) continue;
    SmallVector<std::pair<BasicBlock*, BasicBlock*>, 8> exits;
    loop->getExitEdges(exits);  // an edge once for each of its terminator's operands: once here
    for (size_t i = exits.size(); i-- > 0;)
      if (std::find(exits.begin(), exits.begin() + i, exits[i]) != exits.begin() + i) exits.erase(exits.begin() + i);
    if (any_of(exits, [](auto& e) { return !isa<BranchInst, SwitchInst>(e.first->getTerminator()); })) continue;
    std::vector<BasicBlock*> every;  // the blocks with sites every iteration passes
    uint64_t w = 0;
    for (BasicBlock* block : loop->blocks())
      if (info.getLoopFor(block) == loop && sites.count(block) && tree.dominates(block, latch) &&
          passed_only_where_dominating(*loop, block, exits, tree)) {
        every.push_back(block);
        w += sites[block];
      }
    if (every.empty()) continue;
    std::optional<Iterations> iterations;
    if (exits.size() <= kMaxIterationExits) iterations = counted_iterations(*loop, evolution, m_.getDataLayout());
    for (BasicBlock* block : every) {
      at_block[block] -= sites[block];
      if (!iterations) at_block[latch] += sites[block];
      for (auto [from, to] : exits)
        if ((iterations || from != latch) && tree.dominates(block, from)) at_edge(from, to).first += sites[block];
    }
    if (iterations)
      for (auto [from, to] : exits) {
        at_edge(from, to).second.push_back(*iterations);
        at_edge(from, to).second.back().w = w;
      }
  }
  Type* i64 = Type::getInt64Ty(context_);
  auto subtract = [&](IRBuilder<>& d, Value* amount) {
    d.CreateStore(d.CreateSub(d.CreateLoad(i64, local), amount), local);
  };
  for (auto [block, count] : at_block)
    if (count) {
      IRBuilder<> d(&*block->getFirstInsertionPt());
      subtract(d, d.getInt64(count));
    }
  for (auto& [edge, amount] : edges) {
    auto [from, to] = edge;
    BasicBlock* leave = BasicBlock::Create(context_, "sampler.counted_leave", &copy, to);
    IRBuilder<> l(leave);
    l.SetCurrentDebugLocation(from->getTerminator()->getDebugLoc());
    Value* sum = l.getInt64(amount.first);
    for (const Iterations& it : amount.second) {
      Value* now = it.variable;
      Value* start = it.start;
      if (now->getType()->isPointerTy()) {
        now = l.CreatePtrToInt(now, i64);
        start = l.CreatePtrToInt(start, i64);
      }
      Value* moved = it.down ? l.CreateSub(start, now) : l.CreateSub(now, start);
      Value* trips = l.CreateLShr(l.CreateZExtOrTrunc(moved, i64), it.shift, "sampler.counted_trips");
      sum = l.CreateAdd(sum, l.CreateMul(trips, l.getInt64(it.w)));
    }
    subtract(l, sum);
    l.CreateBr(to);
    from->getTerminator()->replaceSuccessorWith(to, leave);
    for (PHINode& phi : to->phis()) {
      Value* value = phi.getIncomingValueForBlock(from);
      while (phi.getBasicBlockIndex(from) >= 0) phi.removeIncomingValue(from, /*DeletePHIIfEmpty=*/false);
      phi.addIncoming(value, leave);
    }
  }
}

// An induction variable of `loop` that counts its iterations: a phi of its header, SCEV's {start, +, step} in it,
// step a constant of magnitude 2^shift, which cannot wrap within the loop's constant maximum of trips (so that
// its distance from start over the step is the iterations completed), entered from one block.
std::optional<Lowering::Iterations> Lowering::counted_iterations(Loop& loop, ScalarEvolution& evolution,
                                                                const DataLayout& layout) {
  BasicBlock* before = loop.getLoopPredecessor();
  auto* limit = dyn_cast<SCEVConstant>(evolution.getConstantMaxBackedgeTakenCount(&loop));
  if (!before || !limit || limit->getAPInt().getActiveBits() > 64) return {};
  std::optional<Iterations> best;
  for (PHINode& phi : loop.getHeader()->phis()) {
    Type* type = phi.getType();
    if (!type->isIntegerTy() && !(type->isPointerTy() && !layout.isNonIntegralPointerType(type) &&
                                  layout.getPointerSizeInBits(type->getPointerAddressSpace()) == 64))
      continue;
    auto* rec = dyn_cast<SCEVAddRecExpr>(evolution.getSCEV(&phi));
    if (!rec || rec->getLoop() != &loop || !rec->isAffine()) continue;
    auto* step = dyn_cast<SCEVConstant>(rec->getStepRecurrence(evolution));
    if (!step || step->getAPInt().getBitWidth() > 64) continue;
    int64_t value = step->getAPInt().getSExtValue();
    uint64_t magnitude = value < 0 ? 0 - uint64_t(value) : uint64_t(value);
    if (magnitude == 0 || (magnitude & (magnitude - 1))) continue;
    unsigned shift = Log2_64(magnitude);
    unsigned bits = type->isPointerTy() ? 64 : type->getIntegerBitWidth();
    // |step| * (the most trips before the last) stays below 2^bits: the distance does not wrap.
    if (bits > 64 || limit->getAPInt().getActiveBits() + shift > bits) continue;
    if (!best || shift < best->shift)
      best = Iterations{&phi, phi.getIncomingValueForBlock(before), value < 0, shift, 0};
  }
  return best;
}

// B's parts (CountedCopy), trips not constant expanded in the copy's entry; false if a loop's trips or w are not
// known from the arguments, B may pass 2^62, or a cycle is no loop.
bool Lowering::call_bound(CountedCopy& c, const std::vector<std::pair<size_t, Instruction*>>& passed) {
  Function& f = *c.copy;
  std::unordered_map<const BasicBlock*, uint64_t> sites;
  for (auto [i, at] : passed) ++sites[at->getParent()];
  DominatorTree tree(f);
  LoopInfo info(tree);
  ReversePostOrderTraversal<Function*> rpo(&f);
  if (containsIrreducibleCFG<const BasicBlock*>(rpo, info)) return false;
  TargetLibraryInfoImpl library_impl{Triple(m_.getTargetTriple())};
  TargetLibraryInfo library(library_impl, &f);
  AssumptionCache assumptions(f);
  ScalarEvolution evolution(f, library, assumptions, tree, info);
  std::unordered_map<const BasicBlock*, size_t> order;
  for (BasicBlock* block : rpo) order.emplace(block, order.size());
  std::vector<std::pair<const SCEV*, uint64_t>> loops;
  for (BasicBlock& block : f)
    if (!info.getLoopFor(&block))
      if (auto found = sites.find(&block); found != sites.end()) c.constant += found->second;
  // The straight sites and every loop's w, kept below kMaxLoopSitesBound as one loop's w: B stays below 2^62
  // (2^48 trips at most each, checked in the dispatch where not known).
  uint64_t most = c.constant;
  bool sites_in_loops = false;
  for (Loop* loop : info) {
    std::vector<BasicBlock*> blocks;
    std::optional<uint64_t> w = most_per_iteration(*loop, sites, order, info, evolution, blocks);
    if (!w) return false;
    if (*w == 0) continue;
    sites_in_loops = true;
    most += *w;
    // A constant maximum of trips (from the types: bzip2's mainGtU at most 2^28) keeps B a constant, and the
    // dispatch's test one comparison; only where it may pass 2^34 is B computed from the arguments.
    if (auto* limit = dyn_cast<SCEVConstant>(evolution.getConstantMaxBackedgeTakenCount(loop));
        limit && limit->getAPInt().getActiveBits() <= kMaxConstantTripsBits) {
      c.constant += (limit->getAPInt().getZExtValue() + 1) * *w;
      continue;
    }
    const SCEV* trips = evolution.getBackedgeTakenCount(loop);
    if (isa<SCEVCouldNotCompute>(trips)) trips = evolution.getSymbolicMaxBackedgeTakenCount(loop);
    if (isa<SCEVCouldNotCompute>(trips) || !trips->getType()->isIntegerTy() ||
        trips->getType()->getIntegerBitWidth() > 64)
      return false;
    loops.emplace_back(trips, *w);
  }
  if (!sites_in_loops || most > kMaxLoopSitesBound) return false;
  // Expanded at the entry, from the arguments only: the dispatch computes B before it picks a copy.
  Instruction* at = &*f.getEntryBlock().getFirstInsertionPt();
  SCEVExpander expander(evolution, m_.getDataLayout(), "sampler.call_trips");
  for (auto [trips, w] : loops)
    if (!expander.isSafeToExpandAt(trips, at)) return false;
  std::set<Instruction*> before;
  for (Instruction& inst : f.getEntryBlock()) before.insert(&inst);
  for (auto [trips, w] : loops) c.loops.emplace_back(expander.expandCodeFor(trips, trips->getType(), at), w);
  std::set<Value*> made;
  for (Instruction& inst : f.getEntryBlock())
    if (!before.count(&inst)) {
      c.bound.push_back(&inst);
      made.insert(&inst);
    }
  auto from_arguments = [&](Value* v) { return isa<Constant, Argument>(v) || made.count(v); };
  for (Instruction* inst : c.bound)
    if (isa<PHINode>(inst) || inst->mayReadOrWriteMemory() || !all_of(inst->operands(), from_arguments))
      return false;
  for (auto [trips, w] : c.loops)
    if (!from_arguments(trips)) return false;
  return true;
}

// The dispatch's test (f's block c.test): the copy's B, and the branch to the copy when the countdown is above it
// (and, B a constant, below sampling off's), else to f.sampled. Made after f.sampled's lowering, so that its
// thresholds come after the function's own.
void Lowering::counted_test(Function& f, CountedCopy& c) {
  IRBuilder<> b(c.test);
  Value* count = c.count;
  for (Instruction* inst : c.bound) {
    inst->removeFromParent();
    inst->setDebugLoc(DebugLoc());  // the dispatch has no subprogram
    b.Insert(inst);
    for (Use& operand : inst->operands())
      if (auto* arg = dyn_cast<Argument>(operand.get()); arg && arg->getParent() == c.copy)
        operand.set(f.getArg(arg->getArgNo()));
  }
  Type* i64 = Type::getInt64Ty(context_);
  Value* most = b.getInt64(c.constant);
  Value* checked = nullptr;
  for (auto [trips, w] : c.loops) {
    Value* value = trips;
    if (auto* arg = dyn_cast<Argument>(value); arg && arg->getParent() == c.copy) value = f.getArg(arg->getArgNo());
    Value* wide = b.CreateZExtOrTrunc(value, i64);
    most = b.CreateAdd(most, b.CreateMul(b.CreateAdd(wide, b.getInt64(1)), b.getInt64(w)), "sampler.call_sites");
    if (value->getType()->getIntegerBitWidth() > 32) {  // else trips + 1 < 2^33
      Value* within = b.CreateICmpULT(wide, b.getInt64(kMaxTripsChecked));
      checked = checked ? b.CreateAnd(checked, within) : within;
    }
  }
  if (c.loops.empty()) {
    // B a constant, tested first (the dispatch's entry): a sampled run's countdown is below it, and pays the one
    // comparison and branch it paid before the copy existed; above it, sampling off goes to the twin, the rest to
    // the copy. B is an entry of the thresholds: B without a plan, 2^61 - 1 under one (the copy subtracts
    // immediates and must not run), below every countdown of sampling off and above every other.
    ThresholdBound bound;
    bound.below_unsampled = true;
    if (auto dispatch = dispatch_slots_.find(&f); dispatch != dispatch_slots_.end())
      bound.dispatch = dispatch->second;  // INT64_MIN when the plan turns f off: never within
    size_t slot = 0;
    Value* bound_value = threshold(b, c.constant, slot, std::move(bound));
    BasicBlock* above = BasicBlock::Create(context_, "sampler.above", &f, c.sampled);
    b.CreateCondBr(b.CreateICmpSLE(count, bound_value, "sampler.within"), c.sampled, above);
    IRBuilder<> a(above);
    a.CreateCondBr(a.CreateICmpSGE(count, unsampled_at(a, f), "sampler.off"), c.off, c.fast);
    return;
  }
  Value* test = fast_side_test(b, count, most);
  b.CreateCondBr(checked ? b.CreateAnd(checked, test, "sampler.counted") : test, c.fast, c.sampled);
}

}  // namespace sampler::plugin::lowering
