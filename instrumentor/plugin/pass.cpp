// The LLVM half of the plugin: a module pass, run at the start of the optimisation pipeline (at every -O level),
// that emits what docs/instrumenting.md section 4 asks of a compiler pass: per scheme the counters and the scheme
// table, the unit, its site text in .debug_site_info (module-level inline assembler), a constructor and a
// destructor at priority 101, and at each site the fast path on the thread's countdown.
//
// Sites: function-entries (every function with debug information), branches (the marker calls the AST action
// put around each condition), returns (calls whose debug location matches a call the AST action recorded).
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/PassPlugin.h>
#include <llvm/Support/MD5.h>
#include <llvm/Support/Path.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>
#include <llvm/Transforms/Utils/SSAUpdater.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <map>
#include <unordered_map>
#include <set>
#include <string>
#include <vector>

#include "scheme_ir.h"
#include "state.h"

namespace sampler::plugin {
namespace {

using namespace llvm;

struct Site {
  std::string file;
  unsigned line = 0;
  std::string function;
  unsigned node = 0;
  std::vector<std::string> fields;  // the scheme's own
  unsigned char bound_type = 0;     // bounds: SAMPLER_BOUND_*
};

struct Scheme {
  std::string name;
  unsigned columns = 1;
  std::vector<Site> sites;
  GlobalVariable* values = nullptr;
  unsigned index = 0;  // in the unit's scheme table
};

// One place to instrument: the fast path goes before `before`; `value` is what the slow path classifies.
struct Point {
  enum Kind { Entry, Branch, Return, Pair, Assigned, Atom, Unref } kind;
  Scheme* scheme;
  unsigned site;
  Instruction* before;
  Value* value = nullptr;
  bool is_signed = false;
  Value* other = nullptr;  // scalar-pairs: what the value is compared with
  DILocation* location = nullptr;  // coverage: the first source location of the block
  DebugLoc call_loc;       // returns: the call's
};

// The schemes in the order of the unit's table, and their counters per site (SPEC section 2).
constexpr std::pair<const char*, unsigned> kSchemes[] = {
    {"function-entries", 1}, {"branches", 2},       {"returns", 3},  {"scalar-pairs", 3}, {"float-kinds", 9},
    {"bounds", 2},           {"g-object-unref", 4}, {"coverage", 1}, {"atoms", 2}};

// The assembler string of one line of site text (the .ascii directive's escapes).
std::string ascii(const std::string& line) {
  std::string out = "\t.ascii \"";
  for (unsigned char c : line) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      char octal[8];
      snprintf(octal, sizeof octal, "\\%03o", c);
      out += octal;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"\n";
}

std::string field(const std::string& text) {
  std::string out = one_line(text);
  return out.empty() ? "?" : out;
}

class Instrumenter {
 public:
  explicit Instrumenter(Module& module) : m_(module), context_(module.getContext()) {}

  bool run() {
    UnitState& state = unit_state();
    std::vector<std::string> names = state.ast_ran ? state.schemes
                                                   : std::vector<std::string>{"function-entries", "returns"};
    for (auto [name, columns] : kSchemes) {
      for (const std::string& wanted : names)
        if (wanted == name) {
          schemes_.push_back(std::make_unique<Scheme>());
          schemes_.back()->name = name;
          schemes_.back()->columns = columns;
        }
    }
    for (Function& f : m_) collect(f, state);
    bool changed = remove_markers_without_sites();
    std::vector<Scheme*> used;
    for (auto& s : schemes_)
      if (!s->sites.empty()) used.push_back(s.get());
    if (used.empty()) return changed;
    emit_unit(used, state);
    if (state.countdown != "site") amortize();
    for (size_t i = 0; i < points_.size();) {
      // The pairs of one assignment are consecutive and share their marker: one check for all of them.
      size_t end = i + 1;
      while (points_[i].kind == Point::Pair && end < points_.size() && points_[end].kind == Point::Pair &&
             points_[end].before == points_[i].before)
        ++end;
      if (end - i > 1)
        instrument_group(i, end);
      else
        instrument(points_[i]);
      i = end;
    }
    for (Instruction* marker : markers_) marker->eraseFromParent();
    if (getenv("SAMPLER_PASS_VERIFY") && verifyModule(m_, &errs())) report_fatal_error("sampler: broken module");
    return true;
  }

