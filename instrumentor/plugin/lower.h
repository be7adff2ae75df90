// The lowering pass's one class (lower.cpp runs it): the unit's state, shared by the phases, each in a file of its
// own, in the order they run (docs/architecture.md, "The passes"):
//   lower.cpp             the pass: the markers read into points, one function after another, the markers erased;
//   lower_twins.cpp       twins without sites and the dispatch between them, and the copying every copy uses;
//   lower_counted.cpp     a leaf function's counted copy;
//   lower_loops.cpp       loops checked once at their entry;
//   lower_regions.cpp     the amortized countdown: acyclic regions, each cloned into a fast and a slow side;
//   lower_thresholds.cpp  the unit's weights, and the thresholds the amortized checks compare with;
//   lower_sites.cpp       per-site lowering: the check at each site and its slow path;
//   lower_unit_functions.cpp  the unit's counting functions, which the slow paths call.
#pragma once

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "site_marker.h"

namespace sampler::plugin::lowering {

using namespace llvm;

using namespace llvm;

// One site to lower: its fast path goes before its marker; `value` is what the slow path classifies.
struct Point {
  using Kind = SiteKind;
  static constexpr Kind Entry = Kind::Entry, Branch = Kind::Branch, Return = Kind::Return, Pair = Kind::Pair,
                        Assigned = Kind::Assigned, Atom = Kind::Atom, Unref = Kind::Unref;
  Kind kind;
  Value* scheme;  // its entry in the unit's scheme table (a choice of entries, in a marker the optimiser sank)
  Value* site;    // its number in the scheme (or a choice of numbers)
  Instruction* before;  // the marker
  Value* value = nullptr;
  bool is_signed = false;
  Value* other = nullptr;  // scalar-pairs: what the value is compared with
  AllocaInst* local = nullptr;  // on a region's slow side: the function's countdown, which its check uses
};

// What an amortized check's threshold bounds (sampler/abi.h, `threshold_bounds`), for the runtime to compute it
// from a plan's weights: multiplier * (the sum of times * weight over `sites`, plus the bounds of the thresholds
// `slots` name). `unknown`: a site whose weight the compiler cannot name (2^62 under a plan). `below_unsampled`:
// 2^61 - 1 under a plan, below every countdown that sends the dispatch to the twin and above every other
// (a counted copy's B, tested first: lower_counted.cpp), or the smallest countdown when `dispatch` (the entry of
// its function's dispatch) is off. `dispatch`, without below_unsampled: the entry is a function's dispatch
// (sampler/abi.h, SAMPLER_THRESHOLD_DISPATCH), `sites` the function's, `callees` the dispatches of the functions
// its twin calls; `unknown`, a site it cannot name, keeps the function on.
struct ThresholdBound {
  uint64_t multiplier = 1;
  std::vector<std::pair<uint64_t, uint64_t>> sites;  // (weight ordinal, times)
  std::vector<size_t> slots;
  bool unknown = false;
  bool below_unsampled = false;
  std::optional<size_t> dispatch;
  std::vector<size_t> callees;
};

class Lowering {
 public:
  Lowering(Module& module, bool amortized, bool inline_counters)
      : m_(module), context_(module.getContext()), amortized_(amortized), inline_counters_(inline_counters) {}

  bool run();
  void functions(std::vector<Function*>& with_sites, std::vector<Function*>& twins,
                 std::vector<Function*>& counted) const;

 private:
  // ---- lower.cpp: the pass ----
  void forget_inaccessible_only();
  void read(CallInst* call, SiteKind kind, bool is_signed);

  // ---- lower_regions.cpp: the amortized countdown ----
  static constexpr unsigned kMinRegionSites = 2;  // cloned when a path through the region passes this many sites
  // A function with more sites keeps the per-site check: LLVM's code generator (register coalescing, machine
  // CSE) grows faster than linearly with a function's size, and the clones double it (the compile times that set
  // this bound: docs/performance.md, "Instrumentor"); real programs' largest functions stay under it.
  static constexpr size_t kMaxAmortizedSites = 4096;

  // One function's points, indexed for its regions (each region looks at its own instructions only, so that a
  // function with 10^5 sites and many regions stays linear).
  struct FunctionPoints {
    std::unordered_map<const Instruction*, std::vector<size_t>> at;  // before -> points
    std::unordered_map<const Value*, std::vector<std::pair<Value**, Instruction*>>> operands;
  };

  // A cloned region: its dispatch, its check, its fast side.
  struct ClonedRegion {
    BasicBlock* dispatch;
    ICmpInst* check;  // countdown > k
    unsigned k;
    size_t slot;  // its threshold's entry in the unit's thresholds (k until look_ahead() raises it)
    std::vector<BasicBlock*> fast;  // fast[0] its entry
  };

