// The clang half of the plugin: a PluginASTAction, run before code generation, that finds the sites whose fields
// need the source (the predicate of each branch as written, the callee of each call) and records them for the pass.
//
// Branches: each condition is wrapped, in the AST, in a call of a marker function,
//   if (c)  ->  if (__sampler_branch_marker(SITE, (_Bool) c))
// before clang generates code for the function, so the pass finds every branch site exactly, whatever debug
// location clang gives the conditional branch, and the marker's value is the condition as evaluated. The pass
// replaces each marker call by the condition and the sampling fast path; a marker never reaches the object file.
// Calls: recorded by the debug location their call instruction will carry (docs/decisions.md says why).
#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Mangle.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendPluginRegistry.h>
#include <clang/Analysis/CFG.h>
#include <clang/Lex/Lexer.h>
#include <clang/Lex/Pragma.h>
#include <clang/Lex/Preprocessor.h>
#include <llvm/ADT/BitVector.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "arguments.h"
#include "sampler/abi.h"
#include "state.h"

namespace sampler::plugin {

namespace {

using namespace clang;

// The stretch of a file where the tokens `begin` to `end` were written, as the programmer sees them: where
// both come from one argument of a macro, the argument as written (`x > LIMIT` in `CHECK(x > LIMIT)`); where
// they come from a macro's body, the whole invocation (`isalpha(c)`, not the expansion glibc's header makes of it).
// Invalid if they have no common place in one file.
CharSourceRange written_range(SourceLocation begin, SourceLocation end, const SourceManager& sm,
                              const LangOptions& options, unsigned depth = 0) {
  CharSourceRange range = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(begin, end), sm, options);
  if (range.isValid() || depth > 16 || begin.isInvalid() || end.isInvalid()) return range;
  // Each end's places, from its token out to the file, through the expansions that hold it (an argument's token
  // first to where the argument is used in the macro's body).
  auto places = [&](SourceLocation loc, bool at_end) {
    std::vector<SourceLocation> out = {loc};
    while (loc.isMacroID() && out.size() < 64) {
      CharSourceRange expansion = sm.getImmediateExpansionRange(loc);
      loc = at_end ? expansion.getEnd() : expansion.getBegin();
      out.push_back(loc);
    }
    return out;
  };
  std::vector<SourceLocation> from = places(begin, false), to = places(end, true);
  // The innermost buffer (a file, or one macro expansion) where both ends have a place.
  for (size_t i = 0; i < from.size(); ++i) {
    FileID buffer = sm.getFileID(from[i]);
    for (size_t j = 0; j < to.size(); ++j) {
      if (sm.getFileID(to[j]) != buffer) continue;
      if (buffer.isInvalid() || !sm.getSLocEntry(buffer).isExpansion()) {
        if (sm.isBeforeInTranslationUnit(to[j], from[i])) return {};
        return Lexer::makeFileCharRange(CharSourceRange::getTokenRange(from[i], to[j]), sm, options);
      }
      const SrcMgr::ExpansionInfo& expansion = sm.getSLocEntry(buffer).getExpansion();
      if (expansion.isMacroArgExpansion())  // both in one argument: where it was written
        return written_range(sm.getImmediateSpellingLoc(from[i]), sm.getImmediateSpellingLoc(to[j]), sm, options,
                             depth + 1);
      if (i > 0 && j > 0 && from[i] == to[j] && sm.isMacroArgExpansion(from[i - 1]) &&
          sm.isMacroArgExpansion(to[j - 1]))  // both from the same use of one argument in this macro's body
        return written_range(sm.getImmediateSpellingLoc(from[i - 1]), sm.getImmediateSpellingLoc(to[j - 1]), sm,
                             options, depth + 1);
      // In the macro's own text: the whole invocation.
      return written_range(expansion.getExpansionLocStart(), expansion.getExpansionLocEnd(), sm, options, depth + 1);
    }
  }
  return {};
}

// Whether the token at `loc` was written in a macro's body rather than by the program (in a macro's argument,
// however deep, it was the program's).
bool written_by_macro(SourceLocation loc, const SourceManager& sm) {
  for (unsigned depth = 0; loc.isMacroID() && depth < 64; ++depth) {
    if (!sm.isMacroArgExpansion(loc)) return true;
    loc = sm.getImmediateSpellingLoc(loc);
  }
  return false;
}

// The source text of an expression as the user wrote it (written_range), or, when it has none, clang's printing
// of it. Parentheses a macro's body put around it are the macro's, not the programmer's: left out.
std::string source_text(const Expr* e, ASTContext& context) {
  const SourceManager& sm = context.getSourceManager();
  while (const auto* paren = dyn_cast<ParenExpr>(e->IgnoreImplicit())) {
    if (!sm.isMacroBodyExpansion(paren->getLParen()) || !sm.isMacroBodyExpansion(paren->getRParen())) break;
    e = paren->getSubExpr();
  }
  CharSourceRange range = written_range(e->getBeginLoc(), e->getEndLoc(), sm, context.getLangOpts());
  if (range.isValid()) {
    bool invalid = false;
    StringRef text = Lexer::getSourceText(range, sm, context.getLangOpts(), &invalid);
    if (!invalid && !text.empty()) return one_line(text.str());
  }
  std::string printed;
  llvm::raw_string_ostream out(printed);
  e->printPretty(out, nullptr, PrintingPolicy(context.getLangOpts()));
  return one_line(out.str());
}

const Expr* strip(const Expr* e) {
  while (true) {
    const Expr* next = e->IgnoreImplicit()->IgnoreParens();
    if (const auto* cleanups = dyn_cast<ExprWithCleanups>(next)) next = cleanups->getSubExpr();
    if (next == e) return e;
    e = next;
  }
}

bool is_short_circuit(const Expr* e) {
  const auto* op = dyn_cast<BinaryOperator>(strip(e));
  return op && op->isLogicalOp();
}

// Which locals are certainly initialised where: a forward must-analysis over clang's CFG of a body. A local is,
// on every path from the body's start to the point, declared with an initialiser or assigned directly (=, op=,
// ++, --) since its declaration was last reached (a loop's body declares its locals afresh). One initialised
// only through its address (`scanf("%d", &n)`) is not: whether it was cannot be known. Code the analysis does
// not reach (or a body clang cannot make a CFG of) has nothing certainly initialised.
class Initialisation {
 public:
  void analyse(const Decl* function, Stmt* body, ASTContext& context) {
    CFG::BuildOptions options;
    options.setAllAlwaysAdd();  // every expression its own element, in the order of evaluation
    std::unique_ptr<CFG> cfg = CFG::buildCFG(function, body, &context, options);
    if (!cfg) return;
    for (const CFGBlock* block : *cfg)
      for (const CFGElement& element : *block)
        if (auto s = element.getAs<CFGStmt>())
          if (const auto* declaration = dyn_cast<DeclStmt>(s->getStmt()))
            for (const Decl* d : declaration->decls())
              if (const auto* v = dyn_cast<VarDecl>(d); v && v->hasLocalStorage())
                index_.emplace(v, static_cast<unsigned>(index_.size()));
    unsigned size = static_cast<unsigned>(index_.size());
    std::vector<llvm::BitVector> out(cfg->getNumBlockIDs(), llvm::BitVector(size));
    std::vector<bool> reached(cfg->getNumBlockIDs(), false);
    auto in_of = [&](const CFGBlock* block, llvm::BitVector& in) {
      if (block == &cfg->getEntry()) {
        in = llvm::BitVector(size);
        return true;
      }
      bool any = false;
      for (const CFGBlock::AdjacentBlock& pred : block->preds()) {
        const CFGBlock* p = pred.getReachableBlock();
        if (!p || !reached[p->getBlockID()]) continue;
        if (any) in &= out[p->getBlockID()];
        else in = out[p->getBlockID()];
        any = true;
      }
      return any;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (const CFGBlock* block : *cfg) {
        llvm::BitVector state(size);
        if (!in_of(block, state)) continue;
        transfer(*block, state, false);
        if (!reached[block->getBlockID()] || state != out[block->getBlockID()]) {
          reached[block->getBlockID()] = true;
          out[block->getBlockID()] = std::move(state);
          changed = true;
        }
      }
    }
    for (const CFGBlock* block : *cfg) {
      llvm::BitVector state(size);
      if (reached[block->getBlockID()] && in_of(block, state)) transfer(*block, state, true);
    }
  }

  /// Whether `v` is certainly initialised just before `point` (an assignment, or the VarDecl declared) is done.
  bool certain(const void* point, const VarDecl* v) const {
    if (isa<ParmVarDecl>(v) || v->hasGlobalStorage()) return true;
    auto before = before_.find(point);
    auto index = index_.find(v);
    return before != before_.end() && index != index_.end() && index->second < before->second.size() &&
           before->second[index->second];
  }