  // ---- The amortized countdown (Liblit et al., PLDI 2003, "Amortized Coin Tossing") ----
  //
  // Each function's CFG is cut into acyclic regions at "threshold" points: the function's entry, the target of
  // every retreating edge (loop headers), the code after every call that may run sites (any call but intrinsics
  // and the markers), and any block reached from two regions. A region with at most k sites on any path, k >= 2,
  // is cloned: at its entry, `countdown > k` (likely) runs the clone without sites, which counts the sites it
  // passes in a local and stores the countdown back where it leaves the region (and before each call); otherwise
  // the original runs, site by site, as with the per-site check. No site can sample on the fast side (the
  // countdown stays >= 1 there), and the countdown drops by exactly the number of sites passed, so every site
  // samples exactly when the per-site check would have sampled it: counts at sparsity 1 are the same, and so is
  // the sampling at any sparsity.
  static constexpr unsigned kMinRegionSites = 2;
  // A function with more sites keeps the per-site check: LLVM's code generator (register coalescing, machine
  // CSE) grows faster than linearly with a function's size, and the clones double it (a generated function of
  // 3,000 sites took 7.8 s to compile amortized, 3.9 s per site, 0.6 s plain). gzip's largest has 2,124.
  static constexpr size_t kMaxAmortizedSites = 4096;

  static bool is_marker(const CallBase& call) {
    const Function* callee = call.getCalledFunction();
    if (!callee) return false;
    StringRef name = callee->getName();
    return name == kBranchMarker || name == kPairsMarker || name == kValueMarker || name == kAtomMarker;
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

  void amortize() {
    std::map<Function*, std::vector<size_t>> by_function;
    for (size_t i = 0; i < points_.size(); ++i) by_function[points_[i].before->getFunction()].push_back(i);
    for (auto& [f, points] : by_function)
      if (points.size() <= kMaxAmortizedSites && can_amortize(*f)) amortize(*f, points);
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
      for (Value** operand : {&p.value, &p.other})
        if (*operand && isa<Instruction>(*operand)) points.operands[*operand].emplace_back(operand, p.before);
    }
    // Cut after every call that may run sites, and after the entry block's allocas (they stay in the entry).
    std::set<BasicBlock*> heads;
    BasicBlock& entry = f.getEntryBlock();
    Instruction* first = &*entry.getFirstInsertionPt();
    while (isa<AllocaInst>(first)) first = first->getNextNode();
    heads.insert(entry.splitBasicBlock(first, "sampler.entry"));
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
    for (BasicBlock* head : head_order) {
      std::vector<BasicBlock*>& blocks = regions[head];
      unsigned k = 0;
      for (BasicBlock* block : blocks) k = std::max(k, most[block]);
      if (k >= kMinRegionSites && head != &entry) clone_region(f, blocks, k, points);
    }
  }

