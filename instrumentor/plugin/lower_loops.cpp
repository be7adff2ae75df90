// Loops checked once, at their entry (docs/decisions.md, "Fast sides: a loop's check at its entry"): a phase of
// the lowering (lower.h), before the regions of the same function.
//
// A loop without calls whose back edge SCEV bounds (its backedge-taken count B) runs its header at most B + 1
// times, so at most (B + 1) * w sites, w the most sites on a path through one iteration, each loop inside it
// counted as its constant maximum of trips times its own w. A guard on the edge that enters the loop reads
// the thread's countdown: above that bound, a copy of the loop without sites or checks runs, counting the sites
// it passes in a local (a register after mem2reg), and the countdown goes back to the thread's variable where
// the copy leaves the loop. No site can reach 0 there (the countdown stays >= 1) and the countdown drops by
// exactly the sites passed, so the same sites sample as with a check per site. Otherwise the loop runs as
// before, its regions checked each iteration. B is the exact count for an innermost loop; a loop around loops
// (gzip's longest_match) may take SCEV's symbolic maximum, its iterations being long enough to pay the guard.
// Under a plan the copy (immediates) never runs; a second copy for plans subtracts the plan's weights: an
// innermost loop's runs when its whole count is out of reach (planned_copy_guard()), a nest's an iteration at a
// time (planned_nest_guard(), check_each_iteration()).
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>
#include <llvm/Transforms/Utils/SSAUpdater.h>

#include <algorithm>
#include <tuple>

#include "lower.h"
#include "sampler/abi.h"

