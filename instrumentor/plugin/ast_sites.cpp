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
#include <clang/Lex/Lexer.h>
#include <llvm/Support/Path.h>

#include <memory>
#include <set>
#include <sstream>

#include "state.h"

namespace sampler::plugin {

UnitState& unit_state() {
  static UnitState state;
  return state;
}

bool UnitState::enabled(const std::string& scheme) const {
  for (const std::string& s : schemes)
    if (s == scheme) return true;
  return false;
}

std::string one_line(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

namespace {

using namespace clang;

// The source text of an expression as the user wrote it (macro invocations included), or, when its range cannot
// be mapped to one stretch of a file (it starts and ends in different macro expansions), clang's printing of it.
std::string source_text(const Expr* e, ASTContext& context) {
  const SourceManager& sm = context.getSourceManager();
  CharSourceRange range = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(e->getSourceRange()), sm,
                                                   context.getLangOpts());
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

// Finds the sites of one function body (visiting lambdas inside it too) and wraps each branch condition.
class BodyVisitor : public RecursiveASTVisitor<BodyVisitor> {
 public:
  BodyVisitor(ASTContext& context, UnitState& state, FunctionDecl*& marker)
      : context_(context), state_(state), marker_(marker) {}

  bool TraverseLambdaExpr(LambdaExpr* lambda) {
    // A consteval lambda only runs in the compiler. (Lambdas are implicitly constexpr when they can be, but the
    // enclosing body is complete when it is instrumented: nothing evaluates them at compile time any more.)
    if (lambda->getCallOperator()->isConsteval()) return true;
    return RecursiveASTVisitor::TraverseLambdaExpr(lambda);
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
    if (!state_.enabled("returns") || (marker_ && call->getDirectCallee() == marker_) || call->isTypeDependent()) return true;
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
  void wrap_all() {
    for (Stmt** slot : pending_) *slot = wrap(cast<Expr>(*slot));
    pending_.clear();
  }

 private:
  // A condition of `parent` is a site unless it is itself && or || (then its operands are the sites), or a
  // constant (clang folds those and generates no branch), or of a type that is not a scalar we can test.
  bool condition(Stmt* parent, Expr* cond) {
    if (!cond || !state_.enabled("branches") || is_short_circuit(cond)) return true;
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
        pending_.push_back(&child);
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

  Expr* wrap(Expr* cond) {
    ASTContext& c = context_;
    const SourceManager& sm = c.getSourceManager();
    SourceLocation loc = cond->getBeginLoc();
    PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(loc));
    BranchSite site;
    site.file = where.isValid() ? where.getFilename() : "";
    site.line = where.isValid() ? where.getLine() : 0;
    site.text = source_text(cond, c);
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

  ASTContext& context_;
  UnitState& state_;
  FunctionDecl*& marker_;
  std::vector<Stmt**> pending_;
};

class SitesConsumer : public ASTConsumer {
 public:
  explicit SitesConsumer(CompilerInstance& compiler) : compiler_(compiler) {}

  bool HandleTopLevelDecl(DeclGroupRef group) override {
    for (Decl* d : group) declaration(d);
    return true;
  }
  void HandleInlineFunctionDefinition(FunctionDecl* f) override { function(f); }

 private:
  void declaration(Decl* d) {
    if (auto* f = dyn_cast<FunctionDecl>(d)) {
      function(f);
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
    BodyVisitor visitor(compiler_.getASTContext(), unit_state(), marker_);
    visitor.TraverseStmt(f->getBody());
    visitor.wrap_all();
  }

  CompilerInstance& compiler_;
  FunctionDecl* marker_ = nullptr;
  std::set<const FunctionDecl*> seen_;
};

class SitesAction : public PluginASTAction {
 protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance& compiler, StringRef) override {
    UnitState& state = unit_state();
    state = UnitState();
    state.ast_ran = true;
    state.schemes = schemes_;
    state.timestamps = timestamps_;
    return std::make_unique<SitesConsumer>(compiler);
  }

  bool ParseArgs(const CompilerInstance& compiler, const std::vector<std::string>& args) override {
    for (const std::string& arg : args) {
      if (arg.rfind("schemes=", 0) == 0) {
        schemes_.clear();
        std::stringstream list(arg.substr(8));
        for (std::string name; std::getline(list, name, ',');)
          if (!name.empty()) schemes_.push_back(name);
      } else if (arg.rfind("timestamps=", 0) == 0) {
        timestamps_ = arg.substr(11);
      } else {
        DiagnosticsEngine& d = compiler.getDiagnostics();
        d.Report(d.getCustomDiagID(DiagnosticsEngine::Error, "sampler plugin: unknown argument '%0'")) << arg;
        return false;
      }
    }
    return true;
  }

  ActionType getActionType() override { return AddBeforeMainAction; }

 private:
  std::vector<std::string> schemes_ = {"function-entries", "branches", "returns"};
  std::string timestamps_ = "none";
};

}  // namespace
}  // namespace sampler::plugin

static clang::FrontendPluginRegistry::Add<sampler::plugin::SitesAction> registration(
    "sampler", "find sampler instrumentation sites (the drivers sampler-cc and sampler-c++ load it)");