  // blocks[0] is the region's head. Its phis (and landing pad) stay in a dispatch block that checks the countdown.
  void clone_region(Function& f, std::vector<BasicBlock*> blocks, unsigned k, FunctionPoints& points) {
    std::set<BasicBlock*> inside(blocks.begin(), blocks.end());
    for (BasicBlock* block : blocks)
      for (Instruction& inst : *block)
        if (inst.getType()->isTokenTy()) return;  // a token cannot flow through a phi
    BasicBlock* dispatch = blocks[0];
    BasicBlock* body = dispatch->splitBasicBlock(dispatch->getFirstInsertionPt(), "sampler.region");
    inside.erase(dispatch);
    inside.insert(body);
    blocks[0] = body;

    ValueToValueMapTy map;
    std::vector<BasicBlock*> clones;
    for (BasicBlock* block : blocks) {
      BasicBlock* clone = CloneBasicBlock(block, map, ".fast", &f);
      map[block] = clone;
      clones.push_back(clone);
    }
    remapInstructionsInBlocks(clones, map);
    std::set<BasicBlock*> cloned(clones.begin(), clones.end());

    Type* i64 = Type::getInt64Ty(context_);
    if (!local_countdown_ || local_countdown_->getFunction() != &f) {
      IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
      local_countdown_ = b.CreateAlloca(i64, nullptr, "sampler.local_countdown");
    }
    // The dispatch: countdown > k (likely) runs the clone.
    Instruction* old_branch = dispatch->getTerminator();
    IRBuilder<> b(old_branch);
    b.SetCurrentDebugLocation(body->getFirstNonPHIOrDbg()->getDebugLoc());
    Value* count = b.CreateLoad(i64, b.CreateThreadLocalAddress(countdown_), "sampler.countdown");
    Value* fast = b.CreateICmpSGT(count, ConstantInt::get(i64, k), "sampler.region_fast");
    b.CreateStore(count, local_countdown_);
    b.CreateCondBr(fast, clones[0], body, MDBuilder(context_).createLikelyBranchWeights());
    old_branch->eraseFromParent();

    for (size_t i = 0; i < blocks.size(); ++i) {
      BasicBlock* block = blocks[i];
      BasicBlock* clone = clones[i];
      // The clone's edges out of the region: the phis there get the clone's values.
      bool leaves = succ_empty(clone);
      for (BasicBlock* next : successors(clone)) {
        if (cloned.count(next)) continue;
        leaves = true;
        for (PHINode& phi : next->phis()) {
          Value* v = phi.getIncomingValueForBlock(block);
          if (auto mapped = map.find(v); mapped != map.end()) v = mapped->second;
          phi.addIncoming(v, clone);
        }
      }
      // The countdown goes back to memory before a call and where the clone leaves the region.
      Instruction* terminator = clone->getTerminator();
      Instruction* store_before = nullptr;
      if (cuts_region(*terminator)) {
        store_before = terminator;
      } else if (Instruction* previous = terminator->getPrevNode(); previous && cuts_region(*previous)) {
        store_before = previous;
      } else if (leaves) {
        store_before = terminator;
      }
      if (store_before) {
        IRBuilder<> s(store_before);
        s.SetCurrentDebugLocation(store_before->getDebugLoc());
        s.CreateStore(s.CreateLoad(i64, local_countdown_), s.CreateThreadLocalAddress(countdown_));
      }
    }

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
        std::vector<Use*> outside;
        for (Use& use : inst.uses()) {
          auto* user = cast<Instruction>(use.getUser());
          BasicBlock* where = user->getParent();
          if (auto* phi = dyn_cast<PHINode>(user)) where = phi->getIncomingBlock(use);
          if (!inside.count(where) && !cloned.count(where)) outside.push_back(&use);
        }
        if (outside.empty() && operands.empty()) continue;
        auto* copy = cast<Instruction>(map[&inst]);
        SSAUpdater updater;
        updater.Initialize(inst.getType(), inst.getName());
        updater.AddAvailableValue(block, &inst);
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
    }

    // The clone's sites: the local countdown drops by one each; its markers give way to their conditions.
    for (BasicBlock* block : blocks)
      for (Instruction& inst : *block)
        if (auto found = points.at.find(&inst); found != points.at.end()) {
          IRBuilder<> d(cast<Instruction>(map[&inst]));
          Value* passed = d.CreateSub(d.CreateLoad(i64, local_countdown_), ConstantInt::get(i64, found->second.size()));
          d.CreateStore(passed, local_countdown_);
        }
    for (BasicBlock* clone : clones)
      for (Instruction& inst : make_early_inc_range(*clone))
        if (auto* call = dyn_cast<CallBase>(&inst); call && is_marker(*call)) {
          if (!call->getType()->isVoidTy()) call->replaceAllUsesWith(call->getArgOperand(1));
          call->eraseFromParent();
        }
  }

 private:
  Scheme* scheme(const char* name) {
    for (auto& s : schemes_)
      if (s->name == name) return s.get();
    return nullptr;
  }

  unsigned add_site(Scheme* s, Site site) {
    s->sites.push_back(std::move(site));
    return static_cast<unsigned>(s->sites.size() - 1);
  }

