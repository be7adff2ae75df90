// The plugin's lowering pass (site_marker.h): at the end of the optimisation pipeline, it replaces each site
// marker by the fast path on the thread's countdown (docs/instrumenting.md section 4), per site or, by default,
// per acyclic region (the original sampler's amortized countdown), and by the scheme's slow path.
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/Analysis/CFG.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>
#include <llvm/Transforms/Utils/SSAUpdater.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "abi_ir.h"
#include "sampler/abi.h"
#include "scheme_ir.h"
#include "sections/scheme_table.h"
#include "site_marker.h"

namespace sampler::plugin {
namespace {

using namespace llvm;

// One site to lower: its fast path goes before its marker; `value` is what the slow path classifies.
struct Point {
  using Kind = SiteKind;
  static constexpr Kind Entry = Kind::Entry, Branch = Kind::Branch, Return = Kind::Return, Pair = Kind::Pair,
                        Assigned = Kind::Assigned, Atom = Kind::Atom, Unref = Kind::Unref;
  Kind kind;
  Value* scheme;  // its entry in the unit's scheme table (a choice of entries, in a marker the optimiser sank)
  Value* site;    // its number in the scheme (or a choice of numbers)
  Instruction* before;  // the marker
  Value* value = nullptr;
  bool is_signed = false;
  Value* other = nullptr;  // scalar-pairs: what the value is compared with
  AllocaInst* local = nullptr;  // on a region's slow side: the function's countdown, which its check uses
};

// What an amortized check's threshold bounds (sampler/abi.h, `threshold_bounds`), for the runtime to compute it
// from a plan's weights: multiplier * (the sum of times * weight over `sites`, plus the bounds of the thresholds
// `slots` name). `unknown`: a site whose weight the compiler cannot name (2^62 under a plan).
struct ThresholdBound {
  uint64_t multiplier = 1;
  std::vector<std::pair<uint64_t, uint64_t>> sites;  // (weight ordinal, times)
  std::vector<size_t> slots;
  bool unknown = false;
};

class Lowering {
 public:
  Lowering(Module& module, bool amortized, bool inline_counters)
      : m_(module), context_(module.getContext()), amortized_(amortized), inline_counters_(inline_counters) {}

