// The AST side's site fields as the programmer wrote them: the source text of an expression (through the macros
// that made it), and where a call is in the debug information's terms.
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Expr.h>
#include <clang/Basic/SourceManager.h>

#include <optional>
#include <string>

#include "state.h"

namespace sampler::plugin::ast {

/// Whether the token at `loc` was written in a macro's body rather than by the program (in a macro's argument,
/// however deep, it was the program's).
bool written_by_macro(clang::SourceLocation loc, const clang::SourceManager& sm);

/// The source text of an expression as the user wrote it, on one line: where it comes from one argument of a
/// macro, the argument as written; from a macro's body, the whole invocation; when it has no place in a file,
/// clang's printing of it. Parentheses a macro's body put around it are the macro's, not the programmer's: left out.
std::string source_text(const clang::Expr* e, clang::ASTContext& context);

/// A site field from source text: "?" where there is none.
std::string site_field(std::string text);

/// The key of a call's site (state.h): the place clang gives its call instruction in the debug information, the
/// expansion location of the call's expression. Nothing when that place is invalid.
std::optional<CallKey> call_key(const clang::CallExpr* call, const clang::SourceManager& sm);

}  // namespace sampler::plugin::ast
