// atoms (ast_atoms.h).
#include "ast_atoms.h"

#include "ast_text.h"

namespace sampler::plugin::ast {

using namespace clang;

namespace {

// An lvalue that may access shared, mutable memory (the const and bit-field tests are the caller's).
bool shared(const Expr* e) {
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

}  // namespace

void AtomFinder::note_children(Stmt* parent) {
  for (Stmt*& child : parent->children())
    if (child) child_slots_[child] = &child;
}

void AtomFinder::access(Expr* lvalue, const char* kind) {
  if (!lvalue->isGLValue() || lvalue->refersToBitField() || lvalue->isTypeDependent() ||
      lvalue->isValueDependent() || lvalue->getType().isConstQualified() || lvalue->getType()->isFunctionType() ||
      lvalue->getType()->isArrayType() || !shared(lvalue))
    return;
  if (in_.ast.getSourceManager().isInSystemHeader(lvalue->getExprLoc())) return;
  // The slot of the lvalue in its parent: its address goes through the marker, the access through the result.
  auto slot = child_slots_.find(lvalue);
  if (slot == child_slots_.end()) return;
  for (const auto& [known, index] : found_)
    if (known == slot->second) return;
  unsigned index = static_cast<unsigned>(in_.state.values.size());
  in_.state.values.push_back({SchemeId::kAtoms, {site_field(source_text(lvalue, in_.ast)), kind}, false, 0});
  found_.push_back({slot->second, index});
}

void AtomFinder::wrap_found() {
  for (auto& [slot, site] : found_) *slot = wrap(cast<Expr>(*slot), site);
  found_.clear();
}

Expr* AtomFinder::wrap(Expr* e, unsigned site) {
  ASTContext& c = in_.ast;
  MarkerBuilder& m = in_.markers;
  SourceLocation loc = e->getExprLoc();
  QualType pointer = c.getPointerType(e->getType());
  Expr* address = UnaryOperator::Create(c, e, UO_AddrOf, pointer, VK_PRValue, OK_Ordinary, loc, false,
                                        FPOptionsOverride());
  Expr* untyped = m.implicit_cast(c.VoidPtrTy, CK_BitCast, address);
  Expr* marked = m.call(m.atom_marker(), {m.site_number(site, loc), untyped}, loc);
  Expr* typed = m.implicit_cast(pointer, CK_BitCast, marked);
  return UnaryOperator::Create(c, typed, UO_Deref, e->getType(), VK_LValue, e->getObjectKind(), loc, false,
                               FPOptionsOverride());
}

}  // namespace sampler::plugin::ast
