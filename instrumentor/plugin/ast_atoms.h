// atoms: every access (read or write) to shared, mutable memory in a function body. The lvalue accessed, `e`,
// becomes `*(T*) __sampler_atom_marker(SITE, &e)`: its address computed once, handed to the marker, and the access
// made through what the marker returns (the same address).
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>

#include <map>
#include <utility>
#include <vector>

#include "ast_markers.h"
#include "state.h"

namespace sampler::plugin::ast {

/// The atoms sites of one function body: found during the traversal, wrapped after it.
class AtomFinder {
 public:
  explicit AtomFinder(const FinderContext& in) : in_(in) {}

  /// Notes where each child of `parent` is held (a parent is visited before its children).
  void note_children(clang::Stmt* parent);
  /// An access ("read" or "write") to `lvalue`, a site if the memory may be shared: a global (not thread-local)
  /// or memory reached through a pointer, not const, not a bit-field (its address cannot be taken). One access,
  /// one site: an lvalue both read and written is the write, found first.
  void access(clang::Expr* lvalue, const char* kind);

  /// Wraps every access found, in the order found.
  void wrap_found();

 private:
  clang::Expr* wrap(clang::Expr* e, unsigned site);

  FinderContext in_;
  std::map<clang::Stmt*, clang::Stmt**> child_slots_;  // where each expression is held
  std::vector<std::pair<clang::Stmt**, unsigned>> found_;  // its slot, its site (UnitState::values)
};

}  // namespace sampler::plugin::ast
