// Twins and dispatch, the first phase of the lowering (lower.h), made before anything is lowered; and the
// copying of code every copy (twin, region, loop, counted copy) shares.
//
// Sampling off, the countdown is out of reach (the runtime's 2^62, lowered by at most the sites run since): a
// thread whose countdown is at least 2^61 when it calls a function with a loop runs the function's twin
// without sites, checks or countdown, as fast as the program built without sampler-cc. The twin is a function
// of its own (its own registers and prologue, its loops vectorized again) and calls the twins of the unit's
// other functions directly, so a thread with sampling off checks once where it enters the unit's code with
// loops (a function without loops checks about as often either way: once, and after each call). With
// sampling on, no draw comes near 2^61 below a sparsity of about 10^17, where the sample a skipped opportunity
// could have been is not expected in years.
#include <algorithm>

#include <llvm/Analysis/CFG.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/SSAUpdater.h>

#include "lower.h"

namespace sampler::plugin::lowering {

// Each function with a loop gets its twin without sites, made before anything is lowered, and becomes the
// dispatch between the twin and its code with sites; then the regions of each function that can be copied are
// amortized.
void Lowering::copy_functions() {
  // In the module's order, not the functions' addresses: the same source gives the same object file.
  std::vector<std::pair<Function*, std::vector<size_t>>> by_function;
  std::map<Function*, size_t> slot;
  for (size_t i = 0; i < points_.size(); ++i) {
    Function* f = points_[i].before->getFunction();
    auto [at, added] = slot.emplace(f, by_function.size());
    if (added) by_function.emplace_back(f, std::vector<size_t>{});
    by_function[at->second].second.push_back(i);
  }
  for (auto& [f, points] : by_function)
    if (!f->hasAvailableExternallyLinkage() && has_loop(*f) && can_amortize(*f) && can_forward(*f))
      twins_[f] = make_twin(*f);
  for (auto& [f, points] : by_function)
    if (auto twin = twins_.find(f); twin != twins_.end()) call_twins(*f, *twin->second);
  dispatch_thresholds(by_function);
  for (auto& [f, points] : by_function) {
    std::optional<CountedCopy> counted;
    if (twins_.count(f)) counted = counted_copy(*f, points);
    Function& sampled = twins_.count(f) ? dispatch(*f, points, counted) : *f;
    if (amortized_ && points.size() <= kMaxAmortizedSites && can_amortize(sampled)) {
      FunctionState state;
      version_loops(sampled, points, state);
      amortize(sampled, points, state);
    }
    if (counted) counted_test(*f, *counted);
  }
}

bool Lowering::has_loop(Function& f) {
  SmallVector<std::pair<const BasicBlock*, const BasicBlock*>, 8> back_edges;
  FindFunctionBackedges(f, back_edges);
  return !back_edges.empty();
}

// A function whose arguments a guaranteed tail call (musttail) can hand on. Not one with an argument passed in
// memory (byval): clang-19's x86-64 code generator copies such an argument over the return address when a
// musttail call forwards it, and the program crashes (a struct passed by value once the registers run out).
bool Lowering::can_forward(Function& f) {
  if (f.isVarArg() || f.hasFnAttribute(Attribute::Naked)) return false;
  for (Argument& arg : f.args())
    if (arg.hasByValAttr() || arg.hasInAllocaAttr() || arg.hasPreallocatedAttr() || arg.hasSwiftErrorAttr())
      return false;
  return true;
}

// A function local to the unit beside f, named f.SUFFIX, in f's comdat (discarded with f's group when the
// linker keeps another unit's f). Private: no symbol, so that llvm-symbolizer, which prefers the symbol
// table's name to DWARF's, names its code f as DWARF does, and a crash's stack reads the same whichever of
// the two ran.
void Lowering::make_local(Function& copy, Function& f, const char* suffix) {
  copy.setName(f.getName() + suffix);
  copy.setLinkage(GlobalValue::PrivateLinkage);
  copy.setVisibility(GlobalValue::DefaultVisibility);
  copy.setDLLStorageClass(GlobalValue::DefaultStorageClass);
  copy.setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  copy.setComdat(f.getComdat());
}

// The twin: f cloned, with a debug subprogram of its own (backtraces and debuggers name it as f), its markers
// gone.
Function* Lowering::make_twin(Function& f) {
  ValueToValueMapTy map;
  Function* twin = CloneFunction(&f, map);
  make_local(*twin, f, ".unsampled");
  std::vector<BasicBlock*> blocks;
  for (BasicBlock& block : *twin) blocks.push_back(&block);
  erase_markers(blocks);
  return twin;
}

// The twin's calls of the unit's functions that have twins go to those twins: no check on the way. Not when
// the callee's twin is in a comdat group the caller is not in (the linker may discard that group, and keep
// another unit's f), nor when the linker or the loader may replace f (weak). The callees are f's in
// twin_callees_: a plan may turn f off only with them (dispatch_thresholds()).
void Lowering::call_twins(Function& f, Function& twin) {
  for (Instruction& inst : instructions(twin))
    if (auto* call = dyn_cast<CallBase>(&inst))
      if (auto found = twins_.find(call->getCalledFunction()); found != twins_.end()) {
        const Comdat* group = found->second->getComdat();
        if (!found->first->isInterposable() && (!group || group == twin.getComdat())) {
          call->setCalledFunction(found->second);
          twin_callees_[&f].insert(found->first);
        }
      }
}

// Each dispatch compares the countdown with an entry of the unit's thresholds (a unit with weights): 2^61 without
// a plan, as the constant it replaces; under a plan INT64_MIN when the function is off, every one of its sites at
// probability 0 and every function its twin calls off too (the runtime's greatest fixed point over the callees:
// sampler/abi.h, SAMPLER_THRESHOLD_DISPATCH), so that the plan's sites that never sample cost what sampling off
// costs (docs/decisions.md, "A plan's functions without samples run their twins"). All the entries first, since
// each names its callees' entries.
void Lowering::dispatch_thresholds(const std::vector<std::pair<Function*, std::vector<size_t>>>& by_function) {
  if (!weights_) return;
  for (auto& [f, points] : by_function)
    if (twins_.count(f)) dispatch_slots_[f] = new_threshold(kUnsampledCountdown, ThresholdBound{});
  for (auto& [f, points] : by_function) {
    auto slot = dispatch_slots_.find(f);
    if (slot == dispatch_slots_.end()) continue;
    ThresholdBound& bound = threshold_bounds_[slot->second];
    bound.dispatch = slot->second;
    for (size_t i : points) bound_sites(bound, points_[i]);
    for (Function* callee : twin_callees_[f]) bound.callees.push_back(dispatch_slots_.at(callee));
    std::sort(bound.callees.begin(), bound.callees.end());
  }
}

// What a countdown at least sends f's dispatch to its twin: its entry of the thresholds (dispatch_thresholds()),
// or 2^61 in a unit without weights.
Value* Lowering::unsampled_at(IRBuilder<>& b, Function& f) {
  auto slot = dispatch_slots_.find(&f);
  if (slot == dispatch_slots_.end()) return b.getInt64(kUnsampledCountdown);
  return load_threshold(b, slot->second);
}

// f's code with sites moves to a function of its own, f.sampled, and f (its address, its symbol) becomes the
// dispatch: a guaranteed tail call of the twin when the thread's countdown is out of reach, of f.sampled
// otherwise. Neither shares a prologue with the other, or a register with the check. Returns f.sampled
// (`indices`: f's points, whose operands may be f's arguments).
Function& Lowering::dispatch(Function& f, const std::vector<size_t>& indices, std::optional<CountedCopy>& counted) {
  Function* sampled = Function::Create(f.getFunctionType(), f.getLinkage(), f.getAddressSpace(), "", &m_);
  sampled->copyAttributesFrom(&f);
  make_local(*sampled, f, ".sampled");
  sampled->setSubprogram(f.getSubprogram());
  f.setSubprogram(nullptr);
  sampled->splice(sampled->end(), &f);
  std::map<Value*, Value*> moved;
  for (auto [from, to] : zip(f.args(), sampled->args())) {
    to.takeName(&from);
    from.replaceAllUsesWith(&to);
    moved[&from] = &to;
  }
  for (size_t i : indices)  // the points hold values, not uses
    for (Value** operand : {&points_[i].value, &points_[i].other, &points_[i].site, &points_[i].scheme})
      if (auto found = moved.find(*operand); found != moved.end()) *operand = found->second;
  if (f.hasPersonalityFn()) f.setPersonalityFn(nullptr);

  BasicBlock* entry = BasicBlock::Create(context_, "sampler.dispatch", &f);
  BasicBlock* off = BasicBlock::Create(context_, "sampler.unsampled", &f);
  BasicBlock* on = BasicBlock::Create(context_, "sampler.sampled", &f);
  IRBuilder<> b(entry);
  Type* i64 = Type::getInt64Ty(context_);
  Value* count = b.CreateLoad(i64, b.CreateThreadLocalAddress(countdown_));
  std::vector<std::pair<BasicBlock*, Function*>> calls{{off, twins_[&f]}, {on, sampled}};
  BasicBlock* below_off = on;  // where the entry sends a countdown below sampling off's
  if (counted) {  // the counted copy when the countdown is above its B (counted_test())
    counted->count = count;
    counted->off = off;
    counted->sampled = on;
    counted->fast = BasicBlock::Create(context_, "sampler.counted", &f);
    calls = {{off, twins_[&f]}, {counted->fast, counted->copy}, {on, sampled}};
    if (counted->loops.empty()) {  // B a constant: tested first, in the entry, which counted_test() ends
      counted->test = entry;
      below_off = nullptr;
    } else {  // B from the arguments: after the test of sampling off
      below_off = counted->test = BasicBlock::Create(context_, "sampler.reach", &f, on);
    }
  }
  if (below_off)
    b.CreateCondBr(b.CreateICmpSGE(count, unsampled_at(b, f), "sampler.off"), off, below_off);
  std::vector<Value*> args;
  for (Argument& arg : f.args()) args.push_back(&arg);
  for (auto [block, callee] : calls) {
    IRBuilder<> tail(block);
    CallInst* call = tail.CreateCall(callee, args);
    call->setTailCallKind(CallInst::TCK_MustTail);
    call->setCallingConv(f.getCallingConv());
    call->setAttributes(call_attributes(f));
    if (f.getReturnType()->isVoidTy())
      tail.CreateRetVoid();
    else
      tail.CreateRet(call);
  }
  return *sampled;
}

// f's return and parameter attributes, for a call that hands f's arguments on (musttail wants them alike).
AttributeList Lowering::call_attributes(Function& f) {
  AttributeList attributes = f.getAttributes();
  std::vector<AttributeSet> params;
  for (unsigned i = 0; i < f.arg_size(); ++i) params.push_back(attributes.getParamAttrs(i));
  return AttributeList::get(context_, AttributeSet(), attributes.getRetAttrs(), params);
}

// `inst`, made in `inside`, and its copy (`map`), made in `copies`, are now two definitions of one value: its uses
// outside both, and the points' `operands` (each with the block it is used in), take the merge of the two
// (SSAUpdater); variable locations outside `inside` that named `inst` are killed. `second`: a second copy's map
// (a loop's copy for plans), its blocks in `copies` too: three definitions.
void Lowering::merge_copies(Instruction& inst, ValueToValueMapTy& map, const std::set<BasicBlock*>& inside,
                            const std::set<BasicBlock*>& copies,
                            const std::vector<std::pair<Value**, BasicBlock*>>& operands,
                            ValueToValueMapTy* second) {
  std::vector<Use*> outside;
  for (Use& use : inst.uses()) {
    auto* user = cast<Instruction>(use.getUser());
    BasicBlock* where = user->getParent();
    if (auto* phi = dyn_cast<PHINode>(user)) where = phi->getIncomingBlock(use);
    if (!inside.count(where) && !copies.count(where)) outside.push_back(&use);
  }
  if (outside.empty() && operands.empty()) return;
  auto* copy = cast<Instruction>(map[&inst]);
  SSAUpdater updater;
  updater.Initialize(inst.getType(), inst.getName());
  updater.AddAvailableValue(inst.getParent(), &inst);
  updater.AddAvailableValue(copy->getParent(), copy);
  if (second) {
    auto* other = cast<Instruction>((*second)[&inst]);
    updater.AddAvailableValue(other->getParent(), other);
  }
  for (Use* use : outside) updater.RewriteUse(*use);
  for (auto& [operand, where] : operands) *operand = updater.GetValueInMiddleOfBlock(where);
  SmallVector<DbgVariableIntrinsic*, 2> intrinsics;
  SmallVector<DbgVariableRecord*, 2> records;
  findDbgUsers(intrinsics, &inst, &records);
  for (DbgVariableIntrinsic* d : intrinsics)
    if (!inside.count(d->getParent())) d->setKillLocation();
  for (DbgVariableRecord* d : records)
    if (!inside.count(d->getMarker()->getParent())) d->setKillLocation();
}

// Copies of `blocks` in `f`, named with `suffix`, their uses of one another's values and blocks remapped
// (`map`: original to copy).
std::vector<BasicBlock*> Lowering::copy_blocks(Function& f, const std::vector<BasicBlock*>& blocks,
                                               const char* suffix, ValueToValueMapTy& map) {
  std::vector<BasicBlock*> copies;
  for (BasicBlock* block : blocks) {
    BasicBlock* copy = CloneBasicBlock(block, map, suffix, &f);
    map[block] = copy;
    copies.push_back(copy);
  }
  remapInstructionsInBlocks(copies, map);
  return copies;
}

// The markers of `blocks` erased, and what only they used (the other operands of a pair, a sign's widening).
void Lowering::erase_markers(const std::vector<BasicBlock*>& blocks) {
  std::vector<CallBase*> markers;
  for (BasicBlock* block : blocks)
    for (Instruction& inst : *block)
      if (auto* call = dyn_cast<CallBase>(&inst); call && is_marker(*call)) markers.push_back(call);
  SmallVector<WeakTrackingVH, 16> operands;
  for (CallBase* marker : markers) {
    for (Value* operand : marker->args())
      if (isa<Instruction>(operand)) operands.emplace_back(operand);
    marker->eraseFromParent();
  }
  RecursivelyDeleteTriviallyDeadInstructionsPermissive(operands);
}

}  // namespace sampler::plugin::lowering
