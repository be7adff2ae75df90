// The LLVM half of the plugin, first pass: run at the start of the optimisation pipeline (at every -O level), it
// emits what docs/instrumenting.md section 4 asks of a compiler pass but the fast paths: per scheme the counters
// and the scheme table, the unit, its site text in .debug_site_info (module-level inline assembler), a
// constructor and a destructor at priority 101, and a site marker at each site, which the lowering pass
// (lower.cpp) turns into the fast path on the thread's countdown after the optimiser (site_marker.h).
//
// Sites: function-entries (every function with debug information), branches (the marker calls the AST action
// put around each condition), returns (calls whose debug location matches a call the AST action recorded).
#include <llvm/ADT/StringExtras.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/PassPlugin.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/MD5.h>
#include <llvm/Support/Path.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/IndVarSimplify.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Vectorize/LoopVectorize.h>
#include <llvm/Transforms/Utils/Mem2Reg.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "abi_ir.h"
#include "arguments.h"
#include "sampler/abi.h"
#include "scheme_ir.h"
#include "site_marker.h"
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
  SchemeId id;
  std::vector<Site> sites;
  GlobalVariable* values = nullptr;
  unsigned index = 0;  // in the unit's scheme table

  std::string name() const { return std::string(scheme_row(id).name); }
  unsigned columns() const { return static_cast<unsigned>(scheme_row(id).counters); }
};

// One place to instrument: the fast path goes before `before`; `value` is what the slow path classifies.
struct Point {
  using Kind = SiteKind;
  static constexpr Kind Entry = Kind::Entry, Branch = Kind::Branch, Return = Kind::Return, Pair = Kind::Pair,
                        Assigned = Kind::Assigned, Atom = Kind::Atom, Unref = Kind::Unref;
  Kind kind;
  Scheme* scheme;
  unsigned site;
  Instruction* before;
  Value* value = nullptr;
  bool is_signed = false;
  Value* other = nullptr;  // scalar-pairs: what the value is compared with
  DILocation* location = nullptr;  // coverage: the first source location of the block
  DebugLoc call_loc;       // returns: the call's
};

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

class Collector {
 public:
  explicit Collector(Module& module) : m_(module), context_(module.getContext()) {}

  bool run() {
    UnitState& state = unit_state();
    SchemeSet wanted = state.schemes;
    if (!state.ast_ran) {  // without the AST action: the schemes that need no source
      wanted = SchemeSet();
      wanted.add(SchemeId::kFunctionEntries);
      wanted.add(SchemeId::kReturns);
    }
    // In the order of the table (sections/scheme_table.h), which is the unit's.
    for (size_t i = 0; i < kSchemeCount; ++i) {
      auto id = static_cast<SchemeId>(i);
      if (!wanted.has(id) || !kSchemeTable[i].instrumented) continue;
      schemes_.push_back(std::make_unique<Scheme>());
      schemes_.back()->id = id;
      by_id_[i] = schemes_.back().get();
    }
    for (Function& f : m_) collect(f, state);
    std::vector<Scheme*> used;
    for (auto& s : schemes_)
      if (!s->sites.empty()) used.push_back(s.get());
    if (!used.empty()) {
      emit_unit(used, state);
      place_markers();
    }
    // The AST's markers go, sites or not: a branch's or an atom's gives way to its operand.
    for (Instruction* marker : markers_) {
      auto* call = cast<CallBase>(marker);
      if (!call->getType()->isVoidTy()) call->replaceAllUsesWith(call->getArgOperand(1));
      call->eraseFromParent();
    }
    return !used.empty() || !markers_.empty();
  }

 private:
  Scheme* scheme(SchemeId id) { return by_id_[static_cast<size_t>(id)]; }

  unsigned add_site(Scheme* s, Site site) {
    s->sites.push_back(std::move(site));
    return static_cast<unsigned>(s->sites.size() - 1);
  }

  // One function's collection: its name in the site text, its next CFG node, whether it gets sites at all, and
  // for each marker the site already made of it (code clang emitted twice has its markers twice: one site).
  struct FunctionSites {
    std::string name;
    unsigned node = 0;
    bool no_sites = false;
    std::map<unsigned, unsigned> branch_sites;  // marker argument -> site
    std::map<const CallSite*, unsigned> call_sites;
    std::map<unsigned, unsigned> pair_sites;   // the marker's first site -> the scheme's site of that pair
    std::map<unsigned, unsigned> value_sites;  // the value or atom marker's site -> the scheme's site
  };

