// Per-site lowering, the last phase of the lowering (lower.h): each point's check on the countdown (the fast path,
// docs/instrumenting.md section 4) and, where it reaches 0, its slow path: a call of the runtime or of the
// unit's counting functions (lower_unit_functions.cpp), or the sample counted in line. On a region's slow side
// the check reads the function's local countdown (Point::local), elsewhere the thread's.
#include <llvm/IR/MDBuilder.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "lower.h"
#include "sampler/abi.h"
#include "scheme_ir.h"
#include "sections/scheme_table.h"

namespace sampler::plugin::lowering {

FunctionCallee Lowering::runtime(const char* name, std::vector<Type*> params) {
  params.insert(params.begin(), {PointerType::getUnqual(context_), Type::getInt32Ty(context_)});
  FunctionCallee callee = m_.getOrInsertFunction(name, FunctionType::get(Type::getVoidTy(context_), params, false));
  if (auto* f = dyn_cast<Function>(callee.getCallee())) f->addFnAttr(Attribute::NoUnwind);
  return callee;
}

// A value as the runtime takes it: 64 bits, sign- or zero-extended as its type asks; pointers as addresses.
Value* Lowering::widen(IRBuilder<>& b, Value* v, bool is_signed) {
  Type* i64 = Type::getInt64Ty(context_);
  if (v->getType()->isPointerTy()) return b.CreatePtrToInt(v, i64);
  return is_signed ? b.CreateSExtOrTrunc(v, i64) : b.CreateZExtOrTrunc(v, i64);
}

// k sites in a row with nothing between them (the pairs of one assignment): if the countdown is above k, none
// of them samples and it drops by k at once (weighted likely); otherwise each site in turn, as usual. The
// original sampler's amortized check, on the smallest region; the same sites sample as with k checks.
void Lowering::instrument_group(size_t begin, size_t end) {
  Instruction* before = points_[begin].before;
  IRBuilder<> b(before);
  b.SetCurrentDebugLocation(before->getDebugLoc());
  Type* i64 = Type::getInt64Ty(context_);
  AllocaInst* local = points_[begin].local;
  Value* count = b.CreateLoad(i64, countdown_address(b, local), "sampler.countdown");
  size_t slot = 0;
  ThresholdBound bound;  // the group's sites, one path: their sum is exact (unknown for a choice of sites)
  for (size_t i = begin; i < end; ++i)
    if (std::optional<std::vector<uint64_t>> known = ordinals(points_[i]); known && known->size() == 1)
      bound.sites.emplace_back(known->front(), 1);
    else
      bound.unknown = true;
  Value* limit = threshold(b, end - begin, slot, std::move(bound));
  // With weights the countdown drops by the threshold itself, the group's weight (exact but for a site of
  // unknown weight, whose threshold under a plan, 2^62, never lets the group skip); the subtraction's own flags
  // answer the check (no signed overflow: both in [0, 2^62]).
  Value* left = weights_ ? b.CreateSub(count, limit, "sampler.left", false, true) : nullptr;
  Value* skip = weights_ ? b.CreateICmpSGT(left, ConstantInt::get(i64, 0), "sampler.skip")
                         : b.CreateICmpSGT(count, limit, "sampler.skip");
  Instruction* skip_term = nullptr;
  Instruction* sites_term = nullptr;
  SplitBlockAndInsertIfThenElse(skip, before, &skip_term, &sites_term,
                                MDBuilder(context_).createLikelyBranchWeights());
  IRBuilder<> fast(skip_term);
  fast.SetCurrentDebugLocation(before->getDebugLoc());
  fast.CreateStore(left ? left : fast.CreateSub(count, ConstantInt::get(i64, end - begin)),
                   countdown_address(fast, local));
  if (!take_compares(begin, end, sites_term, count, local)) {
    for (size_t i = begin; i < end; ++i) instrument(points_[i], sites_term);
  } else if (local && !inline_counters_) {
    IRBuilder<> call(&*sites_term->getParent()->getFirstInsertionPt());
    call.SetCurrentDebugLocation(before->getDebugLoc());
    call.CreateStore(count, call.CreateThreadLocalAddress(countdown_));
    IRBuilder<> after(sites_term);
    after.SetCurrentDebugLocation(before->getDebugLoc());
    reload_local(after, local);
  }
}

// Where a check reads and writes the countdown: on a region's slow side the function's local (keep_countdown_local),
// elsewhere the thread's variable.
Value* Lowering::countdown_address(IRBuilder<>& b, AllocaInst* local) {
  return local ? static_cast<Value*>(local) : b.CreateThreadLocalAddress(countdown_);
}

// The thread's countdown into the function's local: where a region is entered from outside, and on a region's
// slow side after a runtime call (the thread's variable got the local before it; the call may draw anew).
StoreInst* Lowering::reload_local(IRBuilder<>& b, AllocaInst* local) {
  return b.CreateStore(b.CreateLoad(Type::getInt64Ty(context_), b.CreateThreadLocalAddress(countdown_)), local);
}

// The pairs of one assignment, numbered first ... first + k - 1: their k fast and slow paths as one call of
// sampler_take_compares(), the operands in the function's array (k stores rather than k checks and calls: the
// code generator's time and the code's size go with the instructions, and pairs are most of them). The
// constants the group ends with (the AST half puts the function's constants last) go to read-only data
// instead, shared by the groups that end alike, and the call is sampler_take_compares_constants(): most
// operands are constants (docs/performance.md has the share), and each was a store of its own.
// Counting in line (ABI version 2), the call is of the unit's own group function instead (unit_take_group()),
// with the countdown the check read (`countdown`); it returns the next one, stored where the check reads it.
bool Lowering::take_compares(size_t begin, size_t end, Instruction* at, Value* countdown, AllocaInst* local) {
  // The runtime's group functions step one opportunity per site: with weights, only the unit's weigh them.
  if (weights_ && !inline_counters_) return false;
  const Point& p = points_[begin];
  auto* first = dyn_cast<ConstantInt>(p.site);
  if (p.kind != Point::Pair || !first) return false;
  for (size_t i = begin; i < end; ++i) {
    auto* site = dyn_cast<ConstantInt>(points_[i].site);
    if (!site || site->getZExtValue() != first->getZExtValue() + (i - begin) || points_[i].scheme != p.scheme ||
        points_[i].value != p.value)
      return false;
  }
  Function* f = p.before->getFunction();
  Type* i32 = Type::getInt32Ty(context_);
  Type* i64 = Type::getInt64Ty(context_);
  PointerType* ptr = PointerType::getUnqual(context_);
  bool is_signed = p.is_signed && !p.value->getType()->isPointerTy();
  size_t variables_end = end;
  while (variables_end > begin && isa<ConstantInt>(points_[variables_end - 1].other)) --variables_end;
  IRBuilder<> slow(at);
  slow.SetCurrentDebugLocation(p.before->getDebugLoc());
  Value* variables = ConstantPointerNull::get(ptr);
  if (variables_end > begin) {
    AllocaInst*& array = pair_operands_[f];
    if (!array) {
      IRBuilder<> entry(&*f->getEntryBlock().getFirstInsertionPt());
      array = entry.CreateAlloca(ArrayType::get(i64, most_pairs_[f]), nullptr, "sampler.pair_operands");
    }
    for (size_t i = begin; i < variables_end; ++i)
      slow.CreateStore(widen(slow, points_[i].other, is_signed),
                       slow.CreateConstInBoundsGEP2_64(array->getAllocatedType(), array, 0, i - begin));
    variables = array;
  }
  Value* count = ConstantInt::get(i32, end - begin);
  Value* value = widen(slow, p.value, is_signed);
  if (variables_end == end && !inline_counters_) {
    FunctionCallee take = runtime(is_signed ? abi::sampler_take_compares : abi::sampler_take_compares_unsigned,
                                  {i32, i64, ptr});
    slow.CreateCall(take, {p.scheme, first, count, value, variables});
    return true;
  }
  std::vector<uint64_t> constants{end - variables_end};  // their number, then each widened to 64 bits
  for (size_t i = variables_end; i < end; ++i) {
    const APInt& c = cast<ConstantInt>(points_[i].other)->getValue();
    constants.push_back(is_signed ? c.sextOrTrunc(64).getZExtValue() : c.zextOrTrunc(64).getZExtValue());
  }
  GlobalVariable*& table = pair_constants_[constants];
  if (!table) {
    Constant* init = ConstantDataArray::get(context_, ArrayRef<uint64_t>(constants));
    table = new GlobalVariable(m_, init->getType(), /*isConstant=*/true, GlobalValue::PrivateLinkage, init,
                               "sampler.pair_constants");
    table->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
  }
  if (inline_counters_) {
    Value* values = slow.CreateLoad(
        ptr, slow.CreateConstInBoundsGEP1_64(slow.getInt8Ty(), p.scheme, offsetof(sampler_scheme, values)),
        "sampler.values");
    Value* slots = slow.CreateInBoundsGEP(slow.getInt64Ty(), values, slow.getInt64(first->getZExtValue() * 3));
    Function* take = unit_take_group(is_signed ? Classify::Compare : Classify::CompareUnsigned);
    Value* sites = slow.getInt64(end - begin);  // and the first site's weight ordinal above bit 32
    if (weights_) sites = slow.CreateOr(sites, slow.CreateShl(weight_ordinal(slow, p), 32));
    CallInst* call = slow.CreateCall(take, {slots, sites, value, variables, table, countdown});
    call->setCallingConv(take->getCallingConv());
    slow.CreateStore(call, countdown_address(slow, local));
    return true;
  }
  FunctionCallee take = runtime(is_signed ? abi::sampler_take_compares_constants
                                          : abi::sampler_take_compares_constants_unsigned,
                                {i32, i64, ptr, ptr});
  slow.CreateCall(take, {p.scheme, first, count, value, variables, table});
  return true;
}

// The fast path before p.before (or `at`): countdown - 1, stored; if 0 (weighted unlikely), the scheme's
// slow path.
void Lowering::instrument(Point& p, Instruction* at) {
  IRBuilder<> b(at ? at : p.before);
  DebugLoc loc = p.before->getDebugLoc();
  b.SetCurrentDebugLocation(loc);
  Type* i32 = Type::getInt32Ty(context_);
  Type* i64 = Type::getInt64Ty(context_);
  Value* address = countdown_address(b, p.local);
  Value* weight = site_weight(b, p);
  // No signed overflow (nsw): the countdown and a weight are both in [0, 2^62] (sampler/abi.h). It lets the
  // test below use the subtraction's own flags (sub, jle) instead of a test of its own.
  Value* count = b.CreateSub(b.CreateLoad(i64, address, "sampler.countdown"),
                             weight ? weight : ConstantInt::get(i64, 1), "", false, weight != nullptr);
  b.CreateStore(count, address);
  // A weight: <= 0. A unit without weights (the hand macros): == 0, as they do, which the decrement's flags
  // answer; the runtime never leaves the countdown below 1 (sampler/abi.h).
  Value* take = weight ? b.CreateICmpSLE(count, ConstantInt::get(i64, 0), "sampler.take")
                       : b.CreateICmpEQ(count, ConstantInt::get(i64, 0), "sampler.take");
  Instruction* then = SplitBlockAndInsertIfThen(take, at ? at : p.before, false,
                                                MDBuilder(context_).createUnlikelyBranchWeights());
  IRBuilder<> slow(then);
  slow.SetCurrentDebugLocation(loc);
  if (inline_counters_ && counts_in_line(p.kind)) {
    count_inline(slow, p, address, count);
    return;
  }
  if (p.local) slow.CreateStore(count, slow.CreateThreadLocalAddress(countdown_));
  Value* scheme_entry = p.scheme;
  Value* site = p.site;
  switch (p.kind) {
    case Point::Entry:
      slow.CreateCall(runtime(abi::sampler_take_counter, {i32}), {scheme_entry, site, ConstantInt::get(i32, 0)});
      break;
    case Point::Branch:
      slow.CreateCall(runtime(abi::sampler_take_counter, {i32}),
                      {scheme_entry, site, slow.CreateZExt(p.value, i32)});
      break;
    case Point::Return: {
      bool is_signed = p.is_signed && p.value->getType()->isIntegerTy();
      slow.CreateCall(runtime(is_signed ? abi::sampler_take_sign : abi::sampler_take_sign_unsigned, {i64}),
                      {scheme_entry, site, widen(slow, p.value, is_signed)});
      break;
    }
    case Point::Pair: {
      bool is_signed = p.is_signed && !p.value->getType()->isPointerTy();
      slow.CreateCall(runtime(is_signed ? abi::sampler_take_compare : abi::sampler_take_compare_unsigned, {i64, i64}),
                      {scheme_entry, site, widen(slow, p.value, is_signed), widen(slow, p.other, is_signed)});
      break;
    }
    case Point::Assigned:
    case Point::Atom:
    case Point::Unref:
      emit_value_slow_path(slow, p, scheme_entry, site);
      break;
  }
  if (p.local) reload_local(slow, p.local);
}

// The counter schemes' columns (sections/scheme_table.h), to count a sample in line.
uint64_t Lowering::columns_of(Point::Kind kind) {
  SchemeId id = kind == Point::Entry    ? SchemeId::kFunctionEntries  // and coverage: one column too
                : kind == Point::Branch ? SchemeId::kBranches
                                        : SchemeId::kReturns;  // and scalar-pairs: three columns too
  return static_cast<uint64_t>(scheme_row(id).counters);
}

// The schemes whose samples sampler-cc counts in line (count_inline()).
bool Lowering::counts_in_line(Point::Kind kind) {
  return kind == Point::Entry || kind == Point::Branch || kind == Point::Return || kind == Point::Pair;
}

// The slow path of a counter scheme (ABI version 2), where the countdown (at `address`: the region's local or the
// thread's variable) just reached 0: a call of the unit's counting function for p's classification, which draws,
// counts and returns the next countdown (unit_take()).
void Lowering::count_inline(IRBuilder<>& b, Point& p, Value* address, Value* reached) {
  Type* i64 = Type::getInt64Ty(context_);
  Value* a = ConstantInt::get(i64, 0);
  Value* other = ConstantInt::get(i64, 0);
  Classify how = Classify::Column;
  if (p.kind == Point::Branch) {
    a = b.CreateZExt(p.value, i64);
  } else if (p.kind == Point::Return || p.kind == Point::Pair) {
    bool is_signed = p.is_signed && (p.kind == Point::Return ? p.value->getType()->isIntegerTy()
                                                             : !p.value->getType()->isPointerTy());
    how = is_signed ? Classify::Compare : Classify::CompareUnsigned;
    a = widen(b, p.value, is_signed);
    if (p.kind == Point::Pair) other = widen(b, p.other, is_signed);
  }
  Value* first = b.CreateMul(b.CreateZExt(p.site, i64), ConstantInt::get(i64, columns_of(p.kind)));
  Function* take = unit_take(how);
  CallInst* call = b.CreateCall(take, {p.scheme, first, a, other, reached});
  call->setCallingConv(take->getCallingConv());
  b.CreateStore(call, address);
}

// The slow path of float-kinds, bounds, atoms and g-object-unref (docs/instrumenting.md section 4).
void Lowering::emit_value_slow_path(IRBuilder<>& slow, Point& p, Value* scheme_entry, Value* site) {
  Type* i32 = Type::getInt32Ty(context_);
  Type* i64 = Type::getInt64Ty(context_);
  PointerType* ptr = PointerType::getUnqual(context_);
  Value* v = p.value;
  if (p.kind == Point::Atom) {
    slow.CreateCall(runtime(abi::sampler_take_atom, {ptr}), {scheme_entry, site, v});
  } else if (p.kind == Point::Unref) {
    Value* column = g_object_unref_column(slow, m_, v);
    slow.CreateCall(runtime(abi::sampler_take_counter, {i32}), {scheme_entry, site, column});
  } else if (v->getType()->isFloatingPointTy()) {
    slow.CreateCall(runtime(float_kind_function(v->getType()), {v->getType()}), {scheme_entry, site, v});
  } else {
    // bounds (the AST widened integers already).
    slow.CreateCall(runtime(abi::sampler_take_bound, {i64}), {scheme_entry, site, widen(slow, v, p.is_signed)});
  }
}

}  // namespace sampler::plugin::lowering