  void collect(Function& f, UnitState& state) {
    if (f.isDeclaration()) return;
    DISubprogram* sp = f.getSubprogram();
    std::string function_name = sp ? sp->getName().str() : f.getName().str();
    unsigned node = 0;
    // Compiler-made functions (global initialisers, thunks) have no source of their own.
    bool artificial = !sp || sp->isArtificial() || sp->getLine() == 0 ||
                      state.system_files.count(sp->getFilename().str()) != 0;
    if (Scheme* s = scheme("function-entries"); s && !artificial) {
      Site site{sp->getFilename().str(), sp->getLine(), function_name, node++, {}};
      BasicBlock& entry = f.getEntryBlock();
      Instruction* before = &*entry.getFirstInsertionPt();
      while (isa<AllocaInst>(before)) before = before->getNextNode();
      points_.push_back({Point::Entry, s, add_site(s, std::move(site)), before});
    }
    if (Scheme* s = scheme("coverage"); s && !artificial) coverage(f, s, function_name, node);
    Scheme* branches = scheme("branches");
    Scheme* returns = scheme("returns");
    std::map<unsigned, unsigned> branch_sites;  // marker argument -> site, for code clang emitted twice
    std::map<const CallSite*, unsigned> call_sites;
    std::map<unsigned, unsigned> pair_sites;  // the marker's first site -> the scheme's site of that pair
    std::map<unsigned, unsigned> value_sites;  // the value or atom marker's site -> the scheme's site
    for (BasicBlock& block : f) {
      for (Instruction& inst : block) {
        auto* call = dyn_cast<CallBase>(&inst);
        if (!call) continue;
        Function* callee = call->getCalledFunction();
        if (callee && callee->getName() == kBranchMarker) {
          markers_.push_back(call);
          auto* number = dyn_cast<ConstantInt>(call->getArgOperand(0));
          if (!branches || !number || number->getZExtValue() >= state.branches.size() || artificial) continue;
          unsigned index = static_cast<unsigned>(number->getZExtValue());
          auto known = branch_sites.find(index);
          if (known == branch_sites.end()) {
            // File and line as the debug information gives them (every scheme names files the same way).
            const BranchSite& b = state.branches[index];
            const DILocation* loc = call->getDebugLoc().get();
            Site site{loc ? loc->getFilename().str() : b.file, loc ? loc->getLine() : b.line, function_name, node++,
                      {field(b.text)}};
            known = branch_sites.emplace(index, add_site(branches, std::move(site))).first;
          }
          points_.push_back({Point::Branch, branches, known->second, call, call->getArgOperand(1)});
          continue;
        }
        if (callee && callee->getName() == kPairsMarker) {
          markers_.push_back(call);
          collect_pairs(cast<CallInst>(call), state, function_name, node, pair_sites, artificial);
          continue;
        }
        if (callee && (callee->getName() == kValueMarker || callee->getName() == kAtomMarker)) {
          markers_.push_back(call);
          collect_value(cast<CallInst>(call), state, function_name, node, value_sites, artificial);
          continue;
        }
        if (callee && callee->getName() == "g_object_unref" && call->arg_size() == 1 && !artificial)
          collect_unref(call, state, function_name, node);
        if (!returns || artificial || call->isInlineAsm() || isa<IntrinsicInst>(call)) continue;
        Type* type = call->getType();
        if (!(type->isPointerTy() || (type->isIntegerTy() && type->getIntegerBitWidth() <= 64))) continue;
        const DILocation* loc = call->getDebugLoc().get();
        if (!loc || loc->getInlinedAt()) continue;
        auto found = state.calls.find({sys::path::filename(loc->getFilename()).str(), loc->getLine(),
                                       loc->getColumn()});
        if (found == state.calls.end()) continue;  // not a call the source wrote (operator new, ...)
        const CallSite* match = nullptr;
        if (found->second.size() == 1) {
          match = &found->second.front();
        } else if (callee) {  // several calls at one location (a macro): the callee decides
          for (const CallSite& c : found->second)
            if (c.callee_name == callee->getName()) match = match ? nullptr : &c;
        }
        if (!match) continue;
        Instruction* after = nullptr;
        if (auto* invoke = dyn_cast<InvokeInst>(call)) {
          BasicBlock* normal = invoke->getNormalDest();
          if (!normal->getSinglePredecessor()) continue;
          after = &*normal->getFirstInsertionPt();
        } else {
          after = call->getNextNode();
        }
        auto known = call_sites.find(match);
        if (known == call_sites.end()) {
          Site site{loc->getFilename().str(), loc->getLine(), function_name, node++, {field(match->text)}};
          known = call_sites.emplace(match, add_site(returns, std::move(site))).first;
        }
        Point p{Point::Return, returns, known->second, after, call};
        p.is_signed = match->is_signed;
        p.call_loc = call->getDebugLoc();
        points_.push_back(p);
      }
    }
  }

  // `__sampler_pairs_marker(FIRST, value, other 1, ..., other k)`: k sites, one fast path each, before the marker.
  void collect_pairs(CallInst* call, const UnitState& state, const std::string& function_name, unsigned& node,
                     std::map<unsigned, unsigned>& pair_sites, bool artificial) {
    Scheme* pairs = scheme("scalar-pairs");
    auto* number = dyn_cast<ConstantInt>(call->getArgOperand(0));
    if (!pairs || !number || artificial || call->arg_size() < 3) return;
    uint64_t first = number->getZExtValue();
    const DILocation* loc = call->getDebugLoc().get();
    for (unsigned j = 0; j + 2 < call->arg_size(); ++j) {
      if (first + j >= state.pairs.size()) return;
      const PairSite& pair = state.pairs[first + j];
      auto known = pair_sites.find(first + j);
      if (known == pair_sites.end()) {
        Site site{loc ? loc->getFilename().str() : "", loc ? loc->getLine() : 0, function_name, node++,
                  {field(pair.lvalue), pair.lvalue_scope, pair.lvalue_form, field(pair.other), pair.other_kind}};
        known = pair_sites.emplace(first + j, add_site(pairs, std::move(site))).first;
      }
      Point p{Point::Pair, pairs, known->second, call, call->getArgOperand(1)};
      p.other = call->getArgOperand(j + 2);
      p.is_signed = pair.is_signed;
      points_.push_back(p);
    }
  }