 private:
  static const VarDecl* assigned_variable(const Expr* lhs) {
    const auto* ref = dyn_cast<DeclRefExpr>(lhs->IgnoreParens());
    return ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
  }

  void transfer(const CFGBlock& block, llvm::BitVector& state, bool record) {
    auto note = [&](const void* point) {
      if (!record) return;
      // A statement clang's CFG holds twice: what is certain at both.
      if (auto [known, fresh] = before_.emplace(point, state); !fresh) known->second &= state;
    };
    auto assigned = [&](const void* point, const Expr* lhs) {
      note(point);
      if (const VarDecl* v = assigned_variable(lhs))
        if (auto index = index_.find(v); index != index_.end()) state.set(index->second);
    };
    for (const CFGElement& element : block) {
      auto s = element.getAs<CFGStmt>();
      if (!s) continue;
      const Stmt* stmt = s->getStmt();
      if (const auto* declaration = dyn_cast<DeclStmt>(stmt)) {
        for (const Decl* d : declaration->decls()) {
          const auto* v = dyn_cast<VarDecl>(d);
          auto index = v ? index_.find(v) : index_.end();
          if (index == index_.end()) continue;
          note(v);
          if (v->hasInit()) state.set(index->second);
          else state.reset(index->second);
        }
      } else if (const auto* op = dyn_cast<BinaryOperator>(stmt); op && op->isAssignmentOp()) {
        assigned(op, op->getLHS());
      } else if (const auto* step = dyn_cast<UnaryOperator>(stmt); step && step->isIncrementDecrementOp()) {
        assigned(step, step->getSubExpr());
      }
    }
  }

  std::map<const VarDecl*, unsigned> index_;          // the locals the analyses declare, numbered
  std::map<const void*, llvm::BitVector> before_;     // an assignment or a declared local: what is initialised there
};

// Finds the sites of one function body (visiting lambdas inside it too) and wraps each branch condition.
class BodyVisitor : public RecursiveASTVisitor<BodyVisitor> {
  // One other operand of a scalar-pairs site: a variable (local-init or global; the lvalue itself is its value
  // before the assignment), constants_[constant], or the null pointer.
  struct PairOperand {
    enum Kind { Local, Global, Constant, Null } kind;
    const VarDecl* variable;  // Local, Global
    unsigned constant;        // Constant
  };

  // An assignment (or an initialised declaration, ++, --) to instrument for scalar-pairs, float-kinds and
  // bounds, found by the traversal, rewritten after it. `assign` is null for a declaration: the assignment of its
  // initialiser to the variable is made when it is rewritten (`int x = e;` -> `int x = (x = e, markers, x);`).
  struct PendingPair {
    Stmt** slot;
    Expr* assign;
    Expr* lhs;
    std::vector<Expr*> others;  // the scalar-pairs operands kept (finish_pairs), in the order of their sites
    int old_value = -1;         // the index in others of the lvalue's value before the assignment (null there)
    unsigned first = 0;         // the site (state.pairs) of others[0]
    std::vector<unsigned> values;  // float-kinds and bounds sites (state.values) of the value assigned
    // scalar-pairs: the site's lvalue fields, and every other operand that may be compared with it (the
    // per-function bound, finish_pairs, decides which are kept).
    std::string text, scope, form;
    bool is_signed = false;
    SourceLocation loc;
    const VarDecl* assigned = nullptr;  // the variable assigned, when the lvalue is one
    QualType canonical;                 // the lvalue's type, unqualified
    std::vector<PairOperand> candidates;
  };

 public:
  BodyVisitor(ASTContext& context, UnitState& state, FunctionDecl*& marker, FunctionDecl*& pairs_marker,
              FunctionDecl*& value_marker, FunctionDecl*& atom_marker)
      : context_(context), state_(state), marker_(marker), pairs_marker_(pairs_marker),
        value_marker_(value_marker), atom_marker_(atom_marker) {
    pairs_ = state.enabled(SchemeId::kScalarPairs);
    bounds_ = state.enabled(SchemeId::kBounds);
    float_kinds_ = state.enabled(SchemeId::kFloatKinds);
    atoms_ = state.enabled(SchemeId::kAtoms);
  }

  bool TraverseLambdaExpr(LambdaExpr* lambda) {
    // A consteval lambda only runs in the compiler. (Lambdas are implicitly constexpr when they can be, but the
    // enclosing body is complete when it is instrumented: nothing evaluates them at compile time any more.)
    if (lambda->getCallOperator()->isConsteval()) return true;
    // The enclosing function's variables are not the lambda's (unless captured): its own scopes start afresh.
    std::vector<std::vector<VarDecl*>> outer;
    outer.swap(scopes_);
    scopes_.emplace_back();
    for (ParmVarDecl* p : lambda->getCallOperator()->parameters()) scopes_.back().push_back(p);
    if (pairs_ && lambda->getBody()) initialisation_.analyse(lambda->getCallOperator(), lambda->getBody(), context_);
    bool go_on = RecursiveASTVisitor::TraverseLambdaExpr(lambda);
    scopes_.swap(outer);
    return go_on;
  }

  // Functions and classes declared inside the body come to the consumer on their own: walking them here too
  // would wrap their conditions twice.
  bool TraverseDecl(Decl* d) {
    if (d && (isa<FunctionDecl>(d) || isa<RecordDecl>(d) || isa<FunctionTemplateDecl>(d) ||
              isa<ClassTemplateDecl>(d)))
      return true;
    return RecursiveASTVisitor::TraverseDecl(d);
  }

  bool VisitIfStmt(IfStmt* s) {
    if (!s->isConstexpr() && !s->isConsteval()) condition(s, s->getCond());
    return true;
  }
  bool VisitWhileStmt(WhileStmt* s) { return condition(s, s->getCond()); }
  bool VisitDoStmt(DoStmt* s) { return condition(s, s->getCond()); }
  bool VisitForStmt(ForStmt* s) { return condition(s, s->getCond()); }
  bool VisitConditionalOperator(ConditionalOperator* e) { return condition(e, e->getCond()); }
  bool VisitBinaryOperator(BinaryOperator* e) {
    if (e->isLogicalOp()) {
      condition(e, e->getLHS());
      condition(e, e->getRHS());
    }
    return true;
  }

