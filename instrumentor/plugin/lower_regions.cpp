// The amortized countdown (Liblit et al., PLDI 2003, "Amortized Coin Tossing"): the regions phase of the
// lowering (lower.h).
//
// Each function's CFG is cut into acyclic regions at "threshold" points: the function's entry, the target of
// every retreating edge (loop headers), the code after every call that may run sites (any call but intrinsics
// and the markers), and any block reached from two regions. A region with at most k sites on any path, k >= 2,
// is cloned: at its entry, `countdown > k` (likely) runs the clone without sites, which counts the sites it
// passes in a local and stores the countdown back before each call and where it leaves the region (unless it
// jumps straight into another region's check, which reads the local); otherwise the thread's countdown is
// stored and the original runs, site by site, as with the per-site check. No site can sample on the fast side (the
// countdown stays >= 1 there), and the countdown drops by exactly the number of sites passed, so every site
// samples exactly when the per-site check would have sampled it: counts at sparsity 1 are the same, and so is
// the sampling at any sparsity.
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/SSAUpdater.h>

#include <algorithm>

#include "lower.h"

namespace sampler::plugin::lowering {

bool Lowering::is_marker(const CallBase& call) {
  const Function* callee = call.getCalledFunction();
  return callee && site_marker_kind(*callee);
}

// A call that may run sites (of this unit or another): the countdown must be in memory before it, and read
// again after it.
bool Lowering::cuts_region(const Instruction& inst) {
  auto* call = dyn_cast<CallBase>(&inst);
  return call && !isa<IntrinsicInst>(call) && !is_marker(*call);
}

// What cloning cannot handle (or C never has): such a function keeps the per-site check everywhere.
bool Lowering::can_amortize(Function& f) {
  if (f.isPresplitCoroutine()) return false;
  for (BasicBlock& block : f) {
    if (block.hasAddressTaken() || (block.isEHPad() && !block.isLandingPad())) return false;
    for (Instruction& inst : block) {
      if (isa<IndirectBrInst>(inst) || isa<CallBrInst>(inst)) return false;
      if (auto* call = dyn_cast<CallBase>(&inst)) {
        if (call->cannotDuplicate() || call->isConvergent()) return false;
        if (auto* c = dyn_cast<CallInst>(call); c && c->isMustTailCall()) return false;
      }
    }
  }
  return true;
}

void Lowering::amortize(Function& f, const std::vector<size_t>& indices, FunctionState& state) {
  FunctionPoints points;
  for (size_t i : indices) {
    Point& p = points_[i];
    points.at[p.before].push_back(i);
    for (Value** operand : {&p.value, &p.other, &p.site, &p.scheme})
      if (*operand && isa<Instruction>(*operand)) points.operands[*operand].emplace_back(operand, p.before);
  }
  // Cut after every call that may run sites, and after the entry block's allocas (they stay in the entry).
  std::set<BasicBlock*> heads;
  BasicBlock& entry = f.getEntryBlock();
  BasicBlock* body = entry.splitBasicBlock(after_allocas(entry), "sampler.entry");
  heads.insert(body);
  std::vector<Instruction*> cuts;
  for (BasicBlock& block : f)
    for (Instruction& inst : block)
      if (cuts_region(inst)) {
        if (inst.isTerminator()) {  // invoke
          for (BasicBlock* next : successors(&block)) heads.insert(next);
        } else {
          cuts.push_back(inst.getNextNode());
        }
      }
  for (Instruction* at : cuts) heads.insert(at->getParent()->splitBasicBlock(at, "sampler.after_call"));
  for (BasicBlock* guard : state.loop_guards)  // version_loops(): each reads the thread's countdown
    heads.insert(guard);

  // Regions, in reverse post-order: a block joins its predecessors' region if they all have the same one.
  ReversePostOrderTraversal<Function*> rpo(&f);
  std::map<BasicBlock*, unsigned> order;
  for (BasicBlock* block : rpo) order.emplace(block, static_cast<unsigned>(order.size()));
  std::map<BasicBlock*, unsigned> sites;
  for (size_t i : indices) ++sites[points_[i].before->getParent()];
  std::map<BasicBlock*, BasicBlock*> region_of;
  std::map<BasicBlock*, unsigned> most;  // the most sites on a path from the region's head to the block's end
  std::map<BasicBlock*, std::vector<BasicBlock*>> regions;  // head -> blocks in reverse post-order
  std::vector<BasicBlock*> head_order;
  for (BasicBlock* block : rpo) {
    BasicBlock* region = nullptr;
    bool head = heads.count(block) != 0 || block == &entry;
    unsigned before = 0;
    for (BasicBlock* pred : predecessors(block)) {
      auto known = order.find(pred);
      if (known == order.end() || known->second >= order[block]) {  // unreachable, or a retreating edge
        head = true;
        break;
      }
      BasicBlock* r = region_of[pred];
      if (region && r != region) {
        head = true;
        break;
      }
      region = r;
      before = std::max(before, most[pred]);
    }
    if (head || !region) {
      region = block;
      before = 0;
      head_order.push_back(block);
    }
    region_of[block] = region;
    most[block] = before + sites[block];
    regions[region].push_back(block);
  }
  std::vector<std::pair<BasicBlock*, unsigned>> cloned;  // head, k
  for (BasicBlock* head : head_order) {
    unsigned k = 0;
    for (BasicBlock* block : regions[head]) k = std::max(k, most[block]);
    if (k >= kMinRegionSites && head != &entry && !has_token(regions[head])) cloned.emplace_back(head, k);
  }
  for (auto [head, k] : cloned) state.dispatches.insert(head);
  for (auto [head, k] : cloned) clone_region(f, state, regions[head], k, points);
  chain_dispatches(state);
  look_ahead(indices, state);
}

Instruction* Lowering::after_allocas(BasicBlock& entry) {
  Instruction* first = &*entry.getFirstInsertionPt();
  while (isa<AllocaInst>(first)) first = first->getNextNode();
  return first;
}

bool Lowering::has_token(const std::vector<BasicBlock*>& blocks) {  // a token cannot flow through a phi
  for (BasicBlock* block : blocks)
    for (Instruction& inst : *block)
      if (inst.getType()->isTokenTy()) return true;
  return false;
}

// A fast block that ends in a jump with no call before it hands its countdown to the region it jumps to in
// the function's local, not through the thread's variable: a loop whose body is one region keeps its
// countdown in a register on the fast side, and so does a chain of regions without calls.
bool Lowering::passes_countdown(BasicBlock* block) {
  Instruction* terminator = block->getTerminator();
  Instruction* previous = terminator->getPrevNode();
  return isa<BranchInst, SwitchInst>(terminator) && !(previous && cuts_region(*previous));
}

// Each dispatch reads the local countdown. Where every edge into it comes from outside the cloned regions,
// it loads the thread's countdown into the local itself (as cloned); otherwise the edges that do not pass the
// countdown load it on their way.
void Lowering::chain_dispatches(FunctionState& state) {
  std::set<BasicBlock*> refreshed;
  for (auto [dispatch, reload] : state.reloads) {
    std::vector<BasicBlock*> others;
    bool chained = false;
    for (BasicBlock* pred : predecessors(dispatch)) {
      if (state.region_blocks.count(pred) && passes_countdown(pred))
        chained = true;
      else if (std::find(others.begin(), others.end(), pred) == others.end())
        others.push_back(pred);
    }
    if (!chained) continue;
    DebugLoc loc = reload->getDebugLoc();
    auto* load = cast<Instruction>(reload->getOperand(0));
    reload->eraseFromParent();
    RecursivelyDeleteTriviallyDeadInstructions(load);
    for (BasicBlock* pred : others) {
      Instruction* terminator = pred->getTerminator();
      bool branch = isa<BranchInst, SwitchInst>(terminator);
      if (branch && !refreshed.insert(pred).second) continue;
      BasicBlock* where = branch ? pred : SplitEdge(pred, dispatch);
      IRBuilder<> b(where->getTerminator());
      b.SetCurrentDebugLocation(loc);
      reload_local(b, state.local_countdown);
    }
  }
}

// A region whose fast side jumps straight into other regions checks for them too: its dispatch asks for its own
// k plus the largest of theirs, and its fast blocks then enter their fast sides without their checks (the
// countdown left is above their k). A loop whose body is two regions (gzip's longest_match: the body, and the
// condition a `continue` jumps to) then checks once an iteration rather than twice. A region entered that way
// does not look ahead itself: its own check has not covered what follows it. Only jumps within a loop's
// iteration are worth it (a jump into a loop runs once, and would give its header a second entry).
void Lowering::look_ahead(const std::vector<size_t>& indices, const FunctionState& state) {
  const std::vector<ClonedRegion>& cloned_regions = state.cloned_regions;
  if (cloned_regions.empty()) return;
  DominatorTree tree(*cloned_regions[0].dispatch->getParent());
  LoopInfo loops(tree);
  std::map<BasicBlock*, size_t> by_dispatch;
  for (size_t r = 0; r < cloned_regions.size(); ++r) by_dispatch[cloned_regions[r].dispatch] = r;
  std::vector<bool> source(cloned_regions.size()), target(cloned_regions.size());
  std::map<size_t, std::vector<BasicBlock*>> entering;  // region -> the fast blocks that now jump into it
  for (size_t r = 0; r < cloned_regions.size(); ++r) {
    if (target[r]) continue;
    unsigned most = 0;
    std::vector<std::pair<BasicBlock*, size_t>> edges;
    for (BasicBlock* block : cloned_regions[r].fast) {
      if (!passes_countdown(block)) continue;
      for (BasicBlock* next : successors(block)) {
        auto found = by_dispatch.find(next);
        if (found == by_dispatch.end() || found->second == r || source[found->second] ||
            !can_enter(found->first) || loops.isLoopHeader(next) || loops.getLoopFor(block) != loops.getLoopFor(next))
          continue;
        if (std::find(edges.begin(), edges.end(), std::pair{block, found->second}) != edges.end()) continue;
        edges.emplace_back(block, found->second);
        most = std::max(most, cloned_regions[found->second].k);
      }
    }
    if (edges.empty()) continue;
    source[r] = true;
    set_threshold(cloned_regions[r].check, cloned_regions[r].slot, cloned_regions[r].k + uint64_t{most});
    for (auto [block, h] : edges) {
      target[h] = true;
      entering[h].push_back(block);
      // Under a plan, the sum of every region it may enter (at least the largest of them).
      if (!weights_) continue;
      std::vector<size_t>& slots = threshold_bounds_.at(cloned_regions[r].slot).slots;
      if (std::find(slots.begin(), slots.end(), cloned_regions[h].slot) == slots.end())
        slots.push_back(cloned_regions[h].slot);
    }
  }
  if (entering.empty()) return;
  // The points' operands, to follow the values the new edges give a second definition.
  std::unordered_map<Value*, std::vector<std::pair<Value**, Instruction*>>> operands;
  for (size_t i : indices)
    for (Value** operand : {&points_[i].value, &points_[i].other, &points_[i].site, &points_[i].scheme})
      if (*operand && isa<PHINode>(*operand)) operands[*operand].emplace_back(operand, points_[i].before);
  for (auto& [h, blocks] : entering) enter_fast(cloned_regions[h], blocks, operands);
}

// The jumps into a dispatch can bypass it unless one of its phis takes another's value (the value that phi had
// on that edge is no longer known where the jump now goes).
bool Lowering::can_enter(BasicBlock* dispatch) {
  for (PHINode& phi : dispatch->phis())
    for (Value* v : phi.incoming_values())
      if (auto* other = dyn_cast<PHINode>(v); other && other != &phi && other->getParent() == dispatch) return false;
  return true;
}

// The jumps from `blocks` to the region's dispatch go to its fast side instead, each through an edge block that
// stands for the dispatch's phis on that edge. A phi whose value on such an edge is its own (a loop's value
// unchanged) gets the value the phi has where the jump leaves: the dispatch no longer dominates that place when
// another region jumps into the same fast side.
void Lowering::enter_fast(const ClonedRegion& region, const std::vector<BasicBlock*>& blocks,
                          std::unordered_map<Value*, std::vector<std::pair<Value**, Instruction*>>>& operands) {
  BasicBlock* dispatch = region.dispatch;
  std::vector<std::pair<BasicBlock*, BasicBlock*>> edges;  // from, edge block
  for (BasicBlock* from : blocks) {
    BasicBlock* edge = BasicBlock::Create(context_, "sampler.ahead", dispatch->getParent(), region.fast[0]);
    IRBuilder<>(edge).CreateBr(region.fast[0])->setDebugLoc(from->getTerminator()->getDebugLoc());
    from->getTerminator()->replaceSuccessorWith(dispatch, edge);
    edges.emplace_back(from, edge);
  }
  for (PHINode& phi : dispatch->phis()) {
    SSAUpdater updater;
    updater.Initialize(phi.getType(), phi.getName());
    updater.AddAvailableValue(dispatch, &phi);
    for (auto [from, edge] : edges) {
      if (Value* v = phi.getIncomingValueForBlock(from); v != &phi) updater.AddAvailableValue(edge, v);
      while (phi.getBasicBlockIndex(from) >= 0) phi.removeIncomingValue(from, false);
    }
    std::vector<Use*> uses;
    for (Use& use : phi.uses()) {
      auto* user = cast<Instruction>(use.getUser());
      if (user->getParent() != dispatch || isa<PHINode>(user)) uses.push_back(&use);  // a phi's, on its edge
    }
    for (Use* use : uses) updater.RewriteUse(*use);
    if (auto found = operands.find(&phi); found != operands.end()) {
      auto held = std::move(found->second);
      operands.erase(found);
      for (auto [operand, before] : held) {
        if (*operand != &phi) continue;  // rewritten since
        *operand = updater.GetValueInMiddleOfBlock(before->getParent());
        if (isa<PHINode>(*operand)) operands[*operand].emplace_back(operand, before);  // a later region's, maybe
      }
    }
    SmallVector<DbgVariableIntrinsic*, 2> intrinsics;
    SmallVector<DbgVariableRecord*, 2> records;
    findDbgUsers(intrinsics, &phi, &records);
    for (DbgVariableIntrinsic* d : intrinsics)
      if (d->getParent() != dispatch)
        d->replaceVariableLocationOp(&phi, updater.GetValueInMiddleOfBlock(d->getParent()));
    for (DbgVariableRecord* d : records)
      if (BasicBlock* block = d->getMarker()->getParent(); block != dispatch)
        d->replaceVariableLocationOp(&phi, updater.GetValueInMiddleOfBlock(block));
  }
}

// blocks[0] is the region's head. Its phis (and landing pad) stay in a dispatch block that checks the countdown.
void Lowering::clone_region(Function& f, FunctionState& state, std::vector<BasicBlock*> blocks, unsigned k,
                            FunctionPoints& points) {
  std::set<BasicBlock*> inside(blocks.begin(), blocks.end());
  BasicBlock* dispatch = blocks[0];
  BasicBlock* body = dispatch->splitBasicBlock(dispatch->getFirstInsertionPt(), "sampler.region");
  inside.erase(dispatch);
  inside.insert(body);
  blocks[0] = body;

  ValueToValueMapTy map;
  std::vector<BasicBlock*> clones = copy_blocks(f, blocks, ".fast", map);
  std::set<BasicBlock*> cloned(clones.begin(), clones.end());
  state.region_blocks.insert(clones.begin(), clones.end());

  Type* i64 = Type::getInt64Ty(context_);
  if (!state.local_countdown) {
    IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
    state.local_countdown = b.CreateAlloca(i64, nullptr, "sampler.local_countdown");
  }
  // The dispatch: countdown > k (likely) runs the clone; otherwise the original, site by site.
  Instruction* old_branch = dispatch->getTerminator();
  IRBuilder<> b(old_branch);
  b.SetCurrentDebugLocation(body->getFirstNonPHIOrDbg()->getDebugLoc());
  state.reloads.emplace_back(dispatch, reload_local(b, state.local_countdown));
  Value* count = b.CreateLoad(i64, state.local_countdown, "sampler.countdown");
  size_t slot = 0;
  ThresholdBound bound;  // every site of the region: at least the weight of any path through it
  for (BasicBlock* block : blocks)
    for (Instruction& inst : *block)
      if (auto found = points.at.find(&inst); found != points.at.end())
        for (size_t i : found->second) bound_sites(bound, points_[i]);
  Value* fast = b.CreateICmpSGT(count, threshold(b, k, slot, std::move(bound)), "sampler.region_fast");
  b.CreateCondBr(fast, clones[0], body, MDBuilder(context_).createLikelyBranchWeights());
  state.cloned_regions.push_back({dispatch, cast<ICmpInst>(fast), k, slot, clones});
  old_branch->eraseFromParent();

  for (size_t i = 0; i < blocks.size(); ++i) {
    BasicBlock* block = blocks[i];
    BasicBlock* clone = clones[i];
    // The clone's edges out of the region: the phis there get the clone's values.
    for (BasicBlock* next : successors(clone)) {
      if (cloned.count(next)) continue;
      for (PHINode& phi : next->phis()) {
        Value* v = phi.getIncomingValueForBlock(block);
        if (auto mapped = map.find(v); mapped != map.end()) v = mapped->second;
        phi.addIncoming(v, clone);
      }
    }
    keep_countdown_local(f, state, clone, cloned);
    keep_countdown_local(f, state, block, inside);
  }
  state.region_blocks.insert(blocks.begin(), blocks.end());
  for (BasicBlock* block : blocks)
    for (Instruction& inst : *block)
      if (auto found = points.at.find(&inst); found != points.at.end())
        for (size_t i : found->second) points_[i].local = state.local_countdown;

  // Values made inside the region and used after it now have two definitions: the points' operands too (a
  // call's value is classified after the call, in the next region).
  for (BasicBlock* block : blocks) {
    for (Instruction& inst : *block) {
      std::vector<std::pair<Value**, BasicBlock*>> operands;  // of points after the region
      if (auto found = points.operands.find(&inst); found != points.operands.end()) {
        for (auto& [operand, before] : found->second) {
          BasicBlock* where = before->getParent();
          if (!inside.count(where) && !cloned.count(where)) operands.emplace_back(operand, where);
        }
      }
      merge_copies(inst, map, inside, cloned, operands);
    }
  }

  // The clone's sites: the local countdown drops by their weights; its markers go.
  std::vector<std::pair<size_t, Instruction*>> passed;
  for (BasicBlock* block : blocks)
    for (Instruction& inst : *block)
      if (auto found = points.at.find(&inst); found != points.at.end())
        for (size_t i : found->second) passed.emplace_back(i, cast<Instruction>(map[&inst]));
  subtract_passed(passed, state.local_countdown, map, /*by_block=*/false, /*immediates=*/false, &cloned);
  erase_markers(clones);
  forget_variables(blocks);
}

// The slow side's variable locations: one kill per variable where it starts, instead of every location it
// had. The slow side runs only near a sample, and its locations are code generator work (LiveDebugValues,
// assignment tracking: docs/decisions.md, "Compile time: the slow sides"); a debugger stopped there shows its
// variables as optimised out. Line locations stay: crash stacks and the sites' DWARF need them. The twin and the
// fast side keep every location.
void Lowering::forget_variables(const std::vector<BasicBlock*>& blocks) {
  DenseSet<DebugVariable> killed;
  std::vector<DbgVariableRecord*> kills;
  for (BasicBlock* block : blocks)
    for (Instruction& inst : *block)
      for (DbgVariableRecord& r : make_early_inc_range(filterDbgVars(inst.getDbgRecordRange()))) {
        if (r.isDbgDeclare()) continue;  // the variable's home for the whole function
        if (killed.insert(DebugVariable(&r)).second) {
          DIExpression* expression = DIExpression::get(context_, {});
          if (auto fragment = r.getExpression()->getFragmentInfo())
            expression = *DIExpression::createFragmentExpression(expression, fragment->OffsetInBits,
                                                                 fragment->SizeInBits);
          Value* location = r.getVariableLocationOp(0);
          Type* type = location ? location->getType() : Type::getInt64Ty(context_);
          kills.push_back(DbgVariableRecord::createDbgVariableRecord(PoisonValue::get(type), r.getVariable(),
                                                                     expression, r.getDebugLoc().get()));
        }
        r.eraseFromParent();
      }
  for (DbgVariableRecord* kill : kills) blocks[0]->insertDbgRecordBefore(kill, blocks[0]->getFirstInsertionPt());
}

// Both sides of a region keep the countdown in the function's local (a register after mem2reg); it goes back to
// the thread's variable before a call and where `block` leaves the region (`region`: that side's blocks), on the
// edges that leave it, so that a path staying inside stores nothing. A jump into another region's dispatch hands
// it on in the local (chain_dispatches).
void Lowering::keep_countdown_local(Function& f, const FunctionState& state, BasicBlock* block,
                                    const std::set<BasicBlock*>& region) {
  Type* i64 = Type::getInt64Ty(context_);
  bool leaves = succ_empty(block);
  for (BasicBlock* next : successors(block))
    if (!region.count(next)) leaves = true;
  Instruction* terminator = block->getTerminator();
  auto store_countdown = [&](Instruction* before) {
    IRBuilder<> s(before);
    s.SetCurrentDebugLocation(terminator->getDebugLoc());
    s.CreateStore(s.CreateLoad(i64, state.local_countdown), s.CreateThreadLocalAddress(countdown_));
  };
  if (cuts_region(*terminator)) {
    store_countdown(terminator);
  } else if (Instruction* previous = terminator->getPrevNode(); previous && cuts_region(*previous)) {
    store_countdown(previous);
  } else if (leaves && (succ_empty(block) || !isa<BranchInst, SwitchInst>(terminator))) {
    store_countdown(terminator);
  } else if (leaves) {
    std::vector<BasicBlock*> outside;
    for (BasicBlock* next : successors(block))
      if (!region.count(next) && !state.dispatches.count(next) &&
          std::find(outside.begin(), outside.end(), next) == outside.end())
        outside.push_back(next);
    for (BasicBlock* next : outside) {
      BasicBlock* exit = BasicBlock::Create(context_, "sampler.leave", &f, next);
      IRBuilder<>(exit).CreateBr(next)->setDebugLoc(terminator->getDebugLoc());
      store_countdown(exit->getTerminator());
      terminator->replaceSuccessorWith(next, exit);
      // The phis of `next` had one entry per edge from the block: now one from the exit block.
      for (PHINode& phi : next->phis()) {
        Value* v = phi.getIncomingValueForBlock(block);
        while (phi.getBasicBlockIndex(block) >= 0) phi.removeIncomingValue(block, false);
        phi.addIncoming(v, exit);
      }
    }
  }
}

}  // namespace sampler::plugin::lowering