  void collect(Function& f, UnitState& state) {
    if (f.isDeclaration()) return;
    DISubprogram* sp = f.getSubprogram();
    FunctionSites fs;
    fs.name = sp ? sp->getName().str() : f.getName().str();
    // Compiler-made functions (global initialisers, thunks) have no source of their own; the libraries' code and
    // the functions the user left out (choice.h) are not instrumented.
    fs.no_sites = !sp || sp->isArtificial() || sp->getLine() == 0 ||
                  state.system_files.count(sp->getFilename().str()) != 0 ||
                  state.excluded_symbols.count(f.getName().str()) != 0;
    if (Scheme* s = scheme(SchemeId::kFunctionEntries); s && !fs.no_sites) {
      Site site{sp->getFilename().str(), sp->getLine(), fs.name, fs.node++, {}};
      BasicBlock& entry = f.getEntryBlock();
      Instruction* before = &*entry.getFirstInsertionPt();
      while (isa<AllocaInst>(before)) before = before->getNextNode();
      points_.push_back({Point::Entry, s, add_site(s, std::move(site)), before});
    }
    if (Scheme* s = scheme(SchemeId::kCoverage); s && !fs.no_sites) coverage(f, s, fs);
    for (BasicBlock& block : f) {
      for (Instruction& inst : block) {
        auto* call = dyn_cast<CallBase>(&inst);
        if (!call) continue;
        Function* callee = call->getCalledFunction();
        if (callee && callee->getName() == kBranchMarker) {
          markers_.push_back(call);
          collect_branch(call, state, fs);
          continue;
        }
        if (callee && callee->getName() == kPairsMarker) {
          markers_.push_back(call);
          collect_pairs(cast<CallInst>(call), state, fs);
          continue;
        }
        if (callee && (callee->getName() == kValueMarker || callee->getName() == kAtomMarker)) {
          markers_.push_back(call);
          collect_value(cast<CallInst>(call), state, fs);
          continue;
        }
        if (callee && callee->getName() == "g_object_unref" && call->arg_size() == 1 && !fs.no_sites)
          collect_unref(call, state, fs);
        collect_return(call, callee, state, fs);
      }
    }
  }

  // `__sampler_branch_marker(SITE, condition)`: one site, its fast path before the marker.
  void collect_branch(CallBase* call, const UnitState& state, FunctionSites& fs) {
    Scheme* branches = scheme(SchemeId::kBranches);
    auto* number = dyn_cast<ConstantInt>(call->getArgOperand(0));
    if (!branches || !number || number->getZExtValue() >= state.branches.size() || fs.no_sites) return;
    unsigned index = static_cast<unsigned>(number->getZExtValue());
    auto known = fs.branch_sites.find(index);
    if (known == fs.branch_sites.end()) {
      // File and line as the debug information gives them (every scheme names files the same way).
      const BranchSite& b = state.branches[index];
      const DILocation* loc = call->getDebugLoc().get();
      Site site{loc ? loc->getFilename().str() : b.file, loc ? loc->getLine() : b.line, fs.name, fs.node++,
                {field(b.text)}};
      known = fs.branch_sites.emplace(index, add_site(branches, std::move(site))).first;
    }
    points_.push_back({Point::Branch, branches, known->second, call, call->getArgOperand(1)});
  }

  // returns: a call the AST recorded (matched by its place in the debug information), its fast path after it.
  void collect_return(CallBase* call, Function* callee, const UnitState& state, FunctionSites& fs) {
    Scheme* returns = scheme(SchemeId::kReturns);
    if (!returns || fs.no_sites || call->isInlineAsm() || isa<IntrinsicInst>(call)) return;
    Type* type = call->getType();
    if (!(type->isPointerTy() || (type->isIntegerTy() && type->getIntegerBitWidth() <= 64))) return;
    const DILocation* loc = call->getDebugLoc().get();
    if (!loc || loc->getInlinedAt()) return;
    auto found = state.calls.find({sys::path::filename(loc->getFilename()).str(), loc->getLine(), loc->getColumn()});
    if (found == state.calls.end()) return;  // not a call the source wrote (operator new, ...)
    const CallSite* match = nullptr;
    if (found->second.size() == 1) {
      match = &found->second.front();
    } else if (callee) {  // several calls at one location (a macro): the callee decides
      for (const CallSite& c : found->second)
        if (c.callee_name == callee->getName()) match = match ? nullptr : &c;
    }
    if (!match) return;
    Instruction* after = nullptr;
    if (auto* invoke = dyn_cast<InvokeInst>(call)) {
      BasicBlock* normal = invoke->getNormalDest();
      if (!normal->getSinglePredecessor()) return;
      after = &*normal->getFirstInsertionPt();
    } else {
      after = call->getNextNode();
    }
    auto known = fs.call_sites.find(match);
    if (known == fs.call_sites.end()) {
      Site site{loc->getFilename().str(), loc->getLine(), fs.name, fs.node++, {field(match->text)}};
      known = fs.call_sites.emplace(match, add_site(returns, std::move(site))).first;
    }
    Point p{Point::Return, returns, known->second, after, call};
    p.is_signed = match->is_signed;
    p.call_loc = call->getDebugLoc();
    points_.push_back(p);
  }