  bool VisitCallExpr(CallExpr* call) {
    if (context_.getSourceManager().isInSystemHeader(call->getExprLoc())) return true;
    if (call->isTypeDependent()) return true;
    if (const FunctionDecl* f = call->getDirectCallee();
        f && (f == marker_ || f == pairs_marker_ || f == value_marker_ || f == atom_marker_))
      return true;
    if (state_.enabled(SchemeId::kGObjectUnref)) unref(call);
    if (!state_.enabled(SchemeId::kReturns)) return true;
    QualType type = call->getCallReturnType(context_).getCanonicalType();
    if (type.isNull() || !(type->isIntegralOrEnumerationType() || type->isAnyPointerType())) return true;
    if (type->isIntegralOrEnumerationType() && context_.getTypeSize(type) > 64) return true;
    const SourceManager& sm = context_.getSourceManager();
    PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(call->getExprLoc()));
    if (where.isInvalid()) return true;
    CallSite site;
    const Expr* callee = call->getCallee()->IgnoreParenImpCasts();
    const FunctionDecl* direct = call->getDirectCallee();
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getOperator() == OO_Call)
      site.text = source_text(op->getArg(0), context_);  // the object called, as written: `is_odd` in is_odd(x)
    else if (isa<CXXOperatorCallExpr>(call) && direct)
      site.text = direct->getNameAsString();  // operator==: the operator's name
    else if (direct && written_by_macro(callee->getExprLoc(), context_.getSourceManager()))
      site.text = direct->getNameAsString();  // a call a macro makes (isalpha's): the function it calls
    else
      site.text = source_text(callee, context_);
    site.is_signed = type->isSignedIntegerOrEnumerationType();
    if (direct && !isa<CXXConstructorDecl>(direct) && !isa<CXXDestructorDecl>(direct)) {
      if (!context_.getLangOpts().CPlusPlus) {
        site.callee_name = direct->getName().str();
      } else {
        std::unique_ptr<MangleContext> mangle(context_.createMangleContext());
        llvm::raw_string_ostream out(site.callee_name);
        if (mangle->shouldMangleDeclName(direct))
          mangle->mangleName(GlobalDecl(direct), out);
        else
          out << direct->getName();
      }
    }
    auto& sites = state_.calls[{llvm::sys::path::filename(where.getFilename()).str(), where.getLine(),
                                where.getColumn()}];
    for (const CallSite& known : sites)
      if (known.text == site.text && known.callee_name == site.callee_name) return true;
    sites.push_back(std::move(site));
    return true;
  }

  // Wraps every condition found, once the traversal is over (the wrapping changes the tree being walked).
  // Assignments first: a condition that is an assignment (`while ((n = next()))`) then wraps the rewritten one.
  void wrap_all() {
    // Innermost first (the reverse of the order found): a declaration's initialiser may itself be an
    // instrumented assignment held in the same slot (`int y = x = 3;` in C), and each rewrite reads its slot now.
    finish_pairs();
    for (auto p = pending_pairs_.rbegin(); p != pending_pairs_.rend(); ++p)
      if (!p->others.empty() || !p->values.empty()) *p->slot = wrap_pairs(*p);
    pending_pairs_.clear();
    for (auto& [slot, site] : pending_atoms_) *slot = wrap_atom(cast<Expr>(*slot), site);
    pending_atoms_.clear();
    for (auto& [slot, site] : pending_) *slot = wrap(cast<Expr>(*slot), std::move(site));
    pending_.clear();
  }

  /// The function's parameters are in scope (and initialised) at every assignment of its body.
  void start(FunctionDecl* f, const std::vector<VarDecl*>* globals) {
    globals_ = globals;
    scopes_.assign(1, {});
    for (ParmVarDecl* p : f->parameters()) scopes_.back().push_back(p);
    constants_.clear();
    constant_counts_.clear();
    if (!pairs_ || !f->getBody()) return;
    initialisation_.analyse(f, f->getBody(), context_);
    if (state_.compare_constants) collect_constants(f->getBody());
    // 0 always (the original's constants module starts from it): the bound drops it after every written one.
    llvm::APSInt zero(llvm::APInt(64, 0), false);
    for (const llvm::APSInt& c : constants_)
      if (llvm::APSInt::isSameValue(c, zero)) return;
    constants_.push_back(zero);
    constant_counts_.push_back(UINT_MAX);
  }

  // ----- scalar-pairs: scopes, so that each assignment knows the variables it may be compared with.
  bool TraverseCompoundStmt(CompoundStmt* s) {
    return scoped([&] { return RecursiveASTVisitor::TraverseCompoundStmt(s); });
  }
  bool TraverseForStmt(ForStmt* s) { return scoped([&] { return RecursiveASTVisitor::TraverseForStmt(s); }); }
  bool TraverseIfStmt(IfStmt* s) { return scoped([&] { return RecursiveASTVisitor::TraverseIfStmt(s); }); }
  bool TraverseWhileStmt(WhileStmt* s) { return scoped([&] { return RecursiveASTVisitor::TraverseWhileStmt(s); }); }
  bool TraverseSwitchStmt(SwitchStmt* s) { return scoped([&] { return RecursiveASTVisitor::TraverseSwitchStmt(s); }); }
  bool TraverseCXXForRangeStmt(CXXForRangeStmt* s) {
    return scoped([&] { return RecursiveASTVisitor::TraverseCXXForRangeStmt(s); });
  }

  bool VisitVarDecl(VarDecl* v) {
    // Every local the program declares is in scope (and may hide another); it is compared only where it is
    // certainly initialised (initialisation_: a read of an indeterminate value would be undefined behaviour the
    // program did not have). The compiler's own (a range-based for's iterators) are not the program's.
    if (!scopes_.empty() && v->isLocalVarDecl() && !isa<ParmVarDecl>(v) && !v->isImplicit()) {
      scopes_.back().push_back(v);
      if (v->hasInit()) declaration(v);
    }
    return true;
  }

  // A parent is visited before its children: it notes where each assignment among them is held (and whether
  // its value is used); the assignment, visited in its turn (after the declarations before it), is then
  // instrumented with the variables in scope.
  bool VisitStmt(Stmt* s) {
    if (!pairs_ && !bounds_ && !float_kinds_ && !atoms_) return true;
    if (atoms_)
      for (Stmt*& child : s->children())
        if (child) child_slots_[child] = &child;
    if (auto slot = slots_.find(s); slot != slots_.end()) {
      if (auto* assign = dyn_cast<BinaryOperator>(s)) {
        if (pairs_ || bounds_ || float_kinds_) assignment(slot->second.slot, assign, assign->getLHS());
        if (atoms_) atom(assign->getLHS(), "write");
      } else if (auto* step = dyn_cast<UnaryOperator>(s)) {
        // x++ yields the old value, which the rewriting does not keep: only where the value is not used.
        if ((pairs_ || bounds_ || float_kinds_) && (step->isPrefix() || slot->second.discarded))
          assignment(slot->second.slot, step, step->getSubExpr());
        if (atoms_) atom(step->getSubExpr(), "write");
      }
    }
    for (Stmt*& child : s->children()) {
      if (auto* assign = dyn_cast_or_null<BinaryOperator>(child); assign && assign->isAssignmentOp())
        slots_[assign] = {&child, false};
      else if (auto* step = dyn_cast_or_null<UnaryOperator>(child); step && step->isIncrementDecrementOp())
        slots_[step] = {&child, discarded(s, child)};
      else if (auto* comma = dyn_cast_or_null<BinaryOperator>(child);
               (isa_and_nonnull<ParenExpr>(child) || (comma && comma->getOpcode() == BO_Comma)) && discarded(s, child))
        discarded_.insert(child);  // the value of its (right) operand is not used either: `i++, j--`, `(i++)`
    }
    return true;
  }

  // atoms: every read of shared memory (an lvalue converted to its value).
  bool VisitImplicitCastExpr(ImplicitCastExpr* cast) {
    if (atoms_ && cast->getCastKind() == CK_LValueToRValue) atom(cast->getSubExpr(), "read");
    return true;
  }

 private:
  // A condition of `parent` is a site unless it is itself && or || (then its operands are the sites), or a
  // constant (clang folds those and generates no branch), or of a type that is not a scalar we can test.
  bool condition(Stmt* parent, Expr* cond) {
    if (!cond || !state_.enabled(SchemeId::kBranches) || is_short_circuit(cond)) return true;
    if (context_.getSourceManager().isInSystemHeader(cond->getExprLoc())) return true;
    if (const auto* call = dyn_cast<CallExpr>(cond); call && marker_ && call->getDirectCallee() == marker_)
      return true;  // wrapped already
    if (cond->isValueDependent() || cond->isTypeDependent() || !cond->isPRValue()) return true;
    QualType type = cond->getType().getCanonicalType();
    if (!(type->isBooleanType() || type->isIntegralOrEnumerationType() || type->isAnyPointerType() ||
          type->isRealFloatingType()) ||
        type->isAtomicType())
      return true;
    bool constant = false;
    if (cond->EvaluateAsBooleanCondition(constant, context_)) return true;
    for (Stmt*& child : parent->children()) {
      if (child == cond) {
        // The text now: an assignment in the condition may be rewritten (scalar-pairs) before the wrapping.
        const SourceManager& sm = context_.getSourceManager();
        PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(cond->getBeginLoc()));
        BranchSite site{where.isValid() ? where.getFilename() : "", where.isValid() ? where.getLine() : 0,
                        source_text(cond, context_)};
        pending_.push_back({&child, std::move(site)});
        break;
      }
    }
    return true;
  }

  FunctionDecl* marker() {
    if (marker_) return marker_;
    ASTContext& c = context_;
    FunctionProtoType::ExtProtoInfo info;
    if (c.getLangOpts().CPlusPlus) info.ExceptionSpec.Type = EST_BasicNoexcept;
    QualType params[] = {c.IntTy, c.BoolTy};
    QualType type = c.getFunctionType(c.BoolTy, params, info);
    marker_ = FunctionDecl::Create(c, c.getTranslationUnitDecl(), SourceLocation(), SourceLocation(),
                                   &c.Idents.get(kBranchMarker), type, c.getTrivialTypeSourceInfo(type), SC_Extern);
    SmallVector<ParmVarDecl*, 2> parameters;
    for (QualType p : params)
      parameters.push_back(ParmVarDecl::Create(c, marker_, SourceLocation(), SourceLocation(), nullptr, p,
                                               c.getTrivialTypeSourceInfo(p), SC_None, nullptr));
    marker_->setParams(parameters);
    marker_->setImplicit();
    // The same symbol in C and C++ (no mangling), and a call, never an invoke.
    marker_->addAttr(AsmLabelAttr::CreateImplicit(c, kBranchMarker, /*LiteralLabel=*/true));
    marker_->addAttr(NoThrowAttr::CreateImplicit(c));
    return marker_;
  }

  Expr* wrap(Expr* cond, BranchSite site) {
    ASTContext& c = context_;
    SourceLocation loc = cond->getBeginLoc();
    unsigned index = static_cast<unsigned>(state_.branches.size());
    state_.branches.push_back(std::move(site));

    QualType type = cond->getType().getCanonicalType();
    Expr* value = cond;
    if (!type->isBooleanType()) {
      CastKind kind = type->isAnyPointerType()    ? CK_PointerToBoolean
                      : type->isRealFloatingType() ? CK_FloatingToBoolean
                                                   : CK_IntegralToBoolean;
      value = ImplicitCastExpr::Create(c, c.BoolTy, kind, cond, nullptr, VK_PRValue, FPOptionsOverride());
    }
    FunctionDecl* function = marker();
    ExprValueKind function_kind = c.getLangOpts().CPlusPlus ? VK_LValue : VK_PRValue;
    Expr* reference = DeclRefExpr::Create(c, NestedNameSpecifierLoc(), SourceLocation(), function, false, loc,
                                          function->getType(), function_kind);
    Expr* pointer = ImplicitCastExpr::Create(c, c.getPointerType(function->getType()), CK_FunctionToPointerDecay,
                                             reference, nullptr, VK_PRValue, FPOptionsOverride());
    Expr* number = IntegerLiteral::Create(c, llvm::APInt(32, index), c.IntTy, loc);
    Expr* args[] = {number, value};
    return CallExpr::Create(c, pointer, args, c.BoolTy, VK_PRValue, cond->getEndLoc(), FPOptionsOverride());
  }

  // Whether `child`'s value is unused: a statement of its own, a for's increment, the left of a comma (or its
  // right, when the comma's own value is unused), a cast to void.
  bool discarded(Stmt* parent, Stmt* child) const {
    if (auto* comma = dyn_cast<BinaryOperator>(parent))
      return comma->getOpcode() == BO_Comma && (comma->getLHS() == child || discarded_.count(comma));
    if (isa<ParenExpr>(parent)) return discarded_.count(parent);
    if (auto* cast = dyn_cast<CastExpr>(parent)) return cast->getType()->isVoidType();
    if (isa<Expr>(parent)) return false;
    if (auto* f = dyn_cast<ForStmt>(parent)) return child == f->getInc() || child == f->getBody();
    if (auto* i = dyn_cast<IfStmt>(parent)) return child == i->getThen() || child == i->getElse();
    if (auto* w = dyn_cast<WhileStmt>(parent)) return child == w->getBody();
    if (auto* d = dyn_cast<DoStmt>(parent)) return child == d->getBody();
    if (auto* sw = dyn_cast<SwitchStmt>(parent)) return child == sw->getBody();
    return isa<CompoundStmt, LabelStmt, CaseStmt, DefaultStmt, AttributedStmt>(parent);
  }

  // atoms: an lvalue that may access shared, mutable memory: a global (not thread-local) or memory reached
  // through a pointer, not const, not a bit-field (its address cannot be taken).
  bool shared(const Expr* e) const {
    e = e->IgnoreParens();
    if (const auto* ref = dyn_cast<DeclRefExpr>(e)) {
      const auto* v = dyn_cast<VarDecl>(ref->getDecl());
      return v && v->hasGlobalStorage() && v->getTLSKind() == VarDecl::TLS_None && !v->getType()->isReferenceType();
    }
    if (const auto* u = dyn_cast<UnaryOperator>(e)) return u->getOpcode() == UO_Deref;
    if (const auto* member = dyn_cast<MemberExpr>(e))
      return isa<FieldDecl>(member->getMemberDecl()) && (member->isArrow() || shared(member->getBase()));
    if (const auto* index = dyn_cast<ArraySubscriptExpr>(e)) {
      const Expr* base = index->getBase()->IgnoreParenImpCasts();
      return !base->getType()->isArrayType() || shared(base);
    }
    return false;
  }

  void atom(Expr* lvalue, const char* access) {
    if (!lvalue->isGLValue() || lvalue->refersToBitField() || lvalue->isTypeDependent() ||
        lvalue->isValueDependent() || lvalue->getType().isConstQualified() || lvalue->getType()->isFunctionType() ||
        lvalue->getType()->isArrayType() || !shared(lvalue))
      return;
    const SourceManager& sm = context_.getSourceManager();
    if (sm.isInSystemHeader(lvalue->getExprLoc())) return;
    // The slot of the lvalue in its parent: its address goes through the marker, the access through the result.
    auto slot = child_slots_.find(lvalue);
    if (slot == child_slots_.end()) return;
    for (const auto& [known, index] : pending_atoms_)
      if (known == slot->second) return;  // one access, one site (an lvalue both read and written: the write)
    unsigned index = static_cast<unsigned>(state_.values.size());
    state_.values.push_back({SchemeId::kAtoms, {field_text(lvalue), access}, false, 0});
    pending_atoms_.push_back({slot->second, index});
  }

  std::string field_text(const Expr* e) {
    std::string text = source_text(e, context_);
    return text.empty() ? "?" : text;
  }

  // g-object-unref: a call of GLib's g_object_unref(object), keyed as the returns scheme keys calls.
  void unref(CallExpr* call) {
    const FunctionDecl* f = call->getDirectCallee();
    if (!f || f->getName() != "g_object_unref" || call->getNumArgs() != 1 || !f->isExternC()) return;
    const SourceManager& sm = context_.getSourceManager();
    PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(call->getExprLoc()));
    if (where.isInvalid()) return;
    state_.unrefs[{llvm::sys::path::filename(where.getFilename()).str(), where.getLine(), where.getColumn()}] =
        source_text(call->getArg(0), context_);
  }

  // A local declared with an initialiser is an assignment of it to the variable (as CIL makes it).
  void declaration(VarDecl* v) {
    if (!v->hasLocalStorage() || v->isConstexpr() || v->getType().isConstQualified() || v->isCXXForRangeDecl() ||
        v->isImplicit() || v->getType()->isReferenceType() || v->isInvalidDecl() || v->getType()->isDependentType())
      return;
    Expr* init = v->getInit();
    if (!init || init->isTypeDependent() || init->isValueDependent() || !init->isPRValue() ||
        isa<InitListExpr, ParenListExpr, CXXConstructExpr>(init->IgnoreImplicit()))
      return;
    if (!context_.hasSameUnqualifiedType(init->getType(), v->getType())) return;
    if (!pairs_ && !bounds_ && !float_kinds_) return;
    Expr* lhs = reference(v, v->getLocation());
    assignment(v->getInitAddress(), nullptr, lhs, v);
  }

  template <typename F>
  bool scoped(F traverse) {
    scopes_.emplace_back();
    bool go_on = traverse();
    scopes_.pop_back();
    return go_on;
  }

  // The integer constants written in the function, each value once, in order of appearance, and how many times
  // each is written (the per-function bound drops the rarest first).
  void collect_constants(Stmt* body) {
    struct Finder : RecursiveASTVisitor<Finder> {
      std::vector<llvm::APSInt> values;
      std::vector<unsigned> counts;
      bool VisitIntegerLiteral(IntegerLiteral* literal) {
        llvm::APSInt v(literal->getValue(), literal->getType()->isUnsignedIntegerType());
        for (size_t i = 0; i < values.size(); ++i)
          if (llvm::APSInt::isSameValue(values[i], v)) {
            ++counts[i];
            return true;
          }
        values.push_back(v);
        counts.push_back(1);
        return true;
      }
      bool TraverseDecl(Decl* d) {
        return isa_and_nonnull<FunctionDecl, RecordDecl>(d) || RecursiveASTVisitor::TraverseDecl(d);
      }
    } finder;
    finder.TraverseStmt(body);
    constants_ = std::move(finder.values);
    constant_counts_ = std::move(finder.counts);
  }

  static bool pair_type(QualType type) {
    if (type.isNull() || type.isVolatileQualified() || type->isAtomicType()) return false;
    type = type.getCanonicalType();
    return (type->isIntegralOrEnumerationType() && !type->isBooleanType()) || type->isPointerType();
  }

  // The lvalue's kind, the sampler manual's two words: local/global/mem and direct/field/index (a C++
  // reference names memory elsewhere: mem).
  static std::pair<std::string, std::string> lvalue_kind(const Expr* lvalue) {
    auto scope_of = [](const Expr* base) -> std::string {
      if (const auto* ref = dyn_cast<DeclRefExpr>(base->IgnoreParenImpCasts()))
        if (const auto* v = dyn_cast<VarDecl>(ref->getDecl()); v && !v->getType()->isReferenceType())
          return v->hasLocalStorage() ? "local" : "global";
      return "mem";
    };
    const Expr* e = lvalue->IgnoreParens();
    if (isa<DeclRefExpr>(e)) return {scope_of(e), "direct"};
    if (const auto* member = dyn_cast<MemberExpr>(e))
      return {member->isArrow() ? "mem" : scope_of(member->getBase()), "field"};
    if (const auto* index = dyn_cast<ArraySubscriptExpr>(e)) {
      const Expr* base = index->getBase()->IgnoreParenImpCasts();
      return {base->getType()->isArrayType() ? scope_of(base) : "mem", "index"};
    }
    return {"mem", "direct"};
  }

  static bool float_type(QualType type) {
    if (type.isNull() || type.isVolatileQualified() || type->isAtomicType()) return false;
    const auto* builtin = dyn_cast<BuiltinType>(type.getCanonicalType());
    return builtin && (builtin->getKind() == BuiltinType::Float || builtin->getKind() == BuiltinType::Double ||
                       builtin->getKind() == BuiltinType::LongDouble);
  }

  // The SAMPLER_BOUND_* value of an integer or pointer type (abi.h), 0 for one wider than 64 bits.
  unsigned char bound_type(QualType canonical) const {
    if (canonical->isPointerType()) return SAMPLER_BOUND_POINTER;
    bool is_signed = canonical->isSignedIntegerOrEnumerationType();
    switch (context_.getTypeSize(canonical)) {
      case 8: return is_signed ? SAMPLER_BOUND_I8 : SAMPLER_BOUND_U8;
      case 16: return is_signed ? SAMPLER_BOUND_I16 : SAMPLER_BOUND_U16;
      case 32: return is_signed ? SAMPLER_BOUND_I32 : SAMPLER_BOUND_U32;
      case 64: return is_signed ? SAMPLER_BOUND_I64 : SAMPLER_BOUND_U64;
      default: return 0;
    }
  }

  // An assignment `op` (=, +=, ..., ++, --, or null for the initialiser of `declared`) to `lhs`, held in `slot`:
  // its scalar-pairs, bounds and float-kinds sites.
  void assignment(Stmt** slot, Expr* op, Expr* lhs, const VarDecl* declared = nullptr) {
    const SourceManager& sm = context_.getSourceManager();
    SourceLocation loc = op ? op->getExprLoc() : declared->getLocation();
    if (sm.isInSystemHeader(loc) || lhs->isTypeDependent() || lhs->isValueDependent()) return;
    if (op && (op->isTypeDependent() || op->isValueDependent())) return;
    QualType type = lhs->getType();
    // The assigned value is read again after the assignment: the lvalue must have no side effects.
    if (lhs->HasSideEffects(context_) || lhs->refersToBitField()) return;
    bool integral = pair_type(type), floating = float_type(type);
    if (!integral && !floating) return;
    QualType canonical = type.getCanonicalType().getUnqualifiedType();
    const VarDecl* assigned = declared;
    if (const auto* ref = dyn_cast<DeclRefExpr>(lhs->IgnoreParens())) assigned = dyn_cast<VarDecl>(ref->getDecl());
    PendingPair pending{slot, op, lhs};
    auto [scope, form] = lvalue_kind(lhs);
    std::string text = declared ? declared->getNameAsString() : source_text(lhs, context_);
    bool is_signed = canonical->isSignedIntegerOrEnumerationType();
    if (floating && float_kinds_) {
      pending.values.push_back(static_cast<unsigned>(state_.values.size()));
      state_.values.push_back({SchemeId::kFloatKinds, {field_text_of(text), scope, form}, false, 0});
    }
    if (integral && bounds_ && bound_type(canonical) != 0) {
      pending.values.push_back(static_cast<unsigned>(state_.values.size()));
      state_.values.push_back(
          {SchemeId::kBounds, {field_text_of(text), scope, form}, is_signed, bound_type(canonical)});
    }
    // scalar-pairs: assignments to a named variable directly, and the others only when asked for (the
    // original's assign-into-field, assign-into-index, assign-across-pointer).
    bool pairs_lvalue = (scope != "mem" || state_.assign_across_pointer) &&
                        (form != "field" || state_.assign_into_field) && (form != "index" || state_.assign_into_index);
    if (integral && pairs_ && pairs_lvalue) {
      pending.text = std::move(text);
      pending.scope = std::move(scope);
      pending.form = std::move(form);
      pending.is_signed = is_signed;
      pending.loc = loc;
      pending.assigned = assigned;
      pending.canonical = canonical;
      pending.candidates = pair_operands(op, declared, canonical);
    }
    if (!pending.candidates.empty() || !pending.values.empty()) pending_pairs_.push_back(std::move(pending));
  }

  // The other operands of the scalar-pairs sites of an assignment `op` (or the initialiser of `declared`) to an
  // lvalue of type `canonical`, in the order of their sites: the variables in scope
  // (parameters, then locals, outer scopes first) certainly initialised there, the globals declared before the
  // function, then the constants (0, or the function's with -fsampler-compare-constants) or NULL for a pointer.
  // The variable assigned is among them, read before the assignment (its old value: `++n` against n), unless it
  // is being declared. Left out, because the comparison's outcome is fixed at compile time, so that its
  // predicates can never predict a bug (docs/decisions.md, "scalar-pairs leaves out pairs that cannot predict"):
  //  - every constant, when the value assigned is itself a constant (`x = 0;`, `int n = sizeof buf;`, `p = "x";`);
  //  - a constant outside the range of the lvalue's type, as the site compares them (`c` an unsigned char
  //    against 70000: always less; at the range's ends, as `c` against 255, two outcomes remain: kept);
  //  - the variable copied (`x = y;`, `int x = y;`: always equal);
  //  - a variable hidden by an inner one of the same name (not in scope by that name; its site would have the
  //    text of the visible one) and a global declared again (one variable, one site).
  std::vector<PairOperand> pair_operands(Expr* op, const VarDecl* declared, QualType canonical) {
    const Expr* value = nullptr;
    if (declared)
      value = declared->getInit();
    else if (const auto* store = dyn_cast_or_null<BinaryOperator>(op); store && store->getOpcode() == BO_Assign)
      value = store->getRHS();
    const VarDecl* copied = nullptr;
    bool constant_value = false;
    if (value && !value->isValueDependent() && !value->isTypeDependent()) {
      if (const auto* ref = dyn_cast<DeclRefExpr>(value->IgnoreParenImpCasts()))
        if (const auto* v = dyn_cast<VarDecl>(ref->getDecl())) copied = v->getCanonicalDecl();
      constant_value = value->isEvaluatable(context_);
    }
    const void* point = declared ? static_cast<const void*>(declared) : static_cast<const void*>(op);
    auto same = [&](const VarDecl* v) {
      return v != declared && v->getCanonicalDecl() != copied && !v->isImplicit() && pair_type(v->getType()) &&
             !v->getType()->isReferenceType() &&
             context_.hasSameType(v->getType().getCanonicalType().getUnqualifiedType(), canonical);
    };
    // The names of the locals in scope, innermost first: the variable each name refers to here.
    std::map<std::string, const VarDecl*> visible;
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
      for (auto v = scope->rbegin(); v != scope->rend(); ++v) visible.emplace((*v)->getNameAsString(), *v);
    auto hidden = [&](const VarDecl* v) {
      std::string name = v->getNameAsString();
      if (name.empty()) return false;  // an unnamed parameter: hides nothing, hidden by nothing
      auto found = visible.find(name);
      return found != visible.end() && found->second != v;
    };
    std::vector<PairOperand> operands;
    for (const auto& scope_vars : scopes_)
      for (VarDecl* v : scope_vars)
        if (same(v) && !hidden(v) && initialisation_.certain(point, v)) operands.push_back({PairOperand::Local, v, 0});
    if (globals_) {
      std::set<const VarDecl*> seen;
      for (VarDecl* v : *globals_)
        if (same(v) && !hidden(v) && seen.insert(v->getCanonicalDecl()).second)
          operands.push_back({PairOperand::Global, v, 0});
    }
    if (canonical->isIntegralOrEnumerationType() && !constant_value)
      for (unsigned i = 0; i < constants_.size(); ++i)
        if (!out_of_range(constants_[i], canonical)) operands.push_back({PairOperand::Constant, nullptr, i});
    if (canonical->isPointerType() && !constant_value) operands.push_back({PairOperand::Null, nullptr, 0});
    return operands;
  }

  // Whether every value of `type` compares the same way with `constant`, both widened to 64 bits as the site
  // compares them (as signed values if the type is signed): the constant lies outside the type's range.
  bool out_of_range(const llvm::APSInt& constant, QualType type) const {
    unsigned bits = context_.getIntWidth(type);
    if (bits >= 64) return false;
    llvm::APInt wide = constant.isUnsigned() ? constant.zextOrTrunc(64) : constant.sextOrTrunc(64);
    return type->isSignedIntegerOrEnumerationType() ? !wide.isSignedIntN(bits) : !wide.isIntN(bits);
  }

  // The scalar-pairs sites of the function, once it has been walked: every candidate operand, unless the
  // function has more than the bound (-fsampler-max-pairs, UnitState::max_pairs; 0: none). Then, until the rest
  // fits: the constants written least often in the function first, all constants of one count at a time (a
  // constant written once, such as a line number of an assertion macro or a case label of a generated parser,
  // is less likely a value that means something to the program than one written many times); then the
  // globals; and if the variables in scope alone are still too many, the assignments in source order keep
  // theirs until the bound is reached (docs/instrumenting.md section 0).
  void finish_pairs() {
    size_t total = 0, global_uses = 0;
    std::vector<size_t> uses(constants_.size());
    for (const PendingPair& p : pending_pairs_)
      for (const PairOperand& o : p.candidates) {
        ++total;
        if (o.kind == PairOperand::Constant) ++uses[o.constant];
        if (o.kind == PairOperand::Global) ++global_uses;
      }
    std::vector<bool> keep_constant(constants_.size(), true);
    bool keep_globals = true;
    size_t limit = state_.max_pairs;
    if (limit != 0 && total > limit) {
      std::set<unsigned> counts(constant_counts_.begin(), constant_counts_.end());
      for (auto count = counts.begin(); count != counts.end() && total > limit; ++count)
        for (unsigned i = 0; i < constants_.size(); ++i)
          if (constant_counts_[i] == *count) {
            keep_constant[i] = false;
            total -= uses[i];
          }
      if (total > limit) keep_globals = false;
    }
    size_t budget = limit != 0 ? limit : SIZE_MAX;
    for (PendingPair& p : pending_pairs_) {
      std::vector<const PairOperand*> kept;
      for (const PairOperand& o : p.candidates)
        if (o.kind == PairOperand::Local || o.kind == PairOperand::Null ||
            (o.kind == PairOperand::Global && keep_globals) ||
            (o.kind == PairOperand::Constant && keep_constant[o.constant]))
          kept.push_back(&o);
      if (kept.size() > budget) budget = 0;  // the bound is reached: no pairs for this or any later assignment
      if (budget == 0) continue;
      budget -= kept.size();
      p.first = static_cast<unsigned>(state_.pairs.size());
      for (const PairOperand* o : kept) {
        if (o->kind == PairOperand::Constant) {
          const llvm::APSInt& constant = constants_[o->constant];
          llvm::SmallString<24> digits;
          constant.toString(digits);
          QualType literal_type = constant.isUnsigned() ? context_.UnsignedLongLongTy : context_.LongLongTy;
          llvm::APInt wide = constant.isUnsigned() ? constant.zextOrTrunc(64) : constant.sextOrTrunc(64);
          state_.pairs.push_back({p.text, p.scope, p.form, digits.str().str(), "const", p.is_signed});
          p.others.push_back(IntegerLiteral::Create(context_, wide, literal_type, p.loc));
        } else if (o->kind == PairOperand::Null) {
          state_.pairs.push_back({p.text, p.scope, p.form, "NULL", "const", p.is_signed});
          Expr* zero = IntegerLiteral::Create(context_, llvm::APInt(context_.getIntWidth(context_.IntTy), 0),
                                              context_.IntTy, p.loc);
          p.others.push_back(ImplicitCastExpr::Create(context_, p.canonical, CK_NullToPointer, zero, nullptr,
                                                      VK_PRValue, FPOptionsOverride()));
        } else if (p.assign && p.assigned && o->variable->getCanonicalDecl() == p.assigned->getCanonicalDecl()) {
          // The variable's own value before the assignment: wrap_pairs reads it first.
          state_.pairs.push_back({p.text, p.scope, p.form, o->variable->getNameAsString(),
                                  o->kind == PairOperand::Local ? "local-init" : "global", p.is_signed});
          p.old_value = static_cast<int>(p.others.size());
          p.others.push_back(nullptr);
        } else {
          state_.pairs.push_back({p.text, p.scope, p.form, o->variable->getNameAsString(),
                                  o->kind == PairOperand::Local ? "local-init" : "global", p.is_signed});
          p.others.push_back(reference(o->variable, p.loc));
        }
      }
    }
  }

  static std::string field_text_of(const std::string& text) { return text.empty() ? "?" : text; }

  Expr* reference(const VarDecl* v, SourceLocation loc) {
    return DeclRefExpr::Create(context_, NestedNameSpecifierLoc(), SourceLocation(), const_cast<VarDecl*>(v), false,
                               loc, v->getType().getNonReferenceType(), VK_LValue);
  }

  // A value as a marker receives it: read, then integers widened to 64 bits (pointers and floating values stay
  // as they are).
  Expr* marker_argument(Expr* e) {
    ASTContext& c = context_;
    QualType type = e->getType().getCanonicalType().getUnqualifiedType();
    if (e->isGLValue()) e = ImplicitCastExpr::Create(c, type, CK_LValueToRValue, e, nullptr, VK_PRValue,
                                                     FPOptionsOverride());
    if (type->isPointerType() || type->isRealFloatingType()) return e;
    QualType wide = type->isSignedIntegerOrEnumerationType() ? c.LongLongTy : c.UnsignedLongLongTy;
    if (c.hasSameType(type, wide)) return e;
    return ImplicitCastExpr::Create(c, wide, CK_IntegralCast, e, nullptr, VK_PRValue, FPOptionsOverride());
  }

  // A marker function declared for this unit: noexcept, with a literal asm label so that its symbol is the same
  // in C and C++ (no mangling) and it is called, never invoked.
  FunctionDecl* make_marker(FunctionDecl*& made, const char* name, QualType result, QualType parameter,
                            bool variadic) {
    if (made) return made;
    ASTContext& c = context_;
    FunctionProtoType::ExtProtoInfo info;
    info.Variadic = variadic;
    if (c.getLangOpts().CPlusPlus) info.ExceptionSpec.Type = EST_BasicNoexcept;
    QualType params[] = {c.IntTy, parameter};
    QualType type = c.getFunctionType(result, llvm::ArrayRef(params, variadic ? 1 : 2), info);
    made = FunctionDecl::Create(c, c.getTranslationUnitDecl(), SourceLocation(), SourceLocation(), &c.Idents.get(name),
                                type, c.getTrivialTypeSourceInfo(type), SC_Extern);
    SmallVector<ParmVarDecl*, 2> parameters;
    for (unsigned i = 0; i < (variadic ? 1u : 2u); ++i)
      parameters.push_back(ParmVarDecl::Create(c, made, SourceLocation(), SourceLocation(), nullptr, params[i],
                                               c.getTrivialTypeSourceInfo(params[i]), SC_None, nullptr));
    made->setParams(parameters);
    made->setImplicit();
    made->addAttr(AsmLabelAttr::CreateImplicit(c, name, /*LiteralLabel=*/true));
    made->addAttr(NoThrowAttr::CreateImplicit(c));
    return made;
  }

  FunctionDecl* pairs_marker() { return make_marker(pairs_marker_, kPairsMarker, context_.VoidTy, QualType(), true); }
  FunctionDecl* value_marker() { return make_marker(value_marker_, kValueMarker, context_.VoidTy, QualType(), true); }
  FunctionDecl* atom_marker() {
    return make_marker(atom_marker_, kAtomMarker, context_.VoidPtrTy, context_.VoidPtrTy, false);
  }

  Expr* call(FunctionDecl* function, std::vector<Expr*> args, SourceLocation loc) {
    ASTContext& c = context_;
    ExprValueKind function_kind = c.getLangOpts().CPlusPlus ? VK_LValue : VK_PRValue;
    Expr* reference = DeclRefExpr::Create(c, NestedNameSpecifierLoc(), SourceLocation(), function, false, loc,
                                          function->getType(), function_kind);
    Expr* pointer = ImplicitCastExpr::Create(c, c.getPointerType(function->getType()), CK_FunctionToPointerDecay,
                                             reference, nullptr, VK_PRValue, FPOptionsOverride());
    return CallExpr::Create(c, pointer, args, function->getReturnType(), VK_PRValue, loc, FPOptionsOverride());
  }

  Expr* site_number(unsigned site, SourceLocation loc) {
    return IntegerLiteral::Create(context_, llvm::APInt(32, site), context_.IntTy, loc);
  }

  // `lhs = e` becomes `(lhs = e, __sampler_pairs_marker(FIRST, lhs, others...), __sampler_value_marker(SITE,
  // lhs)..., lhs)`: the same value and value kind as before (an rvalue in C, the lvalue in C++), with the
  // markers seeing the value just assigned. A declaration's initialiser `e` becomes `(x = e, markers..., x)`.
  // When one of the others is lhs's old value, it is read before the assignment and bound to an opaque value
  // that the pairs marker receives: a PseudoObjectExpr, which clang generates as "evaluate the bound value once,
  // then the rest" (as it does for Objective-C properties); the program's own evaluation is unchanged.
  Expr* wrap_pairs(PendingPair& p) {
    ASTContext& c = context_;
    Expr* assign = p.assign;
    QualType type;
    ExprValueKind kind = VK_PRValue;
    ExprObjectKind object_kind = OK_Ordinary;
    if (assign) {
      type = assign->getType();
      kind = assign->getValueKind();
      object_kind = assign->getObjectKind();
    } else {
      // A declaration: its initialiser (as it is now: it may have been rewritten) assigned to the variable.
      type = p.lhs->getType().getUnqualifiedType();
      assign = BinaryOperator::Create(c, p.lhs, cast<Expr>(*p.slot), BO_Assign, type, VK_PRValue, OK_Ordinary,
                                      p.lhs->getExprLoc(), FPOptionsOverride());
    }
    SourceLocation loc = assign->getExprLoc();
    Expr* sequence = assign;
    auto then = [&](Expr* next) {
      sequence = BinaryOperator::Create(c, sequence, next, BO_Comma, c.VoidTy, VK_PRValue, OK_Ordinary, loc,
                                        FPOptionsOverride());
    };
    OpaqueValueExpr* old_value = nullptr;
    if (p.old_value >= 0) {
      Expr* read = marker_argument(p.lhs);
      old_value = new (c) OpaqueValueExpr(loc, read->getType(), VK_PRValue, OK_Ordinary, read);
    }
    if (!p.others.empty()) {
      std::vector<Expr*> args = {site_number(p.first, loc), marker_argument(p.lhs)};
      for (Expr* other : p.others) args.push_back(other ? marker_argument(other) : old_value);
      then(call(pairs_marker(), std::move(args), loc));
    }
    for (unsigned site : p.values) then(call(value_marker(), {site_number(site, loc), marker_argument(p.lhs)}, loc));
    Expr* result = p.lhs;
    if (kind == VK_PRValue)
      result = ImplicitCastExpr::Create(c, p.lhs->getType().getUnqualifiedType(), CK_LValueToRValue, p.lhs, nullptr,
                                        VK_PRValue, FPOptionsOverride());
    Expr* rewritten =
        BinaryOperator::Create(c, sequence, result, BO_Comma, type, kind, object_kind, loc, FPOptionsOverride());
    if (!old_value) return rewritten;
    Expr* semantics[] = {old_value, rewritten};
    return PseudoObjectExpr::Create(c, assign, semantics, 1);
  }

  // atoms: the lvalue `e` becomes `*(T*) __sampler_atom_marker(SITE, &e)`: its address computed once, handed to
  // the marker, and the access made through what the marker returns (the same address).
  Expr* wrap_atom(Expr* e, unsigned site) {
    ASTContext& c = context_;
    SourceLocation loc = e->getExprLoc();
    QualType pointer = c.getPointerType(e->getType());
    Expr* address = UnaryOperator::Create(c, e, UO_AddrOf, pointer, VK_PRValue, OK_Ordinary, loc, false,
                                          FPOptionsOverride());
    Expr* untyped = ImplicitCastExpr::Create(c, c.VoidPtrTy, CK_BitCast, address, nullptr, VK_PRValue,
                                             FPOptionsOverride());
    Expr* marked = call(atom_marker(), {site_number(site, loc), untyped}, loc);
    Expr* typed = ImplicitCastExpr::Create(c, pointer, CK_BitCast, marked, nullptr, VK_PRValue, FPOptionsOverride());
    return UnaryOperator::Create(c, typed, UO_Deref, e->getType(), VK_LValue, e->getObjectKind(), loc, false,
                                 FPOptionsOverride());
  }

  ASTContext& context_;
  UnitState& state_;
  FunctionDecl*& marker_;
  FunctionDecl*& pairs_marker_;
  FunctionDecl*& value_marker_;
  FunctionDecl*& atom_marker_;
  bool pairs_ = false, bounds_ = false, float_kinds_ = false, atoms_ = false;
  std::vector<std::pair<Stmt**, BranchSite>> pending_;
  std::vector<PendingPair> pending_pairs_;
  std::vector<std::pair<Stmt**, unsigned>> pending_atoms_;
  struct Slot {
    Stmt** slot;
    bool discarded;  // the value of the expression held is not used
  };
  std::map<Stmt*, Slot> slots_;
  std::set<const Stmt*> discarded_;  // comma operators and parentheses whose value is unused
  std::map<Stmt*, Stmt**> child_slots_;  // atoms: where each expression is held
  std::vector<std::vector<VarDecl*>> scopes_;
  Initialisation initialisation_;  // scalar-pairs: which locals may be read where
  std::vector<llvm::APSInt> constants_;
  std::vector<unsigned> constant_counts_;  // how many times each of constants_ is written in the function
  const std::vector<VarDecl*>* globals_ = nullptr;
};

