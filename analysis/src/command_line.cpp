// sampler-analyze's --sites FILE... rule (analysis/command_line.h).
#include "analysis/command_line.h"

#include <cstddef>
#include <cstdio>
#include <cstring>

namespace sampler::analysis {

bool is_site_information_file(const std::string& path) {
  if (path.ends_with(".sites")) return true;
  char magic[8] = {};
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  size_t got = std::fread(magic, 1, sizeof magic, file);
  std::fclose(file);
  return (got >= 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0) ||
         (got == 8 && std::memcmp(magic, "!<arch>\n", 8) == 0);
}

std::vector<std::string> take_sites_arguments(const std::vector<std::string>& args, std::vector<std::string>& rest,
                                              const std::function<bool(const std::string&)>& is_sites) {
  std::vector<std::string> sites;
  size_t n = args.size();
  for (size_t i = 0; i < n; ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      rest.insert(rest.end(), args.begin() + static_cast<ptrdiff_t>(i), args.end());
      break;
    }
    if (arg.starts_with("--sites=")) {
      sites.push_back(arg.substr(8));
      continue;
    }
    if (arg != "--sites" && arg != "-s") {
      rest.push_back(arg);
      continue;
    }
    size_t end = i + 1;
    while (end < n && (args[end].empty() || args[end][0] != '-' || args[end] == "-")) ++end;
    if (end == i + 1) {
      rest.push_back(arg);
      continue;
    }
    size_t last = end;
    if (end == n) {  // nothing but operands follows: the ambiguous case
      last = i + 2;
      while (last < n - 1 && is_sites(args[last])) ++last;
    }
    sites.insert(sites.end(), args.begin() + static_cast<ptrdiff_t>(i + 1),
                 args.begin() + static_cast<ptrdiff_t>(last));
    i = last - 1;
  }
  return sites;
}

}  // namespace sampler::analysis
