// The implementations' constructors, for open_store().
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "store/store.h"

namespace sampler::store {

std::unique_ptr<Store> open_sqlite(const std::string& path, std::string& error);
std::unique_ptr<Store> open_postgresql(std::string_view url, std::string& error);

}  // namespace sampler::store