  // coverage: a site per basic block of the source (scheme_ir.h says which blocks), its fast path first.
  void coverage(Function& f, Scheme* s, const std::string& function_name, unsigned& node) {
    for (auto [block, where] : source_blocks(f)) {
      Site site{where->getFilename().str(), where->getLine(), function_name, node++, {}};
      Instruction* before = &*block->getFirstInsertionPt();
      while (isa<AllocaInst>(before)) before = before->getNextNode();
      Point p{Point::Entry, s, add_site(s, std::move(site)), before};
      p.location = DILocation::get(context_, where->getLine(), where->getColumn(), where->getScope(),
                                   where->getInlinedAt());
      points_.push_back(p);
    }
  }

  // `__sampler_value_marker(SITE, value)` (float-kinds, bounds) or `__sampler_atom_marker(SITE, address)`.
  void collect_value(CallInst* call, const UnitState& state, const std::string& function_name, unsigned& node,
                     std::map<unsigned, unsigned>& value_sites, bool artificial) {
    auto* number = dyn_cast<ConstantInt>(call->getArgOperand(0));
    if (!number || artificial || call->arg_size() != 2 || number->getZExtValue() >= state.values.size()) return;
    unsigned index = static_cast<unsigned>(number->getZExtValue());
    const ValueSite& value = state.values[index];
    Scheme* s = scheme(value.scheme.c_str());
    if (!s) return;
    auto known = value_sites.find(index);
    if (known == value_sites.end()) {
      const DILocation* loc = call->getDebugLoc().get();
      Site site{loc ? loc->getFilename().str() : "", loc ? loc->getLine() : 0, function_name, node++, {}};
      for (const std::string& f : value.fields) site.fields.push_back(field(f));
      site.bound_type = value.bound_type;
      known = value_sites.emplace(index, add_site(s, std::move(site))).first;
    }
    Point p{value.scheme == "atoms" ? Point::Atom : Point::Assigned, s, known->second, call, call->getArgOperand(1)};
    p.is_signed = value.is_signed;
    points_.push_back(p);
  }

  // g-object-unref: a call of g_object_unref the AST found in the source (matched by location, as returns).
  void collect_unref(CallBase* call, const UnitState& state, const std::string& function_name, unsigned& node) {
    Scheme* s = scheme("g-object-unref");
    const DILocation* loc = call->getDebugLoc().get();
    if (!s || !loc || loc->getInlinedAt()) return;
    auto found = state.unrefs.find({sys::path::filename(loc->getFilename()).str(), loc->getLine(), loc->getColumn()});
    if (found == state.unrefs.end()) return;
    Site site{loc->getFilename().str(), loc->getLine(), function_name, node++, {field(found->second)}};
    points_.push_back({Point::Unref, s, add_site(s, std::move(site)), call, call->getArgOperand(0)});
  }

  // Markers in functions that get no sites still have to go: the condition takes the call's place.
  bool remove_markers_without_sites() {
    bool changed = false;
    std::vector<Instruction*> keep;
    std::set<const Instruction*> with_points;
    for (const Point& p : points_)
      if (p.kind == Point::Branch || p.kind == Point::Atom) with_points.insert(p.before);
    for (Instruction* marker : markers_) {
      bool has_point = with_points.count(marker) != 0;
      auto* call = cast<CallBase>(marker);
      bool pairs = call->getType()->isVoidTy();
      if (has_point || pairs) {  // a void marker (pairs, values): erased after instrumentation in every case
        keep.push_back(marker);
        continue;
      }
      call->replaceAllUsesWith(call->getArgOperand(1));
      call->eraseFromParent();
      changed = true;
    }
    markers_ = keep;
    return changed;
  }

