// returns and g-object-unref: the calls of a function body. A call is not rewritten: its site is recorded by the
// place clang gives its call instruction in the debug information (CallKey, state.h; docs/decisions.md says
// why), where the collecting pass (pass.cpp) finds it.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>

#include "ast_markers.h"
#include "state.h"

namespace sampler::plugin::ast {

/// Records `call`'s sites in `state`: a returns site if it returns an integer (64 bits at most), an enumeration
/// or a pointer, a g-object-unref site if it calls GLib's g_object_unref. Calls in system headers, dependent
/// calls and the markers' own (`markers`) have none.
void find_call_sites(clang::CallExpr* call, clang::ASTContext& context, UnitState& state,
                     const MarkerDecls& markers);

}  // namespace sampler::plugin::ast