namespace sampler::plugin::lowering {

void Lowering::version_loops(Function& f, const std::vector<size_t>& indices, FunctionState& state) {
  // A unit that moves the countdown itself (the hand macros) would have it overwritten by the loop's local.
  if (unit_countdown_ || f.hasOptNone()) return;
  std::unordered_map<const BasicBlock*, uint64_t> sites;
  for (size_t i : indices) ++sites[points_[i].before->getParent()];
  std::vector<VersionedLoop> loops;
  {  // the analyses, and the trip counts computed before each loop, before any block changes
    DominatorTree tree(f);
    LoopInfo info(tree);
    if (info.empty()) return;
    TargetLibraryInfoImpl library_impl{Triple(m_.getTargetTriple())};
    TargetLibraryInfo library(library_impl, &f);
    AssumptionCache assumptions(f);
    ScalarEvolution evolution(f, library, assumptions, tree, info);
    SCEVExpander expander(evolution, m_.getDataLayout(), "sampler.trips");
    std::unordered_map<const BasicBlock*, size_t> order;
    ReversePostOrderTraversal<Function*> rpo(&f);
    for (BasicBlock* block : rpo) order.emplace(block, order.size());
    std::set<const Loop*> versioned;
    for (Loop* loop : info.getLoopsInPreorder()) {
      bool inside_versioned = false;  // its blocks are in an outer loop's copy already
      for (const Loop* outer = loop->getParentLoop(); outer; outer = outer->getParentLoop())
        inside_versioned = inside_versioned || versioned.count(outer) != 0;
      VersionedLoop v;
      if (inside_versioned || !versionable(*loop, sites, order, info, evolution, v)) continue;
      // The exact count of an innermost loop, not the symbolic maximum of one that may leave early on its data:
      // such loops (bzip2's mainQSort3, mainGtU) mostly run a few iterations of a large bound, and the guard cost
      // them more than the checks it saved (docs/performance.md, "Fast sides"). An innermost loop that leaves
      // only by its inductions takes the maximum too (bc's digit loops: docs/decisions.md).
      const SCEV* trips = evolution.getBackedgeTakenCount(loop);
      if (isa<SCEVCouldNotCompute>(trips) && (!loop->isInnermost() || leaves_by_inductions(*loop, evolution)))
        trips = evolution.getSymbolicMaxBackedgeTakenCount(loop);
      if (isa<SCEVCouldNotCompute>(trips) || !trips->getType()->isIntegerTy() ||
          trips->getType()->getIntegerBitWidth() > 64)
        continue;
      Instruction* at = v.entering->getTerminator();
      if (!expander.isSafeToExpandAt(trips, at)) continue;
      v.trips = expander.expandCodeFor(trips, trips->getType(), at);
      v.around_loops = !loop->isInnermost();
      if (v.around_loops && weights_ && !nest_iteration_times(*loop, info, evolution, v)) v.times.clear();
      versioned.insert(loop);
      loops.push_back(std::move(v));
    }
  }
  for (VersionedLoop& v : loops) version_loop(f, v, indices, state);
}

// Whether each exit of `loop` compares an induction of it (an affine add recurrence) with a value it does not
// change: a loop whose count SCEV gives up on only for want of no-wrap flags (bc's `n1ptr >= n1->n_value`, a
// pointer going down), whose iterations its other exits' count then bounds closely enough to pay the guard.
bool Lowering::leaves_by_inductions(const Loop& loop, ScalarEvolution& evolution) {
  SmallVector<BasicBlock*, 4> exiting;
  loop.getExitingBlocks(exiting);
  auto induction = [&](const SCEV* s) {
    auto* recurrence = dyn_cast<SCEVAddRecExpr>(s);
    return recurrence && recurrence->getLoop() == &loop && recurrence->isAffine();
  };
  for (BasicBlock* block : exiting) {
    auto* branch = dyn_cast<BranchInst>(block->getTerminator());
    auto* compare = branch && branch->isConditional() ? dyn_cast<ICmpInst>(branch->getCondition()) : nullptr;
    if (!compare) return false;
    const SCEV* a = evolution.getSCEV(compare->getOperand(0));
    const SCEV* b = evolution.getSCEV(compare->getOperand(1));
    if (!(induction(a) && evolution.isLoopInvariant(b, &loop)) &&
        !(induction(b) && evolution.isLoopInvariant(a, &loop)))
      return false;
  }
  return true;
}

// A loop version_loop() can copy: one way in, a latch, no call that may run sites, no token or EH pad, no edge
// within it going back but to its header or an inner loop's; w (most_per_iteration()) between 1 and
// kMaxLoopSitesBound, and at most kMaxVersionedLoopSites sites in its blocks.
bool Lowering::versionable(Loop& loop, const std::unordered_map<const BasicBlock*, uint64_t>& sites,
                           const std::unordered_map<const BasicBlock*, size_t>& order, LoopInfo& info,
                           ScalarEvolution& evolution, VersionedLoop& v) {
  // The one block outside the loop that enters it (the optimiser's last stage leaves few preheaders), ending
  // in a branch with one edge to the header: the guard goes on that edge.
  v.entering = loop.getLoopPredecessor();
  if (!v.entering || !loop.getLoopLatch() || !isa<BranchInst>(v.entering->getTerminator())) return false;
  if (v.entering->getTerminator()->getNumSuccessors() == 2 &&
      v.entering->getTerminator()->getSuccessor(0) == v.entering->getTerminator()->getSuccessor(1))
    return false;
  uint64_t own = 0;
  for (BasicBlock* block : loop.blocks()) {
    if (block->isEHPad() || !isa<BranchInst, SwitchInst>(block->getTerminator())) return false;
    for (Instruction& inst : *block)
      if (cuts_region(inst) || inst.getType()->isTokenTy()) return false;
    if (auto here = sites.find(block); here != sites.end()) own += here->second;
  }
  if (own > kMaxVersionedLoopSites) return false;
  std::optional<uint64_t> w = most_per_iteration(loop, sites, order, info, evolution, v.blocks);
  if (!w || *w < 1) return false;
  v.per_iteration = *w;
  return true;
}

// The most sites on a path from `loop`'s header through one iteration, each loop inside it counted as a block
// with its most per entry: (its constant maximum of trips, SCEV's, plus one) times its own most per iteration.
// None if a cycle inside is no such loop, or the most passes kMaxLoopSitesBound. `blocks`: the loop's, in
// reverse post-order, the header first.
std::optional<uint64_t> Lowering::most_per_iteration(Loop& loop,
                                                     const std::unordered_map<const BasicBlock*, uint64_t>& sites,
                                                     const std::unordered_map<const BasicBlock*, size_t>& order,
                                                     LoopInfo& info, ScalarEvolution& evolution,
                                                     std::vector<BasicBlock*>& blocks) {
  BasicBlock* header = loop.getHeader();
  blocks.assign(loop.block_begin(), loop.block_end());
  for (BasicBlock* block : blocks)
    if (!order.count(block)) return std::nullopt;
  std::sort(blocks.begin(), blocks.end(), [&](BasicBlock* a, BasicBlock* b) { return order.at(a) < order.at(b); });
  if (blocks[0] != header) return std::nullopt;
  std::unordered_map<const BasicBlock*, uint64_t> most;  // the most sites on a path from the header to its end
  uint64_t w = 0;
  for (BasicBlock* block : blocks) {
    Loop* inner = info.getLoopFor(block);  // the loop directly inside `loop` that holds the block, or `loop`
    while (inner != &loop && inner->getParentLoop() != &loop) inner = inner->getParentLoop();
    if (inner != &loop && block != inner->getHeader()) {  // counted with the inner loop's header
      most[block] = most.at(inner->getHeader());
      continue;
    }
    uint64_t before = 0;
    if (block != header)
      for (BasicBlock* pred : predecessors(block)) {
        if (inner != &loop && inner->contains(pred)) continue;  // the inner loop's own back edges
        auto found = most.find(pred);
        if (found == most.end()) return std::nullopt;  // an irreducible cycle inside the loop
        before = std::max(before, found->second);
      }
    uint64_t here = 0;
    if (inner == &loop) {
      if (auto found = sites.find(block); found != sites.end()) here = found->second;
    } else {
      std::vector<BasicBlock*> inner_blocks;
      std::optional<uint64_t> inner_w = most_per_iteration(*inner, sites, order, info, evolution, inner_blocks);
      auto* trips = dyn_cast<SCEVConstant>(evolution.getConstantMaxBackedgeTakenCount(inner));
      if (!inner_w || !trips || trips->getAPInt().getActiveBits() > 32) return std::nullopt;
      here = (trips->getAPInt().getZExtValue() + 1) * *inner_w;  // below 2^47
    }
    most[block] = before + here;
    if (most[block] > kMaxLoopSitesBound) return std::nullopt;
    w = std::max(w, most[block]);
  }
  return w;
}

// For a nest's copy for plans (check_each_iteration()): each block of `loop` with the most times one iteration
// passes it, the product of (the constant maximum of trips + 1) of each loop inside `loop` that holds it (at
// most kMaxLoopSitesBound each); false if a product passes it (then the nest gets no copy for plans).
bool Lowering::nest_iteration_times(Loop& loop, LoopInfo& info, ScalarEvolution& evolution, VersionedLoop& v) {
  for (BasicBlock* block : v.blocks) {
    uint64_t times = 1;
    for (Loop* inner = info.getLoopFor(block); inner != &loop; inner = inner->getParentLoop()) {
      auto* trips = dyn_cast<SCEVConstant>(evolution.getConstantMaxBackedgeTakenCount(inner));
      if (!trips || trips->getAPInt().getActiveBits() > 32) return false;
      times *= trips->getAPInt().getZExtValue() + 1;
      if (times > kMaxLoopSitesBound) return false;
    }
    v.times[block] = times;
  }
  return true;
}

// The guard, the copy without sites, the countdown written back where the copy leaves, and the values the loop
// makes, now made in two places, merged after it (SSAUpdater), the points' operands too.
void Lowering::version_loop(Function& f, VersionedLoop& v, const std::vector<size_t>& indices,
                            FunctionState& state) {
  BasicBlock* header = v.blocks[0];
  std::set<BasicBlock*> inside(v.blocks.begin(), v.blocks.end());
  for (BasicBlock* pred : predecessors(header))  // an earlier loop's copy may have left into this header
    if (pred != v.entering && !inside.count(pred)) return;
  Type* i64 = Type::getInt64Ty(context_);
  AllocaInst*& local = state.loop_countdown;
  if (!local) {
    IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
    local = b.CreateAlloca(i64, nullptr, "sampler.loop_countdown");
  }
  BasicBlock* guard = BasicBlock::Create(context_, "sampler.loop_guard", &f, header);
  v.entering->getTerminator()->replaceSuccessorWith(header, guard);
  for (PHINode& phi : header->phis()) phi.replaceIncomingBlockWith(v.entering, guard);
  state.loop_guards.insert(guard);

  ValueToValueMapTy map;
  std::vector<BasicBlock*> fast = copy_blocks(f, v.blocks, ".loop_fast", map);
  std::set<BasicBlock*> copies(fast.begin(), fast.end());
  // A second copy for plans, which subtracts the plan's weights: an innermost loop's runs when its whole count
  // is out of reach (planned_copy_guard()), a nest's while each iteration is (check_each_iteration()).
  ValueToValueMapTy planned_map;
  std::vector<BasicBlock*> planned;
  if (weights_ && (!v.around_loops || !v.times.empty())) {
    planned = copy_blocks(f, v.blocks, ".loop_planned", planned_map);
    copies.insert(planned.begin(), planned.end());
  }

  IRBuilder<> b(guard);
  b.SetCurrentDebugLocation(v.entering->getTerminator()->getDebugLoc());
  Value* count = b.CreateLoad(i64, b.CreateThreadLocalAddress(countdown_), "sampler.countdown");
  b.CreateStore(count, local);
  Value* trips = b.CreateZExtOrTrunc(v.trips, i64);
  Value* most = b.CreateMul(b.CreateAdd(trips, b.getInt64(1)), b.getInt64(v.per_iteration), "sampler.loop_sites");
  auto in_bounds = [&](Value* test) {  // B + 1 < 2^33 for a count of 32 bits
    if (v.trips->getType()->getIntegerBitWidth() <= 32) return test;
    return b.CreateAnd(b.CreateICmpULT(trips, b.getInt64(kMaxTripsChecked)), test);
  };
  // No branch weights: which loop runs depends on the sparsity, which the compiler does not know. Weighted
  // likely, the code generator took the checked loop for cold and spilled in it, which cost gzip's longest_match
  // at 1/1000 (docs/performance.md, "Fast sides: loops around loops").
  BasicBlock* plan_guard = nullptr;
  Value* nest_weight = nullptr;  // a nest's bound of an iteration's weight, loaded in its planned copy's guard
  if (v.around_loops && !planned.empty()) {
    // The nest's one comparison; its failure (a plan, or a sample in reach) goes on to the planned copy's guard.
    std::tie(plan_guard, nest_weight) = planned_nest_guard(f, v, indices, count, planned[0], header);
    b.CreateCondBr(in_bounds(fast_side_test(b, count, most)), fast[0], plan_guard);
    for (PHINode& phi : planned[0]->phis()) phi.replaceIncomingBlockWith(guard, plan_guard);
    for (PHINode& phi : header->phis()) phi.replaceIncomingBlockWith(guard, plan_guard);
  } else if (planned.empty()) {
    Value* out_of_reach = fast_side_test(b, count, most);
    b.CreateCondBr(in_bounds(out_of_reach), fast[0], header);
  } else {
    // The innermost loop's two comparisons in turn: the countdown above the sites, then shifted above them (the
    // same test without a plan, 63 bits of shift under one); the second's failure, which only a plan reaches,
    // goes to the planned copy's guard, so that the build without a plan runs the comparisons it ran. Weighted
    // unlikely, that edge leaves the code without a plan allocated as before the planned copy existed (bc's
    // bc_divide: docs/performance.md, "Loops under a plan").
    Value* above = b.CreateICmpSGT(count, most, "sampler.loop_fast");
    BasicBlock* shifted = BasicBlock::Create(context_, "sampler.loop_shifted", &f, header);
    b.CreateCondBr(in_bounds(above), shifted, header);
    plan_guard = planned_copy_guard(f, v, indices, inside, count, trips, planned[0], header);
    IRBuilder<> s(shifted);
    s.SetCurrentDebugLocation(v.entering->getTerminator()->getDebugLoc());
    s.CreateCondBr(fast_side_test(s, count, most), fast[0], plan_guard,
                   MDBuilder(context_).createLikelyBranchWeights());
    for (PHINode& phi : fast[0]->phis()) phi.replaceIncomingBlockWith(guard, shifted);
    for (PHINode& phi : planned[0]->phis()) phi.replaceIncomingBlockWith(guard, plan_guard);
    for (PHINode& phi : header->phis()) phi.addIncoming(phi.getIncomingValueForBlock(guard), plan_guard);
  }

  // The points after the loop whose operands the loop makes.
  std::unordered_map<const Value*, std::vector<std::pair<Value**, BasicBlock*>>> operands;
  for (size_t i : indices) {
    Point& p = points_[i];
    if (inside.count(p.before->getParent())) continue;
    for (Value** operand : {&p.value, &p.other, &p.site, &p.scheme})
      if (auto* inst = dyn_cast_or_null<Instruction>(*operand); inst && inside.count(inst->getParent()))
        operands[inst].emplace_back(operand, p.before->getParent());
  }
  // The copy's sites: the local drops by their weights (nothing in the copy samples, so only the sum matters
  // where it leaves the loop): immediates in the copy without a plan, the plan's weights in the other.
  std::vector<std::pair<size_t, Instruction*>> passed, passed_planned;
  for (size_t i : indices)
    if (inside.count(points_[i].before->getParent())) {
      passed.emplace_back(i, cast<Instruction>(map[points_[i].before]));
      if (!planned.empty()) passed_planned.emplace_back(i, cast<Instruction>(planned_map[points_[i].before]));
    }
  subtract_passed(passed, local, map, /*by_block=*/true, /*immediates=*/true);
  leave_copy(f, v, fast, map, local);
  if (!planned.empty()) {
    // A nest's subtracts per path, as a region's clone does: one subtraction live on a path of blocks one after
    // another (longest_match's unrolled comparisons), the others sunk to the edges that leave it.
    std::set<BasicBlock*> planned_blocks(planned.begin(), planned.end());
    subtract_passed(passed_planned, local, planned_map, /*by_block=*/true, /*immediates=*/false,
                    v.around_loops ? &planned_blocks : nullptr);
    // The entries it subtracts read before the loop: its countdown then drops by the same amount each time
    // round a path, which indvars and the vectorizer fold as they fold the immediates (no pass of the
    // clean-up hoists loads). The entries never change once the unit is registered. A nest's stay where they
    // are subtracted (a memory operand each): hoisted, its tens of entries were loaded on the way to the checked
    // nest too, and spilled in its copy (docs/performance.md, "Loops under a plan: a nest's copy for plans").
    for (BasicBlock* block : v.around_loops ? std::vector<BasicBlock*>{} : planned)
      for (Instruction& inst : make_early_inc_range(*block)) {
        auto* load = dyn_cast<LoadInst>(&inst);
        Value* from = load && isa<Constant>(load->getPointerOperand())
                          ? load->getPointerOperand()->stripInBoundsConstantOffsets()
                          : nullptr;
        if (from && (from == thresholds_placeholder_ || from == weights_))  // not the program's own loads
          load->moveBefore(plan_guard->getTerminator());
      }
    leave_copy(f, v, planned, planned_map, local);
    if (nest_weight)
      for (BasicBlock* block : check_each_iteration(f, v, planned, planned_map, local, nest_weight))
        copies.insert(block);
  }

  // Values made in the loop and used after it.
  for (BasicBlock* block : v.blocks)
    for (Instruction& inst : *block) {
      auto held = operands.find(&inst);
      merge_copies(inst, map, inside, copies,
                   held == operands.end() ? std::vector<std::pair<Value**, BasicBlock*>>{} : held->second,
                   planned.empty() ? nullptr : &planned_map);
    }
  erase_markers(fast);  // last: the copies of what only the markers used may be used after the loop
  erase_markers(planned);
}

// Where a copy of the loop leaves it, the countdown goes back to the thread's variable.
void Lowering::leave_copy(Function& f, VersionedLoop& v, const std::vector<BasicBlock*>& copy,
                          ValueToValueMapTy& map, AllocaInst* local) {
  Type* i64 = Type::getInt64Ty(context_);
  std::set<BasicBlock*> blocks(copy.begin(), copy.end());
  for (size_t i = 0; i < v.blocks.size(); ++i) {
    std::vector<BasicBlock*> exits;
    for (BasicBlock* next : successors(copy[i]))
      if (!blocks.count(next) && std::find(exits.begin(), exits.end(), next) == exits.end()) exits.push_back(next);
    for (BasicBlock* next : exits) {
      BasicBlock* leave = BasicBlock::Create(context_, "sampler.loop_leave", &f, next);
      IRBuilder<> l(leave);
      l.SetCurrentDebugLocation(copy[i]->getTerminator()->getDebugLoc());
      l.CreateStore(l.CreateLoad(i64, local), l.CreateThreadLocalAddress(countdown_));
      l.CreateBr(next);
      copy[i]->getTerminator()->replaceSuccessorWith(next, leave);
      for (PHINode& phi : next->phis()) {
        Value* value = phi.getIncomingValueForBlock(v.blocks[i]);
        if (auto mapped = map.find(value); mapped != map.end()) value = mapped->second;
        phi.addIncoming(value, leave);
      }
    }
  }
}

// W, the thresholds' entry bounding one iteration's weight under a plan: each of `indices`' sites times the
// most times an iteration passes its block (`times`, 0 outside the iteration). 2^62 without a plan.
Value* Lowering::iteration_weight(IRBuilder<>& b, const std::vector<size_t>& indices,
                                  function_ref<uint64_t(BasicBlock*)> times) {
  ThresholdBound iteration;
  for (size_t i : indices)
    if (uint64_t passes = times(points_[i].before->getParent())) bound_sites(iteration, points_[i], passes);
  size_t slot = 0;
  return threshold(b, uint64_t{1} << 62, slot, std::move(iteration));
}

// Under a plan, where the innermost loop's copy of immediates may not run: its copy that subtracts the plan's
// weights (`planned`, entered here) runs when the countdown is above (B + 1) * W, W an entry of the thresholds
// bounding an iteration's weight (the sum of the loop's sites' weights: at least any path's), the product
// computed without overflow. No site can reach 0 there and the countdown drops by exactly the weights passed,
// so the same sites sample as in the checked loop (docs/decisions.md, "A loop's copy for plans"). Without a
// plan the block is never reached (the shift is 0: the innermost guard's two comparisons agree); W's entry is
// then 2^62, which no product passes, all the same.
BasicBlock* Lowering::planned_copy_guard(Function& f, VersionedLoop& v, const std::vector<size_t>& indices,
                                         const std::set<BasicBlock*>& inside, Value* count, Value* trips,
                                         BasicBlock* planned, BasicBlock* header) {
  BasicBlock* guard = BasicBlock::Create(context_, "sampler.loop_plan_guard", &f, header);
  IRBuilder<> b(guard);
  b.SetCurrentDebugLocation(v.entering->getTerminator()->getDebugLoc());
  Value* weight = iteration_weight(b, indices, [&](BasicBlock* block) -> uint64_t { return inside.count(block); });
  Value* product = b.CreateBinaryIntrinsic(Intrinsic::umul_with_overflow, b.CreateAdd(trips, b.getInt64(1)),
                                           weight);
  Value* fits = b.CreateNot(b.CreateExtractValue(product, 1));
  Value* above = b.CreateICmpUGT(count, b.CreateExtractValue(product, 0), "sampler.loop_planned");
  b.CreateCondBr(b.CreateAnd(fits, above), planned, header);
  return guard;
}

// Under a plan, where a nest's copy of immediates may not run, and its whole count would be far beyond the
// countdown (gzip's longest_match: its chain's length times its inner loop's maximum): its copy for plans
// (`planned`) runs an iteration at a time, entered here when the countdown is above W, an entry of the
// thresholds bounding one iteration's weight (each site's weight times the most times an iteration passes it,
// VersionedLoop::times), and checked again before each next iteration (check_each_iteration()). Returns the
// guard and W, which the iterations' checks reuse. Without a plan W is 2^62, which no countdown passes: the
// checked nest runs, after one comparison more than before on the way there.
std::pair<BasicBlock*, Value*> Lowering::planned_nest_guard(Function& f, VersionedLoop& v,
                                                            const std::vector<size_t>& indices, Value* count,
                                                            BasicBlock* planned, BasicBlock* header) {
  BasicBlock* guard = BasicBlock::Create(context_, "sampler.nest_plan_guard", &f, header);
  IRBuilder<> b(guard);
  b.SetCurrentDebugLocation(v.entering->getTerminator()->getDebugLoc());
  Value* weight = iteration_weight(b, indices, [&](BasicBlock* block) -> uint64_t {
    auto times = v.times.find(block);
    return times == v.times.end() ? 0 : times->second;
  });
  b.CreateCondBr(b.CreateICmpUGT(count, weight, "sampler.nest_planned"), planned, header);
  return {guard, weight};
}

// A nest's copy for plans checked before each iteration: on its back edge the countdown left must be above W
// (`weight`), which no iteration's sites can bring to 0; otherwise the countdown goes back to the thread's
// variable and the checked nest runs the iterations left, from its header. The same sites sample as in the
// checked nest (docs/decisions.md, "A nest's copy for plans"). Returns the blocks made.
std::vector<BasicBlock*> Lowering::check_each_iteration(Function& f, VersionedLoop& v,
                                                        const std::vector<BasicBlock*>& copy, ValueToValueMapTy& map,
                                                        AllocaInst* local, Value* weight) {
  BasicBlock* header = v.blocks[0];
  BasicBlock* latch = nullptr;  // the one block of the nest that goes back to its header (versionable())
  for (BasicBlock* pred : predecessors(header))
    if (std::find(v.blocks.begin(), v.blocks.end(), pred) != v.blocks.end()) latch = pred;
  auto* copy_latch = cast<BasicBlock>(map[latch]);
  Type* i64 = Type::getInt64Ty(context_);
  BasicBlock* check = BasicBlock::Create(context_, "sampler.nest_iteration", &f, copy[0]);
  BasicBlock* leave = BasicBlock::Create(context_, "sampler.nest_leave", &f, header);
  copy_latch->getTerminator()->replaceSuccessorWith(copy[0], check);
  for (PHINode& phi : copy[0]->phis()) phi.replaceIncomingBlockWith(copy_latch, check);
  IRBuilder<> c(check);
  c.SetCurrentDebugLocation(copy_latch->getTerminator()->getDebugLoc());
  Value* left = c.CreateLoad(i64, local);
  c.CreateCondBr(c.CreateICmpUGT(left, weight, "sampler.nest_planned"), copy[0], leave);
  IRBuilder<> l(leave);
  l.SetCurrentDebugLocation(copy_latch->getTerminator()->getDebugLoc());
  l.CreateStore(l.CreateLoad(i64, local), l.CreateThreadLocalAddress(countdown_));
  l.CreateBr(header);
  for (PHINode& phi : header->phis()) {
    Value* value = phi.getIncomingValueForBlock(latch);
    if (auto mapped = map.find(value); mapped != map.end()) value = mapped->second;
    phi.addIncoming(value, leave);
  }
  return {check, leave};
}

// Whether a copy without checks that passes at most `most` sites may run: the countdown above `most` (an innermost
// loop's guard with weights compares the countdown itself first: version_loop()). The copies subtract
// immediates (a loop's countdown an induction variable that indvars and the vectorizer turn into its value where
// the loop leaves; a loaded weight stops both: docs/decisions.md, "Per-site weights"), so under a plan they must
// not run: a shift of 63 (the shift kind with w = 0, sampler/abi.h) makes the test fail, and the checked code
// runs, each region with its weights; without a plan the shift is 0. A nest's guard is the shifted comparison
// alone (as a second comparison its branch changed the register allocation of gzip's longest_match, a reload more
// an iteration in its copy); an innermost loop's keeps two, the cheaper where short counted loops run their guards
// often (bzip2's mainQSort3; docs/performance.md, "Fast sides at plain speed").
Value* Lowering::fast_side_test(IRBuilder<>& b, Value* count, Value* most) {
  if (!weights_) return b.CreateICmpSGT(count, most, "sampler.loop_fast");
  ThresholdBound bound;
  bound.multiplier = SAMPLER_THRESHOLD_SHIFT;
  bound.unknown = true;
  size_t slot = 0;
  Value* shifted = b.CreateLShr(count, threshold(b, 0, slot, std::move(bound)), "sampler.loop_scaled");
  return b.CreateICmpSGT(shifted, most, "sampler.loop_fast");
}

}  // namespace sampler::plugin::lowering
