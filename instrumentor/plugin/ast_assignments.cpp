// scalar-pairs, float-kinds and bounds (ast_assignments.h).
#include "ast_assignments.h"

#include <clang/AST/RecursiveASTVisitor.h>

#include <climits>
#include <cstdint>
#include <map>
#include <set>

#include "ast_text.h"
#include "sampler/abi.h"

namespace sampler::plugin::ast {

using namespace clang;

namespace {

// The integer constants written in `body`, each value once, in order of appearance, and how many times each is
// written.
PairConstants written_constants(Stmt* body) {
  struct Finder : RecursiveASTVisitor<Finder> {
    PairConstants found;
    bool VisitIntegerLiteral(IntegerLiteral* literal) {
      llvm::APSInt v(literal->getValue(), literal->getType()->isUnsignedIntegerType());
      for (size_t i = 0; i < found.values.size(); ++i)
        if (llvm::APSInt::isSameValue(found.values[i], v)) {
          ++found.counts[i];
          return true;
        }
      found.values.push_back(v);
      found.counts.push_back(1);
      return true;
    }
    bool TraverseDecl(Decl* d) {
      return isa_and_nonnull<FunctionDecl, RecordDecl>(d) || RecursiveASTVisitor::TraverseDecl(d);
    }
  } finder;
  finder.TraverseStmt(body);
  return std::move(finder.found);
}

// The constants scalar-pairs compares with in `body`: those written in it when `written` (-fsampler-compare-
// constants), and 0 always (the original's constants module starts from it): the bound drops it after every
// written one.
PairConstants pair_constants(Stmt* body, bool written) {
  PairConstants constants;
  if (written) constants = written_constants(body);
  llvm::APSInt zero(llvm::APInt(64, 0), false);
  for (const llvm::APSInt& c : constants.values)
    if (llvm::APSInt::isSameValue(c, zero)) return constants;
  constants.values.push_back(zero);
  constants.counts.push_back(UINT_MAX);
  return constants;
}

bool pair_type(QualType type) {
  if (type.isNull() || type.isVolatileQualified() || type->isAtomicType()) return false;
  type = type.getCanonicalType();
  return (type->isIntegralOrEnumerationType() && !type->isBooleanType()) || type->isPointerType();
}

bool float_type(QualType type) {
  if (type.isNull() || type.isVolatileQualified() || type->isAtomicType()) return false;
  const auto* builtin = dyn_cast<BuiltinType>(type.getCanonicalType());
  return builtin && (builtin->getKind() == BuiltinType::Float || builtin->getKind() == BuiltinType::Double ||
                     builtin->getKind() == BuiltinType::LongDouble);
}

// The lvalue's kind, the sampler manual's two words: local/global/mem and direct/field/index (a C++ reference
// names memory elsewhere: mem).
std::pair<std::string, std::string> lvalue_kind(const Expr* lvalue) {
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

}  // namespace

AssignmentFinder::AssignmentFinder(const FinderContext& in, FunctionDecl* f, const std::vector<VarDecl*>& globals)
    : in_(in), pairs_(in.state.enabled(SchemeId::kScalarPairs)), bounds_(in.state.enabled(SchemeId::kBounds)),
      float_kinds_(in.state.enabled(SchemeId::kFloatKinds)), globals_(globals), scopes_(1) {
  for (ParmVarDecl* p : f->parameters()) scopes_.back().push_back(p);
  if (!pairs_ || !f->getBody()) return;
  initialisation_.analyse(f, f->getBody(), in_.ast);
  constants_ = pair_constants(f->getBody(), in_.state.compare_constants);
}

void AssignmentFinder::declared(VarDecl* v) {
  // Every local the program declares is in scope (and may hide another); it is compared only where it is
  // certainly initialised (initialisation_: a read of an indeterminate value would be undefined behaviour the
  // program did not have). The compiler's own (a range-based for's iterators) are not the program's.
  if (scopes_.empty() || !v->isLocalVarDecl() || isa<ParmVarDecl>(v) || v->isImplicit()) return;
  scopes_.back().push_back(v);
  if (!v->hasInit()) return;
  // A local declared with an initialiser is an assignment of it to the variable (as CIL makes it).
  if (!v->hasLocalStorage() || v->isConstexpr() || v->getType().isConstQualified() || v->isCXXForRangeDecl() ||
      v->isImplicit() || v->getType()->isReferenceType() || v->isInvalidDecl() || v->getType()->isDependentType())
    return;
  Expr* init = v->getInit();
  if (!init || init->isTypeDependent() || init->isValueDependent() || !init->isPRValue() ||
      isa<InitListExpr, ParenListExpr, CXXConstructExpr>(init->IgnoreImplicit()))
    return;
  if (!in_.ast.hasSameUnqualifiedType(init->getType(), v->getType())) return;
  if (!enabled()) return;
  Expr* lhs = in_.markers.reference(v, v->getLocation());
  assignment(v->getInitAddress(), nullptr, lhs, v);
}

// The SAMPLER_BOUND_* value of an integer or pointer type (abi.h), 0 for one wider than 64 bits.
unsigned char AssignmentFinder::bound_type(QualType canonical) const {
  if (canonical->isPointerType()) return SAMPLER_BOUND_POINTER;
  bool is_signed = canonical->isSignedIntegerOrEnumerationType();
  switch (in_.ast.getTypeSize(canonical)) {
    case 8: return is_signed ? SAMPLER_BOUND_I8 : SAMPLER_BOUND_U8;
    case 16: return is_signed ? SAMPLER_BOUND_I16 : SAMPLER_BOUND_U16;
    case 32: return is_signed ? SAMPLER_BOUND_I32 : SAMPLER_BOUND_U32;
    case 64: return is_signed ? SAMPLER_BOUND_I64 : SAMPLER_BOUND_U64;
    default: return 0;
  }
}

// An assignment `op` (=, +=, ..., ++, --, or null for the initialiser of `declared`) to `lhs`, held in `slot`:
// its scalar-pairs, bounds and float-kinds sites.
void AssignmentFinder::assignment(Stmt** slot, Expr* op, Expr* lhs, const VarDecl* declared) {
  const SourceManager& sm = in_.ast.getSourceManager();
  SourceLocation loc = op ? op->getExprLoc() : declared->getLocation();
  if (sm.isInSystemHeader(loc) || lhs->isTypeDependent() || lhs->isValueDependent()) return;
  if (op && (op->isTypeDependent() || op->isValueDependent())) return;
  QualType type = lhs->getType();
  // The assigned value is read again after the assignment: the lvalue must have no side effects.
  if (lhs->HasSideEffects(in_.ast) || lhs->refersToBitField()) return;
  bool integral = pair_type(type), floating = float_type(type);
  if (!integral && !floating) return;
  QualType canonical = type.getCanonicalType().getUnqualifiedType();
  const VarDecl* assigned = declared;
  if (const auto* ref = dyn_cast<DeclRefExpr>(lhs->IgnoreParens())) assigned = dyn_cast<VarDecl>(ref->getDecl());
  Found found{slot, op, lhs};
  auto [scope, form] = lvalue_kind(lhs);
  std::string text = declared ? declared->getNameAsString() : source_text(lhs, in_.ast);
  bool is_signed = canonical->isSignedIntegerOrEnumerationType();
  if (floating && float_kinds_) {
    found.values.push_back(static_cast<unsigned>(in_.state.values.size()));
    in_.state.values.push_back({SchemeId::kFloatKinds, {site_field(text), scope, form}, false, 0});
  }
  if (integral && bounds_ && bound_type(canonical) != 0) {
    found.values.push_back(static_cast<unsigned>(in_.state.values.size()));
    in_.state.values.push_back({SchemeId::kBounds, {site_field(text), scope, form}, is_signed, bound_type(canonical)});
  }
  // scalar-pairs: assignments to a named variable directly, and the others only when asked for (the
  // original's assign-into-field, assign-into-index, assign-across-pointer).
  const UnitState& state = in_.state;
  bool pairs_lvalue = (scope != "mem" || state.assign_across_pointer) && (form != "field" || state.assign_into_field) &&
                      (form != "index" || state.assign_into_index);
  if (integral && pairs_ && pairs_lvalue) {
    found.text = std::move(text);
    found.scope = std::move(scope);
    found.form = std::move(form);
    found.is_signed = is_signed;
    found.loc = loc;
    found.assigned = assigned;
    found.canonical = canonical;
    found.candidates = pair_operands(op, declared, canonical);
  }
  if (!found.candidates.empty() || !found.values.empty()) found_.push_back(std::move(found));
}

// The other operands of the scalar-pairs sites of an assignment `op` (or the initialiser of `declared`) to an
// lvalue of type `canonical`, in the order of their sites: the variables in scope (parameters, then locals,
// outer scopes first) certainly initialised there, the globals declared before the function, then the constants
// (0, or the function's with -fsampler-compare-constants) or NULL for a pointer. The variable assigned is among
// them, read before the assignment (its old value: `++n` against n), unless it is being declared. Left out,
// because the comparison's outcome is fixed at compile time, so that its predicates can never predict a bug
// (docs/decisions.md, "scalar-pairs leaves out pairs that cannot predict"):
//  - every constant, when the value assigned is itself a constant (`x = 0;`, `int n = sizeof buf;`, `p = "x";`);
//  - a constant outside the range of the lvalue's type, as the site compares them (`c` an unsigned char
//    against 70000: always less; at the range's ends, as `c` against 255, two outcomes remain: kept);
//  - the variable copied (`x = y;`, `int x = y;`: always equal);
//  - a variable hidden by an inner one of the same name (not in scope by that name; its site would have the
//    text of the visible one) and a global declared again (one variable, one site).
std::vector<AssignmentFinder::PairOperand> AssignmentFinder::pair_operands(Expr* op, const VarDecl* declared,
                                                                           QualType canonical) {
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
    constant_value = value->isEvaluatable(in_.ast);
  }
  const void* point = declared ? static_cast<const void*>(declared) : static_cast<const void*>(op);
  auto same = [&](const VarDecl* v) {
    return v != declared && v->getCanonicalDecl() != copied && !v->isImplicit() && pair_type(v->getType()) &&
           !v->getType()->isReferenceType() &&
           in_.ast.hasSameType(v->getType().getCanonicalType().getUnqualifiedType(), canonical);
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
  std::set<const VarDecl*> seen;
  for (VarDecl* v : globals_)
    if (same(v) && !hidden(v) && seen.insert(v->getCanonicalDecl()).second)
      operands.push_back({PairOperand::Global, v, 0});
  if (canonical->isIntegralOrEnumerationType() && !constant_value)
    for (unsigned i = 0; i < constants_.values.size(); ++i)
      if (!out_of_range(constants_.values[i], canonical)) operands.push_back({PairOperand::Constant, nullptr, i});
  if (canonical->isPointerType() && !constant_value) operands.push_back({PairOperand::Null, nullptr, 0});
  return operands;
}

// Whether every value of `type` compares the same way with `constant`, both widened to 64 bits as the site
// compares them (as signed values if the type is signed): the constant lies outside the type's range.
bool AssignmentFinder::out_of_range(const llvm::APSInt& constant, QualType type) const {
  unsigned bits = in_.ast.getIntWidth(type);
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
void AssignmentFinder::choose_pairs() {
  size_t total = 0;
  std::vector<size_t> uses(constants_.values.size());
  for (const Found& p : found_)
    for (const PairOperand& o : p.candidates) {
      ++total;
      if (o.kind == PairOperand::Constant) ++uses[o.constant];
    }
  std::vector<bool> keep_constant(constants_.values.size(), true);
  bool keep_globals = true;
  size_t limit = in_.state.max_pairs;
  if (limit != 0 && total > limit) {
    std::set<unsigned> counts(constants_.counts.begin(), constants_.counts.end());
    for (auto count = counts.begin(); count != counts.end() && total > limit; ++count)
      for (unsigned i = 0; i < constants_.values.size(); ++i)
        if (constants_.counts[i] == *count) {
          keep_constant[i] = false;
          total -= uses[i];
        }
    if (total > limit) keep_globals = false;
  }
  size_t budget = limit != 0 ? limit : SIZE_MAX;
  for (Found& p : found_) {
    std::vector<const PairOperand*> kept;
    for (const PairOperand& o : p.candidates)
      if (o.kind == PairOperand::Local || o.kind == PairOperand::Null ||
          (o.kind == PairOperand::Global && keep_globals) ||
          (o.kind == PairOperand::Constant && keep_constant[o.constant]))
        kept.push_back(&o);
    if (kept.size() > budget) budget = 0;  // the bound is reached: no pairs for this or any later assignment
    if (budget == 0) continue;
    budget -= kept.size();
    p.first = static_cast<unsigned>(in_.state.pairs.size());
    for (const PairOperand* o : kept) add_pair(p, *o);
  }
}

// One scalar-pairs site of `p`, against `o`: its fields in in_.state.pairs, its operand in p.others.
void AssignmentFinder::add_pair(Found& p, const PairOperand& o) {
  if (o.kind == PairOperand::Constant) {
    const llvm::APSInt& constant = constants_.values[o.constant];
    llvm::SmallString<24> digits;
    constant.toString(digits);
    QualType literal_type = constant.isUnsigned() ? in_.ast.UnsignedLongLongTy : in_.ast.LongLongTy;
    llvm::APInt wide = constant.isUnsigned() ? constant.zextOrTrunc(64) : constant.sextOrTrunc(64);
    in_.state.pairs.push_back({p.text, p.scope, p.form, digits.str().str(), "const", p.is_signed});
    p.others.push_back(IntegerLiteral::Create(in_.ast, wide, literal_type, p.loc));
    return;
  }
  if (o.kind == PairOperand::Null) {
    in_.state.pairs.push_back({p.text, p.scope, p.form, "NULL", "const", p.is_signed});
    Expr* zero = IntegerLiteral::Create(in_.ast, llvm::APInt(in_.ast.getIntWidth(in_.ast.IntTy), 0),
                                        in_.ast.IntTy, p.loc);
    p.others.push_back(in_.markers.implicit_cast(p.canonical, CK_NullToPointer, zero));
    return;
  }
  in_.state.pairs.push_back({p.text, p.scope, p.form, o.variable->getNameAsString(),
                          o.kind == PairOperand::Local ? "local-init" : "global", p.is_signed});
  if (p.assign && p.assigned && o.variable->getCanonicalDecl() == p.assigned->getCanonicalDecl()) {
    // The variable's own value before the assignment: rewrite() reads it first.
    p.old_value = static_cast<int>(p.others.size());
    p.others.push_back(nullptr);
  } else {
    p.others.push_back(in_.markers.reference(o.variable, p.loc));
  }
}

void AssignmentFinder::rewrite_found() {
  // Innermost first (the reverse of the order found): a declaration's initialiser may itself be an
  // instrumented assignment held in the same slot (`int y = x = 3;` in C), and each rewrite reads its slot now.
  choose_pairs();
  for (auto p = found_.rbegin(); p != found_.rend(); ++p)
    if (!p->others.empty() || !p->values.empty()) *p->slot = rewrite(*p);
  found_.clear();
}

// When one of the others is lhs's old value, it is read before the assignment and bound to an opaque value that
// the pairs marker receives: a PseudoObjectExpr, which clang generates as "evaluate the bound value once, then the
// rest" (as it does for Objective-C properties); the program's own evaluation is unchanged.
Expr* AssignmentFinder::rewrite(Found& p) {
  ASTContext& c = in_.ast;
  MarkerBuilder& m = in_.markers;
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
    Expr* read = m.marker_argument(p.lhs);
    old_value = new (c) OpaqueValueExpr(loc, read->getType(), VK_PRValue, OK_Ordinary, read);
  }
  if (!p.others.empty()) {
    std::vector<Expr*> args = {m.site_number(p.first, loc), m.marker_argument(p.lhs)};
    for (Expr* other : p.others) args.push_back(other ? m.marker_argument(other) : old_value);
    then(m.call(m.pairs_marker(), args, loc));
  }
  for (unsigned site : p.values)
    then(m.call(m.value_marker(), {m.site_number(site, loc), m.marker_argument(p.lhs)}, loc));
  Expr* result = p.lhs;
  if (kind == VK_PRValue)
    result = m.implicit_cast(p.lhs->getType().getUnqualifiedType(), CK_LValueToRValue, p.lhs);
  Expr* rewritten =
      BinaryOperator::Create(c, sequence, result, BO_Comma, type, kind, object_kind, loc, FPOptionsOverride());
  if (!old_value) return rewritten;
  Expr* semantics[] = {old_value, rewritten};
  return PseudoObjectExpr::Create(c, assign, semantics, 1);
}

}  // namespace sampler::plugin::ast
