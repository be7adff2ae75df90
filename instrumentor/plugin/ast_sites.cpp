// The traversal of one function body (ast_sites.h). Each finder owns a kind of site: branches (ast_branches.h),
// returns and g-object-unref (ast_calls.h), assignments for scalar-pairs, float-kinds and bounds
// (ast_assignments.h), atoms (ast_atoms.h); this file only walks the body and tells each what it meets. The
// rewriting waits until the walk is over, since it changes the tree being walked.
#include "ast_sites.h"

#include <clang/AST/RecursiveASTVisitor.h>

#include <map>
#include <set>

#include "ast_assignments.h"
#include "ast_atoms.h"
#include "ast_branches.h"
#include "ast_calls.h"

namespace sampler::plugin::ast {

namespace {

using namespace clang;

// Where each assignment (=, op=, ++, --) of a body is held, and whether its value is used: a parent is visited
// before its children, and notes them here; the assignment, visited in its turn, finds itself.
class HeldAssignments {
 public:
  struct Slot {
    Stmt** slot;
    bool discarded;  // the value of the expression held is not used
  };

  void note_children(Stmt* parent) {
    for (Stmt*& child : parent->children()) {
      if (auto* assign = dyn_cast_or_null<BinaryOperator>(child); assign && assign->isAssignmentOp())
        slots_[assign] = {&child, false};
      else if (auto* step = dyn_cast_or_null<UnaryOperator>(child); step && step->isIncrementDecrementOp())
        slots_[step] = {&child, discarded(parent, child)};
      else if (auto* comma = dyn_cast_or_null<BinaryOperator>(child);
               (isa_and_nonnull<ParenExpr>(child) || (comma && comma->getOpcode() == BO_Comma)) &&
               discarded(parent, child))
        discarded_.insert(child);  // the value of its (right) operand is not used either: `i++, j--`, `(i++)`
    }
  }

  /// Where `s` is held, if it is an assignment a parent noted.
  const Slot* find(Stmt* s) const {
    auto slot = slots_.find(s);
    return slot == slots_.end() ? nullptr : &slot->second;
  }

 private:
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

  std::map<Stmt*, Slot> slots_;
  std::set<const Stmt*> discarded_;  // comma operators and parentheses whose value is unused
};

// Walks one function body (visiting lambdas inside it too) and hands what it meets to the finders.
class BodyVisitor : public RecursiveASTVisitor<BodyVisitor> {
 public:
  BodyVisitor(ASTContext& context, UnitState& state, MarkerDecls& decls, FunctionDecl* f,
              const std::vector<VarDecl*>& globals)
      : context_(context), state_(state), markers_(context, decls), branches_(finder_context()),
        assignments_(finder_context(), f, globals), atoms_(finder_context()),
        find_atoms_(state.enabled(SchemeId::kAtoms)) {}

  bool TraverseLambdaExpr(LambdaExpr* lambda) {
    // A consteval lambda only runs in the compiler. (Lambdas are implicitly constexpr when they can be, but the
    // enclosing body is complete when it is instrumented: nothing evaluates them at compile time any more.)
    if (lambda->getCallOperator()->isConsteval()) return true;
    return assignments_.in_lambda(lambda, [&] { return RecursiveASTVisitor::TraverseLambdaExpr(lambda); });
  }

  // Functions and classes declared inside the body come to the consumer on their own: walking them here too
  // would wrap their conditions twice.
  bool TraverseDecl(Decl* d) {
    if (d && (isa<FunctionDecl>(d) || isa<RecordDecl>(d) || isa<FunctionTemplateDecl>(d) ||
              isa<ClassTemplateDecl>(d)))
      return true;
    return RecursiveASTVisitor::TraverseDecl(d);
  }

  // ----- branches
  bool VisitIfStmt(IfStmt* s) {
    if (!s->isConstexpr() && !s->isConsteval()) branches_.condition(s, s->getCond());
    return true;
  }
  bool VisitWhileStmt(WhileStmt* s) { return branch(s, s->getCond()); }
  bool VisitDoStmt(DoStmt* s) { return branch(s, s->getCond()); }
  bool VisitForStmt(ForStmt* s) { return branch(s, s->getCond()); }
  bool VisitConditionalOperator(ConditionalOperator* e) { return branch(e, e->getCond()); }
  bool VisitBinaryOperator(BinaryOperator* e) {
    if (e->isLogicalOp()) {
      branches_.condition(e, e->getLHS());
      branches_.condition(e, e->getRHS());
    }
    return true;
  }

