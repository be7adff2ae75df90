// See scheme_ir.h; docs/decisions.md ("Instrumentor") says why each piece is as it is.
#include "scheme_ir.h"

#include <llvm/IR/CFG.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <set>

#include "abi_ir.h"

namespace sampler::plugin {

using namespace llvm;

namespace {

// Clang's cleanup destination slots: allocas only ever set to constants and read to choose a switch's case.
bool cleanup_slot(const Value* v) {
  const auto* slot = dyn_cast<AllocaInst>(v);
  if (!slot || !slot->getAllocatedType()->isIntegerTy(32)) return false;
  for (const User* user : slot->users()) {
    if (const auto* store = dyn_cast<StoreInst>(user);
        store && store->getPointerOperand() == slot && isa<ConstantInt>(store->getValueOperand()))
      continue;
    if (const auto* load = dyn_cast<LoadInst>(user); load && load->hasOneUse() && isa<SwitchInst>(*load->user_begin()))
      continue;
    return false;
  }
  return true;
}

// A block without code of its own: nothing but jumps (an unconditional branch, or a switch on clang's cleanup
// destination), the ends and starts of locals' lifetimes, and the cleanup destination's bookkeeping. Such blocks
// differ between -O0 and -O1+ (lifetime markers exist only at -O1+, and with them the blocks that leave a scope
// through its cleanups), while the blocks with code are the same: `break`, `continue` and the end of an `if`
// before a loop are a lone branch at -O0 and a cleanup at -O2, in C and C++ alike. None of them is a site. A
// branch that gives a value to a phi of its target is code: the arm `1` of `z > 0 ? z : 1`.
bool without_code(BasicBlock& block) {
  for (BasicBlock* next : successors(&block))
    for (PHINode& phi : next->phis())
      if (phi.getBasicBlockIndex(&block) >= 0) return false;
  for (Instruction& inst : block) {
    if (isa<DbgInfoIntrinsic>(inst) || isa<AllocaInst>(inst)) continue;
    if (auto* intrinsic = dyn_cast<IntrinsicInst>(&inst)) {
      if (!intrinsic->isLifetimeStartOrEnd()) return false;
    } else if (auto* store = dyn_cast<StoreInst>(&inst)) {
      if (!cleanup_slot(store->getPointerOperand())) return false;
    } else if (auto* load = dyn_cast<LoadInst>(&inst)) {
      if (!cleanup_slot(load->getPointerOperand())) return false;
    } else if (auto* branch = dyn_cast<BranchInst>(&inst)) {
      if (branch->isConditional()) return false;
    } else if (auto* choice = dyn_cast<SwitchInst>(&inst)) {
      auto* destination = dyn_cast<LoadInst>(choice->getCondition());
      if (!destination || !cleanup_slot(destination->getPointerOperand())) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::pair<BasicBlock*, const DILocation*>> source_blocks(Function& f) {
  // Only blocks that normal control flow reaches: exception cleanups and landing pads are the compiler's.
  std::set<const BasicBlock*> normal;
  std::vector<const BasicBlock*> work = {&f.getEntryBlock()};
  while (!work.empty()) {
    const BasicBlock* b = work.back();
    work.pop_back();
    if (b->isEHPad() || !normal.insert(b).second) continue;
    for (const BasicBlock* next : successors(b)) work.push_back(next);
  }
  std::vector<std::pair<BasicBlock*, const DILocation*>> blocks;
  for (BasicBlock& block : f) {
    if (!normal.count(&block)) continue;
    const DILocation* where = nullptr;
    for (Instruction& inst : block) {
      auto* intrinsic = dyn_cast<IntrinsicInst>(&inst);
      if (intrinsic && (isa<DbgInfoIntrinsic>(inst) || intrinsic->isLifetimeStartOrEnd())) continue;
      if (const DILocation* loc = inst.getDebugLoc().get(); loc && loc->getLine() != 0) {
        where = loc;
        break;
      }
    }
    if (where && !without_code(block)) blocks.emplace_back(&block, where);
  }
  return blocks;
}

Value* g_object_unref_column(IRBuilder<>& b, Module& m, Value* object) {
  LLVMContext& context = m.getContext();
  Type* i32 = Type::getInt32Ty(context);
  Type* i64 = Type::getInt64Ty(context);
  PointerType* ptr = PointerType::getUnqual(context);
  FunctionCallee is_a = m.getOrInsertFunction("g_type_check_instance_is_fundamentally_a",
                                              FunctionType::get(i32, {ptr, i64}, false));
  constexpr uint64_t kTypeObject = 20 << 2;  // G_TYPE_OBJECT: fundamental type 20, GLib's ABI
  Value* is_object = b.CreateICmpNE(b.CreateCall(is_a, {object, ConstantInt::get(i64, kTypeObject)}),
                                    ConstantInt::get(i32, 0));
  Instruction* here = &*b.GetInsertPoint();
  BasicBlock* test = here->getParent();
  Instruction* then = SplitBlockAndInsertIfThen(is_object, here, false);
  IRBuilder<> count(then);
  count.SetCurrentDebugLocation(b.getCurrentDebugLocation());
  // GObject: { GTypeInstance (one pointer), guint ref_count, ... }; the count may change under other threads.
  unsigned offset = m.getDataLayout().getPointerSize();
  LoadInst* references = count.CreateLoad(i32, count.CreateConstGEP1_32(Type::getInt8Ty(context), object, offset));
  references->setVolatile(true);
  Value* column = count.CreateSelect(
      count.CreateICmpEQ(references, ConstantInt::get(i32, 0)), ConstantInt::get(i32, 0),
      count.CreateSelect(count.CreateICmpEQ(references, ConstantInt::get(i32, 1)), ConstantInt::get(i32, 1),
                         ConstantInt::get(i32, 2)));
  b.SetInsertPoint(here);
  PHINode* chosen = b.CreatePHI(i32, 2);
  chosen->addIncoming(column, then->getParent());
  chosen->addIncoming(ConstantInt::get(i32, 3), test);
  return chosen;
}

const char* float_kind_function(const Type* type) {
  return type->isFloatTy()    ? abi::sampler_take_float_kind
         : type->isDoubleTy() ? abi::sampler_take_double_kind
                              : abi::sampler_take_long_double_kind;
}

}  // namespace sampler::plugin
