// sampler-run's settings (launcher/settings.h): the configuration file and the user's directories.
#include "launcher/settings.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string_view>

#include "private_files.h"
#include "sections/diagnostics.h"
#include "sections/lines.h"

namespace sampler::launcher {

void say(const LaunchSettings& settings, const std::string& message) {
  // What the collector answered and file names may hold anything: never raw on the terminal.
  if (settings.verbose) std::fprintf(stderr, "sampler-run: %s\n", escape_control_characters(message).c_str());
}

UserDirs default_user_dirs() {
  UserDirs dirs;
  std::string config_why, cache_why;
  std::string config = user_base_dir("XDG_CONFIG_HOME", ".config", config_why);
  std::string cache = user_base_dir("XDG_CACHE_HOME", ".cache", cache_why);
  if (!config.empty()) dirs.config_file = config + "/sampler/run.conf";
  if (!cache.empty()) {
    dirs.state_dir = cache + "/sampler";
    dirs.spool_dir = dirs.state_dir + "/spool";
  }
  if (config.empty() || cache.empty()) dirs.why = config.empty() ? config_why : cache_why;
  return dirs;
}

namespace {

// The configuration's keys whose value is kept as written.
struct TextKey {
  std::string_view key;
  std::string LaunchSettings::*setting;
};
constexpr TextKey kTextKeys[] = {
    {"upload", &LaunchSettings::upload_url}, {"api-key", &LaunchSettings::api_key},
    {"app", &LaunchSettings::app},           {"version", &LaunchSettings::version},
    {"sparsity", &LaunchSettings::sparsity}, {"seed", &LaunchSettings::seed},
    {"spool", &LaunchSettings::spool_dir},   {"keep", &LaunchSettings::keep_dir},
    {"ca-file", &LaunchSettings::ca_file},   {"plan", &LaunchSettings::plan},
};

}  // namespace

bool read_config(const std::string& path, bool private_file, LaunchSettings& s, bool& found, std::string& error,
                 std::string& refused) {
  std::string bytes;
  if (private_file) {
    bool missing = false;
    found = read_private_file(path, 1u << 20, bytes, refused, &missing);
    if (missing) refused.clear();
  } else {
    std::ifstream file(path, std::ios::binary);
    found = static_cast<bool>(file);
    bytes.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  if (!found) return true;
  std::string_view rest = bytes;
  uint64_t number = 0;
  auto unsigned_value = [](const std::string& text, uint64_t& value) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size();
  };
  while (!rest.empty()) {
    std::string line(text::take_line(rest));
    ++number;
    auto trim = [](std::string text) {
      size_t a = text.find_first_not_of(" \t\r"), b = text.find_last_not_of(" \t\r");
      return a == std::string::npos ? std::string() : text.substr(a, b - a + 1);
    };
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    size_t equals = line.find('=');
    if (equals == std::string::npos) {
      error = "line " + std::to_string(number) + ": expected KEY = VALUE";
      return false;
    }
    std::string key = trim(line.substr(0, equals)), value = trim(line.substr(equals + 1));
    uint64_t n = 0;
    bool ok = true;
    const auto text = std::find_if(std::begin(kTextKeys), std::end(kTextKeys),
                                   [&key](const TextKey& entry) { return entry.key == key; });
    if (key == "enabled") {
      ok = value == "yes" || value == "no" || value == "true" || value == "false";
      s.enabled = value == "yes" || value == "true";
    } else if (text != std::end(kTextKeys)) {
      s.*(text->setting) = value;
    } else if (key == "upload-timeout-ms") {
      ok = unsigned_value(value, s.upload_timeout_ms);
    } else if (key == "interval") {
      ok = unsigned_value(value, s.interval_seconds) && s.interval_seconds >= 1 &&
           s.interval_seconds <= kMaxIntervalSeconds;
    } else if (key == "spool-max-bytes") {
      ok = unsigned_value(value, s.spool_max_bytes);
    } else if (key == "spool-max-age-days") {
      ok = unsigned_value(value, n);
      s.spool_max_age_seconds = n * 86400;
    } else {
      error = "line " + std::to_string(number) + ": unknown key '" + key + "'";
      return false;
    }
    if (!ok) {
      error = "line " + std::to_string(number) + ": bad value for '" + key + "'";
      return false;
    }
  }
  return true;
}

}  // namespace sampler::launcher