// `#pragma sampler_exclude_function(NAME)`, or the original's `("NAME")`: NAME, a function pattern, is left out of
// the unit, whether the pragma comes before the function's definition or after it. NAME is taken as written
// (macros are not expanded in it). A malformed pragma is ignored, with a warning at its place.
class ExcludeFunctionPragma : public PragmaHandler {
 public:
  ExcludeFunctionPragma() : PragmaHandler("sampler_exclude_function") {}

  void HandlePragma(Preprocessor& pp, PragmaIntroducer, Token&) override {
    Token token;
    pp.LexUnexpandedToken(token);
    std::string name;
    bool well_formed = token.is(tok::l_paren);
    if (well_formed) {
      pp.LexUnexpandedToken(token);
      if (token.is(tok::string_literal)) {
        well_formed = pp.FinishLexStringLiteral(token, name, "pragma sampler_exclude_function", false);
      } else {
        // A name, qualified or not, with wildcards: `codec_*` is the tokens `codec_` and `*`. Two words in a row
        // (`(fast path)`) are not a name.
        bool after_word = false;
        while ((token.getIdentifierInfo() && !after_word) || token.isOneOf(tok::coloncolon, tok::star, tok::tilde)) {
          after_word = token.getIdentifierInfo() != nullptr;
          name += pp.getSpelling(token);
          pp.LexUnexpandedToken(token);
        }
      }
      well_formed = well_formed && !name.empty() && token.is(tok::r_paren);
      if (well_formed) {
        pp.LexUnexpandedToken(token);
        well_formed = token.is(tok::eod);
      }
    }
    if (!well_formed) {
      DiagnosticsEngine& d = pp.getDiagnostics();
      d.Report(token.getLocation(),
               d.getCustomDiagID(DiagnosticsEngine::Warning,
                                 "malformed '#pragma sampler_exclude_function': expected (NAME) or (\"NAME\"); "
                                 "the pragma is ignored"));
      if (token.isNot(tok::eod)) pp.DiscardUntilEndOfDirective();
      return;
    }
    unit_state().pragma_exclusions.push_back(std::move(name));
  }
};

