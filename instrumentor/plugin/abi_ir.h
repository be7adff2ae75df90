// The compiler-runtime contract (<sampler/abi.h>) as the plugin builds it in IR: the IR types of the ABI's structs
// from the same field lists as their C declarations (SAMPLER_SCHEME_FIELDS, SAMPLER_UNIT_FIELDS), their fields by
// name, and the runtime's symbols by a name the compiler checks against the header.
#pragma once

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/LLVMContext.h>

#include "sampler/abi.h"

namespace sampler::plugin {

/// The names of the runtime's symbols the plugin's code refers to (entry points, thread-local variables), each of
/// which compiles only if <sampler/abi.h> declares it: a renamed entry point fails the plugin's build, not the
/// programs' links.
namespace abi {
#define SAMPLER_ABI_SYMBOL(symbol) \
  inline constexpr const char* symbol = (static_cast<void>(sizeof(&::symbol)), #symbol);
SAMPLER_ABI_SYMBOL(sampler_register_unit)
SAMPLER_ABI_SYMBOL(sampler_unregister_unit)
SAMPLER_ABI_SYMBOL(sampler_countdown)
SAMPLER_ABI_SYMBOL(sampler_bank)
SAMPLER_ABI_SYMBOL(sampler_take_opportunity)
SAMPLER_ABI_SYMBOL(sampler_take_counter)
SAMPLER_ABI_SYMBOL(sampler_take_sign)
SAMPLER_ABI_SYMBOL(sampler_take_sign_unsigned)
SAMPLER_ABI_SYMBOL(sampler_take_compare)
SAMPLER_ABI_SYMBOL(sampler_take_compare_unsigned)
SAMPLER_ABI_SYMBOL(sampler_take_compares)
SAMPLER_ABI_SYMBOL(sampler_take_compares_unsigned)
SAMPLER_ABI_SYMBOL(sampler_take_compares_constants)
SAMPLER_ABI_SYMBOL(sampler_take_compares_constants_unsigned)
SAMPLER_ABI_SYMBOL(sampler_take_float_kind)
SAMPLER_ABI_SYMBOL(sampler_take_double_kind)
SAMPLER_ABI_SYMBOL(sampler_take_long_double_kind)
SAMPLER_ABI_SYMBOL(sampler_take_atom)
SAMPLER_ABI_SYMBOL(sampler_take_bound)
#undef SAMPLER_ABI_SYMBOL
}  // namespace abi

/// The fields of struct sampler_scheme and struct sampler_unit, in their order: the index of each in its IR type.
enum class SchemeField : unsigned {
#define SAMPLER_IR_FIELD_NAME(kind, type, name) name,
  SAMPLER_SCHEME_FIELDS(SAMPLER_IR_FIELD_NAME) kCount
};
enum class UnitField : unsigned { SAMPLER_UNIT_FIELDS(SAMPLER_IR_FIELD_NAME) kCount };
#undef SAMPLER_IR_FIELD_NAME

namespace abi_ir {
// The IR type of each kind of field the lists name.
inline llvm::Type* POINTER(llvm::LLVMContext& context, const llvm::DataLayout&) {
  return llvm::PointerType::getUnqual(context);
}
inline llvm::Type* U32(llvm::LLVMContext& context, const llvm::DataLayout&) {
  return llvm::Type::getInt32Ty(context);
}
inline llvm::Type* U64(llvm::LLVMContext& context, const llvm::DataLayout&) {
  return llvm::Type::getInt64Ty(context);
}
inline llvm::Type* UINTPTR(llvm::LLVMContext& context, const llvm::DataLayout& layout) {
  return layout.getIntPtrType(context);
}
}  // namespace abi_ir

/// The IR type of struct sampler_scheme (a literal struct, as clang would give the C declaration).
inline llvm::StructType* scheme_struct_type(llvm::LLVMContext& context, const llvm::DataLayout& layout) {
#define SAMPLER_IR_FIELD_TYPE(kind, type, name) abi_ir::kind(context, layout),
  return llvm::StructType::get(context, {SAMPLER_SCHEME_FIELDS(SAMPLER_IR_FIELD_TYPE)});
}

/// The IR type of struct sampler_unit.
inline llvm::StructType* unit_struct_type(llvm::LLVMContext& context, const llvm::DataLayout& layout) {
  return llvm::StructType::get(context, {SAMPLER_UNIT_FIELDS(SAMPLER_IR_FIELD_TYPE)});
#undef SAMPLER_IR_FIELD_TYPE
}

}  // namespace sampler::plugin
