// The marker-building layer of the AST side: the unit's marker functions (state.h names them) and the
// expressions the finders splice into the AST around a site: a marker's call, a site's number, a variable read, a
// value widened as a marker receives it. The finders (ast_branches.h, ast_assignments.h, ast_atoms.h) make
// their markers' calls here; the collecting pass (pass.cpp) finds the calls by the markers' symbols.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>
#include <llvm/ADT/ArrayRef.h>

#include "state.h"

namespace sampler::plugin::ast {

/// The marker functions declared in one unit so far, each on its first use (null until then).
struct MarkerDecls {
  clang::FunctionDecl* branch = nullptr;  ///< `_Bool __sampler_branch_marker(int site, _Bool condition)`
  clang::FunctionDecl* pairs = nullptr;   ///< `void __sampler_pairs_marker(int first_site, ...)`
  clang::FunctionDecl* value = nullptr;   ///< `void __sampler_value_marker(int site, ...)`
  clang::FunctionDecl* atom = nullptr;    ///< `void* __sampler_atom_marker(int site, void* address)`

  /// Whether `f` is one of them (a call the plugin made, not the program).
  bool is_marker(const clang::FunctionDecl* f) const {
    return f && (f == branch || f == pairs || f == value || f == atom);
  }
};

/// Builds the markers' calls and their arguments in `context`, declaring each marker in `decls` when first used.
/// Both must outlive it.
class MarkerBuilder {
 public:
  MarkerBuilder(clang::ASTContext& context, MarkerDecls& decls) : context_(context), decls_(decls) {}

  const MarkerDecls& decls() const { return decls_; }

  clang::FunctionDecl* branch_marker();
  clang::FunctionDecl* pairs_marker();
  clang::FunctionDecl* value_marker();
  clang::FunctionDecl* atom_marker();

  /// `function(args...)`, a call at `loc` whose closing parenthesis is at `end`.
  clang::Expr* call(clang::FunctionDecl* function, llvm::ArrayRef<clang::Expr*> args, clang::SourceLocation loc,
                    clang::SourceLocation end);
  clang::Expr* call(clang::FunctionDecl* function, llvm::ArrayRef<clang::Expr*> args, clang::SourceLocation loc) {
    return call(function, args, loc, loc);
  }
  /// A site's number, a marker's first argument: an int literal.
  clang::Expr* site_number(unsigned site, clang::SourceLocation loc);
  /// The variable `v` as an lvalue (its value, through a reference).
  clang::Expr* reference(const clang::VarDecl* v, clang::SourceLocation loc);
  /// A value as a marker receives it: read, then integers widened to 64 bits (pointers and floating values stay
  /// as they are).
  clang::Expr* marker_argument(clang::Expr* e);
  /// `e` converted to `type` by clang's implicit conversion `kind`, a prvalue.
  clang::Expr* implicit_cast(clang::QualType type, clang::CastKind kind, clang::Expr* e);

 private:
  clang::FunctionDecl* make_marker(clang::FunctionDecl*& made, const char* name, clang::QualType result,
                                   clang::QualType parameter, bool variadic);

  clang::ASTContext& context_;
  MarkerDecls& decls_;
};

/// What each finder of one function body works with: the AST, the unit's records of its sites (state.h), the
/// markers. All outlive the finders.
struct FinderContext {
  clang::ASTContext& ast;
  UnitState& state;
  MarkerBuilder& markers;
};

}  // namespace sampler::plugin::ast
