// The marker-building layer (ast_markers.h).
#include "ast_markers.h"

#include <clang/AST/Attr.h>

#include "state.h"

namespace sampler::plugin::ast {

using namespace clang;

// A marker function declared for this unit: noexcept, with a literal asm label so that its symbol is the same
// in C and C++ (no mangling) and it is called, never invoked.
FunctionDecl* MarkerBuilder::make_marker(FunctionDecl*& made, const char* name, QualType result, QualType parameter,
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

FunctionDecl* MarkerBuilder::branch_marker() {
  return make_marker(decls_.branch, kBranchMarker, context_.BoolTy, context_.BoolTy, false);
}
FunctionDecl* MarkerBuilder::pairs_marker() {
  return make_marker(decls_.pairs, kPairsMarker, context_.VoidTy, QualType(), true);
}
FunctionDecl* MarkerBuilder::value_marker() {
  return make_marker(decls_.value, kValueMarker, context_.VoidTy, QualType(), true);
}
FunctionDecl* MarkerBuilder::atom_marker() {
  return make_marker(decls_.atom, kAtomMarker, context_.VoidPtrTy, context_.VoidPtrTy, false);
}

Expr* MarkerBuilder::call(FunctionDecl* function, llvm::ArrayRef<Expr*> args, SourceLocation loc,
                          SourceLocation end) {
  ASTContext& c = context_;
  ExprValueKind function_kind = c.getLangOpts().CPlusPlus ? VK_LValue : VK_PRValue;
  Expr* reference = DeclRefExpr::Create(c, NestedNameSpecifierLoc(), SourceLocation(), function, false, loc,
                                        function->getType(), function_kind);
  Expr* pointer = implicit_cast(c.getPointerType(function->getType()), CK_FunctionToPointerDecay, reference);
  return CallExpr::Create(c, pointer, args, function->getReturnType(), VK_PRValue, end, FPOptionsOverride());
}

Expr* MarkerBuilder::site_number(unsigned site, SourceLocation loc) {
  return IntegerLiteral::Create(context_, llvm::APInt(32, site), context_.IntTy, loc);
}

Expr* MarkerBuilder::reference(const VarDecl* v, SourceLocation loc) {
  return DeclRefExpr::Create(context_, NestedNameSpecifierLoc(), SourceLocation(), const_cast<VarDecl*>(v), false,
                             loc, v->getType().getNonReferenceType(), VK_LValue);
}

Expr* MarkerBuilder::marker_argument(Expr* e) {
  ASTContext& c = context_;
  QualType type = e->getType().getCanonicalType().getUnqualifiedType();
  if (e->isGLValue()) e = implicit_cast(type, CK_LValueToRValue, e);
  if (type->isPointerType() || type->isRealFloatingType()) return e;
  QualType wide = type->isSignedIntegerOrEnumerationType() ? c.LongLongTy : c.UnsignedLongLongTy;
  if (c.hasSameType(type, wide)) return e;
  return implicit_cast(wide, CK_IntegralCast, e);
}

Expr* MarkerBuilder::implicit_cast(QualType type, CastKind kind, Expr* e) {
  return ImplicitCastExpr::Create(context_, type, kind, e, nullptr, VK_PRValue, FPOptionsOverride());
}

}  // namespace sampler::plugin::ast
