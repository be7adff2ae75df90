// The unit's counting functions (ABI version 2, counting in line): internal functions of the unit that the
// per-site lowering's slow paths (lower_sites.cpp) call, made once per unit on first use, and the draw of the
// next countdown they share.
#include <llvm/IR/MDBuilder.h>
#include <llvm/TargetParser/Triple.h>

#include "abi_ir.h"
#include "lower.h"
#include "sampler/abi.h"

namespace sampler::plugin::lowering {

// The unit's counting function for one classification: (scheme, first, a, b) -> the next countdown. The draw: the
// next countdown from the thread's bank (sampler_bank), or, when the bank is empty (or the thread must go through
// the runtime), from sampler_take_opportunity(), which refills it and says whether this opportunity is sampled.
// Then a sampled opportunity adds one to values[first + column], `values` read from the scheme's entry at run time
// (the runtime may place the counters). A relaxed load and store, not a locked add: docs/decisions.md, "The
// sample in line". One function per unit, not the same code at every site: the slow sides of the regions and of
// the assignments' pairs hold every site, and their size is the code generator's time. On x86-64 it keeps the
// registers of preserve_most (as sampler_take_opportunity() does), so that its callers keep their values in
// registers. Named as the runtime's slow-path functions (a local symbol), where scripts/check-site-dwarf.sh looks.
Function* Lowering::unit_take(Classify how) {
  Function*& f = unit_takes_[static_cast<int>(how)];
  if (f) return f;
  Type* i64 = Type::getInt64Ty(context_);
  PointerType* ptr = PointerType::getUnqual(context_);
  f = unit_function(how == Classify::Column    ? "sampler_take_in_unit"
                    : how == Classify::Compare ? "sampler_take_compare_in_unit"
                                               : "sampler_take_compare_unsigned_in_unit",
                    {ptr, i64, i64, i64, i64});
  Argument* scheme = f->getArg(0);
  Argument* first = f->getArg(1);
  Argument* a = f->getArg(2);
  Argument* other = f->getArg(3);
  Argument* reached = f->getArg(4);  // the countdown the site left: 0, or below it after a weight
  BasicBlock* entry = BasicBlock::Create(context_, "", f);
  BasicBlock* record = BasicBlock::Create(context_, "record", f);
  BasicBlock* skip = BasicBlock::Create(context_, "not_sampled", f);
  IRBuilder<> b(entry);
  auto [next, from_runtime] = emit_draw(b, record, skip, reached);
  IRBuilder<>(skip).CreateRet(from_runtime);
  IRBuilder<> r(record);
  Value* values = r.CreateLoad(
      ptr, r.CreateConstInBoundsGEP1_64(r.getInt8Ty(), scheme, offsetof(sampler_scheme, values)), "values");
  count_at(r, r.CreateInBoundsGEP(i64, values, first), how, a, other);
  r.CreateRet(next);
  return f;
}

// The unit's group function for one signedness: (slots, sites, value, variables, constants, countdown) -> the next
// countdown, for the `count` pairs of one assignment (`sites`: count, and in a unit with weights the first pair's
// index in them times 2^32) whose check found the countdown not above `count`: the site the countdown reaches
// samples (drawing the next countdown), counted in slots[3 * i + column]; if the next one falls inside the group
// too (or the bank is empty), unit_walk_group() takes the group instead. Under a plan (the unit's `planned`) each
// site weighs its own weight, and unit_weigh_group() walks the group instead. One call for the group, as before
// counting in line: k checks and k calls per assignment made the code generator's time and the code's size. The
// one sample in straight code and calling nothing, the rest in functions of their own reached by a jump:
// preserve_most makes a function save every register it writes (docs/decisions.md, "The sample in line", "The
// sample: the group function, and where the operands are picked").
Function* Lowering::unit_take_group(Classify how) {
  Function*& f = unit_takes_[3 + static_cast<int>(how)];
  if (f) return f;
  Type* i64 = Type::getInt64Ty(context_);
  f = group_function(how, "sampler_take_compares_in_unit", "sampler_take_compares_unsigned_in_unit");
  Function* walk_rest = unit_walk_group(how);
  BasicBlock* entry = BasicBlock::Create(context_, "", f);
  if (weights_) {  // the unit's `planned`, which the runtime sets with the weights of a plan
    BasicBlock* uniform = BasicBlock::Create(context_, "uniform", f);
    BasicBlock* planned = BasicBlock::Create(context_, "planned", f);
    IRBuilder<> e(entry);
    GlobalVariable* unit = m_.getGlobalVariable(kUnitName, /*AllowInternal=*/true);
    Value* flag = e.CreateLoad(e.getInt32Ty(), e.CreateStructGEP(unit->getValueType(), unit,
                                                                 static_cast<unsigned>(UnitField::planned)));
    e.CreateCondBr(e.CreateICmpNE(flag, e.getInt32(0)), planned, uniform,
                   MDBuilder(context_).createUnlikelyBranchWeights());
    IRBuilder<> p(planned);
    Function* weigh = unit_weigh_group(how);
    std::vector<Value*> args;
    for (Argument& a : f->args()) args.push_back(&a);
    CallInst* weighed = p.CreateCall(weigh, args);
    weighed->setCallingConv(weigh->getCallingConv());
    // A jump: the arguments are those of the call, which the restored registers hold.
    weighed->setTailCallKind(CallInst::TCK_MustTail);
    p.CreateRet(weighed);
    entry = uniform;
  }
  // The next countdown read from the bank before it is taken: when it falls inside the group too, or the bank
  // is empty (then it reads `banked` itself, 0), the walk does the whole group from the first sample on, with
  // the call's own arguments (a jump). Otherwise the sample is taken here. So this function calls nothing and
  // changes no register the caller keeps but the result: preserve_most saves only what the count needs.
  IRBuilder<> e(entry);
  Argument* countdown = f->getArg(5);
  Value* count = e.CreateAnd(f->getArg(1), e.getInt64(0xffffffff));
  Value* bank = e.CreateThreadLocalAddress(thread_bank());
  Value* banked = e.CreateLoad(i64, bank, "banked");
  Value* next = e.CreateLoad(i64, e.CreateInBoundsGEP(i64, bank, banked), "next");  // countdowns[banked - 1]
  // The next sample's countdown counted from the group's first pair, countdown + next: beyond the group (above
  // count) the countdown after it is the excess.
  Value* ahead = e.CreateAdd(next, countdown, "ahead", /*HasNUW=*/true, /*HasNSW=*/true);
  Value* left = e.CreateSub(ahead, count, "left", /*HasNUW=*/false, /*HasNSW=*/true);
  BasicBlock* take = BasicBlock::Create(context_, "take", f);
  BasicBlock* walk = BasicBlock::Create(context_, "walk", f);
  e.CreateCondBr(e.CreateICmpSGT(left, e.getInt64(0)), take, walk, MDBuilder(context_).createLikelyBranchWeights());
  IRBuilder<> t(take);
  t.CreateStore(t.CreateSub(banked, t.getInt64(1)), bank);
  record_pair(t, f, count, t.CreateSub(countdown, t.getInt64(1)), how);
  t.CreateRet(left);  // >= 1
  IRBuilder<> w(walk);
  std::vector<Value*> args;
  for (Argument& a : f->args()) args.push_back(&a);
  CallInst* rest = w.CreateCall(walk_rest, args);
  rest->setCallingConv(walk_rest->getCallingConv());
  rest->setTailCallKind(CallInst::TCK_MustTail);  // the arguments are the call's own, as in the restored registers
  w.CreateRet(rest);
  return f;
}

// The walk of unit_take_group(), as a loop: the same arguments and result; each site the countdown reaches
// samples, until the next countdown is beyond the group.
Function* Lowering::unit_walk_group(Classify how) {
  Function* f = group_function(how, "sampler_walk_compares_in_unit", "sampler_walk_compares_unsigned_in_unit");
  BasicBlock* entry = BasicBlock::Create(context_, "", f);
  BasicBlock* walk = BasicBlock::Create(context_, "walk", f);
  BasicBlock* done = BasicBlock::Create(context_, "done", f);
  auto [i, next, count] = emit_group_sample(f, entry, walk, how);
  BasicBlock* loop = i->getParent();
  IRBuilder<> w(walk);
  Value* remaining = w.CreateSub(w.CreateSub(count, w.getInt64(1)), i);
  i->addIncoming(w.CreateAdd(i, next), walk);
  w.CreateCondBr(w.CreateICmpSGT(next, remaining), done, loop, MDBuilder(context_).createLikelyBranchWeights());
  IRBuilder<> leave(done);
  leave.CreateRet(leave.CreateSub(next, remaining));  // >= 1
  return f;
}

// The walk of a group under a plan, as a loop (the arguments of unit_take_group()): each site subtracts its
// weight, and where the countdown reaches <= 0 the site samples (drawing the next countdown) as a site of its own
// would (instrument()); returns the countdown after the group. Exact for any weights, but k loads a call.
Function* Lowering::unit_weigh_group(Classify how) {
  Type* i64 = Type::getInt64Ty(context_);
  Function* f = group_function(how, "sampler_weigh_compares_in_unit", "sampler_weigh_compares_unsigned_in_unit");
  BasicBlock* entry = BasicBlock::Create(context_, "", f);
  BasicBlock* loop = BasicBlock::Create(context_, "site", f);
  BasicBlock* reached = BasicBlock::Create(context_, "reached", f);
  BasicBlock* record = BasicBlock::Create(context_, "record", f);
  BasicBlock* drawn = BasicBlock::Create(context_, "drawn", f);
  BasicBlock* step = BasicBlock::Create(context_, "step", f);
  BasicBlock* done = BasicBlock::Create(context_, "done", f);
  IRBuilder<> e(entry);
  Value* sites = f->getArg(1);
  Value* count = e.CreateAnd(sites, e.getInt64(0xffffffff));
  Value* weights = e.CreateInBoundsGEP(i64, weights_, e.CreateLShr(sites, 32));
  e.CreateBr(loop);
  IRBuilder<> l(loop);
  PHINode* i = l.CreatePHI(i64, 2, "i");
  PHINode* countdown = l.CreatePHI(i64, 2, "countdown");
  i->addIncoming(e.getInt64(0), entry);
  countdown->addIncoming(f->getArg(5), entry);
  // No signed overflow: as instrument()'s subtraction.
  Value* left = l.CreateNSWSub(countdown, l.CreateLoad(i64, l.CreateInBoundsGEP(i64, weights, i)));
  l.CreateCondBr(l.CreateICmpSLE(left, l.getInt64(0)), reached, step,
                 MDBuilder(context_).createUnlikelyBranchWeights());
  IRBuilder<> d(reached);
  PHINode* after = draw_and_record(d, record, drawn, left, f, count, i, how);
  IRBuilder<>(drawn).CreateBr(step);
  IRBuilder<> s(step);
  PHINode* carried = s.CreatePHI(i64, 2, "carried");
  carried->addIncoming(left, loop);
  carried->addIncoming(after, drawn);
  Value* following = s.CreateAdd(i, s.getInt64(1));
  i->addIncoming(following, step);
  countdown->addIncoming(carried, step);
  s.CreateCondBr(s.CreateICmpULT(following, count), loop, done);
  IRBuilder<>(done).CreateRet(carried);
  return f;
}

// One sample of the walk `f` (the arguments of unit_take_group()): from `entry`, the site i = countdown - 1 (a phi
// in a block of its own, for the loop's edge back) samples, counted if the draw says so; ends in a jump to
// `after`. Returns i, the next countdown (a phi in `after`) and the group's number of sites.
std::tuple<PHINode*, PHINode*, Value*> Lowering::emit_group_sample(Function* f, BasicBlock* entry, BasicBlock* after,
                                                                   Classify how) {
  Type* i64 = Type::getInt64Ty(context_);
  Argument* countdown = f->getArg(5);
  BasicBlock* record = BasicBlock::Create(context_, "record", f, after);
  IRBuilder<> e(entry);
  Value* count = e.CreateAnd(f->getArg(1), e.getInt64(0xffffffff));
  Value* first_sampled = e.CreateSub(countdown, e.getInt64(1));
  BasicBlock* site = BasicBlock::Create(context_, "site", f, record);
  e.CreateBr(site);
  IRBuilder<> l(site);
  PHINode* i = l.CreatePHI(i64, 2, "i");  // the site whose countdown reaches 0
  i->addIncoming(first_sampled, entry);
  PHINode* next = draw_and_record(l, record, after, e.getInt64(0), f, count, i, how);
  return {i, next, count};
}

// The draw at the end of `b`'s block (emit_draw()), pair i of the group function `f` recorded in `record` if it
// says so; both go on to `after`, where the returned phi is the next countdown.
PHINode* Lowering::draw_and_record(IRBuilder<>& b, BasicBlock* record, BasicBlock* after, Value* reached, Function* f,
                                   Value* count, Value* i, Classify how) {
  auto [drawn, from_runtime] = emit_draw(b, record, after, reached);
  IRBuilder<> r(record);
  record_pair(r, f, count, i, how);
  r.CreateBr(after);
  IRBuilder<> n(after);
  PHINode* next = n.CreatePHI(Type::getInt64Ty(context_), 2, "next");
  next->addIncoming(drawn, record);
  next->addIncoming(from_runtime, from_runtime->getParent());
  return next;
}

// The sample of pair i of a group function `f`'s `count` (the arguments of unit_take_group()), counted.
void Lowering::record_pair(IRBuilder<>& r, Function* f, Value* count, Value* i, Classify how) {
  Type* i64 = Type::getInt64Ty(context_);
  Argument* constants = f->getArg(4);
  // The constants are the last constants[0] sites' others; the variables the first ones'.
  Value* first_constant = r.CreateSub(count, r.CreateLoad(i64, constants));
  Value* other_at = r.CreateSelect(
      r.CreateICmpULT(i, first_constant), r.CreateGEP(i64, f->getArg(3), i),
      r.CreateGEP(i64, constants, r.CreateAdd(r.CreateSub(i, first_constant), r.getInt64(1))));
  count_at(r, r.CreateInBoundsGEP(i64, f->getArg(0), r.CreateMul(i, r.getInt64(3))), how, f->getArg(2),
           r.CreateLoad(i64, other_at));
}

// An internal function of the unit for unit_take() and unit_take_group(): no unwinding, not inlined (its code
// once, not at every site), and on x86-64 the registers of preserve_most, as sampler_take_opportunity() (so that
// its callers keep their values in registers across it). Named as the runtime's slow-path functions, with a
// local symbol: scripts/check-site-dwarf.sh finds the sites' calls by that name.
Function* Lowering::unit_function(const char* name, std::vector<Type*> params) {
  Function* f = Function::Create(FunctionType::get(Type::getInt64Ty(context_), params, false),
                                 GlobalValue::InternalLinkage, name, m_);
  f->addFnAttr(Attribute::NoUnwind);
  f->addFnAttr(Attribute::NoInline);
  if (Triple(m_.getTargetTriple()).getArch() == Triple::x86_64) f->setCallingConv(CallingConv::PreserveMost);
  return f;
}

// A function of a group of pairs, named for how it classifies: the arguments of unit_take_group().
Function* Lowering::group_function(Classify how, const char* compares, const char* unsigned_compares) {
  Type* i64 = Type::getInt64Ty(context_);
  PointerType* ptr = PointerType::getUnqual(context_);
  return unit_function(how == Classify::Compare ? compares : unsigned_compares, {ptr, i64, i64, ptr, ptr, i64});
}

// The draw, at the end of `b`'s block: the next countdown from the thread's bank (sampler_bank), or, when the
// bank is empty (or the thread must go through the runtime), from sampler_take_opportunity(), which refills it
// and says whether this opportunity is sampled. Ends the block with a jump to `sampled` or `not_sampled`. Returns
// the next countdown in `sampled` (a phi there) and in `not_sampled` (from the runtime).
// `reached`: the countdown where the site left it (<= 0), stored for the runtime (a new thread's first site).
std::pair<PHINode*, Instruction*> Lowering::emit_draw(IRBuilder<>& b, BasicBlock* sampled, BasicBlock* not_sampled,
                                                      Value* reached) {
  Type* i64 = Type::getInt64Ty(context_);
  Function* f = b.GetInsertBlock()->getParent();
  BasicBlock* pop = BasicBlock::Create(context_, "from_bank", f, sampled);
  BasicBlock* call = BasicBlock::Create(context_, "from_runtime", f, sampled);
  Value* bank = b.CreateThreadLocalAddress(thread_bank());
  Value* banked = b.CreateLoad(i64, bank, "banked");
  b.CreateCondBr(b.CreateICmpNE(banked, ConstantInt::get(i64, 0)), pop, call,
                 MDBuilder(context_).createLikelyBranchWeights());

  IRBuilder<> d(pop);
  Value* left = d.CreateSub(banked, ConstantInt::get(i64, 1));
  d.CreateStore(left, bank);
  // countdowns[left]: the array follows `banked`.
  Value* drawn = d.CreateLoad(i64, d.CreateInBoundsGEP(i64, bank, d.CreateAdd(left, ConstantInt::get(i64, 1))));
  d.CreateBr(sampled);

  IRBuilder<> c(call);
  c.CreateStore(reached, c.CreateThreadLocalAddress(countdown_));
  FunctionCallee decide = m_.getOrInsertFunction(abi::sampler_take_opportunity,
                                                 FunctionType::get(Type::getInt32Ty(context_), false));
  CallInst* taking = c.CreateCall(decide);
  if (auto* callee = dyn_cast<Function>(decide.getCallee())) {
    callee->addFnAttr(Attribute::NoUnwind);
    callee->setCallingConv(f->getCallingConv());  // preserve_most on x86-64 (sampler/abi.h)
    // Through the GOT, never a lazily bound PLT entry: glibc's lazy resolver does not keep r10.
    callee->addFnAttr(Attribute::NonLazyBind);
    taking->setCallingConv(callee->getCallingConv());
  }
  Instruction* from_runtime = c.CreateLoad(i64, c.CreateThreadLocalAddress(countdown_));
  c.CreateCondBr(c.CreateICmpNE(taking, c.getInt32(0)), sampled, not_sampled);

  IRBuilder<> s(sampled, sampled->begin());
  PHINode* next = s.CreatePHI(i64, 2, "next");
  next->addIncoming(drawn, pop);
  next->addIncoming(from_runtime, call);
  return {next, from_runtime};
}

// sampler_bank, the thread's countdowns drawn ahead (struct sampler_countdown_bank: `banked`, then the countdowns).
GlobalVariable* Lowering::thread_bank() {
  if (!bank_) bank_ = m_.getGlobalVariable(abi::sampler_bank);
  if (!bank_) {
    auto* type = ArrayType::get(Type::getInt64Ty(context_), 1 + SAMPLER_BANK_SIZE);
    bank_ = new GlobalVariable(m_, type, false, GlobalValue::ExternalLinkage, nullptr, abi::sampler_bank, nullptr,
                               GlobalValue::InitialExecTLSModel);
  }
  return bank_;
}

// Adds one to slots[column], the column of (a, other) as `how` classifies it: a relaxed load and store.
void Lowering::count_at(IRBuilder<>& r, Value* slots, Classify how, Value* a, Value* other) {
  Type* i64 = r.getInt64Ty();
  Value* column = a;
  if (how != Classify::Column) {  // sampler_classify_compare(): 0 <, 1 =, 2 >
    bool is_signed = how == Classify::Compare;
    Value* greater = r.CreateZExt(is_signed ? r.CreateICmpSGT(a, other) : r.CreateICmpUGT(a, other), i64);
    Value* less = r.CreateZExt(is_signed ? r.CreateICmpSLT(a, other) : r.CreateICmpULT(a, other), i64);
    column = r.CreateAdd(r.CreateSub(greater, less), ConstantInt::get(i64, 1));
  }
  Value* slot = r.CreateInBoundsGEP(i64, slots, column);
  LoadInst* old = r.CreateAlignedLoad(i64, slot, Align(8));
  old->setAtomic(AtomicOrdering::Monotonic);
  StoreInst* store = r.CreateAlignedStore(r.CreateAdd(old, ConstantInt::get(i64, 1)), slot, Align(8));
  store->setAtomic(AtomicOrdering::Monotonic);
}

}  // namespace sampler::plugin::lowering