class SitesConsumer : public ASTConsumer {
 public:
  explicit SitesConsumer(CompilerInstance& compiler) : compiler_(compiler) {}

  bool HandleTopLevelDecl(DeclGroupRef group) override {
    for (Decl* d : group) declaration(d);
    return true;
  }
  void HandleInlineFunctionDefinition(FunctionDecl* f) override { function(f); }

  // The unit is complete, and with it the pragmas: the symbols of every function left out go to the pass, which
  // gives them no sites (a function defined before the pragma that names it had its body's sites found already).
  void HandleTranslationUnit(ASTContext& context) override {
    const UnitState& state = unit_state();
    if (state.functions.empty() && state.files.empty() && state.pragma_exclusions.empty()) return;
    if (compiler_.getDiagnostics().hasErrorOccurred()) return;
    struct Walk : RecursiveASTVisitor<Walk> {
      SitesConsumer& consumer;
      const SourceManager& sm;
      Walk(SitesConsumer& c, const SourceManager& s) : consumer(c), sm(s) {}
      bool shouldVisitTemplateInstantiations() const { return true; }
      bool shouldVisitImplicitCode() const { return true; }  // lambdas' classes
      bool TraverseDecl(Decl* d) {
        // The C and C++ libraries' code has no sites anyway.
        if (d && !isa<TranslationUnitDecl>(d) && sm.isInSystemHeader(d->getLocation())) return true;
        return RecursiveASTVisitor::TraverseDecl(d);
      }
      bool VisitFunctionDecl(FunctionDecl* f) {
        if (f->doesThisDeclarationHaveABody() && !f->isDependentContext() && !consumer.chosen(f))
          for (std::string& symbol : consumer.symbols(f)) unit_state().excluded_symbols.insert(std::move(symbol));
        return true;
      }
    } walk(*this, context.getSourceManager());
    walk.TraverseDecl(context.getTranslationUnitDecl());
  }