  // One function's state through the phases that copy its code (copy_functions() makes it for each function and
  // passes it on): what the loops phase leaves for the regions, and the regions' own.
  struct FunctionState {
    AllocaInst* loop_countdown = nullptr;  // for its loops' copies (version_loop())
    std::set<BasicBlock*> loop_guards;  // their guards, each a region's head (it reads the thread's countdown)
    AllocaInst* local_countdown = nullptr;  // for the clones of its regions
    std::set<BasicBlock*> dispatches;  // its cloned regions' heads
    std::vector<std::pair<BasicBlock*, Instruction*>> reloads;  // each such head's load of the thread's countdown
    std::set<BasicBlock*> region_blocks;  // both sides of its cloned regions
    std::vector<ClonedRegion> cloned_regions;  // in reverse post-order of their heads
  };

  static bool is_marker(const CallBase& call);
  static bool cuts_region(const Instruction& inst);
  static bool can_amortize(Function& f);
  void amortize(Function& f, const std::vector<size_t>& indices, FunctionState& state);
  static Instruction* after_allocas(BasicBlock& entry);
  static bool has_token(const std::vector<BasicBlock*>& blocks);
  static bool passes_countdown(BasicBlock* block);
  void chain_dispatches(FunctionState& state);
  void look_ahead(const std::vector<size_t>& indices, const FunctionState& state);
  static bool can_enter(BasicBlock* dispatch);
  void enter_fast(const ClonedRegion& region, const std::vector<BasicBlock*>& blocks,
                  std::unordered_map<Value*, std::vector<std::pair<Value**, Instruction*>>>& operands);
  void clone_region(Function& f, FunctionState& state, std::vector<BasicBlock*> blocks, unsigned k,
                    FunctionPoints& points);
  void forget_variables(const std::vector<BasicBlock*>& blocks);
  void keep_countdown_local(Function& f, const FunctionState& state, BasicBlock* block,
                            const std::set<BasicBlock*>& region);

  // ---- lower_loops.cpp: loops checked once, at their entry ----
  static constexpr uint64_t kMaxVersionedLoopSites = 256;  // in the loop's own blocks: the copy's size
  static constexpr uint64_t kMaxLoopSitesBound = uint64_t{1} << 14;  // w: keeps (B + 1) * w below 2^62
  static constexpr uint64_t kMaxTripsChecked = uint64_t{1} << 48;

  struct VersionedLoop {
    std::vector<BasicBlock*> blocks;  // in reverse post-order, blocks[0] the header
    BasicBlock* entering = nullptr;  // the one block outside the loop that enters it
    Value* trips = nullptr;  // B, computed before the loop's one way in
    uint64_t per_iteration = 0;  // w
    bool around_loops = false;  // not innermost: its copy is of the whole nest
    // A nest's blocks, each with the most times one iteration of it can pass the block: the product of the
    // constant maxima of trips (plus one) of the loops inside it that hold the block (nest_iteration_times()).
    std::unordered_map<const BasicBlock*, uint64_t> times;
  };

  void version_loops(Function& f, const std::vector<size_t>& indices, FunctionState& state);
  static bool leaves_by_inductions(const Loop& loop, ScalarEvolution& evolution);
  static bool versionable(Loop& loop, const std::unordered_map<const BasicBlock*, uint64_t>& sites,
                          const std::unordered_map<const BasicBlock*, size_t>& order, LoopInfo& info,
                          ScalarEvolution& evolution, VersionedLoop& v);
  static std::optional<uint64_t> most_per_iteration(Loop& loop,
                                                    const std::unordered_map<const BasicBlock*, uint64_t>& sites,
                                                    const std::unordered_map<const BasicBlock*, size_t>& order,
                                                    LoopInfo& info, ScalarEvolution& evolution,
                                                    std::vector<BasicBlock*>& blocks);
  static bool nest_iteration_times(Loop& loop, LoopInfo& info, ScalarEvolution& evolution, VersionedLoop& v);
  void version_loop(Function& f, VersionedLoop& v, const std::vector<size_t>& indices, FunctionState& state);
  Value* fast_side_test(IRBuilder<>& b, Value* count, Value* most);
  BasicBlock* planned_copy_guard(Function& f, VersionedLoop& v, const std::vector<size_t>& indices,
                                 const std::set<BasicBlock*>& inside, Value* count, Value* trips,
                                 BasicBlock* planned, BasicBlock* header);
  void leave_copy(Function& f, VersionedLoop& v, const std::vector<BasicBlock*>& copy, ValueToValueMapTy& map,
                  AllocaInst* local);
  Value* iteration_weight(IRBuilder<>& b, const std::vector<size_t>& indices,
                          function_ref<uint64_t(BasicBlock*)> times);
  std::pair<BasicBlock*, Value*> planned_nest_guard(Function& f, VersionedLoop& v, const std::vector<size_t>& indices,
                                                    Value* count, BasicBlock* planned, BasicBlock* header);
  std::vector<BasicBlock*> check_each_iteration(Function& f, VersionedLoop& v, const std::vector<BasicBlock*>& copy,
                                                ValueToValueMapTy& map, AllocaInst* local, Value* weight);

