// sampler-symbols: symbol files for symbolizing crash stacks by build ID (issue 13).
//
//   sampler-symbols gsym app libplugin.so -o symbols/      # symbols/BUILDID.gsym for each file
//   sampler-symbols lookup symbols/BUILDID.gsym 0x1140     # frames as llvm-symbolizer prints them
//   sampler-symbols push --url URL --api-key KEY app       # upload to a collector (seed 002's API)
//
// The work is in symbols/dwarf_to_gsym.h (DWARF through LLVM's DebugInfo, GSYM as seed 001 lays it out); this is
// options, one library call per file, exit status. Each file written is read back and checked before the next.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "collector/launcher.h"
#include "collector/symbols_api.h"
#include "sections/gsym.h"
#include "sections/line_reader.h"
#include "symbols/dwarf_to_gsym.h"
#include "symbols/symbolize.h"
#include "tool.h"

namespace {

constexpr std::array kOptions = {
    sampler::tool::Option{"output", 'o', "DIR", "write DIR/BUILDID.gsym (default: the current directory)"},
    sampler::tool::Option{"symbfile", 0, nullptr,
                          "also write DIR/BUILDID.ranges.symbfile and DIR/BUILDID.returnpads.symbfile (seed 002)"},
    sampler::tool::Option{"debug-dir", 0, "DIR",
                          "look up separate debug files as DIR/.build-id/xx/rest.debug (default /usr/lib/debug)"},
    sampler::tool::Option{"url", 0, "URL", "push: the collector (http://HOST:PORT)"},
    sampler::tool::Option{"api-key", 0, "KEY", "push: the application's API key (default: $SAMPLER_API_KEY)"},
    sampler::tool::Option{"part-size", 0, "BYTES",
                          "push: send files in parts of at most BYTES (default 1048576; the collector's --max-body "
                          "bounds it)"},
    sampler::tool::Option{"verbose", 'v', nullptr, "push: print the collector's answer to each file"},
};

constexpr sampler::tool::Usage kUsage = {
    "sampler-symbols",
    "gsym [-o DIR] [--symbfile] FILE... | lookup GSYM [ADDRESS...] | push --url URL --api-key KEY FILE...",
    "Write a GSYM symbol file, named by build ID, for each ELF FILE from its DWARF debug information.",
    kOptions,
    "gsym: each FILE (executable or shared library, with DWARF or with a separate debug file found by its build\n"
    "ID) gives DIR/BUILDID.gsym: functions, source files and lines, and inlined calls, which\n"
    "resolve-backtrace --symbols DIR and llvm-gsymutil read. Function symbols without DWARF are kept by name.\n"
    "A file without a build ID, or that cannot be read, gets an error; the other files are still processed.\n"
    "\n"
    "lookup: prints the frames of each hexadecimal ADDRESS (or of each line of standard input) as\n"
    "llvm-symbolizer --no-demangle does, without columns: NAME and FILE:LINE per frame, innermost first.\n"
    "\n"
    "push: uploads the symbols of each FILE to a collector (sampler-collector serve), which symbolizes the crash\n"
    "stacks it stores with them: for an ELF file, its GSYM file and both symbfiles (ranges, return pads), made\n"
    "in memory; files written by 'gsym' (BUILDID.gsym, BUILDID.ranges.symbfile, BUILDID.returnpads.symbfile)\n"
    "are sent as they are. Each goes to POST URL/api/symbols-gsym, -ranges or -returnpads in parts (headers\n"
    "FileID: the build ID in base64url, FilePart, FileParts; Authorization: APIKey KEY). A file the collector\n"
    "refuses is named on stderr with its answer; the others are still sent. Exit status 1 if any failed.\n",
};

/// One file to upload: its kind (the API path's end), build ID (raw bytes) and bytes.
struct Upload {
  std::string kind, build_id, bytes, name;
};

/// The uploads of one operand: an ELF file's three symbol files, or a file `gsym` wrote.
bool uploads_of(const std::string& path, const sampler::symbols::ConvertOptions& options,
                std::vector<Upload>& out, sampler::DiagnosticSink& sink) {
  using namespace sampler;
  const std::string base = std::filesystem::path(path).filename().string();
  for (std::string_view suffix : {".gsym", ".ranges.symbfile", ".returnpads.symbfile"}) {
    if (!base.ends_with(suffix)) continue;
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
      sink.error(path, 0, "cannot read the file");
      return false;
    }
    std::string bytes = text.str(), build_id;
    if (suffix == ".gsym") {
      gsym::Error problem;
      auto reader = gsym::Reader::open(bytes, problem);
      if (!reader || reader->uuid().empty()) {
        sink.error(path, 0, reader ? "the GSYM file has no UUID (build ID)" : "byte " +
                                         std::to_string(problem.offset) + ": " + problem.message);
        return false;
      }
      build_id = std::string(reader->uuid());
    } else {
      // BUILDID.ranges.symbfile: the build ID is the name (a symbfile does not hold it).
      const std::string digits = base.substr(0, base.size() - suffix.size());
      for (size_t i = 0; i + 1 < digits.size() && digits.size() % 2 == 0; i += 2) {
        build_id += static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16));
      }
      if (build_id.empty() || digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
        sink.error(path, 0, "a symbfile is pushed by the name 'gsym --symbfile' gave it: BUILDID" +
                                std::string(suffix));
        return false;
      }
    }
    std::string kind(suffix.substr(1, suffix.find('.', 1) == std::string_view::npos ? std::string_view::npos
                                                                                    : suffix.find('.', 1) - 1));
    out.push_back({kind, build_id, std::move(bytes), path});
    return true;
  }
  symbols::ConvertOptions with_symbfiles = options;
  with_symbfiles.symbfile = true;
  symbols::SymbolFiles files;
  if (!symbols::make_symbol_files(path, with_symbfiles, files, sink)) return false;
  out.push_back({"gsym", files.build_id, std::move(files.gsym), path + " (GSYM)"});
  out.push_back({"ranges", files.build_id, std::move(files.ranges), path + " (ranges)"});
  out.push_back({"returnpads", files.build_id, std::move(files.returnpads), path + " (return pads)"});
  return true;
}

