// Which functions sampler-cc instruments: the patterns of -fsampler-include-function=, -fsampler-exclude-function=,
// -fsampler-include-file=, -fsampler-exclude-file= and #pragma sampler_exclude_function, matched as
// docs/instrumenting.md section 0 says. Without clang, so that the driver's tests check the rules too.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace sampler::plugin {

/// Whether `text` matches `pattern`, in which `*` stands for any run of characters (none, '/' and ':' too) and
/// every other character for itself.
inline bool wildcard_match(std::string_view pattern, std::string_view text) {
  // Greedy, going back only to the last star: a star never has to try more than the rest of the text.
  size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

/// A file pattern against the path of a file as the compiler names it: a pattern with a '/' matches the whole
/// path (a leading "./" left out), one without matches the base name, wherever the build keeps the file.
inline bool file_matches(std::string_view pattern, std::string_view path) {
  while (path.substr(0, 2) == "./") path.remove_prefix(2);
  if (pattern.find('/') == std::string_view::npos) {
    size_t slash = path.rfind('/');
    if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  }
  return wildcard_match(pattern, path);
}

/// The include and exclude patterns of one kind (functions or files).
struct Choice {
  std::vector<std::string> include, exclude;

  bool empty() const { return include.empty() && exclude.empty(); }

  /// Whether a function (or file) is chosen, `matches(pattern)` telling whether a pattern matches it: it matches
  /// no exclude pattern and, if any include pattern is given, matches one. The exclude pattern `*` on its own
  /// is the original's "and nothing else" (-finclude-function=f -fexclude-function='*'): it leaves out what no
  /// include pattern matches, not what one does.
  template <class Matches>
  bool chosen(const Matches& matches) const {
    bool star = false;
    for (const std::string& pattern : exclude) {
      if (pattern == "*")
        star = true;
      else if (matches(pattern))
        return false;
    }
    if (!include.empty()) return std::any_of(include.begin(), include.end(), matches);
    return !star;
  }
};

}  // namespace sampler::plugin