 private:
  void declaration(Decl* d) {
    if (auto* f = dyn_cast<FunctionDecl>(d)) {
      function(f);
    } else if (auto* v = dyn_cast<VarDecl>(d)) {
      if (v->isFileVarDecl() && !v->isTemplated() && !v->getType()->isDependentType() && !v->isInvalidDecl() &&
          !compiler_.getSourceManager().isInSystemHeader(v->getLocation()))
        globals_.push_back(v);
    } else if (auto* context = dyn_cast<DeclContext>(d);
               context && (isa<NamespaceDecl>(d) || isa<LinkageSpecDecl>(d) || isa<ExportDecl>(d) ||
                           (isa<CXXRecordDecl>(d) && !cast<CXXRecordDecl>(d)->isDependentContext()))) {
      for (Decl* inner : context->decls()) declaration(inner);
    }
  }

  void function(FunctionDecl* f) {
    if (!f->doesThisDeclarationHaveABody() || f->isDependentContext() || f->isInvalidDecl()) return;
    if (compiler_.getDiagnostics().hasErrorOccurred()) return;  // clang generates no code: nothing to do
    if (!seen_.insert(f).second) return;
    const SourceManager& sm = compiler_.getSourceManager();
    if (sm.isInSystemHeader(f->getLocation())) {
      // The C and C++ libraries' inline code is not the program's: no sites (the pass skips their entries too).
      PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(f->getLocation()));
      if (where.isValid()) unit_state().system_files.insert(where.getFilename());
      return;
    }
    // A constexpr function may be evaluated by the compiler later in the unit: its conditions stay as written.
    if (f->isConstexpr()) return;
    if (!chosen(f)) return;  // as plain clang compiles it (a pragma after it: the pass drops its sites)
    BodyVisitor visitor(compiler_.getASTContext(), unit_state(), marker_, pairs_marker_, value_marker_, atom_marker_);
    visitor.start(f, &globals_);
    visitor.TraverseStmt(f->getBody());
    visitor.wrap_all();
  }

  // Whether the user's choice (choice.h, state.h) leaves `f` instrumented. A function in another's body (a
  // lambda's, a local class's) goes with the outermost function that holds it. A function pattern matches the
  // qualified name (`ns::Class::method`; in C the name) or a symbol; a file pattern the file of the definition,
  // named as the compiler names it (after #line).
  bool chosen(const FunctionDecl* f) {
    const UnitState& state = unit_state();
    if (state.functions.empty() && state.files.empty() && state.pragma_exclusions.empty()) return true;
    for (const DeclContext* context = f->getDeclContext(); context; context = context->getParent())
      if (const auto* outer = dyn_cast<FunctionDecl>(context)) f = outer;
    std::string qualified = f->getQualifiedNameAsString();
    std::vector<std::string> symbols = f->isDependentContext() ? std::vector<std::string>() : this->symbols(f);
    auto function_matches = [&](const std::string& pattern) {
      auto matches = [&](const std::string& name) { return wildcard_match(pattern, name); };
      return matches(qualified) || std::any_of(symbols.begin(), symbols.end(), matches);
    };
    if (!state.functions.chosen(function_matches)) return false;
    if (std::any_of(state.pragma_exclusions.begin(), state.pragma_exclusions.end(), function_matches)) return false;
    if (state.files.empty()) return true;
    const SourceManager& sm = compiler_.getSourceManager();
    PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(f->getLocation()));
    std::string path = where.isValid() ? where.getFilename() : "";
    return state.files.chosen([&](const std::string& pattern) { return file_matches(pattern, path); });
  }

  // The symbols clang gives `f` in the module: a constructor's and a destructor's variants, a C function's name.
  std::vector<std::string> symbols(const FunctionDecl* f) {
    if (!names_) names_ = std::make_unique<ASTNameGenerator>(compiler_.getASTContext());
    std::vector<std::string> all = names_->getAllManglings(f);
    all.push_back(names_->getName(f));
    return all;
  }

  CompilerInstance& compiler_;
  std::unique_ptr<ASTNameGenerator> names_;
  FunctionDecl* marker_ = nullptr;
  FunctionDecl* pairs_marker_ = nullptr;
  FunctionDecl* value_marker_ = nullptr;
  FunctionDecl* atom_marker_ = nullptr;
  std::vector<VarDecl*> globals_;  // the program's file-scope variables declared so far (scalar-pairs)
  std::set<const FunctionDecl*> seen_;
};

