// Which locals are certainly initialised where (ast_initialisation.h).
#include "ast_initialisation.h"

#include <memory>
#include <vector>

namespace sampler::plugin::ast {

using namespace clang;

namespace {

// The variable an assignment's left side names directly, if any.
const VarDecl* assigned_variable(const Expr* lhs) {
  const auto* ref = dyn_cast<DeclRefExpr>(lhs->IgnoreParens());
  return ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
}

}  // namespace

void Initialisation::analyse(const Decl* function, Stmt* body, ASTContext& context) {
  CFG::BuildOptions options;
  options.setAllAlwaysAdd();  // every expression its own element, in the order of evaluation
  std::unique_ptr<CFG> cfg = CFG::buildCFG(function, body, &context, options);
  if (!cfg) return;
  for (const CFGBlock* block : *cfg)
    for (const CFGElement& element : *block)
      if (auto s = element.getAs<CFGStmt>())
        if (const auto* declaration = dyn_cast<DeclStmt>(s->getStmt()))
          for (const Decl* d : declaration->decls())
            if (const auto* v = dyn_cast<VarDecl>(d); v && v->hasLocalStorage())
              index_.emplace(v, static_cast<unsigned>(index_.size()));
  unsigned size = static_cast<unsigned>(index_.size());
  std::vector<llvm::BitVector> out(cfg->getNumBlockIDs(), llvm::BitVector(size));
  std::vector<bool> reached(cfg->getNumBlockIDs(), false);
  auto in_of = [&](const CFGBlock* block, llvm::BitVector& in) {
    if (block == &cfg->getEntry()) {
      in = llvm::BitVector(size);
      return true;
    }
    bool any = false;
    for (const CFGBlock::AdjacentBlock& pred : block->preds()) {
      const CFGBlock* p = pred.getReachableBlock();
      if (!p || !reached[p->getBlockID()]) continue;
      if (any) in &= out[p->getBlockID()];
      else in = out[p->getBlockID()];
      any = true;
    }
    return any;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const CFGBlock* block : *cfg) {
      llvm::BitVector state(size);
      if (!in_of(block, state)) continue;
      transfer(*block, state, false);
      if (!reached[block->getBlockID()] || state != out[block->getBlockID()]) {
        reached[block->getBlockID()] = true;
        out[block->getBlockID()] = std::move(state);
        changed = true;
      }
    }
  }
  for (const CFGBlock* block : *cfg) {
    llvm::BitVector state(size);
    if (reached[block->getBlockID()] && in_of(block, state)) transfer(*block, state, true);
  }
}

bool Initialisation::certain(const void* point, const VarDecl* v) const {
  if (isa<ParmVarDecl>(v) || v->hasGlobalStorage()) return true;
  auto before = before_.find(point);
  auto index = index_.find(v);
  return before != before_.end() && index != index_.end() && index->second < before->second.size() &&
         before->second[index->second];
}

void Initialisation::transfer(const CFGBlock& block, llvm::BitVector& state, bool record) {
  auto note = [&](const void* point) {
    if (!record) return;
    // A statement clang's CFG holds twice: what is certain at both.
    if (auto [known, fresh] = before_.emplace(point, state); !fresh) known->second &= state;
  };
  auto assigned = [&](const void* point, const Expr* lhs) {
    note(point);
    if (const VarDecl* v = assigned_variable(lhs))
      if (auto index = index_.find(v); index != index_.end()) state.set(index->second);
  };
  for (const CFGElement& element : block) {
    auto s = element.getAs<CFGStmt>();
    if (!s) continue;
    const Stmt* stmt = s->getStmt();
    if (const auto* declaration = dyn_cast<DeclStmt>(stmt)) {
      for (const Decl* d : declaration->decls()) {
        const auto* v = dyn_cast<VarDecl>(d);
        auto index = v ? index_.find(v) : index_.end();
        if (index == index_.end()) continue;
        note(v);
        if (v->hasInit()) state.set(index->second);
        else state.reset(index->second);
      }
    } else if (const auto* op = dyn_cast<BinaryOperator>(stmt); op && op->isAssignmentOp()) {
      assigned(op, op->getLHS());
    } else if (const auto* step = dyn_cast<UnaryOperator>(stmt); step && step->isIncrementDecrementOp()) {
      assigned(step, step->getSubExpr());
    }
  }
}

}  // namespace sampler::plugin::ast