  // `__sampler_pairs_marker(FIRST, value, other 1, ..., other k)`: k sites, one fast path each, before the marker.
  void collect_pairs(CallInst* call, const UnitState& state, FunctionSites& fs) {
    Scheme* pairs = scheme(SchemeId::kScalarPairs);
    auto* number = dyn_cast<ConstantInt>(call->getArgOperand(0));
    if (!pairs || !number || fs.no_sites || call->arg_size() < 3) return;
    uint64_t first = number->getZExtValue();
    const DILocation* loc = call->getDebugLoc().get();
    for (unsigned j = 0; j + 2 < call->arg_size(); ++j) {
      if (first + j >= state.pairs.size()) return;
      const PairSite& pair = state.pairs[first + j];
      auto known = fs.pair_sites.find(first + j);
      if (known == fs.pair_sites.end()) {
        Site site{loc ? loc->getFilename().str() : "", loc ? loc->getLine() : 0, fs.name, fs.node++,
                  {field(pair.lvalue), pair.lvalue_scope, pair.lvalue_form, field(pair.other), pair.other_kind}};
        known = fs.pair_sites.emplace(first + j, add_site(pairs, std::move(site))).first;
      }
      Point p{Point::Pair, pairs, known->second, call, call->getArgOperand(1)};
      p.other = call->getArgOperand(j + 2);
      p.is_signed = pair.is_signed;
      points_.push_back(p);
    }
  }

  // coverage: a site per basic block of the source (scheme_ir.h says which blocks), its fast path first.
  void coverage(Function& f, Scheme* s, FunctionSites& fs) {
    for (auto [block, where] : source_blocks(f)) {
      Site site{where->getFilename().str(), where->getLine(), fs.name, fs.node++, {}};
      Instruction* before = &*block->getFirstInsertionPt();
      while (isa<AllocaInst>(before)) before = before->getNextNode();
      Point p{Point::Entry, s, add_site(s, std::move(site)), before};
      p.location = DILocation::get(context_, where->getLine(), where->getColumn(), where->getScope(),
                                   where->getInlinedAt());
      points_.push_back(p);
    }
  }

  // `__sampler_value_marker(SITE, value)` (float-kinds, bounds) or `__sampler_atom_marker(SITE, address)`.
  void collect_value(CallInst* call, const UnitState& state, FunctionSites& fs) {
    auto* number = dyn_cast<ConstantInt>(call->getArgOperand(0));
    if (!number || fs.no_sites || call->arg_size() != 2 || number->getZExtValue() >= state.values.size()) return;
    unsigned index = static_cast<unsigned>(number->getZExtValue());
    const ValueSite& value = state.values[index];
    Scheme* s = scheme(value.scheme);
    if (!s) return;
    auto known = fs.value_sites.find(index);
    if (known == fs.value_sites.end()) {
      const DILocation* loc = call->getDebugLoc().get();
      Site site{loc ? loc->getFilename().str() : "", loc ? loc->getLine() : 0, fs.name, fs.node++, {}};
      for (const std::string& f : value.fields) site.fields.push_back(field(f));
      site.bound_type = value.bound_type;
      known = fs.value_sites.emplace(index, add_site(s, std::move(site))).first;
    }
    Point p{value.scheme == SchemeId::kAtoms ? Point::Atom : Point::Assigned, s, known->second, call,
            call->getArgOperand(1)};
    p.is_signed = value.is_signed;
    points_.push_back(p);
  }

  // g-object-unref: a call of g_object_unref the AST found in the source (matched by location, as returns).
  void collect_unref(CallBase* call, const UnitState& state, FunctionSites& fs) {
    Scheme* s = scheme(SchemeId::kGObjectUnref);
    const DILocation* loc = call->getDebugLoc().get();
    if (!s || !loc || loc->getInlinedAt()) return;
    auto found = state.unrefs.find({sys::path::filename(loc->getFilename()).str(), loc->getLine(), loc->getColumn()});
    if (found == state.unrefs.end()) return;
    Site site{loc->getFilename().str(), loc->getLine(), fs.name, fs.node++, {field(found->second)}};
    points_.push_back({Point::Unref, s, add_site(s, std::move(site)), call, call->getArgOperand(0)});
  }

  // The unit (docs/instrumenting.md section 4): its site text, its signature, its schemes' counters and table, its
  // descriptor with the sites' weights, and its registration, in that order (each step's globals after the last's).
  void emit_unit(const std::vector<Scheme*>& used, const UnitState& state) {
    const DataLayout& layout = m_.getDataLayout();
    scheme_type_ = scheme_struct_type(context_, layout);
    StructType* unit_type = unit_struct_type(context_, layout);

    // The site text first: the signature is derived from it and from the compiled file's identity.
    std::vector<std::string> lines = site_text(used);
    std::string signature = unit_signature(lines);
    emit_site_text(lines, signature);
    std::vector<Constant*> entries = scheme_entries(used, state);
    GlobalVariable* unit = emit_descriptor(used, entries, signature, unit_type);
    emit_registration(unit);
  }

