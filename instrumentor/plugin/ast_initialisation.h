// scalar-pairs: which locals of a function body are certainly initialised where, so that a site never reads an
// indeterminate value (undefined behaviour the program did not have).
#pragma once
#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/Analysis/CFG.h>
#include <llvm/ADT/BitVector.h>

#include <map>

namespace sampler::plugin::ast {

// Which locals are certainly initialised where: a forward must-analysis over clang's CFG of a body. A local is,
// on every path from the body's start to the point, declared with an initialiser or assigned directly (=, op=,
// ++, --) since its declaration was last reached (a loop's body declares its locals afresh). One initialised
// only through its address (`scanf("%d", &n)`) is not: whether it was cannot be known. Code the analysis does
// not reach (or a body clang cannot make a CFG of) has nothing certainly initialised.
class Initialisation {
 public:
  /// Analyses `body`, the body of `function` (a function's or a lambda's); what it finds is added to what the
  /// analyses before found (a lambda's body is analysed apart from the body that holds it).
  void analyse(const clang::Decl* function, clang::Stmt* body, clang::ASTContext& context);

  /// Whether `v` is certainly initialised just before `point` (an assignment, or the VarDecl declared) is done.
  bool certain(const void* point, const clang::VarDecl* v) const;

 private:
  void transfer(const clang::CFGBlock& block, llvm::BitVector& state, bool record);

  std::map<const clang::VarDecl*, unsigned> index_;  // the locals the analyses declare, numbered
  std::map<const void*, llvm::BitVector> before_;    // an assignment or a declared local: what is initialised there
};

}  // namespace sampler::plugin::ast
