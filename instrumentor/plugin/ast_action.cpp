// The clang half of the plugin: a PluginASTAction, run before code generation, that finds the sites whose fields
// need the source (the predicate of each branch as written, the callee of each call) and records them for the
// collecting pass (state.h). The consumer chooses the functions to instrument (choice.h, the pragma below) and
// hands each body to find_sites (ast_sites.h); the arguments are read by ast_arguments.h.
#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Mangle.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendPluginRegistry.h>
#include <clang/Lex/Pragma.h>
#include <clang/Lex/Preprocessor.h>

#include <algorithm>
#include <memory>
#include <set>

#include "ast_arguments.h"
#include "ast_markers.h"
#include "ast_sites.h"
#include "state.h"

namespace sampler::plugin::ast {

namespace {

using namespace clang;

// `#pragma sampler_exclude_function(NAME)`, or the original's `("NAME")`: NAME, a function pattern, is left out of
// the unit, whether the pragma comes before the function's definition or after it. NAME is taken as written
// (macros are not expanded in it). A malformed pragma is ignored, with a warning at its place.
class ExcludeFunctionPragma : public PragmaHandler {
 public:
  ExcludeFunctionPragma() : PragmaHandler("sampler_exclude_function") {}

  void HandlePragma(Preprocessor& pp, PragmaIntroducer, Token&) override {
    Token token;
    pp.LexUnexpandedToken(token);
    std::string name;
    bool well_formed = token.is(tok::l_paren);
    if (well_formed) {
      pp.LexUnexpandedToken(token);
      if (token.is(tok::string_literal)) {
        well_formed = pp.FinishLexStringLiteral(token, name, "pragma sampler_exclude_function", false);
      } else {
        // A name, qualified or not, with wildcards: `codec_*` is the tokens `codec_` and `*`. Two words in a row
        // (`(fast path)`) are not a name.
        bool after_word = false;
        while ((token.getIdentifierInfo() && !after_word) || token.isOneOf(tok::coloncolon, tok::star, tok::tilde)) {
          after_word = token.getIdentifierInfo() != nullptr;
          name += pp.getSpelling(token);
          pp.LexUnexpandedToken(token);
        }
      }
      well_formed = well_formed && !name.empty() && token.is(tok::r_paren);
      if (well_formed) {
        pp.LexUnexpandedToken(token);
        well_formed = token.is(tok::eod);
      }
    }
    if (!well_formed) {
      DiagnosticsEngine& d = pp.getDiagnostics();
      d.Report(token.getLocation(),
               d.getCustomDiagID(DiagnosticsEngine::Warning,
                                 "malformed '#pragma sampler_exclude_function': expected (NAME) or (\"NAME\"); "
                                 "the pragma is ignored"));
      if (token.isNot(tok::eod)) pp.DiscardUntilEndOfDirective();
      return;
    }
    unit_state().pragma_exclusions.push_back(std::move(name));
  }
};

class SitesConsumer : public ASTConsumer {
 public:
  explicit SitesConsumer(CompilerInstance& compiler) : compiler_(compiler) {}

  bool HandleTopLevelDecl(DeclGroupRef group) override {
    for (Decl* d : group) declaration(d);
    return true;
  }
  void HandleInlineFunctionDefinition(FunctionDecl* f) override { function(f); }

  // The unit is complete, and with it the pragmas: the symbols of every function left out go to the pass, which
  // gives them no sites (a function defined before the pragma that names it had its body's sites found already).
  void HandleTranslationUnit(ASTContext& context) override {
    const UnitState& state = unit_state();
    if (state.functions.empty() && state.files.empty() && state.pragma_exclusions.empty()) return;
    if (compiler_.getDiagnostics().hasErrorOccurred()) return;
    struct Walk : RecursiveASTVisitor<Walk> {
      SitesConsumer& consumer;
      const SourceManager& sm;
      Walk(SitesConsumer& c, const SourceManager& s) : consumer(c), sm(s) {}
      bool shouldVisitTemplateInstantiations() const { return true; }
      bool shouldVisitImplicitCode() const { return true; }  // lambdas' classes
      bool TraverseDecl(Decl* d) {
        // The C and C++ libraries' code has no sites anyway.
        if (d && !isa<TranslationUnitDecl>(d) && sm.isInSystemHeader(d->getLocation())) return true;
        return RecursiveASTVisitor::TraverseDecl(d);
      }
      bool VisitFunctionDecl(FunctionDecl* f) {
        if (f->doesThisDeclarationHaveABody() && !f->isDependentContext() && !consumer.chosen(f))
          for (std::string& symbol : consumer.symbols(f)) unit_state().excluded_symbols.insert(std::move(symbol));
        return true;
      }
    } walk(*this, context.getSourceManager());
    walk.TraverseDecl(context.getTranslationUnitDecl());
  }

 private:
  void declaration(Decl* d) {
    if (auto* f = dyn_cast<FunctionDecl>(d)) {
      function(f);
    } else if (auto* v = dyn_cast<VarDecl>(d)) {
      if (v->isFileVarDecl() && !v->isTemplated() && !v->getType()->isDependentType() && !v->isInvalidDecl() &&
          !compiler_.getSourceManager().isInSystemHeader(v->getLocation()))
        globals_.push_back(v);
    } else if (auto* context = dyn_cast<DeclContext>(d);
               context && (isa<NamespaceDecl>(d) || isa<LinkageSpecDecl>(d) || isa<ExportDecl>(d) ||
                           (isa<CXXRecordDecl>(d) && !cast<CXXRecordDecl>(d)->isDependentContext()))) {
      for (Decl* inner : context->decls()) declaration(inner);
    }
  }