  void emit_unit(const std::vector<Scheme*>& used, const UnitState& state) {
    Type* i8 = Type::getInt8Ty(context_);
    Type* i32 = Type::getInt32Ty(context_);
    Type* i64 = Type::getInt64Ty(context_);
    PointerType* ptr = PointerType::getUnqual(context_);
    scheme_type_ = StructType::get(context_, {ptr, i32, i32, i32, i32, ptr, ptr, ptr, ptr});
    StructType* unit_type = StructType::get(context_, {i32, i32, ptr, ptr, ptr, i64});

    // The site text first: the signature is derived from it and from the compiled file's identity.
    std::vector<std::string> lines;
    for (Scheme* s : used) {
      lines.push_back("<sites unit=\"@SIGNATURE@\" scheme=\"" + s->name + "\">\n");
      for (const Site& site : s->sites) {
        std::string line = field(site.file) + "\t" + std::to_string(site.line) + "\t" + field(site.function) +
                           "\t" + std::to_string(site.node);
        for (const std::string& f : site.fields) line += "\t" + f;
        lines.push_back(line + "\n");
      }
      lines.push_back("</sites>\n");
    }
    MD5 hash;
    std::string directory, file = m_.getSourceFileName();
    for (DICompileUnit* unit : m_.debug_compile_units()) {
      directory = unit->getDirectory().str();
      file = unit->getFilename().str();
      break;
    }
    hash.update(directory);
    hash.update(StringRef("\0", 1));
    hash.update(file);
    hash.update(StringRef("\0", 1));
    for (const std::string& line : lines) hash.update(line);
    MD5::MD5Result digest;
    hash.final(digest);
    std::string signature = digest.digest().str().str();

    std::string assembly = ".pushsection .debug_site_info,\"\",@progbits\n";
    for (std::string line : lines) {
      if (auto at = line.find("@SIGNATURE@"); at != std::string::npos) line.replace(at, 11, signature);
      assembly += ascii(line);
    }
    assembly += ".popsection";
    m_.appendModuleInlineAsm(assembly);

    std::vector<Constant*> entries;
    Constant* null = ConstantPointerNull::get(ptr);
    bool first = state.timestamps == "first" || state.timestamps == "both";
    bool last = state.timestamps == "last" || state.timestamps == "both";
    for (size_t i = 0; i < used.size(); ++i) {
      Scheme* s = used[i];
      s->index = static_cast<unsigned>(i);
      uint64_t count = s->sites.size();
      auto array = [&](uint64_t n, const std::string& name) {
        ArrayType* type = ArrayType::get(i64, n);
        return new GlobalVariable(m_, type, false, GlobalValue::InternalLinkage, ConstantAggregateZero::get(type),
                                  name);
      };
      s->values = array(count * s->columns, "__sampler_values_" + s->name);
      Constant* name = ConstantDataArray::getString(context_, s->name);
      auto* name_global = new GlobalVariable(m_, name->getType(), true, GlobalValue::PrivateLinkage, name,
                                             "__sampler_scheme_name");
      name_global->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
      // bounds: the type of each site, constant (SAMPLER_SCHEME_BOUNDS; the runtime sets the initial extremes).
      bool bounds = s->name == "bounds";
      Constant* bound_types = null;
      if (bounds) {
        std::vector<uint8_t> types;
        for (const Site& site : s->sites) types.push_back(site.bound_type);
        Constant* data = ConstantDataArray::get(context_, types);
        auto* global = new GlobalVariable(m_, data->getType(), true, GlobalValue::PrivateLinkage, data,
                                          "__sampler_bound_types");
        bound_types = global;
      }
      entries.push_back(ConstantStruct::get(
          scheme_type_, {name_global, ConstantInt::get(i32, count), ConstantInt::get(i32, s->columns),
                         ConstantInt::get(i32, bounds ? 1 : 0), ConstantInt::get(i32, 0), s->values, bound_types,
                         first ? array(count, "__sampler_first_" + s->name) : null,
                         last ? array(count, "__sampler_last_" + s->name) : null}));
    }
    (void)i8;
    ArrayType* table_type = ArrayType::get(scheme_type_, entries.size());
    schemes_table_ = new GlobalVariable(m_, table_type, false, GlobalValue::InternalLinkage,
                                        ConstantArray::get(table_type, entries), "__sampler_schemes");
    Constant* text = ConstantDataArray::getString(context_, signature);
    auto* signature_global =
        new GlobalVariable(m_, text->getType(), true, GlobalValue::PrivateLinkage, text, "__sampler_signature");
    auto* unit = new GlobalVariable(
        m_, unit_type, false, GlobalValue::InternalLinkage,
        ConstantStruct::get(unit_type, {ConstantInt::get(i32, 1), ConstantInt::get(i32, entries.size()),
                                        signature_global, schemes_table_, null, ConstantInt::get(i64, 0)}),
        "__sampler_unit");

    // Priority 101, as SAMPLER_DEFINE_UNIT: registered before the unit's other constructors run its sites.
    auto unit_call = [&](const char* runtime, const char* name) {
      FunctionCallee target = m_.getOrInsertFunction(runtime, FunctionType::get(Type::getVoidTy(context_), {ptr},
                                                                                 false));
      Function* f = Function::Create(FunctionType::get(Type::getVoidTy(context_), false),
                                     GlobalValue::InternalLinkage, name, m_);
      f->addFnAttr(Attribute::NoUnwind);
      IRBuilder<> b(BasicBlock::Create(context_, "", f));
      b.CreateCall(target, {unit});
      b.CreateRetVoid();
      return f;
    };
    appendToGlobalCtors(m_, unit_call("sampler_register_unit", "__sampler_register_unit"), 101);
    appendToGlobalDtors(m_, unit_call("sampler_unregister_unit", "__sampler_unregister_unit"), 101);

    countdown_ = m_.getGlobalVariable("sampler_countdown");
    if (!countdown_)
      countdown_ = new GlobalVariable(m_, i64, false, GlobalValue::ExternalLinkage, nullptr, "sampler_countdown",
                                      nullptr, GlobalValue::InitialExecTLSModel);
  }