  bool run() {
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

 private:
  // The optimiser inferred from the markers that functions with sites (and their callers) touch no memory the
  // program can reach; lowered, they write the thread's countdown, so the clean-up after the lowering (GVN) must
  // not forward a countdown stored before such a call to a load after it.
  void forget_inaccessible_only() {
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
  void read(CallInst* call, SiteKind kind, bool is_signed) {
    markers_.push_back(call);
    Point p{kind, call->getArgOperand(0), nullptr, call, call->getArgOperand(1), is_signed};
    unsigned step = kind == Point::Pair ? 2 : 1;
    for (unsigned i = 2; i + step <= call->arg_size(); i += step) {
      p.site = call->getArgOperand(i);
      if (step == 2) p.other = call->getArgOperand(i + 1);
      points_.push_back(p);
    }
  }

 public:
  // ---- The amortized countdown (Liblit et al., PLDI 2003, "Amortized Coin Tossing") ----
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
  static constexpr unsigned kMinRegionSites = 2;
  // A function with more sites keeps the per-site check: LLVM's code generator (register coalescing, machine
  // CSE) grows faster than linearly with a function's size, and the clones double it (the compile times that set
  // this bound: docs/performance.md, "Instrumentor"); real programs' largest functions stay under it.
  static constexpr size_t kMaxAmortizedSites = 4096;

  static bool is_marker(const CallBase& call) {
    const Function* callee = call.getCalledFunction();
    return callee && site_marker_kind(*callee);
  }

  // A call that may run sites (of this unit or another): the countdown must be in memory before it, and read
  // again after it.
  static bool cuts_region(const Instruction& inst) {
    auto* call = dyn_cast<CallBase>(&inst);
    return call && !isa<IntrinsicInst>(call) && !is_marker(*call);
  }

  // What cloning cannot handle (or C never has): such a function keeps the per-site check everywhere.
  static bool can_amortize(Function& f) {
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

  static constexpr unsigned kMaxConstantTripsBits = 34;  // (2^34 + 1) * w stays below 2^48, B with them too
  struct CountedCopy {
    Function* copy = nullptr;
    std::vector<Instruction*> bound;  // made in the copy's entry from its arguments, for the dispatch to take
    std::vector<std::pair<Value*, uint64_t>> loops;  // each outermost loop B takes from the arguments: trips, w
    uint64_t constant = 0;  // the rest of B: the sites outside loops, the loops with a constant maximum of trips
    // In the dispatch: the countdown it read, the block that tests it (filled in last, after f.sampled's thresholds,
    // by counted_test()), and the blocks that call the counted copy and f.sampled.
    Value* count = nullptr;
    BasicBlock* test = nullptr;
    BasicBlock* fast = nullptr;
    BasicBlock* sampled = nullptr;
  };

  // Each function with a loop gets its twin without sites, made before anything is lowered, and becomes the
  // dispatch between the twin and its code with sites; then the regions of each function that can be copied are
  // amortized.
  void copy_functions() {
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
      if (auto twin = twins_.find(f); twin != twins_.end()) call_twins(*twin->second);
    for (auto& [f, points] : by_function) {
      std::optional<CountedCopy> counted;
      if (twins_.count(f)) counted = counted_copy(*f, points);
      Function& sampled = twins_.count(f) ? dispatch(*f, points, counted) : *f;
      if (amortized_ && points.size() <= kMaxAmortizedSites && can_amortize(sampled)) {
        version_loops(sampled, points);
        amortize(sampled, points);
      }
      if (counted) counted_test(*f, *counted);
    }
  }

  // One function's points, indexed for its regions (each region looks at its own instructions only, so that a
  // function with 10^5 sites and many regions stays linear).
  struct FunctionPoints {
    std::unordered_map<const Instruction*, std::vector<size_t>> at;  // before -> points
    std::unordered_map<const Value*, std::vector<std::pair<Value**, Instruction*>>> operands;
  };

  void amortize(Function& f, const std::vector<size_t>& indices) {
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
    for (BasicBlock* guard : loop_guards_)  // version_loops(): each reads the thread's countdown
      if (guard->getParent() == &f) heads.insert(guard);

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
    dispatches_.clear();
    reloads_.clear();
    region_blocks_.clear();
    for (auto [head, k] : cloned) dispatches_.insert(head);
    cloned_regions_.clear();
    for (auto [head, k] : cloned) clone_region(f, regions[head], k, points);
    chain_dispatches();
    look_ahead(indices);
  }

  // Sampling off, the countdown is out of reach (the runtime's 2^62, lowered by at most the sites run since): a
  // thread whose countdown is at least 2^61 when it calls a function with a loop runs the function's twin
  // without sites, checks or countdown, as fast as the program built without sampler-cc. The twin is a function
  // of its own (its own registers and prologue, its loops vectorized again) and calls the twins of the unit's
  // other functions directly, so a thread with sampling off checks once where it enters the unit's code with
  // loops (a function without loops checks about as often either way: once, and after each call). With
  // sampling on, no draw comes near 2^61 below a sparsity of about 10^17, where the sample a skipped opportunity
  // could have been is not expected in years.
  static constexpr int64_t kUnsampledCountdown = int64_t{1} << 61;

  static bool has_loop(Function& f) {
    SmallVector<std::pair<const BasicBlock*, const BasicBlock*>, 8> back_edges;
    FindFunctionBackedges(f, back_edges);
    return !back_edges.empty();
  }

  // A function whose arguments a guaranteed tail call (musttail) can hand on. Not one with an argument passed in
  // memory (byval): clang-19's x86-64 code generator copies such an argument over the return address when a
  // musttail call forwards it, and the program crashes (a struct passed by value once the registers run out).
  static bool can_forward(Function& f) {
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
  static void make_local(Function& copy, Function& f, const char* suffix) {
    copy.setName(f.getName() + suffix);
    copy.setLinkage(GlobalValue::PrivateLinkage);
    copy.setVisibility(GlobalValue::DefaultVisibility);
    copy.setDLLStorageClass(GlobalValue::DefaultStorageClass);
    copy.setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
    copy.setComdat(f.getComdat());
  }

  // The twin: f cloned, with a debug subprogram of its own (backtraces and debuggers name it as f), its markers
  // gone.
  Function* make_twin(Function& f) {
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
  // another unit's f), nor when the linker or the loader may replace f (weak).
  void call_twins(Function& twin) {
    for (Instruction& inst : instructions(twin))
      if (auto* call = dyn_cast<CallBase>(&inst))
        if (auto found = twins_.find(call->getCalledFunction()); found != twins_.end()) {
          const Comdat* group = found->second->getComdat();
          if (!found->first->isInterposable() && (!group || group == twin.getComdat()))
            call->setCalledFunction(found->second);
        }
  }

  // f's code with sites moves to a function of its own, f.sampled, and f (its address, its symbol) becomes the
  // dispatch: a guaranteed tail call of the twin when the thread's countdown is out of reach, of f.sampled
  // otherwise. Neither shares a prologue with the other, or a register with the check. Returns f.sampled
  // (`indices`: f's points, whose operands may be f's arguments).
  Function& dispatch(Function& f, const std::vector<size_t>& indices, std::optional<CountedCopy>& counted) {
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
    Value* out_of_reach = b.CreateICmpSGE(count, ConstantInt::get(i64, kUnsampledCountdown), "sampler.off");
    b.CreateCondBr(out_of_reach, off, on);
    std::vector<std::pair<BasicBlock*, Function*>> calls{{off, twins_[&f]}, {on, sampled}};
    if (counted) {  // on: the counted copy when the countdown is above its B, else f.sampled (counted_test())
      counted->count = count;
      counted->test = on;
      counted->test->setName("sampler.reach");
      on = counted->sampled = BasicBlock::Create(context_, "sampler.sampled", &f);
      counted->fast = BasicBlock::Create(context_, "sampler.counted", &f);
      calls = {{off, twins_[&f]}, {counted->fast, counted->copy}, {on, sampled}};
    }
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
  AttributeList call_attributes(Function& f) {
    AttributeList attributes = f.getAttributes();
    std::vector<AttributeSet> params;
    for (unsigned i = 0; i < f.arg_size(); ++i) params.push_back(attributes.getParamAttrs(i));
    return AttributeList::get(context_, AttributeSet(), attributes.getRetAttrs(), params);
  }

  static Instruction* after_allocas(BasicBlock& entry) {
    Instruction* first = &*entry.getFirstInsertionPt();
    while (isa<AllocaInst>(first)) first = first->getNextNode();
    return first;
  }

  static bool has_token(const std::vector<BasicBlock*>& blocks) {  // a token cannot flow through a phi
    for (BasicBlock* block : blocks)
      for (Instruction& inst : *block)
        if (inst.getType()->isTokenTy()) return true;
    return false;
  }

  // A fast block that ends in a jump with no call before it hands its countdown to the region it jumps to in
  // the function's local, not through the thread's variable: a loop whose body is one region keeps its
  // countdown in a register on the fast side, and so does a chain of regions without calls.
  static bool passes_countdown(BasicBlock* block) {
    Instruction* terminator = block->getTerminator();
    Instruction* previous = terminator->getPrevNode();
    return isa<BranchInst, SwitchInst>(terminator) && !(previous && cuts_region(*previous));
  }

  // Each dispatch reads the local countdown. Where every edge into it comes from outside the cloned regions,
  // it loads the thread's countdown into the local itself (as cloned); otherwise the edges that do not pass the
  // countdown load it on their way.
  void chain_dispatches() {
    std::set<BasicBlock*> refreshed;
    for (auto [dispatch, reload] : reloads_) {
      std::vector<BasicBlock*> others;
      bool chained = false;
      for (BasicBlock* pred : predecessors(dispatch)) {
        if (region_blocks_.count(pred) && passes_countdown(pred))
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
        reload_local(b, local_countdown_);
      }
    }
  }

  // A cloned region: its dispatch, its check, its fast side.
  struct ClonedRegion {
    BasicBlock* dispatch;
    ICmpInst* check;  // countdown > k
    unsigned k;
    size_t slot;  // its threshold's entry in the unit's thresholds (k until look_ahead() raises it)
    std::vector<BasicBlock*> fast;  // fast[0] its entry
  };

  // A region whose fast side jumps straight into other regions checks for them too: its dispatch asks for its own
  // k plus the largest of theirs, and its fast blocks then enter their fast sides without their checks (the
  // countdown left is above their k). A loop whose body is two regions (gzip's longest_match: the body, and the
  // condition a `continue` jumps to) then checks once an iteration rather than twice. A region entered that way
  // does not look ahead itself: its own check has not covered what follows it. Only jumps within a loop's
  // iteration are worth it (a jump into a loop runs once, and would give its header a second entry).
  void look_ahead(const std::vector<size_t>& indices) {
    if (cloned_regions_.empty()) return;
    DominatorTree tree(*cloned_regions_[0].dispatch->getParent());
    LoopInfo loops(tree);
    std::map<BasicBlock*, size_t> by_dispatch;
    for (size_t r = 0; r < cloned_regions_.size(); ++r) by_dispatch[cloned_regions_[r].dispatch] = r;
    std::vector<bool> source(cloned_regions_.size()), target(cloned_regions_.size());
    std::map<size_t, std::vector<BasicBlock*>> entering;  // region -> the fast blocks that now jump into it
    for (size_t r = 0; r < cloned_regions_.size(); ++r) {
      if (target[r]) continue;
      unsigned most = 0;
      std::vector<std::pair<BasicBlock*, size_t>> edges;
      for (BasicBlock* block : cloned_regions_[r].fast) {
        if (!passes_countdown(block)) continue;
        for (BasicBlock* next : successors(block)) {
          auto found = by_dispatch.find(next);
          if (found == by_dispatch.end() || found->second == r || source[found->second] ||
              !can_enter(found->first) || loops.isLoopHeader(next) || loops.getLoopFor(block) != loops.getLoopFor(next))
            continue;
          if (std::find(edges.begin(), edges.end(), std::pair{block, found->second}) != edges.end()) continue;
          edges.emplace_back(block, found->second);
          most = std::max(most, cloned_regions_[found->second].k);
        }
      }
      if (edges.empty()) continue;
      source[r] = true;
      set_threshold(cloned_regions_[r].check, cloned_regions_[r].slot, cloned_regions_[r].k + uint64_t{most});
      for (auto [block, h] : edges) {
        target[h] = true;
        entering[h].push_back(block);
        // Under a plan, the sum of every region it may enter (at least the largest of them).
        if (!weights_) continue;
        std::vector<size_t>& slots = threshold_bounds_.at(cloned_regions_[r].slot).slots;
        if (std::find(slots.begin(), slots.end(), cloned_regions_[h].slot) == slots.end())
          slots.push_back(cloned_regions_[h].slot);
      }
    }
    if (entering.empty()) return;
    // The points' operands, to follow the values the new edges give a second definition.
    std::unordered_map<Value*, std::vector<std::pair<Value**, Instruction*>>> operands;
    for (size_t i : indices)
      for (Value** operand : {&points_[i].value, &points_[i].other, &points_[i].site, &points_[i].scheme})
        if (*operand && isa<PHINode>(*operand)) operands[*operand].emplace_back(operand, points_[i].before);
    for (auto& [h, blocks] : entering) enter_fast(cloned_regions_[h], blocks, operands);
  }

  // The jumps into a dispatch can bypass it unless one of its phis takes another's value (the value that phi had
  // on that edge is no longer known where the jump now goes).
  static bool can_enter(BasicBlock* dispatch) {
    for (PHINode& phi : dispatch->phis())
      for (Value* v : phi.incoming_values())
        if (auto* other = dyn_cast<PHINode>(v); other && other != &phi && other->getParent() == dispatch) return false;
    return true;
  }

  // The jumps from `blocks` to the region's dispatch go to its fast side instead, each through an edge block that
  // stands for the dispatch's phis on that edge. A phi whose value on such an edge is its own (a loop's value
  // unchanged) gets the value the phi has where the jump leaves: the dispatch no longer dominates that place when
  // another region jumps into the same fast side.
  void enter_fast(const ClonedRegion& region, const std::vector<BasicBlock*>& blocks,
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
  void clone_region(Function& f, std::vector<BasicBlock*> blocks, unsigned k, FunctionPoints& points) {
    std::set<BasicBlock*> inside(blocks.begin(), blocks.end());
    BasicBlock* dispatch = blocks[0];
    BasicBlock* body = dispatch->splitBasicBlock(dispatch->getFirstInsertionPt(), "sampler.region");
    inside.erase(dispatch);
    inside.insert(body);
    blocks[0] = body;

    ValueToValueMapTy map;
    std::vector<BasicBlock*> clones = copy_blocks(f, blocks, ".fast", map);
    std::set<BasicBlock*> cloned(clones.begin(), clones.end());
    region_blocks_.insert(clones.begin(), clones.end());

    Type* i64 = Type::getInt64Ty(context_);
    if (!local_countdown_ || local_countdown_->getFunction() != &f) {
      IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
      local_countdown_ = b.CreateAlloca(i64, nullptr, "sampler.local_countdown");
    }
    // The dispatch: countdown > k (likely) runs the clone; otherwise the original, site by site.
    Instruction* old_branch = dispatch->getTerminator();
    IRBuilder<> b(old_branch);
    b.SetCurrentDebugLocation(body->getFirstNonPHIOrDbg()->getDebugLoc());
    reloads_.emplace_back(dispatch, reload_local(b, local_countdown_));
    Value* count = b.CreateLoad(i64, local_countdown_, "sampler.countdown");
    size_t slot = 0;
    ThresholdBound bound;  // every site of the region: at least the weight of any path through it
    for (BasicBlock* block : blocks)
      for (Instruction& inst : *block)
        if (auto found = points.at.find(&inst); found != points.at.end())
          for (size_t i : found->second) bound_sites(bound, points_[i]);
    Value* fast = b.CreateICmpSGT(count, threshold(b, k, slot, std::move(bound)), "sampler.region_fast");
    b.CreateCondBr(fast, clones[0], body, MDBuilder(context_).createLikelyBranchWeights());
    cloned_regions_.push_back({dispatch, cast<ICmpInst>(fast), k, slot, clones});
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
      keep_countdown_local(f, clone, cloned);
      keep_countdown_local(f, block, inside);
    }
    region_blocks_.insert(blocks.begin(), blocks.end());
    for (BasicBlock* block : blocks)
      for (Instruction& inst : *block)
        if (auto found = points.at.find(&inst); found != points.at.end())
          for (size_t i : found->second) points_[i].local = local_countdown_;

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
    subtract_passed(passed, local_countdown_, map, /*by_block=*/false, /*immediates=*/false, &cloned);
    erase_markers(clones);
    forget_variables(blocks);
  }

  // The slow side's variable locations: one kill per variable where it starts, instead of every location it
  // had. The slow side runs only near a sample, and its locations are code generator work (LiveDebugValues,
  // assignment tracking: docs/decisions.md, "Compile time: the slow sides"); a debugger stopped there shows its
  // variables as optimised out. Line locations stay: crash stacks and the sites' DWARF need them. The twin and the
  // fast side keep every location.
  void forget_variables(const std::vector<BasicBlock*>& blocks) {
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
  void keep_countdown_local(Function& f, BasicBlock* block, const std::set<BasicBlock*>& region) {
    Type* i64 = Type::getInt64Ty(context_);
    bool leaves = succ_empty(block);
    for (BasicBlock* next : successors(block))
      if (!region.count(next)) leaves = true;
    Instruction* terminator = block->getTerminator();
    auto store_countdown = [&](Instruction* before) {
      IRBuilder<> s(before);
      s.SetCurrentDebugLocation(terminator->getDebugLoc());
      s.CreateStore(s.CreateLoad(i64, local_countdown_), s.CreateThreadLocalAddress(countdown_));
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
        if (!region.count(next) && !dispatches_.count(next) &&
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

  // ---- Loops checked once, at their entry (docs/decisions.md, "Fast sides: a loop's check at its entry") ----
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
  static constexpr uint64_t kMaxVersionedLoopSites = 256;  // in the loop's own blocks: the copy's size
  static constexpr uint64_t kMaxLoopSitesBound = uint64_t{1} << 14;  // w: keeps (B + 1) * w below 2^62
  static constexpr uint64_t kMaxTripsChecked = uint64_t{1} << 48;

  struct VersionedLoop {
    std::vector<BasicBlock*> blocks;  // in reverse post-order, blocks[0] the header
    BasicBlock* entering = nullptr;  // the one block outside the loop that enters it
    Value* trips = nullptr;  // B, computed before the loop's one way in
    uint64_t per_iteration = 0;  // w
    bool around_loops = false;  // not innermost: its copy is of the whole nest
  };

  void version_loops(Function& f, const std::vector<size_t>& indices) {
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
        versioned.insert(loop);
        loops.push_back(std::move(v));
      }
    }
    for (VersionedLoop& v : loops) version_loop(f, v, indices);
  }

  // Whether each exit of `loop` compares an induction of it (an affine add recurrence) with a value it does not
  // change: a loop whose count SCEV gives up on only for want of no-wrap flags (bc's `n1ptr >= n1->n_value`, a
  // pointer going down), whose iterations its other exits' count then bounds closely enough to pay the guard.
  static bool leaves_by_inductions(const Loop& loop, ScalarEvolution& evolution) {
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
  static bool versionable(Loop& loop, const std::unordered_map<const BasicBlock*, uint64_t>& sites,
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
  static std::optional<uint64_t> most_per_iteration(Loop& loop,
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

  // The guard, the copy without sites, the countdown written back where the copy leaves, and the values the loop
  // makes, now made in two places, merged after it (SSAUpdater), the points' operands too.
  void version_loop(Function& f, VersionedLoop& v, const std::vector<size_t>& indices) {
    BasicBlock* header = v.blocks[0];
    std::set<BasicBlock*> inside(v.blocks.begin(), v.blocks.end());
    for (BasicBlock* pred : predecessors(header))  // an earlier loop's copy may have left into this header
      if (pred != v.entering && !inside.count(pred)) return;
    Type* i64 = Type::getInt64Ty(context_);
    AllocaInst*& local = loop_countdowns_[&f];
    if (!local) {
      IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
      local = b.CreateAlloca(i64, nullptr, "sampler.loop_countdown");
    }
    BasicBlock* guard = BasicBlock::Create(context_, "sampler.loop_guard", &f, header);
    v.entering->getTerminator()->replaceSuccessorWith(header, guard);
    for (PHINode& phi : header->phis()) phi.replaceIncomingBlockWith(v.entering, guard);
    loop_guards_.insert(guard);

    ValueToValueMapTy map;
    std::vector<BasicBlock*> fast = copy_blocks(f, v.blocks, ".loop_fast", map);
    std::set<BasicBlock*> copies(fast.begin(), fast.end());

    IRBuilder<> b(guard);
    b.SetCurrentDebugLocation(v.entering->getTerminator()->getDebugLoc());
    Value* count = b.CreateLoad(i64, b.CreateThreadLocalAddress(countdown_), "sampler.countdown");
    b.CreateStore(count, local);
    Value* trips = b.CreateZExtOrTrunc(v.trips, i64);
    Value* most = b.CreateMul(b.CreateAdd(trips, b.getInt64(1)), b.getInt64(v.per_iteration), "sampler.loop_sites");
    Value* out_of_reach = fast_side_test(b, count, most, /*one_comparison=*/v.around_loops);
    if (v.trips->getType()->getIntegerBitWidth() > 32)  // else B + 1 < 2^33
      out_of_reach = b.CreateAnd(b.CreateICmpULT(trips, b.getInt64(kMaxTripsChecked)), out_of_reach);
    // No branch weights: which loop runs depends on the sparsity, which the compiler does not know. Weighted
    // likely, the code generator took the checked loop for cold and spilled in it, which cost gzip's longest_match
    // at 1/1000 (docs/performance.md, "Fast sides: loops around loops").
    b.CreateCondBr(out_of_reach, fast[0], header);

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
    // where it leaves the loop).
    std::vector<std::pair<size_t, Instruction*>> passed;
    for (size_t i : indices)
      if (inside.count(points_[i].before->getParent()))
        passed.emplace_back(i, cast<Instruction>(map[points_[i].before]));
    subtract_passed(passed, local, map, /*by_block=*/true, /*immediates=*/true);

    // Where the copy leaves the loop, the countdown goes back to the thread's variable.
    for (size_t i = 0; i < v.blocks.size(); ++i) {
      std::vector<BasicBlock*> exits;
      for (BasicBlock* next : successors(fast[i]))
        if (!copies.count(next) && std::find(exits.begin(), exits.end(), next) == exits.end()) exits.push_back(next);
      for (BasicBlock* next : exits) {
        BasicBlock* leave = BasicBlock::Create(context_, "sampler.loop_leave", &f, next);
        IRBuilder<> l(leave);
        l.SetCurrentDebugLocation(fast[i]->getTerminator()->getDebugLoc());
        l.CreateStore(l.CreateLoad(i64, local), l.CreateThreadLocalAddress(countdown_));
        l.CreateBr(next);
        fast[i]->getTerminator()->replaceSuccessorWith(next, leave);
        for (PHINode& phi : next->phis()) {
          Value* value = phi.getIncomingValueForBlock(v.blocks[i]);
          if (auto mapped = map.find(value); mapped != map.end()) value = mapped->second;
          phi.addIncoming(value, leave);
        }
      }
    }

    // Values made in the loop and used after it.
    for (BasicBlock* block : v.blocks)
      for (Instruction& inst : *block) {
        auto held = operands.find(&inst);
        merge_copies(inst, map, inside, copies,
                     held == operands.end() ? std::vector<std::pair<Value**, BasicBlock*>>{} : held->second);
      }
    erase_markers(fast);  // last: the copies of what only the markers used may be used after the loop
  }

  // Whether a copy without checks that passes at most `most` sites may run: the countdown above `most`. The copies
  // subtract immediates (a loop's countdown an induction variable that indvars and the vectorizer turn into its
  // value where the loop leaves; a loaded weight stops both: docs/decisions.md, "Per-site weights"), so under a plan
  // they must not run: a shift of 63 (the shift kind with w = 0, sampler/abi.h) makes the test fail, and the
  // checked code runs, each region with its weights; without a plan the shift is 0. `one_comparison`: the shifted
  // comparison alone (a nest's guard: as a second comparison its branch changed the register allocation of gzip's
  // longest_match, a reload more an iteration in its copy); an innermost loop's keeps two, the cheaper where short
  // counted loops run their guards often (bzip2's mainQSort3; docs/performance.md, "Fast sides at plain speed").
  // (With a shift from the iteration's weights, S <= w * 2^s, the copy would be exact under a plan if it
  // subtracted the weights: docs/decisions.md, "Per-site weights".)
  Value* fast_side_test(IRBuilder<>& b, Value* count, Value* most, bool one_comparison) {
    Value* above = b.CreateICmpSGT(count, most, "sampler.loop_fast");
    if (!weights_) return above;
    ThresholdBound bound;
    bound.multiplier = SAMPLER_THRESHOLD_SHIFT;
    bound.unknown = true;
    size_t slot = 0;
    Value* shifted = b.CreateLShr(count, threshold(b, 0, slot, std::move(bound)), "sampler.loop_scaled");
    Value* in_shift = b.CreateICmpSGT(shifted, most, "sampler.loop_fast");
    return one_comparison ? in_shift : b.CreateAnd(in_shift, above);
  }

  // ---- A leaf function's counted copy ----
  //
  // A function with loops that calls nothing (bzip2's mainGtU, gzip's longest_match) gets a third copy, f.counted:
  // its code without checks, its countdown in a local that drops by the sites each block passes, stored back at
  // each return. The dispatch runs it when the countdown is above B, the most sites one call can pass: the sites
  // outside loops plus, for each outermost loop, (its trips + 1) times its most per iteration (most_per_iteration()),
  // its trips SCEV's constant maximum, or else its exact count or symbolic maximum expanded from the arguments
  // alone. No site can then reach 0 and the countdown drops by exactly the sites passed: the same
  // sites sample as in f.sampled. The copy has its own registers: no slow side's prologue, no globals loaded for
  // the slow sides' pairs (docs/decisions.md, "Fast sides: a leaf function's counted copy").

  std::optional<CountedCopy> counted_copy(Function& f, const std::vector<size_t>& indices) {
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
    subtract_passed(passed, local, map, /*by_block=*/true, /*immediates=*/true);
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

  // B's parts (CountedCopy), trips not constant expanded in the copy's entry; false if a loop's trips or w are not
  // known from the arguments, B may pass 2^62, or a cycle is no loop.
  bool call_bound(CountedCopy& c, const std::vector<std::pair<size_t, Instruction*>>& passed) {
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

  // The dispatch's test (f's block c.test): the copy's B, and the branch to the copy when the countdown is above it,
  // else to f.sampled. Made after f.sampled's lowering, so that its thresholds come after the function's own.
  void counted_test(Function& f, CountedCopy& c) {
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
      // B a constant: an entry of the thresholds, B without a plan and 2^62 under one (unknown weights), which no
      // countdown passes: one comparison with a memory operand, where the shift costs three instructions.
      ThresholdBound bound;
      bound.unknown = true;
      size_t slot = 0;
      b.CreateCondBr(b.CreateICmpSGT(count, threshold(b, c.constant, slot, std::move(bound)), "sampler.counted"),
                     c.fast, c.sampled);
      return;
    }
    Value* test = fast_side_test(b, count, most, /*one_comparison=*/true);
    b.CreateCondBr(checked ? b.CreateAnd(checked, test, "sampler.counted") : test, c.fast, c.sampled);
  }

  // `inst`, made in `inside`, and its copy (`map`), made in `copies`, are now two definitions of one value: its uses
  // outside both, and the points' `operands` (each with the block it is used in), take the merge of the two
  // (SSAUpdater); variable locations outside `inside` that named `inst` are killed.
  static void merge_copies(Instruction& inst, ValueToValueMapTy& map, const std::set<BasicBlock*>& inside,
                           const std::set<BasicBlock*>& copies,
                           const std::vector<std::pair<Value**, BasicBlock*>>& operands) {
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
  static std::vector<BasicBlock*> copy_blocks(Function& f, const std::vector<BasicBlock*>& blocks,
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
  static void erase_markers(const std::vector<BasicBlock*>& blocks) {
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

  // The functions whose sites were lowered, and their twins.
  void functions(std::vector<Function*>& with_sites, std::vector<Function*>& twins,
                 std::vector<Function*>& counted) const {
    for (Function& f : m_) {  // in the module's order, as copy_functions()
      if (with_sites_.count(&f)) with_sites.push_back(&f);
      if (counted_.count(&f)) counted.push_back(&f);
      if (auto twin = twins_.find(&f); twin != twins_.end()) twins.push_back(twin->second);
    }
  }

 private:
  // ---- Weights and thresholds (ABI version 3, sampler/abi.h) ----
  //
  // Each site subtracts its weight, read from the unit's writable data (1 until a plan sets it at registration),
  // and each amortized check compares with its threshold, read there too: its number of sites, or under a plan
  // what the runtime computes from the plan's weights and what the threshold bounds (emit_thresholds()), and the
  // fast sides subtract the weight of the sites they pass, read there too (subtract_passed()): docs/decisions.md,
  // "Thresholds from the weights".

  // The collector's weights (pass.cpp) and each scheme's first entry in them. None in a unit of the hand macros.
  void find_weights() {
    weights_ = m_.getGlobalVariable(kWeightsName, /*AllowInternal=*/true);
    GlobalVariable* unit = m_.getGlobalVariable(kUnitName, /*AllowInternal=*/true);
    if (!weights_ || !unit || !unit->hasInitializer()) {
      weights_ = nullptr;
      return;
    }
    auto* fields = cast<ConstantStruct>(unit->getInitializer());
    schemes_table_ = dyn_cast<GlobalVariable>(fields->getOperand(static_cast<unsigned>(UnitField::schemes)));
    if (!schemes_table_ || !schemes_table_->hasInitializer()) {
      weights_ = nullptr;
      return;
    }
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
  Value* site_weight(IRBuilder<>& b, const Point& p) {
    if (!weights_) return nullptr;
    return b.CreateLoad(Type::getInt64Ty(context_), b.CreateInBoundsGEP(Type::getInt64Ty(context_), weights_,
                                                                        weight_ordinal(b, p)),
                        "sampler.weight");
  }

  // The index of p's site in the unit's weights (a unit with weights).
  Value* weight_ordinal(IRBuilder<>& b, const Point& p) {
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
  Value* threshold(IRBuilder<>& b, uint64_t k, size_t& slot, ThresholdBound bound) {
    if (!weights_) return ConstantInt::get(Type::getInt64Ty(context_), k);
    slot = new_threshold(k, std::move(bound));
    return load_threshold(b, slot);
  }

  size_t new_threshold(uint64_t k, ThresholdBound bound) {
    if (!thresholds_placeholder_)
      thresholds_placeholder_ = new GlobalVariable(m_, ArrayType::get(Type::getInt64Ty(context_), 0), false,
                                                   GlobalValue::InternalLinkage, nullptr,
                                                   "sampler.thresholds.placeholder");
    threshold_values_.push_back(k);
    threshold_bounds_.push_back(std::move(bound));
    return threshold_values_.size() - 1;
  }

  Value* load_threshold(IRBuilder<>& b, size_t slot) {
    Type* i64 = Type::getInt64Ty(context_);
    return b.CreateLoad(i64, b.CreateConstInBoundsGEP1_64(i64, thresholds_placeholder_, slot), "sampler.threshold");
  }

  // The weight ordinals p's site may have: one for a marker the optimiser left alone, each of a choice's otherwise
  // (enough for a bound: their sum is at least the one taken); none if they cannot be told at compile time.
  std::optional<std::vector<uint64_t>> ordinals(const Point& p) {
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
  static bool choices(Value* v, std::vector<Value*>& out, unsigned depth = 0) {
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
  void bound_sites(ThresholdBound& bound, const Point& p, uint64_t times = 1) {
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
  void subtract_passed(const std::vector<std::pair<size_t, Instruction*>>& passed, AllocaInst* local,
                       ValueToValueMapTy& map, bool by_block, bool immediates = false,
                       const std::set<BasicBlock*>* stretches = nullptr) {
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
  void set_threshold(ICmpInst* check, size_t slot, uint64_t k) {
    if (weights_)
      threshold_values_.at(slot) = k;
    else
      check->setOperand(1, ConstantInt::get(check->getOperand(1)->getType(), k));
  }

  // A threshold's bound as (ordinal, times) pairs, the thresholds it refers to included, multiplied by their
  // multipliers; none if unknown (then a plan sets the threshold to 2^62).
  std::optional<std::map<uint64_t, uint64_t>> flatten(size_t slot) {
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
  void emit_thresholds() {
    if (!thresholds_placeholder_) return;
    Type* i64 = Type::getInt64Ty(context_);
    std::vector<uint32_t> words;
    for (size_t slot = 0; slot < threshold_bounds_.size(); ++slot) {
      std::optional<std::map<uint64_t, uint64_t>> sites = flatten(slot);
      uint64_t multiplier = threshold_bounds_[slot].multiplier;
      if (sites)
        for (auto [ordinal, times] : *sites)
          if (times >= SAMPLER_THRESHOLD_RUN || ordinal > UINT32_MAX) sites.reset();
      if (!sites) {
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

  FunctionCallee runtime(const char* name, std::vector<Type*> params) {
    params.insert(params.begin(), {PointerType::getUnqual(context_), Type::getInt32Ty(context_)});
    FunctionCallee callee = m_.getOrInsertFunction(name, FunctionType::get(Type::getVoidTy(context_), params, false));
    if (auto* f = dyn_cast<Function>(callee.getCallee())) f->addFnAttr(Attribute::NoUnwind);
    return callee;
  }

  // A value as the runtime takes it: 64 bits, sign- or zero-extended as its type asks; pointers as addresses.
  Value* widen(IRBuilder<>& b, Value* v, bool is_signed) {
    Type* i64 = Type::getInt64Ty(context_);
    if (v->getType()->isPointerTy()) return b.CreatePtrToInt(v, i64);
    return is_signed ? b.CreateSExtOrTrunc(v, i64) : b.CreateZExtOrTrunc(v, i64);
  }

  // k sites in a row with nothing between them (the pairs of one assignment): if the countdown is above k, none
  // of them samples and it drops by k at once (weighted likely); otherwise each site in turn, as usual. The
  // original sampler's amortized check, on the smallest region; the same sites sample as with k checks.
  void instrument_group(size_t begin, size_t end) {
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
  Value* countdown_address(IRBuilder<>& b, AllocaInst* local) {
    return local ? static_cast<Value*>(local) : b.CreateThreadLocalAddress(countdown_);
  }

  // The thread's countdown into the function's local: where a region is entered from outside, and on a region's
  // slow side after a runtime call (the thread's variable got the local before it; the call may draw anew).
  StoreInst* reload_local(IRBuilder<>& b, AllocaInst* local) {
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
  bool take_compares(size_t begin, size_t end, Instruction* at, Value* countdown, AllocaInst* local) {
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
  void instrument(Point& p, Instruction* at = nullptr) {
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
  static uint64_t columns_of(Point::Kind kind) {
    SchemeId id = kind == Point::Entry    ? SchemeId::kFunctionEntries  // and coverage: one column too
                  : kind == Point::Branch ? SchemeId::kBranches
                                          : SchemeId::kReturns;  // and scalar-pairs: three columns too
    return static_cast<uint64_t>(scheme_row(id).counters);
  }

  // The schemes whose samples sampler-cc counts in line (count_inline()).
  static bool counts_in_line(Point::Kind kind) {
    return kind == Point::Entry || kind == Point::Branch || kind == Point::Return || kind == Point::Pair;
  }

  // How a unit's counting function classifies (a, b): the column is a (function-entries: 0, branches: the
  // condition), or sampler_classify_compare(a, b) signed or unsigned (returns: b = 0; scalar-pairs).
  enum class Classify { Column, Compare, CompareUnsigned };

  // The slow path of a counter scheme (ABI version 2), where the countdown (at `address`: the region's local or the
  // thread's variable) just reached 0: a call of the unit's counting function for p's classification, which draws,
  // counts and returns the next countdown (unit_take()).
  void count_inline(IRBuilder<>& b, Point& p, Value* address, Value* reached) {
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

  // The unit's counting function for one classification: (scheme, first, a, b) -> the next countdown. The draw: the
  // next countdown from the thread's bank (sampler_bank), or, when the bank is empty (or the thread must go through
  // the runtime), from sampler_take_opportunity(), which refills it and says whether this opportunity is sampled.
  // Then a sampled opportunity adds one to values[first + column], `values` read from the scheme's entry at run time
  // (the runtime may place the counters). A relaxed load and store, not a locked add: docs/decisions.md, "The
  // sample in line". One function per unit, not the same code at every site: the slow sides of the regions and of
  // the assignments' pairs hold every site, and their size is the code generator's time. On x86-64 it keeps the
  // registers of preserve_most (as sampler_take_opportunity() does), so that its callers keep their values in
  // registers. Named as the runtime's slow-path functions (a local symbol), where scripts/check-site-dwarf.sh looks.
  Function* unit_take(Classify how) {
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
  Function* unit_take_group(Classify how) {
    Function*& f = unit_takes_[3 + static_cast<int>(how)];
    if (f) return f;
    Type* i64 = Type::getInt64Ty(context_);
    PointerType* ptr = PointerType::getUnqual(context_);
    f = unit_function(how == Classify::Compare ? "sampler_take_compares_in_unit"
                                               : "sampler_take_compares_unsigned_in_unit",
                      {ptr, i64, i64, ptr, ptr, i64});
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
  Function* unit_walk_group(Classify how) {
    Type* i64 = Type::getInt64Ty(context_);
    PointerType* ptr = PointerType::getUnqual(context_);
    Function* f = unit_function(how == Classify::Compare ? "sampler_walk_compares_in_unit"
                                                         : "sampler_walk_compares_unsigned_in_unit",
                                {ptr, i64, i64, ptr, ptr, i64});
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
  Function* unit_weigh_group(Classify how) {
    Type* i64 = Type::getInt64Ty(context_);
    PointerType* ptr = PointerType::getUnqual(context_);
    Function* f = unit_function(how == Classify::Compare ? "sampler_weigh_compares_in_unit"
                                                         : "sampler_weigh_compares_unsigned_in_unit",
                                {ptr, i64, i64, ptr, ptr, i64});
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
    auto [next, from_runtime] = emit_draw(d, record, drawn, left);
    IRBuilder<> r(record);
    record_pair(r, f, count, i, how);
    r.CreateBr(drawn);
    IRBuilder<> n(drawn);
    PHINode* after = n.CreatePHI(i64, 2, "next");
    after->addIncoming(next, record);
    after->addIncoming(from_runtime, from_runtime->getParent());
    n.CreateBr(step);
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
  std::tuple<PHINode*, PHINode*, Value*> emit_group_sample(Function* f, BasicBlock* entry, BasicBlock* after,
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
    auto [drawn, from_runtime] = emit_draw(l, record, after, e.getInt64(0));
    IRBuilder<> r(record);
    record_pair(r, f, count, i, how);
    r.CreateBr(after);
    IRBuilder<> w(after);
    PHINode* next = w.CreatePHI(i64, 2, "next");
    next->addIncoming(drawn, record);
    next->addIncoming(from_runtime, from_runtime->getParent());
    return {i, next, count};
  }

  // The sample of pair i of a group function `f`'s `count` (the arguments of unit_take_group()), counted.
  void record_pair(IRBuilder<>& r, Function* f, Value* count, Value* i, Classify how) {
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
  Function* unit_function(const char* name, std::vector<Type*> params) {
    Function* f = Function::Create(FunctionType::get(Type::getInt64Ty(context_), params, false),
                                   GlobalValue::InternalLinkage, name, m_);
    f->addFnAttr(Attribute::NoUnwind);
    f->addFnAttr(Attribute::NoInline);
    if (Triple(m_.getTargetTriple()).getArch() == Triple::x86_64) f->setCallingConv(CallingConv::PreserveMost);
    return f;
  }

  // The draw, at the end of `b`'s block: the next countdown from the thread's bank (sampler_bank), or, when the
  // bank is empty (or the thread must go through the runtime), from sampler_take_opportunity(), which refills it
  // and says whether this opportunity is sampled. Ends the block with a jump to `sampled` or `not_sampled`. Returns
  // the next countdown in `sampled` (a phi there) and in `not_sampled` (from the runtime).
  // `reached`: the countdown where the site left it (<= 0), stored for the runtime (a new thread's first site).
  std::pair<PHINode*, Instruction*> emit_draw(IRBuilder<>& b, BasicBlock* sampled, BasicBlock* not_sampled,
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
  GlobalVariable* thread_bank() {
    if (!bank_) bank_ = m_.getGlobalVariable(abi::sampler_bank);
    if (!bank_) {
      auto* type = ArrayType::get(Type::getInt64Ty(context_), 1 + SAMPLER_BANK_SIZE);
      bank_ = new GlobalVariable(m_, type, false, GlobalValue::ExternalLinkage, nullptr, abi::sampler_bank, nullptr,
                                 GlobalValue::InitialExecTLSModel);
    }
    return bank_;
  }

  // Adds one to slots[column], the column of (a, other) as `how` classifies it: a relaxed load and store.
  void count_at(IRBuilder<>& r, Value* slots, Classify how, Value* a, Value* other) {
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

  // The slow path of float-kinds, bounds, atoms and g-object-unref (docs/instrumenting.md section 4).
  void emit_value_slow_path(IRBuilder<>& slow, Point& p, Value* scheme_entry, Value* site) {
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


  Module& m_;
  LLVMContext& context_;
  bool amortized_;
  bool inline_counters_;  // count samples in line (ABI version 2); not for a unit with timestamps
  std::vector<Point> points_;
  std::vector<CallInst*> markers_;
  std::set<BasicBlock*> dispatches_;  // the function's cloned regions' heads
  std::vector<std::pair<BasicBlock*, Instruction*>> reloads_;  // each such head's load of the thread's countdown
  std::set<BasicBlock*> region_blocks_;              // both sides of the function's cloned regions
  std::vector<ClonedRegion> cloned_regions_;  // the function's, in reverse post-order of their heads
  std::map<Function*, uint64_t> most_pairs_;         // the most pairs one assignment has, per function
  std::map<Function*, AllocaInst*> pair_operands_;   // an array of that many, for sampler_take_compares()
  std::map<std::vector<uint64_t>, GlobalVariable*> pair_constants_;  // the unit's constant ends of groups
  std::map<Function*, Function*> twins_;              // function -> its twin without sites
  std::set<Function*> with_sites_;                    // the functions whose markers were lowered
  std::set<Function*> counted_;                       // the leaf functions' counted copies (counted_copy())
  GlobalVariable* countdown_ = nullptr;
  GlobalVariable* bank_ = nullptr;  // sampler_bank, the thread's countdowns drawn ahead
  Function* unit_takes_[6] = {};    // the unit's counting functions: unit_take()'s by Classify, then the groups'
  AllocaInst* local_countdown_ = nullptr;  // the function's, for the clones of its regions
  bool unit_countdown_ = false;  // the unit declares sampler_countdown itself (the hand macros, a test)
  GlobalVariable* weights_ = nullptr;        // the unit's weights (find_weights()), or null
  GlobalVariable* schemes_table_ = nullptr;  // the unit's scheme table
  std::vector<uint64_t> scheme_bases_;       // each scheme's first entry in the weights
  GlobalVariable* bases_ = nullptr;          // the same, for sites whose scheme is a choice
  GlobalVariable* thresholds_placeholder_ = nullptr;  // the thresholds, until their number is known
  std::vector<uint64_t> threshold_values_;  // their values under uniform sampling
  std::vector<ThresholdBound> threshold_bounds_;  // what each bounds, from which a plan's runtime computes it
  std::map<Function*, AllocaInst*> loop_countdowns_;  // the function's, for its loops' copies (version_loop())
  std::set<BasicBlock*> loop_guards_;  // their guards, each a region's head (it reads the thread's countdown)
};

}  // namespace

LoweredSites lower_sites(Module& module, bool amortized, bool inline_counters) {
  Lowering lowering(module, amortized, inline_counters);
  LoweredSites result;
  result.changed = lowering.run();
  lowering.functions(result.with_sites, result.twins, result.counted);
  return result;
}

}  // namespace sampler::plugin
