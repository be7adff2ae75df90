// returns and g-object-unref (ast_calls.h).
#include "ast_calls.h"

#include <clang/AST/ExprCXX.h>
#include <clang/AST/Mangle.h>

#include <memory>

#include "ast_text.h"

namespace sampler::plugin::ast {

using namespace clang;

namespace {

// The callee as the site's text shows it.
std::string callee_text(const CallExpr* call, ASTContext& context) {
  const Expr* callee = call->getCallee()->IgnoreParenImpCasts();
  const FunctionDecl* direct = call->getDirectCallee();
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getOperator() == OO_Call)
    return source_text(op->getArg(0), context);  // the object called, as written: `is_odd` in is_odd(x)
  if (isa<CXXOperatorCallExpr>(call) && direct) return direct->getNameAsString();  // operator==: the operator's name
  if (direct && written_by_macro(callee->getExprLoc(), context.getSourceManager()))
    return direct->getNameAsString();  // a call a macro makes (isalpha's): the function it calls
  return source_text(callee, context);
}

// The symbol of a direct call's callee (constructors and destructors have several: none), empty for others.
std::string callee_symbol(const CallExpr* call, ASTContext& context) {
  const FunctionDecl* direct = call->getDirectCallee();
  if (!direct || isa<CXXConstructorDecl>(direct) || isa<CXXDestructorDecl>(direct)) return "";
  if (!context.getLangOpts().CPlusPlus) return direct->getName().str();
  std::string symbol;
  std::unique_ptr<MangleContext> mangle(context.createMangleContext());
  llvm::raw_string_ostream out(symbol);
  if (mangle->shouldMangleDeclName(direct))
    mangle->mangleName(GlobalDecl(direct), out);
  else
    out << direct->getName();
  return symbol;
}

// returns: a call whose value is an integer, an enumeration or a pointer.
void return_site(const CallExpr* call, ASTContext& context, UnitState& state) {
  QualType type = call->getCallReturnType(context).getCanonicalType();
  if (type.isNull() || !(type->isIntegralOrEnumerationType() || type->isAnyPointerType())) return;
  if (type->isIntegralOrEnumerationType() && context.getTypeSize(type) > 64) return;
  std::optional<CallKey> key = call_key(call, context.getSourceManager());
  if (!key) return;
  CallSite site;
  site.text = callee_text(call, context);
  site.is_signed = type->isSignedIntegerOrEnumerationType();
  site.callee_name = callee_symbol(call, context);
  auto& sites = state.calls[*key];
  for (const CallSite& known : sites)
    if (known.text == site.text && known.callee_name == site.callee_name) return;
  sites.push_back(std::move(site));
}

// g-object-unref: a call of GLib's g_object_unref(object), keyed as the returns scheme keys calls.
void unref_site(const CallExpr* call, ASTContext& context, UnitState& state) {
  const FunctionDecl* f = call->getDirectCallee();
  if (!f || f->getName() != "g_object_unref" || call->getNumArgs() != 1 || !f->isExternC()) return;
  std::optional<CallKey> key = call_key(call, context.getSourceManager());
  if (!key) return;
  state.unrefs[*key] = source_text(call->getArg(0), context);
}

}  // namespace

void find_call_sites(CallExpr* call, ASTContext& context, UnitState& state, const MarkerDecls& markers) {
  if (context.getSourceManager().isInSystemHeader(call->getExprLoc())) return;
  if (call->isTypeDependent()) return;
  if (markers.is_marker(call->getDirectCallee())) return;
  if (state.enabled(SchemeId::kGObjectUnref)) unref_site(call, context, state);
  if (state.enabled(SchemeId::kReturns)) return_site(call, context, state);
}

}  // namespace sampler::plugin::ast