  FunctionCallee runtime(const char* name, std::vector<Type*> params) {
    params.insert(params.begin(), {PointerType::getUnqual(context_), Type::getInt32Ty(context_)});
    FunctionCallee callee = m_.getOrInsertFunction(name, FunctionType::get(Type::getVoidTy(context_), params, false));
    if (auto* f = dyn_cast<Function>(callee.getCallee())) f->addFnAttr(Attribute::NoUnwind);
    return callee;
  }

  // k sites in a row with nothing between them (the pairs of one assignment): if the countdown is above k, none
  // of them samples and it drops by k at once (weighted likely); otherwise each site in turn, as usual. The
  // original sampler's amortized check, on the smallest region; the same sites sample as with k checks.
  void instrument_group(size_t begin, size_t end) {
    Instruction* before = points_[begin].before;
    IRBuilder<> b(before);
    b.SetCurrentDebugLocation(before->getDebugLoc());
    Type* i64 = Type::getInt64Ty(context_);
    Value* address = b.CreateThreadLocalAddress(countdown_);
    Value* count = b.CreateLoad(i64, address, "sampler.countdown");
    Constant* k = ConstantInt::get(i64, end - begin);
    Value* skip = b.CreateICmpSGT(count, k, "sampler.skip");
    Instruction* skip_term = nullptr;
    Instruction* sites_term = nullptr;
    SplitBlockAndInsertIfThenElse(skip, before, &skip_term, &sites_term,
                                  MDBuilder(context_).createLikelyBranchWeights());
    IRBuilder<> fast(skip_term);
    fast.SetCurrentDebugLocation(before->getDebugLoc());
    fast.CreateStore(fast.CreateSub(count, k), fast.CreateThreadLocalAddress(countdown_));
    for (size_t i = begin; i < end; ++i) instrument(points_[i], sites_term);
  }

