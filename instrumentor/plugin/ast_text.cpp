// The source text of sites' fields (ast_text.h).
#include "ast_text.h"

#include <clang/Lex/Lexer.h>
#include <llvm/Support/Path.h>

#include <vector>

namespace sampler::plugin::ast {

using namespace clang;

namespace {

// The stretch of a file where the tokens `begin` to `end` were written, as the programmer sees them: where
// both come from one argument of a macro, the argument as written (`x > LIMIT` in `CHECK(x > LIMIT)`); where
// they come from a macro's body, the whole invocation (`isalpha(c)`, not the expansion glibc's header makes of it).
// Invalid if they have no common place in one file.
CharSourceRange written_range(SourceLocation begin, SourceLocation end, const SourceManager& sm,
                              const LangOptions& options, unsigned depth = 0) {
  CharSourceRange range = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(begin, end), sm, options);
  if (range.isValid() || depth > 16 || begin.isInvalid() || end.isInvalid()) return range;
  // Each end's places, from its token out to the file, through the expansions that hold it (an argument's token
  // first to where the argument is used in the macro's body).
  auto places = [&](SourceLocation loc, bool at_end) {
    std::vector<SourceLocation> out = {loc};
    while (loc.isMacroID() && out.size() < 64) {
      CharSourceRange expansion = sm.getImmediateExpansionRange(loc);
      loc = at_end ? expansion.getEnd() : expansion.getBegin();
      out.push_back(loc);
    }
    return out;
  };
  std::vector<SourceLocation> from = places(begin, false), to = places(end, true);
  // The innermost buffer (a file, or one macro expansion) where both ends have a place.
  for (size_t i = 0; i < from.size(); ++i) {
    FileID buffer = sm.getFileID(from[i]);
    for (size_t j = 0; j < to.size(); ++j) {
      if (sm.getFileID(to[j]) != buffer) continue;
      if (buffer.isInvalid() || !sm.getSLocEntry(buffer).isExpansion()) {
        if (sm.isBeforeInTranslationUnit(to[j], from[i])) return {};
        return Lexer::makeFileCharRange(CharSourceRange::getTokenRange(from[i], to[j]), sm, options);
      }
      const SrcMgr::ExpansionInfo& expansion = sm.getSLocEntry(buffer).getExpansion();
      if (expansion.isMacroArgExpansion())  // both in one argument: where it was written
        return written_range(sm.getImmediateSpellingLoc(from[i]), sm.getImmediateSpellingLoc(to[j]), sm, options,
                             depth + 1);
      if (i > 0 && j > 0 && from[i] == to[j] && sm.isMacroArgExpansion(from[i - 1]) &&
          sm.isMacroArgExpansion(to[j - 1]))  // both from the same use of one argument in this macro's body
        return written_range(sm.getImmediateSpellingLoc(from[i - 1]), sm.getImmediateSpellingLoc(to[j - 1]), sm,
                             options, depth + 1);
      // In the macro's own text: the whole invocation.
      return written_range(expansion.getExpansionLocStart(), expansion.getExpansionLocEnd(), sm, options, depth + 1);
    }
  }
  return {};
}

}  // namespace

bool written_by_macro(SourceLocation loc, const SourceManager& sm) {
  for (unsigned depth = 0; loc.isMacroID() && depth < 64; ++depth) {
    if (!sm.isMacroArgExpansion(loc)) return true;
    loc = sm.getImmediateSpellingLoc(loc);
  }
  return false;
}

std::string source_text(const Expr* e, ASTContext& context) {
  const SourceManager& sm = context.getSourceManager();
  while (const auto* paren = dyn_cast<ParenExpr>(e->IgnoreImplicit())) {
    if (!sm.isMacroBodyExpansion(paren->getLParen()) || !sm.isMacroBodyExpansion(paren->getRParen())) break;
    e = paren->getSubExpr();
  }
  CharSourceRange range = written_range(e->getBeginLoc(), e->getEndLoc(), sm, context.getLangOpts());
  if (range.isValid()) {
    bool invalid = false;
    StringRef text = Lexer::getSourceText(range, sm, context.getLangOpts(), &invalid);
    if (!invalid && !text.empty()) return one_line(text.str());
  }
  std::string printed;
  llvm::raw_string_ostream out(printed);
  e->printPretty(out, nullptr, PrintingPolicy(context.getLangOpts()));
  return one_line(out.str());
}

std::string site_field(std::string text) { return text.empty() ? "?" : text; }

std::optional<CallKey> call_key(const CallExpr* call, const SourceManager& sm) {
  PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(call->getExprLoc()));
  if (where.isInvalid()) return std::nullopt;
  return CallKey{llvm::sys::path::filename(where.getFilename()).str(), where.getLine(), where.getColumn()};
}

}  // namespace sampler::plugin::ast