  // ---- lower_counted.cpp: a leaf function's counted copy ----
  static constexpr unsigned kMaxConstantTripsBits = 34;  // (2^34 + 1) * w stays below 2^48, B with them too
  struct CountedCopy {
    Function* copy = nullptr;
    std::vector<Instruction*> bound;  // made in the copy's entry from its arguments, for the dispatch to take
    std::vector<std::pair<Value*, uint64_t>> loops;  // each outermost loop B takes from the arguments: trips, w
    uint64_t constant = 0;  // the rest of B: the sites outside loops, the loops with a constant maximum of trips
    // In the dispatch: the countdown it read, the block that tests it (filled in last, after f.sampled's thresholds,
    // by counted_test(); with B a constant the dispatch's entry, which tests B first), and the blocks that call
    // the twin, the counted copy and f.sampled.
    Value* count = nullptr;
    BasicBlock* test = nullptr;
    BasicBlock* off = nullptr;
    BasicBlock* fast = nullptr;
    BasicBlock* sampled = nullptr;
  };

  std::optional<CountedCopy> counted_copy(Function& f, const std::vector<size_t>& indices);
  bool call_bound(CountedCopy& c, const std::vector<std::pair<size_t, Instruction*>>& passed);
  void counted_test(Function& f, CountedCopy& c);
  // A loop counted by iterations computes their sites on each exit edge (a subtraction, a shift, a multiplication
  // where the latch's path took one addition an iteration); one with more exits (bzip2's mainGtU returns from each
  // of its comparisons, after an iteration or two) keeps the latch's subtraction (docs/performance.md, "Fast sides:
  // a counted loop's iterations").
  static constexpr size_t kMaxIterationExits = 4;
  // A loop's iterations completed before its last: w times (the variable's value - its start) / 2^shift,
  // the difference reversed for a downward step (subtract_by_iterations()).
  struct Iterations {
    PHINode* variable;
    Value* start;
    bool down;
    unsigned shift;
    uint64_t w;
  };
  void subtract_by_iterations(Function& copy, const std::vector<std::pair<size_t, Instruction*>>& passed,
                              AllocaInst* local);
  static std::optional<Iterations> counted_iterations(Loop& loop, ScalarEvolution& evolution,
                                                      const DataLayout& layout);

  // ---- lower_twins.cpp: twins and dispatch ----
  // The countdown a thread with sampling off runs the twins at (lower_twins.cpp says why 2^61).
  static constexpr int64_t kUnsampledCountdown = int64_t{1} << 61;
  void copy_functions();
  static bool has_loop(Function& f);
  static bool can_forward(Function& f);
  static void make_local(Function& copy, Function& f, const char* suffix);
  Function* make_twin(Function& f);
  void call_twins(Function& f, Function& twin);
  void dispatch_thresholds(const std::vector<std::pair<Function*, std::vector<size_t>>>& by_function);
  Value* unsampled_at(IRBuilder<>& b, Function& f);
  Function& dispatch(Function& f, const std::vector<size_t>& indices, std::optional<CountedCopy>& counted);
  AttributeList call_attributes(Function& f);
  static void merge_copies(Instruction& inst, ValueToValueMapTy& map, const std::set<BasicBlock*>& inside,
                           const std::set<BasicBlock*>& copies,
                           const std::vector<std::pair<Value**, BasicBlock*>>& operands,
                           ValueToValueMapTy* second = nullptr);
  static std::vector<BasicBlock*> copy_blocks(Function& f, const std::vector<BasicBlock*>& blocks,
                                              const char* suffix, ValueToValueMapTy& map);
  static void erase_markers(const std::vector<BasicBlock*>& blocks);

  // ---- lower_thresholds.cpp: weights and thresholds ----
  void find_weights();
  Value* site_weight(IRBuilder<>& b, const Point& p);
  Value* weight_ordinal(IRBuilder<>& b, const Point& p);
  Value* threshold(IRBuilder<>& b, uint64_t k, size_t& slot, ThresholdBound bound);
  size_t new_threshold(uint64_t k, ThresholdBound bound);
  Value* load_threshold(IRBuilder<>& b, size_t slot);
  std::optional<std::vector<uint64_t>> ordinals(const Point& p);
  static bool choices(Value* v, std::vector<Value*>& out, unsigned depth = 0);
  void bound_sites(ThresholdBound& bound, const Point& p, uint64_t times = 1);
  void subtract_passed(const std::vector<std::pair<size_t, Instruction*>>& passed, AllocaInst* local,
                       ValueToValueMapTy& map, bool by_block, bool immediates = false,
                       const std::set<BasicBlock*>* stretches = nullptr);
  void set_threshold(ICmpInst* check, size_t slot, uint64_t k);
  std::optional<std::map<uint64_t, uint64_t>> flatten(size_t slot);
  void emit_thresholds();

