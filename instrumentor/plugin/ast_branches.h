// branches: each condition of a function body is wrapped, in the AST, in a call of the branch marker,
//   if (c)  ->  if (__sampler_branch_marker(SITE, (_Bool) c))
// before clang generates code for the function, so the collecting pass finds every branch site exactly, whatever
// debug location clang gives the conditional branch, and the marker's value is the condition as evaluated. The
// passes replace each marker call by the condition and the sampling fast path; a marker never reaches the object
// file.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>

#include <utility>
#include <vector>

#include "ast_markers.h"
#include "state.h"

namespace sampler::plugin::ast {

/// The branch sites of one function body: found during the traversal, wrapped after it.
class BranchFinder {
 public:
  explicit BranchFinder(const FinderContext& in) : in_(in) {}

  /// A condition `cond` of `parent` (an if, a loop, ?:, an operand of && or ||) is a site unless it is itself &&
  /// or || (then its operands are the sites), or a constant (clang folds those and generates no branch), or of a
  /// type that is not a scalar we can test. Its text is taken now, its wrapping left to wrap_found().
  void condition(clang::Stmt* parent, clang::Expr* cond);

  /// Wraps every condition found, in the order found, numbering their sites in UnitState::branches.
  void wrap_found();

 private:
  clang::Expr* wrap(clang::Expr* cond, BranchSite site);

  FinderContext in_;
  std::vector<std::pair<clang::Stmt**, BranchSite>> found_;
};

}  // namespace sampler::plugin::ast