  void function(FunctionDecl* f) {
    if (!f->doesThisDeclarationHaveABody() || f->isDependentContext() || f->isInvalidDecl()) return;
    if (compiler_.getDiagnostics().hasErrorOccurred()) return;  // clang generates no code: nothing to do
    if (!seen_.insert(f).second) return;
    const SourceManager& sm = compiler_.getSourceManager();
    if (sm.isInSystemHeader(f->getLocation())) {
      // The C and C++ libraries' inline code is not the program's: no sites (the pass skips their entries too).
      PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(f->getLocation()));
      if (where.isValid()) unit_state().system_files.insert(where.getFilename());
      return;
    }
    // A constexpr function may be evaluated by the compiler later in the unit: its conditions stay as written.
    if (f->isConstexpr()) return;
    if (!chosen(f)) return;  // as plain clang compiles it (a pragma after it: the pass drops its sites)
    find_sites(f, compiler_.getASTContext(), unit_state(), markers_, globals_);
  }

  // Whether the user's choice (choice.h, state.h) leaves `f` instrumented. A function in another's body (a
  // lambda's, a local class's) goes with the outermost function that holds it. A function pattern matches the
  // qualified name (`ns::Class::method`; in C the name) or a symbol; a file pattern the file of the definition,
  // named as the compiler names it (after #line).
  bool chosen(const FunctionDecl* f) {
    const UnitState& state = unit_state();
    if (state.functions.empty() && state.files.empty() && state.pragma_exclusions.empty()) return true;
    for (const DeclContext* context = f->getDeclContext(); context; context = context->getParent())
      if (const auto* outer = dyn_cast<FunctionDecl>(context)) f = outer;
    std::string qualified = f->getQualifiedNameAsString();
    std::vector<std::string> symbols = f->isDependentContext() ? std::vector<std::string>() : this->symbols(f);
    auto function_matches = [&](const std::string& pattern) {
      auto matches = [&](const std::string& name) { return wildcard_match(pattern, name); };
      return matches(qualified) || std::any_of(symbols.begin(), symbols.end(), matches);
    };
    if (!state.functions.chosen(function_matches)) return false;
    if (std::any_of(state.pragma_exclusions.begin(), state.pragma_exclusions.end(), function_matches)) return false;
    if (state.files.empty()) return true;
    const SourceManager& sm = compiler_.getSourceManager();
    PresumedLoc where = sm.getPresumedLoc(sm.getExpansionLoc(f->getLocation()));
    std::string path = where.isValid() ? where.getFilename() : "";
    return state.files.chosen([&](const std::string& pattern) { return file_matches(pattern, path); });
  }

  // The symbols clang gives `f` in the module: a constructor's and a destructor's variants, a C function's name.
  std::vector<std::string> symbols(const FunctionDecl* f) {
    if (!names_) names_ = std::make_unique<ASTNameGenerator>(compiler_.getASTContext());
    std::vector<std::string> all = names_->getAllManglings(f);
    all.push_back(names_->getName(f));
    return all;
  }

  CompilerInstance& compiler_;
  std::unique_ptr<ASTNameGenerator> names_;
  MarkerDecls markers_;  // declared in the unit's first function that needs them, used by every later one
  std::vector<VarDecl*> globals_;  // the program's file-scope variables declared so far (scalar-pairs)
  std::set<const FunctionDecl*> seen_;
};

class SitesAction : public PluginASTAction {
 protected:
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance& compiler, StringRef) override {
    UnitState& state = unit_state();
    state = settings_;
    state.ast_ran = true;
    state.vectorize_loops = compiler.getCodeGenOpts().VectorizeLoop;
    state.interleave_loops = compiler.getCodeGenOpts().UnrollLoops;
    // Here rather than in clang's PragmaHandlerRegistry: only when the unit is compiled, so that `-E` (as in
    // -save-temps) keeps the pragma in its output for the compile that follows.
    compiler.getPreprocessor().AddPragmaHandler(new ExcludeFunctionPragma);
    return std::make_unique<SitesConsumer>(compiler);
  }

  // A value the drivers would refuse is refused here too, in their words, rather than read as a default.
  bool ParseArgs(const CompilerInstance& compiler, const std::vector<std::string>& args) override {
    std::optional<std::string> refused = parse_arguments(args, settings_);
    if (!refused) return true;
    DiagnosticsEngine& d = compiler.getDiagnostics();
    d.Report(d.getCustomDiagID(DiagnosticsEngine::Error, "sampler plugin: %0")) << *refused;
    return false;
  }

  ActionType getActionType() override { return AddBeforeMainAction; }

 private:
  UnitState settings_ = default_settings();  // the arguments' settings, which each unit's state starts from
};

}  // namespace
}  // namespace sampler::plugin::ast

static clang::FrontendPluginRegistry::Add<sampler::plugin::ast::SitesAction> registration(
    "sampler", "find sampler instrumentation sites (the drivers sampler-cc and sampler-c++ load it)");
