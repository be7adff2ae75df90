// Writing a plan file (see sections/plan.h).
#include "sections/plan.h"

#include <charconv>

namespace sampler::plan {

void write_plan(std::ostream& out, std::string_view id, const std::vector<Entry>& entries) {
  out << kHeader << "\nid\t" << id << '\n';
  char number[32];
  for (const Entry& entry : entries) {
    auto result = std::to_chars(number, number + sizeof number, entry.probability);
    out << entry.unit << '\t' << entry.scheme << '\t' << entry.site << '\t'
        << std::string_view(number, static_cast<size_t>(result.ptr - number)) << '\n';
  }
}

}  // namespace sampler::plan
