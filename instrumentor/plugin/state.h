// What the clang AST action (ast_action.cpp, its finders) hands the collecting pass (pass.cpp) for one translation unit. Both
// live in the same shared object, loaded once into the same clang process as -fplugin= and -fpass-plugin=, so they
// share this state; the AST action resets it for each unit (clang may compile several sources in one process),
// and so does the collecting pass once it has read it. The lowering's settings (countdown, timestamps, the loop
// options) go on in the module, as !sampler.lowering (docs/decisions.md, "The lowering's settings travel in the
// module").
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "choice.h"
#include "sections/scheme_table.h"

namespace sampler::plugin {

/// One branch site, found in the AST. The AST action wraps its condition in a call of the marker function
/// (kBranchMarker) whose first argument is the index of this record; the pass replaces the call by the fast path.
struct BranchSite {
  std::string file;  ///< presumed file name, as the debug information names it
  unsigned line = 0;
  std::string text;  ///< the predicate as written
};

/// One call returning an integer, pointer or bool, found in the AST, keyed by the location clang gives the call
/// instruction in the debug information (the expansion location of the call's expression location).
struct CallSite {
  std::string text;         ///< the callee as written (its expression, for indirect calls)
  std::string callee_name;  ///< the called function's symbol, when the call is direct: breaks ties
  bool is_signed = false;   ///< classified as a signed value (negative, zero, positive)
};

/// One scalar-pairs site: the value just assigned to an lvalue against one other operand. The AST action puts
/// after each instrumented assignment a call `__sampler_pairs_marker(FIRST, value, other 1, ..., other k)`, whose
/// k sites are FIRST ... FIRST + k - 1 here.
struct PairSite {
  std::string lvalue;        ///< as written
  std::string lvalue_scope;  ///< local, global or mem
  std::string lvalue_form;   ///< direct, field or index
  std::string other;         ///< the variable's name or the constant's value
  std::string other_kind;    ///< local-init, global or const (the lvalue's own old value: local-init or global)
  bool is_signed = false;    ///< compared as signed 64-bit values (else unsigned; pointers are unsigned)
};

/// One site of float-kinds or bounds (the value just assigned) or atoms (an access to shared memory). The AST
/// action puts a marker call where the value or address is known: `__sampler_value_marker(SITE, value)` after
/// the assignment, `*__sampler_atom_marker(SITE, &lvalue)` in place of the lvalue accessed; SITE indexes here.
struct ValueSite {
  SchemeId scheme;                  ///< float-kinds, bounds or atoms
  std::vector<std::string> fields;  ///< the scheme's own fields (sampler manual)
  bool is_signed = false;           ///< bounds: the value is sign-extended (else zero-extended; pointers)
  unsigned char bound_type = 0;     ///< bounds: its SAMPLER_BOUND_* value
};

/// The file's base name, line, column: the AST names a file as the compiler was given it (or as #include found
/// it), the debug information splits a directory off it; the base name is the same in both.
using CallKey = std::tuple<std::string, unsigned, unsigned>;

/// The default bound on the scalar-pairs sites of one function (sampler-cc -fsampler-max-pairs=N; 0: no bound).
/// docs/instrumenting.md section 0 says which sites go first; docs/performance.md why this number.
inline constexpr unsigned kDefaultMaxPairs = 2000;

struct UnitState {
  bool ast_ran = false;
  SchemeSet schemes;                 ///< enabled schemes (-fplugin-arg-sampler-schemes=)
  std::string timestamps = "none";   ///< -fplugin-arg-sampler-timestamps=
  std::string countdown = "region";  ///< -fplugin-arg-sampler-countdown=: region (amortized) or site
  unsigned max_pairs = kDefaultMaxPairs;  ///< -fplugin-arg-sampler-max-pairs=: scalar-pairs sites per function, 0: all
  /// The original's wider scalar-pairs, each off unless asked for (-fplugin-arg-sampler-NAME, sampler-cc
  /// -fsampler-NAME): the constants written in the function besides 0, and assignments into a field, into an
  /// array element, through a pointer besides those to a named variable directly (docs/instrumenting.md).
  bool compare_constants = false, assign_into_field = false, assign_into_index = false,
       assign_across_pointer = false;
  bool vectorize_loops = false;   ///< clang's -fvectorize (on at -O2 and above): the clean-up vectorizes too
  bool interleave_loops = false;  ///< clang's loop interleaving (-funroll-loops, on at -O2 and above)
  std::vector<BranchSite> branches;
  std::vector<PairSite> pairs;
  std::map<CallKey, std::vector<CallSite>> calls;
  std::vector<ValueSite> values;
  std::map<CallKey, std::string> unrefs;  ///< g-object-unref: calls of g_object_unref, the object as written
  std::set<std::string> system_files;  ///< files of functions in system headers: not instrumented
  /// Which functions to instrument (-fplugin-arg-sampler-include-function= and the others; choice.h), and the
  /// names of `#pragma sampler_exclude_function` seen so far in the unit.
  Choice functions, files;
  std::vector<std::string> pragma_exclusions;
  /// The symbols of the functions left out (the AST action decides at the end of the unit, once every pragma is
  /// known): the pass gives them no sites.
  std::set<std::string> excluded_symbols;

  bool enabled(SchemeId scheme) const { return schemes.has(scheme); }
};

UnitState& unit_state();

/// The branch marker's symbol: `_Bool __sampler_branch_marker(int site, _Bool condition)`.
inline constexpr const char* kBranchMarker = "__sampler_branch_marker";
/// The scalar-pairs marker's symbol: `void __sampler_pairs_marker(int first_site, ...)`.
inline constexpr const char* kPairsMarker = "__sampler_pairs_marker";

/// The value marker's symbol: `void __sampler_value_marker(int site, ...)` (the value, of its own type).
inline constexpr const char* kValueMarker = "__sampler_value_marker";
/// The atoms marker's symbol: `void* __sampler_atom_marker(int site, void* address)`, returning the address.
inline constexpr const char* kAtomMarker = "__sampler_atom_marker";

/// Makes a site field one line: whitespace runs (tabs and newlines included) become one space.
std::string one_line(const std::string& text);

}  // namespace sampler::plugin