class SitesAction : public PluginASTAction {
  // sampler-cc's default schemes (sections/scheme_table.h), for a plugin loaded without -fplugin-arg-sampler-schemes=.
  static SchemeSet default_schemes() {
    SchemeSet set;
    for (size_t i = 0; i < kSchemeCount; ++i)
      if (kSchemeTable[i].default_place != 0) set.add(static_cast<SchemeId>(i));
    return set;
  }

 protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance& compiler, StringRef) override {
    UnitState& state = unit_state();
    state = UnitState();
    state.ast_ran = true;
    state.schemes = schemes_;
    state.timestamps = timestamps_;
    state.countdown = countdown_;
    state.max_pairs = max_pairs_;
    state.compare_constants = compare_constants_;
    state.assign_into_field = assign_into_field_;
    state.assign_into_index = assign_into_index_;
    state.assign_across_pointer = assign_across_pointer_;
    state.functions = functions_;
    state.files = files_;
    state.vectorize_loops = compiler.getCodeGenOpts().VectorizeLoop;
    state.interleave_loops = compiler.getCodeGenOpts().UnrollLoops;
    // Here rather than in clang's PragmaHandlerRegistry: only when the unit is compiled, so that `-E` (as in
    // -save-temps) keeps the pragma in its output for the compile that follows.
    compiler.getPreprocessor().AddPragmaHandler(new ExcludeFunctionPragma);
    return std::make_unique<SitesConsumer>(compiler);
  }

  // The drivers' arguments (arguments.h): a value the drivers would refuse is refused here too, in their words,
  // rather than read as a default.
  bool ParseArgs(const CompilerInstance& compiler, const std::vector<std::string>& args) override {
    DiagnosticsEngine& d = compiler.getDiagnostics();
    auto refuse = [&](const std::string& message) {
      d.Report(d.getCustomDiagID(DiagnosticsEngine::Error, "sampler plugin: %0")) << message;
      return false;
    };
    for (const std::string& arg : args) {
      std::string_view value = arg;
      if (value.substr(0, 8) == "schemes=") {
        schemes_ = SchemeSet();
        std::string_view unknown;
        if (!walk_scheme_list(value.substr(8), [&](SchemeId id) { schemes_.add(id); }, unknown))
          return refuse(unknown_scheme(unknown, "-fplugin-arg-sampler-" + arg));
      } else if (value.substr(0, 11) == "timestamps=") {
        timestamps_ = arg.substr(11);
        if (auto error = check_value("-fplugin-arg-sampler-timestamps", timestamps_, kTimestampsValues))
          return refuse(*error);
      } else if (value.substr(0, 10) == "countdown=") {
        countdown_ = arg.substr(10);
        if (auto error = check_value("-fplugin-arg-sampler-countdown", countdown_, kCountdownValues))
          return refuse(*error);
      } else if (value.substr(0, 10) == "max-pairs=") {
        if (auto error = parse_max_pairs("-fplugin-arg-sampler-max-pairs", value.substr(10), max_pairs_))
          return refuse(*error);
      } else if (arg == "compare-constants") {
        compare_constants_ = true;
      } else if (arg == "assign-into-field") {
        assign_into_field_ = true;
      } else if (arg == "assign-into-index") {
        assign_into_index_ = true;
      } else if (arg == "assign-across-pointer") {
        assign_across_pointer_ = true;
      } else if (!add_pattern(arg)) {
        return refuse("unknown argument '" + arg + "'");
      }
    }
    return true;
  }

  ActionType getActionType() override { return AddBeforeMainAction; }

 private:
  // include-function=PATTERN, exclude-function=, include-file=, exclude-file= (choice.h): each adds its pattern;
  // with an empty one it is no argument of the plugin's.
  bool add_pattern(const std::string& arg) {
    const std::tuple<const char*, Choice*, std::vector<std::string> Choice::*> kinds[] = {
        {"include-function=", &functions_, &Choice::include},
        {"exclude-function=", &functions_, &Choice::exclude},
        {"include-file=", &files_, &Choice::include},
        {"exclude-file=", &files_, &Choice::exclude}};
    for (const auto& [prefix, choice, list] : kinds) {
      size_t length = std::strlen(prefix);
      if (arg.size() > length && arg.compare(0, length, prefix) == 0) {
        (choice->*list).push_back(arg.substr(length));
        return true;
      }
    }
    return false;
  }

  SchemeSet schemes_ = default_schemes();
  std::string timestamps_ = "none";
  std::string countdown_ = "region";
  unsigned max_pairs_ = kDefaultMaxPairs;
  bool compare_constants_ = false, assign_into_field_ = false, assign_into_index_ = false,
       assign_across_pointer_ = false;
  Choice functions_, files_;
};

}  // namespace
}  // namespace sampler::plugin

static clang::FrontendPluginRegistry::Add<sampler::plugin::SitesAction> registration(
    "sampler", "find sampler instrumentation sites (the drivers sampler-cc and sampler-c++ load it)");
