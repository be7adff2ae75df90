// The AST side's finding of sites in one function body: one traversal that hands each statement to the finders
// of the schemes that want it, then the rewriting of what they found.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>

#include <vector>

#include "ast_markers.h"
#include "state.h"

namespace sampler::plugin::ast {

/// Finds the sites of `f`'s body (and of the lambdas inside it) for the schemes `state` enables, records them in
/// `state` and rewrites the body with the markers' calls (declared in `markers` when first needed). `globals`:
/// the program's file-scope variables declared before `f` (scalar-pairs).
void find_sites(clang::FunctionDecl* f, clang::ASTContext& context, UnitState& state, MarkerDecls& markers,
                const std::vector<clang::VarDecl*>& globals);

}  // namespace sampler::plugin::ast