  // Each scheme's sites as lines of site text (docs/formats.md), the unit's signature still a placeholder.
  static std::vector<std::string> site_text(const std::vector<Scheme*>& used) {
    std::vector<std::string> lines;
    for (Scheme* s : used) {
      lines.push_back("<sites unit=\"@SIGNATURE@\" scheme=\"" + s->name() + "\">\n");
      for (const Site& site : s->sites) {
        std::string line = field(site.file) + "\t" + std::to_string(site.line) + "\t" + field(site.function) +
                           "\t" + std::to_string(site.node);
        for (const std::string& f : site.fields) line += "\t" + f;
        lines.push_back(line + "\n");
      }
      lines.push_back("</sites>\n");
    }
    return lines;
  }

  // The unit signature: the MD5 of the compiled file's directory and name and of the site text.
  std::string unit_signature(const std::vector<std::string>& lines) {
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
    return digest.digest().str().str();
  }

  // The site text, signed, in .debug_site_info (module-level inline assembler).
  void emit_site_text(const std::vector<std::string>& lines, const std::string& signature) {
    std::string assembly = ".pushsection .debug_site_info,\"\",@progbits\n";
    for (std::string line : lines) {
      if (auto at = line.find("@SIGNATURE@"); at != std::string::npos) line.replace(at, 11, signature);
      assembly += ascii(line);
    }
    assembly += ".popsection";
    m_.appendModuleInlineAsm(assembly);
  }