/// The message of a collector's JSON failure answer, or the answer itself.
std::string answer_message(const std::string& answer) {
  const std::string_view key = "\"Text\": \"";
  const size_t at = answer.find(key);
  if (at == std::string::npos) return answer;
  const size_t begin = at + key.size();
  size_t end = begin;
  while (end < answer.size() && answer[end] != '"') end += answer[end] == '\\' ? 2 : 1;
  return answer.substr(begin, end - begin);
}

/// sampler-symbols push: every file in parts; returns the exit status.
int push(const sampler::tool::CommandLine& command, const sampler::symbols::ConvertOptions& options,
         sampler::tool::StderrSink& sink) {
  using namespace sampler;
  const std::optional<std::string> url = command.value("url");
  std::optional<std::string> key = command.value("api-key");
  if (!key) {
    if (const char* env = std::getenv("SAMPLER_API_KEY"); env != nullptr && *env != '\0') key = env;
  }
  if (!url) return tool::usage_error(kUsage, "push needs --url URL");
  if (!key) return tool::usage_error(kUsage, "push needs --api-key KEY (or SAMPLER_API_KEY)");
  if (command.operands.size() == 1) return tool::usage_error(kUsage, "no FILE given");
  size_t part_size = 1u << 20;
  if (auto text = command.value("part-size")) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text->c_str(), &end, 10);
    if (text->empty() || *end != '\0' || value == 0 || value > (1ull << 32)) {
      return tool::usage_error(kUsage, "--part-size needs a number of bytes from 1 to 4294967296");
    }
    part_size = static_cast<size_t>(value);
  }
  for (size_t i = 1; i < command.operands.size(); ++i) {
    std::vector<Upload> uploads;
    if (!uploads_of(command.operands[i], options, uploads, sink)) continue;
    for (const Upload& upload : uploads) {
      const size_t parts = std::max<size_t>(1, (upload.bytes.size() + part_size - 1) / part_size);
      const std::string endpoint = collector::api_endpoint(*url, "/api/symbols-" + upload.kind);
      for (size_t part = 0; part < parts; ++part) {
        long status = 0;
        std::string answer;
        const std::string_view body = std::string_view(upload.bytes).substr(part * part_size, part_size);
        const bool answered = collector::http_post(
            endpoint,
            {"Authorization: APIKey " + *key, "Content-Type: application/octet-stream",
             "FileID: " + collector::encode_file_id(upload.build_id), "FilePart: " + std::to_string(part),
             "FileParts: " + std::to_string(parts)},
            body, 120000, status, answer);
        if (answered && status == 200 && part + 1 == parts && command.has("verbose")) {
          std::printf("%s: %s\n", escape_control_characters(upload.name).c_str(),
                      escape_control_characters(answer).c_str());
        }
        if (!answered || status != 200) {
          sink.error(upload.name, 0,
                     (answered ? "the collector answered " + std::to_string(status) + ": " + answer_message(answer)
                               : "cannot reach " + endpoint + ": " + answer) +
                         (parts > 1 ? " (part " + std::to_string(part + 1) + " of " + std::to_string(parts) + ")"
                                    : ""));
          break;
        }
      }
    }
  }
  return sink.errors() > 0 ? tool::kExitDataError : tool::kExitSuccess;
}