  // ---- lower_sites.cpp: per-site lowering and slow paths ----
  // How a unit's counting function classifies (a, b): the column is a (function-entries: 0, branches: the
  // condition), or sampler_classify_compare(a, b) signed or unsigned (returns: b = 0; scalar-pairs).
  enum class Classify { Column, Compare, CompareUnsigned };

  FunctionCallee runtime(const char* name, std::vector<Type*> params);
  Value* widen(IRBuilder<>& b, Value* v, bool is_signed);
  void instrument_group(size_t begin, size_t end);
  Value* countdown_address(IRBuilder<>& b, AllocaInst* local);
  StoreInst* reload_local(IRBuilder<>& b, AllocaInst* local);
  bool take_compares(size_t begin, size_t end, Instruction* at, Value* countdown, AllocaInst* local);
  void instrument(Point& p, Instruction* at = nullptr);
  static uint64_t columns_of(Point::Kind kind);
  static bool counts_in_line(Point::Kind kind);
  void count_inline(IRBuilder<>& b, Point& p, Value* address, Value* reached);
  void emit_value_slow_path(IRBuilder<>& slow, Point& p, Value* scheme_entry, Value* site);

  // ---- lower_unit_functions.cpp: the unit's counting functions ----
  Function* unit_take(Classify how);
  Function* unit_take_group(Classify how);
  Function* unit_walk_group(Classify how);
  Function* unit_weigh_group(Classify how);
  std::tuple<PHINode*, PHINode*, Value*> emit_group_sample(Function* f, BasicBlock* entry, BasicBlock* after,
                                                           Classify how);
  PHINode* draw_and_record(IRBuilder<>& b, BasicBlock* record, BasicBlock* after, Value* reached, Function* f,
                           Value* count, Value* i, Classify how);
  void record_pair(IRBuilder<>& r, Function* f, Value* count, Value* i, Classify how);
  Function* unit_function(const char* name, std::vector<Type*> params);
  Function* group_function(Classify how, const char* compares, const char* unsigned_compares);
  std::pair<PHINode*, Instruction*> emit_draw(IRBuilder<>& b, BasicBlock* sampled, BasicBlock* not_sampled,
                                              Value* reached);
  GlobalVariable* thread_bank();
  void count_at(IRBuilder<>& r, Value* slots, Classify how, Value* a, Value* other);

  // The unit's state, which every phase shares (one function's is a FunctionState).
  Module& m_;
  LLVMContext& context_;
  bool amortized_;
  bool inline_counters_;  // count samples in line (ABI version 2); not for a unit with timestamps
  std::vector<Point> points_;
  std::vector<CallInst*> markers_;
  std::map<Function*, uint64_t> most_pairs_;         // the most pairs one assignment has, per function
  std::map<Function*, AllocaInst*> pair_operands_;   // an array of that many, for sampler_take_compares()
  std::map<std::vector<uint64_t>, GlobalVariable*> pair_constants_;  // the unit's constant ends of groups
  std::map<Function*, Function*> twins_;              // function -> its twin without sites
  std::map<Function*, std::set<Function*>> twin_callees_;  // function -> the functions whose twins its twin calls
  std::map<Function*, size_t> dispatch_slots_;        // function -> its dispatch's entry of the thresholds
  std::set<Function*> with_sites_;                    // the functions whose markers were lowered
  std::set<Function*> counted_;                       // the leaf functions' counted copies (counted_copy())
  GlobalVariable* countdown_ = nullptr;
  GlobalVariable* bank_ = nullptr;  // sampler_bank, the thread's countdowns drawn ahead
  Function* unit_takes_[6] = {};    // the unit's counting functions: unit_take()'s by Classify, then the groups'
  bool unit_countdown_ = false;  // the unit declares sampler_countdown itself (the hand macros, a test)
  GlobalVariable* weights_ = nullptr;        // the unit's weights (find_weights()), or null
  GlobalVariable* schemes_table_ = nullptr;  // the unit's scheme table
  std::vector<uint64_t> scheme_bases_;       // each scheme's first entry in the weights
  GlobalVariable* bases_ = nullptr;          // the same, for sites whose scheme is a choice
  GlobalVariable* thresholds_placeholder_ = nullptr;  // the thresholds, until their number is known
  std::vector<uint64_t> threshold_values_;  // their values under uniform sampling
  std::vector<ThresholdBound> threshold_bounds_;  // what each bounds, from which a plan's runtime computes it
};

}  // namespace sampler::plugin::lowering