  // Each scheme's counters and entry in the scheme table (sampler/abi.h, struct sampler_scheme).
  std::vector<Constant*> scheme_entries(const std::vector<Scheme*>& used, const UnitState& state) {
    Type* i32 = Type::getInt32Ty(context_);
    Type* i64 = Type::getInt64Ty(context_);
    PointerType* ptr = PointerType::getUnqual(context_);
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
      s->values = array(count * s->columns(), "__sampler_values_" + s->name());
      Constant* name = ConstantDataArray::getString(context_, s->name());
      auto* name_global = new GlobalVariable(m_, name->getType(), true, GlobalValue::PrivateLinkage, name,
                                             "__sampler_scheme_name");
      name_global->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
      // bounds: the type of each site, constant (SAMPLER_SCHEME_BOUNDS; the runtime sets the initial extremes).
      bool bounds = scheme_row(s->id).predicates == PredicateKind::kBounds;
      Constant* bound_types = null;
      if (bounds) {
        std::vector<uint8_t> types;
        for (const Site& site : s->sites) types.push_back(site.bound_type);
        Constant* data = ConstantDataArray::get(context_, types);
        auto* global = new GlobalVariable(m_, data->getType(), true, GlobalValue::PrivateLinkage, data,
                                          "__sampler_bound_types");
        bound_types = global;
      }
      Constant* entry[static_cast<size_t>(SchemeField::kCount)] = {};
      auto set = [&entry](SchemeField field, Constant* value) { entry[static_cast<size_t>(field)] = value; };
      set(SchemeField::name, name_global);
      set(SchemeField::site_count, ConstantInt::get(i32, count));
      set(SchemeField::columns, ConstantInt::get(i32, s->columns()));
      set(SchemeField::kind, ConstantInt::get(i32, bounds ? SAMPLER_SCHEME_BOUNDS : SAMPLER_SCHEME_COUNTERS));
      set(SchemeField::reserved, ConstantInt::get(i32, 0));
      set(SchemeField::values, s->values);
      set(SchemeField::bound_types, bound_types);
      set(SchemeField::first, first ? array(count, "__sampler_first_" + s->name()) : null);
      set(SchemeField::last, last ? array(count, "__sampler_last_" + s->name()) : null);
      entries.push_back(ConstantStruct::get(scheme_type_, entry));
    }
    return entries;
  }

  // The scheme table and the unit's descriptor (struct sampler_unit), with the sites' weights.
  GlobalVariable* emit_descriptor(const std::vector<Scheme*>& used, const std::vector<Constant*>& entries,
                                  const std::string& signature, StructType* unit_type) {
    Type* i32 = Type::getInt32Ty(context_);
    Type* i64 = Type::getInt64Ty(context_);
    Constant* null = ConstantPointerNull::get(PointerType::getUnqual(context_));
    ArrayType* table_type = ArrayType::get(scheme_type_, entries.size());
    schemes_table_ = new GlobalVariable(m_, table_type, false, GlobalValue::InternalLinkage,
                                        ConstantArray::get(table_type, entries), "__sampler_schemes");
    Constant* text = ConstantDataArray::getString(context_, signature);
    auto* signature_global =
        new GlobalVariable(m_, text->getType(), true, GlobalValue::PrivateLinkage, text, "__sampler_signature");
    Constant* fields[static_cast<size_t>(UnitField::kCount)] = {};
    auto set = [&fields](UnitField field, Constant* value) { fields[static_cast<size_t>(field)] = value; };
    set(UnitField::abi_version, ConstantInt::get(i32, SAMPLER_ABI_VERSION));
    set(UnitField::scheme_count, ConstantInt::get(i32, entries.size()));
    set(UnitField::signature, signature_global);
    set(UnitField::schemes, schemes_table_);
    set(UnitField::next, null);
    set(UnitField::state, ConstantInt::get(unit_type->getElementType(static_cast<unsigned>(UnitField::state)), 0));
    // The sites' weights, in the schemes' order, each 1 (uniform sampling) until a plan sets them; the lowering
    // adds the thresholds of the amortized checks it makes (lower_thresholds.cpp).
    uint64_t site_total = 0;
    for (Scheme* s : used) site_total += s->sites.size();
    std::vector<uint64_t> ones(site_total, 1);
    auto* weights = new GlobalVariable(m_, ArrayType::get(i64, site_total), false, GlobalValue::InternalLinkage,
                                       ConstantDataArray::get(context_, ArrayRef<uint64_t>(ones)), kWeightsName);
    set(UnitField::weights, weights);
    set(UnitField::weight_count, ConstantInt::get(i32, site_total));
    set(UnitField::thresholds, null);
    set(UnitField::threshold_count, ConstantInt::get(i32, 0));
    set(UnitField::threshold_bounds, null);
    set(UnitField::threshold_bounds_size, ConstantInt::get(i32, 0));
    set(UnitField::planned, ConstantInt::get(i32, 0));
    auto* unit = new GlobalVariable(m_, unit_type, false, GlobalValue::InternalLinkage,
                                    ConstantStruct::get(unit_type, fields), kUnitName);
    return unit;
  }

  // The unit's constructor and destructor, which register it with the runtime and unregister it.
  void emit_registration(GlobalVariable* unit) {
    PointerType* ptr = PointerType::getUnqual(context_);
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
    appendToGlobalCtors(m_, unit_call(abi::sampler_register_unit, "__sampler_register_unit"), 101);
    appendToGlobalDtors(m_, unit_call(abi::sampler_unregister_unit, "__sampler_unregister_unit"),
                        101);
  }

  // A site marker (site_marker.h) before each point, with the debug location its fast and slow paths will have;
  // the pairs of one assignment share one.
  void place_markers() {
    Type* i32 = Type::getInt32Ty(context_);
    for (size_t i = 0; i < points_.size();) {
      Point& p = points_[i];
      size_t end = i + 1;
      while (p.kind == Point::Pair && end < points_.size() && points_[end].kind == Point::Pair &&
             points_[end].before == p.before && points_[end].is_signed == p.is_signed)
        ++end;
      Constant* entry = ConstantExpr::getInBoundsGetElementPtr(
          schemes_table_->getValueType(), schemes_table_,
          ArrayRef<Constant*>{ConstantInt::get(i32, 0), ConstantInt::get(i32, p.scheme->index)});
      std::vector<Value*> args = {entry, p.value ? p.value : ConstantInt::getFalse(context_)};
      for (size_t j = i; j < end; ++j) {
        args.push_back(ConstantInt::get(i32, points_[j].site));
        if (p.kind == Point::Pair) args.push_back(points_[j].other);
      }
      IRBuilder<> b(p.before);
      b.SetCurrentDebugLocation(location(p));
      b.CreateCall(site_marker(m_, p.kind, p.is_signed), args);
      i = end;
    }
  }

  DebugLoc location(const Point& p) {
    if (p.location) return p.location;
    if (p.kind == Point::Return && p.call_loc) return p.call_loc;
    if (DebugLoc loc = p.before->getDebugLoc()) return loc;
    DISubprogram* sp = p.before->getFunction()->getSubprogram();
    return sp ? DebugLoc(DILocation::get(context_, sp->getLine(), 0, sp)) : DebugLoc();
  }

  Module& m_;
  LLVMContext& context_;
  std::vector<std::unique_ptr<Scheme>> schemes_;
  Scheme* by_id_[kSchemeCount] = {};  // the unit's schemes by SchemeId; null for those not enabled
  std::vector<Point> points_;
  std::vector<Instruction*> markers_;
  StructType* scheme_type_ = nullptr;
  GlobalVariable* schemes_table_ = nullptr;
};

// Clang's ThinLTO compile step (-flto=thin -c): its module flags say split LTO unit, not full LTO.
bool thin_lto_compile(const Module& module) {
  auto* full = mdconst::extract_or_null<ConstantInt>(module.getModuleFlag("ThinLTO"));
  return module.getModuleFlag("EnableSplitLTOUnit") && (!full || !full->isZero());
}

// The lowering's settings travel in the module, as the named metadata `sampler.lowering` (one node of key, value
// strings), so that the lowering reads them the same way under clang and under opt (docs/decisions.md): the
// collection writes them from the AST action's arguments, the lowering reads them and removes them, so that they
// never reach the object file.
constexpr const char* kLoweringSettings = "sampler.lowering";

struct LoweringSettings {
  std::string countdown = "region";  // region (amortized over acyclic regions) or site
  std::string timestamps = "none";   // with timestamps, every sample goes to the runtime's sampler_take_*()
  bool vectorize_loops = false, interleave_loops = false;  // clang's -fvectorize, its loop interleaving
};

