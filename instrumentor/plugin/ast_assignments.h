// scalar-pairs, float-kinds and bounds: the assignments of a function body (=, op=, ++, --, and a local declared
// with an initialiser, as CIL makes it). An assignment `lhs = e` becomes
//   (lhs = e, __sampler_pairs_marker(FIRST, lhs, others...), __sampler_value_marker(SITE, lhs)..., lhs)
// with the same value and value kind as before (an rvalue in C, the lvalue in C++), the markers seeing the value
// just assigned; a declaration's initialiser `e` becomes `(x = e, markers..., x)`. scalar-pairs compares the value
// with the other operands an assignment may be compared with (the variables in scope, the globals, constants),
// float-kinds classifies a floating value, bounds keeps an integer's or a pointer's least and greatest.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>
#include <llvm/ADT/APSInt.h>

#include <string>
#include <vector>

#include "ast_initialisation.h"
#include "ast_markers.h"
#include "state.h"

namespace sampler::plugin::ast {

/// The integer constants scalar-pairs compares with in one function, and how many times each is written there
/// (the per-function bound drops the rarest first).
struct PairConstants {
  std::vector<llvm::APSInt> values;
  std::vector<unsigned> counts;
};

/// The assignments of one function body: found during the traversal (which tells the finder the scopes it
/// enters, the locals it declares and the assignments it meets), rewritten after it.
class AssignmentFinder {
 public:
  /// The finder of `f`'s body, whose parameters are in scope (and initialised) at every assignment of it;
  /// `globals`: the program's file-scope variables declared before it.
  AssignmentFinder(const FinderContext& in, clang::FunctionDecl* f, const std::vector<clang::VarDecl*>& globals);

  /// Whether any of scalar-pairs, float-kinds and bounds is enabled.
  bool enabled() const { return pairs_ || bounds_ || float_kinds_; }

  /// Runs `traverse`, the traversal of a block or statement that opens a scope, in a scope of its own.
  template <typename F>
  bool in_scope(F traverse) {
    scopes_.emplace_back();
    bool go_on = traverse();
    scopes_.pop_back();
    return go_on;
  }
  /// Runs `traverse`, the traversal of `lambda`, with the lambda's own scopes: the enclosing function's
  /// variables are not the lambda's (unless captured).
  template <typename F>
  bool in_lambda(clang::LambdaExpr* lambda, F traverse) {
    std::vector<std::vector<clang::VarDecl*>> outer;
    outer.swap(scopes_);
    scopes_.emplace_back();
    for (clang::ParmVarDecl* p : lambda->getCallOperator()->parameters()) scopes_.back().push_back(p);
    if (pairs_ && lambda->getBody()) initialisation_.analyse(lambda->getCallOperator(), lambda->getBody(), in_.ast);
    bool go_on = traverse();
    scopes_.swap(outer);
    return go_on;
  }

  /// A local the program declares (in the order of the traversal): in scope from here on, and an assignment of
  /// its initialiser if it has one.
  void declared(clang::VarDecl* v);
  /// An assignment `op` (=, +=, ..., ++, --) to `lhs`, held in `slot`.
  void assigned(clang::Stmt** slot, clang::Expr* op, clang::Expr* lhs) { assignment(slot, op, lhs, nullptr); }

  /// Chooses the scalar-pairs sites within the function's bound, numbers them, and rewrites every assignment
  /// found.
  void rewrite_found();

 private:
  // One other operand of a scalar-pairs site: a variable (local-init or global; the lvalue itself is its value
  // before the assignment), constants_.values[constant], or the null pointer.
  struct PairOperand {
    enum Kind { Local, Global, Constant, Null } kind;
    const clang::VarDecl* variable;  // Local, Global
    unsigned constant;               // Constant
  };

  // An assignment (or an initialised declaration, ++, --) to instrument, found by the traversal, rewritten after
  // it. `assign` is null for a declaration: the assignment of its initialiser to the variable is made when it is
  // rewritten.
  struct Found {
    clang::Stmt** slot;
    clang::Expr* assign;
    clang::Expr* lhs;
    std::vector<clang::Expr*> others;  // the scalar-pairs operands kept (choose_pairs), in the order of their sites
    int old_value = -1;                // the index in others of the lvalue's value before the assignment (null there)
    unsigned first = 0;                // the site (state.pairs) of others[0]
    std::vector<unsigned> values;      // float-kinds and bounds sites (state.values) of the value assigned
    // scalar-pairs: the site's lvalue fields, and every other operand that may be compared with it (the
    // per-function bound, choose_pairs, decides which are kept).
    std::string text, scope, form;
    bool is_signed = false;
    clang::SourceLocation loc;
    const clang::VarDecl* assigned = nullptr;  // the variable assigned, when the lvalue is one
    clang::QualType canonical;                 // the lvalue's type, unqualified
    std::vector<PairOperand> candidates;
  };

  void assignment(clang::Stmt** slot, clang::Expr* op, clang::Expr* lhs, const clang::VarDecl* declared);
  std::vector<PairOperand> pair_operands(clang::Expr* op, const clang::VarDecl* declared, clang::QualType canonical);
  bool out_of_range(const llvm::APSInt& constant, clang::QualType type) const;
  unsigned char bound_type(clang::QualType canonical) const;
  void choose_pairs();
  void add_pair(Found& found, const PairOperand& operand);
  clang::Expr* rewrite(Found& found);

  FinderContext in_;
  const bool pairs_, bounds_, float_kinds_;
  const std::vector<clang::VarDecl*>& globals_;
  std::vector<std::vector<clang::VarDecl*>> scopes_;  // the variables in scope, outermost first
  Initialisation initialisation_;                     // scalar-pairs: which locals may be read where
  PairConstants constants_;
  std::vector<Found> found_;
};

}  // namespace sampler::plugin::ast