  // ----- returns, g-object-unref
  bool VisitCallExpr(CallExpr* call) {
    find_call_sites(call, context_, state_, markers_.decls());
    return true;
  }

  // ----- scalar-pairs, float-kinds, bounds: scopes, so that each assignment knows the variables it may be
  // compared with. Each statement that opens a scope is traversed inside one (RecursiveASTVisitor's
  // Traverse<Kind> for these kinds).
#define SAMPLER_TRAVERSE_IN_SCOPE(KIND)                                                  \
  bool Traverse##KIND(KIND* s) {                                                         \
    return assignments_.in_scope([&] { return RecursiveASTVisitor::Traverse##KIND(s); }); \
  }
  SAMPLER_TRAVERSE_IN_SCOPE(CompoundStmt)
  SAMPLER_TRAVERSE_IN_SCOPE(ForStmt)
  SAMPLER_TRAVERSE_IN_SCOPE(IfStmt)
  SAMPLER_TRAVERSE_IN_SCOPE(WhileStmt)
  SAMPLER_TRAVERSE_IN_SCOPE(SwitchStmt)
  SAMPLER_TRAVERSE_IN_SCOPE(CXXForRangeStmt)
#undef SAMPLER_TRAVERSE_IN_SCOPE

  bool VisitVarDecl(VarDecl* v) {
    assignments_.declared(v);
    return true;
  }

  // ----- assignments (scalar-pairs, float-kinds, bounds; atoms' writes): a parent is visited before its
  // children: it notes where each assignment among them is held (and whether its value is used); the assignment,
  // visited in its turn (after the declarations before it), is then instrumented with the variables in scope.
  bool VisitStmt(Stmt* s) {
    if (!assignments_.enabled() && !find_atoms_) return true;
    if (find_atoms_) atoms_.note_children(s);
    if (const HeldAssignments::Slot* slot = held_.find(s)) {
      if (auto* assign = dyn_cast<BinaryOperator>(s)) {
        if (assignments_.enabled()) assignments_.assigned(slot->slot, assign, assign->getLHS());
        if (find_atoms_) atoms_.access(assign->getLHS(), "write");
      } else if (auto* step = dyn_cast<UnaryOperator>(s)) {
        // x++ yields the old value, which the rewriting does not keep: only where the value is not used.
        if (assignments_.enabled() && (step->isPrefix() || slot->discarded))
          assignments_.assigned(slot->slot, step, step->getSubExpr());
        if (find_atoms_) atoms_.access(step->getSubExpr(), "write");
      }
    }
    held_.note_children(s);
    return true;
  }

  // ----- atoms: every read of shared memory (an lvalue converted to its value).
  bool VisitImplicitCastExpr(ImplicitCastExpr* cast) {
    if (find_atoms_ && cast->getCastKind() == CK_LValueToRValue) atoms_.access(cast->getSubExpr(), "read");
    return true;
  }

  // Rewrites every site found, once the traversal is over. Assignments first: a condition that is an assignment
  // (`while ((n = next()))`) then wraps the rewritten one.
  void rewrite_found() {
    assignments_.rewrite_found();
    atoms_.wrap_found();
    branches_.wrap_found();
  }

 private:
  FinderContext finder_context() { return {context_, state_, markers_}; }

  bool branch(Stmt* parent, Expr* cond) {
    branches_.condition(parent, cond);
    return true;
  }

  ASTContext& context_;
  UnitState& state_;
  MarkerBuilder markers_;
  BranchFinder branches_;
  AssignmentFinder assignments_;
  AtomFinder atoms_;
  const bool find_atoms_;
  HeldAssignments held_;
};

}  // namespace

void find_sites(FunctionDecl* f, ASTContext& context, UnitState& state, MarkerDecls& markers,
                const std::vector<VarDecl*>& globals) {
  BodyVisitor visitor(context, state, markers, f, globals);
  visitor.TraverseStmt(f->getBody());
  visitor.rewrite_found();
}

}  // namespace sampler::plugin::ast