void write_lowering_settings(Module& module, const UnitState& state) {
  LLVMContext& context = module.getContext();
  auto text = [&context](StringRef value) -> Metadata* { return MDString::get(context, value); };
  Metadata* pairs[] = {text("countdown"),       text(state.countdown),
                       text("timestamps"),      text(state.timestamps),
                       text("vectorize-loops"), text(state.vectorize_loops ? "on" : "off"),
                       text("interleave-loops"), text(state.interleave_loops ? "on" : "off")};
  NamedMDNode* settings = module.getOrInsertNamedMetadata(kLoweringSettings);
  settings->clearOperands();
  settings->addOperand(MDNode::get(context, pairs));
}

// A module without the metadata (one written by hand for opt) has the AST action's defaults; one with settings
// the lowering does not know is refused, naming the module's file.
LoweringSettings take_lowering_settings(Module& module) {
  LoweringSettings settings;
  NamedMDNode* node = module.getNamedMetadata(kLoweringSettings);
  if (!node) return settings;
  // An error through the context: clang reports it as its own, opt prints it and exits with status 1.
  bool refused = false;
  auto refuse = [&module, &refused](const std::string& what) {
    if (!refused)
      module.getContext().emitError(Twine("sampler: ") + module.getModuleIdentifier() + ": !" + kLoweringSettings +
                                    ": " + what);
    refused = true;
  };
  MDNode* pairs = node->getNumOperands() == 1 ? node->getOperand(0) : nullptr;
  if (!pairs || pairs->getNumOperands() % 2 != 0) {
    refuse("expected one node of key, value strings");
    return settings;
  }
  auto on_off = [&refuse](StringRef key, StringRef value) {
    if (value != "on" && value != "off") refuse(("invalid value '" + value + "' for " + key + " (on, off)").str());
    return value == "on";
  };
  for (unsigned i = 0; i < pairs->getNumOperands(); i += 2) {
    auto* key = dyn_cast<MDString>(pairs->getOperand(i));
    auto* value = dyn_cast<MDString>(pairs->getOperand(i + 1));
    if (!key || !value) {
      refuse("expected strings");
      break;
    }
    StringRef k = key->getString(), v = value->getString();
    if (k == "countdown") {
      if (auto error = check_value(k, v, kCountdownValues)) refuse(*error);
      settings.countdown = v.str();
    } else if (k == "timestamps") {
      if (auto error = check_value(k, v, kTimestampsValues)) refuse(*error);
      settings.timestamps = v.str();
    } else if (k == "vectorize-loops") {
      settings.vectorize_loops = on_off(k, v);
    } else if (k == "interleave-loops") {
      settings.interleave_loops = on_off(k, v);
    } else {
      refuse(("unknown key '" + k + "'").str());
    }
  }
  node->eraseFromParent();
  return settings;
}

// Lowers the unit's sites with the settings the module carries.
LoweredSites lower_unit(Module& module, const LoweringSettings& settings) {
  // Timestamps are the runtime's to stamp: a unit with them leaves every sample to sampler_take_*().
  return lower_sites(module, settings.countdown != "site", settings.timestamps == "none");
}

// What shows that a module was collected already: the unit the collection emits, or site markers in use. Collected
// again, it would get a second unit, whose weights the lowering cannot tell from the first's.
std::string collected_already(const Module& module) {
  if (module.getGlobalVariable(kUnitName, /*AllowInternal=*/true)) return (Twine("@") + kUnitName).str();
  for (const Function& f : module)
    if (site_marker_kind(f) && !f.use_empty()) return ("site markers (@" + f.getName() + ")").str();
  return {};
}

struct CollectSitesPass : PassInfoMixin<CollectSitesPass> {
  PreservedAnalyses run(Module& module, ModuleAnalysisManager&) {
    // An error through the context, as take_lowering_settings(); the module is left as it came, for the lowering.
    if (std::string found = collected_already(module); !found.empty()) {
      module.getContext().emitError(Twine("sampler: ") + module.getModuleIdentifier() + ": already collected (it has " +
                                    found + "): sampler-collect runs once, on a module without sites");
      unit_state() = UnitState();
      return PreservedAnalyses::all();
    }
    bool changed = Collector(module).run();
    // The AST action's work ends here: the lowering reads the module, and the next unit compiled in this
    // process starts afresh.
    write_lowering_settings(module, unit_state());
    unit_state() = UnitState();
    // LLVM 19's ThinLTO compile step ends before the optimiser's last stage, and the link-time optimiser does
    // not load this plugin: there the sites are lowered at once, and the rest of the pipeline optimises them.
    if (thin_lto_compile(module)) lower_unit(module, take_lowering_settings(module));
    // The settings' named metadata changes no analysis.
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }  // also at -O0 and in optnone functions
};

