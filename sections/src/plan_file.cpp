// check_plan() (sections/plan_file.h): the codec's Reader over every line, and a sorted list of the entries'
// (unit, scheme, site) to find one named twice.
#include "sections/plan_file.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "sections/core/plan.h"

namespace sampler::plan {
namespace {

// An entry's site, as views into the plan's text (which outlives the check), and the line that named it.
struct Named {
  std::string_view unit, scheme;
  uint32_t site;
  uint64_t line;
  auto key() const { return std::tie(unit, scheme, site); }
};

}  // namespace

bool check_plan(std::string_view text, Summary& summary, uint64_t& line, std::string& error) {
  summary = Summary();
  Reader reader;
  std::vector<Named> named;
  std::string_view rest = text;
  line = 0;
  while (!rest.empty()) {
    // Split at '\n' only: a '\r' stays in its line, which the codec then refuses, as the runtime's reading does.
    const size_t end = std::min(rest.find('\n'), rest.size());
    const std::string_view current = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    line = reader.line_number() + 1;
    if (current.size() > kMaxLineBytes) {
      error = "a line longer than " + std::to_string(kMaxLineBytes) + " bytes";
      return false;
    }
    const Line parsed = reader.next(current);
    if (parsed.kind == LineKind::malformed) {
      error = parsed.error;
      return false;
    }
    if (parsed.kind == LineKind::id) summary.id.assign(parsed.id);
    if (parsed.kind == LineKind::entry) named.push_back({parsed.unit, parsed.scheme, parsed.site, line});
  }
  if (const char* problem = reader.finish(); problem != nullptr) {
    line = std::max<uint64_t>(line, 1);
    error = problem;
    return false;
  }
  // The later of two lines naming one site is the one at fault: stable sort keeps file order among equals.
  std::stable_sort(named.begin(), named.end(), [](const Named& a, const Named& b) { return a.key() < b.key(); });
  uint64_t repeated = 0, first = 0;
  for (size_t i = 1; i < named.size(); ++i) {
    if (named[i].key() == named[i - 1].key() && (repeated == 0 || named[i].line < repeated)) {
      repeated = named[i].line;
      first = named[i - 1].line;
    }
  }
  if (repeated != 0) {
    line = repeated;
    error = "the same unit, scheme and site as line " + std::to_string(first);
    return false;
  }
  summary.entries = named.size();
  return true;
}

}  // namespace sampler::plan