  // The fast path before p.before (or `at`): countdown - 1, stored; if <= 0 (weighted unlikely), the scheme's
  // slow path.
  void instrument(Point& p, Instruction* at = nullptr) {
    Function* f = p.before->getFunction();
    IRBuilder<> b(at ? at : p.before);
    DebugLoc loc = p.before->getDebugLoc();
    if (!loc && f->getSubprogram()) loc = DILocation::get(context_, f->getSubprogram()->getLine(), 0,
                                                          f->getSubprogram());
    if (p.kind == Point::Return && p.call_loc) loc = p.call_loc;
    if (p.location) loc = p.location;
    b.SetCurrentDebugLocation(loc);
    Type* i32 = Type::getInt32Ty(context_);
    Type* i64 = Type::getInt64Ty(context_);
    Value* address = b.CreateThreadLocalAddress(countdown_);
    Value* count = b.CreateSub(b.CreateLoad(i64, address, "sampler.countdown"), ConstantInt::get(i64, 1));
    b.CreateStore(count, address);
    Value* take = b.CreateICmpSLE(count, ConstantInt::get(i64, 0), "sampler.take");
    Instruction* then = SplitBlockAndInsertIfThen(take, at ? at : p.before, false,
                                                  MDBuilder(context_).createUnlikelyBranchWeights());
    IRBuilder<> slow(then);
    slow.SetCurrentDebugLocation(loc);
    Constant* scheme_entry = ConstantExpr::getInBoundsGetElementPtr(
        schemes_table_->getValueType(), schemes_table_,
        ArrayRef<Constant*>{ConstantInt::get(i32, 0), ConstantInt::get(i32, p.scheme->index)});
    Value* site = ConstantInt::get(i32, p.site);
    switch (p.kind) {
      case Point::Entry:
        slow.CreateCall(runtime("sampler_take_counter", {i32}), {scheme_entry, site, ConstantInt::get(i32, 0)});
        break;
      case Point::Branch:
        slow.CreateCall(runtime("sampler_take_counter", {i32}),
                        {scheme_entry, site, slow.CreateZExt(p.value, i32)});
        break;
      case Point::Return: {
        Value* v = p.value;
        bool is_signed = p.is_signed && v->getType()->isIntegerTy();
        if (v->getType()->isPointerTy())
          v = slow.CreatePtrToInt(v, i64);
        else
          v = is_signed ? slow.CreateSExt(v, i64) : slow.CreateZExt(v, i64);
        slow.CreateCall(runtime(is_signed ? "sampler_take_sign" : "sampler_take_sign_unsigned", {i64}),
                        {scheme_entry, site, v});
        break;
      }
      case Point::Pair: {
        auto wide = [&](Value* v) {
          if (v->getType()->isPointerTy()) return slow.CreatePtrToInt(v, i64);
          return p.is_signed ? slow.CreateSExtOrTrunc(v, i64) : slow.CreateZExtOrTrunc(v, i64);
        };
        bool is_signed = p.is_signed && !p.value->getType()->isPointerTy();
        slow.CreateCall(runtime(is_signed ? "sampler_take_compare" : "sampler_take_compare_unsigned", {i64, i64}),
                        {scheme_entry, site, wide(p.value), wide(p.other)});
        break;
      }
      case Point::Assigned:
      case Point::Atom:
      case Point::Unref:
        emit_value_slow_path(slow, p, scheme_entry, site);
        break;
    }
    if (p.kind == Point::Branch || p.kind == Point::Atom) {
      auto* marker = cast<CallBase>(p.before);
      marker->replaceAllUsesWith(marker->getArgOperand(1));
    }
  }

  // The slow path of float-kinds, bounds, atoms and g-object-unref (docs/instrumenting.md section 4).
  void emit_value_slow_path(IRBuilder<>& slow, Point& p, Constant* scheme_entry, Value* site) {
    Type* i32 = Type::getInt32Ty(context_);
    Type* i64 = Type::getInt64Ty(context_);
    PointerType* ptr = PointerType::getUnqual(context_);
    Value* v = p.value;
    if (p.kind == Point::Atom) {
      slow.CreateCall(runtime("sampler_take_atom", {ptr}), {scheme_entry, site, v});
    } else if (p.kind == Point::Unref) {
      Value* column = g_object_unref_column(slow, m_, v);
      slow.CreateCall(runtime("sampler_take_counter", {i32}), {scheme_entry, site, column});
    } else if (v->getType()->isFloatingPointTy()) {
      slow.CreateCall(runtime(float_kind_function(v->getType()), {v->getType()}), {scheme_entry, site, v});
    } else {
      // bounds: the value widened to 64 bits as its type asks (the AST widened integers already).
      v = v->getType()->isPointerTy() ? slow.CreatePtrToInt(v, i64)
          : p.is_signed               ? slow.CreateSExtOrTrunc(v, i64)
                                      : slow.CreateZExtOrTrunc(v, i64);
      slow.CreateCall(runtime("sampler_take_bound", {i64}), {scheme_entry, site, v});
    }
  }

  Module& m_;
  LLVMContext& context_;
  std::vector<std::unique_ptr<Scheme>> schemes_;
  std::vector<Point> points_;
  std::vector<Instruction*> markers_;
  StructType* scheme_type_ = nullptr;
  GlobalVariable* schemes_table_ = nullptr;
  GlobalVariable* countdown_ = nullptr;
  AllocaInst* local_countdown_ = nullptr;  // the function's, for the clones of its regions
};

struct SamplerPass : PassInfoMixin<SamplerPass> {
  PreservedAnalyses run(Module& module, ModuleAnalysisManager&) {
    bool changed = Instrumenter(module).run();
    unit_state() = UnitState();  // the next unit compiled in this process starts afresh
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }  // also at -O0 and in optnone functions
};

}  // namespace
}  // namespace sampler::plugin

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "sampler", "0.1", [](llvm::PassBuilder& builder) {
            builder.registerPipelineStartEPCallback(
                [](llvm::ModulePassManager& manager, llvm::OptimizationLevel) {
                  manager.addPass(sampler::plugin::SamplerPass());
                });
          }};
}