// After the clean-up: instcombine sinks a fast block's subtraction of a thresholds entry into the exit that uses
// it, at the top of the exit's block, before the program's own comparison there (bzip2's mainGtU: `if (c1 != c2)
// return c1 > c2`). Its flags would then come between that comparison and the setcc or branch reading it, which
// x86 pays with the comparison again and both operands kept in registers; moved down to its first use in the
// block, the flags of the program's comparison reach their reader (docs/performance.md, "The exits' subtractions
// after the program's comparison").
// A leaf function's counted copy (lower_counted.cpp, `counted`) subtracts immediates: its adds of a constant to the
// countdown (its load at the entry, through phis and adds) move down the same way.
void subtract_after_comparisons(Function& f, const GlobalVariable* thresholds, bool counted) {
  auto reads_thresholds = [thresholds](Value* v) {
    auto* load = dyn_cast<LoadInst>(v);
    return thresholds && load && getUnderlyingObject(load->getPointerOperand()) == thresholds;
  };
  std::set<const Value*> countdown;
  if (counted) {
    std::vector<const Value*> work;
    for (BasicBlock& block : f)
      for (Instruction& inst : block)
        if (auto* load = dyn_cast<LoadInst>(&inst))
          if (auto* address = dyn_cast<IntrinsicInst>(load->getPointerOperand());
              address && address->getIntrinsicID() == Intrinsic::threadlocal_address &&
              address->getArgOperand(0)->getName() == abi::sampler_countdown)
            work.push_back(load);
    while (!work.empty()) {
      const Value* v = work.back();
      work.pop_back();
      if (!countdown.insert(v).second) continue;
      for (const User* user : v->users())
        if (auto* inst = dyn_cast<Instruction>(user);
            inst && (isa<PHINode>(inst) || inst->getOpcode() == Instruction::Add))
          work.push_back(inst);
    }
  }
  auto moves = [&](Instruction& inst) {
    if (inst.getOpcode() == Instruction::Sub) return reads_thresholds(inst.getOperand(1));
    return inst.getOpcode() == Instruction::Add && isa<ConstantInt>(inst.getOperand(1)) && countdown.count(&inst);
  };
  for (BasicBlock& block : f) {
    std::vector<Instruction*> subtractions;
    for (Instruction& inst : block)
      if (moves(inst)) subtractions.push_back(&inst);
    for (Instruction* sub : subtractions) {
      Instruction* to = block.getTerminator();  // its first use in the block, or the block's end
      for (Instruction* i = sub->getNextNode(); i != to; i = i->getNextNode())
        if (is_contained(i->operands(), sub)) {
          to = i;
          break;
        }
      if (to == sub->getNextNode()) continue;
      auto* load = dyn_cast<LoadInst>(sub->getOperand(1));
      bool move_load = load && load->getParent() == &block && load->hasOneUse();
      if (move_load)
        for (Instruction* i = load->getNextNode(); move_load && i != to; i = i->getNextNode())
          move_load = !i->mayWriteToMemory();
      sub->moveBefore(to);
      if (move_load) load->moveBefore(sub);
    }
  }
}

// An option of LLVM's given a value for this process (clang compiles one unit in it), unless the user gave it one
// (-mllvm).
void default_llvm_option(const char* name, const char* value) {
  StringMap<cl::Option*>& options = cl::getRegisteredOptions();
  auto found = options.find(name);
  if (found != options.end() && found->second->getNumOccurrences() == 0) found->second->addOccurrence(0, name, value);
}

// The clean-up and the code generator on a unit with sites: its functions with sites hold a fast and a slow side
// per region, several times the blocks of the program's function, and three steps grow faster than the blocks
// (docs/performance.md, "Compile time: two of the code generator's limits" and "Compile time: the clean-up's GVN
// and the alternatives measured"):
// - the clean-up's GVN asks, for each load, which stores it depends on: a walk back over up to
//   -memdep-block-number-limit blocks (200) before it gives up, through the slow sides' thousands of blocks; with
//   half of that it gives up sooner where nothing is found (the countdown it forwards is found within it);
// - CodeGenPrepare walks a function's blocks again from the first after each change to the dominator tree, unless
//   the function has at least -cgpp-huge-func blocks, where it goes on from the block it changed;
// - the greedy register allocator, to split a value's live range, grows a region of blocks edge by edge up to
//   -grow-region-complexity-budget edges, once per value and candidate register; with a tenth of LLVM's default
//   it gives up sooner on a sampled copy's regions and splits or spills the value otherwise.
// None changed what the fast sides execute where measured (bzip2 and bc).
void limit_steps_on_large_functions() {
  default_llvm_option("cgpp-huge-func", "500");
  default_llvm_option("grow-region-complexity-budget", "1000");
  default_llvm_option("memdep-block-number-limit", "100");
}

