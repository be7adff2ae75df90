#include "collector/outcome.h"

#include <charconv>
#include <cstdint>
#include <cstdio>

#include "sections/lines.h"

namespace sampler::collector {
namespace {

// Values are one line each: a tab or line end inside one would break the format, so they become spaces.
std::string clean(std::string_view value) {
  std::string out(value);
  for (char& c : out) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

bool parse_int(std::string_view text, int& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parse_double(std::string_view text, double& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value >= 0;
}

}  // namespace

bool valid_run_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string format_outcome(const Outcome& o) {
  std::string out = "<report id=\"outcome\">\n";
  auto line = [&out](std::string_view key, std::string_view value) {
    out.append(key).append("\t").append(clean(value)).append("\n");
  };
  char number[64];
  line("run-id", o.run_id);
  line("app", o.app);
  if (!o.version.empty()) line("version", o.version);
  if (o.exit_status) line("exit-status", std::to_string(*o.exit_status));
  if (o.signal) line("signal", std::to_string(*o.signal));
  std::snprintf(number, sizeof number, "%.6f", o.wall_seconds);
  line("wall-seconds", number);
  std::snprintf(number, sizeof number, "%.6f", o.cpu_seconds);
  line("cpu-seconds", number);
  if (!o.sparsity.empty()) line("sparsity", o.sparsity);
  if (!o.seed.empty()) line("seed", o.seed);
  for (const auto& [file, id] : o.build_ids) out += "build-id\t" + clean(id) + "\t" + clean(file) + "\n";
  out += "</report>\n";
  return out;
}

std::string format_interim(uint64_t sequence) {
  return "<report id=\"interim\">\nsequence\t" + std::to_string(sequence) + "\n</report>\n";
}

bool parse_interim(std::string_view body, uint64_t first_line, uint64_t& sequence, std::string& error) {
  uint64_t number = first_line;
  while (!body.empty()) {
    std::string_view line = text::take_line(body);
    uint64_t here = number++;
    if (!line.starts_with("sequence\t")) continue;  // other lines: a later writer's additions
    std::string_view value = line.substr(9);
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), sequence);
    if (ec != std::errc() || end != value.data() + value.size() || sequence == 0 || sequence > INT64_MAX) {
      error = "line " + std::to_string(here) + ": the interim sequence is not a number from 1 to 2^63-1";
      return false;
    }
    return true;
  }
  error = "line " + std::to_string(first_line > 0 ? first_line - 1 : 0) + ": the interim subreport has no sequence";
  return false;
}

bool parse_outcome(std::string_view body, uint64_t first_line, Outcome& o, std::string& error) {
  uint64_t number = first_line;
  bool have_run_id = false;
  while (!body.empty()) {
    std::string_view line = text::take_line(body);
    uint64_t here = number++;
    if (line.empty()) continue;
    size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      error = "line " + std::to_string(here) + ": outcome line without a tab (expected KEY<TAB>VALUE)";
      return false;
    }
    std::string_view key = line.substr(0, tab), value = line.substr(tab + 1);
    auto bad = [&](const char* what) {
      error = "line " + std::to_string(here) + ": " + what;
      return false;
    };
    if (key == "run-id") {
      if (!valid_run_id(value)) return bad("run-id must be 1 to 64 characters of 0-9, A-Z, a-z, '-' and '_'");
      o.run_id = value;
      have_run_id = true;
    } else if (key == "app") {
      o.app = value;
    } else if (key == "version") {
      if (value.size() > 128) return bad("version longer than 128 characters");
      o.version = value;
    } else if (key == "exit-status") {
      int status = 0;
      if (!parse_int(value, status) || status < 0 || status > 255) return bad("exit-status is not 0 to 255");
      o.exit_status = status;
    } else if (key == "signal") {
      int signal = 0;
      if (!parse_int(value, signal) || signal < 1 || signal > 127) return bad("signal is not 1 to 127");
      o.signal = signal;
    } else if (key == "wall-seconds") {
      if (!parse_double(value, o.wall_seconds)) return bad("wall-seconds is not a non-negative number");
    } else if (key == "cpu-seconds") {
      if (!parse_double(value, o.cpu_seconds)) return bad("cpu-seconds is not a non-negative number");
    } else if (key == "sparsity") {
      o.sparsity = value;
    } else if (key == "seed") {
      o.seed = value;
    } else if (key == "build-id") {
      size_t second = value.find('\t');
      o.build_ids.emplace_back(second == std::string_view::npos ? std::string() : std::string(value.substr(second + 1)),
                               std::string(value.substr(0, second)));
    }
    // Other keys: a later launcher's additions, carried in the body and ignored here.
  }
  if (!have_run_id) {
    error = "line " + std::to_string(first_line > 0 ? first_line - 1 : 0) + ": the outcome subreport has no run-id";
    return false;
  }
  if (o.exit_status && o.signal) {
    error = "line " + std::to_string(first_line > 0 ? first_line - 1 : 0) +
            ": the outcome subreport has both an exit-status and a signal";
    return false;
  }
  return true;
}

}  // namespace sampler::collector