/// sampler-symbols lookup: one GSYM file, addresses from the operands or standard input.
int lookup(const sampler::tool::CommandLine& command, sampler::tool::StderrSink& sink) {
  using namespace sampler;
  if (command.operands.size() < 2) return tool::usage_error(kUsage, "no GSYM file given");
  gsym::Error problem;
  auto file = gsym::MappedFile::open(command.operands[1], problem);
  if (!file) {
    sink.error(command.operands[1], 0, "byte " + std::to_string(problem.offset) + ": " + problem.message);
    return tool::kExitDataError;
  }
  tool::Output output;
  std::string text;
  gsym::LookupResult result;
  gsym::LineTableCache cache;
  auto one = [&](const std::string& address_text) {
    char* end = nullptr;
    const uint64_t address = std::strtoull(address_text.c_str(), &end, 16);
    text.clear();
    const gsym::Found found = file->reader().lookup(address, result, problem, &cache);
    if (found == gsym::Found::kError) {
      sink.error(command.operands[1], 0, "byte " + std::to_string(problem.offset) + ": " + problem.message);
    }
    symbols::append_llvm_style(found == gsym::Found::kYes ? &result : nullptr, text);
    output.write(text);
  };
  if (command.operands.size() > 2) {
    for (size_t i = 2; i < command.operands.size(); ++i) one(command.operands[i]);
  } else {
    // Read in large blocks (iostreams' getline read a character at a time); strtoull needs a terminated copy.
    LineReader input(0, "<stdin>", sink);
    std::string line;
    for (std::string_view view; input.next(view);) one(line.assign(view));
  }
  const bool written = tool::finish_output(output, sink);
  return !written || sink.errors() > 0 ? tool::kExitDataError : tool::kExitSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sampler;
  tool::CommandLine command = tool::parse_command_line(kUsage, argc, argv);
  if (command.exit_status) return *command.exit_status;
  if (command.operands.empty()) return tool::usage_error(kUsage, "missing the command (gsym)");
  if (command.operands.front() == "lookup") {
    tool::StderrSink sink(kUsage.program);
    return lookup(command, sink);
  }
  symbols::ConvertOptions options;
  if (auto dir = command.value("debug-dir")) options.debug_dirs = {*dir};
  if (command.operands.front() == "push") {
    tool::StderrSink sink(kUsage.program);
    return push(command, options, sink);
  }
  if (command.operands.front() != "gsym") {
    return tool::usage_error(kUsage,
                             "unknown command '" + command.operands.front() + "' (known: gsym, lookup, push)");
  }
  if (command.operands.size() == 1) return tool::usage_error(kUsage, "no FILE given");
  const std::string out_dir = command.value("output").value_or(".");
  std::error_code error;
  if (!std::filesystem::is_directory(out_dir, error)) {
    return tool::usage_error(kUsage, "'" + out_dir + "' is not a directory");
  }
  options.symbfile = command.has("symbfile");

  tool::StderrSink sink(kUsage.program);
  for (size_t i = 1; i < command.operands.size(); ++i) {
    const std::string written = symbols::convert_to_gsym(command.operands[i], out_dir, options, sink);
    if (written.empty()) continue;
    // Read back what was written: a writer bug shows here, not in a crash report months later.
    gsym::Error problem;
    auto file = gsym::MappedFile::open(written, problem);
    if (!file || !file->reader().verify(problem)) {
      sink.error(written, 0, "byte " + std::to_string(problem.offset) + ": " + problem.message);
    }
  }
  return sink.errors() > 0 ? tool::kExitDataError : tool::kExitSuccess;
}
