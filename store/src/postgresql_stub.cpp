// Built when libpq is not available: the PostgreSQL URL is understood but cannot be opened.
#include "store_impl.h"

namespace sampler::store {

std::unique_ptr<Store> open_postgresql(std::string_view, std::string& error) {
  error = "this build has no PostgreSQL support (libpq was not found when it was configured)";
  return nullptr;
}

}  // namespace sampler::store