// The lowering, then (when optimising) a short clean-up of what it made, and only of that: mem2reg gives the
// local countdown a register, and instcombine, simplifycfg and GVN merge the fast paths' adjacent countdown
// updates and forward the thread's countdown from one region to the next (fewer instructions executed, sampling
// off: docs/performance.md). The twins without sites (lower_twins.cpp) are the program's code without the
// markers, which kept the optimiser from speculating branches into selects and the vectorizer out of their
// loops: simplifycfg first with the hoisting and sinking of common code that the optimiser's last stage does
// (the markers in both arms of an `if` kept it from merging what the arms share and making the rest a select:
// bc's decimal carry branched on the data, slowing bc with sampling off), instcombine, and where clang vectorizes
// loops (-O2 and above) the loop vectorizer (gzip's fill_window runs vectorized, as plain clang builds it), then
// instcombine and simplifycfg on what it made.
struct LowerSitesPass : PassInfoMixin<LowerSitesPass> {
  bool optimising;
  PreservedAnalyses run(Module& module, ModuleAnalysisManager& analyses) {
    LoweringSettings settings = take_lowering_settings(module);
    bool vectorize = settings.vectorize_loops, interleave = settings.interleave_loops;
    LoweredSites lowered = lower_unit(module, settings);
    if (!lowered.changed) return PreservedAnalyses::all();
    if (!optimising) return PreservedAnalyses::none();
    limit_steps_on_large_functions();
    FunctionPassManager sites;
    sites.addPass(PromotePass());
    sites.addPass(InstCombinePass());
    // The copies of loops without checks (lower_loops.cpp, version_loops()): indvars computes such a loop's countdown
    // where it leaves rather than each iteration, and the vectorizer finds those loops as plain clang's build has
    // them (gzip's fill_window; docs/performance.md, "Field-grade cost").
    sites.addPass(createFunctionToLoopPassAdaptor(IndVarSimplifyPass()));
    sites.addPass(SimplifyCFGPass());
    sites.addPass(GVNPass());
    if (vectorize) {
      sites.addPass(LoopVectorizePass(LoopVectorizeOptions(/*InterleaveOnlyWhenForced=*/!interleave,
                                                           /*VectorizeOnlyWhenForced=*/false)));
      sites.addPass(InstCombinePass());
      sites.addPass(SimplifyCFGPass());
    }
    FunctionPassManager twins;
    twins.addPass(SimplifyCFGPass(SimplifyCFGOptions().hoistCommonInsts(true).sinkCommonInsts(true)));
    twins.addPass(InstCombinePass());
    if (vectorize) {
      twins.addPass(LoopVectorizePass(LoopVectorizeOptions(/*InterleaveOnlyWhenForced=*/!interleave,
                                                           /*VectorizeOnlyWhenForced=*/false)));
      twins.addPass(InstCombinePass());
    }
    twins.addPass(SimplifyCFGPass());
    FunctionAnalysisManager& functions = analyses.getResult<FunctionAnalysisManagerModuleProxy>(module).getManager();
    auto clean = [&](FunctionPassManager& passes, Function* f) {
      functions.invalidate(*f, PreservedAnalyses::none());  // the lowering changed it
      functions.invalidate(*f, passes.run(*f, functions));
    };
    const GlobalVariable* thresholds = module.getGlobalVariable("__sampler_thresholds", /*AllowInternal=*/true);
    for (Function* f : lowered.with_sites) {
      clean(sites, f);
      bool counted = is_contained(lowered.counted, f);
      if (thresholds || counted) subtract_after_comparisons(*f, thresholds, counted);
    }
    for (Function* f : lowered.twins) clean(twins, f);
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

}  // namespace
}  // namespace sampler::plugin

// Sites are collected where the code is as clang wrote it and lowered after the optimiser (site_marker.h says
// why). By name too, for opt (docs/architecture.md, "The passes"): sampler-collect, sampler-lower (with the
// clean-up of an optimising build) and sampler-lower<O0>.
extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  using sampler::plugin::CollectSitesPass;
  using sampler::plugin::LowerSitesPass;
  return {LLVM_PLUGIN_API_VERSION, "sampler", "0.1", [](llvm::PassBuilder& builder) {
            builder.registerPipelineStartEPCallback([](llvm::ModulePassManager& manager, llvm::OptimizationLevel) {
              manager.addPass(CollectSitesPass());
            });
            builder.registerOptimizerLastEPCallback(
                [](llvm::ModulePassManager& manager, llvm::OptimizationLevel level) {
                  manager.addPass(LowerSitesPass{{}, level != llvm::OptimizationLevel::O0});
                });
            builder.registerPipelineParsingCallback(
                [](llvm::StringRef name, llvm::ModulePassManager& manager,
                   llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
                  if (name == "sampler-collect") {
                    manager.addPass(CollectSitesPass());
                  } else if (name == "sampler-lower" || name == "sampler-lower<O0>") {
                    manager.addPass(LowerSitesPass{{}, name == "sampler-lower"});
                  } else {
                    return false;
                  }
                  return true;
                });
            // -print-before=sampler-lower (and the like) names them in clang too: how the IR tests' inputs are made.
            if (llvm::PassInstrumentationCallbacks* callbacks = builder.getPassInstrumentationCallbacks()) {
              callbacks->addClassToPassName(CollectSitesPass::name(), "sampler-collect");
              callbacks->addClassToPassName(LowerSitesPass::name(), "sampler-lower");
            }
          }};
}
