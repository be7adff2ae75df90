// branches (ast_branches.h).
#include "ast_branches.h"

#include <clang/AST/ExprCXX.h>

#include "ast_text.h"

namespace sampler::plugin::ast {

using namespace clang;

namespace {

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

}  // namespace

void BranchFinder::condition(Stmt* parent, Expr* cond) {
  if (!cond || !in_.state.enabled(SchemeId::kBranches) || is_short_circuit(cond)) return;
  if (in_.ast.getSourceManager().isInSystemHeader(cond->getExprLoc())) return;
  FunctionDecl* marker = in_.markers.decls().branch;
  if (const auto* call = dyn_cast<CallExpr>(cond); call && marker && call->getDirectCallee() == marker)
    return;  // wrapped already
  if (cond->isValueDependent() || cond->isTypeDependent() || !cond->isPRValue()) return;
  QualType type = cond->getType().getCanonicalType();
  if (!(type->isBooleanType() || type->isIntegralOrEnumerationType() || type->isAnyPointerType() ||
        type->isRealFloatingType()) ||
      type->isAtomicType())
    return;
  bool constant = false;
  if (cond->EvaluateAsBooleanCondition(constant, in_.ast)) return;
  for (Stmt*& child : parent->children()) {
    if (child == cond) {
      // The text now: an assignment in the condition may be rewritten (scalar-pairs) before the wrapping.
      const SourceManager& sm = in_.ast.getSourceManager();
      PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(cond->getBeginLoc()));
      BranchSite site{where.isValid() ? where.getFilename() : "", where.isValid() ? where.getLine() : 0,
                      source_text(cond, in_.ast)};
      found_.push_back({&child, std::move(site)});
      break;
    }
  }
}

void BranchFinder::wrap_found() {
  for (auto& [slot, site] : found_) *slot = wrap(cast<Expr>(*slot), std::move(site));
  found_.clear();
}

Expr* BranchFinder::wrap(Expr* cond, BranchSite site) {
  ASTContext& c = in_.ast;
  SourceLocation loc = cond->getBeginLoc();
  unsigned index = static_cast<unsigned>(in_.state.branches.size());
  in_.state.branches.push_back(std::move(site));

  QualType type = cond->getType().getCanonicalType();
  Expr* value = cond;
  if (!type->isBooleanType()) {
    CastKind kind = type->isAnyPointerType()    ? CK_PointerToBoolean
                    : type->isRealFloatingType() ? CK_FloatingToBoolean
                                                 : CK_IntegralToBoolean;
    value = in_.markers.implicit_cast(c.BoolTy, kind, cond);
  }
  MarkerBuilder& m = in_.markers;
  return m.call(m.branch_marker(), {m.site_number(index, loc), value}, loc, cond->getEndLoc());
}

}  // namespace sampler::plugin::ast
